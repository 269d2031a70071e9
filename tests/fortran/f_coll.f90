! Collectives through module mpi: bcast, reduce and allreduce (with
! MPI_IN_PLACE), gather, a user reduction op written in Fortran
! (MPI_Op_create with a Fortran subroutine, commutative and not), the
! reductions defined for Fortran types (LOGICAL ops on MPI_LOGICAL, sums of
! MPI_COMPLEX and MPI_DOUBLE_COMPLEX, MPI_INTEGER8, MINLOC on MPI_2INTEGER).
module f_coll_ops
  implicit none
contains
  ! Concatenates decimal digits: an element is (value, 10**digits), so
  ! the op is associative but not commutative and the result shows the
  ! order of the operands (rank 0's digits first).
  subroutine digits_op(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(2, len), inoutvec(2, len)
    integer :: i
    do i = 1, len
      inoutvec(1, i) = invec(1, i) * inoutvec(2, i) + inoutvec(1, i)
      inoutvec(2, i) = invec(2, i) * inoutvec(2, i)
    end do
  end subroutine
  subroutine max_abs_op(invec, inoutvec, len, datatype)
    integer :: len, datatype
    double precision :: invec(len), inoutvec(len)
    integer :: i
    do i = 1, len
      inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
    end do
  end subroutine
end module

program f_coll
  use mpi
  use f_coll_ops
  implicit none
  integer :: ierr, rank, np, i, errs, total, op, op2, expect
  integer :: ibuf(4), iout(4), gathered(16), pair(2), pairout(2)
  double precision :: d(3), dout(3)
  logical :: l, lout
  complex :: c, cout
  double complex :: z, zout
  integer(kind=8) :: big, bigout

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! Bcast from the last rank.
  ibuf = rank
  call MPI_Bcast(ibuf, 4, MPI_INTEGER, np - 1, MPI_COMM_WORLD, ierr)
  call check(.not. (any(ibuf /= np - 1)), 'check at line 51')

  ! Reduce to rank 0, then allreduce in place.
  ibuf = [(rank + i, i = 1, 4)]
  iout = -1
  call MPI_Reduce(ibuf, iout, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, 4
      call check(.not. (iout(i) /= np * i + np * (np - 1) / 2), 'check at line 59')
    end do
  end if
  ibuf = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, ibuf, 4, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(.not. (any(ibuf /= np)), 'check at line 64')
  ! Reduce in place at the root.
  ibuf = 1
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, ibuf, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call check(.not. (any(ibuf /= np)), 'check at line 69')
  else
    call MPI_Reduce(ibuf, iout, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if

  ! Gather a scalar from each rank.
  gathered = -1
  call MPI_Gather(rank * 3, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, np
      call check(.not. (gathered(i) /= (i - 1) * 3), 'check at line 79')
    end do
  end if
  ! Allgather in place.
  gathered = -1
  gathered(rank + 1) = rank + 100
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 1, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  do i = 1, np
    call check(.not. (gathered(i) /= i + 99), 'check at line 88')
  end do

  ! A non-commutative Fortran op: ranks in order, rank 0's digit last.
  call MPI_Op_create(digits_op, .false., op, ierr)
  call check(.not. (ierr /= MPI_SUCCESS), 'check at line 93')
  ibuf = [rank + 1, 10, rank + 1, 10]
  call MPI_Allreduce(ibuf, iout, 2, MPI_2INTEGER, op, MPI_COMM_WORLD, ierr)
  expect = 0
  do i = 1, np
    expect = expect * 10 + i
  end do
  call check(iout(1) == expect .and. iout(3) == expect .and. iout(2) == 10**np, &
             'non-commutative Fortran op')
  call MPI_Op_free(op, ierr)
  call check(.not. (op /= MPI_OP_NULL), 'check at line 103')
  ! A commutative one on doubles.
  call MPI_Op_create(max_abs_op, .true., op2, ierr)
  d = [-dble(rank), dble(rank) * 2, -5d0]
  call MPI_Allreduce(d, dout, 3, MPI_DOUBLE_PRECISION, op2, MPI_COMM_WORLD, ierr)
  ! (one rank: the op never runs, the result is the input)
  call check(dout(1) == np - 1 .and. dout(2) == 2 * (np - 1) .and. &
             dout(3) == merge(5d0, -5d0, np > 1), 'commutative Fortran op on doubles')
  call MPI_Op_free(op2, ierr)

  ! LOGICAL reductions on MPI_LOGICAL: only rank 0 is .true.
  l = rank == 0
  call MPI_Allreduce(l, lout, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(.not. (.not. lout), 'check at line 114')
  call MPI_Allreduce(l, lout, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(.not. (lout .neqv. (np == 1)), 'check at line 116')
  call MPI_Allreduce(l, lout, 1, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD, ierr)
  call check(.not. (.not. lout), 'check at line 118')

  ! Complex sums.
  c = cmplx(1.0, real(rank))
  call MPI_Allreduce(c, cout, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(.not. (real(cout) /= np .or. aimag(cout) /= np * (np - 1) / 2), 'check at line 123')
  z = dcmplx(2d0, -dble(rank))
  call MPI_Allreduce(z, zout, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(.not. (dble(zout) /= 2 * np .or. aimag(zout) /= -(np * (np - 1) / 2)), 'check at line 126')
  ! A sized type and a pair type.
  big = 2_8**40 + rank
  call MPI_Allreduce(big, bigout, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(.not. (bigout /= np * 2_8**40 + np * (np - 1) / 2), 'check at line 130')
  pair = [10 - rank, rank]
  call MPI_Allreduce(pair, pairout, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check(.not. (pairout(1) /= 10 - (np - 1) .or. pairout(2) /= np - 1), 'check at line 133')

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 'test f_coll ok'
  if (errs /= 0) print *, 'rank', rank, ':', errs, 'errors'
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
