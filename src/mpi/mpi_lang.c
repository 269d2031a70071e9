/* Language bindings and the ABI queries: see mpi_lang.h. */
#include "mpi/mpi_lang.h"

#include "core/info/info.h"

#include <stdatomic.h>
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

/* A new info holding n key/value pairs. */
static tern_status_t info_of(const char *const (*pairs)[2], size_t n, MPI_Info *info)
{
    MPI_Info h;
    tern_status_t st = tern_info_create(&h);
    if (st != TERN_OK)
        return st;
    tern_info_t *obj = tern_info_lookup(h);
    for (size_t i = 0; i < n && st == TERN_OK; i++)
        st = tern_info_set(obj, pairs[i][0], pairs[i][1]);
    if (st != TERN_OK) {
        tern_info_free(h);
        return st;
    }
    *info = h;
    return TERN_OK;
}

tern_status_t tern_lang_abi_info(MPI_Info *info)
{
    _Static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Count) == 8 && sizeof(MPI_Offset) == 8,
                   "the sizes below are the types'");
    static const char *const pairs[][2] = {
        {"mpi_aint_size", "8"}, {"mpi_count_size", "8"}, {"mpi_offset_size", "8"}};
    return info_of(pairs, sizeof pairs / sizeof pairs[0], info);
}

/* Tern's Fortran ABI: the sizes (also MPI_Type_size of MPI_LOGICAL...) and
 * the optional types mpi.h defines. */
static const char *const fortran_abi[][2] = {
    {"mpi_logical_size", "4"},          {"mpi_integer_size", "4"},
    {"mpi_real_size", "4"},             {"mpi_double_precision_size", "8"},
    {"mpi_logical1_supported", "false"}, {"mpi_logical2_supported", "false"},
    {"mpi_logical4_supported", "false"}, {"mpi_logical8_supported", "false"},
    {"mpi_logical16_supported", "false"}, {"mpi_integer1_supported", "true"},
    {"mpi_integer2_supported", "true"}, {"mpi_integer4_supported", "true"},
    {"mpi_integer8_supported", "true"}, {"mpi_integer16_supported", "false"},
    {"mpi_real2_supported", "false"},   {"mpi_real4_supported", "true"},
    {"mpi_real8_supported", "true"},    {"mpi_real16_supported", "true"},
    {"mpi_complex4_supported", "false"}, {"mpi_complex8_supported", "true"},
    {"mpi_complex16_supported", "true"}, {"mpi_complex32_supported", "true"},
    {"mpi_double_complex_supported", "true"},
};
#define N_FORTRAN_ABI (sizeof fortran_abi / sizeof fortran_abi[0])

tern_status_t tern_lang_abi_fortran_info(MPI_Info *info)
{
    return info_of(fortran_abi, N_FORTRAN_ABI, info);
}

/* Only the first successful set counts (MPI-5.0 21.4.1). */
static atomic_int fortran_info_set, fortran_booleans_set;

tern_status_t tern_lang_abi_set_fortran_info(MPI_Info info)
{
    if (atomic_load(&fortran_info_set))
        return tern_status_detail(TERN_ERR_ABI, "the Fortran info was set already");
    const tern_info_t *obj = tern_info_lookup(info);
    /* Only the sizes matter: they are what the library uses. */
    for (size_t i = 0; i < 4; i++) {
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        tern_status_t st =
            tern_info_get_value(obj, fortran_abi[i][0], (int)sizeof value - 1, value, &flag);
        if (st != TERN_OK)
            return st;
        if (flag && strcmp(value, fortran_abi[i][1]) != 0)
            return tern_status_detail(TERN_ERR_ABI,
                                      "info key %s is \"%s\", Tern's Fortran bindings have %s",
                                      fortran_abi[i][0], value, fortran_abi[i][1]);
    }
    int expected = 0;
    if (!atomic_compare_exchange_strong(&fortran_info_set, &expected, 1))
        return tern_status_detail(TERN_ERR_ABI, "the Fortran info was set already");
    return TERN_OK;
}

static tern_status_t check_logical_size(int logical_size)
{
    if (logical_size <= 0 || logical_size > 16 || (logical_size & (logical_size - 1)))
        return tern_status_detail(TERN_ERR_ARG,
                                  "logical_size %d is not a power of two up to 16", logical_size);
    return TERN_OK;
}

/* A LOGICAL of n bytes holding v: gfortran stores it as an integer. */
static void logical_store(void *dst, int n, int v)
{
    unsigned char bytes[16] = {0};
    int one = 1;
    int little = *(const unsigned char *)&one == 1;
    bytes[little ? 0 : n - 1] = (unsigned char)v;
    memcpy(dst, bytes, (size_t)n);
}

tern_status_t tern_lang_abi_fortran_booleans(int logical_size, void *logical_true,
                                             void *logical_false, int *is_set)
{
    tern_status_t st = check_logical_size(logical_size);
    if (st != TERN_OK)
        return st;
    logical_store(logical_true, logical_size, 1);
    logical_store(logical_false, logical_size, 0);
    *is_set = 1;
    return TERN_OK;
}

tern_status_t tern_lang_abi_set_fortran_booleans(int logical_size, const void *logical_true,
                                                 const void *logical_false)
{
    if (atomic_load(&fortran_booleans_set))
        return tern_status_detail(TERN_ERR_ABI, "the Fortran booleans were set already");
    tern_status_t st = check_logical_size(logical_size);
    if (st != TERN_OK)
        return st;
    unsigned char t[16], f[16];
    logical_store(t, logical_size, 1);
    logical_store(f, logical_size, 0);
    if (memcmp(t, logical_true, (size_t)logical_size) != 0 ||
        memcmp(f, logical_false, (size_t)logical_size) != 0)
        return tern_status_detail(TERN_ERR_ABI,
                                  "LOGICAL(%d) .TRUE. and .FALSE. are 1 and 0 in Tern's Fortran "
                                  "bindings; the values given differ",
                                  logical_size);
    int expected = 0;
    if (!atomic_compare_exchange_strong(&fortran_booleans_set, &expected, 1))
        return tern_status_detail(TERN_ERR_ABI, "the Fortran booleans were set already");
    return TERN_OK;
}
