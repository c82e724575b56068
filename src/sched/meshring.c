/*
 * meshring.c — the rings a switchless mesh admits: arc-disjoint directed
 * Hamiltonian cycles of the accelerator-to-accelerator links of a server.
 *
 * Why. On a mesh with no switch (MI300X: 8 GPUs, each pair one xGMI link;
 * DGX-1: the hybrid cube-mesh of NVLink2, 6 links per GPU, some pairs
 * doubled; Ascend 910B: an 8-NPU HCCS full mesh) one ring uses one link
 * of each GPU's several. The communication libraries run several rings at
 * once, each over its own links (NCCL's ring search, src/graph/search.cc,
 * keeps adding rings while link bandwidth is left, a doubled link counting
 * twice), in both directions: a full-duplex link is two arcs. How many a
 * mesh admits is a property of its graph: no GPU can send on more rings
 * than it has outgoing lanes, so the bound is the smallest out- (and in-)
 * lane count, 7 for the 8-GPU full mesh and 6 for the DGX-1; the complete
 * symmetric digraph on 8 vertices does decompose into 7 directed
 * Hamiltonian cycles (Tillson 1980: every n except 4 and 6), the DGX-1
 * into 6 (its doubled links form the Hamiltonian cycle 0-3-2-1-5-6-7-4,
 * its single links 0-1-3-7-5-4-6-2: 2 lanes x 2 directions + 1 x 2).
 *
 * How. A link of mult m gives m lanes each way; rings are found one at a
 * time in what is left (a depth-first search for a Hamiltonian cycle from
 * local rank 0, neighbours in a pseudo-random order), and the greedy
 * sequence restarts with other orders until it reaches the lane bound or
 * the work budget is spent; the best set is kept. Seeded by a constant, so
 * the model and the simulator get the same rings. Workload: L <= 16
 * members, at most MESH_WORK DFS expansions (milliseconds).
 */
#include "sched.h"

#include <string.h>

#define L_MAX STRATA_MESH_MEMBERS_MAX
#define K_MAX STRATA_MESH_RINGS_MAX
/* DFS expansions over all restarts, and per attempt at one ring. */
#define MESH_WORK    4000000
#define MESH_ATTEMPT 20000

typedef struct mesh {
    uint32_t L;
    uint8_t cap[L_MAX][L_MAX]; /* lanes u -> v left */
    uint64_t rng;
    long work;
} mesh_t;

static uint32_t mesh_rand(mesh_t *g)
{
    g->rng = g->rng * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG */
    return (uint32_t)(g->rng >> 33);
}

/* Extend path[0..len) to a Hamiltonian cycle through lanes left; budget
 * counts expansions. */
static bool ham_dfs(mesh_t *g, uint16_t *path, uint32_t len, uint32_t seen, long *budget)
{
    uint32_t u = path[len - 1], L = g->L;
    if (len == L) return g->cap[u][path[0]] > 0;
    if (--*budget < 0) return false;
    g->work++;
    uint32_t nb[L_MAX], k = 0;
    for (uint32_t v = 0; v < L; v++)
        if (!(seen >> v & 1) && g->cap[u][v] > 0) nb[k++] = v;
    for (uint32_t i = k; i > 1; i--) { /* shuffle */
        uint32_t j = mesh_rand(g) % i, t = nb[i - 1];
        nb[i - 1] = nb[j], nb[j] = t;
    }
    for (uint32_t i = 0; i < k; i++) {
        path[len] = (uint16_t)nb[i];
        if (ham_dfs(g, path, len + 1, seen | 1u << nb[i], budget)) return true;
    }
    return false;
}

static void take(mesh_t *g, const uint16_t *ring, int d)
{
    for (uint32_t l = 0; l < g->L; l++)
        g->cap[ring[l]][ring[(l + 1) % g->L]] =
            (uint8_t)(g->cap[ring[l]][ring[(l + 1) % g->L]] + d);
}

