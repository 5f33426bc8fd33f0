#include "tools/mstep/report_common.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "model/analysis/report.hpp"
#include "tools/mstep/progress.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

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
    trace = load_trace_dir(dir, std::nullopt, [&](std::size_t r) { progress.update(r); });
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

void warn_if_other_network(const model::CalibrationParams& params, const std::string& params_file,
                           const TraceDir& trace) {
  if (!trace.meta.environment || params.meta.source.empty()) return;
  const std::string diff =
      environment_differences(*trace.meta.environment, params.meta.environment, "the run", params_file.c_str());
  if (!diff.empty())
    std::fprintf(stderr, "mstep: warning: the run and its parameters are from different networks (%s): the "
                 "predictions are for the parameters' network\n", diff.c_str());
}

}  // namespace mstep::cli
