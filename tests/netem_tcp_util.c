/* SPDX-License-Identifier: MIT */
/*
 * The helpers pinwheel-netem's TCP tests share (netem_tcp_util.h): a
 * toxic with its defaults, the byte pattern, the clock, the echo server
 * thread, a proxy and a client on loopback, the pattern sent and checked,
 * the byte ledger.
 *
 * Threads: the echo server's thread runs echo_main() alone on its epoll
 * set (the connections it accepts are its own); ntu_echo_start() and
 * ntu_echo_stop() run on the test's main thread, the stop handed over
 * through an eventfd.  Every other function keeps no state and may run on
 * any test thread.  No lock is taken here.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "netem_tcp_util.h"

struct toxic ntu_toxic(enum toxic_type type, enum toxic_stream st, const char *name)
{
	struct toxic t;
	memset(&t, 0, sizeof(t));
	t.type = type;
	t.stream = st;
	t.toxicity = 1.0;
	snprintf(t.name, sizeof(t.name), "%s", name);
	return t;
}

unsigned char ntu_pat(uint64_t i)
{
	return (unsigned char)(i * 131 + (i >> 8) * 7 + 3);
}

double ntu_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ntu_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

struct sockaddr_in ntu_loop_addr(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	return a;
}

/* ------------------------------------------------------------ echo server */

/* One accepted connection: what was read and not yet written back. */
struct echo_conn {
	int fd;
	uint32_t len, off;
	unsigned char buf[16384];
};

/* Read a piece when nothing is pending, write what is pending; the
 * connection waits for EPOLLOUT while a piece is left.
 * Return: 1 when the connection is done (EOF or an error). */
static int echo_serve(struct echo_conn *c)
{
	if (!c->len) {
		ssize_t r = read(c->fd, c->buf, sizeof(c->buf));
		if (r > 0) {
			c->len = (uint32_t)r;
			c->off = 0;
		} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
			return 1;
		}
	}
	while (c->off < c->len) {
		ssize_t w = send(c->fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL);
		if (w > 0)
			c->off += (uint32_t)w;
		else if (errno == EAGAIN)
			break;
		else
			return 1;
	}
	return 0;
}

static void *echo_main(void *arg)
{
	struct ntu_echo *e = arg;
	struct epoll_event ev[64];
	for (;;) {
		int n = epoll_wait(e->ep, ev, 64, 1000);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == &e->stop_fd)
				return NULL;
			if (ev[i].data.ptr == &e->lfd) {
				int fd;
				while ((fd = accept4(e->lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct echo_conn *c = calloc(1, sizeof(*c));
					CHECK(c);
					c->fd = fd;
					struct epoll_event x = { .events = EPOLLIN, .data.ptr = c };
					CHECK_EQ(epoll_ctl(e->ep, EPOLL_CTL_ADD, fd, &x), 0);
				}
				continue;
			}
			struct echo_conn *c = ev[i].data.ptr;
			if (echo_serve(c)) {
				close(c->fd);
				free(c);
				continue;
			}
			if (c->off == c->len)
				c->len = c->off = 0;
			struct epoll_event x = { .events = c->len ? EPOLLOUT : EPOLLIN, .data.ptr = c };
			epoll_ctl(e->ep, EPOLL_CTL_MOD, c->fd, &x);
		}
	}
}

