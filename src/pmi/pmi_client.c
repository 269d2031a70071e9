/* PMI client (pmi.h): picks a process-manager flavour (pmi_flavour.h) and
 * adds what they share: long values split into chunks, dense node maps,
 * the abort message. The singleton flavour, a local key-value table, lives
 * here too.
 *
 * Long values: a process manager accepts values up to value_max bytes
 * (Hydra and Slurm: 1024). A longer value is stored as a header
 * "^chunks:<n>" under the key plus n pieces under "<key>-<i>"; tern_pmi_get
 * reassembles them, so callers need not care. Hence values must not start
 * with '^', and keys must leave room for the "-<i>" suffix within key_max. */
#include "pmi/pmi.h"
#include "pmi/pmi_flavour.h"
#include "base/config.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_HEADER "^chunks:"

typedef struct {
    char *key;
    char *value;
} local_kv_t;

static struct {
    const tern_pmi_flavour_t *flavour; /* NULL before init / after finalize */
    tern_pmi_info_t info;
    /* Singleton key-value table. */
    local_kv_t *kv;
    size_t n_kv;
    unsigned epoch;            /* tern_pmi_next_epoch: 0 at the first start */
    int (*running)(void);      /* tern_pmi_finalize_at_exit */
} pmi;

/* The key as the process manager sees it: with the epoch's prefix after a
 * restart. NULL when it does not fit. */
static const char *epoch_key(const char *key, char *buf, size_t len)
{
    if (!pmi.epoch)
        return key;
    int n = snprintf(buf, len, "e%u.%s", pmi.epoch, key);
    return n > 0 && (size_t)n < len ? buf : NULL;
}

/* --- singleton ------------------------------------------------------------- */

