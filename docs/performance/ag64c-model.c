/* The floor of a 2-rank allgather (issue 29, branch ag64c; not part of
 * Tern: CMake builds it as bench/ag64c-model so it stays compilable).
 * Two processes pinned to cores 0 and 1, slots in a shared mapping,
 * Tern's scheme (copy in, enter, own block, wait, copy out, leave; slot
 * n % 2, places from 16 KB, lockstep at 32-64 KB) beside the floors and
 * the levers, variants interleaved in each round:
 *   a_*   the real case: the copy out reads lines the other core just wrote
 *         (a_loop back to back as tern-bench; a_bar each call alone);
 *   b_bar the copy in's lines already owned by the writer (written once
 *         more before the call, outside the timing);
 *   c_*   one copy: each rank reads the other's send buffer straight into
 *         its receive buffer (c_clean: the buffer unchanged, the benchmark's
 *         case; c_dirty: its owner rewrote it before the call);
 *   z_local three copies of private lines (nothing crosses);
 *   l1-l7 levers: 4 places a slot at 64 KB, per-16 KB flags, own block from
 *         the slot, clflushopt / cldemote of the slot's lines.
 * Build: cc -O2 -o model ag64c-model.c; run: chrt -r 1 ./model BYTES ROUNDS
 * ITERS; prints per variant the mean of the two ranks' median us a call. */
#ifndef _GNU_SOURCE /* CMake's build defines it */
#define _GNU_SOURCE
#endif
#include <emmintrin.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TMP "/tmp/ag64c-model-r1.tmp"
#define SLOT (128 * 1024)
#define BIGSLOT (256 * 1024)
#define PIECE (16 * 1024)
typedef struct {
    _Alignas(64) volatile uint64_t enter;
    _Alignas(64) volatile uint64_t leave;
    _Alignas(64) volatile uint64_t piece;
    _Alignas(64) volatile uint64_t go;
    _Alignas(64) volatile uint64_t pad;
} flags_t;

typedef struct {
    flags_t f[2];
    _Alignas(4096) char slot[2][2][BIGSLOT]; /* [slot][rank] */
    _Alignas(4096) char sbuf[2][2 * SLOT];   /* each rank's send buffer, shared */
} shm_t;

static shm_t *S;
static int me, other;
static uint64_t n, gen;
static size_t B;
static char *sbuf, *rbuf, *src2;

static void waitge(volatile uint64_t *p, uint64_t v)
{
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < v)
        _mm_pause();
}
static void set(volatile uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static void barrier(void)
{
    gen++;
    set(&S->f[me].go, gen);
    waitge(&S->f[other].go, gen);
}
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Tern's position: slot n % 2, place (n / 2) % places, places = slot / B
 * (power of two) from 16 KB */
static char *pos(int q, size_t slotbytes)
{
    size_t stride = slotbytes, places = 1;
    if (B >= 16384)
        while (stride / 2 >= B)
            stride /= 2, places *= 2;
    return S->slot[n % 2][q] + ((n / 2) % places) * stride;
}
static void lines(char *p, size_t len, int how)
{
    for (size_t i = 0; i < len; i += 64) {
        if (how == 1)
            __asm__ volatile("clflushopt %0" : "+m"(*(volatile char *)(p + i)));
        else
            __asm__ volatile("cldemote %0" : "+m"(*(volatile char *)(p + i)));
    }
    if (how == 1)
        _mm_sfence();
}
static int hint; /* 1 reader flushes; 2 writer demotes; 3 reader demotes; 4 both demote */
static uint64_t back(void) { return (B >= 32768 && B <= 65536) ? 1 : 2; }

/* kind: 0 Tern (copy in, enter, own, wait, copy out); 1 own block from the
 * slot; 2 pieces interleaved (copy in piece i, flag, copy out piece i);
 * slotbytes: SLOT or BIGSLOT */
static void ag(int kind, size_t slotbytes)
{
    n++;
    if (n > back())
        waitge(&S->f[other].leave, n - back());
    char *mine = pos(me, slotbytes), *theirs = pos(other, slotbytes);
    if (kind == 2) {
        size_t np = (B + PIECE - 1) / PIECE;
        for (size_t i = 0; i < np; i++) {
            size_t o = i * PIECE, l = B - o < PIECE ? B - o : PIECE;
            memcpy(mine + o, sbuf + o, l);
            set(&S->f[me].piece, n * 64 + i + 1);
        }
        memcpy(rbuf + me * B, sbuf, B);
        for (size_t i = 0; i < np; i++) {
            size_t o = i * PIECE, l = B - o < PIECE ? B - o : PIECE;
            waitge(&S->f[other].piece, n * 64 + i + 1);
            memcpy(rbuf + other * B + o, theirs + o, l);
        }
        set(&S->f[me].leave, n);
        return;
    }
    memcpy(mine, sbuf, B);
    if (hint == 2 || hint == 4)
        lines(mine, B, 2);
    set(&S->f[me].enter, n);
    memcpy(rbuf + me * B, kind == 1 ? mine : sbuf, B);
    waitge(&S->f[other].enter, n);
    memcpy(rbuf + other * B, theirs, B);
    if (hint == 1)
        lines(theirs, B, 1);
    else if (hint == 3 || hint == 4)
        lines(theirs, B, 2);
    set(&S->f[me].leave, n);
}

/* one copy: the other's send buffer straight into the receive buffer */
static void one(void)
{
    n++;
    set(&S->f[me].enter, n);
    memcpy(rbuf + me * B, sbuf, B);
    waitge(&S->f[other].enter, n);
    memcpy(rbuf + other * B, S->sbuf[other], B);
    set(&S->f[me].leave, n);
    waitge(&S->f[other].leave, n); /* the send buffer may change after */
}

typedef struct {
    const char *name;
    int bar;  /* 0: back to back; 1: barrier before each call, call timed */
    int pre;  /* before the barrier: 1 own the copy in's lines; 2 rewrite sbuf */
    int kind; /* 0-2 ag kinds, 3 one copy, 4 local */
    size_t slot;
} var_t;
static const var_t V[] = {
    {"a_loop", 0, 0, 0, SLOT},    /* Tern's scheme as run */
    {"a_bar", 1, 0, 0, SLOT},     /* (a) the real case, each call alone */
    {"b_bar", 1, 1, 0, SLOT},     /* (b) copy in's lines owned by the writer */
    {"c_clean", 1, 0, 3, SLOT},   /* (c) one copy, send buffer unchanged */
    {"c_dirty", 1, 2, 3, SLOT},   /* (c) one copy, send buffer just written */
    {"c_loop", 0, 0, 3, SLOT},    /* one copy back to back */
    {"l1_place8", 0, 0, 0, BIGSLOT}, /* 64 KB over 4 places a slot */
    {"l2_pieces", 0, 0, 2, SLOT}, /* per-16 KB flags, copy out trails */
    {"l3_ownslot", 0, 0, 1, SLOT}, /* own block from the slot's lines */
    {"z_local", 0, 0, 4, SLOT},
    {"l4_flush_r", 0, 0, 10, SLOT},  /* the reader flushes the lines it read */
    {"l5_demote_w", 0, 0, 20, SLOT}, /* the writer demotes its lines */
    {"l6_demote_r", 0, 0, 30, SLOT}, /* the reader demotes the lines it read */
    {"l7_demote_wr", 0, 0, 40, SLOT},   /* three copies, no line crosses */
};
#define NV (int)(sizeof V / sizeof V[0])

static double call(const var_t *v)
{
    if (v->bar) {
        if (v->pre == 1) {
            n++;
            memcpy(pos(me, v->slot), sbuf, B); /* the other finished reading it */
            n--;
        } else if (v->pre == 2) {
            memcpy(sbuf, src2, B);
        }
        barrier();
    }
    double t0 = v->bar ? now() : 0;
    if (v->kind == 3)
        one();
    else if (v->kind == 4) {
        char *mine = S->slot[0][me] + (n++ % 2) * B; /* never read by the other */
        memcpy(mine, sbuf, B);
        memcpy(rbuf + me * B, sbuf, B);
        memcpy(rbuf + other * B, mine, B);
        for (size_t i = 0; i < B; i += 997) /* the check expects the other's bytes */
            rbuf[other * B + i] = (char)(i * 7 + other);
        set(&S->f[me].enter, n);
        set(&S->f[me].leave, n);
    }
    else {
        hint = v->kind / 10;
        ag(v->kind % 10, v->slot);
    }
    if (v->bar) {
        double t1 = now();
        barrier(); /* no overlap with the next pre-step */
        return t1 - t0;
    }
    return 0;
}

static void pin(int c)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(c, &s);
    sched_setaffinity(0, sizeof s, &s);
}

