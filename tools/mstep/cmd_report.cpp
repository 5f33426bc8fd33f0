// mstep report: predicted against actual, and where ranks waited for each other, by source line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/analysis/report.hpp"
#include "model/analysis/speed_check.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/progress.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/report_common.hpp"
#include "tools/mstep/html_parts.hpp"
#include "tools/mstep/report_html.hpp"
#include "tools/symbols/symbolizer.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;
using model::Report;
using model::WaitSite;

namespace {

// A step row's communicator heard whole: null, or its size and members (null when they are the
// world ranks 0..size-1, as MPI_COMM_WORLD's: a million-rank world is not listed in every row).
nlohmann::json partners_all_of_json(const MemberList& m) {
  if (m.empty()) return nullptr;
  nlohmann::json members = nullptr;
  if (!m.is_identity()) {
    members = nlohmann::json::array();
    for (const std::int32_t r : m)
      if (r >= 0) members.push_back(r);
  }
  return {{"size", m.size()}, {"identity", m.is_identity()}, {"members", members}};
}

nlohmann::json to_json(const Report& rep, const std::vector<Hotspot>& hot, const std::string& params_file) {
  nlohmann::json j;
  j["trace"] = rep.trace;
  j["ranks"] = rep.ranks;
  j["complete"] = rep.complete;
  j["params"] = params_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(params_file);
  j["actual_s"] = rep.actual_s;
  j["measured_to"] = rep.finalized_ranks == rep.ranks ? "MPI_Finalize" : "last record";
  j["rank_actual_s"] = rep.rank_actual_s;
  nlohmann::json models = nlohmann::json::object();
  for (const auto& m : rep.models) {
    models[m.name] = m.available ? nlohmann::json{{"predicted_s", m.predicted_s}, {"error_pct", number_or_null(m.error_pct)}}
                                 : nlohmann::json{{"predicted_s", nullptr}, {"error_pct", nullptr}, {"note", m.note}};
  }
  j["models"] = models;
  nlohmann::json hotspots = nlohmann::json::array();
  for (const auto& h : hot) {
    hotspots.push_back({{"kind", model::wait_kind_name(h.kind)}, {"mpi_call", h.mpi_call}, {"function", h.function},
                        {"file", h.file}, {"line", h.line}, {"wait_s", h.wait_s},
                        {"predicted_wait_s", number_or_null(h.predicted_wait_s)}, {"count", h.count},
                        {"share_pct", share_pct(rep, h.wait_s)}, {"ranks", h.ranks}});
  }
  j["hotspots"] = hotspots;
  nlohmann::json mpi = nlohmann::json::object();
  for (int i = 0; i < kOpCount; ++i) {
    const auto& f = rep.mpi[static_cast<std::size_t>(i)];
    if (f.calls && static_cast<Op>(i) != Op::ToolFlush)
      mpi[mpi_name(static_cast<Op>(i))] = {{"calls", f.calls}, {"time_s", f.seconds}, {"bytes", f.bytes},
                                           {"loggps_s", rep.has_loggps_functions ? nlohmann::json(f.loggps_s) : nullptr}};
  }
  j["mpi_time"] = mpi;
  j["mpi_time_s"] = rep.mpi_s;
  j["tool_time_s"] = rep.tool_s;
  j["messages"] = rep.messages;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : rep.steps) {
    steps.push_back({{"rank", s.rank}, {"step", s.step}, {"warmup", s.step == 1}, {"actual_s", s.actual_s},
                     {"mpm_s", number_or_null(s.mpm_s)}, {"miss_s", number_or_null(s.miss_s)},
                     {"step_error_pct", number_or_null(s.step_error_pct)}, {"actual_end_s", s.actual_end_s},
                     {"mpm_end_s", number_or_null(s.mpm_end_s)}, {"error_pct", number_or_null(s.error_pct)},
                     {"compute_s", s.compute_s}, {"mpi_s", s.mpi_s}, {"bytes_in", s.bytes_in},
                     {"bytes_out", s.bytes_out}, {"partners", s.partners},
                     {"partners_all_of", partners_all_of_json(s.partners_all_of)}});
  }
  j["steps"] = steps;
  j["collective_algorithms"] = rep.collective_algorithms;
  j["problems"] = rep.problems;
  j["notes"] = rep.notes;
  return j;
}

