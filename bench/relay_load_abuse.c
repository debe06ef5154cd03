/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-relay-load --abuse: a hostile load through pinwheel-netem, and
 * what the relay does under it (its peak RSS, a well-behaved client's
 * delay, its exit balance).  The program and its other phases are
 * relay_load.c; what both use, relay_load.h.  Threads: main, an echo
 * server, a flood thread, a well-behaved client, a lateness probe (the
 * comment below).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "epoll_sleep.h"
#include "now.h"
#include "relay_load.h"

/* ------------------------------------------------------------ --abuse */

/*
 * pinwheel-relay-load RELAY --abuse [options]: a hostile load, and what the
 * relay does under it.  Threads: main (the relay's parent: starts it,
 * samples its RSS, sends SIGHUP, stops it, judges), an echo server for
 * datagrams up to 64 KiB, one flood thread, one well-behaved client, one
 * lateness probe.  The flood: --flood-clients sockets (a share of them
 * IPv6 when the host has ::1 and the relay listens on [::]), each burst
 * 1..64 datagrams from one socket to the relay, sizes random over 0 (zero
 * length), 1..15 (shorter than the clients' own 16-byte header: truncated)
 * and 16..65507 bytes, a pause of 0..2 ms between bursts; --churn sockets
 * a second are closed and replaced by new ones (new source ports: new
 * clients faster than the relay's --idle forgets them).  The flood sockets
 * never read (a 4 KiB receive buffer: the kernel drops their echoes).  The
 * well-behaved client sends --good-rate datagrams/s of 100 bytes and times
 * each echo.  The probe sleeps 1 ms again and again and records how late
 * it wakes: the machine is QUIET when its p50 is under 1 ms and its p99
 * under a twentieth of the delay, else LOADED, and the delay is judged
 * only when QUIET.  SIGHUP every --hup seconds re-applies the relay's
 * batch file (the same netem: the delay must not change).  At the end: the
 * relay's peak RSS (VmHWM), the well-behaved client's RTT percentiles
 * (the echo path adds microseconds: the RTT is the configured one-way up
 * delay plus them), its losses, the relay's final balance and drops.
 * --check: exit 1 unless the relay exited 0 with both balances true, its
 * peak RSS is under --max-bytes plus the overhead (--rss-overhead MiB;
 * default 32 + 4 per worker: the receive areas, stacks, the runtime, the
 * clients, malloc's own), and, when QUIET, the median RTT is within 10%
 * above the delay.
 */

/* A sanitizer build (this tool's, and so the relay's beside it): ASan's
 * shadow and quarantine are RSS, TSan's slowdown is lateness: both are
 * reported, not judged. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define AB_SANITIZED 1
#endif
#endif
#ifndef AB_SANITIZED
#define AB_SANITIZED 0
#endif

#define AB_MAXDG 65507
#define AB_MAXFLOOD 8192

static struct {
	int echo_fd, stop, stop_flood, v6;
	uint16_t port;              /* the relay's */
	int nflood, churn, ipv6_pct;
	int flood_fd[AB_MAXFLOOD];
	int flood_v6[AB_MAXFLOOD];
	uint64_t flood_sent, flood_bytes, flood_new;
	double good_rate, flood_mbps;
	uint64_t good_sent, good_got;
	uint64_t *good_rtt;
	unsigned ngood_rtt;
	uint64_t *good_ts, *good_back_ts; /* send times: of all, of those echoed */
	unsigned ngood_ts, ngood_back;
	uint64_t flood_t0;
	uint64_t *late;
	unsigned nlate;
} A;

