/*
 * nvlstree.c — NCCL's NVLSTree allreduce: reduce inside each server through
 * the NVSwitch (NVLink SHARP), a double binary tree across servers, and the
 * result multicast back through the switch.
 *
 * Agents: ranks 0..P-1 in N = ceil(P/g) nodes of g consecutive ranks (the
 * last may be smaller), and switch agent P + n for node n. As in tree.c
 * the buffer is split into two halves, one per tree of NCCL's double
 * binary tree over nodes (ncclGetDtree), and each half into g channels;
 * channel h of a node of m ranks is headed by its local rank h mod m, so
 * every rank drives its NIC for 1/g of the data (NCCL's NVLSTree runs one
 * channel per NIC the same way). For chunk c of one (tree, channel):
 *   phase c          every rank sends its input chunk to its switch, which
 *                    reduces (multimem.ld_reduce in NCCL);
 *   phase c+1        the switch hands the node's sum to the channel's head;
 *   phase c+2+k      a head of node height k (its child nodes' sums reduced
 *                    in) sends it to its parent node's head;
 *   phase c+2+T+d    the head at node depth d, holding the total (from its
 *                    parent one phase earlier, or as root), sends it to its
 *                    child nodes' heads and to its switch;
 *   phase c+3+T+d    the switch multicasts it to the node's ranks, the
 *                    head included (multimem.st writes every copy of the
 *                    multicast object, its own through the switch too).
 * So C + 3 + 2T phases in all (T: the node trees' height).
 *
 * Traffic per rank and direction (equal nodes, n bytes): up the scale-up
 * links n (its input) + n/g (the total of the chunks it heads, back to the
 * switch); down n/g (the node sums it heads) + n (multicast), i.e. the
 * n(1+1/g) of NVLS inside a server; across servers E n/2 per node
 * (E = sched_dtree_max_edges(N)), shared by its g heads. The switch reduces
 * at line rate (it is built to), so no rank reduces more than its tree
 * children's sums.
 */
#include "sched.h"

static strata_status_t nvlstree_init(strata_sched_t *s, strata_error_t *err)
{
    uint32_t P = s->p.nranks;
    if (s->p.group == 0) s->p.group = P;
    if (s->p.group > P)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "nvlstree: %u ranks per switch is more than the %u ranks",
                                s->p.group, P);
    strata_status_t st = sched_dtree_init(s, s->p.group, false, err);
    if (st) return st;
    int64_t T0 = s->aux[SCHED_DT_T0], T1 = s->aux[SCHED_DT_T1];
    s->nagents = P + (uint32_t)s->aux[SCHED_DT_N];
    s->nphases = s->p.chunks + 3 + 2 * (uint32_t)(T0 > T1 ? T0 : T1);
    s->switch_scratch = s->p.count;
    return STRATA_OK;
}

/* Ranks of node n: first and how many. */
static uint32_t node_first(const strata_sched_t *s, uint32_t n)
{
    return n * s->p.group;
}
static uint32_t node_size(const strata_sched_t *s, uint32_t n)
{
    uint32_t left = s->p.nranks - n * s->p.group;
    return left < s->p.group ? left : s->p.group;
}
static int32_t head_of(const strata_sched_t *s, uint32_t n, uint32_t h)
{
    return (int32_t)(node_first(s, n) + h % node_size(s, n));
}

/* Chunk c of (tree t, channel h)'s segment, if c is a chunk. */
static bool chunk(const strata_sched_t *s, int t, uint32_t h, int64_t c, uint64_t *off,
                  uint64_t *len)
{
    if (c < 0 || c >= s->p.chunks) return false;
    uint64_t nseg = 2 * (uint64_t)s->p.group, seg = (uint64_t)t * s->p.group + h;
    uint64_t base = sched_blk_off(s->p.count, nseg, seg), sl = sched_blk_len(s->p.count, nseg, seg);
    *off = base + sched_blk_off(sl, s->p.chunks, (uint64_t)c);
    *len = sched_blk_len(sl, s->p.chunks, (uint64_t)c);
    return true;
}

/* The head's part of (t, h) at this phase: node sum from the switch, tree
 * up, tree down, total back to the switch, and its multicast copy. */
static void head_steps(const strata_sched_t *s, int t, uint32_t h, uint32_t n, sched_sink_t *k)
{
    int64_t ph = k->phase, T = s->aux[SCHED_DT_T0 + t], d = sched_dt(s, t, n, DT_DEPTH);
    int64_t hgt = sched_dt(s, t, n, DT_HEIGHT);
    int32_t sw = (int32_t)(s->p.nranks + n), up = sched_dt(s, t, n, DT_PARENT);
    int32_t ch[2] = {sched_dt(s, t, n, DT_C0), sched_dt(s, t, n, DT_C1)};
    int O = STRATA_BUF_OUTPUT;
    uint64_t off, len;
    if (chunk(s, t, h, ph - 1, &off, &len)) sched_recv(k, 0, sw, O, off, len);
    for (int i = 0; i < 2; i++)
        if (ch[i] >= 0 && chunk(s, t, h, ph - 2 - sched_dt(s, t, ch[i], DT_HEIGHT), &off, &len))
            sched_recv_reduce(k, 0, head_of(s, (uint32_t)ch[i], h), O, off, O, off, len);
    if (up >= 0 && chunk(s, t, h, ph - 2 - hgt, &off, &len))
        sched_send(k, 0, head_of(s, (uint32_t)up, h), O, off, len);
    if (up >= 0 && chunk(s, t, h, ph - 1 - T - d, &off, &len))
        sched_recv(k, 0, head_of(s, (uint32_t)up, h), O, off, len);
    if (chunk(s, t, h, ph - 3 - T - d, &off, &len)) sched_recv(k, 0, sw, O, off, len);
    if (!chunk(s, t, h, ph - 2 - T - d, &off, &len)) return;
    for (int i = 0; i < 2; i++)
        if (ch[i] >= 0) sched_send(k, 0, head_of(s, (uint32_t)ch[i], h), O, off, len);
    sched_send(k, 0, sw, O, off, len);
}

