/*
 * size.c — the command line's size values (`-b 64K`, `--size 1.5MiB`):
 * a number, an optional binary multiple K, M, G or T (optionally followed by
 * i) and an optional B. Kept apart from main.c, with no output of its own,
 * so fuzz/fz_size.c can run it as the command does.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>

int cli_size_value(const char *arg, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    double mult = 1;
    if (end != arg) {
        switch (*end) {
        case 'k':
        case 'K':
            mult = 1024.0;
            end++;
            break;
        case 'm':
        case 'M':
            mult = 1048576.0;
            end++;
            break;
        case 'g':
        case 'G':
            mult = 1073741824.0;
            end++;
            break;
        case 't':
        case 'T':
            mult = 1099511627776.0;
            end++;
            break;
        default:
            break;
        }
        if (mult > 1 && *end == 'i') end++;
        if (*end == 'B' || *end == 'b') end++;
    }
    if (end == arg || *end || !isfinite(v) || v < 0 || !isfinite(v * mult)) return -1;
    *out = v * mult;
    return 0;
}
