#include "tools/mstep/validate_output.hpp"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/analysis/validation.hpp"
#include "tools/mstep/validate_cross.hpp"

extern char** environ;

namespace mstep::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;
using model::ValidationRow;

std::string env_text(const std::map<std::string, std::string>& env) {
  std::string s;
  for (const auto& [k, v] : env) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

double load_average() {
  double load[1] = {0};
  return ::getloadavg(load, 1) == 1 ? load[0] : model::kNaN;
}

namespace {

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json bytes(std::uint64_t v) { return v == model::kInfiniteBytes ? json(nullptr) : json(v); }

json params_json(const std::string& file) {
  if (file.empty()) return nullptr;
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return json{{"file", file}, {"content", json::parse(text.str(), nullptr, false)}};
}

// The calibrations made during the runs, each as params_json gives it.
json during_json(const Experiment& x) {
  json all = json::array();
  for (const Experiment::Calibration& c : x.during) all.push_back(params_json(c.file));
  return all;
}

// A transport's calibrations for the cross table; none where validate had no parameters for it.
TransportRuns transport_runs(const char* name, const Experiment& x) {
  TransportRuns t{name, x.rows, {}, {}};
  if (x.params_file.empty()) return t;
  t.calibrations = x.calibrations();
  for (std::size_t i = 0; i < t.calibrations.size(); ++i) t.files.push_back(x.file_of(i));
  return t;
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
          {"params_after", r.params_after},
          {"params_during", r.params_during},
          {"params_file", r.params_file.empty() ? json(nullptr) : json(r.params_file)},
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


}  // namespace

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
    cross = cross_transport(transport_runs("shared memory", *shm), transport_runs("TCP", *tcp));
  if (!cross.empty()) {
    text += fmt::format("Cross transport: recorded on one, predicted for the other with its parameters (mstep whatif "
                        "--network), against the run there made beside it (the repetitions alternate between the "
                        "transports; each row is the pair with the median LogGPS error)\n\n{}\n",
                        cross_text(cross, false));
    md += fmt::format("\n## Cross transport\n\nEach case recorded on one transport and predicted for the other as "
                      "`mstep whatif TRACE --network OTHER` does, against the run there made beside it: the repetitions "
                      "alternate between the transports, and each row is the pair with the median LogGPS error.{}\n\n{}",
                      shm->calibrations().size() + tcp->calibrations().size() > 2
                          ? " Each run is taken with the calibration of its period, made before, during or after the "
                            "runs (`params` in validation.json)."
                          : "",
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
                           {"params_after", params_json(x.after_file)},
                           {"params_during", during_json(x)},
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


}  // namespace mstep::cli
