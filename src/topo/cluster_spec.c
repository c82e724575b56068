/*
 * cluster_spec.c — the I/O half of cluster spec resolution, and the public
 * entry points of the topology I/O (strata/topo.h, "Topology I/O").
 *
 * spec.c resolves builder specs (ring:8 …) and hands every other spec to
 * topoio_load_spec: "local" (hwloc), a path ending .json (cluster file) or
 * .xml (NCCL topology) optionally followed by ",key=value" options, or a
 * preset "NAME[:SERVERS][,key=value]" (preset.c). Each becomes a
 * description (topoio.h), then a topology through topoio_instantiate; the
 * same description is what --export writes and what `describe` prints.
 *
 * Workload: once per command.
 */
#include "topoio.h"

#include <string.h>

/* Length of the path part of "file.json,opts" when it names a file of
 * the given suffix, else 0. */
static size_t path_len(const char *spec, const char *suffix)
{
    size_t n = strcspn(spec, ","), m = strlen(suffix);
    return n > m && strncmp(spec + n - m, suffix, m) == 0 ? n : 0;
}

strata_status_t topoio_describe(const char *spec, const strata_link_catalog_t *cat,
                                topoio_cluster_t **c_p, strata_error_t *err)
{
    char path[1024];
    size_t n;
    strata_status_t st;
    topoio_cluster_t *c = NULL;
    if (strcmp(spec, "local") == 0) return topoio_hwloc_load(cat, c_p, err);
    bool json = (n = path_len(spec, ".json")) > 0;
    if (!json) n = path_len(spec, ".xml");
    if (n == 0) return topoio_preset_load(spec, cat, c_p, err);
    if (n >= sizeof(path)) return strata_error_set(err, STRATA_ERR_INVALID, "path too long");
    memcpy(path, spec, n);
    path[n] = '\0';
    st = json ? topoio_load_json(path, cat, &c, err) : topoio_nccl_xml_load(path, cat, &c, err);
    if (st == STRATA_OK && spec[n] == ',') st = topoio_apply_options(c, spec + n + 1, cat, err);
    if (st) {
        topoio_cluster_destroy(c);
        return st;
    }
    *c_p = c;
    return STRATA_OK;
}

strata_status_t topoio_load_spec(const char *spec, const strata_link_catalog_t *cat,
                                 strata_topo_t **topo_p, strata_error_t *err)
{
    topoio_cluster_t *c;
    strata_status_t st = topoio_describe(spec, cat, &c, err);
    if (st) return st;
    st = topoio_instantiate(c, cat, topo_p, err);
    topoio_cluster_destroy(c);
    return st;
}

/* ==== Public ==== */

strata_status_t strata_cluster_export(const char *spec, const strata_link_catalog_t *cat, FILE *out,
                                      strata_error_t *err)
{
    topoio_cluster_t *c;
    strata_status_t st = topoio_describe(spec, cat, &c, err);
    if (st) return st;
    st = topoio_export_json(c, out, err);
    topoio_cluster_destroy(c);
    return st;
}

const char *strata_cluster_presets(char *buf, size_t len)
{
    return topoio_preset_list(buf, len);
}

static void print_end(const topoio_cluster_t *c, topoio_end_t e, FILE *out)
{
    fputs(c->groups.v[e.group].name, out);
    if (e.index >= 0) fprintf(out, "[%ld]", e.index);
}

static void print_network(const topoio_net_t *n, FILE *out)
{
    if (n->builder == NULL) {
        fprintf(out, "network           none\n");
        return;
    }
    fprintf(out, "network           %s", n->builder);
    if (n->port) fprintf(out, ", port %s", n->port);
    if (n->nics) fprintf(out, ", %ld NICs per server", n->nics);
    if (n->tiers) fprintf(out, ", %ld tiers", n->tiers);
    if (n->radix) fprintf(out, ", radix %ld", n->radix);
    for (int i = 0; i < n->ntiers_oversub; i++)
        fprintf(out, "%s%g", i ? ":" : ", oversubscription ", n->oversub[i]);
    for (int i = 0; i < n->ndims; i++)
        fprintf(out, "%s%ld", i ? "x" : ", dims ", n->dims[i]);
    if (n->link) fprintf(out, ", link %s", n->link);
    fputc('\n', out);
}

void topoio_print(const topoio_cluster_t *c, FILE *out)
{
    fprintf(out, "cluster           %s\n", c->name ? c->name : "(unnamed)");
    if (c->description) fprintf(out, "description       %s\n", c->description);
    fprintf(out, "servers           %ld\n", c->servers);
    for (size_t i = 0; i < c->groups.n; i++) {
        const topoio_group_t *g = &c->groups.v[i];
        fprintf(out, "  device          %-12s %-12s x%-4ld", g->name, g->kind, g->count);
        if (g->model) fprintf(out, " %s", g->model);
        if (g->port) fprintf(out, " [port %s]", g->port);
        if (g->memory) fprintf(out, " [memory %s]", g->memory);
        if (g->capacity_gb > 0) fprintf(out, " [%g GB]", g->capacity_gb);
        if (g->info) fprintf(out, " (%s)", g->info);
        fputc('\n', out);
    }
    for (size_t i = 0; i < c->conns.n; i++) {
        const topoio_conn_t *k = &c->conns.v[i];
        fprintf(out, "  link            ");
        if (k->map == TOPOIO_MAP_MESH) {
            fputs("mesh ", out);
            print_end(c, k->a, out);
        } else {
            print_end(c, k->a, out);
            fputs(k->map == TOPOIO_MAP_BLOCK ? " =block=> " : " -- ", out);
            print_end(c, k->b, out);
        }
        fprintf(out, "  %s x%ld", k->link, k->count);
        if (k->lanes) fprintf(out, " (%ld lanes)", k->lanes);
        fputc('\n', out);
    }
    print_network(&c->net, out);
    for (size_t i = 0; i < c->sources.n; i++)
        fprintf(out, "source            %s\n", c->sources.v[i]);
}

strata_status_t strata_cluster_describe(const char *spec, const strata_link_catalog_t *cat,
                                        FILE *out, strata_error_t *err)
{
    topoio_cluster_t *c;
    strata_status_t st = topoio_describe(spec, cat, &c, err);
    if (st) return st;
    topoio_print(c, out);
    topoio_cluster_destroy(c);
    return STRATA_OK;
}
