/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's TCP data path (tools/netem/tcp/tcp.c, conn.c) under
 * pressure, through tcp.h, with real sockets on loopback and an echo
 * server thread: what one connection or proxy may not do to the others,
 * asserted as properties (orders and bounds, never timings):
 *  - a connection's turn is bounded: a slicer of 1-byte pieces draining
 *    256 KiB on the only worker does not hold up a plain proxy's echo
 *    until it is done (the echo comes back before the slicer's transfer
 *    ends);
 *  - the plane's budget (max_bytes) does not let a slow proxy stop the
 *    others: with "slow" (bandwidth 1 KB/s, 4 flooding clients) over its
 *    budget, "plain" (no toxic) and "lat" (a small latency) still echo;
 *  - what a direction holds is bounded by its memory: 1-byte writes into
 *    a 20 s latency never make held_mem pass dir_bytes, and small reads
 *    gather (held_mem stays near held; the RSS growth is printed);
 *  - a port another socket holds (plain, or with SO_REUSEPORT) is
 *    refused (-EADDRINUSE);
 *  - out of descriptors, accept is counted fd_exhausted and the listener
 *    comes back once descriptors are free; tcp_raise_nofile();
 *  - check_toxic's upper bounds for a direct caller; the workers' count
 *    from the CPUs this process may use.
 * Real threads: labelled "concurrent" (run under TSan too).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
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
#include "tcp_priv.h"

static struct ntu_echo E;

/* ------------------------------------------------------------ helpers */

static struct tcp_plane *plane(unsigned workers, size_t dir_bytes, uint64_t max_bytes)
{
	struct tcp_plane_config cfg = { .workers = workers, .dir_bytes = dir_bytes,
					.max_bytes = max_bytes };
	struct tcp_plane *pl = NULL;
	char err[256];
	int r = tcp_plane_create(&cfg, &pl, err, sizeof(err));
	if (r)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(r, 0);
	return pl;
}

/* Send @len pattern bytes from @off and read them back (blocking, steps
 * of @step): the echo through a proxy works. */
static void echo_round(int fd, uint64_t len, size_t step)
{
	unsigned char buf[65536];
	for (uint64_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? (size_t)(len - off) : step;
		for (size_t k = 0; k < n; k++)
			buf[k] = ntu_pat(off + k);
		CHECK_EQ(send(fd, buf, n, MSG_NOSIGNAL), (ssize_t)n);
		size_t got = 0;
		while (got < n) {
			ssize_t r = recv(fd, buf, n - got, 0);
			if (r <= 0)
				fprintf(stderr, "echo: recv %zd (%s) at %llu\n", r, strerror(errno),
					(unsigned long long)(off + got));
			CHECK(r > 0);
			for (ssize_t k = 0; k < r; k++)
				CHECK_EQ(buf[k], ntu_pat(off + got + (uint64_t)k));
			got += (size_t)r;
		}
	}
}

/* ------------------------------------------------------------ the tests */

/* One worker; a slicer of 1-byte pieces (no delay) carries 512 KiB there
 * and back (a thread of its own) while the main thread pings a plain
 * proxy: the pings keep being answered while the slicer's transfer goes
 * on (a turn is bounded: a connection that held its worker until it was
 * drained would let a few through at most). */
struct slicer_run {
	uint16_t port;
	int done;                  /* atomic */
	uint64_t got;
};

static void *slicer_main(void *arg)
{
	struct slicer_run *sr = arg;
	enum { LEN = 512 << 10 };
	int a = ntu_client(sr->port, 1);
	unsigned char *buf = malloc(LEN), in[65536];
	CHECK(buf);
	for (uint64_t k = 0; k < LEN; k++)
		buf[k] = ntu_pat(k);
	uint64_t sent = 0, got = 0;
	double t0 = ntu_now_s();
	while (got < LEN && ntu_now_s() - t0 < 120) {
		if (sent < LEN) {
			ssize_t w = send(a, buf + sent, LEN - sent, MSG_NOSIGNAL);
			if (w > 0)
				sent += (uint64_t)w;
		}
		ssize_t r;
		while ((r = recv(a, in, sizeof(in), 0)) > 0) {
			for (ssize_t k = 0; k < r; k++)
				CHECK_EQ(in[k], ntu_pat(got + (uint64_t)k));
			got += (uint64_t)r;
		}
		if (r < 0 && errno == EAGAIN)
			ntu_sleep_ms(1);
	}
	sr->got = got;
	CHECK_EQ(got, LEN);
	__atomic_store_n(&sr->done, 1, __ATOMIC_RELEASE);
	close(a);
	free(buf);
	return NULL;
}

