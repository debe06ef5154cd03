/* SPDX-License-Identifier: MIT */
/*
 * A proxy's JSON, both ways, for the API's registry (tools/netem/api/proxy.c
 * owns the registry, the requests and their routing; a toxic's own JSON is
 * tools/netem/api/toxic.c's).
 *
 * Out: a proxy as toxiproxy shows it ("name", "listen", "upstream",
 * "enabled", "toxics"; "protocol" only for a UDP proxy, so a TCP proxy's
 * stays toxiproxy's byte for byte); its toxics, the upstream ones and then
 * the downstream ones, each stream in the order added, with "stream" as
 * the client wrote it; its statistics: the counters since it was created
 * (the plane proxies closed before plus the one open now), per direction
 * the delays' mean, maximum and quantiles, the latency its toxics ask for,
 * its tc toxics' reports and their check, or, for a plane with a
 * stats_json op (the UDP plane), that plane's own object.
 *
 * In: a request's body as JSON with toxiproxy's "bad request body: ..."
 * messages, its string and boolean fields, a name a path can address, and
 * a proxy given in a body (struct spec: create, update, /populate)
 * checked and its addresses resolved (tools/netem/api/resolve.c).
 *
 * Answers: a request's body made of JSON (proxy__answer_json()) and
 * toxiproxy's error body (proxy__answer_error(), its message made valid
 * UTF-8 first, as jansson requires).
 *
 * Threads: the thread of a request (proxy_api_request(),
 * proxy_registry_populate()); proxy.c is the only caller.  Locks: takes
 * none.  proxy__tox_json(), proxy__toxics_json() and proxy__proxy_json()
 * read an entry: r->lock held.  proxy__stats_json() calls the plane too
 * (stats or stats_json, tc_report), whose calls the registry serialises
 * with r->lock: held.  proxy__parse_spec(): req_lock and r->lock held
 * (proxy__resolve() drops r->lock around a name lookup).
 * proxy__parse_body(), proxy__get_string() and proxy__check_name() touch
 * no shared state.
 *
 * Costs: a proxy's JSON is O(its toxics); its statistics add one plane
 * call for the counters and one tc_report per stream, each report's text
 * parsed back into JSON; values are built with jansson.
 */
#define _GNU_SOURCE
#include "proxy_priv.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ JSON out */

/* @e's toxic @i with its "stream" as the client wrote it (toxiproxy
 * keeps the text, reading it without regard to case) */
json_t *proxy__tox_json(const struct entry *e, unsigned i)
{
	json_t *j = toxic_to_json(&e->tox[i]);
	if (j && e->stext[i][0])
		json_object_set_new(j, "stream", json_string(e->stext[i]));
	return j;
}

/* toxiproxy lists a proxy's upstream toxics, then its downstream ones,
 * each stream in the order added */
json_t *proxy__toxics_json(const struct entry *e)
{
	json_t *l = json_array();
	for (int s = 0; s < TOXIC_NSTREAMS; s++)
		for (unsigned i = 0; i < e->ntox; i++)
			if ((int)e->tox[i].stream == s)
				json_array_append_new(l, proxy__tox_json(e, i));
	return l;
}

json_t *proxy__proxy_json(const struct entry *e)
{
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(e->name));
	json_object_set_new(j, "listen", json_string(e->listen));
	json_object_set_new(j, "upstream", json_string(e->upstream));
	json_object_set_new(j, "enabled", json_boolean(e->enabled));
	if (e->udp) /* a TCP proxy's JSON stays toxiproxy's, byte for byte */
		json_object_set_new(j, "protocol", json_string("udp"));
	json_object_set_new(j, "toxics", proxy__toxics_json(e));
	return j;
}

/* The reports of @e's tc toxics on @stream (a JSON array: each device's
 * qdiscs with their accuracy, its check and its schedule's step), and the
 * stream's check over them in *@check: "fail" when one failed, else
 * "pass" when one passed, else "not judged". */
static json_t *tc_json(struct proxy_registry *r, const struct entry *e, int stream,
		       const char **check)
{
	*check = "not judged";
	json_t *l = NULL;
	void *ctx;
	const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
	char *text = e->handle && ops->tc_report ?
			     ops->tc_report(ctx, e->handle, (enum toxic_stream)stream) :
			     NULL;
	if (text)
		l = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_array(l)) {
		json_decref(l);
		return json_array();
	}
	size_t i;
	json_t *v;
	json_array_foreach(l, i, v) {
		const char *c = json_string_value(json_object_get(v, "check"));
		if (c && !strcmp(c, "fail"))
			*check = "fail";
		else if (c && !strcmp(c, "pass") && strcmp(*check, "fail"))
			*check = "pass";
	}
	return l;
}

