// The point-to-point calls of libmstep's substitute collectives (interpose/substitute.hpp), on the
// private duplicate of the caller's communicator, through the delay apparatus when it is on
// (Martin's method then applies to every message of these collectives as to the application's
// own). The carried send times use their own tag, so they never pair with those of the
// application's messages between the same ranks.
#pragma once

#include <cstdint>
#include <vector>

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

// `count` elements of `type` from `from` into `rcount` of `rtype` at `to`, on this rank: MPICH's
// local copy, as a message to itself outside the delay apparatus (the replay charges none).
inline int local_copy(const void* from, int count, MPI_Datatype type, void* to, int rcount, MPI_Datatype rtype) {
  if (count == 0 && rcount == 0) return MPI_SUCCESS;
  return PMPI_Sendrecv(from, count, type, 0, kSubstituteTag, to, rcount, rtype, 0, kSubstituteTag, MPI_COMM_SELF,
                       MPI_STATUS_IGNORE);
}

inline MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

// Block i of a buffer of blocks of `count` elements of `extent` bytes.
inline const char* block_at(const void* buf, MPI_Aint i, int count, MPI_Aint extent) {
  return static_cast<const char*>(buf) + i * count * extent;
}
inline char* block_at(void* buf, MPI_Aint i, int count, MPI_Aint extent) {
  return static_cast<char*>(buf) + i * count * extent;
}

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
  // MPICH's synchronous send (MPI_Gatherv's from 32 ranks).
  int ssend(const void* buf, int count, MPI_Datatype type, int dest) const {
    if (!comm) [[likely]]
      return PMPI_Ssend(buf, count, type, dest, kSubstituteTag, pc);
    g_delay.before_send(comm->world_rank(dest), kDelayTag, bytes_of(count, type));
    const int rc = PMPI_Ssend(buf, count, type, dest, kSubstituteTag, pc);
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
  // Nonblocking sends and receives completed together (MPICH's linear and scattered algorithms):
  // the apparatus's hold on each send is taken as it starts and waited out, like each receive's
  // added latency, once all have completed (complete()).
  int isend(const void* buf, int count, MPI_Datatype type, int dest, MPI_Request* request,
            std::vector<std::int64_t>& holds) const {
    if (!comm) [[likely]]
      return PMPI_Isend(buf, count, type, dest, kSubstituteTag, pc, request);
    g_delay.before_send(comm->world_rank(dest), kDelayTag, bytes_of(count, type));
    const int rc = PMPI_Isend(buf, count, type, dest, kSubstituteTag, pc, request);
    holds.push_back(g_delay.take_send_hold());
    return rc;
  }
  int irecv(void* buf, int count, MPI_Datatype type, int source, MPI_Request* request) const {
    return PMPI_Irecv(buf, count, type, source, kSubstituteTag, pc, request);
  }
  // After the requests of isend and irecv completed: each receive (from sources[i], bytes[i] long)
  // as after a blocking one, then the sends' holds.
  void complete(const std::vector<int>& sources, const std::vector<std::uint64_t>& bytes,
                const std::vector<std::int64_t>& holds) const {
    if (!comm) [[likely]]
      return;
    for (std::size_t i = 0; i < sources.size(); ++i)
      g_delay.after_recv(comm->world_rank(sources[i]), kDelayTag, bytes[i]);
    for (const std::int64_t hold : holds)
      if (hold != INT64_MIN) DelayApparatus::hold_until(hold);
  }
  int exchange(int dest, int source) const {
    char out = 0, in = 0;
    return sendrecv(&out, 0, &in, 0, MPI_BYTE, dest, source);
  }
};

}  // namespace mstep
