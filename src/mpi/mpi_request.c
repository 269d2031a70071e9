/* Completion: wait, test and their any/all/some forms, cancel, free,
 * persistent start, status queries, called by their generated entry points
 * (src/mpi/api/pt2pt.toml) once the generic checks passed. They stay in the
 * MPI layer and return MPI codes themselves because completion is where
 * error codes are made: a status carries an MPI code, and multi-request
 * calls answer MPI_ERR_IN_STATUS. */
#include "mpi/mpi_checks.h"
#include "mpi/mpi_errors.h"
#include "mpi/mpi_grequest.h"
#include "mpi/mpi_p2p.h"
#include "core/comm/ulfm.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"
#include "core/pt2pt/send_cancel.h"

#include <limits.h>

/* Classification of one entry of a request array. */
enum { REQ_NULL, REQ_INACTIVE, REQ_LIVE, REQ_BAD };

/* libmpi_abi's copy of this layer (TERN_ABI_NATIVE, docs/design.md "The
 * standard ABI") is handed MPI_Wait's, MPI_Test's, MPI_Request_free's and
 * MPI_Start's request as the ABI's own handle, in place: libtern's int is
 * its low half, the high half zero. There the ABI's MPI_REQUEST_NULL
 * (0x180, no handle of libtern's) is a null request too, found where a
 * lookup fails, and a request released here becomes that null, so the ABI
 * layer converts the handle neither way; a request array comes converted
 * into ints, and the ABI layer takes 0x180 back from it as its null. */
#ifdef TERN_ABI_NATIVE
#define ABI_REQUEST_NULL ((MPI_Request)0x180)
#define REQUEST_NULL_OUT ABI_REQUEST_NULL
#else
#define REQUEST_NULL_OUT MPI_REQUEST_NULL
#endif

static int classify(MPI_Request h, tern_req_t **req_p)
{
    *req_p = NULL;
    if (h == MPI_REQUEST_NULL)
        return REQ_NULL;
    tern_req_t *r = tern_req_lookup(h);
    if (!r) {
#ifdef TERN_ABI_NATIVE
        if (h == ABI_REQUEST_NULL)
            return REQ_NULL;
#endif
        return REQ_BAD;
    }
    *req_p = r;
    if (r->persistent && !r->active)
        return REQ_INACTIVE;
    return REQ_LIVE;
}

static void empty_status(MPI_Status *status)
{
    tern_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
}

static int bad_request(const char *func, MPI_Request h)
{
    return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, func, "invalid request handle 0x%x",
                          (unsigned)h);
}

/* Completes a finished request for the user: status, error, release. The
 * error is returned as a code, raised through the handler only when
 * `raise` is set (multi-request calls report through statuses). */
