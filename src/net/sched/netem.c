/* SPDX-License-Identifier: MIT */
/*
 * netem: the kernel's network emulator qdisc (net/sched/sch_netem.c) and
 * its tc side (iproute2's tc/q_netem.c), rewritten for pinwheel.  This
 * file: the data path and configuration; tc/q_netem.c: parsing and
 * printing; netem_priv.h: the structures both use.
 *
 * What it does.  Each packet handed to enqueue goes through, in the
 * kernel's order: the duplicate draw; the loss model (random with
 * correlation, the 4-state Markov chain "state", or Gilbert-Elliott
 * "gemodel"); with `ecn`, a lost ECN-capable packet (ECT(0)/ECT(1), or
 * one already CE: INET_ECN_set_ce() succeeds on it) is marked CE instead
 * of dropped (and still counted as a drop, as the kernel's
 * qdisc_qstats_drop() on the mark); a lost packet goes to the drop
 * list with PW_DROP_NETEM_LOSS and enqueue returns NET_XMIT_SUCCESS |
 * PW__NET_XMIT_BYPASS (the kernel's: success to the sender, a drop to a
 * parent qdisc, which must not count it as queued); a duplicate is cloned through the device's
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
 * The queue ("tfifo", tfifo.c): packets leave in order of time_to_send,
 * in arrival order among equal times, as from the kernel's t_head list
 * and t_root rbtree.  Like the kernel's, it appends a packet not earlier
 * than the last one queued to a list, O(1), which under constant delay or
 * rate is every packet; those that arrive earlier (jitter) go, where the
 * kernel has its rbtree, to a calendar of time buckets, sorted a bucket at
 * a time as it comes due, with a pairing heap for what the calendar cannot
 * span.  change() sizes the buckets to the spread of the delays
 * (pw__tfifo_set_span()); the rate code reads the latest time queued
 * (skb_rb_last() or t_tail: pw__tfifo_last_ns()).  Reordered packets are
 * a third FIFO (the kernel's sch->q) with enqueue at the head.
 *
 * Invariants.  Every packet handed to enqueue leaves exactly once: to the
 * drop list (lost, over the limit, or flushed by reset()), or out of
 * dequeue.  A packet is in exactly one of the two queues (the reordered
 * FIFO, the tfifo) while queued; q->st.qlen and q->st.backlog are the
 * number and bytes of packets in both together (pw__q_backlog_inc/dec on
 * every entry and exit).  A
 * duplicate is a new packet (the clone op's memory) that enters through
 * the root's enqueue and follows the same rule.
 *
 * Locking.  Every hook runs under the root lock of the qdisc's TX queue
 * (init and destroy without a lock, the qdisc not reachable), so the
 * queue, the PRNG state, the correlation state and the slot are plain
 * fields.  The watchdog's callback touches no netem state itself: it
 * runs the queue (pw__qdisc_run() under the root lock, on the CPU it fired
 * on), whose dequeue takes the due packets.  parse() (tc/q_netem.c) runs
 * on the tc thread and only fills the option struct (loading tables
 * there, so change() does not allocate or fail);
 * change() swaps the tables in and the old ones go back to the option
 * struct, freed by opt_free() outside the lock, as the kernel's
 * netem_change() swaps and frees after unlocking.  The tfifo's calendar
 * is allocated once, by init, its size from init's limit; change() sets
 * only its buckets' width (a later limit keeps the size: correct, only
 * more packets a bucket).
 *
 * Costs.  Constant delay or rate: O(1) per packet (the list).  Jitter:
 * O(1) amortised per packet for the calendar, whose cost depends on the
 * packets per bucket (about the packets in flight over the buckets, one
 * per packet of the limit up to 65536: 8 bytes each, allocated by init)
 * and on the cache misses of touching packets that arrived a delay ago,
 * which it prefetches ahead of their turn; what overflows the calendar
 * (times beyond its span, a dequeue far behind) costs the heap's O(log n);
 * tfifo.c's Costs has the detail, docs/benchmarks.md ("netem's
 * time-ordered queue") the figures.  reset() flushes in the kernel's
 * order, out-of-order packets by time, then the list.  The PRNG is
 * LFSR113: a few shifts per draw.
 *
 * Departures from the kernel, and why:
 *  - No child qdisc (netem's one class, `tc qdisc add ... parent X:1`):
 *    pinwheel's netem is always a leaf; its packets go to the device.
 *  - The kernel draws a few values from its unseeded get_random_u32()
 *    even with `seed`: the first "last" of each correlated source, the
 *    byte and bit that corrupt flips, and the start of each uniform slot.
 *    Here those come from a second LFSR113 stream, seeded from the seed
 *    (seed ^ 0x9e3779b97f4a7c15) when one is given, from getrandom()
 *    otherwise (from the runtime's seeded stream under a link: both the
 *    seed and this stream; tc/link.c), so a seeded run is reproducible in
 *    every respect, not only
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
 * pinwheel's extension: `inorder` (iproute2 and the kernel have no such
 * option).  The kernel's netem reorders whenever jitter exceeds the gap
 * between two packets; with `inorder` a packet's time_to_send is
 * max(drawn, the time_to_send of the packet enqueued ahead of it), so
 * packets leave in the order they came, every packet of the tfifo takes
 * the in-order list (O(1)), and the delay a packet sees is its own draw
 * or its predecessor's departure, whichever is later (docs/design/net.md
 * has the measured distributions).  The packets the rule delayed are
 * counted (inorder_held, shown by tc -d).  With `rate` it combines (the
 * rate already starts each packet after the last one queued; the rule
 * is then a no-op unless the delay draw is later); `reorder`/`gap` is
 * refused with it (tc's side and change(), which checks before it
 * touches anything).  tc sends it every time: a change without the word
 * turns it off; one that turns it on starts behind the latest time
 * already queued.  Without the word netem is the kernel's, byte for byte.
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

#include "netem_priv.h"
#include "tfifo.h"


/* ------------------------------------------------------------ the PRNG */


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