static void test_fair_slicer(void)
{
	struct tcp_plane *pl = plane(1, 0, 0);
	struct slicer_run sr = { 0, 0, 0 };
	uint16_t pport;
	struct tcp_proxy *slow = ntu_proxy_open(pl, E.port, &sr.port);
	struct tcp_proxy *plain = ntu_proxy_open(pl, E.port, &pport);
	struct toxic t = ntu_toxic(TOXIC_SLICER, TOXIC_UPSTREAM, "sl");
	t.a.slicer.average_size = 1;
	ntu_set_toxics(slow, &t, 1);
	int b = ntu_client(pport, 0);
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, slicer_main, &sr), 0);
	/* wait until the slicer is at work */
	struct tcp_proxy_stats s;
	do {
		ntu_sleep_ms(1);
		tcp_proxy_stats(slow, &s);
	} while (!s.dir[TOXIC_UPSTREAM].chunks_out);
	unsigned pongs = 0;
	while (!__atomic_load_n(&sr.done, __ATOMIC_ACQUIRE)) {
		unsigned char c = (unsigned char)pongs;
		CHECK_EQ(send(b, &c, 1, MSG_NOSIGNAL), 1);
		CHECK_EQ(recv(b, &c, 1, 0), 1);
		CHECK_EQ(c, (unsigned char)pongs);
		if (!__atomic_load_n(&sr.done, __ATOMIC_ACQUIRE))
			pongs++;
	}
	pthread_join(th, NULL);
	printf("# slicer: %u plain echoes answered during its transfer\n", pongs);
	CHECK(pongs >= 16);
	close(b);
	tcp_proxy_close(slow);
	tcp_proxy_close(plain);
	tcp_plane_destroy(pl);
}

/* A plane's budget (128 KiB, 64 KiB a direction): "slow" (1 KB/s) flooded
 * by 4 clients holds what it may; "plain" (no toxic) and "lat" (latency
 * 1 ms both ways) still echo, and the plane's held memory stays within
 * max_bytes plus a reserve a direction (dir_bytes / 4 here) and a read
 * a worker. */
static void test_budget(void)
{
	enum { BUDGET = 128 << 10, DIRB = 64 << 10 };
	struct tcp_plane *pl = plane(2, DIRB, BUDGET);
	uint16_t sport, pport, lport;
	struct tcp_proxy *slow = ntu_proxy_open(pl, E.port, &sport);
	struct tcp_proxy *plain = ntu_proxy_open(pl, E.port, &pport);
	struct tcp_proxy *lat = ntu_proxy_open(pl, E.port, &lport);
	struct toxic bw = ntu_toxic(TOXIC_BANDWIDTH, TOXIC_UPSTREAM, "bw");
	bw.a.bandwidth.rate_kbps = 1;
	ntu_set_toxics(slow, &bw, 1);
	struct toxic lt[2] = { ntu_toxic(TOXIC_LATENCY, TOXIC_UPSTREAM, "lu"),
			       ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "ld") };
	lt[0].a.latency.latency_ms = lt[1].a.latency.latency_ms = 1;
	ntu_set_toxics(lat, lt, 2);
	int fl[4];
	unsigned char buf[65536];
	memset(buf, 7, sizeof(buf));
	for (int i = 0; i < 4; i++)
		fl[i] = ntu_client(sport, 1);
	/* flood until the slow proxy stops reading (the budget is spent) */
	struct tcp_proxy_stats s;
	double t0 = ntu_now_s();
	do {
		for (int i = 0; i < 4; i++)
			while (send(fl[i], buf, sizeof(buf), MSG_NOSIGNAL) > 0) {
			}
		ntu_sleep_ms(5);
		tcp_proxy_stats(slow, &s);
	} while (s.dir[TOXIC_UPSTREAM].stalls < 4 && ntu_now_s() - t0 < 10);
	CHECK(s.dir[TOXIC_UPSTREAM].held_mem >= BUDGET / 2);
	int pc = ntu_client(pport, 0), lc = ntu_client(lport, 0);
	echo_round(pc, 1 << 20, 65536); /* no toxic: never stopped by the budget */
	echo_round(lc, 256 << 10, 16384); /* holds less than the reserve */
	tcp_proxy_stats(slow, &s);
	struct tcp_proxy_stats ps, ls;
	tcp_proxy_stats(plain, &ps);
	tcp_proxy_stats(lat, &ls);
	uint64_t all = s.dir[0].held_mem + s.dir[1].held_mem + ps.dir[0].held_mem +
		       ps.dir[1].held_mem + ls.dir[0].held_mem + ls.dir[1].held_mem;
	CHECK(all <= BUDGET + 12 * (uint64_t)(DIRB / 4) + 2 * (uint64_t)READ_MAX);
	CHECK(s.dir[TOXIC_UPSTREAM].held_mem <= 4 * (uint64_t)DIRB);
	for (int i = 0; i < 4; i++)
		close(fl[i]);
	close(pc);
	close(lc);
	tcp_plane_destroy(pl);
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, res = 0;
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* 1-byte writes (TCP_NODELAY) into a 20 s latency: held_mem (what the
 * chunks cost) never passes dir_bytes, and the small reads gather. */