static int finish(const char *func, MPI_Request *h, tern_req_t *req, MPI_Status *status, int raise)
{
    if (req->kind == TERN_REQ_GREQUEST) {
        *h = REQUEST_NULL_OUT;
        return tern_mpi_grequest_finish(req, status, raise);
    }
    /* Only the multi-request calls write MPI_ERROR (MPI 3.2.5). */
    if (!raise && status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = MPI_SUCCESS;
    tern_req_status(req, status);
    int err = MPI_SUCCESS;
    if (req->error != TERN_OK) {
        if (raise) {
            err = tern_mpi_request_error(func, req);
        } else {
            MPI_Comm comm = req->comm;
            tern_comm_t *c = tern_comm_lookup(comm);
            /* Build the code without invoking a returning handler twice. */
            MPI_Errhandler saved = c ? c->errhandler : MPI_ERRORS_RETURN;
            if (c && saved != MPI_ERRORS_ARE_FATAL && saved != MPI_ERRORS_ABORT)
                c->errhandler = MPI_ERRORS_RETURN;
            err = tern_mpi_request_error(func, req);
            if (c)
                c->errhandler = saved;
        }
        if (!raise && status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = err;
    }
    if (req->persistent) {
        req->active = 0;
    } else {
        tern_req_release(req);
        *h = REQUEST_NULL_OUT;
    }
    return err;
}

/* ULFM: a wildcard receive that a failure not acknowledged leaves
 * pending (MPIX_ERR_PROC_FAILED_PENDING). */
static int anysource_pending(tern_req_t *r)
{
    return __builtin_expect(r->kind == TERN_REQ_RECV && r->peer == MPI_ANY_SOURCE, 0) &&
           tern_ulfm_anysource_pending(r);
}

int tern_mpi_wait(const char *func, MPI_Request *request, MPI_Status *status)
{
    tern_req_t *req;
    switch (classify(*request, &req)) {
    case REQ_BAD:
        return bad_request(func, *request);
    case REQ_NULL:
    case REQ_INACTIVE:
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!req->complete) {
        if (__builtin_expect(req->kind == TERN_REQ_RECV && req->peer == MPI_ANY_SOURCE, 0)) {
            /* ULFM: a failure not acknowledged stops the wait; the
             * receive stays pending (MPIX_ERR_PROC_FAILED_PENDING). */
            tern_status_t st = tern_ulfm_wait_anysource(req, 0);
            if (st != TERN_OK)
                return tern_mpi_result((int)req->comm, func, st);
        } else {
            tern_progress_wait(&req->complete);
        }
    }
    return finish(func, request, req, status, 1);
}

int tern_mpi_test(const char *func, MPI_Request *request, int *flag, MPI_Status *status)
{
    tern_req_t *req;
    switch (classify(*request, &req)) {
    case REQ_BAD:
        return bad_request(func, *request);
    case REQ_NULL:
    case REQ_INACTIVE:
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!req->complete)
        tern_progress();
    *flag = req->complete;
    if (!*flag) {
        tern_progress_test_missed();
        if (anysource_pending(req))
            return tern_mpi_result((int)req->comm, func,
                                   tern_status_detail(TERN_ERR_PROC_FAILED_PENDING,
                                                      "a member of the communicator failed and "
                                                      "is not acknowledged; the receive stays "
                                                      "pending"));
        return MPI_SUCCESS;
    }
    return finish(func, request, req, status, 1);
}

/* Validates the requests of an array (count and the array itself are
 * checked by the entry point); *n_active_p: how many are live. */
static int check_array(const char *func, int count, MPI_Request reqs[], int *n_active_p)
{
    int n = 0;
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        int k = classify(reqs[i], &r);
        if (k == REQ_BAD)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, func,
                                  "array_of_requests[%d] = 0x%x is not a valid request", i,
                                  (unsigned)reqs[i]);
        n += k == REQ_LIVE;
    }
    *n_active_p = n;
    return MPI_SUCCESS;
}

static MPI_Status *status_at(MPI_Status *statuses, int i)
{
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

/* Raised once for a multi-request call; the return value is the class
 * itself, as programs compare it with MPI_ERR_IN_STATUS directly. */
static int in_status_error(const char *func)
{
    tern_mpi_error(MPI_COMM_NULL, MPI_ERR_IN_STATUS, func,
                   "one or more requests failed; see the MPI_ERROR field of each status");
    return MPI_ERR_IN_STATUS;
}

/* Completes every finished request of an all/some call; returns
 * MPI_ERR_IN_STATUS when one failed. */
static int finish_many(const char *func, int count, MPI_Request reqs[], MPI_Status statuses[],
                       int all)
{
    int any_error = 0;
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) != REQ_LIVE) {
            if (all)
                empty_status(status_at(statuses, i));
            continue;
        }
        if (finish(func, &reqs[i], r, status_at(statuses, i), 0) != MPI_SUCCESS)
            any_error = 1;
    }
    return any_error ? in_status_error(func) : MPI_SUCCESS;
}

int tern_mpi_waitall(const char *func, int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int n = 0, err = check_array(func, count, reqs, &n);
    if (err)
        return err;
    /* Each request is finished as soon as it completes: one handle lookup
     * per request after the checks, not two. */
    int any_error = 0;
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) != REQ_LIVE) {
            empty_status(status_at(statuses, i));
            continue;
        }
        if (!r->complete) {
            if (__builtin_expect(r->kind == TERN_REQ_RECV && r->peer == MPI_ANY_SOURCE, 0) &&
                tern_ulfm_wait_anysource(r, 0) != TERN_OK) {
                /* ULFM: left pending, its status says why. */
                MPI_Status *s = status_at(statuses, i);
                if (s != MPI_STATUS_IGNORE)
                    s->MPI_ERROR = MPIX_ERR_PROC_FAILED_PENDING;
                any_error = 1;
                continue;
            }
            tern_progress_wait(&r->complete);
        }
        if (finish(func, &reqs[i], r, status_at(statuses, i), 0) != MPI_SUCCESS)
            any_error = 1;
    }
    return any_error ? in_status_error(func) : MPI_SUCCESS;
}

