#include "mpi/mpi_errors.h"
#include "core/datatype/datatype.h"
#include "core/init/session.h"
#include "core/io/file.h"
#include "core/runtime/handle.h"
#include "core/pt2pt/peer_failure.h"
#include "core/rma/window.h"
#include "core/runtime/user_errors.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Error codes: code = class + CODE_STRIDE * (slot + 1), where slot indexes a
 * ring of recent messages (the classes are MPICH's numbers, below 128;
 * 54, 76 and 77 are none of Tern's). Old codes keep their class; their text fades
 * back to the class description once the slot is reused. */
#define CODE_STRIDE 128
#define N_SLOTS 256

static struct {
    int code;
    char text[MPI_MAX_ERROR_STRING];
} slots[N_SLOTS];
static unsigned next_slot;

static const char *const class_text[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_AMODE] = "invalid access mode",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_CONVERSION] = "data conversion error",
    [MPI_ERR_DUP_DATAREP] = "data representation already defined",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_FILE_IN_USE] = "file in use",
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "info key not defined",
    [MPI_ERR_IO] = "I/O error",
    [MPI_ERR_NAME] = "invalid service name",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_NOT_SAME] = "collective arguments not identical",
    [MPI_ERR_NO_SPACE] = "no space left",
    [MPI_ERR_NO_SUCH_FILE] = "no such file",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "read-only file or file system",
    [MPI_ERR_SERVICE] = "invalid service",
    [MPI_ERR_SPAWN] = "spawn error",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "unsupported operation",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_KEYVAL] = "invalid key value",
    [MPI_ERR_RMA_CONFLICT] = "conflicting RMA accesses",
    [MPI_ERR_RMA_SYNC] = "wrong RMA synchronization",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_ASSERT] = "invalid assert",
    [MPI_ERR_RMA_RANGE] = "RMA target out of range",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor",
    [MPI_T_ERR_INVALID] = "invalid tool-interface use",
    [MPI_ERR_SESSION] = "invalid session",
    [MPI_ERR_ABI] = "ABI property already set",
    [MPI_T_ERR_MEMORY] = "tools interface: out of memory",
    [MPI_T_ERR_NOT_INITIALIZED] = "tools interface not initialized",
    [MPI_T_ERR_CANNOT_INIT] = "tools interface cannot be initialized",
    [MPI_T_ERR_INVALID_INDEX] = "invalid tools-interface index",
    [MPI_T_ERR_INVALID_ITEM] = "invalid item index of a tools-interface enumeration",
    [MPI_T_ERR_INVALID_HANDLE] = "invalid tools-interface handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "no more tools-interface handles",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "no more performance-variable sessions",
    [MPI_T_ERR_INVALID_SESSION] = "invalid performance-variable session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "control variable cannot be set",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "performance variable cannot be started or stopped",
    [MPI_T_ERR_PVAR_NO_WRITE] = "performance variable cannot be written or reset",
    [MPI_T_ERR_PVAR_NO_ATOMIC] = "performance variable cannot be read and reset atomically",
    [MPI_T_ERR_INVALID_NAME] = "invalid tools-interface variable or category name",
    [MPI_T_ERR_NOT_ACCESSIBLE] = "tools-interface object not accessible",
    [MPI_T_ERR_NOT_SUPPORTED] = "tools-interface operation not supported",
    [MPIX_ERR_PROC_FAILED] = "process failed",
    [MPIX_ERR_PROC_FAILED_PENDING] = "process failed (operation still pending)",
    [MPIX_ERR_REVOKED] = "communicator revoked",
};
#define N_CLASSES ((int)(sizeof class_text / sizeof class_text[0]))

