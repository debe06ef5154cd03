/* SPDX-License-Identifier: MIT */
/*
 * UDP proxies through toxiproxy's API: the registry's plane for a proxy
 * created with "protocol":"udp" (tools/netem/api/proxy.c keeps the model, this
 * file runs it).  Each open proxy is one UDP relay (tools/netem/udp/udp.h),
 * exactly what "pinwheel-netem --listen L --to U" runs, with one worker:
 * every client gets a mapping of its own to the upstream, answers go back
 * to the client they belong to.
 *
 * Toxics to tc.  Both devices start with a plain "netem" root (a FIFO with
 * no delay).  Per stream (upstream = client -> server = device "up",
 * downstream = "down"):
 *   latency L, jitter J      -> netem delay Lms Jms (netem's uniform jitter,
 *                               toxiproxy's); several latency toxics add up
 *   bandwidth R (KB/s)       -> netem rate (R*8000)bit: the TCP path's
 *                               conversion, 1 KB = 1000 bytes
 *   seed                     -> netem seed N (the first toxic's that has one)
 *   tc {"qdisc": WORDS}      -> "qdisc replace dev D root WORDS"
 *   tc {"batch": TEXT}       -> "qdisc del dev D root", then each command
 *                               of TEXT confined to D (udp_relay_tc_dev():
 *                               any word after "dev" names D, another
 *                               device is refused, no word reads a file;
 *                               as the TCP plane runs a batch on a tc
 *                               toxic's own device)
 *   tc {"schedule": TEXT}    -> the direction's schedule
 *                               (udp_relay_set_schedule(): any word after
 *                               "dev" names D), started when the toxic is
 *                               set, changed, or its proxy enabled
 * A tc toxic takes its stream alone (with any other toxic there: 400).
 * A change among latency/bandwidth toxics is a "qdisc change" of the netem
 * root: datagrams in flight stay.  Adding, changing or removing a tc toxic
 * replaces the root (a batch deletes it first): what the old root held is
 * dropped by the layer and counted in the relay's drop reasons (nothing
 * lost silently).  A direction's change that tc refuses is undone (every
 * direction set back as it was, its schedule started again) and answered
 * 400 with tc's message, so the plane's toxics stay the registry's.
 * Refused (400, named, by validate(), open proxy or not): slow_close,
 * timeout, reset_peer, slicer, limit_data (they act on a byte stream or a
 * connection), toxicity other than 1, a tc toxic with neither qdisc nor
 * batch.  tc's words and a schedule's lines are checked when set on a
 * relay (a disabled proxy's: when it is enabled).
 *
 * Upstream: a UDP proxy needs an address at open (a name that does not
 * resolve yet is refused by open(): the registry answers 500 with the
 * message); a changed address from the resolver (set_upstream())
 * restarts the relay on the same listen address with the same devices'
 * configuration: client mappings are lost, what was queued is dropped as
 * dev_destroy.  A restart that fails (the port taken meanwhile, no fds,
 * no memory) returns its error, and the registry closes and disables
 * the proxy, as after a failed open, so it never shows enabled with
 * nothing listening.
 *
 * Statistics, one ledger.  A relay's final counters (udp_relay_stop():
 * what was in flight at the stop counted as dropped, dev_destroy, so
 * rx + clones == out + dropped exactly) are added into a struct udp_stats
 * ledger whenever a relay stops: the proxy's own (p->kept) at a restart,
 * then, at close, the registry's per-proxy one when the registry keeps it
 * (close_keep(): the registry holds it across disable and enable and
 * frees it with the proxy, kept_free()).  GET /stats (stats_json, or
 * kept_json with the registry's ledger) shows the running relay's
 * snapshot plus the ledgers: per direction the datagrams and bytes in and
 * out, clones, drops by reason (stats.c's names), backlog (the running
 * relay's: what it received and has not yet sent or dropped, so the
 * sum holds by construction while it runs; the stopped relays' parts
 * are checked at each stop by udp_relay_stop(), against its devices'
 * own counts), rx + clones == out + dropped_total + backlog across every
 * relay the proxy ran; and per direction the device's report ("tc": the
 * achieved beside the configured, udp_relay_tc_report(), the same object
 * a TCP proxy's tc toxic shows) and its "check".  "counted_since" says
 * which: "created" (the registry keeps the ledger) or "enabled".
 *
 * Threads: the registry's request thread or the resolver's, with the
 * registry's entry mutex held (which serialises every call on a relay, as
 * udp.h asks); a schedule's steps on its own thread.  Locks: none of its
 * own.  Cost: one relay (its runtime and one worker thread) per open UDP
 * proxy, and its devices' accuracy counts (a few ns a packet).
 */
