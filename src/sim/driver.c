/*
 * driver.c — turns schedules into flows on the engine, following sched's
 * ordering rules (strata/sched.h): an agent's phase starts when its earlier
 * phases are done; inside a phase a step waits for the first `after` steps;
 * the k-th SEND a→b matches the k-th RECV at b from a, in the same phase.
 *
 * A SEND becomes one engine flow along the cached route between the two
 * agents' devices and completes when its last byte is delivered. A RECV /
 * RECV_REDUCE completes when both it has been posted and its message has
 * arrived (whichever is later). COPY and REDUCE are local and instant.
 * Steps that complete at one instant are queued and handled iteratively
 * (never recursively), so long chains of local steps cost no stack.
 *
 * BARRIER mode runs phase after phase, each from a rewound engine (local
 * time 0) and adds the phase's duration to the total; a phase whose class
 * was timed before reuses that duration, its statistics having been
 * weighted by the class's number of phases when it was simulated. Because a
 * rewound engine behaves bit-for-bit like a fresh one, reuse gives exactly
 * the total of the event-by-event run. A simulated phase whose flows the
 * contention-free certificate (cert.c) proves free of sharing runs in the
 * engine's ideal mode; one it does not certify, whose sends all start at
 * the phase start, is timed by parts, each shape of part once (fold.c,
 * run_folded). ASYNC mode posts every agent's first phase and lets
 * each advance on its own; nothing is reused — except that concurrent
 * collectives proven not to interact are each timed alone (run_groups:
 * BARRIER with reuse when in lockstep, else the contention-free walk).
 *
 * Memory: O(agents × steps per phase) for the current steps, plus one entry
 * per communicating pair for message matching (BARRIER: the pairs of the
 * current phase only; ASYNC: every pair of the run).
 */
#include "cert.h"
#include "fold.h"
#include "sim.h"
#include "xorsym.h"

#include <math.h>
#include <string.h>

enum { ST_WAITING = 0, ST_STARTED = 1, ST_DONE = 2 };

#define NCRIT (SIM_MAX_TIERS + 1)

typedef struct sstep {
    strata_step_t step;
    double t_start;
    uint32_t seq;         /* message sequence number within its (src, dst) pair */
    uint32_t pslot, pgen; /* that pair's slot in the table, valid while pgen matches */
    uint8_t state;
    uint8_t flows; /* SEND: its flows still delivering (data, read requests) */
    /* The contention-free run alongside (below): when this step would
     * start and complete with every flow alone on its path; i_pm is the
     * latest completion of the agent's steps up to this one, set as the
     * completed prefix passes it. */
    double i_start, i_done, i_pm;
    bool crit_set; /* its critical chain (agent_t.crit, below) is set */
    /* BARRIER, a receive: its message arrived before it was posted, and
     * when the message would have arrived contention-free */
    bool arrived;
    double i_arr;
    /* A SEND's route, kept from the last phase that sent from this step
     * to the same peer while the route cache was not emptied since
     * (route_flush is sim_routes_flushes + 1; 0: none): a collective's
     * agent sends to the same peers phase after phase. */
    const sim_route_t *route;
    int32_t route_peer;
    uint64_t route_flush;
} sstep_t;

/* BARRIER: one of an agent's receives, keyed (source agent << 32 | seq). */
typedef struct rx {
    uint64_t key;
    uint32_t step;
} rx_t;

typedef struct agent {
    uint32_t job, idx; /* job and agent index in it */
    uint32_t phase;
    sstep_t *steps;
    uint32_t n, cap;
    uint32_t ndone, prefix, min_after;
    /* BARRIER: the receives of the phase sorted by key (matching, below) */
    rx_t *rx;
    uint32_t nrx, rx_cap;
    bool finished; /* ASYNC: no phases left */
    double t_end;
    double t0; /* start of the current phase for this agent */
    /* Critical chains (below) in the driver's compact layout: one entry per
     * link class the run has, then latency and waits (crit_n, crit_lat). */
    double *crit;            /* per step, crit_n entries each */
    uint32_t crit_cap;       /* steps crit has room for */
    double crit0[NCRIT];     /* critical chain to t0 */
    double crit_last[NCRIT]; /* chain of the step that completed last */
    double i_t0, i_end;      /* contention-free: phase start, latest completion */
} agent_t;

/* Matching state of one ordered pair (src → dst). A message and its
 * receive meet through `pend`: a list of arrived-but-unclaimed messages or
 * posted-but-unfilled receives, identified by sequence number. */
typedef struct pend {
    uint32_t seq, step; /* step: receiving step index (waiters) */
    uint32_t next;
    uint8_t arrived; /* 1: message arrived, 0: receive waiting */
    double i_arr;    /* arrived: when it would have, contention-free */
} pend_t;

typedef struct pair {
    uint64_t key; /* (src << 32 | dst) + 1; 0 = empty */
    uint32_t send_seq, recv_seq;
    uint32_t head; /* pend list, UINT32_MAX = empty */
} pair_t;

typedef struct done_ev {
    uint32_t g, i;
} done_ev_t;

typedef struct drv {
    sim_drive_t *d;
    sim_net_t *net;
    agent_t *agents;
    uint32_t nagents, agents_cap; /* agents_cap: run_groups' agents kept */
    pair_t *pairs;
    size_t pairs_cap, pairs_n;
    uint32_t pairs_gen; /* bumped when the table grows (slots move) */
    UTIL_VEC(pend_t) pends;
    uint32_t pend_free;
    uint64_t open; /* unmatched arrivals + waiting receives */
    UTIL_VEC(done_ev_t) queue;
    UTIL_VEC(strata_step_t) scratch;  /* one agent's phase, as sched gives it */
    UTIL_VEC(strata_step_t) scratch2; /* a second one, to compare phases */
    UTIL_VEC(uint64_t) sends, recvs;  /* BARRIER: an agent's, being numbered (below) */
    uint32_t agents_done;
    bool async;      /* ASYNC asked for, or several jobs */
    double weight;   /* the engine's statistics weight (BARRIER: the class's phases) */
    sim_cert_t cert; /* the contention-free certificate of a phase (cert.c) */
    sim_fold_t fold; /* a phase cut into parts, each shape timed once (fold.c) */
    bool folded;     /* the last run_phase was folded: its chain is fold_crit */
    double fold_crit[SIM_MAX_TIERS + 1];
    /* run_groups: the certificate between groups, this one's index, and
     * whether every phase so far ended on all agents at once (lockstep) */
    sim_gcert_t *gcert;
    sim_cert_t gsolo; /* every flow of this group's simulated phases */
    uint32_t group;
    bool lockstep;
    /* The channel rotation (below, "Channels generated by rotation"):
     * rot > 1 while phases are generated by their representative
     * channels, each send standing for its rot images. */
    uint32_t rot;
    strata_error_t *err;
    strata_status_t rc;
} drv_t;

#define TAG_STEP_BITS 24
#define TAG_REQUESTS  (1ull << 63) /* the read-request flow of a pull */

static strata_status_t fail(drv_t *v, strata_status_t rc, const char *msg)
{
    if (v->rc == STRATA_OK) v->rc = strata_error_set(v->err, rc, "%s", msg);
    return v->rc;
}

static strata_status_t oom(drv_t *v)
{
    return fail(v, STRATA_ERR_NOMEM, "out of memory");
}

/* ==== Pair table ==== */

static pair_t *pair_get(drv_t *v, uint32_t src, uint32_t dst)
{
    if ((v->pairs_n + 1) * 2 > v->pairs_cap) {
        size_t cap = v->pairs_cap ? v->pairs_cap * 2 : 4096;
        pair_t *np = util_calloc(cap, sizeof(*np));
        if (!np) return NULL;
        for (size_t i = 0; i < v->pairs_cap; i++) {
            if (!v->pairs[i].key) continue;
            size_t j = util_hash_u64(v->pairs[i].key) & (cap - 1);
            while (np[j].key)
                j = (j + 1) & (cap - 1);
            np[j] = v->pairs[i];
        }
        util_free(v->pairs);
        v->pairs = np;
        v->pairs_cap = cap;
        v->pairs_gen++;
    }
    uint64_t key = (((uint64_t)src << 32) | dst) + 1;
    size_t i = util_hash_u64(key) & (v->pairs_cap - 1);
    while (v->pairs[i].key && v->pairs[i].key != key)
        i = (i + 1) & (v->pairs_cap - 1);
    if (!v->pairs[i].key) {
        v->pairs[i] = (pair_t){key, 0, 0, UINT32_MAX};
        v->pairs_n++;
    }
    return &v->pairs[i];
}

/* BARRIER: messages match inside a phase, so at a phase start no pair has
 * anything pending and its sequence numbers can restart: the table then
 * holds only the pairs of one phase (an all-to-all's P(P-1) pairs are never
 * all kept; memory stays linear in the ranks). */
static void pairs_clear(drv_t *v)
{
    if (v->pairs) memset(v->pairs, 0, v->pairs_cap * sizeof(*v->pairs));
    v->pairs_n = 0;
    v->pairs_gen++;
    v->pends.n = 0;
    v->pend_free = UINT32_MAX;
}

/* The pair of a step's message (src → dst), through its cached slot. */
static pair_t *step_pair(drv_t *v, sstep_t *ss, uint32_t src, uint32_t dst)
{
    if (ss->pgen == v->pairs_gen) return &v->pairs[ss->pslot];
    pair_t *p = pair_get(v, src, dst);
    if (p) {
        ss->pslot = (uint32_t)(p - v->pairs);
        ss->pgen = v->pairs_gen;
    }
    return p;
}

