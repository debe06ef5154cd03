/* SPDX-License-Identifier: MIT */
/*
 * The --api mode's process: pinwheel-netem as a toxiproxy server.
 *
 * Start: SIGINT and SIGTERM are blocked before any thread exists (the data
 * path's workers and libmicrohttpd's polling thread inherit the mask, so
 * the main thread alone takes them, in sigtimedwait); SIGPIPE is ignored
 * (a peer that went away is an error return on a socket, not a death).
 * Then the TCP plane (tools/netem/tcp/tcp.h), the registry over it
 * (tools/netem/api/proxy.h, through the adapter below; "protocol":"udp"
 * proxies go to the UDP plane, tools/netem/api/udp_proxy.h, a relay each),
 * the proxies of the --config file (toxiproxy's -config: what POST /populate takes; a bad
 * file stops the start with the file's name and the reason), the HTTP
 * front (tools/netem/api/api.h), and the ready line on stderr with the port
 * the kernel chose when the address said 0.
 * The open-file limit is raised to its hard limit first (each proxied
 * connection costs two descriptors).  A resolver thread looks up the
 * upstream names that did not resolve at create (toxiproxy takes them:
 * a docker-compose service not up yet; until then the proxy is open with
 * no upstream address, an explicit state of the plane in which each
 * accepted connection is closed at once, with no connect tried, and
 * counted in upstream_failed) every PROXY_RESOLVE_RETRY_S, and
 * every resolved name again each PROXY_RERESOLVE_S so that a DNS change
 * is followed (proxy_registry_resolve()).  Toxics are checked for the
 * registry without opening anything (tcp_validate(), on a scratch
 * runtime), so a disabled proxy refuses what it could not run.
 * Stop: the API first (no request can then reach the registry), the
 * resolver thread, the registry (closing every proxy: its connections
 * are closed and what they held counted), the plane last.
 *
 * The command line's relay serves GET /metrics the same way when given
 * --metrics ADDR:PORT (netem_relay_metrics_start()): the API's HTTP front
 * with no registry (/metrics only), the relay's statistics read under the
 * lock main holds around its own calls on the relay.
 *
 * Built without the libraries, the build compiles tools/netem/api/server_none.c
 * in this file's place, which says which packages to install.
 *
 * Threads: the main thread; the resolver thread (resolver_main).  Locks:
 * the resolver's mutex (its stop flag and sleep); the registry's, taken
 * inside proxy_registry_resolve().  tcp_validate() runs on the API's
 * polling thread under the registry's mutex, which serialises the use of
 * the scratch runtime.
 */
#define _GNU_SOURCE
#include "server.h"

#include <errno.h>
#include <pthread.h>
#include <pinwheel/net.h>
#include <pinwheel/runtime.h>
#include <pinwheel/worker.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "metrics.h"
#include "proxy.h"
#include "../tcp/tcp.h"
#include "../udp/udp.h"
#include "udp_proxy.h"

/* ------------------------------------- the registry's plane: tcp.h */

/* The plane's context: the TCP plane, and the scratch runtime toxics are
 * checked on (a simulated clock, one CPU, no device, no thread). */
struct srv {
	struct tcp_plane *pl;
	struct pw_runtime *scratch;
};

static int tcp_open(void *ctx, const char *name, const struct sockaddr *listen,
		    socklen_t listen_len, const struct sockaddr *upstream, socklen_t upstream_len,
		    void **handle, struct sockaddr_storage *bound, socklen_t *bound_len, char *err,
		    size_t errlen)
{
	struct srv *sv = ctx;
	struct tcp_proxy *p = NULL;
	int rc = tcp_proxy_open(sv->pl, name, listen, listen_len, upstream, upstream_len, &p, bound,
				bound_len, err, errlen);
	*handle = p;
	return rc;
}

static void tcp_close(void *ctx, void *handle, struct tcp_proxy_stats *final)
{
	(void)ctx;
	tcp_proxy_close_stats(handle, final);
}

static int tcp_set_upstream(void *ctx, void *handle, const struct sockaddr *upstream,
			    socklen_t upstream_len)
{
	(void)ctx;
	return tcp_proxy_set_upstream(handle, upstream, upstream_len);
}

static int tcp_set_toxics(void *ctx, void *handle, const struct toxic *t, unsigned n, char *err,
			  size_t errlen)
{
	(void)ctx;
	return tcp_proxy_set_toxics(handle, t, n, err, errlen);
}

static void tcp_stats(void *ctx, void *handle, struct tcp_proxy_stats *s)
{
	(void)ctx;
	tcp_proxy_stats(handle, s);
}

/*
 * What the plane would refuse in toxic @t, found without opening anything:
 * a tc toxic's words and schedule run as the plane runs them (confined to
 * a device of their own, no file read) on a runtime of their own, and the
 * configuration they make read back for what a byte stream cannot carry
 * (tc_toxic_check(): netem's loss, duplication, corruption, reordering,
 * whatever the spelling).  Other toxics: the registry checked the ranges.
 */
