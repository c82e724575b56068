/*
 * core.c — the schedule object: names, parameter checks, creation, the lazy
 * step queries and materialisation. Algorithms live one per file and are
 * reached through the table below.
 *
 * Cases every algorithm shares are handled here so generators stay about
 * their algorithm: count == 0 (empty schedule, except BARRIER) and P == 1
 * (one local COPY of the input to the output, none for BARRIER).
 */
#include "sched.h"

#include <string.h>

static const char *const coll_names[] = {
#define X(name, text) text,
    STRATA_COLL_MAP(X)
#undef X
};
static const char *const algo_names[] = {
#define X(name, text) text,
    STRATA_ALGO_MAP(X)
#undef X
};

static const sched_algo_t *const algos[STRATA_ALGO_COUNT] = {
    &sched_ring,         &sched_tree,  &sched_binomial, &sched_recdbl,
    &sched_rabenseifner, &sched_bruck, &sched_pairwise, &sched_hier,
    &sched_torus2d,      &sched_innet, &sched_nvlstree, &sched_direct,
};

const char *strata_coll_name(strata_coll_t coll)
{
    return (unsigned)coll < STRATA_COLL_COUNT ? coll_names[coll] : "?";
}

const char *strata_algo_name(strata_algo_t algo)
{
    return (unsigned)algo < STRATA_ALGO_COUNT ? algo_names[algo] : "?";
}

/* Compare ignoring case and the separators '_' and '-'. */
static bool name_eq(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-')
            a++;
        while (*b == '_' || *b == '-')
            b++;
        char ca = (char)(*a >= 'A' && *a <= 'Z' ? *a - 'A' + 'a' : *a);
        char cb = (char)(*b >= 'A' && *b <= 'Z' ? *b - 'A' + 'a' : *b);
        if (ca != cb) return false;
        if (!ca) return true;
        a++, b++;
    }
}

int strata_coll_parse(const char *s, strata_coll_t *coll_p)
{
    for (int i = 0; s && i < STRATA_COLL_COUNT; i++)
        if (name_eq(s, coll_names[i])) {
            *coll_p = (strata_coll_t)i;
            return 0;
        }
    return -1;
}

int strata_algo_parse(const char *s, strata_algo_t *algo_p)
{
    for (int i = 0; s && i < STRATA_ALGO_COUNT; i++)
        if (name_eq(s, algo_names[i])) {
            *algo_p = (strata_algo_t)i;
            return 0;
        }
    if (s && (name_eq(s, "nvls") || name_eq(s, "sharp"))) {
        *algo_p = STRATA_ALGO_INNET;
        return 0;
    }
    if (s && name_eq(s, "shm")) { /* the runtime's name for its engine */
        *algo_p = STRATA_ALGO_DIRECT;
        return 0;
    }
    if (s && (name_eq(s, "dbtree") || name_eq(s, "doubletree"))) {
        *algo_p = STRATA_ALGO_TREE;
        return 0;
    }
    return -1;
}

/* ==== Creation ==== */

/* Rank buffer sizes of each collective (header comment of sched.h). */
static void coll_sizes(strata_sched_t *s)
{
    uint64_t P = s->p.nranks, n = s->p.count;
    uint64_t in = n, out = n;
    switch (s->p.coll) {
    case STRATA_COLL_REDUCE_SCATTER:
        in = P * n;
        break;
    case STRATA_COLL_ALLGATHER:
        out = P * n;
        break;
    case STRATA_COLL_ALLTOALL:
        in = out = P * n;
        break;
    default:
        break;
    }
    s->buf[STRATA_BUF_INPUT] = in;
    s->buf[STRATA_BUF_OUTPUT] = out;
    s->buf[STRATA_BUF_SCRATCH] = 0;
}

bool sched_algo_supports(strata_coll_t coll, strata_algo_t algo)
{
    return (unsigned)coll < STRATA_COLL_COUNT && (unsigned)algo < STRATA_ALGO_COUNT &&
           (algos[algo]->colls & (1u << coll));
}

strata_status_t strata_sched_check(const strata_sched_params_t *p, strata_error_t *err)
{
    strata_sched_t *s = NULL;
    strata_status_t st = strata_sched_create(p, &s, err);
    strata_sched_destroy(s);
    return st;
}

