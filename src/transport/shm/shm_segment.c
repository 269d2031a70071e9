/* Node-wide POSIX shared-memory segment: create, attach, unlink. */
#include "transport/shm/shm_segment.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

tern_status_t tern_shm_segment_name(char *buf, size_t len, const char *job_id, int node)
{
    int n = snprintf(buf, len, "/tern-%s-shm-%d", job_id ? job_id : "nojob", node);
    if (n < 0 || (size_t)n >= len || n > 255) {
        tern_error("shared-memory segment name for job %s is too long", job_id);
        return TERN_ERR_ARG;
    }
    for (char *p = buf + 1; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-'))
            *p = '_';
    }
    return TERN_OK;
}

static tern_status_t segment_map(tern_shm_segment_t *seg, int fd, size_t size)
{
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        tern_error("mmap of shared-memory segment %s (%zu bytes): %s", seg->name, size, strerror(errno));
        return TERN_ERR_NOMEM;
    }
    seg->base = base;
    seg->size = size;
    return TERN_OK;
}

tern_status_t tern_shm_segment_create(tern_shm_segment_t *seg, const char *name, size_t size)
{
    memset(seg, 0, sizeof *seg);
    snprintf(seg->name, sizeof seg->name, "%s", name);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Left over from an earlier job with the same id. */
        tern_warn("shared-memory segment %s exists; replacing it", name);
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0) {
        tern_error("shm_open(%s, O_CREAT): %s", name, strerror(errno));
        return TERN_ERR_IO;
    }
    seg->owner = 1;
    seg->linked = 1;
    tern_status_t st = TERN_OK;
    if (ftruncate(fd, (off_t)size) != 0) {
        tern_error("ftruncate(%s, %zu): %s", name, size, strerror(errno));
        st = TERN_ERR_NOMEM;
        goto err_unlink;
    }
    st = segment_map(seg, fd, size);
    if (st != TERN_OK)
        goto err_unlink;
    close(fd);
    return TERN_OK;

err_unlink:
    close(fd);
    tern_shm_segment_unlink(seg);
    return st;
}

tern_status_t tern_shm_segment_attach(tern_shm_segment_t *seg, const char *name)
{
    memset(seg, 0, sizeof *seg);
    snprintf(seg->name, sizeof seg->name, "%s", name);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        tern_error("shm_open(%s): %s", name, strerror(errno));
        return TERN_ERR_IO;
    }
    struct stat sb;
    tern_status_t st;
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0) {
        tern_error("shared-memory segment %s: cannot read its size", name);
        st = TERN_ERR_IO;
    } else {
        st = segment_map(seg, fd, (size_t)sb.st_size);
    }
    close(fd);
    return st;
}

void tern_shm_segment_unlink(tern_shm_segment_t *seg)
{
    if (seg->owner && seg->linked) {
        if (shm_unlink(seg->name) != 0 && errno != ENOENT)
            tern_warn("shm_unlink(%s): %s", seg->name, strerror(errno));
        seg->linked = 0;
    }
}

void tern_shm_segment_detach(tern_shm_segment_t *seg)
{
    tern_shm_segment_unlink(seg);
    if (seg->base != NULL)
        munmap(seg->base, seg->size);
    seg->base = NULL;
    seg->size = 0;
}

tern_status_t tern_shm_segment_setup(const tern_tl_params_t *params, size_t size,
                                     tern_shm_segment_fn format, tern_shm_segment_fn attached, void *arg,
                                     tern_shm_segment_t *seg)
{
    char name[256];
    tern_status_t st = TERN_OK, fst;
    int use = params->local_size > 1;

    memset(seg, 0, sizeof *seg);
    if (use)
        st = tern_shm_segment_name(name, sizeof name, params->job_id, params->node);
    if (use && st == TERN_OK && params->local_rank == 0) {
        st = size > 0 ? tern_shm_segment_create(seg, name, size) : TERN_ERR_ARG;
        if (st == TERN_OK && format != NULL)
            format(seg->base, seg->size, arg);
    }

    fst = tern_pmi_fence();
    if (fst != TERN_OK && st == TERN_OK)
        st = fst;

    if (use && st == TERN_OK && params->local_rank != 0)
        st = tern_shm_segment_attach(seg, name);
    if (use && st == TERN_OK && attached != NULL)
        attached(seg->base, seg->size, arg);

    fst = tern_pmi_fence();
    if (fst != TERN_OK && st == TERN_OK)
        st = fst;

    /* Unlink at once, whatever happened, so nothing outlives the job. */
    tern_shm_segment_unlink(seg);
    if (st != TERN_OK)
        tern_shm_segment_detach(seg);
    return st;
}
