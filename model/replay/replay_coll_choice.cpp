// Which algorithm a collective runs: MPICH 4.0.2's selection, or libmstep's substitute that
// meta.json says ran; its rounds, sizes and name (model/replay/replay_collectives.hpp). The
// members' programs are in replay_collectives.cpp, the substitutes by name in
// replay_coll_substitutes.cpp.
#include <array>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/collective_substitutes.hpp"
#include "format/delay_pairs.hpp"
#include "model/cost/bcast_plan.hpp"
#include "model/params/collective_times.hpp"
#include "model/replay/coll_math.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep::model {

using coll_math::ceil_log2;
using coll_math::floor_pow2;
using coll_math::log2_of;

std::uint64_t collective_block_bytes(const Event& e, std::uint32_t n) {
  const std::uint64_t others = n > 1 ? n - 1 : 1;
  const bool root = e.flags & kRoot;
  switch (blocking_collective(e.op)) {
    case Op::Bcast:
    case Op::Scatter:
    case Op::Scatterv: return root ? e.send_bytes / others : e.recv_bytes;
    case Op::Reduce:
    case Op::Gather:
    case Op::Gatherv: return root ? e.recv_bytes / others : e.send_bytes;
    case Op::Allreduce:
    case Op::Alltoall:
    case Op::Alltoallv:
    case Op::Alltoallw: return e.send_bytes / others;
    case Op::Allgather:
    case Op::Allgatherv:
    case Op::Reduce_scatter:
    case Op::Reduce_scatter_block: return e.recv_bytes / others;
    case Op::Scan:
    case Op::Exscan: return (e.send_bytes + e.recv_bytes) / others;  // m (n-1-i) sent and m i received
    default: return 0;
  }
}

class BcastPlans {
 public:
  BcastPlans(BcastAlgo algo, const LogGPSParams& loggps, PairLatency pairs, bool delayed, CollectiveTable mpich,
             bool binomial_on_tie)
      : algo_(algo), loggps_(loggps), pairs_(std::move(pairs)), delayed_(delayed), mpich_(std::move(mpich)),
        binomial_on_tie_(binomial_on_tie) {}

  // The plan for these members (world ranks), root and size; the same object for the same inputs.
  const SubstituteBroadcast& get(std::span<const std::int32_t> members, std::uint32_t root, std::uint64_t m) {
    const auto n = static_cast<std::uint32_t>(members.size());
    if (!substitute_broadcast_needs_network(algo_, n, delayed_, &mpich_)) {
      // No network to build: the same answer for every such communicator.
      std::lock_guard lock(mutex_);
      auto& p = simple_[n > kEssspMaxRanks ? 1 : 0];
      if (!p) p = std::make_unique<SubstituteBroadcast>(plan_substitute_broadcast(algo_, BroadcastNetwork{}, n, root, m, delayed_, &mpich_, binomial_on_tie_));
      return *p;
    }
    Key key{std::vector<std::int32_t>(members.begin(), members.end()), root, m};
    std::lock_guard lock(mutex_);
    auto& p = plans_[std::move(key)];
    if (!p)
      p = std::make_unique<SubstituteBroadcast>(
          plan_substitute_broadcast(algo_, substitute_network(loggps_, members, pairs_, m), n, root, m, delayed_, &mpich_,
                                    binomial_on_tie_));
    return *p;
  }

 private:
  using Key = std::tuple<std::vector<std::int32_t>, std::uint32_t, std::uint64_t>;
  BcastAlgo algo_;
  LogGPSParams loggps_;
  PairLatency pairs_;
  bool delayed_;
  CollectiveTable mpich_;  // meta.json collectives.mpich: what auto weighed MPICH's broadcast at
  bool binomial_on_tie_ = true;  // auto_broadcast's rule on a tie (meta.json collectives.bcast_tie)
  std::mutex mutex_;
  std::map<Key, std::unique_ptr<SubstituteBroadcast>> plans_;
  std::array<std::unique_ptr<SubstituteBroadcast>, 2> simple_;  // [n > kEssspMaxRanks]
};

