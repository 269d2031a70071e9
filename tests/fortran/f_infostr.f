! MPI_INFO_GET_STRING through mpif.h: BUFLEN counts no terminator (in, the
! characters to write, 0 none; out, the value's length).
      program f_infostr
      implicit none
      include 'mpif.h'
      integer ierr, info, buflen, errs, rank
      logical flag
      character*10 val
      errs = 0
      call mpi_init(ierr)
      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
      call mpi_info_create(info, ierr)
      call mpi_info_set(info, 'key', 'abcdef', ierr)
      buflen = 0
      val = 'canary'
      call mpi_info_get_string(info, 'key', buflen, val, flag, ierr)
      if (.not. flag .or. buflen .ne. 6 .or. val .ne. 'canary') then
         print *, 'failed: buflen 0 gave ', buflen, ' ', val
         errs = errs + 1
      endif
      buflen = 3
      call mpi_info_get_string(info, 'key', buflen, val, flag, ierr)
      if (.not. flag .or. buflen .ne. 6 .or. val .ne. 'abc') then
         print *, 'failed: buflen 3 gave ', buflen, ' ', val
         errs = errs + 1
      endif
      buflen = 6
      call mpi_info_get_string(info, 'key', buflen, val, flag, ierr)
      if (.not. flag .or. buflen .ne. 6 .or. val .ne. 'abcdef') then
         print *, 'failed: buflen 6 gave ', buflen, ' ', val
         errs = errs + 1
      endif
      call mpi_info_free(info, ierr)
      call mpi_finalize(ierr)
      if (errs .eq. 0 .and. rank .eq. 0) print *, 'test f_infostr ok'
      if (errs .ne. 0) stop 1
      end
