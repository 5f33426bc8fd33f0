// Persistent requests and matched probes. A persistent request is remembered from its *_init to
// its MPI_Request_free; each MPI_Start/Startall of it records the nonblocking send or receive it
// starts and registers a request id, so that the Wait/Test completing it is tied to it exactly as
// for MPI_Isend/MPI_Irecv. Each wrapper returns exactly what PMPI returns.
#include <cstdint>
#include <optional>
#include <vector>

#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

// The record of an *_init call: the request's partner, tag and communicator; nothing moves yet.
void record_init(Event& e, MPI_Comm comm, int partner, int tag, std::uint64_t bytes, bool recv, int rc,
                 MPI_Request* request, std::uint8_t mode_flags = 0) {
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  e.comm = c.id;
  e.peer = recv ? posted_source(c, partner) : c.world_rank(partner);
  e.tag = tag;
  g_recorder.record(e);
  if (rc == MPI_SUCCESS)
    g_recorder.add_persistent(*request, PersistentRequest{recv, e.peer, tag, e.peer == kNoPeer ? 0 : bytes, &c, mode_flags});
}

// One record per request started: a send with its destination and size, or a receive (kRecvHalf)
// with its posted source; a request mstep did not see created (a persistent collective, say)
// records no partner. `hold`: the delay apparatus's hold on a send's completion (take_send_hold).
void record_start(Event e, MPI_Request handle, const std::optional<PersistentRequest>& p, bool continuation,
                  std::int64_t hold = INT64_MIN) {
  if (continuation) e.flags |= kContinuation;
  if (p) {
    if (p->collective) {  // its own record, as the nonblocking collective it starts
      Event c = p->started;
      c.t_enter = e.t_enter, c.t_exit = e.t_exit, c.callsite = e.callsite;
      c.request = g_recorder.add_request(handle, false, *p->comm, nullptr, true);
      g_recorder.record(c);
      return;
    }
    e.comm = p->comm->id;
    e.peer = p->peer;
    e.tag = p->tag;
    if (p->recv) e.flags |= kRecvHalf;
    else e.send_bytes = p->bytes, e.flags |= p->mode_flags;
    e.request = g_recorder.add_request(handle, p->recv, *p->comm, nullptr, false, p->recv ? INT64_MIN : hold);
  }
  g_recorder.record(e);
}

// The delay apparatus's start of a persistent send (before its PMPI_Start): its hold, if it is
// rendezvous-sized, for the Wait/Test that completes it, as for MPI_Isend.
std::int64_t delay_start(const std::optional<PersistentRequest>& p) {
  if (!p || p->recv || p->collective || p->peer < 0) return INT64_MIN;
  g_delay.before_send(p->peer, p->tag, p->bytes);
  return g_delay.take_send_hold();
}

thread_local std::vector<std::int64_t> t_holds;  // MPI_Startall's, a request each

}  // namespace

// MODE: the flags each Start of the request carries (how the models treat its send).
#define MSTEP_SEND_INIT(NAME, MODE)                                                                    \
  extern "C" int MPI_##NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag,          \
                            MPI_Comm comm, MPI_Request* request) {                                     \
    if (!g_recorder.active()) return PMPI_##NAME(buf, count, type, dest, tag, comm, request);          \
    Event e = begin_event(Op::NAME, MSTEP_CALLER);                                                     \
    const int rc = PMPI_##NAME(buf, count, type, dest, tag, comm, request);                            \
    record_init(e, comm, dest, tag, bytes_of(count, type), false, rc, request, MODE);                  \
    return rc;                                                                                         \
  }

MSTEP_SEND_INIT(Send_init, 0)
MSTEP_SEND_INIT(Ssend_init, kSyncMode)
MSTEP_SEND_INIT(Bsend_init, kBufferedMode)
MSTEP_SEND_INIT(Rsend_init, 0)

extern "C" int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  Event e = begin_event(Op::Recv_init, MSTEP_CALLER);
  const int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  record_init(e, comm, source, tag, 0, true, rc, request);
  return rc;
}

extern "C" int MPI_Start(MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Start(request);
  Event e = begin_event(Op::Start, MSTEP_CALLER);
  std::int64_t hold = INT64_MIN;
  if (g_delay.on()) [[unlikely]]
    hold = delay_start(g_recorder.persistent(*request));
  const int rc = PMPI_Start(request);
  e.t_exit = now_ticks();
  if (rc == MPI_SUCCESS) record_start(e, *request, g_recorder.persistent(*request), false, hold);
  else g_recorder.record(e);
  return rc;
}

