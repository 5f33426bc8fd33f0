// Synchronisation waits measured in a trace (the quantity the LogGPS paper says matters most):
// a rendezvous send blocked until its receive was posted (late receiver), a receive blocked until
// its send started (late sender), a collective blocked until the last member arrived.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/cost/loggps.hpp"
#include "model/trace/matching.hpp"
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

// Every call site that waited, largest measured wait first.
std::vector<WaitSite> measure_waits(std::span<const RankTrace* const> ranks, const Matching& matching,
                                    const Timeline& timeline, const WaitOptions& options);

}  // namespace mstep::model
