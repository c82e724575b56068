/*
 * cmd_fabric.c — `strata fabric CLUSTER [--gpus N] [--switch ID] [--json]`:
 * the non-blocking fat-tree the cluster's scale-out endpoints (its NICs)
 * need, from the switch radix (data/fabric.json; default: the first switch
 * whose ports are as fast as the NIC): tiers, switches, links, transceivers
 * and cables per tier, watts of switches and optics, watts per GPU (and with
 * co-packaged optics), diameter and latency; then how that grows with the
 * endpoint count, doubling up to the 3-tier limit.
 */
#include "cli.h"
#include "cli_report.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: strata fabric CLUSTER [--gpus N] [--switch ID] [--json]\n\n"
            "Size the non-blocking k-ary fat-tree for CLUSTER's NICs (1 tier up to k, 2 up to\n"
            "k^2/2, 3 up to k^3/4): switches, links, transceivers (two per optical link) and\n"
            "cables per tier (copper into the rack, optics above), power of switches and\n"
            "optics from data/fabric.json, watts per GPU and with co-packaged optics,\n"
            "diameter (switch hops) and latency; then the same as the fabric doubles.\n\n"
            "  --gpus N     N GPUs of a preset (N / GPUs per server servers)\n"
            "  --switch ID  a switch of data/fabric.json (default: ports as fast as the NIC)\n"
            "  --json       JSON instead of text\n"
            "  -o FILE      write the output to FILE (also --output FILE)\n");
}

static void print_json(const strata_fabric_t *f, long gpus)
{
    strata_json_t j;
    strata_json_document(&j, stdout);
    strata_json_int(&j, "endpoints", f->endpoints);
    strata_json_int(&j, "gpus", gpus);
    strata_json_str(&j, "switch", f->switch_id);
    strata_json_int(&j, "radix", f->radix);
    strata_json_num(&j, "port_bps", f->port_gbps * 1e9);
    strata_json_str(&j, "optic", f->optic_id);
    strata_json_int(&j, "tiers", f->tiers);
    strata_json_int(&j, "switches", f->switches);
    strata_json_open(&j, "links", '[');
    for (int i = 0; i < f->tiers; i++) {
        strata_json_open(&j, NULL, '{');
        strata_json_int(&j, "tier", i + 1);
        strata_json_int(&j, "switches", f->tier[i].switches);
        strata_json_int(&j, "links", f->tier[i].links);
        strata_json_int(&j, "transceivers", f->tier[i].transceivers);
        strata_json_bool(&j, "optical", f->tier[i].optical);
        strata_json_num(&j, "power_W", f->tier[i].watts);
        strata_json_close(&j, '{');
    }
    strata_json_close(&j, '[');
    strata_json_num(&j, "switch_W", f->switch_w);
    strata_json_num(&j, "optics_W", f->optics_w);
    strata_json_num(&j, "per_gpu_W", f->total_w / gpus);
    strata_json_num(&j, "cpo_per_gpu_W", f->cpo_w_per_endpoint * f->endpoints / gpus);
    strata_json_int(&j, "diameter", f->diameter);
    strata_json_num(&j, "latency_s", f->latency_ns * 1e-9);
    strata_json_close(&j, '{');
}

static void print_fabric(const strata_fabric_t *f, long gpus, bool json)
{
    if (json) {
        print_json(f, gpus);
        return;
    }
    printf("fabric: %ld endpoints (%ld GPUs) on %s (radix %d, %g Gb/s ports), %s modules\n",
           f->endpoints, gpus, f->switch_id, f->radix, f->port_gbps, f->optic_id);
    printf("%4s %9s %9s %12s %8s %10s\n", "tier", "switches", "links", "transceivers", "medium",
           "watts");
    for (int i = 0; i < f->tiers; i++)
        printf("%4d %9ld %9ld %12ld %8s %10.0f\n", i + 1, f->tier[i].switches, f->tier[i].links,
               f->tier[i].transceivers, f->tier[i].optical ? "optics" : "copper", f->tier[i].watts);
    printf("switches %ld: %.0f W; links %.0f W; total %.0f W = %.1f W per GPU "
           "(co-packaged optics: %.1f)\n",
           f->switches, f->switch_w, f->optics_w, f->total_w, f->total_w / gpus,
           f->cpo_w_per_endpoint * f->endpoints / gpus);
    printf("diameter %d switches, %.0f ns across (hops + cable)\n", f->diameter, f->latency_ns);
}

