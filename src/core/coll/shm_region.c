/* The node-level shared-memory region of the shm collectives: which
 * communicators may have one, its creation (collective, over
 * point-to-point), its layout, its lazy alltoall area and the flag waits.
 * See shm_region.h for the protocol. */
#include "core/coll/shm_region.h"
#include "core/comm/ulfm.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"
#include "base/pvars.h"
#include "base/proc.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { LINE = TERN_SHM_LINE, N_SLOTS = TERN_SHM_SLOTS };

/* The pid of a rank sits in its ENTER line, after the flag. */
#define PID_OFFSET 8

/* c->coll_shm before a region exists: not known yet (NULL), the
 * communicator cannot have one (shm_none), or it can (shm_local). */
char tern_shm_none_mark, tern_shm_local_mark;
#define shm_none tern_shm_none_mark
#define shm_local tern_shm_local_mark

static _Atomic uint64_t *flag_at(const tern_shm_region_t *reg, int q, int f)
{
    return (_Atomic uint64_t *)(void *)(reg->flags + ((size_t)q * TERN_SHM_N_FLAGS + (size_t)f) * LINE);
}

static int node_local(const tern_comm_t *c)
{
    long per = (long)tern_knob_count(TERN_KNOB_COLL_RANKS_PER_NODE);
    int me_w = tern_comm_local_world_rank(c, c->rank);
    if (c->is_inter || c->size < 2)
        return 0;
    for (int q = 0; q < c->size; q++) {
        int w = tern_comm_local_world_rank(c, q);
        if (tern_rt.node_of_rank[w] != tern_rt.node_of_rank[me_w])
            return 0;
        /* The emulated nodes of TERN_COLL_RANKS_PER_NODE count as nodes. */
        if (per > 0 && w / per != me_w / per)
            return 0;
        /* Every peer through the shm transport: not under
         * TERN_TRANSPORTS=ofi, nor when the node chose no segment. */
        if (q != c->rank &&
            (!tern_rt.peers[w].ops || strcmp(tern_rt.peers[w].ops->name, "shm") != 0))
            return 0;
    }
    return 1;
}

int tern_shm_coll_usable(const tern_coll_args_t *a)
{
    tern_comm_t *c = a->comm;
    if (c->is_inter)
        return 0;
    if (!c->coll_shm)
        c->coll_shm = node_local(c) ? (void *)&shm_local : (void *)&shm_none;
    if (c->coll_shm == &shm_none || (!a->blocking && c->coll_shm == &shm_local))
        return 0;
    /* Every slot holds 64 bytes (the knob's least): no knob read for the
     * predefined types, on every collective's selection. */
    if (a->esz <= 64)
        return 1;
    return a->esz <= tern_knob_size_or(TERN_KNOB_COLL_SHM_SLOT, TERN_SHM_SLOT_DEFAULT);
}

void tern_shm_coll_off(tern_comm_t *c)
{
    if (!c->coll_shm || c->coll_shm == &shm_local) /* no region yet */
        c->coll_shm = &shm_none;
}

static void region_free(void *p)
{
    tern_shm_region_t *reg = p; /* the two lanes; the first holds the segment */
    if (p == &shm_none || p == &shm_local || !p)
        return;
    tern_shm_segment_detach(&reg[0].a2a_seg);
    tern_shm_segment_detach(&reg[0].seg);
    free(reg);
}

void tern_shm_comm_name(char *buf, size_t len, const tern_comm_t *c, const char *what)
{
    char job[128];
    size_t i = 0;
    for (const char *s = tern_rt.job_id; *s && i + 1 < sizeof job; s++, i++) {
        char ch = *s;
        int ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '-';
        job[i] = ok ? ch : '_';
    }
    job[i] = '\0';
    snprintf(buf, len, "/tern-%s-%s-%d-%u", job, what, tern_comm_local_world_rank(c, 0),
             (unsigned)c->context_id);
}

