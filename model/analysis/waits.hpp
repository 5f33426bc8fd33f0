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
  // By kind, rank, call site and operation: a hash map, since a run of 16 Ki ranks has some 50 k
  // sites and an ordered map's every wait walked 16 levels of nodes (4% of such a report).
  struct SiteKey {
    std::int32_t rank = 0;
    std::uint32_t callsite = 0;
    std::uint16_t kind_op = 0;
    bool operator==(const SiteKey&) const = default;
  };
  struct SiteHash {
    std::uint64_t operator()(const SiteKey& k) const {
      std::uint64_t h = (std::uint64_t{static_cast<std::uint32_t>(k.rank)} << 32) | k.callsite;
      h = (h ^ (h >> 29)) * 0x9E3779B97F4A7C15ull ^ k.kind_op;
      return (h ^ (h >> 32)) * 0x9E3779B97F4A7C15ull;
    }
  };
  // A site as it is summed: its waits exactly (ExactSeconds), whatever the order they come in.
  // What it is (kind, rank, call site, operation) is its key's.
  struct Sum {
    std::uint64_t count = 0;
    ExactSeconds wait, predicted;
  };
  FlatMap<SiteKey, Sum, SiteHash> sites_{64};
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
