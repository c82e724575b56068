/*
 * retx.c — CRC + retransmission: what bit errors cost in goodput.
 *
 * Every link layer here detects errors with a CRC (PCIe LCRC, IB VCRC/ICRC,
 * Ethernet FCS, flit CRC) and recovers by retransmission. A packet of w
 * bytes survives with probability (1 − BER)^(8w), so its error probability
 * is p = 1 − (1 − BER)^(8w) (independent bit errors; FEC links use the
 * post-FEC BER). With N packets in flight per round trip:
 *
 *   go-back-N (PCIe replay buffer, RoCE NICs):  η = (1 − p) / (1 − p + N p)
 *     each error also discards the N − 1 packets sent behind the bad one;
 *   selective repeat (IB RC with SR NICs, TCP SACK): η = 1 − p
 *     only the bad packet is resent.
 *
 * Source: Bertsekas & Gallager, Data Networks, 2nd ed., §2.4 (ARQ
 * efficiency); the expressions are the standard ones for a saturated sender.
 */
#include "link.h"

#include <math.h>

double strata_retx_per(double ber, double wire_bytes)
{
    if (ber <= 0) return 0;
    if (ber >= 1) return 1;
    /* log1p keeps precision for BER ~1e-12 */
    return -expm1(8 * wire_bytes * log1p(-ber));
}

double strata_retx_window(double rate, double rtt, double wire_bytes)
{
    if (wire_bytes <= 0) return 1;
    return 1 + ceil(rate * rtt / wire_bytes);
}

double strata_retx_gbn(double per, double window)
{
    if (per <= 0) return 1;
    return (1 - per) / (1 - per + window * per);
}

double strata_retx_sr(double per)
{
    return per <= 0 ? 1 : 1 - per;
}
