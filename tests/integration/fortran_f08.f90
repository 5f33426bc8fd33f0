! fortran_f08: a `use mpi_f08` program. MPICH's mpi_f08 binding calls the functions without a
! buffer (MPI_Init, MPI_Wait*, MPI_Test*, MPI_Barrier, MPI_Comm_split, ...) straight through
! PMPI_*; libmstep's Fortran 2008 entry points (interpose/wrappers_f08.cpp) must record them, and
! the results must be those MPI gives without mstep. Usage: fortran_f08   (2 ranks)
!
! MPI calls per rank (asserted in test_corners_languages.cpp; keep in step):
!   MPI_Init; 3 x (MPI_Irecv + MPI_Isend of 8 integers, tag 10+i, then MPI_Waitall);
!   MPI_Irecv + MPI_Isend (tag 20) completed by MPI_Waitany twice (rank 0 prints the two indices
!   in order: MPICH 4.0.2's mpi_f08 returns them 0-based, as C does, where the standard has 1-based);
!   MPI_Irecv (tag 30), MPI_Send (tag 30), MPI_Test until done (one MPI_Test at least), its
!   status's source printed; MPI_Iprobe until a message (tag 40) is there, then MPI_Recv;
!   MPI_Comm_split (all ranks, color 0) and on it MPI_Sendrecv of 2 integers, MPI_Barrier,
!   MPI_Comm_free; MPI_Barrier on world; MPI_Allreduce of 1 integer; MPI_Finalize.
! Rank 0 prints "fortran_f08: total T" and exits with status 1 if a received value is wrong.
program fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, other, i, idx(2), total, bad, k, nprobe
  integer :: out(8), in(8), pair(2), got(2)
  logical :: flag
  type(MPI_Request) :: reqs(2), req
  type(MPI_Status) :: status
  type(MPI_Comm) :: split

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  other = 1 - rank
  bad = 0

  do i = 1, 3
    out = 100 * rank + i
    call MPI_Irecv(in, 8, MPI_INTEGER, other, 10 + i, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(out, 8, MPI_INTEGER, other, 10 + i, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    if (in(8) /= 100 * other + i) bad = 1
  end do

  call MPI_Irecv(in, 8, MPI_INTEGER, other, 20, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(out, 8, MPI_INTEGER, other, 20, MPI_COMM_WORLD, reqs(2))
  do k = 1, 2
    call MPI_Waitany(2, reqs, idx(k), status)
  end do
  if (rank == 0) print '(a,i0,a,i0)', 'fortran_f08: waitany indices ', minval(idx), ' ', maxval(idx)

  call MPI_Irecv(in, 8, MPI_INTEGER, other, 30, MPI_COMM_WORLD, req)
  call MPI_Send(out, 8, MPI_INTEGER, other, 30, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, status)
  end do
  if (status%MPI_SOURCE /= other .or. status%MPI_TAG /= 30) bad = 1

  call MPI_Send(out, 8, MPI_INTEGER, other, 40, MPI_COMM_WORLD)
  flag = .false.
  nprobe = 0
  do while (.not. flag)
    call MPI_Iprobe(other, 40, MPI_COMM_WORLD, flag, status)
    nprobe = nprobe + 1
  end do
  call MPI_Recv(in, 8, MPI_INTEGER, other, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE)

  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, split)
  pair = rank + 7
  call MPI_Sendrecv(pair, 2, MPI_INTEGER, other, 50, got, 2, MPI_INTEGER, other, 50, split, status)
  if (got(2) /= other + 7) bad = 1
  call MPI_Barrier(split)
  call MPI_Comm_free(split)

  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0)', 'fortran_f08: total ', total
  call MPI_Finalize()
  if (bad /= 0) stop 1
end program fortran_f08
