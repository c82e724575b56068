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
    double bw_bidi;         /* 2 × bw_dir (full duplex); bw_dir for shared buses */
    double device_bw_dir;   /* links × bw_dir: per-device per-direction aggregate */
    double latency;         /* typical one-way latency of one hop, seconds (0: none in catalog) */

    /* ---- added after the contract above; figures at the entry's defaults ---- */
    double lane_rate;          /* bit/s per lane after modulation (baud × bits/symbol);
                                  for vendor-figure entries the per-link bit rate */
    double pkt_dir;            /* after the packet step, before flow control */
    double eta_line;           /* line-code efficiency (1: none or not published) */
    double eta_pkt;            /* payload / wire bytes per packet at the default MTU */
    double eta_flow;           /* share left after ACK / credit / DLLP traffic */
    double mtu;                /* default MTU / MPS of the packet step, bytes (0: none) */
    double payload;            /* payload bytes per packet at that MTU */
    double wire;               /* bytes on the wire per packet at that MTU */
    int full_duplex;           /* 0 for shared buses (DDR, HBM): there bw_bidi == bw_dir,
                                  the one figure being shared by reads and writes */
    int vendor_figure;         /* 1 when the rate comes from a vendor throughput figure
                                  because the catalog has no lane facts */
    const char *modulation;    /* "NRZ", "PAM4" or "unpublished" */
    const char *line_code;     /* "128b/130b", "RS(544,514)+256b/257b", "none", ... */
    const char *packet_format; /* "PCIe TLP (non-flit)", "RoCEv2 over Ethernet (IPv4)", "none" */
    const char *latency_basis; /* where the latency figure comes from */
    const char *note;          /* topology remarks from the catalog, or "" */
    const char *signal_basis;  /* why a vendor figure / unpublished modulation is used, or "" */
    const char *packet_basis;  /* where the packet fields come from, or why there are none */
    const char *flow_basis;    /* where the flow-control share comes from, or "" */
    const char *memory;        /* scale-up links: id of the memory of the accelerator
                                  generation the link belongs to ("hbm-h100" for
                                  nvlink4), what a model assumes when a cluster
                                  records no memory; "" for other kinds */
    /* Latency split (issue 11, cause 3): `latency` is one hop over this
     * link (cable, SerDes/PHY); a path adds `switch_lat` for each switch it
     * crosses entering it over this link kind, and the largest `endpoint`
     * of its links once per message (software, doorbell, DMA completion). */
    double switch_lat; /* s, one traversal of a switch of this kind (0: none) */
    double endpoint;   /* s, endpoints' overhead, counted once per message */
} strata_link_t;

/* Load a catalog. path NULL means <strata_data_dir()>/links.json. On error
 * err holds file:line:column and what was expected. The caller owns *cat_p
 * and frees it with strata_link_catalog_destroy (NULL is a no-op). */
STRATA_API strata_status_t strata_link_catalog_load(const char *path, strata_link_catalog_t **cat_p,
                                                    strata_error_t *err);
STRATA_API void strata_link_catalog_destroy(strata_link_catalog_t *cat);
STRATA_API size_t strata_link_catalog_count(const strata_link_catalog_t *cat);
/* Entry i in file order, or NULL when out of range. */
STRATA_API const strata_link_t *strata_link_catalog_at(const strata_link_catalog_t *cat, size_t i);
/* Entry with this id (exact, case-insensitive), or NULL. */
STRATA_API const strata_link_t *strata_link_find(const strata_link_catalog_t *cat, const char *id);

/* NVLink's store packet, the packet step of every NVLink / NVSwitch entry of
 * data/links.json ("NVLink store packet"): 128 B of payload behind a header
 * flit and an address/byte-enable flit. A read request is such a packet
 * without payload, so pulling a 128-byte line costs STRATA_NVLINK_OVERHEAD
 * bytes the other way. Sources in links.json; link_catalog_test checks the
 * catalog's NVLink entries derive exactly this efficiency. */
#define STRATA_NVLINK_PAYLOAD  128.0
#define STRATA_NVLINK_OVERHEAD 32.0

/* Packet efficiency of a link kind's catalog packet step without a catalog:
 * STRATA_NVLINK_PAYLOAD / (PAYLOAD + OVERHEAD) for "nvlink*" and
 * "nvswitch*" kinds, 1 for kinds whose packets the caller does not pull
 * (the figure is already inside every catalog bw_dir; use it only for
 * request traffic). */
STRATA_API double strata_link_store_eta(const char *kind);

