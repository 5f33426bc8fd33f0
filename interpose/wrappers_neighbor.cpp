// Neighbourhood collective wrappers. Each writes one record per message, as Sendrecv does: a send
// to each out-neighbour, then a receive (kRecvHalf) from each in-neighbour, in the topology's
// neighbour order, with tag kNeighborTag; the models then charge them as the point-to-point
// messages MPICH's schedules send. Receive sizes are the posted ones (no status comes back).
// The nonblocking ones write the same at their start, with their request (its Wait/Test carries
// kCollDone). Each returns exactly what PMPI returns.
#include <vector>

#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

// A process's neighbours in its communicator's topology, as communicator ranks (MPI_PROC_NULL
// kept, so that index k is the k-th block of the call's buffers).
struct Neighbors {
  std::vector<int> in, out, in_weights, out_weights;
};
thread_local Neighbors t_neighbors;

bool neighbors_of(MPI_Comm comm, Neighbors& nb) {
  nb.in.clear();
  nb.out.clear();
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return false;
  if (kind == MPI_CART) {
    int ndims = 0;
    PMPI_Cartdim_get(comm, &ndims);
    for (int d = 0; d < ndims; ++d) {  // per dimension: the source, then the destination of a +1 shift
      int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
      PMPI_Cart_shift(comm, d, 1, &source, &dest);
      nb.in.insert(nb.in.end(), {source, dest});
      nb.out.insert(nb.out.end(), {source, dest});
    }
    return true;
  }
  if (kind == MPI_GRAPH) {
    int n = 0;
    PMPI_Graph_neighbors_count(comm, comm_rank(comm), &n);
    nb.in.resize(static_cast<std::size_t>(std::max(n, 0)));
    if (n > 0) PMPI_Graph_neighbors(comm, comm_rank(comm), n, nb.in.data());
    nb.out = nb.in;
    return true;
  }
  if (kind == MPI_DIST_GRAPH) {
    int indegree = 0, outdegree = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted);
    nb.in.resize(static_cast<std::size_t>(std::max(indegree, 0)));
    nb.out.resize(static_cast<std::size_t>(std::max(outdegree, 0)));
    nb.in_weights.resize(nb.in.size() + 1);
    nb.out_weights.resize(nb.out.size() + 1);
    PMPI_Dist_graph_neighbors(comm, indegree, nb.in.data(), nb.in_weights.data(), outdegree, nb.out.data(),
                              nb.out_weights.data());
    return true;
  }
  return false;
}

// `out_bytes(k)`, `in_bytes(k)`: the size of the k-th block sent, received.
template <class OutBytes, class InBytes>
void record_neighbors(Event e, MPI_Comm comm, int rc, MPI_Request* request, OutBytes out_bytes, InBytes in_bytes) {
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  e.comm = c.id;
  e.tag = kNeighborTag;
  if (rc == MPI_SUCCESS && request) e.request = g_recorder.add_request(*request, false, c, nullptr, true);
  bool any = false;
  auto write = [&](Event r) {
    if (any) r.flags |= kContinuation, r.request = 0;
    any = true;
    g_recorder.record(r);
  };
  Neighbors& nb = t_neighbors;
  if (rc == MPI_SUCCESS && neighbors_of(comm, nb)) {
    for (std::size_t k = 0; k < nb.out.size(); ++k) {
      Event r = e;
      r.peer = c.world_rank(nb.out[k]);
      if (r.peer == kNoPeer) continue;
      r.send_bytes = out_bytes(k);
      write(r);
    }
    for (std::size_t k = 0; k < nb.in.size(); ++k) {
      Event r = e;
      r.peer = c.world_rank(nb.in[k]);
      if (r.peer == kNoPeer) continue;
      r.flags |= kRecvHalf;
      r.recv_bytes = in_bytes(k);
      write(r);
    }
  }
  if (!any) g_recorder.record(e);  // no neighbour (or a failed call): the call's time alone
}

}  // namespace

