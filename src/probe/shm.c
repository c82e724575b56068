/*
 * shm.c — strata's own shared-memory transport, measured through the
 * public comm API: ranks started by strata_launch_fn, as a user's program
 * would be.
 *
 *   alpha     ranks 0 and 1 ping-pong an 8-byte strata_comm_send/recv;
 *             a sample is a batch's time / (2 × round trips).
 *   bw        the same with shm_bw_bytes: bytes / (one-way time − alpha).
 *   per_rank  barriers at `cores` ranks and at 2 × cores ranks (ranks
 *             outnumbering cores, the scheduler in the loop): the extra
 *             time per barrier per added rank.
 * No collective that the model later predicts (allreduce…) is timed here.
 * The ranks write their samples into an anonymous shared mapping made
 * before the fork.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct shm_job {
    int samples;
    long trips_small, trips_big, barriers;
    size_t big;
    bool barrier_only;
    double alpha[PROBE_MAX_REPS], oneway_big[PROBE_MAX_REPS], barrier[PROBE_MAX_REPS];
    char msg[STRATA_ERROR_MSG_MAX];
} shm_job_t;

/* One batch of round trips of `bytes` between ranks 0 and 1; s one way. */
static double pingpong(strata_comm_t *c, unsigned char *buf, size_t bytes, long trips)
{
    int r = strata_comm_rank(c);
    double t0 = util_now();
    for (long i = 0; i < trips; i++) {
        strata_status_t st = r == 0 ? strata_comm_send(c, buf, bytes, 1, NULL)
                                    : strata_comm_recv(c, buf, bytes, 0, NULL);
        if (st == STRATA_OK)
            st = r == 0 ? strata_comm_recv(c, buf, bytes, 1, NULL)
                        : strata_comm_send(c, buf, bytes, 0, NULL);
        if (st != STRATA_OK) return -1;
    }
    return (util_now() - t0) / (2.0 * (double)trips);
}

static int shm_rank(void *arg)
{
    shm_job_t *j = arg;
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        snprintf(j->msg, sizeof(j->msg), "%s", err.msg);
        return 1;
    }
    int r = strata_comm_rank(c);
    unsigned char *buf = util_malloc(j->big ? j->big : 8);
    int rc = buf ? 0 : 1;
    if (buf) memset(buf, r, j->big ? j->big : 8);
    for (int s = 0; s < j->samples && rc == 0 && !j->barrier_only && r < 2; s++) {
        double a = pingpong(c, buf, 8, j->trips_small);
        double b = pingpong(c, buf, j->big, j->trips_big);
        if (a <= 0 || b <= 0) rc = 1;
        if (r == 0) j->alpha[s] = a, j->oneway_big[s] = b;
    }
    if (rc == 0 && strata_comm_barrier(c, NULL) != STRATA_OK) rc = 1;
    for (int s = 0; s < j->samples && rc == 0 && j->barrier_only; s++) {
        double t0 = util_now();
        for (long i = 0; i < j->barriers && rc == 0; i++)
            if (strata_comm_barrier(c, NULL) != STRATA_OK) rc = 1;
        if (r == 0) j->barrier[s] = (util_now() - t0) / (double)j->barriers;
    }
    if (rc != 0 && r == 0) snprintf(j->msg, sizeof(j->msg), "%s", strata_comm_errmsg(c));
    util_free(buf);
    strata_comm_destroy(c);
    return rc;
}

static strata_status_t launch(shm_job_t *j, int ranks, strata_error_t *err)
{
    int code = 1;
    strata_status_t st = strata_launch_fn(ranks, shm_rank, j, 1.0, &code, err);
    if (st != STRATA_OK) return st;
    if (code != 0)
        return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: shm: %d ranks failed: %s", ranks,
                                j->msg[0] ? j->msg : "no message");
    return STRATA_OK;
}

static strata_status_t per_rank(probe_ctx_t *x, shm_job_t *j, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    double fit[PROBE_MAX_REPS], d[PROBE_MAX_REPS];
    res->ranks_fit = res->cores < 2 ? 2 : res->cores;
    res->ranks_over = 2 * res->ranks_fit;
    if (res->ranks_over > 64) return STRATA_OK; /* launcher limit; not measured */
    j->barrier_only = true;
    strata_status_t st = launch(j, res->ranks_fit, err);
    if (st != STRATA_OK) return st;
    memcpy(fit, j->barrier, sizeof(fit));
    if ((st = launch(j, res->ranks_over, err)) != STRATA_OK) return st;
    double added = res->ranks_over - res->ranks_fit;
    for (int s = 0; s < j->samples; s++)
        d[s] = (j->barrier[s] - fit[s]) / added;
    if ((st = strata_probe_stat(fit, (size_t)j->samples, &res->barrier_fit, err)) ||
        (st = strata_probe_stat(j->barrier, (size_t)j->samples, &res->barrier_over, err)))
        return st;
    return strata_probe_stat(d, (size_t)j->samples, &res->per_rank, err);
}

strata_status_t probe_shm(probe_ctx_t *x, double budget, strata_error_t *err)
{
    strata_probe_result_t *res = x->res;
    shm_job_t *j = mmap(NULL, sizeof(*j), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (j == MAP_FAILED) return strata_error_set(err, STRATA_ERR_SYSTEM, "probe: mmap failed");
    bool quick = x->opts->quick;
    *j = (shm_job_t){.samples = quick ? 5 : 15,
                     .trips_small = quick ? 200 : 1000,
                     .trips_big = quick ? 4 : 10,
                     .barriers = quick ? 300 : 2000,
                     .big = quick ? (size_t)1 << 20 : (size_t)4 << 20};
    res->shm_bw_bytes = j->big;
    setenv("STRATA_TIMEOUT", "30", 0);
    strata_status_t st = launch(j, 2, err);
    probe_tick(x, budget, 0.4);
    double bw[PROBE_MAX_REPS];
    if (st == STRATA_OK && (st = strata_probe_stat(j->alpha, (size_t)j->samples, &res->shm_alpha,
                                                   err)) == STRATA_OK) {
        for (int s = 0; s < j->samples; s++) /* α of the same sample: both saw the same load */
            bw[s] = strata_probe_bandwidth((double)j->big, j->oneway_big[s] - j->alpha[s]);
        st = strata_probe_stat(bw, (size_t)j->samples, &res->shm_bw, err);
    }
    if (st == STRATA_OK) st = per_rank(x, j, err);
    probe_tick(x, budget, 1);
    munmap(j, sizeof(*j));
    return st;
}