int tern_mpi_class_of(tern_status_t st)
{
    switch (st) {
    case TERN_OK: return MPI_SUCCESS;
    case TERN_ERR_NOMEM: return MPI_ERR_NO_MEM;
    case TERN_ERR_ARG: return MPI_ERR_ARG;
    case TERN_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case TERN_ERR_NOT_SUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case TERN_ERR_RANK: return MPI_ERR_RANK;
    case TERN_ERR_COMM: return MPI_ERR_COMM;
    case TERN_ERR_GROUP: return MPI_ERR_GROUP;
    case TERN_ERR_KEYVAL: return MPI_ERR_KEYVAL;
    case TERN_ERR_INFO_NOKEY: return MPI_ERR_INFO_NOKEY;
    case TERN_ERR_BUFFER: return MPI_ERR_BUFFER;
    case TERN_ERR_NO_ROOM: return MPI_ERR_BUFFER;
    case TERN_ERR_COUNT: return MPI_ERR_COUNT;
    case TERN_ERR_REQUEST: return MPI_ERR_REQUEST;
    /* A failed peer: ULFM's class (MPICH and Open MPI raise it too);
     * the text names the peer and cause. Our own endpoint broken: no
     * class says it. */
    case TERN_ERR_PEER: return MPIX_ERR_PROC_FAILED;
    case TERN_ERR_PROC_FAILED_PENDING: return MPIX_ERR_PROC_FAILED_PENDING;
    case TERN_ERR_REVOKED: return MPIX_ERR_REVOKED;
    case TERN_ERR_TRANSPORT: return MPI_ERR_OTHER;
    case TERN_ERR_OP: return MPI_ERR_OP;
    case TERN_ERR_TYPE: return MPI_ERR_TYPE;
    case TERN_ERR_DIMS: return MPI_ERR_DIMS;
    case TERN_ERR_TOPOLOGY: return MPI_ERR_TOPOLOGY;
    case TERN_ERR_CONVERSION: return MPI_ERR_CONVERSION;
    case TERN_ERR_DATAREP: return MPI_ERR_UNSUPPORTED_DATAREP;
    case TERN_ERR_INTERNAL: return MPI_ERR_INTERN;
    /* No class names a fixed limit (MPICH: "Too many communicators" as
     * MPI_ERR_OTHER); it is not memory the program could free. */
    case TERN_ERR_LIMIT: return MPI_ERR_OTHER;
    case TERN_ERR_BASE: return MPI_ERR_BASE;
    case TERN_ERR_WIN: return MPI_ERR_WIN;
    case TERN_ERR_RMA_SYNC: return MPI_ERR_RMA_SYNC;
    case TERN_ERR_RMA_RANGE: return MPI_ERR_RMA_RANGE;
    case TERN_ERR_RMA_CONFLICT: return MPI_ERR_RMA_CONFLICT;
    case TERN_ERR_RMA_ATTACH: return MPI_ERR_RMA_ATTACH;
    case TERN_ERR_RMA_SHARED: return MPI_ERR_RMA_SHARED;
    case TERN_ERR_RMA_FLAVOR: return MPI_ERR_RMA_FLAVOR;
    case TERN_ERR_DISP: return MPI_ERR_DISP;
    case TERN_ERR_SIZE: return MPI_ERR_SIZE;
    case TERN_ERR_LOCKTYPE: return MPI_ERR_LOCKTYPE;
    case TERN_ERR_ASSERT: return MPI_ERR_ASSERT;
    case TERN_ERR_SPAWN: return MPI_ERR_SPAWN;
    case TERN_ERR_PORT: return MPI_ERR_PORT;
    case TERN_ERR_NAME: return MPI_ERR_NAME;
    case TERN_ERR_SERVICE: return MPI_ERR_SERVICE;
    case TERN_ERR_ABI: return MPI_ERR_ABI;
    case TERN_ERR_FILE: return MPI_ERR_FILE;
    case TERN_ERR_FILE_IO: return MPI_ERR_IO;
    case TERN_ERR_NO_SUCH_FILE: return MPI_ERR_NO_SUCH_FILE;
    case TERN_ERR_FILE_EXISTS: return MPI_ERR_FILE_EXISTS;
    case TERN_ERR_FILE_IN_USE: return MPI_ERR_FILE_IN_USE;
    case TERN_ERR_BAD_FILE: return MPI_ERR_BAD_FILE;
    case TERN_ERR_AMODE: return MPI_ERR_AMODE;
    case TERN_ERR_ACCESS: return MPI_ERR_ACCESS;
    case TERN_ERR_READ_ONLY: return MPI_ERR_READ_ONLY;
    case TERN_ERR_NO_SPACE: return MPI_ERR_NO_SPACE;
    case TERN_ERR_QUOTA: return MPI_ERR_QUOTA;
    case TERN_ERR_DUP_DATAREP: return MPI_ERR_DUP_DATAREP;
    case TERN_ERR_NOT_SAME: return MPI_ERR_NOT_SAME;
    default: return MPI_ERR_OTHER;
    }
}

