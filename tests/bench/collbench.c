/* Every wrapped blocking collective, back to back, `iterations` times each, with messages of
 * `bytes` per rank and block (m in share/trace-format.md's table): what tests/bench/coll_model.sh
 * records and sets against the LogGPS replay's charge per call.
 *
 *   collbench [iterations [bytes [gap_us]]]
 *
 * gap_us (default 0): computation (a spin on the monotonic clock, no MPI call) before every call,
 * so that each call starts after the last one's messages have settled on both ranks, as in a
 * program that computes between its collectives.
 *
 * Order: Barrier, Bcast, Reduce, Allreduce, Gather, Gatherv, Scatter, Scatterv, Allgather,
 * Allgatherv, Alltoall, Alltoallv, Reduce_scatter_block, Reduce_scatter, Scan, Exscan (roots 0).
 * Buffers are MPI_BYTE for the data movers and MPI_INT (bytes / 4, at least 1) for reductions.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long arg(int argc, char** argv, int i, long def) {
  if (argc <= i) return def;
  char* end = NULL;
  const long v = strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 0) {
    fprintf(stderr, "collbench: argument %d '%s' is not a non-negative number\n", i, argv[i]);
    exit(2);
  }
  return v;
}

static double gap_s = 0;

static void compute(void) {
  if (gap_s <= 0) return;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < gap_s);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const long iterations = arg(argc, argv, 1, 1000);
  const int m = (int)arg(argc, argv, 2, 8);
  const int ints = m / 4 > 0 ? m / 4 : 1;
  gap_s = 1e-6 * (double)arg(argc, argv, 3, 0);
  const size_t total = (size_t)m * (size_t)n + 64;
  char* a = calloc(total, 1);
  char* b = calloc(total, 1);
  int* counts = malloc(sizeof(int) * (size_t)n);
  int* displs = malloc(sizeof(int) * (size_t)n);
  int* icounts = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) counts[i] = m, displs[i] = i * m, icounts[i] = ints;
  if (!a || !b || !counts || !displs || !icounts) {
    fprintf(stderr, "collbench: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm w = MPI_COMM_WORLD;
  for (long i = 0; i < iterations; ++i) compute(), MPI_Barrier(w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Bcast(a, m, MPI_BYTE, 0, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Reduce(a, b, ints, MPI_INT, MPI_SUM, 0, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Allreduce(a, b, ints, MPI_INT, MPI_SUM, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Gather(a, m, MPI_BYTE, b, m, MPI_BYTE, 0, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Gatherv(a, m, MPI_BYTE, b, counts, displs, MPI_BYTE, 0, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Scatter(a, m, MPI_BYTE, b, m, MPI_BYTE, 0, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Scatterv(a, counts, displs, MPI_BYTE, b, m, MPI_BYTE, 0, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Allgather(a, m, MPI_BYTE, b, m, MPI_BYTE, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Allgatherv(a, m, MPI_BYTE, b, counts, displs, MPI_BYTE, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Alltoall(a, m, MPI_BYTE, b, m, MPI_BYTE, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Alltoallv(a, counts, displs, MPI_BYTE, b, counts, displs, MPI_BYTE, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Reduce_scatter_block(a, b, ints, MPI_INT, MPI_SUM, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Reduce_scatter(a, b, icounts, MPI_INT, MPI_SUM, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Scan(a, b, ints, MPI_INT, MPI_SUM, w);
  for (long i = 0; i < iterations; ++i) compute(), MPI_Exscan(a, b, ints, MPI_INT, MPI_SUM, w);
  if (rank == 0) printf("collbench ranks=%d iterations=%ld bytes=%d\n", n, iterations, m);
  free(a), free(b), free(counts), free(displs), free(icounts);
  MPI_Finalize();
  return 0;
}
