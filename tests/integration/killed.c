/* killed: ping-pong between ranks 0 and 1 for a long time, so that a test can kill a rank while
 * it runs (SIGKILL or SIGTERM) and check what the trace kept.
 * Usage: killed [seconds [pause_us [rounds]]]   (2 ranks)
 * Every round: rank 0 Send(4 int = 16 B, tag 1), Recv(tag 2); rank 1 Recv, then Send(tag 2).
 * Rank 1 sleeps pause_us microseconds (default 50) per round, to pace the trace's growth. The run
 * finishes normally after `seconds` (default 120; checked every 64 rounds) or after exactly
 * `rounds` rounds (default: no limit), whichever comes first. */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  const double seconds = argc > 1 ? atof(argv[1]) : 120.0;
  const long pause_us = argc > 2 ? atol(argv[2]) : 50;
  const long rounds = argc > 3 ? atol(argv[3]) : -1;
  const struct timespec pause = {pause_us / 1000000, (pause_us % 1000000) * 1000};
  const double start = MPI_Wtime();
  int msg[4] = {0, 0, 0, 0};
  int stop = 0;
  for (long i = 0; !stop; ++i) {
    if (g_rank == 0) {
      msg[0] = (int)i;
      /* Rank 0 decides when to stop and tells rank 1 in the message. */
      if ((i % 64 == 0 && MPI_Wtime() - start > seconds) || i + 1 == rounds) stop = 1;
      msg[1] = stop;
      MPI_Send(msg, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(msg, 4, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(msg[0] == (int)i + 1);
    } else if (g_rank == 1) {
      MPI_Recv(msg, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      stop = msg[1];
      msg[0] += 1;
      if (pause_us > 0) nanosleep(&pause, NULL);
      MPI_Send(msg, 4, MPI_INT, 0, 2, MPI_COMM_WORLD);
    } else {
      stop = 1;
    }
  }
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
