/*
 * copy.c — the copies of the engine's copy-out phase.
 *
 * Large outputs are written with non-temporal (streaming) stores: the data
 * goes to memory without first being read for ownership and without
 * evicting the staging slots the peers are still reading from the caches.
 * glibc's memcpy switches to non-temporal stores only above a size derived
 * from the last-level cache (on this machine ~192 MiB, i.e. 3/4 of the
 * 32 MiB L3 × threads; glibc's x86_non_temporal_threshold), far above the
 * sizes where the engine's output stops fitting in L2/L3, so the engine
 * decides itself. An allreduce measures which store mode its calls of a
 * size class run faster in (allreduce_shm.c out_mode), starting from the
 * fixed crossover comm_stream_min(); the other collectives use that
 * crossover: outputs of comm_stream_min() bytes or more stream (16 MiB,
 * the prototype's crossover). STRATA_NT_THRESHOLD fixes the crossover for
 * all, allreduce included (no measuring).
 *
 * SSE2 streaming stores (16 B) are enough to reach memory bandwidth; the
 * unaligned head and tail go through memcpy.
 */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_STREAM 1
#endif

size_t comm_stream_min(void)
{
    static size_t min; /* 0: not read yet; default 16 MiB, shared with sched */
    if (min == 0) {
        const char *env = getenv("STRATA_NT_THRESHOLD");
        min = env && *env && strtoull(env, NULL, 10) > 0 ? (size_t)strtoull(env, NULL, 10)
                                                         : (size_t)STRATA_DIRECT_STREAM_MIN;
    }
    return min;
}

bool comm_stream_env(void)
{
    static int set = -1;
    if (set < 0) {
        const char *env = getenv("STRATA_NT_THRESHOLD");
        set = env && *env && strtoull(env, NULL, 10) > 0;
    }
    return set == 1;
}

/* The size of the last-level cache cpu0 sees (sysfs: the highest
 * cache/indexN level), read once; 0 when unknown. glibc's sysconf
 * (_SC_LEVEL3_CACHE_SIZE) reads the CPUID leaves, which a VM may fill
 * with the host's figures (here 320 MiB for a guest whose L3 is 32 MiB). */
size_t comm_llc_bytes(void)
{
    static long llc = -1;
    if (llc >= 0) return (size_t)llc;
    int best = 0;
    llc = 0;
    for (int i = 0; i < 10; i++) {
        char path[96];
        int level = 0;
        unsigned long kib = 0;
        char unit = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fscanf(f, "%d", &level) != 1) level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (!f) continue;
        if (fscanf(f, "%lu%c", &kib, &unit) == 2 && unit == 'K' && level > best)
            best = level, llc = (long)kib * 1024;
        fclose(f);
    }
    return (size_t)llc;
}

#ifdef HAVE_STREAM
/* Without the closing fence: comm_copy_nofence's callers fence once after
 * their last piece. */
static void stream_copy_nf(unsigned char *dst, const unsigned char *src, size_t bytes)
{
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    if (head > bytes) head = bytes;
    memcpy(dst, src, head);
    dst += head, src += head, bytes -= head;
    size_t n = bytes / 64;
    for (size_t i = 0; i < n; i++, dst += 64, src += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)src);
        __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));
        _mm_stream_si128((__m128i *)dst, a);
        _mm_stream_si128((__m128i *)(dst + 16), b);
        _mm_stream_si128((__m128i *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, bytes % 64);
}
#endif

void comm_copy(void *dst, const void *src, size_t bytes, bool stream)
{
    comm_copy_nofence(dst, src, bytes, stream);
    if (stream) comm_stream_fence();
}

/* The engine's reduction copies its slice out in 16 KiB blocks; with a
 * fence after each, the next block's loads wait for the fence. One fence
 * per phase, before the phase's flag, orders the same stores (measured at
 * 2 ranks, 64 MiB: the reduction phase 6-7 % shorter; bench/README.md,
 * issue 17 session 9). */
void comm_copy_nofence(void *dst, const void *src, size_t bytes, bool stream)
{
    if (dst == src || bytes == 0) return;
#ifdef HAVE_STREAM
    if (stream && bytes >= 256) {
        stream_copy_nf(dst, src, bytes);
        return;
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, bytes);
}

void comm_stream_fence(void)
{
#ifdef HAVE_STREAM
    _mm_sfence();
#endif
}
