/*
 * strata/common.h — what every strata header shares: export macro, status
 * codes, the error record, logging level and version.
 *
 * Status convention (after UCX): 0 is success, positive values mean "in
 * progress", negative values are errors. The table below is the single
 * source of both the enum and strata_status_str().
 *
 * Error reporting: the function that first detects an error fills a
 * caller-supplied strata_error_t (may be NULL) and returns the code; callers
 * pass the code up without rewriting the message. For parsed input the record
 * carries file, line and column, and strata_error_str() renders it as
 * "file:line:col: message".
 */
#ifndef STRATA_COMMON_H
#define STRATA_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STRATA_API          __attribute__((visibility("default")))
#define STRATA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define STRATA_API
#define STRATA_PRINTF(f, a)
#endif

/* X(name, value, text) */
#define STRATA_STATUS_MAP(X)                                                                       \
    X(OK, 0, "success")                                                                            \
    X(INPROGRESS, 1, "operation in progress")                                                      \
    X(ERR_INVALID, -1, "invalid argument")                                                         \
    X(ERR_NOMEM, -2, "out of memory")                                                              \
    X(ERR_IO, -3, "input/output error")                                                            \
    X(ERR_PARSE, -4, "malformed input")                                                            \
    X(ERR_NOT_FOUND, -5, "not found")                                                              \
    X(ERR_UNSUPPORTED, -6, "not supported")                                                        \
    X(ERR_TIMEOUT, -7, "timed out")                                                                \
    X(ERR_PEER, -8, "peer failed")                                                                 \
    X(ERR_PROTOCOL, -9, "protocol error")                                                          \
    X(ERR_AUTH, -10, "authentication failed")                                                      \
    X(ERR_RANGE, -11, "value out of range")                                                        \
    X(ERR_ABORTED, -12, "aborted")                                                                 \
    X(ERR_SYSTEM, -13, "system call failed")                                                       \
    X(ERR_INTERNAL, -14, "internal error")                                                         \
    X(ERR_MISMATCH, -15, "mismatched calls")

typedef enum {
#define STRATA_STATUS_ENUM(name, value, text) STRATA_##name = value,
    STRATA_STATUS_MAP(STRATA_STATUS_ENUM)
#undef STRATA_STATUS_ENUM
} strata_status_t;

/* Human-readable text of a status code; never NULL. */
STRATA_API const char *strata_status_str(strata_status_t status);

#define STRATA_ERROR_FILE_MAX 256
/* The version of every JSON document strata writes (STRATA_JSON_SCHEMA_VERSION;
 * strata/report.h's writer puts it first as "schema_version"). Raised when a
 * key is renamed or removed or a value changes meaning; adding keys keeps it.
 * Units: docs/formats.md (SI base units, the unit as the key's suffix: _s, _B,
 * _Bps, _W, _m ...). */
#define STRATA_JSON_SCHEMA_VERSION 1

#define STRATA_ERROR_MSG_MAX 512

/* An error record. line/column are 0 when the error is not tied to input. */
typedef struct strata_error {
    strata_status_t status;
    char file[STRATA_ERROR_FILE_MAX];
    int line;
    int column;
    char msg[STRATA_ERROR_MSG_MAX];
} strata_error_t;

/* Reset an error record to "no error". Accepts NULL. */
STRATA_API void strata_error_clear(strata_error_t *err);

/* Render "file:line:col: msg", "file: msg" or "msg" into buf (always
 * NUL-terminated); returns buf. */
STRATA_API const char *strata_error_str(const strata_error_t *err, char *buf, size_t len);

/* Fill err (may be NULL) and return status. */
STRATA_API strata_status_t strata_error_set(strata_error_t *err, strata_status_t status,
                                            const char *fmt, ...) STRATA_PRINTF(3, 4);
/* As strata_error_set, with the position in a parsed file. */
STRATA_API strata_status_t strata_error_set_at(strata_error_t *err, strata_status_t status,
                                               const char *file, int line, int column,
                                               const char *fmt, ...) STRATA_PRINTF(6, 7);

typedef enum {
    STRATA_LOG_ERROR = 0,
    STRATA_LOG_WARN = 1,
    STRATA_LOG_INFO = 2,
    STRATA_LOG_DEBUG = 3,
} strata_log_level_t;

/* Current level: STRATA_LOG=error|warn|info|debug, default warn. */
STRATA_API strata_log_level_t strata_log_level(void);
STRATA_API void strata_log_set_level(strata_log_level_t level);
/* Write one line "strata: <level>: msg" to stderr if level is enabled. */
STRATA_API void strata_log(strata_log_level_t level, const char *fmt, ...) STRATA_PRINTF(2, 3);

/* Library version, "MAJOR.MINOR.PATCH". */
STRATA_API const char *strata_version(void);

/* Directory holding strata's data files (links.json, presets): $STRATA_DATA_DIR,
 * else the source tree's data/ when running from a build tree, else the
 * installed share/strata. */
STRATA_API const char *strata_data_dir(void);

/* Strict number parsing for command lines and option strings: the whole
 * string, decimal only (no leading space, hex, "inf" or "nan").
 * strata_parse_size takes "8", "64K", "1.5MiB", "8G", "1e3" (binary
 * multiples K M G T, optional i and B; no sign). Each returns 0 and writes
 * *out, -1 when malformed, -2 when the value is outside the type's range
 * (ERANGE). The caller checks its own bounds. */
STRATA_API int strata_parse_size(const char *s, double *out);
STRATA_API int strata_parse_double(const char *s, double *out);
STRATA_API int strata_parse_long(const char *s, long *out);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_COMMON_H */
