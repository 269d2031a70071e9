! Point-to-point from fixed-form Fortran through mpif.h: send/recv with a
! status array (MPI_SOURCE, MPI_TAG, MPI_Get_count), MPI_STATUS_IGNORE,
! isend/irecv/waitall with MPI_STATUSES_IGNORE and with statuses, probe,
! sendrecv, LOGICAL results (MPI_Test's flag, MPI_Initialized), and the
! 1-based indices of MPI_WAITANY and MPI_WAITSOME.
      PROGRAM FP2P
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, NEXT, PREV, CNT, ERRS, TOTAL
      INTEGER STATUS(MPI_STATUS_SIZE)
      INTEGER STATS(MPI_STATUS_SIZE, 4), REQS(4), IDX, IDXS(4)
      INTEGER SBUF(10), RBUF(10), RB2(10)
      DOUBLE PRECISION DS(5), DR(5)
      LOGICAL FLAG
      ERRS = 0
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (FLAG) ERRS = ERRS + 1
      CALL MPI_INIT(IERR)
      IF (IERR .NE. MPI_SUCCESS) STOP 2
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (.NOT. FLAG) ERRS = ERRS + 1
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)
      DO I = 1, 10
         SBUF(I) = RANK * 100 + I
         RBUF(I) = -1
      END DO
!     Ring: a blocking send to the next rank (eager), a receive from the
!     previous one with a status.
      CALL MPI_ISEND(SBUF, 10, MPI_INTEGER, NEXT, 7, MPI_COMM_WORLD,
     &               REQS(1), IERR)
      CALL MPI_RECV(RBUF, 10, MPI_INTEGER, MPI_ANY_SOURCE, 7,
     &              MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_WAIT(REQS(1), MPI_STATUS_IGNORE, IERR)
      IF (REQS(1) .NE. MPI_REQUEST_NULL) ERRS = ERRS + 1
      IF (STATUS(MPI_SOURCE) .NE. PREV) ERRS = ERRS + 1
      IF (STATUS(MPI_TAG) .NE. 7) ERRS = ERRS + 1
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
      IF (CNT .NE. 10) ERRS = ERRS + 1
      DO I = 1, 10
         IF (RBUF(I) .NE. PREV * 100 + I) ERRS = ERRS + 1
      END DO
!     Nonblocking both ways, completed with statuses.
      DO I = 1, 5
         DS(I) = RANK + I * 0.5D0
      END DO
      CALL MPI_IRECV(DR, 5, MPI_DOUBLE_PRECISION, PREV, 8,
     &               MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_IRECV(RB2, 3, MPI_INTEGER, NEXT, 9, MPI_COMM_WORLD,
     &               REQS(2), IERR)
      CALL MPI_ISEND(DS, 5, MPI_DOUBLE_PRECISION, NEXT, 8,
     &               MPI_COMM_WORLD, REQS(3), IERR)
      CALL MPI_ISEND(SBUF, 3, MPI_INTEGER, PREV, 9, MPI_COMM_WORLD,
     &               REQS(4), IERR)
      CALL MPI_WAITALL(4, REQS, STATS, IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      IF (STATS(MPI_SOURCE, 1) .NE. PREV) ERRS = ERRS + 1
      IF (STATS(MPI_TAG, 2) .NE. 9) ERRS = ERRS + 1
      IF (STATS(MPI_SOURCE, 2) .NE. NEXT) ERRS = ERRS + 1
      CALL MPI_GET_COUNT(STATS(1, 1), MPI_DOUBLE_PRECISION, CNT, IERR)
      IF (CNT .NE. 5) ERRS = ERRS + 1
      DO I = 1, 5
         IF (DR(I) .NE. PREV + I * 0.5D0) ERRS = ERRS + 1
      END DO
      IF (RB2(3) .NE. NEXT * 100 + 3) ERRS = ERRS + 1
!     Waitall with MPI_STATUSES_IGNORE; MPI_Test's LOGICAL flag.
      CALL MPI_IRECV(RBUF, 1, MPI_INTEGER, RANK, 10, MPI_COMM_WORLD,
     &               REQS(1), IERR)
      CALL MPI_TEST(REQS(1), FLAG, STATUS, IERR)
      IF (FLAG) ERRS = ERRS + 1
      CALL MPI_ISEND(SBUF, 1, MPI_INTEGER, RANK, 10, MPI_COMM_WORLD,
     &               REQS(2), IERR)
      CALL MPI_WAITALL(2, REQS, MPI_STATUSES_IGNORE, IERR)
      IF (RBUF(1) .NE. SBUF(1)) ERRS = ERRS + 1
!     Completion indices count from 1: MPI_WAITANY and MPI_WAITSOME
!     on requests 2 and 3 of three (request 1 is MPI_REQUEST_NULL).
      REQS(1) = MPI_REQUEST_NULL
      CALL MPI_IRECV(RBUF, 1, MPI_INTEGER, RANK, 13, MPI_COMM_WORLD,
     &               REQS(2), IERR)
      CALL MPI_SEND(SBUF, 1, MPI_INTEGER, RANK, 13, MPI_COMM_WORLD,
     &              IERR)
      CALL MPI_WAITANY(3, REQS, IDX, STATUS, IERR)
      IF (IDX .NE. 2) ERRS = ERRS + 1
      IF (IDX .NE. 2) PRINT *, 'WAITANY index', IDX
      CALL MPI_WAITANY(3, REQS, IDX, STATUS, IERR)
      IF (IDX .NE. MPI_UNDEFINED) ERRS = ERRS + 1
      CALL MPI_IRECV(RBUF, 1, MPI_INTEGER, RANK, 14, MPI_COMM_WORLD,
     &               REQS(3), IERR)
      CALL MPI_SEND(SBUF, 1, MPI_INTEGER, RANK, 14, MPI_COMM_WORLD,
     &              IERR)
      CALL MPI_WAITSOME(3, REQS, CNT, IDXS, STATS, IERR)
      IF (CNT .NE. 1 .OR. IDXS(1) .NE. 3) ERRS = ERRS + 1
      IF (STATS(MPI_TAG, 1) .NE. 14) ERRS = ERRS + 1
!     Probe, then sendrecv.
      CALL MPI_SEND(SBUF, 4, MPI_INTEGER, RANK, 11, MPI_COMM_WORLD,
     &              IERR)
      CALL MPI_PROBE(RANK, 11, MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
      IF (CNT .NE. 4) ERRS = ERRS + 1
      CALL MPI_RECV(RBUF, 4, MPI_INTEGER, RANK, 11, MPI_COMM_WORLD,
     &              MPI_STATUS_IGNORE, IERR)
      CALL MPI_SENDRECV(SBUF, 2, MPI_INTEGER, NEXT, 12, RBUF, 2,
     &     MPI_INTEGER, PREV, 12, MPI_COMM_WORLD, STATUS, IERR)
      IF (RBUF(2) .NE. PREV * 100 + 2) ERRS = ERRS + 1
      IF (STATUS(MPI_SOURCE) .NE. PREV) ERRS = ERRS + 1
      CALL MPI_ALLREDUCE(ERRS, TOTAL, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. TOTAL .EQ. 0) PRINT *, 'test f_p2p ok'
      IF (ERRS .NE. 0) PRINT *, 'rank', RANK, ':', ERRS, 'errors'
      CALL MPI_FINALIZE(IERR)
      IF (TOTAL .NE. 0) STOP 1
      END
