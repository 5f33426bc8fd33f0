// Point-to-point wrappers. Each returns exactly what PMPI returns and touches nothing the caller
// passed except through PMPI; where the caller ignores the status, mstep reads its own copy.
#include "interpose/wrap_common.hpp"

using namespace mstep;

// The four blocking sends share one signature.
#define MSTEP_BLOCKING_SEND(NAME)                                                                \
  extern "C" int MPI_##NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag,  \
                            MPI_Comm comm) {                                                   \
    if (!g_recorder.active()) return PMPI_##NAME(buf, count, type, dest, tag, comm);           \
    Event e = begin_event(Op::NAME, MSTEP_CALLER);                                             \
    const bool delayed = g_delay.on();                                                         \
    if (delayed) [[unlikely]] delay_send(comm, dest, tag, count, type);                        \
    const int rc = PMPI_##NAME(buf, count, type, dest, tag, comm);                             \
    if (delayed && dest != MPI_PROC_NULL) [[unlikely]] g_delay.after_blocking_send();          \
    e.t_exit = now_ticks();                                                                    \
    const CommInfo& c = g_recorder.comm(comm);                                                 \
    e.peer = c.world_rank(dest);                                                               \
    e.tag = tag;                                                                               \
    e.comm = c.id;                                                                             \
    e.send_bytes = e.peer == kNoPeer ? 0 : bytes_of(count, type);                              \
    g_recorder.record(e);                                                                   \
    return rc;                                                                                 \
  }

MSTEP_BLOCKING_SEND(Send)
MSTEP_BLOCKING_SEND(Ssend)
MSTEP_BLOCKING_SEND(Bsend)
MSTEP_BLOCKING_SEND(Rsend)

// And the four nonblocking ones.
#define MSTEP_NONBLOCKING_SEND(NAME)                                                           \
  extern "C" int MPI_##NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag,  \
                            MPI_Comm comm, MPI_Request* request) {                             \
    if (!g_recorder.active()) return PMPI_##NAME(buf, count, type, dest, tag, comm, request);  \
    Event e = begin_event(Op::NAME, MSTEP_CALLER);                                             \
    if (g_delay.on()) [[unlikely]] delay_send(comm, dest, tag, count, type);                   \
    const int rc = PMPI_##NAME(buf, count, type, dest, tag, comm, request);                    \
    e.t_exit = now_ticks();                                                                    \
    const CommInfo& c = g_recorder.comm(comm);                                                 \
    e.peer = c.world_rank(dest);                                                               \
    e.tag = tag;                                                                               \
    e.comm = c.id;                                                                             \
    e.send_bytes = e.peer == kNoPeer ? 0 : bytes_of(count, type);                              \
    if (rc == MPI_SUCCESS)                                                                     \
      e.request = g_recorder.add_request(*request, false, c, nullptr, false,                   \
                                         g_delay.on() ? g_delay.take_send_hold() : INT64_MIN); \
    g_recorder.record(e);                                                                   \
    return rc;                                                                                 \
  }

MSTEP_NONBLOCKING_SEND(Isend)
MSTEP_NONBLOCKING_SEND(Issend)
MSTEP_NONBLOCKING_SEND(Ibsend)
MSTEP_NONBLOCKING_SEND(Irsend)

extern "C" int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag,
                        MPI_Comm comm, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  Event e = begin_event(Op::Recv, MSTEP_CALLER);
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
  if (g_delay.on() && rc == MPI_SUCCESS) [[unlikely]] delay_recv(comm, *st);
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  e.comm = c.id;
  if (source == MPI_PROC_NULL) {
    e.tag = tag;
  } else {
    set_received(e, c, *st);
  }
  g_recorder.record(e);
  return rc;
}

extern "C" int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Irecv(buf, count, type, source, tag, comm, request);
  Event e = begin_event(Op::Irecv, MSTEP_CALLER);
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  e.peer = posted_source(c, source);
  e.tag = tag;
  e.comm = c.id;
  if (rc == MPI_SUCCESS) e.request = g_recorder.add_request(*request, true, c);
  g_recorder.record(e);
  return rc;
}

namespace {

// Sendrecv writes two records: its send, then (as a continuation) its receive.
void record_sendrecv(Event& e, MPI_Comm comm, int dest, int sendtag, std::uint64_t send_bytes, int source,
                     int recvtag, const MPI_Status& st) {
  const CommInfo& c = g_recorder.comm(comm);
  e.comm = c.id;
  e.peer = c.world_rank(dest);
  e.tag = sendtag;
  e.send_bytes = e.peer == kNoPeer ? 0 : send_bytes;
  g_recorder.record(e);
  Event r = e;
  r.flags = kContinuation | kRecvHalf;
  r.send_bytes = 0;
  r.tag = recvtag;
  r.peer = kNoPeer;
  if (source != MPI_PROC_NULL) set_received(r, c, st);
  g_recorder.record(r);
}

}  // namespace

extern "C" int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                            int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                            int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (!g_recorder.active())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                         recvtype, source, recvtag, comm, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  Event e = begin_event(Op::Sendrecv, MSTEP_CALLER);
  if (g_delay.on()) [[unlikely]] delay_send(comm, dest, sendtag, sendcount, sendtype);
  const int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, st);
  if (g_delay.on() && rc == MPI_SUCCESS) [[unlikely]] delay_sendrecv(comm, dest, *st);
  e.t_exit = now_ticks();
  record_sendrecv(e, comm, dest, sendtag, bytes_of(sendcount, sendtype), source, recvtag, *st);
  return rc;
}

extern "C" int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest,
                                    int sendtag, int source, int recvtag, MPI_Comm comm,
                                    MPI_Status* status) {
  if (!g_recorder.active())
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  Event e = begin_event(Op::Sendrecv_replace, MSTEP_CALLER);
  if (g_delay.on()) [[unlikely]] delay_send(comm, dest, sendtag, count, type);
  const int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, st);
  if (g_delay.on() && rc == MPI_SUCCESS) [[unlikely]] delay_sendrecv(comm, dest, *st);
  e.t_exit = now_ticks();
  record_sendrecv(e, comm, dest, sendtag, bytes_of(count, type), source, recvtag, *st);
  return rc;
}

extern "C" int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Probe(source, tag, comm, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  Event e = begin_event(Op::Probe, MSTEP_CALLER);
  const int rc = PMPI_Probe(source, tag, comm, st);
  e.t_exit = now_ticks();
  set_probed(e, g_recorder.comm(comm), source, tag, *st);
  g_recorder.record(e);
  return rc;
}

extern "C" int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Iprobe(source, tag, comm, flag, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  Event e = begin_event(Op::Iprobe, MSTEP_CALLER);
  const int rc = PMPI_Iprobe(source, tag, comm, flag, st);
  e.t_exit = now_ticks();
  set_iprobed(e, g_recorder.comm(comm), source, tag, *flag, *st);
  g_recorder.record(e);
  return rc;
}