#define _GNU_SOURCE
#include "udp_proxy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tc_toxic.h"
#include "../udp/udp.h"

/* What a direction's device runs, made from the toxics of its stream. */
struct dstate {
	char *words;           /* a qdisc (what follows "root") or a batch's text */
	int batch;             /* words is a batch */
	char *sched;           /* the tc toxic's schedule text, or NULL */
	char *label;           /* the toxics it comes from ("a,b"; "" none) */
	int64_t lat_ms, jit_ms; /* the latency toxics' sums (the configured) */
};

struct udp_proxy {
	struct udp_relay *r;   /* NULL after a failed restart */
	struct relay_config cfg;
	struct dstate cur[RELAY_NDIR];
	char *start_spec[RELAY_NDIR]; /* the relay's cfg.spec strings (kept while it runs) */
	struct udp_stats kept; /* the relays this proxy stopped at restarts */
};

static const char *const dev_name[RELAY_NDIR] = { "up", "down" };

static void dstate_free(struct dstate *s)
{
	free(s->words);
	free(s->sched);
	free(s->label);
	memset(s, 0, sizeof(*s));
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Does @a run what @b runs on the device (the label aside)? */
static int dstate_same(const struct dstate *a, const struct dstate *b)
{
	return a->batch == b->batch && str_eq(a->words, b->words) && str_eq(a->sched, b->sched);
}

/* ------------------------------------------------------------ the ledger */

/* @d += @s: the counters (backlog and rates are the running relay's). */
static void dir_add(struct udp_dir_stats *d, const struct udp_dir_stats *s)
{
	d->rx += s->rx;
	d->rx_bytes += s->rx_bytes;
	d->clones += s->clones;
	d->out += s->out;
	d->out_bytes += s->out_bytes;
	for (unsigned k = 0; k < RD_NREASONS; k++)
		d->dropped[k] += s->dropped[k];
}

/* @a += @s: a relay's counters into a ledger. */
static void stats_add(struct udp_stats *a, const struct udp_stats *s)
{
	for (int d = 0; d < RELAY_NDIR; d++)
		dir_add(&a->d[d], &s->d[d]);
	a->clients_new += s->clients_new;
	a->clients_expired += s->clients_expired;
	a->refused += s->refused;
	a->upstream_errors += s->upstream_errors;
	a->over_share += s->over_share;
	a->no_memory += s->no_memory;
	a->clones_refused += s->clones_refused;
}

/* Stop @p's relay (no drain: what is queued is dropped, dev_destroy) and
 * add its final counters to p->kept. */
static void stop_relay(struct udp_proxy *p)
{
	if (!p->r)
		return;
	struct udp_stats fin;
	if (udp_relay_stop(p->r, 0, &fin))
		fprintf(stderr, "pinwheel-netem: udp proxy: a relay's counters do not balance at "
				"its stop\n");
	p->r = NULL;
	stats_add(&p->kept, &fin);
}

/* ------------------------------------------------------------ devices */

static int is_netem(const char *spec)
{
	return spec && !strncmp(spec, "netem", 5) && (!spec[5] || spec[5] == ' ');
}

/* Run tc command @cmd on @p's relay; tc's refusal into @err as "toxic
 * WHO: tc refused \"WHAT\": MSG".  Return: 0; -EINVAL; -ENOMEM. */
static int run_tc(struct udp_proxy *p, int d, const char *cmd, const char *who,
		  const char *what, char *err, size_t errlen)
{
	char msg[512];
	int rc = udp_relay_tc_dev(p->r, d, cmd, msg, sizeof(msg));
	if (!rc)
		return 0;
	snprintf(err, errlen, "toxic %s: tc refused %s: %s", who, what, msg);
	if (rc == -ENOBUFS) { /* the server's budget (src/net/netmem.c): a 413 */
		const struct pw_mem_budget *b = tc_toxic_budget();
		snprintf(err, errlen,
			 "toxic %s: the server's memory budget is spent (--max-bytes %llu: the bytes "
			 "its proxies hold and their tc state together): tc refused %s",
			 who, b ? (unsigned long long)b->limit : 0ull, what);
	}
	return rc == -ENOMEM || rc == -ENOBUFS ? rc : -EINVAL;
}

/* Direction @d's device from running @from to running @to: its qdiscs
 * (a netem to a netem: a change, datagrams kept; else the root replaced,
 * or deleted before a batch, what it held counted dropped), then its
 * schedule, started again.  @from NULL: the relay just started with @to's
 * qdisc, or the default root for a batch.  Return: 0; a negative errno
 * with the message, naming the toxic, in @err. */
static int dir_install(struct udp_proxy *p, int d, const struct dstate *from,
		       const struct dstate *to, char *err, size_t errlen)
{
	char msg[512], what[160];
	const char *who = to->label && to->label[0] ? to->label : dev_name[d];
	int rc;
	if (from && (from->sched || to->sched) &&
	    (rc = udp_relay_set_schedule(p->r, d, NULL, msg, sizeof(msg))))
		return rc; /* stopping fails only for a bad direction */
	/* a schedule's steps may have changed the qdiscs: they are set again */
	int words = from ? from->batch || to->batch || from->sched || !str_eq(from->words, to->words)
			 : to->batch;
	if (words && to->batch) {
		if (from) { /* the default root back (what it held: dropped, counted) */
			char cmd[64];
			snprintf(cmd, sizeof(cmd), "qdisc del dev %s root", dev_name[d]);
			udp_relay_tc(p->r, cmd, msg, sizeof(msg)); /* the default root: a no-op */
		}
		const char *q = to->words, *s;
		unsigned line = 0;
		size_t n;
		while (toxic_tc_next_line(&q, &line, &s, &n)) {
			char *cmd = strndup(s, n);
			if (!cmd)
				return -ENOMEM;
			snprintf(what, sizeof(what), "batch line %u \"%.*s\"", line,
				 (int)toxic_utf8_fit(s, n > 120 ? 120 : n), s);
			rc = run_tc(p, d, cmd, who, what, err, errlen);
			free(cmd);
			if (rc)
				return rc;
		}
	} else if (words) {
		int change = !from->batch && !from->sched && is_netem(from->words) &&
			     is_netem(to->words);
		char *cmd = NULL;
		if (asprintf(&cmd, "qdisc %s dev %s root %s", change ? "change" : "replace",
			     dev_name[d], to->words) < 0)
			return -ENOMEM;
		size_t wn = strlen(to->words);
		snprintf(what, sizeof(what), "\"%.*s\"",
			 (int)toxic_utf8_fit(to->words, wn > 120 ? 120 : wn), to->words);
		rc = run_tc(p, d, cmd, who, what, err, errlen);
		free(cmd);
		if (rc)
			return rc;
	}
	if (to->sched && (rc = udp_relay_set_schedule(p->r, d, to->sched, msg, sizeof(msg)))) {
		snprintf(err, errlen, "toxic %s: attributes.%s", who, msg);
		return rc;
	}
	return 0;
}

/* Start @p's relay with its devices as p->cur says.  Return: 0; a
 * negative errno with the message in @err (then p->r is NULL). */
static int start(struct udp_proxy *p, char *err, size_t errlen)
{
	for (int d = 0; d < RELAY_NDIR; d++) {
		free(p->start_spec[d]);
		p->start_spec[d] = NULL;
		if (!p->cur[d].batch && !(p->start_spec[d] = strdup(p->cur[d].words))) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		p->cfg.spec[d] = p->start_spec[d]; /* a batch: the default root */
	}
	int rc = udp_relay_start(&p->cfg, &p->r, err, errlen);
	if (rc)
		return rc;
	for (int d = 0; d < RELAY_NDIR; d++)
		if ((rc = dir_install(p, d, NULL, &p->cur[d], err, errlen))) {
			stop_relay(p);
			return rc;
		}
	return 0;
}

static void proxy_free(struct udp_proxy *p)
{
	for (int d = 0; d < RELAY_NDIR; d++) {
		dstate_free(&p->cur[d]);
		free(p->start_spec[d]);
	}
	free(p);
}

static int up_open(void *ctx, const char *name, const struct sockaddr *listen,
		   socklen_t listen_len, const struct sockaddr *upstream, socklen_t upstream_len,
		   void **handle, struct sockaddr_storage *bound, socklen_t *bound_len, char *err,
		   size_t errlen)
{
	*handle = NULL;
	if (!upstream_len) {
		snprintf(err, errlen, "proxy %s: a udp proxy needs an upstream that resolves now",
			 name);
		return -EINVAL;
	}
	struct udp_proxy *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	struct relay_config *c = &p->cfg;
	c->max_clients = RELAY_DEF_CLIENTS;
	c->max_clients_per_addr = RELAY_DEF_CLIENTS_PER_ADDR;
	c->idle_s = RELAY_DEF_IDLE_S;
	c->drain_ms = 0;
	c->max_bytes = RELAY_DEF_BYTES;
	c->workers = 1;
	c->accuracy = 1; /* the devices' reports (udp_relay_tc_report()) */
	c->no_files = 1; /* a client's words read no file on this host */
	c->tc_budget = tc_toxic_budget(); /* the server's --max-bytes */
	c->sched_rt = ctx; /* the server's scheduler (server.c), or NULL */
	memcpy(&c->listen, listen, listen_len);
	c->listen_len = listen_len;
	memcpy(&c->to, upstream, upstream_len);
	c->to_len = upstream_len;
	for (int d = 0; d < RELAY_NDIR; d++)
		if (!(p->cur[d].words = strdup("netem")) || !(p->cur[d].label = strdup(""))) {
			proxy_free(p);
			return -ENOMEM;
		}
	int rc = start(p, err, errlen);
	if (rc) {
		/* a relay that started and then failed its devices may have
		 * received a datagram meanwhile: said, as the proxy goes */
		uint64_t got = p->kept.d[RELAY_UP].rx + p->kept.d[RELAY_DOWN].rx;
		if (got)
			fprintf(stderr,
				"pinwheel-netem: proxy %s: %llu datagrams received by a relay "
				"whose open failed are dropped uncounted\n",
				name, (unsigned long long)got);
		proxy_free(p);
		return rc;
	}
	const struct relay_config *rc2 = udp_relay_config(p->r);
	memcpy(bound, &rc2->listen, rc2->listen_len);
	*bound_len = rc2->listen_len;
	memcpy(&c->listen, &rc2->listen, rc2->listen_len); /* a restart keeps the port */
	*handle = p;
	return 0;
}

/* Close @handle, its counters (and its restarts') added into the ledger
 * *@kept (allocated when NULL).  The registry's close_keep: it keeps
 * *@kept with the proxy across its opens and frees it with kept_free. */
static void up_close_keep(void *ctx, void *handle, void **kept)
{
	(void)ctx;
	struct udp_proxy *p = handle;
	if (!p)
		return;
	stop_relay(p);
	if (!*kept)
		*kept = calloc(1, sizeof(struct udp_stats));
	if (*kept)
		stats_add(*kept, &p->kept);
	else
		fprintf(stderr, "pinwheel-netem: udp proxy: out of memory: the counters of a "
				"closed relay are not kept\n");
	proxy_free(p);
}

static void up_kept_free(void *ctx, void *kept)
{
	(void)ctx;
	free(kept);
}

static void up_close(void *ctx, void *handle, struct tcp_proxy_stats *final)
{
	void *kept = NULL;
	memset(final, 0, sizeof(*final));
	up_close_keep(ctx, handle, &kept);
	up_kept_free(ctx, kept);
}

static int up_set_upstream(void *ctx, void *handle, const struct sockaddr *upstream,
			   socklen_t upstream_len)
{
	(void)ctx;
	struct udp_proxy *p = handle;
	char err[512];
	if (!upstream_len)
		return -EINVAL;
	stop_relay(p);
	memcpy(&p->cfg.to, upstream, upstream_len);
	p->cfg.to_len = upstream_len;
	int rc = start(p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "pinwheel-netem: udp proxy restart: %s\n", err);
	return rc;
}

/* Stream @stream's state from toxics @t[@n] into @out (emptied first).
 * Return: 0; -EINVAL with the message in @err; -ENOMEM. */
static int compose(const struct toxic *t, unsigned n, int stream, struct dstate *out, char *err,
		   size_t errlen)
{
	int64_t lat = 0, jit = 0, rate = -1;
	const struct toxic *tc = NULL;
	int seeded = 0, others = 0;
	uint64_t seed = 0;
	size_t llen = 0;
	char *label = NULL;
	FILE *lf = open_memstream(&label, &llen);
	if (!lf)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < n; i++) {
		if ((int)t[i].stream != stream)
			continue;
		fprintf(lf, "%s%s", ftell(lf) ? "," : "", t[i].name);
		if (t[i].type == TOXIC_TC) {
			if (tc) {
				snprintf(err, errlen, "toxic %s: one tc toxic per stream on a udp proxy",
					 t[i].name);
				goto bad;
			}
			tc = &t[i];
			continue;
		}
		others++;
		if (t[i].type == TOXIC_LATENCY) {
			lat += t[i].a.latency.latency_ms;
			jit += t[i].a.latency.jitter_ms;
		} else if (t[i].type == TOXIC_BANDWIDTH) {
			if (rate < 0 || t[i].a.bandwidth.rate_kbps < rate)
				rate = t[i].a.bandwidth.rate_kbps;
		}
		if (t[i].has_seed && !seeded) {
			seeded = 1;
			seed = t[i].seed;
		}
	}
	if (tc && others) {
		snprintf(err, errlen,
			 "toxic %s: a tc toxic takes its stream alone on a udp proxy (remove the "
			 "other toxics of that stream, or write them in its qdisc)",
			 tc->name);
		goto bad;
	}
	if (fclose(lf))
		label = NULL;
	lf = NULL;
	out->label = label;
	out->lat_ms = lat;
	out->jit_ms = jit;
	if (tc) {
		out->batch = !tc->a.tc.qdisc;
		out->words = strdup(tc->a.tc.qdisc ? tc->a.tc.qdisc : tc->a.tc.batch);
		out->sched = tc->a.tc.schedule ? strdup(tc->a.tc.schedule) : NULL;
		if (!out->words || (tc->a.tc.schedule && !out->sched) || !out->label)
			goto oom;
		return 0;
	}
	char buf[160];
	int k = snprintf(buf, sizeof(buf), "netem");
	if (lat || jit)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, " delay %lldms %lldms",
			      (long long)lat, (long long)jit);
	if (rate > 0)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, " rate %llubit",
			      (unsigned long long)rate * 8000ull);
	if (seeded)
		snprintf(buf + k, sizeof(buf) - (size_t)k, " seed %llu", (unsigned long long)seed);
	if (!(out->words = strdup(buf)) || !out->label)
		goto oom;
	return 0;
