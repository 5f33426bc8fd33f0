/* pcoll: persistent collectives (MPI 4.0) and MPI_Comm_idup_with_info.
 * Usage: pcoll R   (2 ranks, root 0)
 *
 * MPI calls per rank (test_coverage.cpp asserts these; keep both in step), 4 bytes an int:
 *   Bcast_init(4 int, root 0), Allreduce_init(2 int), Barrier_init, Send_init(4 int, tag 60),
 *   Recv_init(4 int, tag 60); R x (Start(bcast), Wait); R x (Startall(send, allreduce, recv,
 *   barrier), Waitall(4)); Comm_idup_with_info, Wait, Bcast(1 int, root 0) on the new
 *   communicator, Comm_free; Request_free x5.
 * A Start of a persistent collective is recorded as the nonblocking collective it starts.
 */
#include <mpi.h>
#include <stdlib.h>

#include "check.h"

#define WORLD MPI_COMM_WORLD

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!two_ranks("pcoll", argc, "a round count")) return 2;
  const int rounds = atoi(argv[1]);
  const int me = g_rank, other = 1 - g_rank;
  int b[4], sum_in[2], sum_out[2], out[4], in[4];
  MPI_Request p[5];
  MPI_Status sts[4];

  CHECK_RC(MPI_Bcast_init(b, 4, MPI_INT, 0, WORLD, MPI_INFO_NULL, &p[0]));
  CHECK_RC(MPI_Allreduce_init(sum_in, sum_out, 2, MPI_INT, MPI_SUM, WORLD, MPI_INFO_NULL, &p[1]));
  CHECK_RC(MPI_Barrier_init(WORLD, MPI_INFO_NULL, &p[2]));
  CHECK_RC(MPI_Send_init(out, 4, MPI_INT, other, 60, WORLD, &p[3]));
  CHECK_RC(MPI_Recv_init(in, 4, MPI_INT, other, 60, WORLD, &p[4]));
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 4; ++k) b[k] = me == 0 ? 100 * r + k : -1;
    CHECK_RC(MPI_Start(&p[0]));
    CHECK_RC(MPI_Wait(&p[0], MPI_STATUS_IGNORE));
    CHECK(b[3] == 100 * r + 3);
  }
  for (int r = 0; r < rounds; ++r) {
    sum_in[0] = me + r, sum_in[1] = 1;
    for (int k = 0; k < 4; ++k) out[k] = me * 1000 + r * 10 + k;
    MPI_Request batch[4] = {p[3], p[1], p[4], p[2]};
    CHECK_RC(MPI_Startall(4, batch));
    CHECK_RC(MPI_Waitall(4, batch, sts));
    CHECK(sum_out[0] == 1 + 2 * r && sum_out[1] == 2);
    CHECK(in[3] == other * 1000 + r * 10 + 3 && sts[2].MPI_TAG == 60);
  }
  MPI_Comm dup;
  MPI_Request idup;
  CHECK_RC(MPI_Comm_idup_with_info(WORLD, MPI_INFO_NULL, &dup, &idup));
  CHECK_RC(MPI_Wait(&idup, MPI_STATUS_IGNORE));
  int one = me == 0 ? 7 : 0;
  CHECK_RC(MPI_Bcast(&one, 1, MPI_INT, 0, dup));
  CHECK(one == 7);
  CHECK_RC(MPI_Comm_free(&dup));
  for (int k = 0; k < 5; ++k) CHECK_RC(MPI_Request_free(&p[k]));
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