namespace {

// meta.json's "collectives.loggps" (seconds; s and S in bytes, null for infinite); nullopt when
// it is not there or not whole.
std::optional<LogGPSParams> recorded_loggps(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  LogGPSParams p;
  for (auto [key, field] : {std::pair{"L", &p.L}, {"o", &p.o}, {"Os", &p.Os}, {"Or", &p.Or}, {"g", &p.g},
                            {"Gs", &p.Gs}, {"Gl", &p.Gl}}) {
    if (!j.contains(key) || !j.at(key).is_number()) return std::nullopt;
    *field = j.at(key).get<double>();
  }
  for (auto [key, field] : {std::pair{"s", &p.s}, {"S", &p.S}}) {
    if (!j.contains(key)) return std::nullopt;
    if (j.at(key).is_null()) *field = kInfiniteBytes;
    else if (j.at(key).is_number_unsigned()) *field = j.at(key).get<std::uint64_t>();
    else return std::nullopt;
  }
  return p;
}

}  // namespace

CollectiveSubstitutes substitutes_of(const RunMeta& meta) {
  CollectiveSubstitutes s = substitutes_from_names(meta.barrier_substitute, meta.bcast_substitute, meta.allreduce_substitute,
                                                   meta.alltoall_substitute, meta.gather_substitute, meta.scatter_substitute,
                                                   meta.allgather_substitute, meta.reduce_substitute,
                                                   meta.reduce_scatter_substitute, meta.scan_substitute);
  if (meta.barrier_substitute == "auto") {
    s.barrier = CollAlgo::BarrierDissemination;
    s.barrier_auto = true;
    s.logp = LogPBarrierParams{meta.auto_L, meta.auto_o, meta.auto_o, meta.auto_g};
    s.auto_native = meta.auto_native_mpich;
    s.auto_delayed = meta.delayed;
    s.auto_mpich_round_s = mpich_barrier_round_s(meta.auto_mpich);
  }
  if (s.bcast_recorded) {
    const auto algo = parse_bcast_name(meta.bcast_substitute);
    const auto loggps = recorded_loggps(meta.bcast_loggps_json);
    std::string error;
    PairLatency pairs;
    if (!meta.delay_pairs_json.empty()) pairs = PairLatency::parse(meta.delay_pairs_json, meta.ranks, error);
    if (algo && loggps && error.empty())
      s.plans = std::make_shared<BcastPlans>(*algo, *loggps, std::move(pairs), meta.delayed,
                                             *algo == BcastAlgo::Auto && meta.auto_native_mpich ? meta.auto_mpich : CollectiveTable{},
                                             meta.auto_bcast_binomial_on_tie);
  }
  return s;
}