static void rank_phase(const strata_sched_t *s, uint32_t r, sched_sink_t *k)
{
    uint32_t n = r / s->p.group, nh = k->reps ? 2 : s->p.group;
    int32_t sw = (int32_t)(s->p.nranks + n);
    uint64_t off, len;
    for (int t = 0; t < 2; t++)
        for (uint32_t h = 0; h < nh; h++) {
            if (chunk(s, t, h, k->phase, &off, &len))
                sched_send(k, 0, sw, STRATA_BUF_INPUT, off, len);
            if (head_of(s, n, h) == (int32_t)r) {
                head_steps(s, t, h, n, k);
                continue;
            }
            int64_t late = k->phase - 3 - s->aux[SCHED_DT_T0 + t] - sched_dt(s, t, n, DT_DEPTH);
            if (chunk(s, t, h, late, &off, &len)) sched_recv(k, 0, sw, STRATA_BUF_OUTPUT, off, len);
        }
}

/* Switch of node n: reduce the node's chunk, hand it to the head, take
 * the total back, multicast it to every rank of the node. */
static void switch_phase(const strata_sched_t *s, uint32_t n, sched_sink_t *k)
{
    int S = STRATA_BUF_SCRATCH;
    uint32_t first = node_first(s, n), m = node_size(s, n), nh = k->reps ? 2 : s->p.group;
    uint64_t off, len;
    for (int t = 0; t < 2; t++)
        for (uint32_t h = 0; h < nh; h++) {
            int64_t ph = k->phase,
                    late = ph - 2 - s->aux[SCHED_DT_T0 + t] - sched_dt(s, t, n, DT_DEPTH);
            int32_t head = head_of(s, n, h);
            if (chunk(s, t, h, ph, &off, &len)) {
                uint32_t at = k->n; /* the first receive initialises, the rest add to it */
                sched_recv(k, 0, (int32_t)first, S, off, len);
                for (uint32_t j = 1; j < m; j++)
                    sched_recv_reduce(k, at + 1, (int32_t)(first + j), S, off, S, off, len);
            }
            if (chunk(s, t, h, ph - 1, &off, &len)) sched_send(k, 0, head, S, off, len);
            if (chunk(s, t, h, late, &off, &len)) sched_recv(k, 0, head, S, off, len);
            if (!chunk(s, t, h, late - 1, &off, &len)) continue;
            for (uint32_t j = 0; j < m; j++)
                sched_send(k, 0, (int32_t)(first + j), S, off, len);
        }
}

static void nvlstree_phase(const strata_sched_t *s, uint32_t a, sched_sink_t *k)
{
    if (a < s->p.nranks)
        rank_phase(s, a, k);
    else
        switch_phase(s, a - s->p.nranks, k);
}

/* The steady state (tree.c's sched_dtree_class): phase ph moves chunks ph
 * - x with x in {0, 1} (input to the switch, its sum to the head), 2 +
 * a height <= 2 + T (up the tree), 1 + T + d, 2 + T + d and 3 + T + d
 * (down, to the switch, the multicast; d <= T): all in [0, 3 + 2 T]. */
static uint32_t nvlstree_class(const strata_sched_t *s, uint32_t phase)
{
    int64_t T0 = s->aux[SCHED_DT_T0], T1 = s->aux[SCHED_DT_T1];
    return sched_dtree_class(s, phase, 3 + 2 * (T0 > T1 ? T0 : T1));
}

/* The channel rotation (strata_sched_rot_order, tree.c's
 * sched_dtree_rot_order): with full nodes, head_of(n, h + 2) = rho(head_of(n,
 * h)) and the node tables do not depend on h, so channel h + 2's rank
 * steps are the images of channel h's; a switch is fixed by rho and its
 * steps for channel h + 2 are those for h with its ranks renamed by rho
 * (the same sends and receives; which receive of the node's m initialises
 * the sum, and so the `after` of its receives, follows the ranks' order,
 * which only the receives' reductions see). */
const sched_algo_t sched_nvlstree = {
    .id = STRATA_ALGO_NVLSTREE,
    .colls = SCHED_COLL(ALLREDUCE),
    .init = nvlstree_init,
    .phase = nvlstree_phase,
    .phase_class = nvlstree_class,
    .rot_order = sched_dtree_rot_order,
};
