// One-sided communication (MPI-3 RMA): windows, puts, gets, accumulates and their synchronisation.
// mstep does not model them: each call is one record of role Other, with its time, the window's
// communicator, the target as its peer (a world rank) and the bytes of its origin buffer, and
// every model keeps it at its recorded duration (counted as the step's computation by BSPWB and
// MPM). Without these wrappers their time counted as computation and nothing said so. Windows are
// known from their creation (a table from handle to the communicator's members); a call on a
// window mstep did not see created has no communicator and no peer. Each wrapper returns exactly
// what PMPI returns; the delay apparatus does not delay them.
#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

// The window's communicator, and `target` (a rank of it; MPI_PROC_NULL: none) as the peer.
void on_window(Event& e, MPI_Win win, int target = MPI_PROC_NULL) {
  if (const CommInfo* c = g_recorder.window(win)) {
    e.comm = c->id;
    e.peer = c->world_rank(target);
  }
}

// A window MPI has just created over `comm`.
int created(Op op, void* caller, MPI_Comm comm, MPI_Win* win, auto call) {
  return recorded(op, caller, call, [&](Event& e, int rc) {
    const CommInfo& c = g_recorder.comm(comm);
    e.comm = c.id;
    if (rc == MPI_SUCCESS) g_recorder.add_window(*win, c);
  });
}

// A call on the window alone, or on one target of it.
int on(Op op, void* caller, MPI_Win win, int target, auto call) {
  return recorded(op, caller, call, [&](Event& e, int) { on_window(e, win, target); });
}

// A transfer to or from `target`: `sent` bytes leave this rank's origin buffer, `got` arrive in it.
int moved(Op op, void* caller, MPI_Win win, int target, std::uint64_t sent, std::uint64_t got, auto call) {
  if (target == MPI_PROC_NULL) sent = got = 0;
  return recorded(op, caller, call, [&](Event& e, int) {
    on_window(e, win, target);
    e.send_bytes = sent;
    e.recv_bytes = got;
  });
}

}  // namespace

extern "C" int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  if (!g_recorder.active()) return PMPI_Win_create(base, size, disp_unit, info, comm, win);
  return created(Op::Win_create, MSTEP_CALLER, comm, win,
                 [&] { return PMPI_Win_create(base, size, disp_unit, info, comm, win); });
}

extern "C" int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  if (!g_recorder.active()) return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  return created(Op::Win_allocate, MSTEP_CALLER, comm, win,
                 [&] { return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win); });
}

extern "C" int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                                       MPI_Win* win) {
  if (!g_recorder.active()) return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  return created(Op::Win_allocate_shared, MSTEP_CALLER, comm, win,
                 [&] { return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win); });
}

extern "C" int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  if (!g_recorder.active()) return PMPI_Win_create_dynamic(info, comm, win);
  return created(Op::Win_create_dynamic, MSTEP_CALLER, comm, win, [&] { return PMPI_Win_create_dynamic(info, comm, win); });
}

extern "C" int MPI_Win_free(MPI_Win* win) {
  if (!g_recorder.active()) return PMPI_Win_free(win);
  const MPI_Win handle = *win;
  return recorded(Op::Win_free, MSTEP_CALLER, [&] { return PMPI_Win_free(win); }, [&](Event& e, int rc) {
    on_window(e, handle);
    if (rc == MPI_SUCCESS) g_recorder.forget_window(handle);
  });
}

extern "C" int MPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                       int target_count, MPI_Datatype target_type, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Put(origin, origin_count, origin_type, target, disp, target_count, target_type, win);
  return moved(Op::Put, MSTEP_CALLER, win, target, bytes_of(origin_count, origin_type), 0,
               [&] { return PMPI_Put(origin, origin_count, origin_type, target, disp, target_count, target_type, win); });
}

extern "C" int MPI_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                       int target_count, MPI_Datatype target_type, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Get(origin, origin_count, origin_type, target, disp, target_count, target_type, win);
  return moved(Op::Get, MSTEP_CALLER, win, target, 0, bytes_of(origin_count, origin_type),
               [&] { return PMPI_Get(origin, origin_count, origin_type, target, disp, target_count, target_type, win); });
}

extern "C" int MPI_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                              int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  if (!g_recorder.active())
    return PMPI_Accumulate(origin, origin_count, origin_type, target, disp, target_count, target_type, op, win);
  return moved(Op::Accumulate, MSTEP_CALLER, win, target, bytes_of(origin_count, origin_type), 0, [&] {
    return PMPI_Accumulate(origin, origin_count, origin_type, target, disp, target_count, target_type, op, win);
  });
}

extern "C" int MPI_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                                  int result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                                  int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  if (!g_recorder.active())
    return PMPI_Get_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target, disp,
                               target_count, target_type, op, win);
  return moved(Op::Get_accumulate, MSTEP_CALLER, win, target, bytes_of(origin_count, origin_type),
               bytes_of(result_count, result_type), [&] {
                 return PMPI_Get_accumulate(origin, origin_count, origin_type, result, result_count, result_type,
                                            target, disp, target_count, target_type, op, win);
               });
}

extern "C" int MPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype type, int target, MPI_Aint disp,
                                MPI_Op op, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Fetch_and_op(origin, result, type, target, disp, op, win);
  return moved(Op::Fetch_and_op, MSTEP_CALLER, win, target, type_size(type), type_size(type),
               [&] { return PMPI_Fetch_and_op(origin, result, type, target, disp, op, win); });
}

