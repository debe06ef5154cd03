/* SPDX-License-Identifier: MIT */
/*
 * The tc toxic on TCP proxies: a pinwheel device per proxy, stream
 * direction and tc toxic, so a qdisc's rate (tbf, htb, netem rate) is
 * shared by every connection of the proxy, toxiproxy's missing "shared
 * rate across connections".  Its words are run, checked and reported by
 * ../tc_toxic.c, which the UDP proxies share.
 *
 * Model
 * -----
 * The device lives on the TCP plane's runtime (one TX queue, so one root
 * qdisc for all), made when the toxic is set (tc_dev_create, the control
 * thread): its words go through pw_tc() there, so words tc refuses are
 * refused with tc's message before any connection sees the toxic.  A
 * stream's tc stage (tools/netem/tcp/stream.c) cuts its chunks into pieces of
 * at most TC_MTU bytes and sends each as a packet (length: the piece's
 * bytes; the bytes themselves stay in the stream's flight queue) from the
 * connection's worker (tc_dev_send).  The qdisc releases it on whatever
 * worker runs the queue (its watchdog is pinned to the CPU that armed
 * it): the driver's xmit pushes the packet onto the owning worker's
 * return stack (lock-free, many producers, one consumer) and kicks that
 * worker's eventfd unless it is the caller.  The owner drains the stack
 * in its loop (tc_toxic_drain), marks the piece back, and the stage moves
 * pieces on in stream order: one released early (jitter) waits for its
 * predecessor, so a byte stream never reorders.
 *
 * Drops: a qdisc that refuses a piece because it is full (a limit:
 * qdisc_limit, flow_limit, fq_band_limit) is TCP's loss on a full queue:
 * the piece is sent again 1 ms later, in order, and the stage's window of
 * bytes in the device halves (it grows by a piece for each piece
 * released), so connections sharing a small tbf or fifo slow down
 * instead of failing, and no byte is lost.  Any other drop (oversize: a
 * burst smaller than a piece; horizon; no qdisc) cannot be repaired on a
 * byte stream: the piece's bytes are counted in bytes_cut and the
 * connection is reset.  netem's loss, duplication, corruption and
 * reordering are refused when the toxic is set (tc_toxic_check()).  Flushed pieces
 * (the device destroyed) count as released.
 *
 * Lifetime: each packet holds a reference on its connection (tc_refs), so
 * a connection closed with pieces in a device stays allocated until the
 * last comes back (its bytes were counted dropped at the close); each
 * device counts its packets (inflight, dropped in the driver's callbacks
 * before they let go of the packet), and a device whose toxic was removed
 * or changed is destroyed by the control thread once empty, after every
 * worker stopped sending on it (tcp.c).
 *
 * Threads: as tc_dev.h says.  Locks: none of its own.  Costs: a piece is
 * a packet (one malloc), a push (a compare-and-swap) and, when the queue
 * runs on another worker, one eventfd write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pinwheel/net.h>
#include <pinwheel/runtime.h>

#include "tcp_priv.h"

/* A piece in a device. */
struct tc_pkt {
	struct pw_pkt pkt;         /* first: the layer's pointer is ours */
	struct tc_pkt *back_next;  /* on the owner's return stack */
	struct conn *c;
	struct worker *w;
	void *dev;                 /* the tc_dev, as identity only */
	uint64_t id;
	uint8_t dir, how;          /* how: 0 released, 1 send again, 2 dropped */
};

static __thread struct worker *tl_self;

void tc_toxic_thread(struct worker *w)
{
	tl_self = w;
}

/* ------------------------------------------------------------ the driver */

