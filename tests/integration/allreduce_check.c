/* allreduce_check: MPI_Allreduce through whatever the preload puts in front of MPI (libmstep's
 * substitute under MSTEP_ALLREDUCE) against MPICH's own PMPI_Allreduce on the same inputs, byte
 * for byte, on MPI_COMM_WORLD and on the two halves of a parity split, at any number of ranks.
 * `allreduce_check reduce`: the same cases of MPI_Reduce (MSTEP_REDUCE) from every root, against
 * MPICH's own not in place (MPI_IN_PLACE at the root compared with that). `allreduce_check loop K`:
 * only K rounds of MPI_Reduce of one int to rank 0 and MPI_Bcast of the sum back, each checked.
 * Cases: counts 1, 2, 3, 7, 64, 1000 and 4099 (odd, and more and fewer than the ranks); MPI_INT
 * with SUM and MAX, MPI_DOUBLE with SUM (integral values: every order of summation is exact),
 * MPI_2INT with MAXLOC, a strided type (every other int) with a commutative user sum, and a user operation
 * that is not commutative (composition of affine maps mod 65521, pairs of ints), each with and
 * without MPI_IN_PLACE. Prints "allreduce_check: N ranks, C cases: ok" on rank 0 when every
 * result matched; exits 1 otherwise. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

enum { kModulus = 65521 };

/* (a1, b1) then (a2, b2): x -> a2 (a1 x + b1) + b2, as the map invec[i] o inoutvec[i] with the
 * lower rank's map applied first. */
static void compose(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* x = in;
  int* y = inout;
  for (int i = 0; i < *len; ++i) {
    const long a1 = x[2 * i], b1 = x[2 * i + 1], a2 = y[2 * i], b2 = y[2 * i + 1];
    y[2 * i] = (int)((a2 * a1) % kModulus);
    y[2 * i + 1] = (int)((a2 * b1 + b2) % kModulus);
  }
}

static int g_root = -1; /* MPI_Reduce's root; -1: MPI_Allreduce */
static int g_substituted = 0; /* MSTEP_REDUCE set to other than mpi */

/* One case: `count` elements of `type` whose buffer spans `bytes`; inputs filled by rank. */
static void run_case(MPI_Comm comm, MPI_Datatype type, MPI_Op op, int count, size_t bytes, int kind) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  char* in = malloc(bytes);
  char* got = malloc(bytes);
  char* want = malloc(bytes);
  fill_case_input(in, bytes, me, kind, 1.0, 0.0); /* integral doubles */
  int* iv = (int*)in;
  if (kind == 3) /* affine maps mod 65521 */
    for (size_t i = 0; i < bytes / sizeof(int); ++i) iv[i] = (int)((i * 31 + (size_t)me * 101 + 1) % kModulus);
  for (int in_place = 0; in_place < 2; ++in_place) {
    memset(want, 0x5a, bytes);
    memset(got, 0x5a, bytes);
    if (g_root >= 0) {
      /* MPICH 4.0.2's own in-place MPI_Reduce of more than 2 KiB to a root other than 0 crashes
       * (2 ranks, ch4:ucx): the reference is never in place, and MPICH's own is not run there. */
      if (in_place && g_root != 0 && bytes > 2048 && !g_substituted) continue;
      if (in_place && me == g_root) memcpy(want, in, bytes); /* the holes of a strided type as in got */
      CHECK_RC(PMPI_Reduce(in, want, count, type, op, g_root, comm));
      if (in_place && me == g_root) {
        memcpy(got, in, bytes);
        CHECK_RC(MPI_Reduce(MPI_IN_PLACE, got, count, type, op, g_root, comm));
      } else {
        CHECK_RC(MPI_Reduce(in, got, count, type, op, g_root, comm));
      }
    } else if (in_place) {
      memcpy(got, in, bytes);
      memcpy(want, in, bytes);
      CHECK_RC(PMPI_Allreduce(MPI_IN_PLACE, want, count, type, op, comm));
      CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, got, count, type, op, comm));
    } else {
      CHECK_RC(PMPI_Allreduce(in, want, count, type, op, comm));
      CHECK_RC(MPI_Allreduce(in, got, count, type, op, comm));
    }
    /* A non-root's recvbuf is not significant (MPICH's own MPI_Reduce may write there). */
    if ((g_root < 0 || me == g_root) && memcmp(got, want, bytes) != 0) {
      fprintf(stderr, "allreduce_check: rank %d: root %d kind %d count %d in_place %d differs\n", g_rank, g_root, kind,
              count, in_place);
      ++g_errors;
    }
    ++g_cases;
  }
  free(in);
  free(got);
  free(want);
}

static void cases_on(MPI_Comm comm, MPI_Op affine, MPI_Op strided_sum, MPI_Datatype pair, MPI_Datatype every_other,
                     int reduce) {
  static const int counts[] = {1, 2, 3, 7, 64, 1000, 4099};
  int size = 1;
  MPI_Comm_size(comm, &size);
  for (g_root = reduce ? 0 : -1; g_root < (reduce ? size : 0); ++g_root)
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const int n = counts[c];
    run_case(comm, MPI_INT, MPI_SUM, n, (size_t)n * sizeof(int), 0);
    run_case(comm, MPI_INT, MPI_MAX, n, (size_t)n * sizeof(int), 0);
    run_case(comm, MPI_DOUBLE, MPI_SUM, n, (size_t)n * sizeof(double), 1);
    run_case(comm, MPI_2INT, MPI_MAXLOC, n, (size_t)n * 2 * sizeof(int), 2);
    run_case(comm, every_other, strided_sum, n, (size_t)n * 2 * sizeof(int), 0);
    run_case(comm, pair, affine, n, (size_t)n * 2 * sizeof(int), 3);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int reduce = argc > 1 && strcmp(argv[1], "reduce") == 0;
  const int size = world_size();
  const int calls = loop_calls(argc, argv);
  if (calls >= 0) { /* K rounds of MPI_Reduce to 0 and MPI_Bcast back */
    for (int k = 0; k < calls; ++k) {
      int mine = g_rank + k, sum = -1;
      CHECK_RC(MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
      CHECK_RC(MPI_Bcast(&sum, 1, MPI_INT, 0, MPI_COMM_WORLD));
      CHECK(sum == size * (size - 1) / 2 + size * k);
    }
    return finish_loop("allreduce_check", size, calls);
  }
  const char* setting = getenv("MSTEP_REDUCE");
  g_substituted = setting && *setting && strcmp(setting, "mpi") != 0;
  MPI_Op affine, strided_sum;
  MPI_Op_create(compose, 0, &affine);
  MPI_Op_create(add_every_other, 1, &strided_sum);
  MPI_Datatype pair, every_other = every_other_int();
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  cases_on(MPI_COMM_WORLD, affine, strided_sum, pair, every_other, reduce);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  cases_on(half, affine, strided_sum, pair, every_other, reduce);
  MPI_Comm_free(&half);
  MPI_Type_free(&pair);
  MPI_Type_free(&every_other);
  MPI_Op_free(&affine);
  MPI_Op_free(&strided_sum);
  return finish_cases("allreduce_check", size);
}
