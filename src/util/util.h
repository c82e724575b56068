/*
 * util.h — internal toolbox shared by every module: allocation wrapper with
 * fault injection, arena, growable arrays, hashing, progress bar, JSON helpers
 * with source positions, and small string/number helpers.
 *
 * Nothing here knows about links, topologies or collectives. Everything is
 * single-threaded unless stated otherwise.
 */
#ifndef STRATA_UTIL_H
#define STRATA_UTIL_H

#include "strata/common.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ==== Allocation ==== */

/* All strata allocations go through these so tests can inject failure.
 * util_free(NULL) is a no-op. */
void *util_malloc(size_t size);
void *util_calloc(size_t n, size_t size);
void *util_realloc(void *p, size_t size);
void util_free(void *p);
char *util_strdup(const char *s);
/* Make the n-th allocation from now (0-based) and all later ones fail;
 * n < 0 disables injection. Test-only; not thread-safe. */
void util_alloc_fail_after(long n);

/* ==== Arena ==== */

/* Bump allocator for models and simulations: many small allocations freed
 * in one call. Memory is 16-byte aligned and zeroed. */
typedef struct util_arena util_arena_t;
util_arena_t *util_arena_create(size_t chunk_size);
void *util_arena_alloc(util_arena_t *a, size_t size);
char *util_arena_strdup(util_arena_t *a, const char *s);
size_t util_arena_used(const util_arena_t *a);
void util_arena_reset(util_arena_t *a); /* empty it, keeping its memory for reuse */
void util_arena_destroy(util_arena_t *a);

/* ==== Growable arrays ==== */

/* A typed vector: UTIL_VEC(int) v = {0}; UTIL_VEC_PUSH(&v, 3) (returns 0 or
 * -1 on OOM); util_free(v.v) frees it. */
#define UTIL_VEC(type)                                                                             \
    struct {                                                                                       \
        type *v;                                                                                   \
        size_t n, cap;                                                                             \
    }
int util_vec_reserve(void **v, size_t *cap, size_t need, size_t elem);
#define UTIL_VEC_RESERVE(vec, need)                                                                \
    util_vec_reserve((void **)&(vec)->v, &(vec)->cap, (need), sizeof(*(vec)->v))
#define UTIL_VEC_PUSH(vec, x)                                                                      \
    (UTIL_VEC_RESERVE((vec), (vec)->n + 1) ? -1 : ((vec)->v[(vec)->n++] = (x), 0))
#define UTIL_VEC_FREE(vec)                                                                         \
    do {                                                                                           \
        util_free((vec)->v);                                                                       \
        (vec)->v = NULL;                                                                           \
        (vec)->n = (vec)->cap = 0;                                                                 \
    } while (0)

/* ==== Hashing ==== */

uint64_t util_hash64(const void *data, size_t len, uint64_t seed);
uint64_t util_hash_u64(uint64_t x); /* splitmix64 finaliser */

/* ==== Progress bar ==== */

/* Shown on stderr only when stderr is a TTY and STRATA_PROGRESS != 0;
 * otherwise every call is a cheap no-op. Each redraw (at most 10 a second)
 * is "\rLABEL [###...] NN.N%" and an erase to the end of the line, so the
 * label may change between updates (p->label); end erases the line. */
typedef struct util_progress {
    const char *label;
    double total;
    double last_shown;
    double last_time;
    bool active;
} util_progress_t;
void util_progress_begin(util_progress_t *p, const char *label, double total);
void util_progress_update(util_progress_t *p, double done);
void util_progress_end(util_progress_t *p);

/* ==== Time ==== */

double util_now(void); /* monotonic seconds */

/* ==== Strings and numbers ==== */

/* Parse sizes like "8", "64K", "1.5M", "8G", "1e3" (decimal digits with an
 * optional fraction and exponent; binary multiples K M G T with optional
 * i and B). No sign, hex, "inf" or "nan"; the caller states the range.
 * Returns 0 and writes *out, -1 when malformed, -2 when out of the range of
 * a double (ERANGE, infinite). */
int util_parse_size(const char *s, double *out);
/* Parse a decimal double / base-10 long, the whole string, no leading
 * space. 0 ok, -1 malformed (hex, inf, nan, trailing text), -2 out of the
 * type's range (ERANGE: overflow, or a double's underflow). */