/* What an SM's stores get of a PCIe link. A GPU kernel writing to a peer
 * (NCCL's P2P transport: on PCIe it writes into the peer's buffer; P2P
 * read is NVLink-only, NVIDIA/nccl#512) stores at most one 128 B line per
 * packet, the NVLink store packet's payload above, whatever the fabric;
 * copy engines write at the Max Payload Size. On PCIe each such store is
 * one TLP of 128 B payload, so the link carries it at the rate derived
 * (strata_link_derive) at that payload. Returns that rate over the entry's
 * bw_dir (its default MPS): 0.9 for PCIe 1.0-5.0 at 256 B MPS (framing,
 * 4 DW header, LCRC and the DLLP share: 128/160 over 256/288); 1 for kinds
 * that are not PCIe (NVLink's 128 B store is already its bw_dir; network
 * links carry NIC packets, not SM stores), for PCIe 6.0/7.0 (flit mode
 * packs TLPs into 256 B flits; not modelled) and where the MPS is at most
 * 128 B. */
#define STRATA_SM_STORE_BYTES 128.0
STRATA_API double strata_link_sm_store_share(const strata_link_t *link);

/* ==== GPUDirect RDMA: a NIC reading GPU memory over PCIe ==== */

/* When a NIC sends from GPU memory (GPUDirect RDMA) it reads it across the
 * PCIe link: it sends read requests (MRd, a 4 DW header for 64-bit
 * addresses, PCIe Base Spec 2.2.7) of at most the Max Read Request Size
 * one way, and the GPU answers each with completions (CplD, a 3 DW header,
 * 2.2.9) of at most the Max Payload Size the other way, split only at Read
 * Completion Boundaries (RCB). Each TLP pays the link's framing and LCRC
 * and its share of Ack/UpdateFC DLLPs (the catalog entry's packet and
 * flow-control facts). */
typedef struct strata_link_gdr {
    double mps, mrrs, rcb; /* bytes; rcb 0: completions not split below MPS */
    double cpl;            /* payload of one completion, B */
    double cpl_per_req;    /* completions per read request */
    double cpl_wire;       /* wire bytes of one completion, DLLP share included */
    double req_wire;       /* wire bytes of one read request, DLLP share included */
    double eta_read;       /* data share of the completion direction */
    double req_per_byte;   /* request wire bytes the other way per byte read */
    double line_dir;       /* the link's rate after the line code, B/s */
    double bw_dir;         /* read throughput, B/s: line_dir x eta_read */
    char how_req[200], how_cpl[200];
} strata_link_gdr_t;

/* The read path of a PCIe kind (non-flit, Gen1-5) with `lanes` lanes (0:
 * the entry's), Max Payload Size mps (0: the entry's MTU), Max Read Request
 * Size mrrs (0: 512 B, the spec's default) and rcb (0: none). ERR_RANGE on
 * sizes outside 128..4096 that are not powers of two (rcb 64 or 128),
 * ERR_UNSUPPORTED for kinds that are not non-flit PCIe. */
STRATA_API strata_status_t strata_link_gdr_read(const strata_link_t *link, int lanes, double mps,
                                                double mrrs, double rcb, strata_link_gdr_t *g_p,
                                                strata_error_t *err);

/* ==== What a collective library's protocols leave of a link ==== */

/* NCCL's protocols (shared/reference/nccl.md §2.5: src/device/prims_*.h,
 * src/include/device.h), the last step of a collective's derivation: the
 * share of the bytes a protocol moves that are data. Index = NCCL's
 * protocol number: 0 LL, 1 LL128, 2 Simple. */
typedef struct strata_link_protocol {
    const char *name; /* "LL", "LL128", "Simple" */
    double eta;       /* data bytes / bytes moved */
    const char *how;  /* the arithmetic in words */
} strata_link_protocol_t;

#define STRATA_LINK_PROTOCOLS 3
/* Protocol i (0 <= i < STRATA_LINK_PROTOCOLS), or NULL. Static storage. */
STRATA_API const strata_link_protocol_t *strata_link_protocol(int i);

/* One message's latency over `switches` switches of this kind: switches + 1
 * hops, the traversals, and the endpoints' overhead once. */
STRATA_API double strata_link_message_latency(const strata_link_t *l, int switches);

/* ==== The latency hierarchy ==== */

/* A typical one-way latency range from links.md "Latency hierarchy" and the
 * switch-hop figures (kernel launch, NVLink P2P, PCIe DMA, RDMA, TCP,
 * CXL.mem, DDR, switch hops). Ids: gpu-kernel-launch, nvlink-p2p, pcie-dma,
 * rdma-ib, rdma-roce, tcp-kernel, cxl-mem-load, ddr-load, eth-switch-hop,
 * ib-switch-hop. Strings are owned by the catalog. */
typedef struct strata_latency {
    const char *id;
    const char *what;
    const char *source;
    const char *confidence; /* "H", "M" or "L" */
    double low, high;       /* seconds */
} strata_latency_t;

STRATA_API size_t strata_link_latency_count(const strata_link_catalog_t *cat);
/* Entry i in file order, or NULL when out of range. */
STRATA_API const strata_latency_t *strata_link_latency_at(const strata_link_catalog_t *cat,
                                                          size_t i);
/* Entry with this id (case-insensitive), or NULL. */
STRATA_API const strata_latency_t *strata_link_latency_find(const strata_link_catalog_t *cat,
                                                            const char *id);

