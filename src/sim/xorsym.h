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

/* Phases relabelled onto a representative distance (xorsym.c, "Phases
 * relabelled"): when job's P = 2^m ranks sit server-major, g = 2^j per
 * server, routed SPREAD, and in phase p every rank r sends to and receives
 * from r XOR i_p only, i_p = 2^h·g a single server bit: writes into swp[p]
 * 1 + (u << 8 | c) for the rank bits u = j + h and c = j + h0 whose
 * exchange is a proven automorphism (h0 < h, the lowest such) and whose
 * representative routes split over all their paths, else 0; *used when
 * any is nonzero. With cls (the phases' classes, in and out), a relabelled
 * phase whose steps are those of the phase of distance 2^h0·g joins its
 * class. With rdist and *used: each phase's distance as relabelled (its
 * routes'), UINT32_MAX for a phase of no one distance. Returns STRATA_OK
 * or ERR_NOMEM. */
strata_status_t sim_xor_relabel(const sim_job_t *job, const strata_topo_t *topo,
                                sim_routes_t *routes, uint32_t np, uint32_t *swp, uint32_t *cls,
                                uint32_t *rdist, bool *used, strata_error_t *err);

/* Rank r with the two bits of swp (sim_xor_relabel, nonzero) exchanged. */
static inline uint32_t sim_xor_swap(uint32_t swp, uint32_t r)
{
    uint32_t u = ((swp - 1) >> 8) & 0xffu, c = (swp - 1) & 0xffu;
    uint32_t d = ((r >> u) ^ (r >> c)) & 1u;
    return r ^ (d << u) ^ (d << c);
}

#endif
