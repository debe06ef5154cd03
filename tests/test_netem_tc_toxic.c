/* SPDX-License-Identifier: MIT */
/*
 * The tc toxic on TCP proxies end to end (tools/netem/tc_toxic.c through
 * tcp.h): a plane of two workers with real sockets on loopback and an echo
 * server thread, asserting properties, never timings: netem delay never
 * early and every byte in order, with jitter too (netem reorders packets,
 * the stream never); tbf shared by four connections never faster than
 * rate + burst together (a lower bound on the time), nothing lost though
 * the connections offer far more than tbf's limit; a changed and a
 * removed tc toxic with data in its device lose nothing and the old
 * devices go once empty; a proxy closed with pieces in its device counts
 * them dropped; a drop a stream cannot repair (a piece larger than tbf's
 * burst) resets the connection, counted in bytes_cut.  The tc stage's
 * order, window and resend on a simulated clock: test_netem_stream.c.
 * The helpers are test_netem_tcp.c's.  Real threads: labelled
 * "concurrent" (run under TSan too).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "tcp.h"
#include "tcp_priv.h" /* a proxy's retired tc devices */

#define MS 1000000ull

static struct toxic mk(enum toxic_type type, enum toxic_stream st, const char *name)
{
	struct toxic t;
	memset(&t, 0, sizeof(t));
	t.type = type;
	t.stream = st;
	t.toxicity = 1.0;
	snprintf(t.name, sizeof(t.name), "%s", name);
	return t;
}

static unsigned char pat(uint64_t i)
{
	return (unsigned char)(i * 131 + (i >> 8) * 7 + 3);
}


static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The echo server: one thread, epoll, every connection echoed; EOF or an
 * error closes it. */
struct echo_conn {
	int fd;
	uint32_t len, off;
	unsigned char buf[16384];
};

static struct echo {
	int lfd, ep, stop_fd;
	uint16_t port;
	pthread_t th;
} E;

static void *echo_main(void *arg)
{
	(void)arg;
	struct epoll_event ev[64];
	for (;;) {
		int n = epoll_wait(E.ep, ev, 64, 1000);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == &E.stop_fd)
				return NULL;
			if (ev[i].data.ptr == &E.lfd) {
				int fd;
				while ((fd = accept4(E.lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct echo_conn *c = calloc(1, sizeof(*c));
					CHECK(c);
					c->fd = fd;
					struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };
					CHECK_EQ(epoll_ctl(E.ep, EPOLL_CTL_ADD, fd, &e), 0);
				}
				continue;
			}
			struct echo_conn *c = ev[i].data.ptr;
			int dead = 0;
			if (!c->len) {
				ssize_t r = read(c->fd, c->buf, sizeof(c->buf));
				if (r > 0) {
					c->len = (uint32_t)r;
					c->off = 0;
				} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
					dead = 1;
				}
			}
			while (!dead && c->off < c->len) {
				ssize_t w = send(c->fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL);
				if (w > 0) {
					c->off += (uint32_t)w;
				} else if (errno == EAGAIN) {
					break;
				} else {
					dead = 1;
				}
			}
			if (dead) {
				close(c->fd);
				free(c);
				continue;
			}
			if (c->off == c->len)
				c->len = c->off = 0;
			struct epoll_event e = { .events = c->len ? EPOLLOUT : EPOLLIN, .data.ptr = c };
			epoll_ctl(E.ep, EPOLL_CTL_MOD, c->fd, &e);
		}
	}
}

static void echo_start(void)
{
	E.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK_EQ(bind(E.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(E.lfd, 4096), 0);
	socklen_t len = sizeof(a);
	getsockname(E.lfd, (struct sockaddr *)&a, &len);
	E.port = ntohs(a.sin_port);
	E.ep = epoll_create1(0);
	E.stop_fd = eventfd(0, 0);
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = &E.lfd };
	epoll_ctl(E.ep, EPOLL_CTL_ADD, E.lfd, &e);
	e.data.ptr = &E.stop_fd;
	epoll_ctl(E.ep, EPOLL_CTL_ADD, E.stop_fd, &e);
	CHECK_EQ(pthread_create(&E.th, NULL, echo_main, NULL), 0);
}

static void echo_stop(void)
{
	uint64_t one = 1;
	CHECK_EQ(write(E.stop_fd, &one, 8), 8);
	pthread_join(E.th, NULL);
	close(E.lfd);
	close(E.ep);
	close(E.stop_fd);
}

static struct sockaddr_in loop_addr(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	return a;
}

static struct tcp_plane *PL;

/* A proxy from 127.0.0.1:0 to the echo server (or @up_port). */
static struct tcp_proxy *proxy_open(uint16_t up_port, uint16_t *port)
{
	struct sockaddr_in l = loop_addr(0), u = loop_addr(up_port ? up_port : E.port);
	struct sockaddr_storage b;
	socklen_t blen;
	char err[256];
	struct tcp_proxy *p = NULL;
	int r = tcp_proxy_open(PL, "t", (struct sockaddr *)&l, sizeof(l), (struct sockaddr *)&u,
			       sizeof(u), &p, &b, &blen, err, sizeof(err));
	if (r)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(r, 0);
	*port = ntohs(((struct sockaddr_in *)&b)->sin_port);
	CHECK(*port != 0);
	return p;
}

