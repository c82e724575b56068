/*
 * preset.c — named server presets on the command line.
 *
 * A preset is a cluster file in <data dir>/presets/NAME.json (the format of
 * docs/formats.md; each file cites its sources). On the command line it is
 * named as
 *
 *     NAME[:SERVERS][,key=value]...     e.g.  dgx-h100:16,oversub=4,nics=4
 *
 * SERVERS replaces the file's server count; the options override its
 * network: servers, net (builder), oversub (leaf tier, or R1:R2:.. leaf
 * first), nics (NICs per server on the fabric), port (catalog id of the
 * fabric ports), tiers, radix; memory (catalog HBM id) replaces what the
 * accelerators record; p2p=off turns GPU peer-to-peer off (traffic between
 * the GPUs of a server then stages through host memory). The same options may follow a cluster file
 * path. An unknown preset is an error that lists the available ones.
 *
 * Workload: one small file read per command.
 */
#define _POSIX_C_SOURCE 200809L
#include "topoio.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ==== Listing ==== */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *topoio_preset_list(char *buf, size_t len)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/presets", strata_data_dir());
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (d == NULL) return buf;
    char *names[128];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 128;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) {
            names[n] = util_strdup(e->d_name);
            if (names[n]) names[n++][l - 5] = '\0';
        }
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_str);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
        if (w > 0 && (size_t)w < len - used) used += (size_t)w;
        util_free(names[i]);
    }
    return buf;
}

/* ==== Options ==== */

static strata_status_t opt_error(strata_error_t *err, const char *key, const char *val,
                                 const char *expected)
{
    return strata_error_set(err, STRATA_ERR_INVALID, "option %s=%s: expected %s", key, val,
                            expected);
}

static strata_status_t opt_long(const char *key, const char *val, long min, long max, long *out,
                                strata_error_t *err)
{
    long v;
    if (util_parse_long(val, &v) != 0 || v < min || v > max) {
        char what[64];
        snprintf(what, sizeof(what), "an integer from %ld to %ld", min, max);
        return opt_error(err, key, val, what);
    }
    *out = v;
    return STRATA_OK;
}

/* "4" (leaf tier) or "1:2" (leaf first). */
static strata_status_t opt_oversub(topoio_net_t *n, const char *val, strata_error_t *err)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", val);
    int k = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok;
         tok = strtok_r(NULL, ":", &save)) {
        double x;
        if (k == TOPOIO_MAX_TIERS || util_parse_double(tok, &x) != 0 || !(x >= 1) ||
            x > TOPOIO_OVERSUB_MAX)
            return opt_error(err, "oversub", val,
                             "ratios from 1 to 1e6, leaf tier first (4 or 1:2)");
        n->oversub[k++] = x;
    }
    if (k == 0) return opt_error(err, "oversub", val, "a ratio >= 1");
    n->ntiers_oversub = k;
    return STRATA_OK;
}

static strata_status_t opt_link(topoio_cluster_t *c, const strata_link_catalog_t *cat,
                                const char *key, const char *val, const char **out,
                                strata_error_t *err)
{
    if (cat && !topoio_is_port_kind(strata_link_find(cat, val)))
        return opt_error(err, key, val,
                         "a network port id of the link catalog (InfiniBand, RoCE or Ethernet, "
                         "e.g. ib-ndr, roce-400g, eth-100g)");
    *out = topoio_str(c, val);
    return STRATA_OK;
}

static strata_status_t opt_builder(topoio_cluster_t *c, const char *val, strata_error_t *err)
{
    static const char *const ok[] = {"rail-fat-tree", "fat-tree", "switch", "none", NULL};
    for (size_t i = 0; ok[i]; i++)
        if (strcmp(ok[i], val) == 0) {
            c->net.builder = strcmp(val, "none") == 0 ? NULL : topoio_str(c, val);
            return STRATA_OK;
        }
    return opt_error(err, "net", val, "rail-fat-tree, fat-tree, switch or none");
}

/* memory=ID: every accelerator group records that memory (an HBM row of
 * the catalog), e.g. dgx-a100,memory=hbm-a100-40 for the 40 GB part. */
static strata_status_t opt_memory(topoio_cluster_t *c, const strata_link_catalog_t *cat,
                                  const char *val, strata_error_t *err)
{
    if (cat && strata_topo_memory_find(cat, val) == NULL)
        return opt_error(err, "memory", val,
                         "an accelerator memory of the link catalog (e.g. hbm-h100, hbm-h200)");
    long n = 0;
    for (size_t g = 0; g < c->groups.n; g++)
        if (topoio_is_accel_kind(c->groups.v[g].kind)) {
            c->groups.v[g].memory = topoio_str(c, val);
            n++;
        }
    if (n == 0) return opt_error(err, "memory", val, "a cluster with accelerators");
    return STRATA_OK;
}

