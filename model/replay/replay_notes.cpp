// Internal to the replay: what the report says about a replay besides its times: the
// collective algorithms it used and the waits in them, and the machine terms that applied.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {

void describe_collectives(const ReplayPlan& plan, const std::vector<double>& arrival,
                          const std::vector<double>& end, const std::vector<std::uint32_t>& event,
                          ReplayResult& out) {
  struct Use {
    std::uint64_t calls = 0, min_m = ~std::uint64_t{0}, max_m = 0;
  };
  std::map<std::tuple<Op, CollAlgo, std::uint32_t>, Use> uses;
  for (const PlanInstance& inst : plan.instances) {
    if (!inst.usable) continue;
    Use& u = uses[{inst.shape.op, inst.shape.algo, inst.shape.n}];
    ++u.calls;
    u.min_m = std::min(u.min_m, inst.shape.m);
    u.max_m = std::max(u.max_m, inst.shape.m);
    double last = 0;
    for (std::uint32_t c = 0; c < inst.shape.n; ++c) last = std::max(last, arrival[inst.member_base + c]);
    for (std::uint32_t c = 0; c < inst.shape.n; ++c) {
      const std::uint64_t i = inst.member_base + c;
      const double wait = std::clamp(last - arrival[i], 0.0, std::max(0.0, end[i] - arrival[i]));
      out.collective_waits.push_back({plan.comm_world[inst.members_off + c], event[i], static_cast<float>(wait)});
    }
  }
  std::sort(out.collective_waits.begin(), out.collective_waits.end(), [](const auto& a, const auto& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.event < b.event;
  });
  for (const auto& [key, u] : uses) {
    const auto& [op, algo, n] = key;
    const std::string bytes = op == Op::Barrier ? "" : u.min_m == u.max_m ? fmt::format(", {} bytes", u.min_m)
                                                                         : fmt::format(", {} to {} bytes", u.min_m, u.max_m);
    out.collective_algorithms.push_back(fmt::format("{}: {} (MPICH default for {} rank{}{}; {} call{})", mpi_name(op),
                                                    coll_algo_name(algo), n, n == 1 ? "" : "s", bytes, u.calls,
                                                    u.calls == 1 ? "" : "s"));
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
