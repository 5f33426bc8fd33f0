/* master_worker: dynamic load balancing. Rank 0 hands out tasks -- a task id and a range of
 * integers -- to the workers (ranks 1..p-1) with MPI_Send; a worker sums the Collatz stopping
 * times of the integers in its range and sends the sum back; the master receives results with
 * MPI_ANY_SOURCE and MPI_ANY_TAG and gives the next task to whichever worker answered, and when the
 * tasks run out sends each worker an empty message with the stop tag. Range lengths come from an
 * LCG (1 to 64 times work_scale integers), so the work varies from task to task and which worker
 * gets which task depends on timing; the sum does not.
 * Usage: master_worker [tasks] [work_scale] (defaults 200 400). Needs at least 2 ranks. After
 * MPI_Finalize, so that it stays out of the recorded run, rank 0 checks that every task came back
 * once and that the sum of the results equals the sum computed sequentially. Exits non-zero if
 * not. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3 };

/* Task t: the integers [start, start + length). */
static void task_range(long t, long work_scale, long* start, long* length) {
  uint64_t state = 0x2545f4914f6cdd1dULL ^ (uint64_t)t;
  for (int i = 0; i < 3; ++i) state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  *start = 1 + t * 1000003L;
  *length = work_scale * (long)(1 + (state >> 33) % 64);
}

/* Sum over [start, start + length) of the number of Collatz steps to reach 1. */
static long collatz(long start, long length) {
  long steps = 0;
  for (long i = start; i < start + length; ++i)
    for (uint64_t x = (uint64_t)i; x != 1; ++steps) x = x & 1 ? 3 * x + 1 : x / 2;
  return steps;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long tasks = argc > 1 ? atol(argv[1]) : 200;
  const long work_scale = argc > 2 ? atol(argv[2]) : 400;
  if (size < 2 || tasks < 0 || tasks > 1000000 || work_scale < 1 || work_scale > 10000000) {
    if (rank == 0) {
      if (size < 2) fprintf(stderr, "master_worker: needs at least 2 ranks (a master and a worker)\n");
      fprintf(stderr, "usage: master_worker [tasks, 0..1000000] [work_scale, 1..10000000]\n");
    }
    MPI_Finalize();
    return 1;
  }

  long* results = NULL; /* rank 0: result of each task */
  int* returned = NULL; /* rank 0: how often each task came back */
  if (rank == 0) {
    results = calloc((size_t)tasks + 1, sizeof(long));
    returned = calloc((size_t)tasks + 1, sizeof(int));
    long next = 0;
    int active = 0;
    long task[3];
    for (int w = 1; w < size; ++w) {
      if (next < tasks) {
        task[0] = next;
        task_range(next++, work_scale, &task[1], &task[2]);
        MPI_Send(task, 3, MPI_LONG, w, TAG_TASK, MPI_COMM_WORLD);
        ++active;
      } else {
        MPI_Send(task, 0, MPI_LONG, w, TAG_STOP, MPI_COMM_WORLD);
      }
    }
    while (active > 0) {
      long result[2];
      MPI_Status status;
      MPI_Recv(result, 2, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_TAG == TAG_RESULT && result[0] >= 0 && result[0] < tasks) {
        results[result[0]] = result[1];
        ++returned[result[0]];
      }
      if (next < tasks) {
        task[0] = next;
        task_range(next++, work_scale, &task[1], &task[2]);
        MPI_Send(task, 3, MPI_LONG, status.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
      } else {
        MPI_Send(task, 0, MPI_LONG, status.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
        --active;
      }
    }
  } else {
    for (;;) {
      long task[3];
      MPI_Status status;
      MPI_Recv(task, 3, MPI_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_TAG == TAG_STOP) break;
      long result[2] = {task[0], collatz(task[1], task[2])};
      MPI_Send(result, 2, MPI_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();

  int ok = 1;
  if (rank == 0) {
    long sum = 0, expected = 0;
    for (long t = 0; t < tasks; ++t) {
      long start, length;
      task_range(t, work_scale, &start, &length);
      expected += collatz(start, length);
      sum += results[t];
      ok = ok && returned[t] == 1;
    }
    ok = ok && sum == expected;
    printf("master_worker: %d ranks, %ld tasks, work scale %ld, sum %ld (expected %ld): %s\n", size, tasks,
           work_scale, sum, expected, ok ? "ok" : "WRONG");
    free(results);
    free(returned);
  }
  return ok ? 0 : 1;
}
