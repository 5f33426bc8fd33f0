// Collectives as point-to-point messages, the way MPICH 4.0 decomposes them by default (the
// collective-selection table compiled into MPICH 4.0.2, MPIR level, intracommunicators without a
// node hierarchy). The replay (model/replay/replay.hpp) runs each member's program of steps under a
// network model: a step posts its receives, issues its sends one after the other and ends when
// all of them are complete (MPIC_Sendrecv / Isend+Irecv+Waitall); a blocking MPIC_Send or
// MPIC_Recv is a step of its own.
//
// Every message of one collective instance has a slot: round * n + x, where `round` is the
// algorithm's step number and `x` the sender's or the receiver's rank in the communicator
// (whichever is unique in that round). Both sides compute the same slot without talking, which
// is what lets the replay keep one flat array of slots per instance.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "format/trace_format.hpp"
#include "model/cost/collectives.hpp"
#include "model/trace/trace_dir.hpp"

namespace mstep::model {

enum class CollAlgo : std::uint8_t {
  Unsupported,                  // not decomposed: the members keep their recorded durations
  Nothing,                      // one member: no message
  BarrierDissemination,         // MPIR_Barrier_intra_dissemination
  BcastBinomial,                // MPIR_Bcast_intra_binomial
  BcastScatterRecDblAllgather,  // MPIR_Bcast_intra_scatter_recursive_doubling_allgather
  BcastScatterRingAllgather,    // MPIR_Bcast_intra_scatter_ring_allgather
  ReduceBinomial,               // MPIR_Reduce_intra_binomial
  ReduceScatterGather,          // MPIR_Reduce_intra_reduce_scatter_gather (Rabenseifner)
  AllreduceRecDbl,              // MPIR_Allreduce_intra_recursive_doubling
  AllreduceRabenseifner,        // MPIR_Allreduce_intra_reduce_scatter_allgather
  GatherBinomial,               // MPIR_Gather_intra_binomial
  ScatterBinomial,              // MPIR_Scatter_intra_binomial
  GathervLinear,                // MPIR_Gatherv_allcomm_linear
  ScattervLinear,               // MPIR_Scatterv_allcomm_linear
  AllgatherRecDbl,              // MPIR_Allgather(v)_intra_recursive_doubling
  AllgatherBruck,               // MPIR_Allgather(v)_intra_brucks
  AllgatherRing,                // MPIR_Allgather(v)_intra_ring
  AlltoallBruck,                // MPIR_Alltoall_intra_brucks
  AlltoallScattered,            // MPIR_Alltoall(v)_intra_scattered
  AlltoallPairwise,             // MPIR_Alltoall_intra_pairwise
  ReduceScatterRecHalving,      // MPIR_Reduce_scatter(_block)_intra_recursive_halving
  ReduceScatterPairwise,        // MPIR_Reduce_scatter(_block)_intra_pairwise
  // ch4's MPIDI_Scan_intra_composition_alpha on one node: MPIR_Scan_intra_recursive_doubling on
  // the whole communicator, the last rank's result to rank 0 (the node's total), then MPICH's
  // "noneed" flag (one int) broadcast from rank 0 by a binomial tree.
  ScanRecDbl,
  ExscanRecDbl,                 // MPIR_Exscan_intra_recursive_doubling
  // libmstep's substitutes (interpose/substitute.hpp), when the run's meta.json says they ran:
  BarrierCentral,               // MSTEP_BARRIER=central
  BarrierCombiningTree,         // MSTEP_BARRIER=tree:N (CollShape::arity)
  BcastFlat,                    // MSTEP_BCAST=flat (binomial is MPICH's BcastBinomial)
  BcastTree,                    // MSTEP_BCAST=esssp|auto: the planned tree (CollShape::tree)
};

// The broadcast plans of MSTEP_BCAST=esssp|auto, made as libmstep made them (model/cost/bcast_plan)
// from the run's recorded LogGPS parameters and delay pairs, once per members, root and size.
// Shared by copies of one CollectiveSubstitutes; safe to use from several replays at once.
class BcastPlans;

// The collectives libmstep ran in place of MPICH's (meta.json "collectives"); the defaults are
// MPICH's own.
struct CollectiveSubstitutes {
  CollAlgo barrier = CollAlgo::Unsupported;  // Unsupported: MPICH's; else BarrierCentral, ...
  std::uint32_t arity = 0;                   // BarrierCombiningTree
  // MSTEP_BARRIER=auto: per communicator size, adaptive_barrier_any_arity under these parameters
  // (as libmstep chose); `barrier` is then BarrierDissemination, a placeholder.
  bool barrier_auto = false;
  bool auto_native = false;   // auto_barrier_runs's native_mpich, delayed and mpich_round_s, from meta.json
  bool auto_delayed = false;
  double auto_mpich_round_s = 0;
  LogPBarrierParams logp;
  CollAlgo bcast = CollAlgo::Unsupported;    // Unsupported: MPICH's; else BcastFlat or BcastBinomial
  // MSTEP_BCAST=esssp or auto: the tree (auto: also whether MPICH's ran) depends on the run's
  // parameters and per-pair latencies. With them in meta.json (collectives.loggps, delay.pairs),
  // `plans` makes the trees that ran; without them the calls keep their recorded durations.
  bool bcast_recorded = false;
  std::shared_ptr<BcastPlans> plans;
  // MSTEP_ALLREDUCE: MPI_Allreduce by libmstep (interpose/substitute_allreduce.hpp): Unsupported
  // for MPICH's own; AllreduceRecDbl or AllreduceRabenseifner; with allreduce_as_mpich, MPICH's
  // choice between them (pt2pt). Charged as their messages and the substitute's calibrated residual
  // (CollectiveTimes::substitute_s), not MPICH's; as their messages alone without one.
  CollAlgo allreduce = CollAlgo::Unsupported;
  bool allreduce_as_mpich = false;
  // MSTEP_ALLTOALL: MPI_Alltoall by libmstep (interpose/substitute_alltoall.hpp), the same way:
  // AlltoallBruck, AlltoallScattered or AlltoallPairwise; with alltoall_as_mpich, MPICH's choice.
  // MPI_Alltoallv then too, by its one algorithm (scattered).
  CollAlgo alltoall = CollAlgo::Unsupported;
  bool alltoall_as_mpich = false;
  // MSTEP_GATHER / MSTEP_SCATTER: MPI_Gather(v) / MPI_Scatter(v) by libmstep
  // (interpose/substitute_rooted.hpp), MPICH's one algorithm for each, charged as their messages.
  bool gather = false, scatter = false;
  // MSTEP_ALLGATHER: MPI_Allgather by libmstep (interpose/substitute_allgather.hpp): AllgatherRecDbl,
  // AllgatherBruck or AllgatherRing; with allgather_as_mpich, MPICH's choice.
  CollAlgo allgather = CollAlgo::Unsupported;
  bool allgather_as_mpich = false;
  // MSTEP_REDUCE: MPI_Reduce by libmstep (interpose/substitute_reduce.hpp): ReduceBinomial or
  // ReduceScatterGather; with reduce_as_mpich, MPICH's choice.
  CollAlgo reduce = CollAlgo::Unsupported;
  bool reduce_as_mpich = false;
  // MSTEP_REDUCE_SCATTER: MPI_Reduce_scatter(_block) by libmstep
  // (interpose/substitute_reduce_scatter.hpp): ReduceScatterRecHalving or ReduceScatterPairwise;
  // with reduce_scatter_as_mpich, MPICH's choice.
  CollAlgo reduce_scatter = CollAlgo::Unsupported;
  bool reduce_scatter_as_mpich = false;
  // MSTEP_SCAN: MPI_Scan and MPI_Exscan by libmstep (interpose/substitute_scan.hpp), MPICH's one
  // algorithm for each on one host, charged as their messages and the substitute's residual.
  bool scan = false;
  bool any() const {
    return barrier != CollAlgo::Unsupported || bcast != CollAlgo::Unsupported || bcast_recorded ||
           allreduce != CollAlgo::Unsupported || alltoall != CollAlgo::Unsupported || gather || scatter ||
           allgather != CollAlgo::Unsupported || reduce != CollAlgo::Unsupported ||
           reduce_scatter != CollAlgo::Unsupported || scan;
  }
};

// From meta.json's names ("central", "tree:4", "dissemination", "flat", "binomial", "pt2pt",
// "mpi"); an unknown name is MPICH's.
CollectiveSubstitutes substitutes_from_names(std::string_view barrier, std::string_view bcast,
                                             std::string_view allreduce = {}, std::string_view alltoall = {},
                                             std::string_view gather = {}, std::string_view scatter = {},
                                             std::string_view allgather = {}, std::string_view reduce = {},
                                             std::string_view reduce_scatter = {}, std::string_view scan = {});
CollectiveSubstitutes substitutes_of(const RunMeta& meta);

// MPICH's thresholds (MPICH 4.0.2's built-in selection table; bytes). Broadcast's short-message
// ones are in model/cost/collectives.hpp, which libmstep's auto broadcast shares.
inline constexpr std::uint64_t kBcastLongBytes = 524288;        // scatter + recursive doubling up to
inline constexpr std::uint64_t kAllreduceShortBytes = 8;        // recursive doubling up to
inline constexpr std::uint64_t kReduceShortBytes = 2048;        // binomial up to
inline constexpr std::uint64_t kAllgatherLongBytes = 524288;    // total; recursive doubling below (2^k ranks)
inline constexpr std::uint64_t kAllgatherShortBytes = 81920;    // total; Bruck below (other sizes)
inline constexpr std::uint64_t kAllgathervPipelineBytes = 32768;  // MPI_Allgatherv's ring: chunks of this from a longer block
inline constexpr std::uint64_t kAlltoallShortBytes = 256;       // per block; Bruck up to (8+ ranks)
inline constexpr std::uint64_t kAlltoallMediumBytes = 32768;    // per block; scattered up to
inline constexpr std::uint32_t kAlltoallMinProcs = 8;           // below: never Bruck
inline constexpr std::uint32_t kAlltoallThrottle = 32;          // MPIR_CVAR_ALLTOALL_THROTTLE
inline constexpr std::uint64_t kReduceScatterLongBytes = 524288;  // total; recursive halving below
// The element size assumed where MPICH's choice depends on the element count (Allreduce, Reduce:
// "count < pof2"): the trace records bytes, not counts.
inline constexpr std::uint64_t kAssumedElementBytes = 8;
// MPI_Scan's last message: MPICH's "noneed" flag, one int, broadcast from rank 0 of the node.
inline constexpr std::uint64_t kScanFlagBytes = 4;

// What all members of one collective instance agree on.
struct CollShape {
  CollAlgo algo = CollAlgo::Unsupported;
  Op op = Op::Barrier;
  std::uint32_t n = 0;     // communicator size
  std::uint32_t root = 0;  // communicator rank of the root (rooted collectives)
  std::uint64_t m = 0;     // bytes: the message (Bcast, Reduce, Allreduce) or one member's block
  std::uint32_t arity = 0; // BarrierCombiningTree
  bool substitute = false; // one of libmstep's algorithms, not MPICH's choice
  const BroadcastTree* tree = nullptr;  // BcastTree: communicator ranks (owned by BcastPlans)
};

// One message of a member's program.
// 16 bytes, the send flag in the size's top bit: every member of a collective holds its program
// while it runs (a barrier of 65 536 ranks: 32 operations each, 50 MB at 24 bytes an operation).
struct CollOp {
  std::uint32_t slot = 0;  // round * n + x (see above)
  std::uint32_t peer = 0;  // communicator rank of the partner
  std::uint64_t bytes : 63 = 0;
  std::uint64_t send : 1 = 0;
};
static_assert(sizeof(CollOp) == 16);

// The per-member logical size of a collective record, from the byte conventions of
// share/trace-format.md: the message (Bcast, Reduce, Allreduce) or this member's block.
std::uint64_t collective_block_bytes(const Event& e, std::uint32_t n);

// MPICH 4.0's default algorithm for an intracommunicator of n ranks and m bytes (as
// collective_block_bytes gives them), or libmstep's substitute where `subs` names one for `op`.
// Barrier: m is ignored.
// `members`: the communicator's world ranks, for the plans of MSTEP_BCAST=esssp|auto (without
// them such a broadcast keeps its recorded durations).
CollShape choose_collective(Op op, std::uint32_t n, std::uint32_t root, std::uint64_t m,
                            const CollectiveSubstitutes& subs = {}, std::span<const std::int32_t> members = {});

// Rounds of the instance: it has rounds * n message slots.
std::uint32_t coll_rounds(const CollShape& s);

// The messages each block of a ring allgather travels in: MPI_Allgatherv's ring pipelines a block
// longer than kAllgathervPipelineBytes in chunks of that size (MPIR_Allgatherv_intra_ring; the
// block here is the members' mean, as the trace has it), MPI_Allgather's sends it whole.
inline std::uint32_t allgather_ring_chunks(const CollShape& s) {
  if (s.op != Op::Allgatherv || s.m <= kAllgathervPipelineBytes) return 1;
  const std::uint64_t chunks = (s.m + kAllgathervPipelineBytes - 1) / kAllgathervPipelineBytes;
  return chunks > (std::uint64_t{1} << 30) ? std::uint32_t{1} << 30 : static_cast<std::uint32_t>(chunks);
}

// An upper bound on the operations of one member's program, and on its steps, for any algorithm
// on n ranks but a pipelined ring (to preallocate the replay's buffers once), and for `s` itself.
std::uint32_t coll_max_ops(std::uint32_t n);
std::uint32_t coll_max_ops(const CollShape& s);

// Writes member `me`'s program: ops[0..nops) in order, and step_end[0..nsteps): the end (exclusive
// op index) of each step. The buffers must hold coll_max_ops(s) entries. No allocation.
void coll_program(const CollShape& s, std::uint32_t me, CollOp* ops, std::uint32_t* step_end,
                  std::uint32_t& nops, std::uint32_t& nsteps);

// The dissemination barrier's round `round` for member `me` of n: its two operations (the receive
// from me - 2^round, then the send to me + 2^round, one step), as coll_program writes them. The
// replay writes a barrier member's step as it starts it instead of keeping the member's program:
// a world barrier of a million ranks is 40 operations a member, 640 MB in all.
inline void barrier_dissemination_step(std::uint32_t n, std::uint32_t me, std::uint32_t round, CollOp* ops) {
  const auto d = static_cast<std::uint32_t>(std::uint64_t{1} << round);
  const std::uint32_t src = (me + n - d) % n;
  ops[0] = CollOp{round * n + src, src, 0, false};
  ops[1] = CollOp{round * n + me, (me + d) % n, 0, true};
}
// Its rounds: ceil(log2 n).
inline std::uint32_t barrier_dissemination_rounds(std::uint32_t n) {
  std::uint32_t rounds = 0;
  for (std::uint64_t mask = 1; mask < n; mask <<= 1) ++rounds;
  return rounds;
}

// "binomial tree", "recursive doubling", ...
std::string_view coll_algo_name(CollAlgo a);

}  // namespace mstep::model
