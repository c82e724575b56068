/*
 * size.c — the command line's size values (`-b 64K`, `--size 1.5MiB`):
 * decimal digits with an optional fraction and exponent, an optional
 * binary multiple K, M, G or T (optionally followed by i) and an optional
 * B — the library's strict parser (strata_parse_size: no hex, inf, nan,
 * sign or spaces; overflow reported). Kept apart from main.c, with no
 * output of its own, so fuzz/fz_size.c can run it as the command does.
 */
#include "cli.h"

int cli_size_value(const char *arg, double *out)
{
    return strata_parse_size(arg, out);
}
