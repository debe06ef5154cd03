/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's API registry (tools/netem/api/proxy.c) through its one
 * request handler, over a fake data plane that records what it is told:
 * every endpoint's status codes and bodies (toxiproxy 2.8.0's, checked on
 * the real server; the differences kept on purpose are in docs/relay.md),
 * bad input (malformed JSON, wrong types, unknown toxic types, values out
 * of range, missing fields, duplicates, unknown names, the plane refusing
 * a listen or a tc toxic), and after each step the registry's state and
 * the plane's.  No socket, no thread: deterministic; run under ASan for
 * leaks.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proxy.h"

/* ------------------------------------------------------------ fake plane */

struct fake_proxy {
	char name[PROXY_NAME_MAX];
	unsigned port;
	unsigned ntox;
	char tox_names[PROXY_MAX_TOXICS][TOXIC_NAME_MAX];
	unsigned set_upstreams;
	unsigned up_port;
	socklen_t up_len;            /* 0: no upstream yet (the plane's state) */
};

static struct fake {
	unsigned open, opened, closed, next_port, validated;
	unsigned fail_opens;         /* the next opens to refuse (a port taken meanwhile) */
	struct fake_proxy *live[2048];
} F;

static struct fake_proxy *fake_find(const char *name)
{
	for (unsigned i = 0; i < 2048; i++)
		if (F.live[i] && !strcmp(F.live[i]->name, name))
			return F.live[i];
	return NULL;
}

static int f_open(void *ctx, const char *name, const struct sockaddr *listen, socklen_t listen_len,
		  const struct sockaddr *upstream, socklen_t upstream_len, void **handle,
		  struct sockaddr_storage *bound, socklen_t *bound_len, char *err, size_t errlen)
{
	(void)ctx;
	CHECK(listen->sa_family == AF_INET || listen->sa_family == AF_INET6);
	int v6 = listen->sa_family == AF_INET6;
	unsigned port = v6 ? ntohs(((const struct sockaddr_in6 *)listen)->sin6_port)
			   : ntohs(((const struct sockaddr_in *)listen)->sin_port);
	if (F.fail_opens) {
		F.fail_opens--;
		snprintf(err, errlen, "listen 127.0.0.1:%u: taken meanwhile", port);
		return -EADDRINUSE;
	}
	for (unsigned i = 0; i < 2048; i++)
		if (F.live[i] && F.live[i]->port == port) {
			snprintf(err, errlen, "listen 127.0.0.1:%u: address already in use", port);
			return -EADDRINUSE;
		}
	if (!port)
		port = F.next_port++;
	struct fake_proxy *p = calloc(1, sizeof(*p));
	CHECK(p);
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->port = port;
	/* no upstream yet is upstream_len 0, never a placeholder address */
	CHECK(!upstream_len || upstream->sa_family == AF_INET ||
	      upstream->sa_family == AF_INET6);
	p->up_len = upstream_len;
	p->up_port = !upstream_len ? 0
		     : upstream->sa_family == AF_INET6
			     ? ntohs(((const struct sockaddr_in6 *)upstream)->sin6_port)
			     : ntohs(((const struct sockaddr_in *)upstream)->sin_port);
	unsigned i = 0;
	while (F.live[i])
		i++;
	F.live[i] = p;
	memcpy(bound, listen, listen_len);
	if (v6)
		((struct sockaddr_in6 *)bound)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)bound)->sin_port = htons((uint16_t)port);
	*bound_len = listen_len;
	*handle = p;
	F.open++;
	F.opened++;
	return 0;
}

static void f_stats(void *ctx, void *handle, struct tcp_proxy_stats *s);

/* the final counters: the active connections closed, what they held dropped */
static void f_close(void *ctx, void *handle, struct tcp_proxy_stats *final)
{
	(void)ctx;
	f_stats(ctx, handle, final);
	final->closed += final->active;
	final->active = 0;
	for (int d = 0; d < TOXIC_NSTREAMS; d++) {
		final->dir[d].bytes_dropped += final->dir[d].held;
		final->dir[d].held = 0;
	}
	for (unsigned i = 0; i < 2048; i++)
		if (F.live[i] == handle)
			F.live[i] = NULL;
	free(handle);
	F.open--;
	F.closed++;
}

static int f_set_upstream(void *ctx, void *handle, const struct sockaddr *up, socklen_t len)
{
	(void)ctx;
	struct fake_proxy *p = handle;
	p->set_upstreams++;
	p->up_len = len;
	p->up_port = len ? ntohs(((const struct sockaddr_in *)up)->sin_port) : 0;
	return 0;
}

static int f_set_toxics(void *ctx, void *handle, const struct toxic *t, unsigned n, char *err,
			size_t errlen)
{
	(void)ctx;
	struct fake_proxy *p = handle;
	for (unsigned i = 0; i < n; i++)
		if (t[i].type == TOXIC_TC && t[i].a.tc.qdisc && strstr(t[i].a.tc.qdisc, "loss")) {
			snprintf(err, errlen, "qdisc \"%s\": netem loss has no meaning on a byte stream",
				 t[i].a.tc.qdisc);
			return -EINVAL;
		}
	p->ntox = n;
	for (unsigned i = 0; i < n; i++)
		snprintf(p->tox_names[i], TOXIC_NAME_MAX, "%s", t[i].name);
	return 0;
}

/* the plane's check without a proxy: the same refusal as f_set_toxics */
static int f_validate(void *ctx, const struct toxic *t, char *err, size_t errlen)
{
	(void)ctx;
	F.validated++;
	if (t->type == TOXIC_TC && t->a.tc.qdisc && strstr(t->a.tc.qdisc, "loss")) {
		snprintf(err, errlen, "qdisc \"%s\": netem loss has no meaning on a byte stream",
			 t->a.tc.qdisc);
		return -EINVAL;
	}
	return 0;
}

static void f_stats(void *ctx, void *handle, struct tcp_proxy_stats *s)
{
	(void)ctx;
	(void)handle;
	memset(s, 0, sizeof(*s));
	s->accepted = 5;
	s->active = 2;
	s->closed = 3;
	s->fd_exhausted = 1;
	s->dir[TOXIC_DOWNSTREAM].bytes_in = 1000;
	s->dir[TOXIC_DOWNSTREAM].bytes_out = 900;
	s->dir[TOXIC_DOWNSTREAM].held = 100;
	/* three delays of 50.0-50.3 ms (one bucket, 46.1-50.3), one of 150 */
	s->dir[TOXIC_DOWNSTREAM].delay_count = 4;
	s->dir[TOXIC_DOWNSTREAM].delay_sum_ns = 300400000;
	s->dir[TOXIC_DOWNSTREAM].delay_min_ns = 50000000;
	s->dir[TOXIC_DOWNSTREAM].delay_max_ns = 150000000;
	s->dir[TOXIC_DOWNSTREAM].delay_hist[tcp_delay_bucket(50100000)] = 3;
	s->dir[TOXIC_DOWNSTREAM].delay_hist[tcp_delay_bucket(150000000)] = 1;
	s->dir[TOXIC_DOWNSTREAM].rate_ns = 2000000000; /* 20 windows judged */
	s->dir[TOXIC_DOWNSTREAM].rate_bytes = 190000;  /* 95 KB/s */
}

static const struct proxy_plane_ops fake_ops = {
	.open = f_open,
	.close = f_close,
	.set_upstream = f_set_upstream,
	.set_toxics = f_set_toxics,
	.stats = f_stats,
	.validate = f_validate,
};

