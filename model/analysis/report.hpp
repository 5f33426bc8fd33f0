// What `mstep report` says about a run, as plain data: actual time, each model's prediction and
// error, per-step actual against MPM, time in MPI per function, and the wait hotspots.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "model/params/params.hpp"
#include "model/analysis/exact_sum.hpp"
#include "model/trace/trace_dir.hpp"
#include "model/analysis/waits.hpp"
#include "model/replay/replay.hpp"

namespace mstep::model {

struct ModelResult {
  std::string name;          // "MPM", "BSPWB", "LogGP", "LogGPS", "linear"
  bool available = false;    // false: no parameters for it (see note)
  double predicted_s = 0;
  double error_pct = 0;      // 100 * (actual - predicted) / actual (formula 18), signed
  std::string note;
};

struct StepRow {
  std::int32_t rank = 0;
  std::uint32_t step = 0;    // 1-based; step 1 is the warm-up (first messages, cold buffers)
  // The step alone: its end minus the end of the rank's step before (step 1: minus zero).
  double actual_s = 0;
  double mpm_s = 0;          // NaN without MPM parameters
  double miss_s = 0;         // mpm_s - actual_s: the time this step's prediction misses by
  double step_error_pct = 0; // 100 * (actual_s - mpm_s) / actual_s (formula 18 on the step)
  // Cumulative: where the step ends.
  double actual_end_s = 0;   // seconds after the earliest MPI_Init exit
  double mpm_end_s = 0;      // Phi(s, rank); NaN without MPM parameters
  double error_pct = 0;      // formula 18 on the end times
  double compute_s = 0;
  double mpi_s = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  // Gamma(s, rank): these world ranks (sorted) and, where partners_all_of is not empty, every
  // member of that communicator (world ranks in its rank order; -1 for a process outside
  // MPI_COMM_WORLD): a communicator of kListedMembers or more that the step heard whole is named,
  // as in the trace (StepRecord::whole_comm), not listed in every row.
  std::vector<std::int32_t> partners;
  MemberList partners_all_of;
};

// The order of the step table's "misses most": the larger |miss_s| first, ties by rank and step.
// The same for a row not built yet: its |miss_s|, rank and step.
inline bool misses_more(double abs_miss_s, std::int32_t rank, std::uint32_t step, const StepRow& b) {
  const double y = std::abs(b.miss_s);
  if (abs_miss_s != y) return abs_miss_s > y;
  return rank != b.rank ? rank < b.rank : step < b.step;
}
inline bool misses_more(const StepRow& a, const StepRow& b) {
  return misses_more(std::abs(a.miss_s), a.rank, a.step, b);
}

struct FunctionTime {
  std::uint64_t calls = 0;
  double seconds = 0;
  std::uint64_t bytes = 0;  // sent plus received
  double loggps_s = 0;      // the LogGPS replay's time in these calls (Report::has_loggps_functions)
};

// Adds up the LogGPS replay's time per MPI function over all ranks, into a Report's `mpi`. The
// sums are exact (ExactSeconds), so they do not depend on the order the replay finishes calls in:
// a windowed replay of many ranks finishes them in another order than a whole one, and a sum of
// doubles then differed in its last digits.
class FunctionTimes final : public ReplayObserver {
 public:
  explicit FunctionTimes(std::array<FunctionTime, kOpCount>& out) : out_(out) {}
  // Writes the sums into the Report's `mpi`; once, after the replay.
  void finish() const {
    for (std::size_t i = 0; i < kOpCount; ++i) out_[i].loggps_s = sum_[i].value();
  }
  void call(std::int32_t, Op op, double entry_s, double exit_s) override {
    sum_[static_cast<std::size_t>(op)].add(std::max(0.0, exit_s - entry_s));
  }

 private:
  std::array<FunctionTime, kOpCount>& out_;
  std::array<ExactSeconds, kOpCount> sum_{};
};

struct Report {
  std::string trace;
  int ranks = 0;
  bool complete = false;
  double actual_s = 0;                 // slowest rank, MPI_Init exit to MPI_Finalize entry
  int finalized_ranks = 0;             // ranks read to MPI_Finalize; for the others actual_s ends at their last record
  std::vector<double> rank_actual_s;
  std::vector<double> loggps_rank_s;   // per rank: LogGPS-predicted finish; empty without LogGPS
  std::vector<ModelResult> models;     // MPM, BSPWB, LogGP, LogGPS, linear
  std::vector<StepRow> steps;          // every rank's every step
  std::array<FunctionTime, kOpCount> mpi{};  // all ranks
  bool has_loggps_functions = false;         // mpi[].loggps_s were filled
  double mpi_s = 0;                    // all ranks, all functions
  double tool_s = 0;                   // trace flushes
  std::vector<WaitSite> waits;         // largest measured wait first
  std::uint64_t messages = 0;          // matched point-to-point messages
  std::vector<std::string> problems;   // the trace's, and unmatched messages
  std::vector<std::string> notes;      // e.g. how to get parameters
  std::vector<std::string> collective_algorithms;  // how the LogGPS replay decomposed collectives
  bool streamed = false;               // build_report_streamed: `steps` holds the steps that miss most
  std::uint64_t step_count = 0;        // M-steps over all ranks
};

// Builds the report of a loaded trace. `params` may be null: then only what needs no parameters
// (actual times, measured waits) is filled, and a note says how to get parameters.
Report build_report(const TraceDir& trace, const CalibrationParams* params);

// The report of a trace loaded with load_trace_dir(..., metadata_only = true), its records read
// from the rank files in one streaming pass and by the replays a frame at a time: memory holds
// what is in flight, not the trace. The same figures as build_report, but `steps` holds only the
// `keep_steps` steps whose MPM prediction misses by the most time (without MPM: the first ones).
// `jobs` 2: the LogGP and linear replays run on a thread of their own beside the rest.
Report build_report_streamed(const TraceDir& trace, const CalibrationParams* params, std::size_t keep_steps = 1000,
                             unsigned jobs = 1);
// measure_waits over a trace loaded with metadata_only, in one streaming pass.
std::vector<WaitSite> measure_waits_streamed(const TraceDir& trace, const WaitOptions& options);
// What stream_pass (model/trace/stream_pass.hpp) takes of a trace loaded with metadata_only: each
// rank's metadata (null where unreadable) and its file.
struct StreamInputs {
  std::vector<const RankTrace*> ranks;
  std::vector<std::string> files;
};
StreamInputs stream_inputs(const TraceDir& trace);
// Whether build_report_streamed can take this trace: not with MPI calls from several threads
// (their records must be put in order of entry, whole) nor intercommunicators (whose local groups
// come from creator records anywhere in the trace).
bool can_stream(const TraceDir& trace);
// Above this many records `mstep report` and `whatif` stream. The streamed report was the faster
// at every size measured (2026-11-27, --jobs 1: NetPIPE's 50 k records 0.14 -> 0.05 s, a 1.2 M-record
// ping-pong 3.86 -> 0.42 s, 16 384 ranks and 2 M records 19.5 -> 14.9 s) and holds only what is in
// flight where the whole trace costs about 370 bytes a record; below this the in-memory report
// keeps every M-step in the JSON and CSV step table, which a small run's reader may want whole.
constexpr std::uint64_t kStreamAboveRecords = 100'000;

}  // namespace mstep::model
