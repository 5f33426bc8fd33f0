/* corners: the cases a wrapper gets wrong most easily. Each rank logs every return code, status
 * (all bytes of it) and received value; rank 0 gathers both logs and prints them, so the test can
 * compare the output of a run with mstep to one without it. Usage: corners   (2 ranks)
 *
 * MPI calls (test_corners_languages.cpp asserts these; keep both in step):
 *   1 MPI_PROC_NULL, both ranks: Send(5 int, PROC_NULL, tag 30); Recv(5 int, PROC_NULL, tag 31);
 *     Sendrecv(5 int to PROC_NULL tag 32, 5 int from PROC_NULL tag 33).
 *   2 wildcards: rank 1 Send(3 int, tag 42), Send(2 int, tag 43) to 0;
 *     rank 0 Recv(10 int, ANY_SOURCE, ANY_TAG), then Irecv(10 int, ANY_SOURCE, ANY_TAG) + Wait.
 *   3 derived datatype: vector(4 blocks of 2 int, stride 3) = 32 B; rank 0 Send(2 of them, tag 60)
 *     = 64 B; rank 1 Recv(2 of them).
 *   4 zero count: rank 0 Send(0 int, tag 70); rank 1 Recv(0 int, tag 70).
 *   5 MPI_BOTTOM: struct {int; double[2]} at absolute addresses = 20 B; rank 1 Send(tag 80),
 *     rank 0 Recv.
 *   6 MPI_STATUS_IGNORE: rank 1 Send(1 int, tag 90); rank 0 Recv(ANY_SOURCE, ANY_TAG, IGNORE);
 *     both Sendrecv(2 int to the other, tag 91; from ANY_SOURCE, ANY_TAG; STATUS_IGNORE).
 *   7 Gather(4096 char, root 0) of the logs.
 * Rank 0: Send 3, Recv 4, Irecv 1, Wait 1, Sendrecv 2, Gather 1.
 * Rank 1: Send 5, Recv 3, Sendrecv 2, Gather 1.
 */
#include <mpi.h>
#include <stdarg.h>
#include <string.h>

#include "check.h"

#define LOG_SIZE 4096
static char g_log[LOG_SIZE];
static size_t g_len = 0;

static void logf_(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(g_log + g_len, LOG_SIZE - g_len, fmt, ap);
  va_end(ap);
  if (n > 0) g_len += (size_t)n < LOG_SIZE - g_len ? (size_t)n : LOG_SIZE - 1 - g_len;
}

/* A status before the call: a sentinel in every byte, so that untouched fields compare too. */
static void poison(MPI_Status* st) { memset(st, 0x5a, sizeof *st); }

