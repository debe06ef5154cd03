/* SPDX-License-Identifier: MIT */
/*
 * toxiproxy's HTTP API over the network: the transport only.  Requests
 * are parsed by libmicrohttpd, routed by method and path into the
 * registry's one handler (proxy_api_request(), tools/netem/api/proxy.c), and
 * its status, body and content type are sent back; GET /metrics goes to
 * metrics.c, GET / (or /dashboard) and /dashboard/data to dashboard.c.
 * Started with no registry (the UDP relay's --metrics, server.c), it
 * serves GET /metrics alone, every other request a 404 after the guard.
 *
 * Why these libraries.  libmicrohttpd (GNU, in Debian as
 * libmicrohttpd-dev) is an HTTP/1.1 server made to be embedded in a C
 * program: it parses requests (chunked bodies, 100-continue, pipelining,
 * URL unescaping) so that no HTTP parser is written here, it runs its own
 * event loop on one internal thread with epoll, and it has the knobs a
 * server facing untrusted clients needs (an idle timeout, a connection
 * limit, a per-address limit, a memory limit per connection for the
 * request line and headers).  Its callback takes the body in pieces, so
 * the body limit below is ours and exact.  jansson (libjansson-dev, used
 * by the registry) is a small, strict JSON library with no dependency:
 * exact 64-bit integers, NUL characters in strings refused, nesting
 * depth bounded, object members kept in insertion order (toxiproxy's clients see
 * the fields in toxiproxy's order), compact output.  cJSON was the other
 * candidate; it stores numbers as doubles, which would round a 64-bit
 * seed or byte count.
 *
 * Defences.  One polling thread serves every connection without blocking
 * (epoll): a client that sends its request a byte at a time (slowloris)
 * does not stop the thread from serving the others.  But the thread also
 * runs the registry's work for each request (proxy_api_request(): host
 * names resolved with getaddrinfo, the data path's control calls, which
 * wait for its workers), so a request that resolves a slow name or closes
 * a busy proxy holds every other client for as long as that takes.
 * A connection is bounded three ways: idle for API_CONN_TIMEOUT_S it is
 * closed (libmicrohttpd's timeout, reset by each byte); a request (its
 * headers and body) not wholly received API_REQ_TIMEOUT_S after its first
 * byte could arrive (the connection's accept, or the end of the previous
 * request on a kept-alive connection) is cut: a watchdog thread of this
 * file shuts the socket down, so a drip of one byte a second holds a slot
 * for that long at most; and at most API_MAX_CONNS connections at once.
 * No bound per address: every local client is 127.0.0.1, so a bound per
 * address below the total lets a few idle local clients lock the others
 * out; the time bound is what frees the slots.  A body larger than
 * API_MAX_BODY is answered 413 with a JSON error as soon as its
 * Content-Length says so, or when the bytes received pass it (chunked);
 * nothing beyond it is kept.  The listener is bound to the one address
 * given (toxiproxy's 127.0.0.1:8474 by convention; another only when the
 * user writes it).  Costs: the watchdog walks the open connections every
 * API_WATCHDOG_MS (at most API_MAX_CONNS), under the list's lock, which
 * the polling thread takes briefly per connection and request.
 *
 * The guard (guard(), below): a table of rules every request passes
 * before anything else looks at it (its body is read and thrown away, the
 * registry never sees it).  Each rule says "passes" or refuses with its
 * answer; the first refusal is the answer.
 *   browser  a User-Agent starting "Mozilla/" (any of them, if several):
 *            toxiproxy's 403 "User agent not allowed" (status, body and
 *            content type as its StopBrowsersMiddleware gives them), for
 *            every request, reads included.  Every browser's User-Agent
 *            starts so, and a page the user opens can make the browser
 *            send requests here: a form's text/plain POST needs no CORS
 *            preflight, so a page could create a proxy.
 *   host     only when the API listens on a loopback address (127.0.0.0/8,
 *            ::1): each Host header must name this API: its own address,
 *            localhost, 127.0.0.1 or [::1], with the API's port or none,
 *            or a name given with --allow-host; else 403 with a JSON error
 *            naming the Host.  Against DNS rebinding: a page at
 *            evil.example whose name is then made to resolve to 127.0.0.1
 *            is, to the browser, of the API's origin (the browser's own
 *            check passes, any User-Agent rule aside), and its requests
 *            carry Host: evil.example.  A request without Host (HTTP/1.0)
 *            passes: browsers always send one, so it is no browser's.  An
 *            API on another address (0.0.0.0 in a container, reached by
 *            whatever name the network gives it) does not check Host.
 * Exceptions.  A rule is lifted only by an exception its entry names
 * (lifted_by, a mask over the exceptions guard_exceptions() finds in a
 * request), never by a path around the table; the host rule's mask is
 * empty and stays so, since a rebinding page must reach neither the
 * dashboard nor anything else.  Two exceptions, each lifting the browser
 * rule only:
 *   page     GET or HEAD of exactly / or /dashboard: the dashboard's page
 *            (served from memory: dashboard.c), no other method, no other
 *            path.  A page of another origin can make a browser send that
 *            GET but cannot read the answer: this API sends no
 *            Access-Control-* header, and a rebinding page, which could,
 *            fails the Host rule.
 *   token    a request, any method and path, with an X-Pinwheel-Token
 *            header equal to this process's token: 32 hex digits from
 *            getrandom() at start, compared in constant time, written
 *            into the page when it is served (a meta tag) and sent by the
 *            page's script with each API call.  Never in a cookie, so a
 *            browser never adds it to another site's request; a
 *            cross-site form cannot set a header, and a script of another
 *            origin may only after a CORS preflight this API never grants.
 *            So the page reads and changes the proxies; no other page can.
 *
 * Threads: netem_api_start/stop on the server's main thread; on_request,
 * on_completed and on_connection on libmicrohttpd's polling thread; the
 * watchdog on its own thread.  Locks: a->lock guards the list of open
 * connections and their deadlines (the polling thread's callbacks and the
 * watchdog); libmicrohttpd closes a socket only after its
 * MHD_CONNECTION_NOTIFY_CLOSED, which takes the lock, so the watchdog never
 * shuts down a descriptor that was closed and reused.
 */
