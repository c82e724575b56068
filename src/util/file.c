/*
 * file.c — read a whole input file, bounded.
 *
 * Every file strata reads (cluster files, the link catalog, NCCL topology
 * XML, hwloc XML) comes through util_read_file, which refuses what is not
 * a regular file — /dev/zero named x.json would otherwise be read until
 * memory runs out, a FIFO would block the command forever — and any file
 * above a stated cap (UTIL_FILE_MAX, 64 MiB: the largest real input, an
 * hwloc export of a big host, is a few MB). The cap is also enforced while
 * reading, so a file that grows (or a /proc file reporting size 0) stops
 * at the cap too.
 *
 * Workload: a handful of small files per command.
 */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static strata_status_t too_large(const char *path, size_t max, strata_error_t *err)
{
    char cap[32];
    return strata_error_set_at(err, STRATA_ERR_RANGE, path, 0, 0,
                               "file larger than the %s input limit",
                               util_fmt_bytes((double)max, cap, sizeof(cap)));
}

/* Open path for reading without blocking (a FIFO must not hang us) and
 * check that it is a regular file no larger than max. */
static strata_status_t open_regular(const char *path, size_t max, int *fd_p, size_t *size_p,
                                    strata_error_t *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0)
        return strata_error_set_at(err, STRATA_ERR_IO, path, 0, 0, "cannot open: %s",
                                   strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return strata_error_set_at(err, STRATA_ERR_IO, path, 0, 0,
                                   "not a regular file (strata reads its inputs only from "
                                   "regular files, not devices, FIFOs or directories)");
    }
    if ((uintmax_t)sb.st_size > (uintmax_t)max) {
        close(fd);
        return too_large(path, max, err);
    }
    *fd_p = fd;
    *size_p = (size_t)sb.st_size;
    return STRATA_OK;
}

/* Read fd to its end into a NUL-terminated buffer of at most max bytes;
 * hint is the size fstat reported. */
static strata_status_t read_all(int fd, const char *path, size_t max, size_t hint, char **buf_p,
                                size_t *len_p, strata_error_t *err)
{
    size_t cap = hint < 4095 ? 4096 : hint + 1, len = 0; /* cap counts the NUL */
    if (cap > max + 2) cap = max + 2;                    /* room for one byte past max, to see it */
    char *buf = util_malloc(cap);
    strata_status_t st = STRATA_OK;
    while (buf && st == STRATA_OK) {
        if (len + 1 == cap) { /* full: the file is larger than fstat said */
            size_t ncap = cap > max / 2 ? max + 2 : cap * 2;
            char *nb = len > max ? NULL : util_realloc(buf, ncap);
            if (nb == NULL) break;
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + len, cap - 1 - len);
        if (got == 0 && len <= max) {
            buf[len] = '\0';
            *buf_p = buf;
            *len_p = len;
            return STRATA_OK;
        }
        if (got == 0) break; /* more than max */
        if (got > 0)
            len += (size_t)got;
        else if (errno != EINTR)
            st = strata_error_set_at(err, STRATA_ERR_IO, path, 0, 0, "read error: %s",
                                     strerror(errno));
    }
    util_free(buf);
    if (st) return st;
    return len > max ? too_large(path, max, err)
                     : strata_error_set(err, STRATA_ERR_NOMEM, "%s: out of memory", path);
}

strata_status_t util_read_file(const char *path, size_t max, char **buf_p, size_t *len_p,
                               strata_error_t *err)
{
    int fd = -1;
    size_t size = 0;
    strata_status_t st = open_regular(path, max, &fd, &size, err);
    if (st) return st;
    st = read_all(fd, path, max, size, buf_p, len_p, err);
    close(fd);
    return st;
}