/* A second fake plane for "protocol":"udp" proxies: the same proxies,
 * stream-only toxics refused, its statistics as JSON text. */
static unsigned udp_validated;

static int u_validate(void *ctx, const struct toxic *t, char *err, size_t errlen)
{
	(void)ctx;
	udp_validated++;
	if (t->type == TOXIC_SLICER) {
		snprintf(err, errlen, "toxic %s: type slicer acts on a TCP stream", t->name);
		return -EINVAL;
	}
	return 0;
}

static char *u_stats_json(void *ctx, void *handle)
{
	(void)ctx;
	(void)handle;
	static const char j[] = "{\"clients\":1,\"upstream\":{\"rx\":3}}";
	char *t = malloc(sizeof(j));
	if (t)
		memcpy(t, j, sizeof(j));
	return t;
}

static const struct proxy_plane_ops fake_udp_ops = {
	.open = f_open,
	.close = f_close,
	.set_upstream = f_set_upstream,
	.set_toxics = f_set_toxics,
	.stats = f_stats,
	.validate = u_validate,
	.stats_json = u_stats_json,
};

/* A udp fake plane that keeps a ledger across opens (close_keep): the
 * number of closes, and how many ledgers were freed. */
static unsigned kept_freed;

static void k_close_keep(void *ctx, void *handle, void **kept)
{
	struct tcp_proxy_stats dummy;
	f_close(ctx, handle, &dummy);
	if (!*kept)
		*kept = calloc(1, sizeof(unsigned));
	if (*kept)
		(*(unsigned *)*kept)++;
}

static char *k_kept_json(void *ctx, void *handle, const void *kept)
{
	(void)ctx;
	char *t = malloc(64);
	if (t)
		snprintf(t, 64, "{\"closes\":%u,\"open\":%s}", kept ? *(const unsigned *)kept : 0,
			 handle ? "true" : "false");
	return t;
}

static void k_kept_free(void *ctx, void *kept)
{
	(void)ctx;
	kept_freed++;
	free(kept);
}

static const struct proxy_plane_ops keep_udp_ops = {
	.open = f_open,
	.close = f_close,
	.set_upstream = f_set_upstream,
	.set_toxics = f_set_toxics,
	.validate = u_validate,
	.stats_json = u_stats_json,
	.close_keep = k_close_keep,
	.kept_json = k_kept_json,
	.kept_free = k_kept_free,
};

/* ------------------------------------------------------------ requests */

static struct proxy_registry *R;
static char *body;           /* the last answer's */
static const char *ctype;

static int req(const char *m, const char *path, const char *b)
{
	free(body);
	body = NULL;
	int st = proxy_api_request(R, m, path, b, b ? strlen(b) : 0, &body, &ctype);
	CHECK((body == NULL) == (ctype == NULL));
	return st;
}

/* the status and the exact body */
#define EXPECT(m, path, b, status, want)                                                   \
	do {                                                                               \
		int st_ = req(m, path, b);                                                 \
		if (st_ != (status) || !body || strcmp(body, want)) {                      \
			fprintf(stderr, "%s %s: got %d %s\n  want %d %s\n", m, path, st_,  \
				body ? body : "(none)", status, want);                     \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* the status, and the body containing @part */
#define EXPECT_HAS(m, path, b, status, part)                                               \
	do {                                                                               \
		int st_ = req(m, path, b);                                                 \
		if (st_ != (status) || !body || !strstr(body, part)) {                     \
			fprintf(stderr, "%s %s: got %d %s\n  want %d ...%s...\n", m, path, \
				st_, body ? body : "(none)", status, part);                \
			abort();                                                           \
		}                                                                          \
	} while (0)

static unsigned count(void)
{
	return proxy_registry_count(R, NULL);
}

static void setup_flags(unsigned flags)
{
	memset(&F, 0, sizeof(F));
	F.next_port = 40000;
	CHECK_EQ(proxy_registry_create(&fake_ops, NULL, flags, &R), 0);
}

static void setup(void)
{
	setup_flags(PROXY_NUMERIC_HOSTS);
}

static void teardown(void)
{
	proxy_registry_destroy(R);
	R = NULL;
	CHECK_EQ(F.open, 0);
	CHECK_EQ(F.opened, F.closed);
	free(body);
	body = NULL;
}

#define A_JSON "{\"name\":\"a\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\"}"

/* ------------------------------------------------------------ tests */

static void test_version_and_paths(void)
{
	setup();
	EXPECT("GET", "/version", NULL, 200, "{\"version\": \"2.8.0-pinwheel\"}");
	CHECK(!strcmp(ctype, "application/json;charset=utf-8"));
	EXPECT("GET", "/proxies", NULL, 200, "{}");
	CHECK(!strcmp(ctype, "application/json"));
	EXPECT("GET", "/nothing", NULL, 404, "404 page not found\n");
	EXPECT("GET", "/proxies/", NULL, 404, "404 page not found\n");
	EXPECT("GET", "//", NULL, 404, "404 page not found\n");
	EXPECT("GET", "", NULL, 404, "404 page not found\n");
	EXPECT("GET", "proxies", NULL, 404, "404 page not found\n");
	EXPECT("GET", "/proxies/a/toxics/t/x", NULL, 404, "404 page not found\n");
	EXPECT("GET", "/proxies/a/other", NULL, 404, "404 page not found\n");
	/* a known path with another method: 405, no body */
	CHECK_EQ(req("DELETE", "/proxies", NULL), 405);
	CHECK(!body);
	CHECK_EQ(req("PUT", "/proxies/a", NULL), 405);
	CHECK_EQ(req("POST", "/version", NULL), 405);
	CHECK_EQ(req("GET", "/reset", NULL), 405);
	CHECK_EQ(req("GET", "/populate", NULL), 405);
	CHECK_EQ(req("DELETE", "/proxies/a/toxics", NULL), 405);
	CHECK_EQ(req("POST", "/proxies/a/stats", NULL), 405);
	CHECK(!body);
	teardown();
}

static void test_proxy_create(void)
{
	setup();
	EXPECT("POST", "/proxies", A_JSON, 201,
	       "{\"name\":\"a\",\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:9\","
	       "\"enabled\":true,\"toxics\":[]}");
	CHECK_EQ(F.open, 1);
	EXPECT("POST", "/proxies", A_JSON, 409, "{\"error\":\"proxy already exists\",\"status\":409}\n");
	CHECK(!strcmp(ctype, "text/plain; charset=utf-8"));
	/* missing fields, wrong types, bad JSON: 400, nothing made */
	EXPECT("POST", "/proxies", "{\"upstream\":\"127.0.0.1:9\"}", 400,
	       "{\"error\":\"missing required field: name\",\"status\":400}\n");
	EXPECT("POST", "/proxies", "{\"name\":\"\",\"upstream\":\"127.0.0.1:9\"}", 400,
	       "{\"error\":\"missing required field: name\",\"status\":400}\n");
	EXPECT("POST", "/proxies", "{\"name\":\"b\"}", 400,
	       "{\"error\":\"missing required field: upstream\",\"status\":400}\n");
	EXPECT("POST", "/proxies", "", 400, "{\"error\":\"bad request body: EOF\",\"status\":400}\n");
	EXPECT_HAS("POST", "/proxies", "{bad", 400, "bad request body: ");
	EXPECT_HAS("POST", "/proxies", "[]", 400, "bad request body: expected a JSON object");
	EXPECT_HAS("POST", "/proxies", "{\"name\":5,\"upstream\":\"127.0.0.1:9\"}", 400,
		   "name: expected a string");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:9\",\"enabled\":\"yes\"}",
		   400, "enabled: expected true or false");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:9\",\"protocol\":\"udp\"}",
		   400, "protocol udp: no UDP plane in this server");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:9\",\"protocol\":\"sctp\"}",
		   400, "protocol \\\"sctp\\\": expected tcp or udp");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1\"}", 400,
		   "missing port");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:0\"}", 400,
		   "port 0 is no server port");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:70000\"}", 400,
		   "port 0..65535");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"no.such.host:80\"}", 400,
		   "upstream \\\"no.such.host\\\"");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"listen\":\"nonsense\",\"upstream\":\"127.0.0.1:9\"}",
		   400, "listen \\\"nonsense\\\": missing port");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"[::1:9\"}", 400, "HOST:PORT");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b/c\",\"upstream\":\"127.0.0.1:9\"}", 400,
		   "cannot be addressed");
	char big[400];
	snprintf(big, sizeof(big), "{\"name\":\"%0200d\",\"upstream\":\"127.0.0.1:9\"}", 0);
	EXPECT_HAS("POST", "/proxies", big, 400, "longer than 127 bytes");
	/* the listen address in use: the plane's message, 500 as toxiproxy */
	EXPECT("POST", "/proxies", "{\"name\":\"b\",\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:9\"}",
	       500, "{\"error\":\"listen 127.0.0.1:40000: address already in use\",\"status\":500}\n");
	CHECK_EQ(count(), 1);
	CHECK_EQ(F.open, 1);
	/* defaults: listen 127.0.0.1:0; extra fields ignored; disabled: not open */
	EXPECT("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:9\",\"x\":[1]}", 201,
	       "{\"name\":\"b\",\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:9\","
	       "\"enabled\":true,\"toxics\":[]}");
	EXPECT("POST", "/proxies",
	       "{\"name\":\"c\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\",\"enabled\":false,"
	       "\"protocol\":\"tcp\"}",
	       201, "{\"name\":\"c\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\","
		    "\"enabled\":false,\"toxics\":[]}");
	unsigned open;
	CHECK_EQ(proxy_registry_count(R, &open), 3);
	CHECK_EQ(open, 2);
	CHECK_EQ(F.open, 2);
	/* GET: the map in name order; one; unknown */
	EXPECT_HAS("GET", "/proxies", NULL, 200, "{\"a\":{\"name\":\"a\"");
	CHECK(strstr(body, "},\"b\":{") && strstr(body, "},\"c\":{"));
	EXPECT("GET", "/proxies/c", NULL, 200,
	       "{\"name\":\"c\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\","
	       "\"enabled\":false,\"toxics\":[]}");
	EXPECT("GET", "/proxies/zz", NULL, 404, "{\"error\":\"proxy not found\",\"status\":404}\n");
	EXPECT("GET", "/proxies/zz/toxics", NULL, 404, "{\"error\":\"proxy not found\",\"status\":404}\n");
	EXPECT("POST", "/proxies/zz/toxics", "{\"type\":\"latency\"}", 404,
	       "{\"error\":\"proxy not found\",\"status\":404}\n");
	/* delete: 204, closed in the plane, then 404 */
	CHECK_EQ(req("DELETE", "/proxies/b", NULL), 204);
	CHECK(!body);
	CHECK_EQ(F.open, 1);
	CHECK(!fake_find("b"));
	EXPECT("DELETE", "/proxies/b", NULL, 404, "{\"error\":\"proxy not found\",\"status\":404}\n");
	CHECK_EQ(count(), 2);
	teardown();
}