/* Find and unlink the pending entry of seq in pair p with the given kind;
 * returns its receiving step index, or UINT32_MAX when absent. */
static uint32_t pend_take(drv_t *v, pair_t *p, uint32_t seq, uint8_t arrived, double *i_arr)
{
    uint32_t *link = &p->head;
    while (*link != UINT32_MAX) {
        pend_t *e = &v->pends.v[*link];
        if (e->seq == seq && e->arrived == arrived) {
            uint32_t idx = *link, step = e->step;
            if (i_arr) *i_arr = e->i_arr;
            *link = e->next;
            e->next = v->pend_free;
            v->pend_free = idx;
            v->open--;
            return arrived ? 0 : step;
        }
        link = &e->next;
    }
    return UINT32_MAX;
}

static int pend_put(drv_t *v, pair_t *p, uint32_t seq, uint32_t step, uint8_t arrived, double i_arr)
{
    uint32_t idx;
    if (v->pend_free != UINT32_MAX) {
        idx = v->pend_free;
        v->pend_free = v->pends.v[idx].next;
    } else {
        pend_t z = {0};
        if (UTIL_VEC_PUSH(&v->pends, z)) return -1;
        idx = (uint32_t)(v->pends.n - 1);
    }
    v->pends.v[idx] = (pend_t){seq, step, p->head, arrived, i_arr};
    p->head = idx;
    v->open++;
    return 0;
}

static uint32_t global(drv_t *v, const agent_t *a, int32_t peer)
{
    return v->d->jobs[a->job].base + (uint32_t)peer;
}

/* ==== Matching inside a phase (BARRIER) ====
 * Messages match inside a phase, and every agent's steps of the phase are
 * loaded before any message arrives (flows complete only in the engine's
 * run), so no table of pairs is needed: an agent numbers its own sends
 * and receives per peer in step order (the k-th SEND a -> b is the k-th
 * RECV at b from a), keeps its receives sorted by (source, number), and
 * an arriving message finds its receive there by binary search. A receive
 * the message reaches before it is posted is marked arrived. The pair
 * table (above) stays for ASYNC runs, whose agents load phases at their
 * own pace. */

static void sort_u64(uint64_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) { /* short lists: a ring's 8 peers */
        uint64_t x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Sort (peer << 32 | step) keys; then number each step within its peer's
 * run: seq of step k is its rank among the same peer's. */
static void number_steps(uint64_t *keys, uint32_t n, sstep_t *steps)
{
    if (n <= 32)
        sort_u64(keys, n);
    else
        qsort(keys, n, sizeof(*keys), cmp_u64);
    uint32_t seq = 0;
    for (uint32_t k = 0; k < n; k++) {
        seq = k > 0 && keys[k] >> 32 == keys[k - 1] >> 32 ? seq + 1 : 0;
        steps[(uint32_t)keys[k]].seq = seq;
    }
}

/* Number agent g's sends and receives of its loaded phase and index its
 * receives. Returns -1 on OOM. */
static int index_phase(drv_t *v, uint32_t g)
{
    agent_t *a = &v->agents[g];
    v->sends.n = v->recvs.n = 0;
    if (UTIL_VEC_RESERVE(&v->sends, a->n) || UTIL_VEC_RESERVE(&v->recvs, a->n)) return -1;
    uint32_t nrx = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        int op = a->steps[i].step.op;
        if (op == STRATA_STEP_RECV || op == STRATA_STEP_RECV_REDUCE) nrx++;
    }
    if (nrx > a->rx_cap) {
        rx_t *nr = util_realloc(a->rx, (size_t)nrx * sizeof(*nr));
        if (!nr) return -1;
        a->rx = nr;
        a->rx_cap = nrx;
    }
    for (uint32_t i = 0; i < a->n; i++) { /* room for all reserved above */
        const strata_step_t *st = &a->steps[i].step;
        uint64_t key = ((uint64_t)global(v, a, st->peer) << 32) | i;
        if (st->op == STRATA_STEP_SEND)
            v->sends.v[v->sends.n++] = key;
        else if (st->op == STRATA_STEP_RECV || st->op == STRATA_STEP_RECV_REDUCE)
            v->recvs.v[v->recvs.n++] = key;
    }
    number_steps(v->sends.v, (uint32_t)v->sends.n, a->steps);
    number_steps(v->recvs.v, nrx, a->steps);
    for (uint32_t k = 0; k < nrx; k++) {
        uint64_t key = v->recvs.v[k];
        uint32_t i = (uint32_t)key;
        a->rx[k] = (rx_t){(key >> 32 << 32) | a->steps[i].seq, i};
    }
    a->nrx = nrx;
    return 0;
}