/* ULFM: index of a live ANY_SOURCE receive that a failure not
 * acknowledged leaves pending, or -1 (looked at while a wait is idle). */
static int anysource_pending_at(int count, MPI_Request reqs[])
{
    if (!tern_rt.n_failed_peers)
        return -1;
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) == REQ_LIVE && anysource_pending(r))
            return i;
    }
    return -1;
}

static int pending_error(const char *func, tern_req_t *r)
{
    return tern_mpi_result((int)r->comm, func,
                           tern_status_detail(TERN_ERR_PROC_FAILED_PENDING,
                                              "a member of the communicator failed and is not "
                                              "acknowledged; the receive stays pending"));
}

/* ULFM, MPI_Testall with a receive that a failure leaves pending: the
 * call ends as MPI_Waitall would, in MPI_ERR_IN_STATUS. The completed
 * requests are finished, the pending receive's status says
 * PROC_FAILED_PENDING and every other unfinished one's MPI_ERR_PENDING;
 * both stay active. */
static int pending_in_statuses(const char *func, int count, MPI_Request reqs[], int *flag,
                               MPI_Status statuses[])
{
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        MPI_Status *s = status_at(statuses, i);
        if (classify(reqs[i], &r) != REQ_LIVE)
            empty_status(s);
        else if (r->complete)
            finish(func, &reqs[i], r, s, 0);
        else if (s != MPI_STATUS_IGNORE)
            s->MPI_ERROR = anysource_pending(r) ? MPIX_ERR_PROC_FAILED_PENDING : MPI_ERR_PENDING;
    }
    *flag = 1;
    return in_status_error(func);
}

/* Whether every live request is complete (null and inactive ones are). */
static int all_complete(int count, const MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) == REQ_LIVE && !r->complete)
            return 0;
    }
    return 1;
}

int tern_mpi_testall(const char *func, int count, MPI_Request reqs[], int *flag,
                     MPI_Status statuses[])
{
    int n = 0, err = check_array(func, count, reqs, &n);
    if (err)
        return err;
    tern_progress();
    if (!all_complete(count, reqs)) {
        if (anysource_pending_at(count, reqs) >= 0)
            return pending_in_statuses(func, count, reqs, flag, statuses);
        *flag = 0;
        tern_progress_test_missed();
        return MPI_SUCCESS;
    }
    *flag = 1;
    return finish_many(func, count, reqs, statuses, 1);
}

/* Index of a completed live request, or -1. */
static int first_complete(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) == REQ_LIVE && r->complete)
            return i;
    }
    return -1;
}

