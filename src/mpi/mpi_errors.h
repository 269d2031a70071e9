/* Errors at the API boundary: the only place that turns a tern_status_t into
 * an MPI error class. Every reported error gets a code whose message names
 * the function and the bad argument (MPI_Error_string returns it), and goes
 * through the error handler of the object the call is about. */
#ifndef TERN_MPI_ERRORS_H
#define TERN_MPI_ERRORS_H

#include "base/status.h"
#include "core/comm/comm.h"
#include "core/pt2pt/progress_thread.h"
#include "core/runtime/runtime.h"
#include <mpi.h>

/* Make the profiling name the real one and MPI_ a weak alias of it. */
#ifdef TERN_ABI_NATIVE
/* libmpi_abi's copy of this layer (src/abi): its names are renamed
 * tern_native_* and the ABI's own entry points take MPI_ and PMPI_. */
#define TERN_PMPI_ALIAS(name)
#define TERN_PMPIX_ALIAS(name)
#else
#define TERN_PMPI_ALIAS(name) _Pragma(TERN_STR(weak MPI_##name = PMPI_##name))
#define TERN_PMPIX_ALIAS(name) _Pragma(TERN_STR(weak MPIX_##name = PMPIX_##name))
#endif
#define TERN_STR(x) #x
/* An entry point the MPICH ABI face replaces (tools/bindgen/checks.py,
 * ABI_FACE_REPLACED): defined as tern_face_PMPI_<name>, both public names
 * weak aliases of it. libmpi_abi's copy (TERN_ABI_NATIVE) names it
 * PMPI_<name>, which its rename header turns into tern_native_PMPI_<name>
 * like every other entry point. */
#ifdef TERN_ABI_NATIVE
#define TERN_FACE_NAME(name) PMPI_##name
#define TERN_FACE_ALIAS(name)
#else
#define TERN_FACE_NAME(name) tern_face_PMPI_##name
#define TERN_FACE_ALIAS(name)                                                                      \
    _Pragma(TERN_STR(weak MPI_##name = tern_face_PMPI_##name))                                     \
        _Pragma(TERN_STR(weak PMPI_##name = tern_face_PMPI_##name))
#endif

int tern_mpi_class_of(tern_status_t st);

/* Raises an error of class errclass on the object with handle obj (a
 * communicator, window, file or session; MPI_COMM_NULL: MPI_COMM_WORLD's):
 * records the message, calls the object's error handler, and returns the
 * code when the handler returns. */
int tern_mpi_error(int obj, int errclass, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same for an internal status: the detail the core recorded for st
 * (tern_status_detail), else the status's description (naming the latest
 * failed peer when st is its failure: collectives' schedules say no more). */
int tern_mpi_raise(int obj, const char *func, tern_status_t st);
/* A code made elsewhere (a user callback's) through comm's error handler
 * (MPI_COMM_WORLD's for MPI_COMM_NULL); returns it. */
int tern_mpi_handle_code(int obj, int code);

/* A function was called while MPI is not running (neither the world model
 * nor a session): fatal. */
int tern_mpi_not_initialized(const char *func);

/* Holds the entry points' global lock (core/runtime/api_lock.h) for the
 * rest of the call while it is on (MPI_THREAD_MULTIPLE, the progress
 * thread), released on every return. */
#define TERN_API_GUARD()                                                       \
    __attribute__((cleanup(tern_api_leave))) int tern_api_held_ = tern_api_enter()

/* Also holds the lock (TERN_API_GUARD) and times the call for the
 * profile of the job (TERN_PROFILE; base/profile.h): one flag word tells
 * both (core/runtime/api_lock.h, tern_api_enter_call). */
#define TERN_CHECK_INIT(func)                                                  \
    if (__builtin_expect(!tern_rt.active, 0))                                  \
        return tern_mpi_not_initialized(func);                                 \
    __attribute__((cleanup(tern_api_leave_call))) int tern_api_held_ = tern_api_enter_call(func)

/* Argument checks: return MPI_SUCCESS or the (already raised) error code. */
int tern_check_comm(const char *func, MPI_Comm comm, tern_comm_t **comm_p);
int tern_check_count(const char *func, MPI_Comm comm, MPI_Count count);
/* *size_p: bytes per element in memory (the extent). */
int tern_check_datatype(const char *func, MPI_Comm comm, MPI_Datatype dt, size_t *size_p);
int tern_check_buffer(const char *func, MPI_Comm comm, const void *buf, MPI_Count count,
                      size_t size);
int tern_check_dest(const char *func, tern_comm_t *comm, int dest);
int tern_check_source(const char *func, tern_comm_t *comm, int source);
int tern_check_send_tag(const char *func, MPI_Comm comm, int tag);
int tern_check_recv_tag(const char *func, MPI_Comm comm, int tag);


/* Error-handler objects. */
int tern_errhandler_valid(MPI_Errhandler eh);
/* MPI_ERR_ARG unless eh is a predefined or live user error handler. */
int tern_check_errhandler(const char *func, int err_obj, MPI_Errhandler eh);

/* The error-handler and error-code procedures on checked arguments. */
/* The kinds of object a user's handler is made for, and the kind of eh
 * (-1 for a predefined handler, which serves every kind). */
enum { TERN_EH_FOR_COMM, TERN_EH_FOR_SESSION, TERN_EH_FOR_WIN, TERN_EH_FOR_FILE };
tern_status_t tern_errhandler_create_for(int kind, MPI_Comm_errhandler_function *fn,
                                         MPI_Errhandler *errhandler);
int tern_errhandler_for(MPI_Errhandler eh);
/* A user handler another language's binding calls: raising an error gives
 * invoke the handler's kind (TERN_EH_FOR_*), the object's handle, the code
 * and the function (MPICH's C++ binding, MPII_Errhandler_set_cxx on the
 * MPICH ABI face). 0 on a live user handler. */
typedef void tern_eh_invoker_fn(int kind, int *obj, int *code, void (*fn)(void));
int tern_errhandler_set_invoker(MPI_Errhandler eh, tern_eh_invoker_fn *invoke);
tern_status_t tern_errhandler_release(MPI_Errhandler *errhandler);
/* Sets an object's handler (*slot: its errhandler field) to errhandler,
 * unless that is a user handler made for another kind of object. */
tern_status_t tern_errhandler_set(int kind, MPI_Errhandler *slot, MPI_Errhandler errhandler);
tern_status_t tern_errhandler_get(MPI_Errhandler current, MPI_Errhandler *errhandler);
/* Calls the handler of the object with handle obj (MPI_*_call_errhandler). */
tern_status_t tern_errhandler_call(int obj, int errorcode);
/* The text of an error code (also written, as "unknown error code N", with
 * TERN_ERR_ARG for a code that is not one), and its class. */
tern_status_t tern_error_string(int errorcode, char *string, int *resultlen);
tern_status_t tern_error_class(int errorcode, int *errorclass);

#endif
