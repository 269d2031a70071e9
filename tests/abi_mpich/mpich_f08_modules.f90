! Built with Debian's mpifort.mpich and `use mpi_f08`, and run on Tern's
! libmpichfort.so.12 (docs/design.md, "The MPICH ABI face", Fortran): what
! a program calls by MPICH's module names and MPICH 4.0's extra specific
! names. == and /= on handles (module procedures of mpi_f08_types), the
! status conversions and MPI_SIZEOF of the same module, the predefined
! callbacks of mpi_f08_callbacks (MPI_COMM_DUP_FN in a keyval),
! MPI_UNWEIGHTED of mpi_f08_link_constants, handle constants passed by
! reference (mpi_f08_compile_constants), a large-count call
! (mpi_send_f08ts_large_) and PMPI_ calls (pmpir_*). Each check names what
! it proves; a failed one ends the job with error stop. Arguments: the
! directory of Tern's libraries (resolved), a scratch directory.
program mpich_f08_modules
  use mpi_f08
  implicit none
  integer :: ierr, rank, nproc, next, prev, n, key, i
  integer :: sbuf(4), rbuf(4), fstat(MPI_STATUS_SIZE)
  integer(kind=MPI_COUNT_KIND) :: big
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: flag
  real(kind=8) :: d(3)
  complex :: z
  type(MPI_Status) :: st, st2
  type(MPI_Comm) :: dup, graph, comms(2)
  type(MPI_Datatype) :: dt
  character(len=1024) :: libdir

  call get_command_argument(1, libdir)
  call PMPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'PMPI_Init')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call PMPI_Comm_size(MPI_COMM_WORLD, nproc)
  call check_maps()
  next = mod(rank + 1, nproc)
  prev = mod(rank + nproc - 1, nproc)

  ! Operators on handles: module procedures of MPICH's mpi_f08_types.
  call check(MPI_COMM_WORLD == MPI_COMM_WORLD, 'comm == comm')
  call check(MPI_COMM_WORLD /= MPI_COMM_SELF, 'comm /= comm')
  call check(.not. (MPI_COMM_WORLD == MPI_COMM_NULL), 'comm == MPI_COMM_NULL false')
  call check(MPI_INTEGER == MPI_INTEGER .and. MPI_INTEGER /= MPI_REAL, 'datatype ==, /=')
  call check(MPI_SUM /= MPI_MAX .and. MPI_REQUEST_NULL == MPI_REQUEST_NULL, 'op, request')
  call check(MPI_COMM_WORLD == MPI_COMM_WORLD%MPI_VAL, 'comm == INTEGER')
  call check(MPI_COMM_SELF%MPI_VAL /= MPI_COMM_WORLD, 'INTEGER /= comm')
  comms = [MPI_COMM_WORLD, MPI_COMM_NULL]
  call check(all((comms == MPI_COMM_NULL) .eqv. [.false., .true.]), 'elemental ==')

  ! MPI_SIZEOF (mpi_f08_types' specifics, assumed rank).
  call MPI_Sizeof(n, i)
  call check(i == 4, 'MPI_SIZEOF(INTEGER)')
  call MPI_Sizeof(d, i)
  call check(i == 8, 'MPI_SIZEOF(REAL(8) array)')
  call MPI_Sizeof(z, i, ierr)
  call check(i == 8 .and. ierr == 0, 'MPI_SIZEOF(COMPLEX)')
  call MPI_Sizeof(flag, i)
  call check(i == 4, 'MPI_SIZEOF(LOGICAL)')

  ! A large-count send and receive (MPICH 4.0's mpi_*_f08ts_large_).
  sbuf = [rank, 2 * rank, 3 * rank, 4 * rank]
  rbuf = -1
  big = 4
  call MPI_Sendrecv(sbuf, big, MPI_INTEGER, next, 5, rbuf, big, MPI_INTEGER, prev, 5, &
                    MPI_COMM_WORLD, st)
  call check(all(rbuf == [prev, 2 * prev, 3 * prev, 4 * prev]), 'large-count Sendrecv values')
  call MPI_Get_count(st, MPI_INTEGER, big)
  call check(big == 4, 'large-count MPI_Get_count')

  ! PMPI_ procedures (MPICH's pmpir_*), a buffer and no buffer.
  rbuf = -1
  call PMPI_Sendrecv(sbuf, 4, MPI_INTEGER, next, 6, rbuf, 4, MPI_INTEGER, prev, 6, &
                     MPI_COMM_WORLD, st, ierr)
  call check(ierr == MPI_SUCCESS .and. all(rbuf == [prev, 2 * prev, 3 * prev, 4 * prev]), 'PMPI_Sendrecv')
  call PMPI_Type_contiguous(2, MPI_INTEGER, dt, ierr)
  call PMPI_Type_commit(dt, ierr)
  call PMPI_Type_size(dt, n, ierr)
  call check(ierr == MPI_SUCCESS .and. n == 8, 'PMPI_Type_size')
  call PMPI_Type_free(dt, ierr)
  call check(dt == MPI_DATATYPE_NULL, 'PMPI_Type_free nulls the handle')

  ! Status conversions (mpi_f08_types' MPI_Status_f082f/f2f08).
  call MPI_Status_f082f(st, fstat, ierr)
  call check(ierr == 0 .and. fstat(MPI_SOURCE) == prev .and. fstat(MPI_TAG) == 6, &
             'MPI_Status_f082f')
  call MPI_Status_f2f08(fstat, st2)
  call check(st2%MPI_SOURCE == prev .and. st2%MPI_TAG == 6, 'MPI_Status_f2f08')
  call MPI_Get_count(st2, MPI_INTEGER, n)
  call check(n == 4, 'MPI_Get_count of a converted status')

  ! A keyval copied by MPI_COMM_DUP_FN (mpi_f08_callbacks) and one with
  ! the null functions.
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, extra)
  val = 4242 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  val = 0
  call MPI_Comm_get_attr(dup, key, val, flag)
  call check(flag .and. val == 4242 + rank, 'MPI_COMM_DUP_FN copied the attribute')
  call MPI_Comm_free(dup)
  call MPI_Comm_free_keyval(key)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, extra)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, key, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN copied nothing')
  call MPI_Comm_free(dup)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key)
  call MPI_Comm_free_keyval(key)

  ! MPI_UNWEIGHTED (mpi_f08_link_constants): a ring as a distributed graph.
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [prev], MPI_UNWEIGHTED, &
                                      1, [next], MPI_UNWEIGHTED, MPI_INFO_NULL, &
                                      .false., graph)
  call MPI_Dist_graph_neighbors_count(graph, i, n, flag)
  call check(i == 1 .and. n == 1 .and. .not. flag, 'MPI_UNWEIGHTED: unweighted graph')
  call MPI_Comm_free(graph)
  call check(graph == MPI_COMM_NULL, 'MPI_Comm_free nulls the handle')

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'mpich_f08_modules: ', nproc, ' ranks passed'
  call PMPI_Finalize()

contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,a)', 'FAIL: ', what
      error stop 1
    end if
  end subroutine

  include 'check_maps.inc'
end program
