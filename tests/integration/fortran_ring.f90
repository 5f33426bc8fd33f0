! fortran_ring: Fortran calls must reach mstep's wrappers, and their call sites must resolve to
! this file. Usage: fortran_ring   (any number of ranks)
!
! MPI calls per rank (asserted in test_corners_languages.cpp; keep in step): 4 iterations of one
! MPI_SEND and one MPI_RECV of 8 integers (32 B, tag = iteration) to the right / from the left
! (even ranks send first), then MPI_BCAST(4 integers, root 0), MPI_BARRIER, MPI_ALLREDUCE(1
! integer, SUM). Exits with status 1 if a received value is wrong.
program fortran_ring
  use mpi
  implicit none
  integer, parameter :: iterations = 4
  integer :: ierr, rank, nranks, right, left, it, k, good, total
  integer :: out(8), in(8), params(4)
  integer :: status(MPI_STATUS_SIZE)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  good = 0
  do it = 1, iterations
    do k = 1, 8
      out(k) = 1000 * rank + 10 * it + k
    end do
    if (mod(rank, 2) == 0) then
      call MPI_SEND(out, 8, MPI_INTEGER, right, it, MPI_COMM_WORLD, ierr)
      call MPI_RECV(in, 8, MPI_INTEGER, left, it, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_RECV(in, 8, MPI_INTEGER, left, it, MPI_COMM_WORLD, status, ierr)
      call MPI_SEND(out, 8, MPI_INTEGER, right, it, MPI_COMM_WORLD, ierr)
    end if
    if (in(1) == 1000 * left + 10 * it + 1 .and. in(8) == 1000 * left + 10 * it + 8) good = good + 1
  end do
  params = 0
  if (rank == 0) params = (/ 7, 8, 9, 10 /)
  call MPI_BCAST(params, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (params(4) == 10) good = good + 1
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_ALLREDUCE(good, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'fortran_ring: total ', total
  call MPI_FINALIZE(ierr)
  if (total /= (iterations + 1) * nranks) stop 1
end program fortran_ring