void print_csv(const Report& rep, const std::vector<Hotspot>& hot) {
  fmt::print("section,name,rank,step,actual_s,predicted_s,error_pct,count,file,line\n");
  fmt::print("run,actual,,,{},,,,,\n", rep.actual_s);
  for (const auto& m : rep.models)
    if (m.available) fmt::print("model,{},,,{},{},{},,,\n", m.name, rep.actual_s, m.predicted_s, m.error_pct);
  for (const auto& h : hot)
    fmt::print("hotspot,{} {},,,{},{},,{},{},{}\n", model::wait_kind_name(h.kind), h.mpi_call, h.wait_s,
               h.predicted_wait_s, h.count, h.file, h.line);
  for (const auto& s : rep.steps)
    fmt::print("step,,{},{},{},{},{},,,\n", s.rank, s.step, s.actual_end_s, s.mpm_end_s, s.error_pct);
  // Per MPI function: measured time, the LogGPS replay's, its error, calls (as the text table).
  for (int i = 0; i < kOpCount; ++i) {
    const auto& f = rep.mpi[static_cast<std::size_t>(i)];
    const auto op = static_cast<Op>(i);
    if (!f.calls || op == Op::ToolFlush) continue;
    const bool predicted = rep.has_loggps_functions && op != Op::Init && op != Op::Init_thread && op != Op::Finalize;
    fmt::print("function,{},,,{},{},{},{},,\n", mpi_name(op), f.seconds, predicted ? fmt::format("{}", f.loggps_s) : "",
               predicted && f.seconds > 0 ? fmt::format("{}", 100 * (f.seconds - f.loggps_s) / f.seconds) : "", f.calls);
  }
}

// The run's probed 8-byte half round trip beside the parameters' (model/analysis/speed_check.hpp).
struct LatencyLine {
  model::ProbedLatency run;
  double parameters_s = 0;
  std::optional<std::string> difference;
  std::string choice;  // why this parameter file, of several given (report_common.hpp, choose_params)
};

LatencyLine latency_line(const TraceDir& trace, const model::CalibrationParams* params) {
  LatencyLine l;
  l.run = model::probed_latency(trace, params ? model::calibrated_on_one_host(*params) : true);
  if (params) {
    l.parameters_s = params->meta.half_rtt_8B;
    l.difference = model::run_speed_difference(l.run, *params);
  }
  return l;
}

// "8-byte half round trip: 0.225 us at MPI_Init, 0.190 us at MPI_Finalize (the run's clock sync);
// parameters 0.248 us"; "" when the run has no probe.
std::string latency_text(const LatencyLine& l) {
  if (l.run.at_init_s <= 0 && l.run.at_finalize_s <= 0) return {};
  auto us = [](double s) { return s > 0 ? fmt::format("{:.3f} us", s * 1e6) : std::string("-"); };
  return fmt::format("8-byte half round trip: {} at MPI_Init, {} at MPI_Finalize (the run's clock sync){}",
                     us(l.run.at_init_s), us(l.run.at_finalize_s),
                     l.parameters_s > 0 ? fmt::format("; parameters {}", us(l.parameters_s)) : "");
}

nlohmann::json to_json(const LatencyLine& l) {
  auto seconds = [](double s) { return s > 0 ? nlohmann::json(s) : nlohmann::json(nullptr); };
  return {{"init_half_rtt_s", seconds(l.run.at_init_s)},
          {"finalize_half_rtt_s", seconds(l.run.at_finalize_s)},
          {"ranks", l.run.ranks},
          {"parameters_half_rtt_s", seconds(l.parameters_s)},
          {"warning", l.difference ? nlohmann::json(*l.difference) : nlohmann::json(nullptr)},
          {"params_choice", l.choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.choice)}};
}

