/* cg: conjugate gradients on the 1-D Poisson problem (-u'' = 1, u = 0 outside), one block of cells
 * per rank: the shape of an iterative solver. Every iteration exchanges the block's edges with both
 * neighbours by MPI_Sendrecv (one call a neighbour), applies the matrix, and reduces two dot
 * products with MPI_Allreduce: blocking point-to-point and collectives, the calls an implicit code
 * spends its communication in. The edge messages carry h doubles (the stencil uses the first), so
 * that h = 1100 makes them cross S (8 KiB here).
 * Usage: cg [cells_per_rank] [iterations] [halo_doubles]   (defaults 2000 2000 1)
 * CG's residual is not monotone here (the first step multiplies it by about 2000), and it reaches
 * 0 exactly after half the global cells (b = 1 excites only the symmetric modes; every value stays
 * exactly representable): there the solve starts again from x = 0, so that every run makes exactly
 * `iterations` iterations of the same work. At the end it computes the true residual b - A x (one more exchange and reduction) and
 * compares it with the one the iteration carried: they must agree to 1e-6 of |b| + |r|. Exits
 * non-zero if not. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Fills the ghosts of v (h cells on each side, v + h is the block) from the neighbours: one
 * MPI_Sendrecv with each, pairs (0,1), (2,3), ... first, then (1,2), (3,4), ..., so that every call
 * has a partner doing the same call and at 2 ranks each rank makes one whole exchange. */
static void exchange(double* v, int count, int h, int rank, int size, double* ghost_in, double* edge_out) {
  for (int phase = 0; phase < 2; ++phase) {
    const int right_first = (rank % 2 == 0) == (phase == 0); /* this phase's partner is on the right */
    const int partner = right_first ? rank + 1 : rank - 1;
    if (partner < 0 || partner >= size) continue; /* outside: the ghost stays 0 */
    for (int i = 0; i < h; ++i) edge_out[i] = right_first ? v[h + count - h + i] : v[h + i];
    MPI_Sendrecv(edge_out, h, MPI_DOUBLE, partner, 0, ghost_in, h, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    /* From the right: its first h cells (the nearest is [0]); from the left: its last h. */
    if (right_first)
      v[h + count] = ghost_in[0];
    else
      v[h - 1] = ghost_in[h - 1];
  }
}

/* out = A v on the block: 2 v[i] - v[i-1] - v[i+1], ghosts filled. */
static void apply(const double* v, double* out, int count, int h) {
  for (int i = 0; i < count; ++i) out[i] = 2.0 * v[h + i] - v[h + i - 1] - v[h + i + 1];
}

static double dot(const double* a, const double* b, int count) {
  double local = 0.0, global = 0.0;
  for (int i = 0; i < count; ++i) local += a[i] * b[i];
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int count = argc > 1 ? atoi(argv[1]) : 2000;
  const int iterations = argc > 2 ? atoi(argv[2]) : 2000;
  const int h = argc > 3 ? atoi(argv[3]) : 1;
  if (count < 1 || iterations < 0 || h < 1 || h > count) {
    if (rank == 0) fprintf(stderr, "usage: cg [cells_per_rank >= 1] [iterations >= 0] [halo_doubles, 1..cells_per_rank]\n");
    MPI_Finalize();
    return 1;
  }
  const size_t n = (size_t)count;
  /* p carries h ghosts on each side; the other vectors are the block alone. */
  double* x = calloc(n, sizeof(double));
  double* r = malloc(n * sizeof(double));
  double* q = malloc(n * sizeof(double));
  double* p = calloc(n + 2 * (size_t)h, sizeof(double));
  double* ghost_in = malloc((size_t)h * sizeof(double));
  double* edge_out = malloc((size_t)h * sizeof(double));
  if (!x || !r || !q || !p || !ghost_in || !edge_out) {
    fprintf(stderr, "cg: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (size_t i = 0; i < n; ++i) r[i] = p[h + i] = 1.0; /* x = 0, so r = b = 1 */
  const double bb = dot(r, r, count);
  double rr = bb;
  for (int it = 0; it < iterations; ++it) {
    if (!(rr > 0.0)) { /* solved: again from x = 0 */
      for (size_t i = 0; i < n; ++i) x[i] = 0.0, r[i] = p[h + i] = 1.0;
      rr = bb;
    }
    exchange(p, count, h, rank, size, ghost_in, edge_out);
    apply(p, q, count, h);
    const double alpha = rr / dot(p + h, q, count);
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[h + i];
      r[i] -= alpha * q[i];
    }
    const double rr_next = dot(r, r, count);
    const double beta = rr_next / rr;
    for (size_t i = 0; i < n; ++i) p[h + i] = r[i] + beta * p[h + i];
    rr = rr_next;
  }

  /* The true residual b - A x, against the carried one. */
  for (size_t i = 0; i < n; ++i) p[h + i] = x[i];
  exchange(p, count, h, rank, size, ghost_in, edge_out);
  apply(p, q, count, h);
  for (size_t i = 0; i < n; ++i) q[i] = 1.0 - q[i] - r[i]; /* (b - A x) - r */
  const double drift = sqrt(dot(q, q, count)), norm_b = sqrt(bb), norm_r = sqrt(rr);
  const int ok = isfinite(norm_r) && isfinite(drift) && drift <= 1e-6 * (norm_b + norm_r);
  if (rank == 0)
    printf("cg: %d ranks x %d cells, %d iterations: |r| / |b| = %.3e, |b - A x - r| / |b| = %.3e %s\n", size,
           count, iterations, norm_r / norm_b, drift / norm_b, ok ? "ok" : "WRONG");
  free(x);
  free(r);
  free(q);
  free(p);
  free(ghost_in);
  free(edge_out);
  MPI_Finalize();
  return ok ? 0 : 1;
}
