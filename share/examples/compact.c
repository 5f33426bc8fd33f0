/* compact: each rank keeps a varying number of items per bin every step and must know where its items
 * go in the global order, the bookkeeping of stream compaction, load balancing and parallel output:
 * MPI_Exscan of the per-bin counts gives each rank its offsets (the counts of the ranks below it),
 * MPI_Scan of the same counts the running totals up to and including it. Between the two scans of
 * a step a rank computes (`work` multiply-adds), so the run is collectives and computation.
 * Usage: compact [steps] [bins] [work]   (defaults 2000 2 2000; bins ints a message, so 2048 bins
 * make 8 KiB, S here)
 * Every count is a function of (rank, step, bin), so each rank checks its offsets and totals
 * against the sums it computes itself, at the last step; exits non-zero if one differs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The items rank r keeps in bin b at step s: 0..15. */
static int kept(int r, int s, int b) {
  unsigned x = (unsigned)r * 2654435761u ^ (unsigned)s * 40503u ^ (unsigned)b * 2246822519u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (int)(x & 15u);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 2000;
  const int bins = argc > 2 ? atoi(argv[2]) : 2;
  const int work = argc > 3 ? atoi(argv[3]) : 2000;
  if (steps < 1 || bins < 1 || work < 0) {
    if (rank == 0) fprintf(stderr, "usage: compact [steps >= 1] [bins >= 1] [work >= 0]\n");
    MPI_Finalize();
    return 2;
  }
  int* counts = malloc(sizeof(int) * (size_t)bins);
  int* offsets = malloc(sizeof(int) * (size_t)bins);
  int* totals = malloc(sizeof(int) * (size_t)bins);
  if (!counts || !offsets || !totals) {
    fprintf(stderr, "compact: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  volatile double sink = 0.0;
  for (int s = 0; s < steps; ++s) {
    for (int b = 0; b < bins; ++b) counts[b] = kept(rank, s, b), offsets[b] = 0;
    MPI_Exscan(counts, offsets, bins, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double acc = (double)rank;
    for (int i = 0; i < work; ++i) acc = acc * 0.999999 + (double)counts[i % bins];
    sink = sink + acc;
    MPI_Scan(counts, totals, bins, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (s == steps - 1) {
      int bad = 0;
      for (int b = 0; b < bins; ++b) {
        int below = 0;
        for (int r = 0; r < rank; ++r) below += kept(r, s, b);
        if ((rank > 0 && offsets[b] != below) || totals[b] != below + counts[b]) ++bad;
      }
      if (bad) {
        fprintf(stderr, "compact: rank %d: %d of %d bins wrong at step %d\n", rank, bad, bins, s);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  if (rank == 0) printf("compact: %d ranks, %d steps of %d bins: ok\n", size, steps, bins);
  free(counts), free(offsets), free(totals);
  MPI_Finalize();
  return 0;
}
