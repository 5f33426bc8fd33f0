/* Ping-pong latency between ranks 0 and 1 (other ranks, if any, only call MPI_Init/Finalize).
 *
 *   pingpong [bytes [iterations [batches [warmup]]]]
 *
 * One batch is `iterations` round trips of a `bytes`-byte message (MPI_Send/MPI_Recv), timed as a
 * whole with CLOCK_MONOTONIC (not an MPI call, so nothing of the timing is recorded by mstep). The
 * one-way latency of a batch is its time / (2 * iterations); the figure is the median over the
 * batches, which shrugs off batches hit by a compiler or another job on the same cores. `warmup`
 * untimed round trips come first.
 *
 * Rank 0 prints one machine-readable line:
 *   pingpong bytes=8 iterations=10000 batches=30 median_ns=812.4 min_ns=790.1 max_ns=1503.9 events_per_rank=600002
 * events_per_rank is the number of point-to-point calls each of the two ranks made (Send + Recv),
 * warm-up included: what mstep records besides Init and Finalize.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static long arg(int argc, char** argv, int i, long def) {
  if (argc <= i) return def;
  char* end = NULL;
  const long v = strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 0) {
    fprintf(stderr, "pingpong: argument %d '%s' is not a non-negative number\n", i, argv[i]);
    exit(2);
  }
  return v;
}

/* n round trips; rank 0 sends first. */
static void round_trips(long n, char* buf, int bytes, int rank) {
  const int peer = 1 - rank;
  for (long i = 0; i < n; ++i) {
    if (rank == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long bytes = arg(argc, argv, 1, 8);
  const long iterations = arg(argc, argv, 2, 10000);
  const long batches = arg(argc, argv, 3, 30);
  const long warmup = arg(argc, argv, 4, 1000);
  if (size < 2 || iterations < 1 || batches < 1 || bytes > (1L << 30)) {
    if (rank == 0)
      fprintf(stderr, "pingpong: needs 2 ranks, iterations >= 1, batches >= 1, bytes <= 1 GiB\n");
    MPI_Finalize();
    return 2;
  }
  char* buf = calloc((size_t)bytes + 1, 1);
  double* lat = calloc((size_t)batches, sizeof *lat);
  if (!buf || !lat) MPI_Abort(MPI_COMM_WORLD, 3);

  if (rank < 2) {
    round_trips(warmup, buf, (int)bytes, rank);
    for (long b = 0; b < batches; ++b) {
      const double t0 = now_ns();
      round_trips(iterations, buf, (int)bytes, rank);
      lat[b] = (now_ns() - t0) / (2.0 * (double)iterations);
    }
  }
  if (rank == 0) {
    qsort(lat, (size_t)batches, sizeof *lat, cmp_double);
    const double median = batches % 2 ? lat[batches / 2]
                                      : 0.5 * (lat[batches / 2 - 1] + lat[batches / 2]);
    printf("pingpong bytes=%ld iterations=%ld batches=%ld median_ns=%.1f min_ns=%.1f max_ns=%.1f "
           "events_per_rank=%ld\n",
           bytes, iterations, batches, median, lat[0], lat[batches - 1],
           2 * (warmup + iterations * batches));
    fflush(stdout);
  }
  free(lat);
  free(buf);
  MPI_Finalize();
  return 0;
}