static void test_proxy_limit(void)
{
	setup();
	char b[160], name[32];
	for (int i = 0; i < PROXY_MAX; i++) {
		snprintf(b, sizeof(b), "{\"name\":\"p%04d\",\"upstream\":\"127.0.0.1:9\",\"enabled\":false}", i);
		CHECK_EQ(req("POST", "/proxies", b), 201);
	}
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"x\",\"upstream\":\"127.0.0.1:9\"}", 400,
		   "more than 1024 proxies");
	CHECK_EQ(count(), PROXY_MAX);
	for (int i = 0; i < PROXY_MAX; i += 2) {
		snprintf(name, sizeof(name), "/proxies/p%04d", i);
		CHECK_EQ(req("DELETE", name, NULL), 204);
	}
	CHECK_EQ(count(), PROXY_MAX / 2);
	EXPECT_HAS("GET", "/proxies/p0001", NULL, 200, "\"name\":\"p0001\"");
	EXPECT_HAS("GET", "/proxies/p0002", NULL, 404, "proxy not found");
	teardown();
}

static void test_proxy_update(void)
{
	setup();
	CHECK_EQ(req("POST", "/proxies", A_JSON), 201);
	CHECK_EQ(req("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"attributes\":{\"latency\":10}}"),
		 200);
	/* disable: closed in the plane; the listen shown stays the bound one */
	EXPECT_HAS("PATCH", "/proxies/a", "{\"enabled\":false}", 200,
		   "\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:9\",\"enabled\":false");
	CHECK_EQ(F.open, 0);
	/* enable with POST (toxiproxy takes it as an update): the same port,
	 * the toxics given to the new plane proxy */
	EXPECT_HAS("POST", "/proxies/a", "{\"enabled\":true,\"name\":\"ignored\"}", 200,
		   "{\"name\":\"a\",\"listen\":\"127.0.0.1:40000\"");
	CHECK_EQ(F.open, 1);
	CHECK_EQ(fake_find("a")->ntox, 1);
	/* upstream: as toxiproxy's stop and start, the proxy is closed (its
	 * connections with it) and opened again on the same bound address,
	 * with its toxics; the counters go on */
	EXPECT_HAS("PATCH", "/proxies/a", "{\"upstream\":\"127.0.0.1:10\"}", 200,
		   "\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:10\"");
	CHECK_EQ(fake_find("a")->set_upstreams, 0);
	CHECK_EQ(fake_find("a")->up_port, 10);
	CHECK_EQ(fake_find("a")->port, 40000);
	CHECK_EQ(fake_find("a")->ntox, 1);
	CHECK_EQ(F.opened, 3);
	CHECK_EQ(F.closed, 2);
	EXPECT_HAS("GET", "/proxies/a/stats", NULL, 200, "\"accepted\":15,");
	/* the same upstream again: nothing closes */
	CHECK_EQ(req("PATCH", "/proxies/a", "{\"upstream\":\"127.0.0.1:10\"}"), 200);
	CHECK_EQ(F.closed, 2);
	/* listen: re-bound */
	EXPECT_HAS("PATCH", "/proxies/a", "{\"listen\":\"127.0.0.1:0\"}", 200,
		   "\"listen\":\"127.0.0.1:40001\"");
	CHECK_EQ(F.opened, 4);
	CHECK_EQ(F.open, 1);
	CHECK_EQ(fake_find("a")->ntox, 1);
	/* nothing given: nothing changes */
	EXPECT_HAS("PATCH", "/proxies/a", "{}", 200, "\"listen\":\"127.0.0.1:40001\"");
	CHECK_EQ(F.opened, 4);
	/* bad input leaves it as it was */
	EXPECT_HAS("PATCH", "/proxies/a", "{\"upstream\":\"\"}", 400, "upstream: empty");
	EXPECT_HAS("PATCH", "/proxies/a", "{\"enabled\":1}", 400, "expected true or false");
	EXPECT_HAS("PATCH", "/proxies/a", "{bad", 400, "bad request body");
	EXPECT_HAS("PATCH", "/proxies/a", "", 400, "bad request body: EOF");
	EXPECT_HAS("PATCH", "/proxies/a", "{\"protocol\":\"udp\"}", 400, "no UDP plane");
	EXPECT("PATCH", "/proxies/zz", "{}", 404, "{\"error\":\"proxy not found\",\"status\":404}\n");
	EXPECT_HAS("GET", "/proxies/a", NULL, 200,
		   "\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:10\",\"enabled\":true");
	/* a listen in use (with a new upstream; by PATCH or POST): 500, as
	 * toxiproxy, and all or nothing: the fields, "enabled", the old
	 * listener (never closed) and its toxics as they were */
	CHECK_EQ(req("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:9\"}"), 201);
	unsigned closed = F.closed;
	static const char *const in_use[] = {
		"{\"listen\":\"127.0.0.1:40002\"}",
		"{\"listen\":\"127.0.0.1:40002\",\"upstream\":\"127.0.0.1:11\"}",
		"{\"listen\":\"127.0.0.1:40002\",\"upstream\":\"127.0.0.1:11\",\"enabled\":true}",
	};
	for (unsigned i = 0; i < 2 * sizeof(in_use) / sizeof(in_use[0]); i++) {
		EXPECT_HAS(i % 2 ? "POST" : "PATCH", "/proxies/a", in_use[i / 2], 500,
			   "address already in use");
		EXPECT_HAS("GET", "/proxies/a", NULL, 200,
			   "\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:10\",\"enabled\":true");
		CHECK(fake_find("a") && fake_find("a")->port == 40001);
		CHECK_EQ(fake_find("a")->up_port, 10);
		CHECK_EQ(fake_find("a")->ntox, 1);
		CHECK_EQ(F.open, 2);
		CHECK_EQ(F.closed, closed);
	}
	/* disabled, enabled on a listen in use: still disabled, its listen as before */
	CHECK_EQ(req("PATCH", "/proxies/a", "{\"enabled\":false}"), 200);
	EXPECT_HAS("PATCH", "/proxies/a",
		   "{\"listen\":\"127.0.0.1:40002\",\"upstream\":\"127.0.0.1:11\",\"enabled\":true}", 500,
		   "address already in use");
	EXPECT_HAS("GET", "/proxies/a", NULL, 200,
		   "\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:10\",\"enabled\":false");
	CHECK_EQ(F.open, 1);
	EXPECT_HAS("PATCH", "/proxies/a", "{\"enabled\":true}", 200, "\"listen\":\"127.0.0.1:40001\"");
	/* a new upstream re-opens on the same bound address, so the old
	 * listener closes first: if the new one cannot listen (the port
	 * taken meanwhile), the old is opened again as it was */
	closed = F.closed;
	F.fail_opens = 1;
	EXPECT_HAS("PATCH", "/proxies/a", "{\"upstream\":\"127.0.0.1:12\"}", 500, "taken meanwhile");
	CHECK(!strstr(body, "could not listen again"));
	EXPECT_HAS("GET", "/proxies/a", NULL, 200,
		   "\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:10\",\"enabled\":true");
	CHECK(fake_find("a") && fake_find("a")->port == 40001);
	CHECK_EQ(fake_find("a")->up_port, 10);
	CHECK_EQ(fake_find("a")->ntox, 1);
	CHECK_EQ(F.closed, closed + 1);
	/* ... and if that fails too, the answer says so and the registry
	 * shows the truth: disabled, the fields as before */
	F.fail_opens = 2;
	EXPECT_HAS("PATCH", "/proxies/a", "{\"upstream\":\"127.0.0.1:12\"}", 500,
		   "could not listen again on 127.0.0.1:40001");
	EXPECT_HAS("GET", "/proxies/a", NULL, 200,
		   "\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:10\",\"enabled\":false");
	CHECK(!fake_find("a"));
	CHECK_EQ(F.open, 1);
	/* a new listen on the old port, spelt otherwise: the old closes
	 * first, and the change goes through */
	EXPECT_HAS("PATCH", "/proxies/a", "{\"enabled\":true}", 200, "\"enabled\":true");
	EXPECT_HAS("PATCH", "/proxies/a", "{\"listen\":\"[::1]:40001\",\"upstream\":\"127.0.0.1:12\"}",
		   200, "\"listen\":\"[::1]:40001\",\"upstream\":\"127.0.0.1:12\",\"enabled\":true");
	CHECK_EQ(fake_find("a")->up_port, 12);
	CHECK_EQ(F.open, 2);
	teardown();
}

