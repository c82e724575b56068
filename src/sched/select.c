/*
 * select.c — choose the cheapest algorithm for a collective and size on a
 * machine, and find the sizes where the choice changes (crossovers).
 *
 * Selection is exhaustive over the algorithms that implement the
 * collective and apply to the machine (strata_coll_cost says which), except
 * direct (strata_coll_selectable); ties
 * go to the earlier algorithm in STRATA_ALGO_MAP. Crossovers are found by
 * scanning a log grid (4 points per octave) and bisecting each change to
 * 1 % in size. Cheap: every cost is O(1).
 */
#include "sched.h"

#include <math.h>

bool strata_coll_selectable(strata_algo_t algo)
{
    return (unsigned)algo < STRATA_ALGO_COUNT && algo != STRATA_ALGO_DIRECT;
}

strata_status_t strata_coll_select(const strata_coll_machine_t *m, strata_coll_t coll, double bytes,
                                   strata_coll_cost_t *best_p, strata_error_t *err)
{
    strata_coll_cost_t best = {0}, c;
    bool found = false;
    for (int a = 0; a < STRATA_ALGO_COUNT; a++) {
        if (!strata_coll_selectable((strata_algo_t)a)) continue;
        if (strata_coll_cost(m, coll, (strata_algo_t)a, bytes, &c, NULL)) continue;
        if (!found || c.time < best.time) best = c, found = true;
    }
    if (!found)
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "no algorithm implements %s here",
                                strata_coll_name(coll));
    *best_p = best;
    return STRATA_OK;
}

static strata_algo_t pick(const strata_coll_machine_t *m, strata_coll_t coll, double bytes)
{
    strata_coll_cost_t c;
    return strata_coll_select(m, coll, bytes, &c, NULL) ? STRATA_ALGO_COUNT : c.algo;
}

size_t strata_coll_crossovers(const strata_coll_machine_t *m, strata_coll_t coll, double lo,
                              double hi, double *sizes_p, strata_algo_t *algos_p, size_t max)
{
    size_t n = 0;
    if (!(lo > 0) || !(hi > lo)) return 0;
    double step = pow(2, 0.25), x = lo;
    strata_algo_t cur = pick(m, coll, x);
    while (x < hi && n < max) {
        double y = fmin(x * step, hi);
        strata_algo_t next = pick(m, coll, y);
        if (next != cur) {
            double a = x, b = y;
            while (b / a > 1.01) {
                double mid = sqrt(a * b);
                if (pick(m, coll, mid) == cur)
                    a = mid;
                else
                    b = mid;
            }
            sizes_p[n] = b, algos_p[n] = pick(m, coll, b), n++;
            cur = algos_p[n - 1];
        }
        x = y;
    }
    return n;
}
