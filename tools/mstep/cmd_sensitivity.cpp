// mstep sensitivity: Martin's experiment with the models as a second column. The program runs
// under `mstep record` without delay and under the delay apparatus at each value of one parameter
// (rounds alternate: baseline, then every point, `--repeat` times); each point's measured
// slowdown is printed beside every model's predicted one from the baseline trace
// (model/analysis/sensitivity.hpp).
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/analysis/report.hpp"
#include "model/analysis/sensitivity.hpp"
#include "model/trace/matching.hpp"
#include "model/params/quantity.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/launcher.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/report_common.hpp"
#include "model/trace/substitutes.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

namespace {

struct SensitivityOptions {
  std::string dir = "mstep-sensitivity";
  std::string sweep;
  std::vector<std::string> params;
  std::string format = "text";
  int repeat = 1;
  bool force = false;
  bool mpich_collectives = false;
  std::vector<std::string> command;
};

// The collectives every run (the baseline too) makes with libmstep's substitutes over
// point-to-point messages (interpose/substitute.hpp), which the apparatus delays message by
// message as the raised models charge them; MPICH's own collectives it cannot reach. Each is the
// algorithm MPICH 4.0.2 runs at 2 ranks (model::kSubstituteFamilies). A setting already in the
// environment is the user's and stays.
// The substitutes this study sets (name, value), from the options and the environment.
std::vector<std::pair<std::string, std::string>> substitutes_to_set(const SensitivityOptions& o) {
  std::vector<std::pair<std::string, std::string>> set;
  if (o.mpich_collectives) return set;
  for (const model::SubstituteFamily& f : model::kSubstituteFamilies)
    if (const char* v = std::getenv(f.variable); !v || !*v) set.emplace_back(f.variable, f.mpich_choice);
  return set;
}


constexpr const char* kDelayVariables[] = {"MSTEP_DELAY_L",    "MSTEP_DELAY_O",    "MSTEP_DELAY_GAP",
                                           "MSTEP_DELAY_PER_BYTE", "MSTEP_DELAY_RNDV", "MSTEP_DELAY_NATIVE"};

// What every run of a study shares beside its one delay setting.
struct RunSettings {
  // The parameter file's S (0: none), so that the apparatus pays a message of S bytes or more what
  // LogGPS charges a rendezvous (MSTEP_DELAY_RNDV, interpose/delay.hpp).
  std::uint64_t rndv_bytes = 0;
  // The parameter file itself, as the network the added L adds to (MSTEP_DELAY_NATIVE): each
  // crossing is lengthened by L, as the raised models have it.
  std::string native_file;
  std::vector<std::pair<std::string, std::string>> substitutes;  // substitutes_to_set
};

// `mstep record -f -o DIR -- COMMAND` with `variable`=`value` (none for the baseline), the study's
// shared settings and no other delay setting; the program's output goes to DIR.out. Returns the
// run's actual time.
double record_point(const SensitivityOptions& o, const fs::path& dir, const std::string& variable, const std::string& value,
                    const RunSettings& run) {
  const fs::path out = fs::path(dir.string() + ".out");
  std::vector<std::string> args{"/proc/self/exe", "record", "-f", "-o", dir.string(), "--"};
  args.insert(args.end(), o.command.begin(), o.command.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) fail(1, fmt::format("cannot fork: {}", std::strerror(errno)));
  if (child == 0) {
    // A sensitivity study killed outright (`kill PID`, SIGKILL) ends the run it was recording:
    // mstep record passes the SIGTERM on to its launcher.
    end_with_parent(parent);
    for (const char* v : kDelayVariables) ::unsetenv(v);
    if (run.rndv_bytes > 0) ::setenv("MSTEP_DELAY_RNDV", std::to_string(run.rndv_bytes).c_str(), 1);
    if (!run.native_file.empty()) ::setenv("MSTEP_DELAY_NATIVE", run.native_file.c_str(), 1);
    if (!variable.empty()) ::setenv(variable.c_str(), value.c_str(), 1);
    for (const auto& [name, v] : run.substitutes) ::setenv(name.c_str(), v.c_str(), 1);
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {  // the program's output and mstep record's own lines
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "mstep: cannot run mstep record: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const std::string what = variable.empty() ? "baseline" : fmt::format("{}={}", variable, value);
  if (code != 0) fail(1, fmt::format("the run with {} failed (exit {}); its output is in {}", what, code, out.string()));
  const TraceDir trace = load_trace_dir(dir.string(), std::nullopt, {}, false, /*with_steps=*/false);
  if (!trace.ok()) fail(1, fmt::format("the trace of the run with {} has problems: {}", what, trace.problems.front()));
  // libmstep refuses a delay setting it cannot read and runs undelayed: that is no point of the sweep.
  if (!variable.empty() && !trace.meta.delayed) {
    std::string said;
    std::ifstream log(out);
    for (std::string line; std::getline(log, line);)
      if (line.starts_with("mstep: MSTEP_")) {
        said = line;
        break;
      }
    fail(1, fmt::format("the run with {} was not delayed ({}); its output is in {}", what,
                        said.empty() ? "the apparatus was off" : said, out.string()));
  }
  return model::build_report(trace, nullptr).actual_s;
}

// "G=0.5ns/B" as a directory name.
std::string dir_name(std::string_view param, const std::string& label) {
  std::string s = fmt::format("{}={}", param, label);
  std::replace(s.begin(), s.end(), '/', '_');
  return s;
}

struct Measured {
  double actual_s = 0;       // median over the repeats
  fs::path median_trace;     // the run with the median time
};

// The median run; of an even number, the faster of the middle two (the low median): on a shared
// machine noise only adds time, and the upper one of 2 runs is their slower. Over the validation
// suite at 2 runs a point (tests/bench/sensitivity_suite.sh, stop 43) the upper median put 88 of
// 120 points within 10%, the lower one 100 of the same runs.
Measured measure(const std::vector<std::pair<fs::path, double>>& runs) {
  std::vector<std::pair<double, fs::path>> sorted;
  for (const auto& [p, t] : runs) sorted.emplace_back(t, p);
  std::sort(sorted.begin(), sorted.end());
  const auto& mid = sorted[(sorted.size() - 1) / 2];
  return {mid.first, mid.second};
}

std::string ratio_text(double r) { return std::isfinite(r) ? fmt::format("{:.4f}", r) : "-"; }

void run_sensitivity(const SensitivityOptions& o) {
  if (o.command.empty())
    fail(2, "sensitivity needs a command to run, e.g. mstep sensitivity --sweep L=0,5us,10us -- mpiexec.mpich -n 2 ./app");
  model::Sweep sweep;
  try {
    sweep = model::parse_sweep(o.sweep);
  } catch (const model::WhatIfError& e) {
    fail(2, e.what());
  }
  // Every file given is read and checked before anything runs; the one of the baseline's period is
  // chosen once it is recorded (choose_params, as report and whatif choose).
  const std::vector<ParamsFile> given = read_params_given(o.params, o.dir + "/baseline-1");
  if (given.empty())
    fail(1, "sensitivity needs calibrated parameters: run `mstep calibrate -o params.json` and pass --params params.json");
  std::error_code ec;
  if (fs::exists(fs::path(o.dir) / "baseline-1", ec) && !o.force)
    fail(2, fmt::format("{} already holds a sensitivity run (use -f to replace it)", o.dir));
  fs::create_directories(o.dir, ec);
  if (ec) fail(1, fmt::format("cannot create {}: {}", o.dir, ec.message()));

  const std::string_view name = model::sweep_name(sweep.param);
  const std::string variable(model::delay_variable(sweep.param));
  // The apparatus needs S and the native network before the first run: the first file's (files of
  // one network, calibrated in different periods, share S).
  RunSettings run;
  const model::CalibrationParams& first = given.front().params;
  run.rndv_bytes = first.loggps && first.loggps->S < model::kInfiniteBytes ? first.loggps->S : 0;
  std::error_code abs_ec;
  if (first.loggps) run.native_file = fs::absolute(given.front().file, abs_ec).string();
  run.substitutes = substitutes_to_set(o);
  const auto& substitutes = run.substitutes;
  // Rounds alternate, so that a slow period of the machine hits every point alike.
  std::vector<std::pair<fs::path, double>> base_runs;
  std::vector<std::vector<std::pair<fs::path, double>>> point_runs(sweep.values.size());
  for (int r = 1; r <= o.repeat; ++r) {
    const fs::path b = fs::path(o.dir) / fmt::format("baseline-{}", r);
    base_runs.emplace_back(b, record_point(o, b, "", "", run));
    for (std::size_t i = 0; i < sweep.values.size(); ++i) {
      const fs::path p = fs::path(o.dir) / fmt::format("{}-{}", dir_name(name, sweep.labels[i]), r);
      point_runs[i].emplace_back(p, record_point(o, p, variable, sweep.labels[i], run));
    }
  }
  const Measured base = measure(base_runs);
  const TraceDir base_trace = load_trace_dir(base.median_trace.string(), std::nullopt, {}, false, /*with_steps=*/false);
  const ChosenParams chosen = choose_params(given, base_trace);
  const model::CalibrationParams& params = given[chosen.index].params;
  const std::string& params_file = given[chosen.index].file;
  warn_if_other_network(params, params_file, base_trace);
  warn_if_other_speed(params, base_trace);
  std::vector<model::SensitivityPoint> points;
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < sweep.values.size(); ++i) {
    const model::EditedParams raised = model::add_to_params(params, sweep.param, sweep.values[i]);
    if (i == 0) notes = raised.notes;
    const model::WhatIfResult w = model::compare_whatif(base_trace, params, raised.params);
    points.push_back({sweep.labels[i], sweep.values[i], measure(point_runs[i]).actual_s, w.models});
  }
  // The apparatus's own cost, where the sweep has a 0 point: its carried send times and holds
  // (interpose/delay.hpp) are in every point's measured time, and in no model's. Martin's
  // calibration lines have that intercept; each point's measured slowdown is what it added beyond
  // the 0 point's run (model::apparatus_slowdown), its time over the baseline's kept as raw.
  double zero_s = std::nan("");
  for (const auto& p : points)
    if (p.added == 0 && base.actual_s > 0) {
      zero_s = p.actual_s;
      const double pct = 100.0 * (p.actual_s / base.actual_s - 1.0);
      notes.push_back(fmt::format("the apparatus itself, at {} = 0, measured {:+.1f}% against the baseline: taken out of "
                                  "every point's measured slowdown, 1 + (time - time at {} = 0) / baseline time (raw: "
                                  "time / baseline time)",
                                  name, pct, name));
      break;
    }
  const auto measured_slowdown = [&](double s) {
    return std::isfinite(zero_s) ? model::apparatus_slowdown(base.actual_s, s, zero_s) : model::slowdown(base.actual_s, s);
  };
  // The collective calls that ran MPICH's own algorithm, which the apparatus does not delay.
  const RunMeta& meta = base_trace.meta;
  std::uint64_t collectives = 0;
  for (const auto& rank : base_trace.ranks)
    if (rank)
      for (const Event& e : rank->events) {
        if (!is_collective_call(e)) continue;
        const bool substituted = model::ran_substitute(meta, e.op);
        collectives += !substituted;
      }
  if (collectives > 0)
    notes.push_back(fmt::format(
        "{} collective call{} (all ranks) ran MPICH's own algorithm, which the apparatus does not delay (libmstep's "
        "substitutes for MPI_Barrier, MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Alltoall(v), MPI_Allgather(v), MPI_Gather(v), MPI_Scatter(v), MPI_Reduce_scatter(_block) with a commutative operation, MPI_Scan and MPI_Exscan it does), where the raised models charge their "
        "messages too: there the predicted slowdown is not the apparatus's",
        collectives, collectives == 1 ? "" : "s"));
  std::string substituted;
  for (const auto& [var, v] : substitutes) substituted += fmt::format("{}{}={}", substituted.empty() ? "" : " ", var, v);

  if (o.format == "json") {
    nlohmann::json j;
    j["parameter"] = std::string(name);
    j["variable"] = variable;
    j["params"] = params_file;
    j["params_choice"] = chosen.choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(chosen.choice);
    j["repeat"] = o.repeat;
    j["baseline_s"] = base.actual_s;
    j["baseline_trace"] = base.median_trace.string();
    j["collective_substitutes"] = nlohmann::json::object();
    for (const auto& [var, v] : substitutes) j["collective_substitutes"][var] = v;
    j["points"] = nlohmann::json::array();
    for (const auto& p : points) {
      nlohmann::json jp{{"label", p.label}, {"added", p.added}, {"actual_s", p.actual_s},
                        {"slowdown", measured_slowdown(p.actual_s)},
                        {"raw_slowdown", model::slowdown(base.actual_s, p.actual_s)}};
      jp["models"] = nlohmann::json::object();
      for (const auto& m : p.models) {
        if (!m.available) continue;
        const double predicted = model::slowdown(m.baseline_s, m.whatif_s);
        jp["models"][m.name] = {{"baseline_s", m.baseline_s}, {"predicted_s", m.whatif_s}, {"slowdown", predicted},
                                {"error_pct", model::slowdown_error_pct(jp["slowdown"].get<double>(), predicted)}};
      }
      j["points"].push_back(std::move(jp));
    }
    j["notes"] = notes;
    fmt::print("{}\n", j.dump(2));
    return;
  }
  const bool csv = o.format == "csv";
  if (csv) {
    fmt::print("parameter,label,added,actual_s,slowdown,raw_slowdown,model,predicted_s,predicted_slowdown,error_pct\n");
  } else {
    fmt::print("mstep sensitivity: {} added by the delay apparatus ({}), {} run(s) a point, medians (low)\n", name,
               variable, o.repeat);
    fmt::print("baseline: {:.6f} s without delay ({}); parameters {}\n", base.actual_s, base.median_trace.string(),
               chosen.choice.empty() ? params_file : params_file + " (" + chosen.choice + ")");
    if (!substituted.empty())
      fmt::print("collectives: libmstep's over point-to-point in every run, so that the apparatus delays them ({}; "
                 "--mpich-collectives keeps MPICH's own)\n",
                 substituted);
    fmt::print("\n");
    fmt::print("{:<14} {:>12} {:>8} {:>10}", "point", "actual s", "raw", "measured");
    for (const auto& m : points.front().models) fmt::print(" {:>9}", m.name);
    fmt::print(" {:>12}\n", "LogGPS err %");
  }
  for (const auto& p : points) {
    const double measured = measured_slowdown(p.actual_s), raw = model::slowdown(base.actual_s, p.actual_s);
    if (!csv)
      fmt::print("{:<14} {:>12.6f} {:>8} {:>10}", fmt::format("{}={}", name, p.label), p.actual_s, ratio_text(raw),
                 ratio_text(measured));
    double loggps_err = std::nan("");
    for (const auto& m : p.models) {
      const double predicted = m.available ? model::slowdown(m.baseline_s, m.whatif_s) : std::nan("");
      if (m.name == "LogGPS") loggps_err = model::slowdown_error_pct(measured, predicted);
      if (csv) {
        if (m.available)
          fmt::print("{},{},{},{},{},{},{},{},{},{}\n", name, p.label, p.added, p.actual_s, measured, raw, m.name,
                     m.whatif_s, predicted, model::slowdown_error_pct(measured, predicted));
      } else {
        fmt::print(" {:>9}", ratio_text(predicted));
      }
    }
    if (!csv) fmt::print(" {:>12}\n", std::isfinite(loggps_err) ? fmt::format("{:+.1f}", loggps_err) : "-");
  }
  if (!csv) {
    fmt::print("\nslowdown: time / baseline time (raw: the runs; measured: with the apparatus's own cost at {} = 0 taken "
               "out where the sweep has that point; models: the baseline trace replayed with {} raised)\n",
               name, name);
    for (const auto& n : notes) fmt::print("note: {}\n", n);
  }
}

}  // namespace

void add_sensitivity(CLI::App& app) {
  auto o = std::make_shared<SensitivityOptions>();
  auto* cmd = app.add_subcommand(
      "sensitivity", "Run a program under a sweep of added L, o, g or G; measured slowdown beside each model's");
  cmd->add_option("--sweep", o->sweep, "PARAM=V1,V2,...: L, o or g with time units (L=0,5us,10us), G per byte (G=0,1ns/B)")
      ->required();
  cmd->add_option("-o,--output", o->dir, "Directory for the runs' traces (default mstep-sensitivity)");
  add_params_option(*cmd, o->params, "Parameter file of mstep calibrate, chosen by the baseline's period");
  cmd->add_option("--repeat", o->repeat, "Runs of every point (alternating rounds; the median is kept, of an even number the faster middle one)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--format", o->format, "Output format: text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_flag("-f,--force", o->force, "Replace the runs of an earlier sensitivity study in the directory");
  cmd->add_flag("--mpich-collectives", o->mpich_collectives,
                "Keep MPICH's own MPI_Barrier, MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Alltoall(v), MPI_Allgather(v), "
                "MPI_Gather(v), MPI_Scatter(v) and MPI_Reduce_scatter(_block), which the apparatus "
                "does not delay "
                "(default: libmstep's point-to-point substitutes in every run)");
  cmd->add_option("command", o->command, "The program after --, e.g. -- mpiexec.mpich -n 2 ./app");
  cmd->footer("Example:\n  mstep sensitivity --params params.json --sweep L=0,10us,50us --repeat 3 -- mpiexec.mpich -n 2 ./app");
  cmd->callback([o] { run_sensitivity(*o); });
}

}  // namespace mstep::cli
