// libmstep's MPI_Allreduce over point-to-point messages (MSTEP_ALLREDUCE, interpose/substitute.hpp):
// MPICH 4.0.2's two algorithms, message for message, so that the replay's programs of them
// (model/replay/replay_collectives.cpp) are what ran, and the delay apparatus reaches every message.
//   recursive doubling (MPIR_Allreduce_intra_recursive_doubling): the n - 2^k extra ranks fold
//     their data into a neighbour, the 2^k exchange whole vectors with the partner at distance
//     1, 2, 4, ... and reduce, and the folded ranks get the result back;
//   reduce-scatter + allgather (Rabenseifner, MPIR_Allreduce_intra_reduce_scatter_allgather): the
//     same fold, then recursive halving of the vector in 2^k blocks, each rank reducing the half it
//     keeps, then recursive doubling of the reduced blocks back; commutative operations only
//     (another runs recursive doubling, as MPICH does).
// Reductions are PMPI_Reduce_local, in rank order for an operation that is not commutative.
#pragma once

#include <mpi.h>

#include "format/collective_substitutes.hpp"
#include "interpose/substitute_wire.hpp"

namespace mstep {

// Which of the two `algo` runs for `count` elements of `type_bytes` bytes on n ranks: pt2pt is
// MPICH's choice as the replay makes it (model/replay: recursive doubling up to 8 bytes or when
// the vector holds fewer 8-byte elements than 2^k, else Rabenseifner); Rabenseifner needs a
// commutative operation, at least 2^k elements and (as the replay has it) 2^k 8-byte ones.
AllreduceAlgo allreduce_runs(AllreduceAlgo algo, long long count, int type_bytes, bool commutative, int n);

// One member's part (me of n on w's communicator); count > 0, n > 1, sendbuf != recvbuf. The
// first failing call's code, MPI_SUCCESS otherwise.
int substitute_allreduce(const Wire& w, AllreduceAlgo algo, const void* sendbuf, void* recvbuf, int count,
                         MPI_Datatype type, MPI_Op op, int me, int n);

}  // namespace mstep
