/* neighbor: neighbourhood collectives on Cartesian and distributed-graph topologies.
 * Usage: neighbor   (2 ranks)
 *
 * MPI calls per rank (test_coverage.cpp asserts these; keep both in step), m = 4 bytes an int:
 *   ring: Cart_create(1 dim of 2, periodic): each rank's neighbours are [source, dest] = the other
 *   rank twice, so every call sends two blocks to it and receives two from it.
 *     Neighbor_allgather(2 int)           sent 16, received 16
 *     Neighbor_alltoall(1 int)            sent 8, received 8
 *     Neighbor_allgatherv(1 int; {1, 2})  sent 8, received 12
 *     Neighbor_alltoallv({1, 2}; {2, 1})  sent 12, received 12
 *     Neighbor_alltoallw({int, int})      sent 8, received 8
 *     Ineighbor_alltoall(1 int), Wait     sent 8, received 8
 *     Ineighbor_allgather(2 int), Ineighbor_allgatherv, Ineighbor_alltoallv, Ineighbor_alltoallw
 *       (as above), Waitall(4)            sent 16 + 8 + 12 + 8, received 16 + 12 + 12 + 8
 *   graph: Dist_graph_create_adjacent(1 source, 1 destination: the other rank),
 *     Neighbor_alltoall(3 int)            sent 12, received 12
 *   line: Cart_create(1 dim of 2, not periodic): rank 0's source and rank 1's dest are
 *     MPI_PROC_NULL, so one block goes out and one comes in.
 *     Neighbor_allgather(1 int)           sent 4, received 4
 * Messages each rank sends: 2 per ring call (10 calls), 1 per graph and line call: 22.
 */
#include <mpi.h>

/* GCC takes MPI_STATUSES_IGNORE for a zero-length array (MPICH's access attributes). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#include "check.h"

#define WORLD MPI_COMM_WORLD

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!two_ranks("neighbor", argc, NULL)) return 2;
  const int me = g_rank, other = 1 - g_rank;
  MPI_Comm ring, graph, line;
  int dims[1] = {2}, periodic[1] = {1}, open[1] = {0};
  CHECK_RC(MPI_Cart_create(WORLD, 1, dims, periodic, 0, &ring));
  int in[8] = {0}, out[8];
  for (int k = 0; k < 8; ++k) out[k] = me * 100 + k;

  CHECK_RC(MPI_Neighbor_allgather(out, 2, MPI_INT, in, 2, MPI_INT, ring));
  CHECK(in[0] == other * 100 && in[3] == other * 100 + 1);
  CHECK_RC(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring));
  CHECK(in[0] == other * 100 + 1 && in[1] == other * 100); /* block 1 to dest arrives as block 0 from source */
  const int one_two[2] = {1, 2}, two_one[2] = {2, 1}, displs[2] = {0, 1}, displs2[2] = {0, 2};
  CHECK_RC(MPI_Neighbor_allgatherv(out, 1, MPI_INT, in, one_two, displs, MPI_INT, ring));
  CHECK_RC(MPI_Neighbor_alltoallv(out, one_two, displs, MPI_INT, in, two_one, displs2, MPI_INT, ring));
  /* alltoallw: one int each way per block (which block meets which with a duplicated neighbour is
   * MPICH's business: only the sum is checked). */
  int win[2] = {-1, -1};
  const int ones[2] = {1, 1};
  const MPI_Aint wd[2] = {0, (MPI_Aint)sizeof(int)};
  const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  CHECK_RC(MPI_Neighbor_alltoallw(out, ones, wd, types, win, ones, wd, types, ring));
  CHECK(win[0] + win[1] == 2 * other * 100 + 1);
  MPI_Request rq[4];
  CHECK_RC(MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring, &rq[0]));
  CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
  int in2[8], in3[8];
  CHECK_RC(MPI_Ineighbor_allgather(out, 2, MPI_INT, in, 2, MPI_INT, ring, &rq[0]));
  CHECK_RC(MPI_Ineighbor_allgatherv(out, 1, MPI_INT, in2, one_two, displs, MPI_INT, ring, &rq[1]));
  CHECK_RC(MPI_Ineighbor_alltoallv(out, one_two, displs, MPI_INT, in3, two_one, displs2, MPI_INT, ring, &rq[2]));
  CHECK_RC(MPI_Ineighbor_alltoallw(out, ones, wd, types, win, ones, wd, types, ring, &rq[3]));
  CHECK_RC(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));

  const int peer[1] = {other};
  CHECK_RC(MPI_Dist_graph_create_adjacent(WORLD, 1, peer, MPI_UNWEIGHTED, 1, peer, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                          &graph));
  CHECK_RC(MPI_Neighbor_alltoall(out, 3, MPI_INT, in, 3, MPI_INT, graph));
  CHECK(in[2] == other * 100 + 2);

  CHECK_RC(MPI_Cart_create(WORLD, 1, dims, open, 0, &line));
  in[0] = in[1] = -1;
  CHECK_RC(MPI_Neighbor_allgather(out, 1, MPI_INT, in, 1, MPI_INT, line));
  /* Rank 0 hears from rank 1 as its dest-side block 1; rank 1 from rank 0 as its block 0. */
  CHECK(me == 0 ? in[1] == 100 : in[0] == 0);

  MPI_Finalize();
  return g_errors ? 1 : 0;
}
