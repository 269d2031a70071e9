/* Authentication of the root <-> proxy control connections. The root draws
 * a per-job secret (MPIEXEC_SECRET_LEN bytes from getrandom) and hands it to
 * each proxy as the first line of the remote-start command's stdin, so it
 * is never on a command line, in the environment or in a log. A proxy that
 * connects gets a fresh nonce and answers with
 *   HMAC-SHA256(secret, "tern-mpiexec-hello:" nonce ":" host)
 * which the root compares in constant time before it reads anything else.
 * SHA-256 and HMAC are written here (FIPS 180-4, RFC 2104): Tern links no
 * crypto library, and this is the only use. */
#include "auth.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(mpiexec_sha256_t *c, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5],
             g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = b;
        b = a;
        a = t1 + t2;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
    c->h[5] += f;
    c->h[6] += g;
    c->h[7] += h;
}

void mpiexec_sha256_init(mpiexec_sha256_t *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->bytes = 0;
    c->fill = 0;
}

void mpiexec_sha256_update(mpiexec_sha256_t *c, const void *data, size_t n)
{
    const unsigned char *p = data;
    c->bytes += n;
    while (n > 0) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        n -= take;
        if (c->fill == 64) {
            sha256_block(c, c->block);
            c->fill = 0;
        }
    }
}

void mpiexec_sha256_final(mpiexec_sha256_t *c, unsigned char out[MPIEXEC_SHA256_LEN])
{
    uint64_t bits = c->bytes * 8;
    unsigned char pad[72] = {0x80};
    size_t padlen = (c->fill < 56 ? 56 : 120) - c->fill;
    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    mpiexec_sha256_update(c, pad, padlen + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (unsigned char)(c->h[i] >> (24 - 8 * j));
}

void mpiexec_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                         unsigned char out[MPIEXEC_SHA256_LEN])
{
    unsigned char k[64] = {0}, pad[64], inner[MPIEXEC_SHA256_LEN];
    mpiexec_sha256_t c;
    if (key_len > 64) {
        mpiexec_sha256_init(&c);
        mpiexec_sha256_update(&c, key, key_len);
        mpiexec_sha256_final(&c, k);
    } else {
        memcpy(k, key, key_len);
    }
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    mpiexec_sha256_init(&c);
    mpiexec_sha256_update(&c, pad, 64);
    mpiexec_sha256_update(&c, msg, msg_len);
    mpiexec_sha256_final(&c, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    mpiexec_sha256_init(&c);
    mpiexec_sha256_update(&c, pad, 64);
    mpiexec_sha256_update(&c, inner, sizeof inner);
    mpiexec_sha256_final(&c, out);
}

int mpiexec_random(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

void mpiexec_hex(const unsigned char *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int mpiexec_unhex(const char *text, unsigned char *bytes, size_t n)
{
    if (strlen(text) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        bytes[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

/* HMAC-SHA256(secret, "tern-mpiexec-<what>:<nonce>:<host>") in hex; the
 * word keeps a proxy's proof from serving as the root's and back. */
static void proof_of(const unsigned char secret[MPIEXEC_SECRET_LEN], const char *what,
                     const char *nonce_hex, int host, char out_hex[2 * MPIEXEC_SHA256_LEN + 1])
{
    char msg[256];
    int len = snprintf(msg, sizeof msg, "tern-mpiexec-%s:%.128s:%d", what, nonce_hex, host);
    unsigned char mac[MPIEXEC_SHA256_LEN];
    mpiexec_hmac_sha256(secret, MPIEXEC_SECRET_LEN, msg, (size_t)len, mac);
    mpiexec_hex(mac, sizeof mac, out_hex);
}

void mpiexec_auth_root_proof(const unsigned char secret[MPIEXEC_SECRET_LEN],
                             const char *nonce_hex, int host,
                             char out_hex[2 * MPIEXEC_SHA256_LEN + 1])
{
    proof_of(secret, "welcome", nonce_hex, host, out_hex);
}

static int same_proof(const char want[2 * MPIEXEC_SHA256_LEN + 1], const char *proof_hex)
{
    /* Constant time: every byte is compared whatever the first difference. */
    size_t len = strlen(proof_hex), n = 2 * MPIEXEC_SHA256_LEN;
    const char *got = len == n ? proof_hex : want;
    unsigned diff = len != n;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)want[i] ^ (unsigned char)got[i];
    return diff == 0;
}

int mpiexec_auth_check_root(const unsigned char secret[MPIEXEC_SECRET_LEN],
                            const char *nonce_hex, int host, const char *proof_hex)
{
    char want[2 * MPIEXEC_SHA256_LEN + 1];
    mpiexec_auth_root_proof(secret, nonce_hex, host, want);
    return same_proof(want, proof_hex);
}

void mpiexec_auth_proof(const unsigned char secret[MPIEXEC_SECRET_LEN], const char *nonce_hex,
                        int host, char out_hex[2 * MPIEXEC_SHA256_LEN + 1])
{
    char msg[256];
    int len = snprintf(msg, sizeof msg, "tern-mpiexec-hello:%.128s:%d", nonce_hex, host);
    unsigned char mac[MPIEXEC_SHA256_LEN];
    mpiexec_hmac_sha256(secret, MPIEXEC_SECRET_LEN, msg, (size_t)len, mac);
    mpiexec_hex(mac, sizeof mac, out_hex);
}

int mpiexec_auth_check(const unsigned char secret[MPIEXEC_SECRET_LEN], const char *nonce_hex,
                       int host, const char *proof_hex)
{
    char want[2 * MPIEXEC_SHA256_LEN + 1];
    mpiexec_auth_proof(secret, nonce_hex, host, want);
    /* Constant time: every byte is compared whatever the first difference. */
    size_t len = strlen(proof_hex);
    const char *got = len == sizeof want - 1 ? proof_hex : want;
    unsigned diff = len != sizeof want - 1;
    for (size_t i = 0; i < sizeof want - 1; i++)
        diff |= (unsigned char)want[i] ^ (unsigned char)got[i];
    return diff == 0;
}

int mpiexec_wait_fd(int fd, short events, int signal_fd, double until)
{
    for (;;) {
        double left = until - mpiexec_now();
        if (left <= 0)
            return 0;
        struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = signal_fd, .events = POLLIN}};
        int k = poll(p, 2, (int)(left * 1000) + 1);
        if (k < 0 && errno != EINTR)
            return -1;
        struct signalfd_siginfo si;
        while (signal_fd >= 0 && read(signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
            if (si.ssi_signo != SIGCHLD)
                return -(int)si.ssi_signo;
        if (k > 0 && p[0].revents)
            return 1;
    }
}

int mpiexec_auth_read_secret(int fd, unsigned char secret[MPIEXEC_SECRET_LEN], int signal_fd,
                             double until)
{
    char line[2 * MPIEXEC_SECRET_LEN + 2];
    size_t len = 0;
    /* One byte at a time: what follows the line is rank 0's stdin. */
    for (;;) {
        int w = mpiexec_wait_fd(fd, POLLIN, signal_fd, until);
        if (w <= 0)
            return w < 0 ? w : -1;
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return -1;
        if (c == '\n')
            break;
        if (len == sizeof line - 1)
            return -1;
        line[len++] = c;
    }
    line[len] = '\0';
    return mpiexec_unhex(line, secret, MPIEXEC_SECRET_LEN) == 0 ? 0 : -1;
}