#define _GNU_SOURCE
#include "api.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dashboard.h"
#include "metrics.h"
#include "proxy.h"

/* An open API connection, for the watchdog (under a->lock). */
struct conn {
	struct conn *prev, *next;
	int fd;
	int64_t deadline_ns;          /* CLOCK_MONOTONIC; 0: receiving nothing now */
};

struct netem_api {
	struct MHD_Daemon *d;
	struct proxy_registry *r;
	int fd;
	pthread_mutex_t lock;
	pthread_cond_t cond;          /* the watchdog's sleep; signalled at stop */
	struct conn head;             /* circular list of open connections */
	int stop;
	int has_watchdog;
	pthread_t watchdog;
	/* the guard's: set at start, read-only after */
	int check_host;               /* listening on a loopback address */
	char self[INET6_ADDRSTRLEN + 2]; /* that address as a Host names it */
	char port[8];                 /* its port, as a Host writes it */
	char **allow;                 /* --allow-host names */
	unsigned nallow;
	char token[NETEM_DASHBOARD_TOKEN_LEN + 1]; /* the page's token, hex */
	const struct netem_metrics_cfg *metrics; /* GET /metrics (NULL: 404, as
						    toxiproxy without its flags) */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* @c's request window: from now (@on) or none (the request is in, the
 * answer going out). */
