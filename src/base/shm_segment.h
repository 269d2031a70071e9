/* Shared-memory segments (shm_open or memfd_create, then mmap), for every
 * part of Tern that shares memory between the processes of one node: the
 * shm transport's node segment (transport/shm/shm_node_segment.h) and the
 * regions of the shm collectives (core/coll/shm_region.h). A segment is
 * created by one process, attached by the others under its name, and
 * unlinked as soon as all have it open, so that nothing is left in
 * /dev/shm if a process is killed. An anonymous segment never is in
 * /dev/shm: its name is /proc/<pid>/fd/<fd> of its creator's memfd, which
 * lasts while the creator keeps the fd open (until the unlink), so not
 * even a job killed between the creation and the unlink leaves a file. */
#ifndef TERN_BASE_SHM_SEGMENT_H
#define TERN_BASE_SHM_SEGMENT_H

#include "base/status.h"
#include <stddef.h>
#include <stdint.h>

typedef struct {
    void *base;      /* NULL when not mapped */
    size_t size;
    int owner;       /* 1 in the process that created it */
    int linked;      /* 1 while the name exists in /dev/shm (owner only) */
    int has_fd;      /* 1 while fd is kept open, to reserve pages later */
    int anon;        /* a memfd, named by its /proc path (owner: fd kept) */
    int fd;
    uint64_t ino;    /* an anonymous segment's inode (owner) */
    char name[256];
} tern_shm_segment_t;

/* Creates and maps a zero-filled segment whose pages are all reserved now
 * (posix_fallocate: tmpfs allocates them, so no later touch can die of
 * SIGBUS). TERN_ERR_NO_ROOM, with nothing logged and nothing left behind,
 * when the file system cannot hold size bytes (*err_p: the errno). */
tern_status_t tern_shm_segment_create(tern_shm_segment_t *seg, const char *name, size_t size, int *err_p);
/* The same, but only the first `reserve` bytes are reserved now; the rest
 * is a hole until tern_shm_segment_reserve (touching a page of a hole when
 * the file system is full is a SIGBUS). Keeps the file open for that. */
tern_status_t tern_shm_segment_create_sparse(tern_shm_segment_t *seg, const char *name, size_t size,
                                             size_t reserve, int *err_p);
/* An anonymous segment of size bytes, every page reserved (memfd_create
 * and posix_fallocate; label names it in /proc/<pid>/maps), for the others
 * to attach by this process's pid, seg->fd and seg->ino until
 * tern_shm_segment_unlink. Errors as tern_shm_segment_create. */
tern_status_t tern_shm_segment_create_anon(tern_shm_segment_t *seg, const char *label, size_t size,
                                           int *err_p);
/* Opens /proc/<pid>/fd/<fd> and maps it, if its inode's low 32 bits are
 * ino. TERN_ERR_IO, unlogged, with *err_p: ENOENT (no such process or fd:
 * its creator failed, or lives in another pid namespace), EACCES (an
 * undumpable creator, without CAP_SYS_PTRACE), ESTALE (another file: that
 * pid is another process here); a failed mmap is logged. */
tern_status_t tern_shm_segment_attach_anon(tern_shm_segment_t *seg, long pid, int fd, uint32_t ino,
                                           int *err_p);
/* Opens and maps an existing named segment (its size from fstat). With
 * err_p (the errno), a name that does not exist (ENOENT) is not logged:
 * its creator may have failed and unlinked it, which the caller knows how
 * to report. */
tern_status_t tern_shm_segment_attach(tern_shm_segment_t *seg, const char *name, int *err_p);
/* tern_shm_segment_attach that keeps the file open (tern_shm_segment_reserve). */
tern_status_t tern_shm_segment_attach_open(tern_shm_segment_t *seg, const char *name, int *err_p);
/* Reserves the pages of [offset, offset + len) (posix_fallocate on the
 * file kept open, also after the unlink): 0, or the errno (ENOSPC: the file
 * system is full; EBADF: the file was not kept open). */
int tern_shm_segment_reserve(const tern_shm_segment_t *seg, size_t offset, size_t len);
/* Maps the pages of [base, base + bytes) of a mapped segment now, so that
 * the first copies take no page faults, without changing its contents
 * (safe while other processes use it): MADV_POPULATE_WRITE, or on older
 * kernels a read of each page. */
void tern_shm_segment_prefault(void *base, size_t bytes);
/* Removes the name (owner only; the mappings stay valid): shm_unlink, or
 * for an anonymous segment the close of the fd its /proc path names. */
void tern_shm_segment_unlink(tern_shm_segment_t *seg);
/* Unmaps (and unlinks if still linked), closes the file if kept open. */
void tern_shm_segment_detach(tern_shm_segment_t *seg);

#endif
