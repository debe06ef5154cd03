/* SPDX-License-Identifier: MIT */
/*
 * trace: a link driven by a packet-delivery trace, with Mahimahi's link
 * semantics (mm-link), as a qdisc.  pinwheel's own kind: neither the
 * kernel nor iproute2 has it.  This file is the kernel side; the tc side
 * (`trace { file PATH | text TEXT [name LABEL] } [limit PACKETS]`, reading
 * and parsing the trace, printing) is tc/q_trace.c, and sched/trace.h what
 * the two share: the parsed lines, whichever way they were given.
 *
 * What it does.  The trace is a list of millisecond offsets, nondecreasing,
 * the last one (> 0) its period: at each offset, and at each offset plus a
 * whole number of periods (the trace loops), the link has one delivery
 * opportunity of 1504 bytes.  The trace's time 0 is the moment the qdisc
 * was created (or last changed with a new trace).  Queued packets use the
 * opportunities byte by byte in FIFO order: a packet larger than what is
 * left of an opportunity continues in the next ones, a small one shares
 * an opportunity with the next packet; a packet leaves at the time of the
 * opportunity that carries its last byte.  An opportunity finds the
 * packets that arrived strictly before it (Mahimahi's clock is the
 * millisecond: it burns the opportunities at or before the current
 * millisecond before it queues an arriving packet, and an arrival at
 * 1.3 ms is stamped 1, so an opportunity at T ms finds exactly the
 * packets with arrival < T ms, which this file applies in nanoseconds);
 * bytes of an opportunity that find no packet are lost.
 *
 * How.  A FIFO link is deterministic at enqueue: the link's position is
 * the opportunity k that carried the last byte of the last packet
 * accepted, with `left` bytes of it unused.  A packet arriving at time a
 * starts there if that opportunity is later than a (at k with `left`
 * bytes, or at k + 1 when none is left), else at the first opportunity
 * later than a with all its 1504 bytes (everything between is lost, as
 * Mahimahi's link loses it: nothing was queued); its last byte lands
 * ceil((len - left) / 1504) opportunities further.  So enqueue computes
 * the packet's time_to_send once (a packet of 0 bytes leaves with the
 * opportunity it starts in, if bytes of it are left), O(log lines) (a binary search in the
 * trace for the first opportunity after a), and dequeue is netem's with a
 * FIFO: the head leaves when its time has come, else the watchdog is armed
 * for it (pinned by default, ns precision: the layer's watchdogs).  No
 * peek: a parent peeks through pw__qdisc_peek_dequeued(), whose dequeue
 * arms the watchdog when the head is not due (as for netem).
 *
 * Invariants.  time_to_send is nondecreasing along the FIFO (opportunities
 * are used in order), so the head is always the first due.  Every packet
 * handed to enqueue leaves exactly once: to the drop list (the limit:
 * PW_DROP_QDISC_LIMIT; reset's flush), or out of dequeue.  q->st.qlen and
 * backlog count every packet the qdisc holds, the one whose bytes the link
 * is carrying included (Mahimahi's droptail queue does not count the
 * packet in transit: the limit here is one packet stricter).  A dropped
 * packet does not move the link's position.  Times are clamped at the
 * layer's "never", PW_KTIME_MAX (pw__trace_opp_ns()): a packet whose
 * opportunity lies beyond it (a deep backlog on the longest periods) waits
 * with no watchdog armed for it, behind the packets that can leave, until
 * a change re-times it or a flush takes it: the order and the
 * exactly-once rule hold even then (a time wrapping round would send it
 * at once, out of its turn).
 *
 * Change.  A new trace restarts the trace's clock at the change: packets
 * already carried (time_to_send <= now) leave as scheduled, the others are
 * carried afresh by the new trace, in order, as packets that arrived at
 * the change.  A change of the limit alone keeps every packet (a lowered
 * limit only refuses new ones).
 *
 * Locking.  Every hook runs under the root lock of the qdisc's queue
 * (init and destroy without one: the qdisc is not reachable); the
 * watchdog's callback runs the queue, whose dequeue takes the due
 * packets.  change() neither allocates nor fails: the tc side parsed and
 * allocated the trace, which change swaps in; the old one goes back to the
 * option struct and is freed by the tc side's opt_free outside the lock.
 *
 * Costs.  Enqueue O(log lines) (one binary search, only when the link
 * was idle past its position), dequeue O(1), one watchdog arm per packet
 * that is not due when its predecessor leaves; memory 4 bytes per trace
 * line.  init and change check the lines again (O(lines); change under
 * the root lock, as the kernel validates a netlink attribute) and a new
 * trace re-times the queued packets (O(queued)).
 */
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- the link */

