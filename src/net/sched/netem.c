/* SPDX-License-Identifier: MIT */
/*
 * netem: the kernel's network emulator qdisc (net/sched/sch_netem.c) and
 * its tc side (iproute2's tc/q_netem.c), rewritten for pinwheel.
 *
 * What it does.  Each packet handed to enqueue goes through, in the
 * kernel's order: the duplicate draw; the loss model (random with
 * correlation, the 4-state Markov chain "state", or Gilbert-Elliott
 * "gemodel"); with `ecn`, a lost ECN-capable packet (ECT(0)/ECT(1), or
 * one already CE: INET_ECN_set_ce() succeeds on it) is marked CE instead
 * of dropped (and still counted as a drop, as the kernel's
 * qdisc_qstats_drop() on the mark); a lost packet goes to the drop
 * list with PW_DROP_NETEM_LOSS and enqueue returns NET_XMIT_SUCCESS (the
 * kernel's __NET_XMIT_BYPASS); a duplicate is cloned through the device's
 * clone op and enqueued at the root of the queue with duplication off; the
 * corrupt draw flips one bit of pkt->data below caplen; a full queue
 * (limit packets) drops; then either the reorder branch sends the packet
 * at once at the head, or the packet gets time_to_send = now + delay
 * (delay from latency/jitter through the uniform default or a table, and
 * with `rate` the serialisation after the last queued packet with packet
 * and cell overheads) and goes into the time-ordered queue.  Dequeue hands
 * out reordered packets first, then the earliest packet if its time has
 * come and the current slot (`slot`) allows, else arms the watchdog for
 * max(time_to_send, slot start).
 *
 * The queue ("tfifo"), as the kernel keeps it: a linear list (t_head ..
 * t_tail, through pw_next) of packets whose time_to_send is >= the tail's
 * when they arrive, which under constant delay (or rate) is every packet,
 * so enqueue and dequeue are O(1); and, for packets that arrive earlier
 * than the tail (jitter), a heap.  The kernel uses an rbtree; here it is a
 * pairing heap through pw_left/pw_right keyed (time_to_send, pw_seq),
 * pw_seq a per-qdisc arrival counter, so packets with equal times leave in
 * arrival order as they do from the kernel's rbtree (equal keys go right).
 * The head is the heap's minimum unless the list head is earlier or equal
 * (the kernel's netem_peek() prefers the list on ties).  The rate code
 * wants the latest time in the tree (skb_rb_last()): since the heap only
 * ever loses its minimum, its maximum can only change by an insert or by
 * emptying, so a remembered maximum is exact.  Reordered packets are a
 * third FIFO (the kernel's sch->q) with enqueue at the head.
 *
 * Invariants.  Every packet handed to enqueue leaves exactly once: to the
 * drop list (lost, over the limit, or flushed by reset()), or out of
 * dequeue.  A packet is on exactly one of the three lists while queued;
 * q->st.qlen and q->st.backlog are the number and bytes of packets on the
 * three together (pw__q_backlog_inc/dec on every entry and exit).  A
 * duplicate is a new packet (the clone op's memory) that enters through
 * the root's enqueue and follows the same rule.
 *
 * Locking.  Every hook runs under the root lock of the qdisc's TX queue
 * (init and destroy without a lock, the qdisc not reachable), so the
 * queue, the PRNG state, the correlation state and the slot are plain
 * fields.  The watchdog's callback takes no netem state: it only
 * reschedules the root (pw__netif_schedule()), whose run dequeues under
 * the lock.  parse() runs on the tc thread and only fills the option
 * struct (loading tables there, so change() does not allocate or fail);
 * change() swaps the tables in and the old ones go back to the option
 * struct, freed by opt_free() outside the lock, as the kernel's
 * netem_change() swaps and frees after unlocking.
 *
 * Costs.  Constant delay or rate: O(1) per packet (the list).  Jitter: the
 * packets that arrive out of order go to the heap: O(1) per insert, O(log n)
 * amortised per removal of the minimum (a skew heap, tried first, cost
 * about 1.3 us per packet at 5e4 queued: O(log n) pointer-chasing writes on
 * every insert too).  reset() removes heap packets in
 * order, O(n log n).  The PRNG is LFSR113: a few shifts per draw.
 *
 * Departures from the kernel, and why:
 *  - No child qdisc (netem's one class, `tc qdisc add ... parent X:1`):
 *    pinwheel's netem is always a leaf; its packets go to the device.
 *  - The kernel draws a few values from its unseeded get_random_u32()
 *    even with `seed`: the first "last" of each correlated source, the
 *    byte and bit that corrupt flips, and the start of each uniform slot.
 *    Here those come from a second LFSR113 stream, seeded from the seed
 *    (seed ^ 0x9e3779b97f4a7c15) when one is given, from getrandom()
 *    otherwise, so a seeded run is reproducible in every respect, not only
 *    in its loss/duplicate/reorder/delay decisions.  The bit position is
 *    drawn as prandom_u32_max() (multiply-shift) rather than 6.2's
 *    get_random_u32_below(); both are uniform.
 *  - time_to_send = now + delay where the delay is negative (jitter larger
 *    than latency) and larger than the clock reading (a simulated clock
 *    that starts near 0, impossible on a booted kernel) is clamped to 0
 *    instead of wrapping to a time that never comes.
 *  - GSO segmentation before corrupting, skb_unshare and checksum help
 *    have no counterpart: pinwheel packets are single buffers; corrupt
 *    flips a bit only when pkt->data is set and caplen is nonzero (the
 *    draws are made all the same).  A clone op that shares data with the
 *    original sees the flip too; one that copies does not (the kernel's
 *    skb_unshare).
 *  - Without `seed` the kernel dumps the random seed it drew and tc then
 *    prints " seed N" on every show; here it is printed only when a seed
 *    was given, so `tc qdisc show` stays stable (what a kernel without
 *    the seed attribute prints for an unseeded netem).
 *  - cell_size division: the kernel's reciprocal_divide() is exact for 32
 *    bits, so a plain division of the truncated length is used.
 *  - `rate N%` (a share of the device's link speed) is refused with
 *    `Illegal "rate"`: pinwheel devices have no speed.
 *
 * The tc side follows iproute2 with the seed keyword (6.4 era: Debian 12's
 * 6.1 plus `seed`), which sends latency and jitter as psched ticks in the
 * 32-bit tc_netem_qopt: times are read with get_time() (a bare number is
 * microseconds; ns is not a unit there), converted with the tc context's
 * psched arithmetic, and printed back from the kernel's ticks; the kernel
 * side turns ticks to ns (<< 6).  iproute2 6.9 moved to 64-bit ns
 * (TCA_NETEM_LATENCY64, get_time64(), sprint_time64()); build with
 * -DPW_NETEM_TC_TIME64=1 for that behaviour.  The print side has no tc
 * context; it uses the psched of every kernel since 2009 (64 ns ticks,
 * 15.625 per microsecond) as tc reads it from /proc/net/psched.
 */
#define _GNU_SOURCE
#include "netem.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "../dist.h"
#include "../internal.h"

