/* SPDX-License-Identifier: MIT */
/*
 * The API's registry: toxiproxy's model of proxies and toxics, served as
 * toxiproxy's HTTP API serves it, over a data plane it knows only through
 * struct proxy_plane_ops (tools/netem/api/proxy.h).
 *
 * Two planes.  A proxy created with "protocol":"udp" goes to the UDP plane
 * (proxy_registry_set_udp(); absent, such a proxy is a 400), every other
 * to the TCP one; entry->udp says which, for the proxy's life (a PATCH
 * with another protocol is a 400).  Only a UDP proxy's JSON shows
 * "protocol", so a TCP proxy's stays toxiproxy's byte for byte; a plane
 * with a stats_json op gives its own statistics object (the UDP plane's
 * counters are datagrams by drop reason, not struct tcp_proxy_stats).  The
 * resolver hands a changed address to the proxy's own plane (entry_ops()).
 *
 * What it keeps.  Proxies by name, in an array sorted by name (GET
 * /proxies is a JSON object keyed by name, in that order, as toxiproxy's
 * encoder writes it); each with the listen and upstream text shown to
 * clients, their resolved addresses, "enabled", the plane's handle while
 * open, its toxics in the order they were added, and the counters of the
 * plane proxies it closed before (a disable, a listen change), so that
 * GET /proxies/NAME/stats counts since the proxy was created.
 *
 * Invariants.  A proxy is open in the plane (handle != NULL) exactly when
 * it is enabled (an open that fails leaves it disabled, and so does an
 * update that had to close its listener and could open neither the new
 * one nor the old one again: proxy_update());
 * an open proxy's toxic list in the plane is the registry's, because every
 * change is given to the plane first and kept only when the plane took it
 * (a tc toxic whose words tc refuses leaves the old list in both); names
 * are unique among proxies and among one proxy's toxics; every value was
 * checked against toxic.h's ranges before it was stored.
 *
 * Toxiproxy's behaviour, reproduced.  Status codes: create 201, toxic
 * create 200, delete 204, /reset 204, /populate 201; 404 {"error":"proxy
 * not found"} / "toxic not found", 409 "proxy already exists" / "toxic
 * already exists", 400 "missing required field: name", "invalid toxic
 * type", "stream was invalid, ..."; error bodies {"error":MSG,"status":N}
 * plus a newline, in text/plain (in application/json for /populate, with
 * "proxies"), the message always there and valid UTF-8 (proxy__answer_error()); a known path with another method 405 with no body; an
 * unknown path 404 "404 page not found".  Defaults: listen port 0 (the
 * bound port shown once listening), enabled true, stream downstream,
 * toxicity 1, toxic name TYPE_STREAM, every attribute 0.  Updates
 * (PATCH, or POST on the object, which toxiproxy also takes): a proxy's
 * name is kept, a changed listen re-binds (connections closed), a
 * toxic's name, type and stream are kept, its toxicity and the
 * attributes given change, the others stay; a changed upstream closes
 * the proxy's connections (toxiproxy stops and starts the proxy: here
 * it is closed and re-opened in the plane on the same bound address,
 * its counters kept).  An update is all or nothing (toxiproxy's is not:
 * a listen in use leaves its new fields and the proxy disabled): a 500
 * leaves every field, "enabled" and the listener as they were.  A toxic's "stream" is read without regard to
 * case and shown as written ("UpStream", default name latency_UpStream).
 * /populate creates or replaces each proxy of the list in order (one
 * whose listen and upstream are as given is left as it is: its toxics,
 * connections and "enabled", whatever the list says), after checking all
 * of them.  The differences kept on purpose are listed in docs/relay.md
 * ("HTTP API: differences from toxiproxy").
 *
 * Locking: one mutex, taken for the whole of each entry point; the plane's
 * calls are made under it, which serialises them as tools/netem/tcp/tcp.h
 * asks.  Host names are resolved by tools/netem/api/resolve.c (getaddrinfo,
 * with the entries' lock dropped, req_lock still held).  The HTTP
 * front calls proxy_api_request() on libmicrohttpd's one polling thread,
 * so everything a request does here runs there: a slow resolver, or a
 * plane call that waits for its workers (a close of a proxy with many
 * connections, a tc device drained), holds every API client for that
 * long; never the data path, whose workers take no lock of the registry.
 *
 * Costs: a request is O(proxies + toxics) at most (a sorted array, lists
 * of at most PROXY_MAX_TOXICS); the JSON is built with jansson (a toxic's
 * JSON, both ways, in tools/netem/api/toxic.c).
 *
 * Files.  This one owns the registry and the requests: the entries and
 * their life in the plane (open, close, free, the counters of the plane
 * proxies closed before), the proxies' create, update and /populate, the
 * toxics' list given to the plane, the routing, and the
 * entry points of proxy.h.  A proxy's JSON both ways (its object, its
 * toxics', its statistics; a body read, a proxy given in one checked) is
 * tools/netem/api/proxy_json.c's; the upstream names and their lookups are
 * tools/netem/api/resolve.c's; what the three share is proxy_priv.h.  Every
 * function here runs on the thread of a request (or the owner's, for
 * create and destroy) with r->lock held, except the entry points, which
 * take it.
 */
