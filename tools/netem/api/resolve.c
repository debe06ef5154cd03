/* SPDX-License-Identifier: MIT */
/*
 * The API registry's upstream names: reading "HOST:PORT" text into an
 * address (for a proxy's listen and upstream, when a request gives them)
 * and looking the upstream names up again later (proxy_registry_resolve(),
 * which tools/netem/api/server.c's resolver thread calls every
 * PROXY_RESOLVE_RETRY_S).
 *
 * What it owns.  The text-to-address rules (Go's net package's reading of
 * an empty host; the first IPv4 answer of a name, as toxiproxy listens on
 * "localhost"), and an upstream's state: a number (never looked up
 * again), a name resolved (looked up again every PROXY_RERESOLVE_S, its
 * new address given to the plane with set_upstream, for the connections
 * accepted from then on), or a name that did not resolve yet (UP_LATER:
 * taken, as toxiproxy takes it, with no address; the plane closes each
 * connection accepted meanwhile and counts it in upstream_failed; tried
 * again on every pass until it resolves).
 *
 * Threads and locks.  proxy__resolve() runs on a request's thread (the
 * HTTP front's, or /populate's caller) with req_lock and r->lock held,
 * and drops r->lock around getaddrinfo, which may take seconds (req_lock
 * keeps other requests out).  proxy_registry_resolve() runs on the
 * resolver's thread: it copies the names to look up under r->lock, looks
 * them up with no lock held, and applies the answers under r->lock again,
 * skipping a proxy removed or given another upstream meanwhile; so a
 * slow name service holds neither the API's clients nor the data path.
 *
 * Costs: one pass is O(proxies) plus one getaddrinfo per name due.
 */
#define _GNU_SOURCE
#include "proxy_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getaddrinfo's first IPv4 answer (else its first) for @node:@port into
 * @ss.  No lock.  Return: 0 or getaddrinfo's error. */
static int lookup(unsigned flags, const char *node, const char *port, int passive,
		  struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { 0 }, *res = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) |
			 ((flags & PROXY_NUMERIC_HOSTS) ? AI_NUMERICHOST : 0);
	int rc = getaddrinfo(node, port, &hints, &res);
	if (rc || !res)
		return rc ? rc : EAI_NONAME;
	const struct addrinfo *pick = res;
	for (const struct addrinfo *x = res; x; x = x->ai_next)
		if (x->ai_family == AF_INET) {
			pick = x;
			break;
		}
	memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	*len = pick->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* "HOST:PORT" into @host and @port.  Return: 0 or 400 with @err. */
static int split_hostport(const char *what, const char *s, int passive, char *host, size_t hlen,
			  char *port, size_t plen, char *err)
{
	const char *colon, *orig = s;
	size_t hl;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return errf(err, "%s \"%s\": expected HOST:PORT", what, s);
		colon = rb + 1;
		hl = (size_t)(rb - s - 1);
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return errf(err, "%s \"%s\": missing port (HOST:PORT)", what, s);
		hl = (size_t)(colon - s);
	}
	const char *p = colon + 1;
	size_t pl = strlen(p);
	if (hl >= hlen || !pl || pl >= plen || strspn(p, "0123456789") != pl || atoi(p) > 65535)
		return errf(err, "%s \"%.*s\": expected HOST:PORT with a port 0..65535", what,
			    proxy__cut(orig, 200), orig);
	memcpy(host, s, hl);
	host[hl] = '\0';
	memcpy(port, p, pl + 1);
	if (!passive && atoi(port) == 0)
		return errf(err, "%s \"%.*s\": port 0 is no server port", what,
			    proxy__cut(host, 200), host);
	return 0;
}

/*
 * "HOST:PORT", "[V6]:PORT" or ":PORT" (@what names it in messages) into
 * @ss.  An empty host is every address for a listener (the user wrote it;
 * "::", which takes IPv4 too, as toxiproxy's "[::]:PORT") and the loopback
 * for an upstream, as Go's net package reads them.  A name with IPv4 and
 * IPv6 addresses gives its first IPv4 one ("localhost" is 127.0.0.1, as
 * toxiproxy listens on it).
 */