#ifndef PW_NETEM_TC_TIME64
#define PW_NETEM_TC_TIME64 0
#endif

/* ------------------------------------------------------------ the PRNG */

/* The kernel's struct rnd_state: L'Ecuyer's LFSR113 (lib/random32.c). */
struct netem_rnd {
	uint32_t s1, s2, s3, s4;
};

static uint32_t rnd_u32(struct netem_rnd *s)
{
#define TAUS(x, a, b, c, d) ((((x) & (c)) << (d)) ^ ((((x) << (a)) ^ (x)) >> (b)))
	s->s1 = TAUS(s->s1, 6U, 13U, 4294967294U, 18U);
	s->s2 = TAUS(s->s2, 2U, 27U, 4294967288U, 2U);
	s->s3 = TAUS(s->s3, 13U, 21U, 4294967280U, 7U);
	s->s4 = TAUS(s->s4, 3U, 12U, 4294967168U, 13U);
#undef TAUS
	return s->s1 ^ s->s2 ^ s->s3 ^ s->s4;
}

/* The minimum each component needs (the kernel's __seed()). */
static uint32_t rnd_floor(uint32_t x, uint32_t m)
{
	return x < m ? x + m : x;
}

/* prandom_seed_state(): no warm-up, as the kernel. */
static void rnd_seed(struct netem_rnd *s, uint64_t seed)
{
	uint32_t i = (uint32_t)(((seed >> 32) ^ (seed << 10) ^ seed) & 0xffffffffu);
	s->s1 = rnd_floor(i, 2U);
	s->s2 = rnd_floor(i, 8U);
	s->s3 = rnd_floor(i, 16U);
	s->s4 = rnd_floor(i, 128U);
}

/* get_random_u64() stand-in: the OS's random source. */
static uint64_t random_u64(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
		    ((uint64_t)(uintptr_t)&v << 16);
		v ^= v >> 29;
		v *= 0xbf58476d1ce4e5b9ull;
		v ^= v >> 32;
	}
	return v;
}

/* --------------------------------------------------------------- state */

struct crnd {
	uint32_t last, rho;
};

enum { CLG_RANDOM, CLG_4_STATES, CLG_GILB_ELL };
enum { TX_IN_GAP_PERIOD = 1, TX_IN_BURST_PERIOD, LOST_IN_GAP_PERIOD, LOST_IN_BURST_PERIOD };
enum { GOOD_STATE = 1, BAD_STATE };

/* struct tc_netem_slot */
struct netem_slot_cfg {
	int64_t min_delay, max_delay;
	int32_t max_packets, max_bytes;
	int64_t dist_delay, dist_jitter;
};

struct netem_priv {
	struct pw__watchdog wd;
	/* the queue */
	struct pw__pktq rq;              /* reordered: the kernel's sch->q */
	struct pw_pkt *t_head, *t_tail;  /* in-order list */
	struct pw_pkt *t_root;           /* pairing heap of the rest */
	uint32_t t_count;
	uint64_t t_max;                  /* latest time_to_send in the heap */
	uint64_t seq;
	/* parameters, as the kernel's netem_sched_data */
	int64_t latency, jitter;
	uint32_t loss, ecn, limit, counter, gap, duplicate, reorder, corrupt;
	uint64_t rate;
	int32_t packet_overhead;
	uint32_t cell_size;
	int32_t cell_overhead;
	struct crnd delay_cor, loss_cor, dup_cor, reorder_cor, corrupt_cor;
	uint64_t seed;
	bool seed_given;
	struct netem_rnd prng;  /* the seeded prandom_u32_state() stream */
	struct netem_rnd aux;   /* get_random_u32() (see the departures) */
	int16_t *delay_dist;
	unsigned delay_dist_n;
	int16_t *slot_dist;
	unsigned slot_dist_n;
	int loss_model;
	struct {
		uint8_t state;
		uint32_t a1, a2, a3, a4, a5;
	} clg;
	struct netem_slot_cfg slot_config;
	struct {
		uint64_t slot_next;
		int32_t packets_left, bytes_left;
	} slot;
	uint64_t dup_failed; /* relaxed atomic */
};

/* ------------------------------------------------------- the options */

enum { LOSS_UNSPEC, LOSS_GI, LOSS_GE };

/* What tc sends: the netlink attributes of a netem qdisc, parsed. */
struct netem_opt {
	/* struct tc_netem_qopt */
	uint32_t latency, limit, loss, gap, duplicate, jitter;
	bool has_latency64, has_jitter64;
	int64_t latency64, jitter64;
	bool has_corr;
	uint32_t delay_corr, loss_corr, dup_corr;
	bool has_reorder;
	uint32_t reorder_prob, reorder_corr;
	bool has_corrupt;
	uint32_t corrupt_prob, corrupt_corr;
	bool has_ecn;
	int loss_type;
	uint32_t p13, p31, p32, p23, p14; /* gimodel */
	uint32_t ge_p, ge_r, ge_h, ge_k1; /* gemodel (h as the kernel wants it) */
	bool has_rate, has_rate64;
	uint32_t rate;
	uint64_t rate64;
	int32_t packet_overhead;
	uint32_t cell_size;
	int32_t cell_overhead;
	bool has_slot;
	struct netem_slot_cfg slot;
	bool has_seed;
	uint64_t seed;
	int16_t *dist;
	unsigned dist_n;
	int16_t *slot_dist;
	unsigned slot_dist_n;
};

/* ---------------------------------------------------- random decisions */

static void init_crandom(struct netem_priv *nd, struct crnd *c, uint32_t rho)
{
	c->rho = rho;
	c->last = rnd_u32(&nd->aux);
}

/* get_crandom(): the kernel's correlated source (its arithmetic). */
static uint32_t get_crandom(struct netem_priv *nd, struct crnd *c)
{
	if (!c || c->rho == 0)
		return rnd_u32(&nd->prng);
	uint64_t value = rnd_u32(&nd->prng);
	uint64_t rho = (uint64_t)c->rho + 1;
	uint64_t answer = (value * ((1ull << 32) - rho) + (uint64_t)c->last * rho) >> 32;
	c->last = (uint32_t)answer;
	return (uint32_t)answer;
}

/* loss_4state(): the GI model's 4-state chain, comparisons as the kernel's
 * (u32 sums wrap; a draw equal to a threshold takes no branch). */
