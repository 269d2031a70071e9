/* Inside the PMI client: what each process-manager flavour provides to the
 * dispatcher (pmi_client.c), which picks one at tern_pmi_init, splits long
 * values into chunks and renumbers node maps.
 *
 * A flavour's put/get see values of at most info->value_max bytes and keys
 * of at most info->key_max; get returns TERN_ERR_NOT_FOUND for a missing
 * key. node_map fills node_of_rank[size] with any node ids (the dispatcher
 * makes them dense) or returns TERN_ERR_NOT_SUPPORTED when the launcher
 * offers no map. abort asks the manager to end the job and returns; the
 * dispatcher then exits. */
#ifndef TERN_PMI_PMI_FLAVOUR_H
#define TERN_PMI_PMI_FLAVOUR_H

#include "pmi/pmi.h"
#include "pmi/pmi_wire.h"

typedef struct {
    const char *name;
    tern_status_t (*init)(tern_pmi_info_t *info);
    tern_status_t (*put)(const char *key, const char *value);
    tern_status_t (*fence)(void);
    tern_status_t (*get)(const char *key, char *value, size_t value_len);
    tern_status_t (*node_map)(int *node_of_rank);
    tern_status_t (*finalize)(void);
    void (*abort)(int code, const char *msg);
    /* Optional (NULL: the manager has no spawn); see tern_pmi_spawn. */
    tern_status_t (*spawn)(int n_cmds, const tern_pmi_spawn_cmd_t *cmds, const char *preput_key,
                           const char *preput_value, int *errcodes);
    /* Optional (NULL: no name service); see tern_pmi_publish. */
    tern_status_t (*publish)(const char *service, const char *port);
    tern_status_t (*unpublish)(const char *service);
    tern_status_t (*lookup)(const char *service, char *port, size_t port_len);
} tern_pmi_flavour_t;

extern const tern_pmi_flavour_t tern_pmi1_flavour;      /* pmi1_client.c */
extern const tern_pmi_flavour_t tern_pmi2_flavour;      /* pmi2_client.c */
extern const tern_pmi_flavour_t tern_pmix_flavour;      /* pmix_client.c, if built */
extern const tern_pmi_flavour_t tern_singleton_flavour; /* pmi_client.c */

/* pmi_conn.c: the socket to a wire process manager (PMI_FD, or PMI_PORT
 * "host:port"), shared by PMI-1 and PMI-2 since PMI-2 starts with a PMI-1
 * init line and falls back to PMI-1 when the manager refuses version 2. */
tern_status_t tern_pmi_conn_open(void); /* idempotent */
void tern_pmi_conn_close(void);
int tern_pmi_conn_is_port(void);       /* opened from PMI_PORT */
/* Sends a finished buffer (already framed). */
tern_status_t tern_pmi_conn_send(const char *buf, size_t len);
/* The wire forms of a line: PMI-1's "cmd=..." text lines, PMI-2's
 * length-prefixed messages. */
typedef enum { TERN_PMI_WIRE1 = 1, TERN_PMI_WIRE2 = 2 } tern_pmi_wire_t;
/* Frames line in that form, sends it and frees it; TERN_ERR_PMI on any
 * failure. */
tern_status_t tern_pmi_conn_send_line(tern_pmi_line_t *line, tern_pmi_wire_t wire);
/* The same, then the reply in the same form: the request/response step
 * both clients are made of. */
tern_status_t tern_pmi_conn_call(tern_pmi_line_t *line, tern_pmi_wire_t wire,
                                 tern_pmi_msg_t *msg_p);
/* Next PMI-1 line / PMI-2 message, parsed; points into the connection's
 * buffer until the next receive. */
tern_status_t tern_pmi_conn_recv1(tern_pmi_msg_t *msg_p);
tern_status_t tern_pmi_conn_recv2(tern_pmi_msg_t *msg_p);
/* An environment variable as a non-negative int; TERN_ERR_NOT_FOUND if
 * unset, TERN_ERR_PMI (logged) if not a number. */
tern_status_t tern_pmi_env_int(const char *name, int *value_p);

/* pmi_profile.c: the dispatcher counts each operation it hands a flavour
 * (tern_pmi_counts). */
void tern_pmi_count_put(size_t key_len, size_t value_len);
void tern_pmi_count_get(size_t key_len, size_t value_len);
void tern_pmi_count_fence(void);
void tern_pmi_count_other(void);

#endif