/* One small exchange of the creation (n ints), run to completion on c. */
static tern_status_t run_exchange(tern_comm_t *c, int *val, int n, int reduce)
{
    tern_sched_t *s = tern_sched_create(c, 1);
    if (!s)
        return TERN_ERR_NOMEM;
    tern_coll_args_t a = {.comm = c, .sbuf = val, .rbuf = val, .bytes = (size_t)n * sizeof *val,
                          .count = n, .esz = sizeof *val, .dt = MPI_INT, .op = MPI_MIN,
                          .commutative = 1, .root = 0, .blocking = 1};
    tern_status_t st = reduce ? tern_coll_allreduce_recursive_doubling(s, &a)
                              : tern_coll_bcast_binomial(s, &a);
    if (st == TERN_OK)
        st = tern_sched_run(s);
    tern_sched_free(s);
    return st;
}

/* A rank's outcome of a creation, agreed as the least of all ranks'. */
enum { SHARE_FAILED = 0, SHARE_NO_PROC = 1, SHARE_MAPPED = 2 };

/* The leader creates the segment (if this rank wants it): anonymous
 * ("tern-<what>" in /proc/<pid>/maps), or named name when name is set; it
 * tells the others its outcome and where the segment is, and those that
 * want it attach. *mapped: SHARE_MAPPED when this rank holds it, at least
 * bytes long; SHARE_NO_PROC when it could not open the leader's anonymous
 * segment through /proc, or declines those (TERN_COLL_SHM_ANON=off). */
static tern_status_t segment_share(tern_comm_t *c, tern_shm_segment_t *seg, const char *what,
                                   const char *name, size_t bytes, int want, int *mapped, int *err)
{
    /* The leader's {ok, pid, fd, inode's low bits}. */
    int made[4] = {want, (int)getpid(), -1, 0};
    *err = 0;
    if (c->rank == 0 && want) {
        char label[32];
        snprintf(label, sizeof label, "tern-%s", what);
        made[0] = (name ? tern_shm_segment_create(seg, name, bytes, err)
                        : tern_shm_segment_create_anon(seg, label, bytes, err)) == TERN_OK;
        made[2] = seg->fd;
        made[3] = (int)(uint32_t)seg->ino;
    }
    tern_status_t st = run_exchange(c, made, 4, 0);
    int ok = made[0], aerr = 0;
    int declined = !name && !tern_knob_bool(TERN_KNOB_COLL_SHM_ANON);
    if (st == TERN_OK && c->rank != 0 && ok && want && !declined) {
        if (name)
            ok = tern_shm_segment_attach(seg, name, &aerr) == TERN_OK;
        else
            ok = tern_shm_segment_attach_anon(seg, made[1], made[2], (uint32_t)made[3], &aerr) ==
                 TERN_OK;
        ok = ok && seg->size >= bytes;
        /* The leader unlinks the name when its own exchange fails (a
         * member died), perhaps after some of us heard its "ok": a missing
         * name is that failure, which the agreement reports, not an error
         * of its own (ft/barrier in MPICH's suite). */
        if (aerr == ENOENT && name)
            tern_debug("shm collectives: %s is gone before we attached: its creator failed", name);
    }
    *mapped = st == TERN_OK && want && ok && seg->base != NULL ? SHARE_MAPPED : SHARE_FAILED;
    /* Anonymous: a failed open (a failed leader too, which the agreement
     * then reports) asks for the named round. */
    if (st == TERN_OK && want && made[0] && !name && (aerr || declined))
        *mapped = SHARE_NO_PROC;
    return st;
}

/* Every rank learns the least outcome of all; then the leader unlinks its
 * name (everyone has it open: nothing left after a kill). lane: when not
 * 0, the size of a region's lane: this rank's pid goes into its ENTER line
 * of both lanes first, so that the agreement orders it before any use. */
static tern_status_t segment_agree(tern_comm_t *c, tern_shm_segment_t *seg, int mapped,
                                   tern_status_t st, size_t lane, int *all)
{
    if (mapped == SHARE_MAPPED && lane)
        for (int k = 0; k < 2; k++)
            *(int32_t *)(void *)((char *)seg->base + (size_t)k * lane +
                                 (size_t)c->rank * TERN_SHM_N_FLAGS * LINE + PID_OFFSET) =
                (int32_t)getpid();
    *all = mapped;
    if (st == TERN_OK)
        st = run_exchange(c, all, 1, 1);
    if (c->rank == 0 && seg->base)
        tern_shm_segment_unlink(seg);
    return st;
}

/* A segment of bytes on every rank of c, or *all_ok 0: anonymous, so that
 * /dev/shm holds nothing of it even while it is made (a job killed then
 * leaves no file), or where a rank cannot open the leader's /proc path
 * (an undumpable leader, without CAP_SYS_PTRACE) or declines it, named. */
