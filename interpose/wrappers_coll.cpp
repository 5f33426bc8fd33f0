// Collective wrappers. Byte counts are the logical payload of the operation for this rank, as a
// personalised exchange (what BSPWB's h-relation counts), not what MPICH's algorithm moves:
//   Bcast root sends m to each of the n-1 others; Scatter root sends its blocks to the n-1 others;
//   Reduce/Gather non-roots send their m to the root, which receives (n-1) of them;
//   Allreduce, Allgather and Alltoall send to and receive from the n-1 others.
// share/trace-format.md lists them. MPI_IN_PLACE arguments are never dereferenced or sized.
#include "interpose/substitute.hpp"
#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

// Rooted collectives: the root's world rank in `peer`, kRoot on the root itself.
void set_root(Event& e, const CommInfo& c, int root, int me) {
  e.peer = c.world_rank(root);
  if (root == me || root == MPI_ROOT) e.flags |= kRoot;
}

struct Coll {
  Event e;
  const CommInfo* c;
  int me;
  int n;
};

Coll finish_coll(Event e, MPI_Comm comm) {
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  e.comm = c.id;
  return Coll{e, &c, comm_rank(comm), c.size};
}

std::uint64_t others(int n) { return n > 1 ? static_cast<std::uint64_t>(n - 1) : 0; }

}  // namespace

extern "C" int MPI_Barrier(MPI_Comm comm) {
  if (!g_recorder.active()) return g_substitutes.barrier(comm);
  Event e = begin_event(Op::Barrier, MSTEP_CALLER);
  const int rc = g_substitutes.barrier(comm);
  Coll k = finish_coll(e, comm);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!g_recorder.active()) return g_substitutes.bcast(buf, count, type, root, comm);
  Event e = begin_event(Op::Bcast, MSTEP_CALLER);
  const int rc = g_substitutes.bcast(buf, count, type, root, comm);
  Coll k = finish_coll(e, comm);
  set_root(k.e, *k.c, root, k.me);
  const std::uint64_t m = bytes_of(count, type);
  if (k.e.flags & kRoot) k.e.send_bytes = m * others(k.n);
  else k.e.recv_bytes = m;
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, int root, MPI_Comm comm) {
  if (!g_recorder.active()) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  Event e = begin_event(Op::Reduce, MSTEP_CALLER);
  const int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  Coll k = finish_coll(e, comm);
  set_root(k.e, *k.c, root, k.me);
  const std::uint64_t m = bytes_of(count, type);
  if (k.e.flags & kRoot) k.e.recv_bytes = m * others(k.n);
  else k.e.send_bytes = m;
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  if (!g_recorder.active()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  Event e = begin_event(Op::Allreduce, MSTEP_CALLER);
  const int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  Coll k = finish_coll(e, comm);
  const std::uint64_t m = bytes_of(count, type);
  k.e.send_bytes = k.e.recv_bytes = m * others(k.n);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Event e = begin_event(Op::Gather, MSTEP_CALLER);
  const int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  set_root(k.e, *k.c, root, k.me);
  if (k.e.flags & kRoot) k.e.recv_bytes = bytes_of(recvcount, recvtype) * others(k.n);
  else k.e.send_bytes = bytes_of(sendcount, sendtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  Event e = begin_event(Op::Gatherv, MSTEP_CALLER);
  const int rc =
      PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  set_root(k.e, *k.c, root, k.me);
  if (k.e.flags & kRoot) k.e.recv_bytes = bytes_to_others(recvcounts, k.n, k.me, recvtype);
  else k.e.send_bytes = bytes_of(sendcount, sendtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Event e = begin_event(Op::Scatter, MSTEP_CALLER);
  const int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  set_root(k.e, *k.c, root, k.me);
  if (k.e.flags & kRoot) k.e.send_bytes = bytes_of(sendcount, sendtype) * others(k.n);
  else k.e.recv_bytes = bytes_of(recvcount, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Event e = begin_event(Op::Scatterv, MSTEP_CALLER);
  const int rc =
      PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  set_root(k.e, *k.c, root, k.me);
  if (k.e.flags & kRoot) k.e.send_bytes = bytes_to_others(sendcounts, k.n, k.me, sendtype);
  else k.e.recv_bytes = bytes_of(recvcount, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Event e = begin_event(Op::Allgather, MSTEP_CALLER);
  const int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Coll k = finish_coll(e, comm);
  const std::uint64_t in = bytes_of(recvcount, recvtype);
  const std::uint64_t out = sendbuf == MPI_IN_PLACE ? in : bytes_of(sendcount, sendtype);
  k.e.send_bytes = out * others(k.n);
  k.e.recv_bytes = in * others(k.n);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  Event e = begin_event(Op::Allgatherv, MSTEP_CALLER);
  const int rc =
      PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  Coll k = finish_coll(e, comm);
  const std::uint64_t out = sendbuf == MPI_IN_PLACE
                                ? bytes_of(k.me < k.n ? recvcounts[k.me] : 0, recvtype)
                                : bytes_of(sendcount, sendtype);
  k.e.send_bytes = out * others(k.n);
  k.e.recv_bytes = bytes_to_others(recvcounts, k.n, k.me, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Event e = begin_event(Op::Alltoall, MSTEP_CALLER);
  const int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Coll k = finish_coll(e, comm);
  const std::uint64_t in = bytes_of(recvcount, recvtype);
  const std::uint64_t out = sendbuf == MPI_IN_PLACE ? in : bytes_of(sendcount, sendtype);
  k.e.send_bytes = out * others(k.n);
  k.e.recv_bytes = in * others(k.n);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
  Event e = begin_event(Op::Alltoallv, MSTEP_CALLER);
  const int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
  Coll k = finish_coll(e, comm);
  k.e.recv_bytes = bytes_to_others(recvcounts, k.n, k.me, recvtype);
  k.e.send_bytes = sendbuf == MPI_IN_PLACE ? k.e.recv_bytes
                                           : bytes_to_others(sendcounts, k.n, k.me, sendtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!g_recorder.active()) return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  Event e = begin_event(Op::Reduce_scatter, MSTEP_CALLER);
  const int rc = PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  Coll k = finish_coll(e, comm);
  k.e.send_bytes = bytes_to_others(recvcounts, k.n, k.me, type);
  k.e.recv_bytes = bytes_of(k.me < k.n ? recvcounts[k.me] : 0, type) * others(k.n);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  Event e = begin_event(Op::Reduce_scatter_block, MSTEP_CALLER);
  const int rc = PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  Coll k = finish_coll(e, comm);
  k.e.send_bytes = k.e.recv_bytes = bytes_of(recvcount, type) * others(k.n);
  g_recorder.record(k.e);
  return rc;
}
