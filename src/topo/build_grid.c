/*
 * build_grid.c — builders of direct networks and the single switch: ring,
 * 2D/3D mesh and torus, fully connected, one switch.
 *
 * Each builder records the shape (so route.c can route by dimension order
 * instead of BFS) and, where a closed form is known, the bisection
 * bandwidth with its formula (Dally & Towles, "Principles and Practices of
 * Interconnection Networks", 2004, §3.3: a k-ary n-cube of even k has
 * bisection 2·N/k channels per direction; a mesh N/k). Endpoint ranks are
 * the device ids: row-major with dimension 0 fastest.
 */
#define _POSIX_C_SOURCE 200809L
#include "topo.h"

#include <stdarg.h>
#include <string.h>

void topo_shape_set_closed(topo_shape_t *s, double bw, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->closed_how, sizeof(s->closed_how), fmt, ap);
    va_end(ap);
    s->has_closed = true;
    s->closed_bw = bw;
}

/* Figures of one link of spec, for closed forms: mult × bw_dir. */
static strata_status_t spec_bw(const strata_topo_t *t, const strata_topo_linkspec_t *link,
                               double *bw_p, strata_error_t *err)
{
    const char *kind;
    int32_t mult;
    double bw, lat;
    strata_status_t st = topo_spec_resolve(t, link, &kind, &mult, &bw, &lat, err);
    if (st == STRATA_OK) *bw_p = bw * mult;
    return st;
}

static strata_status_t add_accels(strata_topo_t *t, int32_t n, strata_error_t *err)
{
    strata_status_t st = topo_reserve_devices(t, n, err);
    for (int32_t i = 0; i < n && st == STRATA_OK; i++) {
        char name[32];
        snprintf(name, sizeof(name), "gpu%d", (int)i);
        st = strata_topo_add_device(t, STRATA_DEV_ACCEL, 0, -1, name, NULL, err);
    }
    return st;
}

/* Finish t and hand it out, or destroy it. */
static strata_status_t done(strata_topo_t *t, strata_status_t st, strata_topo_t **topo_p,
                            strata_error_t *err)
{
    if (st == STRATA_OK) st = strata_topo_finish(t, err);
    if (st) {
        strata_topo_destroy(t);
        return st;
    }
    *topo_p = t;
    return STRATA_OK;
}

/* ==== Grids ==== */

static strata_status_t grid_links(strata_topo_t *t, const topo_shape_t *s,
                                  const strata_topo_linkspec_t *link, strata_error_t *err)
{
    int32_t n = t->ndev, stride = 1;
    strata_status_t st = STRATA_OK;
    for (int d = 0; d < s->ndims && st == STRATA_OK; d++) {
        int32_t k = s->dims[d];
        for (int32_t v = 0; v < n && st == STRATA_OK; v++) {
            int32_t x = (v / stride) % k;
            if (x + 1 < k)
                st = strata_topo_add_link(t, v, v + stride, link, NULL, err);
            else if (s->wrap[d])
                st = strata_topo_add_link(t, v, v - (k - 1) * stride, link, NULL, err);
        }
        stride *= k;
    }
    return st;
}

/* Closed form: cut across an even dimension d crosses N/k_d rows of links,
 * 2 per row when wrapped. Stated only when every dimension is even (or for
 * a ring), where it is the known minimum over balanced cuts. */
static void grid_closed(topo_shape_t *s, int32_t n, double bw)
{
    if (s->ndims == 1 && s->wrap[0]) {
        topo_shape_set_closed(s, 2 * bw, "ring: 2 links cut, 2 x %.4g GB/s", bw / 1e9);
        return;
    }
    double best = -1;
    int bd = -1;
    for (int d = 0; d < s->ndims; d++) {
        if (s->dims[d] % 2) return;
        double c = (double)(n / s->dims[d]) * (s->wrap[d] ? 2 : 1) * bw;
        if (best < 0 || c < best) best = c, bd = d;
    }
    topo_shape_set_closed(s, best, "%s: cut across dimension %d of size %d: %s%d x %.4g GB/s",
                          s->wrap[bd] ? "torus" : "mesh", bd, (int)s->dims[bd],
                          s->wrap[bd] ? "2 x " : "", (int)(n / s->dims[bd]), bw / 1e9);
}

