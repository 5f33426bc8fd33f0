// mstep export: a trace in the formats of other tools. --goal: LogGOPSim's GOAL schedule
// (model/export/goal.hpp), to simulate the recorded run with LogGOPSim; --perfetto: Chrome
// trace-event JSON (model/export/perfetto.hpp), to see the run's timeline in Perfetto's UI;
// --otf2: an OTF2 archive (model/export/otf2.hpp) for Vampir, Scalasca and Cube.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/analysis/activity.hpp"
#include "model/analysis/report.hpp"
#include "model/params/params.hpp"
#include "model/export/goal.hpp"
#include "model/export/otf2.hpp"
#include "model/export/perfetto.hpp"
#include "model/params/quantity.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/progress.hpp"
#include "tools/mstep/report_common.hpp"
#include "tools/symbols/symbolizer.hpp"

namespace mstep::cli {
namespace {

struct ExportOptions {
  std::string dir;
  std::string goal;
  std::string perfetto;
  std::string otf2;
  std::vector<std::string> params;  // --perfetto: add the LogGPS prediction's tracks (several: the run's period's)
  std::string from, to;  // --perfetto: the stretch of the run to write (times with units)
  std::string unit = "ns";
};

// The ranks whose records cannot be taken in one streaming pass, named for the error line.
std::string unstreamable(const TraceDir& trace) {
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    if (!trace.ranks[r]) continue;
    if (trace.ranks[r]->several_threads) return fmt::format("rank {} made MPI calls from several threads", r);
    for (const CommDef& c : trace.ranks[r]->comms)
      if (c.inter) return fmt::format("rank {} used an intercommunicator", r);
  }
  return {};
}

// --from/--to as nanoseconds after the run's earliest record; nullopt (with the error printed) on a
// bad value.
std::optional<model::TimeWindow> time_window(const ExportOptions& o) {
  model::TimeWindow w;
  for (const auto& [text, name, bound] : {std::tuple{o.from, "--from", &w.from_ns}, std::tuple{o.to, "--to", &w.to_ns}}) {
    if (text.empty()) continue;
    try {
      const double s = model::parse_quantity(text, model::Quantity::Time);
      if (!(s >= 0) || s > 1e9) throw std::invalid_argument("a time from 0 to 1e9 s after the start of the run");
      *bound = static_cast<std::int64_t>(std::llround(s * 1e9));
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "mstep: %s '%s': %s\n", name, text.c_str(), e.what());
      return std::nullopt;
    }
  }
  if (w.from_ns > w.to_ns) {
    std::fprintf(stderr, "mstep: --from %s is after --to %s\n", o.from.c_str(), o.to.c_str());
    return std::nullopt;
  }
  return w;
}

