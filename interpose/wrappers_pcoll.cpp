// Persistent collective wrappers (MPI 4.0: MPI_Barrier_init ... MPI_Exscan_init). Each records its
// creation and remembers, with the request, what its nonblocking collective records (coll_record.hpp):
// every MPI_Start/Startall of the request writes that record (wrappers_persistent.cpp), so that the
// models charge the started collective as the nonblocking one. Each returns exactly what PMPI returns.
#include "interpose/coll_record.hpp"

using namespace mstep;

namespace {

// `e` is the *_init call's event; `started` the nonblocking collective each Start records.
template <class Fill>
void record_pcoll(Event e, Op started, MPI_Comm comm, int rc, MPI_Request* request, Fill fill) {
  Event as_started = e;
  as_started.op = started;
  Coll k = finish_coll(as_started, comm);
  fill(k);
  e.t_exit = k.e.t_exit;
  e.comm = k.e.comm;
  g_recorder.record(e);
  if (rc != MPI_SUCCESS) return;
  PersistentRequest p;
  p.comm = k.c;
  p.collective = true;
  p.started = k.e;
  p.started.request = 0;
  g_recorder.add_persistent(*request, p);
}

}  // namespace

#define MSTEP_PCOLL_BEGIN(NAME, ...)                                         \
  if (!g_recorder.active()) return PMPI_##NAME(__VA_ARGS__);                 \
  Event e = begin_event(Op::NAME, MSTEP_CALLER);                             \
  const int rc = PMPI_##NAME(__VA_ARGS__);

extern "C" int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Barrier_init, comm, info, request)
  record_pcoll(e, Op::Ibarrier, comm, rc, request, [](Coll&) {});
  return rc;
}

extern "C" int MPI_Bcast_init(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info info,
                              MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Bcast_init, buf, count, type, root, comm, info, request)
  record_pcoll(e, Op::Ibcast, comm, rc, request, [&](Coll& k) { bytes_bcast(k, root, count, type); });
  return rc;
}

extern "C" int MPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                               MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Reduce_init, sendbuf, recvbuf, count, type, op, root, comm, info, request)
  record_pcoll(e, Op::Ireduce, comm, rc, request, [&](Coll& k) { bytes_reduce(k, root, count, type); });
  return rc;
}

extern "C" int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Allreduce_init, sendbuf, recvbuf, count, type, op, comm, info, request)
  record_pcoll(e, Op::Iallreduce, comm, rc, request, [&](Coll& k) { bytes_allreduce(k, count, type); });
  return rc;
}

extern "C" int MPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Gather_init, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                    request)
  record_pcoll(e, Op::Igather, comm, rc, request,
               [&](Coll& k) { bytes_gather(k, root, sendcount, sendtype, recvcount, recvtype); });
  return rc;
}

extern "C" int MPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Gatherv_init, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                    info, request)
  record_pcoll(e, Op::Igatherv, comm, rc, request,
               [&](Coll& k) { bytes_gatherv(k, root, sendcount, sendtype, recvcounts, recvtype); });
  return rc;
}

extern "C" int MPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Scatter_init, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                    request)
  record_pcoll(e, Op::Iscatter, comm, rc, request,
               [&](Coll& k) { bytes_scatter(k, root, sendcount, sendtype, recvcount, recvtype); });
  return rc;
}

extern "C" int MPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Scatterv_init, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    info, request)
  record_pcoll(e, Op::Iscatterv, comm, rc, request,
               [&](Coll& k) { bytes_scatterv(k, root, sendcounts, sendtype, recvcount, recvtype); });
  return rc;
}

// Allgather_init and Alltoall_init share one signature and one byte rule.
#define MSTEP_PCOLL_ALL_TO_ALL(NAME, STARTED)                                                                  \
  extern "C" int MPI_##NAME(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,          \
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,                \
                            MPI_Request* request) {                                                            \
    MSTEP_PCOLL_BEGIN(NAME, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request)   \
    record_pcoll(e, Op::STARTED, comm, rc, request,                                                           \
                 [&](Coll& k) { bytes_all_to_all(k, sendbuf, sendcount, sendtype, recvcount, recvtype); });    \
    return rc;                                                                                                 \
  }

MSTEP_PCOLL_ALL_TO_ALL(Allgather_init, Iallgather)
MSTEP_PCOLL_ALL_TO_ALL(Alltoall_init, Ialltoall)

extern "C" int MPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Allgatherv_init, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                    request)
  record_pcoll(e, Op::Iallgatherv, comm, rc, request,
               [&](Coll& k) { bytes_allgatherv(k, sendbuf, sendcount, sendtype, recvcounts, recvtype); });
  return rc;
}

extern "C" int MPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Alltoallv_init, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                    comm, info, request)
  record_pcoll(e, Op::Ialltoallv, comm, rc, request,
               [&](Coll& k) { bytes_alltoallv(k, sendbuf, sendcounts, sendtype, recvcounts, recvtype); });
  return rc;
}

extern "C" int MPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Reduce_scatter_init, sendbuf, recvbuf, recvcounts, type, op, comm, info, request)
  record_pcoll(e, Op::Ireduce_scatter, comm, rc, request, [&](Coll& k) { bytes_reduce_scatter(k, recvcounts, type); });
  return rc;
}

extern "C" int MPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                                             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MSTEP_PCOLL_BEGIN(Reduce_scatter_block_init, sendbuf, recvbuf, recvcount, type, op, comm, info, request)
  record_pcoll(e, Op::Ireduce_scatter_block, comm, rc, request,
               [&](Coll& k) { bytes_reduce_scatter_block(k, recvcount, type); });
  return rc;
}

// Scan_init and Exscan_init share one signature and one byte rule.
#define MSTEP_PSCAN(NAME, STARTED)                                                                      \
  extern "C" int MPI_##NAME(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, \
                            MPI_Comm comm, MPI_Info info, MPI_Request* request) {                       \
    MSTEP_PCOLL_BEGIN(NAME, sendbuf, recvbuf, count, type, op, comm, info, request)                     \
    record_pcoll(e, Op::STARTED, comm, rc, request, [&](Coll& k) { bytes_scan(k, count, type); });       \
    return rc;                                                                                          \
  }

MSTEP_PSCAN(Scan_init, Iscan)
MSTEP_PSCAN(Exscan_init, Iexscan)