/* Fewest lanes leaving or entering any member: no set has more rings. */
static uint32_t lane_bound(const mesh_t *g)
{
    uint32_t best = K_MAX;
    for (uint32_t u = 0; u < g->L; u++) {
        uint32_t out = 0, in = 0;
        for (uint32_t v = 0; v < g->L; v++)
            out += g->cap[u][v], in += g->cap[v][u];
        if (out < best) best = out;
        if (in < best) best = in;
    }
    return best;
}

/* Greedy rings with restarts; the best set into rings (K_MAX x L). */
static uint32_t find_rings(mesh_t *g, uint16_t *rings)
{
    uint32_t bound = lane_bound(g), best = 0, L = g->L;
    uint16_t cur[K_MAX * L_MAX];
    uint8_t cap0[L_MAX][L_MAX];
    memcpy(cap0, g->cap, sizeof(cap0));
    while (best < bound && g->work < MESH_WORK) {
        uint32_t k = 0;
        memcpy(g->cap, cap0, sizeof(cap0));
        while (k < bound) {
            uint16_t *r = cur + (size_t)k * L;
            long budget = MESH_ATTEMPT;
            r[0] = 0;
            if (!ham_dfs(g, r, 1, 1, &budget)) break;
            take(g, r, -1);
            k++;
        }
        if (k > best) {
            best = k;
            memcpy(rings, cur, (size_t)k * L * sizeof(*rings));
        }
    }
    return best;
}

/* Lanes between the L ranks of server s: 0 when a rank reaches a scale-up
 * switch or links to no member. lane_bw_p: the slowest lane seen. */
static bool server_caps(const strata_topo_t *t, const int32_t *ranks, uint32_t first, uint32_t L,
                        uint8_t cap[L_MAX][L_MAX], double *lane_bw_p)
{
    int32_t dev[L_MAX];
    for (uint32_t u = 0; u < L; u++) {
        int32_t r = ranks ? ranks[first + u] : (int32_t)(first + u);
        if (r < 0 || r >= strata_topo_endpoint_count(t)) return false;
        dev[u] = strata_topo_endpoint(t, r);
    }
    memset(cap, 0, sizeof(uint8_t) * L_MAX * L_MAX);
    for (uint32_t u = 0; u < L; u++) {
        const int32_t *nbr, *chan;
        int32_t deg = strata_topo_adjacency(t, dev[u], &nbr, &chan);
        for (int32_t i = 0; i < deg; i++) {
            if (strata_topo_device(t, nbr[i]).kind == STRATA_DEV_SCALEUP_SWITCH) return false;
            for (uint32_t v = 0; v < L; v++) {
                if (nbr[i] != dev[v]) continue;
                strata_topo_link_t lk = strata_topo_link(t, strata_topo_chan_link(chan[i]));
                int32_t m = lk.mult > 0 ? lk.mult : 1;
                cap[u][v] = (uint8_t)(cap[u][v] + (m > K_MAX ? K_MAX : m));
                double lane = lk.bw_dir / m;
                if (*lane_bw_p == 0 || lane < *lane_bw_p) *lane_bw_p = lane;
            }
        }
    }
    return true;
}

uint32_t strata_coll_mesh_rings(const strata_topo_t *t, const int32_t *ranks, uint32_t n,
                                uint32_t group, uint16_t *order_p, double *lane_bw_p)
{
    uint32_t L = group > 1 ? group : n;
    if (!t || !order_p || L < 2 || L > L_MAX || n % L) return 0;
    mesh_t g = {.L = L, .rng = 0x5eed5eedULL};
    double lane = 0;
    if (!server_caps(t, ranks, 0, L, g.cap, &lane)) return 0;
    for (uint32_t s = 1; s < n / L; s++) { /* every server wired as the first */
        uint8_t other[L_MAX][L_MAX];
        double ignored = 0;
        if (!server_caps(t, ranks, s * L, L, other, &ignored) ||
            memcmp(other, g.cap, sizeof(other)))
            return 0;
    }
    uint32_t k = find_rings(&g, order_p);
    if (k > 0 && lane_bw_p) *lane_bw_p = lane;
    return k;
}
