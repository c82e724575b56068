/*
 * strata/link.h — the physical and data-link layers: a catalog of link kinds
 * (data/links.json) whose bandwidths are derived, never typed in:
 *
 *   BW_dir = lanes × lane_rate × η_line × η_pkt × η_flow / 8
 *
 * (shared/reference/links.md, "Formula used"). Every figure is per direction
 * unless its name ends in _bidi. Units: bytes, seconds, B/s (1e9 = GB/s).
 *
 * CONTRACT for the layers above (topo, sched, sim): the catalog is loaded
 * once, entries are found by their stable id, and strata_link_t's fields
 * below keep their names and meaning. Ids (lower-case):
 *   pcie1..pcie7, cxl1, cxl2, cxl3, nvlink1..nvlink5, nvlink-c2c,
 *   nvswitch1..nvswitch4, if-mi250x, if-mi300x, hccs-910, hccs-910b,
 *   ici-v2, ici-v3, ici-v4, ici-v5e, ici-v6e, ici-v5p, gaudi1, gaudi2,
 *   eth-10g, eth-25g, eth-40g, eth-100g, eth-200g, eth-400g, eth-800g,
 *   roce-25g, roce-100g, roce-200g, roce-400g, roce-800g,
 *   ib-sdr, ib-ddr, ib-qdr, ib-fdr, ib-edr, ib-hdr, ib-ndr, ib-xdr,
 *   ddr4-3200, ddr5-4800, ddr5-6400,
 *   hbm-a100-40, hbm-a100-80, hbm-h100, hbm-h200, hbm-b200, hbm-mi300x,
 *   hbm-tpuv4, hbm-tpuv5p
 *
 * Thread safety: a loaded catalog is immutable and may be shared by threads.
 */
#ifndef STRATA_LINK_H
#define STRATA_LINK_H

#include "strata/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_link_catalog strata_link_catalog_t;

/* One link kind with its derived figures. Strings are owned by the catalog. */
typedef struct strata_link {
    const char *id;         /* stable id, e.g. "nvlink4", "ib-ndr", "pcie5" */
    const char *category;   /* "PCIe", "NVLink", "InfiniBand", "Ethernet", ... */
    const char *name;       /* human name, e.g. "NVLink 4.0 (H100/H200)" */
    const char *source;     /* where the primitive facts come from */
    const char *confidence; /* "H", "M" or "L" as in links.md */
    int lanes;              /* lanes per link (per direction) at the default width */
    int links;              /* links per device (e.g. 18 NVLink4 per H100); 1 for a port */
    double raw_dir;         /* B/s per direction of one link: lanes × lane rate / 8 */
    double line_dir;        /* after the line code */
    double bw_dir;          /* goodput per direction of one link (all overheads) */
    double bw_bidi;         /* 2 × bw_dir */
    double device_bw_dir;   /* links × bw_dir: per-device per-direction aggregate */
    double latency;         /* typical one-way latency of one hop, seconds */
} strata_link_t;

/* Load a catalog. path NULL means <strata_data_dir()>/links.json. On error
 * err holds file:line:column and what was expected. The caller owns *cat_p
 * and frees it with strata_link_catalog_destroy (NULL is a no-op). */
STRATA_API strata_status_t strata_link_catalog_load(const char *path,
                                                    strata_link_catalog_t **cat_p,
                                                    strata_error_t *err);
STRATA_API void strata_link_catalog_destroy(strata_link_catalog_t *cat);
STRATA_API size_t strata_link_catalog_count(const strata_link_catalog_t *cat);
/* Entry i in file order, or NULL when out of range. */
STRATA_API const strata_link_t *strata_link_catalog_at(const strata_link_catalog_t *cat, size_t i);
/* Entry with this id (exact, case-insensitive), or NULL. */
STRATA_API const strata_link_t *strata_link_find(const strata_link_catalog_t *cat, const char *id);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_LINK_H */
