/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: pinwheel-netem's API request handling (tools/netem/api/proxy.c,
 * proxy_api_request()) over a fake data plane, a fresh registry per input.
 *
 * Input: requests split by NUL bytes; each is a method byte (its low
 * three bits pick GET, POST, PATCH, DELETE, PUT, HEAD, OPTIONS, or the
 * bytes up to the first space as the method), the path up to the first
 * newline, then the body (any bytes).
 * The fake plane: listens on the port asked (or the next free one from
 * 40000), refuses a port already taken (EADDRINUSE), and refuses a tc
 * toxic whose qdisc says "loss" (EINVAL), as the data path would; the
 * same fake serves "protocol":"udp" proxies (its own validate and JSON
 * statistics, as the UDP plane's).
 * Properties, beyond "no crash, no leak, no undefined behaviour":
 *  - the status is one the API answers (200 201 204 400 404 405 409 413
 *    500), a body comes with a content type and without NUL inside, and a
 *    JSON body parses as JSON (an error body too, without its newline);
 *  - the plane's open proxies are exactly the registry's enabled ones, and
 *    each has the toxic list the registry shows (as many as GET returns);
 *  - destroying the registry closes every proxy it opened.
 * Context: libFuzzer's thread; no other thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netem/api/proxy.h"

#define NSLOT 2048

struct fp {
	char name[PROXY_NAME_MAX];
	unsigned port, ntox;
};

static struct fp *slot[NSLOT];
static unsigned nopen, opened, closed_n, next_port;

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_api: %s\n", what);
		abort();
	}
}

static int f_open(void *ctx, const char *name, const struct sockaddr *lis, socklen_t lis_len,
		  const struct sockaddr *up, socklen_t up_len, void **handle,
		  struct sockaddr_storage *bound, socklen_t *bound_len, char *err, size_t errlen)
{
	(void)ctx;
	(void)up;
	(void)up_len;
	unsigned port = lis->sa_family == AF_INET6
				? ntohs(((const struct sockaddr_in6 *)lis)->sin6_port)
				: ntohs(((const struct sockaddr_in *)lis)->sin_port);
	for (unsigned i = 0; i < NSLOT; i++)
		if (slot[i] && slot[i]->port == port) {
			snprintf(err, errlen, "listen port %u: address already in use", port);
			return -EADDRINUSE;
		}
	if (!port)
		port = next_port++;
	unsigned i = 0;
	while (i < NSLOT && slot[i])
		i++;
	must(i < NSLOT, "more open proxies than the registry allows");
	struct fp *p = calloc(1, sizeof(*p));
	must(p != NULL, "calloc");
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->port = port;
	slot[i] = p;
	memcpy(bound, lis, lis_len);
	if (lis->sa_family == AF_INET6)
		((struct sockaddr_in6 *)bound)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)bound)->sin_port = htons((uint16_t)port);
	*bound_len = lis_len;
	*handle = p;
	nopen++;
	opened++;
	return 0;
}

static void f_close(void *ctx, void *h, struct tcp_proxy_stats *final)
{
	(void)ctx;
	memset(final, 0, sizeof(*final));
	for (unsigned i = 0; i < NSLOT; i++)
		if (slot[i] == h)
			slot[i] = NULL;
	free(h);
	nopen--;
	closed_n++;
}

static int f_set_upstream(void *ctx, void *h, const struct sockaddr *up, socklen_t len)
{
	(void)ctx;
	(void)h;
	(void)up;
	(void)len;
	return 0;
}

static int f_set_toxics(void *ctx, void *h, const struct toxic *t, unsigned n, char *err,
			size_t errlen)
{
	(void)ctx;
	must(n <= PROXY_MAX_TOXICS, "more toxics than the registry allows");
	for (unsigned i = 0; i < n; i++) {
		must(toxic_type_name(t[i].type) != NULL, "a toxic of no type");
		must(t[i].toxicity >= 0 && t[i].toxicity <= 1, "toxicity out of 0..1");
		if (t[i].type == TOXIC_TC) {
			must(!t[i].a.tc.qdisc != !t[i].a.tc.batch, "a tc toxic with not exactly one text");
			if (t[i].a.tc.qdisc && strstr(t[i].a.tc.qdisc, "loss")) {
				snprintf(err, errlen, "netem loss on a byte stream");
				return -EINVAL;
			}
		}
	}
	((struct fp *)h)->ntox = n;
	return 0;
}

/* the plane's check without a proxy: the same refusal as f_set_toxics */
static int f_validate(void *ctx, const struct toxic *t, char *err, size_t errlen)
{
	(void)ctx;
	must(toxic_type_name(t->type) != NULL, "a toxic of no type checked");
	if (t->type == TOXIC_TC && t->a.tc.qdisc && strstr(t->a.tc.qdisc, "loss")) {
		snprintf(err, errlen, "netem loss on a byte stream");
		return -EINVAL;
	}
	return 0;
}

static void f_stats(void *ctx, void *h, struct tcp_proxy_stats *s)
{
	(void)ctx;
	(void)h;
	memset(s, 0, sizeof(*s));
	s->accepted = 1;
}

