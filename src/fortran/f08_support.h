/* What the mpi_f08 module's C functions share (src/fortran/gen/f08_wrappers*.c,
 * tools/bindgen/fortran_f08.py): a choice buffer arrives as the CFI descriptor
 * of a TYPE(*), DIMENSION(..) dummy. A contiguous one (or a sentinel such as
 * MPI_IN_PLACE) is its base address; an array section that is not contiguous
 * becomes a derived datatype over the user's, at the section's address, so a
 * nonblocking call works on the user's memory itself, never on a copy
 * (docs/design.md, "Fortran bindings"). */
#ifndef TERN_F08_SUPPORT_H
#define TERN_F08_SUPPORT_H

#include "fortran/fortran_support.h"
#include <ISO_Fortran_binding.h>

typedef struct tern_f08_section {
    void *addr;          /* what the C call gets */
    MPI_Datatype made;   /* the section's datatype, freed after the call */
    void *tmp;           /* a blocking call's copy of the section, or NULL */
    const CFI_cdesc_t *d;
    int copy_out;        /* copy tmp back into the section after the call */
} tern_f08_section_t;

/* How a section the datatype cannot describe may be handled: */
enum {
    TERN_F08_ADDRESS = 1,  /* only its address matters (MPI_Get_address) */
    TERN_F08_COPY_IN = 2,  /* a blocking call: through a contiguous copy */
    TERN_F08_COPY_OUT = 4, /* ... copied back after the call */
};

static inline int tern_f08_in_place(const CFI_cdesc_t *d)
{
    return d->base_addr == &tern_f_in_place_;
}

/* The address of the buffer d; when d is a non-contiguous section, *count
 * and *type (the buffer's count and datatype, NULL when the call has none
 * of the buffer's own) become 1 and a datatype of the section, at the
 * section's address. A section that cannot be described so (no count of
 * its own: v/w collectives; a datatype whose extent is not the array
 * element's) goes, in a blocking call (flags TERN_F08_COPY_*), through a
 * contiguous copy; a nonblocking call gets -1, which tern_f08_raise_*
 * turns into MPI_ERR_BUFFER, with the reason. */
TERN_F_HIDDEN int tern_f08_section(const CFI_cdesc_t *d, MPI_Count *count, MPI_Datatype *type,
                                   int flags, tern_f08_section_t *s, const char *fn,
                                   const char *arg);
TERN_F_HIDDEN void tern_f08_section_done(tern_f08_section_t *s);

/* An error class the binding found itself goes through the error handler
 * of the call's communicator (window); MPI_SUCCESS and the C call's own
 * codes (already handled) pass as they are. */
TERN_F_HIDDEN int tern_f08_raise_comm(MPI_Fint comm, int code);
TERN_F_HIDDEN int tern_f08_raise_win(MPI_Fint win, int code);

#endif