static void conn_window(struct netem_api *a, struct MHD_Connection *c, int on)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;
	if (!k)
		return;
	pthread_mutex_lock(&a->lock);
	k->deadline_ns = on ? now_ns() + (int64_t)API_REQ_TIMEOUT_S * 1000000000 : 0;
	pthread_mutex_unlock(&a->lock);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct netem_api *a = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct conn *k = ci ? calloc(1, sizeof(*k)) : NULL;
		if (!k)
			return; /* out of memory: only the idle timeout bounds it */
		k->fd = ci->connect_fd;
		pthread_mutex_lock(&a->lock);
		k->deadline_ns = now_ns() + (int64_t)API_REQ_TIMEOUT_S * 1000000000;
		k->next = a->head.next;
		k->prev = &a->head;
		a->head.next->prev = k;
		a->head.next = k;
		pthread_mutex_unlock(&a->lock);
		*socket_context = k;
		return;
	}
	struct conn *k = *socket_context;
	if (!k)
		return;
	pthread_mutex_lock(&a->lock);
	k->prev->next = k->next;
	k->next->prev = k->prev;
	pthread_mutex_unlock(&a->lock);
	free(k);
	*socket_context = NULL;
}

/* Cut the connections whose request is late: shutdown() makes
 * libmicrohttpd read the end of the stream and close it. */
static void *watchdog(void *arg)
{
	struct netem_api *a = arg;
	pthread_mutex_lock(&a->lock);
	while (!a->stop) {
		int64_t now = now_ns();
		for (struct conn *k = a->head.next; k != &a->head; k = k->next)
			if (k->deadline_ns && k->deadline_ns <= now) {
				shutdown(k->fd, SHUT_RDWR);
				k->deadline_ns = 0;
			}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += API_WATCHDOG_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&a->cond, &a->lock, &ts);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* A request's body as it arrives; a request the guard refused keeps its
 * answer here and none of its body. */
struct req {
	char *buf;
	size_t len, cap;
	int too_big;
	unsigned refused;             /* the guard's status, or 0 */
	char *refusal;                /* and its body */
	const char *refusal_ctype;
};

/* ------------------------------------------------------------ the guard */

static const char CT_TEXT[] = "text/plain; charset=utf-8";

/* One request as the guard's rules see it. */
struct guard_req {
	struct MHD_Connection *c;
	const char *method, *url;
};

/* A rule's refusal. */
struct guard_answer {
	unsigned status;
	char *body;                   /* malloc'd */
	const char *ctype;
};

/* The exceptions a request may carry, as bits (the opening comment says
 * why each is safe; only the browser rule names them). */
enum {
	GUARD_EX_PAGE = 1u << 0,      /* GET/HEAD of the dashboard's page */
	GUARD_EX_TOKEN = 1u << 1,     /* the page's token in X-Pinwheel-Token */
};

#define TOKEN_HEADER "X-Pinwheel-Token"

static int is_read(const char *method)
{
	return !strcmp(method, "GET") || !strcmp(method, "HEAD");
}

static int is_page_path(const char *url)
{
	return !strcmp(url, "/") || !strcmp(url, NETEM_DASHBOARD_PATH);
}

/* Is @v this process's token?  Constant time over the token's length: no
 * early exit on the first differing byte. */
static int token_ok(const struct netem_api *a, const char *v)
{
	if (strlen(v) != NETEM_DASHBOARD_TOKEN_LEN)
		return 0;
	unsigned char d = 0;
	for (size_t i = 0; i < NETEM_DASHBOARD_TOKEN_LEN; i++)
		d |= (unsigned char)(v[i] ^ a->token[i]);
	return d == 0;
}

struct token_walk {
	const struct netem_api *a;
	int seen, good;
};

static enum MHD_Result token_visit(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct token_walk *w = cls;
	(void)kind;
	if (key && !strcasecmp(key, TOKEN_HEADER)) {
		w->seen++;
		w->good += value && token_ok(w->a, value);
	}
	return MHD_YES;
}

/* The exceptions request @q carries.  The token counts only when every
 * X-Pinwheel-Token header the request has carries it. */
static unsigned guard_exceptions(const struct netem_api *a, const struct guard_req *q)
{
	unsigned ex = is_read(q->method) && is_page_path(q->url) ? GUARD_EX_PAGE : 0;
	struct token_walk w = { .a = a };
	MHD_get_connection_values(q->c, MHD_HEADER_KIND, token_visit, &w);
	if (w.seen && w.good == w.seen)
		ex |= GUARD_EX_TOKEN;
	return ex;
}

/* A header's values, for the rules: each one of @key given to @fn until
 * it says stop. */
struct header_walk {
	const char *key;
	int (*fn)(struct header_walk *w, const char *value);
	const struct netem_api *a;
	int hit;                      /* set by @fn: the rule refuses */
	const char *bad;              /* the value refused */
};

static enum MHD_Result header_visit(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct header_walk *w = cls;
	(void)kind;
	if (!key || strcasecmp(key, w->key))
		return MHD_YES;
	return w->fn(w, value ? value : "") ? MHD_NO : MHD_YES;
}

static void header_each(struct MHD_Connection *c, struct header_walk *w)
{
	MHD_get_connection_values(c, MHD_HEADER_KIND, header_visit, w);
}

static int is_browser(struct header_walk *w, const char *ua)
{
	if (strncmp(ua, "Mozilla/", 8))
		return 0;
	w->hit = 1;
	return 1;
}

/* browser: toxiproxy's StopBrowsersMiddleware */
static int rule_browser(const struct netem_api *a, const struct guard_req *q,
			struct guard_answer *ans)
{
	struct header_walk w = { .key = MHD_HTTP_HEADER_USER_AGENT, .fn = is_browser, .a = a };
	header_each(q->c, &w);
	if (!w.hit)
		return 0;
	ans->status = 403;
	ans->body = strdup("User agent not allowed\n");
	ans->ctype = CT_TEXT;
	return 1;
}

/* Does @host (the Host header's name, @n bytes, no port) name this API? */
static int host_is_ours(const struct netem_api *a, const char *host, size_t n)
{
	static const char *const loop[] = { "localhost", "127.0.0.1", "[::1]" };
	for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++)
		if (strlen(loop[i]) == n && !strncasecmp(host, loop[i], n))
			return 1;
	if (strlen(a->self) == n && !strncasecmp(host, a->self, n))
		return 1;
	for (unsigned i = 0; i < a->nallow; i++)
		if (strlen(a->allow[i]) == n && !strncasecmp(host, a->allow[i], n))
			return 1;
	return 0;
}

