/* Does a message cost more when its bytes were written just before it is sent? `mstep calibrate`
 * times its exchanges and collectives on buffers nobody writes between the calls; a program sends
 * what it has just computed (a halo packed, counts filled in, a row eliminated). For each size,
 * ranks 0 and 1 time `calls` MPI_Sendrecv exchanges three ways, alternating, each call timed alone
 * (MPI_Wtime on each side of it, so that the writing itself is not counted):
 *   untouched: nothing between the calls (the calibration's loop);
 *   written:   each rank writes its whole send block before each call (one store per 8 bytes);
 *   read:      each rank reads its whole receive block before each call (the received data used).
 * Two rounds per size, so that a change of the machine's period shows. Both ranks' mean per call.
 *
 *   mpiexec.mpich -n 2 written [calls]            default 2000; sizes 4 KiB to 64 KiB
 *
 * Measured here (README, "Data written just before it is sent"): on shared memory a written block
 * of 8800 B costs about 1 us more an exchange than an untouched one (+20%).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kUntouched, kWritten, kRead, kModes };
static const char* const kNames[kModes] = {"untouched", "written", "read"};

/* Seconds per call inside the calls of one loop, this rank's. */
static double loop(int mode, int calls, int bytes, double* out, double* in, int other, volatile double* sink) {
  const int words = bytes / (int)sizeof(double);
  double inside = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < calls; ++i) {
    if (mode == kWritten)
      for (int w = 0; w < words; ++w) out[w] = (double)(i + w);
    if (mode == kRead) {
      double sum = 0;
      for (int w = 0; w < words; w += 8) sum += in[w];
      *sink += sum;
    }
    const double t0 = MPI_Wtime();
    MPI_Sendrecv(out, bytes, MPI_BYTE, other, 0, in, bytes, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    inside += MPI_Wtime() - t0;
  }
  return inside / calls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int calls = argc > 1 ? atoi(argv[1]) : 2000;
  if (size != 2 || calls < 1) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 written [calls >= 1]\n");
    MPI_Finalize();
    return 1;
  }
  static const int sizes[] = {4096, 8800, 16384, 33024, 65536};
  double* out = calloc(65536 / sizeof(double), sizeof(double));
  double* in = calloc(65536 / sizeof(double), sizeof(double));
  if (!out || !in) MPI_Abort(MPI_COMM_WORLD, 2);
  volatile double sink = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    for (int round = 0; round < 2; ++round) {
      double mine[kModes], both[kModes];
      for (int mode = 0; mode < kModes; ++mode) mine[mode] = loop(mode, calls, sizes[s], out, in, 1 - rank, &sink);
      MPI_Allreduce(mine, both, kModes, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (rank == 0) {
        printf("written bytes=%d round=%d", sizes[s], round);
        for (int mode = 0; mode < kModes; ++mode) printf(" %s_us=%.2f", kNames[mode], both[mode] / 2 * 1e6);
        printf(" written_added_us=%.2f read_added_us=%.2f\n", (both[kWritten] - both[kUntouched]) / 2 * 1e6,
               (both[kRead] - both[kUntouched]) / 2 * 1e6);
      }
    }
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
