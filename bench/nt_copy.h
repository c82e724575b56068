/*
 * nt_copy.h — the plain copy the comm benchmarks measure strata against:
 * `bytes` copied with SSE2 non-temporal stores (the compulsory traffic of an
 * allreduce's rank: read its input once, write its output once, without
 * reading the output's lines first), then a store fence; memcpy elsewhere.
 * Shared by bench/vs-mpi (built by mpicc) and bench/comm.
 */
#ifndef STRATA_BENCH_NT_COPY_H
#define STRATA_BENCH_NT_COPY_H

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

static inline void nt_copy(void *dst, const void *src, size_t bytes)
{
#if defined(__x86_64__)
    __m128i *d = dst;
    const __m128i *s = src;
    for (size_t i = 0; i < bytes / 16; i++)
        _mm_stream_si128(d + i, _mm_loadu_si128(s + i));
    _mm_sfence();
#else
    memcpy(dst, src, bytes);
#endif
}

#endif
