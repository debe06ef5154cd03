/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's TCP data path (tools/netem/tcp/tcp.c, conn.c) through
 * tcp.h: a plane with real sockets on loopback and an echo server thread,
 * asserting properties, never timings: every byte in order and exact
 * byte ledgers (bytes_in == bytes_out + cut + dropped + held), each
 * toxic's effect end to end with "not earlier than" bounds only, closes
 * and resets as toxiproxy gives them (limit_data, timeout, reset_peer,
 * slow_close, half-close both ways), toxicity 0, back-pressure's bound on
 * held bytes (per direction and plane-wide), removing toxics with data in
 * flight, live switches under traffic, upstream refused and changed,
 * IPv6, 1000 concurrent connections, a close with data in flight counted
 * dropped, refused toxics (tc words tc refuses among them), each slice
 * its own write.  The tc toxic end to end is test_netem_tc_toxic.c.
 * The toxics' exact semantics are checked on a
 * simulated clock in test_netem_stream.c.  Real threads: labelled
 * "concurrent" (run under TSan too).
 *
 * `test_netem_tcp bench [GiB]` is no test: one connection's throughput
 * with no toxic, direct and through a plane (PW_BENCH_VIA=SINK:PROXY adds
 * a row through another proxy, e.g. toxiproxy, forwarding to port SINK).
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "netem_tcp_util.h"
#include "stream.h"
#include "tcp.h"

#define MS 1000000ull

static struct ntu_echo E;
static struct tcp_plane *PL;

static void test_plain(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	int fd = ntu_client(port, 0);
	for (int k = 0; k < 8; k++) {
		ntu_send_pat(fd, (uint64_t)k << 17, 1 << 17);
		ntu_recv_pat(fd, (uint64_t)k << 17, 1 << 17);
	}
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.accepted, 1);
	CHECK_EQ(s.closed, 1);
	CHECK_EQ(s.dir[TOXIC_UPSTREAM].bytes_in, 8 << 17);
	CHECK_EQ(s.dir[TOXIC_UPSTREAM].bytes_out, 8 << 17);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, 8 << 17);
	tcp_proxy_close(p);
}

static void test_latency(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t[2] = { ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "down"),
			      ntu_toxic(TOXIC_LATENCY, TOXIC_UPSTREAM, "up") };
	t[0].a.latency.latency_ms = 30;
	t[0].a.latency.jitter_ms = 10;
	t[1].a.latency.latency_ms = 10;
	ntu_set_toxics(p, t, 2);
	int fd = ntu_client(port, 0);
	/* each message's echo comes back no earlier than 10 + 20 ms */
	for (int k = 0; k < 20; k++) {
		double t0 = ntu_now_s();
		ntu_send_pat(fd, (uint64_t)k * 1000, 1000);
		ntu_recv_pat(fd, (uint64_t)k * 1000, 1000);
		CHECK(ntu_now_s() - t0 >= 0.030 - 0.0005);
	}
	/* a burst of small writes: every byte, in order */
	for (int k = 0; k < 200; k++)
		ntu_send_pat(fd, 20000 + (uint64_t)k * 37, 37);
	ntu_recv_pat(fd, 20000, 200 * 37);
	struct tcp_proxy_stats s;
	tcp_proxy_stats(p, &s);
	CHECK(s.dir[TOXIC_DOWNSTREAM].delay_count > 0);
	CHECK(s.dir[TOXIC_DOWNSTREAM].delay_sum_ns >= s.dir[TOXIC_DOWNSTREAM].delay_count * 20 * MS);
	/* none early: the smallest no less than 30 - 10 ms */
	CHECK(s.dir[TOXIC_DOWNSTREAM].delay_min_ns >= 20 * MS);
	CHECK(s.dir[TOXIC_DOWNSTREAM].delay_min_ns <= s.dir[TOXIC_DOWNSTREAM].delay_max_ns);
	close(fd);
	ntu_wait_idle(p, &s);
	tcp_proxy_close(p);
}

