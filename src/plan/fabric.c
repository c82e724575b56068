/*
 * fabric.c — the physical limits of a scale-out fabric: a non-blocking
 * folded Clos (k-ary fat-tree, Al-Fares et al. 2008) sized for N
 * endpoints from the switch radix, its switches, links, transceivers and
 * cables per tier, their power from the sourced catalog data/fabric.json,
 * and the diameter and latency it adds.
 *
 * Sizing, h = k/2 ports down and h up on every switch below the top:
 *   1 tier (N <= k):      1 switch, N copper links.
 *   2 tiers (N <= k^2/2): L = ceil(N/h) leaves, ceil(L/2) spines (each
 *                         spine takes k leaf uplinks), L*h leaf-spine links.
 *   3 tiers (N <= k^3/4): E = ceil(N/h) edges, E aggregation switches
 *                         (h per pod of h edges), ceil(E/2) cores,
 *                         E*h links in each of tiers 2 and 3.
 * At full size this is k + k/2 = 3k/2 and k^2/2 + k^2/2 + k^2/4 = 5k^2/4
 * switches (fabric-host.md A3). Endpoint-to-leaf links are copper in the
 * rack (two copper ends each); every link above is optical, two pluggable
 * modules of the port rate. Co-packaged optics price those same optical
 * ends at the published pJ/bit instead.
 */
#include "plan.h"

#include <math.h>
#include <string.h>

static strata_status_t read_part(const util_json_doc_t *d, const json_t *o, bool sw,
                                 strata_fabric_part_t *p, strata_error_t *err)
{
    static const char *const okeys[] = {"id", "gbps", "watts", "conf", "source", NULL};
    static const char *const skeys[] = {"id",   "name",   "ports", "port_gbps", "watts",
                                        "asic", "hop_ns", "conf",  "source",    NULL};
    const char *id = NULL, *name = "", *src = NULL;
    long ports = 0;
    bool asic = false;
    strata_status_t st;
    memset(p, 0, sizeof(*p));
    if (!json_is_object(o))
        return util_json_error(d, o, err, STRATA_ERR_PARSE, "expected an object");
    if ((st = util_json_check_keys(d, o, sw ? skeys : okeys, err)) ||
        (st = util_json_req_str(d, o, "id", &id, err)) ||
        (st = util_json_req_str(d, o, "source", &src, err)) ||
        (st = util_json_req_num(d, o, "watts", &p->watts, err)))
        return st;
    if (sw && ((st = util_json_req_str(d, o, "name", &name, err)) ||
               (st = util_json_req_int(d, o, "ports", &ports, err)) ||
               (st = util_json_req_num(d, o, "port_gbps", &p->gbps, err)) ||
               (st = util_json_req_num(d, o, "hop_ns", &p->hop_ns, err)) ||
               (st = util_json_opt_bool(d, o, "asic", &asic, err))))
        return st;
    if (!sw && (st = util_json_req_num(d, o, "gbps", &p->gbps, err))) return st;
    if (p->watts <= 0 || p->gbps <= 0)
        return util_json_error(d, o, err, STRATA_ERR_PARSE, "'%s': watts and rate must be positive",
                               id);
    if (sw && (ports < 2 || ports > 4096 || ports % 2 || p->hop_ns < 0))
        return util_json_error(d, json_object_get(o, "ports"), err, STRATA_ERR_PARSE,
                               "'%s': ports must be even, 2 to 4096, got %ld", id, ports);
    snprintf(p->id, sizeof(p->id), "%s", id);
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->ports = (int)ports;
    return STRATA_OK;
}

static strata_status_t read_parts(const util_json_doc_t *d, const json_t *root, const char *key,
                                  bool sw, strata_fabric_part_t *out, int *n_p, strata_error_t *err)
{
    json_t *arr;
    strata_status_t st = util_json_req_arr(d, root, key, &arr, err);
    if (st) return st;
    if (json_array_size(arr) > STRATA_FABRIC_MAX_PARTS)
        return util_json_error(d, arr, err, STRATA_ERR_PARSE, "at most %d %s",
                               STRATA_FABRIC_MAX_PARTS, key);
    *n_p = (int)json_array_size(arr);
    for (int i = 0; i < *n_p; i++)
        if ((st = read_part(d, json_array_get(arr, (size_t)i), sw, &out[i], err))) return st;
    return STRATA_OK;
}

