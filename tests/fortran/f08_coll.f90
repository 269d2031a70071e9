! Collectives and callbacks through module mpi_f08: MPI_IN_PLACE, a user
! reduction op in the standard's f08 form (TYPE(C_PTR) vectors), a
! nonblocking reduction on a non-contiguous section, a communicator error
! handler written in Fortran, MPI_ERRORS_RETURN with and without IERROR,
! sections no datatype describes (two sections sharing one count, a v
! collective, MPI_BYTE over REALs): copied in blocking calls, refused with
! MPI_ERR_BUFFER in nonblocking ones; MPI_Get_address of a section; and
! attribute copy/delete callbacks.
module f08_coll_cb
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: handler_calls = 0, last_code = 0, copies = 0, deletes = 0
contains
  ! Concatenates decimal digits, (value, 10**digits): associative, not
  ! commutative; the result shows the operands' order.
  subroutine digits_op(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: x(:), y(:)
    integer :: i
    call c_f_pointer(invec, x, [2 * len])
    call c_f_pointer(inoutvec, y, [2 * len])
    if (datatype /= MPI_2INTEGER) return
    do i = 1, 2 * len, 2
      y(i) = x(i) * y(i + 1) + y(i)
      y(i + 1) = x(i + 1) * y(i + 1)
    end do
  end subroutine
  subroutine on_error(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    handler_calls = handler_calls + 1
    last_code = code
    if (comm == MPI_COMM_NULL) handler_calls = -100
  end subroutine
  subroutine copy_fn(oldcomm, keyval, extra_state, val_in, val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    copies = copies + 1
    val_out = val_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine
  subroutine delete_fn(comm, keyval, val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine
end module

program f08_coll
  use mpi_f08
  use f08_coll_cb
  implicit none
  integer :: rank, np, i, errs, ierr, cls, expect, keyval
  integer :: v(4), w(3, 3), pair(2)
  type(MPI_Op) :: op
  type(MPI_Request) :: req
  type(MPI_Errhandler) :: eh
  type(MPI_Comm) :: comm, dup
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  double precision :: dd(3), e(5)
  integer :: x(6), y(3, 3), rg(9), counts(4), displs(4)
  integer(kind=MPI_ADDRESS_KIND) :: addr1, addr2
  type(MPI_Comm) :: cart, sub
  integer :: cdims(2), coords(2), n
  logical :: periods(2)

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)

  ! MPI_IN_PLACE.
  v = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(v /= np * (np + 1) / 2)) call fail('allreduce in place')
  v = rank
  call MPI_Bcast(v, 4, MPI_INTEGER, np - 1, MPI_COMM_WORLD)
  if (any(v /= np - 1)) call fail('bcast')

  ! A user op in f08 form, not commutative: digits in rank order.
  call MPI_Op_create(digits_op, .false., op)
  pair = [rank + 1, 10]
  call MPI_Allreduce(MPI_IN_PLACE, pair, 1, MPI_2INTEGER, op, MPI_COMM_WORLD)
  expect = 0
  do i = 1, np
    expect = expect * 10 + i
  end do
  if (pair(1) /= expect .or. pair(2) /= 10 ** np) call fail('user op')
  call MPI_Op_free(op)
  if (op /= MPI_OP_NULL) call fail('op_free')

  ! A nonblocking reduction into a row of w (a section), in place.
  w = -1
  w(2, :) = [rank, 2 * rank, 3 * rank]
  call MPI_Iallreduce(MPI_IN_PLACE, w(2, :), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  do i = 1, 3
    if (w(2, i) /= i * np * (np - 1) / 2 .or. w(1, i) /= -1 .or. w(3, i) /= -1) &
      call fail('iallreduce section')
  end do

  ! Blocking calls on sections no datatype describes: through a copy.
  x = [(100 * rank + i, i = 1, 6)]
  y = -1
  call MPI_Allreduce(x(1:6:2), y(2, :), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  do i = 1, 3
    if (y(2, i) /= 100 * np * (np - 1) / 2 + np * (2 * i - 1) .or. y(1, i) /= -1 &
        .or. y(3, i) /= -1) call fail('allreduce of two sections')
  end do
  if (np <= 4) then
    rg = -1
    counts = 1
    displs = [(i, i = 0, 3)]
    call MPI_Gatherv(rank + 7, 1, MPI_INTEGER, rg(1:2 * np:2), counts, displs, MPI_INTEGER, &
                     0, MPI_COMM_WORLD)
    if (rank == 0) then
      do i = 1, np
        if (rg(2 * i - 1) /= i + 6) call fail('gatherv into a section')
        if (rg(2 * i) /= -1) call fail('gatherv wrote between')
      end do
    end if
  end if
  dd = [1.5d0, 2.5d0, 3.5d0]
  e = 0
  call MPI_Sendrecv(dd(1:3:2), 16, MPI_BYTE, 0, 9, e(2:4:2), 16, MPI_BYTE, 0, 9, &
                    MPI_COMM_SELF, MPI_STATUS_IGNORE)
  if (e(2) /= 1.5d0 .or. e(4) /= 3.5d0 .or. e(1) /= 0 .or. e(3) /= 0 .or. e(5) /= 0) &
    call fail('MPI_BYTE over a section')
  call MPI_Get_address(x(3:6:2), addr1)
  call MPI_Get_address(x(3), addr2)
  if (addr1 /= addr2) call fail('get_address of a section')

  ! LOGICAL arrays in and out (one of assumed size: MPI_Cart_sub's).
  call MPI_Cart_create(MPI_COMM_WORLD, 2, [np, 1], [.true., .false.], .false., cart)
  call MPI_Cart_get(cart, 2, cdims, periods, coords)
  if (.not. periods(1) .or. periods(2) .or. any(cdims /= [np, 1]) .or. coords(1) /= rank) &
    call fail('cart_get')
  call MPI_Cart_sub(cart, [.false., .true.], sub)
  call MPI_Comm_size(sub, n)
  if (n /= 1) call fail('cart_sub')
  call MPI_Comm_free(sub)
  call MPI_Cart_sub(cart, [.true., .false.], sub)
  call MPI_Comm_size(sub, n)
  if (n /= np) call fail('cart_sub kept dims')
  call MPI_Comm_free(sub)
  call MPI_Comm_free(cart)

  ! Errors: MPI_ERRORS_RETURN, a bad rank through IERROR and without it.
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)
  call MPI_Send(v, 1, MPI_INTEGER, np + 5, 0, comm, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_RANK) call fail('bad rank class')
  call MPI_Send(v, 1, MPI_INTEGER, np + 5, 0, comm)  ! no IERROR: returns all the same
  ! A nonblocking call on a section its datatype cannot describe (another
  ! extent) or with no count of its own (v collective): MPI_ERR_BUFFER.
  call MPI_Isend(dd(1:3:2), 2, MPI_INTEGER, rank, 0, comm, req, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_BUFFER) call fail('isend: section with a mismatched datatype')
  call MPI_Igatherv(rank, 1, MPI_INTEGER, rg(1:2 * np:2), counts, displs, MPI_INTEGER, &
                    0, comm, req, ierr)
  call MPI_Error_class(ierr, cls)
  ! (one rank: rg(1:2:2) is one element, contiguous, and taken)
  if (np > 1 .and. cls /= MPI_ERR_BUFFER) call fail('igatherv into a section')
  if (np == 1 .and. ierr == MPI_SUCCESS) call MPI_Wait(req, MPI_STATUS_IGNORE)
  ! An error handler written in Fortran.
  call MPI_Comm_create_errhandler(on_error, eh)
  call MPI_Comm_set_errhandler(comm, eh)
  call MPI_Errhandler_free(eh)
  call MPI_Send(v, 1, MPI_INTEGER, -7, 0, comm, ierr)
  call MPI_Error_class(last_code, cls)
  if (handler_calls /= 1 .or. cls /= MPI_ERR_RANK .or. ierr == MPI_SUCCESS) &
    call fail('fortran error handler')

  ! Attribute callbacks: copied on dup (value + extra state), deleted on free.
  call MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, 5_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(comm, keyval, 37_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(comm, dup)
  call MPI_Comm_get_attr(dup, keyval, val, flag)
  if (.not. flag .or. val /= 42 .or. copies /= 1) call fail('attribute copy')
  call MPI_Comm_free(dup)
  call MPI_Comm_free(comm)
  if (deletes /= 2) call fail('attribute delete')
  call MPI_Comm_free_keyval(keyval)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  if (.not. flag .or. val < 32767) call fail('MPI_TAG_UB')

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. errs == 0) print '(a)', 'test f08_coll ok'
  call MPI_Finalize()
  if (errs /= 0) stop 1
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ' failed: ', what
    errs = errs + 1
  end subroutine
end program
