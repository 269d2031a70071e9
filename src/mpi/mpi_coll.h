/* The argument checks of the collectives that need more than one rule per
 * parameter (roots, MPI_IN_PLACE, intercommunicators, counts per rank, ops
 * against datatypes): called by the generated entry points
 * (src/mpi/api/coll.toml, check_call) after the communicator, info and
 * request checks. One function serves a collective's blocking,
 * nonblocking and persistent forms. Each returns MPI_SUCCESS or the raised
 * error's code. */
#ifndef TERN_MPI_COLL_H
#define TERN_MPI_COLL_H

#include "core/datatype/dtype_nums.h"
#include "mpi/mpi_checks.h"

int tern_check_bcast(const char *func, tern_comm_t *c, const void *buf, MPI_Count count,
                     MPI_Datatype dt, int root);
int tern_check_gather(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                      MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                      int root);
int tern_check_gatherv(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                       MPI_Datatype stype, const void *rbuf, tern_nums_t rcounts,
                       tern_nums_t displs, MPI_Datatype rtype, int root);
int tern_check_scatter(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                       MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                       int root);
int tern_check_scatterv(const char *func, tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                        tern_nums_t displs, MPI_Datatype stype, const void *rbuf, MPI_Count rcount,
                        MPI_Datatype rtype, int root);
int tern_check_allgather(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                         MPI_Datatype stype, const void *rbuf, MPI_Count rcount,
                         MPI_Datatype rtype);
int tern_check_allgatherv(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                          MPI_Datatype stype, const void *rbuf, tern_nums_t rcounts,
                          tern_nums_t displs, MPI_Datatype rtype);
int tern_check_alltoall(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype);
int tern_check_alltoallv(const char *func, tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                         tern_nums_t sdispls, MPI_Datatype stype, const void *rbuf,
                         tern_nums_t rcounts, tern_nums_t rdispls, MPI_Datatype rtype);
int tern_check_alltoallw(const char *func, tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                         tern_nums_t sdispls, const MPI_Datatype *stypes, const void *rbuf,
                         tern_nums_t rcounts, tern_nums_t rdispls, const MPI_Datatype *rtypes);
int tern_check_reduce(const char *func, tern_comm_t *c, const void *sbuf, const void *rbuf,
                      MPI_Count count, MPI_Datatype dt, MPI_Op op, int root);
int tern_check_allreduce(const char *func, tern_comm_t *c, const void *sbuf, const void *rbuf,
                         MPI_Count count, MPI_Datatype dt, MPI_Op op);
int tern_check_reduce_scatter(const char *func, tern_comm_t *c, const void *sbuf,
                              const void *rbuf, tern_nums_t rcounts, MPI_Datatype dt, MPI_Op op);
int tern_check_reduce_scatter_block(const char *func, tern_comm_t *c, const void *sbuf,
                                    const void *rbuf, MPI_Count rcount, MPI_Datatype dt, MPI_Op op);
/* Scan and exscan: intracommunicators only. */
int tern_check_scan(const char *func, tern_comm_t *c, const void *sbuf, const void *rbuf,
                    MPI_Count count, MPI_Datatype dt, MPI_Op op);
/* MPI_Reduce_local: no communicator (errors go to MPI_COMM_WORLD's handler). */
int tern_check_reduce_local(const char *func, const void *inbuf, const void *inoutbuf,
                            MPI_Count count, MPI_Datatype dt, MPI_Op op);

#endif
