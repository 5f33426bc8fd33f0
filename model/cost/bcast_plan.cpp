#include "model/cost/bcast_plan.hpp"

#include <cmath>

namespace mstep::model {

BroadcastNetwork substitute_network(const LogGPSParams& loggps, std::span<const std::int32_t> world_ranks,
                                    const PairLatency& pairs, std::uint64_t bytes) {
  const auto n = static_cast<std::uint32_t>(world_ranks.size());
  BroadcastNetwork net = uniform_broadcast_network(n, uniform_broadcast_pair(loggps, bytes));
  if (!pairs.empty())
    for (std::size_t u = 0; u < n; ++u)
      for (std::size_t v = 0; v < n; ++v)
        net.latency[u * n + v] += 1e-9 * static_cast<double>(pairs.ns(world_ranks[u], world_ranks[v]));
  return net;
}

double mpich_bcast_extra_s(const CollectiveTable* mpich, std::uint32_t n, std::uint64_t bytes) {
  if (!mpich || n <= 1) return 0;
  const auto it = mpich->find(Op::Bcast);
  if (it == mpich->end()) return 0;
  return it->second.residual(bytes) * std::ceil(std::log2(static_cast<double>(n)));
}

bool substitute_broadcast_needs_network(BcastAlgo algo, std::uint32_t n, bool delayed, const CollectiveTable* mpich) {
  if (n <= 1 || n > kEssspMaxRanks) return false;
  // auto on two members: every tree is the one message MPICH sends too (not under the delay
  // apparatus, which MPICH's own messages would bypass), so MPICH's own unless its calibrated
  // broadcast costs more than that message.
  const bool mpich_bcast = mpich && mpich->contains(Op::Bcast);
  return !(algo == BcastAlgo::Auto && !delayed && n <= 2 && !mpich_bcast);
}

SubstituteBroadcast plan_substitute_broadcast(BcastAlgo algo, const BroadcastNetwork& net, std::uint32_t n,
                                              std::uint32_t root, std::uint64_t bytes, bool delayed,
                                              const CollectiveTable* mpich, bool binomial_on_tie) {
  SubstituteBroadcast out;
  if (n > kEssspMaxRanks) {
    out.kind = algo == BcastAlgo::Esssp ? SubstituteBroadcast::Binomial : SubstituteBroadcast::Mpich;
    return out;
  }
  if (!substitute_broadcast_needs_network(algo, n, delayed, mpich)) return out;  // MPICH's own
  if (algo == BcastAlgo::Esssp) {
    BroadcastLabeling plan = esssp_broadcast(net, root);
    // A member it does not reach (no finite path): every member takes the binomial tree instead.
    for (std::uint32_t v = 0; v < n; ++v)
      if (v != root && plan.tree.parent[v] == kNoParent) {
        out.kind = SubstituteBroadcast::Binomial;
        return out;
      }
    out.kind = SubstituteBroadcast::Tree;
    out.tree = std::move(plan.tree);
    return out;
  }
  const bool mpich_binomial = mpich_bcast_is_binomial(n, bytes);
  // Under the delay apparatus MPICH's own would run as libmstep's copy: no residual of MPICH's.
  AutoBroadcastChoice c = auto_broadcast(net, root, mpich_binomial, delayed ? 0.0 : mpich_bcast_extra_s(mpich, n, bytes),
                                       binomial_on_tie);
  if (c.algorithm == AutoBroadcast::Binomial) {
    out.kind = SubstituteBroadcast::Binomial;
    return out;
  }
  if (c.algorithm != AutoBroadcast::Mpich) {
    out.kind = SubstituteBroadcast::Tree;
    out.tree = std::move(c.tree);
    return out;
  }
  out.kind = delayed && mpich_binomial ? SubstituteBroadcast::Binomial : SubstituteBroadcast::Mpich;
  return out;
}

}  // namespace mstep::model
