/*
 * json.c — the one JSON writer of strata's output: a streaming writer of
 * one value per line, indented two spaces, commas handled, strings
 * escaped, non-finite numbers written as null. Every command's --json and
 * the verdict's JSON renderer write through it, so every document has the
 * same shape and starts with the same "schema_version" member
 * (docs/formats.md: the units convention).
 *
 * Workload: a few hundred to a few thousand members per document.
 */
#include "report.h"

#include <math.h>

void strata_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

void strata_json_init(strata_json_t *j, FILE *out)
{
    *j = (strata_json_t){.out = out, .digits = 6};
}

static void begin(strata_json_t *j, const char *key)
{
    if (j->depth > 0) {
        fputs(j->first[j->depth] ? "\n" : ",\n", j->out);
        j->first[j->depth] = false;
    }
    fprintf(j->out, "%*s", 2 * j->depth, "");
    if (key) {
        strata_json_string(j->out, key);
        fputs(": ", j->out);
    }
}

void strata_json_open(strata_json_t *j, const char *key, char bracket)
{
    begin(j, key);
    fputc(bracket == '[' ? '[' : '{', j->out);
    if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0]))) j->depth++;
    j->first[j->depth] = true;
}

void strata_json_close(strata_json_t *j, char bracket)
{
    bool empty = j->first[j->depth];
    if (j->depth > 0) j->depth--;
    if (!empty) fprintf(j->out, "\n%*s", 2 * j->depth, "");
    fputc(bracket == '[' || bracket == ']' ? ']' : '}', j->out);
    if (j->depth == 0) fputc('\n', j->out);
}

void strata_json_document(strata_json_t *j, FILE *out)
{
    strata_json_init(j, out);
    strata_json_open(j, NULL, '{');
    strata_json_int(j, "schema_version", STRATA_JSON_SCHEMA_VERSION);
}

void strata_json_num(strata_json_t *j, const char *key, double v)
{
    begin(j, key);
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0) /* 2^53 */
        fprintf(j->out, "%.0f", v); /* whole numbers exactly: sizes, counts */
    else if (isfinite(v))
        fprintf(j->out, "%.*g", j->digits > 0 && j->digits <= 17 ? j->digits : 6, v);
    else
        fputs("null", j->out);
}

void strata_json_int(strata_json_t *j, const char *key, long v)
{
    begin(j, key);
    fprintf(j->out, "%ld", v);
}

void strata_json_str(strata_json_t *j, const char *key, const char *s)
{
    begin(j, key);
    strata_json_string(j->out, s);
}

void strata_json_null(strata_json_t *j, const char *key)
{
    begin(j, key);
    fputs("null", j->out);
}

void strata_json_bool(strata_json_t *j, const char *key, bool v)
{
    begin(j, key);
    fputs(v ? "true" : "false", j->out);
}
