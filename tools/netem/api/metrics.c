/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics: what the registry's proxies, their qdiscs, the process and
 * pinwheel's runtimes count, in Prometheus' text format (0.0.4), each
 * family's samples together under its # HELP and # TYPE.
 *
 * toxiproxy's series (-proxy-metrics), as toxiproxy 2.8 names and labels
 * them: toxiproxy_proxy_received_bytes_total and
 * toxiproxy_proxy_sent_bytes_total, labels direction (upstream: client to
 * server; downstream), listener, proxy, upstream, TCP proxies only (the
 * proxies toxiproxy has).  Counted as toxiproxy counts them: the bytes
 * read from a direction's source and those written to its sink, under the
 * labels the proxy has, kept when the proxy is deleted or its listen or
 * upstream changes (toxiproxy's counters never forget a label set: a
 * proxy made again with the same name, listen and upstream goes on from
 * there).  One difference, on purpose: toxiproxy adds a connection's
 * bytes when that direction of it ends, pinwheel as they move (the same
 * totals whenever no connection is open; live values for a dashboard
 * and rate() meanwhile).  The ledger (struct tp_row, in the registry)
 * holds what proxies no longer carrying a label set counted under it;
 * proxy__tp_fold() moves an entry's counts there before its labels
 * change or it goes (proxy.c calls it), e->tp_done remembering what was
 * moved.
 *
 * pinwheel's own (-proxy-metrics): per proxy and direction the bytes
 * read, written, held, dropped by reason, the stalls, the achieved added
 * delay as a histogram (the data path's own buckets, tcp.h, every half
 * octave: le is the bucket's bound) beside the latency and jitter the
 * toxics configure, the bandwidth configured and achieved, the accuracy
 * check (1 pass, 0 fail; absent while not judged); per UDP proxy and
 * direction the datagrams and bytes in and out, drops by reason, backlog;
 * per qdisc of a tc toxic or UDP relay device what `tc -s` shows.  All
 * from the counters GET /proxies/NAME/stats gives (proxy__stats_json()).
 *
 * -runtime-metrics: process_* as Prometheus' process collector names them
 * (CPU seconds, resident and virtual memory, descriptors open and the
 * limit, start time), and per pinwheel runtime and CPU its worker's
 * counters (pw_stats_read(): wake-ups, timers armed and expired, work
 * items, busy and idle time, lock waits), the kicks it received by
 * reason (pw_kick_stats_read()), the timers pending (pw_pending_read())
 * and its wake-up lateness as a histogram (pw_wake_lateness_read()).
 *
 * Threads: the API's polling thread (netem_metrics_text()); proxy.c's
 * request paths (proxy__tp_fold()).  Locks: netem_metrics_text() takes
 * req_lock, then lock, as a request does, and holds them while it reads
 * every proxy; proxy__tp_fold() runs under r->lock.  Costs: one plane
 * stats call and one tc report per stream and proxy, each scrape.
 */
#define _GNU_SOURCE
#include "metrics.h"

#include <dirent.h>
#include <jansson.h>
#include <pinwheel/runtime.h>
#include <pinwheel/stats.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proxy_priv.h"
#include "../tcp/tcp.h"

static const char *const dir_name[TOXIC_NSTREAMS] = { "upstream", "downstream" };

/* ------------------------------------------------------------ text */

struct mbuf {
	char *p;
	size_t len, cap;
	int oom;
};

static void put(struct mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct mbuf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap * 2 + (size_t)n + 1;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/* A label's value, escaped as the format says (\\, \", \n). */
static void put_val(struct mbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			put(b, "\\%c", *s);
		else if (*s == '\n')
			put(b, "\\n");
		else
			put(b, "%c", *s);
	}
}

static void family(struct mbuf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{direction="D",proxy="P"[,KEY="VAL"] with the set left open */
static void series_open(struct mbuf *b, const char *name, const char *proxy, int dir,
			const char *extra_key, const char *extra_val)
{
	put(b, "%s{", name);
	if (dir >= 0)
		put(b, "direction=\"%s\",", dir_name[dir]);
	put(b, "proxy=\"");
	put_val(b, proxy);
	put(b, "\"");
	if (extra_key) {
		put(b, ",%s=\"", extra_key);
		put_val(b, extra_val);
		put(b, "\"");
	}
}

/* name{direction="D",proxy="P"[,KEY="VAL"]} and the space before the value
 * (dir < 0: no direction) */
static void series(struct mbuf *b, const char *name, const char *proxy, int dir,
		   const char *extra_key, const char *extra_val)
{
	series_open(b, name, proxy, dir, extra_key, extra_val);
	put(b, "} ");
}

/* ------------------------------------------------------------ the ledger */

struct tp_row {
	struct tp_row *next;
	char *proxy, *listener, *upstream;
	uint64_t n[TOXIC_NSTREAMS][2]; /* [direction][0 received, 1 sent] */
};

static struct tp_row *tp_find(struct tp_row *rows, const char *proxy, const char *listener,
			      const char *upstream)
{
	for (struct tp_row *t = rows; t; t = t->next)
		if (!strcmp(t->proxy, proxy) && !strcmp(t->listener, listener) &&
		    !strcmp(t->upstream, upstream))
			return t;
	return NULL;
}

static struct tp_row *tp_row_new(const char *proxy, const char *listener, const char *upstream)
{
	struct tp_row *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->proxy = strdup(proxy);
	t->listener = strdup(listener);
	t->upstream = strdup(upstream);
	if (!t->proxy || !t->listener || !t->upstream) {
		free(t->proxy);
		free(t->listener);
		free(t->upstream);
		free(t);
		return NULL;
	}
	return t;
}

/* @e's counters since it was created: what closed plane proxies counted
 * and, while open, its plane proxy's now.  r->lock held. */
static void entry_totals(struct proxy_registry *r, const struct entry *e, struct tcp_proxy_stats *s)
{
	struct tcp_proxy_stats now;
	void *ctx;
	const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
	*s = e->base;
	memset(&now, 0, sizeof(now));
	if (e->handle && ops->stats)
		ops->stats(ctx, e->handle, &now);
	proxy__stats_add(s, &now, 1);
}

void proxy__tp_fold(struct proxy_registry *r, struct entry *e)
{
	if (e->udp || !e->listen || !e->upstream)
		return;
	struct tcp_proxy_stats s;
	entry_totals(r, e, &s);
	uint64_t moved = 0;
	for (int d = 0; d < TOXIC_NSTREAMS; d++)
		moved |= (s.dir[d].bytes_in - e->tp_done[d][0]) | (s.dir[d].bytes_out - e->tp_done[d][1]);
	if (!moved)
		return; /* nothing to keep: no row (toxiproxy has none before a count) */
	struct tp_row *t = tp_find(r->tp_rows, e->name, e->listen, e->upstream);
	if (!t) {
		if (!(t = tp_row_new(e->name, e->listen, e->upstream)))
			return; /* out of memory: these counts are lost to the series */
		t->next = r->tp_rows;
		r->tp_rows = t;
	}
	for (int d = 0; d < TOXIC_NSTREAMS; d++) {
		uint64_t c[2] = { s.dir[d].bytes_in, s.dir[d].bytes_out };
		for (int k = 0; k < 2; k++) {
			t->n[d][k] += c[k] - e->tp_done[d][k];
			e->tp_done[d][k] = c[k];
		}
	}
}

void proxy__tp_free(struct proxy_registry *r)
{
	while (r->tp_rows) {
		struct tp_row *t = r->tp_rows;
		r->tp_rows = t->next;
		free(t->proxy);
		free(t->listener);
		free(t->upstream);
		free(t);
	}
}

/* ------------------------------------------------------------ proxies */

/* One proxy as a scrape reads it (r->lock held throughout). */
struct snap {
	const struct entry *e;        /* NULL: the command line's relay */
	const char *name;             /* the "proxy" label */
	int udp;
	struct tcp_proxy_stats s;     /* TCP: totals (entry_totals()) */
	json_t *js;                   /* proxy__stats_json(): both kinds */
};

static int cmp_row(const void *a, const void *b)
{
	const struct tp_row *x = *(const struct tp_row *const *)a, *y = *(const struct tp_row *const *)b;
	int c = strcmp(x->listener, y->listener);
	if (!c)
		c = strcmp(x->proxy, y->proxy);
	return c ? c : strcmp(x->upstream, y->upstream);
}

/* toxiproxy's two families: the ledger's rows plus what each TCP proxy
 * counted since its last fold, in Go's order (label values sorted:
 * direction, listener, proxy, upstream). */
static void toxiproxy_series(struct mbuf *b, struct proxy_registry *r, struct snap *sn, unsigned n)
{
	struct tp_row *tmp = NULL; /* this scrape's rows: copies of the ledger's */
	for (struct tp_row *t = r->tp_rows; t; t = t->next) {
		struct tp_row *c = tp_row_new(t->proxy, t->listener, t->upstream);
		if (!c) {
			b->oom = 1;
			goto out;
		}
		memcpy(c->n, t->n, sizeof(c->n));
		c->next = tmp;
		tmp = c;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct entry *e = sn[i].e;
		if (e->udp)
			continue;
		struct tp_row *c = tp_find(tmp, e->name, e->listen, e->upstream);
		if (!c) {
			if (!(c = tp_row_new(e->name, e->listen, e->upstream))) {
				b->oom = 1;
				goto out;
			}
			c->next = tmp;
			tmp = c;
		}
		for (int d = 0; d < TOXIC_NSTREAMS; d++) {
			c->n[d][0] += sn[i].s.dir[d].bytes_in - e->tp_done[d][0];
			c->n[d][1] += sn[i].s.dir[d].bytes_out - e->tp_done[d][1];
		}
	}
	unsigned nr = 0;
	for (struct tp_row *t = tmp; t; t = t->next)
		nr++;
	struct tp_row **v = nr ? malloc(nr * sizeof(*v)) : NULL;
	if (nr && !v) {
		b->oom = 1;
		goto out;
	}
	nr = 0;
	for (struct tp_row *t = tmp; t; t = t->next)
		v[nr++] = t;
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_row);
	static const struct { const char *name, *help; } fam[2] = {
		{ "toxiproxy_proxy_received_bytes_total",
		  "Bytes a proxy read from a direction's source (toxiproxy's series)." },
		{ "toxiproxy_proxy_sent_bytes_total",
		  "Bytes a proxy wrote to a direction's sink (toxiproxy's series)." },
	};
	for (int k = 0; k < 2; k++) {
		family(b, fam[k].name, "counter", fam[k].help);
		/* "downstream" sorts before "upstream" */
		static const int order[TOXIC_NSTREAMS] = { TOXIC_DOWNSTREAM, TOXIC_UPSTREAM };
		for (int o = 0; o < TOXIC_NSTREAMS; o++)
			for (unsigned i = 0; i < nr; i++) {
				put(b, "%s{direction=\"%s\",listener=\"", fam[k].name, dir_name[order[o]]);
				put_val(b, v[i]->listener);
				put(b, "\",proxy=\"");
				put_val(b, v[i]->proxy);
				put(b, "\",upstream=\"");
				put_val(b, v[i]->upstream);
				put(b, "\"} %llu\n", (unsigned long long)v[i]->n[order[o]][k]);
			}
	}
	free(v);
out:
	while (tmp) {
		struct tp_row *t = tmp;
		tmp = t->next;
		free(t->proxy);
		free(t->listener);
		free(t->upstream);
		free(t);
	}
}

/* A TCP direction's counter, by its offset in struct tcp_dir_stats. */
static const struct {
	const char *name, *type, *help;
	size_t off;
} dir_fams[] = {
	{ "pinwheel_proxy_read_bytes_total", "counter",
	  "Bytes read from the direction's source, counted as they move.",
	  offsetof(struct tcp_dir_stats, bytes_in) },
	{ "pinwheel_proxy_written_bytes_total", "counter",
	  "Bytes written to the direction's sink, counted as they move.",
	  offsetof(struct tcp_dir_stats, bytes_out) },
	{ "pinwheel_proxy_held_bytes", "gauge", "Bytes the direction holds now.",
	  offsetof(struct tcp_dir_stats, held) },
	{ "pinwheel_proxy_stalls_total", "counter",
	  "Times the direction's source was not read (its buffer or --max-bytes full).",
	  offsetof(struct tcp_dir_stats, stalls) },
};

static uint64_t dir_field(const struct tcp_dir_stats *d, size_t off)
{
	uint64_t v;
	memcpy(&v, (const char *)d + off, sizeof(v));
	return v;
}

/* A number of @o's member @key (0 when absent). */
static double jnum(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static void tcp_series(struct mbuf *b, struct snap *sn, unsigned n)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} px[] = {
		{ "pinwheel_proxy_connections_accepted_total", "counter", "Connections accepted.",
		  offsetof(struct tcp_proxy_stats, accepted) },
		{ "pinwheel_proxy_connections_active", "gauge", "Connections open now.",
		  offsetof(struct tcp_proxy_stats, active) },
		{ "pinwheel_proxy_connections_closed_total", "counter", "Connections closed.",
		  offsetof(struct tcp_proxy_stats, closed) },
		{ "pinwheel_proxy_upstream_failed_total", "counter",
		  "Connections closed at once: the upstream refused, was unreachable or not resolved.",
		  offsetof(struct tcp_proxy_stats, upstream_failed) },
		{ "pinwheel_proxy_fd_exhausted_total", "counter",
		  "Accepts or connections lost for want of a file descriptor.",
		  offsetof(struct tcp_proxy_stats, fd_exhausted) },
	};
	for (size_t f = 0; f < sizeof(px) / sizeof(px[0]); f++) {
		family(b, px[f].name, px[f].type, px[f].help);
		for (unsigned i = 0; i < n; i++) {
			if (sn[i].udp)
				continue;
			uint64_t v;
			memcpy(&v, (const char *)&sn[i].s + px[f].off, sizeof(v));
			series(b, px[f].name, sn[i].name, -1, NULL, NULL);
			put(b, "%llu\n", (unsigned long long)v);
		}
	}
	for (size_t f = 0; f < sizeof(dir_fams) / sizeof(dir_fams[0]); f++) {
		family(b, dir_fams[f].name, dir_fams[f].type, dir_fams[f].help);
		for (unsigned i = 0; i < n; i++)
			for (int d = 0; !sn[i].udp && d < TOXIC_NSTREAMS; d++) {
				series(b, dir_fams[f].name, sn[i].name, d, NULL, NULL);
				put(b, "%llu\n",
				    (unsigned long long)dir_field(&sn[i].s.dir[d], dir_fams[f].off));
			}
	}
	const char *dn = "pinwheel_proxy_dropped_bytes_total";
	family(b, dn, "counter",
	       "Bytes dropped: cut by a toxic on purpose (toxic), or held when the connection closed (closed).");
	for (unsigned i = 0; i < n; i++)
		for (int d = 0; !sn[i].udp && d < TOXIC_NSTREAMS; d++) {
			series(b, dn, sn[i].name, d, "reason", "toxic");
			put(b, "%llu\n", (unsigned long long)sn[i].s.dir[d].bytes_cut);
			series(b, dn, sn[i].name, d, "reason", "closed");
			put(b, "%llu\n", (unsigned long long)sn[i].s.dir[d].bytes_dropped);
		}
	/* the achieved delay: the data path's buckets every half octave (tcp.h) */
	const char *hn = "pinwheel_proxy_delay_seconds";
	family(b, hn, "histogram",
	       "The delay the proxy added to each chunk (written minus read time); le: the bucket's bound.");
	for (unsigned i = 0; i < n; i++)
		for (int d = 0; !sn[i].udp && d < TOXIC_NSTREAMS; d++) {
			const struct tcp_dir_stats *x = &sn[i].s.dir[d];
			uint64_t below = x->delay_hist[0], total = 0;
			for (unsigned k = 0; k < TCP_DELAY_BUCKETS; k++)
				total += x->delay_hist[k];
			for (unsigned k = 1; k + 4 < TCP_DELAY_BUCKETS; k += 4) {
				char le[32];
				snprintf(le, sizeof(le), "%.9g", (double)tcp_delay_bucket_lo(k) / 1e9);
				series(b, "pinwheel_proxy_delay_seconds_bucket", sn[i].name, d, "le", le);
				put(b, "%llu\n", (unsigned long long)below);
				for (unsigned j = k; j < k + 4; j++)
					below += x->delay_hist[j];
			}
			series(b, "pinwheel_proxy_delay_seconds_bucket", sn[i].name, d, "le", "+Inf");
			put(b, "%llu\n", (unsigned long long)total);
			series(b, "pinwheel_proxy_delay_seconds_sum", sn[i].name, d, NULL, NULL);
			put(b, "%.9g\n", (double)x->delay_sum_ns / 1e9);
			series(b, "pinwheel_proxy_delay_seconds_count", sn[i].name, d, NULL, NULL);
			put(b, "%llu\n", (unsigned long long)total);
		}
	/* what the toxics configure, from the stats' JSON (proxy_json.c) */
	static const struct {
		const char *name, *help, *key;
		double scale;
	} cf[] = {
		{ "pinwheel_proxy_latency_configured_seconds",
		  "The latency the direction's latency toxics add together.", "latency_ms", 1e-3 },
		{ "pinwheel_proxy_jitter_configured_seconds",
		  "The jitter of the direction's latency toxics together.", "jitter_ms", 1e-3 },
		{ "pinwheel_proxy_rate_configured_bytes_per_second",
		  "The lowest rate of the direction's bandwidth toxics (0: none).", "rate_kbps", 1e3 },
		{ "pinwheel_proxy_rate_achieved_bytes_per_second",
		  "The rate the bandwidth toxics gave while the direction had a backlog (0: not judged).",
		  "rate_achieved_kbps", 1e3 },
	};
	for (size_t f = 0; f < sizeof(cf) / sizeof(cf[0]); f++) {
		family(b, cf[f].name, "gauge", cf[f].help);
		for (unsigned i = 0; i < n; i++)
			for (int d = 0; !sn[i].udp && d < TOXIC_NSTREAMS; d++) {
				series(b, cf[f].name, sn[i].name, d, NULL, NULL);
				put(b, "%.9g\n",
				    jnum(json_object_get(sn[i].js, dir_name[d]), cf[f].key) * cf[f].scale);
			}
	}
}

/* The accuracy check of each proxy's directions: 1 pass, 0 fail, absent
 * while not judged (both kinds of proxy). */
static void check_series(struct mbuf *b, struct snap *sn, unsigned n)
{
	const char *cn = "pinwheel_proxy_check";
	family(b, cn, "gauge",
	       "The accuracy check of the direction's tc qdiscs: 1 pass, 0 fail (absent: not judged).");
	for (unsigned i = 0; i < n; i++)
		for (int d = 0; d < TOXIC_NSTREAMS; d++) {
			const char *c = json_string_value(
				json_object_get(json_object_get(sn[i].js, dir_name[d]), "check"));
			if (!c || (strcmp(c, "pass") && strcmp(c, "fail")))
				continue;
			series(b, cn, sn[i].name, d, NULL, NULL);
			put(b, "%d\n", !strcmp(c, "pass"));
		}
}

static void udp_series(struct mbuf *b, struct snap *sn, unsigned n)
{
	static const struct {
		const char *name, *type, *help, *key;
	} up[] = {
		{ "pinwheel_udp_clients", "gauge", "Client mappings of the UDP proxy now.", "clients" },
		{ "pinwheel_udp_refused_total", "counter",
		  "ICMP port-unreachable errors from the upstream.", "refused" },
		{ "pinwheel_udp_upstream_errors_total", "counter",
		  "Other errors on the upstream sockets.", "upstream_errors" },
		{ "pinwheel_udp_memory_bytes", "gauge", "Bytes the proxy's datagrams hold now.", "mem" },
	}, ud[] = {
		{ "pinwheel_udp_received_datagrams_total", "counter", "Datagrams received.", "rx" },
		{ "pinwheel_udp_received_bytes_total", "counter", "Bytes of datagrams received.",
		  "rx_bytes" },
		{ "pinwheel_udp_sent_datagrams_total", "counter", "Datagrams sent.", "out" },
		{ "pinwheel_udp_sent_bytes_total", "counter", "Bytes of datagrams sent.", "out_bytes" },
		{ "pinwheel_udp_clones_total", "counter", "Duplicates netem made.", "clones" },
		{ "pinwheel_udp_backlog_datagrams", "gauge", "Datagrams queued now.", "backlog" },
	};
	for (size_t f = 0; f < sizeof(up) / sizeof(up[0]); f++) {
		family(b, up[f].name, up[f].type, up[f].help);
		for (unsigned i = 0; i < n; i++)
			if (sn[i].udp) {
				series(b, up[f].name, sn[i].name, -1, NULL, NULL);
				put(b, "%.17g\n", jnum(sn[i].js, up[f].key));
			}
	}
	for (size_t f = 0; f < sizeof(ud) / sizeof(ud[0]); f++) {
		family(b, ud[f].name, ud[f].type, ud[f].help);
		for (unsigned i = 0; i < n; i++)
			for (int d = 0; sn[i].udp && d < TOXIC_NSTREAMS; d++) {
				series(b, ud[f].name, sn[i].name, d, NULL, NULL);
				put(b, "%.17g\n", jnum(json_object_get(sn[i].js, dir_name[d]), ud[f].key));
			}
	}
	const char *dn = "pinwheel_udp_dropped_datagrams_total";
	family(b, dn, "counter", "Datagrams dropped, by reason (the qdiscs' and the relay's).");
	for (unsigned i = 0; i < n; i++)
		for (int d = 0; sn[i].udp && d < TOXIC_NSTREAMS; d++) {
			json_t *o = json_object_get(json_object_get(sn[i].js, dir_name[d]), "dropped");
			const char *k;
			json_t *v;
			json_object_foreach(o, k, v) {
				series(b, dn, sn[i].name, d, "reason", k);
				put(b, "%.17g\n", json_is_number(v) ? json_number_value(v) : 0);
			}
		}
}

/* Every qdisc of every tc report (a TCP proxy's tc toxics, a UDP proxy's
 * devices): what tc -s shows. */
static void qdisc_series(struct mbuf *b, struct snap *sn, unsigned n)
{
	static const struct {
		const char *name, *type, *help, *key;
	} q[] = {
		{ "pinwheel_qdisc_sent_bytes_total", "counter", "Bytes the qdisc dequeued (tc -s: Sent).",
		  "bytes" },
		{ "pinwheel_qdisc_sent_packets_total", "counter", "Packets the qdisc dequeued.",
		  "packets" },
		{ "pinwheel_qdisc_drops_total", "counter", "Packets the qdisc dropped.", "drops" },
		{ "pinwheel_qdisc_overlimits_total", "counter", "The qdisc's overlimits.", "overlimits" },
		{ "pinwheel_qdisc_requeues_total", "counter", "The qdisc's requeues.", "requeues" },
		{ "pinwheel_qdisc_backlog_bytes", "gauge", "Bytes queued in the qdisc now.", "backlog" },
		{ "pinwheel_qdisc_qlen_packets", "gauge", "Packets queued in the qdisc now.", "qlen" },
	};
	for (size_t f = 0; f < sizeof(q) / sizeof(q[0]); f++) {
		family(b, q[f].name, q[f].type, q[f].help);
		for (unsigned i = 0; i < n; i++)
			for (int d = 0; d < TOXIC_NSTREAMS; d++) {
				json_t *tc = json_object_get(json_object_get(sn[i].js, dir_name[d]), "tc");
				size_t a, c;
				json_t *dev, *qd;
				json_array_foreach(tc, a, dev) {
					const char *tx = json_string_value(json_object_get(dev, "toxic"));
					const char *dv = json_string_value(json_object_get(dev, "device"));
					json_array_foreach(json_object_get(dev, "qdiscs"), c, qd) {
						const char *kind = json_string_value(json_object_get(qd, "kind"));
						const char *h = json_string_value(json_object_get(qd, "handle"));
						/* "root", or the parent tc -j names: an mq's
						 * children all have handle 0: */
						const char *pa = json_is_true(json_object_get(qd, "root"))
									 ? "root"
									 : json_string_value(json_object_get(qd, "parent"));
						series_open(b, q[f].name, sn[i].name, d, "toxic",
							    tx ? tx : "");
						put(b, ",device=\"");
						put_val(b, dv ? dv : "");
						put(b, "\",kind=\"");
						put_val(b, kind ? kind : "");
						put(b, "\",handle=\"");
						put_val(b, h ? h : "");
						put(b, "\",parent=\"");
						put_val(b, pa ? pa : "");
						put(b, "\"} %.17g\n", jnum(qd, q[f].key));
					}
				}
			}
	}
}

static void proxy_families(struct mbuf *b, struct proxy_registry *r)
{
	struct snap *sn = r->n ? calloc(r->n, sizeof(*sn)) : NULL;
	if (r->n && !sn) {
		b->oom = 1;
		return;
	}
	unsigned n = r->n;
	for (unsigned i = 0; i < n; i++) {
		sn[i].e = r->e[i];
		sn[i].name = r->e[i]->name;
		sn[i].udp = r->e[i]->udp;
		if (!r->e[i]->udp)
			entry_totals(r, r->e[i], &sn[i].s);
		sn[i].js = proxy__stats_json(r, r->e[i]);
	}
	toxiproxy_series(b, r, sn, n);
	const char *en = "pinwheel_proxy_enabled";
	family(b, en, "gauge", "Whether the proxy is enabled (1) or not (0).");
	for (unsigned i = 0; i < n; i++) {
		series(b, en, sn[i].e->name, -1, "protocol", sn[i].e->udp ? "udp" : "tcp");
		put(b, "%d\n", sn[i].e->enabled);
	}
	tcp_series(b, sn, n);
	check_series(b, sn, n);
	udp_series(b, sn, n);
	qdisc_series(b, sn, n);
	for (unsigned i = 0; i < n; i++)
		json_decref(sn[i].js);
	free(sn);
}

/* ------------------------------------------------------------ relay */

/* The command line's relay (--metrics): the UDP proxy's families under
 * proxy="relay", and what it listens on and sends to. */
static void relay_families(struct mbuf *b, const struct netem_metrics_cfg *c)
{
	char *text = c->relay_json(c->relay_arg);
	struct snap sn = { .name = "relay", .udp = 1, .js = text ? json_loads(text, 0, NULL) : NULL };
	free(text);
	if (!json_is_object(sn.js)) {
		json_decref(sn.js);
		b->oom = 1;
		return;
	}
	family(b, "pinwheel_relay_info", "gauge",
	       "The command line's UDP relay (proxy=\"relay\" in the other series): its addresses.");
	put(b, "pinwheel_relay_info{listen=\"");
	put_val(b, c->relay_listen ? c->relay_listen : "");
	put(b, "\",proxy=\"relay\",upstream=\"");
	put_val(b, c->relay_upstream ? c->relay_upstream : "");
	put(b, "\"} 1\n");
	check_series(b, &sn, 1);
	udp_series(b, &sn, 1);
	qdisc_series(b, &sn, 1);
	json_decref(sn.js);
}

/* ------------------------------------------------------------ runtime */

/* The process's, as Prometheus' process collector names them (Linux). */
static void process_families(struct mbuf *b)
{
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	unsigned long long ut = 0, st = 0, start = 0, vsize = 0;
	long long rss = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	char line[1024];
	if (f && fgets(line, sizeof(line), f)) {
		/* after the command's closing ')': state, then fields 4.. */
		const char *p = strrchr(line, ')');
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d "
				       "%*d %*d %*d %*d %llu %llu %lld",
				&ut, &st, &start, &vsize, &rss) != 5)
			ut = st = start = vsize = 0, rss = 0;
	}
	if (f)
		fclose(f);
	unsigned long long btime = 0;
	if ((f = fopen("/proc/stat", "r"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "btime %llu", &btime) == 1)
				break;
		fclose(f);
	}
	unsigned fds = 0;
	DIR *dir = opendir("/proc/self/fd");
	if (dir) {
		struct dirent *de;
		while ((de = readdir(dir)))
			fds += de->d_name[0] != '.';
		closedir(dir);
		fds -= fds > 0; /* the one opendir holds */
	}
	struct rlimit rl;
	double maxfds = getrlimit(RLIMIT_NOFILE, &rl) ? 0 : (double)rl.rlim_cur;
	if (tck <= 0)
		tck = 100;
	family(b, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
	put(b, "process_cpu_seconds_total %.6g\n", (double)(ut + st) / (double)tck);
	family(b, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
	put(b, "process_max_fds %.17g\n", maxfds);
	family(b, "process_open_fds", "gauge", "Number of open file descriptors.");
	put(b, "process_open_fds %u\n", fds);
	family(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	put(b, "process_resident_memory_bytes %lld\n", rss * (long long)page);
	family(b, "process_start_time_seconds", "gauge",
	       "Start time of the process since unix epoch in seconds.");
	put(b, "process_start_time_seconds %.17g\n", (double)btime + (double)start / (double)tck);
	family(b, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	put(b, "process_virtual_memory_bytes %llu\n", vsize);
}

static void runtime_families(struct mbuf *b, const struct netem_metrics_cfg *c)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
		double scale;
	} cs[] = {
		{ "pinwheel_runtime_wakeups_total", "counter", "The CPU's worker woke from sleep.",
		  offsetof(struct pw_cpu_stats, wakeups), 1 },
		{ "pinwheel_runtime_timers_armed_total", "counter", "Wheel-timer arms made on the CPU.",
		  offsetof(struct pw_cpu_stats, armed), 1 },
		{ "pinwheel_runtime_timers_expired_total", "counter",
		  "Timer callbacks the CPU's worker ran (wheel and hrtimer).",
		  offsetof(struct pw_cpu_stats, timers_expired), 1 },
		{ "pinwheel_runtime_work_done_total", "counter", "Work items run.",
		  offsetof(struct pw_cpu_stats, work_done), 1 },
		{ "pinwheel_runtime_lock_waits_total", "counter",
		  "Acquisitions of the CPU's base locks that waited.",
		  offsetof(struct pw_cpu_stats, lock_waits), 1 },
		{ "pinwheel_runtime_busy_seconds_total", "counter", "Time the CPU's worker was awake.",
		  offsetof(struct pw_cpu_stats, busy_ns), 1e-9 },
		{ "pinwheel_runtime_idle_seconds_total", "counter", "Time the CPU's worker slept.",
		  offsetof(struct pw_cpu_stats, idle_ns), 1e-9 },
	};
	for (size_t f = 0; f < sizeof(cs) / sizeof(cs[0]); f++) {
		family(b, cs[f].name, cs[f].type, cs[f].help);
		for (unsigned r = 0; r < c->nrt; r++)
			for (unsigned cpu = 0; cpu < pw_runtime_ncpus(c->rt[r]); cpu++) {
				struct pw_cpu_stats st;
				if (pw_stats_read(c->rt[r], cpu, &st))
					continue;
				uint64_t v;
				memcpy(&v, (const char *)&st + cs[f].off, sizeof(v));
				put(b, "%s{cpu=\"%u\",runtime=\"%s\"} %.17g\n", cs[f].name, cpu,
				    c->rt_name[r], (double)v * cs[f].scale);
			}
	}
	const char *kn = "pinwheel_runtime_kicks_total";
	family(b, kn, "counter",
	       "Kicks (wake-ups other CPUs asked for) the CPU received, by reason (other: none named).");
	for (unsigned r = 0; r < c->nrt; r++)
		for (unsigned cpu = 0; cpu < pw_runtime_ncpus(c->rt[r]); cpu++) {
			struct pw_cpu_stats st;
			struct pw_kick_stats k;
			if (pw_stats_read(c->rt[r], cpu, &st) || pw_kick_stats_read(c->rt[r], cpu, &k))
				continue;
			const struct {
				const char *why;
				uint64_t n;
			} w[] = { { "remote_enqueue", k.remote_enqueue }, { "idle_earlier", k.idle_earlier },
				  { "hrtimer", k.hrtimer }, { "work", k.work }, { "tmigr", k.tmigr } };
			uint64_t named = 0;
			for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
				named += w[i].n;
				put(b, "%s{cpu=\"%u\",reason=\"%s\",runtime=\"%s\"} %llu\n", kn, cpu,
				    w[i].why, c->rt_name[r], (unsigned long long)w[i].n);
			}
			put(b, "%s{cpu=\"%u\",reason=\"other\",runtime=\"%s\"} %llu\n", kn, cpu,
			    c->rt_name[r],
			    (unsigned long long)(st.kicks_received > named ? st.kicks_received - named : 0));
		}
	const char *pn = "pinwheel_runtime_timers_pending";
	family(b, pn, "gauge",
	       "Timers pending on the CPU now: wheel timers (type timer) and hrtimers (type hrtimer).");
	for (unsigned r = 0; r < c->nrt; r++)
		for (unsigned cpu = 0; cpu < pw_runtime_ncpus(c->rt[r]); cpu++) {
			struct pw_pending p;
			if (pw_pending_read(c->rt[r], cpu, &p))
				continue;
			put(b, "%s{cpu=\"%u\",runtime=\"%s\",type=\"hrtimer\"} %llu\n", pn, cpu,
			    c->rt_name[r], (unsigned long long)p.hrtimers);
			put(b, "%s{cpu=\"%u\",runtime=\"%s\",type=\"timer\"} %llu\n", pn, cpu,
			    c->rt_name[r], (unsigned long long)p.timers);
		}
	/* the library's buckets (1 us doubling) as Prometheus' cumulative ones */
	const char *ln = "pinwheel_runtime_wakeup_lateness_seconds";
	family(b, ln, "histogram",
	       "How late the CPU's worker ran again after sleeping until its next event (timed wake-ups).");
	for (unsigned r = 0; r < c->nrt; r++)
		for (unsigned cpu = 0; cpu < pw_runtime_ncpus(c->rt[r]); cpu++) {
			struct pw_wake_lateness w;
			if (pw_wake_lateness_read(c->rt[r], cpu, &w))
				continue;
			uint64_t below = 0;
			for (unsigned i = 0; i + 1 < PW_LATENESS_BUCKETS; i++) {
				below += w.bucket[i];
				put(b, "%s_bucket{cpu=\"%u\",le=\"%.9g\",runtime=\"%s\"} %llu\n", ln, cpu,
				    (double)pw_wake_lateness_bound_ns(i) / 1e9, c->rt_name[r],
				    (unsigned long long)below);
			}
			put(b, "%s_bucket{cpu=\"%u\",le=\"+Inf\",runtime=\"%s\"} %llu\n", ln, cpu,
			    c->rt_name[r], (unsigned long long)w.count);
			put(b, "%s_sum{cpu=\"%u\",runtime=\"%s\"} %.9g\n", ln, cpu, c->rt_name[r],
			    (double)w.sum_ns / 1e9);
			put(b, "%s_count{cpu=\"%u\",runtime=\"%s\"} %llu\n", ln, cpu, c->rt_name[r],
			    (unsigned long long)w.count);
		}
}

/* ------------------------------------------------------------ the text */

char *netem_metrics_text(struct proxy_registry *r, const struct netem_metrics_cfg *c)
{
	struct mbuf b = { .cap = 16384 };
	if (!(b.p = malloc(b.cap)))
		return NULL;
	b.p[0] = '\0';
	if (c->proxy && r) {
		pthread_mutex_lock(&r->req_lock);
		pthread_mutex_lock(&r->lock);
		proxy_families(&b, r);
		pthread_mutex_unlock(&r->lock);
		pthread_mutex_unlock(&r->req_lock);
	}
	if (c->relay_json)
		relay_families(&b, c);
	if (c->runtime) {
		process_families(&b);
		runtime_families(&b, c);
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}
