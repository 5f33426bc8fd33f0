// libmstep's MPI_Alltoall over point-to-point messages (MSTEP_ALLTOALL, interpose/substitute.hpp):
// MPICH 4.0.2's three algorithms, message for message, so that the replay's programs of them
// (model/replay/replay_collectives.cpp) are what ran, and the delay apparatus reaches every message.
//   bruck (MPIR_Alltoall_intra_brucks): the blocks rotated by the rank, then in round k every block
//     whose index has bit k packed and sent to rank + 2^k, the same received from rank - 2^k, then
//     rotated back and reversed;
//   scattered (MPIR_Alltoall_intra_scattered): 32 receives and 32 sends posted at a time (the
//     throttle's default), receives from rank + i, sends to rank - i, then waited for;
//   pairwise (MPIR_Alltoall_intra_pairwise): the own block copied, then n - 1 Sendrecv, partner
//     rank XOR i on 2^k ranks, else sending to rank + i while receiving from rank - i.
// pt2pt is MPICH's choice: Bruck from 8 ranks for blocks of 256 bytes or less, scattered up to
// 32 KiB, pairwise beyond (model/replay/replay_coll_choice.cpp makes the same one).
// MPI_Alltoallv, under any MSTEP_ALLTOALL but mpi: MPICH's one algorithm for it, scattered
// (MPIR_Alltoallv_intra_scattered: as above, empty blocks neither sent nor received).
#pragma once

#include <cstdint>

#include <mpi.h>

#include "format/collective_substitutes.hpp"
#include "interpose/substitute_wire.hpp"

namespace mstep {

// The algorithm `algo` stands for with blocks of `block_bytes` bytes on n ranks (pt2pt: MPICH's).
AlltoallAlgo alltoall_runs(AlltoallAlgo algo, std::uint64_t block_bytes, int n);

// One member's part (me of n on w's communicator); sendcount > 0, n > 1, sendbuf not
// MPI_IN_PLACE. The first failing call's code, MPI_SUCCESS otherwise.
int substitute_alltoall(const Wire& w, AlltoallAlgo algo, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int me, int n);

// The same for MPI_Alltoallv (scattered); n > 1, sendbuf not MPI_IN_PLACE.
int substitute_alltoallv(const Wire& w, const void* sendbuf, const int* sendcounts, const int* sdispls,
                         MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                         MPI_Datatype recvtype, int me, int n);

}  // namespace mstep
