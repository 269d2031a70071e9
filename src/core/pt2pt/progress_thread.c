/* The asynchronous progress thread (progress_thread.h). It polls with a
 * sleep that doubles while nothing happens (16 us up to 1 ms), so an idle
 * rank costs little CPU on a loaded node, and polls again at once after a
 * pass that handled events. */
#include "core/pt2pt/progress_thread.h"
#include "base/config.h"
#include "core/pt2pt/progress.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define SLEEP_MIN_NS 16000L
#define SLEEP_MAX_NS 1000000L

int tern_async_active;

static pthread_t thread;
static atomic_int stop_flag;

int tern_progress_thread_is_self(void)
{
    return tern_async_active && pthread_equal(pthread_self(), thread);
}

static void *thread_main(void *arg)
{
    (void)arg;
    long sleep_ns = SLEEP_MIN_NS;
    while (!atomic_load_explicit(&stop_flag, memory_order_acquire)) {
        int n = 0;
        if (tern_api_trylock()) {
            n = tern_progress();
            tern_api_unlock();
        }
        if (n) {
            sleep_ns = SLEEP_MIN_NS;
            continue;
        }
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < SLEEP_MAX_NS)
            sleep_ns *= 2;
    }
    return NULL;
}

tern_status_t tern_progress_thread_start(void)
{
    if (tern_async_active || !tern_knob_bool(TERN_KNOB_ASYNC_PROGRESS))
        return TERN_OK;
    atomic_store(&stop_flag, 0);
    /* Signals stay with the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    tern_async_active = 1;
    tern_api_locking_on(); /* entry points lock from now on */
    int err = pthread_create(&thread, NULL, thread_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        tern_async_active = 0;
        return tern_status_detail(TERN_ERR_NOMEM, "TERN_ASYNC_PROGRESS: the progress thread "
                                  "could not start: %s", strerror(err));
    }
    pthread_setname_np(thread, "tern-progress");
    return TERN_OK;
}

void tern_progress_thread_stop(void)
{
    if (!tern_async_active)
        return;
    /* The thread only ever try-locks, so joining under the lock is safe.
     * The entry points keep locking: other threads may still call MPI. */
    atomic_store_explicit(&stop_flag, 1, memory_order_release);
    pthread_join(thread, NULL);
    tern_async_active = 0;
}
