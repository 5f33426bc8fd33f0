/* ring: the shipped example. Each rank computes, passes a message around a ring, and the ranks
 * agree on a checksum. Usage: ring [iterations] [bytes]. Exits non-zero if the checksum is wrong. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double compute(long n) {
  double x = 0.0;
  for (long i = 1; i <= n; ++i) x += 1.0 / ((double)i * (double)i);
  return x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 100;
  const int bytes = argc > 2 ? atoi(argv[2]) : 1024;
  char* out = malloc((size_t)bytes + 1);
  char* in = malloc((size_t)bytes + 1);
  memset(out, 'a' + rank % 26, (size_t)bytes + 1);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double work = 0.0;
  long received = 0;
  for (int it = 0; it < iterations; ++it) {
    /* Rank 0 does a little more work: an imbalance for the models to see. */
    work += compute(rank == 0 ? 20000 : 10000);
    if (rank % 2 == 0) {
      MPI_Send(out, bytes, MPI_CHAR, right, it, MPI_COMM_WORLD);
      MPI_Recv(in, bytes, MPI_CHAR, left, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in, bytes, MPI_CHAR, left, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(out, bytes, MPI_CHAR, right, it, MPI_COMM_WORLD);
    }
    received += in[0] == 'a' + left % 26;
  }
  long total = 0;
  MPI_Allreduce(&received, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  double param = rank == 0 ? work : 0.0;
  MPI_Bcast(&param, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const int ok = total == (long)iterations * size;
  if (rank == 0) printf("ring: %d ranks, %d iterations of %d bytes: %s\n", size, iterations, bytes, ok ? "ok" : "WRONG");
  free(out);
  free(in);
  MPI_Finalize();
  return ok ? 0 : 1;
}
