/*
 * fuzz.h — what every fuzz target (fuzz/fz_<name>.c) shares: the libFuzzer
 * entry point's prototype, a NUL-terminated copy of the input, and the link
 * catalog loaded once per process.
 *
 * A target defines LLVMFuzzerTestOneInput and nothing else the build needs:
 * fuzz/CMakeLists.txt finds it by its file name. Under STRATA_FUZZ=ON it is
 * linked with libFuzzer (clang); otherwise with fuzz/replay.c, which runs it
 * on every file of fuzz/corpus/<name>/ as a CTest (fuzz_replay_<name>), so
 * every seed and every crash once found is a regression test in every build.
 *
 * A target returns 0 for any input and aborts (via fuzz_fail) only for a
 * broken invariant; sanitizers catch the rest.
 */
#ifndef STRATA_FUZZ_H
#define STRATA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A malloc'd copy of data with a NUL appended (inner NULs stay: the parser
 * under test then sees a shorter string). Aborts when out of memory. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL) abort();
    if (size) memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* The shipped link catalog (STRATA_DATA_DIR or the build tree's data/),
 * loaded on first use and kept for the process; aborts if it cannot load,
 * because then no input is tested at all. */
static inline const strata_link_catalog_t *fuzz_catalog(void)
{
    static strata_link_catalog_t *cat;
    if (cat == NULL) {
        strata_error_t err;
        if (strata_link_catalog_load(NULL, &cat, &err) != STRATA_OK) {
            fprintf(stderr, "fuzz: cannot load the link catalog: %s\n", err.msg);
            abort();
        }
    }
    return cat;
}

/* Report a broken invariant on input s and abort (a crash to libFuzzer). */
#define fuzz_fail(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "fuzz: invariant broken: " __VA_ARGS__);                                   \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

#endif