static void set_toxics(struct tcp_proxy *p, const struct toxic *t, unsigned n)
{
	char err[256];
	int r = tcp_proxy_set_toxics(p, t, n, err, sizeof(err));
	if (r)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(r, 0);
}

static int client(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = loop_addr(port);
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	struct timeval tv = { 20, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_pat(int fd, uint64_t off, size_t len)
{
	unsigned char buf[65536];
	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = pat(off + k);
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		CHECK(w > 0);
		off += (uint64_t)w;
		len -= (size_t)w;
	}
}

/* Receive exactly @len bytes of the pattern from @off. */
static void recv_pat(int fd, uint64_t off, size_t len)
{
	unsigned char buf[65536];
	while (len) {
		ssize_t r = recv(fd, buf, len < sizeof(buf) ? len : sizeof(buf), 0);
		if (r <= 0)
			fprintf(stderr, "recv: %zd (%s), %zu bytes missing\n", r, strerror(errno), len);
		CHECK(r > 0);
		for (ssize_t k = 0; k < r; k++)
			CHECK_EQ(buf[k], pat(off + (uint64_t)k));
		off += (uint64_t)r;
		len -= (size_t)r;
	}
}

/* Read until EOF or error.  Return: the bytes; *err the errno (0: EOF). */
static size_t drain(int fd, int *err)
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

static void check_ledger(const struct tcp_proxy_stats *s)
{
	for (int d = 0; d < TOXIC_NSTREAMS; d++) {
		const struct tcp_dir_stats *x = &s->dir[d];
		if (x->bytes_in != x->bytes_out + x->bytes_cut + x->bytes_dropped + x->held)
			fprintf(stderr, "dir %d: in %llu out %llu cut %llu dropped %llu held %llu\n", d,
				(unsigned long long)x->bytes_in, (unsigned long long)x->bytes_out,
				(unsigned long long)x->bytes_cut, (unsigned long long)x->bytes_dropped,
				(unsigned long long)x->held);
		CHECK_EQ(x->bytes_in, x->bytes_out + x->bytes_cut + x->bytes_dropped + x->held);
	}
}

/* Wait (at most 10 s) until the proxy has no connection left; its final
 * ledger must balance. */
static void wait_idle(struct tcp_proxy *p, struct tcp_proxy_stats *s)
{
	for (int i = 0; i < 1000; i++) {
		tcp_proxy_stats(p, s);
		if (s->active == 0 && s->dir[0].held == 0 && s->dir[1].held == 0)
			break;
		sleep_ms(10);
	}
	CHECK_EQ(s->active, 0);
	check_ledger(s);
}

/* ------------------------------------------------------------ the tc toxic */

static struct toxic mk_tc(enum toxic_stream st, const char *name, char *qdisc)
{
	struct toxic t = mk(TOXIC_TC, st, name);
	t.a.tc.qdisc = qdisc;
	return t;
}

/* netem delay 20ms on the downstream: never early, every byte in order;
 * with jitter (netem reorders packets) the stream still never reorders. */
static void test_tc_delay(void)
{
	uint16_t port;
	struct tcp_proxy *p = proxy_open(0, &port);
	char q[] = "netem delay 20ms";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tcd", q);
	set_toxics(p, &t, 1);
	int fd = client(port);
	for (int k = 0; k < 10; k++) {
		double t0 = now_s();
		send_pat(fd, (uint64_t)k * 3000, 3000);
		recv_pat(fd, (uint64_t)k * 3000, 3000);
		CHECK(now_s() - t0 >= 0.020 - 0.0005);
	}
	char qj[] = "netem delay 20ms 15ms";
	t.a.tc.qdisc = qj;
	set_toxics(p, &t, 1);
	for (int k = 0; k < 300; k++)
		send_pat(fd, 30000 + (uint64_t)k * 501, 501);
	recv_pat(fd, 30000, 300 * 501);
	send_pat(fd, 30000 + 300 * 501, 200000);
	recv_pat(fd, 30000 + 300 * 501, 200000);
	close(fd);
	struct tcp_proxy_stats s;
	wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_cut, 0);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_dropped, 0);
	CHECK(s.dir[TOXIC_DOWNSTREAM].delay_sum_ns >= s.dir[TOXIC_DOWNSTREAM].delay_count * 5 * MS);
	tcp_proxy_close(p);
}

struct rate_arg {
	uint16_t port;
	int id;
	size_t len;
};

static void *rate_client(void *arg)
{
	struct rate_arg *a = arg;
	int fd = client(a->port);
	send_pat(fd, (uint64_t)a->id << 24, a->len);
	recv_pat(fd, (uint64_t)a->id << 24, a->len);
	close(fd);
	return NULL;
}

/* tbf shared by 4 connections: together they never pass rate + burst (a
 * lower bound on the time), every byte delivered in order, none lost
 * though tbf's limit is far below what the connections offer. */
