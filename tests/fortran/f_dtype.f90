! Derived datatypes through module mpi: a vector (every other element of
! a column-major array), a struct built from MPI_Get_address displacements
! sent from MPI_BOTTOM, type queries (size, extent, name) with
! INTEGER(KIND=MPI_ADDRESS_KIND) results, MPI_Type_match_size, MPI_Sizeof,
! and MPI_Aint_diff / MPI_Aint_add / PMPI_Wtime as functions.
program f_dtype
  use mpi
  implicit none
  integer :: ierr, rank, np, errs, total, vec, st, sz, i, r8, next, prev, rlen
  integer :: a(4, 3), b(4, 3)
  integer :: ival, ival_in
  double precision :: dval, dval_in
  character(len=6) :: cval, cval_in
  integer :: blens(3), types(3)
  integer(kind=MPI_ADDRESS_KIND) :: disps(3), lb, extent, base
  character(len=MPI_MAX_OBJECT_NAME) :: name

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  ! Rows 1 and 3 of every column: 6 blocks of 1 integer, stride 2.
  call MPI_Type_vector(6, 1, 2, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Type_size(vec, sz, ierr)
  call check(sz == 24, 'vector size')
  call MPI_Type_get_extent(vec, lb, extent, ierr)
  call check(lb == 0 .and. extent == 44, 'vector extent')
  a = reshape([(rank * 100 + i, i = 1, 12)], [4, 3])
  b = -1
  call MPI_Sendrecv(a, 1, vec, next, 1, b, 1, vec, prev, 1, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call check(all(b(1:4:2, :) == prev * 100 + reshape([1, 3, 5, 7, 9, 11], [2, 3])), &
             'odd rows carry the sender''s values')
  call check(all(b(2:4:2, :) == -1), 'even rows untouched')
  call MPI_Type_free(vec, ierr)
  call check(vec == MPI_DATATYPE_NULL, 'freed type is MPI_DATATYPE_NULL')

  ! A struct of three variables at their absolute addresses, from MPI_BOTTOM.
  ival = rank + 1
  dval = rank * 1.5d0
  cval = 'rank' // achar(iachar('0') + mod(rank, 10)) // '!'
  call MPI_Get_address(ival_in, disps(1), ierr)
  call MPI_Get_address(dval_in, disps(2), ierr)
  call MPI_Get_address(cval_in, disps(3), ierr)
  blens = [1, 1, 6]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER]
  call MPI_Type_create_struct(3, blens, disps, types, st, ierr)
  call MPI_Type_commit(st, ierr)
  call MPI_Type_size(st, sz, ierr)
  call check(sz == 4 + 8 + 6, 'struct size')
  ! Send from the variables (addresses taken again), receive at MPI_BOTTOM.
  call MPI_Get_address(ival, base, ierr)
  call check(MPI_Aint_diff(disps(1), base) == disps(1) - base, 'MPI_Aint_diff')
  call check(MPI_Aint_add(base, 8_MPI_ADDRESS_KIND) == base + 8, 'MPI_Aint_add')
  ival_in = -1
  block
    integer :: sendst, req
    integer(kind=MPI_ADDRESS_KIND) :: sd(3)
    call MPI_Get_address(ival, sd(1), ierr)
    call MPI_Get_address(dval, sd(2), ierr)
    call MPI_Get_address(cval, sd(3), ierr)
    call MPI_Type_create_struct(3, blens, sd, types, sendst, ierr)
    call MPI_Type_commit(sendst, ierr)
    call MPI_Irecv(MPI_BOTTOM, 1, st, prev, 3, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(MPI_BOTTOM, 1, sendst, next, 3, MPI_COMM_WORLD, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call MPI_Type_free(sendst, ierr)
  end block
  call check(ival_in == prev + 1, 'struct integer member')
  call check(dval_in == prev * 1.5d0, 'struct double member')
  call check(cval_in == 'rank' // achar(iachar('0') + mod(prev, 10)) // '!', &
             'struct character member')
  call MPI_Type_free(st, ierr)

  ! Names and sized types.
  call MPI_Type_get_name(MPI_DOUBLE_PRECISION, name, rlen, ierr)
  call check(name == 'MPI_DOUBLE_PRECISION', 'name of MPI_DOUBLE_PRECISION')
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, r8, ierr)
  call check(r8 == MPI_REAL8, 'match_size(REAL, 8)')
  call MPI_Type_size(MPI_INTEGER2, sz, ierr)
  call check(sz == 2, 'size of MPI_INTEGER2')
  ! MPI_SIZEOF of scalars and arrays of several kinds; PMPI_WTIME.
  block
    integer(kind=2) :: i2(5)
    complex(kind=8) :: z
    call MPI_Sizeof(dval, sz, ierr)
    call check(sz == 8 .and. ierr == MPI_SUCCESS, 'MPI_Sizeof of a double')
    call MPI_Sizeof(i2, sz, ierr)
    call check(sz == 2, 'MPI_Sizeof of an INTEGER(2) array')
    call MPI_Sizeof(z, sz, ierr)
    call check(sz == 16, 'MPI_Sizeof of a COMPLEX(8)')
    call MPI_Sizeof(cval, sz, ierr)
    call check(sz == 6, 'MPI_Sizeof of a CHARACTER(6)')
    call check(PMPI_Wtime() > 0d0 .and. MPI_Wtick() > 0d0, 'PMPI_Wtime and MPI_Wtick')
  end block

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 'test f_dtype ok'
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