int tern_mpi_any(const char *func, int count, MPI_Request reqs[], int *index, int *flag,
                 MPI_Status *status, int blocking)
{
    int n = 0, err = check_array(func, count, reqs, &n);
    if (err)
        return err;
    if (n == 0) {
        *index = MPI_UNDEFINED;
        if (flag)
            *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    unsigned idle = 0;
    /* A request complete already is the answer, before any progress (as
     * in MPICH): a progress pass first could complete one of lower index
     * and return that instead, so the order in which requests completed
     * would not show (MPICH's f90/pt2pt/irsendf90 counts on it: an Irsend
     * done at the call, then an Irecv whose reply came meanwhile). */
    int i = first_complete(count, reqs);
    while (i < 0) {
        int events = tern_progress();
        if ((i = first_complete(count, reqs)) >= 0)
            break;
        if (!blocking || !events) {
            int p = anysource_pending_at(count, reqs);
            if (p >= 0) {
                tern_req_t *r;
                classify(reqs[p], &r);
                *index = p;
                if (flag)
                    *flag = 1;
                return pending_error(func, r);
            }
            if (!blocking) {
                *flag = 0;
                *index = MPI_UNDEFINED;
                tern_progress_test_missed();
                return MPI_SUCCESS;
            }
            tern_progress_idle(&idle);
        }
    }
    *index = i;
    if (flag)
        *flag = 1;
    tern_req_t *r;
    classify(reqs[i], &r);
    return finish(func, &reqs[i], r, status, 1);
}

int tern_mpi_some(const char *func, int incount, MPI_Request reqs[], int *outcount,
                  int indices[], MPI_Status statuses[], int blocking)
{
    if (incount > 0 && !indices)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "array_of_indices is NULL");
    int n = 0, err = check_array(func, incount, reqs, &n);
    if (err)
        return err;
    if (n == 0) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    unsigned idle = 0;
    for (;;) {
        int events = tern_progress();
        if (first_complete(incount, reqs) >= 0)
            break;
        if (!events || !blocking) {
            int p = anysource_pending_at(incount, reqs);
            if (p >= 0) {
                MPI_Status *s = status_at(statuses, 0);
                if (s != MPI_STATUS_IGNORE)
                    s->MPI_ERROR = MPIX_ERR_PROC_FAILED_PENDING;
                indices[0] = p;
                *outcount = 1;
                return in_status_error(func);
            }
            if (!blocking)
                break;
            tern_progress_idle(&idle);
        }
    }
    int k = 0, any_error = 0;
    for (int i = 0; i < incount; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) != REQ_LIVE || !r->complete)
            continue;
        indices[k] = i;
        if (finish(func, &reqs[i], r, status_at(statuses, k), 0) != MPI_SUCCESS)
            any_error = 1;
        k++;
    }
    if (k == 0 && !blocking)
        tern_progress_test_missed();
    *outcount = k;
    return any_error ? in_status_error(func) : MPI_SUCCESS;
}

/* The request behind *request for calls that need a real one (free,
 * cancel): MPI_REQUEST_NULL is an error there. *kind_p is its class. */
static int live_request(const char *func, MPI_Request *request, tern_req_t **req_p, int *kind_p)
{
    if (!request)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "request is NULL");
    *kind_p = classify(*request, req_p);
    if (*kind_p == REQ_BAD || *kind_p == REQ_NULL)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, func,
                              "request 0x%x is not a live request", (unsigned)*request);
    return MPI_SUCCESS;
}

int tern_mpi_request_free(const char *func, MPI_Request *request)
{
    tern_req_t *req = NULL;
    int k = REQ_NULL, err = live_request(func, request, &req, &k);
    if (err)
        return err;
    if (req->kind == TERN_REQ_GREQUEST) {
        *request = REQUEST_NULL_OUT;
        return tern_mpi_grequest_free(req);
    }
    if (req->complete || k == REQ_INACTIVE)
        tern_req_release(req);
    else
        req->freed = 1; /* released when it completes */
    *request = REQUEST_NULL_OUT;
    return MPI_SUCCESS;
}

int tern_mpi_request_get_status(const char *func, MPI_Request request, int *flag,
                                MPI_Status *status)
{
    tern_req_t *req;
    switch (classify(request, &req)) {
    case REQ_BAD:
        return bad_request(func, request);
    case REQ_NULL:
    case REQ_INACTIVE:
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!req->complete)
        tern_progress();
    *flag = req->complete;
    if (*flag && req->kind == TERN_REQ_GREQUEST)
        return tern_mpi_grequest_get_status(req, status);
    if (*flag)
        tern_req_status(req, status);
    return MPI_SUCCESS;
}

int tern_mpi_cancel(const char *func, MPI_Request *request)
{
    tern_req_t *req = NULL;
    int k = REQ_NULL, err = live_request(func, request, &req, &k);
    if (err)
        return err;
    /* Receives not yet matched are cancelled; a send is cancelled when its
     * receiver has not matched it yet (the answer completes it). */
    if (k == REQ_LIVE && req->kind == TERN_REQ_RECV && !req->complete)
        tern_p2p_cancel_recv(req);
    if (k == REQ_LIVE && req->kind == TERN_REQ_SEND)
        tern_send_cancel(req);
    if (req->kind == TERN_REQ_GREQUEST)
        return tern_mpi_grequest_cancel(req);
    return MPI_SUCCESS;
}

int tern_mpi_test_cancelled(const char *func, const MPI_Status *status, int *flag)
{
    if (status == MPI_STATUS_IGNORE)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "status is MPI_STATUS_IGNORE");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}

