! fortran_plugin: Fortran MPI code in a shared object that a C program loads with dlopen after
! MPI_Init (plugin_host.c), as a Python extension is: its libmpichfort is then in no global scope.
! libmstep's Fortran entry points must still find MPICH's functions (every loaded object asked)
! and name this file's lines as the call sites (the MPI library loaded since MPI_Init is added to
! those unwound past). Built as libfortran_plugin.so.
!
! MPI calls per rank (asserted in test_corners_languages.cpp; keep in step): rank 0 MPI_Send of 2
! integers (8 B, tag 7) to rank 1, which MPI_Recv's them and prints "fortran_plugin: got R" (R the
! value sent, 41); then MPI_Barrier.
subroutine fortran_plugin(rank) bind(C, name="fortran_plugin")
  use mpi
  implicit none
  integer, value :: rank
  integer :: buf(2), ierr, status(MPI_STATUS_SIZE)
  buf = 41
  if (rank == 0) then
    call MPI_Send(buf, 2, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
  else
    buf = 0
    call MPI_Recv(buf, 2, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, status, ierr)
    print '(a,i0)', 'fortran_plugin: got ', buf(2)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
end subroutine fortran_plugin
