/* SPDX-License-Identifier: MIT */
/*
 * What the API registry's three files share (tools/netem/api/proxy.c: the
 * proxies, toxics and HTTP requests; tools/netem/api/proxy_json.c: a proxy's
 * JSON both ways; tools/netem/api/resolve.c: the upstream names and their
 * lookups): the registry's structures and the calls each makes into the
 * others.  Private to those three files.
 *
 * Threads: whichever thread calls proxy.h's entry points (the HTTP
 * front's, the resolver's).  Locks: struct proxy_registry's two mutexes,
 * as proxy.c's essay says; each declaration below names what it needs.
 */
#ifndef PW_NETEM_PROXY_PRIV_H
#define PW_NETEM_PROXY_PRIV_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proxy.h"

#define ERRLEN 512

/* An upstream's address: a number (never looked up again), a name
 * resolved, or a name that did not resolve yet (no address: up_len 0,
 * which the plane takes as "no upstream yet"). */
enum { UP_NUMERIC, UP_NAME, UP_LATER };

struct entry {
	char name[PROXY_NAME_MAX];
	char *listen;                 /* shown: as given while closed, bound while open */
	char *upstream;               /* as given */
	struct sockaddr_storage lis, up;
	socklen_t lis_len, up_len;
	int enabled;
	struct toxic tox[PROXY_MAX_TOXICS];
	char stext[PROXY_MAX_TOXICS][16];  /* each toxic's "stream" as given
					      ("UpStream"), shown as given */
	unsigned ntox;
	int up_state;                 /* UP_NUMERIC, UP_NAME (resolved), UP_LATER */
	int64_t up_at;                /* CLOCK_MONOTONIC s of the last resolution */
	void *handle;                 /* the plane's, NULL while closed */
	struct tcp_proxy_stats base;  /* what the plane proxies closed before counted */
	void *kept;                   /* the same, a close_keep plane's ledger, or NULL */
	int udp;                      /* "protocol":"udp": the registry's udp plane */
	uint64_t tp_done[TOXIC_NSTREAMS][2]; /* bytes read, written, already moved
					      to the metrics' ledger (metrics.c) */
};

struct proxy_registry {
	pthread_mutex_t req_lock;     /* one request (or populate) at a time */
	pthread_mutex_t lock;         /* the entries; dropped around getaddrinfo */
	const struct proxy_plane_ops *ops;     /* TCP proxies' plane */
	void *ctx;
	const struct proxy_plane_ops *udp_ops; /* UDP proxies' plane, or NULL */
	void *udp_ctx;
	unsigned flags;
	struct entry **e;             /* sorted by name */
	unsigned n;
	struct tp_row *tp_rows;       /* toxiproxy's series of label sets no proxy
					 carries now (metrics.c), under lock */
};

/* A proxy given in a body (create, populate, update). */
struct spec {
	const char *name, *listen, *upstream;
	int enabled;
	struct sockaddr_storage lis, up;
	socklen_t lis_len, up_len;
	int up_state;
	int udp;                      /* -1: "protocol" absent, 0 tcp, 1 udp */
};

/* @fmt into @err (ERRLEN bytes; a message cut there is cut on a UTF-8
 * character's boundary).  Return: 400, the status most callers answer
 * with. */
static inline int errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int errf(char *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, ERRLEN, fmt, ap);
	va_end(ap);
	err[toxic_utf8_fit(err, strlen(err))] = '\0';
	return 400;
}

/* For "%.*s" in a message: at most @max bytes of @s, not ending inside a
 * UTF-8 character. */
static inline int proxy__cut(const char *s, size_t max)
{
	return (int)toxic_utf8_fit(s, strnlen(s, max));
}

/* The plane of @e, and its context. */
static inline const struct proxy_plane_ops *entry_ops(const struct proxy_registry *r,
						      const struct entry *e, void **ctx)
{
	*ctx = e->udp ? r->udp_ctx : r->ctx;
	return e->udp ? r->udp_ops : r->ops;
}

/* CLOCK_MONOTONIC in whole seconds (when an upstream was last resolved). */
static inline int64_t mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/**
 * proxy__find() - the proxy named @name (tools/netem/api/proxy.c).
 * @pos: if not NULL, its index, or where it would be inserted.
 *
 * Context: any thread; r->lock held.
 * Return: the entry, or NULL.
 */
struct entry *proxy__find(const struct proxy_registry *r, const char *name, unsigned *pos);

/**
 * proxy__resolve() - "HOST:PORT", "[V6]:PORT" or ":PORT" into an address
 * (tools/netem/api/resolve.c).
 * @what: "listen" or "upstream", for messages.
 * @passive: a listen address (an empty host is every address).
 * @state: NULL for a listen address; for an upstream, set to UP_NUMERIC,
 *         UP_NAME or UP_LATER (a name that does not resolve yet: taken,
 *         with no address, unless PROXY_NUMERIC_HOSTS).
 *
 * Context: the thread of a request; req_lock and r->lock held; r->lock
 * is dropped around the lookup and taken again.
 * Return: 0, or 400 with the message in @err.
 */
int proxy__resolve(struct proxy_registry *r, const char *what, const char *s, int passive,
		   struct sockaddr_storage *ss, socklen_t *len, int *state, char *err);