oom:
	dstate_free(out);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
bad:
	fclose(lf);
	free(label);
	return -EINVAL;
}

static int up_set_toxics(void *ctx, void *handle, const struct toxic *t, unsigned n, char *err,
			 size_t errlen)
{
	(void)ctx;
	struct udp_proxy *p = handle;
	struct dstate next[RELAY_NDIR];
	int rc = 0, d;
	if (!p->r) {
		snprintf(err, errlen, "the udp relay is not running (its restart failed)");
		return -EIO;
	}
	memset(next, 0, sizeof(next));
	for (d = 0; d < RELAY_NDIR; d++)
		if ((rc = compose(t, n, d, &next[d], err, errlen)))
			goto out;
	for (d = 0; d < RELAY_NDIR; d++)
		if (!dstate_same(&p->cur[d], &next[d]) &&
		    (rc = dir_install(p, d, &p->cur[d], &next[d], err, errlen)))
			break;
	if (rc) {
		/* undo: this direction and those before it back as they were */
		for (int u = d; u >= 0; u--) {
			char ignore[512];
			if (!dstate_same(&p->cur[u], &next[u]) &&
			    dir_install(p, u, &next[u], &p->cur[u], ignore, sizeof(ignore)))
				fprintf(stderr, "pinwheel-netem: udp proxy: dev %s not set back: %s\n",
					dev_name[u], ignore);
		}
		goto out;
	}
	for (d = 0; d < RELAY_NDIR; d++) { /* taken: next becomes cur */
		struct dstate old = p->cur[d];
		p->cur[d] = next[d];
		next[d] = old;
	}
out:
	for (d = 0; d < RELAY_NDIR; d++)
		dstate_free(&next[d]);
	return rc == -ENOMEM || rc == -EIO || rc == -ENOBUFS ? rc : rc ? -EINVAL : 0;
}