static const struct proxy_plane_ops ops = {
	.open = f_open,
	.close = f_close,
	.set_upstream = f_set_upstream,
	.set_toxics = f_set_toxics,
	.stats = f_stats,
	.validate = f_validate,
};

/* The "protocol":"udp" plane: the same fake proxies, the statistics as
 * JSON text (as the UDP plane gives them), slicer refused. */
static int u_validate(void *ctx, const struct toxic *t, char *err, size_t errlen)
{
	if (t->type == TOXIC_SLICER) {
		snprintf(err, errlen, "slicer on a udp proxy");
		return -EINVAL;
	}
	return f_validate(ctx, t, err, errlen);
}

static char *u_stats_json(void *ctx, void *h)
{
	(void)ctx;
	(void)h;
	return strdup("{\"clients\":0}");
}

static const struct proxy_plane_ops udp_ops = {
	.open = f_open,
	.close = f_close,
	.set_upstream = f_set_upstream,
	.set_toxics = f_set_toxics,
	.stats = f_stats,
	.validate = u_validate,
	.stats_json = u_stats_json,
};

static void check_answer(int st, const char *body, const char *ctype)
{
	must(st == 200 || st == 201 || st == 204 || st == 400 || st == 404 || st == 405 ||
		     st == 409 || st == 413 || st == 500,
	     "a status the API does not answer");
	must(!body == !ctype, "a body without a content type, or the reverse");
	if (!body || strncmp(ctype, "application/json", 16))
		return;
	json_error_t je;
	size_t n = strlen(body);
	if (n && body[n - 1] == '\n')
		n--; /* an error body's newline */
	json_t *j = json_loadb(body, n, JSON_DECODE_ANY, &je);
	must(j != NULL, "a JSON answer that does not parse");
	json_decref(j);
}

/* The plane's open proxies are the enabled ones, with the toxics shown. */
static void check_state(struct proxy_registry *r)
{
	unsigned open = 0;
	proxy_registry_count(r, &open);
	must(open == nopen, "the registry's open proxies are not the plane's");
	char *body = NULL;
	const char *ct;
	must(proxy_api_request(r, "GET", "/proxies", NULL, 0, &body, &ct) == 200, "GET /proxies");
	json_error_t je;
	json_t *all = json_loads(body, 0, &je);
	must(all && json_is_object(all), "GET /proxies is no object");
	const char *name;
	json_t *p;
	unsigned enabled = 0;
	json_object_foreach(all, name, p) {
		must(!strcmp(json_string_value(json_object_get(p, "name")), name), "key != name");
		if (!json_is_true(json_object_get(p, "enabled")))
			continue;
		enabled++;
		struct fp *f = NULL;
		for (unsigned i = 0; i < NSLOT && !f; i++)
			if (slot[i] && !strcmp(slot[i]->name, name))
				f = slot[i];
		must(f != NULL, "an enabled proxy the plane does not have");
		must(f->ntox == json_array_size(json_object_get(p, "toxics")),
		     "the plane's toxics are not the registry's");
	}
	must(enabled == nopen, "enabled proxies != the plane's open ones");
	json_decref(all);
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST", "PATCH", "DELETE", "PUT", "HEAD",
					       "OPTIONS" };
	struct proxy_registry *r;
	next_port = 40000;
	must(proxy_registry_create(&ops, NULL, PROXY_NUMERIC_HOSTS, &r) == 0, "create");
	proxy_registry_set_udp(r, &udp_ops, NULL);
	size_t i = 0;
	unsigned nreq = 0;
	while (i < size && nreq++ < 64) {
		const uint8_t *rec = data + i;
		const uint8_t *nul = memchr(rec, 0, size - i);
		size_t len = nul ? (size_t)(nul - rec) : size - i;
		i += len + 1;
		if (!len)
			continue;
		char method[16];
		size_t k = 1;
		if ((rec[0] & 7) < 7) {
			snprintf(method, sizeof(method), "%s", methods[rec[0] & 7]);
		} else {
			while (k < len && k < sizeof(method) && rec[k] != ' ')
				k++;
			memcpy(method, rec + 1, k - 1);
			method[k - 1] = '\0';
		}
		const uint8_t *nl = memchr(rec + k, '\n', len - k);
		size_t plen = nl ? (size_t)(nl - rec - k) : len - k;
		char *path = malloc(plen + 1);
		must(path != NULL, "malloc");
		memcpy(path, rec + k, plen);
		path[plen] = '\0';
		const char *body = nl ? (const char *)nl + 1 : NULL;
		size_t blen = nl ? len - k - plen - 1 : 0;
		char *out = NULL;
		const char *ct = NULL;
		int st = proxy_api_request(r, method, path, body, blen, &out, &ct);
		check_answer(st, out, ct);
		free(out);
		free(path);
		check_state(r);
	}
	proxy_registry_destroy(r);
	must(nopen == 0 && opened == closed_n, "a proxy left open at destroy");
	return 0;
}