#define _GNU_SOURCE
#include "proxy_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char CT_VERSION[] = "application/json;charset=utf-8";
static const char CT_TEXT[] = "text/plain; charset=utf-8";

/* ------------------------------------------------------------ addresses */

static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char h[INET6_ADDRSTRLEN] = "?";
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof(h));
		snprintf(buf, len, "[%s]:%u", h, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;
		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof(h));
		snprintf(buf, len, "%s:%u", h, ntohs(s4->sin_port));
	}
}

/* ------------------------------------------------------------ registry */

struct entry *proxy__find(const struct proxy_registry *r, const char *name, unsigned *pos)
{
	unsigned lo = 0, hi = r->n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		int c = strcmp(r->e[mid]->name, name);
		if (!c) {
			if (pos)
				*pos = mid;
			return r->e[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return NULL;
}

void proxy__stats_add(struct tcp_proxy_stats *b, const struct tcp_proxy_stats *s, int now)
{
	b->accepted += s->accepted;
	b->closed += s->closed;
	b->upstream_failed += s->upstream_failed;
	b->fd_exhausted += s->fd_exhausted;
	b->active = now ? s->active : 0;
	for (int d = 0; d < TOXIC_NSTREAMS; d++) {
		struct tcp_dir_stats *x = &b->dir[d];
		const struct tcp_dir_stats *y = &s->dir[d];
		x->bytes_in += y->bytes_in;
		x->bytes_out += y->bytes_out;
		x->chunks_in += y->chunks_in;
		x->chunks_out += y->chunks_out;
		x->bytes_cut += y->bytes_cut;
		x->bytes_dropped += y->bytes_dropped;
		x->held = now ? y->held : 0;
		if (y->delay_count && (!x->delay_count || y->delay_min_ns < x->delay_min_ns))
			x->delay_min_ns = y->delay_min_ns;
		x->delay_count += y->delay_count;
		x->delay_sum_ns += y->delay_sum_ns;
		for (unsigned k = 0; k < TCP_DELAY_BUCKETS; k++)
			x->delay_hist[k] += y->delay_hist[k];
		if (y->delay_max_ns > x->delay_max_ns)
			x->delay_max_ns = y->delay_max_ns;
		x->stalls += y->stalls;
		x->rate_ns += y->rate_ns;
		x->rate_bytes += y->rate_bytes;
	}
}

/* Close the plane proxy @h of @e (its own, or one opened for it that
 * failed), its final counters kept in @e. */
static void plane_close(struct proxy_registry *r, struct entry *e, void *h)
{
	struct tcp_proxy_stats s;
	void *ctx;
	const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
	memset(&s, 0, sizeof(s));
	if (ops->close_keep)
		ops->close_keep(ctx, h, &e->kept);
	else
		ops->close(ctx, h, &s);
	proxy__stats_add(&e->base, &s, 0);
}

void proxy__entry_close(struct proxy_registry *r, struct entry *e)
{
	if (!e->handle)
		return;
	plane_close(r, e, e->handle);
	e->handle = NULL;
}

/* The status of a plane's refusal (@rc its errno): 500 for the server's
 * own failure (no memory); 413 when the server's memory budget
 * (--max-bytes, which the bytes its proxies hold and their tc state
 * share: src/net/netmem.c) is spent: the request asks for more state than
 * the server will hold, as a body larger than it takes (toxiproxy has no
 * such limit); else 400 (the words refused). */
static int refusal_status(int rc)
{
	return rc == -ENOMEM ? 500 : rc == -ENOBUFS ? 413 : 400;
}

/* A plane proxy for @e on @lis to @up, with @e's toxics; @e is not
 * changed (but for the counters of a plane proxy opened and closed again
 * when the toxics were refused).  Return: 0 with the handle in *@h and the address bound in
 * @bound, or the HTTP status (500: the plane could not listen, 400: it
 * refused the toxics) with the message in @err and *@rc the plane's
 * errno. */
static int plane_open(struct proxy_registry *r, struct entry *e,
		      const struct sockaddr_storage *lis, socklen_t lis_len,
		      const struct sockaddr_storage *up, socklen_t up_len, void **h,
		      struct sockaddr_storage *bound, socklen_t *blen, int *rc, char *err)
{
	void *ctx;
	const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
	*h = NULL;
	*blen = sizeof(*bound);
	memset(bound, 0, sizeof(*bound));
	err[0] = '\0';
	*rc = ops->open(ctx, e->name, (const struct sockaddr *)lis, lis_len,
			(const struct sockaddr *)up, up_len, h, bound, blen, err, ERRLEN);
	if (*rc || !*h) {
		if (!err[0])
			snprintf(err, ERRLEN, "listen %s: %s", e->listen, strerror(-*rc));
		return *rc == -ENOBUFS ? 413 : 500;
	}
	if (e->ntox && (*rc = ops->set_toxics(ctx, *h, e->tox, e->ntox, err, ERRLEN))) {
		plane_close(r, e, *h);
		*h = NULL;
		return refusal_status(*rc);
	}
	return 0;
}

/* @e's plane proxy is now @h, listening on @bound (shown as its listen),
 * and @e enabled. */
static void entry_install(struct proxy_registry *r, struct entry *e, void *h,
			  const struct sockaddr_storage *bound, socklen_t blen)
{
	char buf[INET6_ADDRSTRLEN + 16];
	format_addr(bound, buf, sizeof(buf));
	char *l = strdup(buf);
	if (l) {
		proxy__tp_fold(r, e); /* toxiproxy's series keep the old listener */
		free(e->listen);
		e->listen = l;
		memcpy(&e->lis, bound, blen);
		e->lis_len = blen;
	}
	e->handle = h;
	e->enabled = 1;
}

/* Open @e in the plane with its toxics.  Return: 0, or the HTTP status
 * (500: the plane could not listen, 400: it refused the toxics) with the
 * message in @err; @e is then closed and disabled. */
static int entry_open(struct proxy_registry *r, struct entry *e, char *err)
{
	struct sockaddr_storage bound;
	socklen_t blen;
	void *h;
	int rc, st = plane_open(r, e, &e->lis, e->lis_len, &e->up, e->up_len, &h, &bound, &blen,
				&rc, err);
	if (st) {
		e->enabled = 0;
		return st;
	}
	entry_install(r, e, h, &bound, blen);
	return 0;
}

static void entry_free(struct proxy_registry *r, struct entry *e)
{
	proxy__entry_close(r, e);
	proxy__tp_fold(r, e);
	if (e->kept) {
		void *ctx;
		entry_ops(r, e, &ctx)->kept_free(ctx, e->kept);
	}
	for (unsigned i = 0; i < e->ntox; i++)
		toxic_release(&e->tox[i]);
	free(e->listen);
	free(e->upstream);
	free(e);
}

static void entry_remove(struct proxy_registry *r, unsigned pos)
{
	entry_free(r, r->e[pos]);
	memmove(&r->e[pos], &r->e[pos + 1], (r->n - pos - 1) * sizeof(r->e[0]));
	r->n--;
}

int proxy_registry_create(const struct proxy_plane_ops *ops, void *ctx, unsigned flags,
			  struct proxy_registry **out)
{
	struct proxy_registry *r = calloc(1, sizeof(*r));
	if (!r || !(r->e = calloc(PROXY_MAX, sizeof(r->e[0])))) {
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->req_lock, NULL);
	r->ops = ops;
	r->ctx = ctx;
	r->flags = flags;
	*out = r;
	return 0;
}

void proxy_registry_set_udp(struct proxy_registry *r, const struct proxy_plane_ops *ops,
			    void *ctx)
{
	r->udp_ops = ops;
	r->udp_ctx = ctx;
}

void proxy_registry_destroy(struct proxy_registry *r)
{
	if (!r)
		return;
	while (r->n)
		entry_remove(r, r->n - 1);
	proxy__tp_free(r);
	free(r->e);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->req_lock);
	free(r);
}

unsigned proxy_registry_count(struct proxy_registry *r, unsigned *open)
{
	pthread_mutex_lock(&r->lock);
	unsigned n = r->n, o = 0;
	for (unsigned i = 0; i < n; i++)
		o += r->e[i]->handle != NULL;
	pthread_mutex_unlock(&r->lock);
	if (open)
		*open = o;
	return n;
}

/* ------------------------------------------------------------ proxies */

/* Create the proxy @s (checked; its name free).  Return: 0 or a status. */
static int proxy_create(struct proxy_registry *r, const struct spec *s, struct entry **out,
			char *err)
{
	unsigned pos;
	if (proxy__find(r, s->name, &pos))
		return errf(err, "proxy already exists"), 409;
	if (r->n == PROXY_MAX)
		return errf(err, "more than %d proxies", PROXY_MAX);
	struct entry *e = calloc(1, sizeof(*e));
	if (!e || !(e->listen = strdup(s->listen)) || !(e->upstream = strdup(s->upstream))) {
		if (e) {
			free(e->listen);
			free(e);
		}
		return errf(err, "out of memory"), 500;
	}
	snprintf(e->name, sizeof(e->name), "%s", s->name);
	e->lis = s->lis;
	e->lis_len = s->lis_len;
	e->up = s->up;
	e->up_len = s->up_len;
	e->up_state = s->up_state;
	e->up_at = mono_s();
	e->udp = s->udp == 1;
	if (s->enabled) {
		int rc = entry_open(r, e, err);
		if (rc) {
			entry_free(r, e);
			return rc;
		}
	}
	memmove(&r->e[pos + 1], &r->e[pos], (r->n - pos) * sizeof(r->e[0]));
	r->e[pos] = e;
	r->n++;
	*out = e;
	return 0;
}

/* The port of a listen address (0: any). */
static unsigned addr_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)(const void *)ss)->sin6_port)
					 : ntohs(((const struct sockaddr_in *)(const void *)ss)->sin_port);
}

