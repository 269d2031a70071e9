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
 * one's own). */
#include "transport/ofi/ofi_internal.h"
#include "base/config.h"
#include "base/log.h"

#include <dlfcn.h>

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

tern_status_t tern_ofi_lib_load(void)
{
    if (lib.handle)
        return TERN_OK;
    const char *name = tern_knob_str(TERN_KNOB_OFI_LIBRARY);
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        tern_error("ofi: cannot load libfabric (TERN_OFI_LIBRARY=%s): %s; ranks on other hosts "
                   "(or TERN_TRANSPORTS=ofi) need it: install libfabric1 or point "
                   "TERN_OFI_LIBRARY at one", name, dlerror());
        return TERN_ERR_NOT_SUPPORTED;
    }
    /* Plain dlsym gives each symbol's default version, the one the linker
     * would have bound against these headers. */
    *(void **)&lib.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&lib.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&lib.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&lib.fabric = dlsym(h, "fi_fabric");
    *(void **)&lib.strerror = dlsym(h, "fi_strerror");
    if (!lib.getinfo || !lib.freeinfo || !lib.dupinfo || !lib.fabric || !lib.strerror) {
        tern_error("ofi: %s is not a usable libfabric (fi_getinfo, fi_freeinfo, fi_dupinfo, "
                   "fi_fabric or fi_strerror missing)", name);
        dlclose(h);
        return TERN_ERR_NOT_SUPPORTED;
    }
    lib.handle = h;
    return TERN_OK;
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
