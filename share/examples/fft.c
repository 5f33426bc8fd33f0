/* fft: the parallel FFT of Roda et al. 1999 (section 4.1, Figure 7). Every rank can produce any
 * element of the input vector A (a deterministic function of its index), so, as in the paper, "all
 * processors hold a copy of A". Rank NAME takes the N/p elements A[k] with k = bitrev(NAME) mod p
 * (the odd-even division pattern given by the bits of NAME in reverse order) and computes their
 * DFT sequentially (radix-2 FFT). Then log2(p) combine steps follow: in step i the active ranks
 * with bit i set send their block to NAME XOR 2^i, which combines the two halves with butterflies
 * (C[j] = B[j] + w^j D[j], C[j+L] = B[j] - w^j D[j]); rank 0 ends holding the whole transform.
 * That is p-1 point-to-point messages in all, of N*2^i/p complex values in step i.
 * After MPI_Finalize, so that it stays out of the recorded run, rank 0 checks the result against
 * direct DFT sums (every frequency for n <= 2048, a sample of 16 frequencies otherwise; tolerance
 * 1e-6 relative to the input's 2-norm).
 * Usage: fft [n]   n = number of complex points, a power of two >= p (default 2^19).
 * p must be a power of two. Exits non-zero if the arguments are bad or the result is wrong. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  double re, im;
} cplx;

static const double kTwoPi = 6.283185307179586476925286766559;

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Element k of the input vector: pseudo-random, in [-1, 1) for both parts. */
static cplx input(uint64_t k) {
  const uint64_t h = splitmix64(k * 2 + 12345);
  const uint64_t g = splitmix64(k * 2 + 12346);
  cplx a = {(double)(h >> 11) * 0x1.0p-52 - 1.0, (double)(g >> 11) * 0x1.0p-52 - 1.0};
  return a;
}

static int is_pow2(long x) { return x > 0 && (x & (x - 1)) == 0; }

static int log2i(long x) {
  int l = 0;
  while ((1L << l) < x) ++l;
  return l;
}

static unsigned bitrev(unsigned x, int bits) {
  unsigned r = 0;
  for (int b = 0; b < bits; ++b) r |= ((x >> b) & 1u) << (bits - 1 - b);
  return r;
}

