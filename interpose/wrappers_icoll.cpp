// Nonblocking collective wrappers: each records at its start what its blocking version records
// (coll_record.hpp) plus its request; the Wait/Test completing the request writes a record with
// kCollDone (wrappers_wait.cpp). Each returns exactly what PMPI returns.
#include "interpose/coll_record.hpp"

using namespace mstep;

namespace {

template <class Fill>
void record_icoll(const Event& e, MPI_Comm comm, int rc, MPI_Request* request, Fill fill) {
  Coll k = finish_coll(e, comm);
  fill(k);
  if (rc == MPI_SUCCESS) k.e.request = g_recorder.add_request(*request, false, *k.c, nullptr, true);
  g_recorder.record(k.e);
}

}  // namespace

extern "C" int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Ibarrier(comm, request);
  Event e = begin_event(Op::Ibarrier, MSTEP_CALLER);
  const int rc = PMPI_Ibarrier(comm, request);
  record_icoll(e, comm, rc, request, [](Coll&) {});
  return rc;
}

extern "C" int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Ibcast(buf, count, type, root, comm, request);
  Event e = begin_event(Op::Ibcast, MSTEP_CALLER);
  const int rc = PMPI_Ibcast(buf, count, type, root, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_bcast(k, root, count, type); });
  return rc;
}

extern "C" int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                           MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  Event e = begin_event(Op::Ireduce, MSTEP_CALLER);
  const int rc = PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_reduce(k, root, count, type); });
  return rc;
}

extern "C" int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  Event e = begin_event(Op::Iallreduce, MSTEP_CALLER);
  const int rc = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_allreduce(k, count, type); });
  return rc;
}

extern "C" int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  Event e = begin_event(Op::Igather, MSTEP_CALLER);
  const int rc = PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_gather(k, root, sendcount, sendtype, recvcount, recvtype); });
  return rc;
}

extern "C" int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  Event e = begin_event(Op::Igatherv, MSTEP_CALLER);
  const int rc = PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_gatherv(k, root, sendcount, sendtype, recvcounts, recvtype); });
  return rc;
}

extern "C" int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  Event e = begin_event(Op::Iscatter, MSTEP_CALLER);
  const int rc = PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_scatter(k, root, sendcount, sendtype, recvcount, recvtype); });
  return rc;
}

extern "C" int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  Event e = begin_event(Op::Iscatterv, MSTEP_CALLER);
  const int rc = PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  record_icoll(e, comm, rc, request,
               [&](Coll& k) { bytes_scatterv(k, root, sendcounts, sendtype, recvcount, recvtype); });
  return rc;
}

extern "C" int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  Event e = begin_event(Op::Iallgather, MSTEP_CALLER);
  const int rc = PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  record_icoll(e, comm, rc, request,
               [&](Coll& k) { bytes_all_to_all(k, sendbuf, sendcount, sendtype, recvcount, recvtype); });
  return rc;
}

extern "C" int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  Event e = begin_event(Op::Iallgatherv, MSTEP_CALLER);
  const int rc = PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  record_icoll(e, comm, rc, request,
               [&](Coll& k) { bytes_allgatherv(k, sendbuf, sendcount, sendtype, recvcounts, recvtype); });
  return rc;
}

extern "C" int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  Event e = begin_event(Op::Ialltoall, MSTEP_CALLER);
  const int rc = PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  record_icoll(e, comm, rc, request,
               [&](Coll& k) { bytes_all_to_all(k, sendbuf, sendcount, sendtype, recvcount, recvtype); });
  return rc;
}

extern "C" int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  Event e = begin_event(Op::Ialltoallv, MSTEP_CALLER);
  const int rc =
      PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
  record_icoll(e, comm, rc, request,
               [&](Coll& k) { bytes_alltoallv(k, sendbuf, sendcounts, sendtype, recvcounts, recvtype); });
  return rc;
}

extern "C" int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                           request);
  Event e = begin_event(Op::Ialltoallw, MSTEP_CALLER);
  const int rc =
      PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request);
  record_icoll(e, comm, rc, request,
               [&](Coll& k) { bytes_alltoallw(k, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes); });
  return rc;
}

extern "C" int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                                   MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active()) return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  Event e = begin_event(Op::Ireduce_scatter, MSTEP_CALLER);
  const int rc = PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_reduce_scatter(k, recvcounts, type); });
  return rc;
}

extern "C" int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (!g_recorder.active())
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  Event e = begin_event(Op::Ireduce_scatter_block, MSTEP_CALLER);
  const int rc = PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_reduce_scatter_block(k, recvcount, type); });
  return rc;
}

// Iscan and Iexscan share one signature.
#define MSTEP_ISCAN(NAME)                                                                                     \
  extern "C" int MPI_##NAME(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,      \
                            MPI_Comm comm, MPI_Request* request) {                                            \
    if (!g_recorder.active()) return PMPI_##NAME(sendbuf, recvbuf, count, type, op, comm, request);           \
    Event e = begin_event(Op::NAME, MSTEP_CALLER);                                                            \
    const int rc = PMPI_##NAME(sendbuf, recvbuf, count, type, op, comm, request);                             \
    record_icoll(e, comm, rc, request, [&](Coll& k) { bytes_scan(k, count, type); });                         \
    return rc;                                                                                                \
  }

MSTEP_ISCAN(Iscan)
MSTEP_ISCAN(Iexscan)
