/* SPDX-License-Identifier: MIT */
/*
 * The tc toxic on TCP proxies: a pinwheel device per proxy, stream
 * direction and tc toxic, so a qdisc's rate (tbf, htb, netem rate) is
 * shared by every connection of the proxy, toxiproxy's missing "shared
 * rate across connections".
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
 * The client's words.  They come from whoever can reach the API, so
 * every command runs confined to the toxic's own device (pw_tc_dev(): any
 * word after "dev", as tc's quoting leaves it, names the device; another
 * device's name is refused) and reads no file (PW_TC_NO_FILES), decided
 * by tc's parser, not by matching text.  Before a device is made the
 * whole toxic is checked on a device and runtime of its own
 * (tc_toxic_check()): every word and batch line, and for a byte stream
 * the configuration tc reads back, after the words and after each step of
 * the schedule: a netem that loses, duplicates, corrupts or reorders is
 * refused however it was spelt (tc_dev_stream_safe()).
 *
 * Schedules and accuracy.  Every device keeps its qdiscs' accuracy
 * figures (pw_netdev_accuracy_enable() before its words run, so each
 * qdisc counts from its creation): always on, because the figures are
 * about packets gone by, which no later request could count.  A toxic's
 * "schedule" text (the client's line numbers in its messages) is loaded
 * confined to the device and started when the device is made (toxic
 * added, changed or its proxy enabled); its steps run on a pinwheel timer
 * of the plane's runtime and the schedule's own thread, each a tc change
 * that keeps the packets queued; it stops before the device goes.  A
 * disabled proxy's toxic is checked the same way, by the validator
 * (tc_toxic_check(), through tcp_tc_schedule_check()).  The report
 * (tc_report_json()) is tc's JSON show with the accuracy, the library's
 * check over the device and the schedule's status, written as text so
 * this file needs no JSON library.
 *
 * Threads: as tc_toxic.h says.  Locks: none of its own.  Costs: a piece is
 * a packet (one malloc), a push (a compare-and-swap) and, when the queue
 * runs on another worker, one eventfd write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pinwheel/net.h>
#include <pinwheel/runtime.h>

#include "../common/json_str.h"
#include "tc_toxic.h"
#include "tcp/tcp_priv.h"

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

/* The words of an API client: no file read (PW_TC_NO_FILES), and every
 * command confined to the toxic's own device (pw_tc_dev(): whatever the
 * client wrote after "dev", quoted or not, names it; another device's name
 * is refused and named), decided by tc's parser on the words it reads. */
#define TC_UNTRUSTED PW_TC_NO_FILES
#define SCHED_UNTRUSTED (PW_TC_SCHED_NO_FILES | PW_TC_SCHED_CONFINE)

/* tc_toxic_set_budget()'s: set before the first check, read only after. */
static struct pw_mem_budget *tc_budget;

void tc_toxic_set_budget(struct pw_mem_budget *b)
{
	tc_budget = b;
}

struct pw_mem_budget *tc_toxic_budget(void)
{
	return tc_budget;
}

/* The budget's refusal (-ENOBUFS from the library: src/net/netmem.c) in
 * @err, naming the toxic, --max-bytes and what was refused (@what). */
static void say_spent(char *err, size_t errlen, const char *toxic, const char *what)
{
	snprintf(err, errlen,
		 "toxic %s: the server's memory budget is spent (--max-bytes %llu: the bytes its "
		 "proxies hold and their tc state together): %s",
		 toxic, tc_budget ? (unsigned long long)tc_budget->limit : 0ull, what);
}

/* Run @t's words on device @devname of @rt.  Return: 0; a negative
 * errno, @err set naming the toxic (and the batch line); -ENOBUFS: the
 * budget refused (say_spent()). */
