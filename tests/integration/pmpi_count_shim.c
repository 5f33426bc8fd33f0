/* pmpi_count_shim: a test-only preload library, stacked after libmstep.so, that counts the
 * point-to-point PMPI calls made below the application (by libmstep's substitute collectives) and
 * prints one line per rank at PMPI_Finalize on stderr:
 *   pmpi_count rank=R send=S recv=V sendrecv=X
 * Calls with MPI_INT64_T data are not counted: those are libmstep's own clock synchronisation. The
 * application's own MPI_Send reaches PMPI_Send through libmstep's wrapper and is counted, so the
 * tests use it with programs that make no point-to-point calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static long g_send, g_recv, g_sendrecv;

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

int PMPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (type != MPI_INT64_T) ++g_send;
  return NEXT("PMPI_Send", int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm))(buf, count, type, dest, tag,
                                                                                         comm);
}

int PMPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (type != MPI_INT64_T) ++g_recv;
  return NEXT("PMPI_Recv", int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*))(buf, count, type,
                                                                                                source, tag, comm,
                                                                                                status);
}

int PMPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                  MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  ++g_sendrecv;
  return NEXT("PMPI_Sendrecv", int (*)(const void*, int, MPI_Datatype, int, int, void*, int, MPI_Datatype, int, int,
                                       MPI_Comm, MPI_Status*))(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype,
                                                               source, rtag, comm, status);
}

int PMPI_Finalize(void) {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "pmpi_count rank=%d send=%ld recv=%ld sendrecv=%ld\n", rank, g_send, g_recv, g_sendrecv);
  return NEXT("PMPI_Finalize", int (*)(void))();
}
