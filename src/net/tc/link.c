/* SPDX-License-Identifier: MIT */
/*
 * A link (<pinwheel/link.h>): network emulation in-process, on the
 * simulated clock, in a handful of calls.
 *
 * What it is.  Nothing new runs packets here: a link is a pinwheel runtime
 * on PW_CLOCK_SIM with one CPU, a device "link" with N TX queues whose
 * qdiscs pw_tc() builds from the caller's words, and a driver (the three
 * ops of struct pw_netdev_ops) that puts what the layer hands back on two
 * lists, departures and drops.  A send moves the simulated clock to its
 * time with pw_sim_advance() (every watchdog, estimator and NET_TX pass
 * due until then runs, in time order, as the layer always runs them) and
 * hands the packet to pw_dev_queue_xmit(); an advance moves the clock
 * alone.  The qdiscs' logic, their tc words and messages, the kernel's
 * rules on a change or a replace are all the layer's own: the link adds
 * the bookkeeping a test needs and nothing else.
 *
 * Time.  The link's clock is the runtime's minus an epoch of one second
 * (the runtime starts at 1 s, so no qdisc ever sees a time 0, which some
 * of their fields read as "none"); the caller sees 0 at creation.  A send
 * earlier than the clock is refused: the past cannot be changed.
 *
 * Determinism.  A run depends on the calls alone: the simulated clock,
 * one CPU (so no choice of CPU), every XPS mask emptied at creation (so
 * the TX queue is the hash's choice, skb_tx_hash(), whatever thread
 * sends), every tc command with PW_TC_NO_FILES (netem's distributions from
 * the built-in tables, which equal iproute2's, never a system file), and
 * the seed: the link sets its runtime's seeded stream (pw__net.seeded,
 * cfg_lock), from which every netem created or changed without `seed`
 * draws its seed (sched/netem.c, random_u64()) in command order.  Nothing
 * on the data path reads a wall clock, an address or the OS's randomness.
 *
 * The ledger.  Each packet is one allocation (struct lpkt: the pw_pkt, the
 * caller's tag, its bytes after it); its state goes in flight -> departed
 * or dropped, exactly once, checked (a second hand-back aborts: the
 * layer's own guarantee, net.h).  A netem duplicate is a new lpkt made by
 * the clone op (the bytes copied before netem corrupts the original, as
 * the kernel's skb_clone + corrupt order), marked dup, with its original's
 * tag.  Departed and dropped packets wait on their FIFO lists until taken;
 * what a take hands out stays allocated (the caller reads its bytes) until
 * the next take of the same kind, or the free.  A tc replace or delete
 * drops what its qdisc held (reason flush), pw_link_close() destroys the
 * device (reason dev_destroy): both come back through the same drop op,
 * at the clock.
 *
 * Threads and locks.  A link is driven by one thread at a time (the
 * caller's); the driver's ops run on that thread, inside pw_sim_advance(),
 * pw_dev_queue_xmit(), pw_tc() or pw_netdev_destroy(), so the lists need
 * no lock.  The layer takes its own locks as it always does.  The thread
 * must serve no CPU of a pinwheel runtime (pw_this_cpu() would name a CPU
 * of another runtime's numbering).
 *
 * Costs.  Per packet: one malloc and free, the layer's transmit, and a
 * pw_sim_advance() when the time moved (a pass over one CPU's next
 * event).  Per link: a runtime (its wheels and hrtimer heaps for one CPU)
 * and the device; pw_link_free() gives all of it back.
 *
 * Where it lives: with tc's side, because it runs tc's words (only
 * src/net/tc/ calls pw_tc(): layout.md) and drives the kernel side's
 * public calls; nothing in the library calls it.
 */
#define _GNU_SOURCE
#include "../internal.h"
#include "tc_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/link.h>
#include <pinwheel/net.h>
#include <pinwheel/runtime.h>

#define LINK_EPOCH_NS 1000000000ull

/* pw_link_stats.drops_by_reason has a slot per reason */
_Static_assert(PW_DROP_REASON_MAX <= 16, "pw_link_stats.drops_by_reason is too short");

enum { LP_IN = 1, LP_DEPARTED, LP_DROPPED };

