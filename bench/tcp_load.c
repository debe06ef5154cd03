/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-tcp-load: the load side of bench/tcp_proxy.sh, which measures
 * TCP proxies (pinwheel-netem --api, toxiproxy, socat) side by side.  The
 * tool is both ends: it runs the server the proxy forwards to (a sink, or
 * an echo) in its own threads and the clients that connect through the
 * proxy, so one process sees every byte.  Not a test: it prints figures.
 *
 *   pinwheel-tcp-load throughput --server ADDR:PORT --via ADDR:PORT
 *                     [--conns N] [--secs S] [--pid PID]
 *       N connections through the proxy, each written to as fast as the
 *       proxy takes it (1 MiB writes); the server reads and discards.
 *       Prints the bytes per second the server received and, with --pid,
 *       the proxy's CPU time per GB (PID and its children: socat forks one
 *       process a connection).
 *   pinwheel-tcp-load latency --server ADDR:PORT --via ADDR:PORT
 *                     [--count N] [--sleep-ms MS] [--pid PID]
 *       One connection through the proxy to an echo server and one
 *       directly, ping-pong of 64-byte messages, alternating; prints the
 *       RTT through the proxy minus the direct RTT's median (p50, p99),
 *       beside the OS's own lateness for a sleep of MS milliseconds
 *       (default 1; clock_nanosleep() with a 1 ns timer slack; p50, p99)
 *       measured in the same run, one after each round.  A proxy's latency toxic sleeps its whole length, and on a
 *       VM a long sleep can wake later than a short one: give MS the
 *       toxic's length to compare like with like.
 *   pinwheel-tcp-load idle --server ADDR:PORT --via ADDR:PORT --pid PID
 *                     [--conns N]
 *       N idle connections through the proxy; prints the proxy's RSS
 *       growth per connection once all are accepted by the server.
 *
 * Threads: main (the clients, the measurements) and the server's: an
 * acceptor and a thread per accepted connection.  Locks: none; counters
 * are relaxed atomics read by main.
 * The --server address is where this tool listens: the proxy's upstream.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "now.h"

#define BUF (1u << 20)

static struct {
	struct sockaddr_in server, via;
	unsigned conns, count;
	double secs;
	double sleep_ms;       /* the lateness probe's sleep (latency) */
	int pid;
	int echo;
	int lfd;
	uint64_t received;     /* atomic: bytes the server read */
	unsigned accepted;     /* atomic */
	volatile int stop;
} G;

static int parse_addr(const char *s, struct sockaddr_in *a)
{
	char host[64];
	const char *c = strrchr(s, ':');
	if (!c || (size_t)(c - s) >= sizeof host)
		return -1;
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = 0;
	char *end;
	long port = strtol(c + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return -1;
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

/* One accepted connection: discard (throughput, idle) or echo (latency).
 * Context: its own thread. */
static void *conn_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char *buf = malloc(BUF);
	if (!buf) {
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t n = read(fd, buf, BUF);
		if (n <= 0)
			break;
		__atomic_fetch_add(&G.received, (uint64_t)n, __ATOMIC_RELAXED);
		if (G.echo) {
			ssize_t off = 0;
			while (off < n) {
				ssize_t w = write(fd, buf + off, (size_t)(n - off));
				if (w <= 0)
					goto out;
				off += w;
			}
		}
	}
out:
	free(buf);
	close(fd);
	return NULL;
}

/* The server's acceptor.  Context: its own thread, until the process exits. */
static void *accept_main(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(G.lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		__atomic_fetch_add(&G.accepted, 1, __ATOMIC_RELAXED);
		pthread_t th;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 64 << 10);
		if (pthread_create(&th, &at, conn_main, (void *)(intptr_t)fd))
			close(fd);
		pthread_attr_destroy(&at);
	}
}

static int start_server(void)
{
	G.lfd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(G.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (G.lfd < 0 || bind(G.lfd, (struct sockaddr *)&G.server, sizeof G.server) ||
	    listen(G.lfd, 4096)) {
		perror("pinwheel-tcp-load: server");
		return -1;
	}
	pthread_t th;
	return pthread_create(&th, NULL, accept_main, NULL) ? -1 : 0;
}

static int dial(const struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)a, sizeof *a)) {
		close(fd);
		return -1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* utime + stime of one process, and its ppid; with @reaped, its reaped
 * children's too.  Return: seconds, or -1 when it is gone. */
static double stat_cpu(int p, int reaped, int *ppid)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", p);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	double s = -1;
	if (fgets(line, sizeof line, f)) {
		char *r = strrchr(line, ')');
		unsigned long ut = 0, st = 0;
		long cut = 0, cst = 0;
		if (r && sscanf(r + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld",
				ppid, &ut, &st, &cut, &cst) == 5)
			s = (double)(ut + st + (reaped ? (unsigned long)(cut + cst) : 0)) /
			    (double)sysconf(_SC_CLK_TCK);
	}
	fclose(f);
	return s;
}