void ntu_echo_start(struct ntu_echo *e)
{
	e->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = ntu_loop_addr(0);
	CHECK_EQ(bind(e->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(e->lfd, 4096), 0);
	socklen_t len = sizeof(a);
	getsockname(e->lfd, (struct sockaddr *)&a, &len);
	e->port = ntohs(a.sin_port);
	e->ep = epoll_create1(0);
	e->stop_fd = eventfd(0, 0);
	struct epoll_event x = { .events = EPOLLIN, .data.ptr = &e->lfd };
	epoll_ctl(e->ep, EPOLL_CTL_ADD, e->lfd, &x);
	x.data.ptr = &e->stop_fd;
	epoll_ctl(e->ep, EPOLL_CTL_ADD, e->stop_fd, &x);
	CHECK_EQ(pthread_create(&e->th, NULL, echo_main, e), 0);
}

void ntu_echo_stop(struct ntu_echo *e)
{
	uint64_t one = 1;
	CHECK_EQ(write(e->stop_fd, &one, 8), 8);
	pthread_join(e->th, NULL);
	close(e->lfd);
	close(e->ep);
	close(e->stop_fd);
}

void ntu_plane_start(struct ntu_echo *e, struct tcp_plane **pl)
{
	ntu_echo_start(e);
	struct tcp_plane_config cfg = { .workers = 2, .dir_bytes = 64u << 10 };
	char err[256];
	int r = tcp_plane_create(&cfg, pl, err, sizeof(err));
	if (r)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(r, 0);
}

void ntu_plane_stop(struct ntu_echo *e, struct tcp_plane *pl)
{
	tcp_plane_destroy(pl);
	ntu_echo_stop(e);
}

/* ------------------------------------------------------------ proxy, client */

struct tcp_proxy *ntu_proxy_open(struct tcp_plane *pl, uint16_t up_port, uint16_t *port)
{
	struct sockaddr_in l = ntu_loop_addr(0), u = ntu_loop_addr(up_port);
	struct sockaddr_storage b;
	socklen_t blen;
	char err[256];
	struct tcp_proxy *p = NULL;
	int r = tcp_proxy_open(pl, "t", (struct sockaddr *)&l, sizeof(l), (struct sockaddr *)&u,
			       sizeof(u), &p, &b, &blen, err, sizeof(err));
	if (r)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(r, 0);
	*port = ntohs(((struct sockaddr_in *)&b)->sin_port);
	CHECK(*port != 0);
	return p;
}

void ntu_set_toxics(struct tcp_proxy *p, const struct toxic *t, unsigned n)
{
	char err[256];
	int r = tcp_proxy_set_toxics(p, t, n, err, sizeof(err));
	if (r)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(r, 0);
}

int ntu_client(uint16_t port, int nonblock)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	struct sockaddr_in a = ntu_loop_addr(port);
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	struct timeval tv = { 20, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (nonblock)
		fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* ------------------------------------------------------------ the pattern */

void ntu_send_pat(int fd, uint64_t off, size_t len)
{
	unsigned char buf[65536];
	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = ntu_pat(off + k);
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		CHECK(w > 0);
		off += (uint64_t)w;
		len -= (size_t)w;
	}
}

/* Byte @at of the stream came wrong (@got, @n bytes read from there on):
 * say where in the stream those bytes belong, the nearest offset first
 * (the pattern repeats every 64 KiB: within 32 KiB either way, a piece
 * reordered, doubled or lost shows its distance), then fail. */
static void pat_mismatch(const unsigned char *got, size_t n, uint64_t at)
{
	size_t m = n < 32 ? n : 32;
	for (int64_t d = 0; m >= 8 && d < 32768; d = d > 0 ? -d : 1 - d) {
		if ((int64_t)at + d < 0)
			continue;
		uint64_t x = at + (uint64_t)d;
		size_t k = 0;
		while (k < m && got[k] == ntu_pat(x + k))
			k++;
		if (k == m) {
			fprintf(stderr, "stream byte %llu: the next %zu bytes are those of offset "
					"%+lld from there\n", (unsigned long long)at, m, (long long)d);
			break;
		}
	}
	CHECK_EQ(got[0], ntu_pat(at));
}

void ntu_recv_pat(int fd, uint64_t off, size_t len)
{
	unsigned char buf[65536];
	while (len) {
		ssize_t r = recv(fd, buf, len < sizeof(buf) ? len : sizeof(buf), 0);
		if (r <= 0)
			fprintf(stderr, "recv: %zd (%s), %zu bytes missing\n", r, strerror(errno), len);
		CHECK(r > 0);
		for (ssize_t k = 0; k < r; k++)
			if (buf[k] != ntu_pat(off + (uint64_t)k))
				pat_mismatch(buf + k, (size_t)(r - k), off + (uint64_t)k);
		off += (uint64_t)r;
		len -= (size_t)r;
	}
}

size_t ntu_drain(int fd, int *err)
{
	unsigned char buf[65536];
	size_t total = 0;
	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r > 0) {
			total += (size_t)r;
			continue;
		}
		*err = r == 0 ? 0 : errno;
		return total;
	}
}

/* ------------------------------------------------------------ the ledger */

/* Whether direction @x's ledger balances (a snapshot taken while a worker
 * moves counters may not: tcp.c, "Statistics"). */
static int dir_balanced(const struct tcp_dir_stats *x)
{
	return x->bytes_in == x->bytes_out + x->bytes_cut + x->bytes_dropped + x->held;
}

void ntu_check_ledger(const struct tcp_proxy_stats *s)
{
	for (int d = 0; d < TOXIC_NSTREAMS; d++) {
		const struct tcp_dir_stats *x = &s->dir[d];
		if (!dir_balanced(x))
			fprintf(stderr, "dir %d: in %llu out %llu cut %llu dropped %llu held %llu\n", d,
				(unsigned long long)x->bytes_in, (unsigned long long)x->bytes_out,
				(unsigned long long)x->bytes_cut, (unsigned long long)x->bytes_dropped,
				(unsigned long long)x->held);
		CHECK(dir_balanced(x));
	}
}

void ntu_wait_idle(struct tcp_proxy *p, struct tcp_proxy_stats *s)
{
	for (int i = 0; i < 1000; i++) {
		tcp_proxy_stats(p, s);
		if (s->active == 0 && s->dir[0].held == 0 && s->dir[1].held == 0 &&
		    dir_balanced(&s->dir[0]) && dir_balanced(&s->dir[1]))
			break;
		ntu_sleep_ms(10);
	}
	CHECK_EQ(s->active, 0);
	ntu_check_ledger(s);
}

void ntu_wait_held(struct tcp_proxy *p, enum toxic_stream d, uint64_t bytes,
		   struct tcp_proxy_stats *s)
{
	for (int i = 0; i < 1000; i++) {
		tcp_proxy_stats(p, s);
		if (s->dir[d].held == bytes)
			break;
		ntu_sleep_ms(5);
	}
	CHECK_EQ(s->dir[d].held, bytes);
}
