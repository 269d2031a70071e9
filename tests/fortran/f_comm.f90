! Communicators, strings, error handlers and attributes through module mpi:
! split and dup; names set and read back (Fortran strings both ways:
! trailing blanks dropped going in, blank-padded coming out, cut at the
! Fortran length); info keys and values; MPI_Error_string; an error
! handler written in Fortran (called with the communicator and the code);
! keyvals with Fortran copy/delete callbacks (called on dup and free, with
! the extra state and the attribute value as integers), the predefined
! MPI_COMM_DUP_FN / MPI_COMM_NULL_COPY_FN, MPI_TAG_UB read as a value, a
! distributed graph with MPI_UNWEIGHTED, and a generalized request whose
! query/free/cancel callbacks are Fortran subroutines.
module f_comm_cb
  use mpi
  implicit none
  integer :: handler_calls = 0, handler_code = 0, handler_comm = MPI_COMM_NULL
  integer :: copies = 0, deletes = 0
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = 0, seen_extra = 0
  integer :: frees = 0, cancels = 0
  integer(kind=MPI_ADDRESS_KIND) :: query_extra = 0
contains
  ! Generalized request callbacks.
  subroutine g_query(extra_state, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierr
    query_extra = extra_state
    status(MPI_SOURCE) = 7
    status(MPI_TAG) = 8
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierr)
    call MPI_Status_set_cancelled(status, .false., ierr)
  end subroutine
  subroutine g_free(extra_state, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierr
    frees = frees + 1
    extra_state = extra_state - 1
    ierr = MPI_SUCCESS
  end subroutine
  subroutine g_cancel(extra_state, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierr
    if (.not. complete) cancels = cancels + 1
    ierr = MPI_SUCCESS
  end subroutine
  subroutine on_error(comm, code)
    integer :: comm, code
    handler_calls = handler_calls + 1
    handler_code = code
    handler_comm = comm
  end subroutine
  subroutine copy_plus_one(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    copies = copies + 1
    seen_extra = extra_state
    val_out = val_in + 1
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine
  subroutine delete_note(comm, keyval, val, extra_state, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    deletes = deletes + 1
    last_deleted = val
    ierr = MPI_SUCCESS
  end subroutine
end module

program f_comm
  use mpi
  use f_comm_cb
  implicit none
  integer :: ierr, rank, np, errs, total, half, sub, subrank, subsize, dup, dup2
  integer :: rlen, eh, info, keyval, keyval2, code, cls
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=5) :: short
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=40) :: val
  logical :: flag
  integer(kind=MPI_ADDRESS_KIND) :: attr, extra

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! Split into halves, keyed in reverse.
  half = merge(0, 1, rank < (np + 1) / 2)
  call MPI_Comm_split(MPI_COMM_WORLD, half, -rank, sub, ierr)
  call MPI_Comm_size(sub, subsize, ierr)
  call MPI_Comm_rank(sub, subrank, ierr)
  call check(subsize == merge((np + 1) / 2, np / 2, half == 0), 'split size')
  call check(subrank == subsize - 1 - merge(rank, rank - (np + 1) / 2, half == 0), &
             'split rank (reverse key)')

  ! Names: the predefined one, one set with trailing blanks, one cut short.
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, rlen, ierr)
  call check(name == 'MPI_COMM_WORLD' .and. rlen == 14, 'name of MPI_COMM_WORLD')
  call check(name(15:) == ' ', 'name blank-padded')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_set_name(dup, 'my dup   ', ierr)
  call MPI_Comm_get_name(dup, name, rlen, ierr)
  call check(trim(name) == 'my dup' .and. rlen == 6, 'name set from Fortran, trailing blanks dropped')
  call MPI_Comm_get_name(dup, short, rlen, ierr)
  call check(short == 'my du', 'name cut at the Fortran length')

  ! Info: a key and value in, the value out with its length.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'colour', 'blue ', ierr)
  call MPI_Info_get(info, 'colour', 40, val, flag, ierr)
  call check(flag .and. val == 'blue', 'info value read back')
  val = 'untouched'
  call MPI_Info_get(info, 'absent', 40, val, flag, ierr)
  call check(.not. flag .and. val == 'untouched', 'absent info key leaves the value alone')
  ! Info keys and values lose their leading blanks too.
  call MPI_Info_set(info, '  shade', '  red  ', ierr)
  call MPI_Info_get(info, 'shade', 40, val, flag, ierr)
  call check(flag .and. val == 'red', 'info key and value without their blanks')
  call MPI_Info_get_valuelen(info, 'colour', rlen, flag, ierr)
  call check(flag .and. rlen == 4, 'info valuelen')
  call MPI_Info_free(info, ierr)
  call check(info == MPI_INFO_NULL, 'info freed')

  ! A Fortran error handler: a send to a rank out of range calls it.
  call MPI_Comm_create_errhandler(on_error, eh, ierr)
  call MPI_Comm_set_errhandler(dup, eh, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, np + 5, 0, dup, code)
  call check(handler_calls == 1, 'Fortran error handler called once')
  call check(handler_comm == dup, 'handler got the communicator')
  call check(handler_code == code .and. code /= MPI_SUCCESS, 'handler got the code')
  call MPI_Error_class(code, cls, ierr)
  call check(cls == MPI_ERR_RANK, 'class of the bad rank')
  call MPI_Error_string(code, msg, rlen, ierr)
  call check(index(msg, 'MPI_Send') > 0 .and. rlen == len_trim(msg), 'error string')
  call MPI_Errhandler_free(eh, ierr)
  ! MPI_ERRORS_RETURN: the code comes back, no handler.
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(rank, -1, MPI_INTEGER, 0, 0, dup, code)
  call MPI_Error_class(code, cls, ierr)
  call check(cls == MPI_ERR_COUNT .and. handler_calls == 1, 'MPI_ERRORS_RETURN')

  ! Attributes with Fortran callbacks.
  extra = 4242
  call MPI_Comm_create_keyval(copy_plus_one, delete_note, keyval, extra, ierr)
  attr = 2_MPI_ADDRESS_KIND**40 + 7
  call MPI_Comm_set_attr(dup, keyval, attr, ierr)
  attr = 0
  call MPI_Comm_get_attr(dup, keyval, attr, flag, ierr)
  call check(flag .and. attr == 2_MPI_ADDRESS_KIND**40 + 7, 'attribute value read back')
  call MPI_Comm_dup(dup, dup2, ierr)
  call check(copies == 1 .and. seen_extra == 4242, 'copy callback ran with the extra state')
  call MPI_Comm_get_attr(dup2, keyval, attr, flag, ierr)
  call check(flag .and. attr == 2_MPI_ADDRESS_KIND**40 + 8, 'copied attribute is val_in + 1')
  call MPI_Comm_free(dup2, ierr)
  call check(deletes == 1 .and. last_deleted == 2_MPI_ADDRESS_KIND**40 + 8, &
             'delete callback on free')
  call check(dup2 == MPI_COMM_NULL, 'freed communicator is MPI_COMM_NULL')
  call MPI_Comm_delete_attr(dup, keyval, ierr)
  call check(deletes == 2, 'delete callback on delete_attr')
  call MPI_Comm_free_keyval(keyval, ierr)
  ! The predefined callbacks: DUP_FN copies, NULL_COPY_FN does not.
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval2, extra, ierr)
  attr = 11
  call MPI_Comm_set_attr(dup, keyval, attr, ierr)
  call MPI_Comm_set_attr(dup, keyval2, attr, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call MPI_Comm_get_attr(dup2, keyval, attr, flag, ierr)
  call check(flag .and. attr == 11, 'MPI_COMM_DUP_FN copies')
  call MPI_Comm_get_attr(dup2, keyval2, attr, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
  call MPI_Comm_free(dup2, ierr)
  call MPI_Comm_free_keyval(keyval, ierr)
  call MPI_Comm_free_keyval(keyval2, ierr)
  ! A predefined attribute: the value, not a pointer.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, attr, flag, ierr)
  call check(flag .and. attr >= 32767 .and. attr < 2_MPI_ADDRESS_KIND**31, 'MPI_TAG_UB value')

  ! A distributed graph without weights (MPI_UNWEIGHTED from Fortran): a ring.
  block
    integer :: ring, indeg, outdeg, srcs(1), dsts(1)
    logical :: weighted
    srcs(1) = mod(rank + np - 1, np)
    dsts(1) = mod(rank + 1, np)
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
    call check(ierr == MPI_SUCCESS, 'dist graph with MPI_UNWEIGHTED')
    call MPI_Dist_graph_neighbors_count(ring, indeg, outdeg, weighted, ierr)
    call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, 'unweighted ring')
    call MPI_Comm_free(ring, ierr)
  end block

  ! A generalized request with Fortran callbacks.
  block
    integer :: greq, gstatus(MPI_STATUS_SIZE), cnt
    extra = 99
    call MPI_Grequest_start(g_query, g_free, g_cancel, extra, greq, ierr)
    call MPI_Cancel(greq, ierr)
    call check(cancels == 1, 'cancel callback with complete = .false.')
    call MPI_Grequest_complete(greq, ierr)
    call MPI_Wait(greq, gstatus, ierr)
    call check(ierr == MPI_SUCCESS .and. greq == MPI_REQUEST_NULL, 'generalized request done')
    call check(query_extra == 99 .and. frees == 1, 'query and free callbacks ran')
    call check(extra == 98, 'the free callback updated the program''s extra state (as MPICH)')
    call MPI_Get_count(gstatus, MPI_INTEGER, cnt, ierr)
    call check(gstatus(MPI_SOURCE) == 7 .and. gstatus(MPI_TAG) == 8 .and. cnt == 3, &
               'status filled by the Fortran query callback')
  end block

  ! Compare: congruent, then ident.
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, cls, ierr)
  call check(cls == MPI_CONGRUENT, 'dup is congruent')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(sub, ierr)

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 'test f_comm ok'
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
