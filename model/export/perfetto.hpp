// A trace as Chrome trace-event JSON (the "JSON Object Format" that Perfetto's UI, its trace
// processor and chrome://tracing open), written in one streaming pass (model/trace/stream_pass):
//   - a process per rank ("rank N"), its MPI calls on one thread track;
//   - a complete slice ("ph":"X") per MPI call, a call of several records (Waitall, Sendrecv) as
//     one slice, with its bytes sent and received, partner, tag, communicator and call site;
//     libmstep's own trace flushes as "mstep flush" slices (category "tool");
//   - each M-step as a slice enclosing its calls ("M-step K", category "mstep"), from the
//     recorder's rules (format/step_tracker.hpp) run again on the records: its computation, MPI
//     time, bytes and messages in and out;
//   - a flow arrow ("ph":"s" in the send's slice, "ph":"f" with "bp":"e" in the slice of the call
//     that completed the receive) per matched message;
//   - with a prediction, a second thread per rank ("LogGPS prediction") with a slice per call as the
//     replay predicts it, so the two can be compared call by call.
// Times are microseconds on the common timeline (model/trace/timeline.hpp) from the earliest
// record, with nanosecond digits. Events are written as the pass finds them, not in time order:
// readers of the format sort them.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/replay/replay.hpp"

namespace mstep::model {

struct PerfettoSummary {
  std::uint64_t calls = 0;      // MPI call slices (flushes included)
  std::uint64_t steps = 0;      // M-step slices
  std::uint64_t flows = 0;      // matched messages drawn as arrows
  std::uint64_t unmatched = 0;  // sends and receives without an arrow
  std::uint64_t predicted = 0;  // slices of the prediction's tracks
  std::uint64_t outside = 0;    // slices and arrows left out: outside the time window
  std::vector<int> damaged;             // ranks whose file broke off at a damaged frame
  std::vector<std::string> problems;    // one line each for those
};

// A stretch of the run to write, in nanoseconds after the earliest record (the JSON's ts 0): a
// slice is written when it overlaps [from_ns, to_ns], an arrow when both its ends' slices are.
// For runs whose whole JSON no browser opens (360 bytes a record).
struct TimeWindow {
  std::int64_t from_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t to_ns = std::numeric_limits<std::int64_t>::max();
  bool overlaps(std::int64_t begin, std::int64_t end) const { return end >= from_ns && begin <= to_ns; }
  bool all() const { return *this == TimeWindow{}; }
  friend bool operator==(const TimeWindow&, const TimeWindow&) = default;
};

// Names a call site ("main (ring.c:42)"); called once per distinct site of each rank.
using SiteNamer = std::function<std::string(const CallsiteDef&)>;
// Runs a replay of the same trace with the given observer (model::observe_loggps): its calls
// become a second track per rank ("LogGPS prediction", category "loggps").
using PredictedReplay = std::function<void(ReplayObserver&)>;

// `metas[r]` (null: no trace of rank r) holds rank r's definitions and clock samples
// (read_rank_metadata); its records are read from `files[r]`. The ranks must be single-threaded
// and use no intercommunicator (model::can_stream).
PerfettoSummary write_perfetto(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                               std::ostream& out, const SiteNamer& name_site, const PredictedReplay& predict = {},
                               const TimeWindow& window = {});

// The same for a trace held whole (load_trace_dir without metadata_only), for what one streaming
// pass does not take: MPI calls from several threads (a track per thread) and intercommunicators
// (matched in memory, match_messages). The M-steps are the recorder's own, on a track of their own
// (with threads they need not nest with any one thread's calls). Memory: the whole trace.
PerfettoSummary write_perfetto_whole(std::span<const RankTrace* const> ranks, std::ostream& out, const SiteNamer& name_site,
                                     const TimeWindow& window = {});

}  // namespace mstep::model
