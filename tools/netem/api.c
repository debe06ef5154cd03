/* SPDX-License-Identifier: MIT */
/*
 * toxiproxy's HTTP API over the network: the transport only.  Requests
 * are parsed by libmicrohttpd, routed by method and path into the
 * registry's one handler (proxy_api_request(), tools/netem/proxy.c), and
 * its status, body and content type are sent back.
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
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

/* A request's body as it arrives. */
struct req {
	char *buf;
	size_t len, cap;
	int too_big;
};

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
	enum MHD_Result ret = MHD_queue_response(c, status, rs);
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
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > API_MAX_BODY) {
			q->too_big = 1;
			conn_window(a, c, 0);
			return reply_too_big(c); /* the body is never read */
		}
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (q->too_big)
			return MHD_YES;
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
	if (q->too_big)
		return reply_too_big(c);
	char *body = NULL;
	const char *ctype = NULL;
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
		free(q);
		*con_cls = NULL;
	}
}

static int fail(char *err, size_t errlen, const struct sockaddr *addr, const char *what, int e)
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
	snprintf(err, errlen, "--api %s%s%s:%u: %s: %s", addr->sa_family == AF_INET6 ? "[" : "", h,
		 addr->sa_family == AF_INET6 ? "]" : "", port, what, strerror(e));
	return -e;
}

int netem_api_start(struct proxy_registry *r, const struct sockaddr *addr, socklen_t len,
		    struct netem_api **out, struct sockaddr_storage *bound, socklen_t *bound_len,
		    char *err, size_t errlen)
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fail(err, errlen, addr, "socket", errno);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, addr, len) || listen(fd, 128)) {
		int e = errno;
		close(fd);
		return fail(err, errlen, addr, "bind", e);
	}
	*bound_len = sizeof(*bound);
	getsockname(fd, (struct sockaddr *)bound, bound_len);
	struct netem_api *a = calloc(1, sizeof(*a));
	if (!a) {
		close(fd);
		return fail(err, errlen, addr, "start", ENOMEM);
	}
	a->r = r;
	a->fd = fd;
	a->head.next = a->head.prev = &a->head;
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
		free(a);
		return fail(err, errlen, addr,
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
	free(a);
}
