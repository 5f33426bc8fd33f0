/* Self-checks of the integration test programs: a failed CHECK prints one line on stderr and
 * makes the program exit with 1 at its end (after MPI_Finalize, so that a wrong result never
 * changes the MPI calls the test counts). */
#ifndef MSTEP_TEST_CHECK_H
#define MSTEP_TEST_CHECK_H

#include <mpi.h>
#include <stdio.h>

static int g_errors = 0;
static int g_rank = -1;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: rank %d: check failed: %s\n", __FILE__, __LINE__, g_rank, \
              #cond);                                                                  \
      ++g_errors;                                                                      \
    }                                                                                  \
  } while (0)

#define CHECK_RC(call) CHECK((call) == MPI_SUCCESS)

/* The start of a program that needs exactly 2 ranks, after MPI_Init: sets g_rank and returns 1.
 * Otherwise (or when `argument`, naming a required argv[1], is not there) rank 0 says so on stderr,
 * MPI_Finalize is called and 0 is returned: main then returns 2. */
static inline int two_ranks(const char* program, int argc, const char* argument) {
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 2 && (!argument || argc >= 2)) return 1;
  if (g_rank == 0) fprintf(stderr, "%s: needs exactly 2 ranks%s%s\n", program, argument ? " and " : "", argument ? argument : "");
  MPI_Finalize();
  return 0;
}

#endif
