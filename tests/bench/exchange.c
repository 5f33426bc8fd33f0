/* Two messages at once in opposite directions against one at a time: does a transport overlap
 * them? For each size, rank 0 and 1 time `calls` iterations of three loops, alternating: a blocking
 * ping-pong (its half round trip: one message at a time), MPI_Sendrecv both ways, and
 * MPI_Irecv + MPI_Isend + MPI_Waitall both ways. LogGP and LogGPS let the two directions of an
 * exchange proceed side by side, so they predict an exchange in about one half round trip (plus one
 * overhead); `ratio` is the Sendrecv's time over the half round trip. Two rounds per size, so that
 * a change of the machine's period shows.
 *
 *   mpiexec.mpich -n 2 exchange [calls]            default 2000; sizes 8 B to 256 KiB
 *
 * Measured here (README, "Validation", the cg case): about 1.1 on shared memory, 1.3-1.7 over UCX's
 * TCP (UCX_TLS=tcp,self) at every size from 4 KiB on.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int calls = argc > 1 ? atoi(argv[1]) : 2000;
  if (size < 2 || calls < 1) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 exchange [calls >= 1]\n");
    MPI_Finalize();
    return 1;
  }
  static const int sizes[] = {8, 4096, 8800, 16384, 65536, 262144};
  char* out = calloc(262144, 1);
  char* in = calloc(262144, 1);
  if (rank < 2) {
    const int other = 1 - rank;
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &pair);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
      const int k = sizes[s];
      for (int round = 0; round < 2; ++round) {
        MPI_Barrier(pair);
        double t0 = MPI_Wtime();
        for (int i = 0; i < calls; ++i) {
          if (rank == 0) {
            MPI_Send(out, k, MPI_BYTE, other, 0, MPI_COMM_WORLD);
            MPI_Recv(in, k, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            MPI_Recv(in, k, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, k, MPI_BYTE, other, 0, MPI_COMM_WORLD);
          }
        }
        const double half_rtt = (MPI_Wtime() - t0) / (2.0 * calls);
        MPI_Barrier(pair);
        t0 = MPI_Wtime();
        for (int i = 0; i < calls; ++i)
          MPI_Sendrecv(out, k, MPI_BYTE, other, 1, in, k, MPI_BYTE, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double sendrecv = (MPI_Wtime() - t0) / calls;
        MPI_Barrier(pair);
        t0 = MPI_Wtime();
        for (int i = 0; i < calls; ++i) {
          MPI_Request requests[2];
          MPI_Status statuses[2];
          MPI_Irecv(in, k, MPI_BYTE, other, 2, MPI_COMM_WORLD, &requests[0]);
          MPI_Isend(out, k, MPI_BYTE, other, 2, MPI_COMM_WORLD, &requests[1]);
          MPI_Waitall(2, requests, statuses);
        }
        const double nonblocking = (MPI_Wtime() - t0) / calls;
        if (rank == 0)
          printf("exchange bytes=%d round=%d half_rtt_us=%.2f sendrecv_us=%.2f isend_irecv_us=%.2f ratio=%.2f\n", k,
                 round, half_rtt * 1e6, sendrecv * 1e6, nonblocking * 1e6, sendrecv / half_rtt);
      }
    }
    MPI_Comm_free(&pair);
  } else {
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, 1, rank, &pair);
    MPI_Comm_free(&pair);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
