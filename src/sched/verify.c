/*
 * verify.c — the symbolic verifier: executes any schedule on tagged data and
 * proves each rank ends with exactly the right contributions.
 *
 * Tags: element e of rank r's input holds tag(r, e), a 64-bit hash. The
 * "reduction" adds tags modulo 2^64, which is commutative and associative
 * like the operators schedules assume; a missing, doubled or misplaced
 * contribution changes the sum (undetected only with probability ~2^-64).
 * OUTPUT and SCRATCH start filled with distinct poison tags, so reading
 * data no step wrote also shows. Barriers carry no data: every message
 * carries its sender's knowledge (the set of ranks whose arrival causally
 * precedes it), and each rank must end knowing all P.
 *
 * Execution uses rendezvous semantics: a SEND and its matching RECV complete
 * together once both are ready (rules 1-2 of sched.h), so a schedule that
 * passes cannot deadlock on an executor with unbuffered sends. Before
 * running, every step is checked for bounds, matching (rule 3) and
 * concurrent hazards (rule 4). Workload: P <= ~1000 agents, buffers of a few
 * MB in total; memory O(nagents^2 + all buffers).
 */
#include "sched.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_MAX_AGENTS 2048
#define TAG_SALT          UINT64_C(0x5eed5c4ed01e)

typedef struct agent {
    strata_step_t *st;
    size_t n;
    size_t *pf; /* first step index of each step's phase */
    bool *done;
    size_t cur;     /* first step not done */
    int64_t *match; /* SEND: index of matching receive at the peer */
    uint64_t *buf[STRATA_BUF_COUNT];
    uint64_t size[STRATA_BUF_COUNT];
    uint64_t *know;   /* barrier knowledge bitset */
    uint32_t *rfirst; /* per peer: offset into rlist */
    size_t *rlist;    /* receive step indices grouped by peer */
} agent_t;

typedef struct vctx {
    const strata_sched_t *s;
    uint32_t na, P, words;
    agent_t *ag;
    uint64_t *tmp;
    uint64_t tmp_n;
    strata_error_t *err;
} vctx_t;

static const char *const op_names[] = {"send", "recv", "recv_reduce", "copy", "reduce"};

static uint64_t tag(uint32_t r, uint64_t e)
{
    return util_hash_u64(TAG_SALT ^ ((uint64_t)r << 40) ^ e);
}

