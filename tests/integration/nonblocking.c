/* nonblocking: Isend/Irecv completed by every member of the Wait and Test families.
 * Usage: nonblocking   (2 ranks; both ranks do the same calls with the other rank as partner)
 *
 * MPI calls per rank (test_p2p.cpp asserts these; keep both in step):
 *   A Wait:     Irecv(1 int, tag 10), Isend(1 int, tag 10), Wait(recv), Wait(send, STATUS_IGNORE)
 *   B Waitall:  Irecv(4 int, tag 11), Irecv(4 int, tag 12), Isend x2 (same), Waitall(4, statuses)
 *   C Waitany:  Irecv(2 int, tag 13), Isend(2 int, tag 13), Waitany twice
 *   D Waitsome: Irecv(3 int, tag 14), Isend(3 int, tag 14), Waitsome until both done   (W calls)
 *   E Test:     Irecv(1 int, tag 15), Isend, Test(recv) until done (T calls), Wait(send)
 *   F Testall:  Irecv(1 int, tag 16), Isend, Testall(2) until done                     (TA calls)
 *   G Testany:  Irecv(1 int, tag 17), Isend, Testany(2) until both done                (TY calls)
 *   H Testsome: Irecv(1 int, tag 18), Isend, Testsome(2) until both done               (TS calls)
 *   I Irecv(ANY_SOURCE, ANY_TAG, 6 int) x2, Isend(5 int, tag 19), Isend(6 int, tag 20),
 *     Waitall(4, MPI_STATUSES_IGNORE): the trace must still name source and tags 19, 20.
 *   J Issend:   Irecv(1 int, tag 21), Issend(1 int, tag 21), Wait(recv), Wait(send)
 * Totals: Irecv 12, Isend 11, Issend 1, Wait 5, Waitall 2, Waitany 2, Waitsome W, Test T,
 * Testall TA, Testany TY, Testsome TS. Each rank prints one line
 *   "rank R waitsome=W test=T testall=TA testany=TY testsome=TS".
 */
#include <mpi.h>
#include <string.h>