static strata_status_t read_catalog(const util_json_doc_t *d, strata_fabric_catalog_t *c,
                                    strata_error_t *err)
{
    static const char *const keys[] = {"format", "version", "about",    "optics", "copper",
                                       "fiber",  "cpo",     "switches", NULL};
    const json_t *root = util_json_root(d);
    json_t *cu, *fi, *cpo;
    strata_status_t st;
    if (!json_is_object(root))
        return util_json_error(d, root, err, STRATA_ERR_PARSE, "expected a fabric catalog object");
    if ((st = util_json_check_keys(d, root, keys, err)) ||
        (st = read_parts(d, root, "optics", false, c->optics, &c->noptics, err)) ||
        (st = read_parts(d, root, "switches", true, c->switches, &c->nswitches, err)) ||
        (st = util_json_req_obj(d, root, "copper", &cu, err)) ||
        (st = util_json_req_obj(d, root, "fiber", &fi, err)) ||
        (st = util_json_req_obj(d, root, "cpo", &cpo, err)) ||
        (st = util_json_req_num(d, cu, "watts", &c->copper_w, err)) ||
        (st = util_json_req_num(d, cu, "ns_per_m", &c->copper_ns_m, err)) ||
        (st = util_json_req_num(d, cu, "length_m", &c->copper_m, err)) ||
        (st = util_json_req_num(d, fi, "ns_per_m", &c->fiber_ns_m, err)) ||
        (st = util_json_req_num(d, fi, "length_m", &c->fiber_m, err)) ||
        (st = util_json_req_num(d, cpo, "pj_per_bit", &c->cpo_pj_bit, err)))
        return st;
    if (c->copper_w < 0 || c->copper_ns_m < 0 || c->copper_m < 0 || c->fiber_ns_m < 0 ||
        c->fiber_m < 0 || c->cpo_pj_bit <= 0)
        return util_json_error(d, root, err, STRATA_ERR_PARSE,
                               "copper, fiber and cpo figures must not be negative");
    return STRATA_OK;
}

strata_status_t strata_fabric_catalog_load(const char *path, strata_fabric_catalog_t *c,
                                           strata_error_t *err)
{
    char def[1024];
    if (!path) snprintf(def, sizeof(def), "%s/fabric.json", strata_data_dir()), path = def;
    util_json_doc_t *d = NULL;
    strata_status_t st = util_json_load_file(path, &d, err);
    if (st) return st;
    memset(c, 0, sizeof(*c));
    st = read_catalog(d, c, err);
    util_json_doc_destroy(d);
    return st;
}

const char *strata_fabric_switch_for(const strata_fabric_catalog_t *c, double gbps)
{
    for (int i = 0; i < c->nswitches; i++)
        if (c->switches[i].gbps >= gbps * 0.999) return c->switches[i].id;
    return NULL;
}

static const strata_fabric_part_t *find(const strata_fabric_part_t *p, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(p[i].id, id)) return &p[i];
    return NULL;
}

/* One tier of n links: copper (tier 1) or two pluggables per link. */
static void tier(strata_fabric_tier_t *t, long switches, long links, bool optical, double w_end)
{
    t->switches = switches, t->links = links, t->cables = links, t->optical = optical;
    t->transceivers = optical ? 2 * links : 0;
    t->watts = 2.0 * links * w_end;
}

strata_status_t strata_fabric_size(const strata_fabric_catalog_t *c, const char *sw, long n,
                                   strata_fabric_t *f, strata_error_t *err)
{
    const strata_fabric_part_t *s = find(c->switches, c->nswitches, sw);
    memset(f, 0, sizeof(*f));
    if (!s)
        return strata_error_set(err, STRATA_ERR_INVALID, "fabric: no switch '%s' in the catalog",
                                sw);
    const strata_fabric_part_t *o = NULL;
    for (int i = 0; i < c->noptics && !o; i++)
        if (c->optics[i].gbps >= s->gbps * 0.999) o = &c->optics[i];
    if (!o)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "fabric: no transceiver of %.0f Gb/s in the catalog", s->gbps);
    long k = s->ports, h = k / 2;
    if (n < 1 || n > k * k * k / 4)
        return strata_error_set(err, STRATA_ERR_RANGE,
                                "fabric: %ld endpoints need more than 3 "
                                "tiers of radix-%ld switches (at most %ld)",
                                n, k, k * k * k / 4);
    f->endpoints = n, f->radix = (int)k, f->port_gbps = s->gbps;
    snprintf(f->switch_id, sizeof(f->switch_id), "%s", s->id);
    snprintf(f->optic_id, sizeof(f->optic_id), "%s", o->id);
    long leaves = (n + h - 1) / h;
    if (n <= k) {
        f->tiers = 1;
        tier(&f->tier[0], 1, n, false, c->copper_w);
    } else if (n <= k * k / 2) {
        f->tiers = 2;
        tier(&f->tier[0], leaves, n, false, c->copper_w);
        tier(&f->tier[1], (leaves + 1) / 2, leaves * h, true, o->watts);
    } else {
        f->tiers = 3;
        tier(&f->tier[0], leaves, n, false, c->copper_w);
        tier(&f->tier[1], leaves, leaves * h, true, o->watts);
        tier(&f->tier[2], (leaves + 1) / 2, leaves * h, true, o->watts);
    }
    double cpo_end = s->gbps * 1e9 * c->cpo_pj_bit * 1e-12, cpo_w = 0;
    for (int i = 0; i < f->tiers; i++) {
        const strata_fabric_tier_t *t = &f->tier[i];
        f->switches += t->switches;
        f->optics_w += t->watts;
        cpo_w += t->optical ? t->transceivers * cpo_end : t->watts;
    }
    f->switch_w = f->switches * s->watts;
    f->total_w = f->switch_w + f->optics_w;
    f->w_per_endpoint = f->total_w / n;
    f->cpo_w_per_endpoint = (f->switch_w + cpo_w) / n;
    f->diameter = 2 * f->tiers - 1;
    f->latency_ns = f->diameter * s->hop_ns + 2 * c->copper_m * c->copper_ns_m +
                    (2.0 * f->tiers - 2) * c->fiber_m * c->fiber_ns_m;
    return STRATA_OK;
}
