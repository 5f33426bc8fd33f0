#include "model/cost/bcast_plan.hpp"

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

bool substitute_broadcast_needs_network(BcastAlgo algo, std::uint32_t n, bool delayed) {
  if (n <= 1 || n > kEssspMaxRanks) return false;
  // auto on two members: every tree is the one message MPICH sends too (not under the delay
  // apparatus, which MPICH's own messages would bypass).
  return !(algo == BcastAlgo::Auto && !delayed && n <= 2);
}

SubstituteBroadcast plan_substitute_broadcast(BcastAlgo algo, const BroadcastNetwork& net, std::uint32_t n,
                                              std::uint32_t root, std::uint64_t bytes, bool delayed) {
  SubstituteBroadcast out;
  if (n > kEssspMaxRanks) {
    out.kind = algo == BcastAlgo::Esssp ? SubstituteBroadcast::Binomial : SubstituteBroadcast::Mpich;
    return out;
  }
  if (!substitute_broadcast_needs_network(algo, n, delayed)) return out;  // MPICH's own
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
  AutoBroadcastChoice c = auto_broadcast(net, root, mpich_binomial);
  if (c.algorithm != AutoBroadcast::Mpich) {
    out.kind = SubstituteBroadcast::Tree;
    out.tree = std::move(c.tree);
    return out;
  }
  out.kind = delayed && mpich_binomial ? SubstituteBroadcast::Binomial : SubstituteBroadcast::Mpich;
  return out;
}

}  // namespace mstep::model
