/* The shared pieces of the collective check programs (allreduce_check, alltoall_check,
 * rooted_check, allgather_check, reduce_scatter_check, scan_check), each of which compares what the
 * preload puts in front of MPI (libmstep's substitutes) with MPICH's own PMPI_ calls on the same
 * inputs. */
#ifndef MSTEP_TEST_COLL_CHECK_H
#define MSTEP_TEST_COLL_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_cases = 0; /* cases compared on this rank */

/* After MPI_Init: sets g_rank and returns MPI_COMM_WORLD's size. */
static inline int world_size(void) {
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/* K of "PROGRAM loop K" (the loop mode: K calls of the program's collective, each checked), or -1. */
static inline int loop_calls(int argc, char** argv) {
  return argc > 2 && strcmp(argv[1], "loop") == 0 ? atoi(argv[2]) : -1;
}

/* A reduction case's input of `bytes` on rank `me`: ints (kind 0); doubles (kind 1),
 * scale * ((3 i + 5 me) mod 977) + jitter * me, not integral where scale or jitter make them so (the
 * same partial sums in the same order give the same bits, other orders other bits); MAXLOC pairs
 * (kind 2), (value with ties, me). */
static inline void fill_case_input(char* in, size_t bytes, int me, int kind, double scale, double jitter) {
  int* iv = (int*)in;
  double* dv = (double*)in;
  for (size_t i = 0; i < bytes / sizeof(int); ++i) iv[i] = (int)((i * 7 + (size_t)me * 13) % 1000) + 1;
  if (kind == 1)
    for (size_t i = 0; i < bytes / sizeof(double); ++i) dv[i] = scale * (double)((i * 3 + (size_t)me * 5) % 977) + jitter * me;
  if (kind == 2)
    for (size_t i = 0; i + 1 < bytes / sizeof(int); i += 2) iv[i] = (int)((i + (size_t)me) % 5), iv[i + 1] = me;
}

/* One int, then a hole of one int: extent 8, 4 bytes of data (committed; the caller frees it). */
static inline MPI_Datatype every_other_int(void) {
  MPI_Datatype t;
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &t);
  MPI_Type_commit(&t);
  return t;
}

/* Sum of ints one every two (every_other_int): a user operation, since MPI's own are not defined
 * on derived types; commutative. */
static inline void add_every_other(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* x = in;
  int* y = inout;
  for (int i = 0; i < *len; ++i) y[2 * i] += x[2 * i];
}

/* The end of the loop mode: rank 0 prints "PROGRAM: N ranks, K calls: ok" when it found no
 * error; MPI_Finalize; main's exit code. */
static inline int finish_loop(const char* program, int size, int calls) {
  if (g_rank == 0 && g_errors == 0) printf("%s: %d ranks, %d calls: ok\n", program, size, calls);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}

/* The end of the cases: every rank's errors summed, and rank 0 prints "PROGRAM: N ranks, C cases:
 * ok" when there were none; MPI_Finalize; main's exit code. */
static inline int finish_cases(const char* program, int size) {
  int bad = 0;
  MPI_Allreduce(&g_errors, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0 && bad == 0) printf("%s: %d ranks, %d cases: ok\n", program, size, g_cases);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}

#endif
