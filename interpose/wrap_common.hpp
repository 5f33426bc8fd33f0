// What every wrapper does around its PMPI call. A wrapper reads the clock right before and right
// after PMPI, and does its bookkeeping (call site, sizes, partners) outside that interval, so the
// recorded MPI time is MPI's own.
#pragma once

#include <mpi.h>

#include "interpose/clock.hpp"
#include "interpose/delay.hpp"
#include "interpose/recorder.hpp"

namespace mstep {

inline Event begin_event(Op op, void* ret) {
  Event e;
  e.op = op;
  e.callsite = g_recorder.callsite(ret);
  e.t_enter = now_ticks();
  return e;
}

// Times `call` (the PMPI call, returning its code) as one record of `op` from `caller`; `fill(e, rc)`
// completes the record afterwards. For calls off the hot path: the wrappers of point-to-point and
// collectives spell the same steps out.
template <class Call, class Fill>
int recorded(Op op, void* caller, Call call, Fill fill) {
  Event e = begin_event(op, caller);
  const int rc = call();
  e.t_exit = now_ticks();
  fill(e, rc);
  g_recorder.record(e);
  return rc;
}

// MPICH ABI: a builtin datatype's handle has kind 01 in its top two bits and its size in bits
// 8-15, so the common case costs no call into MPI (every nanosecond in a wrapper shows).
inline std::uint64_t type_size(MPI_Datatype type) {
  const auto h = static_cast<std::uint32_t>(type);
  if ((h >> 30) == 1u) return (h >> 8) & 0xffu;
  int size = 0;
  PMPI_Type_size(type, &size);
  return size > 0 ? static_cast<std::uint64_t>(size) : 0;
}

inline std::uint64_t bytes_of(long long count, MPI_Datatype type) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  return static_cast<std::uint64_t>(count) * type_size(type);
}

// Bytes a receive really got. MPICH keeps the byte count in the status itself (count_lo, and the
// high bits above the cancelled flag), as MPI_Get_count(status, MPI_BYTE) reads it.
// MPI_Test_cancelled without a call: MPICH keeps the flag in the low bit of count_hi_and_cancelled.
inline bool cancelled(const MPI_Status& st) { return (static_cast<std::uint32_t>(st.count_hi_and_cancelled) & 1u) != 0; }

inline std::uint64_t received_bytes(const MPI_Status& st) {
  const std::uint64_t lo = static_cast<std::uint32_t>(st.count_lo);
  const std::uint64_t hi = static_cast<std::uint32_t>(st.count_hi_and_cancelled) >> 1;
  return lo | (hi << 32);
}

inline std::int32_t posted_source(const CommInfo& c, int source) {
  return source == MPI_ANY_SOURCE ? kAnySource : c.world_rank(source);
}

// Fill a receive record from the status MPI returned.
inline void set_received(Event& e, const CommInfo& c, const MPI_Status& st) {
  e.peer = c.world_rank(st.MPI_SOURCE);  // MPI_PROC_NULL -> kNoPeer
  e.tag = st.MPI_TAG;
  e.recv_bytes = e.peer == kNoPeer ? 0 : received_bytes(st);
}

// What a probe found (Probe, Mprobe): the message's source and tag; for MPI_PROC_NULL, no peer
// and the probe's own tag.
inline void set_probed(Event& e, const CommInfo& c, int source, int tag, const MPI_Status& st) {
  e.comm = c.id;
  e.peer = source == MPI_PROC_NULL ? kNoPeer : c.world_rank(st.MPI_SOURCE);
  e.tag = source == MPI_PROC_NULL ? tag : st.MPI_TAG;
}

// A nonblocking probe (Iprobe, Improbe): what it found, or kIncomplete with its posted source and tag.
inline void set_iprobed(Event& e, const CommInfo& c, int source, int tag, bool found, const MPI_Status& st) {
  e.comm = c.id;
  e.tag = tag;
  e.peer = posted_source(c, source);
  if (!found) {
    e.flags = kIncomplete;
  } else if (source != MPI_PROC_NULL) {
    e.peer = c.world_rank(st.MPI_SOURCE);
    e.tag = st.MPI_TAG;
  }
}

inline int comm_rank(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}

// Sum of counts[i] over the members other than `self`, times the type size.
inline std::uint64_t bytes_to_others(const int* counts, int n, int self, MPI_Datatype type) {
  long long total = 0;
  for (int i = 0; i < n; ++i)
    if (i != self) total += counts[i];
  return bytes_of(total, type);
}

// The delay apparatus (interpose/delay.hpp) around a point-to-point message, in world ranks.
// Out of line: the wrappers pay one predictable branch when no delay is set.
[[gnu::noinline]] inline void delay_send(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type) {
  if (dest == MPI_PROC_NULL) return;
  g_delay.before_send(g_recorder.comm(comm).world_rank(dest), tag, bytes_of(count, type));
}
[[gnu::noinline]] inline void delay_recv(MPI_Comm comm, const MPI_Status& st) {
  if (st.MPI_SOURCE == MPI_PROC_NULL || st.MPI_SOURCE < 0) return;
  g_delay.after_recv(g_recorder.comm(comm).world_rank(st.MPI_SOURCE), st.MPI_TAG, received_bytes(st));
}
// A Sendrecv's receive (if it had a source) and its send to `dest` (if not MPI_PROC_NULL).
[[gnu::noinline]] inline void delay_sendrecv(MPI_Comm comm, int dest, const MPI_Status& st) {
  const bool received = st.MPI_SOURCE != MPI_PROC_NULL && st.MPI_SOURCE >= 0;
  g_delay.after_sendrecv(received ? g_recorder.comm(comm).world_rank(st.MPI_SOURCE) : -1, st.MPI_TAG,
                         received_bytes(st), dest != MPI_PROC_NULL);
}
[[gnu::noinline]] inline void delay_recv(const CommInfo& c, const MPI_Status& st) {
  if (st.MPI_SOURCE == MPI_PROC_NULL || st.MPI_SOURCE < 0) return;
  g_delay.after_recv(c.world_rank(st.MPI_SOURCE), st.MPI_TAG, received_bytes(st));
}

}  // namespace mstep

#define MSTEP_CALLER __builtin_return_address(0)