static bool loss_4state(struct netem_priv *nd)
{
	uint32_t rnd = rnd_u32(&nd->prng);
	uint32_t a1 = nd->clg.a1, a2 = nd->clg.a2, a3 = nd->clg.a3, a4 = nd->clg.a4,
		 a5 = nd->clg.a5;

	switch (nd->clg.state) {
	case TX_IN_GAP_PERIOD:
		if (rnd < a4) {
			nd->clg.state = LOST_IN_GAP_PERIOD;
			return true;
		} else if (a4 < rnd && rnd < (uint32_t)(a1 + a4)) {
			nd->clg.state = LOST_IN_BURST_PERIOD;
			return true;
		} else if ((uint32_t)(a1 + a4) < rnd) {
			nd->clg.state = TX_IN_GAP_PERIOD;
		}
		break;
	case TX_IN_BURST_PERIOD:
		if (rnd < a5) {
			nd->clg.state = LOST_IN_BURST_PERIOD;
			return true;
		}
		nd->clg.state = TX_IN_BURST_PERIOD;
		break;
	case LOST_IN_BURST_PERIOD:
		if (rnd < a3) {
			nd->clg.state = TX_IN_BURST_PERIOD;
		} else if (a3 < rnd && rnd < (uint32_t)(a2 + a3)) {
			nd->clg.state = TX_IN_GAP_PERIOD;
		} else if ((uint32_t)(a2 + a3) < rnd) {
			nd->clg.state = LOST_IN_BURST_PERIOD;
			return true;
		}
		break;
	case LOST_IN_GAP_PERIOD:
		nd->clg.state = TX_IN_GAP_PERIOD;
		break;
	}
	return false;
}

/* loss_gilb_ell(): transition draw, then the loss draw of the new state. */
static bool loss_gilb_ell(struct netem_priv *nd)
{
	switch (nd->clg.state) {
	case GOOD_STATE:
		if (rnd_u32(&nd->prng) < nd->clg.a1)
			nd->clg.state = BAD_STATE;
		if (rnd_u32(&nd->prng) < nd->clg.a4)
			return true;
		break;
	case BAD_STATE:
		if (rnd_u32(&nd->prng) < nd->clg.a2)
			nd->clg.state = GOOD_STATE;
		if (rnd_u32(&nd->prng) > nd->clg.a3)
			return true;
		break;
	}
	return false;
}

static bool loss_event(struct netem_priv *nd)
{
	switch (nd->loss_model) {
	case CLG_RANDOM:
		return nd->loss && nd->loss >= get_crandom(nd, &nd->loss_cor);
	case CLG_4_STATES:
		return loss_4state(nd);
	case CLG_GILB_ELL:
		return loss_gilb_ell(nd);
	}
	return false;
}

/* tabledist() with the kernel's draw rule: no draw when sigma is 0. */
static int64_t netem_tabledist(struct netem_priv *nd, int64_t mu, int32_t sigma, struct crnd *c,
			       const int16_t *table, unsigned n)
{
	if (sigma == 0)
		return mu;
	uint32_t rnd = get_crandom(nd, c);
	return pw__dist_tabledist(mu, sigma, rnd, table, n);
}

/* packet_time_ns(): wire time of @len bytes at the configured rate, with the
 * kernel's integer types (u64 length, u32 cell arithmetic). */
static uint64_t packet_time_ns(uint64_t len, const struct netem_priv *nd)
{
	len += (uint64_t)(int64_t)nd->packet_overhead;
	if (nd->cell_size) {
		uint32_t cells = (uint32_t)len / nd->cell_size;
		if (len > (uint64_t)(uint32_t)(cells * nd->cell_size))
			cells++;
		len = (uint32_t)(cells * (nd->cell_size + (uint32_t)nd->cell_overhead));
	}
	return (len * 1000000000ull) / nd->rate;
}

/* ------------------------------------------------------------- tfifo */

static bool pkt_before(const struct pw_pkt *a, const struct pw_pkt *b)
{
	return a->pw_time_to_send < b->pw_time_to_send ||
	       (a->pw_time_to_send == b->pw_time_to_send && a->pw_seq < b->pw_seq);
}

/*
 * The heap is a pairing heap through pw_left (first child) and pw_right
 * (next sibling).  Keys (time_to_send, pw_seq) are unique, so the minimum
 * is unique and the order of equal times is arrival order whatever the
 * shape.  Insert: one comparison with the root, O(1).  Removing the
 * minimum: its children are linked in pairs left to right, then the pairs
 * right to left into one tree, O(log n) amortised; no allocation.
 */
static struct pw_pkt *ph_link(struct pw_pkt *a, struct pw_pkt *b)
{
	if (pkt_before(b, a)) {
		struct pw_pkt *t = a;
		a = b;
		b = t;
	}
	b->pw_right = a->pw_left; /* b becomes a's first child */
	a->pw_left = b;
	return a;
}

/* The root of the tree made of the sibling list starting at @first. */
static struct pw_pkt *ph_merge_pairs(struct pw_pkt *first)
{
	struct pw_pkt *acc = NULL; /* the pairs, last first, through pw_right */
	while (first) {
		struct pw_pkt *a = first, *b = a->pw_right;
		if (!b) {
			a->pw_right = acc;
			acc = a;
			break;
		}
		first = b->pw_right;
		a->pw_right = b->pw_right = NULL;
		a = ph_link(a, b);
		a->pw_right = acc;
		acc = a;
	}
	struct pw_pkt *root = NULL;
	while (acc) {
		struct pw_pkt *next = acc->pw_right;
		acc->pw_right = NULL;
		root = root ? ph_link(root, acc) : acc;
		acc = next;
	}
	return root;
}

static void tfifo_enqueue(struct netem_priv *nd, struct pw_pkt *p)
{
	uint64_t tnext = p->pw_time_to_send;
	p->pw_seq = nd->seq++;
	if (!nd->t_tail || tnext >= nd->t_tail->pw_time_to_send) {
		p->pw_next = NULL;
		if (nd->t_tail)
			nd->t_tail->pw_next = p;
		else
			nd->t_head = p;
		nd->t_tail = p;
	} else {
		p->pw_left = p->pw_right = NULL;
		p->pw_next = NULL;
		if (!nd->t_count || tnext > nd->t_max)
			nd->t_max = tnext;
		nd->t_root = nd->t_root ? ph_link(nd->t_root, p) : p;
		nd->t_count++;
	}
}

/* netem_peek(): the heap's minimum unless the list head is as early. */
static struct pw_pkt *tfifo_peek(struct netem_priv *nd)
{
	struct pw_pkt *t = nd->t_root;
	if (!t)
		return nd->t_head;
	if (!nd->t_head)
		return t;
	if (t->pw_time_to_send < nd->t_head->pw_time_to_send)
		return t;
	return nd->t_head;
}

/* Remove @p, which tfifo_peek() returned. */
static void tfifo_erase_head(struct netem_priv *nd, struct pw_pkt *p)
{
	if (p == nd->t_head) {
		nd->t_head = p->pw_next;
		if (!nd->t_head)
			nd->t_tail = NULL;
	} else {
		nd->t_root = ph_merge_pairs(p->pw_left);
		nd->t_count--;
	}
	p->pw_next = p->pw_left = p->pw_right = NULL;
}

/* ------------------------------------------------------------ data path */