/* GCC takes MPI_STATUSES_IGNORE for a zero-length array (MPICH's access attributes). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#include "check.h"

#define WORLD MPI_COMM_WORLD

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!two_ranks("nonblocking", argc, NULL)) return 2;
  const int me = g_rank, other = 1 - g_rank;
  MPI_Request rq[4];
  MPI_Status st, sts[4];
  int in[8], out[8];
  int in2[8], out2[8];
  int waitsome = 0, test = 0, testall = 0, testany = 0, testsome = 0;
#define FILL(a, base) \
  for (int k_ = 0; k_ < 8; ++k_) (a)[k_] = (base) + k_
  /* Value that rank r sends with tag t, element k: r * 1000 + t * 10 + k. */

  /* A: Wait */
  FILL(out, me * 1000 + 100);
  memset(in, 0, sizeof in);
  CHECK_RC(MPI_Irecv(in, 1, MPI_INT, other, 10, WORLD, &rq[0]));
  CHECK_RC(MPI_Isend(out, 1, MPI_INT, other, 10, WORLD, &rq[1]));
  CHECK_RC(MPI_Wait(&rq[0], &st));
  CHECK(st.MPI_SOURCE == other && st.MPI_TAG == 10 && rq[0] == MPI_REQUEST_NULL);
  CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
  CHECK(in[0] == other * 1000 + 100);

  /* B: Waitall with statuses */
  FILL(out, me * 1000 + 110);
  FILL(out2, me * 1000 + 120);
  CHECK_RC(MPI_Irecv(in, 4, MPI_INT, other, 11, WORLD, &rq[0]));
  CHECK_RC(MPI_Irecv(in2, 4, MPI_INT, other, 12, WORLD, &rq[1]));
  CHECK_RC(MPI_Isend(out, 4, MPI_INT, other, 11, WORLD, &rq[2]));
  CHECK_RC(MPI_Isend(out2, 4, MPI_INT, other, 12, WORLD, &rq[3]));
  CHECK_RC(MPI_Waitall(4, rq, sts));
  CHECK(sts[0].MPI_TAG == 11 && sts[1].MPI_TAG == 12 && sts[1].MPI_SOURCE == other);
  CHECK(in[3] == other * 1000 + 113 && in2[3] == other * 1000 + 123);

  /* C: Waitany, twice */
  FILL(out, me * 1000 + 130);
  CHECK_RC(MPI_Irecv(in, 2, MPI_INT, other, 13, WORLD, &rq[0]));
  CHECK_RC(MPI_Isend(out, 2, MPI_INT, other, 13, WORLD, &rq[1]));
  int seen = 0;
  for (int k = 0; k < 2; ++k) {
    int index = -1;
    CHECK_RC(MPI_Waitany(2, rq, &index, &st));
    CHECK(index == 0 || index == 1);
    if (index == 0 || index == 1) seen |= 1 << index;
    if (index == 0) CHECK(st.MPI_SOURCE == other && st.MPI_TAG == 13);
  }
  CHECK(seen == 3 && in[1] == other * 1000 + 131);

  /* D: Waitsome until both are done */
  FILL(out, me * 1000 + 140);
  CHECK_RC(MPI_Irecv(in, 3, MPI_INT, other, 14, WORLD, &rq[0]));
  CHECK_RC(MPI_Isend(out, 3, MPI_INT, other, 14, WORLD, &rq[1]));
  for (int done = 0; done < 2;) {
    int outcount = 0, idx[2];
    CHECK_RC(MPI_Waitsome(2, rq, &outcount, idx, sts));
    ++waitsome;
    CHECK(outcount >= 1 && outcount <= 2);
    if (outcount < 1 || outcount > 2) break;
    done += outcount;
  }
  CHECK(in[2] == other * 1000 + 142);

  /* E: Test loop on the receive, then Wait on the send */
  FILL(out, me * 1000 + 150);
  CHECK_RC(MPI_Irecv(in, 1, MPI_INT, other, 15, WORLD, &rq[0]));
  CHECK_RC(MPI_Isend(out, 1, MPI_INT, other, 15, WORLD, &rq[1]));
  for (int flag = 0; !flag;) {
    CHECK_RC(MPI_Test(&rq[0], &flag, &st));
    ++test;
  }
  CHECK(st.MPI_SOURCE == other && st.MPI_TAG == 15 && in[0] == other * 1000 + 150);
  CHECK_RC(MPI_Wait(&rq[1], &st));

  /* F: Testall */
  FILL(out, me * 1000 + 160);
  CHECK_RC(MPI_Irecv(in, 1, MPI_INT, other, 16, WORLD, &rq[0]));
  CHECK_RC(MPI_Isend(out, 1, MPI_INT, other, 16, WORLD, &rq[1]));
  for (int flag = 0; !flag;) {
    CHECK_RC(MPI_Testall(2, rq, &flag, sts));
    ++testall;
  }
  CHECK(sts[0].MPI_TAG == 16 && in[0] == other * 1000 + 160);

  /* G: Testany until both are done */
  FILL(out, me * 1000 + 170);
  CHECK_RC(MPI_Irecv(in, 1, MPI_INT, other, 17, WORLD, &rq[0]));
  CHECK_RC(MPI_Isend(out, 1, MPI_INT, other, 17, WORLD, &rq[1]));
  for (int done = 0; done < 2;) {
    int index = -1, flag = 0;
    CHECK_RC(MPI_Testany(2, rq, &index, &flag, &st));
    ++testany;
    if (flag) {
      CHECK(index == 0 || index == 1);
      if (index != 0 && index != 1) break;
      ++done;
    }
  }
  CHECK(in[0] == other * 1000 + 170);

  /* H: Testsome until both are done */
  FILL(out, me * 1000 + 180);
  CHECK_RC(MPI_Irecv(in, 1, MPI_INT, other, 18, WORLD, &rq[0]));
  CHECK_RC(MPI_Isend(out, 1, MPI_INT, other, 18, WORLD, &rq[1]));
  for (int done = 0; done < 2;) {
    int outcount = 0, idx[2];
    CHECK_RC(MPI_Testsome(2, rq, &outcount, idx, sts));
    ++testsome;
    CHECK(outcount >= 0 && outcount <= 2);
    if (outcount < 0 || outcount > 2) break;
    done += outcount;
  }
  CHECK(in[0] == other * 1000 + 180);

  /* I: wildcard receives completed by a Waitall that ignores the statuses */
  FILL(out, me * 1000 + 190);
  FILL(out2, me * 1000 + 200);
  memset(in, 0, sizeof in);
  memset(in2, 0, sizeof in2);
  CHECK_RC(MPI_Irecv(in, 6, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, WORLD, &rq[0]));
  CHECK_RC(MPI_Irecv(in2, 6, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, WORLD, &rq[1]));
  CHECK_RC(MPI_Isend(out, 5, MPI_INT, other, 19, WORLD, &rq[2]));
  CHECK_RC(MPI_Isend(out2, 6, MPI_INT, other, 20, WORLD, &rq[3]));
  CHECK_RC(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
  /* Messages from one sender on one communicator do not overtake each other. */
  CHECK(in[4] == other * 1000 + 194 && in[5] == 0 && in2[5] == other * 1000 + 205);

  /* J: Issend */
  FILL(out, me * 1000 + 210);
  CHECK_RC(MPI_Irecv(in, 1, MPI_INT, other, 21, WORLD, &rq[0]));
  CHECK_RC(MPI_Issend(out, 1, MPI_INT, other, 21, WORLD, &rq[1]));
  CHECK_RC(MPI_Wait(&rq[0], &st));
  CHECK_RC(MPI_Wait(&rq[1], &st));
  CHECK(in[0] == other * 1000 + 210);

  printf("rank %d waitsome=%d test=%d testall=%d testany=%d testsome=%d\n", me, waitsome, test,
         testall, testany, testsome);
  fflush(stdout);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
