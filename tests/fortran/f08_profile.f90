! The mpi_f08 profiling interface (MPI-4.1 19.1.5): a program's own
! MPI_Send_f08ts (the standard's specific name of MPI_Send's TYPE(*),
! DIMENSION(..) form) replaces the library's, and calls PMPI_Send; MPI_Recv
! likewise through MPI_Recv_f08ts; MPI_Comm_rank (no buffer) through
! MPI_Comm_rank_f08. PMPI_Wtime is a function of its own. Then
! MPI_Info_get_string's BUFLEN in Fortran counts no terminator: in, the
! characters to write (0: none); out, the value's length.
module counts
  integer :: sends = 0, sent = 0, recvs = 0, ranks = 0
end module counts

program f08_profile
  use mpi_f08
  use counts
  implicit none
  integer :: rank, np, errs, buf(3), buflen
  type(MPI_Info) :: info
  character(len=12) :: val
  logical :: flag
  double precision :: t

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  if (ranks /= 1) call fail('MPI_Comm_rank_f08 not intercepted')
  if (np >= 2) then
    if (rank == 0) then
      buf = [7, 8, 9]
      call MPI_Send(buf, 3, MPI_INTEGER, 1, 5, MPI_COMM_WORLD)
      if (sends /= 1 .or. sent /= 3) call fail('MPI_Send_f08ts not intercepted')
    else if (rank == 1) then
      buf = 0
      call MPI_Recv(buf, 3, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      if (recvs /= 1) call fail('MPI_Recv_f08ts not intercepted')
      if (any(buf /= [7, 8, 9])) call fail('the message through PMPI_Send/PMPI_Recv')
    end if
  end if
  t = PMPI_Wtime()
  if (t <= 0d0) call fail('PMPI_Wtime')

  call MPI_Info_create(info)
  call MPI_Info_set(info, 'k', '123456789')
  ! 0: the length only, the string untouched.
  buflen = 0
  val = 'canary'
  call MPI_Info_get_string(info, 'k', buflen, val, flag)
  if (.not. flag .or. buflen /= 9 .or. val /= 'canary') call fail('get_string buflen 0')
  ! 2: two characters, blank-padded; the value's length back.
  buflen = 2
  call MPI_Info_get_string(info, 'k', buflen, val, flag)
  if (.not. flag .or. buflen /= 9 .or. val /= '12') call fail('get_string buflen 2')
  ! Room for all of it: the whole value.
  buflen = len(val)
  call MPI_Info_get_string(info, 'k', buflen, val, flag)
  if (.not. flag .or. buflen /= 9 .or. val /= '123456789') call fail('get_string whole')
  ! Exactly the value's length: all 9 characters (C would need 10).
  buflen = 9
  val = 'canary'
  call MPI_Info_get_string(info, 'k', buflen, val, flag)
  if (.not. flag .or. buflen /= 9 .or. val /= '123456789') call fail('get_string buflen 9')
  ! No such key: flag false, nothing written.
  buflen = 5
  val = 'canary'
  call MPI_Info_get_string(info, 'nokey', buflen, val, flag)
  if (flag .or. val /= 'canary') call fail('get_string no key')
  call MPI_Info_free(info)

  call MPI_Finalize()
  if (rank == 0 .and. errs == 0) print '(a)', 'test f08_profile ok'
  if (errs /= 0) error stop 1
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ' failed: ', what
    errs = errs + 1
  end subroutine
end program

! The profiling layer: the standard's specific names, outside any module,
! the module's own interface for each renamed away.
subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
  use :: mpi_f08, my_noname => MPI_Send_f08ts
  use counts
  implicit none
  type(*), dimension(..), intent(in) :: buf
  integer, intent(in) :: count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  sends = sends + 1
  sent = sent + count
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine

subroutine MPI_Recv_f08ts(buf, count, datatype, source, tag, comm, status, ierror)
  use :: mpi_f08, my_noname => MPI_Recv_f08ts
  use counts
  implicit none
  type(*), dimension(..) :: buf
  integer, intent(in) :: count, source, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  type(MPI_Status) :: status
  integer, optional, intent(out) :: ierror
  recvs = recvs + 1
  call PMPI_Recv(buf, count, datatype, source, tag, comm, status, ierror)
end subroutine

subroutine MPI_Comm_rank_f08(comm, rank, ierror)
  use :: mpi_f08, my_noname => MPI_Comm_rank_f08
  use counts
  implicit none
  type(MPI_Comm), intent(in) :: comm
  integer, intent(out) :: rank
  integer, optional, intent(out) :: ierror
  ranks = ranks + 1
  call PMPI_Comm_rank(comm, rank, ierror)
end subroutine
