// mstep whatif: what a recorded run would take on another network. Every model of `mstep report`
// replays the trace under the calibrated parameters (the baseline) and under edited ones, side by
// side (MODELS.md section 5: the sensitivity question asked of a trace).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/analysis/report.hpp"
#include "model/analysis/whatif.hpp"
#include "model/analysis/activity.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/html_parts.hpp"
#include "tools/mstep/network_options.hpp"
#include "tools/mstep/progress.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/report_common.hpp"
#include "tools/mstep/whatif_html.hpp"
#include "tools/symbols/symbolizer.hpp"

namespace mstep::cli {
namespace {

using model::Change;
using model::WhatIfResult;

struct WhatifOptions {
  std::string dir, format = "text", stream = "auto", output;
  std::vector<std::string> params;
  NetworkOptions net;
  unsigned jobs = std::thread::hardware_concurrency() > 1 ? 2 : 1;
  std::size_t top = 16;
};


// A wait hotspot as users read it: one source line, summed over ranks (as in mstep report), with
// LogGPS's prediction under both parameter sets.
struct WhatIfHotspot {
  model::WaitKind kind{};
  std::string mpi_call, function, file;
  int line = 0;
  double wait_s = 0, baseline_s = 0, whatif_s = 0;
  std::uint64_t count = 0;
  std::vector<std::int32_t> ranks;
};

std::vector<WhatIfHotspot> resolve_hotspots(const TraceDir& trace, const WhatIfResult& res) {
  Symbolizer sym;
  std::map<std::tuple<int, std::string, std::string, std::string, int>, WhatIfHotspot> merged;
  for (const auto& s : res.sites) {
    const SourceLocation loc = site_location(sym, trace, s.site);
    const std::string call = mpi_name(s.site.op);
    WhatIfHotspot& h = merged[{static_cast<int>(s.site.kind), call, loc.function, loc.file, loc.line}];
    h.kind = s.site.kind;
    h.mpi_call = call;
    h.function = loc.function.empty() ? "?" : loc.function;
    h.file = loc.file;
    h.line = loc.line;
    h.wait_s += s.site.wait_s;
    h.baseline_s += s.site.predicted_wait_s;
    h.whatif_s += s.whatif_predicted_s;
    h.count += s.site.count;
    if (std::find(h.ranks.begin(), h.ranks.end(), s.site.rank) == h.ranks.end()) h.ranks.push_back(s.site.rank);
  }
  std::vector<WhatIfHotspot> out;
  for (auto& [k, h] : merged) out.push_back(std::move(h));
  std::sort(out.begin(), out.end(), [](const WhatIfHotspot& a, const WhatIfHotspot& b) { return a.wait_s > b.wait_s; });
  return out;
}

std::string speedup_text(double s) { return std::isfinite(s) ? fmt::format("{:.4f}", s) : "inf"; }

nlohmann::json to_json(const WhatIfResult& res, const model::EditedParams& ed, const std::vector<WhatIfHotspot>& hot,
                       const std::string& params_file, const std::string& network) {
  nlohmann::json j;
  j["trace"] = res.trace;
  j["complete"] = res.complete;
  j["params"] = params_file;
  j["network"] = network.empty() ? nlohmann::json(nullptr) : nlohmann::json(network);
  j["actual_s"] = res.actual_s;
  j["changes"] = changes_json(ed.changes);
  nlohmann::json models = nlohmann::json::object();
  for (const auto& m : res.models) {
    models[m.name] = m.available ? nlohmann::json{{"baseline_s", m.baseline_s}, {"whatif_s", m.whatif_s},
                                                  {"speedup", number_or_null(m.speedup)}}
                                 : nlohmann::json{{"baseline_s", nullptr}, {"whatif_s", nullptr},
                                                  {"speedup", nullptr}, {"note", m.note}};
  }
  j["models"] = models;
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : res.per_rank)
    ranks.push_back({{"rank", r.rank}, {"actual_s", r.actual_s}, {"baseline_s", r.baseline_s}, {"whatif_s", r.whatif_s},
                     {"speedup", number_or_null(model::speedup(r.baseline_s, r.whatif_s))}});
  j["ranks"] = ranks;
  nlohmann::json hotspots = nlohmann::json::array();
  for (const auto& h : hot)
    hotspots.push_back({{"kind", model::wait_kind_name(h.kind)}, {"mpi_call", h.mpi_call}, {"function", h.function},
                        {"file", h.file}, {"line", h.line}, {"wait_s", h.wait_s},
                        {"baseline_predicted_s", number_or_null(h.baseline_s)},
                        {"whatif_predicted_s", number_or_null(h.whatif_s)}, {"count", h.count}, {"ranks", h.ranks}});
  j["hotspots"] = hotspots;
  j["problems"] = res.problems;
  std::vector<std::string> notes = ed.notes;
  notes.insert(notes.end(), res.notes.begin(), res.notes.end());
  j["notes"] = notes;
  return j;
}

void print_csv(const WhatIfResult& res) {
  fmt::print("model,actual_s,baseline_s,whatif_s,speedup\n");
  for (const auto& m : res.models) {
    if (m.available)
      fmt::print("{},{},{},{},{}\n", m.name, res.actual_s, m.baseline_s, m.whatif_s,
                 std::isfinite(m.speedup) ? fmt::format("{}", m.speedup) : "inf");
    else fmt::print("{},{},,,\n", m.name, res.actual_s);
  }
}

std::string seconds_or_dash(double s) { return std::isfinite(s) ? fmt::format("{:.6f}", s) : "-"; }

void print_text(const WhatIfResult& res, const model::EditedParams& ed, const std::vector<WhatIfHotspot>& hot,
                const std::string& params_file, const WhatifOptions& o) {
  fmt::print("mstep whatif: {} ({} ranks, {})\n", res.trace, res.ranks, res.complete ? "complete" : "incomplete");
  fmt::print("baseline: {}\n", params_file);
  if (!o.net.network.empty()) fmt::print("network: {}\n", o.net.network);
  fmt::print("changes:{}\n", ed.changes.empty() ? " none" : "");
  for (const Change& c : ed.changes) fmt::print("  {}\n", model::describe(c));
  fmt::print("actual run time {:.6f} s\n", res.actual_s);

  fmt::print("\n{:<8} {:>12} {:>12} {:>9}\n", "model", "baseline s", "what-if s", "speedup");
  for (const auto& m : res.models) {
    if (m.available)
      fmt::print("{:<8} {:>12.6f} {:>12.6f} {:>9}\n", m.name, m.baseline_s, m.whatif_s, speedup_text(m.speedup));
    else fmt::print("{:<8} {:>12} {:>12} {:>9}  {}\n", m.name, "-", "-", "-", m.note);
  }

  if (!res.per_rank.empty()) {
    fmt::print("\nLogGPS per rank (predicted MPI_Finalize entry)\n{:>5} {:>12} {:>12} {:>12} {:>9}\n", "rank",
               "actual s", "baseline s", "what-if s", "speedup");
    for (std::size_t i = 0; i < res.per_rank.size() && i < o.top; ++i) {
      const auto& r = res.per_rank[i];
      fmt::print("{:>5} {:>12.6f} {:>12.6f} {:>12.6f} {:>9}\n", r.rank, r.actual_s, r.baseline_s, r.whatif_s,
                 speedup_text(model::speedup(r.baseline_s, r.whatif_s)));
    }
    if (const std::size_t more = res.per_rank.size() - std::min(o.top, res.per_rank.size()))
      fmt::print("({} more rank{}: --top, or --format json)\n", more, more == 1 ? "" : "s");
  }

  fmt::print("\nWait hotspots (measured; LogGPS-predicted at the measured start times)\n");
  fmt::print("{:<14} {:<16} {:<34} {:>12} {:>12} {:>12} {:>8}\n", "kind", "call", "location", "wait s", "baseline s",
             "what-if s", "count");
  for (std::size_t i = 0; i < hot.size() && i < o.top; ++i) {
    const auto& h = hot[i];
    const std::string where = h.file.empty() ? h.function
                                             : fmt::format("{} ({}:{})", h.function, path_basename(h.file), h.line);
    fmt::print("{:<14} {:<16} {:<34} {:>12.6f} {:>12} {:>12} {:>8}\n", model::wait_kind_name(h.kind), h.mpi_call, where,
               h.wait_s, seconds_or_dash(h.baseline_s), seconds_or_dash(h.whatif_s), h.count);
  }
  if (hot.empty()) fmt::print("(no call waited)\n");
  for (const auto& n : ed.notes) fmt::print("note: {}\n", n);
  for (const auto& n : res.notes) fmt::print("note: {}\n", n);
}

// The page, with the run's timeline and both LogGPS replays drawn below each rank.
void write_html(const TraceDir& trace, const WhatIfResult& res, const model::EditedParams& ed,
                const std::vector<WhatIfHotspot>& hot, const model::CalibrationParams& baseline,
                const std::string& params_file, const WhatifOptions& o) {
  WhatIfHtml page;
  page.result = &res;
  for (const Change& c : ed.changes) page.changes.push_back(model::describe(c));
  page.notes = ed.notes;
  page.notes.insert(page.notes.end(), res.notes.begin(), res.notes.end());
  page.params_file = params_file;
  page.network = o.net.network;
  for (const auto& h : hot)
    page.waits.push_back({model::wait_kind_name(h.kind), h.mpi_call,
                          h.file.empty() ? h.function : fmt::format("{} ({}:{})", h.function, path_basename(h.file), h.line),
                          h.wait_s, h.baseline_s, h.whatif_s, h.count});
  std::optional<model::ActivityPicture> picture;
  double span = res.actual_s;  // wide enough for the slower of the predictions
  for (const auto& m : res.models)
    if (m.available && m.name == "LogGPS") span = std::max({span, m.baseline_s, m.whatif_s});
  if (!model::can_stream(trace)) {
    page.picture_note = "No timeline: it is drawn in a streaming pass, which does not take MPI calls from several "
                        "threads or intercommunicators yet.";
  } else if (!(span > 0) || !std::isfinite(span)) {
    page.picture_note = "No timeline: the run has no time between MPI_Init and its end.";
  } else {
    const auto [ranks, files] = model::stream_inputs(trace);
    model::ActivityOptions options;
    options.span_s = span;
    picture = model::measure_activity(ranks, files, options);
    model::add_loggps_prediction(*picture, trace, ed.params);
    page.whatif_compute = std::move(picture->predicted_compute);
    page.whatif_mpi = std::move(picture->predicted_mpi);
    model::add_loggps_prediction(*picture, trace, baseline);
    if (page.whatif_compute.empty() || picture->predicted_compute.empty()) {
      page.picture_note = "No timeline: both parameter sets need LogGPS parameters.";
    } else {
      page.picture = &*picture;
    }
  }
  emit_page(o.output, [&](std::ostream& out) { write_whatif_html(out, page); });
}

void run_whatif(const WhatifOptions& o) {
  if (!o.output.empty() && o.format != "html") fail(2, "-o/--output goes with --format html");
  if (!o.net.any())
    fail(2, "whatif: nothing to change: give --set NAME=VALUE, --scale NAME=FACTOR, --network FILE or --no-cold");
  const std::vector<model::Edit> edits = parse_edits(o.net);
  const std::vector<ParamsFile> given = read_params_given(o.params, o.dir);
  if (given.empty())
    fail(1, fmt::format("whatif needs calibrated parameters: run `mstep calibrate -o {}/params.json`, or pass --params FILE",
                        o.dir));
  // Checked before the trace is read: a mistake fails at once, not after a long load.
  for (const ParamsFile& p : given) edited_network(p.params, o.net, edits);
  bool streamed = false;
  const TraceDir trace = load_trace_for_models(o.dir, o.stream, streamed);
  const ChosenParams chosen = choose_params(given, trace);
  const model::CalibrationParams& baseline = given[chosen.index].params;
  const std::string& params_file = given[chosen.index].file;
  const model::EditedParams ed = edited_network(baseline, o.net, edits);
  warn_if_other_network(baseline, params_file, trace);
  warn_if_other_speed(baseline, trace);
  const WhatIfResult res = model::compare_whatif(trace, baseline, ed.params, streamed ? o.jobs : 0);
  const auto hot = resolve_hotspots(trace, res);
  const std::string shown = chosen.choice.empty() ? params_file : params_file + " (" + chosen.choice + ")";
  if (o.format == "json") {
    nlohmann::json j = to_json(res, ed, hot, params_file, o.net.network);
    j["params_choice"] = chosen.choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(chosen.choice);
    fmt::print("{}\n", j.dump(2));
  } else if (o.format == "csv") print_csv(res);
  else if (o.format == "html") write_html(trace, res, ed, hot, baseline, shown, o);
  else print_text(res, ed, hot, shown, o);
  TraceDir problems;
  problems.problems = res.problems;
  report_problems(problems);
}

}  // namespace

