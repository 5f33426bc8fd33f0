// Persistent requests on the recorder's path: two ranks exchange 8 bytes with MPI_Startall(send,
// receive) and MPI_Waitall, N times after 1000 warm-up rounds; rank 0 prints ns per exchange.
//   mpiexec -n 2 startall N        (under `mstep record` and without, alternating)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 startall N\n");
    MPI_Finalize();
    return 2;
  }
  const long n = atol(argv[1]);
  double out = 1, in = 0;
  MPI_Request q[2];
  MPI_Status st[2];
  MPI_Send_init(&out, 1, MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD, &q[0]);
  MPI_Recv_init(&in, 1, MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD, &q[1]);
  for (int i = 0; i < 1000; ++i) {
    MPI_Startall(2, q);
    MPI_Waitall(2, q, st);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < n; ++i) {
    MPI_Startall(2, q);
    MPI_Waitall(2, q, st);
  }
  const double t = MPI_Wtime() - t0;
  if (rank == 0) printf("startall: %.1f ns per Startall+Waitall exchange\n", t / (double)n * 1e9);
  MPI_Request_free(&q[0]);
  MPI_Request_free(&q[1]);
  MPI_Finalize();
  return 0;
}