/* A Host value: NAME, NAME:PORT, [V6] or [V6]:PORT, the port the API's. */
static int host_ok(struct header_walk *w, const char *v)
{
	const char *end = v[0] == '[' ? strchr(v, ']') : NULL;
	const char *colon = v[0] == '[' ? (end ? end + 1 : NULL) : strchr(v, ':');
	size_t n = v[0] == '[' ? (end ? (size_t)(end - v + 1) : 0) : colon ? (size_t)(colon - v)
									     : strlen(v);
	int ok = n && host_is_ours(w->a, v, n);
	if (ok && colon && *colon) /* a port: the API's, and nothing after it */
		ok = *colon == ':' && !strcmp(colon + 1, w->a->port);
	if (ok)
		return 0;
	w->hit = 1;
	w->bad = v;
	return 1;
}

/* host: against DNS rebinding, on a loopback API only */
static int rule_host(const struct netem_api *a, const struct guard_req *q,
		     struct guard_answer *ans)
{
	if (!a->check_host)
		return 0;
	struct header_walk w = { .key = MHD_HTTP_HEADER_HOST, .fn = host_ok, .a = a };
	header_each(q->c, &w);
	if (!w.hit)
		return 0;
	/* the Host as the message shows it: printable ASCII, quotes and
	 * backslashes kept out of the JSON, at most 100 bytes */
	char shown[101];
	size_t k = 0;
	for (const char *p = w.bad; *p && k < sizeof(shown) - 1; p++)
		shown[k++] = isprint((unsigned char)*p) && *p != '"' && *p != '\\' ? *p : '?';
	shown[k] = '\0';
	ans->status = 403;
	if (asprintf(&ans->body,
		     "{\"error\":\"Host \\\"%s\\\" does not name this API (%s:%s, localhost): "
		     "refused against DNS rebinding; --allow-host NAME admits a name\","
		     "\"status\":403}\n",
		     shown, a->self, a->port) < 0)
		ans->body = NULL;
	ans->ctype = CT_TEXT;
	return 1;
}

