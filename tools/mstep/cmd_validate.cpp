// mstep validate: calibrate once, then record every example of the suite at every size and rank
// count, report each run, and write one table of actual against predicted time per model (like
// Table 7 of the LogGPS paper); then the same with S moved and recalibrated; then the 2-rank runs
// over UCX's TCP transport, calibrated there, and a cross table: each case recorded on one
// transport, predicted for the other as `mstep whatif --network` does (validate_cross.hpp). The
// recordings are validate_runs.hpp's, the tables validate_output.hpp's.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/analysis/report.hpp"
#include "model/analysis/speed_check.hpp"
#include "model/analysis/validation.hpp"
#include "tools/mstep/launcher.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/validate_cross.hpp"
#include "tools/mstep/validate_output.hpp"
#include "tools/mstep/validate_runs.hpp"
#include "tools/mstep/validate_suite.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;
using model::ValidationRow;

namespace {

constexpr const char* kMarker = ".mstep-validate";  // marks a directory validate wrote

// A fresh output directory: an existing one only with -f, and only one that validate wrote.
void prepare_dir(const ValidateOptions& o) {
  const fs::path dir = o.dir;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) fail(2, fmt::format("{} exists and is not a directory", o.dir));
    if (!fs::is_empty(dir, ec)) {
      if (!o.force) fail(2, fmt::format("{} exists (use -f to replace it)", o.dir));
      if (!fs::exists(dir / kMarker, ec))
        fail(2, fmt::format("{} was not written by mstep validate (no {} in it): choose another -o", o.dir, kMarker));
      for (const char* sub : {"traces", "logs", "validation.md", "validation.json"}) fs::remove_all(dir / sub, ec);
      for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().filename().string().rfind("params", 0) == 0) fs::remove(e.path(), ec);
    }
  }
  fs::create_directories(dir / "logs", ec);
  if (ec) fail(2, fmt::format("cannot create {}: {}", o.dir, ec.message()));
  std::ofstream(dir / kMarker) << "written by mstep validate\n";
}

model::CalibrationParams read_suite_params_or_fail(const std::string& file) {
  try {
    return model::read_params(file);
  } catch (const model::ParamsError& e) {
    fail(2, e.what());
  }
}


// `mstep calibrate` run by this very mstep, under the experiment's environment, into
// DIR/NAME.json (log DIR/logs/LOG.log); `what` words the progress line. Returns the error (empty
// when it worked); `file` is the file once the calibration exited 0, and `params` what it holds.
std::string run_calibration(const ValidateOptions& o, const Experiment& x, const std::string& name,
                            const std::string& log_name, bool quick, const char* what, fs::path& file,
                            model::CalibrationParams& params) {
  const fs::path out = fs::path(o.dir) / (name + ".json");
  const fs::path log = fs::path(o.dir) / "logs" / (log_name + ".log");
  // The suite runs MPICH's own collectives: libmstep's substitutes need no timing here.
  std::vector<std::string> argv{self_exe().string(), "calibrate", "-f", "--no-substitutes", "-o", out.string()};
  if (quick) argv.push_back("--quick");
  const std::string env = x.env.empty() ? "" : env_text(x.env) + " ";
  std::fprintf(stderr, "mstep: validate: %s: %s%s (log %s)\n", what, env.c_str(), command_line(argv).c_str(),
               log.c_str());
  const int code = run_logged(argv, x.env, log);
  if (interrupted()) fail(130, "validate: interrupted");
  if (code != 0) return fmt::format("calibration failed: '{}{}' exited with code {} (log {})", env, command_line(argv), code, log.string());
  file = out;
  try {
    params = model::read_params(file);
  } catch (const model::ParamsError& e) {
    return fmt::format("calibration wrote a bad parameter file: {}", e.what());
  }
  return {};
}

// The experiment's calibration, DIR/params[-LABEL].json. Returns the error (empty when it worked).
std::string calibrate(const ValidateOptions& o, Experiment& x) {
  const std::string suffix = x.label.empty() ? "" : "-" + x.label;
  fs::path file;
  const std::string error =
      run_calibration(o, x, "params" + suffix, "calibrate" + suffix, o.filter.quick, "calibrating", file, x.params);
  if (!file.empty()) x.params_file = file.string();
  return error;
}

