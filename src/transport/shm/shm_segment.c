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

/* Reserves every page of the file (tmpfs allocates them at once; ENOSPC now
 * instead of SIGBUS at the first touch of a page it cannot allocate). */
static int segment_reserve(int fd, size_t size)
{
    int err;
    do
        err = posix_fallocate(fd, 0, (off_t)size);
    while (err == EINTR);
    return err;
}

tern_status_t tern_shm_segment_create(tern_shm_segment_t *seg, const char *name, size_t size, int *err_p)
{
    memset(seg, 0, sizeof *seg);
    snprintf(seg->name, sizeof seg->name, "%s", name);
    *err_p = 0;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Left over from an earlier job with the same id. */
        tern_warn("shared-memory segment %s exists; replacing it", name);
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0) {
        *err_p = errno;
        if (errno == ENOSPC) /* no inode left */
            return TERN_ERR_NO_ROOM;
        tern_error("shm_open(%s, O_CREAT): %s", name, strerror(errno));
        return TERN_ERR_IO;
    }
    seg->owner = 1;
    seg->linked = 1;
    tern_status_t st = TERN_OK;
    int err = segment_reserve(fd, size);
    if (err != 0) {
        *err_p = err;
        if (err == ENOSPC || err == ENOMEM || err == EFBIG) {
            st = TERN_ERR_NO_ROOM;
        } else {
            tern_error("posix_fallocate(%s, %zu bytes): %s", name, size, strerror(err));
            st = TERN_ERR_IO;
        }
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

/* Local rank 0's outcome, for the node's other ranks. */
static tern_status_t outcome_key(char *key, size_t len, int node)
{
    int n = snprintf(key, len, "tern-shm-%d", node);
    return n > 0 && (size_t)n < len ? TERN_OK : TERN_ERR_INTERNAL;
}

static tern_status_t outcome_publish(int node, tern_status_t st, const tern_shm_segment_t *seg)
{
    char key[32], value[32];
    tern_status_t kst = outcome_key(key, sizeof key, node);
    if (kst != TERN_OK)
        return kst;
    if (st != TERN_OK)
        snprintf(value, sizeof value, "failed-%d", (int)st);
    else
        snprintf(value, sizeof value, "%s", seg->base != NULL ? "mapped" : "none");
    return tern_pmi_put(key, value);
}

/* TERN_OK and *mapped: attach; TERN_OK and !*mapped: no segment; else the
 * status local rank 0 failed with (it said why). */
static tern_status_t outcome_read(int node, int *mapped)
{
    char key[32], value[32];
    tern_status_t st = outcome_key(key, sizeof key, node);
    if (st == TERN_OK)
        st = tern_pmi_get(key, value, sizeof value);
    if (st != TERN_OK) {
        tern_error("shared memory: cannot read local rank 0's outcome (PMI key %s): %s", key,
                   tern_status_string(st));
        return st;
    }
    *mapped = strcmp(value, "mapped") == 0;
    if (*mapped || strcmp(value, "none") == 0)
        return TERN_OK;
    int code;
    if (sscanf(value, "failed-%d", &code) == 1 && code > TERN_OK && code < TERN_STATUS_COUNT) {
        /* Rank 0 has said why; a word here, not a misleading shm_open error. */
        return tern_status_detail((tern_status_t)code,
                                  "local rank 0 could not set up this node's shared-memory segment (%s; its "
                                  "message says why)",
                                  tern_status_string((tern_status_t)code));
    }
    tern_error("shared memory: unexpected outcome '%s' under PMI key %s", value, key);
    return TERN_ERR_INTERNAL;
}

tern_status_t tern_shm_segment_setup(const tern_tl_params_t *params, tern_shm_segment_create_fn create,
                                     tern_shm_segment_fn attached, void *arg, tern_shm_segment_t *seg)
{
    char name[256];
    tern_status_t st = TERN_OK, fst;
    int use = params->local_size > 1, mapped = 0;

    memset(seg, 0, sizeof *seg);
    if (use)
        st = tern_shm_segment_name(name, sizeof name, params->job_id, params->node);
    if (use && params->local_rank == 0) {
        if (st == TERN_OK)
            st = create != NULL ? create(seg, name, arg) : TERN_ERR_ARG;
        tern_status_t pst = outcome_publish(params->node, st, seg);
        if (st == TERN_OK)
            st = pst;
        mapped = seg->base != NULL;
    }

    fst = tern_pmi_fence();
    if (fst != TERN_OK && st == TERN_OK)
        st = fst;

    if (use && st == TERN_OK && params->local_rank != 0) {
        st = outcome_read(params->node, &mapped);
        if (st == TERN_OK && mapped)
            st = tern_shm_segment_attach(seg, name);
    }
    if (use && st == TERN_OK && mapped && attached != NULL)
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
