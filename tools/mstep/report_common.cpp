#include "tools/mstep/report_common.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>
#include <unordered_set>
#include <utility>

#include <CLI/CLI.hpp>

#include "model/analysis/report.hpp"
#include "model/analysis/speed_check.hpp"
#include "tools/mstep/progress.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

namespace {

struct PairHash {
  std::size_t operator()(const std::pair<const Hotspot*, std::int32_t>& p) const {
    return std::hash<const Hotspot*>{}(p.first) * 31 + std::hash<std::int32_t>{}(p.second);
  }
};

}  // namespace

TraceDir load_trace_for_models(const std::string& dir, const std::string& stream, bool& streamed) {
  TraceDir trace = [&] {
    Progress progress("reading", static_cast<std::uint64_t>(read_run_meta(dir).ranks));
    return load_trace_dir(dir, std::nullopt, [&](std::size_t r) { progress.update(r); }, true);
  }();
  const bool wanted = stream == "yes" || (stream == "auto" && trace_records(trace) > model::kStreamAboveRecords);
  if (wanted && !model::can_stream(trace) && stream == "yes") {
    std::fprintf(stderr, "mstep: --stream yes: this trace has MPI calls from several threads or "
                         "intercommunicators, which a streamed analysis does not take\n");
    throw CLI::RuntimeError(1);
  }
  streamed = wanted && model::can_stream(trace);
  if (!streamed) {
    Progress progress("reading", static_cast<std::uint64_t>(trace.ranks.size()));
    trace = load_trace_dir(dir, std::nullopt, [&](std::size_t r) { progress.update(r); }, false, /*with_steps=*/false);
  }
  return trace;
}

std::string find_params(const std::string& given, const std::string& trace) {
  if (!given.empty()) return given;
  std::error_code ec;
  if (fs::exists(fs::path(trace) / "params.json", ec)) return (fs::path(trace) / "params.json").string();
  if (const char* env = std::getenv("MSTEP_PARAMS"); env && *env) return env;
  if (const char* home = std::getenv("HOME")) {
    const auto p = fs::path(home) / ".config" / "mstep" / "params.json";
    if (fs::exists(p, ec)) return p.string();
  }
  return {};
}

SourceLocation site_location(Symbolizer& sym, const TraceDir& trace, const model::WaitSite& w) {
  SourceLocation loc;
  const auto r = static_cast<std::size_t>(w.rank);
  if (r >= trace.ranks.size() || !trace.ranks[r]) return loc;
  for (const CallsiteDef& def : trace.ranks[r]->callsites) {
    if (def.id != w.callsite) continue;
    const CallsiteFrame* pick = def.frames.empty() ? nullptr : &def.frames.front();
    for (const auto& f : def.frames)
      if (!is_mpi_module(f.module)) {
        pick = &f;
        break;
      }
    if (pick) loc = sym.resolve(*pick);
    break;
  }
  return loc;
}

std::vector<Hotspot> resolve_hotspots(const TraceDir& trace, const model::Report& rep) {
  Symbolizer sym;
  std::map<std::tuple<int, std::string, std::string, std::string, int>, Hotspot> merged;
  // Ranks already named, per hotspot: a line reached by every rank of a large run must not cost
  // a search of its rank list per wait site (ranks squared).
  std::unordered_set<std::pair<const Hotspot*, std::int32_t>, PairHash> named;
  for (const model::WaitSite& w : rep.waits) {
    const SourceLocation loc = site_location(sym, trace, w);
    const std::string call = mpi_name(w.op);
    Hotspot& h = merged[{static_cast<int>(w.kind), call, loc.function, loc.file, loc.line}];
    h.kind = w.kind;
    h.mpi_call = call;
    h.function = loc.function.empty() ? "?" : loc.function;
    h.file = loc.file;
    h.line = loc.line;
    h.module = loc.module;
    h.wait_s += w.wait_s;
    h.predicted_wait_s += w.predicted_wait_s;
    h.count += w.count;
    // One rank may reach a line through several stacks (call-site ids): name it once.
    if (named.emplace(&h, w.rank).second) h.ranks.push_back(w.rank);
  }
  std::vector<Hotspot> out;
  for (auto& [k, h] : merged) out.push_back(std::move(h));
  std::sort(out.begin(), out.end(), [](const Hotspot& a, const Hotspot& b) { return a.wait_s > b.wait_s; });
  return out;
}

double share_pct(const model::Report& rep, double seconds) {
  const double total = rep.actual_s * rep.ranks;
  return total > 0 ? 100.0 * seconds / total : 0.0;
}

void warn_if_other_network(const model::CalibrationParams& params, const std::string& params_file,
                           const TraceDir& trace) {
  if (!trace.meta.environment || params.meta.source.empty()) return;
  const std::string diff =
      environment_differences(*trace.meta.environment, params.meta.environment, "the run", params_file.c_str());
  if (!diff.empty())
    std::fprintf(stderr, "mstep: warning: the run and its parameters are from different networks (%s): the "
                 "predictions are for the parameters' network\n", diff.c_str());
}

void warn_if_other_speed(const model::CalibrationParams& params, const TraceDir& trace) {
  const auto probed = model::probed_latency(trace, model::calibrated_on_one_host(params));
  if (const auto diff = model::run_speed_difference(probed, params))
    std::fprintf(stderr, "mstep: warning: %s\n", diff->c_str());
}

}  // namespace mstep::cli
