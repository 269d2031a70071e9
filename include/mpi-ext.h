/* Tern's MPI extensions, where Open MPI programs look for them. Tern
 * implements User-Level Failure Mitigation (ULFM: MPIX_Comm_revoke,
 * MPIX_Comm_shrink, MPIX_Comm_agree..., and the ULFM specification's
 * MPIX_Win_revoke, MPIX_Win_get_failed, MPIX_File_revoke), declared in
 * mpi.h with MPICH's and Open MPI's signatures; this header says so in
 * Open MPI's words. */
#ifndef TERN_MPI_EXT_H
#define TERN_MPI_EXT_H

#include <mpi.h>

/* Open MPI's test for its fault-tolerance extension. */
#define OMPI_HAVE_MPI_EXT_FTMPI 1
#define OMPI_HAVE_MPI_EXT 1
/* Open MPI 5's words for its newer ULFM procedures, which Tern has. */
#define OMPI_HAVE_MPIX_COMM_GET_FAILED 1
#define OMPI_HAVE_MPIX_COMM_ACK_FAILED 1
#define OMPI_HAVE_MPIX_COMM_ISHRINK 1
/* The ULFM level the interface follows (its MPIX_Comm_get_failed and
 * MPIX_Comm_ack_failed are ULFM 2's, with the older _failure_ack too). */
#define MPIX_ULFM 1
#define MPIX_ULFM_VERSION 2

#endif