static void give_back(struct tc_dev *d, struct tc_pkt *p, int how)
{
	struct worker *w = p->w;
	p->how = (uint8_t)how;
	__atomic_sub_fetch(&d->inflight, 1, __ATOMIC_RELEASE);
	struct tc_pkt *head = __atomic_load_n(&w->tc_back, __ATOMIC_RELAXED);
	do
		p->back_next = head;
	while (!__atomic_compare_exchange_n(&w->tc_back, &head, p, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
	if (tl_self != w) {
		uint64_t one = 1;
		if (write(w->kick_fd, &one, sizeof(one)) < 0) {
			/* the counter is full: the worker is awake anyway */
		}
	}
}

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pkt, void *ctx)
{
	(void)dev;
	(void)txq;
	give_back(ctx, (struct tc_pkt *)pkt, 0);
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *pkt, enum pw_drop_reason reason,
		     void *ctx)
{
	(void)dev;
	int how;
	switch (reason) {
	case PW_DROP_QDISC_LIMIT:
	case PW_DROP_FLOW_LIMIT:
	case PW_DROP_FQ_BAND_LIMIT:
		how = 1; /* full: sent again */
		break;
	case PW_DROP_FLUSH:
	case PW_DROP_DEV_DESTROY:
		how = 0; /* the device went: the bytes move on */
		break;
	default:
		how = 2;
		break;
	}
	give_back(ctx, (struct tc_pkt *)pkt, how);
}

static const struct pw_netdev_ops drv_ops = { .xmit = drv_xmit, .drop = drv_drop };

int tc_dev_send(void *ctx, void *devp, uint32_t len, uint64_t id)
{
	struct dir *d = ctx;
	struct tc_dev *td = devp;
	struct tc_pkt *p = malloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	pw_pkt_init(&p->pkt, NULL, len);
	p->c = d->c;
	p->w = d->c->sl->w;
	p->dev = td;
	p->id = id;
	p->dir = (uint8_t)(d - d->c->d);
	p->how = 0;
	d->c->tc_refs++;
	__atomic_add_fetch(&td->inflight, 1, __ATOMIC_RELAXED);
	pw_dev_queue_xmit(td->dev, &p->pkt); /* a drop comes back through drv_drop */
	return 0;
}

/* ------------------------------------------------------------ the way back */

int tc_toxic_pending(struct worker *w)
{
	return __atomic_load_n(&w->tc_back, __ATOMIC_RELAXED) != NULL;
}

int tc_toxic_drain(struct worker *w, int final)
{
	if (!__atomic_load_n(&w->tc_back, __ATOMIC_RELAXED))
		return 0; /* the common case: one load, no locked instruction */
	struct tc_pkt *list = __atomic_exchange_n(&w->tc_back, NULL, __ATOMIC_ACQUIRE);
	if (!list)
		return 0;
	/* oldest first (not needed for order, which the stages keep) */
	struct tc_pkt *rev = NULL;
	while (list) {
		struct tc_pkt *n = list->back_next;
		list->back_next = rev;
		rev = list;
		list = n;
	}
	uint64_t now = final ? 0 : pw_now_ns(w->pl->rt);
	while (rev) {
		struct tc_pkt *p = rev;
		rev = p->back_next;
		struct conn *c = p->c;
		c->tc_refs--;
		if (c->state != CONN_CLOSED && !final) {
			struct dir *d = &c->d[p->dir];
			int r = d->done ? 0 : stream_tc_back(&d->s, p->dev, p->id, p->how, now);
			if (r == 2) {
				/* a drop a byte stream cannot repair: reset */
				c->linger0 = 1;
				tcp_conn_close(c);
			} else if (r) {
				run_add(w, c);
			}
		}
		if (c->state == CONN_CLOSED && c->dead && !conn_busy(c))
			free(c);
		free(p);
	}
	return 1;
}

/* ------------------------------------------------------------ devices */

int tc_dev_matches(const struct tc_dev *d, const struct toxic *t)
{
	const char *w = t->a.tc.qdisc ? t->a.tc.qdisc : t->a.tc.batch;
	const char *sc = t->a.tc.schedule;
	return t->type == TOXIC_TC && d->stream == t->stream && !strcmp(d->toxic, t->name) &&
	       d->batch == !t->a.tc.qdisc && w && !strcmp(d->words, w) &&
	       !d->sched_text == !sc && (!sc || !strcmp(d->sched_text, sc));
}

/* Load @t's schedule for @d's device (started by the caller).
 * Return: 0; a negative errno with the bad line and token in @err. */
static int sched_load(struct pw_runtime *rt, struct pw_runtime *timer_rt, struct tc_dev *d,
		      const struct toxic *t, char *err, size_t errlen)
{
	d->sched_text = strdup(t->a.tc.schedule);
	if (!d->sched_text)
		return -ENOMEM;
	char msg[512] = "";
	int r = tc_schedule_load_inline(rt, timer_rt, t->a.tc.schedule, d->devname, 0, &d->sched,
					msg, sizeof(msg));
	if (r == -ENOMEM)
		return r;
	if (r) {
		snprintf(err, errlen, "toxic %s: attributes.%s", t->name,
			 msg[0] ? msg : strerror(-r));
		return -EINVAL;
	}
	return 0;
}

int tc_dev_create(struct tcp_plane *pl, const struct toxic *t, uint64_t serial,
		  struct tc_dev **out, char *err, size_t errlen)
{
	const char *w = t->a.tc.qdisc ? t->a.tc.qdisc : t->a.tc.batch;
	if (!w) {
		snprintf(err, errlen, "toxic %s: a tc toxic needs a qdisc or a batch", t->name);
		return -EINVAL;
	}
	/* the words and the schedule's steps checked whole first, on a
	 * device of their own: a refusal leaves nothing made */
	int r = tc_toxic_check(t, 1, err, errlen);
	if (r)
		return r;
	struct tc_dev *d = calloc(1, sizeof(*d));
	if (d)
		d->words = strdup(w);
	if (!d || !d->words) {
		free(d);
		snprintf(err, errlen, "toxic %s: no memory for its device", t->name);
		return -ENOMEM;
	}
	snprintf(d->toxic, sizeof(d->toxic), "%s", t->name);
	snprintf(d->devname, sizeof(d->devname), "tcx%llu", (unsigned long long)serial);
	d->stream = t->stream;
	d->batch = !t->a.tc.qdisc;
	r = pw_netdev_create(pl->rt, d->devname, 1, &drv_ops, d, &d->dev);
	if (r) {
		snprintf(err, errlen, "toxic %s: cannot make its device: %s", t->name, strerror(-r));
		if (r == -ENOBUFS)
			tc_toxic_say_spent(err, errlen, t->name, "no room for its device");
		free(d->words);
		free(d);
		return r;
	}
	d->rt = pl->rt;
	/* accuracy before the qdiscs: each keeps its figures from its start */
	r = pw_netdev_accuracy_enable(d->dev, 1);
	if (!r)
		r = tc_toxic_run_words(pl->rt, d->devname, t, err, errlen);
	if (!r && t->a.tc.schedule)
		r = sched_load(pl->rt, pl->sched_rt, d, t, err, errlen);
	if (r) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "toxic %s: no memory for its tc commands", t->name);
		tc_dev_destroy(d);
		return r;
	}
	if (d->sched && (r = pw_tc_schedule_start(d->sched))) {
		snprintf(err, errlen, "toxic %s: its schedule did not start: %s", t->name,
			 strerror(-r));
		tc_dev_destroy(d);
		return r == -EINVAL ? -ENOMEM : r;
	}
	*out = d;
	return 0;
}

