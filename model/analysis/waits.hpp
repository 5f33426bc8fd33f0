// Synchronisation waits measured in a trace (the quantity the LogGPS paper says matters most):
// a rendezvous send blocked until its receive was posted (late receiver), a receive blocked until
// its send started (late sender), a collective blocked until the last member arrived.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "format/flat_map.hpp"
#include "format/rank_trace.hpp"
#include "model/analysis/exact_sum.hpp"
#include "model/analysis/small_list.hpp"
#include "model/cost/loggps.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {

enum class WaitKind : std::uint8_t { LateReceiver, LateSender, Collective };
const char* wait_kind_name(WaitKind k);  // "late_receiver", "late_sender", "collective"

// Waits of one kind at one call site of one rank, summed.
struct WaitSite {
  WaitKind kind{};
  std::int32_t rank = 0;
  std::uint32_t callsite = 0;   // the rank's call-site id
  Op op{};
  double wait_s = 0;            // measured
  double predicted_wait_s = 0;  // LogGPS at the measured start times (NaN without parameters)
  std::uint64_t count = 0;      // calls that waited at all
};

struct WaitOptions {
  // Sends of at least this many bytes are synchronous (LogGPS's S). MPI_Ssend always is.
  std::uint64_t rendezvous_bytes = 16384;
  std::optional<LogGPSParams> loggps;  // for the predicted waits
};

// The waits of a run, message by message and collective by collective, in any order (the
// streaming pass hands them as they complete): the one implementation of measure_waits.
class WaitMeter {
 public:
  WaitMeter(const Timeline& timeline, const WaitOptions& options);
  // `done`: the first record of the call that completed the receive, which begins at `done_call`.
  // `single`: the call completed no other receive (its wait is final now; no call_complete).
  void message(const Message& m, const Event& send, const Event& post, const Event& done, std::uint32_t done_call,
               bool single = false);
  // A message as the streaming pass hands it.
  void message(const StreamedMessage& m) { message(m.message, m.send, m.post, m.done, m.done_call, m.single); }
  // Every message of that call has been given: a call that completed several waited once, its
  // longest wait.
  void call_complete(std::int32_t rank, std::uint32_t call);
  void collective(std::span<const StreamedMember> members);
  // Every call site that waited, largest measured wait first (calls still open are completed).
  std::vector<WaitSite> sites();

 private:
  void add(WaitKind kind, std::int32_t rank, std::uint32_t callsite, Op op, double wait, double predicted);
  const Timeline& tl_;
  WaitOptions options_;
  LogGPS model_;
  // A rank's sites, by call site, kind and operation, sorted: a rank has few (a 65 536-rank ring two
  // each), kept in place up to one. One hash map over all ranks (an ordered one had walked 16
  // levels of nodes a wait at 16 Ki ranks) was 262 144 slots of 56 bytes at that size, and its
  // doubling the peak of the report.
  struct Site {
    std::uint32_t callsite = 0;
    std::uint16_t kind_op = 0;
    std::uint64_t count = 0;
    // Its waits exactly, whatever the order they come in.
    ExactSeconds wait, predicted;
  };
  std::vector<SmallList<Site, 1>> sites_;
  // What a site is named by (kind aside), not the whole record: a 65 536-rank ring has a Waitall
  // open on every rank at once.
  struct OpenCall {
    std::uint32_t callsite = 0;
    Op op{};
    double wait = 0, predicted = 0;
  };
  // Receiving calls not yet complete, by rank and call (open_call_key): a flat map, which allocates
  // nothing per call (an ordered map's node per Waitall was 2% of a ring's report).
  static std::uint64_t open_call_key(std::int32_t rank, std::uint32_t call) {
    return std::uint64_t{static_cast<std::uint32_t>(rank)} << 32 | call;
  }
  FlatMap<std::uint64_t, OpenCall> open_calls_{0};
};

// Every call site that waited, largest measured wait first.
std::vector<WaitSite> measure_waits(std::span<const RankTrace* const> ranks, const Matching& matching,
                                    const Timeline& timeline, const WaitOptions& options);

}  // namespace mstep::model