// After each repetition: a run out of every calibration's period, in an experiment validate
// calibrates, is followed at once by a quick calibration, made while the machine is most likely
// still in that period (they last a minute or so here), which then predicts the runs of its period
// (repredict_in_period). A failed one is said, and the runs go on.
// Runs of more ranks than cores probe their busy-polling, not the machine's period: they are not
// looked at.
void calibrate_in_period(const ValidateOptions& o, Experiment& x, const CaseRuns& runs) {
  const std::string trace = runs.last_trace();
  if (!x.calibrates || x.during.size() >= kMaxPeriodCalibrations || trace.empty() || runs.oversubscribed()) return;
  const std::optional<double> run_s = out_of_every_period(x, trace);
  if (!run_s) return;
  const std::string name =
      fmt::format("params{}-period-{}", x.label.empty() ? "" : "-" + x.label, x.during.size() + 1);
  const std::string what = fmt::format("{}: 8-byte half round trip {:.3f} us, out of every calibration's period: "
                                       "calibrating again in it", fs::path(trace).filename().string(), *run_s * 1e6);
  fs::path file;
  model::CalibrationParams params;
  const std::string error = run_calibration(o, x, name, name, true, what.c_str(), file, params);
  if (!error.empty()) {
    std::fprintf(stderr, "mstep: validate: warning: %s; the runs go on with the calibrations made\n", error.c_str());
    return;
  }
  x.during.push_back({std::move(params), file.string()});
  // A calibration that does not find the run's period (a quick one's noise, the period gone, or a
  // run slowed by something a calibration does not meet) is kept; after kMaxPeriodMisses of them
  // there are no more: calibrating after every run would double the time.
  if (const std::optional<double> still = out_of_every_period(x, trace)) {
    const auto& meta = x.during.back().params.meta;
    const bool last = ++x.during_missed >= kMaxPeriodMisses;
    std::fprintf(stderr, "mstep: validate: warning: the calibration in that period did not find it (8-byte half round "
                 "trip %s against the run's %.3f us)%s\n",
                 meta.half_rtt_8B > 0 ? fmt::format("{:.3f} us", meta.half_rtt_8B * 1e6).c_str() : "not measured",
                 *still * 1e6,
                 last ? fmt::format(": {} such, no more calibrations during these runs", kMaxPeriodMisses).c_str() : "");
    if (last) x.calibrates = false;
  }
}

// The repetitions of one case, each followed by calibrate_in_period.
ValidationRow record_case(const ValidateOptions& o, Experiment& x, const Planned& p, int cores,
                          const std::string& calibration_error) {
  CaseRuns runs(o, x, p, cores, calibration_error);
  while (!runs.done()) {
    runs.record_next();
    calibrate_in_period(o, x, runs);
  }
  return runs.finish();
}

// A quick calibration after the experiment's runs, compared with the one before them
// (model/analysis/speed_check.hpp); a failed one says nothing.
void check_speed(const ValidateOptions& o, Experiment& x) {
  const std::string name = "params" + (x.label.empty() ? "" : "-" + x.label) + "-after";
  fs::path file;
  model::CalibrationParams after;
  if (!run_calibration(o, x, name, name, true, "calibrating again after the runs", file, after).empty()) return;
  if (auto moved = model::speed_change(x.params, after)) x.speed_change = *moved;
  x.after = std::move(after);
  x.after_file = file.string();
}

