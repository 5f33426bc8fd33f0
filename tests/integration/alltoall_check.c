/* alltoall_check: MPI_Alltoall through whatever the preload puts in front of MPI (libmstep's
 * substitute under MSTEP_ALLTOALL) against MPICH's own PMPI_Alltoall on the same inputs, byte for
 * byte (the holes of strided types included), on MPI_COMM_WORLD and on the two halves of a parity
 * split, at any number of ranks. Cases: blocks of 1, 2, 3, 17, 64 and 65 ints (around Bruck's 256
 * bytes), 1000 and 9000 ints (around scattered's 32 KiB); MPI_INT both ways; MPI_DOUBLE; ints sent
 * as pairs received as MPI_2INT (another type of the same signature); a strided send type (one int
 * in every two) received contiguous; and MPI_IN_PLACE (MPICH's own runs it). Then MPI_Alltoallv
 * (run_v_case), whose substitute runs under any MSTEP_ALLTOALL but mpi. Prints
 * "alltoall_check: N ranks, C cases: ok" on rank 0 when every result matched; exits 1 otherwise.
 *   alltoall_check [loop K]     (loop: only K calls of one int a rank, each result checked) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"


/* One case: blocks of `scount` `stype` sent, `rcount` `rtype` received; `sblock`/`rblock` the
 * bytes a block spans in each buffer. */
static void run_case(MPI_Comm comm, int scount, MPI_Datatype stype, size_t sblock, int rcount, MPI_Datatype rtype,
                     size_t rblock, int in_place) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const size_t sbytes = sblock * (size_t)n, rbytes = rblock * (size_t)n;
  char* in = malloc(sbytes);
  char* got = malloc(rbytes);
  char* want = malloc(rbytes);
  int* iv = (int*)in;
  for (size_t i = 0; i < sbytes / sizeof(int); ++i) iv[i] = (int)(i * 7 + (size_t)me * 100003 + 1);
  memset(want, 0x5a, rbytes);
  memset(got, 0x5a, rbytes);
  if (in_place) {
    int* w = (int*)want;
    for (size_t i = 0; i < rbytes / sizeof(int); ++i) w[i] = (int)(i * 3 + (size_t)me * 1009);
    memcpy(got, want, rbytes);
    CHECK_RC(PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, rcount, rtype, comm));
    CHECK_RC(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, rcount, rtype, comm));
  } else {
    CHECK_RC(PMPI_Alltoall(in, scount, stype, want, rcount, rtype, comm));
    CHECK_RC(MPI_Alltoall(in, scount, stype, got, rcount, rtype, comm));
  }
  if (memcmp(got, want, rbytes) != 0) {
    fprintf(stderr, "alltoall_check: rank %d of %d: block %d (%zu bytes) in_place %d differs\n", g_rank, n, scount,
            sblock, in_place);
    ++g_errors;
  }
  ++g_cases;
  free(in);
  free(got);
  free(want);
}

/* MPI_Alltoallv: rank j sends ((j + r) % 3) * k elements of `type` (`size` bytes) to rank r (so
 * some blocks are empty), each block one element after the one before (holes left untouched);
 * in place too (MPICH's own runs it). */
static void run_v_case(MPI_Comm comm, int k, MPI_Datatype type, size_t size, int in_place) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int* counts = malloc((size_t)n * sizeof(int));
  int* displs = malloc((size_t)n * sizeof(int));
  int at = 0;
  for (int j = 0; j < n; ++j) {
    counts[j] = ((j + me) % 3) * k;
    displs[j] = at;
    at += counts[j] + 1;
  }
  const size_t bytes = (size_t)(at > 0 ? at : 1) * size;
  char* in = malloc(bytes);
  char* got = malloc(bytes);
  char* want = malloc(bytes);
  for (size_t i = 0; i < bytes; ++i) in[i] = (char)(i * 7 + (size_t)me * 31 + 1);
  memset(want, 0x5a, bytes);
  memset(got, 0x5a, bytes);
  if (in_place) {
    memcpy(want, in, bytes);
    memcpy(got, in, bytes);
    CHECK_RC(PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, want, counts, displs, type, comm));
    CHECK_RC(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, got, counts, displs, type, comm));
  } else {
    CHECK_RC(PMPI_Alltoallv(in, counts, displs, type, want, counts, displs, type, comm));
    CHECK_RC(MPI_Alltoallv(in, counts, displs, type, got, counts, displs, type, comm));
  }
  if (memcmp(got, want, bytes) != 0) {
    fprintf(stderr, "alltoall_check: rank %d of %d: alltoallv k %d (%zu-byte elements) in_place %d differs\n", g_rank,
            n, k, size, in_place);
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
  static const int counts[] = {1, 2, 3, 17, 64, 65, 1000, 9000};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const int k = counts[c];
    const size_t ints = (size_t)k * sizeof(int);
    run_case(comm, k, MPI_INT, ints, k, MPI_INT, ints, 0);
    run_case(comm, k, MPI_DOUBLE, ints * 2, k, MPI_DOUBLE, ints * 2, 0);
    run_case(comm, 2 * k, MPI_INT, ints * 2, k, MPI_2INT, ints * 2, 0);
    run_case(comm, k, every_other, ints * 2, k, MPI_INT, ints, 0);
    run_case(comm, 0, MPI_INT, ints, k, MPI_INT, ints, 1);
  }
  static const int v_counts[] = {1, 5, 300, 9000};
  for (size_t c = 0; c < sizeof v_counts / sizeof v_counts[0]; ++c) {
    run_v_case(comm, v_counts[c], MPI_INT, sizeof(int), 0);
    run_v_case(comm, v_counts[c], MPI_DOUBLE, sizeof(double), 0);
    run_v_case(comm, v_counts[c], MPI_INT, sizeof(int), 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int size = world_size();
  const int calls = loop_calls(argc, argv);
  if (calls >= 0) {
    int* out = malloc((size_t)size * sizeof(int));
    int* in = malloc((size_t)size * sizeof(int));
    for (int k = 0; k < calls; ++k) {
      for (int j = 0; j < size; ++j) out[j] = 1000 * g_rank + j + k;
      CHECK_RC(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD));
      for (int j = 0; j < size; ++j) CHECK(in[j] == 1000 * j + g_rank + k);
    }
    free(out);
    free(in);
    return finish_loop("alltoall_check", size, calls);
  }
  MPI_Datatype every_other = every_other_int();
  cases_on(MPI_COMM_WORLD, every_other);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  cases_on(half, every_other);
  MPI_Comm_free(&half);
  MPI_Type_free(&every_other);
  return finish_cases("alltoall_check", size);
}
