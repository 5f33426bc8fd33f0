// Which broadcast libmstep's MSTEP_BCAST=esssp and MSTEP_BCAST=auto run for one communicator, root
// and size: one decision shared by the substitute (interpose/substitute.cpp) and the replay that
// charges it (model/replay), so that the replay charges the tree that ran.
#pragma once

#include <cstdint>
#include <span>

#include "format/collective_substitutes.hpp"
#include "format/delay_pairs.hpp"
#include "model/cost/collectives.hpp"
#include "model/params/collective_times.hpp"

namespace mstep::model {

// Above this many members the network (a table of every pair, built per root and size) is not
// built: esssp runs the binomial tree, auto MPICH's own.
inline constexpr std::uint32_t kEssspMaxRanks = 256;

struct SubstituteBroadcast {
  enum Kind : std::uint8_t { Mpich, Binomial, Tree } kind = Mpich;
  BroadcastTree tree;  // Tree: every member's parent and children, communicator ranks
};

// The network of Mateescu and Taylor's schedules among a communicator's members: every pair the
// LogGPS pair of `bytes`, plus the delay apparatus's added latency of the pair (world ranks of the
// members in `world_ranks`; `pairs` empty: none).
BroadcastNetwork substitute_network(const LogGPSParams& loggps, std::span<const std::int32_t> world_ranks,
                                    const PairLatency& pairs, std::uint64_t bytes);

// What `algo` (Esssp or Auto) runs on `n` members (n >= 2) for `root` and `bytes`. `delayed`: the
// delay apparatus is on, which MPICH's own collectives would bypass, so auto then runs libmstep's
// binomial tree where MPICH's choice is the binomial tree. `net` is only read when n <= kEssspMaxRanks
// (auto on two members without delays runs MPICH's own and needs none).
// `mpich`: MPICH's collectives as calibrated (auto weighs MPICH's broadcast with its residual,
// mpich_bcast_extra_s; null or without MPI_Bcast: its messages alone).
// `binomial_on_tie`: auto_broadcast's rule on a tie of E-SSSP with the copy of the binomial tree.
SubstituteBroadcast plan_substitute_broadcast(BcastAlgo algo, const BroadcastNetwork& net, std::uint32_t n,
                                              std::uint32_t root, std::uint64_t bytes, bool delayed,
                                              const CollectiveTable* mpich = nullptr, bool binomial_on_tie = true);

// Whether plan_substitute_broadcast needs the network at all for these inputs.
bool substitute_broadcast_needs_network(BcastAlgo algo, std::uint32_t n, bool delayed, const CollectiveTable* mpich = nullptr);

// MPICH's own broadcast's cost beyond its binomial tree's messages on n ranks: MPI_Bcast's
// calibrated residual at `bytes` (2 ranks, one round) times the tree's ceil(log2 n) rounds, as the
// report's replay charges it; 0 without a calibrated MPI_Bcast.
double mpich_bcast_extra_s(const CollectiveTable* mpich, std::uint32_t n, std::uint64_t bytes);

}  // namespace mstep::model