/* A packet of the link: the layer's packet, the caller's tag, its bytes. */
struct lpkt {
	struct pw_pkt pkt;
	struct lpkt *next;   /* the departed / dropped / taken list */
	uint64_t tag;
	uint64_t done_ns;    /* link clock when it came back */
	uint32_t reason;
	uint8_t state;       /* LP_* */
	uint8_t dup;
	unsigned char data[]; /* pkt.caplen bytes */
};

struct lqueue {
	struct lpkt *head, **tail;
};

struct pw_link {
	struct pw_runtime *rt;
	struct pw_netdev *dev;          /* NULL once closed */
	uint64_t closed_now;            /* the clock at close (link time) */
	struct lqueue departed, dropped;
	struct lpkt *dep_taken, *drop_taken; /* handed out by the last take */
	uint64_t handed_in, duplicates, ndeparted, ndropped;
	uint64_t drops_by[16];
	char err[512];
};

/* ------------------------------------------------------------- helpers */

static void lq_init(struct lqueue *q)
{
	q->head = NULL;
	q->tail = &q->head;
}

static void lq_push(struct lqueue *q, struct lpkt *p)
{
	p->next = NULL;
	*q->tail = p;
	q->tail = &p->next;
}

static void free_list(struct lpkt *p)
{
	while (p) {
		struct lpkt *n = p->next;
		free(p);
		p = n;
	}
}

static int say(struct pw_link *l, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int say(struct pw_link *l, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
	return rc;
}

static uint64_t link_now(const struct pw_link *l)
{
	return pw_now_ns(l->rt) - LINK_EPOCH_NS;
}

/* ------------------------------------------------------------- the driver */

static struct lpkt *lp_of(struct pw_pkt *p)
{
	return (struct lpkt *)((char *)p - offsetof(struct lpkt, pkt));
}

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq;
	struct pw_link *l = ctx;
	struct lpkt *lp = lp_of(p);
	if (lp->state != LP_IN)
		abort(); /* the layer hands a packet back once (net.h) */
	lp->state = LP_DEPARTED;
	lp->done_ns = link_now(l);
	lq_push(&l->departed, lp);
	l->ndeparted++;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev;
	struct pw_link *l = ctx;
	struct lpkt *lp = lp_of(p);
	if (lp->state != LP_IN)
		abort();
	lp->state = LP_DROPPED;
	lp->reason = (uint32_t)r;
	lp->done_ns = link_now(l);
	lq_push(&l->dropped, lp);
	l->ndropped++;
	l->drops_by[(unsigned)r < 16 ? (unsigned)r : 0]++;
}

/* netem's duplicate: a copy with its own bytes (called under a queue lock:
 * no call into the layer). */
static struct pw_pkt *drv_clone(struct pw_netdev *dev, const struct pw_pkt *p, void *ctx)
{
	(void)dev;
	struct pw_link *l = ctx;
	const struct lpkt *o = lp_of((struct pw_pkt *)p);
	struct lpkt *c = malloc(sizeof(*c) + p->caplen);
	if (!c)
		return NULL;
	memcpy(c, o, sizeof(*c));
	if (p->caplen)
		memcpy(c->data, p->data, p->caplen);
	c->pkt.data = p->data ? c->data : NULL;
	c->dup = 1;
	c->state = LP_IN;
	c->next = NULL;
	l->duplicates++;
	return &c->pkt;
}

static const struct pw_netdev_ops link_ops = {
	.xmit = drv_xmit,
	.drop = drv_drop,
	.clone = drv_clone,
};

/* --------------------------------------------------------------- tc words */

/* tc's options before the object (-s, -d, -j and their long forms), as
 * flags; *@cmd moves past them. */
static unsigned tc_options(const char **cmd)
{
	unsigned flags = 0;
	const char *p = *cmd;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (p[0] != '-')
			break;
		size_t n = strcspn(p, " \t");
		if (n >= 2 && !strncmp(p, "-statistics", n))
			flags |= PW_TC_STATS;
		else if (n == 6 && !strncmp(p, "-stats", n))
			flags |= PW_TC_STATS;
		else if (n >= 2 && !strncmp(p, "-details", n))
			flags |= PW_TC_DETAILS;
		else if (n >= 2 && !strncmp(p, "-json", n))
			flags |= PW_TC_JSON;
		else
			break; /* pw_tc names it */
		p += n;
	}
	*cmd = p;
	return flags;
}

