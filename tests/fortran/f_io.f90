! MPI-IO from module mpi: a file opened, written and read at explicit
! offsets by every rank, closed to MPI_FILE_NULL (the handle the C call
! writes goes through a C MPI_File: fortran_support.h, tern_f_file_t).
program f_io
  use mpi
  implicit none
  integer :: ierr, fh, rank, nproc, next, buf(2), st(MPI_STATUS_SIZE)
  character(len=32) :: fname
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  next = mod(rank + 1, nproc)
  write (fname, '(a,i0,a)') 'f_io_np', nproc, '.dat'
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + &
                     MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'MPI_File_open')
  buf = (/ rank, 7 * rank + 1 /)
  call MPI_File_write_at_all(fh, int(8 * rank, MPI_OFFSET_KIND), buf, 2, MPI_INTEGER, st, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_write_at_all')
  buf = -1
  call MPI_File_read_at_all(fh, int(8 * next, MPI_OFFSET_KIND), buf, 2, MPI_INTEGER, st, ierr)
  call check(buf(1) == next .and. buf(2) == 7 * next + 1, 'MPI_File_read_at_all')
  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'MPI_File_close gives MPI_FILE_NULL')
  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'test f_io ok'
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,i0,2a)', 'f_io: rank ', rank, ': failed: ', what
      error stop 1
    end if
  end subroutine
end program
