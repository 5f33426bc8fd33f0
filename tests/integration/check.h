/* Self-checks of the integration test programs: a failed CHECK prints one line on stderr and
 * makes the program exit with 1 at its end (after MPI_Finalize, so that a wrong result never
 * changes the MPI calls the test counts). */
#ifndef MSTEP_TEST_CHECK_H
#define MSTEP_TEST_CHECK_H

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

#endif
