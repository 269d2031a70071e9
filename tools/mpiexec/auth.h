/* SHA-256, HMAC-SHA256 and the proof a proxy gives the root (auth.c). */
#ifndef TERN_MPIEXEC_AUTH_H
#define TERN_MPIEXEC_AUTH_H

#include "mpiexec.h"

#include <stddef.h>
#include <stdint.h>

enum { MPIEXEC_SHA256_LEN = 32, MPIEXEC_NONCE_LEN = 16 };

typedef struct {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t fill;
} mpiexec_sha256_t;

void mpiexec_sha256_init(mpiexec_sha256_t *c);
void mpiexec_sha256_update(mpiexec_sha256_t *c, const void *data, size_t n);
void mpiexec_sha256_final(mpiexec_sha256_t *c, unsigned char out[MPIEXEC_SHA256_LEN]);
void mpiexec_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                         unsigned char out[MPIEXEC_SHA256_LEN]);

/* n bytes from getrandom(); -1 if the kernel gave none. */
int mpiexec_random(void *buf, size_t n);
/* Lower-case hex of n bytes into out (2n+1 chars); _unhex: -1 unless text
 * is exactly 2n hex digits. */
void mpiexec_hex(const unsigned char *bytes, size_t n, char *out);
int mpiexec_unhex(const char *text, unsigned char *bytes, size_t n);

/* The proof for host `host` answering nonce_hex, in hex. */
void mpiexec_auth_proof(const unsigned char secret[MPIEXEC_SECRET_LEN], const char *nonce_hex,
                        int host, char out_hex[2 * MPIEXEC_SHA256_LEN + 1]);
/* 1 if proof_hex is that proof (compared in constant time), else 0. */
int mpiexec_auth_check(const unsigned char secret[MPIEXEC_SECRET_LEN], const char *nonce_hex,
                       int host, const char *proof_hex);

/* The root's proof in turn, for the nonce a proxy sent in its hello (a
 * proxy obeys only a root that holds the job's secret), and its check. */
void mpiexec_auth_root_proof(const unsigned char secret[MPIEXEC_SECRET_LEN],
                             const char *nonce_hex, int host,
                             char out_hex[2 * MPIEXEC_SHA256_LEN + 1]);
int mpiexec_auth_check_root(const unsigned char secret[MPIEXEC_SECRET_LEN],
                            const char *nonce_hex, int host, const char *proof_hex);

/* Waits for events on fd until `until` (mpiexec_now() time): 1 ready, 0
 * timed out, -1 error, -SIG when a signal other than SIGCHLD arrived on
 * signal_fd (-1: none). */
int mpiexec_wait_fd(int fd, short events, int signal_fd, double until);
/* Reads the secret's hex line from fd (a proxy's stdin): 0, or -1 / -SIG. */
int mpiexec_auth_read_secret(int fd, unsigned char secret[MPIEXEC_SECRET_LEN], int signal_fd,
                             double until);

#endif
