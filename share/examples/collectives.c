/* collectives: a loop of computation, MPI_Bcast and MPI_Barrier, the calls `mstep advise` gives
 * advice on. Each iteration the root (rotating when asked) broadcasts a block whose content
 * depends on the iteration, everyone checks it, and the ranks meet at a barrier.
 * Usage: collectives [iterations] [bytes] [rotate] [imbalance]: rank r computes 2000 + imbalance *
 * (r mod 3) terms a step (imbalance 500 by default; 0: all ranks alike, so that they enter each
 * broadcast together). Exits non-zero if a broadcast arrived wrong. */
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
  const int iterations = argc > 1 ? atoi(argv[1]) : 1000;
  const int bytes = argc > 2 ? atoi(argv[2]) : 64;
  const int rotate = argc > 3 ? atoi(argv[3]) : 0;
  const long imbalance = argc > 4 ? atol(argv[4]) : 500;
  unsigned char* block = malloc(bytes > 0 ? (size_t)bytes : 1);
  long wrong = 0;
  double work = 0.0;
  for (int it = 0; it < iterations; ++it) {
    work += compute(2000 + imbalance * (rank % 3));
    const int root = rotate ? it % size : 0;
    if (rank == root) memset(block, (unsigned char)(it * 7 + 1), (size_t)bytes);
    MPI_Bcast(block, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    for (int k = 0; k < bytes; ++k) wrong += block[k] != (unsigned char)(it * 7 + 1);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  long total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("collectives: %d ranks, %d iterations of %d bytes: %s (%.3f)\n", size, iterations, bytes,
           total == 0 ? "ok" : "WRONG", work > 0 ? 1.0 : 0.0);
  free(block);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