/* Is @s valid UTF-8 (no overlong form, surrogate or code point past
 * U+10FFFF)? */
static int utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p, n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
				   : c >= 0xF0 && c <= 0xF4 ? 3 : 9;
		if (n == 9)
			return 0;
		uint32_t cp = n ? c & (0x3F >> n) : c;
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i] & 0x3F);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return 0;
		p += n + 1;
	}
	return 1;
}

/* A message cut to fit its buffer inside a UTF-8 character: the answer
 * still carries it, cut on a character's boundary (the fake plane's
 * refusal repeats the qdisc, so its 511 bytes end inside an "é" for one
 * of the two lengths of padding) */
static void test_error_utf8(void)
{
	setup();
	CHECK_EQ(req("POST", "/proxies", A_JSON), 201);
	for (int pad = 0; pad < 2; pad++) {
		char b[2048];
		int k = snprintf(b, sizeof(b), "{\"type\":\"tc\",\"attributes\":{\"qdisc\":\"%sloss ",
				 pad ? "x" : "");
		for (int i = 0; i < 300; i++)
			k += snprintf(b + k, sizeof(b) - (size_t)k, "\xc3\xa9");
		snprintf(b + k, sizeof(b) - (size_t)k, "\"}}");
		EXPECT_HAS("POST", "/proxies/a/toxics", b, 400, "{\"error\":\"qdisc \\\"");
		CHECK(utf8_valid(body));
		size_t n = strlen(body);
		CHECK(n > 400 && !strcmp(body + n - 15, ",\"status\":400}\n"));
	}
	EXPECT_HAS("GET", "/proxies/a/toxics", NULL, 200, "[]");
	teardown();
}

#define LAT_DOWN                                                                           \
	"{\"attributes\":{\"latency\":100,\"jitter\":0},\"name\":\"latency_downstream\","    \
	"\"type\":\"latency\",\"stream\":\"downstream\",\"toxicity\":1}"