static void test_mem_bound(void)
{
	enum { DIRB = 256 << 10, N = 200000 };
	struct tcp_plane *pl = plane(1, DIRB, 0);
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(pl, E.port, &port);
	struct toxic t = ntu_toxic(TOXIC_LATENCY, TOXIC_UPSTREAM, "lat");
	t.a.latency.latency_ms = 20000;
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 1);
	long rss0 = rss_kib();
	struct tcp_proxy_stats s;
	uint64_t max_mem = 0;
	double t0 = ntu_now_s();
	int i = 0;
	while (i < N && ntu_now_s() - t0 < 10) {
		unsigned char c = ntu_pat((uint64_t)i);
		if (send(fd, &c, 1, MSG_NOSIGNAL) == 1)
			i++;
		else
			ntu_sleep_ms(1);
		if (i % 256 == 0) {
			tcp_proxy_stats(p, &s);
			if (s.dir[TOXIC_UPSTREAM].held_mem > max_mem)
				max_mem = s.dir[TOXIC_UPSTREAM].held_mem;
			CHECK(s.dir[TOXIC_UPSTREAM].held_mem <= DIRB);
		}
	}
	ntu_sleep_ms(50);
	tcp_proxy_stats(p, &s);
	long rss1 = rss_kib();
	uint64_t held = s.dir[TOXIC_UPSTREAM].held, mem = s.dir[TOXIC_UPSTREAM].held_mem;
	CHECK(mem <= DIRB);
	CHECK(held > 0 && held <= mem);
	printf("# 1-byte writes: %d sent, held %llu bytes costing %llu (%.2f a byte), "
	       "max %llu; RSS growth %ld KiB (%.2f bytes a held byte)\n",
	       i, (unsigned long long)held, (unsigned long long)mem, (double)mem / (double)held,
	       (unsigned long long)max_mem, rss1 - rss0,
	       (double)(rss1 - rss0) * 1024.0 / (double)held);
	close(fd);
	struct tcp_proxy_stats fin;
	tcp_proxy_close_stats(p, &fin);
	CHECK_EQ(fin.dir[0].held_mem, 0);
	CHECK_EQ(fin.dir[0].bytes_in, fin.dir[0].bytes_out + fin.dir[0].bytes_dropped);
	tcp_plane_destroy(pl);
}

static int open_on(struct tcp_plane *pl, uint16_t port)
{
	struct sockaddr_in l = ntu_loop_addr(port), u = ntu_loop_addr(E.port);
	struct tcp_proxy *p = NULL;
	char err[256];
	int r = tcp_proxy_open(pl, "dup", (struct sockaddr *)&l, sizeof(l), (struct sockaddr *)&u,
			       sizeof(u), &p, NULL, NULL, err, sizeof(err));
	if (!r) {
		int fd = ntu_client(port, 0);
		echo_round(fd, 4096, 4096);
		close(fd);
		tcp_proxy_close(p);
	}
	return r;
}