static int netem_enqueue(struct pw_pkt *pkt, struct pw__qdisc *q, struct pw__drops *d)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	int count = 1;
	int rc_drop = PW_NET_XMIT_DROP;

	/* random duplication */
	if (nd->duplicate && nd->duplicate >= get_crandom(nd, &nd->dup_cor))
		++count;

	/* loss (or an ECN mark instead) */
	if (loss_event(nd)) {
		/* INET_ECN_set_ce() succeeds on ECT(1), ECT(0) and CE alike */
		if (nd->ecn && pkt->ecn >= 1 && pkt->ecn <= 3) {
			pkt->ecn = 3;
			q->st.drops++;
		} else {
			--count;
		}
	}
	if (count == 0) {
		q->st.drops++;
		pw__drop_later(d, pkt, PW_DROP_NETEM_LOSS);
		return PW_NET_XMIT_SUCCESS; /* NET_XMIT_SUCCESS | __NET_XMIT_BYPASS */
	}

	/* the duplicate goes in at the root, not duplicated again */
	if (count > 1) {
		struct pw_pkt *p2 = pw__qdisc_clone(q, pkt);
		if (p2) {
			struct pw__qdisc *rootq = pw__qdisc_root(q);
			uint32_t dupsave = nd->duplicate;
			nd->duplicate = 0;
			rootq->ops->enqueue(p2, rootq, d);
			nd->duplicate = dupsave;
			rc_drop = PW_NET_XMIT_SUCCESS;
		} else {
			__atomic_store_n(&nd->dup_failed, nd->dup_failed + 1, __ATOMIC_RELAXED);
		}
	}

	/* corruption: one random bit of the captured bytes */
	if (nd->corrupt && nd->corrupt >= get_crandom(nd, &nd->corrupt_cor)) {
		uint32_t rb = rnd_u32(&nd->aux), rbit = rnd_u32(&nd->aux);
		if (pkt->data && pkt->caplen) {
			uint32_t at = (uint32_t)(((uint64_t)rb * pkt->caplen) >> 32);
			unsigned bit = (unsigned)(((uint64_t)rbit * 8) >> 32);
			((unsigned char *)pkt->data)[at] ^= (unsigned char)(1u << bit);
		}
	}

	if (q->st.qlen >= q->limit) {
		q->st.drops++;
		pw__drop_later(d, pkt, PW_DROP_QDISC_LIMIT);
		return rc_drop;
	}

	pw__q_backlog_inc(q, pkt);

	if (nd->gap == 0 || nd->counter < nd->gap - 1 ||
	    nd->reorder < get_crandom(nd, &nd->reorder_cor)) {
		int64_t delay = netem_tabledist(nd, nd->latency, (int32_t)nd->jitter, &nd->delay_cor,
						nd->delay_dist, nd->delay_dist_n);
		uint64_t now = pw__net_now(q);

		if (nd->rate) {
			bool have = false;
			uint64_t last = 0;
			if (nd->rq.tail) {
				last = nd->rq.tail->pw_time_to_send;
				have = true;
			}
			if (nd->t_count && (!have || nd->t_max > last)) {
				last = nd->t_max;
				have = true;
			}
			if (nd->t_tail && (!have || nd->t_tail->pw_time_to_send > last)) {
				last = nd->t_tail->pw_time_to_send;
				have = true;
			}
			if (have) {
				/* the last packet is the reference point */
				delay -= (int64_t)(last - now);
				if (delay < 0)
					delay = 0;
				now = last;
			}
			delay += (int64_t)packet_time_ns(pkt->len, nd);
		}

		if (delay < 0 && (uint64_t)(-(delay + 1)) + 1 > now)
			pkt->pw_time_to_send = 0; /* see the departures */
		else
			pkt->pw_time_to_send = now + (uint64_t)delay;
		++nd->counter;
		tfifo_enqueue(nd, pkt);
	} else {
		/* reorder: this one goes out first */
		pkt->pw_time_to_send = pw__net_now(q);
		nd->counter = 0;
		pw__pktq_push_head(&nd->rq, pkt);
		q->st.requeues++;
	}
	return PW_NET_XMIT_SUCCESS;
}

/* get_slot_next(): the next slot's start and budget. */
static void get_slot_next(struct netem_priv *nd, uint64_t now)
{
	int64_t next_delay;
	if (!nd->slot_dist) {
		uint64_t span = (uint64_t)(nd->slot_config.max_delay - nd->slot_config.min_delay);
		uint64_t prod = (uint64_t)rnd_u32(&nd->aux) * span;
		next_delay = nd->slot_config.min_delay + ((int64_t)prod >> 32);
	} else {
		next_delay = netem_tabledist(nd, nd->slot_config.dist_delay,
					     (int32_t)nd->slot_config.dist_jitter, NULL,
					     nd->slot_dist, nd->slot_dist_n);
	}
	nd->slot.slot_next = now + (uint64_t)next_delay;
	nd->slot.packets_left = nd->slot_config.max_packets;
	nd->slot.bytes_left = nd->slot_config.max_bytes;
}

static struct pw_pkt *netem_dequeue(struct pw__qdisc *q)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	struct pw_pkt *p = pw__pktq_pop(&nd->rq);
	if (p) {
		pw__q_backlog_dec(q, p);
		pw__q_bstats(q, p);
		return p;
	}
	p = tfifo_peek(nd);
	if (!p)
		return NULL;
	uint64_t now = pw__net_now(q);
	uint64_t tts = p->pw_time_to_send;
	if (nd->slot.slot_next && nd->slot.slot_next < tts)
		get_slot_next(nd, now);
	if (tts <= now && nd->slot.slot_next <= now) {
		tfifo_erase_head(nd, p);
		pw__q_backlog_dec(q, p);
		if (nd->slot.slot_next) {
			nd->slot.packets_left--;
			nd->slot.bytes_left = (int32_t)((uint32_t)nd->slot.bytes_left - p->len);
			if (nd->slot.packets_left <= 0 || nd->slot.bytes_left <= 0)
				get_slot_next(nd, now);
		}
		pw__q_bstats(q, p);
		return p;
	}
	pw__watchdog_schedule_ns(&nd->wd, tts > nd->slot.slot_next ? tts : nd->slot.slot_next);
	return NULL;
}

static void netem_reset(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason reason)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	struct pw_pkt *p;
	while ((p = pw__pktq_pop(&nd->rq))) {
		pw__q_backlog_dec(q, p);
		pw__drop_later(d, p, reason);
	}
	while ((p = nd->t_root)) {
		tfifo_erase_head(nd, p);
		pw__q_backlog_dec(q, p);
		pw__drop_later(d, p, reason);
	}
	while ((p = nd->t_head)) {
		tfifo_erase_head(nd, p);
		pw__q_backlog_dec(q, p);
		pw__drop_later(d, p, reason);
	}
	nd->t_count = 0;
	pw__watchdog_cancel(&nd->wd);
}

/* ---------------------------------------------------- configuration */

/* netem_change(): apply what tc sent, attribute by attribute as the kernel
 * (an attribute tc did not send keeps its old value, except the loss model,
 * which falls back to random, and the seed, drawn afresh). */
