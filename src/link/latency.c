/*
 * latency.c — the latency hierarchy of the catalog: typical one-way ranges
 * for the steps a message takes (kernel launch, DMA, NVLink P2P, RDMA, TCP,
 * CXL.mem, DDR, switch hops), from links.md "Latency hierarchy" and the
 * switch-hop figures of its Ethernet and InfiniBand rows.
 *
 * They are ranges (low..high), not single figures: the sources disagree or
 * give ranges, and several are estimates (confidence L). Each link entry's
 * own `latency` is one typical figure chosen from these, with its basis.
 */
#include "link.h"

#include <string.h>

static strata_status_t parse_one(link_parse_ctx_t *c, const json_t *e, strata_latency_t *l)
{
    static const char *const keys[] = {"id",     "what",       "low_us", "high_us",
                                       "source", "confidence", NULL};
    if (!json_is_object(e)) return link_bad(c, e, "%s entry must be an object", "latencies");
    strata_status_t st = util_json_check_keys(c->doc, e, keys, c->err);
    if (st == STRATA_OK) st = link_req_str(c, e, "id", &l->id);
    if (st == STRATA_OK) st = link_req_str(c, e, "what", &l->what);
    if (st == STRATA_OK) st = link_req_str(c, e, "source", &l->source);
    if (st == STRATA_OK) st = link_req_str(c, e, "confidence", &l->confidence);
    if (st == STRATA_OK) st = link_req_num(c, e, "low_us", 0, &l->low);
    if (st == STRATA_OK) st = link_req_num(c, e, "high_us", 0, &l->high);
    if (st != STRATA_OK) return st;
    if (l->high < l->low)
        return link_bad(c, json_object_get(e, "high_us"), "field \"%s\" is below low_us",
                        "high_us");
    l->low *= 1e-6;
    l->high *= 1e-6;
    return STRATA_OK;
}

strata_status_t link_latencies_parse(link_parse_ctx_t *c, const json_t *root,
                                     strata_link_catalog_t *cat)
{
    json_t *arr = json_object_get(root, "latencies"), *e;
    size_t i;
    if (arr == NULL) return STRATA_OK;
    strata_status_t st = util_json_req_arr(c->doc, root, "latencies", &arr, c->err);
    if (st != STRATA_OK) return st;
    cat->lat = util_arena_alloc(c->arena, (json_array_size(arr) + 1) * sizeof(*cat->lat));
    if (cat->lat == NULL) return strata_error_set(c->err, STRATA_ERR_NOMEM, "out of memory");
    json_array_foreach(arr, i, e)
    {
        if ((st = parse_one(c, e, &cat->lat[i])) != STRATA_OK) return st;
        if (strata_link_latency_find(cat, cat->lat[i].id))
            return link_bad(c, json_object_get(e, "id"), "duplicate latency id \"%s\"",
                            cat->lat[i].id);
        cat->nlat = i + 1;
    }
    return STRATA_OK;
}

size_t strata_link_latency_count(const strata_link_catalog_t *cat)
{
    return cat ? cat->nlat : 0;
}

const strata_latency_t *strata_link_latency_at(const strata_link_catalog_t *cat, size_t i)
{
    return cat && i < cat->nlat ? &cat->lat[i] : NULL;
}

const strata_latency_t *strata_link_latency_find(const strata_link_catalog_t *cat, const char *id)
{
    if (cat == NULL || id == NULL) return NULL;
    for (size_t i = 0; i < cat->nlat; i++)
        if (util_str_eq_nocase(cat->lat[i].id, id)) return &cat->lat[i];
    return NULL;
}

double strata_link_message_latency(const strata_link_t *l, int switches)
{
    if (l == NULL || switches < 0) return 0;
    return (switches + 1) * l->latency + switches * l->switch_lat + l->endpoint;
}
