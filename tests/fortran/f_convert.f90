! Handles and statuses across C and Fortran: a C function (f_convert_c.c)
! gets Fortran handles and a Fortran status, converts them with
! MPI_<H>_f2c / MPI_Status_f2c and uses them; it creates a communicator
! and a datatype in C and hands them back through MPI_<H>_c2f, and a
! status through MPI_Status_c2f, which Fortran then uses.
program f_convert
  use mpi
  implicit none
  interface
    subroutine c_check(comm, type, group, info, op, status, newcomm, newtype, outstatus, errs)
      import
      integer :: comm, type, group, info, op, status(MPI_STATUS_SIZE), newcomm, newtype
      integer :: outstatus(MPI_STATUS_SIZE), errs
    end subroutine
  end interface
  integer :: ierr, rank, errs, total, type3, group, info, newcomm, newtype, cerrs, cnt, rlen
  integer :: status(MPI_STATUS_SIZE), outstatus(MPI_STATUS_SIZE), buf(2), pair(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Type_contiguous(3, MPI_DOUBLE_PRECISION, type3, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, group, ierr)
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'from', 'fortran', ierr)
  buf = [1, 2]
  call MPI_Sendrecv(buf, 2, MPI_INTEGER, rank, 21, pair, 2, MPI_INTEGER, rank, 21, &
                    MPI_COMM_WORLD, status, ierr)
  call c_check(MPI_COMM_WORLD, type3, group, info, MPI_SUM, status, newcomm, newtype, &
               outstatus, cerrs)
  call check(cerrs == 0, 'the C side saw the Fortran handles and status')
  ! The communicator and type made in C.
  call MPI_Comm_get_name(newcomm, name, rlen, ierr)
  call check(name == 'made in C', 'name of the communicator made in C')
  call MPI_Sendrecv(buf, 1, newtype, rank, 22, pair, 1, newtype, rank, 22, newcomm, &
                    MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(pair == buf), 'message on C handles')
  call check(outstatus(MPI_SOURCE) == 5 .and. outstatus(MPI_TAG) == 77, 'status made in C')
  call MPI_Get_count(outstatus, MPI_INTEGER, cnt, ierr)
  call check(cnt == 3, 'count of the status made in C')
  call MPI_Comm_free(newcomm, ierr)
  call MPI_Type_free(newtype, ierr)
  call MPI_Type_free(type3, ierr)
  call MPI_Group_free(group, ierr)
  call MPI_Info_free(info, ierr)

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 'test f_convert ok'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      errs = errs + 1
      print '(a,i0,2a)', 'rank ', rank, ': failed: ', what
    end if
  end subroutine
end program