static void test_tc_shared_rate(void)
{
	uint16_t port;
	struct tcp_proxy *p = proxy_open(0, &port);
	char q[] = "tbf rate 1mbit burst 10kb latency 50ms";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tbf", q);
	set_toxics(p, &t, 1);
	const double rate = 125000.0, burst = 10240.0;
	enum { N = 4 };
	const size_t LEN = 40000;
	pthread_t th[N];
	struct rate_arg a[N];
	double t0 = now_s();
	for (int i = 0; i < N; i++) {
		a[i] = (struct rate_arg){ port, i, LEN };
		CHECK_EQ(pthread_create(&th[i], NULL, rate_client, &a[i]), 0);
	}
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	double all = now_s() - t0;
	CHECK(all >= (N * LEN - burst) / rate - 0.001);
	/* one alone: the same bound for its bytes (the whole rate is its) */
	t0 = now_s();
	a[0] = (struct rate_arg){ port, 9, 2 * LEN };
	rate_client(&a[0]);
	double one = now_s() - t0;
	CHECK(one >= (2 * LEN - burst) / rate - 0.001);
	fprintf(stderr, "  tc tbf 1mbit: 4 x %zu bytes in %.3f s (%.0f B/s), 1 x %zu in %.3f s "
			"(%.0f B/s)\n",
		LEN, all, N * LEN / all, 2 * LEN, one, 2 * LEN / one);
	struct tcp_proxy_stats s;
	wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, N * LEN + 2 * LEN);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_cut, 0);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_dropped, 0);
	tcp_proxy_close(p);
}

/* Removing (and changing) the tc toxic with data in its device loses nothing. */
static void test_tc_remove_in_flight(void)
{
	uint16_t port;
	struct tcp_proxy *p = proxy_open(0, &port);
	char q[] = "netem delay 300ms";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tcr", q);
	set_toxics(p, &t, 1);
	int fd = client(port);
	for (int k = 0; k < 50; k++)
		send_pat(fd, (uint64_t)k * 1000, 1000);
	sleep_ms(50);
	char q2[] = "netem delay 200ms";
	t.a.tc.qdisc = q2; /* changed: a new device, the old one drains */
	set_toxics(p, &t, 1);
	for (int k = 50; k < 100; k++)
		send_pat(fd, (uint64_t)k * 1000, 1000);
	sleep_ms(20);
	set_toxics(p, NULL, 0); /* removed with chunks in it */
	send_pat(fd, 100000, 1000);
	recv_pat(fd, 0, 101000);
	close(fd);
	struct tcp_proxy_stats s;
	wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, 101000);
	sleep_ms(400); /* the old devices drain; the next call destroys them */
	tcp_proxy_stats(p, &s);
	CHECK(p->tcretired == NULL);
	tcp_proxy_close(p);
}

/* A proxy closed with chunks in its device: counted dropped. */
static void test_tc_close_in_flight(void)
{
	uint16_t port;
	struct tcp_proxy *p = proxy_open(0, &port);
	char q[] = "netem delay 10s";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tcc", q);
	set_toxics(p, &t, 1);
	int fd[3];
	for (int i = 0; i < 3; i++) {
		fd[i] = client(port);
		send_pat(fd[i], 0, 5000);
	}
	struct tcp_proxy_stats s;
	for (int i = 0; i < 1000; i++) {
		tcp_proxy_stats(p, &s);
		if (s.dir[TOXIC_DOWNSTREAM].held == 15000)
			break;
		sleep_ms(5);
	}
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].held, 15000);
	tcp_proxy_close_stats(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_dropped, 15000);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].held, 0);
	check_ledger(&s);
	for (int i = 0; i < 3; i++) {
		int err;
		CHECK_EQ(drain(fd[i], &err), 0);
		close(fd[i]);
	}
}

/* A drop a byte stream cannot repair (a packet larger than tbf's burst):
 * the connection is reset, the piece counted in bytes_cut. */
static void test_tc_oversize(void)
{
	uint16_t port;
	struct tcp_proxy *p = proxy_open(0, &port);
	char q[] = "tbf rate 1mbit burst 1000 limit 100000";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tco", q);
	set_toxics(p, &t, 1);
	int fd = client(port);
	send_pat(fd, 0, 5000);
	int err;
	size_t got = drain(fd, &err);
	CHECK(got < 5000);
	close(fd);
	struct tcp_proxy_stats s;
	wait_idle(p, &s);
	CHECK(s.dir[TOXIC_DOWNSTREAM].bytes_cut > 0);
	tcp_proxy_close(p);
}

int main(void)
{
	echo_start();
	struct tcp_plane_config cfg = { .workers = 2, .dir_bytes = 64u << 10 };
	char err[256];
	int r = tcp_plane_create(&cfg, &PL, err, sizeof(err));
	if (r)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(r, 0);
	RUN(test_tc_delay);
	RUN(test_tc_shared_rate);
	RUN(test_tc_remove_in_flight);
	RUN(test_tc_close_in_flight);
	RUN(test_tc_oversize);
	tcp_plane_destroy(PL);
	echo_stop();
	return 0;
}
