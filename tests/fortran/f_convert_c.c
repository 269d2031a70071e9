/* C half of f_convert: called from Fortran with Fortran handles and a
 * Fortran status, converts them with MPI_<H>_f2c and MPI_Status_f2c, uses
 * the C handles, and hands back new objects with MPI_<H>_c2f and a status
 * with MPI_Status_c2f. Returns the number of mismatches in *errs. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

void c_check_(MPI_Fint *fcomm, MPI_Fint *ftype, MPI_Fint *fgroup, MPI_Fint *finfo, MPI_Fint *fop,
              MPI_Fint *fstatus, MPI_Fint *newcomm, MPI_Fint *newtype, MPI_Fint *outstatus,
              MPI_Fint *errs);
void c_check_(MPI_Fint *fcomm, MPI_Fint *ftype, MPI_Fint *fgroup, MPI_Fint *finfo, MPI_Fint *fop,
              MPI_Fint *fstatus, MPI_Fint *newcomm, MPI_Fint *newtype, MPI_Fint *outstatus,
              MPI_Fint *errs)
{
    int e = 0, size = 0, wsize = 0, flag = 0, count = 0;
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || size != wsize)
        e++, fprintf(stderr, "c_check: communicator size %d\n", size);
    MPI_Datatype type = MPI_Type_f2c(*ftype);
    if (MPI_Type_size(type, &size) != MPI_SUCCESS || size != 3 * 8)
        e++, fprintf(stderr, "c_check: type size %d\n", size);
    MPI_Group group = MPI_Group_f2c(*fgroup);
    if (MPI_Group_size(group, &size) != MPI_SUCCESS || size != wsize)
        e++, fprintf(stderr, "c_check: group size %d\n", size);
    char value[32] = "";
    MPI_Info info = MPI_Info_f2c(*finfo);
    if (MPI_Info_get(info, "from", sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag ||
        strcmp(value, "fortran") != 0)
        e++, fprintf(stderr, "c_check: info value '%s'\n", value);
    if (MPI_Op_f2c(*fop) != MPI_SUM)
        e++, fprintf(stderr, "c_check: MPI_SUM changed\n");
    /* The Fortran status of a received message. */
    MPI_Status st;
    if (MPI_Status_f2c(fstatus, &st) != MPI_SUCCESS || st.MPI_TAG != 21 ||
        MPI_Get_count(&st, MPI_INTEGER, &count) != MPI_SUCCESS || count != 2)
        e++, fprintf(stderr, "c_check: status tag %d count %d\n", st.MPI_TAG, count);
    /* New objects for Fortran. */
    MPI_Comm dup;
    MPI_Comm_dup(comm, &dup);
    MPI_Comm_set_name(dup, "made in C");
    *newcomm = MPI_Comm_c2f(dup);
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INTEGER, &two);
    MPI_Type_commit(&two);
    *newtype = MPI_Type_c2f(two);
    MPI_Status made = {0};
    made.MPI_SOURCE = 5;
    made.MPI_TAG = 77;
    MPI_Status_set_elements(&made, MPI_INTEGER, 3);
    if (MPI_Status_c2f(&made, outstatus) != MPI_SUCCESS)
        e++;
    *errs = e;
}