// Allgather and Alltoall share one signature: a block of sendcount to each out-neighbour, one of
// recvcount from each in-neighbour.
#define MSTEP_NEIGHBOR_UNIFORM(WHAT)                                                                        \
  extern "C" int MPI_Neighbor_##WHAT(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,      \
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {                         \
    if (!g_recorder.active()) return PMPI_Neighbor_##WHAT(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); \
    Event e = begin_event(Op::Neighbor_##WHAT, MSTEP_CALLER);                                                          \
    const int rc = PMPI_Neighbor_##WHAT(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);           \
    const std::uint64_t out = bytes_of(sendcount, sendtype), in = bytes_of(recvcount, recvtype);            \
    record_neighbors(e, comm, rc, nullptr, [&](std::size_t) { return out; }, [&](std::size_t) { return in; }); \
    return rc;                                                                                              \
  }                                                                                                         \
  extern "C" int MPI_Ineighbor_##WHAT(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,     \
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {   \
    if (!g_recorder.active())                                                                               \
      return PMPI_Ineighbor_##WHAT(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);       \
    Event e = begin_event(Op::Ineighbor_##WHAT, MSTEP_CALLER);                                                       \
    const int rc = PMPI_Ineighbor_##WHAT(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); \
    const std::uint64_t out = bytes_of(sendcount, sendtype), in = bytes_of(recvcount, recvtype);            \
    record_neighbors(e, comm, rc, request, [&](std::size_t) { return out; }, [&](std::size_t) { return in; }); \
    return rc;                                                                                              \
  }

MSTEP_NEIGHBOR_UNIFORM(allgather)
MSTEP_NEIGHBOR_UNIFORM(alltoall)

extern "C" int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                       MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  Event e = begin_event(Op::Neighbor_allgatherv, MSTEP_CALLER);
  const int rc = PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  const std::uint64_t out = bytes_of(sendcount, sendtype);
  record_neighbors(e, comm, rc, nullptr, [&](std::size_t) { return out; },
                   [&](std::size_t k) { return bytes_of(recvcounts[k], recvtype); });
  return rc;
}

extern "C" int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  Event e = begin_event(Op::Ineighbor_allgatherv, MSTEP_CALLER);
  const int rc =
      PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  const std::uint64_t out = bytes_of(sendcount, sendtype);
  record_neighbors(e, comm, rc, request, [&](std::size_t) { return out; },
                   [&](std::size_t k) { return bytes_of(recvcounts[k], recvtype); });
  return rc;
}

extern "C" int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                   comm);
  Event e = begin_event(Op::Neighbor_alltoallv, MSTEP_CALLER);
  const int rc =
      PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  record_neighbors(e, comm, rc, nullptr, [&](std::size_t k) { return bytes_of(sendcounts[k], sendtype); },
                   [&](std::size_t k) { return bytes_of(recvcounts[k], recvtype); });
  return rc;
}

extern "C" int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                       MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, request);
  Event e = begin_event(Op::Ineighbor_alltoallv, MSTEP_CALLER);
  const int rc = PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                          recvtype, comm, request);
  record_neighbors(e, comm, rc, request, [&](std::size_t k) { return bytes_of(sendcounts[k], sendtype); },
                   [&](std::size_t k) { return bytes_of(recvcounts[k], recvtype); });
  return rc;
}

extern "C" int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                      const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                   comm);
  Event e = begin_event(Op::Neighbor_alltoallw, MSTEP_CALLER);
  const int rc =
      PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  record_neighbors(e, comm, rc, nullptr, [&](std::size_t k) { return bytes_of(sendcounts[k], sendtypes[k]); },
                   [&](std::size_t k) { return bytes_of(recvcounts[k], recvtypes[k]); });
  return rc;
}

extern "C" int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                       MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                    comm, request);
  Event e = begin_event(Op::Ineighbor_alltoallw, MSTEP_CALLER);
  const int rc = PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                          recvtypes, comm, request);
  record_neighbors(e, comm, rc, request, [&](std::size_t k) { return bytes_of(sendcounts[k], sendtypes[k]); },
                   [&](std::size_t k) { return bytes_of(recvcounts[k], recvtypes[k]); });
  return rc;
}