/* Agent b's receive of message seq from agent src; UINT32_MAX if none. */
static uint32_t rx_find(const agent_t *b, uint32_t src, uint32_t seq)
{
    uint64_t key = ((uint64_t)src << 32) | seq;
    uint32_t lo = 0, hi = b->nrx;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->rx[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->nrx && b->rx[lo].key == key ? b->rx[lo].step : UINT32_MAX;
}

/* ==== Critical chains ====
 * Which class of link the time went to, along the chain of steps that
 * decided the finish: every step carries a vector of seconds per link
 * class (bottleneck of the flow's rate) plus one for path latency and
 * waits, summing to its completion time. The driver keeps only the
 * classes the run has (crit_n - 1 of them, latency at crit_lat), where
 * the engine and sim_drive_t index latency as [SIM_MAX_TIERS]: copying
 * and adding chains is per message, and most runs have a few classes. A send's chain is
 * its agent's chain at the phase start, the wait until it started, and its
 * flow's own breakdown (engine); a receive takes the chain of the message
 * when the message arrived last, else its agent's chain plus the wait; an
 * agent's next phase starts from the chain of its step that completed
 * last. The chain of the rank that finishes last splits the total. */

static uint32_t crit_n(const drv_t *v)
{
    return (uint32_t)v->d->st->nclasses + 1;
}
static uint32_t crit_lat(const drv_t *v)
{
    return (uint32_t)v->d->st->nclasses;
}
/* Step i's chain. */
static double *step_crit(const drv_t *v, const agent_t *a, uint32_t i)
{
    return a->crit + (size_t)i * crit_n(v);
}

static void chain_reset(agent_t *a)
{
    a->t_end = a->t0 = 0;
    a->i_t0 = a->i_end = 0;
    memset(a->crit0, 0, sizeof(a->crit0));
    memset(a->crit_last, 0, sizeof(a->crit_last));
}

/* The agent's chain carried to `now` by waiting. */
static void chain_wait(const drv_t *v, const agent_t *a, double now, double *out)
{
    memcpy(out, a->crit0, crit_n(v) * sizeof(double));
    if (now > a->t0) out[crit_lat(v)] += now - a->t0;
}

/* A send step's chain at its flow's completion: the engine's breakdown
 * by tier (a tier is a class, route.c) and latency. */
static void chain_send(drv_t *v, const agent_t *a, uint32_t i)
{
    const double *tb = sim_net_done_breakdown(v->net);
    double *c = step_crit(v, a, i);
    chain_wait(v, a, a->steps[i].t_start, c);
    uint32_t lat = crit_lat(v);
    for (uint32_t k = 0; k < lat; k++)
        c[k] += tb[k];
    c[lat] += tb[SIM_MAX_TIERS];
    a->steps[i].crit_set = true;
}

/* ==== Steps ==== */

static double step_bytes(drv_t *v, const agent_t *a, const strata_step_t *s)
{
    const strata_sched_params_t *p = strata_sched_params(v->d->jobs[a->job].s);
    return (double)s->count * (double)s->nblk * (double)p->elem_size;
}

static int finish_now(drv_t *v, uint32_t g, uint32_t i)
{
    done_ev_t e = {g, i};
    return UTIL_VEC_PUSH(&v->queue, e);
}

/* A rank's send of its INPUT to a switch agent of an NVLS schedule (innet,
 * nvlstree) is the switch reading it (multimem.ld_reduce): the switch's
 * read requests, one header-only packet per line, travel the other way at
 * once, (1 - η) of the bytes at the payload rate η of the pull's links
 * (strata_coll_link_efficiency, the kind of its routes' channels: NVLinks
 * between a GPU and its NVSwitches; sched's cost.c charges the same).
 * Returns those request bytes, 0 for any other send. */
static double pull_request_bytes(drv_t *v, const agent_t *a, const strata_step_t *s,
                                 const sim_route_t *r)
{
    const strata_sched_params_t *p = strata_sched_params(v->d->jobs[a->job].s);
    if ((p->algo != STRATA_ALGO_INNET && p->algo != STRATA_ALGO_NVLSTREE) || a->idx >= p->nranks ||
        (uint32_t)s->peer < p->nranks || s->src_buf != STRATA_BUF_INPUT || r->n == 0)
        return 0;
    strata_topo_link_t lk = strata_topo_link(v->d->st->topo, (int32_t)(r->hops[0].res / 2));
    return (1 - strata_coll_link_efficiency(lk.kind)) * step_bytes(v, a, s);
}

/* How long a flow of `bytes` along r takes with its links to itself: its
 * latency, then the bottleneck rate min(cap / w) of its hops (the route's
 * alone_bw), as the engine's contention-free pass gives it. */
static double alone_time(const sim_route_t *r, double bytes)
{
    return r->latency + (r->n > 0 && bytes > 0 ? bytes / r->alone_bw : 0);
}

/* A flow along route r: unchecked when the route's hops were checked. */
static int add_flow(drv_t *v, double now, const sim_route_t *r, double bytes, uint64_t tag)
{
    if (r->valid)
        return sim_flow_add_valid(v->net, now, r->latency, bytes, r->hops, r->n, r->min_tier, tag);
    return sim_flow_add(v->net, now, r->latency, bytes, r->hops, r->n, tag);
}

static strata_status_t start_send(drv_t *v, uint32_t g, uint32_t i)
{
    agent_t *a = &v->agents[g];
    const strata_step_t *s = &a->steps[i].step;
    const sim_job_t *job = &v->d->jobs[a->job];
    const sim_route_t *r, *back;
    sstep_t *ss = &a->steps[i];
    uint64_t flush = sim_routes_flushes(v->d->routes) + 1;
    strata_status_t rc;
    if (ss->route_flush == flush && ss->route_peer == s->peer) {
        r = ss->route;
    } else {
        /* a ring's channels keep to their rails (ring.c); other schedules
         * send through their own NIC (docs/simulator.md) */
        bool rails = strata_sched_channels(job->s) > 1;
        rc = sim_routes_get(v->d->routes, job->dev[a->idx], job->dev[s->peer], rails, &r, v->err);
        if (rc != STRATA_OK) return v->rc = rc;
        /* computing it may have emptied the cache: read the count again */
        ss->route = r;
        ss->route_peer = s->peer;
        ss->route_flush = sim_routes_flushes(v->d->routes) + 1;
    }
    uint64_t tag = ((uint64_t)g << TAG_STEP_BITS) | i;
    double req = pull_request_bytes(v, a, s, r), now = sim_net_now(v->net);
    double bytes = step_bytes(v, a, s);
    a->steps[i].flows = req > 0 ? 2 : 1;
    a->steps[i].i_done = a->steps[i].i_start + alone_time(r, bytes);
    if (add_flow(v, now, r, bytes, tag)) return oom(v);
    if (req <= 0) return STRATA_OK;
    rc = sim_routes_get(v->d->routes, job->dev[s->peer], job->dev[a->idx], false, &back, v->err);
    if (rc != STRATA_OK) return v->rc = rc;
    if (add_flow(v, now, back, req, tag | TAG_REQUESTS)) return oom(v);
    double t = a->steps[i].i_start + alone_time(back, req);
    if (t > a->steps[i].i_done) a->steps[i].i_done = t;
    return STRATA_OK;
}

static strata_status_t start_recv(drv_t *v, uint32_t g, uint32_t i)
{
    agent_t *a = &v->agents[g];
    sstep_t *ss = &a->steps[i];
    if (!v->async) { /* BARRIER: matched in place (index_phase) */
        if (!ss->arrived) {
            v->open++; /* a receive waiting */
            return STRATA_OK;
        }
        v->open--;
        ss->i_done = ss->i_arr > ss->i_start ? ss->i_arr : ss->i_start;
        return finish_now(v, g, i) ? oom(v) : STRATA_OK;
    }
    pair_t *p = step_pair(v, ss, global(v, a, ss->step.peer), g);
    if (!p) return oom(v);
    double arr = 0;
    if (pend_take(v, p, ss->seq, 1, &arr) != UINT32_MAX) {
        ss->i_done = arr > ss->i_start ? arr : ss->i_start;
        return finish_now(v, g, i) ? oom(v) : STRATA_OK;
    }
    return pend_put(v, p, ss->seq, i, 0, 0) ? oom(v) : STRATA_OK;
}

static strata_status_t start_step(drv_t *v, uint32_t g, uint32_t i)
{
    agent_t *a = &v->agents[g];
    sstep_t *ss = &a->steps[i];
    ss->state = ST_STARTED;
    ss->t_start = sim_net_now(v->net);
    /* contention-free: after its phase start and its first `after` steps */
    ss->i_start = ss->step.after ? a->steps[ss->step.after - 1].i_pm : a->i_t0;
    ss->i_done = ss->i_start;
    switch (ss->step.op) {
    case STRATA_STEP_SEND:
        return start_send(v, g, i);
    case STRATA_STEP_RECV:
    case STRATA_STEP_RECV_REDUCE:
        return start_recv(v, g, i);
    default:
        return finish_now(v, g, i) ? oom(v) : STRATA_OK;
    }
}

/* Start every waiting step of agent g whose `after` prefix is complete. */
static strata_status_t start_ready(drv_t *v, uint32_t g)
{
    agent_t *a = &v->agents[g];
    if (a->prefix < a->min_after) return STRATA_OK;
    uint32_t next_min = UINT32_MAX;
    for (uint32_t i = 0; i < a->n; i++) {
        sstep_t *ss = &a->steps[i];
        if (ss->state != ST_WAITING) continue;
        if (ss->step.after <= a->prefix) {
            if (start_step(v, g, i) != STRATA_OK) return v->rc;
        } else if (ss->step.after < next_min) {
            next_min = ss->step.after;
        }
    }
    a->min_after = next_min;
    return STRATA_OK;
}

/* ==== Phases of one agent ==== */

/* Load agent g's steps of phase p, numbering its messages. */
static strata_status_t load_phase(drv_t *v, uint32_t g, uint32_t p)
{
    agent_t *a = &v->agents[g];
    const sim_job_t *job = &v->d->jobs[a->job];
    uint32_t (*gen)(const strata_sched_t *, uint32_t, uint32_t, strata_step_t *, uint32_t) =
        v->rot > 1 ? strata_sched_phase_rep_steps : strata_sched_phase_steps;
    uint32_t n = gen(job->s, a->idx, p, v->scratch.v, (uint32_t)v->scratch.cap);
    if (n >= (1u << TAG_STEP_BITS)) return fail(v, STRATA_ERR_RANGE, "too many steps in a phase");
    if (n > v->scratch.cap) { /* one walk of the phase for all its steps */
        if (UTIL_VEC_RESERVE(&v->scratch, n)) return oom(v);
        gen(job->s, a->idx, p, v->scratch.v, n);
    }
    if (n > a->cap) {
        sstep_t *ns = util_realloc(a->steps, (size_t)n * sizeof(*ns));
        if (!ns) return oom(v);
        for (uint32_t i = a->cap; i < n; i++)
            ns[i].route_flush = 0;
        a->steps = ns;
        a->cap = n;
    }
    if (n > a->crit_cap) {
        double *nc = util_realloc(a->crit, (size_t)n * crit_n(v) * sizeof(double));
        if (!nc) return oom(v);
        a->crit = nc;
        a->crit_cap = n;
    }
    a->phase = p;
    a->n = n;
    a->ndone = a->prefix = a->min_after = 0;
    for (uint32_t i = 0; i < n; i++) {
        sstep_t *ss = &a->steps[i];
        ss->step = v->scratch.v[i];
        ss->state = ST_WAITING;
        ss->crit_set = false;
        ss->arrived = false;
        ss->seq = 0;
        int op = ss->step.op;
        if (op != STRATA_STEP_SEND && op != STRATA_STEP_RECV && op != STRATA_STEP_RECV_REDUCE)
            continue;
        if (ss->step.peer < 0 || (uint32_t)ss->step.peer >= job->nagents) {
            strata_error_set(v->err, STRATA_ERR_INTERNAL,
                             "schedule: agent %u phase %u step %u has peer %d out of range", a->idx,
                             p, i, (int)ss->step.peer);
            return v->rc = STRATA_ERR_INTERNAL;
        }
        if (!v->async) continue; /* numbered below */
        uint32_t peer = global(v, a, ss->step.peer);
        pair_t *pr = op == STRATA_STEP_SEND ? pair_get(v, g, peer) : pair_get(v, peer, g);
        if (!pr) return oom(v);
        ss->seq = op == STRATA_STEP_SEND ? pr->send_seq++ : pr->recv_seq++;
        ss->pslot = (uint32_t)(pr - v->pairs);
        ss->pgen = v->pairs_gen;
    }
    if (!v->async && index_phase(v, g)) return oom(v);
    return STRATA_OK;
}

static strata_status_t next_phase_async(drv_t *v, uint32_t g)
{
    agent_t *a = &v->agents[g];
    const sim_job_t *job = &v->d->jobs[a->job];
    if (g == 0 && v->d->progress) util_progress_update(v->d->progress, a->phase);
    for (uint32_t p = a->n || a->finished ? a->phase + 1 : a->phase; p < job->nphases; p++) {
        if (strata_sched_phase_nsteps(job->s, a->idx, p) == 0) continue;
        if (load_phase(v, g, p) != STRATA_OK) return v->rc;
        return start_ready(v, g);
    }
    a->finished = true;
    a->n = 0;
    a->t_end = sim_net_now(v->net);
    v->agents_done++;
    return STRATA_OK;
}

/* Agent g's step i completed now. */
static strata_status_t complete_step(drv_t *v, uint32_t g, uint32_t i)
{
    agent_t *a = &v->agents[g];
    sstep_t *ss = &a->steps[i];
    double now = sim_net_now(v->net);
    ss->state = ST_DONE;
    a->ndone++;
    if (!ss->crit_set) chain_wait(v, a, now, step_crit(v, a, i));
    if (now >= a->t_end || a->ndone == 1)
        memcpy(a->crit_last, step_crit(v, a, i), crit_n(v) * sizeof(double));
    if (v->d->trace && (ss->step.op <= STRATA_STEP_RECV_REDUCE)) {
        double off = v->d->trace->offset;
        sim_tev_t e = {(int32_t)g,  (int32_t)global(v, a, ss->step.peer), -1,
                       ss->step.op, step_bytes(v, a, &ss->step),          ss->t_start + off,
                       now + off};
        sim_trace_add(v->d->trace, &e);
    }
    if (ss->i_done > a->i_end) a->i_end = ss->i_done;
    while (a->prefix < a->n && a->steps[a->prefix].state == ST_DONE) {
        double pm = a->prefix ? a->steps[a->prefix - 1].i_pm : a->i_t0;
        double d = a->steps[a->prefix].i_done;
        a->steps[a->prefix++].i_pm = d > pm ? d : pm;
    }
    a->t_end = now;
    if (a->ndone < a->n) return start_ready(v, g);
    if (v->async) {
        memcpy(a->crit0, a->crit_last, sizeof(a->crit0));
        a->t0 = now;
        a->i_t0 = a->i_end;
        return next_phase_async(v, g);
    }
    v->agents_done++;
    return STRATA_OK;
}

static strata_status_t drain(drv_t *v)
{
    while (v->queue.n && v->rc == STRATA_OK) {
        done_ev_t e = v->queue.v[--v->queue.n];
        complete_step(v, e.g, e.i);
    }
    return v->rc;
}

/* Engine callback: the flow of agent g's SEND step i delivered its last byte. */
static void on_flow_done(void *ctx, uint64_t tag, double t)
{
    drv_t *v = ctx;
    if (v->rc != STRATA_OK) return;
    tag &= ~TAG_REQUESTS;
    uint32_t g = (uint32_t)(tag >> TAG_STEP_BITS),
             i = (uint32_t)(tag & ((1u << TAG_STEP_BITS) - 1));
    agent_t *a = &v->agents[g];
    sstep_t *ss = &a->steps[i];
    if (--ss->flows > 0) return; /* a pull ends with both its flows */
    uint32_t dst = global(v, a, ss->step.peer);
    chain_send(v, a, i);
    if (!v->async) { /* BARRIER: matched in place (index_phase) */
        agent_t *b = &v->agents[dst];
        uint32_t r = rx_find(b, g, ss->seq);
        if (finish_now(v, g, i)) {
            oom(v);
            return;
        }
        if (r != UINT32_MAX && b->steps[r].state == ST_STARTED) {
            v->open--; /* its receive was waiting */
            sstep_t *rs = &b->steps[r];
            /* the message decided it */
            memcpy(step_crit(v, b, r), step_crit(v, a, i), crit_n(v) * sizeof(double));
            rs->crit_set = true;
            if (ss->i_done > rs->i_done) rs->i_done = ss->i_done;
            if (finish_now(v, dst, r)) oom(v);
        } else {
            v->open++; /* arrived before its receive (or has none) */
            if (r != UINT32_MAX) {
                b->steps[r].arrived = true;
                b->steps[r].i_arr = ss->i_done;
            }
        }
        drain(v);
        return;
    }
    pair_t *p = step_pair(v, ss, g, dst);
    if (!p) {
        oom(v);
        return;
    }
    uint32_t waiter = pend_take(v, p, ss->seq, 0, NULL);
    if (finish_now(v, g, i)) {
        oom(v);
        return;
    }
    if (waiter != UINT32_MAX) {
        sstep_t *rs = &v->agents[dst].steps[waiter];
        /* the message decided it */
        memcpy(step_crit(v, &v->agents[dst], waiter), step_crit(v, a, i),
               crit_n(v) * sizeof(double));
        rs->crit_set = true;
        if (ss->i_done > rs->i_done) rs->i_done = ss->i_done;
        if (finish_now(v, dst, waiter)) oom(v);
    } else if (pend_put(v, p, ss->seq, 0, 1, ss->i_done)) {
        oom(v);
    }
    drain(v);
}

/* ==== Runs ==== */

static strata_status_t run_engine(drv_t *v)
{
    if (drain(v) != STRATA_OK) return v->rc;
    if (sim_net_run(v->net, on_flow_done, v)) {
        if (v->rc == STRATA_OK) oom(v);
        return v->rc;
    }
    return v->rc;
}

static strata_status_t check_all_done(drv_t *v, const char *where)
{
    if (v->agents_done == v->nagents && v->open == 0) return STRATA_OK;
    for (uint32_t g = 0; g < v->nagents; g++) {
        agent_t *a = &v->agents[g];
        for (uint32_t i = 0; i < a->n; i++)
            if (a->steps[i].state != ST_DONE) {
                strata_error_set(v->err, STRATA_ERR_PROTOCOL,
                                 "%s: agent %u step %u of phase %u never completed "
                                 "(unmatched message or circular wait)",
                                 where, a->idx, i, a->phase);
                return v->rc = STRATA_ERR_PROTOCOL;
            }
    }
    strata_error_set(v->err, STRATA_ERR_PROTOCOL, "%s: %llu messages left unmatched", where,
                     (unsigned long long)v->open);
    return v->rc = STRATA_ERR_PROTOCOL;
}

/* Each flow a SEND starts, as start_send starts them — its data along its
 * route, then a pull's read requests back along the reverse route — handed
 * to fn(v, route, bytes, ctx) in that order (each route is used before the
 * next is computed, which may empty the route cache), for the passes that
 * look at a phase's flows without running them: the certificate and the
 * walk. */
typedef strata_status_t (*send_flow_fn)(drv_t *v, const sim_route_t *r, double bytes, void *ctx);

static strata_status_t send_flows(drv_t *v, const agent_t *a, const strata_step_t *s,
                                  send_flow_fn fn, void *ctx)
{
    const sim_job_t *job = &v->d->jobs[a->job];
    bool rails = strata_sched_channels(job->s) > 1; /* as start_send */
    for (uint32_t i = 0; i < v->rot || i == 0; i++) { /* the send's images (rotation) */
        uint32_t src = i ? strata_sched_rot_agent(job->s, a->idx, i) : a->idx;
        uint32_t dst = i ? strata_sched_rot_agent(job->s, (uint32_t)s->peer, i) : (uint32_t)s->peer;
        const sim_route_t *r;
        strata_status_t rc =
            sim_routes_get(v->d->routes, job->dev[src], job->dev[dst], rails, &r, v->err);
        if (rc != STRATA_OK) return v->rc = rc;
        /* a switch agent is its own image, a rank's image a rank */
        double req = pull_request_bytes(v, a, s, r);
        if ((rc = fn(v, r, step_bytes(v, a, s), ctx)) != STRATA_OK) return rc;
        if (req <= 0) continue;
        rc = sim_routes_get(v->d->routes, job->dev[dst], job->dev[src], false, &r, v->err);
        if (rc != STRATA_OK) return v->rc = rc;
        if ((rc = fn(v, r, req, ctx)) != STRATA_OK) return rc;
    }
    return STRATA_OK;
}

/* The contention-free certificate of the phase whose steps are loaded
 * (cert.c): every flow its sends will start — a send's data, and a pull's
 * read requests — added with its route. *ok_p: the certificate holds, so
 * max-min sharing gives every flow its rate alone on its path and the
 * engine can run the phase in its ideal mode (rates fixed at each flow's
 * start, no component searched) to the same times. */
static strata_status_t cert_flow(drv_t *v, const sim_route_t *r, double bytes, void *ctx)
{
    (void)ctx;
    if (sim_cert_add(&v->cert, v->net, r, bytes)) return oom(v);
    if (v->gcert && (sim_gcert_add(v->gcert, v->net, r, bytes, v->group) ||
                     sim_cert_add(&v->gsolo, v->net, r, bytes)))
        return oom(v);
    return STRATA_OK;
}

static strata_status_t phase_certify(drv_t *v, bool *ok_p)
{
    sim_cert_reset(&v->cert);
    for (uint32_t g = 0; g < v->nagents && (!v->cert.broken || v->gcert); g++) {
        const agent_t *a = &v->agents[g];
        for (uint32_t i = 0; i < a->n; i++) {
            const strata_step_t *s = &a->steps[i].step;
            if (s->op == STRATA_STEP_SEND && send_flows(v, a, s, cert_flow, NULL) != STRATA_OK)
                return v->rc;
        }
    }
    *ok_p = !v->cert.broken;
    return STRATA_OK;
}

/* ==== Folded phases (fold.c) ====
 * A phase whose every send starts at the phase start — it waits only for
 * local steps, which take no time — is a set of flows all submitted at
 * time 0; its agents end with their last step, a send's at its flows'
 * end, a receive's at its message's arrival or at an earlier step's end,
 * so the phase ends when its last flow does, and each receive matches a
 * send of the phase (checked here by count; the event-by-event run checks
 * each). fold.c times such a set by parts, each shape once. Not with a
 * trace (it names every step), concurrent groups (whose bound between
 * groups reads the agents' ends) or the engine's ideal mode. */
static bool phase_foldable(const drv_t *v)
{
    if (v->async || v->gcert || v->d->trace || v->d->ideal) return false;
    uint64_t sends = 0, recvs = 0;
    for (uint32_t g = 0; g < v->nagents; g++) {
        const agent_t *a = &v->agents[g];
        uint32_t local = 0; /* the leading local steps */
        while (local < a->n && a->steps[local].step.op != STRATA_STEP_SEND &&
               a->steps[local].step.op != STRATA_STEP_RECV &&
               a->steps[local].step.op != STRATA_STEP_RECV_REDUCE)
            local++;
        for (uint32_t i = 0; i < a->n; i++) {
            const strata_step_t *s = &a->steps[i].step;
            if (s->op == STRATA_STEP_SEND) {
                if (s->after > local) return false;
                sends++;
            } else if (s->op == STRATA_STEP_RECV || s->op == STRATA_STEP_RECV_REDUCE) {
                recvs++;
            }
        }
    }
    return sends == recvs;
}

static strata_status_t fold_flow(drv_t *v, const sim_route_t *r, double bytes, void *ctx)
{
    (void)ctx;
    return sim_fold_add(&v->fold, v->net, r, bytes) ? oom(v) : STRATA_OK;
}

static strata_status_t run_folded(drv_t *v, double *dur_p, double *alone_p)
{
    sim_fold_reset(&v->fold);
    for (uint32_t g = 0; g < v->nagents; g++) {
        const agent_t *a = &v->agents[g];
        for (uint32_t i = 0; i < a->n; i++) {
            const strata_step_t *s = &a->steps[i].step;
            if (s->op == STRATA_STEP_SEND && send_flows(v, a, s, fold_flow, NULL) != STRATA_OK)
                return v->rc;
        }
    }
    if (!v->d->res_extra) {
        v->d->res_extra = util_calloc(sim_net_res_count(v->net) + 1, sizeof(double));
        if (!v->d->res_extra) return oom(v);
    }
    sim_fold_out_t o;
    if (sim_fold_run(&v->fold, v->net, v->weight, v->d->res_extra, &o)) return oom(v);
    v->folded = true;
    memcpy(v->fold_crit, o.crit, sizeof(v->fold_crit));
    v->d->phases_folded++;
    v->d->fold_flows += o.flows;
    v->d->fold_timed += o.timed;
    *dur_p = o.dur;
    *alone_p = o.alone;
    return STRATA_OK;
}

/* One phase of the (single) job from a rewound engine; *dur_p its length.
 * With certify, a phase whose contention-free certificate holds runs in
 * the engine's ideal mode (*cert_p set): the same times within a relative
 * 1e-12 (cert.c), since progressive filling's shares round differently
 * from cap / w. Every step is loaded before any starts; steps start in
 * the same order as loading and starting agent by agent would. */
static strata_status_t run_phase(drv_t *v, uint32_t p, bool certify, double *dur_p, double *alone_p,
                                 bool *cert_p)
{
    if (sim_net_rewind(v->net)) return fail(v, STRATA_ERR_INTERNAL, "engine busy at phase start");
    pairs_clear(v);
    v->agents_done = 0;
    for (uint32_t g = 0; g < v->nagents; g++) {
        chain_reset(&v->agents[g]);
        if (load_phase(v, g, p) != STRATA_OK) return v->rc;
    }
    bool ok = false;
    if (certify && phase_certify(v, &ok) != STRATA_OK) return v->rc;
    *cert_p = ok;
    v->folded = false;
    if (certify && !ok && v->d->fold && phase_foldable(v)) {
        v->d->phases_rot += v->rot > 1;
        return run_folded(v, dur_p, alone_p);
    }
    if (v->rot > 1) { /* not folded: every channel's steps, run as they are */
        uint32_t rot = v->rot;
        v->rot = 1;
        strata_status_t rc = run_phase(v, p, certify, dur_p, alone_p, cert_p);
        v->rot = rot;
        return rc;
    }
    sim_net_set_ideal(v->net, ok || v->d->ideal);
    for (uint32_t g = 0; g < v->nagents; g++) {
        if (v->agents[g].n == 0)
            v->agents_done++;
        else if (start_ready(v, g) != STRATA_OK)
            break;
        if (drain(v) != STRATA_OK) break;
    }
    if (v->rc == STRATA_OK) run_engine(v);
    sim_net_set_ideal(v->net, v->d->ideal);
    if (v->rc != STRATA_OK) return v->rc;
    char where[48];
    snprintf(where, sizeof(where), "phase %u", p);
    if (check_all_done(v, where) != STRATA_OK) return v->rc;
    double dur = 0, alone = 0;
    for (uint32_t g = 0; g < v->nagents; g++) {
        if (v->agents[g].t_end > dur) dur = v->agents[g].t_end;
        if (v->agents[g].i_end > alone) alone = v->agents[g].i_end;
    }
    for (uint32_t g = 0; g < v->nagents && v->lockstep; g++)
        v->lockstep =
            v->agents[g].n > 0 && v->agents[g].t_end == dur && v->agents[g].i_end == alone;
    *dur_p = dur;
    *alone_p = alone;
    return STRATA_OK;
}

/* Add the critical chain of the agent that finished last, weight times. */
static void add_crit(drv_t *v, double weight)
{
    if (v->folded) { /* the latest flow's life (fold.c) */
        for (uint32_t k = 0; k < crit_lat(v); k++)
            v->d->crit[k] += v->fold_crit[k] * weight;
        v->d->crit[SIM_MAX_TIERS] += v->fold_crit[SIM_MAX_TIERS] * weight;
        return;
    }
    const agent_t *last = NULL;
    for (uint32_t g = 0; g < v->nagents; g++)
        if (!last || v->agents[g].t_end > last->t_end) last = &v->agents[g];
    uint32_t lat = crit_lat(v);
    for (uint32_t k = 0; last && k < lat; k++)
        v->d->crit[k] += last->crit_last[k] * weight;
    if (last) v->d->crit[SIM_MAX_TIERS] += last->crit_last[lat] * weight;
}

/* Class → (duration, count, trace range) for phase reuse. */
typedef struct cls_ent {
    uint32_t cls;
    uint32_t count;
    bool timed;
    double dur, alone;     /* its duration, shared and contention-free */
    double t_first;        /* start of the phase that was timed */
    size_t ev_first, ev_n; /* its recorded trace items (absolute times) */
} cls_ent_t;

static cls_ent_t *cls_find(cls_ent_t *t, size_t n, uint32_t cls)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].cls == cls) return &t[i];
    return NULL;
}

