// The names of libmstep's substitute collectives, as MSTEP_BARRIER / MSTEP_BCAST / MSTEP_ALLREDUCE /
// MSTEP_ALLTOALL / MSTEP_ALLGATHER / MSTEP_REDUCE / MSTEP_GATHER / MSTEP_SCATTER /
// MSTEP_REDUCE_SCATTER / MSTEP_SCAN take them and meta.json's "collectives" records
// them: one grammar for the writer (interpose/substitute.hpp) and the reader
// (model/replay/replay_collectives.hpp).
//   barrier:   mpi | central | tree:N (2 <= N <= 255) | dissemination | auto
//   bcast:     mpi | flat | binomial | esssp | auto
//   allreduce: mpi | recursive_doubling | reduce_scatter_allgather | pt2pt
//   alltoall:  mpi | bruck | scattered | pairwise | pt2pt
//   allgather: mpi | recursive_doubling | bruck | ring | pt2pt
//   reduce:    mpi | binomial | reduce_scatter_gather | pt2pt
//   gather, scatter, scan: mpi | pt2pt
//   reduce_scatter: mpi | recursive_halving | pairwise | pt2pt
// The empty name is "mpi" (MPICH's own).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mstep {

enum class BarrierAlgo : std::uint8_t { Mpi, Central, Tree, Dissemination, Auto };
enum class BcastAlgo : std::uint8_t { Mpi, Flat, Binomial, Esssp, Auto };
// pt2pt: MPICH 4.0.2's own choice between the two (by size and count, as the replay makes it),
// run by libmstep over point-to-point messages, so that the delay apparatus reaches them.
enum class AllreduceAlgo : std::uint8_t { Mpi, RecursiveDoubling, ReduceScatterAllgather, Pt2pt };
// MPICH 4.0.2's three (MPIR_Alltoall_intra_brucks, _scattered, _pairwise); pt2pt: its choice by
// block size and ranks.
enum class AlltoallAlgo : std::uint8_t { Mpi, Bruck, Scattered, Pairwise, Pt2pt };
// MPICH 4.0.2's three for MPI_Allgather (MPIR_Allgather_intra_recursive_doubling, _brucks, _ring);
// pt2pt: its choice by total size and whether the ranks are a power of 2.
enum class AllgatherAlgo : std::uint8_t { Mpi, RecursiveDoubling, Bruck, Ring, Pt2pt };
// MPICH 4.0.2's two for MPI_Reduce (MPIR_Reduce_intra_binomial, _reduce_scatter_gather); pt2pt: its
// choice by size.
enum class ReduceAlgo : std::uint8_t { Mpi, Binomial, ReduceScatterGather, Pt2pt };
// MPICH 4.0.2's two for MPI_Reduce_scatter(_block) with a commutative operation
// (MPIR_Reduce_scatter(_block)_intra_recursive_halving, _pairwise); pt2pt: its choice by size.
enum class ReduceScatterAlgo : std::uint8_t { Mpi, RecursiveHalving, Pairwise, Pt2pt };
// MPI_Gather(v) and MPI_Scatter(v), each of which MPICH 4.0.2 runs by one algorithm whatever the
// size (binomial tree; the v versions linear), and MPI_Scan and MPI_Exscan likewise (recursive
// doubling, on one node): MPICH's own, or that algorithm by libmstep.
enum class RootedAlgo : std::uint8_t { Mpi, Pt2pt };

struct BarrierName {
  BarrierAlgo algo = BarrierAlgo::Mpi;
  int arity = 0;  // Tree
};

// nullopt for a name outside the grammar.
std::optional<BarrierName> parse_barrier_name(std::string_view name);
std::optional<BcastAlgo> parse_bcast_name(std::string_view name);
std::optional<AllreduceAlgo> parse_allreduce_name(std::string_view name);
std::optional<AlltoallAlgo> parse_alltoall_name(std::string_view name);
std::optional<AllgatherAlgo> parse_allgather_name(std::string_view name);
std::optional<ReduceAlgo> parse_reduce_name(std::string_view name);
std::optional<RootedAlgo> parse_rooted_name(std::string_view name);
std::optional<ReduceScatterAlgo> parse_reduce_scatter_name(std::string_view name);

std::string barrier_name(BarrierName b);  // "tree:4"
const char* bcast_name(BcastAlgo a);      // "flat"
const char* allreduce_name(AllreduceAlgo a);  // "recursive_doubling"
const char* alltoall_name(AlltoallAlgo a);    // "pairwise"
const char* allgather_name(AllgatherAlgo a);  // "bruck"
const char* reduce_name(ReduceAlgo a);        // "binomial"
const char* rooted_name(RootedAlgo a);        // "pt2pt"
const char* reduce_scatter_name(ReduceScatterAlgo a);  // "pairwise"

}  // namespace mstep
