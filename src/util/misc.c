/*
 * misc.c — hashing, time, progress bar and string/number parsing.
 */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ==== Hashing ==== */

uint64_t util_hash_u64(uint64_t x)
{
    /* splitmix64 finaliser (Steele, Lea, Flood 2014) */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t util_hash64(const void *data, size_t len, uint64_t seed)
{
    /* FNV-1a over bytes, then mixed: good enough for tables and ECMP. */
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return util_hash_u64(h);
}

/* ==== Time ==== */

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ==== Progress bar ==== */

void util_progress_begin(util_progress_t *p, const char *label, double total)
{
    const char *env = getenv("STRATA_PROGRESS");
    memset(p, 0, sizeof(*p));
    p->label = label;
    p->total = total > 0 ? total : 1;
    p->active = isatty(STDERR_FILENO) && !(env && strcmp(env, "0") == 0);
    p->last_time = util_now();
}

void util_progress_update(util_progress_t *p, double done)
{
    if (!p->active) return;
    double now = util_now();
    if (now - p->last_time < 0.1) return; /* at most 10 redraws a second */
    p->last_time = now;
    double frac = done / p->total;
    if (frac > 1) frac = 1;
    int width = 30, fill = (int)(frac * width);
    char bar[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    /* erase to the end of the line: a shorter label ("coherence" after
     * "system costs") would leave the old line's tail on screen */
    fprintf(stderr, "\r%s [%s] %5.1f%%\033[K", p->label, bar, frac * 100);
    fflush(stderr);
    p->last_shown = done;
}

void util_progress_end(util_progress_t *p)
{
    if (!p->active) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->active = false;
}

/* ==== Strings and numbers ==== */

/* Length of the decimal number at the start of s: [+-]digits[.digits]
 * [(e|E)[+-]digits], or 0 when s does not start with one. Stricter than
 * strtod, which also takes leading spaces, hex ("0x10"), "inf" and "nan":
 * a number a user types is decimal. */
static size_t decimal_len(const char *s, bool sign)
{
    size_t i = 0, digits = 0;
    if (sign && (s[i] == '+' || s[i] == '-')) i++;
    while (isdigit((unsigned char)s[i]))
        i++, digits++;
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i]))
            i++, digits++;
    }
    if (digits == 0) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (isdigit((unsigned char)s[j])) {
            while (isdigit((unsigned char)s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

int util_parse_double(const char *s, double *out)
{
    if (s == NULL) return -1;
    size_t n = decimal_len(s, true);
    if (n == 0 || s[n]) return -1;
    errno = 0;
    double v = strtod(s, NULL);
    /* ERANGE on underflow too: a denormal is no sensible input either */
    if (errno == ERANGE || !isfinite(v)) return -2;
    *out = v;
    return 0;
}

int util_parse_long(const char *s, long *out)
{
    if (s == NULL) return -1;
    size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
    if (!isdigit((unsigned char)s[i])) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end) return -1;
    if (errno == ERANGE) return -2;
    *out = v;
    return 0;
}

int util_parse_size(const char *s, double *out)
{
    if (s == NULL) return -1;
    size_t n = decimal_len(s, false);
    if (n == 0) return -1;
    const char *end = s + n;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        mult = 1024.0;
        break;
    case 'M':
        mult = 1024.0 * 1024;
        break;
    case 'G':
        mult = 1024.0 * 1024 * 1024;
        break;
    case 'T':
        mult = 1024.0 * 1024 * 1024 * 1024;
        break;
    default:
        break;
    }
    if (mult > 1) end++;
    if (mult > 1 && *end == 'i') end++;
    if (toupper((unsigned char)*end) == 'B') end++;
    if (*end) return -1;
    errno = 0;
    double v = strtod(s, NULL);
    if ((errno == ERANGE && v != 0) || !isfinite(v * mult)) return -2;
    *out = v * mult;
    return 0;
}

int strata_parse_size(const char *s, double *out)
{
    return util_parse_size(s, out);
}

int strata_parse_double(const char *s, double *out)
{
    return util_parse_double(s, out);
}

int strata_parse_long(const char *s, long *out)
{
    return util_parse_long(s, out);
}

const char *util_fmt_bytes(double b, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (!isfinite(b) || b < 0) {
        snprintf(buf, len, "-");
        return buf;
    }
    int u = 0;
    while (b >= 1024 && u < 6)
        b /= 1024, u++;
    /* three significant digits; a mantissa of 100 to 1023 whole (%.3g
     * would write 1.02e+03) */
    snprintf(buf, len, b >= 100 ? "%.0f %s" : "%.3g %s", b, units[u]);
    return buf;
}

const char *util_fmt_time(double s, char *buf, size_t len)
{
    if (s < 1e-6)
        snprintf(buf, len, "%.3g ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, len, "%.3g us", s * 1e6);
    else if (s < 1)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g s", s);
    return buf;
}

bool util_str_eq_nocase(const char *a, const char *b)
{
    while (*a && *b) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
        a++, b++;
    }
    return *a == *b;
}
