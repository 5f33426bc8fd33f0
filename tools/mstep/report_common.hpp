// What `mstep report` and `mstep whatif` share: where the parameter file is, and which source
// line a wait site is.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model/analysis/report.hpp"
#include "model/params/params.hpp"
#include "model/trace/trace_dir.hpp"
#include "model/analysis/waits.hpp"
#include "tools/symbols/symbolizer.hpp"

namespace mstep::cli {

// --params, else the trace directory's params.json, else $MSTEP_PARAMS, else the user's default
// (~/.config/mstep/params.json); empty when there is none.
std::string find_params(const std::string& given, const std::string& trace);

// --params FILE, repeatable: `what` and the defaults and the choice among several.
void add_params_option(CLI::App& cmd, std::vector<std::string>& files, const std::string& what);

// Parameter files as given to --params (repeatable), read and checked before the trace (a bad one is
// a one-line error, exit 1); none given: find_params's default, if any.
struct ParamsFile {
  std::string file;
  model::CalibrationParams params;
};
std::vector<ParamsFile> read_params_given(const std::vector<std::string>& given, const std::string& trace_dir);

// Of several files, the one of the run's network and period: those calibrated on the run's network
// (warn_if_other_network's test) if any are, and of them the one whose 8-byte half round trip is
// nearest the run's own (model::nearest_period). `choice` says why in one sentence where there was
// a choice ("" for one file).
struct ChosenParams {
  std::size_t index = 0;
  std::string choice;
};
ChosenParams choose_params(std::span<const ParamsFile> files, const TraceDir& trace);

// The trace for `mstep report` and `mstep whatif`: definitions and clocks first (records skipped
// on disk), then the whole trace unless it is to be streamed: `stream` is "yes", "no" or "auto"
// (above model::kStreamAboveRecords records). `streamed` says which it is. A trace that cannot be
// streamed (threads, intercommunicators) is read whole under "auto", and is an error under "yes".
TraceDir load_trace_for_models(const std::string& dir, const std::string& stream, bool& streamed);

// One line on stderr when the parameters were calibrated on another network than the run had
// (their UCX_*, MPIR_CVAR_*, MPICH_* variables differ); nothing when either side has no record.
void warn_if_other_network(const model::CalibrationParams& params, const std::string& params_file,
                           const TraceDir& trace);
// One line on stderr when the run's own 8-byte half round trip (libmstep's clock sync at MPI_Init
// and MPI_Finalize) is more than 30% above the parameters' or below half of them: the machine was in
// another state.
void warn_if_other_speed(const model::CalibrationParams& params, const TraceDir& trace);

// The application's line of a wait site: the innermost frame of its call site outside MPI and
// mstep (the innermost frame if all are inside); empty when the rank or call site is unknown.
SourceLocation site_location(Symbolizer& sym, const TraceDir& trace, const model::WaitSite& w);

// A hotspot as users read it: one source line, summed over ranks.
struct Hotspot {
  model::WaitKind kind{};
  std::string mpi_call, function, file, module;
  int line = 0;
  double wait_s = 0, predicted_wait_s = 0;
  std::uint64_t count = 0;
  std::vector<std::int32_t> ranks;
};

// The report's wait sites by source line, the largest measured wait first.
std::vector<Hotspot> resolve_hotspots(const TraceDir& trace, const model::Report& rep);

// Share of all ranks' run time.
double share_pct(const model::Report& rep, double seconds);

}  // namespace mstep::cli
