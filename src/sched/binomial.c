/* binomial.c — placeholder, being written. */
#include "sched.h"

static strata_status_t init_(strata_sched_t *s, strata_error_t *err)
{
    (void)s;
    return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "binomial: not implemented yet");
}

static void phase_(const strata_sched_t *s, uint32_t agent, sched_sink_t *k)
{
    (void)s, (void)agent, (void)k;
}

const sched_algo_t sched_binomial = {.id = STRATA_ALGO_RING, .colls = 0, .init = init_, .phase = phase_};