/* How many lines of @text hold words (not only blanks or a comment). */
static unsigned ncommands(const char *text)
{
	unsigned n = 0;
	bool words = false, comment = false;
	for (const char *p = text;; p++) {
		if (*p == '\n' || !*p) {
			n += words;
			words = comment = false;
			if (!*p)
				return n;
		} else if (*p == '#') {
			comment = true;
		} else if (!comment && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\\') {
			words = true;
		}
	}
}

/* Run @text's commands, one a line as tc -batch reads them ('#' to the end
 * of the line, a trailing '\' joins the next), each to pw_tc() with
 * PW_TC_NO_FILES; what they print appended to @out.  Stops at the first
 * failure, with "line N: " before tc's message when the text has several
 * lines.  Return: 0; a negative errno. */
static int run_text(struct pw_link *l, const char *text, char *out, size_t outlen, char *err,
		    size_t errlen)
{
	size_t used = 0;
	bool several = ncommands(text) > 1;
	struct pw__tc_lines it = {.p = text, .join = ' '};
	int rc = 0, more;
	if (out && outlen)
		out[0] = '\0';
	while ((more = pw__tc_lines_next(&it)) > 0) {
		const char *w = it.cmd;
		unsigned flags = tc_options(&w) | PW_TC_NO_FILES;
		char msg[sizeof(l->err)];
		msg[0] = '\0';
		rc = pw_tc(l->rt, w, flags, out ? out + used : NULL, out ? outlen - used : 0, msg,
			   sizeof(msg));
		if (out && outlen)
			used += strlen(out + used);
		if (rc) {
			size_t m = strlen(msg);
			while (m && (msg[m - 1] == '\n' || msg[m - 1] == ' '))
				msg[--m] = '\0';
			if (!msg[0])
				snprintf(msg, sizeof(msg), "RTNETLINK answers: %s", strerror(-rc));
			if (several)
				say(l, rc, "line %u: %s", it.first, msg);
			else
				say(l, rc, "%s", msg);
			if (err && errlen)
				snprintf(err, errlen, "%s", l->err);
			break;
		}
	}
	if (more < 0) {
		rc = more;
		snprintf(err ? err : l->err, err ? errlen : sizeof(l->err), "out of memory");
	}
	pw__tc_lines_free(&it);
	return rc;
}

/* ------------------------------------------------------------- the link */

int pw_link_create(struct pw_link **out, const char *tc, unsigned flags, uint64_t seed,
		   unsigned txqueues, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || (flags & ~(unsigned)PW_LINK_BATCH) || txqueues > PW_MAX_TXQ) {
		if (err && errlen)
			snprintf(err, errlen, "pw_link_create: bad arguments (txqueues %u, at most %u)",
				 txqueues, PW_MAX_TXQ);
		return -EINVAL;
	}
	if (txqueues == 0)
		txqueues = 1;
	struct pw_link *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	lq_init(&l->departed);
	lq_init(&l->dropped);
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	cfg.sim_start_ns = LINK_EPOCH_NS;
	int rc = pw_runtime_create(&cfg, &l->rt);
	if (rc) {
		free(l);
		if (err && errlen)
			snprintf(err, errlen, "pw_link_create: the runtime: %s", strerror(-rc));
		return rc;
	}
	/* the seed before any netem exists (cfg_lock: netem reads it there) */
	struct pw__net *net = pw__net_get(l->rt);
	if (!net) {
		rc = -ENOMEM;
		goto fail;
	}
	pthread_mutex_lock(&net->cfg_lock);
	net->seeded = 1;
	net->seed_state = seed;
	pthread_mutex_unlock(&net->cfg_lock);
	rc = pw_netdev_create(l->rt, PW_LINK_DEV, txqueues, &link_ops, l, &l->dev);
	if (rc)
		goto fail;
	/* no CPU's XPS mask names a queue: the hash picks it, for any thread */
	uint64_t none = 0;
	for (unsigned q = 0; q < txqueues && txqueues > 1; q++)
		if ((rc = pw_netdev_set_xps(l->dev, q, &none, 1)) != 0)
			goto fail;
	if (tc && *tc) {
		size_t sk = strspn(tc, " \t\n");
		bool cmds = (flags & PW_LINK_BATCH) || !strncmp(tc + sk, "qdisc ", 6) ||
			    !strncmp(tc + sk, "class ", 6) || !strncmp(tc + sk, "tc ", 3);
		if (cmds) {
			rc = run_text(l, tc, NULL, 0, err, errlen);
		} else {
			size_t n = strlen(tc) + 64;
			char *cmd = malloc(n);
			if (!cmd) {
				rc = -ENOMEM;
				goto fail;
			}
			snprintf(cmd, n, "qdisc add dev " PW_LINK_DEV " root %s", tc);
			if (strchr(tc, '\n')) /* one qdisc's words: no line breaks */
				for (char *c = cmd; *c; c++)
					if (*c == '\n' || *c == '\r')
						*c = ' ';
			rc = run_text(l, cmd, NULL, 0, err, errlen);
			free(cmd);
		}
		if (rc) {
			pw_link_free(l);
			return rc;
		}
	}
	*out = l;
	return 0;
