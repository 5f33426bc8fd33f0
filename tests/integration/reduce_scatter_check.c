/* reduce_scatter_check: MPI_Reduce_scatter and MPI_Reduce_scatter_block through whatever the preload
 * puts in front of MPI (libmstep's substitute under MSTEP_REDUCE_SCATTER) against MPICH's own
 * PMPI_Reduce_scatter(_block) on the same inputs, byte for byte, on MPI_COMM_WORLD and on the two
 * halves of a parity split, at any number of ranks. Blocks of 1, 3, 17, 300, 9000 and 50000
 * elements (around MPICH's 512 KiB in all); MPI_Reduce_scatter's blocks of differing sizes, some
 * empty. MPI_INT with SUM and MAX, MPI_DOUBLE with SUM of values that are not integral (the same
 * partial sums in the same order give the same bits, other orders other bits; integral values
 * when MSTEP_REDUCE_SCATTER forces an algorithm other than MPICH's choice), MPI_2INT with
 * MAXLOC, a strided type (every other int) with a commutative user sum, and a user operation that
 * is not commutative (MPICH's own then runs), each with and without MPI_IN_PLACE. Prints
 * "reduce_scatter_check: N ranks, C cases: ok" on rank 0 when every result matched; exits 1
 * otherwise.
 *   reduce_scatter_check [loop K]   (loop: only K calls of MPI_Reduce_scatter_block of one int a
 *                                    rank, each result checked) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

static int g_substituted = 0; /* MSTEP_REDUCE_SCATTER set to other than mpi */
static int g_forced = 0;      /* ... to an algorithm, not MPICH's choice (pt2pt) */
static MPI_Op g_skewed;       /* the non-commutative operation: MPICH's own runs it */

/* x, y -> 2 y - x: not commutative. */
static void skew(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* x = in;
  int* y = inout;
  for (int i = 0; i < *len; ++i) y[i] = 2 * y[i] - x[i];
}

/* kind: 0 ints, 1 doubles, 2 MAXLOC pairs. `elem` bytes of extent per element. */
static void run_case(MPI_Comm comm, const int* counts, int block, MPI_Datatype type, size_t elem, MPI_Op op, int kind) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  size_t total = 0;
  for (int i = 0; i < n; ++i) total += (size_t)counts[i];
  const size_t bytes = total * elem + 1, mine = (size_t)counts[me] * elem + 1;
  char* in = malloc(bytes);
  char* got = malloc(bytes);
  char* want = malloc(bytes);
  /* Integral values under a forced algorithm, which sums in another order than MPICH's choice. */
  fill_case_input(in, bytes, me, kind, g_forced ? 1.0 : 0.1, g_forced ? 0.0 : 1e-7);
  for (int in_place = 0; in_place < 2; ++in_place) {
    /* MPICH 4.0.2's own in-place MPI_Reduce_scatter from 512 KiB in all (pairwise) moves a rank's
     * block to the start of recvbuf with a copy that asserts when the two overlap (uneven
     * blocks): the reference is never in place, and MPICH's own is not run in place there. */
    if (in_place && !block && total * elem >= 524288 && (!g_substituted || op == g_skewed)) continue;
    memset(want, 0x5a, bytes);
    memset(got, 0x5a, bytes);
    if (in_place) memcpy(got, in, bytes);
    if (block) {
      CHECK_RC(PMPI_Reduce_scatter_block(in, want, counts[0], type, op, comm));
      CHECK_RC(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, got, counts[0], type, op, comm));
    } else {
      CHECK_RC(PMPI_Reduce_scatter(in, want, counts, type, op, comm));
      CHECK_RC(MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : in, got, counts, type, op, comm));
    }
    /* The result is the first block of recvbuf (its holes as the input left them in place: the
     * reference's are MPICH's 0x5a there); in place the rest is MPI's scratch. */
    if (in_place && type != MPI_INT && type != MPI_DOUBLE && type != MPI_2INT)
      for (size_t i = 0; i + 1 < mine; i += 2 * sizeof(int)) memcpy(want + i + sizeof(int), got + i + sizeof(int), sizeof(int));
    if (memcmp(got, want, in_place ? mine - 1 : mine) != 0) {
      fprintf(stderr, "reduce_scatter_check: rank %d of %d: %s count %d kind %d in_place %d differs\n", g_rank, n,
              block ? "block" : "v", counts[me], kind, in_place);
      ++g_errors;
    }
    ++g_cases;
  }
  free(in);
  free(got);
  free(want);
}

static void cases_on(MPI_Comm comm, MPI_Datatype every_other, MPI_Op user_sum, MPI_Op skewed) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  int* counts = malloc((size_t)n * sizeof(int));
  static const int sizes[] = {1, 3, 17, 300, 9000, 50000};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    for (int block = 1; block >= 0; --block) {
      /* v: uneven blocks, the first of them empty when there are several */
      for (int i = 0; i < n; ++i) counts[i] = block ? sizes[c] : sizes[c] * ((7 * i) % n) / (n > 1 ? n - 1 : 1);
      run_case(comm, counts, block, MPI_INT, sizeof(int), MPI_SUM, 0);
      run_case(comm, counts, block, MPI_INT, sizeof(int), MPI_MAX, 0);
      run_case(comm, counts, block, MPI_DOUBLE, sizeof(double), MPI_SUM, 1);
      run_case(comm, counts, block, MPI_2INT, 2 * sizeof(int), MPI_MAXLOC, 2);
      run_case(comm, counts, block, every_other, 2 * sizeof(int), user_sum, 0);
      run_case(comm, counts, block, MPI_INT, sizeof(int), skewed, 0);
    }
  }
  free(counts);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int size = world_size();
  const int calls = loop_calls(argc, argv);
  if (calls >= 0) {
    int* in = malloc((size_t)size * sizeof(int));
    for (int k = 0; k < calls; ++k) {
      for (int j = 0; j < size; ++j) in[j] = 1000 * g_rank + j + k;
      int out = -1;
      CHECK_RC(MPI_Reduce_scatter_block(in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
      CHECK(out == 1000 * (size * (size - 1) / 2) + size * (g_rank + k));
    }
    free(in);
    return finish_loop("reduce_scatter_check", size, calls);
  }
  MPI_Datatype every_other = every_other_int();
  MPI_Op user_sum, skewed;
  MPI_Op_create(add_every_other, 1, &user_sum);
  MPI_Op_create(skew, 0, &skewed);
  g_skewed = skewed;
  const char* setting = getenv("MSTEP_REDUCE_SCATTER");
  g_substituted = setting && *setting && strcmp(setting, "mpi") != 0;
  g_forced = g_substituted && strcmp(setting, "pt2pt") != 0;
  cases_on(MPI_COMM_WORLD, every_other, user_sum, skewed);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  cases_on(half, every_other, user_sum, skewed);
  MPI_Comm_free(&half);
  MPI_Op_free(&user_sum);
  MPI_Op_free(&skewed);
  MPI_Type_free(&every_other);
  return finish_cases("reduce_scatter_check", size);
}
