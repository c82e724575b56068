/*
 * verdict.h — internals of the verdict module: the simulated ring the
 * analysis rests on.
 */
#ifndef STRATA_VERDICT_INTERNAL_H
#define STRATA_VERDICT_INTERNAL_H

#include "strata/verdict.h"

/* A ring allreduce of STRATA_VERDICT_BIG_BYTES over every accelerator of
 * topo, simulated with spread routing, one connection per rank pair, the
 * top_links most loaded links kept; free res with strata_sim_result_free. */
strata_status_t verdict_sim_ring(const strata_topo_t *topo, int top_links, strata_sim_result_t *res,
                                 strata_error_t *err);

#endif
