/* probe_scan: does the run's probe place the speed of large copies? At its start and its end it
 * probes the 8-byte and the 64 KiB half round trips between ranks 0 and 1 (best of 8 and of 4; the
 * 64 KiB one also with the buffer written before each send, and 16 KiB written at the start), and
 * between them runs 400 steps of compact's pattern: MPI_Exscan of BINS ints, 2000 multiply-adds,
 * MPI_Scan of BINS ints, each call timed. Rank 1 prints one line: the probes (us, start then end),
 * the MPI_Scan median and mean and the MPI_Exscan median (us a call).
 * Usage: mpiexec.mpich -n 2 build/bench/probe_scan [BINS]   (default 4096: 16 KiB)
 * README "Looked at again in one program" (stop 52): 26 runs, the two probes always agreed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char buf[1 << 17];
static double probe(int rank, int bytes, int rounds, int write) {
  double best = 1e9;
  for (int i = 0; i < rounds; ++i) {
    if (write) memset(buf, i, (size_t)bytes);
    double t = MPI_Wtime();
    if (rank == 0) { MPI_Send(buf, bytes, MPI_CHAR, 1, 7, MPI_COMM_WORLD); MPI_Recv(buf, bytes, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
    else { MPI_Recv(buf, bytes, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(buf, bytes, MPI_CHAR, 0, 7, MPI_COMM_WORLD); }
    t = MPI_Wtime() - t;
    if (t < best) best = t;
  }
  return best / 2 * 1e6;
}
static int cmp(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return (x > y) - (x < y); }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int bins = argc > 1 ? atoi(argv[1]) : 4096, steps = 400;
  double a8 = probe(rank, 8, 8, 0), a64 = probe(rank, 65536, 4, 0), a64w = probe(rank, 65536, 4, 1), a16 = probe(rank, 16384, 4, 1);
  int* c = malloc(4 * bins); int* o = malloc(4 * bins); int* t = malloc(4 * bins);
  double* ts = malloc(sizeof(double) * steps); double* te = malloc(sizeof(double) * steps);
  volatile double sink = 0;
  for (int s = 0; s < steps; ++s) {
    for (int b = 0; b < bins; ++b) c[b] = s + b;
    double x = MPI_Wtime(); MPI_Exscan(c, o, bins, MPI_INT, MPI_SUM, MPI_COMM_WORLD); te[s] = MPI_Wtime() - x;
    double acc = 0; for (int i = 0; i < 2000; ++i) acc = acc * 0.999999 + c[i % bins]; sink += acc;
    x = MPI_Wtime(); MPI_Scan(c, t, bins, MPI_INT, MPI_SUM, MPI_COMM_WORLD); ts[s] = MPI_Wtime() - x;
  }
  double f8 = probe(rank, 8, 8, 0), f64 = probe(rank, 65536, 4, 0), f64w = probe(rank, 65536, 4, 1);
  qsort(ts, steps, sizeof(double), cmp); qsort(te, steps, sizeof(double), cmp);
  double sum = 0; for (int s = 0; s < steps; ++s) sum += ts[s];
  if (rank == 1) printf("p8 %.3f %.3f p64 %.2f %.2f p64w %.2f %.2f p16w %.2f scan_med %.2f scan_mean %.2f exscan_med %.2f\n",
                        a8, f8, a64, f64, a64w, f64w, a16, ts[steps / 2] * 1e6, sum / steps * 1e6, te[steps / 2] * 1e6);
  MPI_Finalize();
  return 0;
}
