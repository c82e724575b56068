/*
 * heap.c — the simulator's event queue: an indexed binary min-heap of flow
 * slots keyed by the time of each flow's next event.
 *
 * Every pending flow has exactly one next event (its activation, then its
 * predicted completion), so the queue holds one entry per flow and a rate
 * change moves the entry in place (O(log n)) instead of leaving stale
 * entries behind. Ties are broken by id so the order is deterministic.
 */
#include "engine.h"

#include <string.h>

static int less(const sim_heap_t *h, uint32_t a, uint32_t b)
{
    double ka = h->key[a], kb = h->key[b];
    return ka < kb || (ka == kb && a < b);
}

static void place(sim_heap_t *h, uint32_t i, uint32_t id)
{
    h->ids[i] = id;
    h->pos[id] = i;
}

static void sift_up(sim_heap_t *h, uint32_t i)
{
    uint32_t id = h->ids[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!less(h, id, h->ids[parent])) break;
        place(h, i, h->ids[parent]);
        i = parent;
    }
    place(h, i, id);
}

static void sift_down(sim_heap_t *h, uint32_t i)
{
    uint32_t id = h->ids[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && less(h, h->ids[c + 1], h->ids[c])) c++;
        if (!less(h, h->ids[c], id)) break;
        place(h, i, h->ids[c]);
        i = c;
    }
    place(h, i, id);
}

/* Make room for ids 0..max_id. */
int sim_heap_reserve(sim_heap_t *h, uint32_t max_id)
{
    uint32_t need = max_id + 1;
    if (need <= h->cap_pos) return 0;
    uint32_t cap = h->cap_pos ? h->cap_pos : 64;
    while (cap < need)
        cap *= 2;
    uint32_t *ids = util_realloc(h->ids, (size_t)cap * sizeof(*ids));
    if (!ids) return -1;
    h->ids = ids;
    uint32_t *pos = util_realloc(h->pos, (size_t)cap * sizeof(*pos));
    if (!pos) return -1;
    h->pos = pos;
    double *key = util_realloc(h->key, (size_t)cap * sizeof(*key));
    if (!key) return -1;
    h->key = key;
    memset(h->pos + h->cap_pos, 0xff, (size_t)(cap - h->cap_pos) * sizeof(*pos));
    h->cap_pos = h->cap_ids = cap;
    return 0;
}

/* Insert id with key, or move it if present. id must have been reserved. */
void sim_heap_set(sim_heap_t *h, uint32_t id, double key)
{
    uint32_t i = h->pos[id];
    if (i == UINT32_MAX) {
        h->key[id] = key;
        place(h, h->n++, id);
        sift_up(h, h->n - 1);
        return;
    }
    double old = h->key[id];
    h->key[id] = key;
    if (key < old)
        sift_up(h, i);
    else
        sift_down(h, i);
}

void sim_heap_remove(sim_heap_t *h, uint32_t id)
{
    uint32_t i = h->pos[id];
    if (i == UINT32_MAX) return;
    h->pos[id] = UINT32_MAX;
    uint32_t last = h->ids[--h->n];
    if (i == h->n) return;
    place(h, i, last);
    sift_up(h, i);
    sift_down(h, h->pos[last]);
}

/* Remove and return the id with the smallest key; heap must be non-empty. */
uint32_t sim_heap_pop(sim_heap_t *h)
{
    uint32_t id = h->ids[0];
    sim_heap_remove(h, id);
    return id;
}

void sim_heap_free(sim_heap_t *h)
{
    util_free(h->ids);
    util_free(h->pos);
    util_free(h->key);
    memset(h, 0, sizeof(*h));
}
