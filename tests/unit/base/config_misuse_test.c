/* Misuses of the knob API that must not compile. tests/unit compiles this
 * file once per TERN_MISUSE case and expects the compiler's message naming
 * the misuse; case 0, correct use, must compile (the harness itself works). */
#include "base/config.h"

int main(void)
{
#if TERN_MISUSE == 1
    return (int)tern_knob_size(TERN_KNOB_SHM_CELL_SIZ); /* misspelled knob */
#elif TERN_MISUSE == 2
    return (int)tern_knob_size(TERN_KNOB_CONNECT); /* an enum read as a size */
#elif TERN_MISUSE == 3
    return (int)tern_knob_size(TERN_KNOB_SHM_CMA_MIN); /* takes auto: needs tern_knob_size_or */
#elif TERN_MISUSE == 4
    return tern_knob_is(TERN_KNOB_SHM_RING_CELLS, "auto"); /* a count read as an enum */
#else
    return (int)(tern_knob_size(TERN_KNOB_SHM_BULK_CHUNK) + tern_knob_size_or(TERN_KNOB_SHM_CMA_MIN, 0) +
                 (size_t)tern_knob_is(TERN_KNOB_CONNECT, "all"));
#endif
}
