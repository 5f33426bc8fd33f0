// Where each rank's time went, drawn to a width in pixels: for a picture of the run in the manner
// of Roda et al.'s Figure 1 (computation, communication and waiting per rank, M-step boundaries),
// at any scale. One streaming pass (model/trace/stream_pass) adds every stretch of time to the
// pixels (bins) it covers:
//   - computation: from a call's exit to the next call's entry (mstep's own flushes count as
//     neither, as in the step tracker);
//   - MPI: the time inside calls, less their waits;
//   - wait: a call that completed receives, from its entry until the latest of its messages was
//     sent, if that was later (Scalasca's late sender); a collective call, from its entry until
//     the last member entered (wait at the collective);
//   - M-step boundaries: each step's end by the recorder's rules (format/step_tracker.hpp).
// Ranks are grouped into at most `max_rows` rows of consecutive ranks (their times summed), and
// step ends are kept only while a row has few enough of them to be seen one by one.
// State: the bins, and per rank what is in flight (a receiving call's wait not yet final).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/params/params.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/trace_dir.hpp"

namespace mstep::model {

struct ActivityOptions {
  int width = 1000;       // bins per row
  int max_rows = 128;     // rows; more ranks than this share rows
  // The picture's width in seconds from its left edge, the earliest MPI_Init exit of any rank
  // (the zero of the report's actual times); what lies beyond is cut off.
  double span_s = 0;
  // A row draws its step ends only while it has at most this many per bin on average (1/3: one
  // every three pixels), else none (steps_drawn false for it).
  double max_step_ends_per_bin = 1.0 / 3;
};

struct ActivityPicture {
  int width = 0, rows = 0;
  int ranks_per_row = 1;              // row i holds ranks [i * ranks_per_row, (i + 1) * ranks_per_row)
  double zero_s = 0;                  // the left edge on the common timeline (Timeline::seconds)
  double span_s = 0;
  // rows x width, row-major: seconds of each kind in each bin, summed over the row's ranks.
  std::vector<float> compute, mpi, wait;
  std::vector<std::vector<float>> step_ends;  // per row: each step end, seconds after zero_s
  std::vector<std::uint64_t> steps;           // per row: M-steps counted
  std::vector<bool> steps_drawn;              // per row: step_ends holds every one of them
  std::uint64_t records = 0;
  std::vector<std::string> problems;          // damaged files met while reading
  // The run as the LogGPS replay predicts it (add_loggps_prediction), rows x width like the
  // others: computation and MPI time per bin; empty when not predicted.
  std::vector<float> predicted_compute, predicted_mpi;
  std::size_t at(int row, int bin) const { return static_cast<std::size_t>(row) * static_cast<std::size_t>(width) + static_cast<std::size_t>(bin); }
};

// `metas[r]` (null: no trace of rank r) holds rank r's definitions and clock samples
// (read_rank_metadata); its records are read from `files[r]`. Single-threaded ranks only
// (model::can_stream).
ActivityPicture measure_activity(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                                 const ActivityOptions& options);

// Replays the trace under LogGPS (as `mstep report` does: its substitutes, the machine's cold
// start, the rank files a frame at a time) and adds to `picture` each rank's predicted computation
// and MPI time per bin, on the picture's rows, zero and span. `trace` loaded with metadata_only or
// whole; single-threaded ranks (model::can_stream).
void add_loggps_prediction(ActivityPicture& picture, const TraceDir& trace, const CalibrationParams& params);

// The LogGPS replay of `trace` as `mstep report` runs it (substitutes, cold start, the rank files a
// frame at a time), telling `observer` each call's predicted entry and exit; nothing without LogGPS
// parameters.
void observe_loggps(const TraceDir& trace, const CalibrationParams& params, ReplayObserver& observer);

}  // namespace mstep::model
