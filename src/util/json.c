/*
 * json.c — JSON documents with a source position for every value.
 *
 * jansson parses and validates; it reports positions only for syntax errors.
 * Semantic errors ("lanes must be positive") deserve the same precision, so
 * after a successful parse we walk the text once more in step with the parsed
 * tree (the text is known to be valid JSON, so the walker is small) and record
 * where each value starts in a pointer-keyed open-addressing table.
 *
 * Workload: catalogs and cluster files of at most a few MB; the extra walk is
 * linear and costs about as much as the parse.
 */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct pos_slot {
    const json_t *key;
    int line, col;
} pos_slot_t;

struct util_json_doc {
    json_t *root;
    char *name;
    pos_slot_t *slots;
    size_t nslots; /* power of two */
};

typedef struct walker {
    const char *s;
    size_t i, n;
    int line, col;
    util_json_doc_t *doc;
} walker_t;

/* ==== Position table ==== */

static size_t slot_index(const util_json_doc_t *d, const json_t *v)
{
    return (size_t)util_hash_u64((uint64_t)(uintptr_t)v) & (d->nslots - 1);
}

static void pos_put(util_json_doc_t *d, const json_t *v, int line, int col)
{
    size_t i = slot_index(d, v);
    while (d->slots[i].key && d->slots[i].key != v)
        i = (i + 1) & (d->nslots - 1);
    if (d->slots[i].key == v) return; /* shared singletons keep their first position */
    d->slots[i].key = v;
    d->slots[i].line = line;
    d->slots[i].col = col;
}

void util_json_pos(const util_json_doc_t *d, const json_t *v, int *line, int *col)
{
    *line = *col = 0;
    if (d == NULL || d->slots == NULL || v == NULL) return;
    size_t i = slot_index(d, v);
    while (d->slots[i].key) {
        if (d->slots[i].key == v) {
            *line = d->slots[i].line;
            *col = d->slots[i].col;
            return;
        }
        i = (i + 1) & (d->nslots - 1);
    }
}

static size_t count_values(const json_t *v)
{
    size_t n = 1;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c) n += count_values(c);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c) n += count_values(c);
    }
    return n;
}

/* ==== Walker over known-valid JSON text ==== */

static void w_adv(walker_t *w)
{
    if (w->i >= w->n) return; /* never step past the text, whatever it holds */
    unsigned char c = (unsigned char)w->s[w->i++];
    if (c == '\n') {
        w->line++;
        w->col = 1;
    } else if ((c & 0xC0) != 0x80) {
        w->col++; /* count code points, not UTF-8 continuation bytes */
    }
}

static void w_ws(walker_t *w)
{
    while (w->i < w->n &&
           (w->s[w->i] == ' ' || w->s[w->i] == '\t' || w->s[w->i] == '\n' || w->s[w->i] == '\r'))
        w_adv(w);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    } else if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    } else if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Consume a string token; if out != NULL decode it there (caller sized it
 * as the raw token length + 1, which is always enough). */