static int netem_change(struct pw__qdisc *q, void *optp, struct pw__tc_ctx *tc)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	struct netem_opt *o = optp;
	(void)tc;
	if (!o)
		return -EINVAL;

	if (o->loss_type == LOSS_GI) {
		nd->loss_model = CLG_4_STATES;
		nd->clg.state = TX_IN_GAP_PERIOD;
		nd->clg.a1 = o->p13;
		nd->clg.a2 = o->p31;
		nd->clg.a3 = o->p32;
		nd->clg.a4 = o->p14;
		nd->clg.a5 = o->p23;
	} else if (o->loss_type == LOSS_GE) {
		nd->loss_model = CLG_GILB_ELL;
		nd->clg.state = GOOD_STATE;
		nd->clg.a1 = o->ge_p;
		nd->clg.a2 = o->ge_r;
		nd->clg.a3 = o->ge_h;
		nd->clg.a4 = o->ge_k1;
	} else {
		nd->loss_model = CLG_RANDOM;
	}

	/* tables: swapped in; the old ones go back to @o (opt_free) */
	if (o->dist) {
		int16_t *t = nd->delay_dist;
		unsigned n = nd->delay_dist_n;
		nd->delay_dist = o->dist;
		nd->delay_dist_n = o->dist_n;
		o->dist = t;
		o->dist_n = n;
	}
	if (o->slot_dist) {
		int16_t *t = nd->slot_dist;
		unsigned n = nd->slot_dist_n;
		nd->slot_dist = o->slot_dist;
		nd->slot_dist_n = o->slot_dist_n;
		o->slot_dist = t;
		o->slot_dist_n = n;
	}

	q->limit = o->limit;
	nd->latency = (int64_t)((uint64_t)o->latency << 6); /* PSCHED_TICKS2NS */
	nd->jitter = (int64_t)((uint64_t)o->jitter << 6);
	nd->limit = o->limit;
	nd->gap = o->gap;
	nd->counter = 0;
	nd->loss = o->loss;
	nd->duplicate = o->duplicate;
	if (nd->gap)
		nd->reorder = ~0u; /* gap alone: every gap-th packet */

	/* the seed first: the correlation start values come from aux */
	nd->seed_given = o->has_seed;
	nd->seed = o->has_seed ? o->seed : random_u64();
	rnd_seed(&nd->prng, nd->seed);
	rnd_seed(&nd->aux, o->has_seed ? o->seed ^ 0x9e3779b97f4a7c15ull : random_u64());

	if (o->has_corr) {
		init_crandom(nd, &nd->delay_cor, o->delay_corr);
		init_crandom(nd, &nd->loss_cor, o->loss_corr);
		init_crandom(nd, &nd->dup_cor, o->dup_corr);
	}
	if (o->has_reorder) {
		nd->reorder = o->reorder_prob;
		init_crandom(nd, &nd->reorder_cor, o->reorder_corr);
	}
	if (o->has_corrupt) {
		nd->corrupt = o->corrupt_prob;
		init_crandom(nd, &nd->corrupt_cor, o->corrupt_corr);
	}
	if (o->has_rate) {
		nd->rate = o->rate;
		nd->packet_overhead = o->packet_overhead;
		nd->cell_size = o->cell_size;
		nd->cell_overhead = o->cell_overhead;
	}
	if (o->has_rate64 && o->rate64 > nd->rate)
		nd->rate = o->rate64;
	if (o->has_latency64)
		nd->latency = o->latency64;
	if (o->has_jitter64)
		nd->jitter = o->jitter64;
	if (o->has_ecn)
		nd->ecn = 1;
	if (o->has_slot) {
		nd->slot_config = o->slot;
		if (nd->slot_config.max_packets == 0)
			nd->slot_config.max_packets = INT_MAX;
		if (nd->slot_config.max_bytes == 0)
			nd->slot_config.max_bytes = INT_MAX;
		int64_t dj = nd->slot_config.dist_jitter;
		dj = dj < 0 ? -dj : dj;
		nd->slot_config.dist_jitter = dj > INT_MAX || dj < 0 ? INT_MAX : dj;
		nd->slot.packets_left = nd->slot_config.max_packets;
		nd->slot.bytes_left = nd->slot_config.max_bytes;
		if (nd->slot_config.min_delay | nd->slot_config.max_delay |
		    nd->slot_config.dist_jitter)
			nd->slot.slot_next = pw__net_now(q);
		else
			nd->slot.slot_next = 0;
	}
	/* jitter capped to what tabledist() takes */
	int64_t j = nd->jitter < 0 ? -nd->jitter : nd->jitter;
	nd->jitter = j > INT_MAX || j < 0 ? INT_MAX : j;
	return 0;
}

static int netem_init(struct pw__qdisc *q, void *opt, struct pw__tc_ctx *tc)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	if (!opt)
		return -EINVAL; /* netem is never a default qdisc */
	memset(nd, 0, sizeof(*nd));
	pw__pktq_init(&nd->rq);
	nd->loss_model = CLG_RANDOM;
	int rc = netem_change(q, opt, tc);
	if (rc)
		return rc;
	pw__watchdog_init(&nd->wd, q);
	return 0;
}

static void netem_destroy(struct pw__qdisc *q)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	pw__watchdog_destroy(&nd->wd);
	free(nd->delay_dist);
	free(nd->slot_dist);
	nd->delay_dist = nd->slot_dist = NULL;
}

static void netem_opt_free(void *optp)
{
	struct netem_opt *o = optp;
	if (!o)
		return;
	free(o->dist);
	free(o->slot_dist);
	o->dist = o->slot_dist = NULL;
}

uint64_t pw__netem_dup_failed(struct pw__qdisc *q)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	return __atomic_load_n(&nd->dup_failed, __ATOMIC_RELAXED);
}

void pw__netem_prng_info(struct pw__qdisc *q, struct pw__netem_prng_info *out)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	out->seed = nd->seed;
	out->seed_given = nd->seed_given;
	out->delay_last = nd->delay_cor.last;
	out->delay_rho = nd->delay_cor.rho;
	out->loss_last = nd->loss_cor.last;
	out->loss_rho = nd->loss_cor.rho;
	out->dup_last = nd->dup_cor.last;
	out->dup_rho = nd->dup_cor.rho;
	out->reorder_last = nd->reorder_cor.last;
	out->reorder_rho = nd->reorder_cor.rho;
	out->corrupt_last = nd->corrupt_cor.last;
	out->corrupt_rho = nd->corrupt_cor.rho;
}

/* ------------------------------------------------------------ tc parse */

static void explain(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "%s",
		   "Usage: ... netem [ limit PACKETS ]\n"
		   "                 [ delay TIME [ JITTER [CORRELATION]]]\n"
		   "                 [ distribution {uniform|normal|pareto|paretonormal} ]\n"
		   "                 [ corrupt PERCENT [CORRELATION]]\n"
		   "                 [ duplicate PERCENT [CORRELATION]]\n"
		   "                 [ loss random PERCENT [CORRELATION]]\n"
		   "                 [ loss state P13 [P31 [P32 [P23 P14]]]\n"
		   "                 [ loss gemodel PERCENT [R [1-H [1-K]]]\n"
		   "                 [ seed SEED \n]"
		   "                 [ ecn ]\n"
		   "                 [ reorder PERCENT [CORRELATION] [ gap DISTANCE ]]\n"
		   "                 [ rate RATE [PACKETOVERHEAD] [CELLSIZE] [CELLOVERHEAD]]\n"
		   "                 [ slot MIN_DELAY [MAX_DELAY] [packets MAX_PACKETS] [bytes MAX_BYTES]]\n"
		   "                 [ slot distribution {uniform|normal|pareto|paretonormal|custom}\n"
		   "                   DELAY JITTER [packets MAX_PACKETS] [bytes MAX_BYTES]]");
}

