/*
 * flowctl.c — credit-based link-level flow control (PCIe, InfiniBand per
 * virtual lane, NVLink, ICI).
 *
 * A receiver advertises buffer space as credits; a sender may only send
 * into advertised space, so at most `buffer` bytes are unacknowledged. A
 * credit returns one round trip after the data that consumed it left, hence
 * the sustained rate is min(link rate, buffer / RTT), and running at line
 * rate needs buffer ≥ rate × RTT (the bandwidth-delay product of the link).
 * This is why long InfiniBand cables need deep per-VL buffers and why PCIe,
 * with tiny round trips, gets away with a few KiB of credits.
 *
 * Source: O'Reilly "InfiniBand Network Architecture" ch. 25 (link-level flow
 * control per VL); propagation 5 ns/m from links.md "Formula used".
 */
#include "link.h"

#include <math.h>

double strata_link_rtt(double rate, double length_m, double wire_bytes)
{
    /* there and back through the cable, plus one max packet serialised in
     * each direction (the packet that consumes credit, the one returning it
     * may have to wait behind) */
    double ser = rate > 0 ? wire_bytes / rate : 0;
    return 2 * length_m * STRATA_LINK_PROP_S_PER_M + 2 * ser;
}

double strata_credit_rate(double rate, double buffer_bytes, double rtt)
{
    if (rtt <= 0) return rate;
    return fmin(rate, buffer_bytes / rtt);
}

double strata_credit_buffer(double rate, double rtt)
{
    return rate * rtt;
}