/* Class of a code, or -1 if it is not one of ours. */
static int code_class(int code)
{
    if (code >= 0 && code < N_CLASSES && class_text[code])
        return code;
    if (code >= CODE_STRIDE && code < CODE_STRIDE * (N_SLOTS + 1) &&
        code % CODE_STRIDE < N_CLASSES && class_text[code % CODE_STRIDE])
        return code % CODE_STRIDE;
    return tern_user_error_class(code);
}

static const char *code_text(int code)
{
    if (code >= TERN_USER_ERROR_BASE)
        return tern_user_error_string(code);
    int cls = code_class(code);
    if (cls < 0)
        return NULL;
    if (code >= CODE_STRIDE) {
        unsigned slot = (unsigned)(code / CODE_STRIDE - 1);
        if (slots[slot].code == code)
            return slots[slot].text;
    }
    return class_text[cls];
}

static _Noreturn void abort_job(int code, const char *text)
{
    char msg[MPI_MAX_ERROR_STRING + 64];
    if (text)
        snprintf(msg, sizeof msg, "fatal error: %s", text);
    else
        snprintf(msg, sizeof msg, "fatal error: error code %d (not an MPI code)", code);
    tern_error("%s", msg);
    int cls = code_class(code);
    tern_pmi_abort(cls > 0 ? cls : 1, msg);
}

static int invoke_handler(int h, int code);

int tern_mpi_error(int obj, int errclass, const char *func, const char *fmt, ...)
{
    unsigned slot = next_slot++ % N_SLOTS;
    int code = errclass + CODE_STRIDE * (int)(slot + 1);
    int n = snprintf(slots[slot].text, sizeof slots[slot].text, "%s: ", func);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(slots[slot].text + n, sizeof slots[slot].text - (size_t)n, fmt, ap);
    va_end(ap);
    slots[slot].code = code;
    return invoke_handler(obj, code);
}

int tern_mpi_raise(int obj, const char *func, tern_status_t st)
{
    /* A user callback's own MPI error code goes back to the user as it is
     * (MPICH's errors/comm/userdup); a code MPI does not know gets words. */
    int user = st == TERN_ERR_CALLBACK ? tern_status_take_callback_code() : 0;
    if (user != MPI_SUCCESS && code_class(user) > 0) {
        tern_status_take_detail(st);
        return invoke_handler(obj, user);
    }
    const char *detail = tern_status_take_detail(st);
    if (detail)
        return tern_mpi_error(obj, tern_mpi_class_of(st), func, "%s", detail);
    /* A status alone (a collective's schedule, a communicator exchange)
     * does not say which peer failed: name the latest failure. */
    const char *failure = tern_rt.n_failed_peers ? tern_peer_failure(tern_rt.last_failed_peer) : NULL;
    if (failure && tern_rt.peers[tern_rt.last_failed_peer].failed == st)
        return tern_mpi_error(obj, tern_mpi_class_of(st), func, "%s: world rank %d: %s",
                              tern_status_string(st), tern_rt.last_failed_peer, failure);
    return tern_mpi_error(obj, tern_mpi_class_of(st), func, "%s", tern_status_string(st));
}

int tern_mpi_not_initialized(const char *func)
{
    tern_error("%s called %s; the job cannot continue", func,
               tern_rt.ended ? "after MPI ended (MPI_Finalize and the last MPI_Session_finalize)"
                   : "before MPI_Init or MPI_Session_init");
    tern_pmi_abort(1, "MPI called outside MPI_Init/MPI_Finalize");
}

/* ------------------------------------------------------------------------ */
/* Error handlers: predefined ones, and user functions in a small table. */

/* A handler the user freed lives while a communicator uses it (MPI: free
 * marks for deallocation); its slot is reclaimed when the table is full. */
#define MAX_USER_EH 64
static MPI_Comm_errhandler_function *user_eh[MAX_USER_EH];
static unsigned char user_eh_freed[MAX_USER_EH];
/* The kind of object each was made for (TERN_EH_FOR_*): MPI lets a handler
 * be set only on its kind. */
static unsigned char user_eh_for[MAX_USER_EH];
/* Another binding's caller of each, or NULL (tern_errhandler_set_invoker). */
static tern_eh_invoker_fn *user_eh_invoke[MAX_USER_EH];
#define EH_USER_BASE (TERN_HANDLE_DYNAMIC | TERN_KIND_ERRHANDLER)

int tern_errhandler_valid(MPI_Errhandler eh)
{
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT)
        return 1;
    unsigned idx = (unsigned)eh - EH_USER_BASE;
    return ((unsigned)eh & 0xfc000000u) == EH_USER_BASE && idx < MAX_USER_EH && user_eh[idx];
}

