#include "format/collective_substitutes.hpp"

#include <fmt/format.h>

namespace mstep {

std::optional<BarrierName> parse_barrier_name(std::string_view name) {
  if (name.empty() || name == "mpi") return BarrierName{BarrierAlgo::Mpi, 0};
  if (name == "central") return BarrierName{BarrierAlgo::Central, 0};
  if (name == "dissemination") return BarrierName{BarrierAlgo::Dissemination, 0};
  if (name == "auto") return BarrierName{BarrierAlgo::Auto, 0};
  if (!name.starts_with("tree:")) return std::nullopt;
  const std::string_view digits = name.substr(5);
  if (digits.empty() || digits.size() > 3) return std::nullopt;
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  // At most 255: libmstep packs the arity in 8 bits beside the private communicator.
  if (v < 2 || v > 255) return std::nullopt;
  return BarrierName{BarrierAlgo::Tree, v};
}

std::optional<BcastAlgo> parse_bcast_name(std::string_view name) {
  if (name.empty() || name == "mpi") return BcastAlgo::Mpi;
  if (name == "flat") return BcastAlgo::Flat;
  if (name == "binomial") return BcastAlgo::Binomial;
  if (name == "esssp") return BcastAlgo::Esssp;
  if (name == "auto") return BcastAlgo::Auto;
  return std::nullopt;
}

std::optional<AllreduceAlgo> parse_allreduce_name(std::string_view name) {
  if (name.empty() || name == "mpi") return AllreduceAlgo::Mpi;
  if (name == "recursive_doubling") return AllreduceAlgo::RecursiveDoubling;
  if (name == "reduce_scatter_allgather") return AllreduceAlgo::ReduceScatterAllgather;
  if (name == "pt2pt") return AllreduceAlgo::Pt2pt;
  return std::nullopt;
}

std::optional<AlltoallAlgo> parse_alltoall_name(std::string_view name) {
  if (name.empty() || name == "mpi") return AlltoallAlgo::Mpi;
  if (name == "bruck") return AlltoallAlgo::Bruck;
  if (name == "scattered") return AlltoallAlgo::Scattered;
  if (name == "pairwise") return AlltoallAlgo::Pairwise;
  if (name == "pt2pt") return AlltoallAlgo::Pt2pt;
  return std::nullopt;
}

std::optional<AllgatherAlgo> parse_allgather_name(std::string_view name) {
  if (name.empty() || name == "mpi") return AllgatherAlgo::Mpi;
  if (name == "recursive_doubling") return AllgatherAlgo::RecursiveDoubling;
  if (name == "bruck") return AllgatherAlgo::Bruck;
  if (name == "ring") return AllgatherAlgo::Ring;
  if (name == "pt2pt") return AllgatherAlgo::Pt2pt;
  return std::nullopt;
}

std::optional<ReduceAlgo> parse_reduce_name(std::string_view name) {
  if (name.empty() || name == "mpi") return ReduceAlgo::Mpi;
  if (name == "binomial") return ReduceAlgo::Binomial;
  if (name == "reduce_scatter_gather") return ReduceAlgo::ReduceScatterGather;
  if (name == "pt2pt") return ReduceAlgo::Pt2pt;
  return std::nullopt;
}

std::optional<RootedAlgo> parse_rooted_name(std::string_view name) {
  if (name.empty() || name == "mpi") return RootedAlgo::Mpi;
  if (name == "pt2pt") return RootedAlgo::Pt2pt;
  return std::nullopt;
}

std::optional<ReduceScatterAlgo> parse_reduce_scatter_name(std::string_view name) {
  if (name.empty() || name == "mpi") return ReduceScatterAlgo::Mpi;
  if (name == "recursive_halving") return ReduceScatterAlgo::RecursiveHalving;
  if (name == "pairwise") return ReduceScatterAlgo::Pairwise;
  if (name == "pt2pt") return ReduceScatterAlgo::Pt2pt;
  return std::nullopt;
}

std::string barrier_name(BarrierName b) {
  switch (b.algo) {
    case BarrierAlgo::Mpi: return "mpi";
    case BarrierAlgo::Central: return "central";
    case BarrierAlgo::Tree: return fmt::format("tree:{}", b.arity);
    case BarrierAlgo::Dissemination: return "dissemination";
    case BarrierAlgo::Auto: return "auto";
  }
  return "mpi";
}

const char* bcast_name(BcastAlgo a) {
  switch (a) {
    case BcastAlgo::Mpi: return "mpi";
    case BcastAlgo::Flat: return "flat";
    case BcastAlgo::Binomial: return "binomial";
    case BcastAlgo::Esssp: return "esssp";
    case BcastAlgo::Auto: return "auto";
  }
  return "mpi";
}

const char* allreduce_name(AllreduceAlgo a) {
  switch (a) {
    case AllreduceAlgo::Mpi: return "mpi";
    case AllreduceAlgo::RecursiveDoubling: return "recursive_doubling";
    case AllreduceAlgo::ReduceScatterAllgather: return "reduce_scatter_allgather";
    case AllreduceAlgo::Pt2pt: return "pt2pt";
  }
  return "mpi";
}

const char* alltoall_name(AlltoallAlgo a) {
  switch (a) {
    case AlltoallAlgo::Mpi: return "mpi";
    case AlltoallAlgo::Bruck: return "bruck";
    case AlltoallAlgo::Scattered: return "scattered";
    case AlltoallAlgo::Pairwise: return "pairwise";
    case AlltoallAlgo::Pt2pt: return "pt2pt";
  }
  return "mpi";
}

const char* allgather_name(AllgatherAlgo a) {
  switch (a) {
    case AllgatherAlgo::Mpi: return "mpi";
    case AllgatherAlgo::RecursiveDoubling: return "recursive_doubling";
    case AllgatherAlgo::Bruck: return "bruck";
    case AllgatherAlgo::Ring: return "ring";
    case AllgatherAlgo::Pt2pt: return "pt2pt";
  }
  return "mpi";
}

const char* reduce_name(ReduceAlgo a) {
  switch (a) {
    case ReduceAlgo::Mpi: return "mpi";
    case ReduceAlgo::Binomial: return "binomial";
    case ReduceAlgo::ReduceScatterGather: return "reduce_scatter_gather";
    case ReduceAlgo::Pt2pt: return "pt2pt";
  }
  return "mpi";
}

const char* rooted_name(RootedAlgo a) { return a == RootedAlgo::Pt2pt ? "pt2pt" : "mpi"; }

const char* reduce_scatter_name(ReduceScatterAlgo a) {
  switch (a) {
    case ReduceScatterAlgo::Mpi: return "mpi";
    case ReduceScatterAlgo::RecursiveHalving: return "recursive_halving";
    case ReduceScatterAlgo::Pairwise: return "pairwise";
    case ReduceScatterAlgo::Pt2pt: return "pt2pt";
  }
  return "mpi";
}

}  // namespace mstep