/* The @q quantile of @d's delays (@n of them in its histogram), ns: the
 * bucket holding the rank, read by the rank's place among the bucket's
 * delays between its bounds narrowed to [delay_min_ns, delay_max_ns]. */
static double delay_quantile_ns(const struct tcp_dir_stats *d, uint64_t n, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)n), below = 0;
	if (want < 1)
		want = 1;
	unsigned k = 0;
	while (k < TCP_DELAY_BUCKETS - 1 && below + d->delay_hist[k] < want)
		below += d->delay_hist[k++];
	double lo = (double)tcp_delay_bucket_lo(k);
	double hi = k + 1 < TCP_DELAY_BUCKETS ? (double)tcp_delay_bucket_lo(k + 1) : (double)d->delay_max_ns;
	if (lo < (double)d->delay_min_ns)
		lo = (double)d->delay_min_ns;
	if (hi > (double)d->delay_max_ns)
		hi = (double)d->delay_max_ns;
	if (hi < lo) /* counts read while moving: the bounds disagree */
		hi = lo;
	uint64_t in = d->delay_hist[k] ? d->delay_hist[k] : 1;
	double f = (double)(want - below) / (double)in;
	return lo + (hi - lo) * (f < 1 ? f : 1);
}

static json_t *dir_stats_json(struct proxy_registry *r, const struct entry *e,
			      const struct tcp_dir_stats *d, int stream)
{
	json_t *j = json_object();
	json_object_set_new(j, "bytes_in", json_integer((json_int_t)d->bytes_in));
	json_object_set_new(j, "bytes_out", json_integer((json_int_t)d->bytes_out));
	json_object_set_new(j, "chunks_in", json_integer((json_int_t)d->chunks_in));
	json_object_set_new(j, "chunks_out", json_integer((json_int_t)d->chunks_out));
	json_object_set_new(j, "bytes_cut", json_integer((json_int_t)d->bytes_cut));
	json_object_set_new(j, "bytes_dropped", json_integer((json_int_t)d->bytes_dropped));
	json_object_set_new(j, "held", json_integer((json_int_t)d->held));
	json_object_set_new(j, "stalls", json_integer((json_int_t)d->stalls));
	json_object_set_new(j, "delay_count", json_integer((json_int_t)d->delay_count));
	json_object_set_new(j, "delay_min_ms",
			    json_real(d->delay_count ? (double)d->delay_min_ns / 1e6 : 0));
	double mean = d->delay_count ? (double)d->delay_sum_ns / (double)d->delay_count / 1e6 : 0;
	json_object_set_new(j, "delay_mean_ms", json_real(mean));
	json_object_set_new(j, "delay_max_ms", json_real((double)d->delay_max_ns / 1e6));
	/* quantiles from the histogram (tcp.h: inside the bucket, never
	 * outside the smallest and largest delay) */
	uint64_t n = 0;
	for (unsigned k = 0; k < TCP_DELAY_BUCKETS; k++)
		n += d->delay_hist[k];
	static const struct { const char *key; double q; } qs[] = {
		{ "delay_p50_ms", 0.50 }, { "delay_p99_ms", 0.99 } };
	for (unsigned i = 0; n && d->delay_count && i < sizeof(qs) / sizeof(qs[0]); i++)
		json_object_set_new(j, qs[i].key, json_real(delay_quantile_ns(d, n, qs[i].q) / 1e6));
	/* what the latency toxics of this stream ask for, beside it */
	int64_t lat = 0, jit = 0;
	for (unsigned i = 0; i < e->ntox; i++)
		if (e->tox[i].type == TOXIC_LATENCY && (int)e->tox[i].stream == stream) {
			lat += e->tox[i].a.latency.latency_ms;
			jit += e->tox[i].a.latency.jitter_ms;
		}
	json_object_set_new(j, "latency_ms", json_integer(lat));
	json_object_set_new(j, "jitter_ms", json_integer(jit));
	/* the bandwidth toxics' rate: in series, the lowest is what the
	 * stream gets (0: none, or all 0, which passes everything); the
	 * achieved over the windows in which it had a backlog (0: none) */
	int64_t rate = 0;
	for (unsigned i = 0; i < e->ntox; i++)
		if (e->tox[i].type == TOXIC_BANDWIDTH && (int)e->tox[i].stream == stream &&
		    e->tox[i].a.bandwidth.rate_kbps > 0 &&
		    (!rate || e->tox[i].a.bandwidth.rate_kbps < rate))
			rate = e->tox[i].a.bandwidth.rate_kbps;
	json_object_set_new(j, "rate_kbps", json_integer(rate));
	double got = d->rate_ns ? (double)d->rate_bytes * 1e6 / (double)d->rate_ns : 0;
	json_object_set_new(j, "rate_achieved_kbps", json_real(got));
	json_object_set_new(j, "rate_judged_ms", json_integer((json_int_t)(d->rate_ns / 1000000)));
	const char *check;
	json_object_set_new(j, "tc", tc_json(r, e, stream, &check));
	json_object_set_new(j, "check", json_string(check));
	return j;
}