static void test_toxics(void)
{
	setup();
	CHECK_EQ(req("POST", "/proxies", A_JSON), 201);
	EXPECT("GET", "/proxies/a/toxics", NULL, 200, "[]");
	/* toxiproxy answers a toxic's creation 200, with its defaults */
	EXPECT("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"attributes\":{\"latency\":100}}",
	       200, LAT_DOWN);
	EXPECT("POST", "/proxies/a/toxics", "{\"type\":\"latency\"}", 409,
	       "{\"error\":\"toxic already exists\",\"status\":409}\n");
	static const struct {
		const char *type, *json;
	} defaults[] = {
		{ "bandwidth", "{\"attributes\":{\"rate\":0},\"name\":\"bandwidth_downstream\"" },
		{ "slow_close", "{\"attributes\":{\"delay\":0},\"name\":\"slow_close_downstream\"" },
		{ "timeout", "{\"attributes\":{\"timeout\":0},\"name\":\"timeout_downstream\"" },
		{ "reset_peer", "{\"attributes\":{\"timeout\":0},\"name\":\"reset_peer_downstream\"" },
		{ "slicer", "{\"attributes\":{\"average_size\":0,\"size_variation\":0,\"delay\":0},"
			    "\"name\":\"slicer_downstream\"" },
		{ "limit_data", "{\"attributes\":{\"bytes\":0},\"name\":\"limit_data_downstream\"" },
	};
	char b[512];
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		snprintf(b, sizeof(b), "{\"type\":\"%s\"}", defaults[i].type);
		EXPECT_HAS("POST", "/proxies/a/toxics", b, 200, defaults[i].json);
	}
	CHECK_EQ(fake_find("a")->ntox, 7);
	/* bad input: 400, nothing added */
	EXPECT("POST", "/proxies/a/toxics", "{\"type\":\"nope\"}", 400,
	       "{\"error\":\"invalid toxic type\",\"status\":400}\n");
	EXPECT("POST", "/proxies/a/toxics", "{}", 400,
	       "{\"error\":\"invalid toxic type\",\"status\":400}\n");
	EXPECT("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"x\",\"stream\":\"sideways\"}",
	       400, "{\"error\":\"stream was invalid, can be either upstream or downstream\",\"status\":400}\n");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"x\",\"stream\":\"\"}",
		   400, "stream was invalid");
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"latency\",\"name\":\"x\",\"attributes\":{\"latency\":-5}}", 400,
		   "attributes.latency: -5 is out of range (0..86400000 ms)");
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"latency\",\"name\":\"x\",\"attributes\":{\"jitter\":\"x\"}}", 400,
		   "attributes.jitter: expected an integer");
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"timeout\",\"name\":\"x\",\"attributes\":{\"timeout\":1.5}}", 400,
		   "attributes.timeout: expected an integer");
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"bandwidth\",\"name\":\"x\",\"attributes\":{\"rate\":true}}", 400,
		   "attributes.rate: expected an integer");
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"limit_data\",\"name\":\"x\",\"attributes\":{\"bytes\":99999999999999999999}}",
		   400, "bad request body");
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"bandwidth\",\"name\":\"x\",\"attributes\":{\"rate\":100000001}}", 400,
		   "attributes.rate");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"x\",\"toxicity\":2}",
		   400, "toxicity: 2 is out of range (0..1)");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"x\",\"toxicity\":-0.5}",
		   400, "toxicity");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"x\",\"toxicity\":\"1\"}",
		   400, "toxicity: expected a number");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"x\",\"attributes\":[]}",
		   400, "attributes: expected an object");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"x\",\"attributes\":{\"seed\":-1}}",
		   400, "attributes.seed");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":7}", 400, "type: expected a string");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"name\":\"a/b\"}", 400,
		   "cannot be addressed");
	EXPECT_HAS("POST", "/proxies/a/toxics", "[1]", 400, "expected a JSON object");
	EXPECT_HAS("POST", "/proxies/a/toxics", "", 400, "bad request body: EOF");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"tc\"}", 400,
		   "a tc toxic needs attributes.qdisc");
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"tc\",\"attributes\":{\"qdisc\":\"netem\",\"batch\":\"qdisc add\"}}", 400,
		   "one of qdisc or batch, not both");
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"tc\",\"attributes\":{\"qdisc\":\"  \"}}",
		   400, "attributes.qdisc: empty");
	/* the plane refuses: its message, a 400, the list unchanged */
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"tc\",\"attributes\":{\"qdisc\":\"netem delay 20ms loss 1%\"}}", 400,
		   "netem loss has no meaning on a byte stream");
	CHECK_EQ(fake_find("a")->ntox, 7);
	/* null values are defaults, as toxiproxy reads them; names and streams */
	EXPECT("POST", "/proxies/a/toxics",
	       "{\"type\":\"latency\",\"name\":\"n\",\"toxicity\":null,\"attributes\":{\"latency\":null}}",
	       200, "{\"attributes\":{\"latency\":0,\"jitter\":0},\"name\":\"n\",\"type\":\"latency\","
		    "\"stream\":\"downstream\",\"toxicity\":1}");
	EXPECT("POST", "/proxies/a/toxics",
	       "{\"type\":\"tc\",\"name\":\"\",\"stream\":\"UpStream\",\"toxicity\":0.25,"
	       "\"attributes\":{\"qdisc\":\"netem delay 20ms\",\"seed\":7}}",
	       200, "{\"attributes\":{\"qdisc\":\"netem delay 20ms\",\"seed\":7},\"name\":\"tc_UpStream\","
		    "\"type\":\"tc\",\"stream\":\"UpStream\",\"toxicity\":0.25}");
	CHECK_EQ(fake_find("a")->ntox, 9);
	CHECK(!strcmp(fake_find("a")->tox_names[8], "tc_UpStream"));
	/* the list: upstream toxics first, each stream in the order added */
	EXPECT_HAS("GET", "/proxies/a/toxics", NULL, 200,
		   "[{\"attributes\":{\"qdisc\":\"netem delay 20ms\",\"seed\":7},\"name\":\"tc_UpStream\"");
	CHECK(strstr(body, "},{\"attributes\":{\"latency\":100,\"jitter\":0},\"name\":\"latency_downstream\""));
	EXPECT("GET", "/proxies/a/toxics/latency_downstream", NULL, 200, LAT_DOWN);
	EXPECT("GET", "/proxies/a/toxics/nosuch", NULL, 404,
	       "{\"error\":\"toxic not found\",\"status\":404}\n");
	/* update: attributes merged, toxicity changed, name/type/stream kept */
	EXPECT("PATCH", "/proxies/a/toxics/latency_downstream", "{\"attributes\":{\"jitter\":5}}", 200,
	       "{\"attributes\":{\"latency\":100,\"jitter\":5},\"name\":\"latency_downstream\","
	       "\"type\":\"latency\",\"stream\":\"downstream\",\"toxicity\":1}");
	EXPECT("POST", "/proxies/a/toxics/latency_downstream",
	       "{\"toxicity\":0.5,\"type\":\"timeout\",\"name\":\"other\",\"stream\":\"upstream\"}", 200,
	       "{\"attributes\":{\"latency\":100,\"jitter\":5},\"name\":\"latency_downstream\","
	       "\"type\":\"latency\",\"stream\":\"downstream\",\"toxicity\":0.5}");
	EXPECT_HAS("PATCH", "/proxies/a/toxics/latency_downstream", "{\"attributes\":{\"latency\":-1}}",
		   400, "out of range");
	EXPECT_HAS("PATCH", "/proxies/a/toxics/latency_downstream", "{\"toxicity\":7}", 400,
		   "toxicity");
	EXPECT_HAS("PATCH", "/proxies/a/toxics/latency_downstream", "{bad", 400, "bad request body");
	EXPECT_HAS("PATCH", "/proxies/a/toxics/latency_downstream", "", 400, "EOF");
	EXPECT_HAS("PATCH", "/proxies/a/toxics/latency_downstream", "3", 400, "expected a JSON object");
	EXPECT_HAS("GET", "/proxies/a/toxics/latency_downstream", NULL, 200,
		   "\"latency\":100,\"jitter\":5},");
	CHECK(strstr(body, "\"toxicity\":0.5}"));
	/* a tc toxic changed: the other text replaces it; the plane may refuse */
	EXPECT_HAS("PATCH", "/proxies/a/toxics/tc_UpStream",
		   "{\"attributes\":{\"batch\":\"qdisc add dev X root handle 1: htb\"}}", 200,
		   "{\"attributes\":{\"batch\":\"qdisc add dev X root handle 1: htb\",\"seed\":7}");
	EXPECT_HAS("PATCH", "/proxies/a/toxics/tc_UpStream", "{\"attributes\":{\"qdisc\":\"netem loss 5%\"}}",
		   400, "netem loss");
	EXPECT_HAS("GET", "/proxies/a/toxics/tc_UpStream", NULL, 200, "\"batch\":");
	EXPECT("PATCH", "/proxies/a/toxics/nosuch", "{}", 404,
	       "{\"error\":\"toxic not found\",\"status\":404}\n");
	/* delete */
	CHECK_EQ(req("DELETE", "/proxies/a/toxics/latency_downstream", NULL), 204);
	CHECK(!body);
	EXPECT("DELETE", "/proxies/a/toxics/latency_downstream", NULL, 404,
	       "{\"error\":\"toxic not found\",\"status\":404}\n");
	CHECK_EQ(fake_find("a")->ntox, 8);
	for (unsigned i = 0; i < 8; i++)
		CHECK(strcmp(fake_find("a")->tox_names[i], "latency_downstream"));
	/* the limit of toxics on one proxy */
	for (int i = fake_find("a")->ntox; i < PROXY_MAX_TOXICS; i++) {
		snprintf(b, sizeof(b), "{\"type\":\"timeout\",\"name\":\"t%d\"}", i);
		CHECK_EQ(req("POST", "/proxies/a/toxics", b), 200);
	}
	EXPECT_HAS("POST", "/proxies/a/toxics", "{\"type\":\"timeout\",\"name\":\"one-more\"}", 400,
		   "more than 64 toxics");
	/* toxics of a disabled proxy are kept, and given to the plane at enable;
	 * the plane's check refuses what it would not run, open or not, so a
	 * disabled proxy can always be enabled again */
	CHECK_EQ(req("PATCH", "/proxies/a", "{\"enabled\":false}"), 200);
	CHECK_EQ(req("DELETE", "/proxies/a/toxics/t63", NULL), 204);
	unsigned v = F.validated;
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"tc\",\"name\":\"lossy\",\"attributes\":{\"qdisc\":\"netem loss 1%\"}}",
		   400, "netem loss has no meaning on a byte stream");
	CHECK_EQ(F.validated, v + 1);
	EXPECT("GET", "/proxies/a/toxics/lossy", NULL, 404,
	       "{\"error\":\"toxic not found\",\"status\":404}\n");
	CHECK_EQ(req("DELETE", "/proxies/a/toxics/t62", NULL), 204);
	EXPECT_HAS("POST", "/proxies/a/toxics",
		   "{\"type\":\"tc\",\"name\":\"t62\",\"attributes\":{\"qdisc\":\"netem delay 5ms\"}}",
		   200, "\"name\":\"t62\"");
	EXPECT_HAS("PATCH", "/proxies/a/toxics/t62", "{\"attributes\":{\"qdisc\":\"netem loss 5%\"}}",
		   400, "netem loss");
	CHECK_EQ(F.validated, v + 3);
	CHECK_EQ(req("PATCH", "/proxies/a", "{\"enabled\":true}"), 200);
	CHECK_EQ(fake_find("a")->ntox, PROXY_MAX_TOXICS - 1);
	teardown();
}

