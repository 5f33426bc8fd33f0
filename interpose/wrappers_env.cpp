// Start and end of the run, and the communicator calls that mstep needs to name partners by
// their MPI_COMM_WORLD rank.
#include "interpose/substitute.hpp"
#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

int start_recording(int rc, std::uint64_t t_enter, Op op, void* ret) {
  if (rc != MPI_SUCCESS) return rc;
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  g_recorder.start(level);
  if (!g_recorder.active()) return rc;
  g_delay.start(g_recorder.rank(), g_recorder.rank0_clock_offset_ns());
  if (g_delay.on()) g_recorder.note_delay(g_delay.json());
  g_substitutes.start(g_recorder.rank(), g_recorder.shares_rank0_host());
  if (g_substitutes.any_on()) g_recorder.note_collectives(g_substitutes.json());
  Event e;
  e.op = op;
  e.callsite = g_recorder.callsite(ret);
  e.t_enter = t_enter;
  e.t_exit = now_ticks();
  g_recorder.record(e);
  return rc;
}

// A new communicator (or MPI_COMM_NULL for ranks outside it) after a creating call: the record's
// comm is the parent, its peer the new communicator's id (kNoPeer for MPI_COMM_NULL or an error).
// Every creator below goes through here, so they all look alike to the reader.
int record_new_comm(Event e, MPI_Comm parent, const MPI_Comm* created, int rc) {
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(parent);
  e.comm = c.id;
  if (rc == MPI_SUCCESS && *created != MPI_COMM_NULL) {
    // Register it now, not on first use: creation is collective, so all members number their
    // communicators in the same order (what the reader pairs ids by), and the members reach the
    // trace even if the communicator only ever carries collectives.
    e.peer = static_cast<std::int32_t>(g_recorder.new_comm(*created).id);
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

// MPI_Abort does not return: record it, write every buffered event (the buffer would be lost
// with the process), then pass it on.
extern "C" int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (g_recorder.active()) {
    Event e = begin_event(Op::Abort, MSTEP_CALLER);
    e.comm = g_recorder.comm(comm).id;
    e.tag = errorcode;
    e.t_exit = e.t_enter;
    g_recorder.record(e);
    g_recorder.emergency_flush(false);
  }
  return PMPI_Abort(comm, errorcode);
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

extern "C" int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  if (!g_recorder.active()) return PMPI_Comm_dup_with_info(comm, info, newcomm);
  Event e = begin_event(Op::Comm_dup_with_info, MSTEP_CALLER);
  return record_new_comm(e, comm, newcomm, PMPI_Comm_dup_with_info(comm, info, newcomm));
}

// MPI_UNDEFINED as split_type gives MPI_COMM_NULL.
extern "C" int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                   MPI_Comm* newcomm) {
  if (!g_recorder.active()) return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
  Event e = begin_event(Op::Comm_split_type, MSTEP_CALLER);
  return record_new_comm(e, comm, newcomm,
                         PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
}

// Collective over `group` only: the other processes of `comm` do not call it.
extern "C" int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  if (!g_recorder.active()) return PMPI_Comm_create_group(comm, group, tag, newcomm);
  Event e = begin_event(Op::Comm_create_group, MSTEP_CALLER);
  return record_new_comm(e, comm, newcomm, PMPI_Comm_create_group(comm, group, tag, newcomm));
}

// Topologies. With reorder the new ranks may differ from the old ones: the table reads the new
// communicator's own group, so its members are right either way. Processes beyond the grid or
// graph get MPI_COMM_NULL.
extern "C" int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                               int reorder, MPI_Comm* comm_cart) {
  if (!g_recorder.active())
    return PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
  Event e = begin_event(Op::Cart_create, MSTEP_CALLER);
  return record_new_comm(e, comm_old, comm_cart,
                         PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart));
}

extern "C" int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  if (!g_recorder.active()) return PMPI_Cart_sub(comm, remain_dims, newcomm);
  Event e = begin_event(Op::Cart_sub, MSTEP_CALLER);
  return record_new_comm(e, comm, newcomm, PMPI_Cart_sub(comm, remain_dims, newcomm));
}

