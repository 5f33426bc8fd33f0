/* Resident memory over a long run of cheap MPI calls, to show that a recorder's memory is flat.
 *
 *   memory [iterations [probes [samples]]]
 *
 * Every rank, per iteration: Irecv from and Isend to its neighbour, Waitall(2), then `probes`
 * MPI_Iprobe calls that find nothing. mstep records 4 + probes events per iteration (Waitall
 * writes one record per request), so the defaults (1,000,000 iterations, 6 probes) make 10 million
 * events per rank (plus Init, Reduce, Finalize), with a request table, M-steps (one per exchange)
 * and trace flushes in play.
 *
 * VmRSS (/proc/self/status) is read right after MPI_Init, `samples` times during the loop and at the
 * end. Rank 0 prints, as the maximum over all ranks:
 *   memory ranks=2 iterations=1000000 events_per_rank=10000002 rss_start_kib=... growth_kib=...
 *          late_growth_kib=... seconds=...
 * growth_kib: highest sample minus the sample after MPI_Init. late_growth_kib: highest sample
 * minus the sample taken after the first tenth of the loop; a recorder with flat memory has
 * reached its working set by then, so this stays near zero however long the run.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long arg(int argc, char** argv, int i, long def) {
  if (argc <= i) return def;
  char* end = NULL;
  const long v = strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 0) {
    fprintf(stderr, "memory: argument %d '%s' is not a non-negative number\n", i, argv[i]);
    exit(2);
  }
  return v;
}

/* VmRSS in KiB, -1 if unreadable. */
static long rss_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "VmRSS:", 6) == 0) {
      kib = strtol(line + 6, NULL, 10);
      break;
    }
  }
  fclose(f);
  return kib;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long start_kib = rss_kib();
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long iterations = arg(argc, argv, 1, 1000000);
  const long probes = arg(argc, argv, 2, 6);
  long samples = arg(argc, argv, 3, 100);
  if (samples < 10) samples = 10;
  const long every = iterations / samples > 0 ? iterations / samples : 1;
  const long tenth = iterations / 10;
  const int peer_out = (rank + 1) % size, peer_in = (rank + size - 1) % size;

  long max_kib = start_kib, tenth_kib = -1;
  long out = 0, in = 0;
  const double t0 = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) {
    MPI_Request req[2];
    out = i;
    MPI_Irecv(&in, 1, MPI_LONG, peer_in, 3, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&out, 1, MPI_LONG, peer_out, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    if (in != i) {
      fprintf(stderr, "memory: rank %d iteration %ld received %ld\n", rank, i, in);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
    for (long p = 0; p < probes; ++p) {
      int flag = 0;
      MPI_Iprobe(peer_in, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    if (i % every == 0 || i == tenth || i == iterations - 1) {
      const long k = rss_kib();
      if (k > max_kib) max_kib = k;
      if (i == tenth) tenth_kib = k;
    }
  }
  const double seconds = MPI_Wtime() - t0;
  const long end_kib = rss_kib();
  if (end_kib > max_kib) max_kib = end_kib;
  if (tenth_kib < 0) tenth_kib = start_kib;

  long mine[4] = {start_kib, max_kib - start_kib, max_kib - tenth_kib, end_kib}, all[4] = {0};
  MPI_Reduce(mine, all, 4, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("memory ranks=%d iterations=%ld events_per_rank=%ld rss_start_kib=%ld growth_kib=%ld "
           "late_growth_kib=%ld rss_end_kib=%ld seconds=%.2f\n",
           size, iterations, (4 + probes) * iterations + 3, all[0], all[1], all[2], all[3],
           seconds);
    fflush(stdout);
  }
  MPI_Finalize();
  return start_kib < 0 ? 1 : 0;
}
