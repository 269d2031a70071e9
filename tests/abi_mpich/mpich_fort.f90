! Built with Debian's mpifort.mpich (MPICH 4.0's module mpi and mpif.h
! values, linked with -lmpichfort -lmpich) and run on Tern's
! libmpichfort.so.12 and libmpich.so.12 (docs/design.md, "The MPICH ABI
! face"). Each check names what it proves; a failed one ends the job with
! error stop. Arguments: the directory of Tern's libraries (resolved), a
! scratch directory.
program mpich_fort
  use mpi
  implicit none
  integer :: ierr, rank, nproc, i, next, prev, cls, n, fh, win, dtype
  integer :: status(MPI_STATUS_SIZE), reqs(2), sbuf(3), rbuf(3), ibuf(4)
  integer :: blens(1), types(1)
  integer(kind=MPI_ADDRESS_KIND) :: aval, disps(1), wsize
  double precision :: d(2)
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: cname
  character(len=MPI_MAX_PROCESSOR_NAME) :: pname
  character(len=1024) :: libdir, work

  call get_command_argument(1, libdir)
  call get_command_argument(2, work)
  call MPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Init')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call check_maps()
  ! The level of MPICH 4.0.2's module (4.0), not libtern's 5.0.
  call MPI_Get_version(i, n, ierr)
  call check(i == MPI_VERSION .and. n == MPI_SUBVERSION, 'MPI_Get_version')
  next = mod(rank + 1, nproc)
  prev = mod(rank + nproc - 1, nproc)

  ! Statuses in MPICH's layout (MPI_STATUS_SIZE 5, MPI_SOURCE 3, MPI_TAG 4).
  sbuf = (/ rank, 10 * rank, 100 + rank /)
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, 3, MPI_INTEGER, next, 7 + rank, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(reqs(1), status, ierr)
  call check(status(MPI_SOURCE) == prev .and. status(MPI_TAG) == 7 + prev, 'status source/tag')
  call MPI_Get_count(status, MPI_INTEGER, n, ierr)
  call check(n == 3, 'MPI_Get_count')
  call check(all(rbuf == (/ prev, 10 * prev, 100 + prev /)), 'received values')
  call check(reqs(1) == MPI_REQUEST_NULL, 'request freed to MPI_REQUEST_NULL')

  ! MPI_STATUSES_IGNORE (common /MPIPRIV2/) must not be written as two statuses.
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, 3, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. rbuf(3) == 100 + prev, 'MPI_Waitall with MPI_STATUSES_IGNORE')

  ! MPI_IN_PLACE (common /MPIPRIV1/).
  ibuf = (/ 1, rank, 2, 3 /)
  call MPI_Allreduce(MPI_IN_PLACE, ibuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all(ibuf == (/ nproc, nproc * (nproc - 1) / 2, 2 * nproc, 3 * nproc /)), &
             'MPI_Allreduce with MPI_IN_PLACE')
  d = (/ 0.5d0, dble(rank) /)
  call MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(d(1) == 0.5d0 .and. d(2) == dble(nproc - 1), 'MPI_Allreduce MAX of DOUBLE PRECISION')

  ! MPI_BOTTOM with absolute addresses.
  call MPI_Get_address(sbuf, disps(1), ierr)
  blens(1) = 3
  types(1) = MPI_INTEGER
  call MPI_Type_create_struct(1, blens, disps, types, dtype, ierr)
  call MPI_Type_commit(dtype, ierr)
  rbuf = -1
  call MPI_Sendrecv(MPI_BOTTOM, 1, dtype, next, 4, rbuf, 3, MPI_INTEGER, prev, 4, &
                    MPI_COMM_WORLD, status, ierr)
  call check(all(rbuf == (/ prev, 10 * prev, 100 + prev /)), 'send from MPI_BOTTOM')
  call MPI_Type_free(dtype, ierr)
  call check(dtype == MPI_DATATYPE_NULL, 'MPI_Type_free')

  ! Predefined attributes under MPICH's Fortran keyvals (C keyval + 1).
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval >= 32767, 'MPI_TAG_UB attribute')
  call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, n, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. n == aval, 'MPI_ATTR_GET of MPI_TAG_UB')
  call MPI_Win_create(ibuf, int(16, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, wsize, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. wsize == 16, 'MPI_WIN_SIZE attribute')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, aval, flag, ierr)
  call check(flag .and. aval == 4, 'MPI_WIN_DISP_UNIT attribute')
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'MPI_Win_free')

  ! MPI_SIZEOF: module procedures of MPICH's module mpi_sizeofs.
  call MPI_Sizeof(d, n, ierr)
  call check(ierr == MPI_SUCCESS .and. n == 8, 'MPI_SIZEOF of DOUBLE PRECISION')
  call MPI_Sizeof(ibuf(1), n, ierr)
  call check(n == 4, 'MPI_SIZEOF of INTEGER')
  call MPI_Sizeof(pname(1:1), n, ierr)
  call check(n == 1, 'MPI_SIZEOF of CHARACTER')

  ! Strings and error classes.
  call MPI_Comm_set_name(MPI_COMM_WORLD, 'fortran world', ierr)
  call MPI_Comm_get_name(MPI_COMM_WORLD, cname, n, ierr)
  call check(cname == 'fortran world' .and. n == 13, 'MPI_Comm_get_name')
  call MPI_Get_processor_name(pname, n, ierr)
  call check(n > 0 .and. len_trim(pname) == n, 'MPI_Get_processor_name')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(sbuf, 1, MPI_INTEGER, nproc + 1, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(ierr /= MPI_SUCCESS .and. cls == MPI_ERR_RANK, 'MPI_ERR_RANK returned')

  ! A file handle: MPICH's MPI_File is a pointer and its Fortran
  ! MPI_FILE_NULL is 0.
  call MPI_File_open(MPI_COMM_WORLD, trim(work) // '/fort.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'MPI_File_open')
  call MPI_File_write_at_all(fh, int(12 * rank, MPI_OFFSET_KIND), sbuf, 3, MPI_INTEGER, &
                             status, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_write_at_all')
  call MPI_File_read_at_all(fh, int(12 * next, MPI_OFFSET_KIND), rbuf, 3, MPI_INTEGER, &
                            status, ierr)
  call check(all(rbuf == (/ next, 10 * next, 100 + next /)), 'MPI_File_read_at_all')
  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'MPI_File_close gives MPI_FILE_NULL')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'mpich_fort: all checks passed'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,i0,2a)', 'mpich_fort: rank ', rank, ': FAILED: ', what
      error stop 1
    end if
  end subroutine

  include 'check_maps.inc'
end program
