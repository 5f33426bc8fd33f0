/* late_sender: rank 0 computes WAIT_MS milliseconds, then sends 8 bytes; rank 1 is already in
 * MPI_Recv at LATE_SENDER_LINE and waits about WAIT_MS, REPEAT times. */
#include <mpi.h>
#include <stdlib.h>
#include "spin.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double wait_ms = argc > 1 ? atof(argv[1]) : 20.0;
  const int repeat = argc > 2 ? atoi(argv[2]) : 5;
  double x = 1.0;
  for (int i = 0; i < repeat; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      spin_ms(wait_ms);
      MPI_Send(&x, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(&x, 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* LATE_SENDER_LINE */
    }
  }
  MPI_Finalize();
  return 0;
}
