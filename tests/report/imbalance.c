/* imbalance: two ranks exchange 8 KiB each step; rank 0 computes HEAVY_MS per step, rank 1
 * LIGHT_MS, for STEPS steps. Usage: imbalance [steps] [heavy_ms] [light_ms]. */
#include <mpi.h>
#include <stdlib.h>
#include "spin.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  const double heavy = argc > 2 ? atof(argv[2]) : 2.0, light = argc > 3 ? atof(argv[3]) : 1.0;
  static char out[8192], in[8192];
  const int peer = 1 - rank;
  for (int s = 0; s < steps; ++s) {
    spin_ms(rank == 0 ? heavy : light);
    MPI_Sendrecv(out, sizeof out, MPI_BYTE, peer, s, in, sizeof in, MPI_BYTE, peer, s, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
