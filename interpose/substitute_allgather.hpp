// libmstep's MPI_Allgather over point-to-point messages (MSTEP_ALLGATHER, interpose/substitute.hpp):
// MPICH 4.0.2's three algorithms, message for message, so that the replay's programs of them
// (model/replay/replay_collectives.cpp) are what ran, and the delay apparatus reaches every message.
//   recursive_doubling (MPIR_Allgather_intra_recursive_doubling, 2^k ranks): in round i, the 2^i
//     blocks gathered so far exchanged with rank XOR 2^i;
//   bruck (MPIR_Allgather_intra_brucks): the own block first in a buffer of bytes, then in round k
//     the 2^k blocks held sent to rank - 2^k while as many arrive from rank + 2^k (the last round
//     the n - 2^k missing), then rotated into place;
//   ring (MPIR_Allgather_intra_ring): n - 1 rounds, each passing one block to rank + 1 while
//     receiving one from rank - 1.
// pt2pt is MPICH's choice: recursive doubling on 2^k ranks below 512 KiB in all, else Bruck below
// 80 KiB in all, else the ring (model/replay/replay_coll_choice.cpp makes the same one).
// recursive_doubling asked for on other rank counts runs Bruck (MPICH's cannot run there).
// MPI_Allgatherv under the same setting runs MPICH's allgatherv algorithms, chosen alike by the
// bytes in all: MPIR_Allgatherv_intra_recursive_doubling and _brucks on the blocks packed in a
// buffer of bytes (MPICH's temporary buffer), then unpacked at their displacements;
// MPIR_Allgatherv_intra_ring in the receive buffer, pipelined in chunks of 32 KiB when the largest
// block is longer (MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE).
#pragma once

#include <cstdint>

#include <mpi.h>

#include "format/collective_substitutes.hpp"
#include "interpose/substitute_wire.hpp"

namespace mstep {

// The algorithm `algo` stands for with blocks of `block_bytes` bytes on n ranks (pt2pt: MPICH's),
// and with `total` bytes in all (MPI_Allgatherv).
AllgatherAlgo allgather_runs(AllgatherAlgo algo, std::uint64_t block_bytes, int n);
AllgatherAlgo allgather_runs_total(AllgatherAlgo algo, std::uint64_t total, int n);

// One member's part (me of n on w's communicator, n > 1); recvcount > 0 and n blocks of it fit
// in an int of bytes; sendbuf may be MPI_IN_PLACE. The first failing call's code, MPI_SUCCESS
// otherwise.
int substitute_allgather(const Wire& w, AllgatherAlgo algo, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype, int me, int n);

// MPI_Allgatherv the same way: the counts' bytes in all are > 0 and fit in an int.
int substitute_allgatherv(const Wire& w, AllgatherAlgo algo, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                          void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype, int me,
                          int n);

}  // namespace mstep