/* get_random_u64() stand-in: the OS's random source, or the runtime's
 * seeded stream when it has one (a link's seed: tc/link.c).  cfg_lock held. */
static uint64_t random_u64(struct pw__net *net)
{
	uint64_t v = 0;
	if (net->seeded) { /* splitmix64 */
		v = (net->seed_state += 0x9e3779b97f4a7c15ull);
		v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
		v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
		return v ^ (v >> 31);
	}
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

/* s64 addition as the kernel does it (-fno-strict-overflow: wraps). */
static int64_t add_wrap(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

int64_t pw__netem_tabledist(int64_t mu, int32_t sigma, uint32_t rnd, const int16_t *table,
			   unsigned n)
{
	int64_t x, t; /* the kernel's s64 x and long t (64-bit kernel) */

	if (sigma == 0)
		return mu;
	if (!table || n == 0) {
		/* u32 arithmetic: 2 * (u32)sigma wraps, as in the kernel */
		uint32_t mod = 2u * (uint32_t)sigma;
		uint32_t r = mod ? rnd % mod : rnd;

		/* (u32 + s64) - s32: the u32 converts to s64 first */
		return add_wrap(add_wrap((int64_t)r, mu), -(int64_t)sigma);
	}
	t = table[rnd % n];
	x = (int64_t)(sigma % PW_NETEM_DIST_SCALE) * t;
	if (x >= 0)
		x += PW_NETEM_DIST_SCALE / 2;
	else
		x -= PW_NETEM_DIST_SCALE / 2;
	return add_wrap(x / PW_NETEM_DIST_SCALE + (int64_t)(sigma / PW_NETEM_DIST_SCALE) * t, mu);
}

/* tabledist() with the kernel's draw rule: no draw when sigma is 0. */
static int64_t netem_tabledist(struct netem_priv *nd, int64_t mu, int32_t sigma, struct crnd *c,
			       const int16_t *table, unsigned n)
{
	if (sigma == 0)
		return mu;
	uint32_t rnd = get_crandom(nd, c);
	return pw__netem_tabledist(mu, sigma, rnd, table, n);
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
		/* consumed, not queued: a parent counts a drop and no qlen */
		return PW_NET_XMIT_SUCCESS | PW__NET_XMIT_BYPASS;
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
			uint64_t last = 0, tlast;
			if (nd->rq.tail) {
				last = nd->rq.tail->pw_time_to_send;
				have = true;
			}
			if (pw__tfifo_last_ns(&nd->tf, &tlast) && (!have || tlast > last)) {
				last = tlast;
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
		if (nd->inorder) {
			/* never before the packet enqueued ahead of it */
			if (pkt->pw_time_to_send < nd->inorder_last) {
				pkt->pw_time_to_send = nd->inorder_last;
				__atomic_store_n(&nd->inorder_held, nd->inorder_held + 1,
						 __ATOMIC_RELAXED);
			}
			nd->inorder_last = pkt->pw_time_to_send;
		}
		++nd->counter;
		pw__tfifo_enqueue(&nd->tf, pkt);
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
	p = pw__tfifo_peek(&nd->tf);
	if (!p)
		return NULL;
	uint64_t now = pw__net_now(q);
	uint64_t tts = p->pw_time_to_send;
	if (nd->slot.slot_next && nd->slot.slot_next < tts)
		get_slot_next(nd, now);
	if (tts <= now && nd->slot.slot_next <= now) {
		pw__tfifo_erase_head(&nd->tf, p);
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
	while ((p = pw__tfifo_flush_one(&nd->tf))) {
		pw__q_backlog_dec(q, p);
		pw__drop_later(d, p, reason);
	}
	pw__watchdog_cancel(&nd->wd);
}

/* ---------------------------------------------------- configuration */

/* Exchange a table of the qdisc with one of the option struct. */
/* The bytes of the tables @o carries (netem's after a swap: the old ones). */
static size_t tables_bytes(const struct netem_opt *o)
{
	return ((o->dist ? (size_t)o->dist_n : 0) + (o->slot_dist ? (size_t)o->slot_dist_n : 0)) *
	       sizeof(int16_t);
}

static void swap_table(int16_t **qt, unsigned *qn, int16_t **ot, unsigned *on)
{
	int16_t *t = *qt;
	unsigned n = *qn;
	*qt = *ot, *qn = *on;
	*ot = t, *on = n;
}

/* netem_change(): apply what tc sent, attribute by attribute as the kernel
 * (an attribute tc did not send keeps its old value, except the loss model,
 * which falls back to random, and the seed, drawn afresh). */
static int netem_change(struct pw__qdisc *q, void *optp, struct pw__extack *ext)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	struct netem_opt *o = optp;
	if (!o)
		return -EINVAL;
	if (o->inorder && o->gap) {
		/* checked before anything changes: a failed change changes nothing */
		pw__extack_msg(ext, "Error: netem: inorder and reorder exclude each other.");
		return -EINVAL;
	}
	/* the tables netem takes from tc's side are its state from now on:
	 * charged to the runtime's budget (netmem.c) before anything changes */
	int rc = pw__mem_charge(q->dev->net, tables_bytes(o), ext);
	if (rc)
		return rc;

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

	/* tables: swapped in; the old ones go back to @o (opt_free), their
	 * bytes uncharged (charged above, before anything changed) */
	if (o->dist)
		swap_table(&nd->delay_dist, &nd->delay_dist_n, &o->dist, &o->dist_n);
	if (o->slot_dist)
		swap_table(&nd->slot_dist, &nd->slot_dist_n, &o->slot_dist, &o->slot_dist_n);
	pw__mem_uncharge(q->dev->net, tables_bytes(o));

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
	nd->seed = o->has_seed ? o->seed : random_u64(q->dev->net);
	rnd_seed(&nd->prng, nd->seed);
	rnd_seed(&nd->aux, o->has_seed ? o->seed ^ 0x9e3779b97f4a7c15ull : random_u64(q->dev->net));

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
	/* the calendar spans the delays' spread: tabledist() stays within
	 * latency +- jitter, or +- 4 jitter with a table (|t| <= 32768 = 4 *
	 * NETEM_DIST_SCALE) */
	uint64_t span = (uint64_t)nd->jitter * (nd->delay_dist ? 4u : 1u);
	if (nd->latency > 0)
		span += (uint64_t)nd->latency;
	pw__tfifo_set_span(&nd->tf, span);
	/* inorder switched on: behind everything queued already */
	if (o->inorder && !nd->inorder) {
		uint64_t last = 0;
		nd->inorder_last = pw__tfifo_last_ns(&nd->tf, &last) ? last : 0;
	}
	nd->inorder = o->inorder;
	return 0;
}

static int netem_init(struct pw__qdisc *q, void *opt, struct pw__extack *ext)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	if (!opt)
		return -EINVAL; /* netem is never a default qdisc */
	memset(nd, 0, sizeof(*nd));
	pw__pktq_init(&nd->rq);
	nd->loss_model = CLG_RANDOM;
	/* a calendar bucket per packet the limit lets in (tfifo.c), charged
	 * to the runtime's budget first (netmem.c) */
	uint32_t limit = ((struct netem_opt *)opt)->limit;
	size_t cal = pw__tfifo_size(limit);
	int rc = pw__mem_charge(q->dev->net, cal, ext);
	if (rc)
		return rc;
	rc = pw__tfifo_init(&nd->tf, limit);
	if (!rc)
		rc = netem_change(q, opt, ext);
	if (rc) {
		pw__tfifo_destroy(&nd->tf);
		pw__mem_uncharge(q->dev->net, cal);
		return rc;
	}
	pw__watchdog_init(&nd->wd, q);
	return 0;
}

static void netem_destroy(struct pw__qdisc *q)
{
	struct netem_priv *nd = pw__qdisc_priv(q);
	pw__watchdog_destroy(&nd->wd);
	size_t cal = nd->tf.nb ? pw__tfifo_size(nd->tf.nb) : 0;
	pw__tfifo_destroy(&nd->tf);
	pw__mem_uncharge(q->dev->net, cal + ((nd->delay_dist ? (size_t)nd->delay_dist_n : 0) +
						      (nd->slot_dist ? (size_t)nd->slot_dist_n : 0)) *
						     sizeof(int16_t));
	free(nd->delay_dist);
	free(nd->slot_dist);
	nd->delay_dist = nd->slot_dist = NULL;
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

const struct pw__qdisc_ops pw__netem_ops = {
	.id = "netem",
	.priv_size = sizeof(struct netem_priv),
	.flags = 0,
	.enqueue = netem_enqueue,
	.dequeue = netem_dequeue,
	.init = netem_init,
	.change = netem_change,
	.reset = netem_reset,
	.destroy = netem_destroy,
};