CollShape choose_collective(Op op, std::uint32_t n, std::uint32_t root, std::uint64_t m,
                            const CollectiveSubstitutes& subs, std::span<const std::int32_t> members) {
  CollShape s{CollAlgo::Unsupported, op, n, root, m};
  if (n <= 1) {
    s.algo = CollAlgo::Nothing;
    return s;
  }
  const BarrierName auto_ran = op == Op::Barrier && subs.barrier_auto
                                   ? auto_barrier_runs(subs.logp, n, subs.auto_delayed, subs.auto_native, subs.auto_mpich_round_s)
                                   : BarrierName{BarrierAlgo::Mpi, 0};
  // auto where MPICH's own barrier ran: charged below as MPICH's.
  if (op == Op::Barrier && subs.barrier != CollAlgo::Unsupported && !(subs.barrier_auto && auto_ran.algo == BarrierAlgo::Mpi)) {
    s.algo = subs.barrier, s.arity = subs.arity, s.substitute = true;
    if (subs.barrier_auto) {
      s.algo = auto_ran.algo == BarrierAlgo::Central ? CollAlgo::BarrierCentral
               : auto_ran.algo == BarrierAlgo::Tree  ? CollAlgo::BarrierCombiningTree
                                                     : CollAlgo::BarrierDissemination;
      s.arity = auto_ran.algo == BarrierAlgo::Tree ? static_cast<std::uint32_t>(auto_ran.arity) : 0;
    }
    return s;
  }
  if (op == Op::Bcast && subs.bcast_recorded) {
    if (!subs.plans || members.size() != n || root >= n) {
      s.substitute = true;  // Unsupported: the members keep their recorded durations
      return s;
    }
    const SubstituteBroadcast& plan = subs.plans->get(members, root, m);
    switch (plan.kind) {
      case SubstituteBroadcast::Tree:
        s.algo = CollAlgo::BcastTree, s.tree = &plan.tree, s.substitute = true;
        return s;
      case SubstituteBroadcast::Binomial:
        s.algo = CollAlgo::BcastBinomial, s.substitute = true;  // libmstep's binomial tree: MPICH's schedule
        return s;
      case SubstituteBroadcast::Mpich: break;  // MPICH's own ran: its choice below
    }
  }
  if (op == Op::Bcast && subs.bcast != CollAlgo::Unsupported) {
    s.algo = subs.bcast, s.substitute = true;
    return s;
  }
  const std::uint32_t pof2 = floor_pow2(n);
  const bool pow2 = pof2 == n;
  const std::uint64_t total = m * n;
  // A nonblocking collective runs its blocking version's algorithm, at its start: what overlap
  // with computation saves is not credited (MPICH's own schedules for them are not modelled).
  switch (blocking_collective(op)) {
    case Op::Barrier: s.algo = CollAlgo::BarrierDissemination; break;
    case Op::Bcast:
      if (n < kBcastMinProcs || m <= kBcastShortBytes) s.algo = CollAlgo::BcastBinomial;
      else if (pow2 && m <= kBcastLongBytes) s.algo = CollAlgo::BcastScatterRecDblAllgather;
      else s.algo = CollAlgo::BcastScatterRingAllgather;
      break;
    case Op::Reduce:
      s.algo = m <= kReduceShortBytes || m / kAssumedElementBytes < pof2 ? CollAlgo::ReduceBinomial
                                                                           : CollAlgo::ReduceScatterGather;
      // libmstep's substitute ran it (the blocking call): MPICH's choice (pt2pt) or the one asked
      // for, where it can run it (interpose/substitute_reduce.hpp's reduce_runs).
      if (op == Op::Reduce && subs.reduce != CollAlgo::Unsupported) {
        if (!subs.reduce_as_mpich) s.algo = subs.reduce;
        if (s.algo == CollAlgo::ReduceScatterGather && m / kAssumedElementBytes < pof2) s.algo = CollAlgo::ReduceBinomial;
        s.substitute = true;
      }
      break;
    case Op::Allreduce:
      s.algo = m <= kAllreduceShortBytes || m / kAssumedElementBytes < pof2 ? CollAlgo::AllreduceRecDbl
                                                                              : CollAlgo::AllreduceRabenseifner;
      // libmstep's substitute ran it (the blocking call only): MPICH's choice (pt2pt) or the one
      // asked for, where it can run it (interpose/substitute_allreduce.hpp's allreduce_runs: a
      // vector of fewer elements than 2^k runs recursive doubling).
      if (op == Op::Allreduce && subs.allreduce != CollAlgo::Unsupported) {
        if (!subs.allreduce_as_mpich) s.algo = subs.allreduce;
        if (s.algo == CollAlgo::AllreduceRabenseifner && m / kAssumedElementBytes < pof2) s.algo = CollAlgo::AllreduceRecDbl;
        s.substitute = true;
      }
      break;
    // libmstep's substitutes run the same algorithms (the blocking calls).
    case Op::Gather:
      s.algo = CollAlgo::GatherBinomial, s.substitute = op == Op::Gather && subs.gather;
      break;
    case Op::Scatter:
      s.algo = CollAlgo::ScatterBinomial, s.substitute = op == Op::Scatter && subs.scatter;
      break;
    case Op::Gatherv:
      s.algo = CollAlgo::GathervLinear, s.substitute = op == Op::Gatherv && subs.gather;
      break;
    case Op::Scatterv:
      s.algo = CollAlgo::ScattervLinear, s.substitute = op == Op::Scatterv && subs.scatter;
      break;
    case Op::Allgather:
    case Op::Allgatherv:
      if (pow2) s.algo = total < kAllgatherLongBytes ? CollAlgo::AllgatherRecDbl : CollAlgo::AllgatherRing;
      else s.algo = total < kAllgatherShortBytes ? CollAlgo::AllgatherBruck : CollAlgo::AllgatherRing;
      // libmstep's substitute ran it (the blocking MPI_Allgather and MPI_Allgatherv): MPICH's
      // choice (pt2pt) or the one asked for, recursive doubling on other than 2^k ranks running
      // Bruck (interpose/substitute_allgather.hpp's allgather_runs_total).
      if ((op == Op::Allgather || op == Op::Allgatherv) && subs.allgather != CollAlgo::Unsupported) {
        if (!subs.allgather_as_mpich) s.algo = subs.allgather;
        if (s.algo == CollAlgo::AllgatherRecDbl && !pow2) s.algo = CollAlgo::AllgatherBruck;
        s.substitute = true;
      }
      break;
    case Op::Alltoall:
      if (n >= kAlltoallMinProcs && m <= kAlltoallShortBytes) s.algo = CollAlgo::AlltoallBruck;
      else if (m <= kAlltoallMediumBytes) s.algo = CollAlgo::AlltoallScattered;
      else s.algo = CollAlgo::AlltoallPairwise;
      // libmstep's substitute ran it (the blocking call; an in-place one ran MPICH's own, charged
      // alike): MPICH's choice (pt2pt) or the one asked for.
      if (op == Op::Alltoall && subs.alltoall != CollAlgo::Unsupported) {
        if (!subs.alltoall_as_mpich) s.algo = subs.alltoall;
        s.substitute = true;
      }
      break;
    case Op::Alltoallv:
    case Op::Alltoallw:  // MPICH 4.0.2: MPIR_Alltoallw_intra_scattered too (never a substitute)
      s.algo = CollAlgo::AlltoallScattered;
      s.substitute = op == Op::Alltoallv && subs.alltoall != CollAlgo::Unsupported;  // libmstep's, the same algorithm
      break;
    case Op::Reduce_scatter:
    case Op::Reduce_scatter_block:
      s.algo = total < kReduceScatterLongBytes ? CollAlgo::ReduceScatterRecHalving : CollAlgo::ReduceScatterPairwise;
      // libmstep's substitute ran it (the blocking calls; a non-commutative operation ran MPICH's
      // own, which the trace does not tell apart): MPICH's choice (pt2pt) or the one asked for.
      if ((op == Op::Reduce_scatter || op == Op::Reduce_scatter_block) && subs.reduce_scatter != CollAlgo::Unsupported) {
        if (!subs.reduce_scatter_as_mpich) s.algo = subs.reduce_scatter;
        s.substitute = true;
      }
      break;
    // MPICH's composition for ranks consecutive on their nodes, on one node (a run over several
    // hosts is charged as on one, as every collective here is).
    case Op::Scan: s.algo = CollAlgo::ScanRecDbl, s.substitute = op == Op::Scan && subs.scan; break;
    case Op::Exscan: s.algo = CollAlgo::ExscanRecDbl, s.substitute = op == Op::Exscan && subs.scan; break;
    default: break;
  }
  // Slot indices are 32-bit: communicators so large that n * rounds overflows keep their times.
  if (static_cast<std::uint64_t>(coll_rounds(s)) * n >= (std::uint64_t{1} << 31)) s.algo = CollAlgo::Unsupported;
  return s;
}