json_t *proxy__stats_json(struct proxy_registry *r, const struct entry *e)
{
	struct tcp_proxy_stats s = e->base, now;
	void *ctx;
	const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
	if (ops->stats_json) {
		char *text = ops->kept_json ? ops->kept_json(ctx, e->handle, e->kept)
			   : e->handle ? ops->stats_json(ctx, e->handle) : NULL;
		json_t *u = text ? json_loads(text, 0, NULL) : NULL;
		free(text);
		if (!json_is_object(u)) {
			json_decref(u);
			u = json_object();
		}
		json_object_set_new(u, "name", json_string(e->name));
		json_object_set_new(u, "enabled", json_boolean(e->enabled));
		json_object_set_new(u, "protocol", json_string("udp"));
		return u;
	}
	memset(&now, 0, sizeof(now));
	if (e->handle)
		ops->stats(ctx, e->handle, &now);
	proxy__stats_add(&s, &now, 1);
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(e->name));
	json_object_set_new(j, "enabled", json_boolean(e->enabled));
	json_object_set_new(j, "accepted", json_integer((json_int_t)s.accepted));
	json_object_set_new(j, "active", json_integer((json_int_t)s.active));
	json_object_set_new(j, "closed", json_integer((json_int_t)s.closed));
	json_object_set_new(j, "upstream_failed", json_integer((json_int_t)s.upstream_failed));
	json_object_set_new(j, "fd_exhausted", json_integer((json_int_t)s.fd_exhausted));
	json_object_set_new(j, "upstream",
			    dir_stats_json(r, e, &s.dir[TOXIC_UPSTREAM], TOXIC_UPSTREAM));
	json_object_set_new(j, "downstream",
			    dir_stats_json(r, e, &s.dir[TOXIC_DOWNSTREAM], TOXIC_DOWNSTREAM));
	return j;
}

/* ------------------------------------------------------------ JSON in */

/* The body as a JSON value, or 400 with toxiproxy's "bad request body: ..." */
json_t *proxy__parse_body(const char *body, size_t len, char *err)
{
	if (!len) {
		errf(err, "bad request body: EOF");
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadb(body, len, JSON_DECODE_ANY, &je);
	if (!j)
		errf(err, "bad request body: %s (line %d, column %d)", je.text, je.line, je.column);
	return j;
}

/* @key of @o: absent or null leaves *@out; a string sets it; else 400. */
int proxy__get_string(json_t *o, const char *key, const char **out, char *err)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return errf(err, "bad request body: %s: expected a string", key);
	*out = json_string_value(v);
	return 0;
}

