/* SPDX-License-Identifier: MIT */
/*
 * What the API registry's two files share (tools/netem/proxy.c: the
 * proxies, toxics and HTTP requests; tools/netem/resolve.c: the upstream
 * names and their lookups): the registry's structures and the calls
 * each makes into the other.  Private to those two files.
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
	int udp;                      /* "protocol":"udp": the registry's udp plane */
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
};

/* @fmt into @err (ERRLEN bytes).  Return: 400, the status most callers
 * answer with. */
static inline int errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int errf(char *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, ERRLEN, fmt, ap);
	va_end(ap);
	return 400;
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
 * proxy__find() - the proxy named @name (tools/netem/proxy.c).
 * @pos: if not NULL, its index, or where it would be inserted.
 *
 * Context: any thread; r->lock held.
 * Return: the entry, or NULL.
 */
struct entry *proxy__find(const struct proxy_registry *r, const char *name, unsigned *pos);

/**
 * proxy__resolve() - "HOST:PORT", "[V6]:PORT" or ":PORT" into an address
 * (tools/netem/resolve.c).
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

#endif /* PW_NETEM_PROXY_PRIV_H */