int run_perfetto(const ExportOptions& o) {
  // The options and parameters first: a bad one leaves no empty output behind.
  const std::optional<model::TimeWindow> window = time_window(o);
  if (!window) return 2;
  // No default file here: the prediction's tracks are asked for by naming the parameters.
  const std::vector<ParamsFile> given = o.params.empty() ? std::vector<ParamsFile>{} : read_params_given(o.params, {});
  for (const ParamsFile& f : given)
    if (!f.params.loggps) {
      std::fprintf(stderr, "mstep: %s has no LogGPS parameters to predict with\n", f.file.c_str());
      return 1;
    }
  auto load = [&](bool metadata_only) {
    Progress progress("reading", static_cast<std::uint64_t>(read_run_meta(o.dir).ranks));
    return load_trace_dir(o.dir, std::nullopt, [&](std::size_t r) { progress.update(r); }, metadata_only);
  };
  TraceDir trace = load(true);
  // Threads or intercommunicators: not for one streaming pass; the trace is read whole instead.
  const std::string why = unstreamable(trace);
  if (!why.empty()) {
    if (!o.params.empty()) {
      std::fprintf(stderr, "mstep: export --perfetto --params does not take this trace yet: %s\n", why.c_str());
      return 1;
    }
    trace = load(false);
  }
  const ChosenParams chosen = choose_params(given, trace);
  const model::CalibrationParams* params = given.empty() ? nullptr : &given[chosen.index].params;
  std::ofstream out(o.perfetto, std::ios::binary);
  if (!out) {
    std::fprintf(stderr, "mstep: cannot write %s\n", o.perfetto.c_str());
    return 1;
  }
  // About 360 bytes of JSON a record (NetPIPE's 77.7 M records made 28 GB): say so before writing
  // what no browser opens.
  if (const double bytes = 360.0 * static_cast<double>(trace_records(trace)); bytes > 2e9 && window->all())
    std::fprintf(stderr, "mstep: warning: %llu records make about %.0f GB of JSON, more than Perfetto's UI opens "
                 "(a few GB at most); --from and --to write a stretch of the run, and --otf2 is about 12 times smaller\n",
                 static_cast<unsigned long long>(trace_records(trace)), bytes / 1e9);
  // Ranks of one program share their call sites: each distinct stack is resolved once.
  Symbolizer sym;
  std::map<std::string, std::string> named;
  const auto name_site = [&](const CallsiteDef& site) -> std::string {
    std::string key;
    for (const CallsiteFrame& f : site.frames) key += fmt::format("{}+{:x};", f.module, f.offset);
    auto [it, added] = named.try_emplace(std::move(key));
    if (added) it->second = sym.describe(site);
    return it->second;
  };
  model::PredictedReplay predict;
  if (params) predict = [&](model::ReplayObserver& observer) { model::observe_loggps(trace, *params, observer); };
  const auto [ranks, files] = model::stream_inputs(trace);
  const model::PerfettoSummary s = why.empty() ? model::write_perfetto(ranks, files, out, name_site, predict, *window)
                                               : model::write_perfetto_whole(ranks, out, name_site, *window);
  out.close();
  if (!out) {
    std::fprintf(stderr, "mstep: cannot write %s (disk full?)\n", o.perfetto.c_str());
    return 1;
  }
  warn_problems(trace.problems);
  warn_problems(s.problems);
  std::printf("mstep: wrote %s: %zu ranks, %llu MPI calls, %llu M-steps, %llu messages as arrows (%llu sends and "
              "receives unmatched); open it at ui.perfetto.dev\n",
              o.perfetto.c_str(), trace.ranks.size(), static_cast<unsigned long long>(s.calls),
              static_cast<unsigned long long>(s.steps), static_cast<unsigned long long>(s.flows),
              static_cast<unsigned long long>(s.unmatched));
  if (params)
    std::printf("mstep: with %llu calls as LogGPS predicts them (%s%s), on a second track per rank\n",
                static_cast<unsigned long long>(s.predicted), given[chosen.index].file.c_str(),
                chosen.choice.empty() ? "" : (", " + chosen.choice).c_str());
  if (!window->all())
    std::printf("mstep: only %s to %s after the run's first record: %llu slices and arrows outside it left out\n",
                o.from.empty() ? "0 s" : o.from.c_str(), o.to.empty() ? "its end" : o.to.c_str(),
                static_cast<unsigned long long>(s.outside));
  return 0;
}

int run_otf2(const ExportOptions& o) {
  const TraceDir trace = [&] {
    Progress progress("reading", static_cast<std::uint64_t>(read_run_meta(o.dir).ranks));
    return load_trace_dir(o.dir, std::nullopt, [&](std::size_t r) { progress.update(r); }, true);
  }();
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(o.otf2) / "traces.otf2", ec)) {
    std::fprintf(stderr, "mstep: %s already holds an OTF2 archive (traces.otf2): remove it first\n", o.otf2.c_str());
    return 1;
  }
  const auto [ranks, files] = model::stream_inputs(trace);
  model::Otf2Summary s;
  try {
    s = model::write_otf2(ranks, files, o.otf2);
  } catch (const model::Otf2Error& e) {
    std::fprintf(stderr, "mstep: cannot write %s: %s\n", o.otf2.c_str(), e.what());
    return 1;
  }
  warn_problems(trace.problems);
  warn_problems(s.problems);
  if (s.skipped)
    std::fprintf(stderr, "mstep: warning: %llu messages and collectives on intercommunicators are written as their "
                 "calls alone (no OTF2 InterComm yet)\n", static_cast<unsigned long long>(s.skipped));
  std::printf("mstep: wrote %s/traces.otf2: %zu ranks, %llu events (%llu MPI calls, %llu sends, %llu receives, %llu "
              "collectives)\n",
              o.otf2.c_str(), trace.ranks.size(), static_cast<unsigned long long>(s.events),
              static_cast<unsigned long long>(s.calls), static_cast<unsigned long long>(s.sends),
              static_cast<unsigned long long>(s.receives), static_cast<unsigned long long>(s.collectives));
  return 0;
}

