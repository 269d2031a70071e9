! Built with Debian's mpifort.mpich and `use mpi_f08` (MPICH 4.0's module:
! the specific procedures mpi_recv_f08ts_... and MPICH's f08 sentinels,
! MPIR_F08_MPI_STATUS_IGNORE_OBJ and MPIR_F08_MPI_IN_PLACE) and run on
! Tern's libmpichfort.so.12 and libmpich.so.12 (docs/design.md, "The MPICH
! ABI face"). Each check names what it proves; a failed one ends the job
! with error stop. Arguments: the directory of Tern's libraries (resolved),
! a scratch directory.
program mpich_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, nproc, next, prev, i, n, cls
  integer :: sbuf(3), rbuf(3), ibuf(4), tbuf(6)
  type(MPI_Status) :: st, sts(2)
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: three
  type(MPI_Comm) :: dup
  character(len=1024) :: libdir

  call get_command_argument(1, libdir)
  call MPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Init')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  call check_maps()
  next = mod(rank + 1, nproc)
  prev = mod(rank + nproc - 1, nproc)

  ! Point-to-point around a ring: the status's fields and count.
  sbuf = [rank, 10 * rank, 100 * rank]
  rbuf = -1
  call MPI_Sendrecv(sbuf, 3, MPI_INTEGER, next, 7, rbuf, 3, MPI_INTEGER, &
                    MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Sendrecv')
  call check(st%MPI_SOURCE == prev .and. st%MPI_TAG == 7, 'status source and tag')
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check(n == 3, 'MPI_Get_count')
  call check(all(rbuf == [prev, 10 * prev, 100 * prev]), 'received values')

  ! Nonblocking requests; MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE.
  rbuf = -1
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, prev, 8, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 3, MPI_INTEGER, next, 8, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(all(rbuf == [prev, 10 * prev, 100 * prev]), 'Isend/Irecv values')
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, prev, 9, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 3, MPI_INTEGER, next, 9, MPI_COMM_WORLD, reqs(2))
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
  call MPI_Waitall(2, reqs, sts)
  call check(sts(1)%MPI_SOURCE == prev .and. sts(1)%MPI_TAG == 9, 'Waitall statuses')

  ! A collective in place.
  ibuf = [rank, 1, 2, 3]
  call MPI_Allreduce(MPI_IN_PLACE, ibuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(all(ibuf == [nproc * (nproc - 1) / 2, nproc, 2 * nproc, 3 * nproc]), &
             'MPI_Allreduce with MPI_IN_PLACE')

  ! A derived type broadcast from the last rank.
  call MPI_Type_contiguous(3, MPI_INTEGER, three)
  call MPI_Type_commit(three)
  call MPI_Type_size(three, n)
  call check(n == 12, 'MPI_Type_size')
  tbuf = 0
  if (rank == nproc - 1) tbuf = [(i, i = 1, 6)]
  call MPI_Bcast(tbuf, 2, three, nproc - 1, MPI_COMM_WORLD)
  call check(all(tbuf == [(i, i = 1, 6)]), 'MPI_Bcast of a derived type')
  call MPI_Type_free(three)

  ! Errors returned on a duplicate of MPI_COMM_WORLD.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Send(sbuf, 1, MPI_INTEGER, nproc + 3, 0, dup, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_RANK, 'MPI_ERR_RANK returned')
  call MPI_Comm_free(dup)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'mpich_f08: ', nproc, ' ranks passed'
  call MPI_Finalize()

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
