/*
 * tiers.c — the tiers of the stack a cluster's links belong to, and what
 * each gives an accelerator: the classification `strata report` uses in
 * every section (by the kinds of device at a link's two ends), summed per
 * accelerator per direction. One pass over the links.
 */
#include "verdict.h"

#include <stdio.h>

static const char *const tier_names[STRATA_TIER_COUNT] = {"scale-up", "host/PCIe", "scale-out"};

const char *strata_tier_name(strata_tier_t tier)
{
    return tier >= 0 && tier < STRATA_TIER_COUNT ? tier_names[tier] : "unknown";
}

static bool is_up_dev(strata_dev_kind_t k)
{
    return k == STRATA_DEV_ACCEL || k == STRATA_DEV_SCALEUP_SWITCH;
}

strata_tier_t strata_tier_of(const strata_topo_device_t *a, const strata_topo_device_t *b)
{
    if (a->kind == STRATA_DEV_NET_SWITCH || b->kind == STRATA_DEV_NET_SWITCH)
        return STRATA_TIER_NET;
    if (is_up_dev(a->kind) && is_up_dev(b->kind)) return STRATA_TIER_UP;
    return STRATA_TIER_HOST;
}

static void add(strata_verdict_tiers_t *t, strata_tier_t k, double *best,
                const strata_topo_link_t *l)
{
    t->bw[k] += l->bw_dir;
    if (l->bw_dir > best[k]) {
        best[k] = l->bw_dir;
        snprintf(t->kind[k], sizeof(t->kind[k]), "%s", l->kind);
    }
}

void strata_verdict_tiers(const strata_topo_t *topo, strata_verdict_tiers_t *t_p)
{
    strata_verdict_tiers_t r = {0};
    double best[STRATA_TIER_COUNT] = {0};
    for (int32_t i = 0; i < strata_topo_link_count(topo); i++) {
        strata_topo_link_t l = strata_topo_link(topo, i);
        strata_topo_device_t a = strata_topo_device(topo, l.a), b = strata_topo_device(topo, l.b);
        strata_tier_t c = strata_tier_of(&a, &b);
        /* count the link once per accelerator end (an accelerator-accelerator
         * link serves both); network tier: the links that leave the servers */
        int ends = (a.kind == STRATA_DEV_ACCEL) + (b.kind == STRATA_DEV_ACCEL);
        bool edge = c == STRATA_TIER_NET &&
                    (a.kind != STRATA_DEV_NET_SWITCH || b.kind != STRATA_DEV_NET_SWITCH);
        for (int e = 0; e < ends && c == STRATA_TIER_UP; e++)
            add(&r, STRATA_TIER_UP, best, &l);
        if (c == STRATA_TIER_HOST && ends) {
            add(&r, STRATA_TIER_HOST, best, &l);
            if (l.latency > r.latency[STRATA_TIER_HOST]) r.latency[STRATA_TIER_HOST] = l.latency;
        }
        if (edge) add(&r, STRATA_TIER_NET, best, &l);
    }
    double n = strata_topo_endpoint_count(topo);
    for (int k = 0; k < STRATA_TIER_COUNT && n > 0; k++)
        r.bw[k] /= n;
    *t_p = r;
}
