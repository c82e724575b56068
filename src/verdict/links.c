/*
 * links.c — the links section of the verdict: every kind of link the
 * cluster's topology holds, grouped by tier of the stack (scale-up,
 * host/PCIe, scale-out network) and by the roles of the devices at its two
 * ends, per accelerator and per direction, and the figures the rows imply:
 * which rows put a NIC behind a host link and on a network port, the
 * latency x bandwidth crossover of each tier, and the scale-out link's
 * data-link figure (credits, or PFC headroom on Ethernet).
 *
 * Nothing is typed in: the rows are the topology's links, classified by
 * strata_tier_of; per-link figures are the topology's (catalog-derived, or
 * explicit for custom links); the data-link models take the catalog entry
 * of the network link's kind. Workload: one pass over the links (8,704
 * for dgx-h100:128), a handful of rows.
 */
#include "verdict.h"

#include <stdio.h>
#include <string.h>

/* Role of a device in a row label; network switches by tier. */
static const char *role(const strata_topo_device_t *d)
{
    static const char *const sw[] = {"switch", "leaf", "spine", "core"};
    if (d->kind == STRATA_DEV_NET_SWITCH) return sw[d->tier >= 0 && d->tier < 4 ? d->tier : 0];
    if (d->kind == STRATA_DEV_SCALEUP_SWITCH) return "upsw";
    if (d->kind == STRATA_DEV_PCIE_SWITCH) return "pcisw";
    if (d->kind == STRATA_DEV_ACCEL) return "gpu";
    return strata_dev_kind_str(d->kind);
}

/* Lower device-kind order first, so "accel-nic" never reads "nic-accel". */
static void label(const strata_topo_device_t *a, const strata_topo_device_t *b, char *buf,
                  size_t len)
{
    bool swap = a->kind > b->kind || (a->kind == b->kind && a->tier > b->tier);
    snprintf(buf, len, "%s-%s", role(swap ? b : a), role(swap ? a : b));
}

/* Raw sums of one row before they are divided per accelerator. */
typedef struct acc {
    strata_verdict_link_row_t row;
    double links, bw; /* Σ multiplicity and Σ bw_dir, counted per accelerator end */
} acc_t;

static acc_t *find_row(acc_t *rows, int *n, strata_tier_t tier, const char *kind,
                       const char *between)
{
    for (int i = 0; i < *n; i++)
        if (rows[i].row.tier == tier && strcmp(rows[i].row.kind, kind) == 0 &&
            strcmp(rows[i].row.between, between) == 0)
            return &rows[i];
    if (*n == STRATA_VERDICT_LINK_ROWS) return NULL;
    acc_t *r = &rows[(*n)++];
    memset(r, 0, sizeof(*r));
    r->row.tier = tier;
    snprintf(r->row.kind, sizeof(r->row.kind), "%s", kind);
    snprintf(r->row.between, sizeof(r->row.between), "%s", between);
    return r;
}

static int collect(const strata_topo_t *t, acc_t *rows)
{
    int n = 0;
    for (int32_t i = 0; i < strata_topo_link_count(t); i++) {
        strata_topo_link_t l = strata_topo_link(t, i);
        strata_topo_device_t a = strata_topo_device(t, l.a), b = strata_topo_device(t, l.b);
        char between[48];
        label(&a, &b, between, sizeof(between));
        acc_t *r = find_row(rows, &n, strata_tier_of(&a, &b), l.kind, between);
        if (!r) continue; /* more than STRATA_VERDICT_LINK_ROWS kinds: the rest are not listed */
        double per = l.bw_dir / (l.mult > 0 ? l.mult : 1);
        /* a link between two accelerators is a link of each */
        int w = (a.kind == STRATA_DEV_ACCEL) + (b.kind == STRATA_DEV_ACCEL);
        w = w > 0 ? w : 1;
        if (r->row.count == 0 || per < r->row.per_link) r->row.per_link = per;
        r->links += (double)w * l.mult;
        r->bw += w * l.bw_dir;
        r->row.latency = l.latency;
        r->row.count++;
    }
    return n;
}

/* Latency x per-GPU bandwidth of the widest row of a tier. */
static double crossover(const strata_verdict_links_t *l, strata_tier_t tier, double per_gpu)
{
    double lat = 0, best = 0;
    for (int i = 0; i < l->nrows; i++)
        if (l->rows[i].tier == tier && l->rows[i].per_gpu > best)
            best = l->rows[i].per_gpu, lat = l->rows[i].latency;
    return lat * per_gpu;
}

/* Ethernet has no link-level credits: it drops unless PFC pauses (the
 * categories `strata link` treats so). */
static bool is_ethernet(const strata_link_t *l)
{
    return !strcmp(l->category, "Ethernet") || !strcmp(l->category, "RoCEv2") ||
           !strcmp(l->category, "Gaudi");
}

static void datalink(const strata_link_catalog_t *cat, const char *kind, strata_verdict_links_t *v)
{
    const strata_link_t *l = cat && kind[0] ? strata_link_find(cat, kind) : NULL;
    if (!l || l->line_dir <= 0 || l->wire <= 0) return;
    snprintf(v->net_link, sizeof(v->net_link), "%s", l->id);
    v->ethernet = is_ethernet(l);
    if (v->ethernet) {
        v->pfc_headroom = strata_pfc_headroom(l->line_dir, STRATA_VERDICT_CABLE_M, l->wire);
        return;
    }
    v->rtt = strata_link_rtt(l->line_dir, STRATA_VERDICT_CABLE_M, l->wire);
    v->credit_buffer = strata_credit_buffer(l->line_dir, v->rtt);
}

void strata_verdict_links(const strata_topo_t *topo, const strata_link_catalog_t *cat,
                          strata_verdict_links_t *l_p)
{
    acc_t acc[STRATA_VERDICT_LINK_ROWS];
    int n = collect(topo, acc);
    strata_verdict_links_t *v = l_p;
    memset(v, 0, sizeof(*v));
    double nep = strata_topo_endpoint_count(topo);
    nep = nep > 0 ? nep : 1;
    /* rows in tier order, in order of appearance within a tier */
    for (int k = 0; k < STRATA_TIER_COUNT; k++)
        for (int i = 0; i < n; i++) {
            if (acc[i].row.tier != (strata_tier_t)k) continue;
            strata_verdict_link_row_t *r = &v->rows[v->nrows++];
            *r = acc[i].row;
            r->links_per_gpu = acc[i].links / nep;
            r->per_gpu = acc[i].bw / nep;
        }
    v->nic_host = v->nic_port = -1;
    for (int i = 0; i < v->nrows; i++) {
        bool nic = strstr(v->rows[i].between, "nic") != NULL;
        if (nic && v->rows[i].tier == STRATA_TIER_HOST && v->nic_host < 0) v->nic_host = i;
        if (nic && v->rows[i].tier == STRATA_TIER_NET && v->nic_port < 0) v->nic_port = i;
    }
    strata_verdict_tiers_t t;
    strata_verdict_tiers(topo, &t);
    v->crossover[STRATA_TIER_UP] = crossover(v, STRATA_TIER_UP, t.bw[STRATA_TIER_UP]);
    v->crossover[STRATA_TIER_NET] = crossover(v, STRATA_TIER_NET, t.bw[STRATA_TIER_NET]);
    datalink(cat, t.kind[STRATA_TIER_NET], v);
}
