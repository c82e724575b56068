/*
 * fz_tcp.c — the TCP transport's frame header check (comm_tcp_frame_parse,
 * src/comm/transport_tcp.c): what a receiver runs on every 48 bytes a peer
 * on another host sends before it reads a payload byte; and the failure
 * notice's (comm_tcp_notice_parse), which it runs where those bytes begin
 * "STRX".
 *
 * Input: cid (4 bytes), expected sequence (8), receive buffer capacity (3),
 * then the header (zero-padded to 48). Invariants: an accepted header has
 * the magic, the expected communicator and sequence, a length within the
 * buffer and the message, a call whose fields are in range, and building it
 * again gives the same 48 bytes (nothing is accepted that the sender could
 * not have written). The same bytes as a notice, with the capacity's low
 * byte as the communicator's size (1..64): accepted only with its magic,
 * the communicator, a rank below the size and a known cause, rebuilt to
 * the same 48 bytes; never accepted by both checks.
 */
#include "comm.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 15) return 0;
    uint32_t cid = 0;
    uint64_t seq = 0;
    size_t cap = 0;
    for (int i = 3; i >= 0; i--)
        cid = cid << 8 | data[i];
    for (int i = 11; i >= 4; i--)
        seq = seq << 8 | data[i];
    for (int i = 14; i >= 12; i--)
        cap = cap << 8 | data[i];
    unsigned char h[COMM_TCP_HDR] = {0}, again[COMM_TCP_HDR];
    memcpy(h, data + 15, size - 15 < COMM_TCP_HDR ? size - 15 : COMM_TCP_HDR);
    int size_n = (int)(cap & 0xff) % COMM_MAX_SIZE + 1, rank = -1;
    unsigned reason = 0;
    const char *nwhy = NULL;
    bool notice = comm_tcp_notice_parse(h, cid, size_n, &rank, &reason, &nwhy) == 0;
    if (notice) {
        if (!comm_tcp_is_notice(h)) fuzz_fail("a notice accepted without its magic");
        if (rank < 0 || rank >= size_n || reason < COMM_FAIL_DIED || reason > COMM_FAIL_MISMATCH)
            fuzz_fail("a notice accepted with rank %d of %d, cause %u", rank, size_n, reason);
        comm_tcp_notice_build(again, cid, rank, reason);
        if (memcmp(again, h, COMM_TCP_HDR) != 0) fuzz_fail("a notice a sender cannot write");
    } else if (!nwhy || !*nwhy) {
        fuzz_fail("a refused notice without a reason");
    }
    comm_tcp_frame_t f;
    const char *why = NULL;
    if (comm_tcp_frame_parse(h, cid, seq, cap, &f, &why) != 0) {
        if (!why || !*why) fuzz_fail("a refused header without a reason");
        return 0;
    }
    if (memcmp(h, "STRF", 4) != 0) fuzz_fail("accepted without the magic");
    if (notice) fuzz_fail("accepted as a frame and as a notice");
    if (f.cid != cid || f.seq != seq) fuzz_fail("accepted another communicator or sequence");
    if (f.len > cap || f.len > f.msg_bytes)
        fuzz_fail("accepted len %u (cap %zu, message %llu)", f.len, cap,
                  (unsigned long long)f.msg_bytes);
    if (f.tag.sig.dtype >= STRATA_DTYPE_COUNT || f.tag.sig.op >= STRATA_OP_COUNT ||
        f.tag.sig.coll > COMM_SIG_P2P)
        fuzz_fail("accepted a call out of range");
    comm_tcp_frame_build(again, &f);
    if (memcmp(again, h, COMM_TCP_HDR) != 0) fuzz_fail("accepted bytes a sender cannot write");
    return 0;
}
