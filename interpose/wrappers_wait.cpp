// Wait and Test wrappers: one record per request completed (the first carries the call, the rest
// kContinuation), so that every nonblocking receive's source, tag and size reach the trace.
#include <vector>

#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

// Per-thread scratch: the handles before MPI nulls them, and statuses where the caller ignores them.
thread_local std::vector<MPI_Request> t_handles;
thread_local std::vector<MPI_Status> t_statuses;

// Records of one call held back while the delay apparatus waits for its receives, so that every
// record of the call carries the same exit time (the one after the last wait).
thread_local std::vector<Event> t_delayed;

class Completions {
 public:
  explicit Completions(const Event& call) : call_(call), delayed_(g_delay.on()) {
    if (delayed_) [[unlikely]] t_delayed.clear();
  }

  // Request `handle` (as it was before the call) completed with status `st`.
  void add(MPI_Request handle, const MPI_Status* st) {
    const auto info = g_recorder.take_request(handle);
    if (!info) return;  // null or foreign request (an inactive persistent one): nothing to tie it to
    // MPI_Comm_idup's handle is valid from now on: uses of it name the communicator its call
    // registered.
    if (info->created) g_recorder.bind_comm(*info->created, *info->comm);
    Event e = call_;
    e.request = info->id;
    if (any_) e.flags |= kContinuation;
    if (info->collective) e.flags |= kCollDone;
    // A cancelled receive received nothing (its status's source and tag are undefined).
    if (info->recv && !cancelled(*st)) {
      e.flags |= kRecvHalf;
      e.comm = info->comm->id;
      set_received(e, *info->comm, *st);
    }
    any_ = true;
    if (delayed_) [[unlikely]] {
      if (info->recv && !cancelled(*st)) delay_recv(*info->comm, *st);
      if (!info->recv && info->hold_until_ns != INT64_MIN) DelayApparatus::hold_until(info->hold_until_ns);
      t_delayed.push_back(e);
      return;
    }
    g_recorder.record(e);
  }
  // A call that completed nothing mstep knows of still took MPI time.
  void finish(bool incomplete) {
    if (delayed_ && any_) [[unlikely]] {
      const std::uint64_t t_exit = now_ticks();
      for (Event& e : t_delayed) {
        e.t_exit = t_exit;
        g_recorder.record(e);
      }
      return;
    }
    if (any_) return;
    Event e = call_;
    if (incomplete) e.flags |= kIncomplete;
    g_recorder.record(e);
  }

 private:
  Event call_;
  bool delayed_;
  bool any_ = false;
};

MPI_Request* save_handles(int count, const MPI_Request* requests) {
  t_handles.assign(requests, requests + (count > 0 ? count : 0));
  return t_handles.data();
}

MPI_Status* statuses_for(int count, MPI_Status* statuses) {
  if (statuses != MPI_STATUSES_IGNORE) return statuses;
  t_statuses.resize(static_cast<std::size_t>(count > 0 ? count : 1));
  return t_statuses.data();
}

}  // namespace

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Wait(request, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  const MPI_Request handle = *request;
  Event e = begin_event(Op::Wait, MSTEP_CALLER);
  const int rc = PMPI_Wait(request, st);
  e.t_exit = now_ticks();
  Completions done(e);
  done.add(handle, st);
  done.finish(false);
  return rc;
}

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Test(request, flag, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  const MPI_Request handle = *request;
  Event e = begin_event(Op::Test, MSTEP_CALLER);
  const int rc = PMPI_Test(request, flag, st);
  e.t_exit = now_ticks();
  Completions done(e);
  if (*flag) done.add(handle, st);
  done.finish(!*flag);
  return rc;
}

extern "C" int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!g_recorder.active()) return PMPI_Waitall(count, requests, statuses);
  const MPI_Request* handles = save_handles(count, requests);
  MPI_Status* st = statuses_for(count, statuses);
  Event e = begin_event(Op::Waitall, MSTEP_CALLER);
  const int rc = PMPI_Waitall(count, requests, st);
  e.t_exit = now_ticks();
  Completions done(e);
  for (int i = 0; i < count; ++i) done.add(handles[i], &st[i]);
  done.finish(false);
  return rc;
}

extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!g_recorder.active()) return PMPI_Testall(count, requests, flag, statuses);
  const MPI_Request* handles = save_handles(count, requests);
  MPI_Status* st = statuses_for(count, statuses);
  Event e = begin_event(Op::Testall, MSTEP_CALLER);
  const int rc = PMPI_Testall(count, requests, flag, st);
  e.t_exit = now_ticks();
  Completions done(e);
  if (*flag)
    for (int i = 0; i < count; ++i) done.add(handles[i], &st[i]);
  done.finish(!*flag);
  return rc;
}

extern "C" int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Waitany(count, requests, index, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  const MPI_Request* handles = save_handles(count, requests);
  Event e = begin_event(Op::Waitany, MSTEP_CALLER);
  const int rc = PMPI_Waitany(count, requests, index, st);
  e.t_exit = now_ticks();
  Completions done(e);
  if (*index != MPI_UNDEFINED && *index >= 0 && *index < count) done.add(handles[*index], st);
  done.finish(false);
  return rc;
}

extern "C" int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                           MPI_Status* status) {
  if (!g_recorder.active()) return PMPI_Testany(count, requests, index, flag, status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  const MPI_Request* handles = save_handles(count, requests);
  Event e = begin_event(Op::Testany, MSTEP_CALLER);
  const int rc = PMPI_Testany(count, requests, index, flag, st);
  e.t_exit = now_ticks();
  Completions done(e);
  if (*flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
    done.add(handles[*index], st);
  done.finish(!*flag);
  return rc;
}

extern "C" int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  if (!g_recorder.active()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  const MPI_Request* handles = save_handles(incount, requests);
  MPI_Status* st = statuses_for(incount, statuses);
  Event e = begin_event(Op::Waitsome, MSTEP_CALLER);
  const int rc = PMPI_Waitsome(incount, requests, outcount, indices, st);
  e.t_exit = now_ticks();
  Completions done(e);
  if (*outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      if (indices[k] >= 0 && indices[k] < incount) done.add(handles[indices[k]], &st[k]);
  done.finish(false);
  return rc;
}

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  if (!g_recorder.active()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  const MPI_Request* handles = save_handles(incount, requests);
  MPI_Status* st = statuses_for(incount, statuses);
  Event e = begin_event(Op::Testsome, MSTEP_CALLER);
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, st);
  e.t_exit = now_ticks();
  Completions done(e);
  const bool some = *outcount != MPI_UNDEFINED && *outcount > 0;
  if (some)
    for (int k = 0; k < *outcount; ++k)
      if (indices[k] >= 0 && indices[k] < incount) done.add(handles[indices[k]], &st[k]);
  done.finish(!some);
  return rc;
}
