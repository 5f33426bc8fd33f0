// mstep validate: calibrate once, then record every example of the suite at every size and rank
// count, report each run, and write one table of actual against predicted time per model (like
// Table 7 of the LogGPS paper); then the same with S moved and recalibrated; then the 2-rank runs
// over UCX's TCP transport, calibrated there, and a cross table: each case recorded on one
// transport, predicted for the other as `mstep whatif --network` does (validate_cross.hpp).
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/analysis/report.hpp"
#include "model/analysis/speed_check.hpp"
#include "model/analysis/validation.hpp"
#include "tools/mstep/launcher.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/validate_cross.hpp"
#include "tools/mstep/validate_runs.hpp"
#include "tools/mstep/validate_suite.hpp"

extern char** environ;

namespace mstep::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;
using model::ValidationRow;

namespace {

constexpr int kSummaryRanks = 2;                          // the goals are stated at 2 ranks
constexpr const char* kMarker = ".mstep-validate";        // marks a directory validate wrote

// UCX's TCP transport: the second real network of a one-node machine (issue 13).
constexpr const char* kTcpLabel = "tcp";

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

// "K=V K2=V2"
std::string env_text(const std::map<std::string, std::string>& env) {
  std::string s;
  for (const auto& [k, v] : env) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
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

// A quick calibration after the experiment's runs, compared with the one before them
// (model/analysis/speed_check.hpp); a failed one says nothing.
void check_speed(const ValidateOptions& o, Experiment& x) {
  const std::string name = "params" + (x.label.empty() ? "" : "-" + x.label) + "-after";
  fs::path file;
  model::CalibrationParams after;
  if (!run_calibration(o, x, name, name, true, "calibrating again after the runs", file, after).empty()) return;
  if (auto moved = model::speed_change(x.params, after)) x.speed_change = *moved;
}

// ---- output ----

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json bytes(std::uint64_t v) { return v == model::kInfiniteBytes ? json(nullptr) : json(v); }

json params_json(const std::string& file) {
  if (file.empty()) return nullptr;
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return json{{"file", file}, {"content", json::parse(text.str(), nullptr, false)}};
}

json row_json(const ValidationRow& r) {
  json models = json::object();
  for (const auto& p : r.predictions)
    models[p.model] = {{"available", p.available}, {"predicted_s", num(p.predicted_s)},
                       {"error_pct", num(p.error_pct)}, {"note", p.note}};
  json reps = json::array();
  for (double v : r.repetitions_s) reps.push_back(num(v));
  return {{"experiment", r.experiment},     {"case", r.case_name},
          {"size", r.size_label},           {"args", r.args},
          {"ranks", r.ranks},               {"oversubscribed", r.oversubscribed},
          {"probe_half_rtt_s", json::array({num(r.probe_init_s > 0 ? r.probe_init_s : model::kNaN),
                                            num(r.probe_finalize_s > 0 ? r.probe_finalize_s : model::kNaN)})},
          {"other_period", r.other_period},
          {"ok", r.ok()},                   {"error", r.error},
          {"actual_s", num(r.actual_s)},    {"repetitions_s", reps},
          {"kept_repetition", r.ok() ? json(r.chosen + 1) : json(nullptr)},
          {"trace", r.trace},               {"repetition_traces", r.repetition_traces},
          {"models", models},
          {"messages", {{"S", bytes(r.sizes.S)}, {"below_S", r.sizes.below}, {"at_or_above_S", r.sizes.at_or_above},
                        {"smallest", r.sizes.smallest}, {"largest", r.sizes.largest}, {"crosses_S", r.sizes.crosses()}}}};
}

json summary_json(std::span<const ValidationRow> rows, int ranks = kSummaryRanks) {
  json s = json::array();
  for (const auto& m : model::summarize_models(rows, ranks))
    s.push_back({{"model", m.model}, {"runs", m.rows}, {"median_abs_error_pct", num(m.median_abs_error_pct)},
                 {"max_abs_error_pct", num(m.max_abs_error_pct)}, {"over_10pct", m.over_10pct}});
  return s;
}

std::string now_iso() {
  char stamp[40];
  const std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  return stamp;
}

std::string hostname() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline");
  std::vector<std::string> out;
  for (std::string word; std::getline(in, word, '\0');) out.push_back(word);
  return out;
}

json mpi_environment() {
  json env = json::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    const std::string k = kv.substr(0, eq);
    if (eq != std::string::npos && (k.rfind("UCX_", 0) == 0 || k.rfind("MPIR_CVAR_", 0) == 0 || k.rfind("MPICH_", 0) == 0))
      env[k] = kv.substr(eq + 1);
  }
  return env;
}

