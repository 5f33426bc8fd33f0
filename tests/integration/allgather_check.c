/* allgather_check: MPI_Allgather through whatever the preload puts in front of MPI (libmstep's
 * substitute under MSTEP_ALLGATHER) against MPICH's own PMPI_Allgather on the same inputs, byte for
 * byte (the holes of strided types included), on MPI_COMM_WORLD and on the two halves of a parity
 * split, at any number of ranks. Blocks of 1, 3, 17, 300, 9000 and 40000 ints (around MPICH's 80 KiB
 * and 512 KiB in all); MPI_INT both ways; MPI_DOUBLE; ints sent as pairs received as MPI_2INT; a
 * strided send type (one int in every two) received contiguous; MPI_IN_PLACE. Prints
 * "allgather_check: N ranks, C cases: ok" on rank 0 when every result matched; exits 1 otherwise.
 *   allgather_check [loop K]     (loop: only K calls of one int a rank, each result checked) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_cases = 0;

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

static void cases_on(MPI_Comm comm, MPI_Datatype every_other) {
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
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 2 && strcmp(argv[1], "loop") == 0) {
    const int calls = atoi(argv[2]);
    int* all = malloc((size_t)size * sizeof(int));
    for (int k = 0; k < calls; ++k) {
      const int mine = 1000 * g_rank + k;
      CHECK_RC(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
      for (int j = 0; j < size; ++j) CHECK(all[j] == 1000 * j + k);
    }
    free(all);
    if (g_rank == 0 && g_errors == 0) printf("allgather_check: %d ranks, %d calls: ok\n", size, calls);
    MPI_Finalize();
    return g_errors ? 1 : 0;
  }
  MPI_Datatype every_other;
  /* one int, then a hole of one int: extent 8, 4 bytes of data */
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other);
  MPI_Type_commit(&every_other);
  cases_on(MPI_COMM_WORLD, every_other);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  cases_on(half, every_other);
  MPI_Comm_free(&half);
  MPI_Type_free(&every_other);
  int bad = 0;
  MPI_Allreduce(&g_errors, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0 && bad == 0) printf("allgather_check: %d ranks, %d cases: ok\n", size, g_cases);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
