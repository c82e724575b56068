/*
 * plan_fix_test.h — the planning fixture the plan module's tests share: a
 * workload on a cluster (preset spec or file) with 80 GB A100s, as a
 * planning context. Header-only, for test files.
 */
#ifndef STRATA_PLAN_FIX_TEST_H
#define STRATA_PLAN_FIX_TEST_H

#include "plan.h"
#include "test.h"

typedef struct fix {
    strata_link_catalog_t *cat;
    strata_topo_t *topo;
    strata_plan_ctx_t *ctx;
} fix_t;

static inline void fix_open(fix_t *f, const char *model, const char *cluster)
{
    strata_error_t err;
    strata_workload_t w;
    strata_accel_t a;
    memset(f, 0, sizeof(*f));
    assert_int_equal(strata_link_catalog_load(NULL, &f->cat, &err), STRATA_OK);
    assert_int_equal(strata_topo_load_spec(cluster, f->cat, &f->topo, &err), STRATA_OK);
    assert_int_equal(strata_workload_load(model, &w, &err), STRATA_OK);
    assert_int_equal(strata_accel_load(NULL, "a100-80", &a, &err), STRATA_OK);
    assert_int_equal(strata_plan_ctx_create(&w, &a, f->topo, f->cat, &f->ctx, &err), STRATA_OK);
}

static inline void fix_close(fix_t *f)
{
    strata_plan_ctx_destroy(f->ctx);
    strata_topo_destroy(f->topo);
    strata_link_catalog_destroy(f->cat);
}

#endif /* STRATA_PLAN_FIX_TEST_H */