int run_export(const ExportOptions& o) {
  if ((!o.from.empty() || !o.to.empty()) && o.perfetto.empty()) {
    std::fprintf(stderr, "mstep: --from and --to go with --perfetto\n");
    return 2;
  }
  if (!o.params.empty() && o.perfetto.empty()) {
    std::fprintf(stderr, "mstep: --params goes with --perfetto (the prediction's tracks)\n");
    return 2;
  }
  if (!o.perfetto.empty()) return run_perfetto(o);
  if (!o.otf2.empty()) return run_otf2(o);
  if (o.goal.empty()) {
    std::fprintf(stderr, "mstep: export needs --goal FILE, --perfetto FILE or --otf2 DIR\n");
    return 2;
  }
  const TraceDir trace = [&] {  // GOAL's schedule is of the records (and the replay's collectives)
    Progress progress("reading", static_cast<std::uint64_t>(read_run_meta(o.dir).ranks));
    return load_trace_dir(o.dir, std::nullopt, [&](std::size_t r) { progress.update(r); }, false, /*with_steps=*/false);
  }();
  std::ofstream out(o.goal, std::ios::binary);
  if (!out) {
    std::fprintf(stderr, "mstep: cannot write %s\n", o.goal.c_str());
    return 1;
  }
  const model::GoalSummary s = model::write_goal(trace, out, o.unit == "ps" ? 1e12 : o.unit == "us" ? 1e6 : 1e9);
  out.close();
  if (!out) {
    std::fprintf(stderr, "mstep: cannot write %s (disk full?)\n", o.goal.c_str());
    return 1;
  }
  if (!s.cut_short.empty())
    std::fprintf(stderr, "mstep: warning: rank%s %s did not reach MPI_Finalize (or have no trace): their schedules end early\n",
                 s.cut_short.size() == 1 ? "" : "s", fmt::format("{}", fmt::join(s.cut_short, ", ")).c_str());
  if (!s.multithreaded.empty())
    std::fprintf(stderr, "mstep: warning: rank%s %s made MPI calls from several threads: exported as one sequence in file order\n",
                 s.multithreaded.size() == 1 ? "" : "s", fmt::format("{}", fmt::join(s.multithreaded, ", ")).c_str());
  std::printf("mstep: wrote %s: %zu ranks, %llu sends (%llu of them in collectives), %llu receives, %llu calcs\n",
              o.goal.c_str(), trace.ranks.size(), static_cast<unsigned long long>(s.sends),
              static_cast<unsigned long long>(s.collective_messages), static_cast<unsigned long long>(s.recvs),
              static_cast<unsigned long long>(s.calcs));
  return 0;
}

}  // namespace

void add_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a trace in another tool's format (--goal: LogGOPSim; --perfetto: Perfetto; --otf2: OTF2)");
  cmd->add_option("trace", o->dir, "Trace directory")->required();
  auto* goal = cmd->add_option("--goal", o->goal, "Write a LogGOPSim GOAL schedule (text) to FILE");
  auto* perfetto = cmd->add_option("--perfetto", o->perfetto,
                                   "Write Chrome trace-event JSON to FILE (ui.perfetto.dev, chrome://tracing): a track "
                                   "per rank, a slice per MPI call and per M-step, an arrow per message");
  cmd->add_option("--params", o->params,
                  "With --perfetto: parameter file whose LogGPS prediction of every call is drawn on a second track per "
                  "rank (again, or a directory, for several: the one of the run's period, as in mstep report)")
      ->allow_extra_args(false);
  cmd->add_option("--from", o->from,
                  "With --perfetto: write only what ends after this time from the run's first record (e.g. 2.5s, 300ms)");
  cmd->add_option("--to", o->to, "With --perfetto: write only what begins before this time from the run's first record");
  auto* otf2 = cmd->add_option("--otf2", o->otf2,
                               "Write an OTF2 archive to DIR (DIR/traces.otf2: Vampir, Scalasca, Cube; otf2-print)");
  goal->excludes(perfetto, otf2);
  perfetto->excludes(goal, otf2);
  otf2->excludes(goal, perfetto);
  cmd->add_option("--time-unit", o->unit, "Time unit of the GOAL schedule's calc (ns, ps or us; default ns)")
      ->check(CLI::IsMember({"ns", "ps", "us"}));
  cmd->callback([o] {
    if (const int code = run_export(*o)) throw CLI::RuntimeError(code);
  });
}

}  // namespace mstep::cli