static void test_stats(void)
{
	setup();
	CHECK_EQ(req("POST", "/proxies", A_JSON), 201);
	CHECK_EQ(req("POST", "/proxies/a/toxics", "{\"type\":\"latency\",\"attributes\":{\"latency\":100}}"),
		 200);
	EXPECT_HAS("GET", "/proxies/a/stats", NULL, 200,
		   "{\"name\":\"a\",\"enabled\":true,\"accepted\":5,\"active\":2,\"closed\":3,"
		   "\"upstream_failed\":0,\"fd_exhausted\":1,\"upstream\":{\"bytes_in\":0");
	CHECK(strstr(body, "\"downstream\":{\"bytes_in\":1000,\"bytes_out\":900,"));
	/* the median: the 2nd of 3 in a bucket narrowed to [50.0 ms, its top
	 * 50.331648]: 50 + 0.331648 * 2/3; the 99th: the largest delay (a
	 * bucket's middle would have said 48.2 and 142.6) */
	CHECK(strstr(body, "\"delay_count\":4,\"delay_min_ms\":50.0,\"delay_mean_ms\":75.1,"
			   "\"delay_max_ms\":150.0,\"delay_p50_ms\":50.2211,\"delay_p99_ms\":150.0,"
			   "\"latency_ms\":100"));
	/* no bandwidth toxic: rate 0, none achieved */
	CHECK(strstr(body, "\"jitter_ms\":0,\"rate_kbps\":0,\"rate_achieved_kbps\":0.0,"
			   "\"rate_judged_ms\":0,"));
	/* two in series: the lowest is the configured, beside the achieved */
	CHECK_EQ(req("POST", "/proxies/a/toxics",
		     "{\"type\":\"bandwidth\",\"name\":\"bw1\",\"attributes\":{\"rate\":200}}"), 200);
	CHECK_EQ(req("POST", "/proxies/a/toxics",
		     "{\"type\":\"bandwidth\",\"name\":\"bw2\",\"attributes\":{\"rate\":100}}"), 200);
	CHECK_EQ(req("GET", "/proxies/a/stats", NULL), 200);
	CHECK(strstr(body, "\"downstream\":{"));
	CHECK(strstr(strstr(body, "\"downstream\":{"), "\"latency_ms\":100,\"jitter_ms\":0,"
			   "\"rate_kbps\":100,\"rate_achieved_kbps\":95.0,\"rate_judged_ms\":2000,"));
	CHECK(strstr(body, "\"rate_kbps\":0,\"rate_achieved_kbps\":0.0,")); /* upstream */
	/* a disable keeps the counters: the active ones closed, what they held dropped */
	CHECK_EQ(req("PATCH", "/proxies/a", "{\"enabled\":false}"), 200);
	EXPECT_HAS("GET", "/proxies/a/stats", NULL, 200,
		   "{\"name\":\"a\",\"enabled\":false,\"accepted\":5,\"active\":0,\"closed\":5,");
	CHECK(strstr(body, "\"bytes_dropped\":100,\"held\":0,"));
	CHECK_EQ(req("PATCH", "/proxies/a", "{\"enabled\":true}"), 200);
	EXPECT_HAS("GET", "/proxies/a/stats", NULL, 200, "\"accepted\":10,\"active\":2,\"closed\":8,");
	EXPECT("GET", "/proxies/zz/stats", NULL, 404, "{\"error\":\"proxy not found\",\"status\":404}\n");
	teardown();
}

static void test_reset(void)
{
	setup();
	CHECK_EQ(req("POST", "/proxies", A_JSON), 201);
	CHECK_EQ(req("POST", "/proxies", "{\"name\":\"b\",\"upstream\":\"127.0.0.1:9\",\"enabled\":false}"),
		 201);
	CHECK_EQ(req("POST", "/proxies/a/toxics", "{\"type\":\"latency\"}"), 200);
	CHECK_EQ(req("POST", "/proxies/b/toxics", "{\"type\":\"timeout\"}"), 200);
	CHECK_EQ(req("POST", "/reset", NULL), 204);
	CHECK(!body);
	unsigned open;
	CHECK_EQ(proxy_registry_count(R, &open), 2);
	CHECK_EQ(open, 2);
	CHECK_EQ(fake_find("a")->ntox, 0);
	CHECK_EQ(fake_find("b")->ntox, 0);
	EXPECT("GET", "/proxies/b/toxics", NULL, 200, "[]");
	EXPECT_HAS("GET", "/proxies/b", NULL, 200, "\"enabled\":true");
	teardown();
}