static void explain1(struct pw__tc_ctx *tc, const char *arg)
{
	pw__tc_err(tc, "Illegal \"%s\"", arg);
}

#if !PW_NETEM_TC_TIME64
/* get_ticks(): a time in psched ticks, through tc's tick arithmetic. */
static int get_ticks(struct pw__tc_ctx *tc, uint32_t *ticks, const char *str)
{
	uint32_t t;
	if (pw__get_time(&t, str))
		return -1;
	if (pw__tc_core_time2big(&tc->core, t)) {
		pw__tc_err(tc, "Illegal %u time (too large)", t);
		return -1;
	}
	*ticks = pw__tc_core_time2tick(&tc->core, t);
	return 0;
}
#endif

static int load_dist(struct pw__tc_ctx *tc, const char *name, int16_t **t, unsigned *n)
{
	char err[512];
	err[0] = '\0';
	free(*t);
	*t = NULL;
	*n = 0;
	int rc = pw__dist_get(name, t, n, err, sizeof(err));
	if (rc || !*t || *n == 0) {
		if (err[0])
			pw__tc_err(tc, "%s", err);
		free(*t);
		*t = NULL;
		*n = 0;
		return rc ? rc : -EINVAL;
	}
	return 0;
}

#define NEXT_ARG_OK() (argc - 1 > 0)
#define NEXT_ARG()                                                                          \
	do {                                                                                \
		argv++;                                                                     \
		if (--argc <= 0) {                                                          \
			pw__tc_err(tc, "Command line is not complete. Try option \"help\"");  \
			goto fail;                                                          \
		}                                                                           \
	} while (0)
#define NEXT_IS_NUMBER() (NEXT_ARG_OK() && isdigit((unsigned char)argv[1][0]))
#define NEXT_IS_SIGNED_NUMBER() \
	(NEXT_ARG_OK() && (isdigit((unsigned char)argv[1][0]) || argv[1][0] == '-'))
#define ILLEGAL(what)                \
	do {                         \
		explain1(tc, (what)); \
		goto fail;           \
	} while (0)

/* netem_parse_opt() of q_netem.c, keyword by keyword. */
static int netem_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct netem_opt *o = optp;
	int rc = -EINVAL;

	memset(o, 0, sizeof(*o));
	o->limit = 1000;
	o->loss_type = LOSS_UNSPEC;

	for (; argc > 0; --argc, ++argv) {
		if (pw__matches(*argv, "limit") == 0) {
			NEXT_ARG();
			if (pw__get_size(&o->limit, *argv))
				ILLEGAL("limit");
		} else if (pw__matches(*argv, "latency") == 0 || pw__matches(*argv, "delay") == 0) {
			NEXT_ARG();
#if PW_NETEM_TC_TIME64
			o->has_latency64 = true;
			if (pw__get_time64(&o->latency64, *argv))
				ILLEGAL("latency");
#else
			if (get_ticks(tc, &o->latency, *argv))
				ILLEGAL("latency");
#endif
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
#if PW_NETEM_TC_TIME64
				o->has_jitter64 = true;
				if (pw__get_time64(&o->jitter64, *argv))
					ILLEGAL("latency");
#else
				if (get_ticks(tc, &o->jitter, *argv))
					ILLEGAL("latency");
#endif
				if (NEXT_IS_NUMBER()) {
					NEXT_ARG();
					o->has_corr = true;
					if (pw__get_percent(&o->delay_corr, *argv))
						ILLEGAL("latency");
				}
			}
		} else if (pw__matches(*argv, "loss") == 0 || pw__matches(*argv, "drop") == 0) {
			if (o->loss > 0 || o->loss_type != LOSS_UNSPEC)
				ILLEGAL("duplicate loss argument\n");
			NEXT_ARG();
			bool random_model = isdigit((unsigned char)argv[0][0]);
			if (!random_model && !strcmp(*argv, "random")) {
				NEXT_ARG();
				random_model = true;
			}
			if (random_model) {
				if (pw__get_percent(&o->loss, *argv))
					ILLEGAL("loss percent");
				if (NEXT_IS_NUMBER()) {
					NEXT_ARG();
					o->has_corr = true;
					if (pw__get_percent(&o->loss_corr, *argv))
						ILLEGAL("loss correlation");
				}
			} else if (!strcmp(*argv, "state")) {
				double p13;
				NEXT_ARG();
				if (pw__parse_percent(&p13, *argv))
					ILLEGAL("loss p13");
				o->p13 = pw__percent_to_u32(p13);
				o->p31 = pw__percent_to_u32(1. - p13);
				o->p32 = pw__percent_to_u32(0);
				o->p23 = pw__percent_to_u32(1.);
				o->p14 = pw__percent_to_u32(0);
				o->loss_type = LOSS_GI;
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p31, *argv))
					ILLEGAL("loss p31");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p32, *argv))
					ILLEGAL("loss p32");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p23, *argv))
					ILLEGAL("loss p23");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p14, *argv))
					ILLEGAL("loss p14");
			} else if (!strcmp(*argv, "gemodel")) {
				double p;
				NEXT_ARG();
				if (pw__parse_percent(&p, *argv))
					ILLEGAL("loss gemodel p");
				o->ge_p = pw__percent_to_u32(p);
				o->ge_r = pw__percent_to_u32(1. - p);
				o->ge_h = pw__percent_to_u32(0);
				o->ge_k1 = pw__percent_to_u32(0);
				o->loss_type = LOSS_GE;
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->ge_r, *argv))
					ILLEGAL("loss gemodel r");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->ge_h, *argv))
					ILLEGAL("loss gemodel h");
				o->ge_h = UINT32_MAX - o->ge_h; /* tc takes 1-h, the kernel h */
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->ge_k1, *argv))
					ILLEGAL("loss gemodel k");
			} else {
				pw__tc_err(tc, "Unknown loss parameter: %s", *argv);
				goto fail;
			}
		} else if (pw__matches(*argv, "seed") == 0) {
			NEXT_ARG();
			o->has_seed = true;
			if (pw__get_u64(&o->seed, *argv, 10))
				ILLEGAL("seed");
		} else if (pw__matches(*argv, "ecn") == 0) {
			o->has_ecn = true;
		} else if (pw__matches(*argv, "reorder") == 0) {
			NEXT_ARG();
			o->has_reorder = true;
			if (pw__get_percent(&o->reorder_prob, *argv))
				ILLEGAL("reorder");
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				o->has_corr = true;
				if (pw__get_percent(&o->reorder_corr, *argv))
					ILLEGAL("reorder");
			}
		} else if (pw__matches(*argv, "corrupt") == 0) {
			NEXT_ARG();
			o->has_corrupt = true;
			if (pw__get_percent(&o->corrupt_prob, *argv))
				ILLEGAL("corrupt");
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				o->has_corr = true;
				if (pw__get_percent(&o->corrupt_corr, *argv))
					ILLEGAL("corrupt");
			}
		} else if (pw__matches(*argv, "gap") == 0) {
			NEXT_ARG();
			if (pw__get_u32(&o->gap, *argv, 0))
				ILLEGAL("gap");
		} else if (pw__matches(*argv, "duplicate") == 0) {
			NEXT_ARG();
			if (pw__get_percent(&o->duplicate, *argv))
				ILLEGAL("duplicate");
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				/* as iproute2: this correlation alone does not send
				 * TCA_NETEM_CORR */
				if (pw__get_percent(&o->dup_corr, *argv))
					ILLEGAL("duplicate");
			}
		} else if (pw__matches(*argv, "distribution") == 0) {
			NEXT_ARG();
			rc = load_dist(tc, *argv, &o->dist, &o->dist_n);
			if (rc)
				goto fail_rc;
		} else if (pw__matches(*argv, "rate") == 0) {
			o->has_rate = true;
			NEXT_ARG();
			uint64_t r64;
			if (strchr(*argv, '%'))
				ILLEGAL("rate"); /* no link speed here */
			if (pw__get_rate64(&r64, *argv))
				ILLEGAL("rate");
			o->rate64 = r64;
			if (NEXT_IS_SIGNED_NUMBER()) {
				NEXT_ARG();
				if (pw__get_s32(&o->packet_overhead, *argv, 0))
					ILLEGAL("rate");
			}
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				if (pw__get_u32(&o->cell_size, *argv, 0))
					ILLEGAL("rate");
			}
			if (NEXT_IS_SIGNED_NUMBER()) {
				NEXT_ARG();
				if (pw__get_s32(&o->cell_overhead, *argv, 0))
					ILLEGAL("rate");
			}
		} else if (pw__matches(*argv, "slot") == 0) {
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				o->has_slot = true;
				if (pw__get_time64(&o->slot.min_delay, *argv))
					ILLEGAL("slot min_delay");
				if (NEXT_IS_NUMBER()) {
					NEXT_ARG();
					if (pw__get_time64(&o->slot.max_delay, *argv) ||
					    o->slot.max_delay < o->slot.min_delay)
						ILLEGAL("slot max_delay");
				} else {
					o->slot.max_delay = o->slot.min_delay;
				}
			} else {
				NEXT_ARG();
				if (strcmp(*argv, "distribution") == 0) {
					o->has_slot = true;
					NEXT_ARG();
					rc = load_dist(tc, *argv, &o->slot_dist, &o->slot_dist_n);
					if (rc)
						goto fail_rc;
					NEXT_ARG();
					if (pw__get_time64(&o->slot.dist_delay, *argv))
						ILLEGAL("slot delay");
					NEXT_ARG();
					if (pw__get_time64(&o->slot.dist_jitter, *argv))
						ILLEGAL("slot jitter");
					if (o->slot.dist_jitter <= 0) {
						pw__tc_err(tc, "Non-positive jitter");
						goto fail;
					}
				} else {
					pw__tc_err(tc, "Unknown slot parameter: %s", *argv);
					goto fail;
				}
			}
			if (NEXT_ARG_OK() && pw__matches(argv[1], "packets") == 0) {
				NEXT_ARG();
				if (!NEXT_ARG_OK() || pw__get_s32(&o->slot.max_packets, argv[1], 0))
					ILLEGAL("slot packets");
				NEXT_ARG();
			}
			if (NEXT_ARG_OK() && pw__matches(argv[1], "bytes") == 0) {
				uint32_t max_bytes;
				NEXT_ARG();
				if (!NEXT_ARG_OK() || pw__get_size(&max_bytes, argv[1]))
					ILLEGAL("slot bytes");
				o->slot.max_bytes = (int32_t)max_bytes;
				NEXT_ARG();
			}
		} else {
			if (strcmp(*argv, "help") != 0)
				pw__tc_err(tc, "What is \"%s\"?", *argv);
			explain(tc);
			goto fail;
		}
	}

