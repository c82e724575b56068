/*
 * strata/coherence.h — the coherence layer: CXL.io, CXL.mem and CXL.cache
 * as protocols over a CXL link (flits, slots, efficiency per message
 * class), and what a load, a store and a cache-line ownership transfer
 * cost in latency and bandwidth across the memory tiers of a server:
 * local DRAM, a remote socket, a CXL-attached expander, memory behind CXL
 * switches (pooling), and a coherent line two agents write in turn.
 *
 * Part of the link module (src/link/coherence.c): it prices protocols on
 * one link kind and knows nothing of topologies (DESIGN.md: link owns
 * "coherence protocols (CXL.io/.mem/.cache flits, line transfers)").
 *
 * Flits (CXL 2.0 spec ch. 4.2, via the CXL link-layer notes cited in
 * docs/coherence.md). 68 B flit (CXL 1.1/2.0, PCIe 5.0 PHY): 2 B protocol
 * id + 4 slots of 16 B (slot 0 the header slot) + 2 B CRC. 256 B flit
 * (CXL 3.x, PCIe 6.0 PHY): 2 B header, a 14 B header slot, 14 generic
 * 16 B slots, 2 B credit return, 8 B CRC, 6 B FEC. A 64 B cache line of
 * data fills 4 generic slots; each protocol message (request, response,
 * data header) is counted as one slot (strata's assumption: the slot
 * formats pack some messages in pairs, so one per slot is the upper bound
 * of the header cost). CXL.io carries PCIe TLPs (24 B of framing, header
 * and LCRC per TLP, the catalog's PCIe packet fields) inside the flits.
 */
#ifndef STRATA_COHERENCE_H
#define STRATA_COHERENCE_H

#include "strata/common.h"
#include "strata/link.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, text) — message classes priced on a CXL link. */
#define STRATA_CXL_CLASS_MAP(X)                                                                    \
    X(MEM_READ, "CXL.mem read (MemRd -> MemData)")                                                 \
    X(MEM_WRITE, "CXL.mem write (MemWr + data -> Cmp)")                                            \
    X(CACHE_OWN, "CXL.cache ownership (RdOwn -> GO + data)")                                       \
    X(IO_DMA, "CXL.io DMA write (PCIe TLP)")

typedef enum {
#define STRATA_CXL_CLASS_ENUM(name, text) STRATA_CXL_##name,
    STRATA_CXL_CLASS_MAP(STRATA_CXL_CLASS_ENUM)
#undef STRATA_CXL_CLASS_ENUM
        STRATA_CXL_CLASS_COUNT
} strata_cxl_class_t;

STRATA_API const char *strata_cxl_class_str(strata_cxl_class_t c);

/* One message class on one CXL link, for `bytes` of data (a multiple of
 * 64 B lines; 64 is one line). */
typedef struct strata_cxl_msg {
    int flit_bytes;     /* 68 or 256 */
    double slot_wire;   /* wire bytes per 16 B slot, flit overhead shared */
    int req_slots;      /* slots the requester sends (headers + data) */
    int rsp_slots;      /* slots the responder sends */
    double req_wire;    /* bytes on the wire, request direction */
    double rsp_wire;    /* bytes on the wire, response direction */
    double efficiency;  /* data / wire bytes on the direction that carries the data */
    double data_bw_dir; /* B/s of data one direction of one link streams in this class */
} strata_cxl_msg_t;

/* Price class c for `bytes` (64 .. 2^20, a multiple of 64) on CXL link l
 * (category "CXL": cxl1, cxl2, cxl3). A link that is not CXL-capable is
 * ERR_INVALID with a message naming it and its category. */
STRATA_API strata_status_t strata_cxl_message(const strata_link_t *l, strata_cxl_class_t c,
                                              double bytes, strata_cxl_msg_t *out,
                                              strata_error_t *err);

/* CXL.mem reads and writes at once, `reads` lines read for every `writes`
 * lines written (Intel MLC's "2:1 reads-writes" is 2, 1), each line one
 * MemRd -> MemData or MemWr + data -> Cmp (strata_cxl_message's slot
 * counts): the request direction carries reads' requests and writes'
 * headers and data, the response direction reads' headers and data and
 * writes' completions; the busier direction bounds the mix. Writes the
 * data rate (B/s, reads and writes together) of one link of l with
 * `lanes` lanes (0 = the catalog's width) into *bw_p. reads, writes >= 0,
 * not both 0. Errors as strata_cxl_message, ERR_INVALID for a bad mix. */
