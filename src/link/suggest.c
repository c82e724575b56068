/*
 * suggest.c — "did you mean": catalog ids close to a misspelt one, for the
 * error message of `strata link NAME`. Edit distance (Levenshtein, ids are
 * short) ≤ 2, or one id containing the other.
 */
#include "link.h"

#include <ctype.h>
#include <string.h>

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t sub =
                diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[lb];
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n < 2) return 0;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return 1;
    }
    return 0;
}

const char *strata_link_suggest(const strata_link_catalog_t *cat, const char *id, char *buf,
                                size_t len)
{
    size_t o = 0, shown = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; i < strata_link_catalog_count(cat) && shown < 10 && o < len; i++) {
        const char *c = strata_link_catalog_at(cat, i)->id;
        if (edit_distance(c, id) > 2 && !contains_nocase(c, id) && !contains_nocase(id, c))
            continue;
        o += (size_t)snprintf(buf + o, len - o, "%s%s", shown++ ? ", " : "", c);
    }
    return buf;
}