/* CPU seconds of @pid with its reaped children, plus its live
 * descendants' (socat forks a process a connection).  Context: main. */
static double cpu_of(int pid)
{
	enum { MAXP = 65536 };
	static int pp[MAXP], pids[MAXP];
	static double cpu[MAXP];
	int n = 0, ppid;
	double total = stat_cpu(pid, 1, &ppid);
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && n < MAXP && (e = readdir(d))) {
		int p = atoi(e->d_name);
		if (p <= 0 || p == pid)
			continue;
		double c = stat_cpu(p, 0, &ppid);
		if (c < 0)
			continue;
		pids[n] = p;
		pp[n] = ppid;
		cpu[n++] = c;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		/* walk up: is @pid an ancestor? (at most 64 levels) */
		int up = pp[i];
		for (int depth = 0; depth < 64 && up > 1 && up != pid; depth++) {
			int k;
			for (k = 0; k < n && pids[k] != up; k++)
				;
			up = k < n ? pp[k] : 0;
		}
		if (up == pid)
			total += cpu[i];
	}
	return total;
}

static long rss_kb(int pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

/* A sender: writes 1 MiB chunks until stop.  Context: its own thread. */
static void *send_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char *buf = calloc(1, BUF);
	while (buf && !G.stop)
		if (write(fd, buf, BUF) < 0)
			break;
	free(buf);
	return NULL;
}

static int run_throughput(void)
{
	pthread_t *th = calloc(G.conns, sizeof *th);
	int *fds = calloc(G.conns, sizeof *fds);
	for (unsigned i = 0; i < G.conns; i++) {
		fds[i] = dial(&G.via);
		if (fds[i] < 0) {
			fprintf(stderr, "pinwheel-tcp-load: connect through the proxy: %s\n",
				strerror(errno));
			return 1;
		}
	}
	for (unsigned i = 0; i < G.conns; i++)
		pthread_create(&th[i], NULL, send_main, (void *)(intptr_t)fds[i]);
	usleep(300000); /* warm up */
	uint64_t b0 = __atomic_load_n(&G.received, __ATOMIC_RELAXED), t0 = now_ns();
	double c0 = G.pid ? cpu_of(G.pid) : 0;
	usleep((useconds_t)(G.secs * 1e6));
	uint64_t b1 = __atomic_load_n(&G.received, __ATOMIC_RELAXED), t1 = now_ns();
	double c1 = G.pid ? cpu_of(G.pid) : 0;
	G.stop = 1;
	for (unsigned i = 0; i < G.conns; i++)
		shutdown(fds[i], SHUT_RDWR);
	for (unsigned i = 0; i < G.conns; i++) {
		pthread_join(th[i], NULL);
		close(fds[i]);
	}
	double s = (double)(t1 - t0) / 1e9, gb = (double)(b1 - b0) / 1e9;
	printf("{\"mode\":\"throughput\",\"conns\":%u,\"secs\":%.2f,\"MB_per_s\":%.1f,"
	       "\"proxy_cpu_s\":%.3f,\"proxy_cpu_s_per_GB\":%.3f}\n",
	       G.conns, s, gb * 1e3 / s, c1 - c0, gb > 0 ? (c1 - c0) / gb : 0);
	free(th);
	free(fds);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, unsigned n, double p)
{
	unsigned i = (unsigned)(p * (n - 1) + 0.5);
	return v[i];
}