/* The rules, in order.  lifted_by: the exceptions (guard_exceptions()'s
 * bits) that lift a rule; the host rule's is and stays 0. */
static const struct guard_rule {
	const char *what;
	unsigned lifted_by;
	int (*refuse)(const struct netem_api *a, const struct guard_req *q,
		      struct guard_answer *ans);
} guard_rules[] = {
	{ "browser", GUARD_EX_PAGE | GUARD_EX_TOKEN, rule_browser },
	{ "host", 0, rule_host },
};

/* Every rule on request @q: 0 when it may go on, else the status of the
 * first refusal with its answer in @ans (a body NULL when out of memory:
 * the status alone). */
static unsigned guard(const struct netem_api *a, const struct guard_req *q,
		      struct guard_answer *ans)
{
	unsigned ex = guard_exceptions(a, q);
	for (size_t i = 0; i < sizeof(guard_rules) / sizeof(guard_rules[0]); i++) {
		if (guard_rules[i].lifted_by & ex)
			continue;
		memset(ans, 0, sizeof(*ans));
		if (guard_rules[i].refuse(a, q, ans))
			return ans->status;
	}
	return 0;
}

static const char too_big_body[] =
	"{\"error\":\"request body larger than 1048576 bytes\",\"status\":413}\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body,
			     const char *ctype)
{
	struct MHD_Response *rs;
	if (body)
		rs = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	else
		rs = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!rs) {
		free(body);
		return MHD_NO;
	}
	if (body && ctype)
		MHD_add_response_header(rs, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(rs, "X-Content-Type-Options", "nosniff");
	enum MHD_Result ret = MHD_queue_response(c, status, rs);
	MHD_destroy_response(rs);
	return ret;
}

/* The dashboard's page with @a's token: from memory, with a policy that
 * lets it load nothing from elsewhere, talk only to this origin, and not
 * be framed or cached. */