fail:
	if (err && errlen && !err[0])
		snprintf(err, errlen, "pw_link_create: %s", strerror(-rc));
	pw_link_free(l);
	return rc;
}

/* Move the clock to @t (link time), running what is due. */
static int move_to(struct pw_link *l, uint64_t t, const char *what)
{
	uint64_t now = link_now(l);
	if (t < now)
		return say(l, -EINVAL,
			   "%s at %llu ns is earlier than the link's clock (%llu ns): the link "
			   "cannot go back",
			   what, (unsigned long long)t, (unsigned long long)now);
	if (t > UINT64_MAX - LINK_EPOCH_NS)
		return say(l, -EINVAL, "%s at %llu ns: past the link's last time", what,
			   (unsigned long long)t);
	if (t > now)
		return pw_sim_advance(l->rt, t - now);
	return 0;
}

/* One packet in; the clock is at its time. */
static int send_one(struct pw_link *l, const void *data, uint32_t len, uint64_t tag,
		    uint32_t priority, uint32_t hash)
{
	size_t cap = data ? len : 0;
	struct lpkt *lp = malloc(sizeof(*lp) + cap);
	if (!lp)
		return say(l, -ENOMEM, "out of memory");
	if (cap)
		memcpy(lp->data, data, cap);
	pw_pkt_init(&lp->pkt, data ? lp->data : NULL, len);
	lp->pkt.caplen = (uint32_t)cap;
	lp->pkt.priority = priority;
	lp->pkt.hash = hash;
	lp->next = NULL;
	lp->tag = tag;
	lp->done_ns = 0;
	lp->reason = 0;
	lp->state = LP_IN;
	lp->dup = 0;
	l->handed_in++;
	pw_dev_queue_xmit(l->dev, &lp->pkt);
	/* the packet may be on a list now (not freed before the next take) */
	return lp->state == LP_DROPPED ? 0 : 1;
}

int pw_link_send(struct pw_link *l, uint64_t time_ns, const void *data, uint32_t len,
		 uint64_t tag, uint32_t priority, uint32_t hash)
{
	if (!l)
		return -EINVAL;
	l->err[0] = '\0';
	if (!l->dev)
		return say(l, -ESHUTDOWN, "the link is closed");
	int rc = move_to(l, time_ns, "a send");
	if (rc)
		return rc;
	return send_one(l, data, len, tag, priority, hash);
}

long pw_link_send_burst(struct pw_link *l, const struct pw_link_burst *b)
{
	if (!l || !b || !b->len)
		return -EINVAL;
	l->err[0] = '\0';
	if (!l->dev)
		return say(l, -ESHUTDOWN, "the link is closed");
	const unsigned char *data = b->data;
	for (size_t i = 0; i < b->n; i++) {
		if (b->time_ns) {
			int rc = move_to(l, b->time_ns[i], "a send");
			if (rc) {
				char m[sizeof(l->err)];
				snprintf(m, sizeof(m), "%s", l->err);
				say(l, rc, "packet %zu: %s", i, m);
				return (long)i;
			}
		}
		int r = send_one(l, data, b->len[i], b->tag ? b->tag[i] : i,
				 b->priority ? b->priority[i] : 0, b->hash ? b->hash[i] : 0);
		if (r < 0)
			return (long)i;
		if (b->taken)
			b->taken[i] = (uint8_t)r;
		if (data)
			data += b->len[i];
	}
	return (long)b->n;
}

