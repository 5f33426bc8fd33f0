/* scan_check: MPI_Scan and MPI_Exscan through whatever the preload puts in front of MPI (libmstep's
 * substitutes under MSTEP_SCAN) against MPICH's own PMPI_Scan / PMPI_Exscan on the same inputs,
 * byte for byte, on MPI_COMM_WORLD and on the two halves of a parity split, at any number of
 * ranks. Vectors of 1, 3, 17, 300, 9000 and 50000 elements; MPI_INT with SUM and MAX, MPI_DOUBLE
 * with SUM of values that are not integral (the same partial sums in the same order give the same
 * bits, other orders other bits), MPI_2INT with MAXLOC, a strided type (every other int) with a
 * commutative user sum, and a user operation that is not commutative, each with and without
 * MPI_IN_PLACE. Prints "scan_check: N ranks, C cases: ok" on rank 0 when every result matched;
 * exits 1 otherwise.
 *   scan_check [loop K]   (loop: only K calls each of MPI_Scan and MPI_Exscan of one int a rank,
 *                          each result checked) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

/* x, y -> 2 y - x: not commutative. */
static void skew(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* x = in;
  int* y = inout;
  for (int i = 0; i < *len; ++i) y[i] = 2 * y[i] - x[i];
}

/* kind: 0 ints, 1 doubles, 2 MAXLOC pairs. `elem` bytes of extent per element. */
static void run_case(MPI_Comm comm, int exclusive, int count, MPI_Datatype type, size_t elem, MPI_Op op, int kind) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const size_t bytes = (size_t)count * elem;
  char* in = malloc(bytes);
  char* got = malloc(bytes);
  char* want = malloc(bytes);
  fill_case_input(in, bytes, me, kind, 0.1, 1e-7);
  for (int in_place = 0; in_place < 2; ++in_place) {
    /* In place, both start from the input; otherwise from a pattern (Exscan leaves rank 0's
     * recvbuf as it was, and a strided type's holes). */
    memset(want, 0x5a, bytes);
    memset(got, 0x5a, bytes);
    if (in_place) memcpy(want, in, bytes), memcpy(got, in, bytes);
    if (exclusive) {
      CHECK_RC(PMPI_Exscan(in_place ? MPI_IN_PLACE : in, want, count, type, op, comm));
      CHECK_RC(MPI_Exscan(in_place ? MPI_IN_PLACE : in, got, count, type, op, comm));
    } else {
      CHECK_RC(PMPI_Scan(in_place ? MPI_IN_PLACE : in, want, count, type, op, comm));
      CHECK_RC(MPI_Scan(in_place ? MPI_IN_PLACE : in, got, count, type, op, comm));
    }
    if (memcmp(got, want, bytes) != 0) {
      fprintf(stderr, "scan_check: rank %d of %d: %s count %d kind %d in_place %d differs\n", g_rank, n,
              exclusive ? "Exscan" : "Scan", count, kind, in_place);
      ++g_errors;
    }
    ++g_cases;
  }
  free(in);
  free(got);
  free(want);
}

static void cases_on(MPI_Comm comm, MPI_Datatype every_other, MPI_Op user_sum, MPI_Op skewed) {
  static const int sizes[] = {1, 3, 17, 300, 9000, 50000};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    for (int exclusive = 0; exclusive < 2; ++exclusive) {
      run_case(comm, exclusive, sizes[c], MPI_INT, sizeof(int), MPI_SUM, 0);
      run_case(comm, exclusive, sizes[c], MPI_INT, sizeof(int), MPI_MAX, 0);
      run_case(comm, exclusive, sizes[c], MPI_DOUBLE, sizeof(double), MPI_SUM, 1);
      run_case(comm, exclusive, sizes[c], MPI_2INT, 2 * sizeof(int), MPI_MAXLOC, 2);
      run_case(comm, exclusive, sizes[c], every_other, 2 * sizeof(int), user_sum, 0);
      run_case(comm, exclusive, sizes[c], MPI_INT, sizeof(int), skewed, 0);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int size = world_size();
  const int calls = loop_calls(argc, argv);
  if (calls >= 0) {
    for (int k = 0; k < calls; ++k) {
      const int in = g_rank + k;
      int out = -1;
      CHECK_RC(MPI_Scan(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
      CHECK(out == g_rank * (g_rank + 1) / 2 + (g_rank + 1) * k);
      out = -1;
      CHECK_RC(MPI_Exscan(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
      CHECK(g_rank == 0 || out == (g_rank - 1) * g_rank / 2 + g_rank * k);
    }
    return finish_loop("scan_check", size, calls);
  }
  MPI_Datatype every_other = every_other_int();
  MPI_Op user_sum, skewed;
  MPI_Op_create(add_every_other, 1, &user_sum);
  MPI_Op_create(skew, 0, &skewed);
  cases_on(MPI_COMM_WORLD, every_other, user_sum, skewed);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  cases_on(half, every_other, user_sum, skewed);
  MPI_Comm_free(&half);
  MPI_Op_free(&user_sum);
  MPI_Op_free(&skewed);
  MPI_Type_free(&every_other);
  return finish_cases("scan_check", size);
}
