! The 8-byte ping-pong of pingpong.c from Fortran: built twice, with `use mpi` (pingpong_f) and,
! with -DMSTEP_F08, `use mpi_f08` (pingpong_f08). MPICH's Fortran bindings reach libmstep's
! wrappers from inside libmpichfort, through libmstep's Fortran entry points.
! Usage: pingpong_f BYTES ITERATIONS BATCHES WARMUP   (2 ranks; BYTES a multiple of 4)
! Prints the median over the batches of the one-way time, as pingpong.c does: median_ns=...
program pingpong_f
#ifdef MSTEP_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer :: rank, ierr, bytes, iterations, batches, warmup, b, i, n
  integer, allocatable :: buf(:)
  double precision, allocatable :: one_way(:)
  double precision :: t0, m
  character(len=32) :: arg
#ifdef MSTEP_F08
  type(MPI_Status) :: status
#else
  integer :: status(MPI_STATUS_SIZE)
#endif
  call get_command_argument(1, arg); read (arg, *) bytes
  call get_command_argument(2, arg); read (arg, *) iterations
  call get_command_argument(3, arg); read (arg, *) batches
  call get_command_argument(4, arg); read (arg, *) warmup
  n = max(1, bytes / 4)
  allocate (buf(n), one_way(batches))
  buf = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call exchange(warmup)
  do b = 1, batches
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    call exchange(iterations)
    one_way(b) = (MPI_Wtime() - t0) / (2d0 * iterations) * 1d9
  end do
  if (rank == 0) then
    do i = 2, batches  ! insertion sort: a handful of batches
      m = one_way(i)
      b = i - 1
      do while (b >= 1)
        if (one_way(b) <= m) exit
        one_way(b + 1) = one_way(b)
        b = b - 1
      end do
      one_way(b + 1) = m
    end do
    if (mod(batches, 2) == 1) then
      m = one_way(batches / 2 + 1)
    else
      m = (one_way(batches / 2) + one_way(batches / 2 + 1)) / 2
    end if
    print '(a,i0,a,f0.1)', 'pingpong_f bytes=', bytes, ' median_ns=', m
  end if
  call MPI_Finalize(ierr)
contains
  subroutine exchange(count)
    integer, intent(in) :: count
    integer :: k
    do k = 1, count
      if (rank == 0) then
        call MPI_Send(buf, n, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
        call MPI_Recv(buf, n, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, status, ierr)
      else
        call MPI_Recv(buf, n, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, status, ierr)
        call MPI_Send(buf, n, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
      end if
    end do
  end subroutine exchange
end program pingpong_f
