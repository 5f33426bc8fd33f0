/* psrs: Parallel Sorting by Regular Sampling (Li et al.), written as the seven M-steps of Roda et
 * al. 1999 (section 4.2, Figure 8), with collective operations only:
 *   1. root scatters the keys (MPI_Scatter; MPI_Scatterv when p does not divide n);
 *   2. each rank sorts its block, picks p regular samples, root gathers them (MPI_Gather);
 *   3. root sorts the p^2 samples, picks p-1 pivots and broadcasts them (MPI_Bcast);
 *   4. each rank cuts its block at the pivots (binary search) and the sizes are exchanged
 *      (MPI_Alltoall);
 *   5. the pieces are exchanged (MPI_Alltoallv);
 *   6. each rank merges its p sorted pieces and the root gathers the sizes (MPI_Gather);
 *   7. the root gathers the sorted pieces into their final place (MPI_Gatherv).
 * The keys are ints from a fixed-seed xorshift64* generator. After MPI_Finalize, so that it stays
 * out of the recorded run, the root checks that the result is sorted and is a permutation of the
 * input (count, sum, and sum and xor of a 64-bit mix of every key).
 * Usage: psrs [n]   n = number of keys, p <= n <= 2^25 (default 2^21). Any number of ranks p.
 * Exits non-zero if the arguments are bad or the result is wrong. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_state;
static int next_key(void) { /* xorshift64*, high 32 bits */
  g_state ^= g_state >> 12;
  g_state ^= g_state << 25;
  g_state ^= g_state >> 27;
  return (int)(uint32_t)((g_state * 0x2545F4914F6CDD1Dull) >> 32);
}

static uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

typedef struct {
  uint64_t count, sum, mixsum, mixxor;
} digest;

static void digest_add(digest* d, int key) {
  const uint64_t h = mix64((uint64_t)(uint32_t)key);
  d->count += 1;
  d->sum += (uint64_t)(int64_t)key;
  d->mixsum += h;
  d->mixxor ^= h;
}

