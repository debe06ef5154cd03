/* SPDX-License-Identifier: MIT */
/*
 * UDP proxies through toxiproxy's API: the registry's plane for a proxy
 * created with "protocol":"udp" (tools/netem/proxy.c keeps the model, this
 * file runs it).  Each open proxy is one UDP relay (tools/netem/udp.h),
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
 *   tc {"qdisc": WORDS}      -> "qdisc replace dev D root WORDS"; alone on its
 *                               stream (with any other toxic there: 400)
 * A change among latency/bandwidth toxics is a "qdisc change" of the netem
 * root: datagrams in flight stay.  Adding or removing a tc toxic replaces
 * the root: what the old root held is dropped by the layer and counted in
 * the relay's drop reasons (nothing lost silently).
 * Refused (400, named, by validate(), open proxy or not): slow_close,
 * timeout, reset_peer, slicer, limit_data (they act on a byte stream or a
 * connection), toxicity other than 1, a tc toxic's batch or schedule.
 *
 * Upstream: a UDP proxy needs an address at open (a name that does not
 * resolve yet is refused by open(): the registry answers 500 with the
 * message); a changed address from the resolver (set_upstream())
 * restarts the relay on the same listen address: client mappings are
 * lost, what was queued is dropped as dev_destroy, and the old relay's
 * counters are added to the new one's.
 *
 * Statistics: the relay's snapshot as JSON (stats_json), per direction the
 * datagrams and bytes in and out, clones, drops by reason (stats.c's names),
 * backlog; clients and memory.  Counters restart when the proxy is
 * disabled and enabled again (a gap: the TCP side's sums over opens are
 * not kept for UDP yet).
 *
 * Threads: the registry's request thread or the resolver's, with the
 * registry's entry mutex held (which serialises every call on a relay, as
 * udp.h asks).  Locks: none of its own.  Cost: one relay (its runtime and
 * one worker thread) per open UDP proxy.
 */
#define _GNU_SOURCE
#include "udp_proxy.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udp.h"

struct udp_proxy {
	struct udp_relay *r;
	struct relay_config cfg;
	char spec[RELAY_NDIR][512];   /* what follows "root" on each device now */
	struct udp_dir_stats base[RELAY_NDIR]; /* what the relays before this
						  one counted (restarts) */
};

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

static const char *const dev_name[RELAY_NDIR] = { "up", "down" };

static int start(struct udp_proxy *p, char *err, size_t errlen)
{
	p->cfg.spec[RELAY_UP] = p->spec[RELAY_UP];
	p->cfg.spec[RELAY_DOWN] = p->spec[RELAY_DOWN];
	return udp_relay_start(&p->cfg, &p->r, err, errlen);
}

static int up_open(void *ctx, const char *name, const struct sockaddr *listen,
		   socklen_t listen_len, const struct sockaddr *upstream, socklen_t upstream_len,
		   void **handle, struct sockaddr_storage *bound, socklen_t *bound_len, char *err,
		   size_t errlen)
{
	(void)ctx;
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
	c->idle_s = RELAY_DEF_IDLE_S;
	c->drain_ms = 0;
	c->max_bytes = RELAY_DEF_BYTES;
	c->workers = 1;
	memcpy(&c->listen, listen, listen_len);
	c->listen_len = listen_len;
	memcpy(&c->to, upstream, upstream_len);
	c->to_len = upstream_len;
	snprintf(p->spec[RELAY_UP], sizeof(p->spec[0]), "netem");
	snprintf(p->spec[RELAY_DOWN], sizeof(p->spec[0]), "netem");
	int rc = start(p, err, errlen);
	if (rc) {
		free(p);
		return rc;
	}
	const struct relay_config *rc2 = udp_relay_config(p->r);
	memcpy(bound, &rc2->listen, rc2->listen_len);
	*bound_len = rc2->listen_len;
	memcpy(&c->listen, &rc2->listen, rc2->listen_len); /* a restart keeps the port */
	*handle = p;
	return 0;
}

static void up_close(void *ctx, void *handle, struct tcp_proxy_stats *final)
{
	(void)ctx;
	struct udp_proxy *p = handle;
	memset(final, 0, sizeof(*final));
	if (p->r)
		udp_relay_stop(p->r, 0, NULL);
	free(p);
}

static int up_set_upstream(void *ctx, void *handle, const struct sockaddr *upstream,
			   socklen_t upstream_len)
{
	(void)ctx;
	struct udp_proxy *p = handle;
	char err[256];
	if (!upstream_len)
		return -EINVAL;
	if (p->r) {
		struct udp_stats fin;
		udp_relay_stop(p->r, 0, &fin);
		for (int d = 0; d < RELAY_NDIR; d++)
			dir_add(&p->base[d], &fin.d[d]);
	}
	p->r = NULL;
	memcpy(&p->cfg.to, upstream, upstream_len);
	p->cfg.to_len = upstream_len;
	int rc = start(p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "pinwheel-netem: udp proxy restart: %s\n", err);
	return rc;
}

/* The spec of @stream from toxics @t[@n] into @out.  Return: 0; -EINVAL
 * with the message in @err. */