extern "C" int MPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype type,
                                    int target, MPI_Aint disp, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Compare_and_swap(origin, compare, result, type, target, disp, win);
  return moved(Op::Compare_and_swap, MSTEP_CALLER, win, target, type_size(type), type_size(type),
               [&] { return PMPI_Compare_and_swap(origin, compare, result, type, target, disp, win); });
}

extern "C" int MPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                        int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Rput(origin, origin_count, origin_type, target, disp, target_count, target_type, win, request);
  return moved(Op::Rput, MSTEP_CALLER, win, target, bytes_of(origin_count, origin_type), 0, [&] {
    return PMPI_Rput(origin, origin_count, origin_type, target, disp, target_count, target_type, win, request);
  });
}

extern "C" int MPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                        int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Rget(origin, origin_count, origin_type, target, disp, target_count, target_type, win, request);
  return moved(Op::Rget, MSTEP_CALLER, win, target, 0, bytes_of(origin_count, origin_type), [&] {
    return PMPI_Rget(origin, origin_count, origin_type, target, disp, target_count, target_type, win, request);
  });
}

extern "C" int MPI_Raccumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target,
                               MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                               MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Raccumulate(origin, origin_count, origin_type, target, disp, target_count, target_type, op, win, request);
  return moved(Op::Raccumulate, MSTEP_CALLER, win, target, bytes_of(origin_count, origin_type), 0, [&] {
    return PMPI_Raccumulate(origin, origin_count, origin_type, target, disp, target_count, target_type, op, win, request);
  });
}

extern "C" int MPI_Rget_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                                   int result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                                   int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                                   MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Rget_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target, disp,
                                target_count, target_type, op, win, request);
  return moved(Op::Rget_accumulate, MSTEP_CALLER, win, target, bytes_of(origin_count, origin_type),
               bytes_of(result_count, result_type), [&] {
                 return PMPI_Rget_accumulate(origin, origin_count, origin_type, result, result_count, result_type,
                                             target, disp, target_count, target_type, op, win, request);
               });
}

extern "C" int MPI_Win_fence(int assert_, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_fence(assert_, win);
  return on(Op::Win_fence, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_fence(assert_, win); });
}

extern "C" int MPI_Win_lock(int lock_type, int target, int assert_, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_lock(lock_type, target, assert_, win);
  return on(Op::Win_lock, MSTEP_CALLER, win, target, [&] { return PMPI_Win_lock(lock_type, target, assert_, win); });
}

extern "C" int MPI_Win_unlock(int target, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_unlock(target, win);
  return on(Op::Win_unlock, MSTEP_CALLER, win, target, [&] { return PMPI_Win_unlock(target, win); });
}

extern "C" int MPI_Win_lock_all(int assert_, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_lock_all(assert_, win);
  return on(Op::Win_lock_all, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_lock_all(assert_, win); });
}

extern "C" int MPI_Win_unlock_all(MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_unlock_all(win);
  return on(Op::Win_unlock_all, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_unlock_all(win); });
}

extern "C" int MPI_Win_flush(int target, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_flush(target, win);
  return on(Op::Win_flush, MSTEP_CALLER, win, target, [&] { return PMPI_Win_flush(target, win); });
}

extern "C" int MPI_Win_flush_local(int target, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_flush_local(target, win);
  return on(Op::Win_flush_local, MSTEP_CALLER, win, target, [&] { return PMPI_Win_flush_local(target, win); });
}

extern "C" int MPI_Win_flush_all(MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_flush_all(win);
  return on(Op::Win_flush_all, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_flush_all(win); });
}

extern "C" int MPI_Win_flush_local_all(MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_flush_local_all(win);
  return on(Op::Win_flush_local_all, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_flush_local_all(win); });
}

extern "C" int MPI_Win_sync(MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_sync(win);
  return on(Op::Win_sync, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_sync(win); });
}

extern "C" int MPI_Win_post(MPI_Group group, int assert_, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_post(group, assert_, win);
  return on(Op::Win_post, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_post(group, assert_, win); });
}

extern "C" int MPI_Win_start(MPI_Group group, int assert_, MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_start(group, assert_, win);
  return on(Op::Win_start, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_start(group, assert_, win); });
}

extern "C" int MPI_Win_complete(MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_complete(win);
  return on(Op::Win_complete, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_complete(win); });
}

extern "C" int MPI_Win_wait(MPI_Win win) {
  if (!g_recorder.active()) return PMPI_Win_wait(win);
  return on(Op::Win_wait, MSTEP_CALLER, win, MPI_PROC_NULL, [&] { return PMPI_Win_wait(win); });
}

// A test that found the exposure epoch still open is kIncomplete, as a Test that found nothing.
extern "C" int MPI_Win_test(MPI_Win win, int* flag) {
  if (!g_recorder.active()) return PMPI_Win_test(win, flag);
  return recorded(Op::Win_test, MSTEP_CALLER, [&] { return PMPI_Win_test(win, flag); }, [&](Event& e, int rc) {
    on_window(e, win);
    if (rc == MPI_SUCCESS && !*flag) e.flags = kIncomplete;
  });
}