static strata_status_t check_params(const strata_sched_params_t *p, strata_error_t *err)
{
    if (!p || (unsigned)p->coll >= STRATA_COLL_COUNT || (unsigned)p->algo >= STRATA_ALGO_COUNT)
        return strata_error_set(err, STRATA_ERR_INVALID, "unknown collective or algorithm");
    if (p->nranks < 1)
        return strata_error_set(err, STRATA_ERR_INVALID, "a schedule needs at least one rank");
    if (p->elem_size < 1)
        return strata_error_set(err, STRATA_ERR_INVALID, "element size must be at least 1 byte");
    if (p->root >= p->nranks)
        return strata_error_set(err, STRATA_ERR_INVALID, "root %u is not a rank of %u", p->root,
                                p->nranks);
    if (p->coll == STRATA_COLL_BARRIER && p->count != 0)
        return strata_error_set(err, STRATA_ERR_INVALID, "a barrier carries no data (count 0)");
    if (p->count > (UINT64_C(1) << 50) / p->nranks)
        return strata_error_set(err, STRATA_ERR_RANGE, "count %llu too large for %u ranks",
                                (unsigned long long)p->count, p->nranks);
    if (!(algos[p->algo]->colls & (1u << p->coll)))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "algorithm %s does not implement %s",
                                strata_algo_name(p->algo), strata_coll_name(p->coll));
    if (p->registered && (p->algo != STRATA_ALGO_DIRECT || p->coll != STRATA_COLL_ALLREDUCE))
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "registered buffers apply to the direct allreduce only, not %s %s",
                                strata_algo_name(p->algo), strata_coll_name(p->coll));
    return STRATA_OK;
}

/* P == 1 or no data: handled here (see file comment). */
static bool trivial(const strata_sched_t *s)
{
    return s->p.nranks == 1 || (s->p.count == 0 && s->p.coll != STRATA_COLL_BARRIER);
}

strata_status_t strata_sched_create(const strata_sched_params_t *p, strata_sched_t **s_p,
                                    strata_error_t *err)
{
    strata_status_t st = check_params(p, err);
    if (st) return st;
    strata_sched_t *s = util_calloc(1, sizeof(*s));
    if (!s) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory creating a schedule");
    s->p = *p;
    if (s->p.chunks == 0) s->p.chunks = 1;
    s->algo = algos[p->algo];
    s->nagents = p->nranks;
    coll_sizes(s);
    if (trivial(s)) {
        s->nphases = (s->p.count == 0) ? 0 : 1;
    } else {
        st = s->algo->init(s, err);
        if (st) {
            strata_sched_destroy(s);
            return st;
        }
    }
    /* the caller's ring orders are not kept: ring_init copied them (s->order) */
    s->p.ring_order = s->order;
    if (!s->order) s->p.rings = 0;
    *s_p = s;
    return STRATA_OK;
}

void strata_sched_destroy(strata_sched_t *s)
{
    if (!s) return;
    util_free(s->tab);
    util_free(s->order);
    util_free(s);
}

const strata_sched_params_t *strata_sched_params(const strata_sched_t *s)
{
    return &s->p;
}
uint32_t strata_sched_nagents(const strata_sched_t *s)
{
    return s->nagents;
}
uint32_t strata_sched_nphases(const strata_sched_t *s)
{
    return s->nphases;
}

uint64_t strata_sched_buf_count(const strata_sched_t *s, uint32_t agent, strata_buf_t buf)
{
    if ((unsigned)buf >= STRATA_BUF_COUNT || agent >= s->nagents) return 0;
    if (agent >= s->p.nranks) return buf == STRATA_BUF_SCRATCH ? s->switch_scratch : 0;
    return s->buf[buf];
}

/* ==== Queries ==== */

static void enumerate(const strata_sched_t *s, uint32_t agent, sched_sink_t *k)
{
    if (agent >= s->nagents || k->phase >= s->nphases) return;
    if (trivial(s)) {
        sched_copy(k, 0, STRATA_BUF_INPUT, 0, STRATA_BUF_OUTPUT, 0, s->buf[STRATA_BUF_INPUT]);
        return;
    }
    s->algo->phase(s, agent, k);
}

uint32_t strata_sched_phase_nsteps(const strata_sched_t *s, uint32_t agent, uint32_t phase)
{
    sched_sink_t k = {.phase = phase, .want = UINT32_MAX};
    enumerate(s, agent, &k);
    return k.n;
}

void strata_sched_phase_step(const strata_sched_t *s, uint32_t agent, uint32_t phase, uint32_t i,
                             strata_step_t *step_p)
{
    strata_step_t st = {0};
    sched_sink_t k = {.phase = phase, .want = i, .out = &st};
    enumerate(s, agent, &k);
    *step_p = st;
}

uint32_t strata_sched_phase_steps(const strata_sched_t *s, uint32_t agent, uint32_t phase,
                                  strata_step_t *steps, uint32_t cap)
{
    sched_sink_t k = {.phase = phase, .want = UINT32_MAX, .all = steps, .cap = steps ? cap : 0};
    enumerate(s, agent, &k);
    return k.n;
}

uint32_t strata_sched_phase_class(const strata_sched_t *s, uint32_t phase)
{
    if (!trivial(s) && s->algo->phase_class) return s->algo->phase_class(s, phase);
    return phase;
}

uint32_t strata_sched_phase_pattern(const strata_sched_t *s, uint32_t phase)
{
    if (trivial(s) || !s->algo->phase_pattern || phase >= s->nphases)
        return STRATA_SCHED_NO_PATTERN;
    return s->algo->phase_pattern(s, phase);
}

uint32_t strata_sched_rot_order(const strata_sched_t *s)
{
    if (trivial(s) || !s->algo->rot_order) return 1;
    return s->algo->rot_order(s);
}

