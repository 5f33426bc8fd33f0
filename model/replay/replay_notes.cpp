// Internal to the replay: what the report says about a replay besides its times: the
// collective algorithms it used and the waits in them, and the machine terms that applied.
#include <algorithm>

#include <fmt/format.h>

#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {
namespace {

// (operation, algorithm, communicator size) in one number that sorts like the tuple.
std::uint64_t use_key(const CollShape& s) {
  return (std::uint64_t{static_cast<std::uint8_t>(s.op)} << 40) | (std::uint64_t{static_cast<std::uint8_t>(s.algo)} << 32) |
         s.n;
}

}  // namespace

void CollectiveUses::add(const LiveInstance& inst, ReplayResult& out) {
  const std::uint64_t key = use_key(inst.shape);
  auto it = std::lower_bound(uses_.begin(), uses_.end(), key, [](const auto& u, std::uint64_t k) { return u.first < k; });
  if (it == uses_.end() || it->first != key) it = uses_.insert(it, {key, Use{}});
  Use& u = it->second;
  ++u.calls;
  u.substitute = u.substitute || inst.shape.substitute;
  u.min_m = std::min(u.min_m, inst.shape.m);
  u.max_m = std::max(u.max_m, inst.shape.m);
  double last = 0;
  for (std::uint32_t c = 0; c < inst.shape.n; ++c) last = std::max(last, inst.arrival[c]);
  for (std::uint32_t c = 0; c < inst.shape.n; ++c) {
    const double wait = std::clamp(last - inst.arrival[c], 0.0, std::max(0.0, inst.end[c] - inst.arrival[c]));
    out.collective_waits.push_back({(*inst.members)[c], inst.event[c], static_cast<float>(wait)});
  }
}

void CollectiveUses::describe(ReplayResult& out) const {
  for (const auto& [key, u] : uses_) {
    const auto op = static_cast<Op>((key >> 40) & 0xff);
    const auto algo = static_cast<CollAlgo>((key >> 32) & 0xff);
    const auto n = static_cast<std::uint32_t>(key & 0xffffffffu);
    const std::string bytes = blocking_collective(op) == Op::Barrier ? "" : u.min_m == u.max_m ? fmt::format(", {} bytes", u.min_m)
                                                                         : fmt::format(", {} to {} bytes", u.min_m, u.max_m);
    out.collective_algorithms.push_back(fmt::format("{}: {} ({} for {} rank{}{}; {} call{})", mpi_name(op),
                                                    coll_algo_name(algo), u.substitute                  ? "libmstep's substitute"
                                                    : is_nonblocking_collective(op) ? "MPICH default of the blocking version"
                                                                                    : "MPICH default",
                                                    n, n == 1 ? "" : "s", bytes, u.calls, u.calls == 1 ? "" : "s"));
  }
}

// One note per machine term that applied.
void note_machine_terms(const ColdStart& cold, ReplayResult& r) {
  if (cold.fresh_per_byte > 0)
    r.notes.push_back(fmt::format("fresh buffers: a transfer of {} B or more of a size its receiver has not received "
                                  "before costs {:.3f} ns/B more",
                                  cold.fresh_from, cold.fresh_per_byte * 1e9));
  if (cold.messages > 0)
    r.notes.push_back(fmt::format("cold start: the first {} messages of {}..{} bytes per pair of ranks cost {:.1f} us "
                                  "more to send and {:.1f} us more to receive",
                                  cold.messages, cold.from, cold.to == kInfiniteBytes ? std::string("inf") : std::to_string(cold.to - 1),
                                  cold.send * 1e6, cold.recv * 1e6));
}

}  // namespace mstep::model::detail