#if PW_NETEM_TC_TIME64
	bool no_latency = o->latency64 == 0, no_jitter = o->jitter64 == 0;
#else
	bool no_latency = o->latency == 0, no_jitter = o->jitter == 0;
#endif
	if (o->reorder_prob) {
		if (no_latency) {
			pw__tc_err(tc, "reordering not possible without specifying some delay");
			explain(tc);
			goto fail;
		}
		if (o->gap == 0)
			o->gap = 1;
	} else if (o->gap > 0) {
		pw__tc_err(tc, "gap specified without reorder probability");
		explain(tc);
		goto fail;
	}
	if (o->has_ecn && o->loss == 0 && o->loss_type == LOSS_UNSPEC) {
		pw__tc_err(tc, "ecn requested without loss model");
		explain(tc);
		goto fail;
	}
	if (o->dist && (no_latency || no_jitter)) {
		pw__tc_err(tc, "distribution specified but no latency and jitter values");
		explain(tc);
		goto fail;
	}
	if (o->has_rate) {
		if (o->rate64 >= (1ull << 32)) {
			o->has_rate64 = true;
			o->rate = ~0u;
		} else {
			o->rate = (uint32_t)o->rate64;
			o->rate64 = 0;
		}
	}
	return 0;

fail:
	rc = -EINVAL;
fail_rc:
	netem_opt_free(o);
	return rc;
}

#undef NEXT_ARG_OK
#undef NEXT_ARG
#undef NEXT_IS_NUMBER
#undef NEXT_IS_SIGNED_NUMBER
#undef ILLEGAL

/* ------------------------------------------------------------ tc print */

/* print_corr(): text only when present, JSON always. */
static void print_corr(struct pw__out *o, bool present, uint32_t value)
{
	if (!o->json) {
		if (present)
			pw__print_percent(o, PW_PRINT_FP, NULL, " %g%%", value);
	} else {
		pw__print_percent(o, PW_PRINT_JSON, "correlation", NULL, value);
	}
}

/* PRINT_INT_OPT(): JSON always, text when nonzero. */
static void print_int_opt(struct pw__out *o, const char *label, const char *fmt, int val)
{
	pw__print_int(o, PW_PRINT_JSON, label, NULL, val);
	if (val != 0)
		pw__print_int(o, PW_PRINT_FP, NULL, fmt, val);
}