/**
 * proxy__entry_close() - close @e's plane proxy, if open, its final
 * counters kept in the entry (e->base, or the plane's ledger e->kept);
 * @e->enabled is left as it is (tools/netem/api/proxy.c).
 *
 * Context: a request's thread or the resolver's; r->lock held.
 * Return: none.
 */
void proxy__entry_close(struct proxy_registry *r, struct entry *e);

/**
 * proxy__stats_add() - @s (a closed plane proxy's final counters, or
 * those of one open now: @now, whose active and held are taken as they
 * are) into @b (tools/netem/api/proxy.c).
 *
 * Context: the thread of a request; r->lock held when @b is an entry's.
 * Return: none.
 */
void proxy__stats_add(struct tcp_proxy_stats *b, const struct tcp_proxy_stats *s, int now);

/* ------------------------------------------------- tools/netem/api/metrics.c */

/**
 * proxy__tp_fold() - move what TCP proxy @e counted (bytes read and
 * written per direction) since its last fold into the metrics' ledger
 * under its labels now (name, listen, upstream): called before those
 * labels change and before @e goes, so that toxiproxy's series keep
 * them, as toxiproxy's counters do.
 *
 * Context: a request's thread; r->lock held (the plane is called).
 * Return: none (out of memory: those counts are lost to the series).
 */
void proxy__tp_fold(struct proxy_registry *r, struct entry *e);

/**
 * proxy__tp_free() - free the ledger.  Context: the registry's owner,
 * at its destroy.  Return: none.
 */
void proxy__tp_free(struct proxy_registry *r);

/* ------------------------------------------------- tools/netem/api/proxy_json.c */

struct json_t;

/**
 * proxy__tox_json() - toxiproxy's JSON of @e's toxic @i, its "stream" as
 * the client wrote it.
 *
 * Context: the thread of a request; r->lock held.
 * Return: a new reference; NULL when out of memory.
 */
struct json_t *proxy__tox_json(const struct entry *e, unsigned i);

/**
 * proxy__toxics_json() - @e's toxics as a JSON array: the upstream ones,
 * then the downstream ones, each stream in the order added.
 *
 * Context: the thread of a request; r->lock held.
 * Return: a new reference; NULL when out of memory.
 */
struct json_t *proxy__toxics_json(const struct entry *e);

/**
 * proxy__proxy_json() - toxiproxy's JSON of the proxy @e ("protocol" only
 * for a UDP proxy).
 *
 * Context: the thread of a request; r->lock held.
 * Return: a new reference; NULL when out of memory.
 */
struct json_t *proxy__proxy_json(const struct entry *e);

/**
 * proxy__stats_json() - GET /proxies/NAME/stats: @e's counters since it
 * was created, per direction with its delays, the latency its toxics ask
 * for and its tc toxics' reports; or its plane's stats_json object.
 *
 * Context: the thread of a request; r->lock held (the plane is called).
 * Return: a new reference; NULL when out of memory.
 */
struct json_t *proxy__stats_json(struct proxy_registry *r, const struct entry *e);

/**
 * proxy__parse_body() - the @len bytes of @body as a JSON value.
 *
 * Context: any thread; no lock.
 * Return: a new reference; NULL with toxiproxy's "bad request body: ..."
 * in @err (a 400).
 */
struct json_t *proxy__parse_body(const char *body, size_t len, char *err);

/**
 * proxy__get_string() - @o's @key into *@out (absent or null: unchanged;
 * the string stays @o's).
 *
 * Context: any thread; no lock.
 * Return: 0; 400 with the message in @err when it is not a string.
 */
int proxy__get_string(struct json_t *o, const char *key, const char **out, char *err);

/**
 * proxy__check_name() - is @s a name a path can address (shorter than
 * @max bytes with its NUL, no '/')?  @what names it in the message.
 *
 * Context: any thread; no lock.
 * Return: 0; 400 with the message in @err.
 */
int proxy__check_name(const char *what, const char *s, size_t max, char *err);

/**
 * proxy__parse_spec() - the proxy given in @o into @s (whose strings stay
 * @o's).  @create: name and upstream required, listen 127.0.0.1:0 when
 * absent, enabled by default; else (an update) what is absent is NULL
 * (enabled -1).  The addresses given are resolved (proxy__resolve()).
 *
 * Context: the thread of a request; req_lock and r->lock held (r->lock
 * dropped around a name lookup and taken again).
 * Return: 0; 400 with the message in @err.
 */
int proxy__parse_spec(struct proxy_registry *r, struct json_t *o, int create, struct spec *s,
		      char *err);

/* One request's answer: its body (malloc'ed) and content type. */
struct answer {
	char *body;
	const char *ctype;
};

/*
 * proxy__answer_json(): @j (stolen) as the body, compact, application/json.
 * proxy__answer_error(): toxiproxy's error body, {"error":MSG,"status":N}
 * and a newline (with @proxies, stolen, /populate's third member); the
 * message made valid UTF-8 first.  Both in proxy_json.c, with the other
 * JSON.  Context: a request's thread, r->lock held or not (they touch
 * only @a).  Return: the HTTP status to send (500 when out of memory).
 */
int proxy__answer_json(struct answer *a, int status, struct json_t *j);
int proxy__answer_error(struct answer *a, int status, const char *msg, struct json_t *proxies);

#endif /* PW_NETEM_PROXY_PRIV_H */
