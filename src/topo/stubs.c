/*
 * stubs.c — TEMPORARY: placeholders for the parts of strata/topo.h not yet
 * implemented, so dependents can compile against the header. Each function
 * here moves to its own file (route.c, metrics.c, bisect.c, dot.c, spec.c,
 * build_*.c) as it lands.
 */
#include "topo.h"

#define STUB(...) return strata_error_set(err, STRATA_ERR_UNSUPPORTED, "not implemented yet")

strata_status_t strata_topo_build_ring(int32_t n, const strata_topo_linkspec_t *link,
                                       const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                       strata_error_t *err) { STUB(); }
strata_status_t strata_topo_build_mesh(int ndims, const int32_t *dims,
                                       const strata_topo_linkspec_t *link,
                                       const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                       strata_error_t *err) { STUB(); }
strata_status_t strata_topo_build_torus(int ndims, const int32_t *dims,
                                        const strata_topo_linkspec_t *link,
                                        const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                        strata_error_t *err) { STUB(); }
strata_status_t strata_topo_build_full(int32_t n, const strata_topo_linkspec_t *link,
                                       const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                       strata_error_t *err) { STUB(); }
strata_status_t strata_topo_build_switch(int32_t n, const strata_topo_linkspec_t *link,
                                         const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                         strata_error_t *err) { STUB(); }
strata_status_t strata_topo_build_fattree(const strata_topo_fattree_t *ft,
                                          const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                          strata_error_t *err) { STUB(); }
strata_status_t strata_topo_build_cluster(const strata_topo_server_t *server, int32_t servers,
                                          const strata_topo_fattree_t *net, bool rail,
                                          const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                          strata_error_t *err) { STUB(); }
strata_status_t strata_topo_load_spec(const char *spec, const strata_link_catalog_t *cat,
                                      strata_topo_t **topo_p, strata_error_t *err) { STUB(); }
strata_status_t strata_topo_router_create(const strata_topo_t *topo,
                                          strata_topo_router_t **router_p,
                                          strata_error_t *err) { STUB(); }
void strata_topo_router_destroy(strata_topo_router_t *router) { (void)router; }
double strata_topo_path_count(strata_topo_router_t *router, int32_t src, int32_t dst) { return 0; }
int32_t strata_topo_hops(strata_topo_router_t *router, int32_t src, int32_t dst) { return -1; }
strata_status_t strata_topo_path(strata_topo_router_t *router, int32_t src, int32_t dst,
                                 uint64_t index, int32_t *chans, int32_t max, int32_t *n_p)
{ return STRATA_ERR_UNSUPPORTED; }
strata_status_t strata_topo_path_hash(strata_topo_router_t *router, int32_t src, int32_t dst,
                                      uint64_t seed, int32_t *chans, int32_t max, int32_t *n_p)
{ return STRATA_ERR_UNSUPPORTED; }
strata_status_t strata_topo_bisection(const strata_topo_t *topo, strata_bisect_method_t method,
                                      strata_topo_bisection_t *out, strata_error_t *err) { STUB(); }
strata_status_t strata_topo_metrics(const strata_topo_t *topo, strata_topo_metrics_t *out,
                                    strata_error_t *err) { STUB(); }
strata_status_t strata_topo_print(const strata_topo_t *topo, bool json, FILE *out,
                                  strata_error_t *err) { STUB(); }
strata_status_t strata_topo_metrics_print(const strata_topo_metrics_t *m, bool json, FILE *out,
                                          strata_error_t *err) { STUB(); }
strata_status_t strata_topo_write_dot(const strata_topo_t *topo, FILE *out,
                                      strata_error_t *err) { STUB(); }
int32_t topo_bfs(const strata_topo_t *t, int32_t src, int32_t *dist, int32_t *queue)
{
    for (int32_t v = 0; v < t->ndev; v++) dist[v] = -1;
    int32_t head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        int32_t u = queue[head++];
        for (int32_t i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
            int32_t w = t->adj_nbr[i];
            if (dist[w] < 0) dist[w] = dist[u] + 1, queue[tail++] = w;
        }
    }
    return tail;
}