/* In-place iterative radix-2 FFT (decimation in time), forward: X[j] = sum a[k] e^{-2 pi i jk/m}. */
static void fft_seq(cplx* a, long m) {
  const int bits = log2i(m);
  for (long i = 0; i < m; ++i) {
    const long j = (long)bitrev((unsigned)i, bits);
    if (j > i) {
      const cplx t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
  cplx* tw = malloc(sizeof(cplx) * (size_t)(m / 2 + 1));
  for (long t = 0; t < m / 2; ++t) {
    tw[t].re = cos(kTwoPi * (double)t / (double)m);
    tw[t].im = -sin(kTwoPi * (double)t / (double)m);
  }
  for (long len = 2; len <= m; len <<= 1) {
    const long half = len / 2, step = m / len;
    for (long s = 0; s < m; s += len) {
      for (long j = 0; j < half; ++j) {
        const cplx w = tw[j * step];
        const cplx u = a[s + j], v = a[s + j + half];
        const cplx wv = {w.re * v.re - w.im * v.im, w.re * v.im + w.im * v.re};
        a[s + j].re = u.re + wv.re;
        a[s + j].im = u.im + wv.im;
        a[s + j + half].re = u.re - wv.re;
        a[s + j + half].im = u.im - wv.im;
      }
    }
  }
  free(tw);
}

/* Combine B = a[0..L) (DFT of the even part) and D = d[0..L) (DFT of the odd part) into the DFT of
 * length 2L, written into a[0..2L). */
static void combine(cplx* a, const cplx* d, long L) {
  for (long j = 0; j < L; ++j) {
    const double ang = kTwoPi * (double)j / (double)(2 * L);
    const cplx w = {cos(ang), -sin(ang)};
    const cplx u = a[j], v = d[j];
    const cplx wv = {w.re * v.re - w.im * v.im, w.re * v.im + w.im * v.re};
    a[j].re = u.re + wv.re;
    a[j].im = u.im + wv.im;
    a[j + L].re = u.re - wv.re;
    a[j + L].im = u.im - wv.im;
  }
}

/* Rank 0: compare X against direct DFT sums of the input. Returns 1 if within tolerance. */
static int check(const cplx* X, long n, double* max_err_out) {
  cplx* A = malloc(sizeof(cplx) * (size_t)n);
  cplx* tab = malloc(sizeof(cplx) * (size_t)n);
  double norm2 = 0.0;
  for (long k = 0; k < n; ++k) {
    A[k] = input((uint64_t)k);
    norm2 += A[k].re * A[k].re + A[k].im * A[k].im;
    tab[k].re = cos(kTwoPi * (double)k / (double)n);
    tab[k].im = -sin(kTwoPi * (double)k / (double)n);
  }
  const double scale = sqrt(norm2);
  const int all = n <= 2048;
  const long samples = all ? n : 16;
  double max_err = 0.0;
  uint64_t state = 99;
  for (long s = 0; s < samples; ++s) {
    long j;
    if (all) j = s;
    else if (s == 0) j = 0;
    else if (s == 1) j = 1;
    else if (s == 2) j = n / 2;
    else if (s == 3) j = n - 1;
    else j = (long)((state = splitmix64(state)) % (uint64_t)n);
    double re = 0.0, im = 0.0;
    long idx = 0; /* j*k mod n, kept exact */
    for (long k = 0; k < n; ++k) {
      const cplx w = tab[idx], a = A[k];
      re += a.re * w.re - a.im * w.im;
      im += a.re * w.im + a.im * w.re;
      idx += j;
      if (idx >= n) idx -= n;
    }
    const double err = hypot(X[j].re - re, X[j].im - im) / scale;
    if (err > max_err) max_err = err;
  }
  free(A);
  free(tab);
  *max_err_out = max_err;
  return max_err <= 1e-6;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long n = argc > 1 ? atol(argv[1]) : 1L << 19;
  if (!is_pow2(size) || !is_pow2(n) || n < size || n > (1L << 24)) {
    if (rank == 0)
      fprintf(stderr, "fft: needs a power-of-two number of ranks (got %d) and a power-of-two n with "
                      "p <= n <= 2^24 (got %ld)\n", size, n);
    MPI_Finalize();
    return 1;
  }
  const int logp = log2i(size);
  const long m = n / size;

  /* Capacity of this rank's buffer: it doubles for every combine step in which the rank receives. */
  long cap = m;
  for (int i = 0; i < logp && (rank & ((2 << i) - 1)) == 0; ++i) cap *= 2;
  cplx* a = malloc(sizeof(cplx) * (size_t)cap);
  cplx* d = cap > m ? malloc(sizeof(cplx) * (size_t)(cap / 2)) : NULL;

  /* Division (lines 1-4): this rank's odd-even subvector of A. */
  const unsigned first = bitrev((unsigned)rank, logp);
  for (long j = 0; j < m; ++j) a[j] = input((uint64_t)first + (uint64_t)size * (uint64_t)j);
  /* Sequential DFT of the block (line 5). */
  fft_seq(a, m);

  /* Combination phase: in step i the block has length L = m * 2^i. */
  long L = m;
  for (int i = 0; i < logp; ++i) {
    const int bit = 1 << i;
    if (rank & (bit - 1)) break; /* no longer active */
    const int partner = rank ^ bit;
    if (rank & bit) {
      /* Odd part: hand it to the rank that holds the matching even part, and stop. */
      MPI_Send(a, (int)(2 * L), MPI_DOUBLE, partner, i, MPI_COMM_WORLD);
      break;
    }
    MPI_Recv(d, (int)(2 * L), MPI_DOUBLE, partner, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    combine(a, d, L);
    L *= 2;
  }

  /* The check runs after MPI_Finalize, so that it stays out of the recorded run. */
  MPI_Finalize();
  free(d);
  int ok = 1;
  if (rank == 0) {
    double err = 0.0;
    ok = check(a, n, &err);
    printf("fft: %d ranks, n = %ld: max relative error %.2e: %s\n", size, n, err, ok ? "ok" : "WRONG");
  }
  free(a);
  return ok ? 0 : 1;
}
