! fortran_f08_rma_io: windows, files and Cartesian communicators from `use mpi_f08`, whose calls
! without a buffer MPICH 4.0.2 sends straight to PMPI_* (libmstep's Fortran 2008 entry points,
! interpose/wrappers_f08.cpp, record them). Usage: fortran_f08_rma_io FILE   (2 ranks)
!
! MPI calls per rank (asserted in test_corners_languages.cpp; keep in step): MPI_Init;
! MPI_Win_allocate (4 integers), MPI_Win_fence, MPI_Put of 4 integers (16 B) to the other rank,
! MPI_Win_fence, MPI_Win_lock + MPI_Win_unlock on the other rank, MPI_Win_free; MPI_File_open of
! FILE (passed with blanks around it, which the binding trims), MPI_File_set_view (rank r at byte
! 16 r), MPI_File_write_all of 4 integers, MPI_File_sync, MPI_File_close; MPI_Cart_create (2 x 1,
! periodic in the first dimension), MPI_Cart_sub, MPI_Barrier on it, two MPI_Comm_free;
! MPI_Iprobe for a message that never comes; MPI_Finalize. Each rank prints its window, that its
! file handle is MPI_FILE_NULL after the close, the Iprobe flag and its Cartesian coordinates.
program fortran_f08_rma_io
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: rank, other, i
  integer(kind=MPI_ADDRESS_KIND) :: size, disp
  type(c_ptr) :: base
  integer, pointer :: mem(:)
  type(MPI_Win) :: win
  type(MPI_File) :: fh
  type(MPI_Comm) :: cart, sub
  integer :: vals(4), dims(2), coords(2)
  logical :: periods(2), remain(2), flag
  type(MPI_Status) :: st
  character(len=256) :: path
  call get_command_argument(1, path)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  other = 1 - rank
  size = 16
  call MPI_Win_allocate(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call c_f_pointer(base, mem, [4])
  mem = -1
  call MPI_Win_fence(0, win)
  vals = [(10 * rank + i, i = 1, 4)]
  disp = 0
  call MPI_Put(vals, 4, MPI_INTEGER, other, disp, 4, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  print '(a,i0,a,4(1x,i0))', 'rank ', rank, ' window', mem
  call MPI_Win_lock(MPI_LOCK_SHARED, other, 0, win)
  call MPI_Win_unlock(other, win)
  call MPI_Win_free(win)
  call MPI_File_open(MPI_COMM_WORLD, '  '//trim(path)//'  ', MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh)
  disp = 16 * rank
  call MPI_File_set_view(fh, int(disp, MPI_OFFSET_KIND), MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
  call MPI_File_write_all(fh, vals, 4, MPI_INTEGER, st)
  call MPI_File_sync(fh)
  call MPI_File_close(fh)
  if (fh == MPI_FILE_NULL) print '(a,i0,a)', 'rank ', rank, ' file closed'
  dims = [2, 1]
  periods = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart)
  call MPI_Cart_coords(cart, rank, 2, coords)
  remain = [.true., .false.]
  call MPI_Cart_sub(cart, remain, sub)
  call MPI_Barrier(sub)
  call MPI_Comm_free(sub)
  call MPI_Comm_free(cart)
  call MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag, st)
  print '(a,i0,a,l1,a,2(1x,i0))', 'rank ', rank, ' iprobe ', flag, ' coords', coords
  call MPI_Finalize()
end program fortran_f08_rma_io
