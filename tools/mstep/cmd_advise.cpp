// mstep advise: for every MPI_Barrier and MPI_Bcast call site of a trace, the predicted time of
// each algorithm of the papers (model/analysis/advise.hpp) under the trace's parameters, or under
// a what-if network, the best one, and what the run would gain if that site used it.
#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/delay_pairs.hpp"
#include "model/analysis/advise.hpp"
#include "model/analysis/report.hpp"
#include "tools/mstep/advise_sites.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/network_options.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/report_common.hpp"

namespace mstep::cli {
namespace {

using model::CollectiveAdvice;

struct AdviseOptions {
  std::string dir, format = "text", pairs;
  std::vector<std::string> params;
  NetworkOptions net;
};

std::string site_title(const CollectiveSite& s) {
  std::string t = fmt::format("{} at {}: {} rank{}", mpi_name(s.op), s.location, s.comm_size, s.comm_size == 1 ? "" : "s");
  if (s.op == Op::Bcast) t += fmt::format(", root {}, {} B", s.root, s.bytes);
  return t;
}

double pct_of(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

std::string span_line(const CollectiveSite& s, bool measured) {
  if (!measured) return "not measured (a rank with several threads, or intercommunicators: the trace is not streamed)";
  if (s.spans.count() == 0) return "no instance with every member's call";
  return fmt::format("median {:.3f} us, mean {:.3f} us over {} instance{}{}", 1e6 * s.spans.median_s(), 1e6 * s.spans.mean_s(),
                     s.spans.count(), s.spans.count() == 1 ? "" : "s",
                     s.spans.sampled() ? fmt::format(" (median of {} drawn at random)", model::SpanStats::kSpanSample) : "");
}

void print_text(const TraceDir& trace, const AdviseSites& g, const std::vector<CollectiveAdvice>& advice,
                const model::EditedParams& ed, const std::string& params_file, const AdviseOptions& o) {
  const auto c = trace_completeness(trace, g.damaged);
  fmt::print("mstep advise: {} ({} ranks, {})\n", trace.path, trace.ranks.size(), c.complete ? "complete" : "incomplete");
  fmt::print("parameters: {}\n", params_file);
  if (!o.net.network.empty()) fmt::print("network: {}\n", o.net.network);
  if (o.net.any()) {
    fmt::print("changes:{}\n", ed.changes.empty() ? " none" : "");
    for (const auto& ch : ed.changes) fmt::print("  {}\n", model::describe(ch));
  }
  fmt::print("actual run time {:.6f} s (slowest rank, MPI_Init exit to MPI_Finalize entry)\n", g.run_s);
  if (advice.empty()) fmt::print("\nno MPI_Barrier or MPI_Bcast call in this trace: nothing to advise on\n");
  for (const CollectiveAdvice& a : advice) {
    const auto& s = a.site;
    fmt::print("\n{}\n", site_title(s));
    fmt::print("  {:g} call{} per rank, measured {:.3f} us per call (late members included); network: {}\n",
               s.calls_per_rank(), s.calls_per_rank() == 1 ? "" : "s", s.records ? 1e6 * s.measured_s / static_cast<double>(s.records) : 0,
               a.network);
    fmt::print("  measured span per instance (from the last arrival it needed to the last exit): {}\n",
               span_line(s, g.spans_measured));
    const std::string ran = model::algorithm_that_ran(a, trace.meta);
    std::size_t width = 30;
    for (const auto& e : a.algorithms) width = std::max(width, e.name.size() + 2);
    fmt::print("  {:<{}} {:>14}\n", "algorithm", width, "predicted us");
    for (const auto& e : a.algorithms) {
      std::string marks = e.name == a.best ? "  best" : "";
      if (e.name == ran) marks += "  ran";
      fmt::print("  {:<{}} {:>14}{}\n", e.name, width, std::isfinite(e.predicted_s) ? fmt::format("{:.3f}", 1e6 * e.predicted_s) : "-",
                 marks);
    }
    if (a.gain_per_call_s > 0)
      fmt::print("  use {}: {:.3f} us less per call, predicted gain {:.6f} s ({:.2f}% of the run)\n", a.best,
                 1e6 * a.gain_per_call_s, a.gain_s, pct_of(a.gain_s, g.run_s));
    else if (!a.best.empty()) fmt::print("  MPICH's default is the best predicted here\n");
    for (const auto& n : a.notes) fmt::print("  note: {}\n", n);
  }
  for (const auto& n : ed.notes) fmt::print("note: {}\n", n);
  if (g.intercomm_calls)
    fmt::print("note: {} call{} on intercommunicators not advised on\n", g.intercomm_calls, g.intercomm_calls == 1 ? "" : "s");
}

nlohmann::json to_json(const TraceDir& trace, const AdviseSites& g, const std::vector<CollectiveAdvice>& advice,
                       const model::EditedParams& ed, const std::string& params_file, const AdviseOptions& o) {
  nlohmann::json j;
  j["trace"] = trace.path;
  j["ranks"] = trace.ranks.size();
  j["complete"] = trace_completeness(trace, g.damaged).complete;
  j["params"] = params_file;
  j["network"] = o.net.network.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.net.network);
  j["changes"] = changes_json(ed.changes);
  j["actual_s"] = g.run_s;
  nlohmann::json sites = nlohmann::json::array();
  for (const CollectiveAdvice& a : advice) {
    const auto& s = a.site;
    nlohmann::json algs = nlohmann::json::array();
    for (const auto& e : a.algorithms)
      algs.push_back({{"name", e.name}, {"predicted_s", number_or_null(e.predicted_s)}, {"mpich_default", e.mpich_default}});
    const std::string ran = model::algorithm_that_ran(a, trace.meta);
    nlohmann::json span = nullptr;
    if (g.spans_measured)
      span = {{"instances", s.spans.count()},
              {"median_s", s.spans.count() ? nlohmann::json(s.spans.median_s()) : nlohmann::json(nullptr)},
              {"mean_s", s.spans.count() ? nlohmann::json(s.spans.mean_s()) : nlohmann::json(nullptr)},
              {"sampled", s.spans.sampled()}};
    sites.push_back({{"call", mpi_name(s.op)},
                     {"location", s.location},
                     {"comm_size", s.comm_size},
                     {"root", s.op == Op::Bcast ? nlohmann::json(s.root) : nlohmann::json(nullptr)},
                     {"bytes", s.bytes},
                     {"calls", s.records},
                     {"ranks", s.ranks},
                     {"calls_per_rank", s.calls_per_rank()},
                     {"measured_s", s.measured_s},
                     {"span", span},
                     {"ran", ran.empty() ? nlohmann::json(nullptr) : nlohmann::json(ran)},
                     {"network", a.network},
                     {"algorithms", algs},
                     {"best", a.best},
                     {"default_s", number_or_null(a.default_s)},
                     {"best_s", number_or_null(a.best_s)},
                     {"gain_per_call_s", a.gain_per_call_s},
                     {"gain_s", a.gain_s},
                     {"gain_pct", pct_of(a.gain_s, g.run_s)},
                     {"notes", a.notes}});
  }
  j["sites"] = sites;
  std::vector<std::string> notes = ed.notes;
  if (g.intercomm_calls) notes.push_back(fmt::format("{} calls on intercommunicators not advised on", g.intercomm_calls));
  j["notes"] = notes;
  j["problems"] = trace.problems;
  for (const auto& p : g.problems) j["problems"].push_back(p);
  return j;
}

// CSV quoting for a field that may hold commas or quotes (locations, algorithm names).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

void print_csv(const TraceDir& trace, const AdviseSites& g, const std::vector<CollectiveAdvice>& advice) {
  fmt::print("call,location,comm_size,root,bytes,calls_per_rank,measured_s_per_call,span_median_s,span_mean_s,network,"
             "algorithm,predicted_s,mpich_default,best,ran\n");
  for (const CollectiveAdvice& a : advice) {
    const auto& s = a.site;
    const bool spans = g.spans_measured && s.spans.count() > 0;
    const std::string ran = model::algorithm_that_ran(a, trace.meta);
    for (const auto& e : a.algorithms)
      fmt::print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", mpi_name(s.op), quoted(s.location), s.comm_size,
                 s.op == Op::Bcast ? fmt::format("{}", s.root) : "", s.bytes, s.calls_per_rank(),
                 s.records ? s.measured_s / static_cast<double>(s.records) : 0,
                 spans ? fmt::format("{}", s.spans.median_s()) : "", spans ? fmt::format("{}", s.spans.mean_s()) : "",
                 quoted(a.network), quoted(e.name), std::isfinite(e.predicted_s) ? fmt::format("{}", e.predicted_s) : "",
                 e.mpich_default ? 1 : 0, e.name == a.best ? 1 : 0, e.name == ran ? 1 : 0);
  }
}

void run_advise(const AdviseOptions& o) {
  const std::vector<model::Edit> edits = parse_edits(o.net);
  const std::vector<ParamsFile> given = read_params_given(o.params, o.dir);
  if (given.empty())
    fail(1, fmt::format("advise needs calibrated parameters: run `mstep calibrate -o {}/params.json`, or pass --params FILE",
                        o.dir));
  for (const ParamsFile& p : given) {
    if (!edited_network(p.params, o.net, edits).params.loggps)
      fail(1, fmt::format("advise needs LogGPS parameters (L, o, g, ...), and {} has none: run mstep calibrate",
                          o.net.network.empty() ? p.file : o.net.network));
  }
  TraceDir trace;
  try {
    trace = load_trace_dir(o.dir, std::nullopt, {}, /*metadata_only=*/true);
  } catch (const TraceError& e) {
    fail(1, e.what());
  }
  const ChosenParams chosen = choose_params(given, trace);
  const model::CalibrationParams& baseline = given[chosen.index].params;
  const std::string shown = chosen.choice.empty() ? given[chosen.index].file
                                                  : given[chosen.index].file + " (" + chosen.choice + ")";
  const std::string& params_file = given[chosen.index].file;
  const model::EditedParams ed = edited_network(baseline, o.net, edits);
  warn_if_other_network(baseline, params_file, trace);
  warn_if_other_speed(baseline, trace);
  PairLatency pairs;
  if (!o.pairs.empty()) {
    std::string error;
    pairs = PairLatency::read(o.pairs, static_cast<int>(trace.ranks.size()), error);
    if (!error.empty()) fail(2, fmt::format("--pairs {}: {}", o.pairs, error));
  }
  const AdviseSites g = gather_advise_sites(trace);
  std::vector<CollectiveAdvice> advice;
  for (const CollectiveSite& s : g.sites)
    advice.push_back(model::advise_collective(s, ed.params, pairs.empty() ? nullptr : &pairs));
  // The sites that would gain most first; then where the run spends most time in them.
  std::stable_sort(advice.begin(), advice.end(), [](const CollectiveAdvice& a, const CollectiveAdvice& b) {
    if (a.gain_s != b.gain_s) return a.gain_s > b.gain_s;
    return a.site.measured_s > b.site.measured_s;
  });
  if (o.format == "json") {
    nlohmann::json j = to_json(trace, g, advice, ed, params_file, o);
    j["params_choice"] = chosen.choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(chosen.choice);
    fmt::print("{}\n", j.dump(2));
  } else if (o.format == "csv") print_csv(trace, g, advice);
  else print_text(trace, g, advice, ed, shown, o);
  TraceDir problems;
  problems.problems = trace.problems;
  problems.problems.insert(problems.problems.end(), g.problems.begin(), g.problems.end());
  report_problems(problems);
}

}  // namespace

void add_advise(CLI::App& app) {
  auto o = std::make_shared<AdviseOptions>();
  auto* cmd = app.add_subcommand(
      "advise", "Which barrier and broadcast algorithm each call site should use: every algorithm's predicted time");
  cmd->add_option("trace", o->dir, "Trace directory written by mstep record")->required();
  add_params_option(*cmd, o->params, "Parameter file of mstep calibrate");
  add_network_options(*cmd, o->net);
  cmd->add_option("--pairs", o->pairs,
                  "Latency added per pair of ranks, a MSTEP_DELAY_PAIRS file: {\"clusters\": [[0,1],[2,3]], "
                  "\"inter\": \"200us\"} or {\"matrix\": [[...]]} (broadcast schedules and barriers)");
  cmd->add_option("--format", o->format, "Output format: text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->footer(network_options_help() +
              "\nExamples:\n  mstep advise run1\n  mstep advise run1 --scale L=100   (the same run on a network of "
              "100 times the latency)");
  cmd->callback([o, cmd] {
    collect_edits(*cmd, o->net);
    run_advise(*o);
  });
}

}  // namespace mstep::cli
