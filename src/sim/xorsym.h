/*
 * xorsym.h — phase classes of the XOR pairwise all-to-all from the
 * cluster's symmetry (xorsym.c). Used by driver.c's BARRIER run.
 */
#ifndef STRATA_SIM_XORSYM_H
#define STRATA_SIM_XORSYM_H

#include "sim.h"

/* When job is a pairwise all-to-all of P = 2^m ranks (phase p: rank r
 * exchanges with r XOR (p+1), pairwise.c), placed server-major on g = 2^j
 * ranks per server, routed SPREAD, and the server permutations below are
 * verified automorphisms of the topology: writes into cls[0..np) the
 * phase each phase is timed as (itself when no proven equivalent) and sets
 * *used. Otherwise leaves cls alone and *used false. Equivalence is
 * proven, not assumed (xorsym.c). Returns STRATA_OK or ERR_NOMEM. */
strata_status_t sim_xor_classes(const sim_job_t *job, const strata_topo_t *topo,
                                sim_routes_t *routes, uint32_t np, uint32_t *cls, bool *used,
                                strata_error_t *err);

#endif
