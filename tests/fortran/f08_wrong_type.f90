! mpi_f08's explicit interfaces: an INTEGER where TYPE(MPI_Comm) is
! required does not compile (tests/fortran/expect_compile_error.sh also
! compiles the program with the call fixed).
program f08_wrong_type
  use mpi_f08
  implicit none
  integer :: rank, ierr
  call MPI_Init(ierr)
  call MPI_Comm_rank(0, rank, ierr)
  call MPI_Finalize(ierr)
end program
