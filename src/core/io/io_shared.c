/* The shared file pointer (io_shared.h). */
#include "core/io/io_shared.h"
#include "core/coll/coll.h"
#include "core/coll/shm_region.h"
#include "core/comm/comm_query.h"
#include "core/rma/rma_ops.h"
#include "core/rma/rma_sync.h"
#include "core/rma/window.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void word_name(char *buf, size_t len, const tern_file_t *f)
{
    tern_shm_comm_name(buf, len, f->comm, "sp");
}

/* Maps the word (create: making it, zero, if no rank has yet). Without
 * create, a word no rank made leaves f->shared_word NULL: the pointer is
 * still at 0. */
static tern_status_t word_map(tern_file_t *f, int create)
{
    if (f->shared_word)
        return TERN_OK;
    char name[320];
    word_name(name, sizeof name, f);
    int fd = shm_open(name, O_RDWR | (create ? O_CREAT : 0), 0600);
    if (fd < 0 && !create && errno == ENOENT)
        return TERN_OK;
    if (fd < 0)
        return tern_status_detail(TERN_ERR_IO, "file '%s': shared file pointer: shm_open(%s): "
                                  "%s", f->name, name, strerror(errno));
    /* posix_fallocate, not ftruncate: the page is reserved now (no touch
     * can die of SIGBUS), and it never clears a word another rank made. */
    int err = posix_fallocate(fd, 0, sizeof(MPI_Offset));
    void *p = err ? MAP_FAILED
                  : mmap(NULL, sizeof(MPI_Offset), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!err && p == MAP_FAILED)
        err = errno;
    close(fd);
    if (err)
        return tern_status_detail(err == ENOSPC ? TERN_ERR_NO_SPACE : TERN_ERR_IO,
                                  "file '%s': shared file pointer %s: %s", f->name, name,
                                  strerror(err));
    f->shared_word = p;
    return TERN_OK;
}

static void word_unmap(tern_file_t *f, int unlink)
{
    if (f->shared_word)
        munmap(f->shared_word, sizeof(MPI_Offset));
    f->shared_word = NULL;
    if (unlink) {
        char name[320];
        word_name(name, sizeof name, f);
        shm_unlink(name); /* ENOENT: no rank used the pointer */
    }
}

tern_status_t tern_io_shared_open(tern_file_t *f)
{
    f->shared_win = NULL;
    f->shared_word = NULL;
    if (tern_comm_one_node(f->comm))
        return TERN_OK;
    MPI_Offset *base = NULL;
    MPI_Win win;
    tern_status_t st = tern_win_allocate(f->comm->rank == 0 ? (MPI_Aint)sizeof(MPI_Offset) : 0,
                                         TERN_NUM((int)sizeof(MPI_Offset)), MPI_INFO_NULL, f->comm,
                                         &base, &win);
    if (st != TERN_OK)
        return st;
    /* Only rank 0's window holds the pointer: the others' are empty
     * (across hosts a 1-byte allocation). */
    if (f->comm->rank == 0 && base)
        *base = 0;
    f->shared_win = tern_win_lookup(win);
    /* Its communicator meets only in the window's free: a barrier, which
     * would create a shm region for that alone. */
    tern_shm_coll_off(f->shared_win->comm);
    return tern_coll_barrier(f->comm);
}

tern_status_t tern_io_shared_fetch_add(tern_file_t *f, MPI_Offset n, MPI_Offset *old)
{
    tern_win_t *w = f->shared_win;
    if (!w) {
        tern_status_t st = word_map(f, 1);
        if (st == TERN_OK)
            *old = __atomic_fetch_add(f->shared_word, n, __ATOMIC_ACQ_REL);
        return st;
    }
    tern_status_t st = tern_win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
    if (st != TERN_OK)
        return st;
    st = tern_rma_fetch_and_op(&n, old, MPI_OFFSET, 0, 0, n ? MPI_SUM : MPI_NO_OP, w);
    tern_status_t ust = tern_win_unlock(0, w);
    return st != TERN_OK ? st : ust;
}

tern_status_t tern_io_shared_set(tern_file_t *f, MPI_Offset value)
{
    /* No barrier before: every caller has just agreed (an allreduce, which
     * no rank leaves before every rank has entered it), so every earlier
     * access of the pointer is done before rank 0 writes. */
    tern_status_t st = TERN_OK;
    if (f->comm->rank == 0) {
        if (f->shared_win)
            *(MPI_Offset *)f->shared_win->base = value;
        /* A set to 0 of a word no rank made (set_view's, mostly) has
         * nothing to do: make none. */
        else if ((st = word_map(f, value != 0)) == TERN_OK && f->shared_word)
            __atomic_store_n(f->shared_word, value, __ATOMIC_RELEASE);
    }
    tern_status_t bst = tern_coll_barrier(f->comm);
    return st != TERN_OK ? st : bst;
}

tern_status_t tern_io_shared_revoke(tern_file_t *f)
{
    return f->shared_win ? tern_win_revoke(f->shared_win) : TERN_OK;
}

tern_status_t tern_io_shared_close(tern_file_t *f)
{
    tern_win_t *w = f->shared_win;
    if (w) {
        if (f->comm->revoked) /* its window's revocation may still be on its way */
            (void)tern_win_revoke(w);
        MPI_Win h = w->handle;
        f->shared_win = NULL;
        return tern_win_free(w, &h);
    }
    if (f->comm->revoked) {
        word_unmap(f, 1);
        return TERN_OK;
    }
    /* After close's agreement no rank uses the word again. */
    word_unmap(f, f->comm->rank == 0);
    return TERN_OK;
}

void tern_io_shared_forget(tern_file_t *f)
{
    word_unmap(f, 1);
    f->shared_win = NULL;
}