uint32_t strata_sched_rot_agent(const strata_sched_t *s, uint32_t agent, uint32_t i)
{
    uint32_t g = s->p.group;
    if (agent >= s->p.nranks || g == 0) return agent;
    return agent - agent % g + (uint32_t)((agent % g + 2 * (uint64_t)i) % g);
}

uint32_t strata_sched_phase_rep_steps(const strata_sched_t *s, uint32_t agent, uint32_t phase,
                                      strata_step_t *steps, uint32_t cap)
{
    sched_sink_t k = {.phase = phase,
                      .want = UINT32_MAX,
                      .all = steps,
                      .cap = steps ? cap : 0,
                      .reps = strata_sched_rot_order(s) > 1};
    enumerate(s, agent, &k);
    return k.n;
}

uint64_t strata_sched_nsteps(const strata_sched_t *s, uint32_t agent)
{
    uint64_t n = 0;
    for (uint32_t ph = 0; ph < s->nphases; ph++)
        n += strata_sched_phase_nsteps(s, agent, ph);
    return n;
}

void strata_sched_step(const strata_sched_t *s, uint32_t agent, uint64_t idx, strata_step_t *step_p)
{
    memset(step_p, 0, sizeof(*step_p));
    for (uint32_t ph = 0; ph < s->nphases; ph++) {
        uint32_t n = strata_sched_phase_nsteps(s, agent, ph);
        if (idx < n) {
            strata_sched_phase_step(s, agent, ph, (uint32_t)idx, step_p);
            return;
        }
        idx -= n;
    }
}

strata_status_t strata_sched_materialise(const strata_sched_t *s, uint32_t agent,
                                         strata_step_t **steps_p, size_t *n_p, strata_error_t *err)
{
    size_t total = (size_t)strata_sched_nsteps(s, agent), at = 0;
    strata_step_t *v = util_malloc((total ? total : 1) * sizeof(*v));
    if (!v) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory materialising");
    for (uint32_t ph = 0; ph < s->nphases; ph++) {
        uint32_t n = strata_sched_phase_nsteps(s, agent, ph);
        for (uint32_t i = 0; i < n && at < total; i++)
            strata_sched_phase_step(s, agent, ph, i, &v[at++]);
    }
    *steps_p = v;
    *n_p = at;
    return STRATA_OK;
}

/* ==== Emit helpers ==== */

void sched_emit(sched_sink_t *k, const strata_step_t *st)
{
    strata_step_t *o = k->n == k->want ? k->out : k->all && k->n < k->cap ? &k->all[k->n] : NULL;
    if (o) {
        *o = *st;
        o->phase = k->phase;
        if (o->nblk == 0) o->nblk = 1;
    }
    k->n++;
}

static void emit(sched_sink_t *k, int op, uint32_t after, int32_t peer, int sbuf, uint64_t soff,
                 int dbuf, uint64_t doff, uint64_t count)
{
    if (k->n != k->want && !k->all) {
        k->n++;
        return;
    }
    strata_step_t st = {.op = (uint8_t)op,
                        .src_buf = (uint8_t)sbuf,
                        .dst_buf = (uint8_t)dbuf,
                        .peer = peer,
                        .after = after,
                        .src_off = soff,
                        .dst_off = doff,
                        .count = count,
                        .nblk = 1};
    sched_emit(k, &st);
}

void sched_send(sched_sink_t *k, uint32_t after, int32_t peer, int buf, uint64_t off,
                uint64_t count)
{
    emit(k, STRATA_STEP_SEND, after, peer, buf, off, buf, 0, count);
}

void sched_recv(sched_sink_t *k, uint32_t after, int32_t peer, int buf, uint64_t off,
                uint64_t count)
{
    emit(k, STRATA_STEP_RECV, after, peer, buf, 0, buf, off, count);
}

void sched_recv_reduce(sched_sink_t *k, uint32_t after, int32_t peer, int sbuf, uint64_t soff,
                       int dbuf, uint64_t doff, uint64_t count)
{
    emit(k, STRATA_STEP_RECV_REDUCE, after, peer, sbuf, soff, dbuf, doff, count);
}

void sched_copy(sched_sink_t *k, uint32_t after, int sbuf, uint64_t soff, int dbuf, uint64_t doff,
                uint64_t count)
{
    emit(k, STRATA_STEP_COPY, after, -1, sbuf, soff, dbuf, doff, count);
}

void sched_reduce(sched_sink_t *k, uint32_t after, int sbuf, uint64_t soff, int dbuf, uint64_t doff,
                  uint64_t count)
{
    emit(k, STRATA_STEP_REDUCE, after, -1, sbuf, soff, dbuf, doff, count);
}

uint32_t sched_log2_floor(uint64_t x)
{
    uint32_t l = 0;
    while (x >>= 1)
        l++;
    return l;
}

uint32_t sched_log2_ceil(uint64_t x)
{
    uint32_t l = sched_log2_floor(x);
    return (UINT64_C(1) << l) < x ? l + 1 : l;
}