int pw_link_advance(struct pw_link *l, uint64_t to_ns)
{
	if (!l)
		return -EINVAL;
	l->err[0] = '\0';
	if (!l->dev)
		return to_ns < l->closed_now
			       ? say(l, -EINVAL, "advance to %llu ns: earlier than the clock",
				     (unsigned long long)to_ns)
			       : 0;
	return move_to(l, to_ns, "an advance");
}

uint64_t pw_link_now_ns(const struct pw_link *l)
{
	if (!l)
		return 0;
	return l->dev ? link_now(l) : l->closed_now;
}

/* Take up to @max from @q into @out; what was taken last time is freed. */
static size_t take(struct pw_link *l, struct lqueue *q, struct lpkt **taken,
		   struct pw_link_pkt *out, size_t max)
{
	free_list(*taken);
	*taken = NULL;
	if (!out || !max)
		return 0;
	/* the NET_TX passes due at the clock (a queue run's leftover past its
	 * quota) run first, so a take sees everything up to the clock */
	if (l->dev)
		pw_sim_advance(l->rt, 0);
	struct lpkt **tail = taken;
	size_t n = 0;
	while (n < max && q->head) {
		struct lpkt *p = q->head;
		q->head = p->next;
		struct pw_link_pkt *o = &out[n++];
		o->time_ns = p->done_ns;
		o->tag = p->tag;
		o->data = p->pkt.data;
		o->len = p->pkt.len;
		o->txq = p->pkt.pw_txq;
		o->dup = p->dup;
		o->pad_ = 0;
		o->reason = p->reason;
		o->pad2_ = 0;
		*tail = p;
		tail = &p->next;
	}
	*tail = NULL;
	if (!q->head)
		q->tail = &q->head;
	return n;
}

size_t pw_link_departures(struct pw_link *l, struct pw_link_pkt *out, size_t max)
{
	return l ? take(l, &l->departed, &l->dep_taken, out, max) : 0;
}

size_t pw_link_drops(struct pw_link *l, struct pw_link_pkt *out, size_t max)
{
	return l ? take(l, &l->dropped, &l->drop_taken, out, max) : 0;
}

int pw_link_stats(struct pw_link *l, struct pw_link_stats *st)
{
	if (!l || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->now_ns = pw_link_now_ns(l);
	if (l->dev) {
		struct pw_qdisc_stats q;
		if (pw_netdev_qdisc_stats(l->dev, 0, &q) == 0) {
			st->sent_bytes = q.bytes;
			st->sent_packets = q.packets;
			st->qdisc_drops = q.drops;
			st->overlimits = q.overlimits;
			st->requeues = q.requeues;
			st->backlog = q.backlog;
			st->qlen = q.qlen;
		}
	}
	st->handed_in = l->handed_in;
	st->duplicates = l->duplicates;
	st->departed = l->ndeparted;
	st->dropped = l->ndropped;
	st->in_flight = l->handed_in + l->duplicates - l->ndeparted - l->ndropped;
	memcpy(st->drops_by_reason, l->drops_by, sizeof(st->drops_by_reason));
	return 0;
}

int pw_link_tc(struct pw_link *l, const char *cmd, char *out, size_t outlen, char *err,
	       size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (out && outlen)
		out[0] = '\0';
	if (!l || !cmd) {
		if (err && errlen)
			snprintf(err, errlen, "pw_link_tc: bad arguments");
		return -EINVAL;
	}
	l->err[0] = '\0';
	if (!l->dev) {
		say(l, -ESHUTDOWN, "the link is closed");
		if (err && errlen)
			snprintf(err, errlen, "%s", l->err);
		return -ESHUTDOWN;
	}
	return run_text(l, cmd, out, outlen, err, errlen);
}

const char *pw_link_error(const struct pw_link *l)
{
	return l ? l->err : "";
}

void pw_link_close(struct pw_link *l)
{
	if (!l || !l->dev)
		return;
	pw_sim_advance(l->rt, 0); /* what is due at the clock leaves first */
	l->closed_now = link_now(l);
	pw_netdev_destroy(l->dev); /* the rest to drv_drop, reason dev_destroy */
	l->dev = NULL;
}

void pw_link_free(struct pw_link *l)
{
	if (!l)
		return;
	pw_link_close(l);
	pw_runtime_destroy(l->rt);
	free_list(l->departed.head);
	free_list(l->dropped.head);
	free_list(l->dep_taken);
	free_list(l->drop_taken);
	free(l);
}