STRATA_API strata_status_t strata_cxl_mix_bw(const strata_link_t *l, int lanes, double reads,
                                             double writes, double *bw_p, strata_error_t *err);

/* ==== Memory tiers: load, store, ownership ==== */

/* X(name, text) — where a cache line lives, as seen from a core. */
#define STRATA_COH_TIER_MAP(X)                                                                     \
    X(LOCAL, "local DRAM")                                                                         \
    X(REMOTE_SOCKET, "remote socket DRAM")                                                         \
    X(CXL_EXPANDER, "CXL expander")                                                                \
    X(CXL_POOL, "CXL pool (behind switches)")                                                      \
    X(PINGPONG_SOCKET, "line written in turn, two cores of one socket")                            \
    X(PINGPONG_REMOTE, "line written in turn, two sockets")                                        \
    X(PINGPONG_CXL, "line written in turn, host and CXL.cache device")

typedef enum {
#define STRATA_COH_TIER_ENUM(name, text) STRATA_COH_##name,
    STRATA_COH_TIER_MAP(STRATA_COH_TIER_ENUM)
#undef STRATA_COH_TIER_ENUM
        STRATA_COH_TIER_COUNT
} strata_coh_tier_t;

STRATA_API const char *strata_coh_tier_str(strata_coh_tier_t t);

/* The server the tiers are priced on. */
typedef struct strata_coh_server {
    const strata_link_t *dram;   /* a memory channel kind (ddr5-4800), required */
    int channels;                /* per socket, >= 1 */
    const strata_link_t *socket; /* socket link kind (upi2), NULL = single socket */
    int socket_links;            /* links between the two sockets, >= 1 when socket set */
    const strata_link_t *cxl;    /* CXL link kind of the expander (cxl2), NULL = none */
    int cxl_lanes;               /* lanes of the expander's link (0 = the catalog's) */
    int switches;                /* CXL switch levels in front of the pool (>= 1 for POOL) */
} strata_coh_server_t;

/* One tier: a load's latency (load-to-use), a store's, an ownership
 * transfer's, and the bandwidth reads stream at; how says where each
 * figure comes from. */
typedef struct strata_coh_figures {
    double load_s, store_s, own_s;
    double read_bw; /* B/s a socket's cores stream from the tier */
    char how[200];
} strata_coh_figures_t;

/* Figures of tier t on server s. ERR_INVALID for a tier the server does
 * not have (a remote socket on one socket, CXL without a CXL link) or a
 * CXL kind that is not CXL. */
STRATA_API strata_status_t strata_coh_tier(const strata_coh_server_t *s, strata_coh_tier_t t,
                                           strata_coh_figures_t *out, strata_error_t *err);

/* ==== A CXL expander's load, hop by hop ==== */

/* One part of a CXL.mem load's load-to-use latency, with its source. */
typedef struct strata_cxl_load_part {
    const char *what;
    double s;
    const char *source;
} strata_cxl_load_part_t;

#define STRATA_CXL_LOAD_PARTS 6

/* A CXL.mem load of one 64 B line from an expander on server s behind
 * `switches` CXL switch levels, summed from parts that each carry a public
 * source (coherence.c): the host's on-die path (the local DRAM load less
 * its DRAM access), the CXL interface of both ports in each direction, the
 * flits on the wire at the link's width, each switch traversal, and the
 * device's DRAM access. What no public per-hop figure covers (the device
 * controller between its port and its DDR controller, retimers) is not in
 * the sum; `missing` names it. The sum is a lower bound of a real device's
 * load, not the tier's load (strata_coh_tier keeps the catalog's figure). */
typedef struct strata_cxl_load {
    int nparts;
    strata_cxl_load_part_t part[STRATA_CXL_LOAD_PARTS];
    double total_s;
    const char *missing;
} strata_cxl_load_t;

/* Errors as strata_coh_tier's CXL expander tier; switches 0..8. */
STRATA_API strata_status_t strata_cxl_load_parts(const strata_coh_server_t *s, int switches,
                                                 strata_cxl_load_t *out, strata_error_t *err);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_COHERENCE_H */
