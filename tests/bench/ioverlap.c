/* A nonblocking collective overlapped with computation, against its blocking version: what the
 * models' charge of a nonblocking collective (its blocking version at its start, no overlap
 * credited) is checked against.
 *
 *   ioverlap ITERATIONS BYTES COMPUTE_US NONBLOCKING
 *
 * Each iteration: MPI_Iallreduce of BYTES (MPI_INT, at least one), COMPUTE_US of spinning, MPI_Wait
 * (NONBLOCKING 1); or MPI_Allreduce, then the spinning (0). Rank 0 prints one line:
 *   ioverlap nonblocking=1 bytes=8 compute_us=20.0 us_per_iteration=23.1
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void spin(double us) {
  const double t0 = MPI_Wtime();
  while ((MPI_Wtime() - t0) * 1e6 < us) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 5) {
    fprintf(stderr, "usage: ioverlap ITERATIONS BYTES COMPUTE_US NONBLOCKING\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int n = atoi(argv[1]), m = atoi(argv[2]), nb = atoi(argv[4]);
  const double c = atof(argv[3]);
  const int ints = m / 4 > 0 ? m / 4 : 1;
  int* a = calloc((size_t)ints, sizeof(int));
  int* b = calloc((size_t)ints, sizeof(int));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    if (nb) {
      MPI_Request r;
      MPI_Iallreduce(a, b, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
      spin(c);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      MPI_Allreduce(a, b, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      spin(c);
    }
  }
  const double t = MPI_Wtime() - t0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("ioverlap nonblocking=%d bytes=%d compute_us=%.1f us_per_iteration=%.2f\n", nb, m, c, t / n * 1e6);
  free(a), free(b);
  MPI_Finalize();
  return 0;
}