std::uint32_t coll_rounds(const CollShape& s) {
  const std::uint32_t n = s.n, K = ceil_log2(n), K2 = n ? log2_of(floor_pow2(n)) : 0;
  switch (s.algo) {
    case CollAlgo::Unsupported:
    case CollAlgo::Nothing: return 0;
    case CollAlgo::BarrierDissemination:
    case CollAlgo::BcastBinomial:
    case CollAlgo::ReduceBinomial:
    case CollAlgo::GatherBinomial:
    case CollAlgo::ScatterBinomial:
    case CollAlgo::AllgatherRecDbl:
    case CollAlgo::AllgatherBruck:
    case CollAlgo::AlltoallBruck: return K;
    case CollAlgo::BcastScatterRecDblAllgather: return 2 * K;
    case CollAlgo::BcastScatterRingAllgather: return K + n - 1;
    case CollAlgo::ReduceScatterGather:
    case CollAlgo::AllreduceRabenseifner: return 2 + 2 * K2;
    case CollAlgo::AllreduceRecDbl:
    case CollAlgo::ReduceScatterRecHalving: return 2 + K2;
    case CollAlgo::ScanRecDbl: return 2 * K + 1;
    case CollAlgo::ExscanRecDbl: return K;
    case CollAlgo::GathervLinear:
    case CollAlgo::ScattervLinear: return 1;
    case CollAlgo::AllgatherRing: return (n - 1) * allgather_ring_chunks(s);
    case CollAlgo::AlltoallScattered:
    case CollAlgo::AlltoallPairwise:
    case CollAlgo::ReduceScatterPairwise: return n;
    case CollAlgo::BarrierCentral: return 2;
    case CollAlgo::BarrierCombiningTree: return 1 + K;
    case CollAlgo::BcastFlat:
    case CollAlgo::BcastTree: return 1;
  }
  return 0;
}

