/*
 * heap.c — the simulator's event queue: an indexed binary min-heap of flow
 * slots keyed by the time of each flow's next event.
 *
 * Every pending flow has exactly one next event (its activation, then its
 * predicted completion), so the queue holds one entry per flow and a rate
 * change moves the entry in place (O(log n)) instead of leaving stale
 * entries behind. Ties are broken by id so the order is deterministic.
 * Each entry carries its key, so a sift compares entries it already holds
 * (no second, randomly accessed key array: the heap was the engine's
 * largest cache-miss cost), and the heap is 4-ary: half the levels of a
 * binary heap, the four children of a node in one cache line. (key, id) is
 * a total order, so the pop sequence, and every result, is the binary
 * heap's.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define SIM_HEAP_ARITY 4

static inline int less(sim_hent_t a, sim_hent_t b)
{
    return a.key < b.key || (a.key == b.key && a.id < b.id);
}

static inline void place(sim_heap_t *h, uint32_t i, sim_hent_t e)
{
    h->ent[i] = e;
    h->pos[e.id] = i;
}

static void sift_up(sim_heap_t *h, uint32_t i)
{
    sim_hent_t e = h->ent[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / SIM_HEAP_ARITY;
        if (!less(e, h->ent[parent])) break;
        place(h, i, h->ent[parent]);
        i = parent;
    }
    place(h, i, e);
}

static void sift_down(sim_heap_t *h, uint32_t i)
{
    sim_hent_t e = h->ent[i];
    for (;;) {
        uint32_t c = SIM_HEAP_ARITY * i + 1;
        if (c >= h->n) break;
        uint32_t end = c + SIM_HEAP_ARITY < h->n ? c + SIM_HEAP_ARITY : h->n;
        for (uint32_t k = c + 1; k < end; k++)
            if (less(h->ent[k], h->ent[c])) c = k;
        if (!less(h->ent[c], e)) break;
        place(h, i, h->ent[c]);
        i = c;
    }
    place(h, i, e);
}

/* Make room for ids 0..max_id. */
int sim_heap_reserve(sim_heap_t *h, uint32_t max_id)
{
    uint32_t need = max_id + 1;
    if (need <= h->cap_pos) return 0;
    uint32_t cap = h->cap_pos ? h->cap_pos : 64;
    while (cap < need)
        cap *= 2;
    sim_hent_t *ent = util_realloc(h->ent, (size_t)cap * sizeof(*ent));
    if (!ent) return -1;
    h->ent = ent;
    uint32_t *pos = util_realloc(h->pos, (size_t)cap * sizeof(*pos));
    if (!pos) return -1;
    h->pos = pos;
    sim_hent_t *tmp = util_realloc(h->tmp, (size_t)cap * sizeof(*tmp));
    if (!tmp) return -1;
    h->tmp = tmp;
    memset(h->pos + h->cap_pos, 0xff, (size_t)(cap - h->cap_pos) * sizeof(*pos));
    h->cap_pos = cap;
    return 0;
}

/* Insert id with key, or move it if present. id must have been reserved. */
void sim_heap_set(sim_heap_t *h, uint32_t id, double key)
{
    uint32_t i = h->pos[id];
    sim_hent_t e = {key, id};
    if (i == UINT32_MAX) {
        place(h, h->n++, e);
        sift_up(h, h->n - 1);
        return;
    }
    double old = h->ent[i].key;
    h->ent[i].key = key;
    if (key < old)
        sift_up(h, i);
    else if (key > old)
        sift_down(h, i);
}

void sim_heap_set_lazy(sim_heap_t *h, uint32_t id, double key)
{
    uint32_t i = h->pos[id];
    if (i == UINT32_MAX)
        place(h, h->n++, (sim_hent_t){key, id});
    else
        h->ent[i].key = key;
}

void sim_heap_fix(sim_heap_t *h)
{
    if (h->n > 1)
        for (uint32_t i = (h->n - 2) / SIM_HEAP_ARITY + 1; i-- > 0;)
            sift_down(h, i);
}

void sim_heap_remove(sim_heap_t *h, uint32_t id)
{
    uint32_t i = h->pos[id];
    if (i == UINT32_MAX) return;
    h->pos[id] = UINT32_MAX;
    sim_hent_t last = h->ent[--h->n];
    if (i == h->n) return;
    place(h, i, last);
    sift_up(h, i);
    sift_down(h, h->pos[last.id]);
}

/* Remove and return the id with the smallest key; heap must be non-empty. */
uint32_t sim_heap_pop(sim_heap_t *h)
{
    uint32_t id = h->ent[0].id;
    h->pos[id] = UINT32_MAX;
    sim_hent_t last = h->ent[--h->n];
    if (h->n) {
        place(h, 0, last);
        sift_down(h, 0);
    }
    return id;
}