/* Copy the trace items of a class's timed phase, shifted to start at t. */
static void replay_trace(sim_trace_t *tr, const cls_ent_t *c, double t)
{
    double shift = t - c->t_first;
    for (size_t k = 0; k < c->ev_n && !tr->truncated; k++) {
        sim_tev_t e = tr->ev.v[c->ev_first + k];
        e.t0 += shift;
        e.t1 += shift;
        sim_trace_add(tr, &e);
    }
}

/* ==== Pattern classes found by the simulator ====
 * A schedule whose generator names no phase classes (every phase its own
 * class: tree, nvlstree, innet, recursive doubling, all-to-all ...) can
 * still repeat itself: a pipeline's steady-state phases move other chunks
 * (other offsets) between the same ranks in the same order. A phase's
 * simulation reads, per agent and step, only what the step does to time
 * (a send, a receive — with or without a reduction, which is free — or a
 * local step), its peer, `after`, bytes and, for the pull of an NVLS
 * switch agent, its source buffer; never offsets. Each phase runs on a
 * rewound engine, so two phases whose agents have equal step lists in
 * those fields take bit-identical times: a ring's reduce-scatter and
 * allgather phases are one timing. Phases are hashed on those fields and a
 * hit is confirmed by comparing both phases step by step (no reliance on
 * the hash): exact. A trace names each step's op, so a traced run also
 * keeps receives with and without a reduction apart. */

