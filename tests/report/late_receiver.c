/* late_receiver: rank 0 sends 1 MiB (rendezvous) while rank 1 computes for WAIT_MS milliseconds
 * before posting its receive, REPEAT times. The send at LATE_RECEIVER_LINE waits about WAIT_MS. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "spin.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double wait_ms = argc > 1 ? atof(argv[1]) : 20.0;
  const int repeat = argc > 2 ? atoi(argv[2]) : 5;
  const int n = 1 << 20;
  char* buf = malloc(n);
  memset(buf, rank, n);
  for (int i = 0; i < repeat; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Send(buf, n, MPI_BYTE, 1, i, MPI_COMM_WORLD); /* LATE_RECEIVER_LINE */
    } else if (rank == 1) {
      spin_ms(wait_ms);
      MPI_Recv(buf, n, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