/* After a failed update that closed @e's plane proxy first: @e opened
 * again as it was (its bound address, its upstream, its toxics); if that
 * fails too, @e is disabled and @err says so after the update's reason. */
static void entry_reopen(struct proxy_registry *r, struct entry *e, char *err)
{
	struct sockaddr_storage bound;
	socklen_t blen;
	void *h;
	int rc;
	char why[ERRLEN];
	if (!plane_open(r, e, &e->lis, e->lis_len, &e->up, e->up_len, &h, &bound, &blen, &rc,
			why)) {
		entry_install(r, e, h, &bound, blen);
		return;
	}
	e->enabled = 0;
	size_t n = toxic_utf8_fit(err, strlen(err));
	snprintf(err + n, ERRLEN - n, "; and the proxy could not listen again on %s (%.*s): it is "
				      "disabled, its fields as before",
		 e->listen, proxy__cut(why, 200), why);
}

/*
 * Apply an update @s to @e: toxiproxy's Proxy.Update, all or nothing.  A
 * changed listen or upstream, or an enable, needs a new plane proxy: it
 * is opened (with the toxics) before any field changes, and the old one
 * closed only once the new is up, so a failure (the new listen address
 * in use, a toxic refused) leaves every field, "enabled" and the old
 * listener as they were.  Where the old one holds what the new needs (a
 * new upstream re-opens on the same bound address, as toxiproxy's stop
 * and start; a new listen on the old port) it is closed first and, if the
 * new does not open, opened again as it was (entry_reopen()).  Closing
 * the old plane proxy closes its connections, as toxiproxy's stop does,
 * whatever the outcome.  Return: 0 or the status with @err.
 */