int tern_mpi_start_request(const char *func, MPI_Request *request)
{
    tern_req_t *req = tern_req_lookup(*request);
    if (!req || !req->persistent)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, func,
                              "request 0x%x is not a persistent request", (unsigned)*request);
    if (req->active)
        return tern_mpi_error(req->comm, MPI_ERR_REQUEST, func,
                              "request 0x%x is already active", (unsigned)*request);
    return tern_mpi_start(func, req);
}

int tern_mpi_startall(const char *func, int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        int err = tern_mpi_start_request(func, &reqs[i]);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

int tern_mpi_status_set_cancelled(MPI_Status *status, int flag)
{
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}

int tern_mpi_status_get_field(const MPI_Status *status, const int *field, int *value)
{
    (void)status;
    *value = *field;
    return MPI_SUCCESS;
}

int tern_mpi_status_set_field(int *field, int value)
{
    *field = value;
    return MPI_SUCCESS;
}

/* MPI-4.1's Request_get_status_all/any/some: the status of completed
 * requests, as Request_get_status gives it, without freeing or
 * deactivating any. The code of a failed one goes into its status
 * (raised once as MPI_ERR_IN_STATUS by the all and some forms). */
static int peek(const char *func, tern_req_t *req, MPI_Status *status, int raise)
{
    if (req->kind == TERN_REQ_GREQUEST)
        return tern_mpi_grequest_get_status(req, status);
    if (status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = MPI_SUCCESS;
    tern_req_status(req, status);
    if (req->error == TERN_OK)
        return MPI_SUCCESS;
    tern_comm_t *c = raise ? NULL : tern_comm_lookup(req->comm);
    MPI_Errhandler saved = c ? c->errhandler : MPI_ERRORS_RETURN;
    if (c && saved != MPI_ERRORS_ARE_FATAL && saved != MPI_ERRORS_ABORT)
        c->errhandler = MPI_ERRORS_RETURN;
    int err = tern_mpi_request_error(func, req);
    if (c)
        c->errhandler = saved;
    if (status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = err;
    return err;
}

int tern_mpi_request_get_status_all(const char *func, int count, const MPI_Request reqs[],
                                    int *flag, MPI_Status statuses[])
{
    int n = 0, err = check_array(func, count, (MPI_Request *)reqs, &n);
    if (err)
        return err;
    tern_progress();
    if (!all_complete(count, reqs)) {
        *flag = 0;
        tern_progress_test_missed();
        return MPI_SUCCESS;
    }
    *flag = 1;
    int any_error = 0;
    for (int i = 0; i < count; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) != REQ_LIVE)
            empty_status(status_at(statuses, i));
        else if (peek(func, r, status_at(statuses, i), 0) != MPI_SUCCESS)
            any_error = 1;
    }
    return any_error ? in_status_error(func) : MPI_SUCCESS;
}

int tern_mpi_request_get_status_any(const char *func, int count, const MPI_Request reqs[],
                                    int *index, int *flag, MPI_Status *status)
{
    int n = 0, err = check_array(func, count, (MPI_Request *)reqs, &n);
    if (err)
        return err;
    *index = MPI_UNDEFINED;
    *flag = 1;
    if (n == 0) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    tern_progress();
    int i = first_complete(count, (MPI_Request *)reqs);
    if (i < 0) {
        *flag = 0;
        tern_progress_test_missed();
        return MPI_SUCCESS;
    }
    *index = i;
    tern_req_t *r;
    classify(reqs[i], &r);
    return peek(func, r, status, 1);
}

int tern_mpi_request_get_status_some(const char *func, int incount, const MPI_Request reqs[],
                                     int *outcount, int indices[], MPI_Status statuses[])
{
    if (incount > 0 && !indices)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "array_of_indices is NULL");
    int n = 0, err = check_array(func, incount, (MPI_Request *)reqs, &n);
    if (err)
        return err;
    if (n == 0) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    tern_progress();
    int k = 0, any_error = 0;
    for (int i = 0; i < incount; i++) {
        tern_req_t *r;
        if (classify(reqs[i], &r) != REQ_LIVE || !r->complete)
            continue;
        indices[k] = i;
        if (peek(func, r, status_at(statuses, k), 0) != MPI_SUCCESS)
            any_error = 1;
        k++;
    }
    if (k == 0)
        tern_progress_test_missed();
    *outcount = k;
    return any_error ? in_status_error(func) : MPI_SUCCESS;
}
