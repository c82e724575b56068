/*
 * accel_probe.c — run only the accelerator part of `strata probe`
 * (src/probe/cuda.c): host<->device bandwidth pinned and pageable, peer
 * copies, NCCL allreduce. Built with -DSTRATA_CUDA=ON and a CUDA toolkit.
 */
#include <stdio.h>
#include <string.h>

void probe_accel_report(char *buf, size_t len); /* src/probe/cuda.c */

int main(void)
{
    static char buf[4096];
    probe_accel_report(buf, sizeof(buf));
    size_t n = strlen(buf);
    fputs(buf, stdout);
    if (n > 0 && buf[n - 1] != '\n') putchar('\n');
    return n ? 0 : 1;
}