/* ==== Derivation, layer by layer ==== */

/* Options of a derivation; 0 means "the entry's default". payload and mtu
 * are alternatives (payload = mtu − headers counted inside the MTU, e.g.
 * IPv4+TCP for TCP; for PCIe the MTU is the Max Payload Size, for IB and
 * RoCE the path MTU, both payload-only). */
typedef struct strata_link_opts {
    int lanes;      /* lanes per link, e.g. 4 for a PCIe x4 slot */
    double payload; /* payload bytes per packet */
    double mtu;     /* MTU bytes */
} strata_link_opts_t;

#define STRATA_LINK_STEP_MAX 6

/* One step of the derivation: what it is, the arithmetic in words, its
 * efficiency and the per-direction rate of one link after it (B/s). */
typedef struct strata_link_step {
    char what[32];
    char how[256];
    double eta;
    double bw_dir;
} strata_link_step_t;

typedef struct strata_link_derivation {
    int lanes;
    double raw_dir, line_dir, pkt_dir, bw_dir; /* B/s, one link, one direction */
    double eta_line, eta_pkt, eta_flow;
    double mtu, payload, wire; /* bytes per packet (0: no packet step) */
    size_t nsteps;
    strata_link_step_t step[STRATA_LINK_STEP_MAX];
} strata_link_derivation_t;

/* Derive the figures of one catalog entry under opts (NULL = defaults):
 * raw signalling → line code → packet framing → flow control. Fails with
 * STRATA_ERR_RANGE naming the limit when lanes < 1 or the MTU/payload is
 * outside the entry's packet format (e.g. RoCE 256..4096). Pure; thread-safe. */
STRATA_API strata_status_t strata_link_derive(const strata_link_t *link,
                                              const strata_link_opts_t *opts,
                                              strata_link_derivation_t *d_p, strata_error_t *err);

/* ==== Data-link models (src/link/flowctl.c, retx.c, pfc.c) ==== */
/* Rates in B/s, sizes in bytes, times in seconds. Pure functions. */

/* Propagation delay in a cable, 5 ns/m (links.md "Formula used"). */
#define STRATA_LINK_PROP_S_PER_M 5e-9

/* Round trip that credits (or ACKs) travel over length_m of cable: two
 * propagation delays plus serialising one max packet each way at rate. */
STRATA_API double strata_link_rtt(double rate, double length_m, double wire_bytes);
/* Credit-based flow control (PCIe, InfiniBand per VL): a sender may have at
 * most buffer_bytes unacknowledged, so sustained rate =
 * min(rate, buffer_bytes / rtt). */
STRATA_API double strata_credit_rate(double rate, double buffer_bytes, double rtt);
/* Receive buffer (credits) needed to run at line rate: rate × rtt. */
STRATA_API double strata_credit_buffer(double rate, double rtt);

/* Probability a packet of wire_bytes holds at least one bit error at the
 * given bit-error rate: 1 − (1 − ber)^(8 × wire_bytes). */
STRATA_API double strata_retx_per(double ber, double wire_bytes);
/* Packets in flight over one round trip (the go-back-N window): 1 + ⌈rate × rtt / wire⌉. */
STRATA_API double strata_retx_window(double rate, double rtt, double wire_bytes);
/* Goodput fraction under go-back-N with packet error rate per and window
 * N packets: (1 − p) / (1 − p + N p). */
STRATA_API double strata_retx_gbn(double per, double window);
/* Goodput fraction under selective repeat (window ≥ bandwidth-delay
 * product): 1 − p. */
STRATA_API double strata_retx_sr(double per);

/* Duration of a PFC/PAUSE of `quanta` (IEEE 802.1Qbb / 802.3x: one quantum
 * = 512 bit times at the port rate). */
STRATA_API double strata_pfc_pause_time(double rate, double quanta);
/* Throughput of a port receiving pauses_per_s pauses of `quanta` each:
 * rate × max(0, 1 − pauses_per_s × pause_time). */
STRATA_API double strata_pfc_throughput(double rate, double quanta, double pauses_per_s);
/* Time a PFC receiver and sender take to react to a pause beyond the cable
 * delay (MAC/PHY processing, finishing the frame on the wire). An assumption
 * of strata: IEEE 802.3 Annex 31B bounds it per port speed. */
#define STRATA_PFC_RESPONSE_S 1e-6

/* Headroom a PFC receiver needs above its XOFF threshold so that nothing is
 * dropped: the bytes still arriving while the pause travels back and takes
 * effect: rate × (2 × length × 5 ns/m + response) + 2 × max frame + PFC frame. */
STRATA_API double strata_pfc_headroom(double rate, double length_m, double max_frame);

/* Ids of catalog entries close to a misspelt id (edit distance ≤ 3 or a
 * common prefix), written into buf comma-separated; returns buf. */
STRATA_API const char *strata_link_suggest(const strata_link_catalog_t *cat, const char *id,
                                           char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_LINK_H */
