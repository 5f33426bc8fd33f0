/* rma_io: one-sided communication (MPI-3 RMA) and MPI-IO, which mstep records with their time and
 * bytes and the models keep at their recorded duration.
 * Usage: rma_io FILE   (2 ranks; FILE is created, written, read back and deleted)
 *
 * MPI calls per rank (test_rma_io.cpp asserts these; keep both in step), m = 4 bytes an int; the
 * target of every one-sided call is the other rank:
 *   A fence epochs: Win_allocate(64 int) on a duplicate of MPI_COMM_WORLD; Win_fence;
 *     Put(8 int); Win_fence; Get(4 int); Accumulate(2 int); Win_fence; Win_free (on the duplicate's
 *     window); Win_create(16 int, MPI_COMM_WORLD).
 *   B passive target: Win_lock(exclusive); Put(3 int); Win_flush; Get_accumulate(1 int in, 1 out);
 *     Fetch_and_op(1 int); Compare_and_swap(1 int); Win_unlock; Win_lock_all; Rput(2 int), Wait;
 *     Rget(2 int), Wait; Win_flush_all; Win_unlock_all; Barrier.
 *   C general active target: Win_post, Win_start, Put(1 int), Win_complete, Win_wait; Win_free.
 *   D MPI-IO: File_open; File_write_at_all(256 int at rank * 1 KiB); File_sync, Barrier, File_sync;
 *     File_read_at(256 int at the other rank's offset); File_seek, File_write(16 int) at rank * 64 B
 *     past 2 KiB; File_close; Barrier; File_delete on rank 0.
 * Every value that moves is checked; exits non-zero (after MPI_Finalize) if one is wrong.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!two_ranks("rma_io", argc, "a file name")) return 2;
  const int me = g_rank, other = 1 - g_rank;
  MPI_Comm dup;
  CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

  /* A: fence epochs on an allocated window of the duplicate */
  int* base = NULL;
  MPI_Win win;
  CHECK_RC(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, dup, &base, &win));
  for (int k = 0; k < 64; ++k) base[k] = me * 1000 + k;
  CHECK_RC(MPI_Win_fence(0, win));
  int put[8], got[4];
  for (int k = 0; k < 8; ++k) put[k] = me * 100 + k;
  CHECK_RC(MPI_Put(put, 8, MPI_INT, other, 16, 8, MPI_INT, win));
  CHECK_RC(MPI_Win_fence(0, win));
  CHECK(base[16] == other * 100 && base[23] == other * 100 + 7 && base[15] == me * 1000 + 15);
  CHECK_RC(MPI_Get(got, 4, MPI_INT, other, 0, 4, MPI_INT, win));
  int add[2] = {5, 6};
  CHECK_RC(MPI_Accumulate(add, 2, MPI_INT, other, 30, 2, MPI_INT, MPI_SUM, win));
  CHECK_RC(MPI_Win_fence(0, win));
  CHECK(got[0] == other * 1000 && got[3] == other * 1000 + 3);
  CHECK(base[30] == me * 1000 + 35 && base[31] == me * 1000 + 37);
  CHECK_RC(MPI_Win_free(&win));

  /* B: passive target on a window created over MPI_COMM_WORLD */
  int local[16];
  for (int k = 0; k < 16; ++k) local[k] = me * 10 + k;
  CHECK_RC(MPI_Win_create(local, sizeof local, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, other, 0, win));
  int three[3] = {-1, -2, -3}, one = 1, old = 0, fetched = 0, swapped = 0, expect = other * 10 + 6, swap = 77;
  CHECK_RC(MPI_Put(three, 3, MPI_INT, other, 0, 3, MPI_INT, win));
  CHECK_RC(MPI_Win_flush(other, win));
  CHECK_RC(MPI_Get_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, other, 5, 1, MPI_INT, MPI_SUM, win));
  CHECK_RC(MPI_Fetch_and_op(&one, &fetched, MPI_INT, other, 5, MPI_SUM, win));
  CHECK_RC(MPI_Compare_and_swap(&swap, &expect, &swapped, MPI_INT, other, 6, win));
  CHECK_RC(MPI_Win_unlock(other, win));
  CHECK(old == other * 10 + 5 && fetched == other * 10 + 6 && swapped == other * 10 + 6);
  CHECK_RC(MPI_Win_lock_all(0, win));
  int two[2] = {me + 50, me + 51}, back[2] = {0, 0};
  MPI_Request rq;
  CHECK_RC(MPI_Rput(two, 2, MPI_INT, other, 10, 2, MPI_INT, win, &rq));
  CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK_RC(MPI_Rget(back, 2, MPI_INT, other, 12, 2, MPI_INT, win, &rq));
  CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK_RC(MPI_Win_flush_all(win));
  CHECK_RC(MPI_Win_unlock_all(win));
  CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(back[0] == other * 10 + 12 && back[1] == other * 10 + 13);
  CHECK(local[0] == -1 && local[2] == -3 && local[5] == me * 10 + 7 && local[6] == 77);
  CHECK(local[10] == other + 50 && local[11] == other + 51);

  /* C: general active target (post/start/complete/wait) */
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &other, &peer);
  CHECK_RC(MPI_Win_post(peer, 0, win));
  CHECK_RC(MPI_Win_start(peer, 0, win));
  int nine = 900 + me;
  CHECK_RC(MPI_Put(&nine, 1, MPI_INT, other, 15, 1, MPI_INT, win));
  CHECK_RC(MPI_Win_complete(win));
  CHECK_RC(MPI_Win_wait(win));
  CHECK(local[15] == 900 + other);
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  CHECK_RC(MPI_Win_free(&win));
  CHECK_RC(MPI_Comm_free(&dup));

  /* D: MPI-IO */
  MPI_File fh;
  CHECK_RC(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  int block[256], read_back[256];
  for (int k = 0; k < 256; ++k) block[k] = me * 1000 + k;
  CHECK_RC(MPI_File_write_at_all(fh, (MPI_Offset)me * 1024, block, 256, MPI_INT, MPI_STATUS_IGNORE));
  CHECK_RC(MPI_File_sync(fh));
  CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* sync-barrier-sync: the other rank's block is visible */
  CHECK_RC(MPI_File_sync(fh));
  MPI_Status st;
  CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)other * 1024, read_back, 256, MPI_INT, &st));
  int count = 0;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == 256 && read_back[0] == other * 1000 && read_back[255] == other * 1000 + 255);
  CHECK_RC(MPI_File_seek(fh, 2048 + (MPI_Offset)me * 64, MPI_SEEK_SET));
  CHECK_RC(MPI_File_write(fh, block, 16, MPI_INT, MPI_STATUS_IGNORE));
  CHECK_RC(MPI_File_close(&fh));
  CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) CHECK_RC(MPI_File_delete(argv[1], MPI_INFO_NULL));

  MPI_Finalize();
  return g_errors ? 1 : 0;
}
