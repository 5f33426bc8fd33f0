/* comms: every communicator creator mstep wraps besides Comm_split/Comm_dup/Comm_create, each
 * followed by traffic on the new communicator whose world-rank peers the test knows. Most new
 * communicators order their ranks differently from MPI_COMM_WORLD, so a peer recorded as a
 * communicator rank instead of a world rank shows. Needs an even number of ranks, all on one host.
 * Usage: comms [inter-p2p]
 *
 * w is the world rank, n the world size; "members" are world ranks in communicator rank order.
 *  1. Comm_split(WORLD, 0, key n-1-w) -> rev, members n-1..0.
 *  2. Cart_create(rev, 1-D, n, periodic, no reorder) -> ring, members n-1..0. Cart_shift(ring, 0, 1),
 *     Sendrecv 16 int (64 B) tag 11: sends to world (w-1+n)%n, receives from world (w+1)%n.
 *  3. Cart_create(WORLD, 1-D, n-1, not periodic) -> small, members 0..n-2; MPI_COMM_NULL on n-1.
 *  4. Cart_create(WORLD, 2-D, 2 x n/2) -> grid, members 0..n-1. Cart_sub(grid, keep dim 0) -> col,
 *     members {w%(n/2), w%(n/2)+n/2}. Sendrecv 4 double (32 B) tag 12 with world (w+n/2)%n.
 *  5. Comm_split_type(WORLD, SHARED, key n-1-w) -> shared, members n-1..0. Bcast 8 int (32 B) from
 *     its rank 0 (world n-1). Comm_split_type(WORLD, even w ? SHARED : MPI_UNDEFINED, key w) ->
 *     evens, members 0,2,..; MPI_COMM_NULL on odd ranks.
 *  6. Comm_create_group(WORLD, group of world ranks 1,2,..,n-1,0, tag 13) -> rot, members
 *     1,..,n-1,0 (world w is rot rank (w-1+n)%n). Even rot ranks Send 6 int (24 B) tag 14 to the
 *     next rot rank (world (w+1)%n); odd rot ranks Recv it (from world (w-1+n)%n).
 *  7. Dist_graph_create_adjacent(rev, in: previous rev rank, out: next rev rank) -> dgraph,
 *     members n-1..0. Send 5 int (20 B) tag 15 to world (w-1+n)%n, Recv from world (w+1)%n
 *     (even rev ranks send first).
 *  8. Graph_create(WORLD, node i -> i+1) -> graph, members 0..n-1. Allreduce 1 int (SUM).
 *  9. Dist_graph_create(WORLD, edge w -> w+1) -> dist, members 0..n-1. Barrier.
 * 10. Comm_dup_with_info(ring, MPI_INFO_NULL) -> ringdup, members n-1..0. Allreduce 2 int (MAX).
 * 11. Comm_split(WORLD, w%2, key w) -> half. Intercomm_create(half, 0, WORLD, remote leader: world
 *     1 for the evens, 0 for the odds, tag 16) -> inter, remote group: the other parity.
 *     With "inter-p2p" only: Sendrecv 2 int (8 B) tag 17 on inter with remote rank w/2 (world w^1).
 *     Intercomm_merge(inter, high = w%2) -> merged, members 0,2,..,1,3,.. Sendrecv 3 int (12 B)
 *     tag 18 to the next merged rank, from the previous one.
 * 12. Comm_idup(rot) -> rotdup, members 1,..,n-1,0, and Comm_idup(inter) -> interdup, remote group:
 *     the other parity; one Waitall completes both. Sendrecv 7 int (28 B) tag 19 on rotdup to the
 *     next rot rank (world (w+1)%n), from the previous one (world (w-1+n)%n). With "inter-p2p"
 *     only: Sendrecv 2 int (8 B) tag 20 on interdup with remote rank w/2 (world w^1).
 * 13. Comm_free of every communicator this rank got: 17 on even ranks, 16 on odd ranks (no evens),
 *     15 on rank n-1 (no small either).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int g_n = 0;

static int mod(int a, int m) { return ((a % m) + m) % m; }

/* The world rank of `comm`'s rank `r`. */
static int world_of(MPI_Comm comm, int r) {
  MPI_Group g, world;
  int w = MPI_UNDEFINED;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_translate_ranks(g, 1, &r, world, &w);
  MPI_Group_free(&g);
  MPI_Group_free(&world);
  return w;
}

