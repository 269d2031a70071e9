/* Datatypes: the engine every layer uses to move typed data.
 *
 * Contract (used by point-to-point and collectives alike):
 *  - A valid datatype is predefined or a committed derived type.
 *  - Data of `count` elements of `dt` at `buf` is either one contiguous block
 *    of count * size bytes starting at buf + true_lb (tern_datatype_is_contig)
 *    or must be packed/unpacked.
 *  - The packed form of (count, dt) is count * size bytes, elements in type
 *    map order, no padding: what goes over the wire.
 * Predefined handles carry their extent in bits 8-15 (include/mpi.h).
 * Derived handles are 0x8c000000 | index (dtype_internal.h has the loop
 * description); an uncommitted or freed derived type is not valid here:
 * the MPI layer reports MPI_ERR_TYPE for it. The size/extent functions
 * return -1 for invalid handles (check tern_datatype_is_valid first: a
 * resized derived type may have a negative extent). */
#ifndef TERN_CORE_DATATYPE_H
#define TERN_CORE_DATATYPE_H

#include "base/status.h"
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

int tern_datatype_is_valid(MPI_Datatype dt);
/* Size in bytes of a valid datatype (data only), -1 if the handle is not
 * one: tern_datatype_size (inline below), which calls this one for the
 * types tern_datatype_is_plain does not take. */
long tern_datatype_size_any(MPI_Datatype dt);
/* Extent: the bytes one element spans in memory (padding included). */
long tern_datatype_extent(MPI_Datatype dt);
/* Name for messages ("MPI_INT"), or NULL if unknown. */
const char *tern_datatype_name(MPI_Datatype dt);
/* MPI_Type_get_name / set_name: a predefined type may be renamed (its
 * standard name stays in messages); set returns 0 if dt is not predefined. */
const char *tern_datatype_user_name(MPI_Datatype dt);
int tern_datatype_set_predefined_name(MPI_Datatype dt, const char *name);

/* 1 if count elements of dt form one block of count * size bytes at
 * buf + true_lb (true for every predefined type without padding). */
int tern_datatype_is_contig(MPI_Datatype dt);
/* Offset of the first byte of data from buf (0 for predefined types). */
MPI_Aint tern_datatype_true_lb(MPI_Datatype dt);
/* Bytes of the packed form of count elements. */
size_t tern_datatype_packed_size(MPI_Datatype dt, size_t count);

/* What the point-to-point entry points need to know about a type, from one
 * decode of its handle (they used to look it up five or six times per
 * call). */
typedef struct {
    long size;       /* bytes of data per element */
    long extent;     /* bytes one element spans in memory */
    MPI_Aint true_lb;
    int contig;      /* as tern_datatype_is_contig */
    int predefined;
} tern_dt_desc_t;
/* Fills *d and returns 1 for a valid datatype; returns 0 otherwise. */
int tern_datatype_describe(MPI_Datatype dt, tern_dt_desc_t *d);
/* Every predefined handle at its key (datatype.c), 0 elsewhere. */
extern const uint32_t tern_dt_handle_by_key[512];
/* 1 when dt is a predefined type of the 0x4c00SSII form (all but the pair
 * types of MINLOC/MAXLOC): SS bytes of data and of extent, contiguous,
 * true_lb 0. Inline and without a call: the argument checks and the fast
 * paths of one-sided calls test it before anything else. */
static inline int tern_datatype_is_plain(MPI_Datatype dt)
{
    const uint32_t h = (uint32_t)dt;
    return (h & 0xffff0000u) == 0x4c000000u && tern_dt_handle_by_key[h & 0xffu] == h;
}
/* The size of a type tern_datatype_is_plain accepts. */
static inline long tern_datatype_plain_size(MPI_Datatype dt)
{
    return (long)(((uint32_t)dt >> 8) & 0xffu);
}
static inline long tern_datatype_size(MPI_Datatype dt)
{
    if (__builtin_expect(tern_datatype_is_plain(dt), 1))
        return tern_datatype_plain_size(dt);
    return tern_datatype_size_any(dt);
}
/* Pack count elements at buf into out (packed_size bytes). */
tern_status_t tern_datatype_pack(const void *buf, size_t count, MPI_Datatype dt, void *out);
/* Unpack in_bytes of packed data into count elements at buf; in_bytes may be
 * less than the full packed size (a short message): only whole or partial
 * elements that arrived are written. */
tern_status_t tern_datatype_unpack(const void *in, size_t in_bytes, void *buf, size_t count,
                                   MPI_Datatype dt);
/* The one predefined type every element of dt is made of (for reductions),
 * or MPI_DATATYPE_NULL when dt mixes types. */
MPI_Datatype tern_datatype_basic(MPI_Datatype dt);

/* --- Beyond the contract: the engine for transports and the MPI layer. -- */

int tern_datatype_is_predefined_any(MPI_Datatype dt);
/* Inline for the plain types (tern_datatype_is_plain), as the size. */
static inline int tern_datatype_is_predefined(MPI_Datatype dt)
{
    return tern_datatype_is_plain(dt) || tern_datatype_is_predefined_any(dt);
}
/* Pack / unpack the byte range [offset, offset + len) of the packed stream
 * of count elements: a transport fills one queue cell or one rendezvous
 * fragment at a time, with no full-size intermediate buffer. The offset is
 * the resumable cursor (a seek costs O(depth * log blocks)). */
tern_status_t tern_datatype_pack_range(const void *buf, size_t count, MPI_Datatype dt,
                                       size_t offset, void *out, size_t len);
tern_status_t tern_datatype_unpack_range(const void *in, size_t len, void *buf, size_t count,
                                         MPI_Datatype dt, size_t offset);
/* Basic elements in the first `bytes` of the packed stream of dt
 * (MPI_Get_elements), or -1 if dt is not valid or the bytes end inside a
 * basic element (a type-signature mismatch: MPI_UNDEFINED, as in Open
 * MPI). */
long long tern_datatype_elements(MPI_Datatype dt, size_t bytes);
/* The inverse (MPI_Status_set_elements): *bytes gets the bytes of the
 * packed stream of dt that hold `count` basic elements, so that
 * tern_datatype_elements gives count back. -1 if dt is not valid, -2 if dt
 * has no basic elements and count is not 0, -3 if the bytes are past
 * INT64_MAX. */
int tern_datatype_elements_bytes(MPI_Datatype dt, unsigned long long count, size_t *bytes);
/* The memory layout of count elements of dt, in packed-stream order: the
 * byte pieces (offset from the buffer, length), adjacent pieces merged
 * (one-sided communication ships a target type as this list). *segs is
 * malloc'ed (NULL when there is no data). */
typedef struct tern_dt_seg {
    MPI_Aint offset;
    size_t len;
} tern_dt_seg_t;
tern_status_t tern_datatype_flatten(size_t count, MPI_Datatype dt, tern_dt_seg_t **segs,
                                    size_t *nsegs);
/* Keep a derived type alive while a request uses it (no-op for predefined
 * types); MPI_Type_free releases the user's reference. */
void tern_datatype_retain(MPI_Datatype dt);
void tern_datatype_release(MPI_Datatype dt);

#endif
