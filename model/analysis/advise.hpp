// Advice on collective algorithms (issue 15; MODELS.md section 4): for one call site of MPI_Barrier
// or MPI_Bcast, the predicted time of every algorithm the papers compare, beside what MPICH runs
// by default as the LogGPS replay charges it, and what the site would gain with the best.
//
// All times in seconds, per call, for members that enter together (no late arrival: that is the
// program's, whatever algorithm runs).
//  - Barrier (Zharikov and Paznikov, Hoefler and Rehm's estimates): central counter, combining tree
//    of arity 2, 4 and 8, dissemination, with LogP's L = L, o_s = o_r = o, g = g of the LogGPS
//    parameters (barrier messages carry no data).
//  - Broadcast (Mateescu and Taylor): flat tree, binomial tree as MPICH builds it, the E-SSSP tree
//    in attachment order, and the E-SSSP tree with its labeling, each timed by completion_time()
//    on a network of latency w(u,v) and injection time D(u,v) per pair: the calibrated pairs
//    ("broadcast" of the parameter file) where they cover the communicator's members, else the
//    same for every pair from LogGPS (uniform_broadcast_pair).
//  - MPICH's default: the algorithm choose_collective() names, replayed alone by replay_loggps on
//    members that enter together (isolated_collective_s): the charge the report's LogGPS makes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/delay_pairs.hpp"
#include "format/trace_format.hpp"
#include "model/analysis/collective_spans.hpp"
#include "model/cost/collectives.hpp"
#include "model/cost/loggps.hpp"
#include "model/params/params.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep::model {

// Largest communicator for which the per-pair broadcast schedules are built (their network is a
// P x P table; E-SSSP is O(P^2)). Beyond it only the MPICH default and the barriers are evaluated.
inline constexpr std::uint32_t kAdviseMaxScheduleRanks = 1024;
// Largest communicator whose MPICH default is replayed (one small rank trace per member).
inline constexpr std::uint32_t kAdviseMaxReplayRanks = 16384;

// The sub-network of `calibrated` on `members` (world ranks, in communicator rank order), its
// latencies and injection times moved from the calibrated message size to `bytes` by LogGPS's
// difference (w + dw, D + dD, both from uniform_broadcast_pair). Empty (nodes 0) when a member is
// outside the calibrated table.
BroadcastNetwork broadcast_subnetwork(const BroadcastParams& calibrated, std::span<const std::int32_t> members,
                                      const LogGPSParams& p, std::uint64_t bytes);

// The time one collective call takes under the LogGPS replay when all `n` members enter it at
// once: the latest member's return. n = 1 gives 0.
// `subs`: libmstep's substitute algorithms instead of MPICH's (model/replay/replay_collectives.hpp).
// `times`: the collectives measured at calibration, whose residuals MPICH's algorithms then pay
// as in the report's replay (ReplayInput::collective_times).
double isolated_collective_s(Op op, std::uint32_t n, std::uint32_t root, std::uint64_t bytes,
                             const LogGPSParams& p, const CollectiveSubstitutes& subs = {},
                             const CollectiveTable* times = nullptr);

// One call site of a collective, as the trace has it (summed over the ranks that called it).
struct CollectiveSite {
  Op op = Op::Barrier;      // Barrier or Bcast
  std::string location;     // "main (coll.c:40)"
  std::uint32_t comm_size = 0;
  std::uint32_t root = 0;   // communicator rank (Bcast)
  std::uint64_t bytes = 0;  // Bcast: the message
  std::uint64_t records = 0;         // calls over all ranks
  std::uint32_t ranks = 0;           // ranks that called it
  double measured_s = 0;             // time in those calls, all ranks
  SpanStats spans;                   // each instance's measured span (model/analysis/collective_spans.hpp)
  std::vector<std::int32_t> members; // world ranks of the communicator (for the calibrated pairs)
  double calls_per_rank() const { return ranks ? static_cast<double>(records) / ranks : 0; }
};

struct AlgorithmEstimate {
  std::string name;           // "dissemination", "combining tree (n=4)", "E-SSSP + labeling", ...
  double predicted_s = 0;     // per call
  bool mpich_default = false; // the replay's charge for what MPICH runs
};

struct CollectiveAdvice {
  CollectiveSite site;
  std::string network;  // Bcast: "calibrated pairs" or "uniform LogGPS"; Barrier: "LogP from LogGPS"
  std::vector<AlgorithmEstimate> algorithms;  // MPICH default first, then the papers' algorithms
  std::string best;                // the fastest (the MPICH default on a tie)
  double best_s = 0;
  double default_s = 0;            // the MPICH default's predicted time per call
  double gain_per_call_s = 0;      // default_s - best_s (>= 0)
  double gain_s = 0;               // gain_per_call_s * calls per rank: the run's predicted gain
  std::vector<std::string> notes;  // what was not evaluated, and why
  // Bcast: MSTEP_BCAST=auto's choice on this site's network (model::auto_broadcast).
  AutoBroadcast auto_bcast = AutoBroadcast::Mpich;
};

// The advice for one site under `params` (which must hold LogGPS parameters; std::invalid_argument
// otherwise, or for an op other than Barrier and Bcast).
// `pairs`: latency added per pair of world ranks (a MSTEP_DELAY_PAIRS table), on top of w in the
// broadcast schedules' network, and then MPICH's binomial tree is timed on that network too.
CollectiveAdvice advise_collective(const CollectiveSite& site, const CalibrationParams& params,
                                   const PairLatency* pairs = nullptr);

// The row of `a.algorithms` that ran at this site in the run `meta` describes: MPICH's default, or
// the libmstep substitute meta.json names (barrier auto: its choice for the communicator's size;
// bcast auto: auto_bcast, and under the delay apparatus its MPICH choice is libmstep's binomial
// tree). "" when that algorithm has no row here (a combining tree of another arity; broadcast
// schedules not built for the size).
std::string algorithm_that_ran(const CollectiveAdvice& a, const RunMeta& meta);

}  // namespace mstep::model
