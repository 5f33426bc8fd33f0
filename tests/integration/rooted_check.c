/* rooted_check: MPI_Gather, MPI_Scatter, MPI_Gatherv and MPI_Scatterv through whatever the preload
 * puts in front of MPI (libmstep's substitutes under MSTEP_GATHER / MSTEP_SCATTER) against MPICH's
 * own PMPI_ calls on the same inputs, byte for byte (the holes of strided types included), from
 * every root, on MPI_COMM_WORLD and on the two halves of a parity split, at any number of ranks.
 * Gather and scatter: blocks of 1, 3, 17, 300 and 9000 ints (around MPICH's 1 KiB temporary buffer
 * and the rendezvous); MPI_INT both ways; MPI_DOUBLE; ints sent as pairs received as MPI_2INT; a
 * strided type (one int in every two) on the side that is not the root's; MPI_IN_PLACE at the
 * root. The v versions: ((r + root) % 3) * k elements for rank r (some empty), blocks one element
 * apart, in place too. Prints "rooted_check: N ranks, C cases: ok" on rank 0 when every result
 * matched; exits 1 otherwise.
 *   rooted_check [loop K]     (loop: only K calls each of MPI_Gather and MPI_Scatter of one int
 *                              a rank, root 0, each result checked) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"


static void fill(char* buf, size_t bytes, int seed) {
  for (size_t i = 0; i < bytes; ++i) buf[i] = (char)(i * 7 + (size_t)seed * 31 + 1);
}

static void compare(const char* what, const char* got, const char* want, size_t bytes, int root, int k, int in_place) {
  if (memcmp(got, want, bytes) != 0) {
    fprintf(stderr, "rooted_check: rank %d: %s root %d count %d in_place %d differs\n", g_rank, what, root, k, in_place);
    ++g_errors;
  }
}

/* One gather and one scatter: the root's side `rcount` of `rtype` a block spanning `rblock` bytes,
 * every other rank's `scount` of `stype` spanning `sblock`. */
