/* no_finalize: communicates, then exits without MPI_Finalize. Usage: no_finalize   (2 ranks)
 * Rank 0: Send(4 int, tags 1, 2, 3) to rank 1; rank 1: three Recv. Then both Barrier and exit(0).
 * The trace must still be readable (every rank "unfinished (no MPI_Finalize)"). */
#include <mpi.h>
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int msg[4] = {0, 0, 0, 0};
  for (int tag = 1; tag <= 3; ++tag) {
    if (g_rank == 0) {
      msg[0] = tag * 11;
      CHECK_RC(MPI_Send(msg, 4, MPI_INT, 1, tag, MPI_COMM_WORLD));
    } else if (g_rank == 1) {
      CHECK_RC(MPI_Recv(msg, 4, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(msg[0] == tag * 11);
    }
  }
  CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
  fflush(stdout);
  exit(g_errors ? 1 : 0);
}
