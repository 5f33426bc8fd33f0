// libmstep's MPI_Gather, MPI_Gatherv, MPI_Scatter and MPI_Scatterv over point-to-point messages
// (MSTEP_GATHER and MSTEP_SCATTER = pt2pt, interpose/substitute.hpp): the one algorithm MPICH 4.0.2
// runs for each on an intracommunicator, message for message, so that the replay's programs of
// them (model/replay/replay_collectives.cpp) are what ran and the delay apparatus reaches every
// message.
//   gather (MPIR_Gather_intra_binomial): on the binomial tree of ranks relative to the root, a rank
//     receives its children's subtrees' blocks, smallest child first, and sends its own block and
//     theirs to its parent in one message;
//   scatter (MPIR_Scatter_intra_binomial): the reverse, the root sending to its largest subtree
//     first;
//   gatherv (MPIR_Gatherv_allcomm_linear): the root posts a receive from every other rank with a
//     non-empty block and waits for all; each sends its block, synchronously from 32 ranks
//     (MPIR_CVAR_GATHERV_INTER_SSEND_MIN_PROCS);
//   scatterv (MPIR_Scatterv_allcomm_linear): the root starts a send to every other rank with a
//     non-empty block and waits for all.
// Blocks forwarded by the trees travel as bytes, packed as MPI_Pack packs them (what a send of
// the datatype carries); the root's own block is a local copy, outside the apparatus.
#pragma once

#include <mpi.h>

#include "interpose/substitute_wire.hpp"

namespace mstep {

// One member's part (me of n on w's communicator, 0 <= root < n, n > 1); `nbytes` is the block's
// length in bytes, the same on every member: 0 < nbytes and n * nbytes <= INT_MAX.
int substitute_gather(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, int me, int n, int nbytes);
int substitute_scatter(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, int me, int n, int nbytes);
int substitute_gatherv(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root, int me, int n);
int substitute_scatterv(const Wire& w, const void* sendbuf, const int* sendcounts, const int* displs,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, int me,
                        int n);

}  // namespace mstep
