// Collective algorithms in LogP (MODELS.md section 4): barrier estimates with the adaptive
// choice among them, and broadcast schedules on a heterogeneous network (flat tree, binomial
// tree, E-SSSP tree with its labeling).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "format/collective_substitutes.hpp"
#include "model/cost/loggps.hpp"

namespace mstep::model {

// ---- Barrier (Hoefler and Rehm's estimates as used by Zharikov and Paznikov) ----------------

// Any one time unit, used consistently (the paper's example values are in its own units).
struct LogPBarrierParams {
  double L = 0;    // latency
  double o_s = 0;  // send overhead
  double o_r = 0;  // receive overhead
  double g = 0;    // gap
};

// All three estimates are 0 for P = 1 (nothing to synchronise); P = 0 throws
// std::invalid_argument.

// 2 (o_s + L + o_r) + (P-2) f_r + (P-2) f_s,  f_r = max{o_r, g}, f_s = max{o_s, g}.
double central_counter_barrier(const LogPBarrierParams& p, std::uint32_t P);

// (o_s + L + (n-2) f_r + o_r) log_n P + o_s + (log_2 P - 1) t_msg + L + o_r,
// t_msg = max{g, o_s + L + o_r}. The logarithms are real-valued, as MODELS.md writes them (no
// rounding up to whole tree levels). n = arity >= 2, else std::invalid_argument.
double combining_tree_barrier(const LogPBarrierParams& p, std::uint32_t P, std::uint32_t arity);

// max{f_r, f_s, o_s + L + o_r} * ceil(log_2 P).
double dissemination_barrier(const LogPBarrierParams& p, std::uint32_t P);

enum class BarrierAlgorithm : std::uint8_t { CentralCounter, CombiningTree, Dissemination };

std::string_view to_string(BarrierAlgorithm a) noexcept;

struct BarrierChoice {
  BarrierAlgorithm algorithm = BarrierAlgorithm::Dissemination;
  double time = 0;
};

// AdaptiveBarrierLogP: evaluate all three and take the argmin. Ties go to the earlier entry of
// BarrierAlgorithm (central counter, then combining tree, then dissemination).
BarrierChoice adaptive_barrier(const LogPBarrierParams& p, std::uint32_t P,
                               std::uint32_t tree_arity = 2);

// The adaptive choice as libmstep's MSTEP_BARRIER=auto makes it, and the replay recomputes it
// from the same parameters: adaptive_barrier over combining-tree arities 2 to 8 (the smallest
// arity on a tie), so the tree's arity is chosen too.
struct AdaptiveBarrier {
  BarrierAlgorithm algorithm = BarrierAlgorithm::Dissemination;
  std::uint32_t arity = 0;  // CombiningTree: its arity
  double time = 0;
};
AdaptiveBarrier adaptive_barrier_any_arity(const LogPBarrierParams& p, std::uint32_t P);
// The same choice as the substitute it names ("central", "tree:N" or "dissemination").
BarrierName adaptive_barrier_name(const LogPBarrierParams& p, std::uint32_t P);
// What MSTEP_BARRIER=auto runs: the adaptive choice where it is predicted at least
// kAutoBarrierMargin faster than MPICH's own barrier, else MPICH's own. MPICH's is dissemination
// plus `mpich_round_s` a round: what `mstep calibrate` measured MPI_Barrier to cost at 2 ranks (one
// round) beyond its messages (its software path; 0 where not calibrated), as the report's replay
// charges it. So where the choice is dissemination and nothing was calibrated, MPICH's own runs
// (the same algorithm, without libmstep's duplicate communicator and wrapped calls). Under the
// delay apparatus, which MPICH's messages bypass, and in traces of an older libmstep
// (`native_mpich` false), the adaptive choice whatever it is.
inline constexpr double kAutoBarrierMargin = 0.10;
BarrierName auto_barrier_runs(const LogPBarrierParams& p, std::uint32_t P, bool delayed, bool native_mpich = true,
                              double mpich_round_s = 0);

// ---- Broadcast on a heterogeneous network (Mateescu and Taylor) ------------------------------

// P nodes; w(u,v) is the latency from u to v and D(u,v) the time u is busy injecting a message
// for v (a sender injects one message at a time). Row-major P*P matrices; an infinite latency
// means "no link".
struct BroadcastNetwork {
  std::size_t nodes = 0;
  std::vector<double> latency;    // w(u,v) at [u * nodes + v]
  std::vector<double> injection;  // D(u,v) at [u * nodes + v]

