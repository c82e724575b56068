/*
 * alloc.c — the one allocation wrapper, arena and growable-array support.
 *
 * Fault injection: util_alloc_fail_after(n) makes the n-th allocation from
 * then on fail, so tests can walk every OOM path of a loader. The arena is a
 * list of chunks; big requests get a chunk of their own.
 */
#include "util.h"

#include <stdlib.h>
#include <string.h>

static long alloc_countdown = -1;

static int alloc_should_fail(void)
{
    if (alloc_countdown < 0) return 0;
    if (alloc_countdown == 0) return 1;
    alloc_countdown--;
    return 0;
}

void util_alloc_fail_after(long n)
{
    alloc_countdown = n;
}

void *util_malloc(size_t size)
{
    if (alloc_should_fail()) return NULL;
    return malloc(size ? size : 1);
}

void *util_calloc(size_t n, size_t size)
{
    if (alloc_should_fail()) return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *util_realloc(void *p, size_t size)
{
    if (alloc_should_fail()) return NULL;
    return realloc(p, size ? size : 1);
}

void util_free(void *p)
{
    free(p);
}

char *util_strdup(const char *s)
{
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *d = util_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int util_vec_reserve(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return -1;
        ncap *= 2;
    }
    void *nv = util_realloc(*v, ncap * elem);
    if (nv == NULL) return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

/* ==== Arena ==== */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} arena_chunk_t;

struct util_arena {
    arena_chunk_t *head;
    arena_chunk_t *spare; /* chunks kept by util_arena_reset, for reuse */
    size_t chunk_size;
    size_t total;
};

util_arena_t *util_arena_create(size_t chunk_size)
{
    util_arena_t *a = util_calloc(1, sizeof(*a));
    if (a) a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    return a;
}

void *util_arena_alloc(util_arena_t *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    arena_chunk_t *c = a->head;
    if (c == NULL || c->size - c->used < size) {
        size_t csize = size > a->chunk_size ? size : a->chunk_size;
        if (a->spare && a->spare->size >= csize) { /* a chunk kept by a reset */
            c = a->spare;
            a->spare = c->next;
            csize = c->size;
        } else {
            c = util_malloc(sizeof(*c) + csize);
            if (c == NULL) return NULL;
        }
        c->size = csize;
        c->used = 0;
        if (a->head && size > a->chunk_size) {
            /* Keep the partly filled head chunk current for small requests. */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}

char *util_arena_strdup(util_arena_t *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = util_arena_alloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

size_t util_arena_used(const util_arena_t *a)
{
    return a ? a->total : 0;
}

/* Forget every allocation but keep the chunks for the next ones: memory
 * already touched is used again (no fresh pages to fault in and clear). */
void util_arena_reset(util_arena_t *a)
{
    if (a == NULL) return;
    arena_chunk_t *c = a->head;
    while (c) {
        arena_chunk_t *next = c->next;
        c->used = 0;
        c->next = a->spare;
        a->spare = c;
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}

void util_arena_destroy(util_arena_t *a)
{
    if (a == NULL) return;
    util_arena_reset(a);
    arena_chunk_t *c = a->spare;
    while (c) {
        arena_chunk_t *next = c->next;
        util_free(c);
        c = next;
    }
    util_free(a);
}