static void test_bandwidth_slicer(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw");
	t.a.bandwidth.rate_kbps = 1000; /* 1 MB/s */
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	double t0 = ntu_now_s();
	ntu_send_pat(fd, 0, 300000);
	ntu_recv_pat(fd, 0, 300000);
	CHECK(ntu_now_s() - t0 >= 0.3 - 0.001); /* never faster than the rate */
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	/* the achieved rate's windows: whole ones, within what went out; the
	 * echo keeps the stage backlogged for 0.3 s: one window at least */
	const struct tcp_dir_stats *ds = &s.dir[TOXIC_DOWNSTREAM];
	CHECK_EQ(ds->rate_ns % STREAM_RATE_WINDOW_NS, 0);
	CHECK(ds->rate_ns >= STREAM_RATE_WINDOW_NS);
	CHECK(ds->rate_bytes > 0 && ds->rate_bytes <= ds->bytes_out);
	CHECK_EQ(s.dir[TOXIC_UPSTREAM].rate_ns, 0); /* no limit that way */

	struct toxic sl = ntu_toxic(TOXIC_SLICER, TOXIC_DOWNSTREAM, "sl");
	sl.a.slicer.average_size = 100;
	sl.a.slicer.size_variation = 40;
	sl.a.slicer.delay_us = 100;
	ntu_set_toxics(p, &sl, 1);
	fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 20000);
	ntu_recv_pat(fd, 0, 20000); /* every byte, in order */
	close(fd);
	ntu_wait_idle(p, &s);
	/* (the pieces' sizes are checked on the simulated clock: here a late
	 * worker may write several due pieces at once) */
	CHECK(s.dir[TOXIC_DOWNSTREAM].chunks_out > 1);
	tcp_proxy_close(p);
}

static void test_limit_data(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_LIMIT_DATA, TOXIC_DOWNSTREAM, "lim");
	t.a.limit_data.bytes = 1000;
	ntu_set_toxics(p, &t, 1);
	for (int k = 0; k < 5; k++) {
		int fd = ntu_client(port, 0);
		ntu_send_pat(fd, 0, 5000);
		ntu_recv_pat(fd, 0, 1000);
		int err;
		size_t more = ntu_drain(fd, &err);
		CHECK_EQ(more, 0); /* exactly 1000, then the close */
		close(fd);
	}
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, 5000);
	tcp_proxy_close(p);
}

static void test_timeout_reset(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_TIMEOUT, TOXIC_DOWNSTREAM, "to");
	/* long enough for the echo's 100 bytes to reach the toxic first,
	 * even slowed 5-20x (they are then what it cuts) */
	t.a.timeout.timeout_ms = 500;
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	double t0 = ntu_now_s();
	ntu_send_pat(fd, 0, 100);
	int err;
	CHECK_EQ(ntu_drain(fd, &err), 0); /* nothing passes; then it closes */
	CHECK(ntu_now_s() - t0 >= 0.5 - 0.001);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_cut, 100);

	/* timeout 0: held back (dropped) until removed, which closes */
	t.a.timeout.timeout_ms = 0;
	ntu_set_toxics(p, &t, 1);
	fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 100);
	struct pollfd pf = { fd, POLLIN, 0 };
	CHECK_EQ(poll(&pf, 1, 200), 0);
	ntu_set_toxics(p, NULL, 0);
	CHECK_EQ(ntu_drain(fd, &err), 0);
	close(fd);
	ntu_wait_idle(p, &s);

	struct toxic r = ntu_toxic(TOXIC_RESET_PEER, TOXIC_DOWNSTREAM, "rp");
	r.a.reset_peer.timeout_ms = 50;
	ntu_set_toxics(p, &r, 1);
	fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 100);
	ntu_drain(fd, &err);
	CHECK_EQ(err, ECONNRESET);
	close(fd);
	ntu_wait_idle(p, &s);

	struct toxic sc = ntu_toxic(TOXIC_SLOW_CLOSE, TOXIC_DOWNSTREAM, "sc");
	sc.a.slow_close.delay_ms = 200;
	ntu_set_toxics(p, &sc, 1);
	fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 1000);
	ntu_recv_pat(fd, 0, 1000);
	t0 = ntu_now_s();
	shutdown(fd, SHUT_WR);
	CHECK_EQ(ntu_drain(fd, &err), 0);
	CHECK_EQ(err, 0);
	CHECK(ntu_now_s() - t0 >= 0.2 - 0.001); /* the close waited */
	close(fd);
	ntu_wait_idle(p, &s);

	/* toxicity 0: no effect */
	struct toxic z = ntu_toxic(TOXIC_LIMIT_DATA, TOXIC_DOWNSTREAM, "lim");
	z.a.limit_data.bytes = 10;
	z.toxicity = 0.0;
	ntu_set_toxics(p, &z, 1);
	fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 5000);
	ntu_recv_pat(fd, 0, 5000);
	close(fd);
	ntu_wait_idle(p, &s);
	tcp_proxy_close(p);
}

