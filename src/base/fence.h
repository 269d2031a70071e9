/* Memory fences for functions that are inlined into others (the fast
 * paths of one-sided calls in their headers). GCC 12 rejects a fence it
 * has inlined when it builds with -fsanitize=thread (-Wtsan: the sanitizer
 * does not model fences), so under ThreadSanitizer each fence is a call
 * of its own; elsewhere it is the fence itself. */
#ifndef TERN_BASE_FENCE_H
#define TERN_BASE_FENCE_H

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__)
#define TERN_FENCE_FN static __attribute__((noinline, unused))
#else
#define TERN_FENCE_FN static inline
#endif

TERN_FENCE_FN void tern_fence_release(void)
{
    atomic_thread_fence(memory_order_release);
}

TERN_FENCE_FN void tern_fence_seq_cst(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}

#undef TERN_FENCE_FN

#endif