void run_validate(const ValidateOptions& o) {
  Suite suite;
  try {
    suite = read_suite(o.suite.empty() ? default_suite() : o.suite);
  } catch (const SuiteError& e) {
    fail(2, e.what());
  }
  for (const auto& name : o.filter.only)
    if (!suite.find(name)) fail(2, fmt::format("--only: no case '{}' in {}", name, suite.path));
  const bool shm_on = o.transport != "tcp", tcp_on = o.transport != "shm";
  const std::vector<Planned> planned = plan_main(suite, o.filter);
  const std::vector<Planned> main_runs = shm_on ? planned : std::vector<Planned>{};
  const std::vector<Planned> s_runs = o.no_s_moved || !shm_on ? std::vector<Planned>{} : plan_s_moved(suite, o.filter);
  // TCP: the main runs at the rank count the goals are stated at (more ranks than cores do not time).
  std::vector<Planned> tcp_runs;
  if (tcp_on)
    for (const Planned& p : planned)
      if (p.ranks == kSummaryRanks) tcp_runs.push_back(p);
  if (main_runs.empty() && s_runs.empty() && tcp_runs.empty()) fail(2, fmt::format("nothing to run: no case of {} matches the options", suite.path));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  // The main table, then the same programs with S moved: each experiment with its parameters.
  std::vector<Experiment> xs;
  if (!main_runs.empty()) {
    Experiment& x = xs.emplace_back();
    x.runs = main_runs;
    x.params_file = o.params;
  }
  if (!s_runs.empty()) {
    Experiment& x = xs.emplace_back();
    x.label = suite.s_moved.label;
    x.env = suite.s_moved.env;
    x.runs = s_runs;
    x.params_file = o.s_moved_params;
  }
  if (!tcp_runs.empty()) {
    Experiment& x = xs.emplace_back();
    x.label = kTcpLabel;
    x.env = {{"UCX_TLS", "tcp,self"}};
    x.runs = tcp_runs;
    x.params_file = o.tcp_params;
  }
  for (auto& x : xs)
    if (!x.params_file.empty()) x.params = read_suite_params_or_fail(x.params_file);
  prepare_dir(o);
  const double load = load_average();
  if (load > 0.5)
    std::fprintf(stderr, "mstep: validate: warning: load average %.2f on %d cores: other processes will slow the runs\n",
                 load, cores);
  // More ranks than cores: MPICH's ranks busy-poll, so such runs are slow (a message can wait for a
  // scheduler time slice) and do not time. Said once, before they start.
  std::vector<int> fitting;
  int widest = 0;
  for (const auto& x : xs)
    for (const Planned& p : x.runs) {
      widest = std::max(widest, p.ranks);
      if (p.ranks <= cores && std::find(fitting.begin(), fitting.end(), p.ranks) == fitting.end()) fitting.push_back(p.ranks);
    }
  std::sort(fitting.begin(), fitting.end());
  if (widest > cores)
    std::fprintf(stderr,
                 "mstep: validate: warning: runs of up to %d ranks on %d cores: those over %d ranks are oversubscribed, "
                 "slow and marked so, not timed%s\n",
                 widest, cores, cores,
                 fitting.empty() ? "" : fmt::format(" (--ranks {} runs the others)", fmt::join(fitting, ",")).c_str());
  // Without parameters an experiment's runs all fail, but the other experiments still run.
  std::vector<std::string> calibration_error(xs.size());
  auto start = [&](std::size_t i) {
    if (xs[i].params_file.empty()) {
      calibration_error[i] = calibrate(o, xs[i]);
      xs[i].calibrates = calibration_error[i].empty();
    }
    if (!calibration_error[i].empty()) std::fprintf(stderr, "mstep: validate: %s\n", calibration_error[i].c_str());
  };
  auto end = [&](std::size_t i, bool calibrated) {
    if (calibrated && calibration_error[i].empty() && !xs[i].runs.empty()) check_speed(o, xs[i]);
    repredict_in_period(xs[i]);
  };
  std::size_t tcp = xs.size();
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (xs[i].label == kTcpLabel) tcp = i;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Experiment& x = xs[i];
    const bool has_main = xs[0].label.empty();
    if (i == tcp && has_main) continue;  // ran beside the main experiment
    const bool calibrating = x.params_file.empty();
    if (!x.label.empty() || tcp == xs.size()) {  // on its own
      start(i);
      for (const Planned& p : x.runs) x.rows.push_back(record_case(o, x, p, cores, calibration_error[i]));
      end(i, calibrating);
      continue;
    }
    // The main experiment and TCP: each case's repetitions alternate between the transports, so
    // that the cross table compares runs made seconds apart (this machine's speed moves between
    // periods: README, "Both transports").
    Experiment& t = xs[tcp];
    const bool tcp_calibrating = t.params_file.empty();
    start(i);
    start(tcp);
    std::size_t next_tcp = 0;
    for (const Planned& p : x.runs) {
      const bool beside = next_tcp < t.runs.size() && t.runs[next_tcp].c == p.c && t.runs[next_tcp].size == p.size &&
                          t.runs[next_tcp].ranks == p.ranks;
      if (!beside) {
        x.rows.push_back(record_case(o, x, p, cores, calibration_error[i]));
        continue;
      }
      CaseRuns here(o, x, p, cores, calibration_error[i]), there(o, t, t.runs[next_tcp], cores, calibration_error[tcp]);
      while (!here.done() || !there.done()) {
        here.record_next();
        calibrate_in_period(o, x, here);
        there.record_next();
        calibrate_in_period(o, t, there);
      }
      x.rows.push_back(here.finish());
      t.rows.push_back(there.finish());
      ++next_tcp;
    }
    end(i, calibrating);
    end(tcp, tcp_calibrating);
  }
  write_outputs(o, suite, xs, cores, load);
  std::size_t failed = 0;
  for (const auto& x : xs)
    for (const auto& r : x.rows) failed += !r.ok();
  if (failed) fail(1, fmt::format("validate: {} run{} failed (see the errors above)", failed, failed == 1 ? "" : "s"));
}

}  // namespace