/* A fast sender against 10 KB/s: held never passes the bound. */
static void test_backpressure(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_BANDWIDTH, TOXIC_UPSTREAM, "bw");
	t.a.bandwidth.rate_kbps = 10;
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	unsigned char buf[65536];
	memset(buf, 7, sizeof(buf));
	uint64_t sent = 0, max_held = 0;
	double t0 = ntu_now_s();
	struct tcp_proxy_stats s;
	while (ntu_now_s() - t0 < 1.0) {
		ssize_t w = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (w > 0)
			sent += (uint64_t)w;
		for (;;) { /* the echo: keep the other way moving */
			ssize_t r = recv(fd, buf, sizeof(buf), 0);
			if (r <= 0)
				break;
			memset(buf, 7, sizeof(buf));
		}
		tcp_proxy_stats(p, &s);
		if (s.dir[TOXIC_UPSTREAM].held > max_held)
			max_held = s.dir[TOXIC_UPSTREAM].held;
		ntu_sleep_ms(2);
	}
	CHECK(sent > 4 * (64u << 10)); /* the sender did outrun the toxic */
	CHECK(max_held <= (64u << 10));  /* the plane's dir_bytes (one read at most) */
	CHECK(s.dir[TOXIC_UPSTREAM].stalls > 0);
	/* remove the toxic with all that in flight: nothing is lost */
	ntu_set_toxics(p, NULL, 0);
	fcntl(fd, F_SETFL, 0);
	shutdown(fd, SHUT_WR);
	int err;
	ntu_drain(fd, &err);
	close(fd);
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_UPSTREAM].bytes_in, s.dir[TOXIC_UPSTREAM].bytes_out);
	tcp_proxy_close(p);
}

/* Removing a toxic with data in flight loses nothing. */
static void test_remove_in_flight(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t[2] = { ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat"),
			      ntu_toxic(TOXIC_SLICER, TOXIC_DOWNSTREAM, "sl") };
	t[0].a.latency.latency_ms = 300;
	t[1].a.slicer.average_size = 500;
	t[1].a.slicer.delay_us = 2000;
	ntu_set_toxics(p, t, 2);
	int fd = ntu_client(port, 0);
	for (int k = 0; k < 50; k++) {
		ntu_send_pat(fd, (uint64_t)k * 1000, 1000);
		ntu_sleep_ms(1);
	}
	ntu_sleep_ms(20);
	ntu_set_toxics(p, &t[1], 1); /* the latency goes with 50 chunks in it */
	ntu_sleep_ms(5);
	ntu_set_toxics(p, NULL, 0);
	ntu_recv_pat(fd, 0, 50000);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, 50000);
	tcp_proxy_close(p);
}