/* netem_print_opt() on what the kernel's netem_dump() would send. */
static void netem_print(struct pw__qdisc *q, struct pw__out *o)
{
	struct netem_priv *nd = pw__qdisc_priv(q);

	pw__print_uint(o, PW_PRINT_ANY, "limit", "limit %d", nd->limit);

#if PW_NETEM_TC_TIME64
	if (nd->latency != 0) {
		pw__open_json_object(o, "delay");
		if (o->json) {
			pw__print_float(o, PW_PRINT_JSON, "delay", NULL,
					(double)nd->latency / 1000000000.);
			pw__print_float(o, PW_PRINT_JSON, "jitter", NULL,
					(double)nd->jitter / 1000000000.);
		} else {
			char b[PW__SPRINT_BSIZE];
			pw__print_string(o, PW_PRINT_FP, NULL, " delay %s",
					 pw__sprint_time64(nd->latency, b, sizeof(b)));
			if (nd->jitter != 0)
				pw__print_string(o, PW_PRINT_FP, NULL, "  %s",
						 pw__sprint_time64(nd->jitter, b, sizeof(b)));
		}
		print_corr(o, nd->jitter && nd->delay_cor.rho, nd->delay_cor.rho);
		pw__close_json_object(o);
	}
#else
	{
		/* the dump's 32-bit ticks: min(ns >> 6, UINT_MAX) */
		uint64_t lt = (uint64_t)(nd->latency >> 6), jt = (uint64_t)(nd->jitter >> 6);
		uint32_t lat = lt > UINT32_MAX ? UINT32_MAX : (uint32_t)lt;
		uint32_t jit = jt > UINT32_MAX ? UINT32_MAX : (uint32_t)jt;
		if (lat) {
			struct pw__tc_core core;
			pw__tc_core_set(&core, 1000, 64, 1000000);
			pw__open_json_object(o, "delay");
			if (!o->json) {
				char b[PW__SPRINT_BSIZE];
				pw__print_string(o, PW_PRINT_FP, NULL, " delay %s",
						 pw__sprint_ticks(&core, lat, b, sizeof(b)));
				if (jit)
					pw__print_string(o, PW_PRINT_FP, NULL, "  %s",
							 pw__sprint_ticks(&core, jit, b, sizeof(b)));
			} else {
				pw__print_float(o, PW_PRINT_JSON, "delay", NULL,
						pw__tc_core_tick2time(&core, lat) / 1000000.);
				pw__print_float(o, PW_PRINT_JSON, "jitter", NULL,
						pw__tc_core_tick2time(&core, jit) / 1000000.);
			}
			print_corr(o, jit && nd->delay_cor.rho, nd->delay_cor.rho);
			pw__close_json_object(o);
		}
	}
#endif

	if (nd->loss) {
		pw__open_json_object(o, "loss-random");
		pw__print_percent(o, PW_PRINT_ANY, "loss", " loss %g%%", nd->loss);
		print_corr(o, nd->loss_cor.rho != 0, nd->loss_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->loss_model == CLG_4_STATES) {
		pw__open_json_object(o, "loss-state");
		pw__print_percent(o, PW_PRINT_ANY, "p13", " loss state p13 %g%%", nd->clg.a1);
		pw__print_percent(o, PW_PRINT_ANY, "p31", " p31 %g%%", nd->clg.a2);
		pw__print_percent(o, PW_PRINT_ANY, "p32", " p32 %g%%", nd->clg.a3);
		pw__print_percent(o, PW_PRINT_ANY, "p23", " p23 %g%%", nd->clg.a5);
		pw__print_percent(o, PW_PRINT_ANY, "p14", " p14 %g%%", nd->clg.a4);
		pw__close_json_object(o);
	}

	if (nd->loss_model == CLG_GILB_ELL) {
		pw__open_json_object(o, "loss-gemodel");
		pw__print_percent(o, PW_PRINT_ANY, "p", " loss gemodel p %g%%", nd->clg.a1);
		pw__print_percent(o, PW_PRINT_ANY, "r", " r %g%%", nd->clg.a2);
		pw__print_percent(o, PW_PRINT_ANY, "1-h", " 1-h %g%%", UINT32_MAX - nd->clg.a3);
		pw__print_percent(o, PW_PRINT_ANY, "1-k", " 1-k %g%%", nd->clg.a4);
		pw__close_json_object(o);
	}

	if (nd->duplicate) {
		pw__open_json_object(o, "duplicate");
		pw__print_percent(o, PW_PRINT_ANY, "duplicate", " duplicate %g%%", nd->duplicate);
		print_corr(o, nd->dup_cor.rho != 0, nd->dup_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->reorder) {
		pw__open_json_object(o, "reorder");
		pw__print_percent(o, PW_PRINT_ANY, "reorder", " reorder %g%%", nd->reorder);
		print_corr(o, nd->reorder_cor.rho != 0, nd->reorder_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->corrupt) {
		pw__open_json_object(o, "corrupt");
		pw__print_percent(o, PW_PRINT_ANY, "corrupt", " corrupt %g%%", nd->corrupt);
		print_corr(o, nd->corrupt_cor.rho != 0, nd->corrupt_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->seed_given)
		pw__print_u64(o, PW_PRINT_ANY, "seed", " seed %llu", nd->seed);

	if (nd->rate) {
		pw__open_json_object(o, "rate");
		pw__print_rate(o, PW_PRINT_ANY, "rate", " rate %s", nd->rate);
		print_int_opt(o, "packetoverhead", " packetoverhead %d", nd->packet_overhead);
		pw__print_uint(o, PW_PRINT_JSON, "cellsize", NULL, nd->cell_size);
		if (nd->cell_size)
			pw__print_uint(o, PW_PRINT_FP, NULL, " cellsize %u", nd->cell_size);
		print_int_opt(o, "celloverhead", " celloverhead %d", nd->cell_overhead);
		pw__close_json_object(o);
	}

	if (nd->slot_config.min_delay | nd->slot_config.max_delay | nd->slot_config.dist_jitter) {
		struct netem_slot_cfg s = nd->slot_config;
		if (s.max_packets == INT_MAX)
			s.max_packets = 0;
		if (s.max_bytes == INT_MAX)
			s.max_bytes = 0;
		pw__open_json_object(o, "slot");
		if (s.dist_jitter > 0) {
			pw__print_time64(o, PW_PRINT_ANY, "distribution", " slot distribution %s",
					 s.dist_delay);
			pw__print_time64(o, PW_PRINT_ANY, "jitter", " %s", s.dist_jitter);
		} else {
			pw__print_time64(o, PW_PRINT_ANY, "min-delay", " slot %s", s.min_delay);
			pw__print_time64(o, PW_PRINT_ANY, "max-delay", " %s", s.max_delay);
		}
		print_int_opt(o, "packets", " packets %d", s.max_packets);
		print_int_opt(o, "bytes", " bytes %d", s.max_bytes);
		pw__close_json_object(o);
	}

	pw__print_bool(o, PW_PRINT_JSON, "ecn", NULL, nd->ecn != 0);
	if (nd->ecn)
		pw__print_bool(o, PW_PRINT_FP, NULL, " ecn ", true);

	pw__print_u64(o, PW_PRINT_JSON, "gap", NULL, nd->gap);
	if (nd->gap)
		pw__print_u64(o, PW_PRINT_FP, NULL, " gap %lu", nd->gap);
}

const struct pw__qdisc_ops pw__netem_ops = {
	.id = "netem",
	.priv_size = sizeof(struct netem_priv),
	.opt_size = sizeof(struct netem_opt),
	.flags = 0,
	.enqueue = netem_enqueue,
	.dequeue = netem_dequeue,
	.init = netem_init,
	.change = netem_change,
	.reset = netem_reset,
	.destroy = netem_destroy,
	.parse = netem_parse,
	.opt_free = netem_opt_free,
	.print = netem_print,
};