static int run_words(struct pw_runtime *rt, const char *devname, const struct toxic *t,
		     char *err, size_t errlen)
{
	char msg[512] = "";
	const char *words = t->a.tc.qdisc ? t->a.tc.qdisc : t->a.tc.batch;
	if (t->a.tc.qdisc) {
		char *cmd = NULL;
		if (asprintf(&cmd, "qdisc add dev %s root %s", devname, words) < 0)
			return -ENOMEM;
		int r = pw_tc_dev(rt, devname, cmd, TC_UNTRUSTED, NULL, 0, msg, sizeof(msg));
		free(cmd);
		if (r) {
			msg[strcspn(msg, "\n")] = '\0';
			snprintf(err, errlen, "toxic %s: tc refused \"%.*s\": %s", t->name,
				 (int)toxic_utf8_fit(words, strlen(words) > 120 ? 120 : strlen(words)),
				 words, msg[0] ? msg : strerror(-r));
			if (r == -ENOBUFS)
				say_spent(err, errlen, t->name, "tc refused its qdisc");
			return r == -ENOMEM || r == -ENOBUFS ? r : -EINVAL;
		}
		return 0;
	}
	const char *p = words, *s;
	unsigned line = 0;
	size_t n;
	while (toxic_tc_next_line(&p, &line, &s, &n)) {
		char *cmd = strndup(s, n);
		if (!cmd)
			return -ENOMEM;
		int r = pw_tc_dev(rt, devname, cmd, TC_UNTRUSTED, NULL, 0, msg, sizeof(msg));
		free(cmd);
		if (r) {
			msg[strcspn(msg, "\n")] = '\0';
			snprintf(err, errlen, "toxic %s: tc refused batch line %u \"%.*s\": %s", t->name,
				 line, (int)toxic_utf8_fit(s, n > 120 ? 120 : n), s,
				 msg[0] ? msg : strerror(-r));
			if (r == -ENOBUFS) {
				char what[64];
				snprintf(what, sizeof(what), "tc refused its batch line %u", line);
				say_spent(err, errlen, t->name, what);
			}
			return r == -ENOMEM || r == -ENOBUFS ? r : -EINVAL;
		}
	}
	return 0;
}

int tc_schedule_load_inline(struct pw_runtime *rt, struct pw_runtime *timer_rt, const char *text,
			    const char *devname, unsigned flags, struct pw_tc_schedule **out,
			    char *msg, size_t msglen)
{
	*out = NULL;
	int r = pw_tc_schedule_load(rt, text, "schedule", devname, SCHED_UNTRUSTED | flags, out,
				    msg, msglen);
	if (!r && timer_rt && (r = pw_tc_schedule_set_timer_rt(*out, timer_rt))) {
		pw_tc_schedule_free(*out);
		*out = NULL;
		snprintf(msg, msglen, "the scheduler: %s", strerror(-r));
	}
	return r;
}

int tc_dev_stream_safe(struct pw_runtime *rt, const char *devname, const char *toxic, char *err,
		       size_t errlen)
{
	/* netem's options as its printer writes them from the parsed
	 * configuration (q_netem.c): whatever spelling the words used */
	static const char *const stream_less[] = { "loss", "duplicate", "corrupt", "reorder",
						   "gap", "slot" };
	char cmd[64], msg[256];
	snprintf(cmd, sizeof(cmd), "qdisc show dev %s", devname);
	size_t cap = 1 << 14;
	char *out = NULL;
	int r;
	for (;;) {
		free(out);
		if (!(out = malloc(cap)))
			return -ENOMEM;
		r = pw_tc(rt, cmd, 0, out, cap, msg, sizeof(msg));
		if (r != -ENOSPC || cap >= (1u << 26))
			break;
		cap *= 4;
	}
	if (r) {
		free(out);
		snprintf(err, errlen, "toxic %s: cannot read back its device: %s", toxic,
			 strerror(-r));
		return r == -ENOMEM ? r : -EIO;
	}
	int bad = -1;
	for (char *l = out, *e; l && *l && bad < 0; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		if (e)
			*e = '\0';
		if (strncmp(l, "qdisc netem ", 12))
			continue;
		for (char *w = strtok(l, " "); w && bad < 0; w = strtok(NULL, " "))
			for (size_t i = 0; i < sizeof(stream_less) / sizeof(stream_less[0]); i++)
				if (!strcmp(w, stream_less[i]))
					bad = (int)i;
	}
	free(out);
	if (bad < 0)
		return 0;
	snprintf(err, errlen,
		 "toxic %s: netem %s cannot apply to a TCP byte stream (it would lose or reorder "
		 "bytes); use it on a udp proxy",
		 toxic, stream_less[bad]);
	return -EINVAL;
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
			say_spent(err, errlen, t->name, "no room for its device");
		free(d->words);
		free(d);
		return r;
	}
	d->rt = pl->rt;
	/* accuracy before the qdiscs: each keeps its figures from its start */
	r = pw_netdev_accuracy_enable(d->dev, 1);
	if (!r)
		r = run_words(pl->rt, d->devname, t, err, errlen);
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

