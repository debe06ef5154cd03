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
 * The helpers are netem_tcp_util.c's.  Real threads: labelled
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "netem_tcp_util.h"
#include "tcp.h"
#include "tcp_priv.h" /* a proxy's retired tc devices */

#define MS 1000000ull

static struct ntu_echo E;
static struct tcp_plane *PL;

/* ------------------------------------------------------------ the tc toxic */

static struct toxic mk_tc(enum toxic_stream st, const char *name, char *qdisc)
{
	struct toxic t = ntu_toxic(TOXIC_TC, st, name);
	t.a.tc.qdisc = qdisc;
	return t;
}

/* netem delay 20ms on the downstream: never early, every byte in order;
 * with jitter (netem reorders packets) the stream still never reorders. */
static void test_tc_delay(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "netem delay 20ms";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tcd", q);
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	for (int k = 0; k < 10; k++) {
		double t0 = ntu_now_s();
		ntu_send_pat(fd, (uint64_t)k * 3000, 3000);
		ntu_recv_pat(fd, (uint64_t)k * 3000, 3000);
		CHECK(ntu_now_s() - t0 >= 0.020 - 0.0005);
	}
	char qj[] = "netem delay 20ms 15ms";
	t.a.tc.qdisc = qj;
	ntu_set_toxics(p, &t, 1);
	for (int k = 0; k < 300; k++)
		ntu_send_pat(fd, 30000 + (uint64_t)k * 501, 501);
	ntu_recv_pat(fd, 30000, 300 * 501);
	ntu_send_pat(fd, 30000 + 300 * 501, 200000);
	ntu_recv_pat(fd, 30000 + 300 * 501, 200000);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
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
	int fd = ntu_client(a->port, 0);
	ntu_send_pat(fd, (uint64_t)a->id << 24, a->len);
	ntu_recv_pat(fd, (uint64_t)a->id << 24, a->len);
	close(fd);
	return NULL;
}

/* tbf shared by 4 connections: together they never pass rate + burst (a
 * lower bound on the time), every byte delivered in order, none lost
 * though tbf's limit is far below what the connections offer. */
static void test_tc_shared_rate(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "tbf rate 1mbit burst 10kb latency 50ms";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tbf", q);
	ntu_set_toxics(p, &t, 1);
	const double rate = 125000.0, burst = 10240.0;
	enum { N = 4 };
	const size_t LEN = 40000;
	pthread_t th[N];
	struct rate_arg a[N];
	double t0 = ntu_now_s();
	for (int i = 0; i < N; i++) {
		a[i] = (struct rate_arg){ port, i, LEN };
		CHECK_EQ(pthread_create(&th[i], NULL, rate_client, &a[i]), 0);
	}
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	double all = ntu_now_s() - t0;
	CHECK(all >= (N * LEN - burst) / rate - 0.001);
	/* one alone: the same bound for its bytes (the whole rate is its) */
	t0 = ntu_now_s();
	a[0] = (struct rate_arg){ port, 9, 2 * LEN };
	rate_client(&a[0]);
	double one = ntu_now_s() - t0;
	CHECK(one >= (2 * LEN - burst) / rate - 0.001);
	fprintf(stderr, "  tc tbf 1mbit: 4 x %zu bytes in %.3f s (%.0f B/s), 1 x %zu in %.3f s "
			"(%.0f B/s)\n",
		LEN, all, N * LEN / all, 2 * LEN, one, 2 * LEN / one);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, N * LEN + 2 * LEN);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_cut, 0);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_dropped, 0);
	tcp_proxy_close(p);
}

/* Removing (and changing) the tc toxic with data in its device loses nothing. */
static void test_tc_remove_in_flight(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "netem delay 300ms";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tcr", q);
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	for (int k = 0; k < 50; k++)
		ntu_send_pat(fd, (uint64_t)k * 1000, 1000);
	ntu_sleep_ms(50);
	char q2[] = "netem delay 200ms";
	t.a.tc.qdisc = q2; /* changed: a new device, the old one drains */
	ntu_set_toxics(p, &t, 1);
	for (int k = 50; k < 100; k++)
		ntu_send_pat(fd, (uint64_t)k * 1000, 1000);
	ntu_sleep_ms(20);
	ntu_set_toxics(p, NULL, 0); /* removed with chunks in it */
	ntu_send_pat(fd, 100000, 1000);
	ntu_recv_pat(fd, 0, 101000);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, 101000);
	/* the old devices drain (300 ms, later on a slow host); a stats call
	 * after that destroys them */
	for (int i = 0; i < 500 && p->tcretired; i++) {
		ntu_sleep_ms(10);
		tcp_proxy_stats(p, &s);
	}
	CHECK(p->tcretired == NULL);
	tcp_proxy_close(p);
}

/* A proxy closed with chunks in its device: counted dropped. */
static void test_tc_close_in_flight(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "netem delay 10s";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tcc", q);
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
	ntu_check_ledger(&s);
	for (int i = 0; i < 3; i++) {
		int err;
		CHECK_EQ(ntu_drain(fd[i], &err), 0);
		close(fd[i]);
	}
}

/* A drop a byte stream cannot repair (a packet larger than tbf's burst):
 * the connection is reset, the piece counted in bytes_cut. */
static void test_tc_oversize(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "tbf rate 1mbit burst 1000 limit 100000";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "tco", q);
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	ntu_send_pat(fd, 0, 5000);
	int err;
	size_t got = ntu_drain(fd, &err);
	CHECK(got < 5000);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK(s.dir[TOXIC_DOWNSTREAM].bytes_cut > 0);
	tcp_proxy_close(p);
}

int main(void)
{
	ntu_plane_start(&E, &PL);
	RUN(test_tc_delay);
	RUN(test_tc_shared_rate);
	RUN(test_tc_remove_in_flight);
	RUN(test_tc_close_in_flight);
	RUN(test_tc_oversize);
	ntu_plane_stop(&E, PL);
	return 0;
}
