/*
 * status.c — status strings, error records, logging, version and data dir.
 *
 * The status table is the X-macro in strata/common.h. Error records are plain
 * structs owned by the caller; nothing here allocates.
 */
#define _GNU_SOURCE /* dladdr */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

const char *strata_status_str(strata_status_t status)
{
    switch (status) {
#define STRATA_STATUS_CASE(name, value, text)                                                      \
    case STRATA_##name:                                                                            \
        return text;
        STRATA_STATUS_MAP(STRATA_STATUS_CASE)
#undef STRATA_STATUS_CASE
    }
    return "unknown status";
}

void strata_error_clear(strata_error_t *err)
{
    if (err == NULL) return;
    memset(err, 0, sizeof(*err));
}

const char *strata_error_str(const strata_error_t *err, char *buf, size_t len)
{
    if (len == 0) return buf;
    if (err == NULL) {
        snprintf(buf, len, "no error");
        return buf;
    }
    const char *msg = err->msg[0] ? err->msg : strata_status_str(err->status);
    if (err->file[0] && err->line > 0)
        snprintf(buf, len, "%s:%d:%d: %s", err->file, err->line, err->column, msg);
    else if (err->file[0])
        snprintf(buf, len, "%s: %s", err->file, msg);
    else
        snprintf(buf, len, "%s", msg);
    return buf;
}

static void error_vset(strata_error_t *err, strata_status_t status, const char *file, int line,
                       int column, const char *fmt, va_list ap)
{
    err->status = status;
    snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
    err->line = line;
    err->column = column;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

strata_status_t strata_error_set(strata_error_t *err, strata_status_t status, const char *fmt, ...)
{
    if (err == NULL) return status;
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, status, NULL, 0, 0, fmt, ap);
    va_end(ap);
    return status;
}

strata_status_t strata_error_set_at(strata_error_t *err, strata_status_t status, const char *file,
                                    int line, int column, const char *fmt, ...)
{
    if (err == NULL) return status;
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, status, file, line, column, fmt, ap);
    va_end(ap);
    return status;
}

/* ==== Logging ==== */

static int log_level = -1;

strata_log_level_t strata_log_level(void)
{
    if (log_level < 0) {
        const char *s = getenv("STRATA_LOG");
        log_level = STRATA_LOG_WARN;
        if (s == NULL) return (strata_log_level_t)log_level;
        if (strcmp(s, "error") == 0)
            log_level = STRATA_LOG_ERROR;
        else if (strcmp(s, "warn") == 0)
            log_level = STRATA_LOG_WARN;
        else if (strcmp(s, "info") == 0)
            log_level = STRATA_LOG_INFO;
        else if (strcmp(s, "debug") == 0)
            log_level = STRATA_LOG_DEBUG;
        else
            fprintf(stderr, "strata: warn: STRATA_LOG=%s is not error|warn|info|debug\n", s);
    }
    return (strata_log_level_t)log_level;
}

void strata_log_set_level(strata_log_level_t level)
{
    log_level = (int)level;
}

void strata_log(strata_log_level_t level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if ((int)level > (int)strata_log_level()) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* One fprintf so lines from concurrent ranks do not interleave mid-line. */
    fprintf(stderr, "strata: %s: %s\n", names[level], line);
}

const char *strata_version(void)
{
    return STRATA_VERSION;
}

static int file_exists(const char *dir, const char *name)
{
    char path[2048];
    struct stat st;
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof(path) && stat(path, &st) == 0;
}

#ifndef STRATA_DATA_FROM_LIBDIR /* set by cmake/strata.cmake */
#define STRATA_DATA_FROM_LIBDIR "../share/strata"
#define STRATA_DATA_FROM_BINDIR "../share/strata"
#endif

/* The file holding this code: the shared library, or the executable that
 * linked the static one. */
static const char self_anchor = 0;

static int self_path(char *buf, size_t len)
{
    Dl_info info;
    if (dladdr(&self_anchor, &info) && info.dli_fname && info.dli_fname[0] == '/') {
        snprintf(buf, len, "%s", info.dli_fname);
        return 0;
    }
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) return -1;
    buf[n] = 0;
    return 0;
}

/* Order: $STRATA_DATA_DIR; the source tree's data/ when this code runs from
 * the build tree; <prefix>/share/strata next to an installed library or
 * command (relocatable: found from where the code lies, not where it was
 * configured to go); the configured install directory. */
const char *strata_data_dir(void)
{
    static char found[1200];
    const char *env = getenv("STRATA_DATA_DIR");
    if (env && *env) return env;
    if (found[0]) return found;
    char self[1024];
    if (self_path(self, sizeof(self)) == 0) {
        size_t nb = strlen(STRATA_BUILD_TREE);
        if (strncmp(self, STRATA_BUILD_TREE, nb) == 0 && self[nb] == '/' &&
            file_exists(STRATA_DATA_DIR_BUILD, "links.json"))
            return STRATA_DATA_DIR_BUILD;
        char *dir = dirname(self); /* <libdir> or <bindir> */
        /* The way from the library's or the command's directory to the
         * data, worked out by CMake for this LIBDIR (lib/x86_64-linux-gnu
         * is two levels below the prefix). */
        const char *const rel[] = {STRATA_DATA_FROM_LIBDIR, STRATA_DATA_FROM_BINDIR};
        for (int i = 0; i < 2; i++) {
            int n = snprintf(found, sizeof(found), "%s/%s", dir, rel[i]);
            if (n > 0 && (size_t)n < sizeof(found) && file_exists(found, "links.json"))
                return found;
        }
        found[0] = 0;
    }
    if (file_exists(STRATA_DATA_DIR_INSTALL, "links.json")) return STRATA_DATA_DIR_INSTALL;
    return STRATA_DATA_DIR_BUILD;
}
