// Event-driven replay of a recorded run under a network model (LogGOPSim-like): every rank's
// recorded sequence of MPI calls is replayed with the computation between calls taken from the
// trace and each call's duration given by the model once its partners' times are known.
//
// Time. Each rank starts at its recorded MPI_Init exit on the common timeline (Timeline), so the
// skew with which ranks leave MPI_Init is kept. finish_s[r] is the predicted time of rank r's
// MPI_Finalize entry minus zero, and actual_finish_s[r] the recorded one, where zero is the
// earliest MPI_Init exit of any rank (the convention of model/trace/step_alignment.hpp): "slowest rank,
// MPI_Init exit to MPI_Finalize entry". A rank without MPI_Finalize (unfinished trace) ends with
// its last record.
//
// Computation: the gap t_enter(k) - t_exit(k-1) between consecutive records of a rank; the
// duration of mstep's own ToolFlush records is dropped (their gaps on both sides are kept).
//
// Point-to-point, with k the bytes, ts the predicted send start and tr the predicted receive post
// (MODELS.md section 3; T1..T5 from model/cost/loggps.hpp):
//   - sends: ts = max(call entry, previous send start of the rank + g);
//   - eager send (k < S; Bsend/Ibsend always): Send returns at ts + T1; Isend likewise, and its
//     Wait returns at once;
//   - rendezvous send (k >= S; Ssend/Issend always): Send returns at ts + T4(ts,tr) + T5 + T1;
//     Isend returns at ts + T1 and its Wait at max(entry, ts + T4 + T5 + T1);
//   - receives: Recv, Irecv and Sendrecv's receive half post at their entry (Irecv costs nothing);
//     the data is there at ts + T1 + T2 (eager) or ts + T4 + T5 + T1 + T2 (rendezvous), and the
//     call completing it (Recv, or the Wait/Test of an Irecv) returns at max(entry, max(tr, data)
//     + T3). A Test that completed a request is replayed like a Wait (the program's control flow
//     is the recorded one);
//   - predicted waits: receiver_wait_s (late sender) = LogGPS's max{...} term at the completing
//     call's entry: max(0, ts + T1 + T2 - entry) eager, max(0, ts + o + L - entry) rendezvous;
//     sender_wait_s (late receiver, rendezvous only) = max(0, tr - max(entry, ts + o + L)),
//     which for a blocking send is (tr - ts) - (o + L).
// Collectives are decomposed into point-to-point messages as MPICH 4.0 does by default
// (model/replay/replay_collectives.hpp); the k-th collective on a communicator at each member is one
// instance.
//
// Kept at their recorded duration (counted in recorded_calls): records whose partner is missing
// or unmatched (a send never received, a rank without a trace), Test/Iprobe that found nothing,
// Probe, communicator management, Wait/Test of requests mstep could not tie to a record,
// collectives on intercommunicators or with a member missing. If the model deadlocks where the
// recorded run did not (a send the model makes synchronous in a cycle of them), the blocked call
// of the earliest blocked rank is resolved as eager, or with its recorded duration, and counted
// in model_deadlocks.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/params/cold_start.hpp"
#include "model/params/collective_times.hpp"
#include "model/cost/linear.hpp"
#include "model/cost/loggps.hpp"
#include "model/replay/replay_collectives.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {

// The default window: 256 records per rank were fastest here (tests/bench/replay_bench.cpp).
inline constexpr std::uint32_t kReplayWindow = 256;
// The window of a replay that reads rank files (the streamed report, its timeline): it shrinks with
// the ranks (any window gives the same times), about 4 MiB of records in all, 8 to kReplayWindow a
// rank. The windows were most of a many-rank report's memory (64 MiB of 16 384 ranks' 220 MiB when
// they were given 64 MiB in all), and smaller ones cost no time: replay_bench --dir, 16 384 ranks,
// windows of 18 / 8 records 0.75-0.84 / 0.58 s and 131 / 115 MiB; 1024 ranks, 256 / 64 records
// 0.19 / 0.18-0.19 s and 65 / 45 MiB (a ring of 2 M records; tests/bench/loggopsim_speed.sh).
inline std::uint32_t streamed_window(std::size_t ranks) {
  constexpr std::size_t kBytes = std::size_t{4} << 20;
  return static_cast<std::uint32_t>(
      std::clamp<std::size_t>(kBytes / (sizeof(Event) * std::max<std::size_t>(ranks, 1)), 8, kReplayWindow));
}

// Told each call's predicted entry and exit (seconds on the common timeline, as finish_s before
// zero is taken off), in each rank's order: for a picture of the predicted run. MPI_Finalize is
// told with its entry as its exit.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual void call(std::int32_t rank, Op op, double entry_s, double exit_s) = 0;
};

// Tells a thread that waits for it whether a LogGPS replay charged any message of S bytes or more
// (ReplayResult::reached_S): as soon as one does, or when the replay ends without one. Until then
// the LogGP replay of the same input is not needed: where no message reaches S it is the same.
class RendezvousWatch {
 public:
  void reached();                // a message reached S
  void finished(bool reached);   // the replay ended (also after an error: reached = true)
  bool wait();                   // blocks until either; true if a message reached S
 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  enum class State { Running, Reached, None } state_ = State::Running;
};