static void log_status(const char* what, int rc, const MPI_Status* st, MPI_Datatype type) {
  int count = -7, cancelled = -7;
  MPI_Get_count(st, type, &count);
  MPI_Test_cancelled(st, &cancelled);
  logf_("%s: rc=%d source=%d tag=%d error=%d count=%d cancelled=%d raw=", what, rc, st->MPI_SOURCE,
        st->MPI_TAG, st->MPI_ERROR, count, cancelled);
  const unsigned char* p = (const unsigned char*)st;
  for (size_t i = 0; i < sizeof *st; ++i) logf_("%02x", p[i]);
  logf_("\n");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!two_ranks("corners", argc, NULL)) return 2;
  const int me = g_rank, other = 1 - g_rank;
  MPI_Status st;
  int rc;
  int buf[16], buf2[16];
  for (int k = 0; k < 16; ++k) buf[k] = 100 * me + k;
  logf_("rank %d\n", me);

  /* 1: MPI_PROC_NULL */
  rc = MPI_Send(buf, 5, MPI_INT, MPI_PROC_NULL, 30, MPI_COMM_WORLD);
  logf_("send to PROC_NULL: rc=%d\n", rc);
  CHECK(rc == MPI_SUCCESS);
  poison(&st);
  memset(buf2, 0x11, sizeof buf2);
  rc = MPI_Recv(buf2, 5, MPI_INT, MPI_PROC_NULL, 31, MPI_COMM_WORLD, &st);
  log_status("recv from PROC_NULL", rc, &st, MPI_INT);
  CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
  CHECK(buf2[0] == 0x11111111);
  poison(&st);
  rc = MPI_Sendrecv(buf, 5, MPI_INT, MPI_PROC_NULL, 32, buf2, 5, MPI_INT, MPI_PROC_NULL, 33,
                    MPI_COMM_WORLD, &st);
  log_status("sendrecv with PROC_NULL", rc, &st, MPI_INT);
  CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == MPI_PROC_NULL && buf2[4] == 0x11111111);

  /* 2: wildcard receives must be traced with the actual source and tag */
  if (me == 1) {
    CHECK_RC(MPI_Send(buf, 3, MPI_INT, 0, 42, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(buf + 3, 2, MPI_INT, 0, 43, MPI_COMM_WORLD));
  } else {
    poison(&st);
    memset(buf2, 0, sizeof buf2);
    rc = MPI_Recv(buf2, 10, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    log_status("recv any/any", rc, &st, MPI_INT);
    logf_("  data %d %d %d\n", buf2[0], buf2[1], buf2[2]);
    CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 42 && buf2[2] == 102);
    MPI_Request r;
    memset(buf2, 0, sizeof buf2);
    rc = MPI_Irecv(buf2, 10, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
    logf_("irecv any/any: rc=%d\n", rc);
    poison(&st);
    rc = MPI_Wait(&r, &st);
    log_status("wait any/any", rc, &st, MPI_INT);
    logf_("  data %d %d request_null=%d\n", buf2[0], buf2[1], r == MPI_REQUEST_NULL);
    CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 43 && buf2[1] == 104 && r == MPI_REQUEST_NULL);
  }

  /* 3: derived datatype */
  MPI_Datatype vec;
  MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int vsize = 0;
  MPI_Type_size(vec, &vsize);
  CHECK(vsize == 32);
  int big[32];
  if (me == 0) {
    for (int k = 0; k < 32; ++k) big[k] = k;
    rc = MPI_Send(big, 2, vec, 1, 60, MPI_COMM_WORLD);
    logf_("send vector: rc=%d\n", rc);
  } else {
    for (int k = 0; k < 32; ++k) big[k] = -1;
    poison(&st);
    rc = MPI_Recv(big, 2, vec, 0, 60, MPI_COMM_WORLD, &st);
    log_status("recv vector", rc, &st, vec);
    int elements = -7;
    MPI_Get_elements(&st, MPI_INT, &elements);
    logf_("  elements=%d data", elements);
    for (int k = 0; k < 24; ++k) logf_(" %d", big[k]);
    logf_("\n");
    /* Extent of one vector: 3*3+2 = 11 int; the second starts at element 11. */
    CHECK(elements == 16 && big[0] == 0 && big[1] == 1 && big[2] == -1 && big[3] == 3);
    CHECK(big[11] == 11 && big[21] == 21 && big[20] == 20 && big[22] == -1);
  }
  MPI_Type_free(&vec);

  /* 4: zero count */
  if (me == 0) {
    rc = MPI_Send(buf, 0, MPI_INT, 1, 70, MPI_COMM_WORLD);
    logf_("send zero: rc=%d\n", rc);
  } else {
    poison(&st);
    rc = MPI_Recv(buf2, 0, MPI_INT, 0, 70, MPI_COMM_WORLD, &st);
    log_status("recv zero", rc, &st, MPI_INT);
    CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == 0 && st.MPI_TAG == 70);
  }

  /* 5: MPI_BOTTOM with a struct of absolute addresses */
  int a = me == 1 ? 4242 : 0;
  double b[2] = {me == 1 ? 1.5 : 0.0, me == 1 ? -2.25 : 0.0};
  MPI_Aint addr[2];
  MPI_Get_address(&a, &addr[0]);
  MPI_Get_address(b, &addr[1]);
  int lens[2] = {1, 2};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, abs_type;
  MPI_Type_create_struct(2, lens, addr, types, &abs_type);
  MPI_Type_commit(&abs_type);
  if (me == 1) {
    rc = MPI_Send(MPI_BOTTOM, 1, abs_type, 0, 80, MPI_COMM_WORLD);
    logf_("send BOTTOM: rc=%d\n", rc);
  } else {
    poison(&st);
    rc = MPI_Recv(MPI_BOTTOM, 1, abs_type, 1, 80, MPI_COMM_WORLD, &st);
    log_status("recv BOTTOM", rc, &st, abs_type);
    logf_("  a=%d b=%g %g\n", a, b[0], b[1]);
    CHECK(a == 4242 && b[0] == 1.5 && b[1] == -2.25);
  }
  MPI_Type_free(&abs_type);

  /* 6: MPI_STATUS_IGNORE */
  if (me == 1) {
    CHECK_RC(MPI_Send(buf, 1, MPI_INT, 0, 90, MPI_COMM_WORLD));
  } else {
    buf2[0] = 0;
    rc = MPI_Recv(buf2, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    logf_("recv ignore: rc=%d data %d\n", rc, buf2[0]);
    CHECK(rc == MPI_SUCCESS && buf2[0] == 100);
  }
  buf2[0] = buf2[1] = 0;
  rc = MPI_Sendrecv(buf, 2, MPI_INT, other, 91, buf2, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  logf_("sendrecv ignore: rc=%d data %d %d\n", rc, buf2[0], buf2[1]);
  CHECK(rc == MPI_SUCCESS && buf2[0] == 100 * other && buf2[1] == 100 * other + 1);

  /* 7: both logs to rank 0 */
  static char all[2 * LOG_SIZE];
  rc = MPI_Gather(g_log, LOG_SIZE, MPI_CHAR, all, LOG_SIZE, MPI_CHAR, 0, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS);
  if (me == 0) {
    all[LOG_SIZE - 1] = all[2 * LOG_SIZE - 1] = '\0';
    fputs(all, stdout);
    fputs(all + LOG_SIZE, stdout);
    fflush(stdout);
  }
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
