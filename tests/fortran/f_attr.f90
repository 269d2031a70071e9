! Attributes across Fortran and C (MPI-4.1 19.3.7): a value set in
! Fortran reads in C through a pointer to MPI's storage of it, also on a
! dup'ed communicator whose Fortran copy callback changed it (MPICH's
! f90/attr/attrlangf90); MPI-1's INTEGER values likewise; a pointer set in
! C reads in Fortran as its address; Fortran reads back its own values
! (MPI_COMM_GET_ATTR and MPI-1's MPI_ATTR_GET), and the Fortran delete
! callback sees the integer.
module f_attr_cb
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: deleted = 0
contains
  subroutine copy_plus1(oldcomm, keyval, extra, inval, outval, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, inval, outval
    logical :: flag
    outval = inval + 1
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine
  subroutine delete_note(comm, keyval, val, extra, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deleted = val
    ierr = MPI_SUCCESS
  end subroutine
  subroutine copy1_plus1(oldcomm, keyval, extra, inval, outval, flag, ierr)
    integer :: oldcomm, keyval, extra, inval, outval, ierr
    logical :: flag
    outval = inval + 1
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine
end module

program f_attr
  use mpi
  use f_attr_cb
  implicit none
  interface
    subroutine c_read_aint(comm, keyval, expected, errs)
      import :: MPI_ADDRESS_KIND
      integer :: comm, keyval, errs
      integer(kind=MPI_ADDRESS_KIND) :: expected
    end subroutine
    subroutine c_read_int(comm, keyval, expected, errs)
      integer :: comm, keyval, expected, errs
    end subroutine
    subroutine c_set_ptr(comm, keyval, addr)
      import :: MPI_ADDRESS_KIND
      integer :: comm, keyval
      integer(kind=MPI_ADDRESS_KIND) :: addr
    end subroutine
  end interface
  integer :: ierr, rank, errs, key, key1, dup, dup1, ival
  integer(kind=MPI_ADDRESS_KIND) :: extra, val, big, got, addr
  logical :: flag

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  extra = 0
  call MPI_Comm_create_keyval(copy_plus1, delete_note, key, extra, ierr)
  big = huge(0_MPI_ADDRESS_KIND) / 3
  call MPI_Comm_set_attr(MPI_COMM_SELF, key, big, ierr)
  call c_read_aint(MPI_COMM_SELF, key, big, errs)
  call MPI_Comm_get_attr(MPI_COMM_SELF, key, got, flag, ierr)
  if (.not. flag .or. got /= big) call fail('Fortran reads its own value')
  call MPI_Comm_dup(MPI_COMM_SELF, dup, ierr)
  call c_read_aint(dup, key, big + 1, errs)
  call MPI_Comm_get_attr(dup, key, got, flag, ierr)
  if (.not. flag .or. got /= big + 1) call fail('Fortran reads the copy')
  call MPI_Comm_free(dup, ierr)
  if (deleted /= big + 1) call fail('delete callback value')
  ! A negative value, replaced (the old one's delete callback sees it).
  val = -5
  call MPI_Comm_set_attr(MPI_COMM_SELF, key, val, ierr)
  if (deleted /= big) call fail('replaced value to the delete callback')
  call c_read_aint(MPI_COMM_SELF, key, val, errs)
  ! C sets a pointer: Fortran reads its address.
  call c_set_ptr(MPI_COMM_SELF, key, addr)
  call MPI_Comm_get_attr(MPI_COMM_SELF, key, got, flag, ierr)
  if (.not. flag .or. got /= addr) call fail('a C pointer reads as its address')
  call MPI_Comm_delete_attr(MPI_COMM_SELF, key, ierr)
  call MPI_Comm_free_keyval(key, ierr)

  ! MPI-1: INTEGER values.
  call MPI_Keyval_create(copy1_plus1, MPI_NULL_DELETE_FN, key1, 0, ierr)
  call MPI_Attr_put(MPI_COMM_SELF, key1, 123456, ierr)
  call c_read_int(MPI_COMM_SELF, key1, 123456, errs)
  call MPI_Attr_get(MPI_COMM_SELF, key1, ival, flag, ierr)
  if (.not. flag .or. ival /= 123456) call fail('MPI_ATTR_GET of its own value')
  call MPI_Comm_dup(MPI_COMM_SELF, dup1, ierr)
  call c_read_int(dup1, key1, 123457, errs)
  call MPI_Attr_get(dup1, key1, ival, flag, ierr)
  if (.not. flag .or. ival /= 123457) call fail('MPI_ATTR_GET of the copy')
  call MPI_Comm_free(dup1, ierr)
  call MPI_Attr_delete(MPI_COMM_SELF, key1, ierr)
  call MPI_Keyval_free(key1, ierr)
  ! The predefined attributes still read as their values.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, got, flag, ierr)
  if (.not. flag .or. got < 32767) call fail('MPI_TAG_UB')

  call MPI_Finalize(ierr)
  if (rank == 0 .and. errs == 0) print '(a)', 'test f_attr ok'
  if (errs /= 0) error stop 1
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ' failed: ', what
    errs = errs + 1
  end subroutine
end program
