/*
 * fz_size.c — size strings: the command line's parser (`-b 64K`,
 * `--size 1.5MiB`; cli_size_value in tools/strata/size.c, included here)
 * and the library's (util_parse_size). Invariants: an accepted size is
 * finite and non-negative, a plain decimal integer without suffix reads as
 * itself, and where both parsers accept a string they agree.
 */
#include <ctype.h>
#include <math.h>

#include "fuzz.h"
#include "size.c" /* tools/strata/ */
#include "util.h"

static void check_size(const char *who, const char *s, double v)
{
    if (!isfinite(v) || v < 0) fuzz_fail("%s(\"%s\") accepted %g", who, s, v);
    /* up to 15 digits: exact in a double, compared to a digit loop */
    size_t n = strlen(s);
    int digits = n > 0 && n <= 15;
    double want = 0;
    for (size_t i = 0; digits && i < n; i++) {
        digits = isdigit((unsigned char)s[i]) != 0;
        want = want * 10 + (s[i] - '0');
    }
    if (digits && v != want) fuzz_fail("%s(\"%s\") = %.17g, not %.17g", who, s, v, want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64) return 0;
    char *s = fuzz_cstr(data, size);
    double lib, cli;
    int lib_ok = util_parse_size(s, &lib) == 0, cli_ok = cli_size_value(s, &cli) == 0;
    if (lib_ok) check_size("util_parse_size", s, lib);
    if (cli_ok) check_size("cli_size_value", s, cli);
    if (lib_ok && cli_ok && lib != cli)
        fuzz_fail("\"%s\": library %.17g, command %.17g", s, lib, cli);
    free(s);
    return 0;
}
