// The point-to-point calls of libmstep's substitute collectives (interpose/substitute.hpp), on the
// private duplicate of the caller's communicator, through the delay apparatus when it is on
// (Martin's method then applies to every message of these collectives as to the application's
// own). The carried send times use their own tag, so they never pair with those of the
// application's messages between the same ranks.
#pragma once

#include <mpi.h>

#include "interpose/delay.hpp"
#include "interpose/wrap_common.hpp"

namespace mstep {

inline constexpr int kSubstituteTag = 0;  // the private communicator carries nothing else
inline constexpr int kDelayTag = 32767;   // the largest tag MPI guarantees

// The first failing return code of a sequence of calls.
struct Rc {
  int rc = MPI_SUCCESS;
  void operator()(int r) {
    if (rc == MPI_SUCCESS) rc = r;
  }
};

struct Wire {
  MPI_Comm pc = MPI_COMM_NULL;
  const CommInfo* comm = nullptr;  // the application's communicator; null: no delay

  int send(const void* buf, int count, MPI_Datatype type, int dest) const {
    if (!comm) [[likely]]
      return PMPI_Send(buf, count, type, dest, kSubstituteTag, pc);
    g_delay.before_send(comm->world_rank(dest), kDelayTag, bytes_of(count, type));
    const int rc = PMPI_Send(buf, count, type, dest, kSubstituteTag, pc);
    g_delay.after_blocking_send();
    return rc;
  }
  int recv(void* buf, int count, MPI_Datatype type, int source) const {
    MPI_Status st;
    const int rc = PMPI_Recv(buf, count, type, source, kSubstituteTag, pc, &st);
    if (comm && rc == MPI_SUCCESS) [[unlikely]]
      g_delay.after_recv(comm->world_rank(st.MPI_SOURCE), kDelayTag, bytes_of(count, type));
    return rc;
  }
  // `scount` elements of `sbuf` to `dest` while `rcount` into `rbuf` from `source` (one type).
  int sendrecv(const void* sbuf, int scount, void* rbuf, int rcount, MPI_Datatype type, int dest, int source) const {
    return sendrecv(sbuf, scount, type, dest, rbuf, rcount, type, source);
  }
  // The same with a type each way (MPI_Alltoall's sendtype and recvtype).
  int sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, void* rbuf, int rcount, MPI_Datatype rtype,
               int source) const {
    MPI_Status st;
    if (comm) [[unlikely]]
      g_delay.before_send(comm->world_rank(dest), kDelayTag, bytes_of(scount, stype));
    const int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, kSubstituteTag, rbuf, rcount, rtype, source, kSubstituteTag,
                                 pc, &st);
    if (comm && rc == MPI_SUCCESS) [[unlikely]]
      g_delay.after_sendrecv(comm->world_rank(st.MPI_SOURCE), kDelayTag, bytes_of(rcount, rtype), true);
    return rc;
  }
  int exchange(int dest, int source) const {
    char out = 0, in = 0;
    return sendrecv(&out, 0, &in, 0, MPI_BYTE, dest, source);
  }
};

}  // namespace mstep
