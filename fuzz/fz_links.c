/*
 * fz_links.c — the link catalog loader (data/links.json format): parse and
 * derive every entry, then derive each again at the packet limits and a
 * narrower width. Invariants: every figure of a loaded entry is finite and
 * non-negative, and no overhead step adds bandwidth (goodput <= line rate
 * <= raw rate, each efficiency in [0, 1]).
 */
#include <math.h>

#include "fuzz.h"
#include "link.h"

static void check_figure(const char *id, const char *what, double v)
{
    if (!isfinite(v) || v < 0) fuzz_fail("link %s: %s = %g", id, what, v);
}

static void check_derivation(const char *id, const strata_link_derivation_t *d)
{
    check_figure(id, "raw_dir", d->raw_dir);
    check_figure(id, "bw_dir", d->bw_dir);
    const double eta[] = {d->eta_line, d->eta_pkt, d->eta_flow};
    for (size_t i = 0; i < 3; i++)
        if (!(eta[i] >= 0 && eta[i] <= 1)) fuzz_fail("link %s: efficiency %zu = %g", id, i, eta[i]);
    if (d->bw_dir > d->line_dir * (1 + 1e-12) || d->line_dir > d->raw_dir * (1 + 1e-12))
        fuzz_fail("link %s: raw %g line %g goodput %g", id, d->raw_dir, d->line_dir, d->bw_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strata_link_catalog_t *cat = NULL;
    strata_error_t err;
    if (link_catalog_load_text((const char *)data, size, "links.json", &cat, &err) != STRATA_OK)
        return 0;
    for (size_t i = 0; i < strata_link_catalog_count(cat); i++) {
        const strata_link_t *l = strata_link_catalog_at(cat, i);
        strata_link_derivation_t d;
        if (strata_link_derive(l, NULL, &d, &err) != STRATA_OK)
            fuzz_fail("link %s loads but its defaults do not derive: %s", l->id, err.msg);
        check_derivation(l->id, &d);
        /* other widths and packet sizes: errors allowed, bad figures not */
        const strata_link_opts_t opts[] = {{1, 0, 0}, {0, 0, 256}, {0, 0, 9000}, {0, 1, 0}};
        for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
            if (strata_link_derive(l, &opts[k], &d, &err) == STRATA_OK) check_derivation(l->id, &d);
    }
    for (size_t i = 0; i < strata_link_latency_count(cat); i++)
        (void)strata_link_latency_at(cat, i);
    strata_link_catalog_destroy(cat);
    return 0;
}