static int get_bool(json_t *o, const char *key, int *out, char *err)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return errf(err, "bad request body: %s: expected true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* A name a path can address: 1..PROXY_NAME_MAX-1 bytes, no '/'. */
int proxy__check_name(const char *what, const char *s, size_t max, char *err)
{
	size_t n = strlen(s);
	if (n >= max)
		return errf(err, "%s: longer than %zu bytes", what, max - 1);
	if (strchr(s, '/'))
		return errf(err, "%s \"%s\": a name with '/' cannot be addressed", what, s);
	return 0;
}

/*
 * @o into @s.  @create: name and upstream required, listen defaults to
 * 127.0.0.1:0; else (an update) what is absent is NULL.  The addresses
 * given are resolved.  Return: 0 or 400 with the message in @err.
 */
int proxy__parse_spec(struct proxy_registry *r, json_t *o, int create, struct spec *s, char *err)
{
	memset(s, 0, sizeof(*s));
	s->enabled = -1;
	if (!json_is_object(o))
		return errf(err, "bad request body: expected a JSON object (a proxy)");
	const char *proto = NULL;
	int rc;
	if ((rc = proxy__get_string(o, "name", &s->name, err)) ||
	    (rc = proxy__get_string(o, "listen", &s->listen, err)) ||
	    (rc = proxy__get_string(o, "upstream", &s->upstream, err)) ||
	    (rc = get_bool(o, "enabled", &s->enabled, err)) ||
	    (rc = proxy__get_string(o, "protocol", &proto, err)))
		return rc;
	if (create) {
		if (!s->name || !s->name[0])
			return errf(err, "missing required field: name");
		if ((rc = proxy__check_name("name", s->name, PROXY_NAME_MAX, err)))
			return rc;
		if (!s->upstream || !s->upstream[0])
			return errf(err, "missing required field: upstream");
		if (!s->listen || !s->listen[0])
			s->listen = "127.0.0.1:0";
		if (s->enabled < 0)
			s->enabled = 1;
	}
	s->udp = !proto ? -1 : !strcmp(proto, "udp") ? 1 : 0;
	if (proto && strcmp(proto, "tcp") && strcmp(proto, "udp"))
		return errf(err, "protocol \"%.*s\": expected tcp or udp", proxy__cut(proto, 100),
			    proto);
	if (s->udp == 1 && !r->udp_ops)
		return errf(err, "protocol udp: no UDP plane in this server");
	if (s->upstream && !s->upstream[0])
		return errf(err, "upstream: empty (HOST:PORT)");
	if (s->listen && !s->listen[0])
		return errf(err, "listen: empty (HOST:PORT)");
	s->lis_len = s->up_len = 0;
	if (s->listen && (rc = proxy__resolve(r, "listen", s->listen, 1, &s->lis, &s->lis_len,
					     NULL, err)))
		return rc;
	if (s->upstream && (rc = proxy__resolve(r, "upstream", s->upstream, 0, &s->up, &s->up_len,
					       &s->up_state, err)))
		return rc;
	return 0;
}

/* ------------------------------------------------------------ answers */

static const char CT_JSON[] = "application/json";
static const char CT_TEXT[] = "text/plain; charset=utf-8";

int proxy__answer_json(struct answer *a, int status, json_t *j)
{
	a->body = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(7)) : NULL;
	json_decref(j);
	if (!a->body) {
		a->body = strdup("{\"error\":\"out of memory\",\"status\":500}\n");
		a->ctype = a->body ? CT_TEXT : NULL;
		return 500;
	}
	a->ctype = CT_JSON;
	return status;
}

/* The length of the UTF-8 character at @s (@n bytes left), as jansson
 * checks one (no overlong form, no surrogate, nothing past U+10FFFF);
 * 0 if it is not one, -1 if it is cut short by the end. */
static int utf8_char(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	int len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
		: c >= 0xF0 && c <= 0xF4 ? 4 : 0;
	if (len <= 1)
		return len;
	uint32_t cp = c & (0x3F >> (len - 1));
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (cp < least[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return len;
}

/* @msg as a message JSON can carry (a new string): a character cut short
 * at the end (a message cut to fit a buffer) dropped, any other byte that
 * is not UTF-8 shown as '?'; an empty message says so. */
static char *utf8_clean(const char *msg)
{
	if (!msg || !msg[0])
		msg = "error (no message)";
	size_t n = strlen(msg), o = 0;
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		int l = utf8_char((const unsigned char *)msg + i, n - i);
		if (l < 0)
			break;
		if (!l) {
			out[o++] = '?';
			i++;
			continue;
		}
		memcpy(out + o, msg + i, (size_t)l);
		o += (size_t)l;
		i += (size_t)l;
	}
	out[o] = '\0';
	return out;
}

/* {"error":MSG,"status":N} and a newline, as toxiproxy writes it; with
 * @proxies (stolen; /populate's) a third member.  The message is always
 * there: made valid UTF-8 first (utf8_clean()), and if the encoder still
 * fails (out of memory) a fixed one. */
int proxy__answer_error(struct answer *a, int status, const char *msg, json_t *proxies)
{
	char *clean = utf8_clean(msg);
	json_t *j = json_object(), *m = clean ? json_string(clean) : NULL;
	free(clean);
	int ok = j && m;
	if (ok)
		ok = !json_object_set_new(j, "error", m);
	else
		json_decref(m);
	if (ok)
		ok = !json_object_set_new(j, "status", json_integer(status));
	if (proxies && ok)
		ok = !json_object_set_new(j, "proxies", proxies);
	else if (proxies)
		json_decref(proxies);
	char *s = ok ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!s && asprintf(&s, "{\"error\":\"out of memory\",\"status\":%d}", status) < 0)
		s = NULL;
	size_t n = s ? strlen(s) : 0;
	a->body = s ? realloc(s, n + 2) : NULL;
	if (!a->body) {
		free(s);
		a->ctype = NULL;
		return 500;
	}
	a->body[n] = '\n';
	a->body[n + 1] = '\0';
	a->ctype = proxies && ok ? CT_JSON : CT_TEXT;
	return status;
}
