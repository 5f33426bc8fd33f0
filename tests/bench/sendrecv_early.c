/* What a call costs when the message it receives is already there: does MPI_Sendrecv take the
 * send's overhead and the receive's one after the other (LogGOPSim's one CPU: about their sum), or
 * side by side (mstep's replay: the larger)? And does the MPI_Wait of an MPI_Irecv whose message
 * arrived while the rank computed still pay the receive (MPICH progresses only inside MPI calls),
 * or was it paid in the background (mstep's replay: the receive's o from max(post, arrival))? Rank
 * 1 arrives `late_us` late (busy-waiting; after its Irecv for the last kind), so rank 0's message is
 * there when it calls; rank 1's median, 10th and 90th percentile over `calls` calls of MPI_Sendrecv
 * (bytes each way), MPI_Send alone, MPI_Recv of a message already there and that MPI_Wait, in ns.
 * README, "the fourth difference" from LogGOPSim.
 *
 *   mpiexec.mpich -n 2 sendrecv_early [calls [bytes [late_us]]]     defaults 20000, 8, 20
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void spin(double us) {
  const double t = MPI_Wtime();
  while ((MPI_Wtime() - t) * 1e6 < us) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int calls = argc > 1 ? atoi(argv[1]) : 20000;
  const int bytes = argc > 2 ? atoi(argv[2]) : 8;
  const double late_us = argc > 3 ? atof(argv[3]) : 20;
  if (size != 2 || calls < 10 || bytes < 0 || late_us < 0) {
    if (rank == 0) fprintf(stderr, "sendrecv_early: 2 ranks; calls >= 10, bytes >= 0, late_us >= 0\n");
    MPI_Finalize();
    return 2;
  }
  double* d = malloc(sizeof(double) * (size_t)calls * 4);
  char* s = calloc((size_t)bytes + 1, 1);
  char* r = calloc((size_t)bytes + 1, 1);
  for (int kind = 0; kind < 4; ++kind)
    for (int i = 0; i < calls; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        if (kind == 0) MPI_Sendrecv(s, bytes, MPI_CHAR, 1, 0, r, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (kind == 1) MPI_Recv(r, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else MPI_Send(s, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      } else {
        MPI_Request req = MPI_REQUEST_NULL;
        if (kind == 3) MPI_Irecv(r, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &req);
        spin(late_us);
        const double t = MPI_Wtime();
        if (kind == 0) MPI_Sendrecv(s, bytes, MPI_CHAR, 0, 0, r, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (kind == 1) MPI_Send(s, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        else if (kind == 2) MPI_Recv(r, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else MPI_Wait(&req, MPI_STATUS_IGNORE);
        d[(size_t)kind * (size_t)calls + (size_t)i] = (MPI_Wtime() - t) * 1e9;
      }
    }
  if (rank == 1) {
    const char* name[4] = {"Sendrecv, its message there", "Send", "Recv, its message there",
                           "Wait of an Irecv, arrived"};
    for (int k = 0; k < 4; ++k) {
      double* x = d + (size_t)k * (size_t)calls;
      qsort(x, (size_t)calls, sizeof(double), by_value);
      printf("%-28s median %.0f ns, p10 %.0f, p90 %.0f\n", name[k], x[calls / 2], x[calls / 10], x[9 * calls / 10]);
    }
  }
  free(d);
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