static enum MHD_Result reply_page(const struct netem_api *a, struct MHD_Connection *c)
{
	size_t len;
	char *page = netem_dashboard_page(a->token, &len);
	if (!page)
		return MHD_NO;
	struct MHD_Response *rs =
		MHD_create_response_from_buffer(len, page, MHD_RESPMEM_MUST_FREE);
	if (!rs) {
		free(page);
		return MHD_NO;
	}
	MHD_add_response_header(rs, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
	MHD_add_response_header(rs, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(rs, "X-Frame-Options", "DENY");
	MHD_add_response_header(rs, "Cache-Control", "no-store");
	MHD_add_response_header(rs, "Content-Security-Policy",
				"default-src 'none'; script-src 'unsafe-inline'; "
				"style-src 'unsafe-inline'; connect-src 'self'; "
				"base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, rs);
	MHD_destroy_response(rs);
	return ret;
}

static enum MHD_Result reply_too_big(struct MHD_Connection *c)
{
	char *b = strdup(too_big_body);
	return b ? reply(c, 413, b, "application/json") : MHD_NO;
}

/* libmicrohttpd calls it: once with the headers, once per piece of body,
 * once at the end (*upload_size 0), where the answer is queued. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct netem_api *a = cls;
	struct req *q = *con_cls;
	(void)version;
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return MHD_NO;
		*con_cls = q;
		struct guard_req g = { c, method, url };
		struct guard_answer ans;
		if ((q->refused = guard(a, &g, &ans))) {
			q->refusal = ans.body;
			q->refusal_ctype = ans.ctype;
		}
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > API_MAX_BODY) {
			q->too_big = 1;
			conn_window(a, c, 0);
			if (q->refused) { /* the body is never read */
				char *b = q->refusal;
				q->refusal = NULL;
				return reply(c, q->refused, b, q->refusal_ctype);
			}
			return reply_too_big(c);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (q->too_big || q->refused)
			return MHD_YES; /* read, not kept */
		if (q->len + n > API_MAX_BODY) {
			q->too_big = 1;
			free(q->buf);
			q->buf = NULL;
			q->len = q->cap = 0;
			return MHD_YES;
		}
		if (q->len + n + 1 > q->cap) {
			size_t cap = q->cap ? q->cap : 1024;
			while (cap < q->len + n + 1)
				cap *= 2;
			char *b = realloc(q->buf, cap);
			if (!b)
				return MHD_NO;
			q->buf = b;
			q->cap = cap;
		}
		memcpy(q->buf + q->len, upload, n);
		q->len += n;
		q->buf[q->len] = '\0';
		return MHD_YES;
	}
	conn_window(a, c, 0); /* the whole request is in */
	if (q->refused) {
		char *b = q->refusal;
		q->refusal = NULL;
		return reply(c, q->refused, b, q->refusal_ctype);
	}
	if (q->too_big)
		return reply_too_big(c);
	char *body = NULL;
	const char *ctype = NULL;
	if (a->metrics && (a->metrics->proxy || a->metrics->runtime || a->metrics->relay_json) &&
	    !strcmp(url, "/metrics") &&
	    (!strcmp(method, "GET") || !strcmp(method, "HEAD"))) {
		/* Prometheus' scrape (metrics.c); behind the same guard */
		body = netem_metrics_text(a->r, a->metrics);
		if (!body)
			return reply(c, 500, strdup("{\"error\":\"out of memory\",\"status\":500}\n"),
				     "application/json");
		return reply(c, 200, body, NETEM_METRICS_CTYPE);
	}
	if (!a->r) /* --metrics: nothing else */
		return reply(c, 404, strdup("404 page not found\n"), "text/plain; charset=utf-8");
	if (is_read(method) && is_page_path(url))
		return reply_page(a, c);
	if (is_read(method) && !strcmp(url, NETEM_DASHBOARD_DATA_PATH)) {
		/* the page's data (dashboard.c): read-only, whatever the flags;
		 * a browser's only with the token */
		body = netem_dashboard_data(a->r);
		if (!body)
			return reply(c, 500, strdup("{\"error\":\"out of memory\",\"status\":500}\n"),
				     "application/json");
		return reply(c, 200, body, "application/json");
	}
	int status = proxy_api_request(a->r, method, url, q->buf, q->len, &body, &ctype);
	return reply(c, (unsigned)status, body, ctype);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct req *q = *con_cls;
	(void)toe;
	conn_window(cls, c, 1); /* a kept-alive connection's next request */
	if (q) {
		free(q->buf);
		free(q->refusal);
		free(q);
		*con_cls = NULL;
	}
}

static int fail(char *err, size_t errlen, const char *opt, const struct sockaddr *addr,
		const char *what, int e)
{
	char h[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)addr;
		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof(h));
		port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const void *)addr;
		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof(h));
		port = ntohs(s4->sin_port);
	}
	snprintf(err, errlen, "%s %s%s%s:%u: %s: %s", opt, addr->sa_family == AF_INET6 ? "[" : "", h,
		 addr->sa_family == AF_INET6 ? "]" : "", port, what, strerror(e));
	return -e;
}

/* Is @ss a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104)? */
static int is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)ss)->sin_addr.s_addr) >> 24) ==
		       127;
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

/* An --allow-host name: a host as a Host header names it, without port
 * (an IPv6 address in brackets).  Return: 0, or -EINVAL with @err. */
static int allow_host_check(const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);
	int v6 = name[0] == '[' && n > 2 && name[n - 1] == ']';
	int bad = !n || n > 253;
	for (size_t i = 0; i < n && !bad; i++) {
		unsigned char ch = (unsigned char)name[i];
		bad = !isalnum(ch) && ch != '-' && ch != '.' && ch != '_' &&
		      !(v6 && (ch == ':' || ch == '[' || ch == ']'));
	}
	if (!bad)
		return 0;
	snprintf(err, errlen, "--allow-host \"%.*s\": expected a host name or address as a Host "
			      "header gives it, without the port (an IPv6 address in brackets)",
		 (int)(n > 100 ? 100 : n), name);
	return -EINVAL;
}

