/* coverage: persistent requests, matched probes, prefix reductions and nonblocking collectives.
 * Usage: coverage R   (2 ranks; both do the same calls with the other rank as partner, root 0)
 *
 * MPI calls per rank (test_coverage.cpp asserts these; keep both in step), m = 4 bytes an int:
 *   A persistent: Send_init(4 int, tag 30), Recv_init(4 int, tag 30), R x (Startall(2), Waitall(2));
 *     Ssend_init(2 int, tag 31), Recv_init(2 int, ANY_SOURCE, tag 31), Start(recv), Start(send),
 *     Wait(send), Wait(recv); Request_free x4.
 *   B matched probe: Send(3 int, tag 40), Send(5 int, tag 41), Mprobe(tag 40), Mrecv,
 *     Improbe(tag 41) until found (IP calls), Imrecv, Wait.
 *   C Scan(1 int), Exscan(2 int).
 *   D Ibarrier, Wait; Ibcast(4 int), Wait; Iallreduce(2 int), Test until done (IT calls);
 *     Ireduce(3 int), Igather(1 int), Iscatter(1 int), Ialltoall(1 int), Iallgather(2 int),
 *     Ireduce_scatter_block(1 int), Iscan(1 int), Waitall(7);
 *     Igatherv(1 int), Iscatterv(2 int), Iallgatherv(1 int), Ialltoallv(1 int), Ireduce_scatter(1 int),
 *     Iexscan(1 int), Waitall(6).
 *   E cancel: Irecv(1 int, tag 50: never sent), Cancel, Wait (the status says cancelled).
 *   F Alltoallw, then Ialltoallw and Wait: to rank 0 3 MPI_SHORT (6 B), to rank 1 2 MPI_INT (8 B).
 * Each rank prints one line "rank R improbe=IP test=IT".
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* GCC takes MPI_STATUSES_IGNORE for a zero-length array (MPICH's access attributes). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#include "check.h"

#define WORLD MPI_COMM_WORLD

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!two_ranks("coverage", argc, "a round count")) return 2;
  const int rounds = atoi(argv[1]);
  const int me = g_rank, other = 1 - g_rank;
  int out[8], in[8];
  MPI_Request p[4], rq[8];
  MPI_Status sts[8], st;

  /* A: persistent requests */
  CHECK_RC(MPI_Send_init(out, 4, MPI_INT, other, 30, WORLD, &p[0]));
  CHECK_RC(MPI_Recv_init(in, 4, MPI_INT, other, 30, WORLD, &p[1]));
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 4; ++k) out[k] = me * 1000 + r * 10 + k;
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_Startall(2, p));
    CHECK_RC(MPI_Waitall(2, p, sts));
    CHECK(in[3] == other * 1000 + r * 10 + 3 && sts[1].MPI_TAG == 30);
    CHECK(p[0] != MPI_REQUEST_NULL && p[1] != MPI_REQUEST_NULL); /* inactive, not freed */
  }
  CHECK_RC(MPI_Ssend_init(out, 2, MPI_INT, other, 31, WORLD, &p[2]));
  CHECK_RC(MPI_Recv_init(in, 2, MPI_INT, MPI_ANY_SOURCE, 31, WORLD, &p[3]));
  out[0] = me + 7;
  CHECK_RC(MPI_Start(&p[3]));
  CHECK_RC(MPI_Start(&p[2]));
  CHECK_RC(MPI_Wait(&p[2], MPI_STATUS_IGNORE));
  CHECK_RC(MPI_Wait(&p[3], &st));
  CHECK(st.MPI_SOURCE == other && in[0] == other + 7);
  for (int k = 0; k < 4; ++k) CHECK_RC(MPI_Request_free(&p[k]));

  /* B: matched probe */
  for (int k = 0; k < 8; ++k) out[k] = me * 100 + k;
  CHECK_RC(MPI_Send(out, 3, MPI_INT, other, 40, WORLD));
  CHECK_RC(MPI_Send(out, 5, MPI_INT, other, 41, WORLD));
  MPI_Message msg;
  CHECK_RC(MPI_Mprobe(other, 40, WORLD, &msg, &st));
  CHECK_RC(MPI_Mrecv(in, 3, MPI_INT, &msg, &st));
  CHECK(in[2] == other * 100 + 2 && st.MPI_TAG == 40);
  int improbe = 0, found = 0;
  while (!found) {
    CHECK_RC(MPI_Improbe(other, 41, WORLD, &found, &msg, &st));
    ++improbe;
  }
  CHECK_RC(MPI_Imrecv(in, 5, MPI_INT, &msg, &rq[0]));
  CHECK_RC(MPI_Wait(&rq[0], &st));
  CHECK(in[4] == other * 100 + 4 && st.MPI_SOURCE == other);

  /* C: prefix reductions */
  int one = me + 1, two[2] = {me + 1, me + 2}, sum = 0, sums[2] = {0, 0};
  CHECK_RC(MPI_Scan(&one, &sum, 1, MPI_INT, MPI_SUM, WORLD));
  CHECK(sum == (me == 0 ? 1 : 3));
  CHECK_RC(MPI_Exscan(two, sums, 2, MPI_INT, MPI_SUM, WORLD));
  if (me == 1) CHECK(sums[0] == 1 && sums[1] == 2);

  /* D: nonblocking collectives */
  CHECK_RC(MPI_Ibarrier(WORLD, &rq[0]));
  CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
  int b[4] = {0, 0, 0, 0};
  if (me == 0) b[0] = 11, b[3] = 44;
  CHECK_RC(MPI_Ibcast(b, 4, MPI_INT, 0, WORLD, &rq[0]));
  CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
  CHECK(b[0] == 11 && b[3] == 44);
  int ar[2];
  CHECK_RC(MPI_Iallreduce(two, ar, 2, MPI_INT, MPI_SUM, WORLD, &rq[0]));
  int test = 0, done = 0;
  while (!done) {
    CHECK_RC(MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE));
    ++test;
  }
  CHECK(ar[0] == 3 && ar[1] == 5);

  int red[3] = {0, 0, 0}, three[3] = {1, 2, 3}, g[2] = {0, 0}, sc = 0, scat[2] = {5, 6};
  int a2a_out[2] = {me * 10, me * 10 + 1}, a2a_in[2] = {0, 0}, ag[4] = {0, 0, 0, 0}, rsb = 0, isc = 0;
  CHECK_RC(MPI_Ireduce(three, red, 3, MPI_INT, MPI_SUM, 0, WORLD, &rq[0]));
  CHECK_RC(MPI_Igather(&one, 1, MPI_INT, g, 1, MPI_INT, 0, WORLD, &rq[1]));
  CHECK_RC(MPI_Iscatter(scat, 1, MPI_INT, &sc, 1, MPI_INT, 0, WORLD, &rq[2]));
  CHECK_RC(MPI_Ialltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, WORLD, &rq[3]));
  CHECK_RC(MPI_Iallgather(two, 2, MPI_INT, ag, 2, MPI_INT, WORLD, &rq[4]));
  int rsb_in[2] = {1, 2};
  CHECK_RC(MPI_Ireduce_scatter_block(rsb_in, &rsb, 1, MPI_INT, MPI_SUM, WORLD, &rq[5]));
  CHECK_RC(MPI_Iscan(&one, &isc, 1, MPI_INT, MPI_SUM, WORLD, &rq[6]));
  CHECK_RC(MPI_Waitall(7, rq, sts));
  if (me == 0) CHECK(red[2] == 6 && g[1] == 2);
  CHECK(sc == 5 + me && a2a_in[0] == me && ag[3] == 3 && rsb == 2 * (me + 1) && isc == (me == 0 ? 1 : 3));

  const int counts[2] = {1, 1}, displs[2] = {0, 1}, counts2[2] = {2, 2}, displs2[2] = {0, 2};
  int gv[2] = {0, 0}, sv_out[4] = {1, 2, 3, 4}, sv_in[2] = {0, 0}, agv[2] = {0, 0}, a2av[2] = {0, 0};
  int rs_in[2] = {me, me}, rs = 0, iex = 0;
  CHECK_RC(MPI_Igatherv(&one, 1, MPI_INT, gv, counts, displs, MPI_INT, 0, WORLD, &rq[0]));
  CHECK_RC(MPI_Iscatterv(sv_out, counts2, displs2, MPI_INT, sv_in, 2, MPI_INT, 0, WORLD, &rq[1]));
  CHECK_RC(MPI_Iallgatherv(&one, 1, MPI_INT, agv, counts, displs, MPI_INT, WORLD, &rq[2]));
  CHECK_RC(MPI_Ialltoallv(a2a_out, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT, WORLD, &rq[3]));
  CHECK_RC(MPI_Ireduce_scatter(rs_in, &rs, counts, MPI_INT, MPI_SUM, WORLD, &rq[4]));
  CHECK_RC(MPI_Iexscan(&one, &iex, 1, MPI_INT, MPI_SUM, WORLD, &rq[5]));
  CHECK_RC(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
  if (me == 0) CHECK(gv[1] == 2);
  CHECK(sv_in[1] == (me == 0 ? 2 : 4) && agv[1] == 2 && a2av[1] == 10 + me && rs == 1);
  if (me == 1) CHECK(iex == 1);

  /* E: a receive nobody sends to, cancelled */
  MPI_Request never;
  CHECK_RC(MPI_Irecv(in, 1, MPI_INT, other, 50, WORLD, &never));
  CHECK_RC(MPI_Cancel(&never));
  CHECK_RC(MPI_Wait(&never, &st));
  int was_cancelled = 0;
  MPI_Test_cancelled(&st, &was_cancelled);
  CHECK(was_cancelled);

  /* F: Alltoallw, blocking and nonblocking: the block to rank 0 is 3 MPI_SHORT, to rank 1 2 MPI_INT
   * (displacements in bytes, 16 a peer) */
  char aw_out[32], aw_in[32];
  const int aw_counts[2] = {3, 2}, aw_displs[2] = {0, 16}, my_counts[2] = {aw_counts[me], aw_counts[me]};
  const MPI_Datatype aw_types[2] = {MPI_SHORT, MPI_INT}, my_types[2] = {aw_types[me], aw_types[me]};
  for (int pass = 0; pass < 2; ++pass) {
    memset(aw_in, 0, sizeof aw_in);
    short to0[3] = {(short)(100 + me), (short)(200 + me), (short)(300 + pass)};
    int to1[2] = {1000 + me, 2000 + pass};
    memcpy(aw_out, to0, sizeof to0);
    memcpy(aw_out + 16, to1, sizeof to1);
    if (pass == 0) {
      CHECK_RC(MPI_Alltoallw(aw_out, aw_counts, aw_displs, aw_types, aw_in, my_counts, aw_displs, my_types, WORLD));
    } else {
      CHECK_RC(MPI_Ialltoallw(aw_out, aw_counts, aw_displs, aw_types, aw_in, my_counts, aw_displs, my_types, WORLD, &rq[0]));
      CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    }
    if (me == 0) {
      short got[3];
      memcpy(got, aw_in + 16, sizeof got);
      CHECK(got[0] == 101 && got[1] == 201 && got[2] == 300 + pass);
    } else {
      int got[2];
      memcpy(got, aw_in, sizeof got);
      CHECK(got[0] == 1000 && got[1] == 2000 + pass);
    }
  }

  printf("rank %d improbe=%d test=%d\n", me, improbe, test);
  fflush(stdout);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
