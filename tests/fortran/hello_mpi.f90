! Hello from every rank (module mpi), for the FindMPI test.
program hello_mpi
  use mpi
  implicit none
  integer :: ierr, rank, np, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= np) stop 1
  print '(a,i0,a,i0)', 'hello from Fortran, rank ', rank, ' of ', np
  call MPI_Finalize(ierr)
end program