static tern_status_t segment_make(tern_comm_t *c, tern_shm_segment_t *seg, const char *what,
                                  const char *name, size_t bytes, int want, size_t lane,
                                  int *all_ok, int *err)
{
    int mapped = 0, all = SHARE_FAILED;
    tern_status_t st = segment_share(c, seg, what, NULL, bytes, want, &mapped, err);
    st = segment_agree(c, seg, mapped, st, lane, &all);
    if (st == TERN_OK && all == SHARE_NO_PROC) {
        tern_debug("shm collectives: a rank cannot open or declines the %s memfd; a named "
                   "segment instead", what);
        tern_shm_segment_detach(seg);
        st = segment_share(c, seg, what, name, bytes, want, &mapped, err);
        st = segment_agree(c, seg, mapped, st, lane, &all);
    }
    *all_ok = all == SHARE_MAPPED;
    return st;
}

tern_status_t tern_shm_a2a_area_get(tern_shm_region_t *reg)
{
    if (reg->a2a || !reg->a2a_slot)
        return TERN_OK;
    tern_comm_t *c = reg->comm;
    size_t bytes = (size_t)reg->p * N_SLOTS * reg->a2a_slot;
    char name[256];
    tern_shm_comm_name(name, sizeof name, c, "a2a");
    int all_ok = 0, err = 0;
    tern_status_t st = segment_make(c, &reg->a2a_seg, "a2a", name, bytes,
                                    tern_knob_bool(TERN_KNOB_COLL_SHM_A2A_AREA), 0, &all_ok, &err);
    if (st == TERN_OK && all_ok) {
        reg->a2a = reg->a2a_seg.base;
        /* Its pages mapped now, once, not by the first calls' copies (a
         * fault a page: 2-rank 32 KB allgathers over 1 MB of places paid
         * ~2.5 us a call for their first 64 calls). */
        tern_shm_segment_prefault(reg->a2a, bytes);
        tern_pvar_add(TERN_PVAR_COLL_SHM_A2A_AREAS, 1);
        tern_debug("shm collectives: alltoall area of %zu bytes (%s) for a communicator of %d ranks",
                   bytes, name, reg->p);
        return TERN_OK;
    }
    if (st == TERN_OK && c->rank == 0)
        tern_warn("shm collectives: the alltoall area of a communicator of %d ranks (%zu bytes, %s) "
                  "is not on every rank (not created or mapped%s%s, or declined by "
                  "TERN_COLL_SHM_A2A_AREA=off); its alltoalls keep the data slots",
                  reg->p, bytes, name, err ? ": " : "", err ? strerror(err) : "");
    tern_shm_segment_detach(&reg->a2a_seg);
    reg->a2a_slot = 0; /* never again: a failed exchange leaves the communicator failed too */
    return st;
}