/* The bits of a key as an unsigned integer that sorts like the key:
 * keys are times, never negative (-0 is read as +0, which it equals). */
static inline uint64_t key_bits(double k)
{
    uint64_t b;
    memcpy(&b, &k, sizeof(b));
    return k == 0 ? 0 : b;
}

/* Byte d of entry e's sort key: bytes 0-3 the id's, 4-11 the key's, least
 * significant first. */
static inline uint32_t digit(sim_hent_t e, int d)
{
    return d < 4 ? (e.id >> (8 * d)) & 0xff : (uint32_t)(key_bits(e.key) >> (8 * (d - 4))) & 0xff;
}

/* Sort v[0..m) by (key, id) with tmp (room for m): a least-significant-
 * digit radix sort over the 12 bytes of (key bits, id), one byte a pass,
 * over only the bytes that differ between entries (found by AND and OR
 * over all of them) — a batch's keys lie within a relative 1e-12 of each
 * other, so their high bytes agree, and ids are small. Radix sorting is
 * stable, so the result is the order of the total order (key, id): the
 * same sequence any correct sort gives. qsort here was 12 % of an
 * event-by-event run (bench/README.md). */
static void sort_hents(sim_hent_t *v, sim_hent_t *tmp, uint32_t m)
{
    if (m < 2) return;
    uint64_t kand = ~0ull, kor = 0;
    uint32_t iand = ~0u, ior = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint64_t k = key_bits(v[i].key);
        kand &= k;
        kor |= k;
        iand &= v[i].id;
        ior |= v[i].id;
    }
    uint64_t kdiff = kand ^ kor;
    uint32_t idiff = iand ^ ior;
    sim_hent_t *src = v, *dst = tmp;
    for (int d = 0; d < 12; d++) {
        bool varies = d < 4 ? (idiff >> (8 * d)) & 0xff : (kdiff >> (8 * (d - 4))) & 0xff;
        if (!varies) continue; /* every entry has this byte: nothing would move */
        uint32_t count[256] = {0};
        for (uint32_t i = 0; i < m; i++)
            count[digit(src[i], d)]++;
        uint32_t sum = 0;
        for (int b = 0; b < 256; b++) {
            uint32_t n = count[b];
            count[b] = sum;
            sum += n;
        }
        for (uint32_t i = 0; i < m; i++)
            dst[count[digit(src[i], d)]++] = src[i];
        sim_hent_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) memcpy(v, src, (size_t)m * sizeof(*v));
}

/* Remove every entry with key <= limit into out (room for h->n entries),
 * sorted by (key, id): the order sim_heap_pop would give them. The entries
 * at or below limit form a subtree at the root (a child's key is never
 * below its parent's), found by a walk that stops at larger keys; the rest
 * are heaped again bottom-up (Floyd, O(n)). Done only when the batch is at
 * least a sixteenth of the heap — below that, popping one by one
 * (O(m log n)) is cheaper — else nothing is removed and 0 returned. */
uint32_t sim_heap_take(sim_heap_t *h, double limit, sim_hent_t *out)
{
    if (h->n == 0 || h->ent[0].key > limit) return 0;
    /* count by a depth-first walk of that subtree, O(m): its stack holds at
     * most ARITY - 1 pending siblings per level plus one, and a 4-ary heap
     * of 2^32 entries has 16 levels */
    uint32_t stack[4 * 32], sp = 0, m = 0, need = h->n / 16;
    stack[sp++] = 0;
    while (sp && m < need) {
        uint32_t i = stack[--sp];
        m++;
        uint32_t c = SIM_HEAP_ARITY * i + 1;
        for (uint32_t k = c; k < c + SIM_HEAP_ARITY && k < h->n; k++)
            if (h->ent[k].key <= limit) stack[sp++] = k;
    }
    if (m < need || need == 0) return 0;
    m = 0;
    uint32_t rest = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        sim_hent_t e = h->ent[i];
        if (e.key <= limit) {
            out[m++] = e;
            h->pos[e.id] = UINT32_MAX;
        } else {
            h->ent[rest++] = e;
        }
    }
    h->n = rest;
    for (uint32_t i = 0; i < rest; i++)
        h->pos[h->ent[i].id] = i;
    sim_heap_fix(h);
    sort_hents(out, h->tmp, m);
    return m;
}

void sim_heap_free(sim_heap_t *h)
{
    util_free(h->ent);
    util_free(h->pos);
    util_free(h->tmp);
    memset(h, 0, sizeof(*h));
}