int tcp_tc_schedule_check(struct pw_runtime *scratch, const struct toxic *t, char *err,
			  size_t errlen)
{
	(void)scratch; /* the check makes a runtime of its own */
	return tc_toxic_check(t, 1, err, errlen);
}

void tc_dev_destroy(struct tc_dev *d)
{
	if (!d)
		return;
	pw_tc_schedule_free(d->sched); /* stopped: no step after this */
	pw_netdev_destroy(d->dev);
	free(d->words);
	free(d->sched_text);
	free(d);
}

/* ------------------------------------------------------------ the report */

char *tc_dev_report(struct tc_dev *d)
{
	return tc_report_json(d->rt, d->dev, d->devname, d->toxic, d->sched);
}

char *tcp_proxy_tc_report(struct tcp_proxy *p, enum toxic_stream stream)
{
	if (!p)
		return NULL;
	/* the devices of @stream, in the list's order */
	unsigned n = 0;
	for (struct tc_dev *d = p->tcdevs; d; d = d->next)
		n += d->stream == stream;
	struct tc_dev **v = n ? calloc(n, sizeof(*v)) : NULL;
	if (n && !v)
		return NULL;
	unsigned k = 0;
	for (struct tc_dev *d = p->tcdevs; d; d = d->next)
		if (d->stream == stream)
			v[k++] = d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		free(v);
		return NULL;
	}
	fputc('[', f);
	int ok = 1;
	for (unsigned i = 0; i < n && ok; i++) {
		char *r = tc_dev_report(v[i]);
		ok = r != NULL;
		if (r)
			fprintf(f, "%s%s", i ? "," : "", r);
		free(r);
	}
	fputc(']', f);
	free(v);
	if (fclose(f) || !ok) {
		free(buf);
		return NULL;
	}
	return buf;
}