static int tcp_validate(void *ctx, const struct toxic *t, char *err, size_t errlen)
{
	struct srv *sv = ctx;
	return tcp_tc_schedule_check(sv->scratch, t, err, errlen);
}

static char *tcp_tc_report(void *ctx, void *handle, enum toxic_stream stream)
{
	(void)ctx;
	return tcp_proxy_tc_report(handle, stream);
}

static const struct proxy_plane_ops tcp_plane_ops = {
	.open = tcp_open,
	.close = tcp_close,
	.set_upstream = tcp_set_upstream,
	.set_toxics = tcp_set_toxics,
	.stats = tcp_stats,
	.validate = tcp_validate,
	.tc_report = tcp_tc_report,
};

/* ------------------------------------------------------------ resolver */

/* The resolver thread: every PROXY_RESOLVE_RETRY_S, the upstream names
 * that did not resolve yet and those due again (proxy_registry_resolve()),
 * off the API's polling thread and the plane's workers. */
struct resolver {
	struct proxy_registry *reg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	pthread_t thread;
};

static void *resolver_main(void *arg)
{
	struct resolver *rs = arg;
	pthread_mutex_lock(&rs->lock);
	while (!rs->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += PROXY_RESOLVE_RETRY_S;
		pthread_cond_timedwait(&rs->cond, &rs->lock, &ts);
		if (rs->stop)
			break;
		pthread_mutex_unlock(&rs->lock);
		proxy_registry_resolve(rs->reg, NULL);
		pthread_mutex_lock(&rs->lock);
	}
	pthread_mutex_unlock(&rs->lock);
	return NULL;
}

/* ------------------------------------------------------------ main */