/* Toxics switched live, many times, under traffic on many connections. */
struct churn_arg {
	uint16_t port;
	int id;
};

static void *churn_client(void *arg)
{
	struct churn_arg *a = arg;
	int fd = ntu_client(a->port, 0);
	uint64_t off = (uint64_t)a->id << 32;
	for (int k = 0; k < 40; k++) {
		ntu_send_pat(fd, off, 3000);
		ntu_recv_pat(fd, off, 3000);
		off += 3000;
	}
	close(fd);
	return NULL;
}

static void test_switch_churn(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	pthread_t th[8];
	struct churn_arg a[8];
	for (int i = 0; i < 8; i++) {
		a[i] = (struct churn_arg){ port, i };
		CHECK_EQ(pthread_create(&th[i], NULL, churn_client, &a[i]), 0);
	}
	struct toxic t[3] = { ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat"),
			      ntu_toxic(TOXIC_SLICER, TOXIC_UPSTREAM, "sl"),
			      ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw") };
	t[0].a.latency.latency_ms = 1;
	t[0].a.latency.jitter_ms = 1;
	t[1].a.slicer.average_size = 200;
	t[1].a.slicer.size_variation = 50;
	t[1].a.slicer.delay_us = 10;
	t[2].a.bandwidth.rate_kbps = 5000;
	for (int k = 0; k < 150; k++) {
		unsigned mask = (unsigned)k * 5 % 8;
		struct toxic sel[3];
		unsigned n = 0;
		for (unsigned i = 0; i < 3; i++)
			if (mask & (1u << i))
				sel[n++] = t[i];
		ntu_set_toxics(p, sel, n);
		ntu_sleep_ms(2);
	}
	ntu_set_toxics(p, NULL, 0);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_UPSTREAM].bytes_out, 8 * 40 * 3000);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, 8 * 40 * 3000);
	tcp_proxy_close(p);
}

static void test_refused(void)
{
	int tmp = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = ntu_loop_addr(0);
	CHECK_EQ(bind(tmp, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t len = sizeof(a);
	getsockname(tmp, (struct sockaddr *)&a, &len);
	uint16_t dead = ntohs(a.sin_port);
	close(tmp); /* nothing listens there now */
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, dead, &port);
	int fd = ntu_client(port, 0);
	int err;
	CHECK_EQ(ntu_drain(fd, &err), 0); /* closed */
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.upstream_failed, 1);
	CHECK_EQ(s.closed, 1);
	tcp_proxy_close(p);
}

/* IPv6 listen (where the machine has ::1), and a new upstream for the
 * connections accepted from then on. */
static void test_v6_upstream(void)
{
	int probe = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 l6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int have6 = probe >= 0 && bind(probe, (struct sockaddr *)&l6, sizeof(l6)) == 0;
	if (probe >= 0)
		close(probe);
	struct sockaddr_in u = ntu_loop_addr(E.port);
	struct sockaddr_storage b;
	socklen_t blen;
	char err[256];
	struct tcp_proxy *p = NULL;
	uint16_t port;
	if (have6) {
		CHECK_EQ(tcp_proxy_open(PL, "v6", (struct sockaddr *)&l6, sizeof(l6), (struct sockaddr *)&u,
					sizeof(u), &p, &b, &blen, err, sizeof(err)),
			 0);
		CHECK_EQ(b.ss_family, AF_INET6);
		port = ntohs(((struct sockaddr_in6 *)&b)->sin6_port);
		int fd = socket(AF_INET6, SOCK_STREAM, 0);
		struct sockaddr_in6 a = l6;
		a.sin6_port = htons(port);
		CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		ntu_send_pat(fd, 0, 30000);
		ntu_recv_pat(fd, 0, 30000);
		close(fd);
		struct tcp_proxy_stats s;
		ntu_wait_idle(p, &s);
		tcp_proxy_close(p);
	} else {
		printf("# no ::1 here: the IPv6 half skipped\n");
	}
	/* a dead upstream, then the echo server again */
	int tmp = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = ntu_loop_addr(0);
	CHECK_EQ(bind(tmp, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t len = sizeof(a);
	getsockname(tmp, (struct sockaddr *)&a, &len);
	close(tmp);
	p = ntu_proxy_open(PL, E.port, &port);
	CHECK_EQ(tcp_proxy_set_upstream(p, (struct sockaddr *)&a, sizeof(a)), 0);
	int fd = ntu_client(port, 0);
	int e;
	CHECK_EQ(ntu_drain(fd, &e), 0);
	close(fd);
	CHECK_EQ(tcp_proxy_set_upstream(p, (struct sockaddr *)&u, sizeof(u)), 0);
	fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 1000);
	ntu_recv_pat(fd, 0, 1000);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.upstream_failed, 1);
	CHECK_EQ(s.accepted, 2);
	tcp_proxy_close(p);
}

