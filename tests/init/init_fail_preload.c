/* A start that fails after the ofi transport's prepare began loading
 * libfabric in its thread (TERN_OFI_PRELOAD; the shm transport then fails,
 * init_fail_preload.sh makes /dev/shm too small with TERN_SHM_FALLBACK=
 * fail). MPI_Session_init must return the error (class
 * MPI_ERR_NO_MEM, what shm reports for the space; the message is on
 * stderr, the script checks it) with the preload thread joined: this
 * process is down to the threads it had before, and libfabric is mapped (the
 * thread did run). With "init" as argument MPI_Init is called instead,
 * which ends the job (the script checks the exit status). */
#include <mpi.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int libfabric_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, f))
        found |= strstr(line, "/libfabric.so") != NULL;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    const char *rank = getenv("PMI_RANK");
    if (argc > 1 && strcmp(argv[1], "init") == 0) {
        MPI_Init(&argc, &argv);
        printf("rank %s: MPI_Init returned\n", rank);
        MPI_Finalize();
        return 1;
    }
    /* The threads before: a sanitizer's runtime may run one of its own. */
    int before = threads();
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    int n = threads(), mapped = libfabric_mapped();
    int ok = rc != MPI_SUCCESS && cls == MPI_ERR_NO_MEM && n == before && mapped == 1;
    printf("rank %s: MPI_Session_init class %d (want %d), %d threads (want %d), libfabric mapped "
           "%d (want 1): %s\n",
           rank, cls, MPI_ERR_NO_MEM, n, before, mapped, ok ? "ok" : "FAILED");
    fflush(stdout);
    if (rc == MPI_SUCCESS)
        MPI_Session_finalize(&s);
    /* No MPI to meet in: the ranks wait until all have reported (a file
     * each in TERN_TEST_DONE_DIR), since mpiexec ends the job when one
     * exits without MPI_Finalize. */
    const char *dir = getenv("TERN_TEST_DONE_DIR");
    const char *size = getenv("PMI_SIZE");
    if (dir && size && rank) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, rank);
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        if (fd >= 0)
            close(fd);
        for (int i = 0; i < 3000; i++) {
            int n_done = 0;
            DIR *d = opendir(dir);
            struct dirent *e;
            while (d && (e = readdir(d)))
                n_done += e->d_name[0] != '.';
            if (d)
                closedir(d);
            if (n_done >= atoi(size))
                break;
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        }
    }
    return ok ? 0 : 1;
}
