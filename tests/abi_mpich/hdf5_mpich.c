/* Debian's binary parallel HDF5 (libhdf5-mpich-dev: libhdf5.so built
 * against MPICH) on Tern's libmpich.so.12. Every rank writes its rows of
 * a 2-D dataset collectively (MPI-IO underneath), the file is closed,
 * reopened and read back whole by every rank, and each value is checked;
 * an attribute too. argv[1] is the directory of the libmpich.so.12 that
 * must be the one loaded, argv[2] a scratch directory. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 5
#define COLS 7

static int rank, size;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__,     \
                    #cond);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static void check_loaded(const char *dir)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], want[4096];
    snprintf(want, sizeof want, "%s/libmpich.so.12", dir);
    char *real = realpath(want, NULL);
    CHECK(f && real);
    int tern = 0, other = 0;
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, "libmpich.so"))
            continue;
        path[strcspn(path, "\n")] = '\0';
        if (!strcmp(path, real))
            tern = 1;
        else
            other = 1;
    }
    fclose(f);
    free(real);
    CHECK(tern && !other);
}

static double value(int row, int col) { return row * 1000.0 + col + 0.25; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 3);
    check_loaded(argv[1]);
    char path[4096];
    snprintf(path, sizeof path, "%s/hdf5_mpich.h5", argv[2]);

    /* Write: rank r owns rows r*ROWS .. r*ROWS+ROWS-1. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0);
    hsize_t dims[2] = {(hsize_t)size * ROWS, COLS};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    CHECK(dset >= 0);
    hsize_t start[2] = {(hsize_t)rank * ROWS, 0}, count[2] = {ROWS, COLS};
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    hid_t mem = H5Screate_simple(2, count, NULL);
    double mine[ROWS][COLS];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            mine[i][j] = value(rank * ROWS + i, j);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    CHECK(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE) >= 0);
    CHECK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, xfer, mine) >= 0);
    int nranks = size;
    hid_t ascalar = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(dset, "ranks", H5T_NATIVE_INT, ascalar, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(attr >= 0 && H5Awrite(attr, H5T_NATIVE_INT, &nranks) >= 0);
    H5Aclose(attr);
    H5Sclose(ascalar);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(dset);
    H5Pclose(xfer);
    CHECK(H5Fclose(file) >= 0);

    /* Read back: every rank reads the whole grid. */
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    CHECK(file >= 0);
    dset = H5Dopen2(file, "grid", H5P_DEFAULT);
    CHECK(dset >= 0);
    space = H5Dget_space(dset);
    hsize_t got_dims[2];
    CHECK(H5Sget_simple_extent_dims(space, got_dims, NULL) == 2);
    CHECK(got_dims[0] == (hsize_t)size * ROWS && got_dims[1] == COLS);
    double *all = malloc(sizeof(double) * (size_t)size * ROWS * COLS);
    xfer = H5Pcreate(H5P_DATASET_XFER);
    CHECK(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE) >= 0);
    CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, xfer, all) >= 0);
    for (int i = 0; i < size * ROWS; i++)
        for (int j = 0; j < COLS; j++)
            CHECK(all[i * COLS + j] == value(i, j));
    attr = H5Aopen(dset, "ranks", H5P_DEFAULT);
    int got_ranks = -1;
    CHECK(attr >= 0 && H5Aread(attr, H5T_NATIVE_INT, &got_ranks) >= 0 && got_ranks == size);
    H5Aclose(attr);
    free(all);
    H5Pclose(xfer);
    H5Sclose(space);
    H5Dclose(dset);
    CHECK(H5Fclose(file) >= 0);
    H5Pclose(fapl);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        remove(path);
        printf("hdf5_mpich: %d ranks wrote and read back %d values\n", size, size * ROWS * COLS);
    }
    MPI_Finalize();
    return 0;
}