typedef struct pkey {
    bool strict; /* ops compared as they are (a trace shows them) */
    bool pulls;  /* the source buffer decides a pull (innet, nvlstree) */
} pkey_t;

static uint8_t step_kind(const pkey_t *k, uint8_t op)
{
    if (k->strict) return op;
    if (op == STRATA_STEP_RECV_REDUCE) return STRATA_STEP_RECV;
    if (op == STRATA_STEP_REDUCE) return STRATA_STEP_COPY;
    return op;
}

static uint64_t step_key(const pkey_t *k, const strata_step_t *st)
{
    uint64_t buf = k->strict || k->pulls ? st->src_buf : 0;
    uint64_t h = util_hash_u64(((uint64_t)step_kind(k, st->op) << 56) ^ (buf << 48) ^
                               ((uint64_t)(uint32_t)st->peer << 16) ^ st->after);
    return util_hash_u64(h ^ (st->count * (uint64_t)st->nblk));
}

static bool step_same(const pkey_t *k, const strata_step_t *a, const strata_step_t *b)
{
    return step_kind(k, a->op) == step_kind(k, b->op) &&
           (!(k->strict || k->pulls) || a->src_buf == b->src_buf) && a->peer == b->peer &&
           a->after == b->after && a->count * (uint64_t)a->nblk == b->count * (uint64_t)b->nblk;
}

/* An agent's steps of phase p into *buf (grown as needed); how many, or -1. */
static int64_t phase_steps(const sim_job_t *job, bool reps, uint32_t agent, uint32_t p,
                           strata_step_t **buf, size_t *cap)
{
    uint32_t (*gen)(const strata_sched_t *, uint32_t, uint32_t, strata_step_t *, uint32_t) =
        reps ? strata_sched_phase_rep_steps : strata_sched_phase_steps;
    uint32_t n = gen(job->s, agent, p, *buf, (uint32_t)*cap);
    if (n > *cap) {
        strata_step_t *nb = util_realloc(*buf, (size_t)n * sizeof(*nb));
        if (!nb) return -1;
        *buf = nb;
        *cap = n;
        gen(job->s, agent, p, *buf, n);
    }
    return n;
}