  double w(std::size_t u, std::size_t v) const { return latency[u * nodes + v]; }
  double D(std::size_t u, std::size_t v) const { return injection[u * nodes + v]; }
};

inline constexpr std::uint32_t kNoParent = std::numeric_limits<std::uint32_t>::max();

// A broadcast schedule: who sends to whom, and in which order each node sends.
struct BroadcastTree {
  std::uint32_t root = 0;
  std::vector<std::uint32_t> parent;                 // kNoParent for the root (and unreached)
  std::vector<std::vector<std::uint32_t>> children;  // children[u] in u's send order
};

// When each node has the message under `tree`: a node that has it at t sends to its children
// c_1, c_2, ... in order, injecting one at a time, so c_i has it at
// t + D(u,c_1) + ... + D(u,c_i) + w(u,c_i). The root has it at 0; a node the tree does not
// reach at +infinity.
std::vector<double> arrival_times(const BroadcastTree& tree, const BroadcastNetwork& net);

// The broadcast time of a schedule: the latest arrival.
double completion_time(const BroadcastTree& tree, const BroadcastNetwork& net);

// Flat tree: the root sends to every other node in turn, in rank order starting after itself
// (root+1, root+2, ..., wrapping), as a linear MPI broadcast loop does.
BroadcastTree flat_tree(std::size_t nodes, std::uint32_t root);

// The two common binomial schedules. Both use relative ranks r = (rank - root) mod P and have
// ceil(log2 P) rounds; they differ in which tree and in which send order.
enum class BinomialOrder : std::uint8_t {
  // MPICH's MPIR_Bcast_intra_binomial: r receives from r - lowbit(r), then sends to r + m for
  // m = lowbit(r)/2, lowbit(r)/4, ..., 1 (the root: m = 2^(ceil(log2 P) - 1) down to 1),
  // skipping r + m >= P. Largest subtree first: in round k every holder with
  // r mod 2^(K-k) == 0 sends to r + 2^(K-1-k), K = ceil(log2 P).
  Mpich,
  // The textbook doubling schedule: in round k = 0, 1, ... every r < 2^k sends to r + 2^k
  // (if < P), so r receives from r minus its highest set bit and sends to nearest first.
  DoublingRounds,
};

BroadcastTree binomial_tree(std::size_t nodes, std::uint32_t root,
                            BinomialOrder order = BinomialOrder::Mpich);

double flat_tree_time(const BroadcastNetwork& net, std::uint32_t root);
double binomial_tree_time(const BroadcastNetwork& net, std::uint32_t root,
                          BinomialOrder order = BinomialOrder::Mpich);

struct EssspTree {
  BroadcastTree tree;         // children in the order they were (finally) attached
  std::vector<double> dist;   // dist[v] when v left the queue (+infinity: unreachable)
};

// E-SSSP: Dijkstra from the root where relaxing (u,v) tests dist[v] > dist[u] + w(u,v) + D(u,v),
// and each attachment of v to u adds D(u,v) to dist[u] (u is busy injecting), which makes u's
// later neighbours costlier. Neighbours are scanned in increasing rank order; the queue yields
// the smallest dist, ties to the lower rank.
EssspTree esssp_tree(const BroadcastNetwork& net, std::uint32_t root);

struct BroadcastLabeling {
  BroadcastTree tree;         // the input tree, children re-sorted into send order
  std::vector<double> label;  // label[u]: time for u's message to reach all of u's subtree
  double time = 0;            // label(root): the broadcast time
};

// Bottom-up labeling: label(leaf) = 0; u's children sorted by decreasing label(v) + w(u,v)
// (ties: larger D(u,v) first, which gives the smaller label, then lower rank);
// label(u) = max_i { label(v_i) + w(u,v_i) + i * D(u,v_i) }, i = 1, 2, ...
// This is the formula as published: i * D(u,v_i) equals the injection time of the first i
// messages only when D(u,.) is the same for all of u's children; completion_time() of the
// returned tree gives the sequential-injection time in general.
BroadcastLabeling label_tree(const BroadcastTree& tree, const BroadcastNetwork& net);

// E-SSSP tree, then labeling: the proposed schedule and its predicted time.
BroadcastLabeling esssp_broadcast(const BroadcastNetwork& net, std::uint32_t root);

// MPICH 4.0.2's built-in choice for MPI_Bcast: the binomial tree below kBcastMinProcs ranks or up
// to kBcastShortBytes; above, a binomial scatter and an allgather (the replay's CollAlgo).
inline constexpr std::uint64_t kBcastShortBytes = 12288;  // binomial up to and including
inline constexpr std::uint32_t kBcastMinProcs = 8;        // below: always binomial
constexpr bool mpich_bcast_is_binomial(std::uint32_t nodes, std::uint64_t bytes) {
  return nodes < kBcastMinProcs || bytes <= kBcastShortBytes;
}

// libmstep's MSTEP_BCAST=auto, per communicator, root and size: the flat tree or the labeled
// E-SSSP tree where the model has it at least kAutoBroadcastMargin faster than the binomial tree
// MPICH would run; else MPICH's own broadcast (where the model sees no clear gain, the
// application keeps MPICH's tuned code, so auto is not slower than MPICH by a model's error).
// Where MPICH would not run the binomial tree (mpich_binomial false: a long message on 8 ranks
// or more, where it scatters and gathers), MPICH's own, with no times.
// `mpich_extra_s`: what MPICH's own broadcast costs beyond its binomial tree's messages (its
// calibrated residual, mpich_bcast_extra_s; 0 where not calibrated): MPICH's is then binomial_s +
// mpich_extra_s, and libmstep's copy of the binomial tree (Binomial) is a candidate beside the
// flat and E-SSSP trees.
enum class AutoBroadcast : std::uint8_t { Mpich, Flat, Esssp, Binomial };
std::string_view to_string(AutoBroadcast a) noexcept;
inline constexpr double kAutoBroadcastMargin = 0.10;
struct AutoBroadcastChoice {
  AutoBroadcast algorithm = AutoBroadcast::Mpich;
  double binomial_s = 0, flat_s = 0, esssp_s = 0;  // completion times (NaN where not computed)
  BroadcastTree tree;  // the chosen schedule; empty for Mpich
};
// `binomial_on_tie`: where E-SSSP ties that copy, the copy runs (libmstep since 2026-11-26, meta.json
// collectives.bcast_tie "binomial"); false: E-SSSP (the rule of older libmstep, for its traces).
AutoBroadcastChoice auto_broadcast(const BroadcastNetwork& net, std::uint32_t root, bool mpich_binomial,
                                   double mpich_extra_s = 0, bool binomial_on_tie = true);

// The latency and injection time of one k-byte message between two ranks of a uniform LogGPS
// network, as Mateescu and Taylor's w and D: the sender is busy for D = max(g, MPI_Send time with
// its receiver ready) (T1 eager; T4 + T5 + T1 rendezvous, T4 = o + L + o), and the message is at
// its receiver D + w after the send started, w = end_to_end - D. So the i-th child of a sender has
// it at (i - 1) D + end_to_end.
struct BroadcastPair {
  double latency = 0;    // w
  double injection = 0;  // D
};
BroadcastPair uniform_broadcast_pair(const LogGPSParams& p, std::uint64_t bytes);

// A P-node network with the same pair everywhere.
BroadcastNetwork uniform_broadcast_network(std::uint32_t nodes, BroadcastPair pair);

// Latency between two nodes from one timed exchange: sent at s, answer back at e, with
// injection times D1 and D2 of the two messages: lambda = (e - s - (D1 + D2)) / 2.
double lambda_from_exchange(double s, double e, double D1, double D2);

}  // namespace mstep::model