int netem_api_start(struct proxy_registry *r, const struct sockaddr *addr, socklen_t len,
		    const char *const *allow_host, unsigned nallow_host,
		    const struct netem_metrics_cfg *metrics, struct netem_api **out,
		    struct sockaddr_storage *bound, socklen_t *bound_len, char *err, size_t errlen)
{
	const char *opt = r ? "--api" : "--metrics"; /* what names @addr in messages */
	for (unsigned i = 0; i < nallow_host; i++)
		if (allow_host_check(allow_host[i], err, errlen))
			return -EINVAL;
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fail(err, errlen, opt, addr, "socket", errno);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, addr, len) || listen(fd, 128)) {
		int e = errno;
		close(fd);
		return fail(err, errlen, opt, addr, "bind", e);
	}
	*bound_len = sizeof(*bound);
	getsockname(fd, (struct sockaddr *)bound, bound_len);
	struct netem_api *a = calloc(1, sizeof(*a));
	if (!a) {
		close(fd);
		return fail(err, errlen, opt, addr, "start", ENOMEM);
	}
	a->r = r;
	a->metrics = metrics;
	a->fd = fd;
	a->head.next = a->head.prev = &a->head;
	a->check_host = is_loopback(bound);
	unsigned char rnd[NETEM_DASHBOARD_TOKEN_LEN / 2];
	size_t got = 0;
	while (got < sizeof(rnd)) {
		ssize_t k = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = k < 0 ? errno : EIO;
			free(a);
			close(fd);
			return fail(err, errlen, opt, addr, "getrandom for the dashboard's token", e);
		}
		got += (size_t)k;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(a->token + 2 * i, 3, "%02x", rnd[i]);
	char h[INET6_ADDRSTRLEN] = "?";
	if (bound->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)bound;
		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof(h));
		snprintf(a->self, sizeof(a->self), "[%s]", h);
		snprintf(a->port, sizeof(a->port), "%u", ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)bound;
		inet_ntop(AF_INET, &s4->sin_addr, a->self, sizeof(a->self));
		snprintf(a->port, sizeof(a->port), "%u", ntohs(s4->sin_port));
	}
	a->allow = nallow_host ? calloc(nallow_host, sizeof(a->allow[0])) : NULL;
	for (unsigned i = 0; a->allow && i < nallow_host; i++)
		if ((a->allow[a->nallow] = strdup(allow_host[i])))
			a->nallow++;
	if (nallow_host && a->nallow < nallow_host) {
		for (unsigned i = 0; i < a->nallow; i++)
			free(a->allow[i]);
		free(a->allow);
		free(a);
		close(fd);
		return fail(err, errlen, opt, addr, "start", ENOMEM);
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_cond_init(&a->cond, &ca);
	pthread_condattr_destroy(&ca);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
			 (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL
										: MHD_USE_POLL);
	if (addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	a->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, a,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)API_MAX_CONNS,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)a,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, (void *)a,
				MHD_OPTION_END);
	int e = a->d ? pthread_create(&a->watchdog, NULL, watchdog, a) : EIO;
	if (e) {
		if (a->d)
			MHD_stop_daemon(a->d); /* closes the listener */
		else
			close(fd);
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		for (unsigned i = 0; i < a->nallow; i++)
			free(a->allow[i]);
		free(a->allow);
		free(a);
		return fail(err, errlen, opt, addr,
			    e == EIO ? "libmicrohttpd did not start" : "no watchdog thread", e);
	}
	a->has_watchdog = 1;
	*out = a;
	return 0;
}

void netem_api_stop(struct netem_api *a)
{
	if (!a)
		return;
	MHD_stop_daemon(a->d); /* joins the polling thread; closes the listener */
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
	if (a->has_watchdog)
		pthread_join(a->watchdog, NULL);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	for (unsigned i = 0; i < a->nallow; i++)
		free(a->allow[i]);
	free(a->allow);
	free(a);
}
