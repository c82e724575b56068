/*
 * cmd_path.c — `strata path CLUSTER A B`: a host data path explained hop by
 * hop (strata_topo_xfer): for each stage who moves the data (a GPU's DMA
 * engine, a NIC, an NVMe drive, the CPU), its hops with layer (the link's
 * catalog category), link, bandwidth and latency, its time for the size,
 * and the copies the bytes take. Modes: P2P (direct) vs staged through host
 * memory, pinned vs pageable host memory, GPUDirect RDMA / Storage vs a
 * bounce buffer (docs/topology.md "Host data paths").
 */
#include "cli_report.h"

#include <string.h>

typedef struct path_args {
    const char *cluster, *a, *b, *catalog;
    strata_xfer_mode_t mode;
    double bytes, cpu_copy;
    bool json;
} path_args_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: strata path CLUSTER A B [--mode MODE] [--size SIZE] [--cpu-copy GBPS]\n"
                 "                   [--json] [-o FILE] [--catalog FILE]\n\n"
                 "How bytes move from device A to device B of one server, hop by hop: the\n"
                 "layer, link, bandwidth and latency of each hop, who moves the data (a GPU's\n"
                 "DMA engine, a NIC, an NVMe drive, the CPU) and how many copies it takes.\n"
                 "A and B are device names as `strata topo show CLUSTER` prints them (gpu0,\n"
                 "dram0, nic1, ...); one of them is a GPU, or a NIC or drive writes into host\n"
                 "memory.\n\n"
                 "options:\n"
                 "  --mode MODE     auto (default): P2P between GPUs (staged when the cluster\n"
                 "                  has p2p=off), GPUDirect for NICs and drives, pinned for\n"
                 "                  host memory;\n"
                 "                  direct: one DMA, no host memory (P2P, GPUDirect RDMA or\n"
                 "                  Storage); staged: through a bounce buffer in host memory\n"
                 "                  (for a drive: the page cache, then a CPU copy);\n"
                 "                  pinned: host <-> GPU in one DMA; pageable: the CPU first\n"
                 "                  copies into a pinned bounce buffer, then the DMA\n"
                 "  --size SIZE     bytes moved (K/M/G/T suffixes; default 1G, at most 1024T)\n"
                 "  --cpu-copy GBPS one core's memcpy rate in GB/s, caps the CPU copies\n"
                 "                  (default: the memory channels' share only); e.g. what\n"
                 "                  `strata probe` measures for memcpy on one core\n"
                 "  --json          JSON instead of text\n"
                 "  -o FILE         write the output to FILE (also --output FILE)\n"
                 "  --catalog FILE  link catalog (default: <data dir>/links.json)\n"
                 "  -h, --help      this help\n\n"
                 "exit: 0 ok, 1 unknown cluster or device or a path that does not exist,\n"
                 "2 bad option\n");
}

static int parse_opt(int argc, char **argv, int *i, path_args_t *a)
{
    const char *o = argv[*i];
    if (strcmp(o, "--json") == 0) {
        a->json = true;
        return 0;
    }
    if (strcmp(o, "--mode") && strcmp(o, "--size") && strcmp(o, "--cpu-copy") &&
        strcmp(o, "--catalog"))
        return cli_usage_error("path", "unknown option '%s'", o);
    if (*i + 1 >= argc) return cli_usage_error("path", "%s needs a value", o);
    const char *v = argv[++*i];
    if (strcmp(o, "--mode") == 0) {
        if (strata_xfer_mode_parse(v, &a->mode))
            return cli_usage_error("path",
                                   "--mode expects auto, direct, staged, pinned or pageable, "
                                   "got '%s'",
                                   v);
        return 0;
    }
    if (strcmp(o, "--size") == 0) return cli_parse_size("path", o, v, CLI_SIZE_MAX, &a->bytes);
    if (strcmp(o, "--cpu-copy") == 0) {
        if (cli_parse_double("path", o, v, 0.001, 1e6, &a->cpu_copy)) return CLI_USAGE;
        a->cpu_copy *= 1e9;
        return 0;
    }
    a->catalog = v;
    return 0;
}

static int parse_args(int argc, char **argv, path_args_t *a)
{
    *a = (path_args_t){.bytes = 1073741824.0};
    const char **pos[] = {&a->cluster, &a->a, &a->b};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (parse_opt(argc, argv, &i, a)) return CLI_USAGE;
        } else if (npos < 3) {
            *pos[npos++] = argv[i];
        } else {
            return cli_usage_error("path", "unexpected argument '%s'", argv[i]);
        }
    }
    if (npos < 3)
        return cli_usage_error("path", "missing %s", npos == 0 ? "CLUSTER" : npos == 1 ? "A" : "B");
    return CLI_OK;
}

/* ==== Output ==== */

static const char *layer_of(const strata_link_catalog_t *cat, const char *kind)
{
    const strata_link_t *l = strata_link_find(cat, kind);
    return l && l->category ? l->category : "custom";
}

