/* The PMI-1 "simple" wire protocol, one codec for client (pmi_client.c) and
 * server (tools/mpiexec).
 *
 * A message is one line: "cmd=<name>" then space-separated key=value fields,
 * ending in '\n':
 *     cmd=put kvsname=tern-12-ab key=addr-0 value=0a1b2c\n
 * Keys are [A-Za-z0-9_/-]. In a value, a backslash escapes the next
 * character (so "\ " is a space inside a value, "\\" a backslash); the
 * formatter escapes spaces and backslashes and turns control characters into
 * escaped spaces, as MPICH's pmi_wire.c does. Replies carry rc=0 on success,
 * rc=<nonzero> msg=<text> on failure.
 *
 * Commands (client query -> server reply), after MPICH's pmi-1.1.txt:
 *   init pmi_version=1 pmi_subversion=1 -> response_to_init rc pmi_version pmi_subversion
 *   initack pmiid=N (optional)          -> initack rank size appnum debug
 *   get_maxes                           -> maxes kvsname_max keylen_max vallen_max
 *   get_appnum                          -> appnum appnum
 *   get_universe_size                   -> universe_size size
 *   get_my_kvsname                      -> my_kvsname kvsname
 *   put kvsname key value               -> put_result rc
 *   get kvsname key                     -> get_result rc value [found]
 *   barrier_in                          -> barrier_out (once every rank sent barrier_in)
 *   finalize                            -> finalize_ack
 *   abort exitcode=N [message=text]     -> (no reply; the server ends the job)
 *   publish_name service port           -> publish_result rc
 *   unpublish_name service              -> unpublish_result rc
 *   lookup_name service                 -> lookup_result rc port
 *   mcmd=spawn, key=value lines, endcmd -> spawn_result rc [msg] [errcodes]
 *     (one multi-line block per command, unescaped values; see
 *     tools/mpiexec/spawn.c)
 */
#ifndef TERN_PMI_PMI_WIRE_H
#define TERN_PMI_PMI_WIRE_H

#include "base/status.h"
#include <stddef.h>
#include <sys/types.h>

enum { TERN_PMI_WIRE_MAX_FIELDS = 32 };

/* A parsed message. Strings point into the line given to the parser. */
typedef struct {
    const char *cmd;
    int n_fields;
    struct {
        const char *key;
        const char *value; /* "" for a bare key */
    } fields[TERN_PMI_WIRE_MAX_FIELDS];
} tern_pmi_msg_t;

/* Parses one line in place (a trailing '\n' is allowed; escapes are undone,
 * so the line is modified). TERN_ERR_ARG if the line is malformed: not
 * starting with "cmd=", a bad key character, an empty command or too many
 * fields. A bare key and "key=" both have the empty value "". */
tern_status_t tern_pmi_wire_parse(char *line, tern_pmi_msg_t *msg_p);
/* The value of field `key`, or NULL if absent. */
const char *tern_pmi_msg_get(const tern_pmi_msg_t *msg, const char *key);
/* The field as an int; TERN_ERR_NOT_FOUND if absent, TERN_ERR_ARG if not a
 * number. */
tern_status_t tern_pmi_msg_get_int(const tern_pmi_msg_t *msg, const char *key, int *value_p);
/* 0 when the reply carries no rc or rc=0; otherwise the rc (or -1 if rc is
 * not a number). */
int tern_pmi_msg_rc(const tern_pmi_msg_t *msg);

/* Builds an outgoing line in a growing heap buffer:
 *     tern_pmi_line_t l; tern_pmi_line_begin(&l, "put");
 *     tern_pmi_line_add(&l, "key", k); ...; tern_pmi_line_end(&l);
 *     write(fd, l.buf, l.len); tern_pmi_line_free(&l);
 * Allocation failures are remembered and reported by _end. */
typedef struct {
    char *buf;
    size_t len;
    size_t cap;
    int failed;
} tern_pmi_line_t;

void tern_pmi_line_begin(tern_pmi_line_t *line, const char *cmd);
/* Appends " key=value", escaping the value. */
void tern_pmi_line_add(tern_pmi_line_t *line, const char *key, const char *value);
void tern_pmi_line_add_int(tern_pmi_line_t *line, const char *key, long value);
/* Appends '\n' (line->len counts it). TERN_ERR_NOMEM if any step failed. */
tern_status_t tern_pmi_line_end(tern_pmi_line_t *line);
void tern_pmi_line_free(tern_pmi_line_t *line);

/* Splits a byte stream into lines: feed it what read() returned, then take
 * complete lines out. Used blocking by the client, non-blocking by the
 * server. */
typedef struct {
    char *buf;
    size_t len;   /* bytes held */
    size_t start; /* first byte not yet returned */
    size_t cap;
} tern_pmi_reader_t;

void tern_pmi_reader_init(tern_pmi_reader_t *r);
void tern_pmi_reader_free(tern_pmi_reader_t *r);
/* Reads once from fd into the buffer. *n_p is the byte count (0 at EOF).
 * TERN_ERR_AGAIN on EAGAIN/EINTR, TERN_ERR_IO on other errors. */
tern_status_t tern_pmi_reader_fill(tern_pmi_reader_t *r, int fd, ssize_t *n_p);
/* Appends bytes (for tests and for callers that read themselves). */
tern_status_t tern_pmi_reader_push(tern_pmi_reader_t *r, const char *data, size_t n);
/* The next complete line, NUL-terminated with the '\n' removed, valid until
 * the next call on r; NULL if no complete line is buffered. */
char *tern_pmi_reader_next(tern_pmi_reader_t *r);

/* --- PMI-2 framing (MPICH's pmi-2.0.txt, as Slurm's mpi/pmi2 and Hydra
 * speak it) ----------------------------------------------------------------
 * A message is a 6-character decimal length, padded with spaces, then that
 * many bytes of "cmd=<name>;key=value;...;". A ';' inside a value is doubled
 * (";;"); keys never contain ';' or '='. Parsed messages use tern_pmi_msg_t
 * and its getters. The session starts with a PMI-1 line
 * "cmd=init pmi_version=2 pmi_subversion=0"; the rest uses this framing. */
enum { TERN_PMI2_HEADER_LEN = 6, TERN_PMI2_MAX_LEN = 999999 };

/* Parses body[0, len) in place (escapes undone, fields NUL-terminated);
 * body[len] must be '\0'. TERN_ERR_ARG if malformed. */
tern_status_t tern_pmi2_wire_parse(char *body, size_t len, tern_pmi_msg_t *msg_p);
/* Builders over tern_pmi_line_t: _begin reserves the length header, _end
 * fills it in (TERN_ERR_ARG if the message outgrew TERN_PMI2_MAX_LEN). */
void tern_pmi2_line_begin(tern_pmi_line_t *line, const char *cmd);
void tern_pmi2_line_add(tern_pmi_line_t *line, const char *key, const char *value);
void tern_pmi2_line_add_int(tern_pmi_line_t *line, const char *key, long value);
tern_status_t tern_pmi2_line_end(tern_pmi_line_t *line);
/* The next complete PMI-2 message's body (header removed, NUL-terminated,
 * *len_p bytes), valid until the next call on r; NULL if none is complete.
 * TERN_ERR_ARG in *st_p when the header is not a number. */
char *tern_pmi2_reader_next(tern_pmi_reader_t *r, size_t *len_p, tern_status_t *st_p);

/* Writes all of buf to fd, retrying on EINTR and short writes (blocking fd). */
tern_status_t tern_pmi_wire_write_all(int fd, const char *buf, size_t len);

#endif