static void check_drop(struct pw_netdev *dev, struct pw_pkt *pkt, enum pw_drop_reason reason,
		       void *ctx)
{
	(void)dev;
	(void)pkt;
	(void)reason;
	(void)ctx; /* a checking device carries no packet */
}

static int check_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pkt, void *ctx)
{
	(void)dev;
	(void)txq;
	(void)pkt;
	(void)ctx;
	return PW_NETDEV_TX_OK;
}

static const struct pw_netdev_ops check_ops = { .xmit = check_xmit, .drop = check_drop };

/* A schedule's steps, run once through on device @devname of @rt (the
 * simulated clock; the schedule loaded inline), each step's result checked
 * for a byte stream: two passes when it loops (a pass starts from where
 * the last one left the device).  Return: 0; -EINVAL with the step's line
 * in @err; -ENOMEM. */
static int sched_walk(struct pw_runtime *rt, const char *devname, struct pw_tc_schedule *sc,
		      const struct toxic *t, char *err, size_t errlen)
{
	int r = pw_tc_schedule_start(sc);
	if (r)
		return r == -ENOMEM ? r : -EINVAL;
	struct pw_tc_schedule_status st;
	uint64_t seen = 0;
	for (unsigned i = 0; !pw_tc_schedule_status(sc, &st) && !st.finished && st.cycle < 2 &&
			     i < 4 * st.nsteps + 8;
	     i++) {
		uint64_t next = pw_next_expiry_ns(rt, 0);
		uint64_t now = pw_now_ns(rt);
		if (next == UINT64_MAX || (r = pw_sim_advance(rt, next > now ? next - now : 0)))
			break;
		if (pw_tc_schedule_status(sc, &st) || st.due == seen)
			continue;
		seen = st.due;
		char msg[512];
		r = tc_dev_stream_safe(rt, devname, t->name, msg, sizeof(msg));
		if (r) {
			snprintf(err, errlen, "%s, after attributes.schedule:%u", msg, st.line);
			break;
		}
	}
	pw_tc_schedule_stop(sc);
	return r;
}

