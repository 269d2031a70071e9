/* C half of f_attr: reads attributes Fortran set (MPI-4.1 19.3.7: C gets a
 * pointer to MPI's storage of the integer, Example 19.16) and sets one
 * Fortran reads (Fortran gets the pointer's address). */
#include <mpi.h>
#include <stdio.h>

/* The attribute keyval of comm (a Fortran handle) must read, through the
 * pointer C gets, as expected; 1 added to *errs otherwise. */
void c_read_aint_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *expected, MPI_Fint *errs);
void c_read_aint_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *expected, MPI_Fint *errs)
{
    MPI_Aint *v = NULL;
    int flag = 0;
    MPI_Comm_get_attr(MPI_Comm_f2c(*fcomm), *keyval, &v, &flag);
    if (!flag || !v || *v != *expected) {
        fprintf(stderr, "c_read_aint: flag %d, value %ld, expected %ld\n", flag,
                v ? (long)*v : -1L, (long)*expected);
        ++*errs;
    }
}

/* The same through MPI-1's MPI_Attr_get, an INTEGER value. */
void c_read_int_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Fint *expected, MPI_Fint *errs);
void c_read_int_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Fint *expected, MPI_Fint *errs)
{
    MPI_Fint *v = NULL;
    int flag = 0;
    MPI_Attr_get(MPI_Comm_f2c(*fcomm), *keyval, &v, &flag);
    if (!flag || !v || *v != *expected) {
        fprintf(stderr, "c_read_int: flag %d, value %d, expected %d\n", flag, v ? (int)*v : -1,
                (int)*expected);
        ++*errs;
    }
}

/* C sets a pointer; *addr is its address, as Fortran must read it. */
static int c_target = 42;
void c_set_ptr_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *addr);
void c_set_ptr_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *addr)
{
    MPI_Comm_set_attr(MPI_Comm_f2c(*fcomm), *keyval, &c_target);
    *addr = (MPI_Aint)&c_target;
}
