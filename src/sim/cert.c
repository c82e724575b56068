/*
 * cert.c — the contention-free certificate.
 *
 * Claim: if for every channel r the flows of a set that cross it satisfy
 * Σ_f w_fr · s_f <= cap_r, where s_f = min over f's hops of cap / w is f's
 * rate alone on its path, then at every instant max-min fair sharing gives
 * every active flow of the set exactly s_f, whichever of them are active.
 * Proof: no flow is ever above s_f (its own bottleneck hop caps it), so a
 * channel carries at most Σ w · s_f <= cap and only saturates once all its
 * flows run at their s_f; in progressive filling the level λ therefore
 * rises, for each flow, until λ = s_f, where its bottleneck hop r* (cap /
 * w = s_f) saturates — and r* carries f alone, since with f at cap_r* any
 * other flow's share would push the sum over cap. A subset of the flows
 * (those active at some time) satisfies the inequalities a fortiori. So
 * the shared run equals the contention-free run (each flow's rate fixed at
 * its start, the engine's ideal mode) in real arithmetic; the sums are
 * checked against cap × (1 + 1e-12), the rounding of w · (cap / w), and a
 * demand that much over cap lowers no rate by more than that factor.
 *
 * Concurrent groups (sim_gcert_*). Groups of agents that exchange no
 * messages with each other interact only through channels both cross. If
 * every channel crossed by two or more groups has Σ w · s_f <= cap over
 * the flows of all groups that can be active at once, max-min sharing of
 * all groups together gives every flow the rate it gets with its own group
 * alone: each group's alone allocation is feasible together (on a shared
 * channel the sum is at most Σ w · s_f <= cap); a flow's bottleneck in its
 * group's allocation is saturated by that group, which a shared channel
 * cannot be (its other groups' flows would take the sum over cap), so it
 * is a channel of its group only, saturated and with the flow's rate its
 * highest there in the union too — the characterisation of the max-min
 * allocation (Bertsekas & Gallager §6.5.2), which is unique. By induction
 * over events each group then runs exactly as alone. The caller bounds
 * "can be active at once" (driver.c: an agent is in one phase at a time,
 * so the sum over its phase classes' flows bounds it).
 *
 * Cost: O(hops) per flow, one array of doubles per channel kept across
 * phases and cleared through the list of channels touched.
 */
#include "cert.h"

#include <math.h>
#include <string.h>

#define CERT_TOL 1e-12

/* A flow's rate alone on r, min over its hops of cap / w. */
static double solo_rate(const sim_net_t *net, const sim_route_t *r)
{
    double solo = INFINITY;
    for (uint32_t h = 0; h < r->n; h++) {
        double x = sim_net_res_cap(net, r->hops[h].res) / r->hops[h].w;
        if (x < solo) solo = x;
    }
    return solo;
}

void sim_cert_reset(sim_cert_t *c)
{
    for (size_t i = 0; i < c->touched.n; i++)
        c->load[c->touched.v[i]] = 0;
    c->touched.n = 0;
    c->broken = false;
}

int sim_cert_add(sim_cert_t *c, const sim_net_t *net, const sim_route_t *r, double bytes)
{
    if (c->broken || r->n == 0 || !(bytes > 0)) return 0;
    if (!c->load) {
        c->nres = sim_net_res_count(net);
        c->load = util_calloc(c->nres ? c->nres : 1, sizeof(double));
        if (!c->load) return -1;
    }
    double solo = solo_rate(net, r);
    for (uint32_t h = 0; h < r->n; h++) {
        uint32_t res = r->hops[h].res;
        if (c->load[res] == 0 && UTIL_VEC_PUSH(&c->touched, res)) return -1;
        c->load[res] += r->hops[h].w * solo;
        if (c->load[res] > sim_net_res_cap(net, res) * (1 + CERT_TOL)) {
            c->broken = true;
            return 0;
        }
    }
    return 0;
}

void sim_cert_free(sim_cert_t *c)
{
    util_free(c->load);
    UTIL_VEC_FREE(&c->touched);
    memset(c, 0, sizeof(*c));
}

/* ==== Concurrent groups ==== */

int sim_gcert_add(sim_gcert_t *c, const sim_net_t *net, const sim_route_t *r, double bytes,
                  uint32_t group)
{
    if (r->n == 0 || !(bytes > 0)) return 0;
    if (!c->load) {
        c->nres = sim_net_res_count(net);
        c->load = util_calloc(c->nres ? c->nres : 1, sizeof(double));
        c->owner = util_calloc(c->nres ? c->nres : 1, sizeof(uint32_t));
        if (!c->load || !c->owner) return -1;
    }
    double solo = solo_rate(net, r);
    for (uint32_t h = 0; h < r->n; h++) {
        uint32_t res = r->hops[h].res;
        c->load[res] += r->hops[h].w * solo;
        if (c->owner[res] == 0)
            c->owner[res] = group + 1;
        else if (c->owner[res] != group + 1)
            c->owner[res] = UINT32_MAX;
    }
    return 0;
}

bool sim_gcert_holds(const sim_gcert_t *c, const sim_net_t *net)
{
    for (uint32_t r = 0; c->owner && r < c->nres; r++)
        if (c->owner[r] == UINT32_MAX && c->load[r] > sim_net_res_cap(net, r) * (1 + CERT_TOL))
            return false;
    return true;
}

void sim_gcert_free(sim_gcert_t *c)
{
    util_free(c->load);
    util_free(c->owner);
    memset(c, 0, sizeof(*c));
}
