/*
 * fz_boot.c — the start-up's frame readers (src/comm/bootstrap.c, included
 * for its static functions): rank 0's HELLO check, a rank's CHALLENGE/PROOF
 * handshake and its WELCOME reader, the last two fed through a socket pair.
 *
 * Input: byte 0 chooses what (bits 0-1: 0/3 HELLO, 1 WELCOME, 2 handshake),
 * whether to replace the frame's MAC by the right one (bit 2: so the checks
 * behind the MAC are reached too), and the communicator's size (bits 3-7:
 * 2..8); the rest is the frame. Invariants: an accepted HELLO names a rank
 * in 1..size-1 and leaves its host NUL-terminated; an accepted WELCOME
 * leaves a NUL-terminated name shorter than the buffer; a wrong MAC is never
 * accepted.
 */
#include "bootstrap.c" /* src/comm/; first: it sets _GNU_SOURCE */
#include "fuzz.h"

#define KEY "0123456789abcdef0123456789abcdef"

static void fuzz_hello(int size, bool fix, const uint8_t *d, size_t n)
{
    strata_comm_t c = {.size = size};
    int32_t pids[8] = {0};
    int fds[8];
    char hosts[8][HOST_LEN];
    unsigned char ns[8][NONCE_LEN], nc[8][NONCE_LEN], non[NONCE_LEN], b[HELLO_LEN] = {0};
    c.pids = pids;
    for (int i = 0; i < 8; i++)
        fds[i] = -1;
    fds[1] = 99; /* rank 1 is already connected: a second one must be refused */
    memset(non, 0x33, NONCE_LEN);
    memcpy(b, d, n < HELLO_LEN ? n : HELLO_LEN);
    if (fix) comm_boot_mac(KEY, COMM_BOOT_LABEL_HELLO, non, NULL, b, HELLO_BODY, b + HELLO_BODY);
    boot_server_t s = {.c = &c, .token = KEY, .fds = fds, .hosts = hosts, .ns = ns, .nc = nc};
    const char *why = "";
    int r = parse_hello(&s, non, b, &why);
    if (r < 0) return;
    if (!fix) fuzz_fail("a HELLO with an unchecked MAC was accepted");
    if (r < 2 || r >= size) fuzz_fail("HELLO accepted for rank %d of %d", r, size);
    if (memchr(hosts[r], 0, HOST_LEN) == NULL) fuzz_fail("host not NUL-terminated");
}

/* Give the WELCOME in buf (len bytes) its right MAC when its length fields
 * say where the MAC goes and the input reaches that far. */
static void fix_welcome(int size, const unsigned char ns[NONCE_LEN],
                        const unsigned char nc[NONCE_LEN], unsigned char *buf, size_t len)
{
    size_t at = 12 + (size_t)size * REC_LEN;
    if (len < at + 4) return;
    size_t end = at + 4 + get32(buf + at);
    if (end <= at + 4 || len < end + MAC_LEN) return;
    comm_boot_mac(KEY, COMM_BOOT_LABEL_WELCOME, ns, nc, buf, end, buf + end);
}

/* sv[1] reads d then the end; what it sends goes to sv[0] (both closed by
 * the caller). */
static void feed(const uint8_t *d, size_t n, int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) abort();
    int sz = 1 << 18;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    if (n && write(sv[0], d, n) != (ssize_t)n) abort();
    shutdown(sv[0], SHUT_WR);
}

static void fuzz_welcome(int size, bool fix, const uint8_t *d, size_t n)
{
    unsigned char ns[NONCE_LEN], nc[NONCE_LEN];
    memset(ns, 0x44, NONCE_LEN), memset(nc, 0x55, NONCE_LEN);
    unsigned char *buf = calloc(n + 1, 1);
    if (!buf) abort();
    if (n) memcpy(buf, d, n);
    if (fix) fix_welcome(size, ns, nc, buf, n);
    int sv[2];
    feed(buf, n, sv);
    free(buf);
    strata_comm_t c = {.size = size, .rank = 1};
    int32_t pids[8] = {0};
    c.pids = pids;
    char name[128];
    unsigned char h[12];
    const char *why = "";
    strata_status_t st =
        sock_io(sv[1], h, 12, util_now() + 5, false, &why)
            ? STRATA_ERR_PEER
            : read_welcome(&c, sv[1], h, util_now() + 5, KEY, ns, nc, name, sizeof(name), NULL);
    close(sv[0]), close(sv[1]);
    if (st != STRATA_OK) return;
    if (!fix) fuzz_fail("a WELCOME with an unchecked MAC was accepted");
    if (memchr(name, 0, sizeof(name)) == NULL) fuzz_fail("name not NUL-terminated");
}

static void fuzz_handshake(int size, const uint8_t *d, size_t n)
{
    int sv[2];
    feed(d, n, sv);
    strata_comm_t c = {.size = size, .rank = 1};
    unsigned char ns[NONCE_LEN], nc[NONCE_LEN];
    const char *why = "";
    /* the PROOF covers a fresh random nonce: no input can carry it */
    if (handshake(&c, sv[1], KEY, util_now() + 5, ns, nc, &why, NULL) == JOIN_OK)
        fuzz_fail("a handshake without the right PROOF succeeded");
    close(sv[0]), close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 60000) return 0;
    int what = data[0] & 3, n = 2 + (data[0] >> 3) % 7;
    bool fix = data[0] & 4;
    if (what == 1)
        fuzz_welcome(n, fix, data + 1, size - 1);
    else if (what == 2)
        fuzz_handshake(n, data + 1, size - 1);
    else
        fuzz_hello(n, fix, data + 1, size - 1);
    return 0;
}
