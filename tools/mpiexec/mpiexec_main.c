/* mpiexec: the command line (options.c), then the job. */
#include "mpiexec.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* tern-profile in the source tree, for mpiexec run from the build tree
 * (CMake); once installed it lies beside mpiexec. */
#ifndef TERN_PROFILE_SCRIPT
#define TERN_PROFILE_SCRIPT ""
#endif

/* Pipes and sockets created later must not land on 0, 1 or 2. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0) {
            int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (nfd >= 0 && nfd != fd) {
                dup2(nfd, fd);
                close(nfd);
            }
        }
    }
}

static int run(mpiexec_opts_t *opts_p);

/* The tern-profile script: beside this program, else the source tree's. */
static int find_tern_profile(char *path, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            snprintf(path, len, "%s/tern-profile", self);
            if (access(path, X_OK) == 0)
                return 0;
        }
    }
    snprintf(path, len, "%s", TERN_PROFILE_SCRIPT);
    return path[0] && access(path, R_OK) == 0 ? 0 : -1;
}

/* --profile DIR: after the job, tern-profile DIR draws DIR/profile.png
 * from the DIR/profile.json the ranks wrote. The job's exit status stays
 * mpiexec's, whatever the drawing does. */
static void draw_profile(const char *dir)
{
    char json[PATH_MAX + 32], script[PATH_MAX + 32];
    struct stat st;
    snprintf(json, sizeof json, "%s/profile.json", dir);
    if (stat(json, &st) != 0) {
        fprintf(stderr, "mpiexec: --profile: the job wrote no %s (did it call MPI_Finalize?)\n",
                json);
        return;
    }
    if (find_tern_profile(script, sizeof script) != 0) {
        fprintf(stderr, "mpiexec: --profile: tern-profile not found; %s is kept\n", json);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("python3", "python3", script, dir, (char *)NULL);
        fprintf(stderr, "mpiexec: --profile: cannot run python3 %s; %s is kept\n", script, json);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        fprintf(stderr, "mpiexec: --profile: cannot run tern-profile; %s is kept\n", json);
}

int main(int argc, char **argv)
{
    mpiexec_opts_t opts = {0};
    int rc = mpiexec_parse_args(argc, argv, &opts);
    if (rc != 0)
        return rc > 0 ? 0 : rc == -2 ? 1 : 2;
    ensure_std_fds();
    mpiexec_output_open();
    /* --profile's directory is drawn after the job: taken out of the
     * options, which run() frees. */
    char *profile = opts.profile;
    opts.profile = NULL;
    rc = run(&opts);
    mpiexec_output_close();
    if (profile && !opts.proxy)
        draw_profile(profile);
    free(profile);
    return rc;
}

static int run(mpiexec_opts_t *opts_p)
{
    mpiexec_opts_t opts = *opts_p;
    int rc;
    if (!opts.proxy && mpiexec_slurm_hosts(&opts) != 0)
        return 2;
    if (opts.n_hosts > 0 && !opts.proxy) {
        rc = mpiexec_root_run(&opts);
        mpiexec_opts_free(&opts);
        return rc;
    }

    mpiexec_job_t job;
    if (mpiexec_job_init(&job, &opts) != TERN_OK) {
        fprintf(stderr, "mpiexec: cannot set up the job\n");
        return 1;
    }
    if (opts.bind_core && job.n > 0 && mpiexec_bind_cores(job.n, &job.bind_sets) != TERN_OK) {
        fprintf(stderr, "mpiexec: cannot compute core binding with hwloc\n");
        mpiexec_job_free(&job);
        return 1;
    }
    if (opts.proxy && mpiexec_proxy_connect(&job) != TERN_OK) {
        mpiexec_job_free(&job);
        return 1;
    }
    if (mpiexec_launch(&job) != TERN_OK) {
        mpiexec_job_kill_all(&job);
        mpiexec_job_free(&job);
        return 127;
    }
    rc = mpiexec_job_run(&job);
    mpiexec_job_free(&job);
    mpiexec_opts_free(&opts);
    return rc;
}
