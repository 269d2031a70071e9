/* libfabric is loaded when the ofi transport first needs it (dlopen), not
 * linked into libtern: Debian's libfabric.so.1 depends on libpsm2 and
 * libpsm_infinipath, whose constructors calibrate the CPU clock with ~800
 * short nanosleeps each, about 100 ms apiece. Linked, every MPI process paid
 * those 200 ms before main, even when all its peers were on shared memory.
 *
 * Tern calls only five exported functions of libfabric (everything else in
 * its API is inline, through the objects' ops tables). They are defined
 * here with libfabric's own names and signatures, hidden (libtern exports
 * only MPI_*), and forward to the library once tern_ofi_lib_load has
 * opened it. TERN_OFI_LIBRARY names the library (a path for a libfabric of
 * one's own). A job with ranks on other hosts loads it from a thread
 * started before the shm transport (TERN_OFI_PRELOAD), so the two starts
 * overlap. */
#include "transport/ofi/ofi_internal.h"
#include "base/config.h"
#include "base/log.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HIDDEN __attribute__((visibility("hidden")))

static struct {
    void *handle;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} lib;

static const char not_libfabric[] =
    "is not a usable libfabric (fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric or fi_strerror "
    "missing)";

/* Opens the library and finds the five functions: NULL, or why not
 * (dlerror's text or not_libfabric) with nothing kept open. */
static const char *open_library(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return dlerror();
    /* Plain dlsym gives each symbol's default version, the one the linker
     * would have bound against these headers. */
    *(void **)&lib.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&lib.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&lib.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&lib.fabric = dlsym(h, "fi_fabric");
    *(void **)&lib.strerror = dlsym(h, "fi_strerror");
    if (!lib.getinfo || !lib.freeinfo || !lib.dupinfo || !lib.fabric || !lib.strerror) {
        dlclose(h);
        memset(&lib, 0, sizeof lib);
        return not_libfabric;
    }
    lib.handle = h;
    return NULL;
}

/* Debian's libinfinipath (under libpsm_infinipath) installs handlers for
 * SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGILL and SIGABRT in its constructor
 * (a backtrace, then exit) unless IPATH_NO_BACKTRACE is set (Open MPI's
 * PSM component sets it too). With them, mpiexec's SIGTERM runs exit handlers while the
 * preload thread is inside libfabric (use after free), and a crash no longer
 * dumps core or reaches a sanitizer. A value the user set is kept. Called
 * before the load, in the thread that starts it. */
static void keep_signal_defaults(void)
{
    setenv("IPATH_NO_BACKTRACE", "1", 0);
}

/* The preload thread: the library's constructors (Debian's libpsm2 and
 * libpsm_infinipath calibrate the clock, ~100 ms of short sleeps each)
 * and libfabric's own start-up, which its first fi_getinfo runs: every
 * built-in provider's init whatever FI_PROVIDER says (1.17's verbs reads
 * /proc/kallsyms twice, ~80 ms of CPU), then the providers' entries. Its
 * errors are left for tern_ofi_lib_load to find and report. */
static pthread_t preloader;
static int preloading;

static void *preload_main(void *name)
{
    if (open_library(name))
        return NULL;
    struct fi_info *all = NULL;
    if (lib.getinfo(FI_VERSION(1, 9), NULL, NULL, 0, NULL, &all) == 0)
        lib.freeinfo(all);
    return NULL;
}

void tern_ofi_lib_preload(void)
{
    if (lib.handle || preloading)
        return;
    keep_signal_defaults();
    /* Signals stay with the application's threads. Without a thread the
     * load happens later, as without the knob. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    preloading = pthread_create(&preloader, NULL, preload_main,
                                (void *)tern_knob_str(TERN_KNOB_OFI_LIBRARY)) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Joined, not cancelled or detached: a thread stopped or left inside
 * dlopen or a provider's start-up could hold the loader's lock or leave
 * the library half set up, and one left running may outlive the process's
 * own exit handlers. The wait is the load's own time (~0.1-0.3 s). */
void tern_ofi_lib_preload_join(void)
{
    if (!preloading)
        return;
    pthread_join(preloader, NULL);
    preloading = 0;
}

tern_status_t tern_ofi_lib_load(void)
{
    if (preloading) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tern_ofi_lib_preload_join();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (lib.handle)
            tern_info("ofi: libfabric loaded by the preload thread (TERN_OFI_PRELOAD); the "
                      "transport waited %.1f ms for it",
                      (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    }
    if (lib.handle)
        return TERN_OK;
    const char *name = tern_knob_str(TERN_KNOB_OFI_LIBRARY);
    keep_signal_defaults();
    const char *err = open_library(name);
    if (err == not_libfabric)
        tern_error("ofi: %s %s", name, err);
    else if (err)
        tern_error("ofi: cannot load libfabric (TERN_OFI_LIBRARY=%s): %s; ranks on other hosts "
                   "(or TERN_TRANSPORTS=ofi) need it: install libfabric1 or point "
                   "TERN_OFI_LIBRARY at one", name, err);
    return err ? TERN_ERR_NOT_SUPPORTED : TERN_OK;
}

/* Never unloaded: providers may keep threads or handlers past fi_close. */

HIDDEN int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                      const struct fi_info *hints, struct fi_info **info)
{
    return lib.getinfo ? lib.getinfo(version, node, service, flags, hints, info) : -FI_ENOSYS;
}

HIDDEN void fi_freeinfo(struct fi_info *info)
{
    if (lib.freeinfo)
        lib.freeinfo(info);
}

HIDDEN struct fi_info *fi_dupinfo(const struct fi_info *info)
{
    return lib.dupinfo ? lib.dupinfo(info) : NULL;
}

HIDDEN int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return lib.fabric ? lib.fabric(attr, fabric, context) : -FI_ENOSYS;
}

HIDDEN const char *fi_strerror(int errnum)
{
    return lib.strerror ? lib.strerror(errnum) : "libfabric not loaded";
}
