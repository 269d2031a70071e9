/* One status type for the whole library. Internal functions return
 * tern_status_t; only src/mpi turns it into an MPI error class. */
#ifndef TERN_BASE_STATUS_H
#define TERN_BASE_STATUS_H

/* X(name, description) */
#define TERN_STATUS_MAP(X)                                         \
    X(TERN_OK, "success")                                          \
    X(TERN_ERR_NOMEM, "out of memory")                             \
    X(TERN_ERR_ARG, "invalid argument")                            \
    X(TERN_ERR_TRUNCATE, "message truncated")                      \
    X(TERN_ERR_NO_ROOM, "no room left in the buffer")              \
    X(TERN_ERR_AGAIN, "resource temporarily unavailable, retry")   \
    X(TERN_ERR_IO, "I/O error")                                    \
    X(TERN_ERR_PMI, "process manager (PMI) error")                 \
    X(TERN_ERR_NOT_SUPPORTED, "operation not supported")           \
    X(TERN_ERR_NOT_FOUND, "not found")                             \
    X(TERN_ERR_PEER, "peer process failed or unreachable")         \
    X(TERN_ERR_RANK, "rank out of range")                          \
    X(TERN_ERR_COMM, "wrong kind of communicator")                 \
    X(TERN_ERR_GROUP, "invalid group")                             \
    X(TERN_ERR_KEYVAL, "invalid attribute key")                    \
    X(TERN_ERR_CALLBACK, "a user callback failed")                 \
    X(TERN_ERR_INFO_NOKEY, "no such info key")                     \
    X(TERN_ERR_BUFFER, "invalid buffer")                           \
    X(TERN_ERR_COUNT, "invalid count")                             \
    X(TERN_ERR_REQUEST, "invalid request")                         \
    X(TERN_ERR_TRANSPORT, "transport failure (local endpoint)")    \
    X(TERN_ERR_OP, "invalid reduction operation")                  \
    X(TERN_ERR_TYPE, "invalid datatype")                           \
    X(TERN_ERR_DIMS, "invalid number of dimensions")               \
    X(TERN_ERR_TOPOLOGY, "invalid topology")                       \
    X(TERN_ERR_CONVERSION, "value cannot be converted")            \
    X(TERN_ERR_DATAREP, "unsupported data representation")         \
    X(TERN_ERR_LIMIT, "a fixed limit of the library is reached")   \
    X(TERN_ERR_BASE, "invalid base address")                       \
    X(TERN_ERR_WIN, "invalid window")                              \
    X(TERN_ERR_RMA_SYNC, "RMA call outside its synchronization")   \
    X(TERN_ERR_RMA_RANGE, "RMA target outside the window")         \
    X(TERN_ERR_RMA_CONFLICT, "conflicting RMA accesses")           \
    X(TERN_ERR_RMA_ATTACH, "memory cannot be attached")            \
    X(TERN_ERR_RMA_SHARED, "memory cannot be shared")              \
    X(TERN_ERR_RMA_FLAVOR, "wrong window flavor")                  \
    X(TERN_ERR_DISP, "invalid displacement")                       \
    X(TERN_ERR_SIZE, "invalid size")                               \
    X(TERN_ERR_LOCKTYPE, "invalid lock type")                      \
    X(TERN_ERR_ASSERT, "invalid assert")                           \
    X(TERN_ERR_SPAWN, "processes could not be started")            \
    X(TERN_ERR_PORT, "invalid port name")                          \
    X(TERN_ERR_NAME, "service name not published")                 \
    X(TERN_ERR_SERVICE, "service name cannot be (un)published")    \
    X(TERN_ERR_ABI, "ABI property already set differently")        \
    X(TERN_ERR_FILE, "invalid file handle")                        \
    X(TERN_ERR_FILE_IO, "file read or write failed")               \
    X(TERN_ERR_NO_SUCH_FILE, "no such file")                       \
    X(TERN_ERR_FILE_EXISTS, "file exists")                         \
    X(TERN_ERR_FILE_IN_USE, "file in use")                         \
    X(TERN_ERR_BAD_FILE, "invalid file name")                      \
    X(TERN_ERR_AMODE, "invalid access mode")                       \
    X(TERN_ERR_ACCESS, "permission denied")                        \
    X(TERN_ERR_READ_ONLY, "read-only file or file system")         \
    X(TERN_ERR_NO_SPACE, "no space left on the device")            \
    X(TERN_ERR_QUOTA, "disk quota exceeded")                       \
    X(TERN_ERR_DUP_DATAREP, "data representation already defined") \
    X(TERN_ERR_NOT_SAME, "collective arguments differ between ranks") \
    X(TERN_ERR_UNMATCHED, "messages arrived that were never received") \
    X(TERN_ERR_PROC_FAILED_PENDING, "a process that could match failed (not acknowledged)") \
    X(TERN_ERR_REVOKED, "communicator revoked")                    \
    X(TERN_ERR_INTERNAL, "internal error")

typedef enum {
#define TERN_STATUS_ENUM(name, desc) name,
    TERN_STATUS_MAP(TERN_STATUS_ENUM)
#undef TERN_STATUS_ENUM
    TERN_STATUS_COUNT
} tern_status_t;

const char *tern_status_string(tern_status_t st);

/* Records why an operation failed, in words that name the argument (e.g.
 * "ranks[2]=9 is out of range (the group has 4 ranks)"), and returns st.
 * The MPI layer raises the error with this text after the function's name;
 * one message per thread, replaced by the next. */
tern_status_t tern_status_detail(tern_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The text recorded for st by the last tern_status_detail of this thread, or
 * NULL (other status, or none); clears it. */
const char *tern_status_take_detail(tern_status_t st);
/* A user callback (an attribute copy or delete function) returned code, an
 * MPI error code: records it with the words and returns TERN_ERR_CALLBACK;
 * the MPI layer then returns the user's code itself, as MPICH does. */
tern_status_t tern_status_callback(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The code recorded by the last tern_status_callback of this thread, or 0
 * (MPI_SUCCESS: none); clears it. */
int tern_status_take_callback_code(void);

#endif
