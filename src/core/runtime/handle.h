/* Integer handles (see include/mpi.h): kind in bits 26-29, index below.
 * Predefined objects have bit 0x40000000 set; dynamic ones 0x80000000; a
 * kind's null handle is the kind's bits alone. The kinds and their values
 * are MPICH's (its ABI's handle encoding), listed here once: every module
 * that keeps objects of a kind takes its bits from this table. */
#ifndef TERN_CORE_HANDLE_H
#define TERN_CORE_HANDLE_H

#include <mpi.h>
#include <stdint.h>

#define TERN_HANDLE_KIND_MASK 0x3c000000u
#define TERN_HANDLE_INDEX_MASK 0x03ffffffu
#define TERN_HANDLE_KIND(h) (((uint32_t)(h)) & TERN_HANDLE_KIND_MASK)
#define TERN_HANDLE_INDEX(h) (((uint32_t)(h)) & TERN_HANDLE_INDEX_MASK)

/* X(name, kind bits, what the object is called in messages) */
#define TERN_HANDLE_KINDS(X)                                                   \
    X(COMM, 0x04000000u, "communicator")                                       \
    X(GROUP, 0x08000000u, "group")                                             \
    X(DATATYPE, 0x0c000000u, "datatype")                                       \
    X(FILE, 0x10000000u, "file")                                               \
    X(ERRHANDLER, 0x14000000u, "error handler")                                \
    X(OP, 0x18000000u, "operation")                                            \
    X(INFO, 0x1c000000u, "info")                                               \
    X(WIN, 0x20000000u, "window")                                              \
    X(KEYVAL, 0x24000000u, "keyval")                                           \
    X(REQUEST, 0x2c000000u, "request")                                         \
    /* Matched messages: MPI_MESSAGE_NULL and MPI_MESSAGE_NO_PROC are          \
     * predefined 0x6c00000x (the request kind); dynamic ones have this        \
     * kind of their own. */                                                   \
    X(MESSAGE, 0x30000000u, "message")                                         \
    X(SESSION, 0x38000000u, "session")

enum {
#define TERN_KIND_ENUM_(name, bits, text) TERN_KIND_##name##_BITS_ = (int)(bits),
    TERN_HANDLE_KINDS(TERN_KIND_ENUM_)
#undef TERN_KIND_ENUM_
};
/* The kinds as unsigned constants (they are compared with uint32_t). */
#define TERN_KIND_COMM ((uint32_t)TERN_KIND_COMM_BITS_)
#define TERN_KIND_GROUP ((uint32_t)TERN_KIND_GROUP_BITS_)
#define TERN_KIND_DATATYPE ((uint32_t)TERN_KIND_DATATYPE_BITS_)
#define TERN_KIND_FILE ((uint32_t)TERN_KIND_FILE_BITS_)
#define TERN_KIND_ERRHANDLER ((uint32_t)TERN_KIND_ERRHANDLER_BITS_)
#define TERN_KIND_OP ((uint32_t)TERN_KIND_OP_BITS_)
#define TERN_KIND_INFO ((uint32_t)TERN_KIND_INFO_BITS_)
#define TERN_KIND_WIN ((uint32_t)TERN_KIND_WIN_BITS_)
#define TERN_KIND_KEYVAL ((uint32_t)TERN_KIND_KEYVAL_BITS_)
#define TERN_KIND_REQUEST ((uint32_t)TERN_KIND_REQUEST_BITS_)
#define TERN_KIND_MESSAGE ((uint32_t)TERN_KIND_MESSAGE_BITS_)
#define TERN_KIND_SESSION ((uint32_t)TERN_KIND_SESSION_BITS_)

#define TERN_HANDLE_PREDEFINED 0x40000000u
#define TERN_HANDLE_DYNAMIC 0x80000000u

/* What an object of h's kind is called ("communicator", "file"...), for
 * messages; "handle" for bits that are no kind. */
static inline const char *tern_handle_kind_name(int h)
{
    switch (TERN_HANDLE_KIND(h)) {
#define TERN_KIND_CASE_(name, bits, text) case bits: return text;
        TERN_HANDLE_KINDS(TERN_KIND_CASE_)
#undef TERN_KIND_CASE_
    default: return "handle";
    }
}

#endif