static int rtt_once(int fd, uint64_t *ns)
{
	char msg[64] = "ping", back[64];
	uint64_t t = now_ns();
	if (write(fd, msg, sizeof msg) != (ssize_t)sizeof msg)
		return -1;
	size_t got = 0;
	while (got < sizeof back) {
		ssize_t n = read(fd, back + got, sizeof back - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	*ns = now_ns() - t;
	return 0;
}

static int run_latency(void)
{
	int via = dial(&G.via), direct = dial(&G.server);
	if (via < 0 || direct < 0) {
		fprintf(stderr, "pinwheel-tcp-load: connect: %s\n", strerror(errno));
		return 1;
	}
	unsigned n = G.count;
	uint64_t *a = calloc(n, 8), *d = calloc(n, 8), *sl = calloc(n, 8);
	/* the probe sleeps as well as a thread can here: a 1 ns timer slack
	 * (the default 50 us would be late by that on purpose) */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (unsigned i = 0; i < n; i++) {
		if (rtt_once(direct, &d[i]) || rtt_once(via, &a[i])) {
			fprintf(stderr, "pinwheel-tcp-load: the echo failed at round %u\n", i);
			return 1;
		}
		uint64_t want = (uint64_t)(G.sleep_ms * 1e6);
		struct timespec req = {(time_t)(want / 1000000000), (long)(want % 1000000000)};
		uint64_t t = now_ns();
		clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
		uint64_t took = now_ns() - t;
		sl[i] = took > want ? took - want : 0;
	}
	qsort(d, n, 8, cmp_u64);
	uint64_t base = pct(d, n, 0.5);
	for (unsigned i = 0; i < n; i++)
		a[i] = a[i] > base ? a[i] - base : 0;
	qsort(a, n, 8, cmp_u64);
	qsort(sl, n, 8, cmp_u64);
	printf("{\"mode\":\"latency\",\"count\":%u,\"direct_rtt_p50_us\":%.1f,"
	       "\"added_p50_us\":%.1f,\"added_p99_us\":%.1f,\"sleep_ms\":%g,"
	       "\"sleep_late_p50_us\":%.1f,\"sleep_late_p99_us\":%.1f}\n",
	       n, (double)base / 1e3, (double)pct(a, n, 0.5) / 1e3, (double)pct(a, n, 0.99) / 1e3, G.sleep_ms,
	       (double)pct(sl, n, 0.5) / 1e3, (double)pct(sl, n, 0.99) / 1e3);
	free(a);
	free(d);
	free(sl);
	close(via);
	close(direct);
	return 0;
}

static int run_idle(void)
{
	if (!G.pid) {
		fprintf(stderr, "pinwheel-tcp-load: idle needs --pid\n");
		return 2;
	}
	usleep(200000);
	long r0 = rss_kb(G.pid);
	int *fds = calloc(G.conns, sizeof *fds);
	for (unsigned i = 0; i < G.conns; i++)
		if ((fds[i] = dial(&G.via)) < 0) {
			fprintf(stderr, "pinwheel-tcp-load: connection %u: %s\n", i, strerror(errno));
			return 1;
		}
	for (int i = 0; i < 500 && __atomic_load_n(&G.accepted, __ATOMIC_RELAXED) < G.conns; i++)
		usleep(10000);
	usleep(300000);
	long r1 = rss_kb(G.pid);
	printf("{\"mode\":\"idle\",\"conns\":%u,\"accepted\":%u,\"rss_before_kb\":%ld,"
	       "\"rss_after_kb\":%ld,\"bytes_per_conn\":%.0f}\n",
	       G.conns, __atomic_load_n(&G.accepted, __ATOMIC_RELAXED), r0, r1,
	       (double)(r1 - r0) * 1024.0 / G.conns);
	for (unsigned i = 0; i < G.conns; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: pinwheel-tcp-load throughput|latency|idle --server ADDR:PORT "
			"--via ADDR:PORT [--conns N] [--secs S] [--count N] [--sleep-ms MS] [--pid PID]\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 2;
	}
	const char *mode = argv[1];
	G.conns = 1;
	G.secs = 3;
	G.count = 2000;
	G.sleep_ms = 1;
	int have_s = 0, have_v = 0;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			fprintf(stderr, "pinwheel-tcp-load: %s needs a value\n", o);
			return 2;
		}
		i++;
		if (!strcmp(o, "--server")) {
			have_s = !parse_addr(v, &G.server);
		} else if (!strcmp(o, "--via")) {
			have_v = !parse_addr(v, &G.via);
		} else if (!strcmp(o, "--conns")) {
			G.conns = (unsigned)atoi(v);
		} else if (!strcmp(o, "--secs")) {
			G.secs = atof(v);
		} else if (!strcmp(o, "--count")) {
			G.count = (unsigned)atoi(v);
		} else if (!strcmp(o, "--sleep-ms")) {
			G.sleep_ms = atof(v);
		} else if (!strcmp(o, "--pid")) {
			G.pid = atoi(v);
		} else {
			fprintf(stderr, "pinwheel-tcp-load: unknown option %s\n", o);
			return 2;
		}
	}
	if (!have_s || !have_v || !G.conns || G.conns > 100000 || G.count < 2 || G.secs <= 0 ||
	    !(G.sleep_ms > 0 && G.sleep_ms <= 10000)) {
		usage();
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	G.echo = !strcmp(mode, "latency");
	if (start_server())
		return 1;
	if (!strcmp(mode, "throughput"))
		return run_throughput();
	if (!strcmp(mode, "latency"))
		return run_latency();
	if (!strcmp(mode, "idle"))
		return run_idle();
	fprintf(stderr, "pinwheel-tcp-load: unknown mode %s\n", mode);
	return 2;
}
