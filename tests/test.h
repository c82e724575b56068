/*
 * test.h — common includes for cmocka unit tests, and helpers to write
 * temporary files for loader tests.
 */
#ifndef STRATA_TEST_H
#define STRATA_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

/* assert |a-b| <= tol (absolute), printing both values on failure. */
#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_)) fail_msg("%s = %.9g, expected %.9g ± %.3g", #a, a_, b_, t_);   \
    } while (0)

/* assert a within rel (fraction) of b. */
#define assert_rel(a, b, rel)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b), r_ = (rel);                                                     \
        if (!(fabs(a_ - b_) <= r_ * fabs(b_)))                                                     \
            fail_msg("%s = %.9g, expected %.9g within %.3g%%", #a, a_, b_, r_ * 100);              \
    } while (0)

/* Write text to a fresh temporary file; returns its path (static buffer
 * rotated among 4 so a test can hold a few). */
static inline const char *test_write_tmp(const char *suffix, const char *text)
{
    static char paths[4][256];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 256, "/tmp/strata-test-XXXXXX%s", suffix);
    int fd = mkstemps(p, (int)strlen(suffix));
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return p;
}

#endif
