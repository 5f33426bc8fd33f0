/* threads: MPI_THREAD_MULTIPLE. Usage: threads N   (2 ranks)
 *
 * MPI calls per rank (test_threads.cpp asserts these; keep both in step):
 *   MPI_Init_thread(MPI_THREAD_MULTIPLE) once; if the library provides less, rank 0 prints
 *   "threads: MPI_THREAD_MULTIPLE not provided" on stdout and both ranks only MPI_Finalize.
 *   Then 2 pthreads per rank, thread t = 1, 2, each N ping-pongs on MPI_COMM_WORLD with tag t:
 *   rank 0 Send(1 double = 8 B, tag t) then Recv(1 double, from 1, tag t); rank 1 Recv then Send.
 *   So per rank MPI_Send = MPI_Recv = 2N, 16 N bytes each way. Then MPI_Finalize.
 * Exit 0, or 1 when a check failed.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

static int g_n = 10;

static void* pingpong(void* arg) {
  const int tag = (int)(long)arg, other = 1 - g_rank;
  double x = g_rank * 100 + tag;
  MPI_Status st;
  for (int i = 0; i < g_n; ++i) {
    if (g_rank == 0) {
      CHECK_RC(MPI_Send(&x, 1, MPI_DOUBLE, other, tag, MPI_COMM_WORLD));
      CHECK_RC(MPI_Recv(&x, 1, MPI_DOUBLE, other, tag, MPI_COMM_WORLD, &st));
    } else {
      CHECK_RC(MPI_Recv(&x, 1, MPI_DOUBLE, other, tag, MPI_COMM_WORLD, &st));
      CHECK_RC(MPI_Send(&x, 1, MPI_DOUBLE, other, tag, MPI_COMM_WORLD));
    }
    CHECK(st.MPI_TAG == tag && st.MPI_SOURCE == other);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_n = argc > 1 ? atoi(argv[1]) : 10;
  if (provided < MPI_THREAD_MULTIPLE || size != 2) {
    if (g_rank == 0)
      printf(size != 2 ? "threads: needs exactly 2 ranks\n" : "threads: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Finalize();
    return size != 2 ? 2 : 0;
  }
  pthread_t t[2];
  for (long i = 0; i < 2; ++i) CHECK(pthread_create(&t[i], NULL, pingpong, (void*)(i + 1)) == 0);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