static void w_string(walker_t *w, char *out)
{
    size_t o = 0;
    w_adv(w); /* opening quote */
    while (w->i < w->n && w->s[w->i] != '"') {
        char c = w->s[w->i];
        if (c != '\\') {
            if (out) out[o++] = c;
            w_adv(w);
            continue;
        }
        w_adv(w);
        if (w->i >= w->n) break; /* a lone backslash at the end */
        char e = w->s[w->i];
        w_adv(w);
        if (e == 'u') {
            unsigned cp = 0;
            for (int k = 0; k < 4 && w->i < w->n; k++, w_adv(w))
                cp = cp * 16 + (unsigned)hexval(w->s[w->i]);
            if (cp >= 0xD800 && cp < 0xDC00 && w->i + 6 <= w->n && w->s[w->i] == '\\') {
                w_adv(w), w_adv(w);
                unsigned lo = 0;
                for (int k = 0; k < 4; k++, w_adv(w))
                    lo = lo * 16 + (unsigned)hexval(w->s[w->i]);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (out) o += utf8_put(out + o, cp);
        } else if (out) {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *p = strchr(from, e);
            out[o++] = p ? to[p - from] : e;
        }
    }
    if (w->i < w->n) w_adv(w); /* closing quote */
    if (out) out[o] = 0;
}

static size_t raw_string_len(const walker_t *w)
{
    size_t j = w->i + 1;
    while (j < w->n && w->s[j] != '"')
        j += (w->s[j] == '\\') ? 2 : 1;
    return j - w->i;
}

static int w_value(walker_t *w, const json_t *v);

static int w_object(walker_t *w, const json_t *v)
{
    w_adv(w); /* { */
    for (;;) {
        w_ws(w);
        if (w->i >= w->n) return -1;
        if (w->s[w->i] == '}') {
            w_adv(w);
            return 0;
        }
        if (w->s[w->i] == ',') {
            w_adv(w);
            continue;
        }
        if (w->s[w->i] != '"') return -1; /* not a key: text jansson read otherwise */
        char stackbuf[256], *key = stackbuf;
        size_t raw = raw_string_len(w);
        if (raw + 1 > sizeof(stackbuf) && (key = util_malloc(raw + 1)) == NULL) return -1;
        w_string(w, key);
        w_ws(w);
        if (w->i >= w->n || w->s[w->i] != ':') {
            if (key != stackbuf) util_free(key);
            return -1;
        }
        w_adv(w); /* : */
        w_ws(w);
        json_t *child = json_object_get(v, key);
        if (key != stackbuf) util_free(key);
        if (child == NULL || w_value(w, child) != 0) return -1;
    }
}

static int w_array(walker_t *w, const json_t *v)
{
    size_t idx = 0;
    w_adv(w); /* [ */
    for (;;) {
        w_ws(w);
        if (w->i >= w->n) return -1;
        if (w->s[w->i] == ']') {
            w_adv(w);
            return 0;
        }
        if (w->s[w->i] == ',') {
            w_adv(w);
            continue;
        }
        json_t *child = json_array_get(v, idx++);
        if (child == NULL || w_value(w, child) != 0) return -1;
    }
}

static int w_value(walker_t *w, const json_t *v)
{
    if (w->i >= w->n) return -1; /* the text ended where jansson saw a value */
    pos_put(w->doc, v, w->line, w->col);
    char c = w->s[w->i];
    if (c == '{') return w_object(w, v);
    if (c == '[') return w_array(w, v);
    if (c == '"') {
        w_string(w, NULL);
        return 0;
    }
    while (w->i < w->n && w->s[w->i] != '\0' && !strchr(",]} \t\r\n", w->s[w->i]))
        w_adv(w);
    return 0;
}

/* ==== Loading ==== */

strata_status_t util_json_load_text(const char *text, size_t len, const char *name,
                                    util_json_doc_t **doc_p, strata_error_t *err)
{
    /* jansson reads a NUL byte after a number as the number's end and goes
     * on; a file with one is damaged, so say where rather than guess. */
    const char *nul = memchr(text, '\0', len);
    if (nul != NULL) {
        int line = 1, col = 1;
        for (const char *p = text; p < nul; p++) {
            if (*p == '\n')
                line++, col = 1;
            else if (((unsigned char)*p & 0xC0) != 0x80)
                col++;
        }
        return strata_error_set_at(err, STRATA_ERR_PARSE, name, line, col,
                                   "a NUL byte is not allowed in JSON text");
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return strata_error_set_at(err, STRATA_ERR_PARSE, name, jerr.line > 0 ? jerr.line : 1,
                                   jerr.column > 0 ? jerr.column : 1, "%s", jerr.text);
    util_json_doc_t *d = util_calloc(1, sizeof(*d));
    if (d == NULL) goto nomem_root;
    d->root = root;
    d->name = util_strdup(name);
    size_t nv = count_values(root), ns = 16;
    while (ns < 2 * nv)
        ns *= 2;
    d->slots = util_calloc(ns, sizeof(*d->slots));
    d->nslots = ns;
    if (d->name == NULL || d->slots == NULL) goto nomem_doc;
    walker_t w = {text, 0, len, 1, 1, d};
    w_ws(&w);
    if (w_value(&w, root) != 0) strata_log(STRATA_LOG_DEBUG, "%s: position table incomplete", name);
    *doc_p = d;
    return STRATA_OK;
nomem_doc:
    util_json_doc_destroy(d);
    return strata_error_set(err, STRATA_ERR_NOMEM, "%s: out of memory", name);
nomem_root:
    json_decref(root);
    return strata_error_set(err, STRATA_ERR_NOMEM, "%s: out of memory", name);
}

strata_status_t util_json_load_file(const char *path, util_json_doc_t **doc_p, strata_error_t *err)
{
    char *text;
    size_t len;
    strata_status_t st = util_read_file(path, UTIL_FILE_MAX, &text, &len, err);
    if (st) return st;
    st = util_json_load_text(text, len, path, doc_p, err);
    util_free(text);
    return st;
}

void util_json_doc_destroy(util_json_doc_t *d)
{
    if (d == NULL) return;
    json_decref(d->root);
    util_free(d->name);
    util_free(d->slots);
    util_free(d);
}

json_t *util_json_root(const util_json_doc_t *d)
{
    return d->root;
}

const char *util_json_name(const util_json_doc_t *d)
{
    return d->name;
}

strata_status_t util_json_error(const util_json_doc_t *d, const json_t *v, strata_error_t *err,
                                strata_status_t status, const char *fmt, ...)
{
    if (err == NULL) return status;
    int line, col;
    util_json_pos(d, v, &line, &col);
    char msg[STRATA_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return strata_error_set_at(err, status, d ? d->name : "", line, col, "%s", msg);
}

/* ==== Typed getters ==== */

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static strata_status_t get_field(const util_json_doc_t *d, const json_t *obj, const char *key,
                                 bool required, json_t **v_p, strata_error_t *err)
{
    if (!json_is_object(obj))
        return util_json_error(d, obj, err, STRATA_ERR_PARSE, "expected an object, found %s",
                               type_name(obj));
    json_t *v = json_object_get(obj, key);
    if (v == NULL && required)
        return util_json_error(d, obj, err, STRATA_ERR_PARSE, "missing field \"%s\"", key);
    *v_p = v;
    return STRATA_OK;
}

static strata_status_t wrong_type(const util_json_doc_t *d, const json_t *v, const char *key,
                                  const char *want, strata_error_t *err)
{
    return util_json_error(d, v, err, STRATA_ERR_PARSE, "field \"%s\" must be %s, found %s", key,
                           want, type_name(v));
}

#define GETTER_PROLOGUE(required)                                                                  \
    json_t *v = NULL;                                                                              \
    strata_status_t st = get_field(d, obj, key, required, &v, err);                                \
    if (st != STRATA_OK) return st;                                                                \
    if (v == NULL) return STRATA_OK;

static strata_status_t get_obj(const util_json_doc_t *d, const json_t *obj, const char *key,
                               json_t **out, bool req, strata_error_t *err)
{
    GETTER_PROLOGUE(req);
    if (!json_is_object(v)) return wrong_type(d, v, key, "an object", err);
    *out = v;
    return STRATA_OK;
}

strata_status_t util_json_req_obj(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  json_t **out, strata_error_t *err)
{
    return get_obj(d, obj, key, out, true, err);
}

strata_status_t util_json_req_arr(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  json_t **out, strata_error_t *err)
{
    GETTER_PROLOGUE(true);
    if (!json_is_array(v)) return wrong_type(d, v, key, "an array", err);
    *out = v;
    return STRATA_OK;
}

static strata_status_t get_str(const util_json_doc_t *d, const json_t *obj, const char *key,
                               const char **out, bool req, strata_error_t *err)
{
    GETTER_PROLOGUE(req);
    if (!json_is_string(v)) return wrong_type(d, v, key, "a string", err);
    *out = json_string_value(v);
    return STRATA_OK;
}

strata_status_t util_json_req_str(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  const char **out, strata_error_t *err)
{
    return get_str(d, obj, key, out, true, err);
}

strata_status_t util_json_opt_str(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  const char **out, strata_error_t *err)
{
    return get_str(d, obj, key, out, false, err);
}

static strata_status_t get_num(const util_json_doc_t *d, const json_t *obj, const char *key,
                               double *out, bool req, strata_error_t *err)
{
    GETTER_PROLOGUE(req);
    if (!json_is_number(v)) return wrong_type(d, v, key, "a number", err);
    *out = json_number_value(v);
    return STRATA_OK;
}

strata_status_t util_json_req_num(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  double *out, strata_error_t *err)
{
    return get_num(d, obj, key, out, true, err);
}

strata_status_t util_json_opt_num(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  double *out, strata_error_t *err)
{
    return get_num(d, obj, key, out, false, err);
}

static strata_status_t get_int(const util_json_doc_t *d, const json_t *obj, const char *key,
                               long *out, bool req, strata_error_t *err)
{
    GETTER_PROLOGUE(req);
    if (json_is_integer(v)) {
        *out = (long)json_integer_value(v);
        return STRATA_OK;
    }
    if (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v) &&
        fabs(json_real_value(v)) < 9e15) {
        *out = (long)json_real_value(v);
        return STRATA_OK;
    }
    return wrong_type(d, v, key, "an integer", err);
}

strata_status_t util_json_req_int(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  long *out, strata_error_t *err)
{
    return get_int(d, obj, key, out, true, err);
}

strata_status_t util_json_opt_int(const util_json_doc_t *d, const json_t *obj, const char *key,
                                  long *out, strata_error_t *err)
{
    return get_int(d, obj, key, out, false, err);
}

strata_status_t util_json_opt_bool(const util_json_doc_t *d, const json_t *obj, const char *key,
                                   bool *out, strata_error_t *err)
{
    GETTER_PROLOGUE(false);
    if (!json_is_boolean(v)) return wrong_type(d, v, key, "a boolean", err);
    *out = json_is_true(v);
    return STRATA_OK;
}

strata_status_t util_json_check_keys(const util_json_doc_t *d, const json_t *obj,
                                     const char *const *allowed, strata_error_t *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], k) != 0)
            i++;
        if (allowed[i] == NULL)
            return util_json_error(d, v, err, STRATA_ERR_PARSE, "unknown field \"%s\"", k);
    }
    return STRATA_OK;
}

/* ==== Output ==== */

int util_json_dump(const json_t *v, FILE *out)
{
    if (json_dumpf(v, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) != 0)
        return -1;
    return fputc('\n', out) == EOF ? -1 : 0;
}

json_t *util_json_real(double x)
{
    if (!isfinite(x)) return json_null();
    /* 6 significant digits: enough for any physical quantity we print, and
     * stable across platforms for golden tests. */
    char buf[64];
    snprintf(buf, sizeof(buf), "%.6g", x);
    return json_real(strtod(buf, NULL));
}