static void test_many(void)
{
	enum { N = 1000, LEN = 10000 };
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	int *fd = calloc(N, sizeof(int));
	for (int i = 0; i < N; i++) {
		fd[i] = ntu_client(port, 0);
		ntu_send_pat(fd[i], (uint64_t)i * LEN, LEN);
	}
	for (int i = 0; i < N; i++)
		ntu_recv_pat(fd[i], (uint64_t)i * LEN, LEN);
	struct tcp_proxy_stats s;
	tcp_proxy_stats(p, &s);
	CHECK_EQ(s.accepted, N);
	CHECK_EQ(s.active, N);
	for (int i = 0; i < N; i++)
		close(fd[i]);
	free(fd);
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.closed, N);
	for (int d = 0; d < TOXIC_NSTREAMS; d++) {
		CHECK_EQ(s.dir[d].bytes_in, (uint64_t)N * LEN);
		CHECK_EQ(s.dir[d].bytes_out, (uint64_t)N * LEN);
	}
	tcp_proxy_close(p);
}

static void test_close_in_flight(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat");
	t.a.latency.latency_ms = 10000;
	ntu_set_toxics(p, &t, 1);
	int fd[3];
	for (int i = 0; i < 3; i++) {
		fd[i] = ntu_client(port, 0);
		ntu_send_pat(fd[i], 0, 5000);
	}
	struct tcp_proxy_stats s;
	ntu_wait_held(p, TOXIC_DOWNSTREAM, 15000, &s);
	tcp_proxy_close_stats(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_dropped, 15000);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].held, 0);
	CHECK_EQ(s.active, 0);
	ntu_check_ledger(&s);
	for (int i = 0; i < 3; i++) {
		int err;
		CHECK_EQ(ntu_drain(fd[i], &err), 0); /* closed, nothing delivered */
		close(fd[i]);
	}
}

/* A client that half-closes: toxiproxy's close stops reading the server
 * once the client's FIN is through; half_close delivers the whole answer. */
static void test_half_close(void)
{
	struct tcp_plane *keep = PL;
	for (int half = 0; half < 2; half++) {
		struct tcp_plane_config cfg = { .workers = 1, .half_close = half };
		char err[256];
		CHECK_EQ(tcp_plane_create(&cfg, &PL, err, sizeof(err)), 0);
		uint16_t port;
		struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
		int fd = ntu_client(port, 0);
		ntu_send_pat(fd, 0, 200000);
		shutdown(fd, SHUT_WR);
		unsigned char buf[65536];
		uint64_t got = 0;
		ssize_t r;
		while ((r = recv(fd, buf, sizeof(buf), 0)) > 0) {
			for (ssize_t k = 0; k < r; k++)
				CHECK_EQ(buf[k], ntu_pat(got + (uint64_t)k));
			got += (uint64_t)r;
		}
		CHECK(r == 0); /* a FIN, never a reset */
		if (half)
			CHECK_EQ(got, 200000);
		CHECK(got <= 200000);
		close(fd);
		struct tcp_proxy_stats s;
		ntu_wait_idle(p, &s);
		CHECK_EQ(s.dir[TOXIC_UPSTREAM].bytes_out, 200000);
		CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, got);
		tcp_plane_destroy(PL);
	}
	PL = keep;
}