int tern_errhandler_for(MPI_Errhandler eh)
{
    unsigned idx = (unsigned)eh - EH_USER_BASE;
    if (((unsigned)eh & 0xfc000000u) == EH_USER_BASE && idx < MAX_USER_EH && user_eh[idx])
        return user_eh_for[idx];
    return -1;
}

/* The handler an error raised on handle h goes to, and the handle the
 * user's function is given: the object the call is about (a communicator,
 * window, file or session), or an error handler itself (the constructors
 * that name the new object's handler, MPI_Comm_create_from_group: no
 * object yet, MPI_COMM_NULL). A file handle that is no live file (the
 * calls that open and delete files) has MPI_FILE_NULL's, the default file
 * handler. Another handle with no object: MPI_COMM_WORLD's while the
 * world model runs; otherwise there is no handler (MPI_ERRHANDLER_NULL:
 * the code is returned). */
static MPI_Errhandler handler_of(int h, int *obj)
{
    switch (TERN_HANDLE_KIND(h)) {
    case TERN_KIND_SESSION: {
        tern_session_t *s = tern_session_lookup(h);
        if (s) {
            *obj = h;
            return s->errhandler;
        }
        break;
    }
    case TERN_KIND_WIN: {
        tern_win_t *w = tern_win_lookup(h);
        if (w) {
            *obj = h;
            return w->errhandler;
        }
        break;
    }
    case TERN_KIND_FILE:
        *obj = tern_file_lookup(h) ? h : MPI_FILE_NULL;
        return tern_file_errhandler_of(h);
    case TERN_KIND_ERRHANDLER:
        if (tern_errhandler_valid(h)) {
            *obj = MPI_COMM_NULL;
            return h;
        }
        break;
    default: break;
    }
    tern_comm_t *c = tern_comm_lookup(h);
    if (!c && tern_rt.initialized && !tern_rt.finalized)
        c = tern_comm_lookup(MPI_COMM_WORLD);
    if (!c)
        return MPI_ERRHANDLER_NULL;
    *obj = c->handle;
    return c->errhandler;
}

static int invoke_handler(int h, int code)
{
    /* Before MPI starts and after it ends (procedures that may run then:
     * MPI_Initialized, MPI_Get_version...) there is no handler to call and
     * no job to abort: the code is returned. */
    if (!tern_rt.active)
        return code;
    int obj = MPI_COMM_NULL;
    MPI_Errhandler eh = handler_of(h, &obj);
    if (eh == MPI_ERRORS_RETURN || eh == MPI_ERRHANDLER_NULL)
        return code;
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || !tern_errhandler_valid(eh))
        abort_job(code, code_text(code));
    int e = code;
    /* The handle the function is given lies zero-extended in 8 bytes: a
     * binary built for MPICH's ABI reads an 8-byte MPI_File there (a
     * little-endian int pointer reads the same handle; docs/design.md,
     * "The MPICH ABI face"). */
    union {
        int h;
        uint64_t wide;
    } arg = {.wide = (uint32_t)obj};
    unsigned i = (unsigned)eh - EH_USER_BASE;
    if (user_eh_invoke[i])
        user_eh_invoke[i](user_eh_for[i], &arg.h, &e, (void (*)(void))user_eh[i]);
    else
        user_eh[i](&arg.h, &e);
    /* A file handler may rewrite the code, and the call returns what it
     * left (ROMIO does; MPICH's errors/io/fileerrret sets MPI_SUCCESS). */
    return TERN_HANDLE_KIND(h) == TERN_KIND_FILE ? e : code;
}

int tern_mpi_handle_code(int obj, int code)
{
    return invoke_handler(obj, code);
}

/* The error-handler procedures and error codes, called by the generated
 * entry points (src/mpi/api/env.toml) once the arguments are checked. */

int tern_check_errhandler(const char *func, int err_obj, MPI_Errhandler eh)
{
    if (__builtin_expect(tern_errhandler_valid(eh), 1))
        return MPI_SUCCESS;
    if (eh == MPI_ERRHANDLER_NULL)
        return tern_mpi_error(err_obj, MPI_ERR_ARG, func, "errhandler is MPI_ERRHANDLER_NULL");
    return tern_mpi_error(err_obj, MPI_ERR_ARG, func, "invalid error handler 0x%x", (unsigned)eh);
}

