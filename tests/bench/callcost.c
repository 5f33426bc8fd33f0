/* The cost of one MPI call on a single rank, where no partner process can be descheduled in the
 * middle of a round trip: the with-minus-without difference is the recorder's own cost per call.
 * Batches are timed in CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), so time spent
 * preempted by other jobs does not count: the figure holds up on a busy machine, unlike a two-rank
 * latency. A batch makes `records` records, by default 4 of mstep's default trace buffers (1 MiB,
 * about 18,700 records), so the buffer flushes (encoding, compression, write) are in it at about
 * their amortised share.
 *
 *   callcost [records [batches [loops]]]     loops: a comma-separated subset of the four below
 *                                             (default all; for profiling one of them)
 *
 * Four loops, each `batches` batches of records / (records per iteration) iterations; the figure
 * of a loop is the median over its batches of the (thread CPU) time per iteration:
 *   procnull  MPI_Send to MPI_PROC_NULL: 1 call, 1 record (the least a recorded call costs);
 *   pair      MPI_Bsend of 8 bytes to self, MPI_Recv of it: 2 calls, 2 records, one M-step per
 *             iteration: what each rank of an 8-byte ping-pong records per round trip (mstep's
 *             Bsend wrapper is its Send wrapper; a blocking MPI_Send to self may wait forever);
 *   self      MPI_Irecv from self, MPI_Send of 8 bytes to self, MPI_Wait: 3 calls, 3 records with
 *             a real peer, bytes, a request and an M-step per iteration;
 *   iprobe    MPI_Iprobe that finds nothing: 1 call, 1 record.
 * Every rank runs the loops on its own; rank 0 prints one line (a loop not run shows -1):
 *   callcost records=75000 batches=15 procnull_ns=25.1 pair_ns=210.4 self_ns=610.3 iprobe_ns=80.2
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static long arg(int argc, char** argv, int i, long def) {
  if (argc <= i) return def;
  char* end = NULL;
  const long v = strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    fprintf(stderr, "callcost: argument %d '%s' is not a positive number\n", i, argv[i]);
    exit(2);
  }
  return v;
}

enum Loop { kProcNull, kPair, kSelf, kIprobe };

static void run(enum Loop loop, long n, int rank) {
  long out = 0, in = 0;
  for (long i = 0; i < n; ++i) {
    switch (loop) {
      case kProcNull:
        MPI_Send(&out, 1, MPI_LONG, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
        break;
      case kPair:
        out = i;
        MPI_Bsend(&out, 1, MPI_LONG, rank, 5, MPI_COMM_WORLD);
        MPI_Recv(&in, 1, MPI_LONG, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in != i) MPI_Abort(MPI_COMM_WORLD, 4);
        break;
      case kSelf: {
        MPI_Request r;
        out = i;
        MPI_Irecv(&in, 1, MPI_LONG, rank, 2, MPI_COMM_WORLD, &r);
        MPI_Send(&out, 1, MPI_LONG, rank, 2, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (in != i) MPI_Abort(MPI_COMM_WORLD, 4);
        break;
      }
      case kIprobe: {
        int flag = 0;
        MPI_Iprobe(rank, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        break;
      }
    }
  }
}

static double measure(enum Loop loop, long records, long batches, int rank, double* t) {
  static const long per_iteration[] = {1, 2, 3, 1};  // records per iteration of each loop
  const long iterations = records / per_iteration[loop] > 0 ? records / per_iteration[loop] : 1;
  run(loop, iterations / 10 + 1, rank);  // warm-up: caches, call sites, first flush
  for (long b = 0; b < batches; ++b) {
    const double t0 = now_ns();
    run(loop, iterations, rank);
    t[b] = (now_ns() - t0) / (double)iterations;
  }
  qsort(t, (size_t)batches, sizeof *t, cmp_double);
  return batches % 2 ? t[batches / 2] : 0.5 * (t[batches / 2 - 1] + t[batches / 2]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long records = arg(argc, argv, 1, 75000);
  const long batches = arg(argc, argv, 2, 15);
  const char* loops = argc > 3 ? argv[3] : "procnull,pair,self,iprobe";
  double* t = calloc((size_t)batches, sizeof *t);
  const int bsend_size = 64 * (MPI_BSEND_OVERHEAD + (int)sizeof(long));
  void* bsend_buf = malloc((size_t)bsend_size);
  if (!t || !bsend_buf) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Buffer_attach(bsend_buf, bsend_size);
  const double procnull = strstr(loops, "procnull") ? measure(kProcNull, records, batches, rank, t) : -1;
  const double pair = strstr(loops, "pair") ? measure(kPair, records, batches, rank, t) : -1;
  const double self = strstr(loops, "self") ? measure(kSelf, records, batches, rank, t) : -1;
  const double iprobe = strstr(loops, "iprobe") ? measure(kIprobe, records, batches, rank, t) : -1;
  if (rank == 0) {
    printf("callcost records=%ld batches=%ld procnull_ns=%.1f pair_ns=%.1f self_ns=%.1f "
           "iprobe_ns=%.1f\n",
           records, batches, procnull, pair, self, iprobe);
    fflush(stdout);
  }
  int detached_size = 0;
  MPI_Buffer_detach(&bsend_buf, &detached_size);
  free(bsend_buf);
  free(t);
  MPI_Finalize();
  return 0;
}