static strata_status_t fail(vctx_t *v, const char *fmt, ...) STRATA_PRINTF(2, 3);
static strata_status_t fail(vctx_t *v, const char *fmt, ...)
{
    char msg[STRATA_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const strata_sched_params_t *p = &v->s->p;
    return strata_error_set(v->err, STRATA_ERR_PROTOCOL, "%s/%s P=%u count=%llu: %s",
                            strata_coll_name(p->coll), strata_algo_name(p->algo), p->nranks,
                            (unsigned long long)p->count, msg);
}

/* ==== Access sets ==== */

static bool reads_src(int op)
{
    return op == STRATA_STEP_SEND || op == STRATA_STEP_RECV_REDUCE || op == STRATA_STEP_COPY ||
           op == STRATA_STEP_REDUCE;
}
static bool writes_dst(int op)
{
    return op != STRATA_STEP_SEND;
}
static bool reads_dst(int op)
{
    return op == STRATA_STEP_REDUCE;
}

typedef struct span {
    int buf;
    int64_t off, stride;
    uint64_t count, nblk;
} span_t;

static span_t src_span(const strata_step_t *t)
{
    return (span_t){t->src_buf, (int64_t)t->src_off, t->src_stride, t->count, t->nblk};
}
static span_t dst_span(const strata_step_t *t)
{
    return (span_t){t->dst_buf, (int64_t)t->dst_off, t->dst_stride, t->count, t->nblk};
}

static int64_t blk_at(const span_t *a, uint64_t b)
{
    return a->off + (int64_t)b * a->stride;
}

static bool spans_overlap(const span_t *a, const span_t *b)
{
    if (a->buf != b->buf || a->count == 0 || b->count == 0) return false;
    for (uint64_t i = 0; i < a->nblk; i++)
        for (uint64_t j = 0; j < b->nblk; j++) {
            int64_t x = blk_at(a, i), y = blk_at(b, j);
            if (x < y + (int64_t)b->count && y < x + (int64_t)a->count) return true;
        }
    return false;
}

static bool span_in_bounds(const agent_t *g, const span_t *a)
{
    if (a->buf < 0 || a->buf >= STRATA_BUF_COUNT) return false;
    if (a->count == 0) return true;
    int64_t first = blk_at(a, 0), last = blk_at(a, a->nblk - 1);
    int64_t lo = first < last ? first : last,
            hi = (first > last ? first : last) + (int64_t)a->count;
    return lo >= 0 && (uint64_t)hi <= g->size[a->buf];
}

/* ==== Loading and static checks ==== */

static strata_status_t load_agent(vctx_t *v, uint32_t a)
{
    agent_t *g = &v->ag[a];
    strata_status_t st = strata_sched_materialise(v->s, a, &g->st, &g->n, v->err);
    if (st) return st;
    g->pf = util_calloc(g->n + 1, sizeof(*g->pf));
    g->done = util_calloc(g->n + 1, sizeof(*g->done));
    g->match = util_calloc(g->n + 1, sizeof(*g->match));
    g->know = util_calloc(v->words, sizeof(*g->know));
    if (!g->pf || !g->done || !g->match || !g->know)
        return strata_error_set(v->err, STRATA_ERR_NOMEM, "verify: out of memory");
    for (int b = 0; b < STRATA_BUF_COUNT; b++) {
        g->size[b] = strata_sched_buf_count(v->s, a, (strata_buf_t)b);
        g->buf[b] = util_malloc(g->size[b] * sizeof(uint64_t));
        if (!g->buf[b]) return strata_error_set(v->err, STRATA_ERR_NOMEM, "verify: out of memory");
        for (uint64_t e = 0; e < g->size[b]; e++)
            g->buf[b][e] =
                b == STRATA_BUF_INPUT
                    ? tag(a, e)
                    : util_hash_u64(~TAG_SALT ^ ((uint64_t)a << 42) ^ ((uint64_t)b << 40) ^ e);
    }
    if (a < v->P) g->know[a / 64] |= UINT64_C(1) << (a % 64);
    return STRATA_OK;
}

static strata_status_t check_step(vctx_t *v, uint32_t a, size_t i)
{
    agent_t *g = &v->ag[a];
    strata_step_t *t = &g->st[i];
    g->pf[i] = (i > 0 && t->phase == g->st[i - 1].phase) ? g->pf[i - 1] : i;
    if (i > 0 && t->phase < g->st[i - 1].phase)
        return fail(v, "agent %u step %zu: phases go backwards", a, i);
    if (t->op > STRATA_STEP_REDUCE) return fail(v, "agent %u step %zu: bad op %u", a, i, t->op);
    if (t->after > i - g->pf[i])
        return fail(v, "agent %u step %zu: waits for %u steps of its phase, only %zu precede", a, i,
                    t->after, i - g->pf[i]);
    bool comm = t->op <= STRATA_STEP_RECV_REDUCE;
    if (comm && (t->peer < 0 || (uint32_t)t->peer >= v->na || (uint32_t)t->peer == a))
        return fail(v, "agent %u step %zu (%s): bad peer %d", a, i, op_names[t->op], t->peer);
    span_t sp = src_span(t), dp = dst_span(t);
    if ((reads_src(t->op) && !span_in_bounds(g, &sp)) ||
        (writes_dst(t->op) && !span_in_bounds(g, &dp)))
        return fail(v, "agent %u step %zu (%s, phase %u): access outside its buffer", a, i,
                    op_names[t->op], t->phase);
    return STRATA_OK;
}

/* Rule 4: concurrent steps of one phase must not conflict. */
static bool conflict(const strata_step_t *x, const strata_step_t *y)
{
    if (x->op == STRATA_STEP_RECV_REDUCE && y->op == STRATA_STEP_RECV_REDUCE &&
        x->src_buf == x->dst_buf && x->src_off == x->dst_off && y->src_buf == y->dst_buf &&
        y->src_off == y->dst_off)
        return false; /* accumulations commute */
    span_t xs = src_span(x), xd = dst_span(x), ys = src_span(y), yd = dst_span(y);
    if (writes_dst(x->op) && ((reads_src(y->op) && spans_overlap(&xd, &ys)) ||
                              (writes_dst(y->op) && spans_overlap(&xd, &yd))))
        return true;
    if (writes_dst(y->op) && reads_src(x->op) && spans_overlap(&yd, &xs)) return true;
    (void)reads_dst;
    return false;
}

static strata_status_t check_hazards(vctx_t *v, uint32_t a)
{
    agent_t *g = &v->ag[a];
    for (size_t j = 0; j < g->n; j++)
        for (size_t i = g->pf[j]; i < j; i++) {
            if (g->st[j].after > i - g->pf[j]) continue; /* j waits for i */
            if (conflict(&g->st[i], &g->st[j]))
                return fail(v,
                            "agent %u phase %u: concurrent steps %zu (%s) and %zu (%s) touch "
                            "the same data",
                            a, g->st[j].phase, i - g->pf[j], op_names[g->st[i].op], j - g->pf[j],
                            op_names[g->st[j].op]);
        }
    return STRATA_OK;
}

static bool is_recv(int op)
{
    return op == STRATA_STEP_RECV || op == STRATA_STEP_RECV_REDUCE;
}

/* Group each agent's receives by peer, then pair the k-th send a->b with the
 * k-th receive at b from a. */
static strata_status_t build_matching(vctx_t *v)
{
    uint32_t na = v->na;
    for (uint32_t b = 0; b < na; b++) {
        agent_t *g = &v->ag[b];
        g->rfirst = util_calloc(na + 1, sizeof(*g->rfirst));
        g->rlist = util_calloc(g->n + 1, sizeof(*g->rlist));
        if (!g->rfirst || !g->rlist)
            return strata_error_set(v->err, STRATA_ERR_NOMEM, "verify: oom");
        for (size_t i = 0; i < g->n; i++)
            if (is_recv(g->st[i].op)) g->rfirst[g->st[i].peer + 1]++;
        for (uint32_t p = 0; p < na; p++)
            g->rfirst[p + 1] += g->rfirst[p];
        uint32_t *fill = util_calloc(na, sizeof(*fill));
        if (!fill) return strata_error_set(v->err, STRATA_ERR_NOMEM, "verify: oom");
        for (size_t i = 0; i < g->n; i++)
            if (is_recv(g->st[i].op)) {
                uint32_t p = (uint32_t)g->st[i].peer;
                g->rlist[g->rfirst[p] + fill[p]++] = i;
            }
        util_free(fill);
    }
    uint32_t *sent = util_calloc(na, sizeof(*sent));
    if (!sent) return strata_error_set(v->err, STRATA_ERR_NOMEM, "verify: oom");
    strata_status_t st = STRATA_OK;
    for (uint32_t a = 0; a < na && !st; a++) {
        memset(sent, 0, na * sizeof(*sent));
        agent_t *g = &v->ag[a];
        for (size_t i = 0; i < g->n && !st; i++) {
            strata_step_t *t = &g->st[i];
            if (t->op != STRATA_STEP_SEND) continue;
            agent_t *h = &v->ag[t->peer];
            uint32_t k = sent[t->peer]++, have = h->rfirst[a + 1] - h->rfirst[a];
            if (k >= have) {
                st = fail(v, "agent %u phase %u: send #%u to %d has no matching receive", a,
                          t->phase, k + 1, t->peer);
                break;
            }
            size_t j = h->rlist[h->rfirst[a] + k];
            const strata_step_t *r = &h->st[j];
            if (r->count * r->nblk != t->count * t->nblk || r->phase != t->phase)
                st = fail(v,
                          "agent %u -> %d message #%u: sent %llu elements in phase %u, "
                          "received as %llu in phase %u",
                          a, t->peer, k + 1, (unsigned long long)(t->count * t->nblk), t->phase,
                          (unsigned long long)(r->count * r->nblk), r->phase);
            g->match[i] = (int64_t)j;
        }
        for (uint32_t b = 0; b < na && !st; b++) {
            agent_t *h = &v->ag[b];
            uint32_t want = h->rfirst[a + 1] - h->rfirst[a];
            if (sent[b] < want)
                st = fail(v, "agent %u expects %u messages from %u, which sends %u", b, want, a,
                          sent[b]);
        }
    }
    util_free(sent);
    return st;
}

/* ==== Execution ==== */

static bool ready(agent_t *g, size_t i)
{
    size_t pf = g->pf[i];
    while (g->cur < g->n && g->done[g->cur])
        g->cur++; /* a peer may have completed some */
    if (g->cur < pf) return false;
    for (size_t j = pf; j < pf + g->st[i].after; j++)
        if (!g->done[j]) return false;
    return !g->done[i];
}

static strata_status_t grow_tmp(vctx_t *v, uint64_t n)
{
    if (n <= v->tmp_n) return STRATA_OK;
    util_free(v->tmp);
    v->tmp = util_malloc(n * sizeof(uint64_t));
    v->tmp_n = v->tmp ? n : 0;
    return v->tmp ? STRATA_OK : strata_error_set(v->err, STRATA_ERR_NOMEM, "verify: oom");
}

static void gather(const agent_t *g, const span_t *a, uint64_t *out)
{
    if (a->count == 0) return; /* empty messages (barriers) carry no buffer */
    for (uint64_t b = 0; b < a->nblk; b++)
        memcpy(out + b * a->count, g->buf[a->buf] + blk_at(a, b), a->count * sizeof(uint64_t));
}

/* Write msg into dst, or src (+) msg when reducing. */
static void apply(agent_t *g, const strata_step_t *t, const uint64_t *msg, bool reduce)
{
    span_t d = dst_span(t), s = src_span(t);
    for (uint64_t b = 0; b < t->nblk; b++)
        for (uint64_t j = 0; j < t->count; j++) {
            uint64_t m = msg[b * t->count + j];
            if (reduce) m += g->buf[s.buf][blk_at(&s, b) + (int64_t)j];
            g->buf[d.buf][blk_at(&d, b) + (int64_t)j] = m;
        }
}

static strata_status_t run_local(vctx_t *v, agent_t *g, size_t i)
{
    strata_step_t *t = &g->st[i];
    span_t s = src_span(t);
    strata_status_t st = grow_tmp(v, t->count * t->nblk);
    if (st) return st;
    gather(g, &s, v->tmp);
    if (t->op == STRATA_STEP_REDUCE) {
        strata_step_t u = *t; /* dst = dst (+) src: reduce with dst as the operand */
        u.src_buf = t->dst_buf, u.src_off = t->dst_off, u.src_stride = t->dst_stride;
        apply(g, &u, v->tmp, true);
    } else {
        apply(g, t, v->tmp, false);
    }
    g->done[i] = true;
    return STRATA_OK;
}

static strata_status_t run_transfer(vctx_t *v, uint32_t a, size_t i, bool *did)
{
    agent_t *g = &v->ag[a];
    strata_step_t *t = &g->st[i];
    agent_t *h = &v->ag[t->peer];
    size_t j = (size_t)g->match[i];
    if (!ready(h, j)) return STRATA_OK;
    span_t s = src_span(t);
    strata_status_t st = grow_tmp(v, t->count * t->nblk);
    if (st) return st;
    gather(g, &s, v->tmp);
    apply(h, &h->st[j], v->tmp, h->st[j].op == STRATA_STEP_RECV_REDUCE);
    for (uint32_t w = 0; w < v->words; w++)
        h->know[w] |= g->know[w];
    g->done[i] = h->done[j] = true;
    *did = true;
    return STRATA_OK;
}

/* One pass over every agent's current phase; *did tells whether anything ran. */
static strata_status_t sweep(vctx_t *v, bool *did)
{
    for (uint32_t a = 0; a < v->na; a++) {
        agent_t *g = &v->ag[a];
        while (g->cur < g->n && g->done[g->cur])
            g->cur++; /* a peer may have completed some */
        if (g->cur >= g->n) continue;
        size_t pf = g->pf[g->cur];
        for (size_t i = g->cur; i < g->n && g->pf[i] == pf; i++) {
            if (!ready(g, i)) continue;
            int op = g->st[i].op;
            strata_status_t st = STRATA_OK;
            if (op == STRATA_STEP_COPY || op == STRATA_STEP_REDUCE) {
                st = run_local(v, g, i);
                *did = true;
            } else if (op == STRATA_STEP_SEND) {
                st = run_transfer(v, a, i, did);
            }
            if (st) return st;
        }
        while (g->cur < g->n && g->done[g->cur])
            g->cur++;
    }
    return STRATA_OK;
}

static strata_status_t execute(vctx_t *v)
{
    for (;;) {
        bool did = false;
        strata_status_t st = sweep(v, &did);
        if (st) return st;
        if (did) continue;
        for (uint32_t a = 0; a < v->na; a++) {
            agent_t *g = &v->ag[a];
            if (g->cur < g->n) {
                strata_step_t *t = &g->st[g->cur];
                return fail(v, "deadlock: agent %u stuck at step %zu of phase %u (%s, peer %d)", a,
                            g->cur - g->pf[g->cur], t->phase, op_names[t->op], t->peer);
            }
        }
        return STRATA_OK;
    }
}

/* ==== Expected results ==== */

static uint64_t expect(const vctx_t *v, uint32_t r, uint64_t e, bool *check)
{
    const strata_sched_params_t *p = &v->s->p;
    uint32_t P = v->P;
    uint64_t n = p->count, sum = 0;
    *check = true;
    switch (p->coll) {
    case STRATA_COLL_ALLREDUCE:
        for (uint32_t q = 0; q < P; q++)
            sum += tag(q, e);
        return sum;
    case STRATA_COLL_REDUCE:
        *check = r == p->root;
        for (uint32_t q = 0; q < P; q++)
            sum += tag(q, e);
        return sum;
    case STRATA_COLL_REDUCE_SCATTER:
        for (uint32_t q = 0; q < P; q++)
            sum += tag(q, (uint64_t)r * n + e);
        return sum;
    case STRATA_COLL_ALLGATHER:
        return tag((uint32_t)(e / n), e % n);
    case STRATA_COLL_BROADCAST:
        return tag(p->root, e);
    case STRATA_COLL_ALLTOALL:
        return tag((uint32_t)(e / n), (uint64_t)r * n + e % n);
    case STRATA_COLL_SENDRECV:
        return tag((r + P - 1) % P, e);
    default:
        *check = false;
        return 0;
    }
}

static strata_status_t check_results(vctx_t *v)
{
    for (uint32_t r = 0; r < v->P; r++) {
        agent_t *g = &v->ag[r];
        for (uint64_t e = 0; e < g->size[STRATA_BUF_OUTPUT]; e++) {
            bool check;
            uint64_t want = expect(v, r, e, &check);
            if (check && g->buf[STRATA_BUF_OUTPUT][e] != want)
                return fail(v, "rank %u output element %llu holds the wrong contributions", r,
                            (unsigned long long)e);
        }
        if (v->s->p.coll != STRATA_COLL_BARRIER || v->P < 2) continue;
        for (uint32_t q = 0; q < v->P; q++)
            if (!(g->know[q / 64] >> (q % 64) & 1))
                return fail(v, "barrier: rank %u may leave before rank %u arrives", r, q);
    }
    return STRATA_OK;
}

/* ==== Entry ==== */

static void free_all(vctx_t *v)
{
    for (uint32_t a = 0; v->ag && a < v->na; a++) {
        agent_t *g = &v->ag[a];
        free(g->st);
        util_free(g->pf), util_free(g->done), util_free(g->match), util_free(g->know);
        util_free(g->rfirst), util_free(g->rlist);
        for (int b = 0; b < STRATA_BUF_COUNT; b++)
            util_free(g->buf[b]);
    }
    util_free(v->ag);
    util_free(v->tmp);
}

static strata_status_t verify_all(vctx_t *v)
{
    strata_status_t st = STRATA_OK;
    for (uint32_t a = 0; a < v->na && !st; a++) {
        st = load_agent(v, a);
        for (size_t i = 0; i < v->ag[a].n && !st; i++)
            st = check_step(v, a, i);
        if (!st) st = check_hazards(v, a);
    }
    if (!st) st = build_matching(v);
    if (!st) st = execute(v);
    if (!st) st = check_results(v);
    return st;
}

strata_status_t strata_sched_verify(const strata_sched_t *s, strata_error_t *err)
{
    vctx_t v = {.s = s, .na = strata_sched_nagents(s), .P = s->p.nranks, .err = err};
    if (v.na > VERIFY_MAX_AGENTS)
        return strata_error_set(err, STRATA_ERR_UNSUPPORTED,
                                "verify: %u agents exceed the verifier's limit of %d", v.na,
                                VERIFY_MAX_AGENTS);
    v.words = (v.P + 63) / 64;
    v.ag = util_calloc(v.na, sizeof(*v.ag));
    if (!v.ag) return strata_error_set(err, STRATA_ERR_NOMEM, "verify: out of memory");
    strata_status_t st = verify_all(&v);
    free_all(&v);
    return st;
}