static void run_case(MPI_Comm comm, int root, int scount, MPI_Datatype stype, size_t sblock, int rcount,
                     MPI_Datatype rtype, size_t rblock, int in_place) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const size_t big = rblock * (size_t)n, bytes = big > sblock ? big : sblock;
  char* own = malloc(bytes);
  char* got = malloc(bytes);
  char* want = malloc(bytes);
  /* gather: the root gathers its own block from `own` (in place: its block already in recvbuf) */
  fill(own, bytes, me);
  memset(want, 0x5a, bytes);
  memset(got, 0x5a, bytes);
  if (me == root) {
    if (in_place) {
      fill(want + (size_t)root * rblock, rblock, me + 7);
      memcpy(got, want, bytes);
      CHECK_RC(PMPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, rcount, rtype, root, comm));
      CHECK_RC(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, rcount, rtype, root, comm));
    } else {
      CHECK_RC(PMPI_Gather(own, rcount, rtype, want, rcount, rtype, root, comm));
      CHECK_RC(MPI_Gather(own, rcount, rtype, got, rcount, rtype, root, comm));
    }
    compare("gather", got, want, big, root, rcount, in_place);
  } else {
    CHECK_RC(PMPI_Gather(own, scount, stype, NULL, 0, MPI_DATATYPE_NULL, root, comm));
    CHECK_RC(MPI_Gather(own, scount, stype, NULL, 0, MPI_DATATYPE_NULL, root, comm));
  }
  /* scatter: the reverse */
  memset(want, 0x5a, bytes);
  memset(got, 0x5a, bytes);
  if (me == root) {
    if (in_place) {
      CHECK_RC(PMPI_Scatter(own, rcount, rtype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
      CHECK_RC(MPI_Scatter(own, rcount, rtype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
    } else {
      CHECK_RC(PMPI_Scatter(own, rcount, rtype, want, rcount, rtype, root, comm));
      CHECK_RC(MPI_Scatter(own, rcount, rtype, got, rcount, rtype, root, comm));
      compare("scatter", got, want, rblock, root, rcount, in_place);
    }
  } else {
    CHECK_RC(PMPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, want, scount, stype, root, comm));
    CHECK_RC(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, got, scount, stype, root, comm));
    compare("scatter", got, want, sblock, root, scount, in_place);
  }
  g_cases += 2;
  free(own);
  free(got);
  free(want);
}

/* MPI_Gatherv and MPI_Scatterv of `type` (`size` bytes), rank r's block ((r + root) % 3) * k long. */
static void run_v_case(MPI_Comm comm, int root, int k, MPI_Datatype type, size_t size, int in_place) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int* counts = malloc((size_t)n * sizeof(int));
  int* displs = malloc((size_t)n * sizeof(int));
  int at = 0;
  for (int j = 0; j < n; ++j) {
    counts[j] = ((j + root) % 3) * k;
    displs[j] = at;
    at += counts[j] + 1;
  }
  const int mine = counts[me];
  const size_t bytes = (size_t)(at > 0 ? at : 1) * size;
  char* own = malloc(bytes);
  char* got = malloc(bytes);
  char* want = malloc(bytes);
  fill(own, bytes, me);
  memset(want, 0x5a, bytes);
  memset(got, 0x5a, bytes);
  if (me == root && in_place) {
    fill(want, bytes, me + 7);
    memcpy(got, want, bytes);
    CHECK_RC(PMPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, counts, displs, type, root, comm));
    CHECK_RC(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, counts, displs, type, root, comm));
  } else {
    CHECK_RC(PMPI_Gatherv(own, mine, type, want, counts, displs, type, root, comm));
    CHECK_RC(MPI_Gatherv(own, mine, type, got, counts, displs, type, root, comm));
  }
  if (me == root) compare("gatherv", got, want, bytes, root, k, in_place);
  memset(want, 0x5a, bytes);
  memset(got, 0x5a, bytes);
  if (me == root && in_place) {
    CHECK_RC(PMPI_Scatterv(own, counts, displs, type, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
    CHECK_RC(MPI_Scatterv(own, counts, displs, type, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
  } else {
    CHECK_RC(PMPI_Scatterv(own, counts, displs, type, want, mine, type, root, comm));
    CHECK_RC(MPI_Scatterv(own, counts, displs, type, got, mine, type, root, comm));
    compare("scatterv", got, want, (size_t)mine * size, root, k, in_place);
  }
  g_cases += 2;
  free(counts);
  free(displs);
  free(own);
  free(got);
  free(want);
}

static void cases_on(MPI_Comm comm, MPI_Datatype every_other) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  static const int counts[] = {1, 3, 17, 300, 9000};
  for (int root = 0; root < n; ++root) {
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
      const int k = counts[c];
      const size_t ints = (size_t)k * sizeof(int);
      run_case(comm, root, k, MPI_INT, ints, k, MPI_INT, ints, 0);
      run_case(comm, root, k, MPI_DOUBLE, ints * 2, k, MPI_DOUBLE, ints * 2, 0);
      run_case(comm, root, k, MPI_2INT, ints * 2, 2 * k, MPI_INT, ints * 2, 0);
      run_case(comm, root, k, every_other, ints * 2, k, MPI_INT, ints, 0);
      run_case(comm, root, k, MPI_INT, ints, k, MPI_INT, ints, 1);
    }
    static const int v_counts[] = {1, 300, 9000};
    for (size_t c = 0; c < sizeof v_counts / sizeof v_counts[0]; ++c) {
      run_v_case(comm, root, v_counts[c], MPI_INT, sizeof(int), 0);
      run_v_case(comm, root, v_counts[c], MPI_DOUBLE, sizeof(double), 0);
      run_v_case(comm, root, v_counts[c], MPI_INT, sizeof(int), 1);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int size = world_size();
  const int calls = loop_calls(argc, argv);
  if (calls >= 0) {
    int* all = malloc((size_t)size * sizeof(int));
    for (int k = 0; k < calls; ++k) {
      int mine = 1000 * g_rank + k, back = -1;
      CHECK_RC(MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
      if (g_rank == 0)
        for (int j = 0; j < size; ++j) {
          CHECK(all[j] == 1000 * j + k);
          all[j] += 1;
        }
      CHECK_RC(MPI_Scatter(all, 1, MPI_INT, &back, 1, MPI_INT, 0, MPI_COMM_WORLD));
      CHECK(back == mine + 1);
    }
    free(all);
    return finish_loop("rooted_check", size, calls);
  }
  MPI_Datatype every_other = every_other_int();
  cases_on(MPI_COMM_WORLD, every_other);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  cases_on(half, every_other);
  MPI_Comm_free(&half);
  MPI_Type_free(&every_other);
  return finish_cases("rooted_check", size);
}
