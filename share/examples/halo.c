/* halo: a 1-D Jacobi-like stencil with halo exchange. The global array is split into one block per
 * rank; every iteration each rank exchanges its h outermost cells with its left and right
 * neighbours (MPI_Irecv, MPI_Isend, MPI_Waitall), then replaces every cell by the mean of the
 * 2h+1 cells around it. Outside the global array the values are fixed: 1 on the left, 0 on the
 * right. The last rank owns (1 + imbalance) times as many cells as the others, so it has that
 * much more work per iteration: a load imbalance for the models to see.
 * Usage: halo [cells_per_rank] [iterations] [imbalance] [halo_doubles]
 * (defaults 50000 4000 0.5 1). At the end rank 0 gathers the array (MPI_Gather, MPI_Gatherv) and,
 * after MPI_Finalize so that it stays out of the recorded run, compares it with a sequential run of
 * the same stencil (the same operations in the same order: it must agree to 1e-12, in practice
 * exactly). Exits non-zero if it does not. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The value of global cell g before the first iteration. */
static double initial(long g) { return (double)((g * 37) % 101) / 101.0; }

/* out[i] = mean of in[i-h .. i+h] for i in [0, count); in has h valid cells before and after. */
static void sweep(const double* restrict in, double* restrict out, long count, int h) {
  const double scale = 1.0 / (double)(2 * h + 1);
  for (long i = 0; i < count; ++i) {
    double sum = 0.0;
    for (int d = -h; d <= h; ++d) sum += in[i + d];
    out[i] = sum * scale;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int cells_per_rank = argc > 1 ? atoi(argv[1]) : 50000;
  const int iterations = argc > 2 ? atoi(argv[2]) : 4000;
  const double imbalance = argc > 3 ? atof(argv[3]) : 0.5;
  const int h = argc > 4 ? atoi(argv[4]) : 1;
  const double last_cells = floor((double)cells_per_rank * (1.0 + imbalance) + 0.5);
  if (cells_per_rank < 1 || iterations < 0 || imbalance < 0.0 || h < 1 || h > cells_per_rank ||
      (double)cells_per_rank * (size - 1) + last_cells > 2e9) {
    if (rank == 0)
      fprintf(stderr, "usage: halo [cells_per_rank >= 1] [iterations >= 0] [imbalance >= 0] "
                      "[halo_doubles, 1..cells_per_rank]\n");
    MPI_Finalize();
    return 1;
  }
  const int count = rank == size - 1 ? (int)last_cells : cells_per_rank;
  const long first = (long)rank * cells_per_rank; /* global index of the first own cell */
  const int left = rank - 1, right = rank + 1 < size ? rank + 1 : -1;

  /* Two buffers of h ghosts + count cells + h ghosts. */
  double* u = malloc(((size_t)count + 2 * (size_t)h) * sizeof(double));
  double* v = malloc(((size_t)count + 2 * (size_t)h) * sizeof(double));
  for (int i = 0; i < h; ++i) {
    u[i] = v[i] = 1.0;                 /* left of the array; overwritten when there is a neighbour */
    u[h + count + i] = v[h + count + i] = 0.0; /* right of the array */
  }
  for (int i = 0; i < count; ++i) u[h + i] = initial(first + i);

  for (int it = 0; it < iterations; ++it) {
    MPI_Request requests[4];
    MPI_Status statuses[4]; /* rather than MPI_STATUSES_IGNORE, which GCC 12 -Wstringop-overflow trips on */
    int pending = 0;
    if (left >= 0) MPI_Irecv(u, h, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &requests[pending++]);
    if (right >= 0) MPI_Irecv(u + h + count, h, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &requests[pending++]);
    if (left >= 0) MPI_Isend(u + h, h, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &requests[pending++]);
    if (right >= 0) MPI_Isend(u + count, h, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &requests[pending++]);
    MPI_Waitall(pending, requests, statuses);
    sweep(u + h, v + h, count, h);
    double* t = u;
    u = v;
    v = t;
  }

  /* Gather the array on rank 0. */
  int* counts = NULL;
  int* displs = NULL;
  double* result = NULL;
  long total = 0;
  if (rank == 0) {
    counts = malloc((size_t)size * sizeof(int));
    displs = malloc((size_t)size * sizeof(int));
  }
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      displs[r] = (int)total;
      total += counts[r];
    }
    result = malloc((size_t)total * sizeof(double));
  }
  MPI_Gatherv(u + h, count, MPI_DOUBLE, result, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  free(u);
  free(v);
  MPI_Finalize();

  int ok = 1;
  if (rank == 0) {
    /* The same stencil on the whole array. */
    double* a = malloc(((size_t)total + 2 * (size_t)h) * sizeof(double));
    double* b = malloc(((size_t)total + 2 * (size_t)h) * sizeof(double));
    for (int i = 0; i < h; ++i) {
      a[i] = b[i] = 1.0;
      a[h + total + i] = b[h + total + i] = 0.0;
    }
    for (long g = 0; g < total; ++g) a[h + g] = initial(g);
    for (int it = 0; it < iterations; ++it) {
      sweep(a + h, b + h, total, h);
      double* t = a;
      a = b;
      b = t;
    }
    double error = 0.0;
    for (long g = 0; g < total; ++g) error = fmax(error, fabs(result[g] - a[h + g]));
    ok = error <= 1e-12;
    printf("halo: %d ranks, %ld cells (last rank %d), %d iterations, halo %d, max error %.1e: %s\n", size, total,
           (int)last_cells, iterations, h, error, ok ? "ok" : "WRONG");
    free(a);
    free(b);
    free(result);
    free(counts);
    free(displs);
  }
  return ok ? 0 : 1;
}
