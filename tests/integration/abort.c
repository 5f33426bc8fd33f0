/* abort: rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3) after three messages.
 * Usage: abort   (2 ranks)
 * Rank 0: Send(4 int, tags 1, 2, 3) to rank 1, then Barrier (never completes: the job is aborted).
 * Rank 1: three Recv, then MPI_Abort(MPI_COMM_WORLD, 3). The events before the abort are all in
 * rank 1's trace (the recorder flushes its buffer before passing MPI_Abort on). */
#include <mpi.h>
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int msg[4] = {0, 0, 0, 0};
  for (int tag = 1; tag <= 3; ++tag) {
    if (g_rank == 0) {
      msg[0] = tag;
      CHECK_RC(MPI_Send(msg, 4, MPI_INT, 1, tag, MPI_COMM_WORLD));
    } else if (g_rank == 1) {
      CHECK_RC(MPI_Recv(msg, 4, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
  }
  if (g_rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
