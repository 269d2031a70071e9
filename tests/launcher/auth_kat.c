/* Known answers for mpiexec's in-tree SHA-256 and HMAC-SHA256 (FIPS 180-4
 * examples, RFC 4231 test cases 1, 2 and 6), input fed whole and in odd
 * pieces, and the proof check: the right proof passes, a changed, short or
 * long one, or one for another host or nonce, fails. */
#include "auth.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* auth.c's deadlines use job.c's clock. */
double mpiexec_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int failures;

static void expect_hex(const char *what, const unsigned char *got, const char *want)
{
    char hex[2 * MPIEXEC_SHA256_LEN + 1];
    mpiexec_hex(got, MPIEXEC_SHA256_LEN, hex);
    if (strcmp(hex, want) != 0) {
        printf("FAIL %s: %s, expected %s\n", what, hex, want);
        failures++;
    }
}

static void sha(const char *what, const void *data, size_t n, size_t piece, const char *want)
{
    mpiexec_sha256_t c;
    unsigned char out[MPIEXEC_SHA256_LEN];
    mpiexec_sha256_init(&c);
    for (size_t off = 0; off < n; off += piece)
        mpiexec_sha256_update(&c, (const char *)data + off, n - off < piece ? n - off : piece);
    mpiexec_sha256_final(&c, out);
    expect_hex(what, out, want);
}

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL %s\n", what);
        failures++;
    }
}

int main(void)
{
    static char million[1000000];
    memset(million, 'a', sizeof million);
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    for (size_t piece = 1; piece <= 129; piece += 64) {
        sha("sha256('')", "", 0, piece,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        sha("sha256('abc')", "abc", 3, piece,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        sha("sha256(448 bits)", two_blocks, strlen(two_blocks), piece,
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }
    sha("sha256(a x 1e6)", million, sizeof million, 1000,
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    sha("sha256(a x 1e6, 997-byte pieces)", million, sizeof million, 997,
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    unsigned char key[131], mac[MPIEXEC_SHA256_LEN];
    memset(key, 0x0b, 20);
    mpiexec_hmac_sha256(key, 20, "Hi There", 8, mac);
    expect_hex("RFC 4231 case 1", mac,
               "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    const char *jefe = "what do ya want for nothing?";
    mpiexec_hmac_sha256("Jefe", 4, jefe, strlen(jefe), mac);
    expect_hex("RFC 4231 case 2", mac,
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, sizeof key);
    const char *big = "Test Using Larger Than Block-Size Key - Hash Key First";
    mpiexec_hmac_sha256(key, sizeof key, big, strlen(big), mac);
    expect_hex("RFC 4231 case 6", mac,
               "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

    unsigned char secret[MPIEXEC_SECRET_LEN];
    expect(mpiexec_random(secret, sizeof secret) == 0, "getrandom");
    const char *nonce = "00112233445566778899aabbccddeeff";
    char proof[2 * MPIEXEC_SHA256_LEN + 1], bad[sizeof proof + 1];
    mpiexec_auth_proof(secret, nonce, 3, proof);
    expect(mpiexec_auth_check(secret, nonce, 3, proof), "the right proof passes");
    expect(!mpiexec_auth_check(secret, nonce, 2, proof), "another host's proof fails");
    expect(!mpiexec_auth_check(secret, "00112233445566778899aabbccddeefe", 3, proof),
           "another nonce's proof fails");
    memcpy(bad, proof, sizeof proof);
    bad[17] = bad[17] == '0' ? '1' : '0';
    expect(!mpiexec_auth_check(secret, nonce, 3, bad), "a changed proof fails");
    bad[17] = proof[17];
    bad[63] = '\0';
    expect(!mpiexec_auth_check(secret, nonce, 3, bad), "a short proof fails");
    memcpy(bad, proof, sizeof proof);
    strcat(bad, "0");
    expect(!mpiexec_auth_check(secret, nonce, 3, bad), "a long proof fails");
    expect(!mpiexec_auth_check(secret, nonce, 3, ""), "an empty proof fails");
    unsigned char back[MPIEXEC_SECRET_LEN];
    char hex[2 * MPIEXEC_SECRET_LEN + 1];
    mpiexec_hex(secret, sizeof secret, hex);
    expect(mpiexec_unhex(hex, back, sizeof back) == 0 && !memcmp(back, secret, sizeof back),
           "hex round trip");
    expect(mpiexec_unhex("zz", back, 1) != 0, "non-hex refused");
    if (failures == 0)
        printf("auth_kat: all passed\n");
    return failures != 0;
}