/* A user handler freed by the program is kept while an object uses it. */
static int errhandler_in_use(MPI_Errhandler eh)
{
    return tern_comm_errhandler_in_use(eh) || tern_session_errhandler_in_use(eh) ||
           tern_win_errhandler_in_use(eh) || tern_file_errhandler_in_use(eh);
}

static int free_user_slot(void)
{
    for (unsigned i = 0; i < MAX_USER_EH; i++)
        if (!user_eh[i])
            return (int)i;
    /* Full: reclaim the handlers freed by the user that no communicator
     * or session uses any more. */
    int got = -1;
    for (unsigned i = 0; i < MAX_USER_EH; i++)
        if (user_eh_freed[i] &&
            !errhandler_in_use((MPI_Errhandler)(EH_USER_BASE + i))) {
            user_eh[i] = NULL;
            user_eh_freed[i] = 0;
            if (got < 0)
                got = (int)i;
        }
    return got;
}

tern_status_t tern_errhandler_create_for(int kind, MPI_Comm_errhandler_function *fn,
                                         MPI_Errhandler *errhandler)
{
    int i = free_user_slot();
    if (i < 0)
        return tern_status_detail(TERN_ERR_NOMEM,
                                  "more than %d error handlers are live (not freed, or freed "
                                  "but still set on a communicator)",
                                  MAX_USER_EH);
    user_eh[i] = fn;
    user_eh_for[i] = (unsigned char)kind;
    user_eh_invoke[i] = NULL;
    *errhandler = (MPI_Errhandler)(EH_USER_BASE + (unsigned)i);
    return TERN_OK;
}

int tern_errhandler_set_invoker(MPI_Errhandler eh, tern_eh_invoker_fn *invoke)
{
    if (tern_errhandler_for(eh) < 0)
        return -1;
    user_eh_invoke[(unsigned)eh - EH_USER_BASE] = invoke;
    return 0;
}

tern_status_t tern_errhandler_release(MPI_Errhandler *errhandler)
{
    /* Predefined handlers are never freed; user ones stay valid while a
     * communicator still uses them: marked, reclaimed later. */
    unsigned idx = (unsigned)*errhandler - EH_USER_BASE;
    if (((unsigned)*errhandler & 0xfc000000u) == EH_USER_BASE && idx < MAX_USER_EH)
        user_eh_freed[idx] = 1;
    *errhandler = MPI_ERRHANDLER_NULL;
    return TERN_OK;
}

static const char *const eh_kind_names[] = {
    [TERN_EH_FOR_COMM] = "communicators (MPI_Comm_create_errhandler)",
    [TERN_EH_FOR_SESSION] = "sessions (MPI_Session_create_errhandler)",
    [TERN_EH_FOR_WIN] = "windows (MPI_Win_create_errhandler)",
    [TERN_EH_FOR_FILE] = "files (MPI_File_create_errhandler)",
};

tern_status_t tern_errhandler_set(int kind, MPI_Errhandler *slot, MPI_Errhandler errhandler)
{
    int made_for = tern_errhandler_for(errhandler);
    if (made_for >= 0 && made_for != kind)
        return tern_status_detail(TERN_ERR_ARG, "errhandler 0x%x was made for %s, not for %s",
                                  (unsigned)errhandler, eh_kind_names[made_for],
                                  eh_kind_names[kind]);
    *slot = errhandler;
    return TERN_OK;
}

tern_status_t tern_errhandler_get(MPI_Errhandler current, MPI_Errhandler *errhandler)
{
    *errhandler = current;
    return TERN_OK;
}

tern_status_t tern_errhandler_call(int obj, int errorcode)
{
    invoke_handler(obj, errorcode);
    return TERN_OK;
}


tern_status_t tern_error_string(int errorcode, char *string, int *resultlen)
{
    const char *t = code_text(errorcode);
    if (!t) {
        snprintf(string, MPI_MAX_ERROR_STRING, "unknown error code %d", errorcode);
        *resultlen = (int)strlen(string);
        return tern_status_detail(TERN_ERR_ARG, "unknown error code %d", errorcode);
    }
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = (int)strlen(string);
    return TERN_OK;
}

tern_status_t tern_error_class(int errorcode, int *errorclass)
{
    int cls = code_class(errorcode);
    if (cls < 0)
        return tern_status_detail(TERN_ERR_ARG, "unknown error code %d", errorcode);
    *errorclass = cls;
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */
/* Argument checks. */

int tern_check_comm(const char *func, MPI_Comm comm, tern_comm_t **comm_p)
{
    tern_comm_t *c = tern_comm_lookup(comm);
    if (__builtin_expect(!c, 0)) {
        if (comm == MPI_COMM_NULL)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, func, "communicator is MPI_COMM_NULL");
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, func,
                              "invalid communicator handle 0x%x", (unsigned)comm);
    }
    *comm_p = c;
    return MPI_SUCCESS;
}