/* `comm` has the n members world(0..n-1) = first + step * i (mod world size). */
static void check_members(MPI_Comm comm, int n, int first, int step) {
  int size = -1;
  MPI_Comm_size(comm, &size);
  CHECK(size == n);
  for (int i = 0; i < n && i < size; ++i) CHECK(world_of(comm, i) == mod(first + step * i, g_n));
}

static void free_comm(MPI_Comm* c) {
  if (*c == MPI_COMM_NULL) return;
  CHECK_RC(MPI_Comm_free(c));
  CHECK(*c == MPI_COMM_NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_n);
  const int w = g_rank, n = g_n;
  const int inter_p2p = argc > 1 && strcmp(argv[1], "inter-p2p") == 0;
  if (n % 2 != 0) {
    if (w == 0) fprintf(stderr, "comms: needs an even number of ranks\n");
    MPI_Finalize();
    return 2;
  }

  /* 1. rev */
  MPI_Comm rev = MPI_COMM_NULL;
  CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - w, &rev));
  check_members(rev, n, n - 1, -1);

  /* 2. ring: 1-D periodic Cartesian communicator over rev */
  MPI_Comm ring = MPI_COMM_NULL;
  {
    const int dims[1] = {n}, periods[1] = {1};
    CHECK_RC(MPI_Cart_create(rev, 1, dims, periods, 0, &ring));
    CHECK(ring != MPI_COMM_NULL);
    check_members(ring, n, n - 1, -1);
    int src = -1, dst = -1;
    CHECK_RC(MPI_Cart_shift(ring, 0, 1, &src, &dst));
    CHECK(world_of(ring, dst) == mod(w - 1, n) && world_of(ring, src) == mod(w + 1, n));
    int out[16], in[16];
    for (int i = 0; i < 16; ++i) out[i] = 100 * w + i, in[i] = -1;
    CHECK_RC(MPI_Sendrecv(out, 16, MPI_INT, dst, 11, in, 16, MPI_INT, src, 11, ring, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; ++i) CHECK(in[i] == 100 * mod(w + 1, n) + i);
  }

  /* 3. small: a grid of n-1, so the last rank gets MPI_COMM_NULL */
  MPI_Comm small = MPI_COMM_NULL;
  {
    const int dims[1] = {n - 1}, periods[1] = {0};
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &small));
    CHECK((small == MPI_COMM_NULL) == (w == n - 1));
    if (small != MPI_COMM_NULL) check_members(small, n - 1, 0, 1);
  }

  /* 4. grid and its column */
  MPI_Comm grid = MPI_COMM_NULL, col = MPI_COMM_NULL;
  {
    const int dims[2] = {2, n / 2}, periods[2] = {0, 0}, keep[2] = {1, 0};
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    check_members(grid, n, 0, 1);
    CHECK_RC(MPI_Cart_sub(grid, keep, &col));
    check_members(col, 2, w % (n / 2), n / 2);
    int col_rank = -1;
    MPI_Comm_rank(col, &col_rank);
    double out[4], in[4];
    for (int i = 0; i < 4; ++i) out[i] = w + 0.25 * i, in[i] = -1;
    CHECK_RC(MPI_Sendrecv(out, 4, MPI_DOUBLE, 1 - col_rank, 12, in, 4, MPI_DOUBLE, 1 - col_rank, 12,
                          col, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; ++i) CHECK(in[i] == mod(w + n / 2, n) + 0.25 * i);
  }

  /* 5. shared (Bcast from world n-1) and evens (MPI_COMM_NULL on odd ranks) */
  MPI_Comm shared = MPI_COMM_NULL, evens = MPI_COMM_NULL;
  {
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, n - 1 - w, MPI_INFO_NULL, &shared));
    check_members(shared, n, n - 1, -1);
    int b[8];
    for (int i = 0; i < 8; ++i) b[i] = w == n - 1 ? 700 + i : -1;
    CHECK_RC(MPI_Bcast(b, 8, MPI_INT, 0, shared));
    for (int i = 0; i < 8; ++i) CHECK(b[i] == 700 + i);
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, w % 2 == 0 ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED, w,
                                 MPI_INFO_NULL, &evens));
    CHECK((evens == MPI_COMM_NULL) == (w % 2 == 1));
    if (evens != MPI_COMM_NULL) check_members(evens, n / 2, 0, 2);
  }

  /* 6. rot: Comm_create_group with the world ranks rotated by one */
  MPI_Comm rot = MPI_COMM_NULL;
  {
    MPI_Group world, g;
    int ranks[64];
    for (int i = 0; i < n && i < 64; ++i) ranks[i] = (i + 1) % n;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, ranks, &g);
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, 13, &rot));
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    check_members(rot, n, 1, 1);
    int r = -1;
    MPI_Comm_rank(rot, &r);
    CHECK(r == mod(w - 1, n));
    int msg[6];
    if (r % 2 == 0) {
      for (int i = 0; i < 6; ++i) msg[i] = 10 * w + i;
      CHECK_RC(MPI_Send(msg, 6, MPI_INT, r + 1, 14, rot));
    } else {
      CHECK_RC(MPI_Recv(msg, 6, MPI_INT, r - 1, 14, rot, MPI_STATUS_IGNORE));
      for (int i = 0; i < 6; ++i) CHECK(msg[i] == 10 * mod(w - 1, n) + i);
    }
  }

  /* 7. dgraph: a ring as a distributed graph over rev */
  MPI_Comm dgraph = MPI_COMM_NULL;
  {
    const int c = n - 1 - w; /* rank in rev */
    const int sources[1] = {mod(c - 1, n)}, dests[1] = {mod(c + 1, n)};
    CHECK_RC(MPI_Dist_graph_create_adjacent(rev, 1, sources, MPI_UNWEIGHTED, 1, dests, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &dgraph));
    check_members(dgraph, n, n - 1, -1);
    int out[5], in[5];
    for (int i = 0; i < 5; ++i) out[i] = 1000 * w + i, in[i] = -1;
    if (c % 2 == 0) {
      CHECK_RC(MPI_Send(out, 5, MPI_INT, dests[0], 15, dgraph));
      CHECK_RC(MPI_Recv(in, 5, MPI_INT, sources[0], 15, dgraph, MPI_STATUS_IGNORE));
    } else {
      CHECK_RC(MPI_Recv(in, 5, MPI_INT, sources[0], 15, dgraph, MPI_STATUS_IGNORE));
      CHECK_RC(MPI_Send(out, 5, MPI_INT, dests[0], 15, dgraph));
    }
    for (int i = 0; i < 5; ++i) CHECK(in[i] == 1000 * mod(w + 1, n) + i);
  }

  /* 8. graph: node i -> i+1 */
  MPI_Comm graph = MPI_COMM_NULL;
  {
    int index[64], edges[64];
    for (int i = 0; i < n && i < 64; ++i) index[i] = i + 1, edges[i] = (i + 1) % n;
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &graph));
    check_members(graph, n, 0, 1);
    int x = w, sum = -1;
    CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, graph));
    CHECK(sum == n * (n - 1) / 2);
  }

  /* 9. dist: edge w -> w+1, given by its source */
  MPI_Comm dist = MPI_COMM_NULL;
  {
    const int sources[1] = {w}, degrees[1] = {1}, dests[1] = {(w + 1) % n};
    CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, dests, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &dist));
    check_members(dist, n, 0, 1);
    CHECK_RC(MPI_Barrier(dist));
  }

  /* 10. ringdup */
  MPI_Comm ringdup = MPI_COMM_NULL;
  {
    CHECK_RC(MPI_Comm_dup_with_info(ring, MPI_INFO_NULL, &ringdup));
    check_members(ringdup, n, n - 1, -1);
    int x[2] = {w, -w}, y[2] = {-1, -1};
    CHECK_RC(MPI_Allreduce(x, y, 2, MPI_INT, MPI_MAX, ringdup));
    CHECK(y[0] == n - 1 && y[1] == 0);
  }

  /* 11. half, inter, merged */
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
  {
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, w % 2, w, &half));
    CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, w % 2 == 0 ? 1 : 0, 16, &inter));
    int is_inter = 0, remote = -1;
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_remote_size(inter, &remote);
    CHECK(is_inter && remote == n / 2);
    if (inter_p2p) {
      int out[2] = {w, 2 * w}, in[2] = {-1, -1};
      CHECK_RC(MPI_Sendrecv(out, 2, MPI_INT, w / 2, 17, in, 2, MPI_INT, w / 2, 17, inter,
                            MPI_STATUS_IGNORE));
      CHECK(in[0] == (w ^ 1) && in[1] == 2 * (w ^ 1));
    }
    CHECK_RC(MPI_Intercomm_merge(inter, w % 2, &merged));
    MPI_Comm_test_inter(merged, &is_inter);
    CHECK(!is_inter);
    int size = -1, m = -1;
    MPI_Comm_size(merged, &size);
    MPI_Comm_rank(merged, &m);
    CHECK(size == n);
    for (int i = 0; i < n && i < size; ++i) CHECK(world_of(merged, i) == (i < n / 2 ? 2 * i : 2 * (i - n / 2) + 1));
    int out[3], in[3];
    for (int i = 0; i < 3; ++i) out[i] = 50 * w + i, in[i] = -1;
    CHECK_RC(MPI_Sendrecv(out, 3, MPI_INT, (m + 1) % n, 18, in, 3, MPI_INT, mod(m - 1, n), 18, merged,
                          MPI_STATUS_IGNORE));
    const int from = world_of(merged, mod(m - 1, n));
    for (int i = 0; i < 3; ++i) CHECK(in[i] == 50 * from + i);
  }

  /* 12. rotdup and interdup, usable once the Waitall has completed their requests */
  MPI_Comm rotdup = MPI_COMM_NULL, interdup = MPI_COMM_NULL;
  {
    MPI_Request req[2];
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE, which GCC takes for an empty array */
    CHECK_RC(MPI_Comm_idup(rot, &rotdup, &req[0]));
    CHECK_RC(MPI_Comm_idup(inter, &interdup, &req[1]));
    CHECK_RC(MPI_Waitall(2, req, st));
    check_members(rotdup, n, 1, 1);
    int is_inter = 0, remote = -1;
    MPI_Comm_test_inter(interdup, &is_inter);
    MPI_Comm_remote_size(interdup, &remote);
    CHECK(is_inter && remote == n / 2);
    const int r = mod(w - 1, n); /* rank in rot and rotdup */
    int out[7], in[7];
    for (int i = 0; i < 7; ++i) out[i] = 30 * w + i, in[i] = -1;
    CHECK_RC(MPI_Sendrecv(out, 7, MPI_INT, (r + 1) % n, 19, in, 7, MPI_INT, mod(r - 1, n), 19, rotdup,
                          MPI_STATUS_IGNORE));
    for (int i = 0; i < 7; ++i) CHECK(in[i] == 30 * mod(w - 1, n) + i);
    if (inter_p2p) {
      int o2[2] = {w, 3 * w}, i2[2] = {-1, -1};
      CHECK_RC(MPI_Sendrecv(o2, 2, MPI_INT, w / 2, 20, i2, 2, MPI_INT, w / 2, 20, interdup, MPI_STATUS_IGNORE));
      CHECK(i2[0] == (w ^ 1) && i2[1] == 3 * (w ^ 1));
    }
  }

  /* 13. */
  MPI_Comm* all[] = {&rev, &ring, &small, &grid, &col, &shared, &evens, &rot, &dgraph,
                     &graph, &dist, &ringdup, &half, &inter, &merged, &rotdup, &interdup};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) free_comm(all[i]);

  if (w == 0) printf("comms: %d ranks, %s\n", n, g_errors ? "WRONG" : "ok");
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