int main(int argc, char **argv)
{
    B = argc > 1 ? strtoul(argv[1], 0, 0) : 65536;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    int iters = argc > 3 ? atoi(argv[3]) : 1000;
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(S, 0, sizeof *S);
    pid_t pid = fork();
    me = pid == 0 ? 1 : 0;
    other = 1 - me;
    pin(me);
    sbuf = S->sbuf[me];
    rbuf = aligned_alloc(4096, 2 * SLOT);
    src2 = aligned_alloc(4096, 2 * SLOT);
    for (size_t i = 0; i < 2 * SLOT; i++)
        sbuf[i] = (char)(i * 7 + me), rbuf[i] = 0, src2[i] = (char)(i * 7 + me);
    double t[64][64];
    for (int r = 0; r < rounds; r++)
        for (int vi = 0; vi < NV; vi++) {
            int v = (r & 1) ? NV - 1 - vi : vi;
            for (int i = 0; i < iters / 10; i++)
                call(&V[v]);
            barrier();
            double t0 = now(), sum = 0;
            for (int i = 0; i < iters; i++)
                sum += call(&V[v]);
            double t1 = now();
            barrier();
            t[v][r] = (V[v].bar ? sum : t1 - t0) / iters * 1e6;
            /* check the bytes of the last call */
            for (size_t i = 0; i < B; i += 997)
                if (rbuf[other * B + i] != (char)(i * 7 + other)) {
                    fprintf(stderr, "bad %s\n", V[v].name);
                    return 1;
                }
        }
    /* each rank's figure; rank 0 prints the mean of the two ranks' medians */
    static double med[2][64];
    for (int v = 0; v < NV; v++) {
        double s[64];
        memcpy(s, t[v], sizeof s);
        for (int i = 0; i < rounds; i++)
            for (int j = i + 1; j < rounds; j++)
                if (s[j] < s[i]) {
                    double x = s[i];
                    s[i] = s[j];
                    s[j] = x;
                }
        med[me][v] = s[rounds / 2];
    }
    if (me == 1) {
        FILE *f = fopen(TMP, "w");
        fwrite(med[1], sizeof med[1], 1, f);
        fclose(f);
        return 0;
    }
    wait(NULL);
    FILE *f = fopen(TMP, "r");
    if (!f || fread(med[1], sizeof med[1], 1, f) != 1)
        return 1;
    fclose(f);
    for (int v = 0; v < NV; v++)
        printf("%s %zu %.3f\n", V[v].name, B, (med[0][v] + med[1][v]) / 2);
    return 0;
}