static int up_validate(void *ctx, const struct toxic *t, char *err, size_t errlen)
{
	(void)ctx;
	switch (t->type) {
	case TOXIC_LATENCY:
	case TOXIC_BANDWIDTH:
		break;
	case TOXIC_TC:
		if (!t->a.tc.qdisc && !t->a.tc.batch) {
			snprintf(err, errlen, "toxic %s: a tc toxic needs a qdisc or a batch",
				 t->name);
			return -EINVAL;
		}
		break;
	default:
		snprintf(err, errlen, "toxic %s: type %s acts on a TCP stream; a udp proxy takes "
			 "latency, bandwidth and tc", t->name, toxic_type_name(t->type));
		return -EINVAL;
	}
	if (t->toxicity != 1.0) {
		snprintf(err, errlen,
			 "toxic %s: toxicity %g: a udp proxy has no connections to choose "
			 "among; only 1 (use netem loss in a tc toxic)",
			 t->name, t->toxicity);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------ statistics */

/* The statistics of @handle (NULL: closed) plus the ledger @kept (NULL:
 * none), "counted_since" @since. */
static char *stats_text(void *handle, const struct udp_stats *kept, const char *since)
{
	struct udp_proxy *p = handle;
	struct udp_stats s;
	memset(&s, 0, sizeof(s));
	if (p && p->r)
		udp_relay_snapshot(p->r, &s);
	if (p)
		stats_add(&s, &p->kept);
	if (kept)
		stats_add(&s, kept);
	struct udp_dir_conf conf[RELAY_NDIR];
	for (int d = 0; d < RELAY_NDIR; d++)
		conf[d] = (struct udp_dir_conf){ p ? p->cur[d].lat_ms : 0, p ? p->cur[d].jit_ms : 0,
						 p ? p->cur[d].label : NULL };
	return udp_relay_stats_json(p ? p->r : NULL, &s, conf, since);
}

/* The registry's kept_json: counted since the proxy was created. */
static char *up_kept_json(void *ctx, void *handle, const void *kept)
{
	(void)ctx;
	return stats_text(handle, kept, "created");
}

/* Without the registry's ledger: since the proxy was last enabled. */
static char *up_stats_json(void *ctx, void *handle)
{
	(void)ctx;
	return stats_text(handle, NULL, "enabled");
}

const struct proxy_plane_ops udp_proxy_plane_ops = {
	.open = up_open,
	.close = up_close,
	.set_upstream = up_set_upstream,
	.set_toxics = up_set_toxics,
	.validate = up_validate,
	.stats_json = up_stats_json,
	.close_keep = up_close_keep,
	.kept_json = up_kept_json,
	.kept_free = up_kept_free,
};