static uint64_t phase_hash(drv_t *v, const pkey_t *k, const sim_job_t *job, uint32_t p, bool *oom_p)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t g = 0; g < job->nagents; g++) {
        int64_t n = phase_steps(job, v->rot > 1, g, p, &v->scratch.v, &v->scratch.cap);
        if (n < 0) {
            *oom_p = true;
            return 0;
        }
        h = util_hash_u64(h ^ (uint64_t)n);
        for (int64_t i = 0; i < n; i++)
            h = util_hash_u64(h ^ step_key(k, &v->scratch.v[i]));
    }
    return h;
}

static bool phases_same(drv_t *v, const pkey_t *k, const sim_job_t *job, uint32_t p, uint32_t q,
                        bool *oom_p)
{
    for (uint32_t g = 0; g < job->nagents; g++) {
        int64_t n = phase_steps(job, v->rot > 1, g, p, &v->scratch.v, &v->scratch.cap);
        int64_t m = phase_steps(job, v->rot > 1, g, q, &v->scratch2.v, &v->scratch2.cap);
        if (n < 0 || m < 0) {
            *oom_p = true;
            return false;
        }
        if (n != m) return false;
        for (int64_t i = 0; i < n; i++)
            if (!step_same(k, &v->scratch.v[i], &v->scratch2.v[i])) return false;
    }
    return true;
}

/* cls[p] for p < np: the first phase with the same pattern. Open hashing
 * on the phase hash; a hit counts only when the phases compare equal.
 * With cand (the generator's classes: cand[p] <= p, the first phase of
 * p's class) only the candidates cand[p] == p are hashed and compared;
 * the others follow their candidate's class. */
static strata_status_t pattern_classes(drv_t *v, const pkey_t *k, const sim_job_t *job, uint32_t np,
                                       const uint32_t *cand, uint32_t *cls)
{
    size_t cap = 16;
    while (cap < (size_t)np * 2)
        cap *= 2;
    uint64_t *keys = util_calloc(cap, sizeof(uint64_t));
    uint32_t *reps = util_calloc(cap, sizeof(uint32_t));
    bool nomem = !keys || !reps;
    for (uint32_t p = 0; p < np && !nomem; p++) {
        if (cand && cand[p] != p) {
            cls[p] = cls[cand[p]];
            continue;
        }
        uint64_t h = phase_hash(v, k, job, p, &nomem) | 1; /* 0 marks an empty slot */
        size_t i = util_hash_u64(h) & (cap - 1);
        cls[p] = p;
        while (!nomem && keys[i]) {
            if (keys[i] == h && phases_same(v, k, job, p, reps[i], &nomem)) {
                cls[p] = reps[i];
                break;
            }
            i = (i + 1) & (cap - 1);
        }
        if (cls[p] == p && !keys[i]) {
            keys[i] = h;
            reps[i] = p;
        }
    }
    util_free(keys);
    util_free(reps);
    return nomem ? oom(v) : STRATA_OK;
}

/* The generator's classes as first phases (cand[p]: the first phase of
 * p's class), when it names few enough of them (at most a quarter of the
 * phases: a ring's two); false, else — the simulator then looks for
 * repeats among all phases itself. */
static bool sched_classes(const sim_job_t *job, uint32_t np, uint32_t *cand)
{
    uint32_t seen[64], first[64], nseen = 0;
    for (uint32_t p = 0; p < np; p++) {
        uint32_t c = strata_sched_phase_class(job->s, p), k = 0;
        while (k < nseen && seen[k] != c)
            k++;
        if (k == nseen) {
            if (nseen == 64 || (nseen + 1) * 4 > np) return false;
            seen[nseen] = c;
            first[nseen++] = p;
        }
        cand[p] = first[k];
    }
    return true;
}

/* ==== ASYNC without sharing, walked ====
 * A group that is not in lockstep (ranks whose paths differ in latency)
 * runs ahead of itself in ASYNC mode, so its BARRIER time is not its
 * time. When the contention-free certificate holds over every flow of all
 * its simulated phases together (v->gsolo: an agent is in one phase at a
 * time and every phase moves the messages of its class's simulated one,
 * so no set of flows active at once exceeds it), every flow runs at its
 * rate alone on its path throughout the ASYNC run (cert.c), and the run
 * is the contention-free one: a send ends at its start + its path latency
 * + bytes / min(cap / w) (a pull: the later of its two flows), a receive
 * at the later of its start and its message's end, a local step at its
 * start; a step starts at its agent's phase start, or when its first
 * `after` steps are done; an agent's phase starts when its previous phase
 * with steps is done. walk_class prepares a class's simulated phase once
 * (durations from the routes, message matching, an order that respects
 * every dependency); walk_phase then times each phase of the run from the
 * agents' own start times in O(steps). The critical chain is carried as
 * the engine would attribute it (a flow's life to its bottleneck hop's
 * class, the first such hop, as the engine's ideal mode; its latency and
 * waits to the last column). */

typedef struct wstep {
    uint32_t agent, after;
    uint32_t match; /* a receive: its message's send (flat index) */
    uint8_t kind;   /* 0 local, 1 send, 2 receive */
    uint8_t tier;   /* a send: the class that bounds its flow */
    double lat, xfer;
} wstep_t;

typedef struct wclass {
    uint32_t rep;  /* the simulated phase */
    uint32_t *off; /* agent a's steps: st[off[a] .. off[a + 1]) */
    wstep_t *st;
    uint32_t *order;
    uint32_t m;
} wclass_t;

typedef struct walk {
    UTIL_VEC(wclass_t) cls;
    double *done, *crit;        /* per step of the phase walked: end, chain (NCRIT each) */
    double *start, *t0, *crit0; /* per agent: phase start, its chain */
    double *pm;                 /* per agent: max of S and the ends of its done prefix */
    uint32_t *prefix;
    uint32_t mcap;
} walk_t;

/* The longer of a send's flows (data; a pull's read requests), alone. */
static strata_status_t walk_flow(drv_t *v, const sim_route_t *r, double bytes, void *ctx)
{
    wstep_t *w = ctx;
    double best = INFINITY;
    unsigned tier = 0;
    for (uint32_t h = 0; h < r->n; h++) {
        double x = sim_net_res_cap(v->net, r->hops[h].res) / r->hops[h].w;
        if (x < best) {
            best = x;
            tier = sim_net_res_tier(v->net, r->hops[h].res);
        }
    }
    double xfer = r->n > 0 && bytes > 0 ? bytes / best : 0;
    if (w->kind != 1 || r->latency + xfer > w->lat + w->xfer) {
        w->kind = 1;
        w->lat = r->latency;
        w->xfer = xfer;
        w->tier = (uint8_t)tier;
    }
    return STRATA_OK;
}

/* Steps, durations and message matching of phase `rep` (loaded). */
static strata_status_t walk_load(drv_t *v, wclass_t *c)
{
    uint32_t m = 0;
    for (uint32_t g = 0; g < v->nagents; g++)
        c->off[g] = m, m += v->agents[g].n;
    c->off[v->nagents] = m;
    c->m = m;
    c->st = util_calloc(m ? m : 1, sizeof(wstep_t));
    c->order = util_calloc(m ? m : 1, sizeof(uint32_t));
    if (!c->st || !c->order) return oom(v);
    for (uint32_t g = 0; g < v->nagents; g++) {
        agent_t *a = &v->agents[g];
        for (uint32_t i = 0; i < a->n; i++) {
            const strata_step_t *s = &a->steps[i].step;
            wstep_t *w = &c->st[c->off[g] + i];
            *w = (wstep_t){g, s->after, UINT32_MAX, 0, 0, 0, 0};
            if (s->op == STRATA_STEP_RECV || s->op == STRATA_STEP_RECV_REDUCE) w->kind = 2;
            if (s->op == STRATA_STEP_SEND && send_flows(v, a, s, walk_flow, w) != STRATA_OK)
                return v->rc;
        }
    }
    /* match: the k-th send a -> b with the k-th receive at b from a (the
     * sequence numbers load_phase gave, through the pair table) */
    for (uint32_t g = 0; g < v->nagents; g++)
        for (uint32_t i = 0; i < v->agents[g].n; i++) {
            sstep_t *ss = &v->agents[g].steps[i];
            if (ss->step.op != STRATA_STEP_SEND) continue;
            pair_t *p = step_pair(v, ss, g, (uint32_t)ss->step.peer);
            if (!p || pend_put(v, p, ss->seq, c->off[g] + i, 1, 0)) return oom(v);
        }
    for (uint32_t g = 0; g < v->nagents; g++)
        for (uint32_t i = 0; i < v->agents[g].n; i++) {
            sstep_t *ss = &v->agents[g].steps[i];
            if (c->st[c->off[g] + i].kind != 2) continue;
            pair_t *p = step_pair(v, ss, (uint32_t)ss->step.peer, g);
            uint32_t *link = p ? &p->head : NULL;
            while (link && *link != UINT32_MAX && v->pends.v[*link].seq != ss->seq)
                link = &v->pends.v[*link].next;
            if (!link || *link == UINT32_MAX)
                return fail(v, STRATA_ERR_PROTOCOL, "a receive has no matching send");
            c->st[c->off[g] + i].match = v->pends.v[*link].step;
        }
    return STRATA_OK;
}

/* An order of the class's steps in which every step follows what it
 * waits for: the first `after` steps of its agent, and a receive its
 * send. Passes over the agents until all are placed. */
