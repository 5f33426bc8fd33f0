/* gauss: Gaussian elimination as in the LogGPS paper (Ino, Fujimoto, Hagihara, Table 7). An n x n
 * diagonally dominant system, generated deterministically (so no pivoting), is distributed by rows
 * cyclically (row i on rank i % p). For each pivot row k the owner divides the row by its pivot and
 * sends the remaining part -- columns k+1..n of the augmented row [A|b], n-k doubles -- to every
 * other rank with MPI_Send (a linear broadcast by point-to-point messages, not MPI_Bcast); everyone
 * then eliminates column k from its rows below k. Row messages shrink from 8n bytes to 8 bytes, so
 * they cross the eager/rendezvous boundary S (8-16 KiB with this MPICH) as k grows. Rank 0 keeps
 * every pivot row it receives and does the back substitution.
 * Usage: gauss [n] [fragment_bytes]. n defaults to 2048 (first row 16 KiB); fragment_bytes > 0
 * sends each row in pieces of at most that many bytes (the paper's "fragmented code"), 0 (default)
 * sends it whole. The check, ||Ax-b|| / ||b|| < 1e-8 with A and b regenerated on rank 0, runs after
 * MPI_Finalize so that it stays out of the recorded run. Exits non-zero if it fails. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Element (i, j) of A, j < n, or b[i] for j == n: splitmix64 of the index, off-diagonal entries in
 * [-0.5, 0.5), diagonal n, so every row is strictly diagonally dominant. */
static double element(int n, int i, int j) {
  if (i == j) return (double)n;
  uint64_t z = (uint64_t)i * (uint64_t)(n + 1) + (uint64_t)j + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 2048;
  const long fragment_bytes = argc > 2 ? atol(argv[2]) : 0;
  if (n < 1 || fragment_bytes < 0) {
    if (rank == 0) fprintf(stderr, "usage: gauss [n >= 1] [fragment_bytes >= 0]\n");
    MPI_Finalize();
    return 1;
  }
  const int fragment = fragment_bytes == 0 ? n : (fragment_bytes < 8 ? 1 : (int)(fragment_bytes / 8 < n ? fragment_bytes / 8 : n));
  const int width = n + 1; /* augmented row [A|b] */
  const int local_rows = (n - rank + size - 1) / size;

  /* Local rows: global row i = rank + li * size. */
  double* rows = malloc((size_t)(local_rows > 0 ? local_rows : 1) * (size_t)width * sizeof(double));
  for (int li = 0; li < local_rows; ++li)
    for (int j = 0; j < width; ++j) rows[(size_t)li * width + j] = element(n, rank + li * size, j);

  /* Rank 0: the normalised pivot rows, packed; row k holds columns k+1..n (n-k doubles). */
  double* upper = NULL;
  if (rank == 0) upper = malloc((size_t)n * (size_t)(n + 1) / 2 * sizeof(double));
  double* buffer = malloc((size_t)n * sizeof(double));

  size_t offset = 0; /* offset of packed row k in upper */
  for (int k = 0; k < n; ++k) {
    const int owner = k % size;
    const int len = n - k;
    double* pivot_row;
    if (rank == owner) {
      double* row = rows + (size_t)(k / size) * width;
      const double pivot = row[k];
      for (int j = k + 1; j < width; ++j) row[j] /= pivot;
      row[k] = 1.0;
      pivot_row = row + k + 1;
      for (int step = 1; step < size; ++step) {
        const int dest = (owner + step) % size;
        for (int off = 0; off < len; off += fragment)
          MPI_Send(pivot_row + off, len - off < fragment ? len - off : fragment, MPI_DOUBLE, dest, 0, MPI_COMM_WORLD);
      }
      if (rank == 0) memcpy(upper + offset, pivot_row, (size_t)len * sizeof(double));
    } else {
      pivot_row = rank == 0 ? upper + offset : buffer;
      for (int off = 0; off < len; off += fragment)
        MPI_Recv(pivot_row + off, len - off < fragment ? len - off : fragment, MPI_DOUBLE, owner, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    /* Eliminate column k from the local rows below k. */
    const int first = k < rank ? 0 : (k - rank) / size + 1; /* first li with rank + li * size > k */
    for (int li = first; li < local_rows; ++li) {
      double* row = rows + (size_t)li * width;
      const double factor = row[k];
      double* restrict target = row + k + 1;
      const double* restrict source = pivot_row;
      for (int j = 0; j < len; ++j) target[j] -= factor * source[j];
      row[k] = 0.0;
    }
    offset += (size_t)len;
  }

  /* Back substitution on rank 0: x[k] = b'[k] - sum_{j>k} U[k][j] x[j]; packed row k starts at
   * column k+1 and its last entry is b'[k]. */
  double* x = NULL;
  if (rank == 0) {
    x = malloc((size_t)n * sizeof(double));
    for (int k = n - 1; k >= 0; --k) {
      offset -= (size_t)(n - k);
      const double* u = upper + offset;
      double sum = u[n - k - 1];
      for (int j = k + 1; j < n; ++j) sum -= u[j - k - 1] * x[j];
      x[k] = sum;
    }
  }
  free(buffer);
  free(upper);
  free(rows);
  MPI_Finalize();

  int ok = 1;
  if (rank == 0) {
    double residual = 0.0, norm_b = 0.0;
    for (int i = 0; i < n; ++i) {
      double r = -element(n, i, n);
      for (int j = 0; j < n; ++j) r += element(n, i, j) * x[j];
      residual += r * r;
      norm_b += element(n, i, n) * element(n, i, n);
    }
    const double relative = sqrt(residual) / sqrt(norm_b);
    ok = relative < 1e-8;
    if (fragment >= n)
      printf("gauss: %d ranks, n = %d, whole rows, residual %.1e: %s\n", size, n, relative, ok ? "ok" : "WRONG");
    else
      printf("gauss: %d ranks, n = %d, rows in %d-byte fragments, residual %.1e: %s\n", size, n, 8 * fragment, relative,
             ok ? "ok" : "WRONG");
    free(x);
  }
  return ok ? 0 : 1;
}