void add_validate(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate", "Record the example programs, and tabulate actual against predicted time for every model");
  cmd->add_option("--suite", o->suite, "Suite file (default: share/validate/suite.json of this mstep)");
  cmd->add_option("-o,--output", o->dir, "Output directory (default: mstep-validate)");
  cmd->add_flag("-f,--force", o->force, "Replace an earlier output of mstep validate in that directory");
  auto* repeat = cmd->add_option("--repeat", o->repeat, "Recordings per run; the median one is kept (default 3)")
                     ->check(CLI::Range(1, 100));
  cmd->add_option("--ranks", o->filter.ranks, "Rank counts to run, e.g. 2,4 (default: all of the suite)")
                    ->delimiter(',')
                    ->check(CLI::Range(1, 4096));
  cmd->add_option("--only", o->filter.only, "Only these cases (names in the suite)")->delimiter(',');
  cmd->add_flag("--quick", o->filter.quick,
                "One repetition, quick calibration, the quick size of each case at 2 ranks");
  cmd->add_flag("--no-s-moved", o->no_s_moved, "Skip the experiment with S moved");
  cmd->add_option("--timeout", o->timeout_s,
                  "Seconds a recording may run; one still running then is ended and run once more (0: no limit; "
                  "default 300)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--params", o->params, "Parameter file to use instead of calibrating");
  cmd->add_option("--s-moved-params", o->s_moved_params,
                  "Parameter file for the S-moved experiment instead of recalibrating under its environment");
  cmd->add_option("--transport", o->transport,
                  "shm (shared memory), tcp (UCX_TLS=tcp,self: the 2-rank runs) or both, with a cross table: each "
                  "case recorded on one, predicted for the other (default both)")
      ->check(CLI::IsMember({"shm", "tcp", "both"}));
  cmd->add_option("--tcp-params", o->tcp_params, "Parameter file for the TCP experiment instead of calibrating over TCP");
  cmd->footer(
      "Exits 1 when a run or the calibration failed (after writing the tables), 2 on a bad option or suite.\n"
      "Goals not met are reported, not an error.\n"
      "Example: mstep validate --quick --only ring,gauss");
  cmd->callback([o, repeat] {
    ValidateOptions opts = *o;
    if (opts.filter.quick && repeat->count() == 0) opts.repeat = 1;
    run_validate(opts);
  });
}

}  // namespace mstep::cli
