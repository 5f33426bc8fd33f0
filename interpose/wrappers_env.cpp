// Start and end of the run, and the communicator calls that mstep needs to name partners by
// their MPI_COMM_WORLD rank.
#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

int start_recording(int rc, std::uint64_t t_enter, Op op, void* ret) {
  if (rc != MPI_SUCCESS) return rc;
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  g_recorder.start(level, t_enter);
  if (!g_recorder.active()) return rc;
  Event e;
  e.op = op;
  e.callsite = g_recorder.callsite(ret);
  e.t_enter = t_enter;
  e.t_exit = now_ticks();
  g_recorder.record(e);
  return rc;
}

// A new communicator (or MPI_COMM_NULL for ranks outside it) after a creating call.
int record_new_comm(Event e, MPI_Comm parent, const MPI_Comm* created, int rc) {
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(parent);
  e.comm = c.id;
  if (rc == MPI_SUCCESS && *created != MPI_COMM_NULL) {
    // Register it now so its members reach the trace even if it only ever carries collectives.
    e.peer = static_cast<std::int32_t>(g_recorder.comm(*created).id);
  }
  g_recorder.record(e);
  return rc;
}

}  // namespace

extern "C" int MPI_Init(int* argc, char*** argv) {
  const std::uint64_t t = now_ticks();
  return start_recording(PMPI_Init(argc, argv), t, Op::Init, MSTEP_CALLER);
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const std::uint64_t t = now_ticks();
  return start_recording(PMPI_Init_thread(argc, argv, required, provided), t, Op::Init_thread,
                         MSTEP_CALLER);
}

extern "C" int MPI_Finalize() {
  if (g_recorder.active()) {
    Event e = begin_event(Op::Finalize, MSTEP_CALLER);
    e.t_exit = now_ticks();
    g_recorder.stop(e);
  }
  return PMPI_Finalize();
}

extern "C" int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  if (!g_recorder.active()) return PMPI_Comm_split(comm, color, key, newcomm);
  Event e = begin_event(Op::Comm_split, MSTEP_CALLER);
  return record_new_comm(e, comm, newcomm, PMPI_Comm_split(comm, color, key, newcomm));
}

extern "C" int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  if (!g_recorder.active()) return PMPI_Comm_dup(comm, newcomm);
  Event e = begin_event(Op::Comm_dup, MSTEP_CALLER);
  return record_new_comm(e, comm, newcomm, PMPI_Comm_dup(comm, newcomm));
}

extern "C" int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  if (!g_recorder.active()) return PMPI_Comm_create(comm, group, newcomm);
  Event e = begin_event(Op::Comm_create, MSTEP_CALLER);
  return record_new_comm(e, comm, newcomm, PMPI_Comm_create(comm, group, newcomm));
}

extern "C" int MPI_Comm_free(MPI_Comm* comm) {
  if (!g_recorder.active()) return PMPI_Comm_free(comm);
  const MPI_Comm handle = *comm;
  const CommInfo& c = g_recorder.comm(handle);
  Event e = begin_event(Op::Comm_free, MSTEP_CALLER);
  const int rc = PMPI_Comm_free(comm);
  e.t_exit = now_ticks();
  e.comm = c.id;
  if (rc == MPI_SUCCESS) g_recorder.forget_comm(handle);
  g_recorder.record(e);
  return rc;
}
