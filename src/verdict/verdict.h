/*
 * verdict.h — internals of the verdict module: the pieces verdict.c joins,
 * one file each (links.c, topology.c, sim.c).
 */
#ifndef STRATA_VERDICT_INTERNAL_H
#define STRATA_VERDICT_INTERNAL_H

#include "strata/verdict.h"

/* The topology section of t into v (metrics, two routed paths). */
strata_status_t verdict_topology(const strata_topo_t *t, strata_verdict_topo_t *v,
                                 strata_error_t *err);
/* The ring on topo under the three routings, named spec (NULL: the
 * topology's name); spread, when given, is copied instead of simulated. */
strata_status_t verdict_routings(const strata_topo_t *topo, const char *spec,
                                 const strata_sim_result_t *spread, strata_verdict_routings_t *b,
                                 strata_error_t *err);
void verdict_routings_free(strata_verdict_routings_t *b);
/* The at-scale rings of v's cluster grown from spec (v->scale or
 * v->scale_skip). */
strata_status_t verdict_scale(strata_verdict_t *v, const strata_link_catalog_t *cat,
                              const char *spec, strata_error_t *err);

#endif