static int load(const char *cluster, long gpus, const strata_link_catalog_t *cat,
                strata_topo_t **t_p)
{
    strata_error_t err;
    strata_error_clear(&err);
    if (strata_topo_load_spec(cluster, cat, t_p, &err)) return cli_fail(&err);
    long n = strata_topo_endpoint_count(*t_p);
    if (!gpus || gpus == n) return CLI_OK;
    strata_topo_destroy(*t_p);
    *t_p = NULL;
    if (strchr(cluster, ':') || strstr(cluster, ".json") || gpus % n)
        return cli_usage_error("fabric",
                               "--gpus %ld does not fit cluster '%s' (%ld GPUs, a preset "
                               "name whose server size divides N is needed)",
                               gpus, cluster, n);
    char spec[512];
    snprintf(spec, sizeof(spec), "%s:%ld", cluster, gpus / n);
    if (strata_topo_load_spec(spec, cat, t_p, &err)) return cli_fail(&err);
    return CLI_OK;
}

static int run(const char *cluster, long gpus, const char *sw, bool json,
               const strata_link_catalog_t *cat, const strata_fabric_catalog_t *fab)
{
    strata_topo_t *t = NULL;
    strata_coll_machine_t m;
    strata_fabric_t f;
    strata_error_t err;
    strata_error_clear(&err);
    int rc = load(cluster, gpus, cat, &t);
    if (rc) return rc;
    gpus = strata_topo_endpoint_count(t);
    if (strata_coll_machine_from_topo(t, cat, &m, &err)) rc = cli_fail(&err);
    strata_topo_destroy(t);
    if (rc) return rc;
    if (!sw && !(sw = strata_fabric_switch_for(fab, m.bw_nic * 8 / 1e9)))
        return cli_usage_error("fabric",
                               "no switch in data/fabric.json as fast as the NIC "
                               "(%.0f Gb/s)",
                               m.bw_nic * 8 / 1e9);
    long n = m.servers > 1 ? (long)m.nics * m.servers : 0;
    if (n == 0)
        return cli_usage_error("fabric", "cluster '%s' is one server: no scale-out fabric",
                               cluster);
    if (strata_fabric_size(fab, sw, n, &f, &err))
        return err.status == STRATA_ERR_RANGE ? cli_usage_error("fabric", "%s", err.msg)
                                              : cli_fail(&err);
    print_fabric(&f, gpus, json);
    if (json) return CLI_OK;
    printf("\ngrowth (same NICs per GPU):\n%9s %5s %9s %12s %8s %8s %8s\n", "endpoints", "tiers",
           "switches", "transceivers", "W/GPU", "CPO W", "ns");
    double per = (double)gpus / n;
    for (long e = f.radix / 2; e <= (long)f.radix * f.radix * f.radix / 4; e *= 2) {
        strata_fabric_t g;
        if (strata_fabric_size(fab, sw, e, &g, &err)) break;
        long tx = 0;
        for (int i = 0; i < g.tiers; i++)
            tx += g.tier[i].transceivers;
        printf("%9ld %5d %9ld %12ld %8.1f %8.1f %8.0f\n", e, g.tiers, g.switches, tx,
               g.w_per_endpoint / per, g.cpo_w_per_endpoint / per, g.latency_ns);
    }
    return CLI_OK;
}

int cmd_fabric(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) return usage(stdout), CLI_OK;
    const char *cluster = NULL, *sw = NULL;
    long gpus = 0;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--json"))
            json = true;
        else if (!strcmp(s, "--gpus") && i + 1 < argc) {
            if (cli_parse_int("fabric", s, argv[++i], 1, 1 << 24, &gpus)) return CLI_USAGE;
        } else if (!strcmp(s, "--switch") && i + 1 < argc)
            sw = argv[++i];
        else if ((!strcmp(s, "--gpus") || !strcmp(s, "--switch")) && i + 1 >= argc)
            return cli_usage_error("fabric", "%s needs a value", s);
        else if (s[0] == '-')
            return cli_unknown_option("fabric", s);
        else if (!cluster)
            cluster = s;
        else
            return cli_usage_error("fabric", "unexpected argument '%s'", s);
    }
    if (!cluster) return cli_usage_error("fabric", "missing CLUSTER (e.g. dgx-h100 --gpus 4096)");
    strata_fabric_catalog_t fab;
    strata_error_t err;
    strata_error_clear(&err);
    if (strata_fabric_catalog_load(NULL, &fab, &err)) return cli_fail(&err);
    bool known = !sw;
    for (int i = 0; sw && i < fab.nswitches; i++)
        known |= !strcmp(fab.switches[i].id, sw);
    if (!known)
        return cli_usage_error("fabric", "--switch: no switch '%s' in data/fabric.json", sw);
    strata_link_catalog_t *cat = NULL;
    int rc = report_load_links(NULL, &cat);
    if (rc) return rc;
    rc = run(cluster, gpus, sw, json, cat, &fab);
    strata_link_catalog_destroy(cat);
    return rc;
}
