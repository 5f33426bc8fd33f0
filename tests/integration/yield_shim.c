/* yield_shim: a test-only preload library that makes blocking MPI calls yield the CPU while they
 * wait, so that more MPICH ranks than cores do not busy-spin against each other.
 *
 *   LD_PRELOAD="libmstep.so:libyield_shim.so" mpiexec.mpich -n 4 ./prog
 *
 * Stacked after libmstep.so, it defines both MPI_X (for calls mstep does not wrap, or when mstep is
 * absent) and PMPI_X (what mstep's wrappers call) for the blocking calls below. Each is the
 * nonblocking PMPI_IX call followed by a PMPI_Test loop with sched_yield() between tests. It does
 * not define the PMPI_I* and PMPI_Test* it calls, so those are MPICH's own. MPI semantics are kept:
 * a blocking call returns once its request is complete, with the status MPI gives.
 * (MPI_Init/MPI_Finalize and communicator creation still spin inside MPICH.) */
#include <mpi.h>
#include <sched.h>
#include <time.h>

/* Test until done; after a while of yielding, also sleep a little: with more runnable ranks than
 * cores, sched_yield() alone may hand the CPU straight back. */
static int spin_one(MPI_Request* request, MPI_Status* status) {
  for (unsigned long n = 0;; ++n) {
    int flag = 0;
    const int rc = PMPI_Test(request, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    if (n < 64) {
      sched_yield();
    } else {
      const struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
}

static int spin_all(int count, MPI_Request* requests, MPI_Status* statuses) {
  for (unsigned long n = 0;; ++n) {
    int flag = 0;
    const int rc = PMPI_Testall(count, requests, &flag, statuses);
    if (rc != MPI_SUCCESS || flag) return rc;
    if (n < 64) {
      sched_yield();
    } else {
      const struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
}

/* Start a nonblocking call into `r`, then wait for it. */
#define START_AND_WAIT(start_call, status)    \
  do {                                        \
    MPI_Request r = MPI_REQUEST_NULL;         \
    const int rc_ = (start_call);             \
    if (rc_ != MPI_SUCCESS) return rc_;       \
    return spin_one(&r, (status));            \
  } while (0)

/* Both entry points of one function: MPI_NAME and PMPI_NAME run the yielding version. */
#define BOTH(ret, NAME, params, args)  \
  static ret yield_##NAME params;      \
  ret MPI_##NAME params {              \
    return yield_##NAME args;          \
  }                                    \
  ret PMPI_##NAME params {             \
    return yield_##NAME args;          \
  }                                    \
  static ret yield_##NAME params

BOTH(int, Send, (const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
     (buf, count, type, dest, tag, comm)) {
  START_AND_WAIT(PMPI_Isend(buf, count, type, dest, tag, comm, &r), MPI_STATUS_IGNORE);
}

BOTH(int, Ssend, (const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
     (buf, count, type, dest, tag, comm)) {
  START_AND_WAIT(PMPI_Issend(buf, count, type, dest, tag, comm, &r), MPI_STATUS_IGNORE);
}

BOTH(int, Recv,
     (void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status),
     (buf, count, type, source, tag, comm, status)) {
  START_AND_WAIT(PMPI_Irecv(buf, count, type, source, tag, comm, &r), status);
}

BOTH(int, Sendrecv,
     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
      void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
      MPI_Status* status),
     (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
      comm, status)) {
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
  if (rc != MPI_SUCCESS) return rc;
  rc = spin_one(&r[1], MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return rc;
  return spin_one(&r[0], status);
}

BOTH(int, Wait, (MPI_Request * request, MPI_Status* status), (request, status)) {
  return spin_one(request, status);
}

BOTH(int, Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]),
     (count, requests, statuses)) {
  return spin_all(count, requests, statuses);
}

BOTH(int, Barrier, (MPI_Comm comm), (comm)) {
  START_AND_WAIT(PMPI_Ibarrier(comm, &r), MPI_STATUS_IGNORE);
}

BOTH(int, Bcast, (void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
     (buf, count, type, root, comm)) {
  START_AND_WAIT(PMPI_Ibcast(buf, count, type, root, comm, &r), MPI_STATUS_IGNORE);
}

BOTH(int, Reduce,
     (const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
      MPI_Comm comm),
     (sendbuf, recvbuf, count, type, op, root, comm)) {
  START_AND_WAIT(PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, &r), MPI_STATUS_IGNORE);
}

BOTH(int, Allreduce,
     (const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
     (sendbuf, recvbuf, count, type, op, comm)) {
  START_AND_WAIT(PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &r), MPI_STATUS_IGNORE);
}

BOTH(int, Gather,
     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
      MPI_Datatype recvtype, int root, MPI_Comm comm),
     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)) {
  START_AND_WAIT(PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Gatherv,
     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm)) {
  START_AND_WAIT(PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               root, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Scatter,
     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
      MPI_Datatype recvtype, int root, MPI_Comm comm),
     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)) {
  START_AND_WAIT(PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Scatterv,
     (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
     (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm)) {
  START_AND_WAIT(PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                                root, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Allgather,
     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
      MPI_Datatype recvtype, MPI_Comm comm),
     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)) {
  START_AND_WAIT(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Allgatherv,
     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
      const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)) {
  START_AND_WAIT(PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Alltoall,
     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
      MPI_Datatype recvtype, MPI_Comm comm),
     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)) {
  START_AND_WAIT(PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Alltoallv,
     (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
      void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
      MPI_Comm comm),
     (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm)) {
  START_AND_WAIT(PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Reduce_scatter,
     (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
      MPI_Comm comm),
     (sendbuf, recvbuf, recvcounts, type, op, comm)) {
  START_AND_WAIT(PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, &r),
                 MPI_STATUS_IGNORE);
}

BOTH(int, Reduce_scatter_block,
     (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
      MPI_Comm comm),
     (sendbuf, recvbuf, recvcount, type, op, comm)) {
  START_AND_WAIT(PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, &r),
                 MPI_STATUS_IGNORE);
}
