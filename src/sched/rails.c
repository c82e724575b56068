/*
 * rails.c — which rail (NIC) each channel of a ring or a tree uses, in
 * words, for `strata coll --explain`: one line per channel, read off the
 * schedule's own channel view (strata_sched_channel) and the topology's
 * devices, so what is printed is what the generator builds and the
 * simulator routes.
 *
 * A ring channel enters every server at local rank `entry` and leaves it
 * from `exit`; a tree channel's head (`entry`) meets the parent server and
 * child server 1, its second rank (`exit`) child server 0. Either way the
 * server edges run on the rail of entry's NIC; exit reaches that NIC
 * through the PCIe switch the two share (NCCL's PIX path), by the NIC
 * itself when both GPUs sit behind it, or over scale-up links through
 * entry (PXN). A server with more NICs than ranks (a GH200 node) runs a
 * channel per NIC (ring.c, tree.c: per tree; params rails): the channel's
 * rail is NIC c; a server of one rank meets its parent and both children
 * with it.
 * Workload: O(1) per line after an O(servers) schedule.
 */
#include "sched.h"

#include <stdio.h>

/* Is device a one hop from a PCIe switch that b also touches? */
static bool share_pcie_switch(const strata_topo_t *t, int32_t a, int32_t b)
{
    const int32_t *na, *ca, *nb, *cb;
    int32_t da = strata_topo_adjacency(t, a, &na, &ca), db = strata_topo_adjacency(t, b, &nb, &cb);
    for (int32_t i = 0; i < da; i++) {
        if (strata_topo_device(t, na[i]).kind != STRATA_DEV_PCIE_SWITCH) continue;
        for (int32_t j = 0; j < db; j++)
            if (nb[j] == na[i]) return true;
    }
    return false;
}

/* Does the first routed path a -> b cross only accelerators and scale-up
 * switches (what PXN's relay needs)? */
static bool scaleup_joined(strata_topo_router_t *rt, const strata_topo_t *t, int32_t a, int32_t b)
{
    int32_t ch[32], n = 0;
    if (strata_topo_path(rt, a, b, 0, ch, 32, &n) != STRATA_OK || n == 0) return false;
    for (int32_t h = 0; h < n; h++) {
        strata_dev_kind_t k = strata_topo_device(t, strata_topo_chan_dst(t, ch[h])).kind;
        if (k != STRATA_DEV_ACCEL && k != STRATA_DEV_SCALEUP_SWITCH) return false;
    }
    return true;
}

/* How exit x's sends reach the NIC of entry e (server 0's devices), by the
 * simulator's rule (sim/route.c rail_mid): straight when it is x's own
 * NIC or no farther than it, else relayed by e over scale-up links (PXN),
 * else the long way through the host. */
static const char *exit_path(const strata_topo_t *t, int32_t e, int32_t x, int32_t nic)
{
    int32_t own = strata_topo_device(t, x).nic;
    if (own == nic) return "its own NIC too";
    strata_topo_router_t *rt = NULL;
    if (strata_topo_router_create(t, &rt, NULL)) return "";
    const char *how = "through the host (no scale-up relay)";
    if (own >= 0 && strata_topo_hops(rt, x, nic) <= strata_topo_hops(rt, x, own))
        how = share_pcie_switch(t, x, nic) ? "through the PCIe switch they share"
                                           : "as near as its own NIC";
    else if (scaleup_joined(rt, t, x, e))
        how = "over scale-up links through it (PXN)";
    strata_topo_router_destroy(rt);
    return how;
}

/* The schedule whose channels the line describes; NULL when none. */
static strata_sched_t *channel_sched(const strata_coll_machine_t *m, strata_algo_t algo)
{
    bool ring = algo == STRATA_ALGO_RING && m->mesh_rings <= 1;
    bool more_nics = (ring || algo == STRATA_ALGO_TREE) && m->rails > m->per_server;
    if (!(ring || algo == STRATA_ALGO_TREE) || m->servers < 2 || (m->per_server < 2 && !more_nics))
        return NULL;
    strata_sched_params_t p = {.coll = STRATA_COLL_ALLREDUCE,
                               .algo = algo,
                               .nranks = m->nranks,
                               .count = 2 * (uint64_t)m->per_server,
                               .elem_size = 1,
                               .chunks = 1,
                               .group = m->per_server,
                               .rails = more_nics ? m->rails : 0};
    strata_sched_t *s = NULL;
    if (strata_sched_create(&p, &s, NULL)) return NULL;
    return s;
}

uint32_t strata_coll_channel_line(const strata_topo_t *t, const strata_coll_machine_t *m,
                                  strata_algo_t algo, uint32_t c, char *buf, size_t len)
{
    strata_sched_t *s = channel_sched(m, algo);
    uint32_t n = strata_sched_channels(s);
    strata_sched_channel_t ch;
    if (c < n && strata_sched_channel(s, c, &ch, NULL) == STRATA_OK) {
        int32_t e = strata_topo_endpoint(t, (int32_t)ch.entry),
                x = strata_topo_endpoint(t, (int32_t)ch.exit);
        int32_t nic = e < 0          ? -1
                      : ch.rail >= 0 ? sched_server_nic(t, strata_topo_device(t, e).group, ch.rail)
                                     : strata_topo_device(t, e).nic;
        char rail[96];
        if (nic >= 0)
            snprintf(rail, sizeof(rail), "rail %d (NIC %s)", strata_topo_device(t, nic).local,
                     strata_topo_device(t, nic).name);
        else
            snprintf(rail, sizeof(rail), "no NIC");
        if (ch.tree < 0)
            snprintf(buf, len, "channel %u: %s; in at rank %u, out from rank %u, %s", c, rail,
                     ch.entry, ch.exit, nic >= 0 ? exit_path(t, e, x, nic) : "");
        else if (ch.entry == ch.exit)
            snprintf(buf, len, "tree %d channel %u: %s; rank %u meets parent and both children",
                     ch.tree, c % (n / 2), rail, ch.entry);
        else
            snprintf(
                buf, len,
                "tree %d channel %u: %s; rank %u meets parent and child 1, rank %u child 0, %s",
                ch.tree, c % (n / 2), rail, ch.entry, ch.exit,
                nic >= 0 ? exit_path(t, e, x, nic) : "");
    }
    strata_sched_destroy(s);
    return n;
}
