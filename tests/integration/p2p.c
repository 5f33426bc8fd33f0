/* p2p: every blocking point-to-point call mstep wraps, with exactly known counts and bytes.
 * Usage: p2p N [exit_code]   (2 ranks)
 *
 * MPI calls per rank (test_p2p.cpp asserts these; keep both in step):
 *   phase 1, ping-pong, N times: rank 0 Send(16 int, tag 1) then Recv(16 int, tag 2);
 *                                rank 1 Recv then Send.
 *   phase 2, Ssend:   rank 0 Ssend(8 double = 64 B, tag 3);          rank 1 Recv.
 *   phase 3, Bsend:   rank 0 Bsend(10 int = 40 B, tag 4) with a buffer attached; rank 1 Recv.
 *   phase 4, Rsend:   rank 1 Irecv(4 int, tag 5), Barrier, Wait;     rank 0 Barrier, Rsend(16 B).
 *   phase 5, Sendrecv: both send 5 int (20 B, tag 6) to and receive 5 int from the other.
 *   phase 6, Sendrecv_replace: both exchange 3 double (24 B, tag 7).
 *   phase 7, Probe:   rank 0 Send(7 int = 28 B, tag 8);  rank 1 Probe(ANY_SOURCE, ANY_TAG),
 *                     Get_count, Recv(exactly that count from the probed source and tag).
 *   phase 8, Iprobe:  rank 1 Send(2 int = 8 B, tag 9);   rank 0 Iprobe(1, 9) until found, then Recv.
 *                     Rank 0 prints "iprobe_calls=K" (K = its Iprobe calls, K-1 of them empty).
 * Both ranks then MPI_Finalize and return exit_code (default 0) unless a check failed (then 1).
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!two_ranks("p2p", argc, NULL)) return 2;
  const int n = argc > 1 ? atoi(argv[1]) : 10;
  const int exit_code = argc > 2 ? atoi(argv[2]) : 0;
  const int me = g_rank, other = 1 - g_rank;
  MPI_Status st;

  /* 1: ping-pong */
  int ping[16], pong[16];
  for (int i = 0; i < n; ++i) {
    if (me == 0) {
      for (int k = 0; k < 16; ++k) ping[k] = i * 100 + k;
      CHECK_RC(MPI_Send(ping, 16, MPI_INT, 1, 1, MPI_COMM_WORLD));
      CHECK_RC(MPI_Recv(pong, 16, MPI_INT, 1, 2, MPI_COMM_WORLD, &st));
      for (int k = 0; k < 16; ++k) CHECK(pong[k] == -(i * 100 + k));
    } else {
      CHECK_RC(MPI_Recv(ping, 16, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
      for (int k = 0; k < 16; ++k) pong[k] = -ping[k];
      CHECK(ping[15] == i * 100 + 15);
      CHECK_RC(MPI_Send(pong, 16, MPI_INT, 0, 2, MPI_COMM_WORLD));
    }
  }

  /* 2: Ssend */
  double d8[8];
  if (me == 0) {
    for (int k = 0; k < 8; ++k) d8[k] = 0.5 * k;
    CHECK_RC(MPI_Ssend(d8, 8, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD));
  } else {
    memset(d8, 0, sizeof d8);
    CHECK_RC(MPI_Recv(d8, 8, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &st));
    CHECK(d8[7] == 3.5 && st.MPI_SOURCE == 0 && st.MPI_TAG == 3);
  }

  /* 3: Bsend */
  int i10[10];
  if (me == 0) {
    int pack = 0;
    MPI_Pack_size(10, MPI_INT, MPI_COMM_WORLD, &pack);
    const int bufsize = pack + MPI_BSEND_OVERHEAD;
    void* buffer = malloc((size_t)bufsize);
    CHECK_RC(MPI_Buffer_attach(buffer, bufsize));
    for (int k = 0; k < 10; ++k) i10[k] = 1000 + k;
    CHECK_RC(MPI_Bsend(i10, 10, MPI_INT, 1, 4, MPI_COMM_WORLD));
    void* detached = NULL;
    int detached_size = 0;
    CHECK_RC(MPI_Buffer_detach(&detached, &detached_size));
    CHECK(detached == buffer && detached_size == bufsize);
    free(buffer);
  } else {
    CHECK_RC(MPI_Recv(i10, 10, MPI_INT, 0, 4, MPI_COMM_WORLD, &st));
    CHECK(i10[0] == 1000 && i10[9] == 1009);
  }

  /* 4: Rsend: the receive is posted before the barrier, the ready send comes after it */
  int i4[4] = {0, 0, 0, 0};
  if (me == 1) {
    MPI_Request r;
    CHECK_RC(MPI_Irecv(i4, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(i4[0] == 4 && i4[3] == 7 && st.MPI_TAG == 5);
  } else {
    for (int k = 0; k < 4; ++k) i4[k] = 4 + k;
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Rsend(i4, 4, MPI_INT, 1, 5, MPI_COMM_WORLD));
  }

  /* 5: Sendrecv */
  int s5[5], r5[5];
  for (int k = 0; k < 5; ++k) s5[k] = me * 10 + k;
  CHECK_RC(MPI_Sendrecv(s5, 5, MPI_INT, other, 6, r5, 5, MPI_INT, other, 6, MPI_COMM_WORLD, &st));
  CHECK(r5[4] == other * 10 + 4 && st.MPI_SOURCE == other && st.MPI_TAG == 6);

  /* 6: Sendrecv_replace */
  double d3[3] = {me + 0.25, me + 0.5, me + 0.75};
  CHECK_RC(MPI_Sendrecv_replace(d3, 3, MPI_DOUBLE, other, 7, other, 7, MPI_COMM_WORLD, &st));
  CHECK(d3[0] == other + 0.25 && d3[2] == other + 0.75);

  /* 7: Probe then Recv of the probed size */
  if (me == 0) {
    int i7[7] = {70, 71, 72, 73, 74, 75, 76};
    CHECK_RC(MPI_Send(i7, 7, MPI_INT, 1, 8, MPI_COMM_WORLD));
  } else {
    CHECK_RC(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 7 && st.MPI_SOURCE == 0 && st.MPI_TAG == 8);
    int* buf = malloc(sizeof(int) * (size_t)(count > 0 ? count : 1));
    CHECK_RC(MPI_Recv(buf, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
    CHECK(buf[0] == 70 && buf[6] == 76);
    free(buf);
  }

  /* 8: Iprobe loop */
  if (me == 1) {
    int i2[2] = {90, 91};
    CHECK_RC(MPI_Send(i2, 2, MPI_INT, 0, 9, MPI_COMM_WORLD));
  } else {
    int flag = 0, calls = 0;
    while (!flag) {
      CHECK_RC(MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, &st));
      ++calls;
    }
    int i2[2] = {0, 0};
    CHECK_RC(MPI_Recv(i2, 2, MPI_INT, 1, 9, MPI_COMM_WORLD, &st));
    CHECK(i2[0] == 90 && i2[1] == 91);
    printf("iprobe_calls=%d\n", calls);
    fflush(stdout);
  }

  MPI_Finalize();
  return g_errors ? 1 : exit_code;
}
