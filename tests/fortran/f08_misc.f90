! module mpi_f08 beyond buffers: strings in and out (names, info values),
! LOGICAL flags, TYPE(C_PTR) (MPI_Alloc_mem, MPI_Buffer_detach), functions
! (MPI_Wtime), large-count outputs (MPI_Type_size_c through the generic
! MPI_Type_size, MPI_Type_get_extent_c by its own name: its kinds equal the
! small form's), completion indices from 1 (MPI_Waitany), and the
! predefined attribute callbacks of mpi_f08.
program f08_misc
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated
  implicit none
  integer :: rank, np, errs, rlen, idx, keyval, i, sz, ierr
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=20) :: val
  logical :: flag
  type(MPI_Info) :: info
  type(MPI_Comm) :: dup, dup2
  type(MPI_Datatype) :: vec
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st
  type(c_ptr) :: mem, detached
  integer, pointer :: block(:)
  integer(kind=MPI_COUNT_KIND) :: csize, clb, cext
  integer(kind=MPI_ADDRESS_KIND) :: lb, ext, aval
  integer :: m(3, 4), col(4)
  integer, target :: bbuf(2000)
  double precision :: t

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)

  ! Strings: a name in and out (trailing blanks dropped, then padded).
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_name(dup, 'f08 dup   ')
  name = 'x'
  call MPI_Comm_get_name(dup, name, rlen)
  if (name /= 'f08 dup' .or. rlen /= 7) call fail('comm name')
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'key', 'value')
  call MPI_Info_get(info, 'key', 20, val, flag)
  if (.not. flag .or. val /= 'value') call fail('info get')
  call MPI_Info_get(info, 'nokey', 20, val, flag)
  if (flag) call fail('info get of a missing key')
  call MPI_Info_free(info)
  if (info /= MPI_INFO_NULL) call fail('info free')

  ! TYPE(C_PTR): memory from MPI_Alloc_mem, a buffer detached.
  call MPI_Alloc_mem(40_MPI_ADDRESS_KIND, MPI_INFO_NULL, mem)
  call c_f_pointer(mem, block, [10])
  block = [(i, i = 1, 10)]
  if (sum(block) /= 55) call fail('alloc_mem')
  call MPI_Free_mem(block)
  call MPI_Buffer_attach(bbuf, 8000)
  call MPI_Bsend(rank, 1, MPI_INTEGER, rank, 1, MPI_COMM_WORLD)
  call MPI_Recv(i, 1, MPI_INTEGER, rank, 1, MPI_COMM_WORLD, st)
  call MPI_Buffer_detach(detached, sz)
  if (sz /= 8000 .or. i /= rank) call fail('bsend / buffer_detach')
  call c_f_pointer(detached, block, [1])
  if (.not. c_associated(detached) .or. .not. associated(block, bbuf(1:1))) &
    call fail('buffer_detach address')

  ! A function, and the large-count forms.
  t = MPI_Wtime()
  if (t <= 0) call fail('wtime')
  call MPI_Type_vector(4, 1, 3, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  call MPI_Type_size(vec, csize)
  call MPI_Type_size(vec, sz)
  if (csize /= 16 .or. sz /= 16) call fail('type_size (_c)')
  call MPI_Type_get_extent(vec, lb, ext)
  call MPI_Type_get_extent_c(vec, clb, cext)
  if (ext /= 40 .or. cext /= 40 .or. lb /= 0 .or. clb /= 0) call fail('type_get_extent (_c)')

  ! A derived datatype on a whole array: the second row of m.
  m = reshape([(rank * 100 + i, i = 1, 12)], [3, 4])
  call MPI_Irecv(col, 4, MPI_INTEGER, rank, 2, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(m(2, 1), 1, vec, rank, 2, MPI_COMM_WORLD, reqs(1))
  call MPI_Waitany(2, reqs, idx, st)
  if (idx /= 1 .and. idx /= 2) call fail('waitany index from 1')
  call MPI_Waitany(2, reqs, idx, st)
  call MPI_Waitany(2, reqs, idx, st)
  if (idx /= MPI_UNDEFINED) call fail('waitany of no active request')
  if (any(col /= [(rank * 100 + 2 + 3 * i, i = 0, 3)])) call fail('vector of a row')
  call MPI_Type_free(vec)
  call MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, flag, st)
  if (flag) call fail('iprobe of nothing')

  ! The predefined attribute callbacks as mpi_f08 procedures.
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, keyval, 99_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup, dup2)
  call MPI_Comm_get_attr(dup2, keyval, aval, flag)
  if (ierr /= MPI_SUCCESS .or. .not. flag .or. aval /= 99) call fail('MPI_COMM_DUP_FN')
  call MPI_Comm_free(dup2)
  call MPI_Comm_free(dup)
  call MPI_Comm_free_keyval(keyval)

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. errs == 0) print '(a)', 'test f08_misc ok'
  call MPI_Finalize()
  if (errs /= 0) stop 1
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ' failed: ', what
    errs = errs + 1
  end subroutine
end program