void print_text(const Report& rep, const std::vector<Hotspot>& hot, const std::string& params_file, std::size_t top,
                const LatencyLine& latency) {
  fmt::print("mstep report: {} ({} ranks, {})\n", rep.trace, rep.ranks, rep.complete ? "complete" : "incomplete");
  std::size_t slowest = 0;
  for (std::size_t r = 0; r < rep.rank_actual_s.size(); ++r)
    if (rep.rank_actual_s[r] > rep.rank_actual_s[slowest]) slowest = r;
  // Say what was measured: without MPI_Finalize a rank's time ends at its last record.
  const std::string span =
      rep.finalized_ranks == rep.ranks
          ? std::string("MPI_Init to MPI_Finalize")
          : fmt::format("MPI_Init to the last record: {} of {} ranks did not reach MPI_Finalize",
                        rep.ranks - rep.finalized_ranks, rep.ranks);
  fmt::print("actual run time {:.6f} s (slowest rank {}, {})\n", rep.actual_s, slowest, span);
  fmt::print("time in MPI {:.6f} s = {:.1f}% of all ranks' time; {} messages matched\n", rep.mpi_s,
             share_pct(rep, rep.mpi_s), rep.messages);
  if (!params_file.empty())
    fmt::print("parameters: {}{}\n", params_file, latency.choice.empty() ? "" : " (" + latency.choice + ")");
  if (const std::string line = latency_text(latency); !line.empty()) fmt::print("{}\n", line);

  fmt::print("\n{:<8} {:>14} {:>9}\n", "model", "predicted s", "error %");
  for (const auto& m : rep.models) {
    if (m.available) fmt::print("{:<8} {:>14.6f} {:>+9.1f}\n", m.name, m.predicted_s, m.error_pct);
    else fmt::print("{:<8} {:>14} {:>9}  {}\n", m.name, "-", "-", m.note);
  }

  fmt::print("\nWait hotspots (measured; LogGPS-predicted at the measured start times)\n");
  fmt::print("{:<14} {:<16} {:<34} {:>12} {:>12} {:>8} {:>7}\n", "kind", "call", "location", "wait s",
             "predicted s", "count", "share%");
  for (std::size_t i = 0; i < hot.size() && i < top; ++i) {
    const auto& h = hot[i];
    const std::string where = h.file.empty() ? h.function
                                             : fmt::format("{} ({}:{})", h.function, path_basename(h.file), h.line);
    fmt::print("{:<14} {:<16} {:<34} {:>12.6f} {:>12} {:>8} {:>7.1f}\n", model::wait_kind_name(h.kind), h.mpi_call,
               where, h.wait_s, std::isfinite(h.predicted_wait_s) ? fmt::format("{:.6f}", h.predicted_wait_s) : "-",
               h.count, share_pct(rep, h.wait_s));
  }
  if (hot.empty()) fmt::print("(no call waited)\n");

  // Beside the measured time, the LogGPS replay's time in the same calls (Finalize's is 0: the
  // replay ends at its entry; Init's is not replayed).
  fmt::print("\nTime in MPI per function (all ranks)\n{:<30} {:>10} {:>12} {:>12} {:>14}\n", "function", "calls", "time s",
             "LogGPS s", "bytes");
  for (int i = 0; i < kOpCount; ++i) {
    const auto& f = rep.mpi[static_cast<std::size_t>(i)];
    const auto op = static_cast<Op>(i);
    if (!f.calls || op == Op::ToolFlush) continue;
    const bool predicted = rep.has_loggps_functions && op != Op::Init && op != Op::Init_thread && op != Op::Finalize;
    fmt::print("{:<30} {:>10} {:>12.6f} {:>12} {:>14}\n", mpi_name(op), f.calls, f.seconds,
               predicted ? fmt::format("{:.6f}", f.loggps_s) : "-", f.bytes);
  }

  // The steps whose prediction misses by the most time, each step on its own (a miss early in a
  // rank's run would otherwise show again in every later step's end time); the end times stay
  // beside them as the cumulative view.
  std::vector<const model::StepRow*> worst;
  for (const auto& s : rep.steps)
    if (std::isfinite(s.miss_s)) worst.push_back(&s);
  std::sort(worst.begin(), worst.end(), [](auto* a, auto* b) { return model::misses_more(*a, *b); });
  fmt::print("\nM-steps: {} over all ranks", rep.step_count);
  if (worst.empty()) {
    fmt::print(" (MPM needs parameters)\n");
  } else {
    fmt::print("; the {} whose MPM prediction misses by the most time (per step; 'end' columns cumulative)\n"
               "{:>5} {:>7} {:>12} {:>12} {:>12} {:>9} {:>12} {:>12} {:>10} {:>10}\n",
               std::min(top, worst.size()), "rank", "step", "actual s", "MPM s", "miss s", "error %", "end s",
               "MPM end s", "in B", "out B");
    bool warmup = false;
    for (std::size_t i = 0; i < worst.size() && i < top; ++i) {
      const auto& s = *worst[i];
      warmup = warmup || s.step == 1;
      fmt::print("{:>5} {:>7} {:>12.6f} {:>12.6f} {:>+12.6f} {:>+9.1f} {:>12.6f} {:>12.6f} {:>10} {:>10}\n", s.rank,
                 s.step == 1 ? "1 (w)" : fmt::format("{}", s.step), s.actual_s, s.mpm_s, s.miss_s, s.step_error_pct,
                 s.actual_end_s, s.mpm_end_s, s.bytes_in, s.bytes_out);
    }
    if (warmup) fmt::print("(w): the warm-up step, the run's first messages on cold connections and buffers\n");
  }
  if (!rep.collective_algorithms.empty()) {
    fmt::print("\nCollectives as the LogGPS replay decomposed them\n");
    for (const auto& a : rep.collective_algorithms) fmt::print("  {}\n", a);
  }
  for (const auto& n : rep.notes) fmt::print("note: {}\n", n);
}

