/*
 * test_catalog.h — the link catalog fixture that unit tests share: `cat`,
 * loaded from the data directory (STRATA_DATA_DIR) by setup() and freed by
 * teardown(), for cmocka_run_group_tests(tests, setup, teardown). Included
 * once per test executable (everything is static).
 */
#ifndef STRATA_TEST_CATALOG_H
#define STRATA_TEST_CATALOG_H

#include "strata/link.h"

static strata_link_catalog_t *cat;

static int setup(void **state)
{
    (void)state;
    strata_error_t err;
    return strata_link_catalog_load(NULL, &cat, &err) == STRATA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    strata_link_catalog_destroy(cat);
    return 0;
}

#endif