std::string s_text(const Experiment& x) {
  const std::uint64_t S = x.params.loggps ? x.params.loggps->S : model::kInfiniteBytes;
  return S == model::kInfiniteBytes ? "S infinite or unknown" : fmt::format("S = {} B", S);
}

// The 1-minute load average: other processes on the machine slow the runs (not the models).
double load_average() {
  double load[1] = {0};
  return ::getloadavg(load, 1) == 1 ? load[0] : model::kNaN;
}

void write_outputs(const ValidateOptions& o, const Suite& suite, const std::vector<Experiment>& xs, int cores,
                   double load_before) {
  std::vector<ValidationRow> all;
  for (const auto& x : xs) all.insert(all.end(), x.rows.begin(), x.rows.end());
  const std::string kept = fmt::format("each row is the repetition with the median actual time of {}", o.repeat);
  std::string text, md = "# mstep validate\n\n";
  md += fmt::format("{} on {} ({} cores); suite `{}`; {}. Errors are 100 * (actual - predicted) / actual. "
                    "\"msgs >= S\" counts point-to-point messages of S bytes or more.\n",
                    now_iso(), hostname(), cores, suite.path, kept);
  for (const auto& x : xs) {
    const std::string title = x.label.empty()       ? std::string("Predicted against actual")
                              : x.label == kTcpLabel ? fmt::format("TCP: {}", env_text(x.env))
                                                     : fmt::format("S moved ({}): {}", x.label, env_text(x.env));
    const std::string params = x.params_file.empty() ? "none (calibration failed)" : x.params_file;
    const std::string head = fmt::format("{}: parameters {} ({}); {}", title, params, s_text(x), kept);
    text += fmt::format("{}\n\n{}\nSummary at {} ranks:\n{}\n", head, model::text_table(x.rows), kSummaryRanks,
                        model::summary_text(x.rows, kSummaryRanks, false));
    md += fmt::format("\n## {}\n\nParameters `{}` ({}).\n\n{}\nSummary at {} ranks:\n\n{}", title, params,
                      s_text(x), model::markdown_table(x.rows), kSummaryRanks,
                      model::summary_text(x.rows, kSummaryRanks, true));
    // More ranks than 2, one a core (a node of more cores): their own summaries; the goals stay at 2.
    for (const int n : model::timed_rank_counts(x.rows, kSummaryRanks)) {
      text += fmt::format("Summary at {} ranks:\n{}\n", n, model::summary_text(x.rows, n, false));
      md += fmt::format("\nSummary at {} ranks:\n\n{}", n, model::summary_text(x.rows, n, true));
    }
    if (!x.speed_change.empty()) {
      text += "Warning: " + x.speed_change + "\n\n";
      md += "\n**Warning**: " + x.speed_change + ".\n";
    }
  }
  // Each case recorded on one transport, predicted for the other (whatif --network), against the
  // real runs there.
  const Experiment* shm = nullptr;
  const Experiment* tcp = nullptr;
  for (const auto& x : xs) {
    if (x.label.empty()) shm = &x;
    if (x.label == kTcpLabel) tcp = &x;
  }
  std::vector<CrossRow> cross;
  if (shm && tcp)
    cross = cross_transport({"shared memory", shm->rows, shm->params_file.empty() ? nullptr : &shm->params, shm->params_file},
                            {"TCP", tcp->rows, tcp->params_file.empty() ? nullptr : &tcp->params, tcp->params_file});
  if (!cross.empty()) {
    text += fmt::format("Cross transport: recorded on one, predicted for the other with its parameters (mstep whatif "
                        "--network), against the run there made beside it (the repetitions alternate between the "
                        "transports; each row is the pair with the median LogGPS error)\n\n{}\n",
                        cross_text(cross, false));
    md += fmt::format("\n## Cross transport\n\nEach case recorded on one transport and predicted for the other as "
                      "`mstep whatif TRACE --network OTHER` does, against the run there made beside it: the repetitions "
                      "alternate between the transports, and each row is the pair with the median LogGPS error.\n\n{}",
                      cross_text(cross, true));
  }
  text += model::goals_text(all, kSummaryRanks, false);
  md += "\n## LogGPS against LogGP where messages cross S, and the goals\n\n" + model::goals_text(all, kSummaryRanks, true);
  if (!cross.empty()) {
    text += "  " + cross_goal(cross) + "\n";
    md += "- " + cross_goal(cross) + "\n";
  }
  const fs::path md_file = fs::path(o.dir) / "validation.md", json_file = fs::path(o.dir) / "validation.json";
  fmt::print("{}\nTables in {} and {}\n", text, md_file.string(), json_file.string());
  std::ofstream(md_file) << md;

  json j{{"format", "mstep-validation"}, {"version", 1}, {"date", now_iso()}, {"host", hostname()}, {"cores", cores},
         {"command", own_command_line()}, {"suite", suite.path}, {"repeat", o.repeat}, {"quick", o.filter.quick},
         {"summary_ranks", kSummaryRanks}, {"environment", mpi_environment()},
         {"load_average", {{"before", num(load_before)}, {"after", num(load_average())}}}};
  json experiments = json::array();
  for (const auto& x : xs) {
    json rows = json::array();
    for (const auto& r : x.rows) rows.push_back(row_json(r));
    experiments.push_back({{"label", x.label}, {"env", x.env}, {"params", params_json(x.params_file)},
                           {"speed_change", x.speed_change.empty() ? json(nullptr) : json(x.speed_change)},
                           {"S", bytes(x.params.loggps ? x.params.loggps->S : model::kInfiniteBytes)},
                           {"rows", rows}, {"summary", summary_json(x.rows)}});
    json by_ranks = json::array();
    for (const int n : model::timed_rank_counts(x.rows, kSummaryRanks))
      by_ranks.push_back({{"ranks", n}, {"summary", summary_json(x.rows, n)}});
    experiments.back()["summaries_at_more_ranks"] = by_ranks;
  }
  j["experiments"] = experiments;
  json crossing = json::array();
  for (const auto& c : model::crossing_rows(all, kSummaryRanks))
    crossing.push_back({{"experiment", c.experiment}, {"case", c.case_name}, {"size", c.size_label},
                        {"ranks", c.ranks}, {"loggps_abs_error_pct", c.loggps_abs_error_pct},
                        {"loggp_abs_error_pct", c.loggp_abs_error_pct}, {"loggps_better", c.loggps_better}});
  j["crossing_S"] = crossing;
  json goals = json::array();
  for (const auto& g : model::check_goals(all, kSummaryRanks))
    goals.push_back({{"goal", g.goal}, {"verdict", model::verdict_name(g.verdict)}, {"detail", g.detail}});
  j["goals"] = goals;
  j["cross_transport"] = cross_json(cross);
  if (!cross.empty()) j["cross_transport_goal"] = cross_goal(cross);
  std::ofstream(json_file) << j.dump(2) << "\n";
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
    if (xs[i].params_file.empty()) calibration_error[i] = calibrate(o, xs[i]);
    if (!calibration_error[i].empty()) std::fprintf(stderr, "mstep: validate: %s\n", calibration_error[i].c_str());
  };
  auto end = [&](std::size_t i, bool calibrated) {
    if (calibrated && calibration_error[i].empty() && !xs[i].runs.empty()) check_speed(o, xs[i]);
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
      for (const Planned& p : x.runs) x.rows.push_back(run_case(o, x, p, cores, calibration_error[i]));
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
        x.rows.push_back(run_case(o, x, p, cores, calibration_error[i]));
        continue;
      }
      CaseRuns here(o, x, p, cores, calibration_error[i]), there(o, t, t.runs[next_tcp], cores, calibration_error[tcp]);
      while (!here.done() || !there.done()) {
        here.record_next();
        there.record_next();
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