// The page, with the timeline measured in one more streaming pass over the rank files.
void write_html(const TraceDir& trace, const Report& rep, const std::vector<Hotspot>& hot, const std::string& params_file,
                const model::CalibrationParams* params, const std::string& output, const LatencyLine& latency) {
  HtmlReport page;
  page.latency = latency_text(latency);
  page.latency_warning = latency.difference.value_or("");
  page.report = &rep;
  page.hotspots = &hot;
  page.meta = &trace.meta;
  page.params_file = latency.choice.empty() ? params_file : params_file + " (" + latency.choice + ")";
  std::optional<model::ActivityPicture> picture;
  if (!model::can_stream(trace)) {
    page.picture_note = "No timeline: it is drawn in a streaming pass, which does not take MPI calls from several "
                        "threads or intercommunicators yet.";
  } else if (!(rep.actual_s > 0)) {
    page.picture_note = "No timeline: the run has no time between MPI_Init and its end.";
  } else {
    const auto [ranks, files] = model::stream_inputs(trace);
    model::ActivityOptions options;
    options.span_s = rep.actual_s;
    picture = model::measure_activity(ranks, files, options);
    if (params) model::add_loggps_prediction(*picture, trace, *params);
    page.picture = &*picture;
  }
  emit_page(output, [&](std::ostream& out) { write_report_html(out, page); });
}

}  // namespace

void add_report(CLI::App& app) {
  struct Options {
    std::string dir, format = "text", stream = "auto", output;
    std::vector<std::string> params;
    std::size_t top = 10;
    unsigned jobs = std::thread::hardware_concurrency() > 1 ? 2 : 1;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("report", "Predicted against actual time, and the wait hotspots by call site");
  cmd->add_option("trace", o->dir, "Trace directory written by mstep record")->required();
  add_params_option(*cmd, o->params, "Parameter file of mstep calibrate");
  cmd->add_option("--format", o->format, "Output format: text, json, csv or html (one self-contained page: timeline, "
                  "models, hotspots)")
      ->check(CLI::IsMember({"text", "json", "csv", "html"}));
  cmd->add_option("-o,--output", o->output, "With --format html: write the page to FILE (default: standard output)");
  cmd->add_option("--stream", o->stream,
                  fmt::format("Read the records a frame at a time, holding only what is in flight (the JSON and CSV "
                              "step table then lists the 1000 steps that miss most): yes, no, or auto (above {} "
                              "records)", model::kStreamAboveRecords))
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  cmd->add_option("--jobs", o->jobs, "Threads of a streamed report (2: the LogGP and linear replays run beside the rest)")
      ->check(CLI::Range(1, 2));
  cmd->add_option("--top", o->top, "Rows of hotspots and steps in the text report")->check(CLI::Range(1, 100000));
  cmd->callback([o] {
    if (!o->output.empty() && o->format != "html") fail(2, "-o/--output goes with --format html");
    bool streamed = false;
    const TraceDir trace = load_trace_for_models(o->dir, o->stream, streamed);
    const std::vector<ParamsFile> given = read_params_given(o->params, o->dir);
    const ChosenParams chosen = choose_params(given, trace);
    const std::string params_file = given.empty() ? std::string() : given[chosen.index].file;
    const model::CalibrationParams* params = given.empty() ? nullptr : &given[chosen.index].params;
    if (params) warn_if_other_network(*params, params_file, trace);
    LatencyLine latency = latency_line(trace, params);
    latency.choice = chosen.choice;
    if (latency.difference) std::fprintf(stderr, "mstep: warning: %s\n", latency.difference->c_str());
    const Report rep = streamed ? model::build_report_streamed(trace, params, 1000, o->jobs)
                                : model::build_report(trace, params);
    const auto hot = resolve_hotspots(trace, rep);
    if (o->format == "json") {
      nlohmann::json j = to_json(rep, hot, params_file);
      j["latency_probe"] = to_json(latency);
      fmt::print("{}\n", j.dump(2));
    }
    else if (o->format == "csv") print_csv(rep, hot);
    else if (o->format == "html") write_html(trace, rep, hot, params_file, params, o->output, latency);
    else print_text(rep, hot, params_file, o->top, latency);
    TraceDir problems;
    problems.problems = rep.problems;
    report_problems(problems);
  });
}

}  // namespace mstep::cli
