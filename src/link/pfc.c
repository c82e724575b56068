/*
 * pfc.c — lossless Ethernet: priority flow control (IEEE 802.1Qbb) and
 * 802.3x PAUSE.
 *
 * A congested receiver sends a PAUSE for a priority with a time in quanta of
 * 512 bit times; the sender stops that priority for the time given. A port
 * paused k times per second for q quanta each keeps 1 − k·q·512/rate of its
 * time. To drop nothing, the receiver must still absorb what arrives while
 * its PAUSE travels to the sender and takes effect: the headroom above the
 * XOFF threshold, rate × (2 × cable delay + response) plus one max frame in
 * flight at each end and the PFC frame itself.
 *
 * Why RoCE needs it: RoCE NICs recover loss with go-back-N over a window of
 * a whole bandwidth-delay product (retx.c), so a drop rate that TCP with
 * SACK barely notices collapses RDMA goodput; PFC turns drops into pauses.
 *
 * Sources: IEEE 802.1Qbb / 802.3x (512-bit-time quantum, 64 B PFC frame);
 * links.md (5 ns/m propagation; RoCEv2 needs lossless fabric).
 */
#include "link.h"

#include <math.h>

/* 64 B minimum MAC frame (PFC frame) + 20 B preamble/SFD/IFG on the wire */
#define PFC_FRAME_WIRE 84.0

double strata_pfc_pause_time(double rate, double quanta)
{
    /* one quantum = 512 bit times; rate in B/s */
    return rate > 0 ? quanta * 512 / (8 * rate) : 0;
}

double strata_pfc_throughput(double rate, double quanta, double pauses_per_s)
{
    double paused = pauses_per_s * strata_pfc_pause_time(rate, quanta);
    return rate * fmax(0, 1 - paused);
}

double strata_pfc_headroom(double rate, double length_m, double max_frame)
{
    double t = 2 * length_m * STRATA_LINK_PROP_S_PER_M + STRATA_PFC_RESPONSE_S;
    return rate * t + 2 * max_frame + PFC_FRAME_WIRE;
}