int tc_toxic_check(const struct toxic *t, int stream, char *err, size_t errlen)
{
	if (t->type != TOXIC_TC)
		return 0;
	if (!t->a.tc.qdisc && !t->a.tc.batch) {
		snprintf(err, errlen, "toxic %s: a tc toxic needs a qdisc or a batch", t->name);
		return -EINVAL;
	}
	/* a runtime of its own, on the simulated clock: no other device, no
	 * thread, nothing shared with a data path */
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	struct pw_runtime *rt = NULL;
	struct pw_netdev *dev = NULL;
	const char *devname = "pwcheck0";
	int r = pw_runtime_create(&cfg, &rt);
	/* what the check builds is memory too: charged like the plane's */
	if (!r && tc_budget)
		r = pw_net_set_budget(rt, tc_budget);
	if (!r)
		r = pw_netdev_create(rt, devname, 1, &check_ops, NULL, &dev);
	if (r) {
		if (rt)
			pw_runtime_destroy(rt);
		snprintf(err, errlen, "toxic %s: cannot check its words: %s", t->name,
			 strerror(-r));
		if (r == -ENOBUFS)
			say_spent(err, errlen, t->name, "no room to check its words");
		return r == -ENOMEM || r == -ENOBUFS ? r : -EAGAIN;
	}
	r = run_words(rt, devname, t, err, errlen);
	if (!r && stream)
		r = tc_dev_stream_safe(rt, devname, t->name, err, errlen);
	if (!r && t->a.tc.schedule) {
		char msg[512] = "";
		struct pw_tc_schedule *sc = NULL;
		r = tc_schedule_load_inline(rt, NULL, t->a.tc.schedule, devname, PW_TC_SCHED_INLINE,
					    &sc, msg, sizeof(msg));
		if (r && r != -ENOMEM)
			snprintf(err, errlen, "toxic %s: attributes.%s", t->name,
				 msg[0] ? msg : strerror(-r));
		if (!r && stream)
			r = sched_walk(rt, devname, sc, t, err, errlen);
		pw_tc_schedule_free(sc);
		if (r == -ENOBUFS)
			say_spent(err, errlen, t->name, "its schedule's steps need more");
		if (r && r != -ENOMEM && r != -ENOBUFS)
			r = -EINVAL;
	}
	if (r == -ENOMEM)
		snprintf(err, errlen, "toxic %s: no memory to check its words", t->name);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
	return r;
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

/* "tc -s -j qdisc show dev D" with the accuracy: malloc'd; NULL (no
 * memory, or tc failed). */
static char *qdisc_show(struct pw_runtime *rt, const char *devname)
{
	char cmd[64], err[256];
	snprintf(cmd, sizeof(cmd), "qdisc show dev %s", devname);
	for (size_t cap = 1 << 14; cap <= (1u << 24); cap *= 4) {
		char *out = malloc(cap);
		if (!out)
			return NULL;
		out[0] = '\0';
		int rc = pw_tc(rt, cmd, PW_TC_STATS | PW_TC_JSON | PW_TC_ACCURACY, out, cap, err,
			       sizeof(err));
		if (rc == -ENOSPC) {
			free(out);
			continue;
		}
		if (rc) {
			free(out);
			return NULL;
		}
		size_t n = strlen(out);
		while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = '\0';
		return out;
	}
	return NULL;
}

char *tc_dev_report(struct tc_dev *d)
{
	return tc_report_json(d->rt, d->dev, d->devname, d->toxic, d->sched);
}

char *tc_report_json(struct pw_runtime *rt, struct pw_netdev *dev, const char *devname,
		     const char *toxic, struct pw_tc_schedule *sched)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputs("{\"toxic\":", f);
	json_put_str(f, toxic);
	fputs(",\"device\":", f);
	json_put_str(f, devname);
	char *q = qdisc_show(rt, devname);
	fprintf(f, ",\"qdiscs\":%s", q && q[0] ? q : "[]");
	free(q);
	char why[2048] = "";
	int v = pw_netdev_accuracy_check(dev, why, sizeof(why));
	fprintf(f, ",\"check\":\"%s\",\"why\":",
		v == PW_ACC_FAIL ? "fail" : v == PW_ACC_PASS ? "pass" :
		v == PW_ACC_NOT_JUDGED ? "not judged" : "error");
	size_t wn = strlen(why);
	while (wn && why[wn - 1] == '\n')
		why[--wn] = '\0';
	json_put_str(f, why);
	struct pw_tc_schedule_status ss;
	if (sched && !pw_tc_schedule_status(sched, &ss)) {
		fprintf(f,
			",\"schedule\":{\"step\":%d,\"line\":%u,\"loops\":%" PRIu64 ",\"steps\":%u,"
			"\"due\":%" PRIu64 ",\"applied\":%" PRIu64 ",\"failed\":%" PRIu64
			",\"finished\":%s",
			ss.step, ss.line, ss.cycle, ss.nsteps, ss.due, ss.applied, ss.failed,
			ss.finished ? "true" : "false");
		if (ss.failed_step >= 0) {
			fprintf(f, ",\"last_failure\":{\"line\":%u,\"error\":", ss.failed_line);
			json_put_str(f, ss.failed_msg);
			fputc('}', f);
		}
		fputc('}', f);
	}
	fputc('}', f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
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
