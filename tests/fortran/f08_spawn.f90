! MPI_Comm_spawn and MPI_Comm_spawn_multiple from module mpi_f08: the
! program spawns itself. argv is a blank-padded CHARACTER array ended by a
! blank entry (an inner blank stays in its argument); spawn_multiple's come
! from the rows of a 2-D array; MPI_ARGV_NULL and MPI_ARGVS_NULL give no
! arguments, MPI_ERRCODES_IGNORE no codes; errcodes come back per child.
! Each child checks its arguments; its rank 0 sends the verdict to the
! parents' root.
program f08_spawn
  use mpi_f08
  implicit none
  integer :: rank, nargs, ok, allok, codes(2), mcodes(3), maxprocs(2)
  type(MPI_Comm) :: parent, ic
  type(MPI_Info) :: infos(2)
  character(len=512) :: prog, cmds(2)
  character(len=16) :: args(4)
  character(len=8) :: margv(2, 4)
  character(len=32) :: a1, a2, a3

  call MPI_Init()
  call MPI_Comm_get_parent(parent)
  nargs = command_argument_count()
  if (parent /= MPI_COMM_NULL) then
    a1 = ''; a2 = ''; a3 = ''
    if (nargs >= 1) call get_command_argument(1, a1)
    if (nargs >= 2) call get_command_argument(2, a2)
    if (nargs >= 3) call get_command_argument(3, a3)
    ok = 0
    if (nargs == 0) then
      ok = 1                          ! MPI_ARGV_NULL, MPI_ARGVS_NULL
    else if (a1 == 'one') then
      if (nargs == 3 .and. a2 == 'a b' .and. a3 == 'x') ok = 1
    else if (a1 == 'multi' .and. a2 == '1') then
      if (nargs == 2) ok = 1
    else if (a1 == 'multi' .and. a2 == '2') then
      if (nargs == 3 .and. a3 == 'extra') ok = 1
    end if
    if (ok == 0) print *, 'failed: child got', nargs, ' arguments: ', trim(a1), '|', &
        trim(a2), '|', trim(a3)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Reduce(ok, allok, 1, MPI_INTEGER, MPI_MIN, 0, MPI_COMM_WORLD)
    if (rank == 0) call MPI_Send(allok, 1, MPI_INTEGER, 0, 5, parent)
    call MPI_Comm_disconnect(parent)
    call MPI_Finalize()
    stop
  end if

  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call get_command_argument(0, prog)
  args = [character(len=16) :: 'one', 'a b', 'x', ' ']
  codes = -1
  call MPI_Comm_spawn(prog, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, codes)
  call check('spawn', ic)
  if (rank == 0 .and. any(codes /= MPI_SUCCESS)) print *, 'failed: spawn error codes', codes

  call MPI_Comm_spawn(prog, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, &
                      MPI_ERRCODES_IGNORE)
  call check('spawn MPI_ARGV_NULL', ic)

  cmds = prog
  margv = ' '
  margv(1, 1:2) = [character(len=8) :: 'multi', '1']
  margv(2, 1:3) = [character(len=8) :: 'multi', '2', 'extra']
  maxprocs = [1, 2]
  infos = MPI_INFO_NULL
  mcodes = -1
  call MPI_Comm_spawn_multiple(2, cmds, margv, maxprocs, infos, 0, MPI_COMM_WORLD, ic, mcodes)
  call check('spawn_multiple', ic)
  if (rank == 0 .and. any(mcodes /= MPI_SUCCESS)) print *, 'failed: spawn_multiple codes', mcodes

  call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, ic, &
                               MPI_ERRCODES_IGNORE)
  call check('spawn_multiple MPI_ARGVS_NULL', ic)

  call MPI_Finalize()
  if (rank == 0) print '(a)', 'test f08_spawn ok'

contains

  ! The children's verdict, at the root; then every parent lets go.
  subroutine check(what, inter)
    character(len=*), intent(in) :: what
    type(MPI_Comm), intent(inout) :: inter
    integer :: verdict
    if (rank == 0) then
      call MPI_Recv(verdict, 1, MPI_INTEGER, 0, 5, inter, MPI_STATUS_IGNORE)
      if (verdict /= 1) print *, 'failed: ', what, ': a child saw the wrong arguments'
    end if
    call MPI_Comm_disconnect(inter)
  end subroutine
end program f08_spawn