static int compose(const struct toxic *t, unsigned n, int stream, char *out, size_t len,
		   char *err, size_t errlen)
{
	int64_t lat = 0, jit = 0, rate = -1;
	const struct toxic *tc = NULL;
	int seeded = 0, others = 0;
	uint64_t seed = 0;
	for (unsigned i = 0; i < n; i++) {
		if ((int)t[i].stream != stream)
			continue;
		if (t[i].type == TOXIC_TC) {
			if (tc) {
				snprintf(err, errlen, "toxic %s: one tc toxic per stream on a udp proxy",
					 t[i].name);
				return -EINVAL;
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
		return -EINVAL;
	}
	if (tc) {
		snprintf(out, len, "%s", tc->a.tc.qdisc);
		return 0;
	}
	int k = snprintf(out, len, "netem");
	if (lat || jit)
		k += snprintf(out + k, len - (size_t)k, " delay %lldms %lldms", (long long)lat,
			      (long long)jit);
	if (rate > 0)
		k += snprintf(out + k, len - (size_t)k, " rate %llubit",
			      (unsigned long long)rate * 8000ull);
	if (seeded)
		snprintf(out + k, len - (size_t)k, " seed %llu", (unsigned long long)seed);
	return 0;
}

static int is_netem(const char *spec)
{
	return !strncmp(spec, "netem", 5) && (!spec[5] || spec[5] == ' ');
}

static int up_set_toxics(void *ctx, void *handle, const struct toxic *t, unsigned n, char *err,
			 size_t errlen)
{
	(void)ctx;
	struct udp_proxy *p = handle;
	char next[RELAY_NDIR][512];
	if (!p->r) {
		snprintf(err, errlen, "the udp relay is not running (its restart failed)");
		return -EIO;
	}
	for (int d = 0; d < RELAY_NDIR; d++) {
		int rc = compose(t, n, d, next[d], sizeof(next[d]), err, errlen);
		if (rc)
			return rc;
	}
	for (int d = 0; d < RELAY_NDIR; d++) {
		if (!strcmp(next[d], p->spec[d]))
			continue;
		int change = is_netem(next[d]) && is_netem(p->spec[d]);
		char *cmd = NULL;
		if (asprintf(&cmd, "qdisc %s dev %s root %s", change ? "change" : "replace",
			     dev_name[d], next[d]) < 0)
			return -ENOMEM;
		int rc = udp_relay_tc(p->r, cmd, err, errlen);
		free(cmd);
		if (rc)
			return rc == -ENOMEM ? rc : -EINVAL;
		memcpy(p->spec[d], next[d], sizeof(p->spec[d]));
	}
	return 0;
}

static int up_validate(void *ctx, const struct toxic *t, char *err, size_t errlen)
{
	(void)ctx;
	switch (t->type) {
	case TOXIC_LATENCY:
	case TOXIC_BANDWIDTH:
		break;
	case TOXIC_TC:
		if (!t->a.tc.qdisc || t->a.tc.schedule) {
			snprintf(err, errlen,
				 "toxic %s: a tc toxic on a udp proxy takes a qdisc only (batch "
				 "and schedule are not built for udp proxies)",
				 t->name);
			return -EINVAL;
		}
		if (strlen(t->a.tc.qdisc) >= 480) {
			snprintf(err, errlen, "toxic %s: qdisc too long for a udp proxy", t->name);
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

static json_t *dir_json(const struct udp_dir_stats *d)
{
	json_t *j = json_object(), *dr = json_object();
	json_object_set_new(j, "rx", json_integer((json_int_t)d->rx));
	json_object_set_new(j, "rx_bytes", json_integer((json_int_t)d->rx_bytes));
	json_object_set_new(j, "clones", json_integer((json_int_t)d->clones));
	json_object_set_new(j, "out", json_integer((json_int_t)d->out));
	json_object_set_new(j, "out_bytes", json_integer((json_int_t)d->out_bytes));
	for (unsigned k = 0; k < RD_NREASONS; k++)
		if (d->dropped[k])
			json_object_set_new(dr, udp_reason_name(k),
					    json_integer((json_int_t)d->dropped[k]));
	json_object_set_new(j, "dropped_total", json_integer((json_int_t)udp_dropped_total(d)));
	json_object_set_new(j, "dropped", dr);
	json_object_set_new(j, "backlog", json_integer((json_int_t)d->backlog));
	return j;
}

static char *up_stats_json(void *ctx, void *handle)
{
	(void)ctx;
	struct udp_proxy *p = handle;
	struct udp_stats s;
	memset(&s, 0, sizeof(s));
	if (p && p->r)
		udp_relay_snapshot(p->r, &s);
	for (int d = 0; p && d < RELAY_NDIR; d++)
		dir_add(&s.d[d], &p->base[d]);
	json_t *j = json_object();
	json_object_set_new(j, "clients", json_integer((json_int_t)s.clients));
	json_object_set_new(j, "mem", json_integer((json_int_t)s.mem));
	json_object_set_new(j, "upstream", dir_json(&s.d[RELAY_UP]));
	json_object_set_new(j, "downstream", dir_json(&s.d[RELAY_DOWN]));
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return text;
}

const struct proxy_plane_ops udp_proxy_plane_ops = {
	.open = up_open,
	.close = up_close,
	.set_upstream = up_set_upstream,
	.set_toxics = up_set_toxics,
	.validate = up_validate,
	.stats_json = up_stats_json,
};