static int cmp_int(const void* a, const void* b) {
  const int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

/* Number of elements of sorted a[0..n) that are <= v. */
static int upper_bound(const int* a, int n, int v) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (a[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Merge the p sorted runs in[displ[r] .. displ[r]+count[r]) into out, with a binary heap of run
 * heads. */
static void merge_runs(const int* in, const int* count, const int* displ, int p, int* out) {
  int* pos = malloc(sizeof(int) * (size_t)p);
  int* end = malloc(sizeof(int) * (size_t)p);
  int* heap = malloc(sizeof(int) * (size_t)p); /* run indices, ordered by in[pos[run]] */
  int hn = 0;
  for (int r = 0; r < p; ++r) {
    pos[r] = displ[r];
    end[r] = displ[r] + count[r];
    if (pos[r] < end[r]) {
      int c = hn++;
      while (c > 0 && in[pos[heap[(c - 1) / 2]]] > in[pos[r]]) {
        heap[c] = heap[(c - 1) / 2];
        c = (c - 1) / 2;
      }
      heap[c] = r;
    }
  }
  long k = 0;
  while (hn > 0) {
    const int r = heap[0];
    out[k++] = in[pos[r]++];
    int top = r;
    if (pos[r] == end[r]) top = heap[--hn];
    if (hn == 0) break;
    /* sift `top` down from the root */
    const int v = in[pos[top]];
    int c = 0;
    for (;;) {
      int child = 2 * c + 1;
      if (child >= hn) break;
      if (child + 1 < hn && in[pos[heap[child + 1]]] < in[pos[heap[child]]]) ++child;
      if (in[pos[heap[child]]] >= v) break;
      heap[c] = heap[child];
      c = child;
    }
    heap[c] = top;
  }
  free(pos);
  free(end);
  free(heap);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long nl = argc > 1 ? atol(argv[1]) : 1L << 21;
  if (nl < p || nl > (1L << 25)) {
    if (rank == 0) fprintf(stderr, "psrs: needs p <= n <= 2^25 keys (got n = %ld, p = %d)\n", nl, p);
    MPI_Finalize();
    return 1;
  }
  const int n = (int)nl;
  const int root = 0;

  /* Block distribution: the first n % p ranks get one key more. */
  int* scount = malloc(sizeof(int) * (size_t)p);
  int* sdispl = malloc(sizeof(int) * (size_t)p);
  for (int r = 0, off = 0; r < p; ++r) {
    scount[r] = n / p + (r < n % p);
    sdispl[r] = off;
    off += scount[r];
  }
  const int nloc = scount[rank];

  int* A = NULL; /* root: the input, later the sorted output */
  if (rank == root) {
    A = malloc(sizeof(int) * (size_t)n);
    g_state = 0x853C49E6748FEA9Bull;
    for (int i = 0; i < n; ++i) A[i] = next_key();
  }

  /* M-step 1: personalised broadcast of the segments. */
  int* a = malloc(sizeof(int) * (size_t)nloc);
  if (n % p == 0)
    MPI_Scatter(A, nloc, MPI_INT, a, nloc, MPI_INT, root, MPI_COMM_WORLD);
  else
    MPI_Scatterv(A, scount, sdispl, MPI_INT, a, nloc, MPI_INT, root, MPI_COMM_WORLD);

  /* M-step 2: local sort, p regular samples, gathered by the root. */
  qsort(a, (size_t)nloc, sizeof(int), cmp_int);
  int* sample = malloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; ++i) sample[i] = a[(long)i * nloc / p];
  int* samples = rank == root ? malloc(sizeof(int) * (size_t)p * (size_t)p) : NULL;
  MPI_Gather(sample, p, MPI_INT, samples, p, MPI_INT, root, MPI_COMM_WORLD);

  /* M-step 3: root sorts the samples and picks p-1 pivots; they are broadcast. */
  int* pivot = malloc(sizeof(int) * (size_t)(p > 1 ? p - 1 : 1));
  if (rank == root) {
    qsort(samples, (size_t)p * (size_t)p, sizeof(int), cmp_int);
    const int rho = p / 2;
    for (int i = 1; i < p; ++i) pivot[i - 1] = samples[i * p + rho - 1];
  }
  MPI_Bcast(pivot, p - 1, MPI_INT, root, MPI_COMM_WORLD);

  /* M-step 4: cut the sorted block at the pivots; exchange the sizes of the pieces. */
  int* mysizes = malloc(sizeof(int) * (size_t)p);
  int* outoff = malloc(sizeof(int) * (size_t)p);
  for (int i = 0, prev = 0; i < p; ++i) {
    const int cut = i < p - 1 ? upper_bound(a, nloc, pivot[i]) : nloc;
    outoff[i] = prev;
    mysizes[i] = cut - prev;
    prev = cut;
  }
  int* insizes = malloc(sizeof(int) * (size_t)p);
  MPI_Alltoall(mysizes, 1, MPI_INT, insizes, 1, MPI_INT, MPI_COMM_WORLD);

  /* M-step 5: exchange the pieces. */
  int* inoff = malloc(sizeof(int) * (size_t)p);
  long mysize_l = 0;
  for (int i = 0; i < p; ++i) {
    inoff[i] = (int)mysize_l;
    mysize_l += insizes[i];
  }
  int mysize = (int)mysize_l;
  int* b = malloc(sizeof(int) * (size_t)(mysize > 0 ? mysize : 1));
  MPI_Alltoallv(a, mysizes, outoff, MPI_INT, b, insizes, inoff, MPI_INT, MPI_COMM_WORLD);

  /* M-step 6: merge the p sorted pieces; the root gathers the final sizes. */
  int* merged = malloc(sizeof(int) * (size_t)(mysize > 0 ? mysize : 1));
  merge_runs(b, insizes, inoff, p, merged);
  int* finalsize = rank == root ? malloc(sizeof(int) * (size_t)p) : NULL;
  MPI_Gather(&mysize, 1, MPI_INT, finalsize, 1, MPI_INT, root, MPI_COMM_WORLD);

  /* M-step 7: the root gathers the sorted pieces straight into their final place. */
  int* fdispl = NULL;
  if (rank == root) {
    fdispl = malloc(sizeof(int) * (size_t)p);
    for (int r = 0, off = 0; r < p; ++r) {
      fdispl[r] = off;
      off += finalsize[r];
    }
  }
  MPI_Gatherv(merged, mysize, MPI_INT, A, finalsize, fdispl, MPI_INT, root, MPI_COMM_WORLD);

  /* The check runs after MPI_Finalize, so that it stays out of the recorded run. */
  MPI_Finalize();
  int ok = 1;
  if (rank == root) {
    long total = 0;
    for (int r = 0; r < p; ++r) total += finalsize[r];
    digest in = {0, 0, 0, 0}, out = {0, 0, 0, 0};
    g_state = 0x853C49E6748FEA9Bull;
    for (int i = 0; i < n; ++i) digest_add(&in, next_key());
    long unsorted = 0;
    for (int i = 0; i < n; ++i) {
      digest_add(&out, A[i]);
      if (i > 0 && A[i - 1] > A[i]) ++unsorted;
    }
    ok = total == n && unsorted == 0 && memcmp(&in, &out, sizeof in) == 0;
    int largest = 0;
    for (int r = 0; r < p; ++r)
      if (finalsize[r] > largest) largest = finalsize[r];
    printf("psrs: %d ranks, n = %d, largest final piece %d (n/p = %d): %s\n", p, n, largest, n / p,
           ok ? "ok" : "WRONG");
  }
  free(A);
  free(scount);
  free(sdispl);
  free(a);
  free(sample);
  free(samples);
  free(pivot);
  free(mysizes);
  free(outoff);
  free(insizes);
  free(inoff);
  free(b);
  free(merged);
  free(finalsize);
  free(fdispl);
  return ok ? 0 : 1;
}
