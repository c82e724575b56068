/*
 * cuda.c — the optional accelerator probe (-DSTRATA_CUDA=ON with a CUDA
 * toolkit): host↔device bandwidth with pinned and pageable host memory,
 * device↔device peer copies, and the local NCCL's allreduce when NCCL is
 * installed. Without the toolkit (the default build) it only says why
 * nothing was measured.
 *
 * Method: each transfer of XFER bytes is repeated REPS times after one
 * warm-up; the median of the per-copy times (cudaEvent pairs on the
 * stream) gives the bandwidth. Peer copies only between devices that
 * report cudaDeviceCanAccessPeer (NVLink or PCIe P2P), with peer access
 * enabled. NCCL: one process drives every device (ncclCommInitAll), fp32
 * sum allreduce of NCCL_BYTES, busbw = algbw × 2(n−1)/n (nccl-tests'
 * PERFORMANCE.md). Results are written as text into the result's
 * accel_note, one line per figure.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <stdio.h>
#include <string.h>

#if defined(STRATA_HAVE_CUDA)
#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdlib.h>
#if defined(STRATA_HAVE_NCCL)
#include <nccl.h>
#endif

#define XFER       ((size_t)64 << 20)
#define REPS       9
#define NCCL_BYTES ((size_t)256 << 20)
#define MAX_DEV    8

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median GB/s of REPS copies of XFER bytes; -1 on a CUDA error. */
static double timed_copy(void *dst, const void *src, enum cudaMemcpyKind kind, int src_dev,
                         int dst_dev)
{
    cudaEvent_t a, b;
    float ms[REPS];
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) return -1;
    bool peer = src_dev >= 0 && dst_dev >= 0;
    for (int r = -1; r < REPS; r++) {
        cudaEventRecord(a, 0);
        cudaError_t e = peer ? cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, XFER, 0)
                             : cudaMemcpyAsync(dst, src, XFER, kind, 0);
        cudaEventRecord(b, 0);
        if (e != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess) return -1;
        if (r >= 0) cudaEventElapsedTime(&ms[r], a, b);
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    qsort(ms, REPS, sizeof(float), cmp_float);
    return ms[REPS / 2] > 0 ? (double)XFER / (ms[REPS / 2] * 1e-3) / 1e9 : -1;
}

static void append(char *buf, size_t len, const char *fmt, ...) STRATA_PRINTF(3, 4);
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (used < len) vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* Pinned and pageable host<->device bandwidth of device d. */
static void host_device(int d, char *buf, size_t len)
{
    void *dev = NULL, *pinned = NULL, *pageable = malloc(XFER);
    cudaSetDevice(d);
    if (pageable && cudaMalloc(&dev, XFER) == cudaSuccess &&
        cudaMallocHost(&pinned, XFER) == cudaSuccess) {
        memset(pageable, 1, XFER), memset(pinned, 1, XFER);
        double h2d = timed_copy(dev, pinned, cudaMemcpyHostToDevice, -1, -1);
        double d2h = timed_copy(pinned, dev, cudaMemcpyDeviceToHost, -1, -1);
        append(buf, len, "gpu%d pinned   H2D %.1f GB/s, D2H %.1f GB/s\n", d, h2d, d2h);
        h2d = timed_copy(dev, pageable, cudaMemcpyHostToDevice, -1, -1);
        d2h = timed_copy(pageable, dev, cudaMemcpyDeviceToHost, -1, -1);
        append(buf, len, "gpu%d pageable H2D %.1f GB/s, D2H %.1f GB/s\n", d, h2d, d2h);
    } else {
        append(buf, len, "gpu%d: cannot allocate %zu MiB\n", d, XFER >> 20);
    }
    if (dev) cudaFree(dev);
    if (pinned) cudaFreeHost(pinned);
    free(pageable);
}