/* max_bytes bounds all connections' held bytes together; nothing lost. */
static void test_max_bytes(void)
{
	struct tcp_plane *keep = PL;
	struct tcp_plane_config cfg = { .workers = 2, .max_bytes = 100000 };
	char err[256];
	CHECK_EQ(tcp_plane_create(&cfg, &PL, err, sizeof(err)), 0);
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_LATENCY, TOXIC_UPSTREAM, "lat");
	t.a.latency.latency_ms = 100;
	ntu_set_toxics(p, &t, 1);
	int fd[4];
	for (int i = 0; i < 4; i++) {
		fd[i] = ntu_client(port, 0);
		fcntl(fd[i], F_SETFL, O_NONBLOCK);
	}
	uint64_t sent[4] = { 0 }, got[4] = { 0 }, max_held = 0;
	enum { LEN = 300000 };
	unsigned char buf[65536];
	double t0 = ntu_now_s();
	int done = 0;
	while (done < 4 && ntu_now_s() - t0 < 30) {
		done = 0;
		for (int i = 0; i < 4; i++) {
			if (sent[i] < LEN) {
				size_t n = LEN - sent[i] < sizeof(buf) ? LEN - sent[i] : sizeof(buf);
				for (size_t k = 0; k < n; k++)
					buf[k] = ntu_pat(sent[i] + k);
				ssize_t w = send(fd[i], buf, n, MSG_NOSIGNAL);
				if (w > 0)
					sent[i] += (uint64_t)w;
			}
			ssize_t r;
			while ((r = recv(fd[i], buf, sizeof(buf), 0)) > 0) {
				for (ssize_t k = 0; k < r; k++)
					CHECK_EQ(buf[k], ntu_pat(got[i] + (uint64_t)k));
				got[i] += (uint64_t)r;
			}
			done += got[i] == LEN;
		}
		struct tcp_proxy_stats s;
		tcp_proxy_stats(p, &s);
		uint64_t h = s.dir[0].held_mem + s.dir[1].held_mem;
		max_held = h > max_held ? h : max_held;
		ntu_sleep_ms(1);
	}
	CHECK_EQ(done, 4);
	/* max_bytes bounds memory (held <= held_mem); a direction holding
	 * less than its reserve (64 KiB here) reads past it (8 directions), and
	 * two workers may each read once past a bound the other just reached */
	CHECK(max_held <= 100000 + 8 * (64u << 10) + (64u << 10));
	for (int i = 0; i < 4; i++)
		close(fd[i]);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_UPSTREAM].bytes_out, 4 * LEN);
	CHECK(s.dir[TOXIC_UPSTREAM].stalls > 0);
	tcp_plane_destroy(PL); /* closes p */
	PL = keep;
}