static uint64_t opp_ns(const struct trace_priv *t, uint64_t k)
{
	return pw__trace_opp_ns(t->ms, t->n, t->period_ns, t->epoch_ns, k);
}

/* The first opportunity strictly later than @a. */
static uint64_t first_after(const struct trace_priv *t, uint64_t a)
{
	if (a < t->epoch_ns)
		return 0;
	uint64_t rel = a - t->epoch_ns;
	uint64_t c = rel / t->period_ns;
	uint64_t r = rel - c * t->period_ns;
	/* upper bound of r among the lines (in ns); the last line is the
	 * period and r < period, so one exists */
	uint32_t lo = 0, hi = t->n - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if ((uint64_t)t->ms[mid] * 1000000u > r)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (c > (UINT64_MAX - lo) / t->n)
		return UINT64_MAX; /* beyond the clock's range: opp_ns says never */
	return c * t->n + lo;
}

/* Carry @len bytes arriving at @a: the time of the opportunity that takes
 * the last one; the link's position moves there. */
static uint64_t carry(struct trace_priv *t, uint32_t len, uint64_t a)
{
	uint64_t k;
	uint32_t left;
	if (t->have_cur && opp_ns(t, t->cur_k) > a) {
		k = t->cur_k;
		left = t->cur_left;
		if (left == 0) {
			k++;
			left = PW_TRACE_OPP_BYTES;
		}
	} else {
		k = first_after(t, a);
		left = PW_TRACE_OPP_BYTES;
	}
	if (len <= left) {
		left -= len;
	} else {
		uint64_t rem = (uint64_t)len - left;
		uint64_t m = (rem + PW_TRACE_OPP_BYTES - 1) / PW_TRACE_OPP_BYTES;
		k = k > UINT64_MAX - m ? UINT64_MAX : k + m;
		left = (uint32_t)(m * PW_TRACE_OPP_BYTES - rem);
	}
	t->cur_k = k;
	t->cur_left = left;
	t->have_cur = 1;
	return opp_ns(t, k);
}

/* ------------------------------------------------------------ data path */

/* The watchdog for the head, due at @tts; none for "never". */
static void arm(struct trace_priv *t, uint64_t tts)
{
	if (tts < PW_KTIME_MAX)
		pw__watchdog_schedule_ns(&t->wd, tts);
}

static int trace_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	struct trace_priv *t = pw__qdisc_priv(q);
	if (q->st.qlen >= q->limit)
		return pw__q_drop(q, p, d, PW_DROP_QDISC_LIMIT);
	p->pw_time_to_send = carry(t, p->len, pw__net_now(q));
	pw__pktq_push(&t->q, p);
	pw__q_backlog_inc(q, p);
	return PW_NET_XMIT_SUCCESS;
}

static struct pw_pkt *trace_dequeue(struct pw__qdisc *q)
{
	struct trace_priv *t = pw__qdisc_priv(q);
	struct pw_pkt *p = t->q.head;
	if (!p)
		return NULL;
	if (p->pw_time_to_send > pw__net_now(q)) {
		arm(t, p->pw_time_to_send);
		return NULL;
	}
	pw__pktq_pop(&t->q);
	pw__q_backlog_dec(q, p);
	pw__q_bstats(q, p);
	return p;
}

static void trace_reset(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason r)
{
	struct trace_priv *t = pw__qdisc_priv(q);
	struct pw_pkt *p;
	while ((p = pw__pktq_pop(&t->q))) {
		pw__q_backlog_dec(q, p);
		pw__drop_later(d, p, r);
	}
	pw__watchdog_cancel(&t->wd);
}

/* ------------------------------------------------------- configuration */

/* The checks tc's side made, made again (the kernel validates its
 * attributes whoever sent them). */
static int trace_check(const struct trace_opt *o, struct pw__extack *ext)
{
	if (o->limit > PW_TRACE_LIMIT_MAX) {
		pw__extack_msg(ext, "Error: trace: limit %u is above the maximum (%u).", o->limit,
			       PW_TRACE_LIMIT_MAX);
		return -EINVAL;
	}
	if (!o->ms)
		return 0;
	if (o->n == 0 || o->n > PW_TRACE_LINES_MAX) {
		pw__extack_msg(ext, "Error: trace: a trace holds 1 to %u lines.", PW_TRACE_LINES_MAX);
		return -EINVAL;
	}
	for (uint32_t i = 1; i < o->n; i++) {
		if (o->ms[i] < o->ms[i - 1]) {
			pw__extack_msg(ext, "Error: trace: line %u goes back in time.", i + 1);
			return -EINVAL;
		}
	}
	if (o->ms[o->n - 1] == 0) {
		pw__extack_msg(ext, "Error: trace: the last line (the period) must be above 0 ms.");
		return -EINVAL;
	}
	return 0;
}