void add_whatif(CLI::App& app) {
  auto o = std::make_shared<WhatifOptions>();
  auto* cmd = app.add_subcommand("whatif", "Predicted run time on another network: edited parameters against the calibrated ones");
  cmd->add_option("trace", o->dir, "Trace directory written by mstep record")->required();
  add_network_options(*cmd, o->net);
  add_params_option(*cmd, o->params, "Baseline parameter file of mstep calibrate");
  cmd->add_option("--format", o->format, "Output format: text, json, csv or html (one self-contained page)")
      ->check(CLI::IsMember({"text", "json", "csv", "html"}));
  cmd->add_option("-o,--output", o->output, "With --format html: write the page to FILE (default: standard output)");
  cmd->add_option("--stream", o->stream,
                  fmt::format("Read the records a frame at a time, holding only what is in flight: yes, no, or auto "
                              "(above {} records)", model::kStreamAboveRecords))
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  cmd->add_option("--jobs", o->jobs, "Threads of a streamed what-if (2: some replays run beside the rest)")
      ->check(CLI::Range(1, 2));
  cmd->add_option("--top", o->top, "Rows of ranks and hotspots in the text output")->check(CLI::Range(1, 100000));
  cmd->footer(network_options_help() + "\nExamples:\n  mstep whatif run1 --set L=2us --set Gl=0.1ns/B\n"
              "  mstep whatif run1 --scale L=10 --scale G=0.5\n  mstep whatif run1 --set S=inf\n"
              "  mstep whatif run1 --network share/params/roda1999-mpi-cray-t3e.json");
  cmd->callback([o, cmd] {
    collect_edits(*cmd, o->net);
    run_whatif(*o);
  });
}

}  // namespace mstep::cli
