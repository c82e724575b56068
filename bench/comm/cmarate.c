/*
 * cmarate.c — does a single-copy allreduce pay on this host? The CPU cost of
 * the kernel's cross-process copy (process_vm_readv, "CMA", what Open MPI's
 * vader and UCX use) against a plain memcpy of the same bytes.
 *
 * A single-copy allreduce at 2 ranks reads 1.5x the vector and writes 1x
 * per rank against the staged engine's 2.5x / 2x (docs/runtime.md), but
 * two of its three passes are kernel copies. It saves CPU only where a
 * kernel copy costs less than about twice a memcpy; on this host it costs
 * twice (bench/README.md, "Single copy"), and the engine stages.
 *
 * The parent forks a child that writes SIZE bytes of its own and waits.
 * Per round (ROUNDS, the order of the two flipping each round) the parent
 * times, in CPU time (user + system, getrusage: the kernel's copy is
 * system time), reading the child's SIZE bytes in pieces of PIECE bytes
 * into one PIECE-sized buffer (it stays in L2, as the engine's would), and
 * memcpy of its own SIZE bytes in the same pieces into the same buffer.
 * Prints the medians in GB/s of CPU time and cma/memcpy's ratio; exits 77
 * (skip) with the reason where the kernel or a filter refuses the call.
 *
 * Usage: cmarate [SIZE [PIECE [ROUNDS]]] (default 33554432 65536 7).
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoull(argv[1], NULL, 10) : 33554432;
    size_t piece = argc > 2 ? strtoull(argv[2], NULL, 10) : 65536;
    int rounds = argc > 3 ? atoi(argv[3]) : 7;
    if (size == 0 || piece == 0 || piece > size || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "cmarate: usage: cmarate [SIZE [PIECE [ROUNDS]]] (PIECE <= SIZE)\n");
        return 2;
    }
    unsigned char *theirs =
        mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *mine = malloc(size), *buf = malloc(piece);
    if (theirs == MAP_FAILED || !mine || !buf) {
        fprintf(stderr, "cmarate: out of memory\n");
        return 1;
    }
    int ready[2];
    if (pipe(ready) != 0) return perror("cmarate: pipe"), 1;
    pid_t child = fork();
    if (child < 0) return perror("cmarate: fork"), 1;
    if (child == 0) { /* its own pages (not the parent's, shared copy-on-write) */
        memset(theirs, 3, size);
        if (write(ready[1], "", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    char b;
    if (read(ready[0], &b, 1) != 1) return fprintf(stderr, "cmarate: the child died\n"), 1;
    memset(mine, 5, size), memset(buf, 0, piece);
    double cma[1000], cpy[1000];
    int status = 0;
    for (int r = 0; r < rounds && status == 0; r++)
        for (int k = 0; k < 2; k++) {
            bool is_cma = (k + r) % 2 == 0;
            double t = cpu_now();
            for (size_t o = 0; o < size; o += piece) {
                size_t n = size - o < piece ? size - o : piece;
                if (!is_cma) {
                    memcpy(buf, mine + o, n);
                    continue;
                }
                struct iovec l = {buf, n}, rem = {theirs + o, n};
                if (process_vm_readv(child, &l, 1, &rem, 1, 0) != (ssize_t)n) {
                    printf("cmarate: process_vm_readv refused here (%s): skipped\n",
                           strerror(errno));
                    status = 77;
                    break;
                }
            }
            double dt = cpu_now() - t;
            (is_cma ? cma : cpy)[r] = (double)size / (dt > 0 ? dt : 1e-9) / 1e9;
        }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (status) return status;
    double cl, ch, ml, mh, cm = median_range(cma, rounds, &cl, &ch),
                           mm = median_range(cpy, rounds, &ml, &mh);
    printf("cmarate: %zu bytes in %zu-byte pieces, %d rounds, GB/s of CPU time (median [range])\n",
           size, piece, rounds);
    printf("  process_vm_readv %.2f [%.2f .. %.2f]\n  memcpy           %.2f [%.2f .. %.2f]\n", cm,
           cl, ch, mm, ml, mh);
    printf("  cma / memcpy     %.2f\n", cm / mm);
    return 0;
}
