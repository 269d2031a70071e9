! Point-to-point through module mpi_f08: blocking and nonblocking calls with
! TYPE(MPI_Status) and TYPE(MPI_Request), non-contiguous array sections
! (a(1:n:2), b(2,:)) sent and received by MPI_Send/Recv and MPI_Isend/Irecv
! (the binding describes them with a datatype, never a copy), a
! large-count call (INTEGER(MPI_COUNT_KIND)), handles compared with == and
! /=, the status conversions, and mpi_f08 handles given to code written
! for module mpi (%MPI_VAL).
module f08_p2p_old
  implicit none
contains
  ! Code written for module mpi: INTEGER handles.
  subroutine old_size(comm, np)
    use mpi
    integer, intent(in) :: comm
    integer, intent(out) :: np
    integer :: ierr
    call MPI_Comm_size(comm, np, ierr)
  end subroutine
  subroutine old_status(fstat, src)
    use mpi
    integer, intent(in) :: fstat(MPI_STATUS_SIZE)
    integer, intent(out) :: src
    src = fstat(MPI_SOURCE)
  end subroutine
end module

program f08_p2p
  use mpi_f08
  use f08_p2p_old
  implicit none
  integer :: rank, np, np_old, i, j, errs, ierr, cnt, next, prev, src
  integer :: a(10), b(3, 4), c(8), got(5), row(4)
  double precision :: d(6)
  type(MPI_Status) :: st, sts(4), st2
  type(MPI_Request) :: reqs(4)
  type(MPI_Comm) :: dup
  integer :: fstat(MPI_STATUS_SIZE)
  integer(kind=MPI_COUNT_KIND) :: bigcount, ccount

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (ierr /= MPI_SUCCESS) call fail('size ierror')
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  ! Handles: == and /=, and the same integer as module mpi's.
  if (.not. (MPI_COMM_WORLD == MPI_COMM_WORLD) .or. MPI_COMM_WORLD == MPI_COMM_SELF) &
    call fail('handle ==')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  if (dup == MPI_COMM_WORLD .or. .not. (dup /= MPI_COMM_NULL)) call fail('dup /=')
  call old_size(dup%MPI_VAL, np_old)
  if (np_old /= np) call fail('mpi module on an f08 handle')
  if (MPI_COMM_WORLD%MPI_VAL /= 1140850688) call fail('MPI_VAL of MPI_COMM_WORLD')

  a = [(rank * 100 + i, i = 1, 10)]
  ! Blocking, a strided section: every other element of a, into a
  ! contiguous array; and a contiguous array into a row of b (stride 3).
  call MPI_Sendrecv(a(1:10:2), 5, MPI_INTEGER, next, 2, got, 5, MPI_INTEGER, prev, 2, &
                    MPI_COMM_WORLD, st)
  do i = 1, 5
    if (got(i) /= prev * 100 + 2 * i - 1) call fail('strided send')
  end do
  if (st%MPI_SOURCE /= prev .or. st%MPI_TAG /= 2) call fail('status fields')
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (cnt /= 5) call fail('get_count')
  row = [(rank * 10 + j, j = 1, 4)]
  b = -1
  call MPI_Sendrecv(row, 4, MPI_INTEGER, next, 3, b(2, :), 4, MPI_INTEGER, prev, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  do j = 1, 4
    if (b(2, j) /= prev * 10 + j .or. b(1, j) /= -1 .or. b(3, j) /= -1) call fail('row recv')
  end do
  ! Part of a section: the first 3 of 5 elements of a(2:10:2).
  got = -7
  call MPI_Sendrecv(a(2:10:2), 3, MPI_INTEGER, next, 4, got(1:5:2), 3, MPI_INTEGER, prev, 4, &
                    MPI_COMM_WORLD, st)
  if (got(1) /= prev * 100 + 2 .or. got(3) /= prev * 100 + 4 .or. got(5) /= prev * 100 + 6 &
      .or. got(2) /= -7 .or. got(4) /= -7) call fail('partial section')

  ! Nonblocking with sections: b's column 3 of the sender... into the
  ! receiver's row 1 reversed (a negative stride); a double precision
  ! section beside it.
  b = reshape([(rank * 1000 + i, i = 1, 12)], [3, 4])
  c = -1
  d = [(dble(rank) + i / 10d0, i = 1, 6)]
  call MPI_Irecv(c(8:2:-2), 4, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(b(1, :), 4, MPI_INTEGER, next, 5, MPI_COMM_WORLD, reqs(2))
  call MPI_Irecv(d(2:6:2), 3, MPI_DOUBLE_PRECISION, prev, 6, MPI_COMM_WORLD, reqs(3))
  call MPI_Isend(d(1:5:2), 3, MPI_DOUBLE_PRECISION, next, 6, MPI_COMM_WORLD, reqs(4))
  call MPI_Waitall(4, reqs, sts)
  do j = 1, 4
    ! b(1, j) of prev = prev*1000 + 3*(j-1) + 1 lands in c(8 - 2*(j-1)).
    if (c(8 - 2 * (j - 1)) /= prev * 1000 + 3 * (j - 1) + 1) call fail('isend section')
  end do
  if (any(c(1:7:2) /= -1)) call fail('isend section wrote between')
  do i = 1, 3
    if (abs(d(2 * i) - (prev + (2 * i - 1) / 10d0)) > 1d-12) call fail('double section')
  end do
  if (sts(1)%MPI_SOURCE /= prev .or. sts(1)%MPI_TAG /= 5) call fail('waitall statuses')
  if (any(reqs /= MPI_REQUEST_NULL)) call fail('requests not freed')

  ! Large count: the _c form through the generic.
  bigcount = 8
  call MPI_Isend(a, bigcount, MPI_INTEGER, next, 8, MPI_COMM_WORLD, reqs(1))
  call MPI_Recv(c, 8_MPI_COUNT_KIND, MPI_INTEGER, prev, 8, MPI_COMM_WORLD, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, ccount)
  if (ccount /= 8 .or. c(8) /= prev * 100 + 8) call fail('large count')
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)

  ! Status conversions: f08 <-> mpi's INTEGER array.
  call MPI_Status_f082f(sts(1), fstat)
  call old_status(fstat, src)
  if (src /= prev) call fail('status_f082f')
  call MPI_Status_f2f08(fstat, st2)
  if (st2%MPI_SOURCE /= prev .or. st2%MPI_TAG /= 5) call fail('status_f2f08')

  call MPI_Comm_free(dup)
  if (dup /= MPI_COMM_NULL) call fail('comm_free')
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. errs == 0) print '(a)', 'test f08_p2p ok'
  call MPI_Finalize()
  if (errs /= 0) stop 1
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ' failed: ', what
    errs = errs + 1
  end subroutine
end program