static strata_status_t build_grid(const char *what, int ndims, const int32_t *dims, bool wrap,
                                  const strata_topo_linkspec_t *link,
                                  const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                  strata_error_t *err)
{
    if (ndims < 1 || ndims > 3)
        return strata_error_set(err, STRATA_ERR_INVALID, "%s: %d dimensions (1 to 3 allowed)", what,
                                ndims);
    char name[96];
    int off = snprintf(name, sizeof(name), "%s:", what);
    int64_t n = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 2 || dims[d] > 1 << 20)
            return strata_error_set(err, STRATA_ERR_INVALID,
                                    "%s: dimension %d has size %d (2 to 2^20 allowed)", what, d,
                                    (int)dims[d]);
        n *= dims[d];
        off += snprintf(name + off, sizeof(name) - (size_t)off, "%s%d", d ? "x" : "", (int)dims[d]);
    }
    if (n > 1 << 24)
        return strata_error_set(err, STRATA_ERR_RANGE, "%s: %lld accelerators (at most 2^24)", what,
                                (long long)n);
    strata_topo_t *t;
    strata_status_t st = strata_topo_create(name, cat, &t, err);
    if (st) return st;
    topo_shape_t *s = &t->shape;
    s->kind = TOPO_SHAPE_GRID;
    s->ndims = ndims;
    s->sym_classes = wrap ? 1 : 0; /* a torus is vertex-transitive */
    for (int d = 0; d < ndims; d++) {
        s->dims[d] = dims[d];
        s->wrap[d] = wrap && dims[d] >= 3;
    }
    double bw = 0;
    st = spec_bw(t, link, &bw, err);
    if (!st) st = add_accels(t, (int32_t)n, err);
    if (!st) st = grid_links(t, s, link, err);
    if (!st) grid_closed(s, (int32_t)n, bw);
    return done(t, st, topo_p, err);
}

strata_status_t strata_topo_build_ring(int32_t n, const strata_topo_linkspec_t *link,
                                       const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                       strata_error_t *err)
{
    if (n < 3)
        return strata_error_set(err, STRATA_ERR_INVALID, "ring: %d accelerators (3 or more)",
                                (int)n);
    return build_grid("ring", 1, &n, true, link, cat, topo_p, err);
}

strata_status_t strata_topo_build_mesh(int ndims, const int32_t *dims,
                                       const strata_topo_linkspec_t *link,
                                       const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                       strata_error_t *err)
{
    return build_grid("mesh", ndims, dims, false, link, cat, topo_p, err);
}

strata_status_t strata_topo_build_torus(int ndims, const int32_t *dims,
                                        const strata_topo_linkspec_t *link,
                                        const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                        strata_error_t *err)
{
    return build_grid("torus", ndims, dims, true, link, cat, topo_p, err);
}

/* ==== Fully connected and single switch ==== */

strata_status_t strata_topo_build_full(int32_t n, const strata_topo_linkspec_t *link,
                                       const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                       strata_error_t *err)
{
    if (n < 2 || n > 4096)
        return strata_error_set(err, STRATA_ERR_INVALID,
                                "full: %d accelerators (2 to 4096 allowed)", (int)n);
    char name[32];
    snprintf(name, sizeof(name), "full:%d", (int)n);
    strata_topo_t *t;
    strata_status_t st = strata_topo_create(name, cat, &t, err);
    if (st) return st;
    t->shape.kind = TOPO_SHAPE_FULL;
    t->shape.sym_classes = 1;
    double bw = 0;
    st = spec_bw(t, link, &bw, err);
    if (!st) st = add_accels(t, n, err);
    if (!st) st = topo_reserve_links(t, n * (n - 1) / 2, err);
    for (int32_t a = 0; a < n && !st; a++)
        for (int32_t b = a + 1; b < n && !st; b++)
            st = strata_topo_add_link(t, a, b, link, NULL, err);
    if (!st) {
        int32_t h = n / 2;
        topo_shape_set_closed(&t->shape, (double)h * (n - h) * bw,
                              "fully connected: %d x %d links cut, x %.4g GB/s", (int)h,
                              (int)(n - h), bw / 1e9);
    }
    return done(t, st, topo_p, err);
}

strata_status_t strata_topo_build_switch(int32_t n, const strata_topo_linkspec_t *link,
                                         const strata_link_catalog_t *cat, strata_topo_t **topo_p,
                                         strata_error_t *err)
{
    if (n < 1 || n > 1 << 24)
        return strata_error_set(err, STRATA_ERR_INVALID, "switch: %d accelerators (1 to 2^24)",
                                (int)n);
    char name[32];
    snprintf(name, sizeof(name), "switch:%d", (int)n);
    strata_topo_t *t;
    strata_status_t st = strata_topo_create(name, cat, &t, err);
    if (st) return st;
    t->shape.kind = TOPO_SHAPE_TIERED;
    t->shape.sym_classes = 1;
    double bw = 0;
    int32_t sw = -1;
    st = spec_bw(t, link, &bw, err);
    if (!st) st = add_accels(t, n, err);
    if (!st) st = strata_topo_add_device(t, STRATA_DEV_NET_SWITCH, 1, -1, "switch", &sw, err);
    for (int32_t a = 0; a < n && !st; a++)
        st = strata_topo_add_link(t, a, sw, link, NULL, err);
    if (!st)
        topo_shape_set_closed(&t->shape, (double)(n / 2) * bw,
                              "single switch: the smaller half's %d links, x %.4g GB/s",
                              (int)(n / 2), bw / 1e9);
    return done(t, st, topo_p, err);
}
