! The parameterized types from Fortran (module mpi): MPI_TYPE_CREATE_F90_*
! gives, for the kinds SELECTED_INT_KIND / SELECTED_REAL_KIND pick, a type
! of that kind's size that sums values of that kind (REAL(10), x87's
! extended format, included); MPI_TYPE_GET_VALUE_INDEX, and the MPI-5.0
! ABI queries (.TRUE./.FALSE. as this compiler's, the INTEGER size).
program f_f90types
  use mpi
  implicit none
  integer, parameter :: i2 = selected_int_kind(4), i8 = selected_int_kind(15)
  integer, parameter :: r4 = selected_real_kind(6), r8 = selected_real_kind(13, 200)
  integer, parameter :: r10 = selected_real_kind(18), r16 = selected_real_kind(30)
  integer :: ierr, rank, np, t, t2, sz, errs, total, pair, finfo, vlen
  integer(kind=i2) :: s2, s2sum
  integer(kind=i8) :: s8, s8sum
  real(kind=r8) :: x8, x8sum
  real(kind=r10) :: x10, x10sum
  complex(kind=r4) :: c4, c4sum
  real(kind=r16) :: x16
  logical :: lt, lf, is_set, flag
  character(len=MPI_MAX_INFO_VAL) :: value

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  errs = 0

  call MPI_Type_create_f90_integer(4, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  if (sz /= storage_size(s2) / 8) call fail('INTEGER range 4 size', sz)
  s2 = int(rank + 1, i2)
  call MPI_Allreduce(s2, s2sum, 1, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (s2sum /= np * (np + 1) / 2) call fail('INTEGER(2) sum', int(s2sum))
  call MPI_Type_create_f90_integer(15, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  if (sz /= storage_size(s8) / 8) call fail('INTEGER range 15 size', sz)
  s8 = 3000000000_i8 * (rank + 1)
  call MPI_Allreduce(s8, s8sum, 1, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (s8sum /= 3000000000_i8 * (np * (np + 1) / 2)) call fail('INTEGER(8) sum', 0)

  call MPI_Type_create_f90_real(13, 200, t, ierr)
  call MPI_Type_create_f90_real(13, 200, t2, ierr)
  if (t /= t2) call fail('the same (p, r) twice: another handle', t2)
  call MPI_Type_size(t, sz, ierr)
  if (sz /= storage_size(x8) / 8) call fail('REAL(13, 200) size', sz)
  x8 = 0.25_r8 * (rank + 1)
  call MPI_Allreduce(x8, x8sum, 1, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (x8sum /= 0.25_r8 * (np * (np + 1) / 2)) call fail('REAL(8) sum', 0)

  call MPI_Type_create_f90_real(18, MPI_UNDEFINED, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  if (sz /= storage_size(x10) / 8) call fail('REAL(18) size', sz)
  x10 = 1.0_r10 / 3.0_r10
  call MPI_Allreduce(x10, x10sum, 1, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (abs(x10sum - np * (1.0_r10 / 3.0_r10)) > 10 * epsilon(x10)) &
      call fail('REAL(10) sum lost precision', 0)

  call MPI_Type_create_f90_real(30, MPI_UNDEFINED, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  if (sz /= storage_size(x16) / 8) call fail('REAL(30) size', sz)

  call MPI_Type_create_f90_complex(6, MPI_UNDEFINED, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  if (sz /= storage_size(c4) / 8) call fail('COMPLEX(6) size', sz)
  c4 = cmplx(1, rank, r4)
  call MPI_Allreduce(c4, c4sum, 1, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (c4sum /= cmplx(np, np * (np - 1) / 2, r4)) call fail('COMPLEX(4) sum', 0)

  ! No kind: MPI_ERR_ARG through the error handler we choose.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Type_create_f90_real(40, MPI_UNDEFINED, t, ierr)
  if (ierr == MPI_SUCCESS) call fail('REAL(40) has no kind', 0)
  call MPI_Error_class(ierr, sz, ierr)
  if (sz /= MPI_ERR_ARG) call fail('REAL(40): class', sz)

  call MPI_Type_get_value_index(MPI_REAL, MPI_REAL, pair, ierr)
  if (pair /= MPI_2REAL) call fail('value index of REAL, REAL', pair)
  call MPI_Type_get_value_index(MPI_REAL, MPI_INTEGER, pair, ierr)
  if (pair /= MPI_DATATYPE_NULL) call fail('value index of REAL, INTEGER', pair)

  call MPI_Abi_get_fortran_booleans(storage_size(lt) / 8, lt, lf, is_set, ierr)
  if (ierr /= MPI_SUCCESS .or. .not. is_set) call fail('booleans not set', ierr)
  if (.not. lt .or. lf) call fail('.TRUE./.FALSE. are not this compiler''s', 0)
  call MPI_Abi_get_fortran_info(finfo, ierr)
  vlen = len(value)
  call MPI_Info_get_string(finfo, 'mpi_integer_size', vlen, value, flag, ierr)
  if (.not. flag .or. trim(value) /= '4' .or. storage_size(ierr) /= 32) &
      call fail('mpi_integer_size', vlen)
  call MPI_Info_free(finfo, ierr)

  call MPI_Reduce(errs, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 'test f90types ok'
  call MPI_Finalize(ierr)
  if (errs /= 0) stop 1

contains

  subroutine fail(what, v)
    character(len=*), intent(in) :: what
    integer, intent(in) :: v
    print *, 'failed: ', what, v
    errs = errs + 1
  end subroutine
end program f_f90types
