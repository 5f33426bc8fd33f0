/* allgather_check: MPI_Allgather and MPI_Allgatherv through whatever the preload puts in front of
 * MPI (libmstep's substitute under MSTEP_ALLGATHER) against MPICH's own PMPI_Allgather(v) on the
 * same inputs, byte for byte (the holes of strided types and the gaps between blocks included), on
 * MPI_COMM_WORLD and on the two halves of a parity split, at any number of ranks. Blocks of 1, 3,
 * 17, 300, 9000 and 40000 ints (around MPICH's 80 KiB and 512 KiB in all); MPI_Allgatherv's blocks
 * of differing sizes, some empty, some over 32 KiB, in reverse rank order with gaps; MPI_INT both
 * ways; MPI_DOUBLE; ints sent as pairs received as MPI_2INT; a strided send type (one int in every
 * two) received contiguous; MPI_IN_PLACE. Prints
 * "allgather_check: N ranks, C cases: ok" on rank 0 when every result matched; exits 1 otherwise.
 *   allgather_check [loop K]     (loop: only K calls of one int a rank, each result checked) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"


static void run_case(MPI_Comm comm, int scount, MPI_Datatype stype, size_t sblock, int rcount, MPI_Datatype rtype,
                     size_t rblock, int in_place) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const size_t rbytes = rblock * (size_t)n;
  char* in = malloc(sblock);
  char* got = malloc(rbytes);
  char* want = malloc(rbytes);
  for (size_t i = 0; i < sblock; ++i) in[i] = (char)(i * 7 + (size_t)me * 31 + 1);
  memset(want, 0x5a, rbytes);
  if (in_place) {
    for (size_t i = 0; i < rblock; ++i) want[(size_t)me * rblock + i] = (char)(i * 3 + (size_t)me * 13);
    memcpy(got, want, rbytes);
    CHECK_RC(PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, rcount, rtype, comm));
    CHECK_RC(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, rcount, rtype, comm));
  } else {
    memset(got, 0x5a, rbytes);
    CHECK_RC(PMPI_Allgather(in, scount, stype, want, rcount, rtype, comm));
    CHECK_RC(MPI_Allgather(in, scount, stype, got, rcount, rtype, comm));
  }
  if (memcmp(got, want, rbytes) != 0) {
    fprintf(stderr, "allgather_check: rank %d of %d: count %d in_place %d differs\n", g_rank, n, rcount, in_place);
    ++g_errors;
  }
  ++g_cases;
  free(in);
  free(got);
  free(want);
}

/* MPI_Allgatherv: rank i gives base + step * ((7 i) mod n) elements (some blocks empty when base
 * is 0), laid out in reverse rank order with a gap of one element between blocks. */
static void run_case_v(MPI_Comm comm, int base, int step, MPI_Datatype stype, int sfactor, size_t sext,
                       MPI_Datatype rtype, size_t rext, int in_place) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int* counts = malloc((size_t)n * sizeof(int));
  int* displs = malloc((size_t)n * sizeof(int));
  int at = 0;
  for (int i = 0; i < n; ++i) counts[i] = base + step * ((7 * i) % n);
  for (int i = n - 1; i >= 0; --i) {
    displs[i] = at;
    at += counts[i] + 1;
  }
  const size_t rbytes = (size_t)at * rext, sbytes = (size_t)counts[me] * (size_t)sfactor * sext + 1;
  char* in = malloc(sbytes);
  char* got = malloc(rbytes + 1);
  char* want = malloc(rbytes + 1);
  for (size_t i = 0; i < sbytes; ++i) in[i] = (char)(i * 5 + (size_t)me * 29 + 3);
  memset(want, 0x3c, rbytes + 1);
  if (in_place) {
    for (size_t i = 0; i < (size_t)counts[me] * rext; ++i) want[(size_t)displs[me] * rext + i] = (char)(i * 11 + (size_t)me);
    memcpy(got, want, rbytes + 1);
    CHECK_RC(PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, counts, displs, rtype, comm));
    CHECK_RC(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, counts, displs, rtype, comm));
  } else {
    memset(got, 0x3c, rbytes + 1);
    CHECK_RC(PMPI_Allgatherv(in, counts[me] * sfactor, stype, want, counts, displs, rtype, comm));
    CHECK_RC(MPI_Allgatherv(in, counts[me] * sfactor, stype, got, counts, displs, rtype, comm));
  }
  if (memcmp(got, want, rbytes + 1) != 0) {
    fprintf(stderr, "allgather_check: rank %d of %d: allgatherv base %d step %d in_place %d differs\n", g_rank, n, base,
            step, in_place);
    ++g_errors;
  }
  ++g_cases;
  free(counts);
  free(displs);
  free(in);
  free(got);
  free(want);
}

static void cases_on(MPI_Comm comm, MPI_Datatype every_other) {
  /* around 80 KiB and 512 KiB in all at 3 and 4 ranks, and blocks over 32 KiB (the ring's chunks) */
  static const int v[][2] = {{1, 0}, {0, 3}, {0, 0}, {17, 5}, {300, 100}, {2000, 1500}, {9000, 0}, {40000, 7000}};
  for (size_t c = 0; c < sizeof v / sizeof v[0]; ++c) {
    const int base = v[c][0], step = v[c][1];
    run_case_v(comm, base, step, MPI_INT, 1, sizeof(int), MPI_INT, sizeof(int), 0);
    run_case_v(comm, base, step, MPI_DOUBLE, 1, sizeof(double), MPI_DOUBLE, sizeof(double), 0);
    run_case_v(comm, base, step, MPI_INT, 2, sizeof(int), MPI_2INT, 2 * sizeof(int), 0);
    run_case_v(comm, base, step, every_other, 1, 2 * sizeof(int), MPI_INT, sizeof(int), 0);
    run_case_v(comm, base, step, MPI_INT, 1, sizeof(int), MPI_INT, sizeof(int), 1);
  }
  static const int counts[] = {1, 3, 17, 300, 9000, 40000};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const int k = counts[c];
    const size_t ints = (size_t)k * sizeof(int);
    run_case(comm, k, MPI_INT, ints, k, MPI_INT, ints, 0);
    run_case(comm, k, MPI_DOUBLE, ints * 2, k, MPI_DOUBLE, ints * 2, 0);
    run_case(comm, 2 * k, MPI_INT, ints * 2, k, MPI_2INT, ints * 2, 0);
    run_case(comm, k, every_other, ints * 2, k, MPI_INT, ints, 0);
    run_case(comm, 0, MPI_INT, 1, k, MPI_INT, ints, 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int size = world_size();
  const int calls = loop_calls(argc, argv);
  if (calls >= 0) {
    int* all = malloc((size_t)size * sizeof(int));
    for (int k = 0; k < calls; ++k) {
      const int mine = 1000 * g_rank + k;
      CHECK_RC(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
      for (int j = 0; j < size; ++j) CHECK(all[j] == 1000 * j + k);
    }
    free(all);
    return finish_loop("allgather_check", size, calls);
  }
  MPI_Datatype every_other = every_other_int();
  cases_on(MPI_COMM_WORLD, every_other);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  cases_on(half, every_other);
  MPI_Comm_free(&half);
  MPI_Type_free(&every_other);
  return finish_cases("allgather_check", size);
}
