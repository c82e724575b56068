/*
 * ranks_test.h — helpers for tests that fork real ranks (strata_launch_fn):
 * a MAP_SHARED report page each rank writes its status and timing into
 * (the launcher's exit code carries only the first failure), joining from
 * the environment, and launching. Header-only; include after test.h.
 */
#ifndef STRATA_COMM_RANKS_TEST_H
#define STRATA_COMM_RANKS_TEST_H

#include "comm.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct ranks_report {
    int status[16];
    double elapsed[16];
    int done[16];
    int after[16]; /* status of a follow-up call, where a test makes one */
    char msg[16][STRATA_ERROR_MSG_MAX];
} ranks_report_t;

static ranks_report_t *rrep;

/* init_env or exit 3 (the launcher then fails the job). */
static inline strata_comm_t *ranks_join(void)
{
    strata_comm_t *c = NULL;
    strata_error_t err = {0};
    if (strata_comm_init_env(&c, &err) != STRATA_OK) {
        fprintf(stderr, "init: %s\n", err.msg);
        _exit(3);
    }
    return c;
}

/* Record this rank's status, the time since t0 and the error message. */
static inline void ranks_record(strata_comm_t *c, strata_status_t st, double t0)
{
    int r = strata_comm_rank(c);
    rrep->status[r] = st;
    rrep->elapsed[r] = util_now() - t0;
    snprintf(rrep->msg[r], sizeof(rrep->msg[r]), "%s", strata_comm_errmsg(c));
    rrep->done[r] = 1;
    if (st != STRATA_OK) fprintf(stderr, "rank %d: %s\n", r, strata_comm_errmsg(c));
}

/* A zeroed report page shared with the ranks about to be forked. */
static inline void ranks_fresh(void)
{
    if (rrep) munmap(rrep, sizeof(*rrep));
    rrep = mmap(NULL, sizeof(*rrep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(rrep != MAP_FAILED);
    memset(rrep, 0, sizeof(*rrep));
}

/* Run fn on n forked ranks; the launcher's exit code. Once a rank fails the
 * launcher sends the others SIGTERM and, grace_s later, SIGKILL: a test whose
 * survivors must report within 2 x their call's deadline D passes a grace of
 * at least 2 D (their clock starts before the failure the grace follows), so
 * a survivor that keeps the contract is never killed before it reports, on a
 * CPU as busy as it may be. */
static inline int ranks_run_grace(int n, int (*fn)(void *), double grace_s)
{
    int code = -1;
    strata_error_t err = {0};
    assert_int_equal(strata_launch_fn(n, fn, NULL, grace_s, &code, &err), STRATA_OK);
    return code;
}

/* The same with the launcher's default grace of 2 s. */
static inline int ranks_run(int n, int (*fn)(void *))
{
    return ranks_run_grace(n, fn, 2.0);
}

/* The pattern the store-mode tests sum: rank r's input i % 5 + r, so the
 * sum over P ranks is P (i % 5) + P (P - 1) / 2, exact in fp32. */
static inline void ranks_fill_pattern(float *src, size_t n, int r)
{
    for (size_t i = 0; i < n; i++)
        src[i] = (float)(i % 5 + (size_t)r);
}

/* 1 when some element of dst is not that sum. */
static inline int ranks_check_pattern(const float *dst, size_t n, int P)
{
    for (size_t i = 0; i < n; i++)
        if (dst[i] != (float)((size_t)P * (i % 5) + (size_t)(P * (P - 1) / 2))) return 1;
    return 0;
}

#endif