int netem_server_main(const struct relay_config *cfg)
{
	char err[512] = "", *text = NULL;
	int rc;
	if (cfg->config_file && !(text = relay_read_file(cfg->config_file, err, sizeof(err)))) {
		fprintf(stderr, "pinwheel-netem: --config: %s\n", err);
		return 2;
	}
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* --max-bytes: one budget for the bytes the TCP proxies hold and the
	 * tc state of every runtime (the TCP plane's, each UDP relay's, each
	 * check's: src/net/netmem.c, tc_toxic_set_budget()) */
	struct pw_mem_budget budget = { .limit = cfg->max_bytes ? cfg->max_bytes : UINT64_MAX };
	struct tcp_plane_config pc = {
		.workers = cfg->workers,
		.seed = cfg->seed, /* -seed: the toxics' randomness (toxiproxy's) */
		.has_seed = cfg->has_seed,
		.dir_bytes = (size_t)cfg->tcp_buffer,
		.max_bytes = cfg->max_bytes,
		.budget = &budget,
	};
	struct tcp_plane *pl = NULL;
	struct srv sv = { 0 };
	struct proxy_registry *reg = NULL;
	struct netem_api *api = NULL;
	struct resolver rs = { .reg = NULL };
	int has_resolver = 0;
	int status = 1;
	pthread_mutex_init(&rs.lock, NULL);
	pthread_cond_init(&rs.cond, NULL);
	if ((rc = tcp_raise_nofile()))
		fprintf(stderr, "pinwheel-netem: raising the open-file limit: %s\n", strerror(-rc));
	/* the scheduler: one runtime and one worker whose timers run every
	 * schedule a client sends (TCP and UDP proxies), not a thread each */
	struct pw_runtime *sched_rt = NULL;
	struct pw_config schcfg;
	pw_config_init(&schcfg);
	schcfg.ncpus = 1;
	if ((rc = pw_runtime_create(&schcfg, &sched_rt)) || (rc = pw_runtime_start(sched_rt))) {
		fprintf(stderr, "pinwheel-netem: the schedules' runtime: %s\n", strerror(-rc));
		goto out;
	}
	pc.sched_rt = sched_rt;
	if ((rc = tcp_plane_create(&pc, &pl, err, sizeof(err)))) {
		fprintf(stderr, "pinwheel-netem: the TCP data path: %s\n", err[0] ? err : strerror(-rc));
		goto out;
	}
	sv.pl = pl;
	struct pw_config scfg;
	pw_config_init(&scfg);
	scfg.ncpus = 1;
	scfg.clock = PW_CLOCK_SIM;
	if ((rc = pw_runtime_create(&scfg, &sv.scratch))) {
		fprintf(stderr, "pinwheel-netem: the runtime toxics are checked on: %s\n",
			strerror(-rc));
		goto out;
	}
	if (proxy_registry_create(&tcp_plane_ops, &sv, 0, &reg)) {
		fprintf(stderr, "pinwheel-netem: out of memory\n");
		goto out;
	}
	proxy_registry_set_udp(reg, &udp_proxy_plane_ops, sched_rt);
	if (text && proxy_registry_populate(reg, text, strlen(text), err, sizeof(err))) {
		fprintf(stderr, "pinwheel-netem: --config %s: %s\n", cfg->config_file, err);
		status = 2;
		goto out;
	}
	rs.reg = reg;
	if ((rc = pthread_create(&rs.thread, NULL, resolver_main, &rs))) {
		fprintf(stderr, "pinwheel-netem: the resolver thread: %s\n", strerror(rc));
		goto out;
	}
	has_resolver = 1;
	struct sockaddr_storage bound;
	socklen_t blen;
	/* GET /metrics: -proxy-metrics, -runtime-metrics (metrics.h) */
	struct netem_metrics_cfg mc = {
		.proxy = cfg->proxy_metrics,
		.runtime = cfg->runtime_metrics,
		.rt = { tcp_plane_runtime(pl), sched_rt },
		.rt_name = { "tcp", "schedules" },
		.nrt = 2,
	};
	if ((rc = netem_api_start(reg, (const struct sockaddr *)&cfg->api_addr, cfg->api_len,
				  cfg->allow_host, cfg->nallow_host, &mc, &api, &bound, &blen, err,
				  sizeof(err)))) {
		fprintf(stderr, "pinwheel-netem: %s\n", err);
		goto out;
	}
	char a[80];
	relay_format_addr(&bound, a, sizeof(a));
	unsigned open = 0, n = proxy_registry_count(reg, &open);
	if (cfg->config_file)
		fprintf(stderr, "pinwheel-netem: %u proxies from %s (%u listening)\n", n,
			cfg->config_file, open);
	fprintf(stderr, "pinwheel-netem: api listening on %s\n", a);
	fflush(stderr);
	for (;;) {
		struct timespec ts = { 1, 0 };
		int sig = sigtimedwait(&stop, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	status = 0;
out:
	netem_api_stop(api);
	if (has_resolver) {
		pthread_mutex_lock(&rs.lock);
		rs.stop = 1;
		pthread_cond_signal(&rs.cond);
		pthread_mutex_unlock(&rs.lock);
		pthread_join(rs.thread, NULL); /* a lookup in progress ends first */
	}
	pthread_cond_destroy(&rs.cond);
	pthread_mutex_destroy(&rs.lock);
	proxy_registry_destroy(reg);
	if (pl)
		tcp_plane_destroy(pl);
	if (sched_rt) { /* after every schedule it runs was freed */
		pw_runtime_stop(sched_rt);
		pw_runtime_destroy(sched_rt);
	}
	if (sv.scratch)
		pw_runtime_destroy(sv.scratch);
	free(text);
	return status;
}

/* ------------------------------------- the command line relay's --metrics */

struct netem_relay_metrics {
	struct udp_relay *r;
	pthread_mutex_t *lock;     /* the relay's controlling-thread lock (main's too) */
	struct netem_metrics_cfg mc;
	struct netem_api *api;
	char listen[80], upstream[80];
};

/* The relay's statistics for a scrape (metrics.h's relay_json).  Context:
 * the metrics server's polling thread; takes m->lock around the relay's
 * calls. */
static char *relay_json(void *arg)
{
	struct netem_relay_metrics *m = arg;
	struct udp_stats s;
	pthread_mutex_lock(m->lock);
	udp_relay_snapshot(m->r, &s);
	char *text = udp_relay_stats_json(m->r, &s, NULL, "started");
	pthread_mutex_unlock(m->lock);
	return text;
}

int netem_relay_metrics_start(struct udp_relay *r, const struct relay_config *cfg,
			      pthread_mutex_t *lock, struct netem_relay_metrics **out, char *err,
			      size_t errlen)
{
	struct netem_relay_metrics *m = calloc(1, sizeof(*m));
	*out = NULL;
	if (!m) {
		snprintf(err, errlen, "--metrics: out of memory");
		return -ENOMEM;
	}
	const struct relay_config *rc = udp_relay_config(r);
	relay_format_addr(&rc->listen, m->listen, sizeof(m->listen));
	relay_format_addr(&rc->to, m->upstream, sizeof(m->upstream));
	m->r = r;
	m->lock = lock;
	m->mc = (struct netem_metrics_cfg){
		.runtime = cfg->runtime_metrics,
		.rt = { udp_relay_runtime(r) },
		.rt_name = { "relay" },
		.nrt = 1,
		.relay_json = relay_json,
		.relay_arg = m,
		.relay_listen = m->listen,
		.relay_upstream = m->upstream,
	};
	struct sockaddr_storage bound;
	socklen_t blen;
	int rc2 = netem_api_start(NULL, (const struct sockaddr *)&cfg->metrics_addr,
				  cfg->metrics_len, cfg->allow_host, cfg->nallow_host, &m->mc, &m->api,
				  &bound, &blen, err, errlen);
	if (rc2) {
		free(m);
		return rc2;
	}
	char a[80];
	relay_format_addr(&bound, a, sizeof(a));
	fprintf(stderr, "pinwheel-netem: metrics listening on %s\n", a);
	*out = m;
	return 0;
}

void netem_relay_metrics_stop(struct netem_relay_metrics *m)
{
	if (!m)
		return;
	netem_api_stop(m->api); /* joins the polling thread: no scrape after this */
	free(m);
}