extern "C" int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[],
                                int reorder, MPI_Comm* comm_graph) {
  if (!g_recorder.active())
    return PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph);
  Event e = begin_event(Op::Graph_create, MSTEP_CALLER);
  return record_new_comm(e, comm_old, comm_graph,
                         PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph));
}

extern "C" int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                              const int sourceweights[], int outdegree,
                                              const int destinations[], const int destweights[],
                                              MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  if (!g_recorder.active())
    return PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                           destinations, destweights, info, reorder,
                                           comm_dist_graph);
  Event e = begin_event(Op::Dist_graph_create_adjacent, MSTEP_CALLER);
  const int rc = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                                 outdegree, destinations, destweights, info,
                                                 reorder, comm_dist_graph);
  return record_new_comm(e, comm_old, comm_dist_graph, rc);
}

extern "C" int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                     const int degrees[], const int destinations[],
                                     const int weights[], MPI_Info info, int reorder,
                                     MPI_Comm* comm_dist_graph) {
  if (!g_recorder.active())
    return PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                  reorder, comm_dist_graph);
  Event e = begin_event(Op::Dist_graph_create, MSTEP_CALLER);
  const int rc = PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                        reorder, comm_dist_graph);
  return record_new_comm(e, comm_old, comm_dist_graph, rc);
}

// Intercommunicators. The table keeps an intercommunicator's REMOTE group, so point-to-point ranks
// on it (which name remote processes) translate to world ranks like any other. The record's comm is
// local_comm (peer_comm matters at the leaders only).
extern "C" int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                    int remote_leader, int tag, MPI_Comm* newintercomm) {
  if (!g_recorder.active())
    return PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                 newintercomm);
  Event e = begin_event(Op::Intercomm_create, MSTEP_CALLER);
  const int rc = PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                       newintercomm);
  return record_new_comm(e, local_comm, newintercomm, rc);
}

// The parent is an intercommunicator, the result an intracommunicator of both groups.
extern "C" int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  if (!g_recorder.active()) return PMPI_Intercomm_merge(intercomm, high, newintracomm);
  Event e = begin_event(Op::Intercomm_merge, MSTEP_CALLER);
  return record_new_comm(e, intercomm, newintracomm,
                         PMPI_Intercomm_merge(intercomm, high, newintracomm));
}

// Nonblocking: the new communicator (its parent's groups) is registered now, so its id follows
// the order of the creating calls like every other creator's, and its handle is bound when the
// request completes (wrappers_wait.cpp), before which MPI does not let the program use it.
namespace {
// MPI_Comm_idup and MPI_Comm_idup_with_info (recorded as Comm_idup: the info changes nothing
// mstep records): the new communicator is usable once the request completes.
void record_idup(Event& e, MPI_Comm comm, int rc, MPI_Comm* newcomm, MPI_Request* request) {
  e.t_exit = now_ticks();
  const CommInfo& parent = g_recorder.comm(comm);
  e.comm = parent.id;
  if (rc == MPI_SUCCESS) {
    const CommInfo& made = g_recorder.new_dup(parent);
    e.peer = static_cast<std::int32_t>(made.id);
    e.request = g_recorder.add_request(*request, false, made, newcomm);
  }
  g_recorder.record(e);
}
}  // namespace

extern "C" int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Comm_idup(comm, newcomm, request);
  Event e = begin_event(Op::Comm_idup, MSTEP_CALLER);
  const int rc = PMPI_Comm_idup(comm, newcomm, request);
  record_idup(e, comm, rc, newcomm, request);
  return rc;
}

extern "C" int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Comm_idup_with_info(comm, info, newcomm, request);
  Event e = begin_event(Op::Comm_idup, MSTEP_CALLER);
  const int rc = PMPI_Comm_idup_with_info(comm, info, newcomm, request);
  record_idup(e, comm, rc, newcomm, request);
  return rc;
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