static strata_status_t walk_order(drv_t *v, wclass_t *c, uint32_t *prefix, uint8_t *placed)
{
    uint32_t n = 0;
    memset(prefix, 0, v->nagents * sizeof(uint32_t));
    memset(placed, 0, c->m);
    while (n < c->m) {
        uint32_t before = n;
        for (uint32_t g = 0; g < v->nagents; g++) {
            uint32_t o = c->off[g], k = c->off[g + 1] - o;
            for (uint32_t i = 0; i < k; i++) {
                const wstep_t *w = &c->st[o + i];
                if (placed[o + i] || w->after > prefix[g]) continue;
                if (w->kind == 2 && !placed[w->match]) continue;
                placed[o + i] = 1;
                c->order[n++] = o + i;
            }
            while (prefix[g] < k && placed[o + prefix[g]])
                prefix[g]++;
        }
        if (n == before) return fail(v, STRATA_ERR_PROTOCOL, "circular wait in a phase");
    }
    return STRATA_OK;
}

static wclass_t *walk_class(drv_t *v, walk_t *wk, uint32_t rep)
{
    for (size_t i = 0; i < wk->cls.n; i++)
        if (wk->cls.v[i].rep == rep) return &wk->cls.v[i];
    wclass_t c = {rep, util_calloc((size_t)v->nagents + 1, sizeof(uint32_t)), NULL, NULL, 0};
    if (!c.off || UTIL_VEC_PUSH(&wk->cls, c)) {
        util_free(c.off);
        oom(v);
        return NULL;
    }
    wclass_t *cp = &wk->cls.v[wk->cls.n - 1];
    pairs_clear(v);
    for (uint32_t g = 0; g < v->nagents; g++)
        if (load_phase(v, g, rep) != STRATA_OK) return NULL;
    if (walk_load(v, cp) != STRATA_OK) return NULL;
    uint8_t *placed = util_malloc(cp->m ? cp->m : 1);
    if (!placed) {
        oom(v);
        return NULL;
    }
    strata_status_t rc = walk_order(v, cp, wk->prefix, placed);
    util_free(placed);
    if (cp->m > wk->mcap) {
        util_free(wk->done);
        util_free(wk->crit);
        wk->done = util_malloc((size_t)cp->m * sizeof(double));
        wk->crit = util_malloc((size_t)cp->m * NCRIT * sizeof(double));
        wk->mcap = cp->m;
        if (!wk->done || !wk->crit) rc = oom(v);
    }
    return rc == STRATA_OK ? cp : NULL;
}

/* Time one phase of class c from the agents' start times. */
static void walk_phase(drv_t *v, walk_t *wk, const wclass_t *c)
{
    for (uint32_t g = 0; g < v->nagents; g++) {
        wk->prefix[g] = 0;
        wk->pm[g] = wk->start[g];
    }
    for (uint32_t k = 0; k < c->m; k++) {
        uint32_t x = c->order[k];
        const wstep_t *w = &c->st[x];
        uint32_t g = w->agent, o = c->off[g];
        while (wk->prefix[g] < w->after) { /* all placed before x */
            double d = wk->done[o + wk->prefix[g]++];
            if (d > wk->pm[g]) wk->pm[g] = d;
        }
        double t = w->after ? wk->pm[g] : wk->start[g], *cr = &wk->crit[(size_t)x * NCRIT];
        memcpy(cr, &wk->crit0[(size_t)g * NCRIT], NCRIT * sizeof(double));
        cr[SIM_MAX_TIERS] += t - wk->t0[g];
        if (w->kind == 1) {
            cr[SIM_MAX_TIERS] += w->lat;
            cr[w->tier] += w->xfer;
            t += w->lat + w->xfer;
        } else if (w->kind == 2 && wk->done[w->match] > t) {
            t = wk->done[w->match];
            memcpy(cr, &wk->crit[(size_t)w->match * NCRIT], NCRIT * sizeof(double));
        }
        wk->done[x] = t;
    }
    for (uint32_t g = 0; g < v->nagents; g++) {
        uint32_t o = c->off[g], n = c->off[g + 1] - o, last = UINT32_MAX;
        if (n == 0) continue;
        double end = wk->start[g];
        for (uint32_t i = 0; i < n; i++)
            if (wk->done[o + i] >= end) end = wk->done[o + i], last = o + i;
        if (last != UINT32_MAX)
            memcpy(&wk->crit0[(size_t)g * NCRIT], &wk->crit[(size_t)last * NCRIT],
                   NCRIT * sizeof(double));
        wk->start[g] = wk->t0[g] = end;
    }
}

static void walk_free(walk_t *wk)
{
    for (size_t i = 0; i < wk->cls.n; i++) {
        util_free(wk->cls.v[i].off);
        util_free(wk->cls.v[i].st);
        util_free(wk->cls.v[i].order);
    }
    UTIL_VEC_FREE(&wk->cls);
    util_free(wk->done);
    util_free(wk->crit);
    util_free(wk->start);
    util_free(wk->t0);
    util_free(wk->crit0);
    util_free(wk->pm);
    util_free(wk->prefix);
}

/* The group's ASYNC time, walked; phases p < np of class pcls[p]. Sets
 * v->d->time, time_alone and crit. */
static strata_status_t walk_async(drv_t *v, uint32_t np, const uint32_t *pcls)
{
    walk_t wk = {0};
    uint32_t n = v->nagents ? v->nagents : 1;
    wk.start = util_calloc(n, sizeof(double));
    wk.t0 = util_calloc(n, sizeof(double));
    wk.pm = util_calloc(n, sizeof(double));
    wk.crit0 = util_calloc((size_t)n * NCRIT, sizeof(double));
    wk.prefix = util_calloc(n, sizeof(uint32_t));
    if (!wk.start || !wk.t0 || !wk.pm || !wk.crit0 || !wk.prefix) oom(v);
    for (uint32_t p = 0; p < np && v->rc == STRATA_OK; p++) {
        const wclass_t *c = walk_class(v, &wk, pcls ? pcls[p] : p);
        if (c) walk_phase(v, &wk, c);
    }
    if (v->rc == STRATA_OK) {
        uint32_t last = 0;
        for (uint32_t g = 1; g < v->nagents; g++)
            if (wk.start[g] > wk.start[last]) last = g;
        v->d->time = v->d->time_alone = v->nagents ? wk.start[last] : 0;
        memcpy(v->d->crit, &wk.crit0[(size_t)last * NCRIT], sizeof(v->d->crit));
    }
    walk_free(&wk);
    pairs_clear(v); /* the matching entries walk_load put */
    v->open = 0;
    return v->rc;
}

static strata_status_t run_barrier(drv_t *v)
{
    const sim_job_t *job = &v->d->jobs[0];
    uint32_t np = job->nphases;
    if (v->d->phase_limit && v->d->phase_limit < np) np = v->d->phase_limit;
    uint32_t *pcls = NULL, *cand = NULL;
    /* channels generated by rotation: only with reuse and the fold (a
     * phase it cannot fold is generated whole), not with a trace (which
     * names every step) nor concurrent groups */
    v->rot = 1;
    if (v->d->reuse && v->d->fold && v->d->rotate && !v->d->trace && !v->gcert && !v->async)
        v->rot = strata_sched_rot_order(job->s);
    v->d->rot_order = v->rot;
    if (v->d->reuse && np > 1) {
        const strata_sched_params_t *sp = strata_sched_params(job->s);
        pkey_t k = {v->d->trace != NULL,
                    sp->algo == STRATA_ALGO_INNET || sp->algo == STRATA_ALGO_NVLSTREE};
        pcls = util_malloc((size_t)np * sizeof(uint32_t));
        cand = util_malloc((size_t)np * sizeof(uint32_t));
        strata_status_t rc = pcls && cand ? STRATA_OK : oom(v);
        /* the XOR all-to-all's classes from the cluster's symmetry (xorsym.c;
         * not with a trace, whose replay would name the representative's ranks) */
        bool sym = false;
        /* nor for concurrent groups: their bound between groups needs each
         * phase to move the same messages as its class's (run_groups) */
        if (rc == STRATA_OK && !v->d->trace && !v->gcert)
            rc = sim_xor_classes(job, v->d->st->topo, v->d->routes, np, pcls, &sym, v->err);
        if (rc == STRATA_OK && !sym)
            rc = pattern_classes(v, &k, job, np, sched_classes(job, np, cand) ? cand : NULL, pcls);
        util_free(cand);
        if (rc != STRATA_OK) {
            util_free(pcls);
            return v->rc = rc;
        }
    }
#define PHASE_CLASS(p) (pcls ? pcls[p] : strata_sched_phase_class(job->s, (p)))
    UTIL_VEC(cls_ent_t) cls = {0};
    for (uint32_t p = 0; p < np; p++) {
        uint32_t c = PHASE_CLASS(p);
        cls_ent_t *e = cls_find(cls.v, cls.n, c);
        if (e)
            e->count++;
        else if (UTIL_VEC_PUSH(&cls, ((cls_ent_t){c, 1, false, 0, 0, 0, 0, 0})))
            goto nomem;
    }
    sim_trace_t *tr = v->d->trace;
    double total = 0, total_alone = 0;
    for (uint32_t p = 0; p < np && v->rc == STRATA_OK; p++) {
        cls_ent_t *e = cls_find(cls.v, cls.n, PHASE_CLASS(p));
        v->d->phases++;
        if (v->d->progress) util_progress_update(v->d->progress, p);
        if (v->d->reuse && e->timed) {
            if (tr) replay_trace(tr, e, total);
            total += e->dur;
            total_alone += e->alone;
            continue;
        }
        v->weight = v->d->reuse ? e->count : 1;
        sim_net_set_weight(v->net, v->weight);
        size_t first = tr ? tr->ev.n : 0;
        if (tr) tr->offset = total;
        double dur = 0, alone = 0;
        bool cert = false;
        if (run_phase(v, p, v->d->reuse, &dur, &alone, &cert) != STRATA_OK) break;
        v->d->phases_simulated++;
        v->d->phases_certified += cert;
        add_crit(v, v->d->reuse ? e->count : 1);
        if (!e->timed) {
            e->timed = true;
            e->dur = dur;
            e->alone = alone;
            e->t_first = total;
            e->ev_first = first;
            e->ev_n = tr ? tr->ev.n - first : 0;
        }
        total += dur;
        total_alone += alone;
    }
#undef PHASE_CLASS
    v->rot = 1;
    UTIL_VEC_FREE(&cls);
    sim_net_set_weight(v->net, 1);
    v->d->time = total;
    v->d->time_alone = total_alone;
    if (v->d->job_end) v->d->job_end[0] = total;
    v->d->have_crit = true;
    /* a concurrent group out of lockstep: its ASYNC time, walked, when no
     * flow of it ever shares (run_groups) */
    if (v->rc == STRATA_OK && v->gcert && !v->lockstep && !v->gsolo.broken &&
        walk_async(v, np, pcls) == STRATA_OK)
        v->lockstep = true;
    util_free(pcls);
    return v->rc;
nomem:
    UTIL_VEC_FREE(&cls);
    util_free(pcls);
    return oom(v);
}

