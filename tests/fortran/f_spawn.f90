! MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran (module mpi): the
! program spawns itself. Its argument lists are blank-padded CHARACTER
! arrays ended by a blank entry (an argument with an inner blank stays one
! argument; trailing blanks go); spawn_multiple's come from the rows of a
! 2-D array; MPI_ARGV_NULL gives no arguments, MPI_ERRCODES_IGNORE no codes.
! Only the root's lists count: the other parents pass MPI_ARGV_NULL or
! garbage. Each child checks its arguments and its children's rank 0 sends
! the verdict to the parents' root.
program f_spawn
  use mpi
  implicit none
  integer :: ierr, rank, size, parent, ic, nargs, ok, allok, i
  integer :: codes(2)
  character(len=512) :: prog
  character(len=16) :: args(4), garbage(4)
  character(len=32) :: a1, a2, a3

  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  nargs = command_argument_count()
  if (parent /= MPI_COMM_NULL) then
    ! A child: check what arrived, tell the parents' root.
    a1 = ''; a2 = ''; a3 = ''
    if (nargs >= 1) call get_command_argument(1, a1)
    if (nargs >= 2) call get_command_argument(2, a2)
    if (nargs >= 3) call get_command_argument(3, a3)
    ok = 0
    if (nargs == 0) then
      ok = 1                          ! MPI_ARGV_NULL
    else if (a1 == 'one') then
      if (nargs == 3 .and. a2 == 'a b' .and. a3 == 'x') ok = 1
    else if (a1 == 'multi' .and. a2 == '1') then
      if (nargs == 2) ok = 1
    else if (a1 == 'multi' .and. a2 == '2') then
      if (nargs == 3 .and. a3 == 'extra') ok = 1
    end if
    if (ok == 0) print *, 'failed: child got', nargs, ' arguments: ', trim(a1), '|', &
        trim(a2), '|', trim(a3)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Reduce(ok, allok, 1, MPI_INTEGER, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_Send(allok, 1, MPI_INTEGER, 0, 5, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
    call MPI_Finalize(ierr)
    stop
  end if

  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call get_command_argument(0, prog)
  garbage = 'not-an-arg'

  ! One command, two children; an inner blank, then the blank end.
  args(1) = 'one'
  args(2) = 'a b'
  args(3) = 'x'
  args(4) = ' '
  codes = -1
  if (rank == 0) then
    call MPI_Comm_spawn(prog, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, codes, ierr)
  else
    call MPI_Comm_spawn(prog, garbage, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, codes, ierr)
  end if
  call check_spawn('spawn', ierr, ic)
  if (rank == 0 .and. (codes(1) /= MPI_SUCCESS .or. codes(2) /= MPI_SUCCESS)) &
      print *, 'failed: spawn error codes', codes

  ! No arguments at all.
  call MPI_Comm_spawn(prog, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, &
                      MPI_ERRCODES_IGNORE, ierr)
  call check_spawn('spawn_argv_null', ierr, ic)

  ! Two commands: row i of the 2-D array is command i's list.
  call spawn_multiple(prog)

  call MPI_Finalize(ierr)

contains

  subroutine spawn_multiple(p)
    character(len=*), intent(in) :: p
    character(len=512) :: lcmds(2)
    character(len=8) :: lmargv(2, 4)
    integer :: lmax(2), linfo(2), lcodes(3), lic, lerr
    lcmds = p
    lmargv = ' '
    lmargv(1, 1) = 'multi'
    lmargv(1, 2) = '1'
    lmargv(2, 1) = 'multi'
    lmargv(2, 2) = '2'
    lmargv(2, 3) = 'extra'
    lmax = (/ 1, 2 /)
    linfo = MPI_INFO_NULL
    lcodes = -1
    if (rank == 0) then
      call MPI_Comm_spawn_multiple(2, lcmds, lmargv, lmax, linfo, 0, MPI_COMM_WORLD, lic, &
                                   lcodes, lerr)
    else
      call MPI_Comm_spawn_multiple(2, lcmds, MPI_ARGVS_NULL, lmax, linfo, 0, MPI_COMM_WORLD, &
                                   lic, MPI_ERRCODES_IGNORE, lerr)
    end if
    call check_spawn('spawn_multiple', lerr, lic)
    if (rank == 0) then
      do i = 1, 3
        if (lcodes(i) /= MPI_SUCCESS) print *, 'failed: spawn_multiple code', i, lcodes(i)
      end do
    end if
  end subroutine

  ! The children's verdict, at the root; then every parent lets go.
  subroutine check_spawn(what, err, inter)
    character(len=*), intent(in) :: what
    integer, intent(in) :: err
    integer, intent(inout) :: inter
    integer :: verdict, st(MPI_STATUS_SIZE), e, rsize
    if (err /= MPI_SUCCESS) then
      print *, 'failed: ', what, ' returned', err
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
    if (rank == 0) then
      call MPI_Recv(verdict, 1, MPI_INTEGER, 0, 5, inter, st, e)
      call MPI_Comm_remote_size(inter, rsize, e)
      if (verdict /= 1) then
        print *, 'failed: ', what, ': a child saw the wrong arguments'
      else
        print '(a, a, a)', 'test ', what, ' ok'
      end if
    end if
    call MPI_Comm_disconnect(inter, e)
  end subroutine
end program f_spawn