/* A port another socket holds is refused, with SO_REUSEPORT or not. */
static void test_reuseport(void)
{
	struct tcp_plane *pl = plane(2, 0, 0);
	for (int reuse = 0; reuse < 2; reuse++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		int one = 1;
		if (reuse)
			CHECK_EQ(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		struct sockaddr_in a = ntu_loop_addr(0);
		CHECK_EQ(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		CHECK_EQ(listen(fd, 16), 0);
		socklen_t len = sizeof(a);
		getsockname(fd, (struct sockaddr *)&a, &len);
		uint16_t port = ntohs(a.sin_port);
		CHECK_EQ(open_on(pl, port), -EADDRINUSE);
		close(fd);
		CHECK_EQ(open_on(pl, port), 0); /* free again: the group binds it */
	}
	tcp_plane_destroy(pl);
}

/* Out of descriptors: accept fails, counted fd_exhausted (not
 * upstream_failed); once descriptors are free the listener is back. */
static void test_fd_exhausted(void)
{
	struct tcp_plane *pl = plane(1, 0, 0);
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(pl, E.port, &port);
	struct rlimit keep, rl;
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &keep), 0);
	/* the client's socket fits, the proxy's accept does not: the client
	 * must take the lowest free descriptor, so it is probed once the echo
	 * thread has closed earlier tests' connections (it does so on its own
	 * time), and again if a descriptor below came free meanwhile */
	int fd = -1, probe = -1;
	for (int tries = 0; tries < 50 && fd < 0; tries++) {
		int was = probe;
		probe = dup(0);
		CHECK(probe >= 0);
		close(probe);
		if (probe != was) {
			ntu_sleep_ms(50); /* not yet still */
			continue;
		}
		rl = keep;
		rl.rlim_cur = (rlim_t)probe + 1;
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(fd >= 0);
		if (fd != probe) {
			close(fd);
			fd = -1;
			CHECK_EQ(setrlimit(RLIMIT_NOFILE, &keep), 0);
		}
	}
	CHECK(fd >= 0 && fd == probe);
	struct sockaddr_in a = ntu_loop_addr(port);
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0); /* the backlog takes it */
	struct tcp_proxy_stats s;
	double t0 = ntu_now_s();
	do {
		ntu_sleep_ms(2);
		tcp_proxy_stats(p, &s);
	} while (!s.fd_exhausted && ntu_now_s() - t0 < 10);
	CHECK(s.fd_exhausted >= 1);
	CHECK_EQ(s.upstream_failed, 0);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &keep), 0);
	struct timeval tv = { 20, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	echo_round(fd, 4096, 4096); /* the listener came back */
	close(fd);
	/* tcp_raise_nofile(): soft up to hard */
	rl = keep;
	if (rl.rlim_max > 64) {
		rl.rlim_cur = 64;
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
		CHECK_EQ(tcp_raise_nofile(), 0);
		CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
		CHECK(rl.rlim_cur == rl.rlim_max);
	}
	tcp_proxy_close(p);
	tcp_plane_destroy(pl);
}

/* check_toxic holds toxic.h's bounds for any caller; the default worker
 * count is the CPUs this process may use. */
static void test_limits(void)
{
	struct tcp_plane *pl = plane(0, 0, 0);
	cpu_set_t set;
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	CHECK_EQ(pl->nw, CPU_COUNT(&set));
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(pl, E.port, &port);
	char err[256];
	struct toxic t = ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw");
	t.a.bandwidth.rate_kbps = (int64_t)1 << 62;
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "rate"));
	t.a.bandwidth.rate_kbps = TOXIC_MAX_RATE_KBPS;
	CHECK_EQ(tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err)), 0);
	struct toxic l = ntu_toxic(TOXIC_LATENCY, TOXIC_UPSTREAM, "l");
	l.a.latency.latency_ms = TOXIC_MAX_MS + 1;
	CHECK_EQ(tcp_proxy_set_toxics(p, &l, 1, err, sizeof(err)), -EINVAL);
	l.a.latency.latency_ms = 0;
	l.a.latency.jitter_ms = INT64_MAX;
	CHECK_EQ(tcp_proxy_set_toxics(p, &l, 1, err, sizeof(err)), -EINVAL);
	struct toxic sl = ntu_toxic(TOXIC_SLICER, TOXIC_UPSTREAM, "s");
	sl.a.slicer.delay_us = TOXIC_MAX_MS * 1000 + 1;
	CHECK_EQ(tcp_proxy_set_toxics(p, &sl, 1, err, sizeof(err)), -EINVAL);
	struct toxic ld = ntu_toxic(TOXIC_LIMIT_DATA, TOXIC_UPSTREAM, "ld");
	ld.a.limit_data.bytes = TOXIC_MAX_BYTES + 1;
	CHECK_EQ(tcp_proxy_set_toxics(p, &ld, 1, err, sizeof(err)), -EINVAL);
	tcp_proxy_close(p);
	tcp_plane_destroy(pl);
}

int main(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	ntu_echo_start(&E);
	RUN(test_mem_bound); /* first: its RSS figure is the plane's own */
	RUN(test_limits);
	RUN(test_reuseport);
	RUN(test_fd_exhausted);
	RUN(test_fair_slicer);
	RUN(test_budget);
	ntu_echo_stop(&E);
	return 0;
}
