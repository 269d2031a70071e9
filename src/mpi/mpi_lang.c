/* Language bindings and the ABI queries: see mpi_lang.h. */
#include "mpi/mpi_lang.h"

#include <string.h>

tern_status_t tern_lang_status_copy(void *dst, const void *src)
{
    memmove(dst, src, sizeof(MPI_Status));
    return TERN_OK;
}

tern_status_t tern_lang_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const struct {
        int typeclass, size;
        MPI_Datatype type;
    } sized[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},       {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},     {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++)
        if (sized[i].typeclass == typeclass && sized[i].size == size) {
            *datatype = sized[i].type;
            return TERN_OK;
        }
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL &&
        typeclass != MPI_TYPECLASS_COMPLEX)
        return tern_status_detail(TERN_ERR_ARG, "typeclass %d is not an MPI_TYPECLASS_ value",
                                  typeclass);
    return tern_status_detail(TERN_ERR_ARG, "no Fortran %s type has %d bytes",
                              typeclass == MPI_TYPECLASS_INTEGER ? "INTEGER"
                              : typeclass == MPI_TYPECLASS_REAL  ? "REAL"
                                                                 : "COMPLEX",
                              size);
}

tern_status_t tern_lang_abi_version(int *major, int *minor)
{
    *major = -1;
    *minor = -1;
    return TERN_OK;
}