static void peer_copies(int n, char *buf, size_t len)
{
    void *mem[MAX_DEV] = {0};
    for (int d = 0; d < n; d++) {
        cudaSetDevice(d);
        if (cudaMalloc(&mem[d], XFER) != cudaSuccess) mem[d] = NULL;
    }
    for (int s = 0; s < n; s++)
        for (int t = 0; t < n; t++) {
            int can = 0;
            if (s == t || !mem[s] || !mem[t] || cudaDeviceCanAccessPeer(&can, s, t) != cudaSuccess)
                continue;
            if (!can) {
                append(buf, len, "gpu%d -> gpu%d: no peer access\n", s, t);
                continue;
            }
            cudaSetDevice(s);
            cudaDeviceEnablePeerAccess(t, 0); /* already enabled is fine */
            cudaGetLastError();
            append(buf, len, "gpu%d -> gpu%d peer copy %.1f GB/s\n", s, t,
                   timed_copy(mem[t], mem[s], cudaMemcpyDefault, s, t));
        }
    for (int d = 0; d < n; d++)
        if (mem[d]) cudaSetDevice(d), cudaFree(mem[d]);
}

#if defined(STRATA_HAVE_NCCL)
static void nccl_allreduce(int n, char *buf, size_t len)
{
    ncclComm_t comms[MAX_DEV];
    cudaStream_t st[MAX_DEV];
    float *data[MAX_DEV] = {0};
    int devs[MAX_DEV];
    for (int d = 0; d < n; d++)
        devs[d] = d;
    if (ncclCommInitAll(comms, n, devs) != ncclSuccess) {
        append(buf, len, "nccl: ncclCommInitAll failed over %d devices\n", n);
        return;
    }
    for (int d = 0; d < n; d++) {
        cudaSetDevice(d);
        cudaStreamCreate(&st[d]);
        cudaMalloc((void **)&data[d], NCCL_BYTES);
    }
    double best = 0;
    for (int r = 0; r < 6; r++) {
        double t0 = util_now();
        ncclGroupStart();
        for (int d = 0; d < n; d++)
            ncclAllReduce(data[d], data[d], NCCL_BYTES / 4, ncclFloat, ncclSum, comms[d], st[d]);
        ncclGroupEnd();
        for (int d = 0; d < n; d++)
            cudaSetDevice(d), cudaStreamSynchronize(st[d]);
        double t = util_now() - t0;
        if (r > 0 && (best == 0 || t < best)) best = t; /* r = 0 warms up */
    }
    double algbw = (double)NCCL_BYTES / best / 1e9;
    append(buf, len, "nccl allreduce %zu MiB over %d gpus: busbw %.1f GB/s (best of 5)\n",
           NCCL_BYTES >> 20, n, algbw * 2.0 * (n - 1) / n);
    for (int d = 0; d < n; d++) {
        cudaSetDevice(d);
        cudaFree(data[d]);
        cudaStreamDestroy(st[d]);
        ncclCommDestroy(comms[d]);
    }
}
#endif

void probe_accel_report(char *buf, size_t len);
void probe_accel_report(char *buf, size_t len)
{
    int n = 0;
    buf[0] = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) { /* one line, no crash: a host without a GPU */
        snprintf(buf, len, "not measured: CUDA build, but no CUDA device is visible (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return;
    }
    if (n > MAX_DEV) n = MAX_DEV;
    for (int d = 0; d < n; d++)
        host_device(d, buf, len);
    if (n > 1) peer_copies(n, buf, len);
#if defined(STRATA_HAVE_NCCL)
    if (n > 1) nccl_allreduce(n, buf, len);
#else
    append(buf, len, "nccl: not measured (NCCL was not found at build time)\n");
#endif
}

void probe_accel(probe_ctx_t *x, double budget_s)
{
    (void)budget_s;
    probe_accel_report(x->res->accel_note, sizeof(x->res->accel_note));
}

#else /* no CUDA toolkit in this build */

void probe_accel(probe_ctx_t *x, double budget_s)
{
    (void)budget_s;
    snprintf(x->res->accel_note, sizeof(x->res->accel_note),
#if defined(STRATA_CUDA_REQUESTED)
             "not measured: -DSTRATA_CUDA=ON but no CUDA toolkit was found at build time"
#else
             "not measured: built without -DSTRATA_CUDA=ON (needs a CUDA toolkit)"
#endif
    );
}
#endif