static int proxy_update(struct proxy_registry *r, struct entry *e, const struct spec *s, char *err)
{
	if (s->udp >= 0 && s->udp != e->udp)
		return errf(err, "protocol: a proxy's protocol cannot change (it is %s; delete "
				 "the proxy and create it again)",
			    e->udp ? "udp" : "tcp");
	int relisten = s->listen && strcmp(s->listen, e->listen);
	int reup = s->upstream && strcmp(s->upstream, e->upstream);
	int want = s->enabled >= 0 ? s->enabled : e->enabled;
	char *l = relisten ? strdup(s->listen) : NULL;
	char *u = reup ? strdup(s->upstream) : NULL;
	if ((relisten && !l) || (reup && !u)) {
		free(l);
		free(u);
		return errf(err, "out of memory"), 500;
	}
	const struct sockaddr_storage *lis = relisten ? &s->lis : &e->lis;
	socklen_t lis_len = relisten ? s->lis_len : e->lis_len;
	struct sockaddr_storage bound;
	socklen_t blen = 0;
	void *h = NULL;
	if (want && (!e->handle || relisten || reup)) {
		int rc, st;
		unsigned port = addr_port(lis);
		int first = e->handle && (!relisten || (port && port == addr_port(&e->lis)));
		if (first)
			proxy__entry_close(r, e);
		st = plane_open(r, e, lis, lis_len, reup ? &s->up : &e->up, reup ? s->up_len : e->up_len,
				&h, &bound, &blen, &rc, err);
		if (st) {
			free(l);
			free(u);
			if (first)
				entry_reopen(r, e, err);
			return st;
		}
	}
	/* nothing fails from here */
	if (e->handle && (h || !want))
		proxy__entry_close(r, e);
	if (u || l)
		proxy__tp_fold(r, e);
	if (u) {
		free(e->upstream);
		e->upstream = u;
		e->up = s->up;
		e->up_len = s->up_len;
		e->up_state = s->up_state;
		e->up_at = mono_s();
	}
	if (l) {
		free(e->listen);
		e->listen = l;
		e->lis = s->lis;
		e->lis_len = s->lis_len;
	}
	if (h)
		entry_install(r, e, h, &bound, blen);
	else if (!want)
		e->enabled = 0;
	return 0;
}

