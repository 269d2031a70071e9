! Must not compile: module mpi's explicit interface of MPI_Send has seven
! arguments (the test expects mpifort to fail and name MPI_Send's ierror).
program f_wrong_args
  use mpi
  implicit none
  integer :: buf(4), ierr
  call MPI_Init(ierr)
  call MPI_Send(buf, 4, MPI_INTEGER, 0, 0, MPI_COMM_WORLD)
  call MPI_Finalize(ierr)
end program