static strata_status_t apply_one(topoio_cluster_t *c, const char *key, const char *val,
                                 const strata_link_catalog_t *cat, strata_error_t *err)
{
    topoio_net_t *n = &c->net;
    if (strcmp(key, "servers") == 0)
        return opt_long(key, val, 1, TOPOIO_SERVERS_MAX, &c->servers, err);
    if (strcmp(key, "net") == 0) return opt_builder(c, val, err);
    if (strcmp(key, "oversub") == 0) return opt_oversub(n, val, err);
    if (strcmp(key, "nics") == 0) return opt_long(key, val, 1, TOPOIO_COUNT_MAX, &n->nics, err);
    if (strcmp(key, "tiers") == 0)
        return opt_long(key, val, 1, TOPOIO_SWITCH_TIERS, &n->tiers, err);
    if (strcmp(key, "radix") == 0) {
        strata_status_t st = opt_long(key, val, 2, TOPOIO_RADIX_MAX, &n->radix, err);
        return st || n->radix % 2 == 0 ? st : opt_error(err, key, val, "an even port count");
    }
    if (strcmp(key, "port") == 0) return opt_link(c, cat, key, val, &n->port, err);
    if (strcmp(key, "memory") == 0) return opt_memory(c, cat, val, err);
    if (strcmp(key, "p2p") == 0) {
        if (strcmp(val, "on") != 0 && strcmp(val, "off") != 0)
            return opt_error(err, key, val, "on or off (GPU peer-to-peer)");
        c->p2p_off = strcmp(val, "off") == 0;
        return STRATA_OK;
    }
    return strata_error_set(err, STRATA_ERR_INVALID,
                            "unknown cluster option '%s' (expected "
                            "servers, net, oversub, nics, port, tiers, radix, memory or p2p)",
                            key);
}

strata_status_t topoio_apply_options(topoio_cluster_t *c, const char *opts,
                                     const strata_link_catalog_t *cat, strata_error_t *err)
{
    char buf[512];
    if (opts == NULL || *opts == '\0') return STRATA_OK;
    if (strlen(opts) >= sizeof(buf))
        return strata_error_set(err, STRATA_ERR_INVALID, "cluster options too long");
    snprintf(buf, sizeof(buf), "%s", opts);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq == NULL || eq == tok || eq[1] == '\0')
            return strata_error_set(err, STRATA_ERR_INVALID, "cluster option '%s' is not key=value",
                                    tok);
        *eq = '\0';
        strata_status_t st = apply_one(c, tok, eq + 1, cat, err);
        if (st) return st;
    }
    if (c->net.nics > 0 && c->net.nics > topoio_count_kind(c, "nic"))
        return strata_error_set(err, STRATA_ERR_RANGE, "nics=%ld but a server has %ld NICs",
                                c->net.nics, topoio_count_kind(c, "nic"));
    if (c->net.builder && strcmp(c->net.builder, "torus") == 0 && c->net.ntiers_oversub)
        return strata_error_set(err, STRATA_ERR_INVALID, "oversub does not apply to a torus");
    return STRATA_OK;
}

/* ==== Loading ==== */

static bool valid_preset_name(const char *s)
{
    if (*s == '\0') return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            return false;
    return true;
}

static strata_status_t unknown_preset(const char *name, strata_error_t *err)
{
    char list[1024];
    topoio_preset_list(list, sizeof(list));
    return strata_error_set(err, STRATA_ERR_NOT_FOUND,
                            "unknown cluster '%s' (presets: %s; or a .json cluster file, a .xml "
                            "NCCL topology, 'local', or a builder such as ring:8)",
                            name, list[0] ? list : "none found");
}

strata_status_t topoio_preset_load(const char *spec, const strata_link_catalog_t *cat,
                                   topoio_cluster_t **c_p, strata_error_t *err)
{
    char name[128], path[1200];
    size_t n = strcspn(spec, ":,");
    if (n >= sizeof(name)) return unknown_preset(spec, err);
    memcpy(name, spec, n);
    name[n] = '\0';
    if (!valid_preset_name(name)) return unknown_preset(name, err);
    snprintf(path, sizeof(path), "%s/presets/%s.json", strata_data_dir(), name);
    FILE *f = fopen(path, "r");
    if (f == NULL) return unknown_preset(name, err);
    fclose(f);
    topoio_cluster_t *c;
    strata_status_t st = topoio_load_json(path, cat, &c, err);
    if (st) return st;
    const char *rest = spec + n;
    if (*rest == ':') {
        char num[32];
        size_t m = strcspn(rest + 1, ",");
        snprintf(num, sizeof(num), "%.*s", (int)(m < 31 ? m : 31), rest + 1);
        if (m >= 31 || (st = opt_long("servers", num, 1, TOPOIO_SERVERS_MAX, &c->servers, err))) {
            if (m >= 31) st = opt_error(err, "servers", num, "an integer from 1 to 1048576");
            topoio_cluster_destroy(c);
            return st;
        }
        rest += 1 + m;
    }
    if (*rest == ',') rest++;
    if ((st = topoio_apply_options(c, rest, cat, err))) {
        topoio_cluster_destroy(c);
        return st;
    }
    *c_p = c;
    return STRATA_OK;
}