static void test_populate(void)
{
	setup();
	CHECK_EQ(req("POST", "/proxies", A_JSON), 201); /* 127.0.0.1:40000 */
	CHECK_EQ(req("POST", "/proxies/a/toxics", "{\"type\":\"latency\"}"), 200);
	/* as it is (the bound listen): kept with its toxics; new: made */
	EXPECT("POST", "/populate",
	       "[{\"name\":\"a\",\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:9\"},"
	       "{\"name\":\"p2\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\",\"enabled\":false}]",
	       201,
	       "{\"proxies\":[{\"name\":\"a\",\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:9\","
	       "\"enabled\":true,\"toxics\":[{\"attributes\":{\"latency\":0,\"jitter\":0},"
	       "\"name\":\"latency_downstream\",\"type\":\"latency\",\"stream\":\"downstream\","
	       "\"toxicity\":1}]},{\"name\":\"p2\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\","
	       "\"enabled\":false,\"toxics\":[]}]}");
	CHECK(!strcmp(ctype, "application/json"));
	CHECK_EQ(F.opened, 1);
	CHECK_EQ(count(), 2);
	/* as it is but "enabled":false: left running, as toxiproxy leaves it */
	EXPECT_HAS("POST", "/populate",
		   "[{\"name\":\"a\",\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:9\","
		   "\"enabled\":false}]",
		   201, "\"upstream\":\"127.0.0.1:9\",\"enabled\":true,\"toxics\":[{");
	CHECK_EQ(F.open, 1);
	CHECK_EQ(F.closed, 0);
	/* another upstream: replaced (toxics gone, a new listener) */
	EXPECT("POST", "/populate",
	       "[{\"name\":\"a\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:11\"}]", 201,
	       "{\"proxies\":[{\"name\":\"a\",\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:11\","
	       "\"enabled\":true,\"toxics\":[]}]}");
	CHECK_EQ(F.opened, 2);
	CHECK_EQ(F.open, 1);
	/* all checked before any is made: nothing changes on a bad one */
	EXPECT("POST", "/populate",
	       "[{\"name\":\"p5\",\"upstream\":\"127.0.0.1:9\"},{\"name\":\"p6\"}]", 400,
	       "{\"error\":\"missing required field: upstream at proxy 2\",\"status\":400,\"proxies\":[]}\n");
	CHECK(!strcmp(ctype, "application/json"));
	EXPECT_HAS("POST", "/populate", "[{\"name\":\"p5\",\"upstream\":\"127.0.0.1:9\"},7]", 400,
		   "expected a JSON object (a proxy) at proxy 2");
	EXPECT_HAS("POST", "/populate", "{}", 400, "expected a JSON array of proxies");
	EXPECT_HAS("POST", "/populate", "", 400, "bad request body: EOF");
	EXPECT_HAS("POST", "/populate", "[", 400, "bad request body");
	CHECK_EQ(count(), 2);
	CHECK(!fake_find("p5"));
	/* a listen in use: what was made before stays, 500 with them */
	EXPECT("POST", "/populate",
	       "[{\"name\":\"p7\",\"upstream\":\"127.0.0.1:9\"},"
	       "{\"name\":\"p8\",\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:9\"}]",
	       500,
	       "{\"error\":\"listen 127.0.0.1:40001: address already in use\",\"status\":500,"
	       "\"proxies\":[{\"name\":\"p7\",\"listen\":\"127.0.0.1:40002\",\"upstream\":\"127.0.0.1:9\","
	       "\"enabled\":true,\"toxics\":[]}]}\n");
	CHECK_EQ(count(), 3);
	EXPECT("POST", "/populate", "[]", 201, "{\"proxies\":[]}");
	/* the --config loader: the same, its message for the server to print */
	char err[256];
	const char *good = "[{\"name\":\"c1\",\"upstream\":\"127.0.0.1:9\"}]";
	CHECK_EQ(proxy_registry_populate(R, good, strlen(good), err, sizeof(err)), 0);
	CHECK(fake_find("c1"));
	const char *bad = "[{\"name\":\"c2\",\"upstream\":\"127.0.0.1:9\",\"enabled\":3}]";
	CHECK_EQ(proxy_registry_populate(R, bad, strlen(bad), err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "enabled: expected true or false at proxy 1"));
	CHECK_EQ(proxy_registry_populate(R, "nope", 4, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "bad request body"));
	CHECK_EQ(count(), 4);
	teardown();
}

/* addresses as toxiproxy writes them: IPv6 in brackets, ":PORT" every
 * address ("[::]"), a name's IPv4 address first */
static void test_addresses(void)
{
	setup_flags(0);
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"v6\",\"listen\":\"[::1]:0\",\"upstream\":\"[::1]:9\"}",
		   201, "\"listen\":\"[::1]:40000\",\"upstream\":\"[::1]:9\"");
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"any\",\"listen\":\":0\",\"upstream\":\":9\"}", 201,
		   "\"listen\":\"[::]:40001\",\"upstream\":\":9\"");
	EXPECT_HAS("POST", "/proxies",
		   "{\"name\":\"lh\",\"listen\":\"localhost:0\",\"upstream\":\"localhost:9\"}", 201,
		   "\"listen\":\"127.0.0.1:40002\",\"upstream\":\"localhost:9\"");
	CHECK_EQ(fake_find("lh")->up_port, 9);
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"b\",\"listen\":\"[::1]:x\",\"upstream\":\":9\"}",
		   400, "expected HOST:PORT");
	/* a name that does not resolve (yet): made, open, its text kept, with
	 * no upstream address (upstream_len 0: the plane closes each
	 * connection at once, counted upstream_failed); looked up again by
	 * proxy_registry_resolve() */
	EXPECT_HAS("POST", "/proxies",
		   "{\"name\":\"later\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"nosuch.invalid:80\"}",
		   201, "\"upstream\":\"nosuch.invalid:80\",\"enabled\":true");
	CHECK_EQ(fake_find("later")->up_port, 0);
	CHECK_EQ(fake_find("later")->up_len, 0);
	unsigned pending = 99;
	CHECK_EQ(proxy_registry_resolve(R, &pending), 0);
	CHECK_EQ(pending, 1);
	CHECK_EQ(fake_find("later")->set_upstreams, 0);
	/* given a number instead: closed and opened on it (an upstream change) */
	EXPECT_HAS("PATCH", "/proxies/later", "{\"upstream\":\"127.0.0.1:81\"}", 200,
		   "\"upstream\":\"127.0.0.1:81\"");
	CHECK_EQ(fake_find("later")->up_port, 81);
	CHECK_EQ(fake_find("later")->up_len, sizeof(struct sockaddr_in));
	CHECK_EQ(proxy_registry_resolve(R, &pending), 0);
	CHECK_EQ(pending, 0);
	/* and back to a name that does not resolve */
	EXPECT_HAS("PATCH", "/proxies/later", "{\"upstream\":\"nosuch.invalid:82\"}", 200,
		   "\"upstream\":\"nosuch.invalid:82\"");
	CHECK_EQ(fake_find("later")->up_port, 0);
	CHECK_EQ(fake_find("later")->up_len, 0);
	/* a syntax error stays a 400 */
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"c\",\"upstream\":\"nosuch.invalid\"}", 400,
		   "missing port");
	/* names resolved are looked up again only after PROXY_RERESOLVE_S */
	CHECK_EQ(proxy_registry_resolve(R, &pending), 0);
	CHECK_EQ(pending, 1);
	teardown();
	/* without a name service (the fuzzer's registry): refused at once */
	setup();
	EXPECT_HAS("POST", "/proxies", "{\"name\":\"n\",\"upstream\":\"nosuch.invalid:80\"}", 400,
		   "{\"error\":\"upstream \\\"nosuch.invalid\\\": ");
	CHECK_EQ(proxy_registry_resolve(R, NULL), 0);
	teardown();
}

