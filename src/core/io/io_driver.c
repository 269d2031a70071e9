/* The storage drivers' registry and their shared errno mapping
 * (io_driver.h). */
#include "core/io/io_driver.h"

#include <errno.h>
#include <string.h>

tern_status_t tern_io_errno(int err, const char *path, const char *what)
{
    tern_status_t st;
    switch (err) {
    case ENOENT: st = TERN_ERR_NO_SUCH_FILE; break;
    case EEXIST: st = TERN_ERR_FILE_EXISTS; break;
    case EACCES:
    case EPERM: st = TERN_ERR_ACCESS; break;
    case EROFS: st = TERN_ERR_READ_ONLY; break;
    case ENOSPC: st = TERN_ERR_NO_SPACE; break;
    case EDQUOT: st = TERN_ERR_QUOTA; break;
    case ETXTBSY:
    case EBUSY: st = TERN_ERR_FILE_IN_USE; break;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: st = TERN_ERR_BAD_FILE; break;
    case ENOMEM: st = TERN_ERR_NOMEM; break;
    default: st = TERN_ERR_FILE_IO; break;
    }
    return tern_status_detail(st, "file '%s': %s: %s", path, what, strerror(err));
}

const tern_io_driver_t *tern_io_driver_for(const char *name, const char **path)
{
    /* ROMIO's prefixes name a file system: "ufs:" and "nfs:" are POSIX. */
    if (strncmp(name, "ufs:", 4) == 0 || strncmp(name, "nfs:", 4) == 0)
        name += 4;
    *path = name;
    return &tern_io_posix;
}
