/* collectives: every collective mstep wraps, on MPI_COMM_WORLD and on a communicator split by
 * rank parity, plus Comm_dup/Comm_free. Works at any number of ranks.
 * Usage: collectives [all|split]
 *
 * One round on a communicator of size n where this process has rank r (ints are 4 B, doubles 8 B):
 *   Bcast(10 int, root 0)            Reduce(4 int, SUM, root n-1)     Allreduce(3 double, SUM)
 *   Allreduce(MPI_IN_PLACE, 2 int, MAX)                                Gather(2 int, root 0)
 *   Gatherv(rank i sends i+1 int, root 0)                              Scatter(3 int, root 0)
 *   Scatterv(rank i gets i+1 int, root 0)                              Allgather(1 int)
 *   Allgatherv(rank i gives i+1 int) Alltoall(2 int per rank)
 *   Alltoallv(rank i sends j+1 int to rank j)                          Reduce_scatter(counts i+1)
 *   Reduce_scatter_block(2 int)      Barrier
 * "all" (default): a round on MPI_COMM_WORLD; Comm_split(WORLD, rank % 2, rank); a round on the
 *   split communicator; Comm_dup(WORLD); Allreduce(1 int) on the duplicate; Comm_free of both.
 * "split": Comm_split; a round on the split communicator; Comm_free. (Partners are then only
 *   the ranks of the same parity.)
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int* ints(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(int)); }

static void round_on(MPI_Comm comm) {
  int n = 0, r = 0;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &r);
  int total = n * (n + 1) / 2; /* sum of i+1 over the ranks */

  /* Bcast */
  int b[10];
  for (int k = 0; k < 10; ++k) b[k] = r == 0 ? 500 + k : -1;
  CHECK_RC(MPI_Bcast(b, 10, MPI_INT, 0, comm));
  CHECK(b[0] == 500 && b[9] == 509);

  /* Reduce to the last rank */
  int red_in[4], red_out[4] = {0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) red_in[k] = r + k;
  CHECK_RC(MPI_Reduce(red_in, red_out, 4, MPI_INT, MPI_SUM, n - 1, comm));
  if (r == n - 1) CHECK(red_out[0] == n * (n - 1) / 2 && red_out[3] == n * (n - 1) / 2 + 3 * n);

  /* Allreduce, then in place */
  double ad[3] = {1.0 * r, 2.0, 0.5}, ad_out[3];
  CHECK_RC(MPI_Allreduce(ad, ad_out, 3, MPI_DOUBLE, MPI_SUM, comm));
  CHECK(ad_out[0] == n * (n - 1) / 2.0 && ad_out[1] == 2.0 * n && ad_out[2] == 0.5 * n);
  int mx[2] = {r, -r};
  CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_INT, MPI_MAX, comm));
  CHECK(mx[0] == n - 1 && mx[1] == 0);

  /* Gather, Gatherv */
  int g_in[2] = {r * 10, r * 10 + 1};
  int* g_out = ints(2 * n);
  CHECK_RC(MPI_Gather(g_in, 2, MPI_INT, g_out, 2, MPI_INT, 0, comm));
  if (r == 0)
    for (int i = 0; i < n; ++i) CHECK(g_out[2 * i] == i * 10 && g_out[2 * i + 1] == i * 10 + 1);
  int* counts = ints(n);
  int* displs = ints(n);
  for (int i = 0, d = 0; i < n; d += i + 1, ++i) counts[i] = i + 1, displs[i] = d;
  int* gv_in = ints(r + 1);
  for (int k = 0; k <= r; ++k) gv_in[k] = 100 * r + k;
  int* gv_out = ints(total);
  CHECK_RC(MPI_Gatherv(gv_in, r + 1, MPI_INT, gv_out, counts, displs, MPI_INT, 0, comm));
  if (r == 0)
    for (int i = 0; i < n; ++i) CHECK(gv_out[displs[i] + i] == 100 * i + i);

  /* Scatter, Scatterv */
  int* s_in = ints(3 * n);
  for (int k = 0; k < 3 * n; ++k) s_in[k] = 7000 + k;
  int s_out[3] = {0, 0, 0};
  CHECK_RC(MPI_Scatter(s_in, 3, MPI_INT, s_out, 3, MPI_INT, 0, comm));
  CHECK(s_out[0] == 7000 + 3 * r && s_out[2] == 7002 + 3 * r);
  int* sv_in = ints(total);
  for (int k = 0; k < total; ++k) sv_in[k] = 8000 + k;
  int* sv_out = ints(r + 1);
  CHECK_RC(MPI_Scatterv(sv_in, counts, displs, MPI_INT, sv_out, r + 1, MPI_INT, 0, comm));
  CHECK(sv_out[0] == 8000 + displs[r] && sv_out[r] == 8000 + displs[r] + r);

  /* Allgather, Allgatherv */
  int one = 30 + r;
  int* ag = ints(n);
  CHECK_RC(MPI_Allgather(&one, 1, MPI_INT, ag, 1, MPI_INT, comm));
  for (int i = 0; i < n; ++i) CHECK(ag[i] == 30 + i);
  int* agv = ints(total);
  CHECK_RC(MPI_Allgatherv(gv_in, r + 1, MPI_INT, agv, counts, displs, MPI_INT, comm));
  for (int i = 0; i < n; ++i) CHECK(agv[displs[i]] == 100 * i && agv[displs[i] + i] == 100 * i + i);

  /* Alltoall: element k of the block for rank j is 1000 r + 10 j + k */
  int* a_in = ints(2 * n);
  int* a_out = ints(2 * n);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < 2; ++k) a_in[2 * j + k] = 1000 * r + 10 * j + k;
  CHECK_RC(MPI_Alltoall(a_in, 2, MPI_INT, a_out, 2, MPI_INT, comm));
  for (int j = 0; j < n; ++j) CHECK(a_out[2 * j + 1] == 1000 * j + 10 * r + 1);

  /* Alltoallv: rank r sends j+1 ints to rank j, so it gets r+1 ints from everyone */
  int* rcounts = ints(n);
  int* rdispls = ints(n);
  for (int j = 0; j < n; ++j) rcounts[j] = r + 1, rdispls[j] = j * (r + 1);
  int* av_in = ints(total);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k <= j; ++k) av_in[displs[j] + k] = 1000 * r + 10 * j + k;
  int* av_out = ints(n * (r + 1));
  CHECK_RC(MPI_Alltoallv(av_in, counts, displs, MPI_INT, av_out, rcounts, rdispls, MPI_INT, comm));
  for (int j = 0; j < n; ++j) CHECK(av_out[rdispls[j] + r] == 1000 * j + 10 * r + r);

  /* Reduce_scatter: rank i gets i+1 sums; Reduce_scatter_block: 2 each */
  int* rs_in = ints(total);
  for (int k = 0; k < total; ++k) rs_in[k] = k;
  int* rs_out = ints(r + 1);
  CHECK_RC(MPI_Reduce_scatter(rs_in, rs_out, counts, MPI_INT, MPI_SUM, comm));
  CHECK(rs_out[0] == n * displs[r] && rs_out[r] == n * (displs[r] + r));
  int* rsb_in = ints(2 * n);
  for (int k = 0; k < 2 * n; ++k) rsb_in[k] = k + r;
  int rsb_out[2] = {0, 0};
  CHECK_RC(MPI_Reduce_scatter_block(rsb_in, rsb_out, 2, MPI_INT, MPI_SUM, comm));
  CHECK(rsb_out[0] == n * (2 * r) + n * (n - 1) / 2 && rsb_out[1] == rsb_out[0] + n);

  CHECK_RC(MPI_Barrier(comm));

  free(g_out), free(counts), free(displs), free(gv_in), free(gv_out), free(s_in), free(sv_in);
  free(sv_out), free(ag), free(agv), free(a_in), free(a_out), free(rcounts), free(rdispls);
  free(av_in), free(av_out), free(rs_in), free(rs_out), free(rsb_in);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int all = !(argc > 1 && strcmp(argv[1], "split") == 0);

  if (all) round_on(MPI_COMM_WORLD);

  MPI_Comm half = MPI_COMM_NULL;
  CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half));
  int half_size = 0, half_rank = -1;
  MPI_Comm_size(half, &half_size);
  MPI_Comm_rank(half, &half_rank);
  CHECK(half_size == (size - g_rank % 2 + 1) / 2 && half_rank == g_rank / 2);
  round_on(half);

  if (all) {
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int x = g_rank, sum = 0;
    CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size * (size - 1) / 2);
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
  }
  CHECK_RC(MPI_Comm_free(&half));

  if (g_rank == 0) printf("collectives: %d ranks, %s\n", size, g_errors ? "WRONG" : "ok");
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
