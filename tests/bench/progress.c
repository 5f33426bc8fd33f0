// Does a rendezvous transfer move while its sender or its receiver computes outside MPI?
//   progress ITER BYTES SENDER_US RECEIVER_US
// Each iteration: rank 0 MPI_Isend(BYTES), computes SENDER_US, MPI_Wait; rank 1 MPI_Irecv,
// computes RECEIVER_US, MPI_Wait; a barrier between iterations. Prints each rank's mean time in
// MPI_Wait. MPICH without an asynchronous progress thread moves a rendezvous only inside MPI
// calls: the Wait of the side that did not compute then takes the other's computation too.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void compute(double seconds) {
  const double t0 = MPI_Wtime();
  while (MPI_Wtime() - t0 < seconds) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5 || size != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 progress ITER BYTES SENDER_US RECEIVER_US\n");
    MPI_Finalize();
    return 2;
  }
  const int iter = atoi(argv[1]);
  const int bytes = atoi(argv[2]);
  const double busy = (rank == 0 ? atof(argv[3]) : atof(argv[4])) * 1e-6;
  char* buf = calloc((size_t)bytes + 1, 1);
  double in_wait = 0;
  for (int i = 0; i < iter; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request req;
    if (rank == 0) MPI_Isend(buf, bytes, MPI_CHAR, 1, i, MPI_COMM_WORLD, &req);
    else MPI_Irecv(buf, bytes, MPI_CHAR, 0, i, MPI_COMM_WORLD, &req);
    compute(busy);
    const double t = MPI_Wtime();
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    in_wait += MPI_Wtime() - t;
  }
  double both[2];
  MPI_Gather(&in_wait, 1, MPI_DOUBLE, both, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("progress: %d B, sender computes %s us, receiver %s us: Wait %.2f us (sender), %.2f us (receiver)\n", bytes,
           argv[3], argv[4], both[0] / iter * 1e6, both[1] / iter * 1e6);
  free(buf);
  MPI_Finalize();
  return 0;
}
