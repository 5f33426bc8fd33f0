// Blocking collective wrappers: what each records is in coll_record.hpp. Barrier, Bcast,
// Reduce, Allreduce, Alltoall(v), Allgather(v), Gather(v), Scatter(v) and Reduce_scatter(_block) go
// through libmstep's substitutes
// (interpose/substitute.hpp), which are MPICH's own unless asked.
#include "interpose/coll_record.hpp"
#include "interpose/substitute.hpp"

using namespace mstep;

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
  bytes_bcast(k, root, count, type);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, int root, MPI_Comm comm) {
  if (!g_recorder.active()) return g_substitutes.reduce(sendbuf, recvbuf, count, type, op, root, comm);
  Event e = begin_event(Op::Reduce, MSTEP_CALLER);
  const int rc = g_substitutes.reduce(sendbuf, recvbuf, count, type, op, root, comm);
  Coll k = finish_coll(e, comm);
  bytes_reduce(k, root, count, type);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  if (!g_recorder.active()) return g_substitutes.allreduce(sendbuf, recvbuf, count, type, op, comm);
  Event e = begin_event(Op::Allreduce, MSTEP_CALLER);
  const int rc = g_substitutes.allreduce(sendbuf, recvbuf, count, type, op, comm);
  Coll k = finish_coll(e, comm);
  bytes_allreduce(k, count, type);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Event e = begin_event(Op::Gather, MSTEP_CALLER);
  const int rc = g_substitutes.gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  bytes_gather(k, root, sendcount, sendtype, recvcount, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  Event e = begin_event(Op::Gatherv, MSTEP_CALLER);
  const int rc =
      g_substitutes.gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  bytes_gatherv(k, root, sendcount, sendtype, recvcounts, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Event e = begin_event(Op::Scatter, MSTEP_CALLER);
  const int rc = g_substitutes.scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  bytes_scatter(k, root, sendcount, sendtype, recvcount, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Event e = begin_event(Op::Scatterv, MSTEP_CALLER);
  const int rc =
      g_substitutes.scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  Coll k = finish_coll(e, comm);
  bytes_scatterv(k, root, sendcounts, sendtype, recvcount, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Event e = begin_event(Op::Allgather, MSTEP_CALLER);
  const int rc = g_substitutes.allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Coll k = finish_coll(e, comm);
  bytes_all_to_all(k, sendbuf, sendcount, sendtype, recvcount, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  Event e = begin_event(Op::Allgatherv, MSTEP_CALLER);
  const int rc = g_substitutes.allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  Coll k = finish_coll(e, comm);
  bytes_allgatherv(k, sendbuf, sendcount, sendtype, recvcounts, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Event e = begin_event(Op::Alltoall, MSTEP_CALLER);
  const int rc = g_substitutes.alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  Coll k = finish_coll(e, comm);
  bytes_all_to_all(k, sendbuf, sendcount, sendtype, recvcount, recvtype);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!g_recorder.active())
    return g_substitutes.alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                   recvtype, comm);
  Event e = begin_event(Op::Alltoallv, MSTEP_CALLER);
  const int rc = g_substitutes.alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                         rdispls, recvtype, comm);
  Coll k = finish_coll(e, comm);
  bytes_alltoallv(k, sendbuf, sendcounts, sendtype, recvcounts, recvtype);
  g_recorder.record(k.e);
  return rc;
}

// libmstep has no substitute for it: MPICH's own, always.
extern "C" int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (!g_recorder.active())
    return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  Event e = begin_event(Op::Alltoallw, MSTEP_CALLER);
  const int rc = PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  Coll k = finish_coll(e, comm);
  bytes_alltoallw(k, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!g_recorder.active()) return g_substitutes.reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  Event e = begin_event(Op::Reduce_scatter, MSTEP_CALLER);
  const int rc = g_substitutes.reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  Coll k = finish_coll(e, comm);
  bytes_reduce_scatter(k, recvcounts, type);
  g_recorder.record(k.e);
  return rc;
}

extern "C" int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!g_recorder.active()) return g_substitutes.reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  Event e = begin_event(Op::Reduce_scatter_block, MSTEP_CALLER);
  const int rc = g_substitutes.reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  Coll k = finish_coll(e, comm);
  bytes_reduce_scatter_block(k, recvcount, type);
  g_recorder.record(k.e);
  return rc;
}

// Scan and Exscan share one signature.
#define MSTEP_SCAN(NAME, SUB)                                                                           \
  extern "C" int MPI_##NAME(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, \
                            MPI_Comm comm) {                                                            \
    if (!g_recorder.active()) return PMPI_##NAME(sendbuf, recvbuf, count, type, op, comm);              \
    Event e = begin_event(Op::NAME, MSTEP_CALLER);                                                      \
    const int rc = g_substitutes.SUB(sendbuf, recvbuf, count, type, op, comm);                          \
    Coll k = finish_coll(e, comm);                                                                      \
    bytes_scan(k, count, type);                                                                         \
    g_recorder.record(k.e);                                                                             \
    return rc;                                                                                          \
  }

MSTEP_SCAN(Scan, scan)
MSTEP_SCAN(Exscan, exscan)
