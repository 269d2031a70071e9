/* mpiexec: the command line (options.c), then the job. */
#include "mpiexec.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
    mpiexec_opts_t opts = {0};
    int rc = mpiexec_parse_args(argc, argv, &opts);
    if (rc != 0)
        return rc > 0 ? 0 : rc == -2 ? 1 : 2;
    ensure_std_fds();
    mpiexec_output_open();
    rc = run(&opts);
    mpiexec_output_close();
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
