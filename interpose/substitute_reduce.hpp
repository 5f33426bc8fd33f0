// libmstep's MPI_Reduce over point-to-point messages (MSTEP_REDUCE, interpose/substitute.hpp):
// MPICH 4.0.2's two algorithms, message for message, so that the replay's programs of them
// (model/replay/replay_collectives.cpp) are what ran, and the delay apparatus reaches every message.
//   binomial (MPIR_Reduce_intra_binomial): on the binomial tree of ranks relative to the root, each
//     receives its children's partial results, smallest subtree first, reduces, and sends to its
//     parent; an operation that is not commutative runs the tree of rank 0, in rank order, whose
//     result then goes to the root;
//   reduce_scatter_gather (Rabenseifner, MPIR_Reduce_intra_reduce_scatter_gather): of the first
//     2 (n - 2^k) ranks each odd one folds its vector into the even one below, the 2^k others
//     reduce-scatter the vector by recursive halving, then gather the reduced pieces to the root
//     on a binomial tree; MPI's predefined operations only (another runs binomial, as in MPICH).
// pt2pt is MPICH's choice as the replay makes it: binomial up to 2 KiB, or when the vector holds
// fewer 8-byte elements than 2^k, else Rabenseifner (model/replay/replay_coll_choice.cpp).
// Reductions are PMPI_Reduce_local.
#pragma once

#include <mpi.h>

#include "format/collective_substitutes.hpp"
#include "interpose/substitute_wire.hpp"

namespace mstep {

// Which of the two `algo` runs for `count` elements of `type_bytes` bytes on n ranks with an
// operation that is one of MPI's predefined ones or not.
ReduceAlgo reduce_runs(ReduceAlgo algo, long long count, int type_bytes, bool predefined_op, int n);

// One member's part (me of n on w's communicator, 0 <= root < n); count > 0, n > 1. The first
// failing call's code, MPI_SUCCESS otherwise.
int substitute_reduce(const Wire& w, ReduceAlgo algo, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                      MPI_Op op, int root, int me, int n);

}  // namespace mstep
