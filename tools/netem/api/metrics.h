/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics in Prometheus' text format (tools/netem/api/metrics.c):
 * toxiproxy's two per-proxy series with -proxy-metrics, pinwheel's own
 * beside them (pinwheel_proxy_*, pinwheel_udp_*, pinwheel_qdisc_*), and
 * with -runtime-metrics the process's (process_*, as Prometheus' process
 * collector names them) and pinwheel's runtimes' (pinwheel_runtime_*);
 * for the command line's UDP relay (--metrics ADDR:PORT), its own
 * (pinwheel_relay_info, and pinwheel_udp_*, pinwheel_qdisc_* and
 * pinwheel_proxy_check under proxy="relay").
 * docs/metrics.md lists every series.
 * Threads: the API's polling thread.  Locks: the registry's two mutexes,
 * taken as a request takes them.
 */
#ifndef PW_NETEM_METRICS_H
#define PW_NETEM_METRICS_H

struct proxy_registry;
struct pw_runtime;

#define NETEM_METRICS_MAX_RT 4

/* What /metrics serves; the server fills it at start, read-only after. */
struct netem_metrics_cfg {
	int proxy;                    /* -proxy-metrics */
	int runtime;                  /* -runtime-metrics */
	struct pw_runtime *rt[NETEM_METRICS_MAX_RT]; /* the runtimes to report */
	const char *rt_name[NETEM_METRICS_MAX_RT];   /* their "runtime" label */
	unsigned nrt;
	/* the command line's UDP relay (--metrics ADDR:PORT), or NULL: its
	 * series as a UDP proxy's under proxy="relay", from the object
	 * relay_json(relay_arg) gives (udp_relay_stats_json()'s text,
	 * malloc'd; NULL: out of memory), called on the scraping thread;
	 * the addresses it listens on and sends to, as labels */
	char *(*relay_json)(void *relay_arg);
	void *relay_arg;
	const char *relay_listen, *relay_upstream;
};

/**
 * netem_metrics_text() - the text of GET /metrics for @r (NULL: no
 * proxy series) as @c says: toxiproxy's series counted as toxiproxy
 * counts them (bytes read from a direction's source, and written to its
 * sink, per proxy, listener and upstream, kept after the proxy is
 * deleted), pinwheel's per proxy, per UDP relay and per qdisc, and the
 * runtime's.
 * Context: any thread; takes @r's req_lock and lock (the plane's stats
 * calls run under them, as GET /proxies/NAME/stats does).
 * Return: a malloc'd NUL-terminated text; NULL when out of memory.
 */
char *netem_metrics_text(struct proxy_registry *r, const struct netem_metrics_cfg *c);

/* The content type of that text (Prometheus' text format 0.0.4). */
#define NETEM_METRICS_CTYPE "text/plain; version=0.0.4; charset=utf-8"

#endif /* PW_NETEM_METRICS_H */