tern_status_t tern_shm_region_get(tern_comm_t *c, int blocking, tern_shm_region_t **reg_p)
{
    *reg_p = NULL;
    if (c->coll_shm == &shm_none || (!blocking && (!c->coll_shm || c->coll_shm == &shm_local)))
        return TERN_OK;
    if (c->coll_shm && c->coll_shm != &shm_local) {
        *reg_p = (tern_shm_region_t *)c->coll_shm + (blocking ? 0 : 1);
        return TERN_OK;
    }
    int p = c->size;
    /* auto: two ranks get 128 KB slots, so the 2-rank allreduce row up to
     * 128 KB runs in one step and reduce_scatter in steps of 64 KB blocks
     * (docs/performance.md: 64 KB at 2 ranks 20.6 us by rabenseifner,
     * 21-23 us through 16 KB slots, 13 us in one; branch ar2 for 128 KB). */
    size_t slot_auto = p == 2 ? TERN_SHM_SLOT_2RANKS : TERN_SHM_SLOT_DEFAULT;
    if (tern_rt.node_oversubscribed && p <= TERN_SHM_SLOT_OVER_MAX_RANKS)
        slot_auto = TERN_SHM_SLOT_OVER; /* the same on every rank of the node */
    size_t slot = tern_knob_size_or(TERN_KNOB_COLL_SHM_SLOT, slot_auto);
    slot = (slot + LINE - 1) & ~(size_t)(LINE - 1);
    /* auto: small cells pass from the root's cache to the readers'
     * (loaded A/B, 2 ranks, 64 KB: docs/performance.md); oversubscribed,
     * a slot, so a 64 KB bcast stays one step there. */
    size_t cell_auto = tern_rt.node_oversubscribed || slot < TERN_SHM_BCAST_CELL_DEFAULT
                           ? slot
                           : TERN_SHM_BCAST_CELL_DEFAULT;
    size_t cell = tern_knob_size_or(TERN_KNOB_COLL_SHM_BCAST_CELL, cell_auto);
    cell = (cell + LINE - 1) & ~(size_t)(LINE - 1);
    int cells = (int)tern_knob_count(TERN_KNOB_COLL_SHM_BCAST_CELLS);
    size_t flag_bytes = (size_t)p * TERN_SHM_N_FLAGS * LINE;
    size_t slot_bytes = ((size_t)p + 1) * N_SLOTS * slot;
    size_t ring_bytes = (size_t)cells * (LINE + cell);
    /* Oversubscribed: every step of an alltoall waits for each descheduled
     * rank, so a block up to 64 KB goes in one (loaded A/B:
     * docs/performance.md), through the blocking lane's area, a segment
     * created by the first alltoall that needs it (most never do). */
    size_t a2a_slot = 0;
    if (tern_rt.node_oversubscribed && p > 2 && p <= TERN_SHM_SLOT_OVER_MAX_RANKS)
        a2a_slot = (size_t)(p - 1) * (slot < TERN_SHM_SLOT_OVER ? slot : TERN_SHM_SLOT_OVER);
    else if (p == 2 && !tern_rt.node_oversubscribed && slot >= TERN_SHM_FAR_MIN)
        a2a_slot = TERN_SHM_FAR_SLOT; /* 2 ranks: the far places' area */
    size_t xline_bytes = (size_t)p * N_SLOTS * TERN_SHM_XLINES * LINE;
    size_t lane_bytes = flag_bytes + slot_bytes + ring_bytes + xline_bytes;
    size_t bytes = 2 * lane_bytes;
    tern_shm_region_t *reg = calloc(2, sizeof *reg);
    char name[256];
    tern_shm_comm_name(name, sizeof name, c, "coll");
    int all_ok = 0, err = 0;
    tern_shm_segment_t none = {0}, *seg = reg ? &reg->seg : &none; /* none: no memory here */
    tern_status_t st = segment_make(c, seg, "coll", name, bytes, reg != NULL, lane_bytes,
                                    &all_ok, &err);
    if (st != TERN_OK || !all_ok) {
        if (st == TERN_OK && c->rank == 0)
            tern_warn("shm collectives are off for a communicator of %d ranks: its shared region "
                      "(%zu bytes, %s) could not be created%s%s; point-to-point algorithms serve it",
                      p, bytes, name, err ? ": " : "", err ? strerror(err) : "");
        if (reg)
            region_free(reg);
        if (st == TERN_OK) {
            c->coll_shm = &shm_none;
            c->coll_shm_free = NULL;
        }
        return st;
    }
    for (int k = 0; k < 2; k++) {
        tern_shm_region_t *l = &reg[k];
        l->comm = c;
        l->sibling = &reg[1 - k];
        l->broken = -1;
        l->p = p;
        l->me = c->rank;
        l->slot = slot;
        l->ar_whole = tern_knob_size(TERN_KNOB_COLL_SHM_ALLREDUCE_WHOLE);
        l->flags = (char *)reg->seg.base + (size_t)k * lane_bytes;
        l->data = l->flags + flag_bytes;
        l->result = l->data + (size_t)p * N_SLOTS * slot;
        l->ring = l->data + slot_bytes;
        l->cell = cell;
        l->cells = cells;
        l->xline = l->ring + ring_bytes;
        l->xline_on = tern_knob_bool(TERN_KNOB_COLL_PAIR_LINE);
        /* The blocking lane only: a nonblocking alltoall takes p steps. */
        l->a2a = NULL;
        l->a2a_slot = k == 0 ? a2a_slot : 0;
    }
    c->coll_shm = reg;
    c->coll_shm_free = region_free;
    *reg_p = reg;
    return TERN_OK;
}