static void print_text(const strata_topo_t *t, const strata_link_catalog_t *cat,
                       const path_args_t *a, const strata_xfer_t *x)
{
    char b1[32], b2[32], b3[32];
    printf("path %s -> %s on %s: %s, %.0f B, %d stage%s\n", a->a, a->b, strata_topo_name(t),
           strata_xfer_mode_str(x->mode), x->bytes, x->nstages, x->nstages == 1 ? "" : "s");
    for (int s = 0; s < x->nstages; s++) {
        const strata_xfer_stage_t *st = &x->stage[s];
        printf("stage %d  %s: %s\n", s + 1, st->mover, st->what);
        for (int32_t h = st->first; h < st->first + st->n; h++) {
            const strata_xfer_hop_t *hp = &x->hop[h];
            strata_topo_link_t l = strata_topo_link(t, strata_topo_chan_link(hp->chan));
            char link[48];
            snprintf(link, sizeof(link), "%s x%d", l.kind, (int)l.mult);
            printf("  %-8s > %-8s  %-8s %-16s %8s GB/s  %s\n",
                   strata_topo_device(t, strata_topo_chan_src(t, hp->chan)).name,
                   strata_topo_device(t, strata_topo_chan_dst(t, hp->chan)).name,
                   layer_of(cat, l.kind), link, report_gbs(hp->bw, b1, sizeof(b1)),
                   report_time(hp->latency, b2, sizeof(b2)));
        }
        printf("  stage    %s GB/s, latency %s, %s\n", report_gbs(st->bw, b1, sizeof(b1)),
               report_time(st->latency, b2, sizeof(b2)), report_time(st->time, b3, sizeof(b3)));
    }
    printf("total    %s for %.0f B: %s GB/s effective, %d cop%s\n",
           report_time(x->time, b1, sizeof(b1)), x->bytes, report_gbs(x->bw, b2, sizeof(b2)),
           x->copies, x->copies == 1 ? "y" : "ies");
}

static void print_json(const strata_topo_t *t, const strata_link_catalog_t *cat,
                       const path_args_t *a, const strata_xfer_t *x)
{
    strata_json_t j;
    strata_json_document(&j, stdout);
    strata_json_str(&j, "cluster", strata_topo_name(t));
    strata_json_str(&j, "from", a->a);
    strata_json_str(&j, "to", a->b);
    strata_json_str(&j, "mode", strata_xfer_mode_str(x->mode));
    strata_json_num(&j, "size_B", x->bytes);
    strata_json_int(&j, "copies", x->copies);
    strata_json_num(&j, "time_s", x->time);
    strata_json_num(&j, "bw_Bps", x->bw);
    strata_json_open(&j, "stages", '[');
    for (int s = 0; s < x->nstages; s++) {
        const strata_xfer_stage_t *st = &x->stage[s];
        strata_json_open(&j, NULL, '{');
        strata_json_str(&j, "mover", st->mover);
        strata_json_str(&j, "what", st->what);
        strata_json_num(&j, "bw_Bps", st->bw);
        strata_json_num(&j, "latency_s", st->latency);
        strata_json_num(&j, "time_s", st->time);
        strata_json_open(&j, "hops", '[');
        for (int32_t h = st->first; h < st->first + st->n; h++) {
            strata_topo_link_t l = strata_topo_link(t, strata_topo_chan_link(x->hop[h].chan));
            strata_json_open(&j, NULL, '{');
            strata_json_str(&j, "from",
                            strata_topo_device(t, strata_topo_chan_src(t, x->hop[h].chan)).name);
            strata_json_str(&j, "to",
                            strata_topo_device(t, strata_topo_chan_dst(t, x->hop[h].chan)).name);
            strata_json_str(&j, "layer", layer_of(cat, l.kind));
            strata_json_str(&j, "link", l.kind);
            strata_json_int(&j, "mult", l.mult);
            strata_json_num(&j, "bw_Bps", x->hop[h].bw);
            strata_json_num(&j, "latency_s", x->hop[h].latency);
            strata_json_close(&j, '}');
        }
        strata_json_close(&j, ']');
        strata_json_close(&j, '}');
    }
    strata_json_close(&j, ']');
    strata_json_close(&j, '}');
    fputc('\n', stdout);
}

static int find(const strata_topo_t *t, const char *name, int32_t *id_p)
{
    *id_p = strata_topo_find_device(t, name);
    if (*id_p >= 0) return 0;
    fprintf(stderr,
            "strata: path: no device '%s' in cluster '%s' (see strata topo show for the "
            "names)\n",
            name, strata_topo_name(t));
    return -1;
}

int cmd_path(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    path_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    strata_error_t err;
    strata_error_clear(&err);
    strata_link_catalog_t *cat = NULL;
    strata_topo_t *t = NULL;
    if (strata_link_catalog_load(a.catalog, &cat, &err)) return cli_fail(&err);
    strata_status_t st = strata_topo_load_spec(a.cluster, cat, &t, &err);
    int32_t da, db;
    strata_xfer_t x;
    rc = CLI_OK;
    if (st)
        rc = cli_fail(&err);
    else if (find(t, a.a, &da) || find(t, a.b, &db))
        rc = CLI_FAIL;
    else if ((st = strata_topo_xfer(t, da, db, a.mode, a.bytes, a.cpu_copy, &x, &err)))
        rc = cli_fail(&err);
    else if (a.json)
        print_json(t, cat, &a, &x);
    else
        print_text(t, cat, &a, &x);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(cat);
    return rc;
}