int proxy__resolve(struct proxy_registry *r, const char *what, const char *s, int passive,
		   struct sockaddr_storage *ss, socklen_t *len, int *state, char *err)
{
	char host[256], port[8];
	int rc = split_hostport(what, s, passive, host, sizeof(host), port, sizeof(port), err);
	if (rc)
		return rc;
	const char *node = host[0] ? host : (passive ? "::" : "127.0.0.1");
	struct in6_addr a6;
	int numeric = inet_pton(AF_INET, node, &a6) == 1 || inet_pton(AF_INET6, node, &a6) == 1;
	/* the name service may take seconds: the entries are not held meanwhile
	 * (requests are serialised by req_lock, which stays held) */
	pthread_mutex_unlock(&r->lock);
	rc = lookup(r->flags, node, port, passive, ss, len);
	pthread_mutex_lock(&r->lock);
	if (state)
		*state = numeric ? UP_NUMERIC : UP_NAME;
	if (rc && state && !numeric && !(r->flags & PROXY_NUMERIC_HOSTS)) {
		/* toxiproxy takes a name that does not resolve yet (a container
		 * not up): kept, looked up again by proxy_registry_resolve() */
		memset(ss, 0, sizeof(*ss));
		*len = 0; /* no address: the plane's "no upstream yet" */
		*state = UP_LATER;
		return 0;
	}
	if (rc)
		return errf(err, "%s \"%.*s\": %s", what, proxy__cut(host, 200), host,
			    gai_strerror(rc));
	return 0;
}

/* ------------------------------------------------------------ again, later */

/* One upstream to look up, copied out of its entry. */
struct job {
	char name[PROXY_NAME_MAX];
	char *text;
	struct sockaddr_storage ss;
	socklen_t len;
	int rc;
};

unsigned proxy_registry_resolve(struct proxy_registry *r, unsigned *pending)
{
	int64_t now = mono_s();
	unsigned nj = 0, changed = 0, later = 0;
	struct job *j = NULL;
	pthread_mutex_lock(&r->lock);
	for (unsigned i = 0; i < r->n; i++) {
		const struct entry *e = r->e[i];
		if (e->up_state == UP_LATER ||
		    (e->up_state == UP_NAME && now - e->up_at >= PROXY_RERESOLVE_S))
			nj++;
	}
	j = nj ? calloc(nj, sizeof(*j)) : NULL;
	unsigned k = 0;
	for (unsigned i = 0; j && i < r->n && k < nj; i++) {
		const struct entry *e = r->e[i];
		if (!(e->up_state == UP_LATER ||
		      (e->up_state == UP_NAME && now - e->up_at >= PROXY_RERESOLVE_S)))
			continue;
		snprintf(j[k].name, sizeof(j[k].name), "%s", e->name);
		j[k].text = strdup(e->upstream);
		if (j[k].text)
			k++;
	}
	nj = k;
	unsigned flags = r->flags;
	pthread_mutex_unlock(&r->lock);
	/* the name service, with no lock held */
	for (k = 0; k < nj; k++) {
		char host[256], port[8], err[ERRLEN];
		j[k].rc = split_hostport("upstream", j[k].text, 0, host, sizeof(host), port,
					 sizeof(port), err);
		if (!j[k].rc)
			j[k].rc = lookup(flags, host, port, 0, &j[k].ss, &j[k].len);
	}
	pthread_mutex_lock(&r->lock);
	for (k = 0; k < nj; k++) {
		struct entry *e = proxy__find(r, j[k].name, NULL);
		/* gone, or given another upstream meanwhile: that one counts */
		if (!e || strcmp(e->upstream, j[k].text) || e->up_state == UP_NUMERIC)
			continue;
		if (j[k].rc) {
			/* still nothing (or a failing name service): a name never
			 * resolved is tried again next pass; a resolved one keeps
			 * its last address until it resolves again */
			later += e->up_state == UP_LATER;
			continue;
		}
		int diff = e->up_state == UP_LATER || e->up_len != j[k].len ||
			   memcmp(&e->up, &j[k].ss, j[k].len);
		e->up_at = now;
		e->up_state = UP_NAME;
		if (!diff)
			continue;
		e->up = j[k].ss;
		e->up_len = j[k].len;
		changed++;
		/* connections accepted from now on go there; open ones stay */
		if (e->handle) {
			void *ctx;
			const struct proxy_plane_ops *ops = entry_ops(r, e, &ctx);
			int rc = ops->set_upstream(ctx, e->handle, (const struct sockaddr *)&e->up,
						   e->up_len);
			if (rc) {
				/* a plane that restarts for it (UDP) and could
				 * not: disabled, as a failed open leaves it */
				fprintf(stderr,
					"pinwheel-netem: proxy %s: disabled: the change to the new "
					"upstream failed: %s\n",
					e->name, strerror(-rc));
				proxy__entry_close(r, e);
				e->enabled = 0;
			}
		}
	}
	pthread_mutex_unlock(&r->lock);
	for (k = 0; k < nj; k++)
		free(j[k].text);
	free(j);
	if (pending)
		*pending = later;
	return changed;
}