int tern_check_count(const char *func, MPI_Comm comm, MPI_Count count)
{
    if (__builtin_expect(count < 0, 0))
        return tern_mpi_error(comm, MPI_ERR_COUNT, func, "count=%lld is negative",
                              (long long)count);
    return MPI_SUCCESS;
}

int tern_check_datatype(const char *func, MPI_Comm comm, MPI_Datatype dt, size_t *size_p)
{
    tern_dt_desc_t d; /* one lookup for validity and extent, on every call's path */
    if (__builtin_expect(!tern_datatype_describe(dt, &d), 0)) {
        if (dt == MPI_DATATYPE_NULL)
            return tern_mpi_error(comm, MPI_ERR_TYPE, func, "datatype is MPI_DATATYPE_NULL");
        if (tern_datatype_name(dt))
            return tern_mpi_error(comm, MPI_ERR_TYPE, func,
                                  "datatype 0x%x is not committed (call MPI_Type_commit)",
                                  (unsigned)dt);
        return tern_mpi_error(comm, MPI_ERR_TYPE, func, "invalid datatype handle 0x%x",
                              (unsigned)dt);
    }
    *size_p = (size_t)d.extent;
    return MPI_SUCCESS;
}

int tern_check_buffer(const char *func, MPI_Comm comm, const void *buf, MPI_Count count,
                      size_t size)
{
    if (__builtin_expect(!buf && count > 0 && size > 0, 0))
        return tern_mpi_error(comm, MPI_ERR_BUFFER, func, "buffer is NULL but count=%lld",
                              (long long)count);
    return MPI_SUCCESS;
}

/* Names the peers of point-to-point: the remote group of an
 * intercommunicator. */
static const char *peer_desc(const tern_comm_t *comm, char *buf, size_t len)
{
    const char *what = comm->is_inter ? "the remote group of " : "";
    if (comm->name[0])
        snprintf(buf, len, "%s%s", what, comm->name);
    else
        snprintf(buf, len, "%scommunicator 0x%x", what, (unsigned)comm->handle);
    return buf;
}

int tern_check_dest(const char *func, tern_comm_t *comm, int dest)
{
    int n = tern_comm_peer_size(comm);
    char buf[MPI_MAX_OBJECT_NAME + 64];
    if (__builtin_expect((dest < 0 || dest >= n) && dest != MPI_PROC_NULL, 0))
        return tern_mpi_error(comm->handle, MPI_ERR_RANK, func,
                              "destination rank %d is out of range (%s has %d ranks)", dest,
                              peer_desc(comm, buf, sizeof buf), n);
    return MPI_SUCCESS;
}

int tern_check_source(const char *func, tern_comm_t *comm, int source)
{
    int n = tern_comm_peer_size(comm);
    char buf[MPI_MAX_OBJECT_NAME + 64];
    if (__builtin_expect((source < 0 || source >= n) && source != MPI_PROC_NULL &&
                             source != MPI_ANY_SOURCE,
                         0))
        return tern_mpi_error(comm->handle, MPI_ERR_RANK, func,
                              "source rank %d is out of range (%s has %d ranks)", source,
                              peer_desc(comm, buf, sizeof buf), n);
    return MPI_SUCCESS;
}

int tern_check_send_tag(const char *func, MPI_Comm comm, int tag)
{
    if (__builtin_expect(tag < 0 || tag > TERN_TAG_UB, 0))
        return tern_mpi_error(comm, MPI_ERR_TAG, func, "tag=%d is outside 0..%d (MPI_TAG_UB)",
                              tag, TERN_TAG_UB);
    return MPI_SUCCESS;
}

int tern_check_recv_tag(const char *func, MPI_Comm comm, int tag)
{
    if (__builtin_expect((tag < 0 || tag > TERN_TAG_UB) && tag != MPI_ANY_TAG, 0))
        return tern_mpi_error(comm, MPI_ERR_TAG, func,
                              "tag=%d is outside 0..%d (MPI_TAG_UB) and not MPI_ANY_TAG", tag,
                              TERN_TAG_UB);
    return MPI_SUCCESS;
}
