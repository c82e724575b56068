/*
 * topoio_test.h — what the topology I/O unit tests share: the link catalog
 * fixture, a check that a call succeeded, link counting on a built
 * topology, and the "mutate a good input, expect this error" helpers.
 * Included once per test executable (everything is static).
 */
#ifndef STRATA_TOPOIO_TEST_H
#define STRATA_TOPOIO_TEST_H

#include "test.h"
#include "test_catalog.h"
#include "topoio.h"

/* Fail the test with the rendered error unless st is OK. */
static inline void must(strata_status_t st, const strata_error_t *err)
{
    char buf[1024];
    if (st) fail_msg("%s", strata_error_str(err, buf, sizeof(buf)));
}

/* Sum of link multiplicities of `kind` touching device dev. */
static inline int links_of(const strata_topo_t *t, int32_t dev, const char *kind)
{
    int n = 0;
    for (int32_t l = 0; l < strata_topo_link_count(t); l++) {
        strata_topo_link_t lk = strata_topo_link(t, l);
        if ((lk.a == dev || lk.b == dev) && strcmp(lk.kind, kind) == 0) n += lk.mult;
    }
    return n;
}

/* base with the first occurrence of from replaced by to (static buffer). */
static inline const char *mutate_text(const char *base, const char *from, const char *to)
{
    static char buf[8192];
    const char *p = strstr(base, from);
    assert_non_null(p);
    snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - base), base, to, p + strlen(from));
    return buf;
}

typedef strata_status_t (*text_loader_t)(const char *text, const char *name,
                                         const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                                         strata_error_t *err);

/* load(text) must fail with a rendered error containing needle. */
static inline void expect_load_error(text_loader_t load, const char *text, const char *name,
                                     const char *needle)
{
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    char buf[1024];
    assert_int_not_equal(load(text, name, cat, &c, &err), STRATA_OK);
    strata_error_str(&err, buf, sizeof(buf));
    if (strstr(buf, needle) == NULL) fail_msg("got '%s', expected '%s'", buf, needle);
    assert_null(c);
}

#endif
