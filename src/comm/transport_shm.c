/*
 * transport_shm.c — the shared-memory transport: per-pair channels in the
 * communicator's segment, for message-passing algorithms and send/recv.
 *
 * Channel (from a, to b): COMM_CH_SLOTS slots of COMM_CH_BYTES, a head
 * counter written only by a (slots filled) and a tail counter written only
 * by b (slots drained), each in its own cache line. Counters only grow; the
 * sender keeps its own copy of head and the receiver of tail, so each side
 * reads the other's line only to learn about space or data. A message is a
 * sequence of slots each carrying the message's total size, so a receiver
 * that expects another size detects it at the first slot. Each slot's
 * header also carries the sender's call (signature and number, comm_tag_t),
 * in the line the header already occupies, so a receiver detects a message
 * of another collective, count, type, operator or root.
 *
 * This is message semantics: a byte goes sender buffer -> slot -> receiver
 * buffer (two copies), against the engine's single staged copy per
 * non-owned slice; `strata bench --algo ring` shows the difference.
 */
#include "comm.h"

static void *shm_send_slot(strata_comm_t *c, int peer, size_t *cap_p)
{
    comm_chan_t *ch = comm_chan(c, c->rank, peer);
    uint64_t head = c->ch_sent[peer];
    if (head - atomic_load_explicit(&ch->tail.v, memory_order_acquire) >= COMM_CH_SLOTS)
        return NULL;
    *cap_p = COMM_CH_BYTES;
    return ch->slot[head % COMM_CH_SLOTS].data;
}

static void shm_send_commit(strata_comm_t *c, int peer, const comm_tag_t *tag, uint64_t msg_bytes,
                            size_t len)
{
    comm_chan_t *ch = comm_chan(c, c->rank, peer);
    uint64_t head = c->ch_sent[peer];
    comm_chan_slot_t *sl = &ch->slot[head % COMM_CH_SLOTS];
    sl->tag = *tag;
    sl->msg_bytes = msg_bytes;
    sl->len = len;
    c->ch_sent[peer] = head + 1;
    atomic_store_explicit(&ch->head.v, head + 1, memory_order_release);
    comm_posted(c);
}

static const void *shm_recv_slot(strata_comm_t *c, int peer, comm_tag_t *tag_p,
                                 uint64_t *msg_bytes_p, size_t *len_p)
{
    comm_chan_t *ch = comm_chan(c, peer, c->rank);
    uint64_t tail = c->ch_recv[peer];
    if (atomic_load_explicit(&ch->head.v, memory_order_acquire) <= tail) return NULL;
    const comm_chan_slot_t *sl = &ch->slot[tail % COMM_CH_SLOTS];
    *tag_p = sl->tag;
    *msg_bytes_p = sl->msg_bytes;
    *len_p = (size_t)sl->len;
    return sl->data;
}

static void shm_recv_release(strata_comm_t *c, int peer)
{
    comm_chan_t *ch = comm_chan(c, peer, c->rank);
    c->ch_recv[peer]++;
    atomic_store_explicit(&ch->tail.v, c->ch_recv[peer], memory_order_release);
    comm_posted(c);
}

const comm_transport_t comm_shm_transport = {
    .name = "shm",
    .send_slot = shm_send_slot,
    .send_commit = shm_send_commit,
    .recv_slot = shm_recv_slot,
    .recv_release = shm_recv_release,
};
