/* Busy computation for a known wall time, shared by the report test programs. */
#ifndef MSTEP_TESTS_SPIN_H
#define MSTEP_TESTS_SPIN_H
#include <time.h>

static void spin_ms(double ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) * 1e-6 < ms);
}
#endif