struct ReplayInput {
  std::span<const RankTrace* const> ranks;  // index = world rank; null where unreadable
  const Matching& matching;                 // match_messages() of the same ranks
  const Timeline& timeline;                 // Timeline of the same ranks
  // Records taken per rank at a time (0: each rank whole). Windows keep the replay's state to
  // what is in flight and its working set in cache; the tests replay every trace both ways. Two
  // things differ: the per-message waits of ReplayResult are kept whole only, and a send that no
  // receive ever matches is known to be unmatched only once its receiver has been read to the
  // end, so an eager one is charged by the model instead of keeping its recorded duration.
  std::uint32_t window = kReplayWindow;
  // Rank files to take the records from, index = rank (empty: the records of `ranks`). Then
  // `ranks` need only hold each rank's definitions and clock samples (read_rank_metadata), and the
  // records are read a frame at a time: the replay's memory no longer holds the trace.
  std::span<const std::string> files = {};
  // The collectives libmstep ran in place of MPICH's (meta.json "collectives"): charged as they
  // ran. Default: MPICH's own.
  CollectiveSubstitutes substitutes = {};
  ReplayObserver* observer = nullptr;  // none: nothing is told
  // The collectives measured at calibration (CalibrationParams::collectives): each decomposed call
  // of MPICH's algorithm also pays its operation's calibrated residual at its size, per round of
  // the algorithm relative to the 2 ranks it was measured at, and each call libmstep's substitute
  // ran its substitute's (substitute_s, where measured) (LogGPS replay only; none: nothing).
  const CollectiveTable* collective_times = nullptr;
  // Rank files read ahead on threads of their own where read_ahead_pays() (false: on the
  // replay's; a caller that runs replays side by side keeps the cores for the longest one).
  bool read_ahead = true;
  RendezvousWatch* rendezvous_watch = nullptr;  // LogGPS replay only: told when a message reaches S
};

// The predicted time one collective call spent waiting for the last member to arrive.
struct CollectiveWait {
  std::int32_t rank = 0;
  std::uint32_t event = 0;  // index of the collective record in the rank's events
  float wait_s = 0;
};

// Seconds of machine terms (ColdStart: cold start, fresh buffers) the replay charged to one
// record, so that the step models can charge the same messages the same amounts.
struct MachineCharge {
  std::int32_t rank = 0;
  std::uint32_t event = 0;  // index in the rank's events
  double seconds = 0;
};

struct ReplayResult {
  std::vector<double> finish_s;         // per rank: predicted MPI_Finalize entry - zero (see above)
  double predicted_s = 0;               // max of finish_s
  std::vector<double> actual_finish_s;  // per rank: recorded MPI_Finalize entry - zero
  double actual_s = 0;                  // max of actual_finish_s
  // Per matched message, parallel to matching.messages: predicted sender wait (late receiver,
  // rendezvous only) and receiver wait (late sender). 0 where the message was not replayed.
  // Whole replays only (ReplayInput::window 0); empty otherwise.
  std::vector<float> sender_wait_s, receiver_wait_s;
  std::vector<CollectiveWait> collective_waits;  // one per decomposed collective call
  // One line per (operation, algorithm, communicator size):
  // "MPI_Bcast: binomial tree (MPICH default for 4 ranks, 8 bytes; 12 calls)".
  std::vector<std::string> collective_algorithms;
  std::uint64_t records = 0;          // event records replayed
  std::uint64_t recorded_calls = 0;   // calls that kept their recorded duration
  std::uint64_t model_deadlocks = 0;  // blocked calls resolved by the deadlock fallback
  std::vector<std::string> notes;     // one line per approximation that applied
  // Every cold-start and fresh-buffer charge, in no particular order; empty without a ColdStart.
  // A message's cold start is charged to its send record (send) and its receive-completing
  // record (recv), a fresh buffer to the receive-completing record; in a collective, to the
  // collective record of the rank that paid it.
  std::vector<MachineCharge> machine_charges;
  // LogGPS: whether any message charged had S bytes or more. When none had, the replay of the same
  // input with S infinite (LogGP, as_loggp) predicts exactly the same: callers skip it.
  bool reached_S = false;
};

// LogGPS; LogGP is LogGPS with p.S = kInfiniteBytes (see as_loggp). MPI_Ssend stays synchronous.
// `cold`: the machine's cold start (model/params/cold_start.hpp), none by default.
ReplayResult replay_loggps(const ReplayInput& in, const LogGPSParams& p, const ColdStart& cold = {});

// The two-regime linear baseline T(n) = T0 + n/B, no protocol distinction: a send occupies its
// rank for n/B (so consecutive sends queue on the bandwidth), the message is there T0 + n/B
// after the send started, and the receive completes at max(entry, arrival). Nothing is
// synchronous, not even MPI_Ssend. `cold`: the machine's cold start and fresh buffers, charged as
// in the LogGPS replay (they are the machine's, not a protocol model's).
ReplayResult replay_linear(const ReplayInput& in, const TwoRegimeLinearModel& model, const ColdStart& cold = {});

}  // namespace mstep::model