void tern_shm_set(tern_shm_region_t *reg, int flag, uint64_t n)
{
    atomic_store_explicit(flag_at(reg, reg->me, flag), n, memory_order_release);
}

void tern_shm_slots_map(tern_shm_region_t *reg)
{
    /* The result slots follow the ranks' data slots. */
    tern_shm_segment_prefault(reg->data, ((size_t)reg->p + 1) * N_SLOTS * reg->slot);
    reg->slots_mapped = 1;
}

static double now_ms(void)
{
    return tern_clock_s() * 1e3;
}

/* Called when a wait yields: the rank waited for has failed (reported by a
 * transport, or its process is gone: checked every TERN_PEER_CHECK_MS).
 * Rank q's word (a flag) is looked at again once its process is seen gone: a
 * rank sets its flag, sees everyone's and may end (the barrier of
 * MPI_Finalize) between our first look and the check; it failed only if
 * the flag is still short of n. */
static tern_status_t check_peer(tern_shm_region_t *reg, int q, const _Atomic uint64_t *word,
                                uint64_t n)
{
    /* Revoked, or a member failed (the waited-for rank may have given
     * up): ULFM's collectives fail on every survivor. */
    if (tern_ulfm_coll_stopped(reg->comm))
        return tern_ulfm_coll_error(reg->comm);
    int w = tern_comm_local_world_rank(reg->comm, q);
    const char *why = tern_peer_failure(w);
    long interval = (long)tern_knob_count(TERN_KNOB_PEER_CHECK_MS);
    if (!why && interval > 0) {
        double t = now_ms();
        if (t < reg->next_check_ms)
            return TERN_OK;
        reg->next_check_ms = t + (double)interval;
        pid_t pid = (pid_t)*(int32_t *)(void *)(reg->flags +
                                                (size_t)q * TERN_SHM_N_FLAGS * LINE + PID_OFFSET);
        if (!tern_pid_gone(pid) || atomic_load_explicit(word, memory_order_acquire) >= n)
            return TERN_OK;
        char buf[96];
        snprintf(buf, sizeof buf, "shm collective: its process %d (on this node) is gone", (int)pid);
        tern_peer_failed(w, TERN_ERR_PEER, buf);
        why = tern_peer_failure(w);
    }
    /* Known failed, but perhaps after it got here. */
    if (!why || atomic_load_explicit(word, memory_order_acquire) >= n)
        return TERN_OK;
    return tern_status_detail(TERN_ERR_PEER,
                              "rank %d (world rank %d) failed during a shared-memory collective: %s",
                              q, w, why);
}

int tern_shm_reached(tern_shm_region_t *reg, int flag, int q, uint64_t n, int *cursor,
                     tern_status_t *st)
{
    int lo = q < 0 ? *cursor : q, hi = q < 0 ? reg->p : q + 1;
    for (int i = lo; i < hi; i++) {
        if (i == reg->me) /* our own flags are set before we look at others' */
            continue;
        if (atomic_load_explicit(flag_at(reg, i, flag), memory_order_acquire) >= n)
            continue;
        if (q < 0)
            *cursor = i;
        /* A clock read every 1024 misses: the liveness check is rate-limited by time. */
        if ((++reg->misses & 1023u) == 0) {
            tern_status_t e = tern_shm_peer_check(reg, i, flag_at(reg, i, flag), n);
            if (e == TERN_OK)
                return 0;
            *st = e;
            return 1;
        }
        return 0;
    }
    if (q < 0)
        *cursor = 0;
    return 1;
}

tern_status_t tern_shm_peer_check(tern_shm_region_t *reg, int q, const void *word, uint64_t n)
{
    tern_status_t st = check_peer(reg, q, (const _Atomic uint64_t *)word, n);
    if (st != TERN_OK) {
        /* Both lanes: the other kind's next collective fails at once too. */
        reg->broken = q;
        if (reg->sibling->broken < 0)
            reg->sibling->broken = q;
    }
    return st;
}

tern_status_t tern_shm_broken_status(tern_shm_region_t *reg)
{
    int w = tern_comm_local_world_rank(reg->comm, reg->broken);
    const char *why = tern_peer_failure(w);
    return tern_status_detail(TERN_ERR_PEER,
                              "rank %d (world rank %d) failed during an earlier shared-memory "
                              "collective on this communicator: %s",
                              reg->broken, w, why ? why : "its process is gone");
}