int util_parse_double(const char *s, double *out);
int util_parse_long(const char *s, long *out);
/* Format bytes in the largest binary unit that keeps at least 1, three
 * significant digits, whole from 100 up: "512 B", "1.5 MiB", "975 KiB";
 * "-" for negatives and NaN. The one size format of strata's text (public
 * as strata_fmt_size, strata/report.h). Returns buf. */
const char *util_fmt_bytes(double bytes, char *buf, size_t len);
/* Format seconds as "1.23 us" / "4.5 ms" / "2.1 s". */
const char *util_fmt_time(double seconds, char *buf, size_t len);
bool util_str_eq_nocase(const char *a, const char *b);

/* ==== Input files ==== */

/* Cap on any input file strata reads: 64 MiB (a real cluster file, catalog
 * or topology XML is at most a few MB). */
#define UTIL_FILE_MAX ((size_t)64 << 20)

/* Read the regular file path (at most max bytes) into a NUL-terminated
 * buffer the caller frees with util_free; *len_p excludes the NUL. A
 * device, FIFO or directory (STRATA_ERR_IO) or a larger file
 * (STRATA_ERR_RANGE) is refused with a message naming path; never blocks
 * on a FIFO. */
strata_status_t util_read_file(const char *path, size_t max, char **buf_p, size_t *len_p,
                               strata_error_t *err);

/* ==== JSON documents with source positions ==== */

/* A parsed JSON file. jansson holds the values; a side table maps every
 * value to the line and column where it starts, so semantic errors ("lanes
 * must be positive") point into the file as precisely as syntax errors. */
typedef struct util_json_doc util_json_doc_t;

/* Parse a file (path, read by util_read_file with the UTIL_FILE_MAX cap)
 * or a buffer (text, name used in messages). On error fills err with
 * file:line:col. Duplicate object keys are errors. */
strata_status_t util_json_load_file(const char *path, util_json_doc_t **doc_p, strata_error_t *err);
strata_status_t util_json_load_text(const char *text, size_t len, const char *name,
                                    util_json_doc_t **doc_p, strata_error_t *err);
void util_json_doc_destroy(util_json_doc_t *doc);
json_t *util_json_root(const util_json_doc_t *doc);
const char *util_json_name(const util_json_doc_t *doc);
/* Position of a value (1-based); 0,0 if unknown. */
void util_json_pos(const util_json_doc_t *doc, const json_t *v, int *line, int *col);
/* Set err at v's position, prefixed by nothing: message as given. */
strata_status_t util_json_error(const util_json_doc_t *doc, const json_t *v, strata_error_t *err,
                                strata_status_t status, const char *fmt, ...) STRATA_PRINTF(5, 6);

/* Typed field getters. "req" variants fail with a positioned error naming
 * the field when missing or of the wrong type; "opt" variants leave *out
 * untouched when the field is absent. */
strata_status_t util_json_req_obj(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  json_t **out, strata_error_t *err);
strata_status_t util_json_req_arr(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  json_t **out, strata_error_t *err);
strata_status_t util_json_req_str(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  const char **out, strata_error_t *err);
strata_status_t util_json_opt_str(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  const char **out, strata_error_t *err);
strata_status_t util_json_req_num(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  double *out, strata_error_t *err);
strata_status_t util_json_opt_num(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  double *out, strata_error_t *err);
strata_status_t util_json_req_int(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  long *out, strata_error_t *err);
strata_status_t util_json_opt_int(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  long *out, strata_error_t *err);
strata_status_t util_json_opt_bool(const util_json_doc_t *d, const json_t *obj, const char *key,
                                   bool *out, strata_error_t *err);
/* Reject keys of obj not in the NULL-terminated list (typos in files). */
strata_status_t util_json_check_keys(const util_json_doc_t *d, const json_t *obj,
                                     const char *const *allowed, strata_error_t *err);

/* Dump a JSON value to a stream, indented, keys in insertion order, with a
 * trailing newline. Steals nothing. Returns 0 or -1. */
int util_json_dump(const json_t *v, FILE *out);
/* Real number rounded to a sensible number of significant digits for output. */
json_t *util_json_real(double x);

#endif /* STRATA_UTIL_H */