static void test_refusals(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char err[256];
	struct toxic t = ntu_toxic(TOXIC_TC, TOXIC_DOWNSTREAM, "tc");
	char q1[] = "netem delay 10ms loss 1%";
	t.a.tc.qdisc = q1;
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "loss"));
	char q2[] = "tbf rate 1mbit burst 10k latency 10ms";
	t.a.tc.qdisc = q2;
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), 0);
	/* words tc refuses: tc's message, naming the toxic */
	char q3[] = "nosuchqdisc 1";
	t.a.tc.qdisc = q3;
	err[0] = '\0';
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "toxic tc") && strstr(err, "nosuchqdisc"));
	char q4[] = "tbf rate 1mbit";
	t.a.tc.qdisc = q4;
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), -EINVAL);
	CHECK(strlen(err) > 20);
	/* a batch: the device word is the direction's device, whatever it says */
	char b1[] = "tc qdisc add dev X root handle 1: htb default 10\n"
		    "# a comment\n"
		    "class add dev X parent 1: classid 1:10 htb rate 10mbit\n";
	t.a.tc.qdisc = NULL;
	t.a.tc.batch = b1;
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), 0);
	char b2[] = "qdisc add dev X root handle 1: htb\nclass add dev X parent 1: classid 1:10 htb\n";
	t.a.tc.batch = b2;
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "line 2"));
	ntu_set_toxics(p, NULL, 0);
	struct toxic l = ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "neg");
	l.a.latency.latency_ms = -1;
	CHECK_EQ(tcp_proxy_set_toxics(p, &l, 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "latency"));
	/* the same port twice: refused (SO_REUSEPORT would share it) */
	struct sockaddr_in a = ntu_loop_addr(port), u = ntu_loop_addr(E.port);
	struct tcp_proxy *q = NULL;
	CHECK_EQ(tcp_proxy_open(PL, "dup", (struct sockaddr *)&a, sizeof(a), (struct sockaddr *)&u,
				sizeof(u), &q, NULL, NULL, err, sizeof(err)),
		 -EADDRINUSE);
	CHECK(strstr(err, "127.0.0.1"));
	tcp_proxy_close(p);
}

/* ---- `test_netem_tcp bench [GiB]`: one connection's throughput, no toxic,
 * through the plane and direct (a figure for docs, not a test). */
struct sink {
	int lfd;
	uint64_t bytes;
};

/* Each slice its own write (chunks_out counts them), as toxiproxy. */
static void test_slicer_writes(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_SLICER, TOXIC_DOWNSTREAM, "sl");
	t.a.slicer.average_size = 16;
	t.a.slicer.size_variation = 8;
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 20000);
	ntu_recv_pat(fd, 0, 20000);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK(s.dir[TOXIC_DOWNSTREAM].chunks_out >= 20000 / 24);
	tcp_proxy_close(p);
}

static void *sink_main(void *arg)
{
	struct sink *k = arg;
	int fd = accept(k->lfd, NULL, NULL);
	CHECK(fd >= 0);
	static unsigned char buf[1 << 20];
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		k->bytes += (uint64_t)r;
	close(fd);
	return NULL;
}

static double bench_one(uint16_t sink_port, uint16_t via_port, uint64_t total)
{
	(void)sink_port;
	int fd = ntu_client(via_port, 0);
	static unsigned char buf[1 << 20];
	memset(buf, 1, sizeof(buf));
	double t0 = ntu_now_s();
	for (uint64_t sent = 0; sent < total;) {
		ssize_t w = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		CHECK(w > 0);
		sent += (uint64_t)w;
	}
	shutdown(fd, SHUT_WR);
	char c;
	while (recv(fd, &c, 1, 0) > 0) {
	}
	double dt = ntu_now_s() - t0;
	close(fd);
	return dt;
}

