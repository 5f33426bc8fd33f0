/* Ring exchange: every rank trades a message with both neighbours, `iterations` times.
 *
 *   ring [iterations [bytes [mode]]]      mode: nonblocking (default) or sendrecv
 *
 * nonblocking: Irecv from left and right, Isend to right and left, Waitall(4): per rank and
 *              iteration 4 + 4 records (Waitall writes one record per request it completes).
 * sendrecv:    Sendrecv to the right / from the left, then to the left / from the right: 2 calls,
 *              4 records (Sendrecv writes a send and a receive record).
 * The payload carries the iteration number, so the bytes on the wire are not all alike.
 *
 * Rank 0 prints one machine-readable line:
 *   ring ranks=2 mode=nonblocking iterations=100000 bytes=8 seconds=0.41 records_per_rank=800000
 * records_per_rank is what the calls above make mstep record (besides Init and Finalize).
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
    fprintf(stderr, "ring: argument %d '%s' is not a non-negative number\n", i, argv[i]);
    exit(2);
  }
  return v;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long iterations = arg(argc, argv, 1, 100000);
  long bytes = arg(argc, argv, 2, 8);
  const char* mode = argc > 3 ? argv[3] : "nonblocking";
  const int sendrecv = strcmp(mode, "sendrecv") == 0;
  if (!sendrecv && strcmp(mode, "nonblocking") != 0) {
    if (rank == 0) fprintf(stderr, "ring: mode must be nonblocking or sendrecv, not '%s'\n", mode);
    MPI_Finalize();
    return 2;
  }
  if (bytes < (long)sizeof(long)) bytes = sizeof(long);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  char* out = calloc((size_t)bytes, 1);
  char* from_left = calloc((size_t)bytes, 1);
  char* from_right = calloc((size_t)bytes, 1);
  if (!out || !from_left || !from_right) MPI_Abort(MPI_COMM_WORLD, 3);

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) {
    memcpy(out, &i, sizeof i);
    if (sendrecv) {
      MPI_Sendrecv(out, (int)bytes, MPI_BYTE, right, 7, from_left, (int)bytes, MPI_BYTE, left, 7,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(out, (int)bytes, MPI_BYTE, left, 8, from_right, (int)bytes, MPI_BYTE, right, 8,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Request req[4];
      MPI_Irecv(from_left, (int)bytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, &req[0]);
      MPI_Irecv(from_right, (int)bytes, MPI_BYTE, right, 8, MPI_COMM_WORLD, &req[1]);
      MPI_Isend(out, (int)bytes, MPI_BYTE, right, 7, MPI_COMM_WORLD, &req[2]);
      MPI_Isend(out, (int)bytes, MPI_BYTE, left, 8, MPI_COMM_WORLD, &req[3]);
      MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    }
    long got = 0;
    memcpy(&got, from_left, sizeof got);
    if (got != i) {
      fprintf(stderr, "ring: rank %d iteration %ld got %ld from the left\n", rank, i, got);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  const double seconds = MPI_Wtime() - t0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ring ranks=%d mode=%s iterations=%ld bytes=%ld seconds=%.3f records_per_rank=%ld\n",
           size, mode, iterations, bytes, seconds, (sendrecv ? 4 : 8) * iterations + 2);
    fflush(stdout);
  }
  free(out);
  free(from_left);
  free(from_right);
  MPI_Finalize();
  return 0;
}
