/* Integer handles (see include/mpi.h): kind in the top byte, index below.
 * Predefined objects have bit 0x40000000 set; dynamic ones 0x80000000. */
#ifndef TERN_CORE_HANDLE_H
#define TERN_CORE_HANDLE_H

#include <mpi.h>
#include <stdint.h>

#define TERN_HANDLE_KIND_MASK 0x3c000000u
#define TERN_HANDLE_INDEX_MASK 0x03ffffffu
#define TERN_HANDLE_KIND(h) (((uint32_t)(h)) & TERN_HANDLE_KIND_MASK)
#define TERN_HANDLE_INDEX(h) (((uint32_t)(h)) & TERN_HANDLE_INDEX_MASK)

#define TERN_KIND_COMM 0x04000000u
#define TERN_KIND_GROUP 0x08000000u
#define TERN_KIND_DATATYPE 0x0c000000u
#define TERN_KIND_ERRHANDLER 0x14000000u
#define TERN_KIND_OP 0x18000000u
#define TERN_KIND_WIN 0x20000000u
#define TERN_KIND_REQUEST 0x2c000000u
/* Matched messages: MPI_MESSAGE_NULL and MPI_MESSAGE_NO_PROC are predefined
 * 0x6c00000x (the request kind); dynamic ones have this kind of their own. */
#define TERN_KIND_MESSAGE 0x30000000u

#define TERN_HANDLE_PREDEFINED 0x40000000u
#define TERN_HANDLE_DYNAMIC 0x80000000u

#endif