extern "C" int MPI_Startall(int count, MPI_Request requests[]) {
  if (!g_recorder.active()) return PMPI_Startall(count, requests);
  Event e = begin_event(Op::Startall, MSTEP_CALLER);
  const bool delayed = g_delay.on() && count > 0;
  if (delayed) [[unlikely]] {
    t_holds.assign(static_cast<std::size_t>(count), INT64_MIN);
    for (int i = 0; i < count; ++i) t_holds[static_cast<std::size_t>(i)] = delay_start(g_recorder.persistent(requests[i]));
  }
  const int rc = PMPI_Startall(count, requests);
  e.t_exit = now_ticks();
  if (rc != MPI_SUCCESS || count <= 0) {
    g_recorder.record(e);
    return rc;
  }
  // The point-to-point requests first (one call: the first record, then continuations), then
  // each collective one as a record of its own (a collective is never a continuation). Only the
  // first record carries the call's duration; the later collectives start at its exit and take
  // no time, so that the call's time is counted once.
  // One lookup a request on the point-to-point path; the collectives' second pass only if any.
  bool first = true, collectives = false;
  for (int i = 0; i < count; ++i) {
    const auto p = g_recorder.persistent(requests[i]);
    if (p && p->collective) {
      collectives = true;
      continue;
    }
    record_start(e, requests[i], p, !first, delayed ? t_holds[static_cast<std::size_t>(i)] : INT64_MIN);
    first = false;
  }
  for (int i = 0; collectives && i < count; ++i) {
    if (const auto p = g_recorder.persistent(requests[i]); p && p->collective) {
      if (!first) e.t_enter = e.t_exit;
      record_start(e, requests[i], p, false);
      first = false;
    }
  }
  return rc;
}

extern "C" int MPI_Request_free(MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Request_free(request);
  const MPI_Request handle = *request;
  Event e = begin_event(Op::Request_free, MSTEP_CALLER);
  const int rc = PMPI_Request_free(request);
  e.t_exit = now_ticks();
  if (rc == MPI_SUCCESS) g_recorder.free_request(handle);
  g_recorder.record(e);
  return rc;
}

extern "C" int MPI_Cancel(MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Cancel(request);
  Event e = begin_event(Op::Cancel, MSTEP_CALLER);
  const int rc = PMPI_Cancel(request);
  e.t_exit = now_ticks();
  g_recorder.record(e);
  return rc;
}

// ---- Matched probe -------------------------------------------------------------------------

extern "C" int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Mprobe(source, tag, comm, message, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  Event e = begin_event(Op::Mprobe, MSTEP_CALLER);
  const int rc = PMPI_Mprobe(source, tag, comm, message, st);
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  set_probed(e, c, source, tag, *st);
  if (rc == MPI_SUCCESS) g_recorder.add_message(*message, c);
  g_recorder.record(e);
  return rc;
}

extern "C" int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                           MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Improbe(source, tag, comm, flag, message, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  Event e = begin_event(Op::Improbe, MSTEP_CALLER);
  const int rc = PMPI_Improbe(source, tag, comm, flag, message, st);
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  const bool found = rc == MPI_SUCCESS && *flag;
  set_iprobed(e, c, source, tag, found, *st);
  if (found) g_recorder.add_message(*message, c);
  g_recorder.record(e);
  return rc;
}

extern "C" int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Mrecv(buf, count, type, message, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  const MPI_Message handle = *message;
  Event e = begin_event(Op::Mrecv, MSTEP_CALLER);
  const int rc = PMPI_Mrecv(buf, count, type, message, st);
  e.t_exit = now_ticks();
  const CommInfo* c = g_recorder.take_message(handle);
  if (c) {
    e.comm = c->id;
    if (rc == MPI_SUCCESS) set_received(e, *c, *st);
  }
  g_recorder.record(e);
  return rc;
}

extern "C" int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Imrecv(buf, count, type, message, request);
  const MPI_Message handle = *message;
  Event e = begin_event(Op::Imrecv, MSTEP_CALLER);
  const int rc = PMPI_Imrecv(buf, count, type, message, request);
  e.t_exit = now_ticks();
  if (const CommInfo* c = g_recorder.take_message(handle)) {
    e.comm = c->id;
    e.peer = kAnySource;  // the source is the probe's; the completing Wait/Test records it
    if (rc == MPI_SUCCESS) e.request = g_recorder.add_request(*request, true, *c);
  }
  g_recorder.record(e);
  return rc;
}