/* "protocol": udp proxies go to the udp plane, show "protocol":"udp";
 * TCP proxies' JSON is unchanged; the protocol cannot change. */
static void test_protocol(void)
{
	setup();
	proxy_registry_set_udp(R, &fake_udp_ops, NULL);
	udp_validated = 0;
	EXPECT("POST", "/proxies",
	       "{\"name\":\"u\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\","
	       "\"protocol\":\"udp\"}",
	       201, "{\"name\":\"u\",\"listen\":\"127.0.0.1:40000\",\"upstream\":\"127.0.0.1:9\","
		    "\"enabled\":true,\"protocol\":\"udp\",\"toxics\":[]}");
	EXPECT("POST", "/proxies", A_JSON, 201,
	       "{\"name\":\"a\",\"listen\":\"127.0.0.1:40001\",\"upstream\":\"127.0.0.1:9\","
	       "\"enabled\":true,\"toxics\":[]}");
	EXPECT_HAS("POST", "/proxies",
		   "{\"name\":\"x\",\"upstream\":\"127.0.0.1:9\",\"protocol\":\"quic\"}", 400,
		   "protocol \\\"quic\\\": expected tcp or udp");
	EXPECT_HAS("POST", "/proxies",
		   "{\"name\":\"x\",\"upstream\":\"127.0.0.1:9\",\"protocol\":7}", 400,
		   "protocol: expected a string");
	/* the udp plane's validate: slicer refused there, taken on tcp */
	EXPECT_HAS("POST", "/proxies/u/toxics", "{\"type\":\"slicer\",\"attributes\":{}}", 400,
		   "type slicer acts on a TCP stream");
	CHECK_EQ(udp_validated, 1);
	CHECK_EQ(req("POST", "/proxies/a/toxics", "{\"type\":\"slicer\",\"attributes\":{}}"), 200);
	CHECK_EQ(udp_validated, 1);
	CHECK_EQ(req("POST", "/proxies/u/toxics", "{\"type\":\"latency\",\"attributes\":{}}"), 200);
	CHECK_EQ(fake_find("u")->ntox, 1);
	/* the udp plane's statistics, named */
	EXPECT("GET", "/proxies/u/stats", NULL, 200,
	       "{\"clients\":1,\"upstream\":{\"rx\":3},\"name\":\"u\",\"enabled\":true,"
	       "\"protocol\":\"udp\"}");
	EXPECT_HAS("GET", "/proxies/a/stats", NULL, 200, "\"accepted\":5");
	/* the protocol stays: the same one is fine, another 400 */
	CHECK_EQ(req("PATCH", "/proxies/u", "{\"protocol\":\"udp\"}"), 200);
	EXPECT_HAS("PATCH", "/proxies/u", "{\"protocol\":\"tcp\"}", 400,
		   "a proxy's protocol cannot change (it is udp");
	EXPECT_HAS("PATCH", "/proxies/a", "{\"protocol\":\"udp\"}", 400,
		   "a proxy's protocol cannot change (it is tcp");
	/* disable, enable, delete: the plane's opens and closes balance */
	CHECK_EQ(req("PATCH", "/proxies/u", "{\"enabled\":false}"), 200);
	EXPECT_HAS("GET", "/proxies/u", NULL, 200, "\"enabled\":false,\"protocol\":\"udp\"");
	EXPECT("GET", "/proxies/u/stats", NULL, 200,
	       "{\"name\":\"u\",\"enabled\":false,\"protocol\":\"udp\"}");
	CHECK_EQ(req("PATCH", "/proxies/u", "{\"enabled\":true}"), 200);
	CHECK_EQ(fake_find("u")->ntox, 1);
	CHECK_EQ(req("DELETE", "/proxies/u", NULL), 204);
	/* populate takes the protocol too */
	EXPECT_HAS("POST", "/populate",
		   "[{\"name\":\"p\",\"upstream\":\"127.0.0.1:9\",\"protocol\":\"udp\"}]", 201,
		   "\"protocol\":\"udp\"");
	teardown();
}

/* A plane that keeps its counters across opens (close_keep): the
 * registry keeps the ledger with the proxy (a disable, an enable, a
 * listen change), shows it while the proxy is closed, and frees it with
 * the proxy (a new proxy of the same name starts empty). */
static void test_plane_ledger(void)
{
	setup();
	proxy_registry_set_udp(R, &keep_udp_ops, NULL);
	kept_freed = 0;
	const char *u = "{\"name\":\"u\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:9\","
			"\"protocol\":\"udp\"}";
	CHECK_EQ(req("POST", "/proxies", u), 201);
	EXPECT("GET", "/proxies/u/stats", NULL, 200,
	       "{\"closes\":0,\"open\":true,\"name\":\"u\",\"enabled\":true,\"protocol\":\"udp\"}");
	CHECK_EQ(req("PATCH", "/proxies/u", "{\"enabled\":false}"), 200);
	EXPECT("GET", "/proxies/u/stats", NULL, 200,
	       "{\"closes\":1,\"open\":false,\"name\":\"u\",\"enabled\":false,\"protocol\":\"udp\"}");
	CHECK_EQ(req("PATCH", "/proxies/u", "{\"enabled\":true}"), 200);
	CHECK_EQ(req("PATCH", "/proxies/u", "{\"listen\":\"127.0.0.1:0\"}"), 200);
	EXPECT_HAS("GET", "/proxies/u/stats", NULL, 200, "{\"closes\":2,\"open\":true,");
	CHECK_EQ(kept_freed, 0);
	CHECK_EQ(req("DELETE", "/proxies/u", NULL), 204);
	CHECK_EQ(kept_freed, 1);
	CHECK_EQ(req("POST", "/proxies", u), 201);
	EXPECT_HAS("GET", "/proxies/u/stats", NULL, 200, "{\"closes\":0,\"open\":true,");
	CHECK_EQ(req("PATCH", "/proxies/u", "{\"enabled\":false}"), 200);
	/* a TCP proxy's statistics are not the plane's ledger */
	CHECK_EQ(req("POST", "/proxies", A_JSON), 201);
	EXPECT_HAS("GET", "/proxies/a/stats", NULL, 200, "\"accepted\":");
	teardown();
	CHECK_EQ(kept_freed, 2);
}

int main(void)
{
	RUN(test_version_and_paths);
	RUN(test_proxy_create);
	RUN(test_proxy_limit);
	RUN(test_proxy_update);
	RUN(test_error_utf8);
	RUN(test_toxics);
	RUN(test_stats);
	RUN(test_reset);
	RUN(test_populate);
	RUN(test_addresses);
	RUN(test_protocol);
	RUN(test_plane_ledger);
	return 0;
}
