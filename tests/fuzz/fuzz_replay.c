/* Runs a fuzz target's LLVMFuzzerTestOneInput once per file named on the
 * command line, without libFuzzer: the checked-in corpora (the crashes
 * found, kept as regressions, among them) are replayed by ctest in every
 * build (fuzz_replay_<target>), with the sanitizers in build-asan. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0, n;
        do {
            if (len == cap) {
                cap = cap ? 2 * cap : 4096;
                uint8_t *b = realloc(buf, cap);
                if (!b)
                    return 1;
                buf = b;
            }
            n = fread(buf + len, 1, cap - len, f);
            len += n;
        } while (n > 0);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
    }
    printf("replayed %d inputs\n", argc - 1);
    return 0;
}