static uint64_t ab_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *ab_echo(void *arg)
{
	(void)arg;
	enum { N = 16 };
	char *buf = malloc((size_t)N * 65536);
	struct mmsghdr m[N];
	struct iovec iov[N];
	struct sockaddr_storage from[N];
	if (!buf)
		die("malloc");
	while (!__atomic_load_n(&A.stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { A.echo_fd, POLLIN, 0 };
		if (poll(&p, 1, 50) <= 0)
			continue;
		for (int i = 0; i < N; i++) {
			iov[i] = (struct iovec){ buf + (size_t)i * 65536, 65536 };
			m[i].msg_hdr = (struct msghdr){ .msg_name = &from[i],
							.msg_namelen = sizeof(from[i]),
							.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int n = recvmmsg(A.echo_fd, m, N, MSG_DONTWAIT, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++)
			iov[i].iov_len = m[i].msg_len;
		sendmmsg(A.echo_fd, m, (unsigned)n, MSG_DONTWAIT);
	}
	free(buf);
	return NULL;
}

/* A flood socket, IPv6 when @v6. */
static int ab_socket(int v6)
{
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int sz = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	sz = 1 << 20;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

static void ab_target(int v6, struct sockaddr_storage *a, socklen_t *al)
{
	memset(a, 0, sizeof(*a));
	if (v6) {
		struct sockaddr_in6 *a6 = (void *)a;
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_loopback;
		a6->sin6_port = htons(A.port);
		*al = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (void *)a;
		*a4 = loopback(A.port);
		*al = sizeof(*a4);
	}
}

static void *ab_flood(void *arg)
{
	(void)arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ now_ns();
	char *buf = malloc(AB_MAXDG);
	if (!buf)
		die("malloc");
	memset(buf, 0xa5, AB_MAXDG);
	struct sockaddr_storage t4, t6;
	socklen_t l4, l6;
	ab_target(0, &t4, &l4);
	ab_target(1, &t6, &l6);
	struct mmsghdr m[64];
	struct iovec iov[64];
	uint64_t t0 = now_ns(), replaced = 0;
	while (!__atomic_load_n(&A.stop_flood, __ATOMIC_ACQUIRE)) {
		/* churn: new source ports at --churn a second */
		uint64_t due = (uint64_t)((double)(now_ns() - t0) / 1e9 * A.churn);
		for (; replaced < due; replaced++) {
			int k = (int)(ab_rand(&seed) % (uint64_t)A.nflood);
			close(A.flood_fd[k]);
			A.flood_fd[k] = ab_socket(A.flood_v6[k]);
			if (A.flood_fd[k] < 0)
				die("socket");
			A.flood_new++;
		}
		int k = (int)(ab_rand(&seed) % (uint64_t)A.nflood);
		int n = 1 + (int)(ab_rand(&seed) % 64);
		for (int i = 0; i < n; i++) {
			uint64_t r = ab_rand(&seed);
			size_t len = r % 16 == 0 ? 0 : r % 16 == 1 ? 1 + (r >> 8) % 15
							 : 16 + (r >> 8) % (AB_MAXDG - 15);
			iov[i] = (struct iovec){ buf, len };
			m[i].msg_hdr = (struct msghdr){
				.msg_name = A.flood_v6[k] ? (void *)&t6 : (void *)&t4,
				.msg_namelen = A.flood_v6[k] ? l6 : l4,
				.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int s = sendmmsg(A.flood_fd[k], m, (unsigned)n, MSG_DONTWAIT);
		for (int i = 0; i < s; i++) {
			A.flood_sent++;
			A.flood_bytes += iov[i].iov_len;
		}
		uint64_t pause = ab_rand(&seed) % 2000000;
		if (A.flood_mbps > 0) { /* paced: at most --flood-mbps on average */
			uint64_t due_ns = (uint64_t)((double)A.flood_bytes * 8e3 / A.flood_mbps);
			uint64_t el = now_ns() - t0;
			pause = due_ns > el ? due_ns - el + 1000000 : 0;
			if (pause > 1000000000)
				pause = 1000000000;
		}
		if (pause > 1000000) {
			struct timespec ts = { (time_t)((pause - 1000000) / 1000000000ull),
					       (long)((pause - 1000000) % 1000000000ull) };
			nanosleep(&ts, NULL);
		}
	}
	free(buf);
	return NULL;
}

/* The well-behaved client: --good-rate datagrams/s of 100 bytes, each
 * echo timed, until stop; then 3 s more to collect the last echoes. */
static void *ab_good(void *arg)
{
	(void)arg;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	int sz = 1 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	struct sockaddr_in t = loopback(A.port);
	char buf[65536];
	uint64_t gap = (uint64_t)(1e9 / A.good_rate), next = now_ns(), end = 0;
	for (;;) {
		uint64_t now = now_ns();
		if (!end && __atomic_load_n(&A.stop_flood, __ATOMIC_ACQUIRE))
			end = now + 3000000000ull;
		if (end && (now >= end || A.good_got == A.good_sent))
			break;
		if (!end && now >= next) {
			memset(buf, 0x3c, 100);
			memcpy(buf, &now, 8);
			if (sendto(fd, buf, 100, 0, (struct sockaddr *)&t, sizeof(t)) == 100) {
				A.good_sent++;
				if (A.ngood_ts < MAXLAT)
					A.good_ts[A.ngood_ts++] = now;
			}
			next += gap;
			continue;
		}
		uint64_t wait = end ? end - now : next - now;
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, (int)(wait / 1000000) + 1) <= 0)
			continue;
		ssize_t n;
		while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 8) {
			uint64_t s;
			memcpy(&s, buf, 8);
			if (A.ngood_rtt < MAXLAT)
				A.good_rtt[A.ngood_rtt++] = now_ns() - s;
			if (A.ngood_back < MAXLAT)
				A.good_back_ts[A.ngood_back++] = s;
			A.good_got++;
		}
	}
	close(fd);
	return NULL;
}

/* The lateness probe: 1 ms sleeps until stop. */
static void *ab_probe(void *arg)
{
	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!__atomic_load_n(&A.stop_flood, __ATOMIC_ACQUIRE) && A.nlate < MAXLAT) {
		uint64_t t = now_ns() + 1000000;
		struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		uint64_t e = now_ns();
		A.late[A.nlate++] = e > t ? e - t : 0;
	}
	return NULL;
}

/* A field of /proc/PID/status in kB (VmRSS, VmHWM), or 0. */
static uint64_t proc_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	uint64_t v = 0;
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtoull(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Copy the "drops":{...} object of direction @dir of line @s into @out. */
static void json_drops(const char *s, const char *dir, char *out, size_t len)
{
	char k[32];
	snprintf(k, sizeof(k), "\"%s\":{\"rx\"", dir);
	const char *p = s ? strstr(s, k) : NULL;
	p = p ? strstr(p, "\"drops\":{") : NULL;
	snprintf(out, len, "{}");
	if (!p)
		return;
	p += 8;
	const char *e = strchr(p, '}');
	if (e && (size_t)(e - p + 1) < len) {
		memcpy(out, p, (size_t)(e - p + 1));
		out[e - p + 1] = '\0';
	}
}

static uint64_t pct(uint64_t *v, unsigned n, double q)
{
	if (!n)
		return 0;
	size_t i = (size_t)(q * (double)n);
	return v[i < n ? i : n - 1];
}

int abuse_main(const char *relay, int argc, char **argv)
{
	double secs = 60, delay_ms = 500, idle = 1, hup = 2;
	const char *max_bytes = NULL, *workers = "2", *max_clients = "1000", *limit = "1000000";
	long nofile = 0;
	double rss_over = -1;
	int check = 0, dead = 0;
	A.nflood = 1500;
	A.churn = 1000;
	A.ipv6_pct = 25;
	A.good_rate = 50;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--abuse"))
			continue;
		if (!strcmp(o, "--check")) {
			check = 1;
			continue;
		}
		if (!strcmp(o, "--to-dead")) { /* --to a port nobody listens on */
			dead = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "pinwheel-relay-load: %s needs a value\n", o);
			return 2;
		}
		i++;
		if (!strcmp(o, "--secs"))
			secs = atof(v);
		else if (!strcmp(o, "--delay-ms"))
			delay_ms = atof(v);
		else if (!strcmp(o, "--max-bytes"))
			max_bytes = v;
		else if (!strcmp(o, "--workers"))
			workers = v;
		else if (!strcmp(o, "--max-clients"))
			max_clients = v;
		else if (!strcmp(o, "--limit"))
			limit = v;
		else if (!strcmp(o, "--idle"))
			idle = atof(v);
		else if (!strcmp(o, "--hup"))
			hup = atof(v);
		else if (!strcmp(o, "--nofile"))
			nofile = atol(v);
		else if (!strcmp(o, "--flood-clients"))
			A.nflood = atoi(v);
		else if (!strcmp(o, "--churn"))
			A.churn = atoi(v);
		else if (!strcmp(o, "--ipv6"))
			A.ipv6_pct = atoi(v);
		else if (!strcmp(o, "--flood-mbps"))
			A.flood_mbps = atof(v);
		else if (!strcmp(o, "--good-rate"))
			A.good_rate = atof(v);
		else if (!strcmp(o, "--rss-overhead"))
			rss_over = atof(v);
		else {
			fprintf(stderr, "pinwheel-relay-load: --abuse: unknown option %s\n", o);
			return 2;
		}
	}
	if (secs <= 0 || delay_ms <= 0 || A.nflood < 1 || A.nflood > AB_MAXFLOOD || A.churn < 0 ||
	    A.good_rate <= 0 || A.good_rate > 10000) {
		fprintf(stderr, "pinwheel-relay-load: --abuse: a bad value\n");
		return 2;
	}
	if (rss_over < 0)
		rss_over = 32 + 4 * atof(workers);
	/* a descriptor per flood socket: the soft limit up to the hard one
	 * (1024 by default on Debian, under the 1500 sockets; a --nofile for
	 * the relay is set in its child only) */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	A.good_rtt = malloc(sizeof(uint64_t) * MAXLAT);
	A.late = malloc(sizeof(uint64_t) * MAXLAT);
	A.good_ts = malloc(sizeof(uint64_t) * MAXLAT);
	A.good_back_ts = malloc(sizeof(uint64_t) * MAXLAT);
	if (!A.good_rtt || !A.late || !A.good_ts || !A.good_back_ts)
		die("malloc");

	/* the echo server (IPv4), the relay's batch file */
	A.echo_fd = socket(AF_INET, SOCK_DGRAM, 0);
	int sz = 8 << 20;
	setsockopt(A.echo_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(A.echo_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	struct sockaddr_in ea = loopback(0);
	socklen_t el = sizeof(ea);
	if (bind(A.echo_fd, (struct sockaddr *)&ea, sizeof(ea)) ||
	    getsockname(A.echo_fd, (struct sockaddr *)&ea, &el))
		die("bind");
	char batch[] = "/tmp/relay-abuse.XXXXXX", out_path[] = "/tmp/relay-abuse-out.XXXXXX";
	int bfd = mkstemp(batch), ofd = mkstemp(out_path);
	if (bfd < 0 || ofd < 0)
		die("mkstemp");
	char spec[256];
	if (strcmp(limit, "0"))
		snprintf(spec, sizeof(spec), "qdisc add dev up root handle 1: netem delay %gms limit %s\n",
			 delay_ms, limit);
	else
		snprintf(spec, sizeof(spec), "qdisc add dev up root handle 1: netem delay %gms\n",
			 delay_ms);
	if (write(bfd, spec, strlen(spec)) != (ssize_t)strlen(spec))
		die("write");
	close(bfd);

	/* IPv6 in the mix when the host has ::1: the relay then listens on [::] */
	int t6 = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 l6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	A.v6 = A.ipv6_pct > 0 && t6 >= 0 && bind(t6, (struct sockaddr *)&l6, sizeof(l6)) == 0;
	if (t6 >= 0)
		close(t6);

	char to[64], idle_s[32];
	snprintf(to, sizeof(to), "127.0.0.1:%u", ntohs(ea.sin_port));
	if (dead) { /* the echo server's port closed: every upstream send meets ICMP errors */
		close(A.echo_fd);
		A.echo_fd = socket(AF_INET, SOCK_DGRAM, 0);
	}
	snprintf(idle_s, sizeof(idle_s), "%g", idle);
	const char *args[32];
	int na = 0;
	args[na++] = relay;
	args[na++] = "--listen";
	args[na++] = A.v6 ? "[::]:0" : "127.0.0.1:0";
	args[na++] = "--to";
	args[na++] = to;
	args[na++] = "--workers";
	args[na++] = workers;
	args[na++] = "--up-batch";
	args[na++] = batch;
	args[na++] = "--max-clients";
	args[na++] = max_clients;
	/* every flood socket and the well-behaved client are one host (the
	 * loopback): no per-address cap, so that the budget is what binds */
	args[na++] = "--max-clients-per-addr";
	args[na++] = "0";
	args[na++] = "--idle";
	args[na++] = idle_s;
	args[na++] = "--json";
	if (max_bytes) {
		args[na++] = "--max-bytes";
		args[na++] = max_bytes;
	}
	args[na] = NULL;
	int ep[2];
	if (pipe(ep))
		die("pipe");
	pid_t pid = fork();
	if (pid == 0) {
		dup2(ep[1], 2);
		dup2(ofd, 1);
		if (nofile > 0) {
			struct rlimit crl = { (rlim_t)nofile, (rlim_t)nofile };
			setrlimit(RLIMIT_NOFILE, &crl);
		}
		execv(relay, (char *const *)args);
		_exit(127);
	}
	close(ep[1]);
	close(ofd);
	char errbuf[8192];
	A.port = read_ready_port(ep[0], errbuf, sizeof(errbuf));
	if (!A.port) {
		fprintf(stderr, "pinwheel-relay-load: the relay did not start: %s\n", errbuf);
		return 1;
	}
	/* the relay's later stderr: kept, a thread-free way: non-blocking reads at the end */
	fcntl(ep[0], F_SETFL, O_NONBLOCK);
	uint64_t rss0 = proc_status_kb(pid, "VmRSS");

	for (int i = 0; i < A.nflood; i++) {
		A.flood_v6[i] = A.v6 && (int)(((unsigned)i * 37u) % 100u) < A.ipv6_pct;
		A.flood_fd[i] = ab_socket(A.flood_v6[i]);
		if (A.flood_fd[i] < 0)
			die("socket (raise ulimit -n for --flood-clients)");
	}
	pthread_t te, tf, tg, tp;
	pthread_create(&te, NULL, ab_echo, NULL);
	pthread_create(&tg, NULL, ab_good, NULL);
	pthread_create(&tp, NULL, ab_probe, NULL);
	A.flood_t0 = now_ns();
	pthread_create(&tf, NULL, ab_flood, NULL);
	uint64_t t0 = now_ns(), next_hup = hup > 0 ? t0 + (uint64_t)(hup * 1e9) : UINT64_MAX;
	uint64_t rss_max = 0, hups = 0;
	while (now_ns() - t0 < (uint64_t)(secs * 1e9)) {
		struct timespec ts = { 0, 50000000 };
		nanosleep(&ts, NULL);
		uint64_t r = proc_status_kb(pid, "VmRSS");
		rss_max = r > rss_max ? r : rss_max;
		if (now_ns() >= next_hup) {
			if (kill(pid, SIGHUP) == 0)
				hups++;
			next_hup += (uint64_t)(hup * 1e9);
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "pinwheel-relay-load: the relay died during the flood\n");
			pid = -1;
			break;
		}
	}
	__atomic_store_n(&A.stop_flood, 1, __ATOMIC_RELEASE);
	pthread_join(tf, NULL);
	pthread_join(tp, NULL);
	pthread_join(tg, NULL);
	uint64_t hwm = pid > 0 ? proc_status_kb(pid, "VmHWM") : 0;
	int st = -1;
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &st, 0);
	}
	__atomic_store_n(&A.stop, 1, __ATOMIC_RELEASE);
	pthread_join(te, NULL);
	for (int i = 0; i < A.nflood; i++)
		close(A.flood_fd[i]);
	size_t elen = strlen(errbuf);
	ssize_t n;
	while (elen < sizeof(errbuf) - 1 &&
	       (n = read(ep[0], errbuf + elen, sizeof(errbuf) - 1 - elen)) > 0)
		elen += (size_t)n;
	errbuf[elen] = '\0';
	close(ep[0]);

	/* the relay's final line */
	static char outbuf[1 << 20];
	FILE *f = fopen(out_path, "r");
	size_t olen = f ? fread(outbuf, 1, sizeof(outbuf) - 1, f) : 0;
	outbuf[olen] = '\0';
	if (f)
		fclose(f);
	unlink(out_path);
	unlink(batch);
	const char *fin = strstr(outbuf, "\"final\":true");
	while (fin && fin > outbuf && fin[-1] != '\n')
		fin--;
	int balanced = fin && strstr(fin, "\"balance\":true") && !strstr(fin, "\"balance\":false");
	char dup_[512], ddown[512];
	json_drops(fin, "up", dup_, sizeof(dup_));
	json_drops(fin, "down", ddown, sizeof(ddown));
	const char *downp = fin ? strstr(fin, "\"down\":{\"rx\"") : NULL;

	/* which of the well-behaved client's datagrams were lost: in the
	 * flood's first second, or later */
	qsort(A.good_back_ts, A.ngood_back, sizeof(uint64_t), cmp_u64);
	unsigned lost_first = 0, lost_later = 0;
	for (unsigned i = 0; i < A.ngood_ts; i++) {
		uint64_t key = A.good_ts[i];
		if (bsearch(&key, A.good_back_ts, A.ngood_back, sizeof(uint64_t), cmp_u64))
			continue;
		if (key < A.flood_t0 + 1000000000ull)
			lost_first++;
		else
			lost_later++;
	}
	qsort(A.good_rtt, A.ngood_rtt, sizeof(uint64_t), cmp_u64);
	qsort(A.late, A.nlate, sizeof(uint64_t), cmp_u64);
	uint64_t g50 = pct(A.good_rtt, A.ngood_rtt, 0.5), g90 = pct(A.good_rtt, A.ngood_rtt, 0.9);
	uint64_t g99 = pct(A.good_rtt, A.ngood_rtt, 0.99), gmax = A.ngood_rtt ? A.good_rtt[A.ngood_rtt - 1] : 0;
	uint64_t l50 = pct(A.late, A.nlate, 0.5), l99 = pct(A.late, A.nlate, 0.99);
	int quiet = !AB_SANITIZED && l50 < 1000000 && (double)l99 < delay_ms * 1e6 / 20;
	double dly = delay_ms * 1e6;
	int delay_ok = dead || (g50 >= dly && (double)g50 <= 1.1 * dly);
	uint64_t budget = 0;
	if (max_bytes) {
		char *e;
		budget = strtoull(max_bytes, &e, 10);
		budget <<= *e == 'k' || *e == 'K' ? 10 : *e == 'm' || *e == 'M' ? 20 : *e == 'g' || *e == 'G' ? 30 : 0;
	} else if (fin && json_num(fin, "max_bytes") > 0) {
		budget = (uint64_t)json_num(fin, "max_bytes");
	}
	double rss_limit_mib = budget ? (double)budget / 1048576.0 + rss_over : 0;
	int rss_ok = !rss_limit_mib || AB_SANITIZED || (double)hwm / 1024.0 <= rss_limit_mib;
	int exited = st != -1 && WIFEXITED(st);
	int exit_code = exited ? WEXITSTATUS(st) : -1;

	printf("abuse %.0f s: %d flood sockets (%s), %llu new ones, %llu datagrams (%.1f MB) sent; "
	       "netem delay %g ms limit %s, --max-clients %s, --idle %g, %llu SIGHUPs\n",
	       secs, A.nflood, A.v6 ? "IPv4 and IPv6" : "IPv4", (unsigned long long)A.flood_new,
	       (unsigned long long)A.flood_sent, (double)A.flood_bytes / 1e6, delay_ms, limit,
	       max_clients, idle, (unsigned long long)hups);
	printf("  relay RSS: %.1f MiB before the flood, peak %.1f MiB (VmHWM; sampled max %.1f MiB)",
	       rss0 / 1024.0, hwm / 1024.0, rss_max / 1024.0);
	if (rss_limit_mib)
		printf("; limit %.0f MiB (budget %.0f MiB + %.0f MiB): %s", rss_limit_mib,
		       (double)budget / 1048576.0, rss_over,
		       AB_SANITIZED ? "a sanitizer build, not judged" : rss_ok ? "ok" : "OVER");
	printf("\n  well-behaved client: %llu sent, %llu back (lost %u in the flood's first second, "
	       "%u later); RTT p50 %.1f ms, p90 %.1f, p99 %.1f, "
	       "max %.1f (delay %g ms): %s\n",
	       (unsigned long long)A.good_sent, (unsigned long long)A.good_got, lost_first,
	       lost_later, g50 / 1e6, g90 / 1e6, g99 / 1e6, gmax / 1e6, delay_ms,
	       dead ? "no server (--to-dead), not judged" : !quiet ? "LOADED (not judged)"
	       : delay_ok ? "median within 10%" : "median OFF by more than 10%");
	printf("  lateness probe (1 ms sleeps): p50 %.0f us, p99 %.0f us: %s\n", l50 / 1e3, l99 / 1e3,
	       quiet ? "QUIET" : "LOADED");
	printf("  relay: exit %d, balance %s; up rx %lld out %lld drops %s; down rx %lld out %lld "
	       "drops %s; clients_new %lld, over share %lld, no_memory %lld; %lld port unreachable, "
	       "%lld other upstream errors\n",
	       exit_code, balanced ? "true" : "FALSE", json_num(fin, "rx"), json_num(fin, "out"), dup_,
	       json_num(downp, "rx"), json_num(downp, "out"), ddown, json_num(fin, "clients_new"),
	       json_num(fin, "clients_over_share"), json_num(fin, "clients_no_memory"),
	       json_num(fin, "refused"), json_num(fin, "upstream_errors"));
	if (strstr(errbuf, "out of file descriptors"))
		printf("  relay: %.*s\n", (int)strcspn(strstr(errbuf, "out of file descriptors"), "\n"),
		       strstr(errbuf, "out of file descriptors"));
	printf("{\"abuse_secs\":%.0f,\"flood_clients\":%d,\"flood_sent\":%llu,\"flood_bytes\":%llu,"
	       "\"rss0_kib\":%llu,\"rss_peak_kib\":%llu,\"rss_limit_mib\":%.0f,\"good_sent\":%llu,"
	       "\"good_back\":%llu,\"good_p50_ms\":%.3f,\"good_p90_ms\":%.3f,\"good_p99_ms\":%.3f,"
	       "\"late_p50_us\":%.0f,\"late_p99_us\":%.0f,\"quiet\":%s,\"exit\":%d,\"balance\":%s}\n",
	       secs, A.nflood, (unsigned long long)A.flood_sent, (unsigned long long)A.flood_bytes,
	       (unsigned long long)rss0, (unsigned long long)hwm, rss_limit_mib,
	       (unsigned long long)A.good_sent, (unsigned long long)A.good_got, g50 / 1e6, g90 / 1e6,
	       g99 / 1e6, l50 / 1e3, l99 / 1e3, quiet ? "true" : "false", exit_code,
	       balanced ? "true" : "false");
	if (fin)
		printf("%.*s\n", (int)strcspn(fin, "\n"), fin);
	fflush(stdout);
	free(A.good_rtt);
	free(A.late);
	free(A.good_ts);
	free(A.good_back_ts);
	if (!check)
		return exited && exit_code <= 1 ? 0 : 1;
	int fail = 0;
	if (!exited || exit_code != 0) {
		fprintf(stderr, "pinwheel-relay-load: FAIL: the relay's exit status %d\n%s", st, errbuf);
		fail = 1;
	}
	if (!balanced) {
		fprintf(stderr, "pinwheel-relay-load: FAIL: the final balance does not hold\n");
		fail = 1;
	}
	if (!rss_ok) {
		fprintf(stderr, "pinwheel-relay-load: FAIL: peak RSS %.1f MiB over %.0f MiB\n",
			hwm / 1024.0, rss_limit_mib);
		fail = 1;
	}
	if (quiet && !delay_ok) {
		fprintf(stderr, "pinwheel-relay-load: FAIL: the well-behaved median RTT %.1f ms is not "
			"within 10%% above the delay %g ms on a quiet machine\n", g50 / 1e6, delay_ms);
		fail = 1;
	}
	return fail;
}
