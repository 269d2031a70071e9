/* Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): a
 * request the program completes itself, with three callbacks the
 * completion procedures call (mpi_request.c): query_fn fills the status
 * when Wait/Test complete the request or Request_get_status finds it
 * complete; free_fn runs after query_fn there, or when both
 * MPI_Request_free and MPI_Grequest_complete have been called (in the
 * later one); cancel_fn runs in MPI_Cancel. Their return values are MPI
 * codes handed back as they are: a Wait or Test returns free_fn's code if
 * it failed, else query_fn's (MPI-4.1 13.2). Nothing in progress completes
 * a generalized request: a Wait on one the program never completes waits,
 * as it would for a receive no message matches. */
#include "mpi/mpi_grequest.h"
#include "mpi/mpi_errors.h"

#include <stdlib.h>

typedef struct {
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
} greq_t;

static void greq_release(tern_req_t *req)
{
    free(req->ext);
    req->ext = NULL;
}

tern_status_t tern_mpi_grequest_start(MPI_Grequest_query_function *query_fn,
                                      MPI_Grequest_free_function *free_fn,
                                      MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                                      tern_req_t **req_p)
{
    greq_t *g = malloc(sizeof *g);
    tern_req_t *req = g ? tern_req_alloc(TERN_REQ_GREQUEST) : NULL;
    if (!req) {
        free(g);
        return TERN_ERR_NOMEM;
    }
    *g = (greq_t){query_fn, free_fn, cancel_fn, extra_state};
    req->comm = MPI_COMM_NULL;
    req->ext = g;
    req->release_fn = greq_release;
    *req_p = req;
    return TERN_OK;
}

/* A callback's code through the handler (MPI_COMM_WORLD's: the request
 * belongs to no communicator). */
static int raise_code(int err)
{
    return err == MPI_SUCCESS ? err : tern_mpi_handle_code(MPI_COMM_NULL, err);
}

/* free_fn, then the request goes; its code. */
static int free_request(tern_req_t *req)
{
    const greq_t *g = req->ext;
    int err = g->free_fn(g->extra_state);
    tern_req_release(req);
    return err;
}

int tern_mpi_grequest_complete(const char *func, MPI_Request request)
{
    tern_req_t *req = tern_req_lookup(request);
    if (!req || req->kind != TERN_REQ_GREQUEST)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, func,
                              "request 0x%x is not a generalized request", (unsigned)request);
    if (req->complete)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, func,
                              "generalized request 0x%x is complete already", (unsigned)request);
    if (req->freed)
        return raise_code(free_request(req)); /* MPI_Request_free came first */
    req->complete = 1;
    return MPI_SUCCESS;
}

/* query_fn into status (a scratch one for MPI_STATUS_IGNORE), whose
 * fields start empty, as for any completed request. */
static int query(const greq_t *g, MPI_Status *status)
{
    MPI_Status scratch;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &scratch : status;
    tern_status_set(s, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    return g->query_fn(g->extra_state, s);
}

int tern_mpi_grequest_finish(tern_req_t *req, MPI_Status *status, int raise)
{
    int err = query(req->ext, status);
    int ferr = free_request(req);
    if (ferr != MPI_SUCCESS)
        err = ferr;
    if (err != MPI_SUCCESS && !raise && status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = err;
    return raise ? raise_code(err) : err;
}

int tern_mpi_grequest_get_status(tern_req_t *req, MPI_Status *status)
{
    return raise_code(query(req->ext, status));
}

int tern_mpi_grequest_free(tern_req_t *req)
{
    if (!req->complete) {
        req->freed = 1; /* free_fn runs in MPI_Grequest_complete */
        return MPI_SUCCESS;
    }
    return raise_code(free_request(req));
}

int tern_mpi_grequest_cancel(tern_req_t *req)
{
    const greq_t *g = req->ext;
    return raise_code(g->cancel_fn(g->extra_state, req->complete ? 1 : 0));
}
