/* The delay apparatus at work: five phases of 8-byte messages between ranks 0 and 1, each timed
 * by rank 0 with MPI_Wtime (not wrapped, so not recorded):
 *   pingpong  N round trips, MPI_Send/MPI_Recv                      2 one-way messages a round
 *   exchange  N rounds of Irecv(ANY_SOURCE, ANY_TAG) + Isend + Waitall, both ranks at once
 *   sendrecv  N rounds of MPI_Sendrecv, both ranks at once
 *   isend     N rounds of rank 0's MPI_Isend + MPI_Wait (tag 6, the only MPI_Wait calls of the
 *             program) against rank 1's MPI_Recv; rank 1 prints the median time between the ends
 *             of its consecutive receives over the second half ("phase=isend_gap") and the time
 *             from rank 0's start of the phase (the messages carry it; MPI_Wtime is the host's
 *             clock on both ranks of one host) to the end of its last receive ("phase=isend_span")
 *   persistent  N rounds of rank 0's MPI_Start + MPI_Waitany of one MPI_Send_init request (tag 7;
 *             the program's only MPI_Waitany calls) against rank 1's MPI_Recv
 * Rank 0 prints one line per phase: "phase=pingpong rounds=N seconds=S". Extra ranks only call
 * MPI_Init and MPI_Finalize.
 *
 *   delay [rounds]
 */
#include <mpi.h>
#include <stdio.h>

/* GCC takes MPI_STATUSES_IGNORE for a zero-length array (MPICH's access attributes). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 50;
  if (size >= 2 && rank < 2) {
    const int peer = 1 - rank;
    double out = rank, in = 0;
    MPI_Barrier(MPI_COMM_WORLD);  /* not delayed: collectives are outside the apparatus */
    double t0 = MPI_Wtime();
    for (int i = 0; i < rounds; ++i) {
      if (rank == 0) {
        MPI_Send(&out, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(&in, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&in, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&out, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
      }
    }
    if (rank == 0) printf("phase=pingpong rounds=%d seconds=%.9f\n", rounds, MPI_Wtime() - t0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < rounds; ++i) {
      MPI_Request r[2];
      MPI_Irecv(&in, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
      MPI_Isend(&out, 1, MPI_DOUBLE, peer, 2 + i % 3, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    if (rank == 0) printf("phase=exchange rounds=%d seconds=%.9f\n", rounds, MPI_Wtime() - t0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < rounds; ++i)
      MPI_Sendrecv(&out, 1, MPI_DOUBLE, peer, 5, &in, 1, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0) printf("phase=sendrecv rounds=%d seconds=%.9f\n", rounds, MPI_Wtime() - t0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    double* ends = calloc((size_t)rounds, sizeof(double));
    const double sent_out = out;
    if (rank == 0) out = t0;
    for (int i = 0; i < rounds; ++i) {
      if (rank == 0) {
        MPI_Request r;
        MPI_Isend(&out, 1, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&in, 1, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ends[i] = MPI_Wtime();
      }
    }
    if (rank == 0) printf("phase=isend rounds=%d seconds=%.9f\n", rounds, MPI_Wtime() - t0);
    if (rank == 1) {
      /* The median gap between consecutive receive ends over the second half (by then rank 1 has
       * caught up with the messages that were there when it left the barrier). */
      const int from = rounds / 2, n = rounds - 1 - from;
      double* gaps = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
      for (int i = 0; i < n; ++i) gaps[i] = ends[from + i + 1] - ends[from + i];
      qsort(gaps, (size_t)n, sizeof(double), by_value);
      printf("phase=isend_gap rounds=%d seconds=%.9f\n", rounds, n > 0 ? gaps[n / 2] : 0.0);
      printf("phase=isend_span rounds=%d seconds=%.9f\n", rounds, rounds > 0 ? ends[rounds - 1] - in : 0.0);
      free(gaps);
    }
    free(ends);
    out = sent_out;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Request r;
      MPI_Send_init(&out, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r);
      for (int i = 0; i < rounds; ++i) {
        int index = -1;
        MPI_Start(&r);
        MPI_Waitany(1, &r, &index, MPI_STATUS_IGNORE);
      }
      MPI_Request_free(&r);
      printf("phase=persistent rounds=%d seconds=%.9f\n", rounds, MPI_Wtime() - t0);
    } else {
      for (int i = 0; i < rounds; ++i) MPI_Recv(&in, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (in != peer) {
      fprintf(stderr, "delay: rank %d received %g, expected %d\n", rank, in, peer);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } else {
    for (int b = 0; b < 5; ++b) MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
