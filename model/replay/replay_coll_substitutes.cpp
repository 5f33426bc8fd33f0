// libmstep's substitute collectives by the names meta.json gives them (MSTEP_BARRIER=..., and so
// on): the algorithm the replay charges for each (model/replay/replay_collectives.hpp). The
// recorded broadcast plans and the auto barrier's parameters are added by substitutes_of
// (replay_coll_choice.cpp), which needs the run's metadata.
#include <string_view>

#include "format/collective_substitutes.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep::model {

CollectiveSubstitutes substitutes_from_names(std::string_view barrier, std::string_view bcast,
                                             std::string_view allreduce, std::string_view alltoall,
                                             std::string_view gather, std::string_view scatter,
                                             std::string_view allgather, std::string_view reduce,
                                             std::string_view reduce_scatter, std::string_view scan) {
  CollectiveSubstitutes s;
  s.scan = parse_rooted_name(scan) == RootedAlgo::Pt2pt;
  if (const auto r = parse_reduce_scatter_name(reduce_scatter)) {
    switch (*r) {
      case ReduceScatterAlgo::RecursiveHalving: s.reduce_scatter = CollAlgo::ReduceScatterRecHalving; break;
      case ReduceScatterAlgo::Pairwise: s.reduce_scatter = CollAlgo::ReduceScatterPairwise; break;
      case ReduceScatterAlgo::Pt2pt:
        s.reduce_scatter = CollAlgo::ReduceScatterRecHalving, s.reduce_scatter_as_mpich = true;
        break;
      case ReduceScatterAlgo::Mpi: break;
    }
  }
  if (const auto r = parse_reduce_name(reduce)) {
    switch (*r) {
      case ReduceAlgo::Binomial: s.reduce = CollAlgo::ReduceBinomial; break;
      case ReduceAlgo::ReduceScatterGather: s.reduce = CollAlgo::ReduceScatterGather; break;
      case ReduceAlgo::Pt2pt: s.reduce = CollAlgo::ReduceBinomial, s.reduce_as_mpich = true; break;
      case ReduceAlgo::Mpi: break;
    }
  }
  if (const auto a = parse_allgather_name(allgather)) {
    switch (*a) {
      case AllgatherAlgo::RecursiveDoubling: s.allgather = CollAlgo::AllgatherRecDbl; break;
      case AllgatherAlgo::Bruck: s.allgather = CollAlgo::AllgatherBruck; break;
      case AllgatherAlgo::Ring: s.allgather = CollAlgo::AllgatherRing; break;
      case AllgatherAlgo::Pt2pt: s.allgather = CollAlgo::AllgatherRing, s.allgather_as_mpich = true; break;
      case AllgatherAlgo::Mpi: break;
    }
  }
  s.gather = parse_rooted_name(gather) == RootedAlgo::Pt2pt;
  s.scatter = parse_rooted_name(scatter) == RootedAlgo::Pt2pt;
  if (const auto t = parse_alltoall_name(alltoall)) {
    switch (*t) {
      case AlltoallAlgo::Bruck: s.alltoall = CollAlgo::AlltoallBruck; break;
      case AlltoallAlgo::Scattered: s.alltoall = CollAlgo::AlltoallScattered; break;
      case AlltoallAlgo::Pairwise: s.alltoall = CollAlgo::AlltoallPairwise; break;
      case AlltoallAlgo::Pt2pt: s.alltoall = CollAlgo::AlltoallScattered, s.alltoall_as_mpich = true; break;
      case AlltoallAlgo::Mpi: break;
    }
  }
  if (const auto a = parse_allreduce_name(allreduce)) {
    switch (*a) {
      case AllreduceAlgo::RecursiveDoubling: s.allreduce = CollAlgo::AllreduceRecDbl; break;
      case AllreduceAlgo::ReduceScatterAllgather: s.allreduce = CollAlgo::AllreduceRabenseifner; break;
      case AllreduceAlgo::Pt2pt: s.allreduce = CollAlgo::AllreduceRecDbl, s.allreduce_as_mpich = true; break;
      case AllreduceAlgo::Mpi: break;
    }
  }
  if (const auto b = parse_barrier_name(barrier)) {
    switch (b->algo) {
      case BarrierAlgo::Central: s.barrier = CollAlgo::BarrierCentral; break;
      case BarrierAlgo::Dissemination: s.barrier = CollAlgo::BarrierDissemination; break;
      case BarrierAlgo::Tree: s.barrier = CollAlgo::BarrierCombiningTree, s.arity = static_cast<std::uint32_t>(b->arity); break;
      case BarrierAlgo::Mpi:
      case BarrierAlgo::Auto: break;  // auto needs its parameters: substitutes_of
    }
  }
  if (const auto c = parse_bcast_name(bcast)) {
    switch (*c) {
      case BcastAlgo::Flat: s.bcast = CollAlgo::BcastFlat; break;
      case BcastAlgo::Binomial: s.bcast = CollAlgo::BcastBinomial; break;
      case BcastAlgo::Esssp:
      case BcastAlgo::Auto: s.bcast_recorded = true; break;
      case BcastAlgo::Mpi: break;
    }
  }
  return s;
}

}  // namespace mstep::model