/* The bytes of the trace @ms, @n lines, labelled @name (what trace holds
 * of tc's allocations: charged to the runtime's budget, netmem.c). */
static size_t trace_bytes(const uint32_t *ms, uint32_t n, const char *name)
{
	return (ms ? (size_t)n * sizeof(*ms) : 0) + (name ? strlen(name) + 1 : 0);
}

/* Put the trace of @o in, its old one back into @o; restart the clock.
 * @o's bytes were charged; the old ones are uncharged here. */
static void trace_swap_in(struct pw__qdisc *q, struct trace_priv *t, struct trace_opt *o,
			  uint64_t now)
{
	pw__mem_uncharge(q->dev->net, trace_bytes(t->ms, t->n, t->name));
	uint32_t *ms = t->ms;
	uint32_t n = t->n;
	char *name = t->name;
	int text = t->text;
	t->ms = o->ms;
	t->n = o->n;
	t->name = o->name;
	t->text = o->text;
	o->ms = ms;
	o->n = n;
	o->name = name;
	o->text = text;
	t->period_ns = (uint64_t)t->ms[t->n - 1] * 1000000u;
	t->epoch_ns = now;
	t->have_cur = 0;
}

static int trace_init(struct pw__qdisc *q, void *optp, struct pw__extack *ext)
{
	struct trace_priv *t = pw__qdisc_priv(q);
	struct trace_opt *o = optp;
	memset(t, 0, sizeof(*t));
	if (!o)
		return -EINVAL; /* never a default qdisc */
	if (!o->ms) {
		pw__extack_msg(ext, "Error: trace: a trace is required (\"file PATH\" or \"text TEXT\").");
		return -EINVAL;
	}
	int rc = trace_check(o, ext);
	if (!rc)
		rc = pw__mem_charge(q->dev->net, trace_bytes(o->ms, o->n, o->name), ext);
	if (rc)
		return rc;
	pw__pktq_init(&t->q);
	trace_swap_in(q, t, o, pw_now_ns(q->dev->rt));
	q->limit = o->limit ? o->limit : PW_TRACE_LIMIT_DEFAULT;
	pw__watchdog_init(&t->wd, q);
	return 0;
}

static int trace_change(struct pw__qdisc *q, void *optp, struct pw__extack *ext)
{
	struct trace_priv *t = pw__qdisc_priv(q);
	struct trace_opt *o = optp;
	if (!o)
		return -EINVAL;
	int rc = trace_check(o, ext);
	if (!rc && o->ms)
		rc = pw__mem_charge(q->dev->net, trace_bytes(o->ms, o->n, o->name), ext);
	if (rc)
		return rc;
	if (o->limit)
		q->limit = o->limit;
	if (!o->ms)
		return 0;
	uint64_t now = pw__net_now(q);
	trace_swap_in(q, t, o, now);
	/* what is carried already leaves as scheduled (the FIFO's head); the
	 * rest is carried by the new trace as if it arrived now */
	for (struct pw_pkt *p = t->q.head; p; p = p->pw_next)
		if (p->pw_time_to_send > now)
			p->pw_time_to_send = carry(t, p->len, now);
	pw__watchdog_cancel(&t->wd);
	if (t->q.head)
		arm(t, t->q.head->pw_time_to_send);
	return 0;
}

static void trace_destroy(struct pw__qdisc *q)
{
	struct trace_priv *t = pw__qdisc_priv(q);
	pw__watchdog_destroy(&t->wd);
	pw__mem_uncharge(q->dev->net, trace_bytes(t->ms, t->n, t->name));
	free(t->ms);
	free(t->name);
	t->ms = NULL;
	t->name = NULL;
}

const struct pw__qdisc_ops pw__trace_ops = {
	.id = "trace",
	.priv_size = sizeof(struct trace_priv),
	.enqueue = trace_enqueue,
	.dequeue = trace_dequeue,
	.init = trace_init,
	.change = trace_change,
	.reset = trace_reset,
	.destroy = trace_destroy,
};
