// libmstep's MPI_Reduce_scatter and MPI_Reduce_scatter_block over point-to-point messages
// (MSTEP_REDUCE_SCATTER, interpose/substitute.hpp): MPICH 4.0.2's two algorithms for a commutative
// operation, message for message and reduction for reduction (the same partial sums in the same
// order, so floating-point results are MPICH's to the bit), so that the replay's programs of them
// (model/replay/replay_collectives.cpp) are what ran, and the delay apparatus reaches every message.
//   recursive_halving (MPIR_Reduce_scatter(_block)_intra_recursive_halving): on other than 2^k
//     ranks the first 2 rem fold (even to odd: the whole vector), then in round k the 2^k ranks
//     exchange the halves of what is left for the other half, each reducing what arrives, then
//     the folded ranks get their block from their odd neighbour;
//   pairwise (MPIR_Reduce_scatter(_block)_intra_pairwise): n - 1 rounds, in round i the block of
//     rank + i sent to it while the own block's piece arrives from rank - i and is reduced in.
// pt2pt is MPICH's choice: recursive halving below 512 KiB in all, else pairwise (the replay,
// model/replay/replay_coll_choice.cpp, makes the same one). A non-commutative operation runs
// MPICH's own (its two other algorithms are not copied).
#pragma once

#include <cstdint>

#include <mpi.h>

#include "format/collective_substitutes.hpp"
#include "interpose/substitute_wire.hpp"

namespace mstep {

// The algorithm `algo` stands for with `total` bytes in all (pt2pt: MPICH's).
ReduceScatterAlgo reduce_scatter_runs(ReduceScatterAlgo algo, std::uint64_t total);

// One member's part (me of n on w's communicator, n > 1) for block i of recvcounts[i] elements,
// the counts' elements in all > 0 and fitting an int, a commutative `op`; sendbuf may be
// MPI_IN_PLACE (the input then in recvbuf). The first failing call's code, MPI_SUCCESS otherwise.
int substitute_reduce_scatter(const Wire& w, ReduceScatterAlgo algo, const void* sendbuf, void* recvbuf,
                              const int* recvcounts, MPI_Datatype type, MPI_Op op, int me, int n);

}  // namespace mstep