static int populate(struct proxy_registry *r, const char *body, size_t len, struct answer *a,
		    char *err)
{
	json_t *j = proxy__parse_body(body, len, err), *done = json_array();
	struct spec *sp = NULL;
	int rc = 0;
	size_t n = 0;
	if (!j) {
		rc = 400;
		goto out;
	}
	if (!json_is_array(j)) {
		rc = errf(err, "bad request body: expected a JSON array of proxies");
		goto out;
	}
	n = json_array_size(j);
	if (n > PROXY_MAX) {
		rc = errf(err, "more than %d proxies", PROXY_MAX);
		goto out;
	}
	sp = calloc(n ? n : 1, sizeof(*sp));
	if (!sp) {
		rc = errf(err, "out of memory");
		goto out;
	}
	/* all of them checked before any is made, as toxiproxy does */
	for (size_t i = 0; i < n; i++) {
		if ((rc = proxy__parse_spec(r, json_array_get(j, i), 1, &sp[i], err))) {
			size_t l = toxic_utf8_fit(err, strlen(err));
			snprintf(err + l, ERRLEN - l, " at proxy %zu", i + 1);
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		unsigned pos;
		struct entry *e = proxy__find(r, sp[i].name, &pos);
		if (e && !strcmp(e->listen, sp[i].listen) && !strcmp(e->upstream, sp[i].upstream)) {
			/* as toxiproxy: kept as it is, "enabled" not looked at */
		} else {
			if (e)
				entry_remove(r, pos);
			if ((rc = proxy_create(r, &sp[i], &e, err)))
				goto out;
		}
		json_array_append_new(done, proxy__proxy_json(e));
	}
out:
	free(sp);
	json_decref(j);
	if (rc) {
		if (!a)
			json_decref(done);
		return a ? proxy__answer_error(a, rc, err, done) : rc;
	}
	if (!a) {
		json_decref(done);
		return 0;
	}
	json_t *res = json_object();
	json_object_set_new(res, "proxies", done);
	return proxy__answer_json(a, 201, res);
}

/* ------------------------------------------------------------ toxics */

static struct toxic *toxic_find(struct entry *e, const char *name, unsigned *pos)
{
	for (unsigned i = 0; i < e->ntox; i++)
		if (!strcmp(e->tox[i].name, name)) {
			if (pos)
				*pos = i;
			return &e->tox[i];
		}
	return NULL;
}

/* Give the plane @e's list with @t at @pos: appended (@pos == ntox, its
 * stream's text @st), replacing (@pos < ntox, the text kept), or removed
 * (@t NULL).  Checked by the plane's validate whether @e is open or not;
 * kept only when the plane takes it.  The registry then owns @t's strings. */
static int toxics_commit(struct proxy_registry *r, struct entry *e, unsigned pos,
			 const struct toxic *t, const char *st, char *err)
{
	struct toxic next[PROXY_MAX_TOXICS];
	char next_st[PROXY_MAX_TOXICS][16];
	unsigned n = 0;
	for (unsigned i = 0; i < e->ntox; i++) {
		if (i == pos && !t)
			continue;
		next[n] = i == pos ? *t : e->tox[i];
		memcpy(next_st[n++], e->stext[i], sizeof(next_st[0]));
	}
	if (pos == e->ntox && t) {
		next[n] = *t;
		snprintf(next_st[n++], sizeof(next_st[0]), "%s", st ? st : "");
	}
	void *ctx;
	const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
	if (t && ops->validate) {
		err[0] = '\0';
		int rc = ops->validate(ctx, t, err, ERRLEN);
		if (rc) {
			if (!err[0])
				snprintf(err, ERRLEN, "the data path refused toxic %s: %s", t->name,
					 strerror(-rc));
			return refusal_status(rc);
		}
	}
	if (e->handle) {
		err[0] = '\0';
		int rc = ops->set_toxics(ctx, e->handle, next, n, err, ERRLEN);
		if (rc) {
			if (!err[0])
				snprintf(err, ERRLEN, "the data path refused the toxics: %s",
					 strerror(-rc));
			return refusal_status(rc);
		}
	}
	if (pos < e->ntox)
		toxic_release(&e->tox[pos]);
	memcpy(e->tox, next, n * sizeof(next[0]));
	memcpy(e->stext, next_st, n * sizeof(next_st[0]));
	e->ntox = n;
	return 0;
}

/* No toxic on @e (POST /reset).  Return: 0 or 500. */
static int toxics_clear(struct proxy_registry *r, struct entry *e, char *err)
{
	if (!e->ntox)
		return 0;
	void *ctx;
	const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
	if (e->handle && ops->set_toxics(ctx, e->handle, e->tox, 0, err, ERRLEN))
		return 500;
	for (unsigned i = 0; i < e->ntox; i++)
		toxic_release(&e->tox[i]);
	e->ntox = 0;
	return 0;
}

static int toxic_create(struct proxy_registry *r, struct entry *e, const char *body, size_t len,
			struct answer *a, char *err)
{
	json_t *j = proxy__parse_body(body, len, err);
	struct toxic t;
	memset(&t, 0, sizeof(t));
	t.toxicity = 1;
	t.stream = TOXIC_DOWNSTREAM;
	int rc = 400;
	const char *type = NULL, *stream = NULL, *name = NULL;
	if (!j)
		goto out;
	if (!json_is_object(j)) {
		errf(err, "bad request body: expected a JSON object (a toxic)");
		goto out;
	}
	if ((rc = proxy__get_string(j, "type", &type, err)) ||
	    (rc = proxy__get_string(j, "stream", &stream, err)) ||
	    (rc = proxy__get_string(j, "name", &name, err)))
		goto out;
	rc = 400;
	if (!type || toxic_type_from_name(type, &t.type)) {
		errf(err, "invalid toxic type");
		goto out;
	}
	if (stream && !strcasecmp(stream, "upstream")) {
		t.stream = TOXIC_UPSTREAM;
	} else if (stream && strcasecmp(stream, "downstream")) {
		errf(err, "stream was invalid, can be either upstream or downstream");
		goto out;
	}
	/* the text as given stays: in the JSON and the default name */
	if (!stream)
		stream = "downstream";
	if (name && name[0]) {
		if ((rc = proxy__check_name("name", name, TOXIC_NAME_MAX, err)))
			goto out;
		snprintf(t.name, sizeof(t.name), "%s", name);
	} else {
		snprintf(t.name, sizeof(t.name), "%s_%s", type, stream);
	}
	if ((rc = toxic_parse_toxicity(j, &t.toxicity, err, ERRLEN)) ||
	    (rc = toxic_parse_attrs(json_object_get(j, "attributes"), &t, err, ERRLEN)))
		goto out;
	rc = 400;
	if (t.type == TOXIC_TC && !t.a.tc.qdisc && !t.a.tc.batch) {
		errf(err, "a tc toxic needs attributes.qdisc (\"netem delay 20ms\") or "
			  "attributes.batch (tc commands, one a line)");
		goto out;
	}
	if (toxic_find(e, t.name, NULL)) {
		errf(err, "toxic already exists");
		rc = 409;
		goto out;
	}
	if (e->ntox == PROXY_MAX_TOXICS) {
		errf(err, "more than %d toxics on proxy %s", PROXY_MAX_TOXICS, e->name);
		goto out;
	}
	if ((rc = toxics_commit(r, e, e->ntox, &t, stream, err)))
		goto out;
	json_decref(j);
	return proxy__answer_json(a, 200, proxy__tox_json(e, e->ntox - 1));
out:
	toxic_release(&t);
	json_decref(j);
	return proxy__answer_error(a, rc, err, NULL);
}

static int toxic_update(struct proxy_registry *r, struct entry *e, unsigned pos, const char *body,
			size_t len, struct answer *a, char *err)
{
	json_t *j = proxy__parse_body(body, len, err);
	struct toxic t;
	int rc = 400;
	if (!j)
		return proxy__answer_error(a, 400, err, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return proxy__answer_error(a, errf(err, "bad request body: expected a JSON object"), err,
				    NULL);
	}
	if ((rc = toxic_copy(&t, &e->tox[pos]))) {
		json_decref(j);
		return proxy__answer_error(a, errf(err, "out of memory"), err, NULL);
	}
	/* name, type and stream stay, as toxiproxy keeps them */
	if ((rc = toxic_parse_toxicity(j, &t.toxicity, err, ERRLEN)) ||
	    (rc = toxic_parse_attrs(json_object_get(j, "attributes"), &t, err, ERRLEN)) ||
	    (rc = toxics_commit(r, e, pos, &t, NULL, err))) {
		toxic_release(&t);
		json_decref(j);
		return proxy__answer_error(a, rc, err, NULL);
	}
	json_decref(j);
	return proxy__answer_json(a, 200, proxy__tox_json(e, pos));
}

/* ------------------------------------------------------------ routing */

static int is(const char *m, const char *want)
{
	return !strcmp(m, want);
}

/* Split @path ("/a/b/c") into at most @max components; Return: how many,
 * or -1 for a path this API does not have (an empty component, too many). */
static int split(const char *path, char comp[][PROXY_NAME_MAX], int max)
{
	if (path[0] != '/')
		return -1;
	int n = 0;
	const char *p = path + 1;
	for (;;) {
		const char *sl = strchr(p, '/');
		size_t l = sl ? (size_t)(sl - p) : strlen(p);
		if (!l || l >= PROXY_NAME_MAX || n == max)
			return -1;
		memcpy(comp[n], p, l);
		comp[n][l] = '\0';
		n++;
		if (!sl)
			return n;
		p = sl + 1;
	}
}

static int handle(struct proxy_registry *r, const char *m, const char *path, const char *body,
		  size_t len, struct answer *a, char *err)
{
	char c[4][PROXY_NAME_MAX];
	int n = split(path, c, 4);
	if (n < 1)
		goto notfound;
	if (n == 1 && is(c[0], "version")) {
		if (!is(m, "GET"))
			return 405;
		a->body = strdup("{\"version\": \"2.8.0-pinwheel\"}");
		a->ctype = a->body ? CT_VERSION : NULL;
		return a->body ? 200 : 500;
	}
	if (n == 1 && is(c[0], "reset")) {
		if (!is(m, "POST"))
			return 405;
		int rc = 0;
		for (unsigned i = 0; i < r->n; i++) {
			struct entry *e = r->e[i];
			int x = toxics_clear(r, e, err);
			if (!x && !e->handle)
				x = entry_open(r, e, err);
			if (x && !rc)
				rc = x;
		}
		return rc ? proxy__answer_error(a, 500, err, NULL) : 204;
	}
	if (n == 1 && is(c[0], "populate")) {
		if (!is(m, "POST"))
			return 405;
		return populate(r, body, len, a, err);
	}
	if (!is(c[0], "proxies"))
		goto notfound;
	if (n == 1) {
		if (is(m, "GET")) {
			json_t *j = json_object();
			for (unsigned i = 0; i < r->n; i++)
				json_object_set_new(j, r->e[i]->name, proxy__proxy_json(r->e[i]));
			return proxy__answer_json(a, 200, j);
		}
		if (!is(m, "POST"))
			return 405;
		json_t *j = proxy__parse_body(body, len, err);
		struct spec s;
		struct entry *e;
		int rc = j ? proxy__parse_spec(r, j, 1, &s, err) : 400;
		if (!rc)
			rc = proxy_create(r, &s, &e, err);
		json_decref(j);
		return rc ? proxy__answer_error(a, rc, err, NULL)
			  : proxy__answer_json(a, 201, proxy__proxy_json(e));
	}
	if ((n == 3 && !is(c[2], "toxics") && !is(c[2], "stats")) || (n == 4 && !is(c[2], "toxics")))
		goto notfound;
	/* a known path: the method is checked before the proxy is looked up */
	int known = (n == 2 && (is(m, "GET") || is(m, "POST") || is(m, "PATCH") || is(m, "DELETE"))) ||
		    (n == 3 && is(c[2], "toxics") && (is(m, "GET") || is(m, "POST"))) ||
		    (n == 3 && is(c[2], "stats") && is(m, "GET")) ||
		    (n == 4 && (is(m, "GET") || is(m, "POST") || is(m, "PATCH") || is(m, "DELETE")));
	if (!known)
		return 405;
	unsigned pos;
	struct entry *e = proxy__find(r, c[1], &pos);
	if (!e)
		return proxy__answer_error(a, 404, "proxy not found", NULL);
	if (n == 2) {
		if (is(m, "GET"))
			return proxy__answer_json(a, 200, proxy__proxy_json(e));
		if (is(m, "DELETE")) {
			entry_remove(r, pos);
			return 204;
		}
		json_t *j = proxy__parse_body(body, len, err);
		struct spec s;
		int rc = j ? proxy__parse_spec(r, j, 0, &s, err) : 400;
		if (!rc)
			rc = proxy_update(r, e, &s, err);
		json_decref(j);
		return rc ? proxy__answer_error(a, rc, err, NULL)
			  : proxy__answer_json(a, 200, proxy__proxy_json(e));
	}
	if (n == 3 && is(c[2], "stats"))
		return proxy__answer_json(a, 200, proxy__stats_json(r, e));
	if (n == 3)
		return is(m, "GET") ? proxy__answer_json(a, 200, proxy__toxics_json(e))
				    : toxic_create(r, e, body, len, a, err);
	unsigned tp;
	struct toxic *t = toxic_find(e, c[3], &tp);
	if (!t)
		return proxy__answer_error(a, 404, "toxic not found", NULL);
	if (is(m, "GET"))
		return proxy__answer_json(a, 200, proxy__tox_json(e, tp));
	if (is(m, "DELETE")) {
		int rc = toxics_commit(r, e, tp, NULL, NULL, err);
		return rc ? proxy__answer_error(a, rc, err, NULL) : 204;
	}
	return toxic_update(r, e, tp, body, len, a, err);
notfound:
	a->body = strdup("404 page not found\n");
	a->ctype = a->body ? CT_TEXT : NULL;
	return 404;
}

int proxy_api_request(struct proxy_registry *r, const char *method, const char *path,
		      const char *body, size_t len, char **out_body, const char **content_type)
{
	struct answer a = { NULL, NULL };
	char err[ERRLEN];
	err[0] = '\0';
	pthread_mutex_lock(&r->req_lock);
	pthread_mutex_lock(&r->lock);
	int status = handle(r, method, path, body, len, &a, err);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&r->req_lock);
	*out_body = a.body;
	*content_type = a.body ? a.ctype : NULL;
	return status;
}

int proxy_registry_populate(struct proxy_registry *r, const char *json, size_t len, char *err,
			    size_t errlen)
{
	char e[ERRLEN];
	e[0] = '\0';
	pthread_mutex_lock(&r->req_lock);
	pthread_mutex_lock(&r->lock);
	int rc = populate(r, json, len, NULL, e);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&r->req_lock);
	if (rc)
		snprintf(err, errlen, "%s", e);
	return rc ? -EINVAL : 0;
}