static int bench(double gib)
{
	uint64_t total = (uint64_t)(gib * (double)(1ull << 30));
	struct tcp_plane_config cfg = { 0 };
	char err[256];
	CHECK_EQ(tcp_plane_create(&cfg, &PL, err, sizeof(err)), 0);
	/* PW_BENCH_VIA=SINK:PROXY adds a row through another proxy (e.g.
	 * toxiproxy) listening on PROXY and forwarding to SINK */
	const char *ext = getenv("PW_BENCH_VIA");
	unsigned ext_sink = 0, ext_via = 0;
	if (ext && sscanf(ext, "%u:%u", &ext_sink, &ext_via) != 2)
		ext_sink = ext_via = 0;
	for (int via = 0; via < (ext_via ? 3 : 2); via++) {
		struct sink k = { socket(AF_INET, SOCK_STREAM, 0), 0 };
		struct sockaddr_in a = ntu_loop_addr(via == 2 ? (uint16_t)ext_sink : 0);
		int one = 1;
		setsockopt(k.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		CHECK_EQ(bind(k.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
		CHECK_EQ(listen(k.lfd, 16), 0);
		socklen_t len = sizeof(a);
		getsockname(k.lfd, (struct sockaddr *)&a, &len);
		uint16_t sport = ntohs(a.sin_port), port = sport;
		struct tcp_proxy *p = NULL;
		if (via == 1) {
			E.port = sport;
			p = ntu_proxy_open(PL, sport, &port);
		} else if (via == 2) {
			port = (uint16_t)ext_via;
		}
		pthread_t th;
		CHECK_EQ(pthread_create(&th, NULL, sink_main, &k), 0);
		double dt = bench_one(sport, port, total);
		pthread_join(th, NULL);
		CHECK_EQ(k.bytes, total);
		printf("%-26s %.2f GiB in %.3f s: %.2f GB/s\n",
		       via == 2 ? "through PW_BENCH_VIA:" : via ? "through the proxy:" : "direct loopback:",
		       gib, dt, (double)total / dt / 1e9);
		if (p)
			tcp_proxy_close(p);
		close(k.lfd);
	}
	tcp_plane_destroy(PL);
	return 0;
}

/* No upstream yet (a name that does not resolve: no address given):
 * each connection is closed at once, with no connect tried, and counted
 * in upstream_failed; given an address, the next one goes through.  A
 * proxy opened with none behaves the same. */
static void test_no_upstream(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	CHECK_EQ(tcp_proxy_set_upstream(p, NULL, 0), 0);
	for (int i = 0; i < 3; i++) {
		int e, fd = ntu_client(port, 0);
		CHECK_EQ(ntu_drain(fd, &e), 0);
		close(fd);
	}
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.accepted, 3);
	CHECK_EQ(s.upstream_failed, 3);
	CHECK_EQ(s.closed, 3);
	struct sockaddr_in u = ntu_loop_addr(E.port);
	CHECK_EQ(tcp_proxy_set_upstream(p, (struct sockaddr *)&u, sizeof(u)), 0);
	int fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 1000);
	ntu_recv_pat(fd, 0, 1000);
	close(fd);
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.accepted, 4);
	CHECK_EQ(s.upstream_failed, 3);
	tcp_proxy_close(p);

	struct sockaddr_in l = ntu_loop_addr(0);
	struct sockaddr_storage b;
	socklen_t blen = sizeof(b);
	char err[256];
	CHECK_EQ(tcp_proxy_open(PL, "none", (struct sockaddr *)&l, sizeof(l), NULL, 0, &p, &b, &blen,
				err, sizeof(err)),
		 0);
	fd = ntu_client(ntohs(((struct sockaddr_in *)&b)->sin_port), 0);
	int e;
	CHECK_EQ(ntu_drain(fd, &e), 0);
	close(fd);
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.accepted, 1);
	CHECK_EQ(s.upstream_failed, 1);
	tcp_proxy_close(p);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench(argc > 2 ? atof(argv[2]) : 1.0);

	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	ntu_plane_start(&E, &PL);
	RUN(test_plain);
	RUN(test_latency);
	RUN(test_bandwidth_slicer);
	RUN(test_limit_data);
	RUN(test_timeout_reset);
	RUN(test_backpressure);
	RUN(test_remove_in_flight);
	RUN(test_switch_churn);
	RUN(test_refused);
	RUN(test_v6_upstream);
	RUN(test_many);
	RUN(test_close_in_flight);
	RUN(test_refusals);
	RUN(test_max_bytes);
	RUN(test_half_close);
	RUN(test_slicer_writes);
	RUN(test_no_upstream);
	ntu_plane_stop(&E, PL);
	return 0;
}