std::string_view coll_algo_name(CollAlgo a) {
  switch (a) {
    case CollAlgo::Unsupported: return "not decomposed (recorded durations)";
    case CollAlgo::Nothing: return "no messages (one rank)";
    case CollAlgo::BarrierDissemination: return "dissemination";
    case CollAlgo::BcastBinomial: return "binomial tree";
    case CollAlgo::BcastScatterRecDblAllgather: return "binomial scatter + recursive-doubling allgather";
    case CollAlgo::BcastScatterRingAllgather: return "binomial scatter + ring allgather";
    case CollAlgo::ReduceBinomial: return "binomial tree";
    case CollAlgo::ReduceScatterGather: return "reduce-scatter + gather (Rabenseifner)";
    case CollAlgo::AllreduceRecDbl: return "recursive doubling";
    case CollAlgo::AllreduceRabenseifner: return "reduce-scatter + allgather (Rabenseifner)";
    case CollAlgo::GatherBinomial: return "binomial tree";
    case CollAlgo::ScatterBinomial: return "binomial tree";
    case CollAlgo::GathervLinear: return "linear";
    case CollAlgo::ScattervLinear: return "linear";
    case CollAlgo::AllgatherRecDbl: return "recursive doubling";
    case CollAlgo::AllgatherBruck: return "Bruck";
    case CollAlgo::AllgatherRing: return "ring";
    case CollAlgo::AlltoallBruck: return "Bruck";
    case CollAlgo::AlltoallScattered: return "scattered Isend/Irecv (32 at a time)";
    case CollAlgo::AlltoallPairwise: return "pairwise exchange";
    case CollAlgo::ReduceScatterRecHalving: return "recursive halving";
    case CollAlgo::ReduceScatterPairwise: return "pairwise exchange";
    case CollAlgo::ScanRecDbl: return "recursive doubling, the node's total to rank 0, a flag broadcast";
    case CollAlgo::ExscanRecDbl: return "recursive doubling";
    case CollAlgo::BarrierCentral: return "central counter";
    case CollAlgo::BarrierCombiningTree: return "combining tree";
    case CollAlgo::BcastFlat: return "flat tree";
    case CollAlgo::BcastTree: return "planned tree (E-SSSP or auto)";
  }
  return "unknown";
}

}  // namespace mstep::model
