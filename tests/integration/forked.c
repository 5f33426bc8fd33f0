/* forked: a rank that forks a child which exits without exec (so the child runs the atexit handlers
 * and static destructors of the copy of libmstep it inherited), then goes on with MPI.
 * Usage: forked   (1 rank or more)
 * Each rank: 1000 x MPI_Send of one int to MPI_PROC_NULL, fork, the child exit(0)s, the parent waits
 * for it, then 1000 more sends and MPI_Finalize. Prints "child_exit=0" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int x = 1;
  for (int i = 0; i < 1000; ++i) CHECK_RC(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  const pid_t child = fork();
  if (child == 0) exit(0);
  int status = -1;
  CHECK(child > 0 && waitpid(child, &status, 0) == child);
  for (int i = 0; i < 1000; ++i) CHECK_RC(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  if (g_rank == 0) printf("child_exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  MPI_Finalize();
  return g_errors ? 1 : 0;
}