static tern_status_t local_put(const char *key, const char *value)
{
    for (size_t i = 0; i < pmi.n_kv; i++) {
        if (strcmp(pmi.kv[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v)
                return TERN_ERR_NOMEM;
            free(pmi.kv[i].value);
            pmi.kv[i].value = v;
            return TERN_OK;
        }
    }
    local_kv_t *kv = realloc(pmi.kv, (pmi.n_kv + 1) * sizeof *kv);
    if (!kv)
        return TERN_ERR_NOMEM;
    pmi.kv = kv;
    kv[pmi.n_kv].key = strdup(key);
    kv[pmi.n_kv].value = strdup(value);
    if (!kv[pmi.n_kv].key || !kv[pmi.n_kv].value) {
        free(kv[pmi.n_kv].key);
        free(kv[pmi.n_kv].value);
        return TERN_ERR_NOMEM;
    }
    pmi.n_kv++;
    return TERN_OK;
}

static tern_status_t local_get(const char *key, char *value, size_t value_len)
{
    for (size_t i = 0; i < pmi.n_kv; i++) {
        if (strcmp(pmi.kv[i].key, key) == 0) {
            if (strlen(pmi.kv[i].value) >= value_len)
                return TERN_ERR_TRUNCATE;
            strcpy(value, pmi.kv[i].value);
            return TERN_OK;
        }
    }
    return TERN_ERR_NOT_FOUND;
}

static tern_status_t local_init(tern_pmi_info_t *info)
{
    info->rank = 0;
    info->size = 1;
    info->appnum = 0;
    info->universe_size = 1;
    info->singleton = 1;
    info->key_max = 256;
    info->value_max = 1 << 20;
    /* Unique per process, so shared resources named after it never clash. */
    snprintf(info->kvsname, sizeof info->kvsname, "tern-single-%ld", (long)getpid());
    return TERN_OK;
}

static tern_status_t local_fence(void) { return TERN_OK; }

static tern_status_t local_node_map(int *node_of_rank)
{
    node_of_rank[0] = 0;
    return TERN_OK;
}

static tern_status_t local_finalize(void)
{
    for (size_t i = 0; i < pmi.n_kv; i++) {
        free(pmi.kv[i].key);
        free(pmi.kv[i].value);
    }
    free(pmi.kv);
    pmi.kv = NULL;
    pmi.n_kv = 0;
    return TERN_OK;
}

static void local_abort(int code, const char *msg)
{
    (void)code;
    (void)msg;
}

const tern_pmi_flavour_t tern_singleton_flavour = {
    .name = "singleton",
    .init = local_init,
    .put = local_put,
    .fence = local_fence,
    .get = local_get,
    .node_map = local_node_map,
    .finalize = local_finalize,
    .abort = local_abort,
};

/* --- choosing a flavour ------------------------------------------------------ */

static const tern_pmi_flavour_t *pmix_flavour(void)
{
#ifdef TERN_HAVE_PMIX
    return &tern_pmix_flavour;
#else
    return NULL;
#endif
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* The flavours to try in order (at most 2: PMI-2 then PMI-1); 0 if none. */
static int choose(const char *knob, const tern_pmi_flavour_t *order[2])
{
    if (strcmp(knob, "singleton") == 0) {
        order[0] = &tern_singleton_flavour;
        return 1;
    }
    if (strcmp(knob, "pmi1") == 0) {
        order[0] = &tern_pmi1_flavour;
        return 1;
    }
    if (strcmp(knob, "pmi2") == 0) {
        if (env_set("HYDI_CONTROL_FD")) {
            tern_error("TERN_PMI=pmi2: Hydra's PMI-2 fence does not wait for every rank, "
                       "which Tern relies on; use PMI-1 (the default under Hydra)");
            return 0;
        }
        order[0] = &tern_pmi2_flavour;
        return 1;
    }
    if (strcmp(knob, "pmix") == 0) {
        if (!(order[0] = pmix_flavour())) {
            tern_error("TERN_PMI=pmix: this Tern was built without PMIx (libpmix-dev)");
            return 0;
        }
        return 1;
    }
    if (strcmp(knob, "auto") != 0) {
        tern_error("TERN_PMI=%s: expected auto, pmi1, pmi2, pmix or singleton", knob);
        return 0;
    }
    if (env_set("PMIX_NAMESPACE") && !env_set("PMI_FD")) {
        if (!(order[0] = pmix_flavour())) {
            tern_error("PMI: started by a PMIx process manager, but this Tern was built "
                       "without PMIx; use a PMI-2 launcher (srun --mpi=pmi2)");
            return 0;
        }
        return 1;
    }
    if (env_set("PMI_FD")) {
        /* Slurm's step daemon gets asked for PMI-2 first (PMI-1 if it
         * refuses). Tern's mpiexec speaks PMI-1 only, and Hydra's PMI-2
         * fence is no barrier, so the others get PMI-1. */
        if (env_set("SLURM_STEP_ID") && !env_set("TERN_JOBID") && !env_set("HYDI_CONTROL_FD")) {
            order[0] = &tern_pmi2_flavour;
            order[1] = &tern_pmi1_flavour;
            return 2;
        }
        order[0] = &tern_pmi1_flavour;
        return 1;
    }
    if (env_set("PMI_PORT")) {
        order[0] = &tern_pmi1_flavour;
        return 1;
    }
    /* srun without an MPI plugin starts N processes that would each think
     * they are alone: say so instead. */
    const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
    if (tasks && atoi(tasks) > 1) {
        tern_error("PMI: srun started %s tasks without a PMI plugin; run with "
                   "srun --mpi=pmi2 or --mpi=pmix", tasks);
        return 0;
    }
    order[0] = &tern_singleton_flavour;
    return 1;
}

/* --- pmi.h ----------------------------------------------------------------- */

tern_status_t tern_pmi_init(tern_pmi_info_t *info_p)
{
    if (pmi.flavour) {
        *info_p = pmi.info;
        return TERN_OK;
    }
    const tern_pmi_flavour_t *order[2] = {NULL, NULL};
    int n = choose(tern_knob_str(TERN_KNOB_PMI), order);
    if (n == 0)
        return TERN_ERR_ARG;
    tern_status_t st = TERN_ERR_PMI;
    for (int i = 0; i < n; i++) {
        memset(&pmi.info, 0, sizeof pmi.info);
        st = order[i]->init(&pmi.info);
        if (st == TERN_OK) {
            pmi.flavour = order[i];
            break;
        }
        if (st != TERN_ERR_NOT_SUPPORTED)
            break;
    }
    if (st == TERN_OK && (pmi.info.rank < 0 || pmi.info.rank >= pmi.info.size)) {
        tern_error("PMI: rank %d is outside a job of size %d", pmi.info.rank, pmi.info.size);
        st = TERN_ERR_PMI;
    }
    if (st != TERN_OK) {
        if (st == TERN_ERR_NOT_SUPPORTED)
            tern_error("PMI: the process manager refused PMI-2 (TERN_PMI=pmi2)");
        tern_pmi_conn_close();
        pmi.flavour = NULL;
        return TERN_ERR_PMI;
    }
    pmi.info.flavour = pmi.flavour->name;
    tern_debug("PMI: %s, rank %d of %d, job %s", pmi.info.flavour, pmi.info.rank,
               pmi.info.size, pmi.info.kvsname);
    *info_p = pmi.info;
    return TERN_OK;
}

tern_status_t tern_pmi_spawn(int n_cmds, const tern_pmi_spawn_cmd_t *cmds, const char *preput_key,
                             const char *preput_value, int *errcodes)
{
    if (!pmi.flavour || !pmi.flavour->spawn)
        return tern_status_detail(TERN_ERR_NOT_SUPPORTED,
                                  "the process manager (PMI flavour %s) cannot spawn processes; "
                                  "Tern's mpiexec and Hydra's PMI-1 can",
                                  pmi.flavour ? pmi.flavour->name : "none");
    return pmi.flavour->spawn(n_cmds, cmds, preput_key, preput_value, errcodes);
}

static tern_status_t no_names(void)
{
    return tern_status_detail(TERN_ERR_NOT_SUPPORTED,
                              "the process manager (PMI flavour %s) has no name service; "
                              "Tern's mpiexec and Hydra have one",
                              pmi.flavour ? pmi.flavour->name : "none");
}

tern_status_t tern_pmi_publish(const char *service, const char *port)
{
    return pmi.flavour && pmi.flavour->publish ? pmi.flavour->publish(service, port) : no_names();
}

tern_status_t tern_pmi_unpublish(const char *service)
{
    return pmi.flavour && pmi.flavour->unpublish ? pmi.flavour->unpublish(service) : no_names();
}

tern_status_t tern_pmi_lookup(const char *service, char *port, size_t port_len)
{
    return pmi.flavour && pmi.flavour->lookup ? pmi.flavour->lookup(service, port, port_len)
                                              : no_names();
}

tern_status_t tern_pmi_put(const char *user_key, const char *value)
{
    if (!pmi.flavour)
        return TERN_ERR_PMI;
    char kbuf[512];
    const char *key = epoch_key(user_key, kbuf, sizeof kbuf);
    if (!key)
        return TERN_ERR_ARG;
    size_t len = strlen(value);
    size_t piece = pmi.info.value_max - 1;
    if (value[0] == '^' || strchr(value, ' ') || strchr(value, '=')) {
        tern_error("PMI: value for key %s must be printable without '^' at the start, "
                   "spaces or '='", key);
        return TERN_ERR_ARG;
    }
    if (strlen(key) + 12 > pmi.info.key_max) {
        tern_error("PMI: key %s is longer than the process manager allows (%zu)", key,
                   pmi.info.key_max - 12);
        return TERN_ERR_ARG;
    }
    if (len <= piece) {
        tern_pmi_count_put(strlen(key), len);
        return pmi.flavour->put(key, value);
    }

    /* Too long for one value: store pieces, then a header naming them. */
    size_t n = (len + piece - 1) / piece;
    char sub[512], *chunk = malloc(piece + 1);
    if (!chunk)
        return TERN_ERR_NOMEM;
    tern_status_t st = TERN_OK;
    for (size_t i = 0; i < n && st == TERN_OK; i++) {
        size_t off = i * piece, m = len - off < piece ? len - off : piece;
        memcpy(chunk, value + off, m);
        chunk[m] = '\0';
        snprintf(sub, sizeof sub, "%s-%zu", key, i);
        tern_pmi_count_put(strlen(sub), m);
        st = pmi.flavour->put(sub, chunk);
    }
    free(chunk);
    if (st != TERN_OK)
        return st;
    char header[64];
    snprintf(header, sizeof header, CHUNK_HEADER "%zu:%zu", n, len);
    tern_pmi_count_put(strlen(key), strlen(header));
    return pmi.flavour->put(key, header);
}

tern_status_t tern_pmi_get(const char *user_key, char *value, size_t value_len)
{
    if (!pmi.flavour)
        return TERN_ERR_PMI;
    char kbuf[512];
    const char *key = epoch_key(user_key, kbuf, sizeof kbuf);
    if (!key)
        return TERN_ERR_ARG;
    size_t buf_len = pmi.info.value_max + 1;
    char *buf = malloc(buf_len);
    if (!buf)
        return TERN_ERR_NOMEM;
    tern_status_t st = pmi.flavour->get(key, buf, buf_len);
    tern_pmi_count_get(strlen(key), st == TERN_OK ? strlen(buf) : 0);
    if (st != TERN_OK)
        goto out;
    size_t n, len;
    if (strncmp(buf, CHUNK_HEADER, strlen(CHUNK_HEADER)) != 0 ||
        sscanf(buf + strlen(CHUNK_HEADER), "%zu:%zu", &n, &len) != 2) {
        if (strlen(buf) >= value_len)
            st = TERN_ERR_TRUNCATE;
        else
            strcpy(value, buf);
        goto out;
    }
    if (len >= value_len) {
        st = TERN_ERR_TRUNCATE;
        goto out;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s-%zu", key, i);
        st = pmi.flavour->get(sub, value + off, value_len - off);
        tern_pmi_count_get(strlen(sub), st == TERN_OK ? strlen(value + off) : 0);
        if (st != TERN_OK)
            goto out;
        off += strlen(value + off);
    }
    if (off != len) {
        tern_error("PMI: value of key %s came back with %zu bytes, expected %zu", key, off, len);
        st = TERN_ERR_PMI;
    }
out:
    free(buf);
    return st;
}

tern_status_t tern_pmi_fence(void)
{
    if (!pmi.flavour)
        return TERN_ERR_PMI;
    tern_pmi_count_fence();
    return pmi.flavour->fence();
}

tern_status_t tern_pmi_node_map(int *node_of_rank)
{
    if (!pmi.flavour)
        return TERN_ERR_PMI;
    tern_pmi_count_other();
    tern_status_t st = pmi.flavour->node_map(node_of_rank);
    if (st != TERN_OK)
        return st;
    /* Renumber densely in order of first appearance, as callers index
     * arrays by node. */
    int size = pmi.info.size;
    int *ids = malloc((size_t)size * sizeof *ids);
    if (!ids)
        return TERN_ERR_NOMEM;
    int n_nodes = 0;
    for (int r = 0; r < size; r++) {
        int node = -1;
        for (int k = 0; k < n_nodes; k++)
            if (ids[k] == node_of_rank[r])
                node = k;
        if (node < 0) {
            ids[n_nodes] = node_of_rank[r];
            node = n_nodes++;
        }
        node_of_rank[r] = node;
    }
    free(ids);
    return TERN_OK;
}

void tern_pmi_next_epoch(void)
{
    pmi.epoch++;
}

static void finalize_at_exit(void)
{
    if (pmi.running && !pmi.running())
        (void)tern_pmi_finalize();
}

void tern_pmi_finalize_at_exit(int (*running)(void))
{
    if (!pmi.running)
        atexit(finalize_at_exit);
    pmi.running = running;
}

tern_status_t tern_pmi_finalize(void)
{
    if (!pmi.flavour)
        return TERN_OK;
    tern_status_t st = pmi.flavour->finalize();
    pmi.flavour = NULL;
    return st;
}

const char *tern_pmi_abort_scope;

void tern_pmi_abort_ranks(int code, const char *msg, const char *ranks)
{
    tern_pmi_abort_scope = ranks;
    tern_pmi_abort(code, msg);
}

void tern_pmi_abort(int code, const char *msg)
{
    if (!msg)
        msg = "";
    /* Tern's mpiexec (it sets TERN_JOBID) prints the message itself; other
     * process managers may not. */
    if (!pmi.flavour || pmi.flavour == &tern_singleton_flavour) {
        fprintf(stderr, "tern: MPI_Abort with code %d%s%s\n", code, *msg ? ": " : "", msg);
    } else if (!getenv("TERN_JOBID")) {
        fprintf(stderr, "tern[rank %d]: MPI_Abort with code %d%s%s\n", pmi.info.rank, code,
                *msg ? ": " : "", msg);
        fflush(stdout);
        /* Hydra and Slurm kill the job as soon as they read the abort, and
         * may drop output not yet forwarded: give them a moment to take
         * the message. */
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fflush(stderr);
    if (pmi.flavour)
        pmi.flavour->abort(code, msg);
    fflush(stdout);
    _exit(code);
}