static void drv_free(drv_t *v)
{
    uint32_t n = v->agents_cap > v->nagents ? v->agents_cap : v->nagents;
    for (uint32_t g = 0; v->agents && g < n; g++) {
        util_free(v->agents[g].steps);
        util_free(v->agents[g].crit);
        util_free(v->agents[g].rx);
    }
    util_free(v->agents);
    util_free(v->pairs);
    UTIL_VEC_FREE(&v->pends);
    UTIL_VEC_FREE(&v->queue);
    UTIL_VEC_FREE(&v->scratch);
    UTIL_VEC_FREE(&v->scratch2);
    UTIL_VEC_FREE(&v->sends);
    UTIL_VEC_FREE(&v->recvs);
    sim_cert_free(&v->cert);
    sim_cert_free(&v->gsolo);
    sim_fold_free(&v->fold);
}

static strata_status_t run_async(drv_t *v)
{
    if (sim_net_rewind(v->net)) return fail(v, STRATA_ERR_INTERNAL, "engine busy");
    if (v->d->trace) v->d->trace->offset = 0;
    v->agents_done = 0;
    for (uint32_t g = 0; g < v->nagents; g++) {
        if (next_phase_async(v, g) != STRATA_OK) return v->rc;
        if (drain(v) != STRATA_OK) return v->rc;
    }
    if (run_engine(v) != STRATA_OK) return v->rc;
    if (check_all_done(v, "async run") != STRATA_OK) return v->rc;
    double end = 0;
    for (uint32_t g = 0; g < v->nagents; g++) {
        agent_t *a = &v->agents[g];
        if (a->t_end > end) end = a->t_end;
        if (a->i_end > v->d->time_alone) v->d->time_alone = a->i_end;
        if (v->d->job_end && a->t_end > v->d->job_end[a->job]) v->d->job_end[a->job] = a->t_end;
    }
    v->d->time = end;
    add_crit(v, 1);
    v->d->have_crit = true;
    for (uint32_t j = 0; j < v->d->njobs; j++)
        v->d->phases += v->d->jobs[j].nphases;
    v->d->phases_simulated = v->d->phases;
    return STRATA_OK;
}

/* ==== Concurrent groups ====
 * Several collectives at once (strata_sim_add more than once: tensor- and
 * data-parallel groups) run ASYNC. When they are proven not to interact
 * and each runs in lockstep, each is timed alone in BARRIER mode with its
 * phase reuse (the contention-free certificate included), exactly as the
 * ASYNC run of all of them would time it:
 *  - groups: the certificate between groups (cert.c) over the flows of
 *    every phase each group simulates — each of its phases moves the same
 *    messages as one of those, and an agent is in one phase at a time, so
 *    their sum bounds what a group can have active at once;
 *  - lockstep: in every phase every agent has steps and all end at the
 *    same instant, shared and contention-free (run_phase); starting
 *    together, no agent then runs ahead, so the ASYNC run of the group
 *    alone is its BARRIER run, phase for phase.
 * Times agree with the ASYNC run to rounding (a phase's events sit at
 * local times rather than at the sum of earlier phases; sim_test checks
 * 1e-12). When either proof fails, everything runs ASYNC, event by event.
 * Not with a trace or --no-reuse. */

/* Time job j alone in BARRIER mode on w (reused from job to job). */
static strata_status_t run_group(drv_t *v, drv_t *w, sim_drive_t *sub, sim_job_t *job, uint32_t j)
{
    *job = v->d->jobs[j];
    job->base = 0;
    *sub = *v->d;
    sub->jobs = job;
    sub->njobs = 1;
    sub->job_end = NULL;
    sub->progress = NULL;
    sub->time = sub->time_alone = 0;
    memset(sub->crit, 0, sizeof(sub->crit));
    w->d = sub;
    w->group = j;
    w->nagents = job->nagents;
    w->rc = STRATA_OK;
    sim_cert_reset(&w->gsolo);
    if (job->nagents > w->agents_cap) { /* agents kept from job to job */
        agent_t *na = util_realloc(w->agents, (size_t)job->nagents * sizeof(*na));
        if (!na) return oom(v);
        memset(na + w->agents_cap, 0, (job->nagents - w->agents_cap) * sizeof(*na));
        w->agents = na;
        w->agents_cap = job->nagents;
    }
    for (uint32_t a = 0; a < job->nagents; a++) {
        w->agents[a].job = 0;
        w->agents[a].idx = a;
    }
    strata_status_t rc = run_barrier(w);
    return rc != STRATA_OK ? (v->rc = rc) : STRATA_OK;
}

/* *done_p: the groups were proven independent and each timed alone. */
static strata_status_t run_groups(drv_t *v, bool *done_p)
{
    sim_drive_t *d = v->d, sub;
    sim_job_t job;
    sim_gcert_t gc = {0};
    drv_t w = {
        .net = v->net, .err = v->err, .pend_free = UINT32_MAX, .gcert = &gc, .lockstep = true};
    double last = -1, crit[NCRIT] = {0}, time = 0, alone = 0;
    uint64_t ph = 0, sim = 0, cert = 0;
    *done_p = false;
    for (uint32_t j = 0; j < d->njobs && w.lockstep; j++) {
        if (run_group(v, &w, &sub, &job, j) != STRATA_OK) break;
        if (sub.time > last) {
            last = sub.time;
            memcpy(crit, sub.crit, sizeof(crit));
        }
        if (d->job_end) d->job_end[j] = sub.time;
        if (sub.time > time) time = sub.time;
        if (sub.time_alone > alone) alone = sub.time_alone;
        ph += sub.phases;
        sim += sub.phases_simulated;
        cert += sub.phases_certified;
    }
    bool ok = v->rc == STRATA_OK && w.lockstep && sim_gcert_holds(&gc, v->net);
    drv_free(&w);
    sim_gcert_free(&gc);
    if (v->rc != STRATA_OK) return v->rc;
    if (!ok) { /* start again from nothing, event by event */
        if (sim_net_reset(v->net)) return fail(v, STRATA_ERR_INTERNAL, "engine not idle");
        if (d->job_end) memset(d->job_end, 0, d->njobs * sizeof(double));
        return STRATA_OK;
    }
    d->time = time;
    d->time_alone = alone;
    memcpy(d->crit, crit, sizeof(crit));
    d->have_crit = true;
    d->phases = ph;
    d->phases_simulated = sim;
    d->phases_certified = cert;
    d->groups_independent = true;
    *done_p = true;
    return STRATA_OK;
}

strata_status_t sim_drive_run(sim_drive_t *d, strata_error_t *err)
{
    drv_t v = {.d = d, .net = d->st->net, .err = err, .rc = STRATA_OK, .pend_free = UINT32_MAX};
    d->time = 0;
    d->phases = d->phases_simulated = d->phases_certified = 0;
    d->phases_folded = d->fold_flows = d->fold_timed = 0;
    d->rot_order = 1;
    d->phases_rot = 0;
    d->groups_independent = false;
    for (uint32_t j = 0; j < d->njobs; j++)
        v.nagents += d->jobs[j].nagents;
    v.agents = util_calloc(v.nagents ? v.nagents : 1, sizeof(agent_t));
    if (!v.agents) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    for (uint32_t j = 0; j < d->njobs; j++)
        for (uint32_t a = 0; a < d->jobs[j].nagents; a++) {
            agent_t *ag = &v.agents[d->jobs[j].base + a];
            ag->job = j;
            ag->idx = a;
        }
    v.async = d->mode == STRATA_SIM_ASYNC || d->njobs > 1;
    bool grouped = false;
    strata_status_t rc = STRATA_OK;
    if (d->njobs > 1 && d->reuse && !d->trace) rc = run_groups(&v, &grouped);
    if (rc == STRATA_OK && !grouped) rc = v.async ? run_async(&v) : run_barrier(&v);
    drv_free(&v);
    return rc;
}
