/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-relay-load: load and latency through pinwheel-netem, on loopback.
 *
 *   pinwheel-relay-load RELAY-BINARY|--kernel [--workers N] [--up SPEC]
 *                       [--delay-ms D] [--secs S] [--rate PPS] [--len BYTES]
 *                       [--clients K] [--throughput-only 1]
 *
 * Starts an echo server (a thread: recvmmsg/sendmmsg), then the relay
 * (fork/exec: --listen 127.0.0.1:0 --to the echo server --workers N --up
 * SPEC), then K client sockets.  Two phases, each S seconds:
 *  1. throughput: one sender thread offers datagrams as fast as sendmmsg
 *     takes them (32 a call, round robin over the clients), a receiver
 *     thread counts the echoes; the relay's CPU time (/proc/PID/stat, user
 *     + system) over the phase, divided by twice the echoes, is its CPU per
 *     datagram and direction ("cpu_ns_per_pkt"); and its CPU over its whole
 *     life (rusage) divided by the datagrams it sent both ways (its final
 *     --json statistics: "out" up + down) is "cpu_ns_per_sent": it counts
 *     the datagrams the relay sent that the echo server or the clients
 *     then dropped at their full sockets, which the first figure charges
 *     to the echoes;
 *  2. latency: the same clients at RATE datagrams/s (default 2000), every
 *     RTT recorded; "added" (p50, p99) is the RTT's percentile minus the
 *     configured delay (D, ms) minus the direct RTT's median to the echo
 *     server (measured first, the same way, without the relay); beside it,
 *     the OS's lateness of an epoll sleep of D ms as the relay sleeps
 *     (epoll_sleep(), tools/common/epoll_sleep.h; 1 ms if 0),
 *     measured just before: what "at most the OS wake-up jitter" compares.
 *     --throughput-only 1 skips it (the latency figures print 0).
 * --kernel: the same traffic through the kernel instead (root): the echo
 * server in network namespace b, the clients in a, a veth pair between
 * (10.77.0.1 <-> 10.77.0.2) and "tc qdisc add dev va root SPEC" on a's end;
 * the direct RTT is the veth's without the qdisc.  No CPU figure there:
 * the kernel's qdisc runs in softirqs of whatever thread (and the machine's
 * total includes other work on a shared VM).
 * Prints one line per phase, and a JSON line with everything.
 * Threads: main, the echo server, a sender, a receiver.  Not a test: it
 * prints figures and checks nothing but that the relay ran and stopped.
 *
 * --abuse (issue 26): a hostile load instead, see abuse_main() below: many
 * source ports, random sizes to 64 KiB, zero-length and truncated
 * datagrams, bursts, new clients faster than --idle forgets them, an IPv6
 * mix, SIGHUP during the flood; it reports the relay's peak RSS, a
 * well-behaved client's delay percentiles during the flood (with a
 * lateness probe saying whether the machine was quiet enough to judge
 * them) and the relay's exit balance.  With --check it is a test (ctest
 * relay_abuse; .ci/run for 60 s).
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

#define BATCH 32
#define MAXC 64
#define MAXLAT (1 << 20)

static void die(const char *what)
{
	fprintf(stderr, "pinwheel-relay-load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	return a;
}

/* ------------------------------------------------------------ echo */

static int echo_fd, stop_echo;

static void *echo_main(void *arg)
{
	(void)arg;
	static char bufs[BATCH][2048];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];
	while (!__atomic_load_n(&stop_echo, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { echo_fd, POLLIN, 0 };
		if (poll(&p, 1, 50) <= 0)
			continue;
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
			m[i].msg_hdr = (struct msghdr){ .msg_name = &from[i],
							.msg_namelen = sizeof(from[i]),
							.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int n = recvmmsg(echo_fd, m, BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++)
			iov[i].iov_len = m[i].msg_len;
		sendmmsg(echo_fd, m, (unsigned)n, MSG_DONTWAIT);
	}
	return NULL;
}

/* ------------------------------------------------------------ clients */

static int cfd[MAXC], nclients = 8;
static struct sockaddr_in target;
static size_t dlen = 64;
static int phase_stop;
static uint64_t sent, received;
static uint64_t *lat; /* RTTs of the latency phase */
static unsigned nlat;
static double rate_pps = 2000;
static int paced;

static void *sender(void *arg)
{
	(void)arg;
	static char bufs[BATCH][2048];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	uint64_t next = now_ns();
	int c = 0;
	while (!__atomic_load_n(&phase_stop, __ATOMIC_ACQUIRE)) {
		if (paced) {
			uint64_t t = now_ns();
			if (t < next) {
				struct timespec ts = { 0, (long)(next - t) };
				nanosleep(&ts, NULL);
				continue;
			}
			next += (uint64_t)(1e9 / rate_pps);
			memcpy(bufs[0], &t, 8);
			if (sendto(cfd[c], bufs[0], dlen, 0, (struct sockaddr *)&target,
				   sizeof(target)) > 0)
				__atomic_fetch_add(&sent, 1, __ATOMIC_RELAXED);
			c = (c + 1) % nclients;
			continue;
		}
		uint64_t t = now_ns();
		for (int i = 0; i < BATCH; i++) {
			memcpy(bufs[i], &t, 8);
			iov[i] = (struct iovec){ bufs[i], dlen };
			m[i].msg_hdr = (struct msghdr){ .msg_name = &target,
							.msg_namelen = sizeof(target),
							.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int n = sendmmsg(cfd[c], m, BATCH, 0);
		if (n > 0)
			__atomic_fetch_add(&sent, (uint64_t)n, __ATOMIC_RELAXED);
		c = (c + 1) % nclients;
	}
	return NULL;
}

static void *receiver(void *arg)
{
	(void)arg;
	int ep = epoll_create1(0);
	for (int i = 0; i < nclients; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		epoll_ctl(ep, EPOLL_CTL_ADD, cfd[i], &ev);
	}
	static char bufs[BATCH][2048];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	struct epoll_event evs[MAXC];
	while (!__atomic_load_n(&phase_stop, __ATOMIC_ACQUIRE)) {
		int ne = epoll_wait(ep, evs, MAXC, 50);
		for (int e = 0; e < ne; e++) {
			int fd = cfd[evs[e].data.u32];
			for (int i = 0; i < BATCH; i++) {
				iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
				m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
			}
			int n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
			if (n <= 0)
				continue;
			uint64_t t = now_ns();
			for (int i = 0; i < n; i++) {
				uint64_t s;
				memcpy(&s, bufs[i], 8);
				if (paced && nlat < MAXLAT)
					lat[nlat++] = t - s;
			}
			__atomic_fetch_add(&received, (uint64_t)n, __ATOMIC_RELAXED);
		}
	}
	close(ep);
	return NULL;
}

static uint32_t target_ip = 0x7f000001; /* 127.0.0.1; 10.77.0.2 with --kernel */

/* One phase of @secs against @port; the echoes received. */
static uint64_t phase(uint16_t port, double secs, int pace)
{
	target = loopback(port);
	target.sin_addr.s_addr = htonl(target_ip);
	paced = pace;
	sent = received = 0;
	nlat = 0;
	phase_stop = 0;
	pthread_t s, r;
	pthread_create(&r, NULL, receiver, NULL);
	pthread_create(&s, NULL, sender, NULL);
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	__atomic_store_n(&phase_stop, 1, __ATOMIC_RELEASE);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	/* what was still in flight: not counted (it was after the phase) */
	return received;
}

static int ns_a = -1, ns_b = -1, ns_orig = -1; /* --kernel: the namespaces */

/* (Re)open the client sockets (in namespace a with --kernel).  Context:
 * main, between phases. */
static void open_clients(void)
{
	if (ns_a >= 0 && setns(ns_a, CLONE_NEWNET))
		die("setns");
	int sz = 8 << 20;
	for (int i = 0; i < nclients; i++) {
		if (cfd[i] > 0)
			close(cfd[i]);
		cfd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (cfd[i] < 0)
			die("socket");
		setsockopt(cfd[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	if (ns_orig >= 0 && setns(ns_orig, CLONE_NEWNET))
		die("setns");
}

/* --kernel: a shell command in namespace @ns (the child inherits the
 * main thread's namespace).  Returns its exit status. */
static int sh_in(int ns, const char *cmd)
{
	if (setns(ns, CLONE_NEWNET))
		die("setns");
	int rc = system(cmd);
	if (setns(ns_orig, CLONE_NEWNET))
		die("setns");
	return rc;
}

static int new_netns(void)
{
	if (unshare(CLONE_NEWNET))
		return -1;
	int fd = open("/proc/thread-self/ns/net", O_RDONLY); /* the children inherit it */
	if (setns(ns_orig, CLONE_NEWNET))
		die("setns");
	return fd;
}

/* --kernel: namespaces a and b (anonymous: they vanish with the process),
 * veth va (a, 10.77.0.1) <-> vb (b, 10.77.0.2). */
static void kernel_setup(void)
{
	ns_orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	ns_a = ns_orig >= 0 ? new_netns() : -1;
	ns_b = ns_a >= 0 ? new_netns() : -1;
	if (ns_b < 0) {
		fprintf(stderr, "pinwheel-relay-load: --kernel needs root and network namespaces\n");
		exit(77);
	}
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "ip link add va type veth peer name vb netns /proc/%d/fd/%d",
		 (int)getpid(), ns_b);
	if (sh_in(ns_a, cmd) || sh_in(ns_a, "ip addr add 10.77.0.1/24 dev va") ||
	    sh_in(ns_a, "ip link set va up") || sh_in(ns_b, "ip addr add 10.77.0.2/24 dev vb") ||
	    sh_in(ns_b, "ip link set vb up") || sh_in(ns_b, "ip link set lo up")) {
		fprintf(stderr, "pinwheel-relay-load: --kernel: no veth pair\n");
		exit(77);
	}
	target_ip = 0x0a4d0002;
}

/* --kernel: "tc qdisc add dev va root SPEC" (or del with NULL). */
static void kernel_qdisc(const char *spec)
{
	char cmd[512];
	if (spec)
		snprintf(cmd, sizeof(cmd), "tc qdisc add dev va root %s", spec);
	else
		snprintf(cmd, sizeof(cmd), "tc qdisc del dev va root 2>/dev/null");
	if (sh_in(ns_a, cmd) && spec) {
		fprintf(stderr, "pinwheel-relay-load: the kernel refuses \"%s\"\n", cmd);
		exit(1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void percentiles(uint64_t *p50, uint64_t *p99)
{
	if (!nlat) {
		*p50 = *p99 = 0;
		return;
	}
	qsort(lat, nlat, sizeof(lat[0]), cmp_u64);
	*p50 = lat[nlat / 2];
	*p99 = lat[(size_t)nlat * 99 / 100];
}

static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	unsigned long ut = 0, st = 0;
	/* fields after ")": state(3) ... utime(14) stime(15) */
	sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The OS wake-up lateness of a thread sleeping @ms in epoll (the relay's
 * sleep: epoll_sleep(), the poll slack taken off), @n times: p50 and p99
 * in *@p50 / *@p99 (ns). */
static void wake_lateness(double ms, unsigned n, uint64_t *p50, uint64_t *p99)
{
	int ep = epoll_create1(0);
	uint64_t *l = malloc(sizeof(*l) * n);
	if (ep < 0 || !l)
		die("wake_lateness");
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	struct epoll_slack slack;
	epoll_slack_init(&slack);
	uint64_t d = (uint64_t)(ms * 1e6);
	for (unsigned i = 0; i < n; i++) {
		struct epoll_event ev;
		uint64_t t = now_ns() + d, e;
		/* as the relay's loop: a wake before the deadline sleeps the rest */
		while ((e = now_ns()) < t)
			epoll_sleep(ep, &ev, 1, t - e, &slack);
		l[i] = e > t ? e - t : 0;
	}
	qsort(l, n, sizeof(*l), cmp_u64);
	*p50 = l[n / 2];
	*p99 = l[(size_t)n * 99 / 100];
	free(l);
	close(ep);
}

/* Read the relay's stderr from @fd into @buf (@len bytes, NUL-ended)
 * until its "ready: listening on ADDR:PORT," line: the port, or 0 when the
 * relay ended or said too much before it.  Context: the main thread. */
static uint16_t read_ready_port(int fd, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	while (used < len - 1) {
		ssize_t n = read(fd, buf + used, len - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
		char *r = strstr(buf, "ready: listening on ");
		char *c = r ? strchr(r, ',') : NULL;
		if (c) {
			while (c > r && c[-1] != ':')
				c--;
			return (uint16_t)atoi(c);
		}
	}
	return 0;
}

/* Start the relay: its pid, its port in *@port (exits on failure).  With
 * @out_fd, the relay runs with --json and its stdout (the final
 * statistics) is the pipe whose read end is *@out_fd; else /dev/null. */
static pid_t start_relay(const char *relay, const char *to, const char *workers, const char *spec,
			 uint16_t *port, int *out_fd)
{
	int ep[2], op[2] = { -1, -1 };
	if (pipe(ep) || (out_fd && pipe(op)))
		die("pipe");
	pid_t pid = fork();
	if (pid == 0) {
		dup2(ep[1], 2);
		if (out_fd) {
			dup2(op[1], 1);
		} else {
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 1);
		}
		execl(relay, relay, "--listen", "127.0.0.1:0", "--to", to, "--workers", workers,
		      "--up", spec, "--max-packets", "1000000", out_fd ? "--json" : (char *)NULL,
		      (char *)NULL);
		_exit(127);
	}
	close(ep[1]);
	if (out_fd) {
		close(op[1]);
		*out_fd = op[0];
	}
	char errbuf[4096];
	*port = read_ready_port(ep[0], errbuf, sizeof(errbuf));
	close(ep[0]); /* the relay's later stderr: EPIPE, ignored */
	if (!*port) {
		fprintf(stderr, "pinwheel-relay-load: the relay did not start: %s\n", errbuf);
		exit(1);
	}
	return pid;
}


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

/* "KEY":NUMBER in @s (the first), or -1. */
static long long json_num(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
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

static int abuse_main(const char *relay, int argc, char **argv)
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

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: pinwheel-relay-load RELAY|--kernel [--workers N] [--up SPEC] "
				"[--delay-ms D] [--secs S] [--rate PPS] [--len BYTES] [--clients K]\n"
				"                           [--throughput-only 1]\n"
				"       pinwheel-relay-load RELAY --abuse [--check] [--secs S] [--delay-ms D]\n"
				"                           [--max-bytes B] [--workers N] [--max-clients N]\n"
				"                           [--limit N] [--idle S] [--hup S] [--nofile N]\n"
				"                           [--flood-clients K] [--churn PER_S] [--ipv6 PCT]\n"
				"                           [--flood-mbps M] [--good-rate PPS] [--to-dead]\n"
				"                           [--rss-overhead MIB]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--abuse"))
			return abuse_main(argv[1], argc, argv);
	const char *relay = argv[1], *workers = "1", *spec = "pfifo";
	int kernel = !strcmp(relay, "--kernel");
	double delay_ms = 0, secs = 3;
	int latency_only = 0, throughput_only = 0;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--latency-only"))
			latency_only = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--throughput-only"))
			throughput_only = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--workers"))
			workers = argv[i + 1];
		else if (!strcmp(argv[i], "--up"))
			spec = argv[i + 1];
		else if (!strcmp(argv[i], "--delay-ms"))
			delay_ms = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--secs"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--rate"))
			rate_pps = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--len"))
			dlen = (size_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--clients"))
			nclients = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "pinwheel-relay-load: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (nclients < 1 || nclients > MAXC || dlen < 8 || dlen > 2048 || rate_pps <= 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	lat = malloc(sizeof(*lat) * MAXLAT);
	if (!lat)
		die("malloc");

	if (kernel)
		kernel_setup();
	if (kernel && setns(ns_b, CLONE_NEWNET))
		die("setns");
	echo_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (kernel && setns(ns_orig, CLONE_NEWNET))
		die("setns");
	int sz = 8 << 20;
	setsockopt(echo_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(echo_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	struct sockaddr_in ea = loopback(0);
	ea.sin_addr.s_addr = htonl(target_ip);
	if (bind(echo_fd, (struct sockaddr *)&ea, sizeof(ea)))
		die("bind");
	socklen_t el = sizeof(ea);
	getsockname(echo_fd, (struct sockaddr *)&ea, &el);
	uint16_t eport = ntohs(ea.sin_port);
	pthread_t et;
	pthread_create(&et, NULL, echo_main, NULL);
	open_clients();

	/* the direct RTT, without the relay */
	phase(eport, 1.0, 1);
	uint64_t d50, d99;
	percentiles(&d50, &d99);

	char to[64];
	snprintf(to, sizeof(to), "127.0.0.1:%u", eport);
	uint16_t rport;
	int st, relay_out = -1;
	pid_t pid = -1;
	if (kernel) {
		kernel_qdisc(spec); /* the kernel's qdisc is "the relay" */
		rport = eport;
	} else {
		pid = start_relay(relay, to, workers, spec, &rport, &relay_out);
	}

	double c0 = kernel ? 0 : proc_cpu_s(pid);
	uint64_t t0 = now_ns();
	uint64_t got = latency_only ? 0 : phase(rport, secs, 0);
	double el_s = (double)(now_ns() - t0) / 1e9;
	double cpu = kernel ? 0 : proc_cpu_s(pid) - c0;
	uint64_t offered = sent;
	double pps = (double)got / el_s;
	/* both directions: each echo went through up and down */
	double cpu_ns = got ? cpu * 1e9 / (2.0 * (double)got) : 0;
	uint64_t relay_sent = 0;
	double cpu_sent_ns = 0;

	/* a fresh relay and fresh sockets for the latency phase: the old
	 * ones hold what was still in flight at the end of the throughput
	 * phase */
	if (kernel) {
		kernel_qdisc(NULL);
	} else {
		/* the relay's whole life: its CPU (rusage) over the datagrams
		 * it sent both ways (its final statistics): what it spent per
		 * datagram it relayed, those the echo server or the clients
		 * then dropped at their full sockets included */
		kill(pid, SIGTERM);
		static char fin[1 << 16];
		size_t fl = 0;
		ssize_t r;
		while (fl < sizeof(fin) - 1 &&
		       ((r = read(relay_out, fin + fl, sizeof(fin) - 1 - fl)) > 0 ||
			(r < 0 && errno == EINTR)))
			fl += r > 0 ? (size_t)r : 0;
		fin[fl] = '\0';
		close(relay_out);
		struct rusage ru;
		if (wait4(pid, &st, 0, &ru) != pid)
			die("wait4");
		if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
			fprintf(stderr, "pinwheel-relay-load: the relay failed (status %d)\n", st);
			return 1;
		}
		const char *u = strstr(fin, "\"up\":{\"rx\""), *d = strstr(fin, "\"down\":{\"rx\"");
		long long uo = u ? json_num(u, "out") : -1, dn = d ? json_num(d, "out") : -1;
		if (uo >= 0 && dn >= 0) {
			relay_sent = (uint64_t)(uo + dn);
			double life = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
			cpu_sent_ns = relay_sent ? life * 1e9 / (double)relay_sent : 0;
		}
	}
	/* what the OS adds to a sleep of the delay, just before */
	uint64_t w50 = 0, w99 = 0, p50 = 0, p99 = 0, lat_n = 0;
	double dly = delay_ms * 1e6;
	double add50 = 0, add99 = 0;
	if (!throughput_only) {
		open_clients();
		wake_lateness(delay_ms > 0 ? delay_ms : 1.0,
			      delay_ms > 0 ? (unsigned)(500 / delay_ms) + 20 : 500, &w50, &w99);
		if (kernel)
			kernel_qdisc(spec);
		else
			pid = start_relay(relay, to, workers, spec, &rport, NULL);
		struct timespec settle = { 0, 500000000 };
		nanosleep(&settle, NULL);
		phase(rport, secs, 1);
		percentiles(&p50, &p99);
		lat_n = nlat;
		add50 = (double)p50 - dly - (double)d50;
		add99 = (double)p99 - dly - (double)d50;
	}

	if (kernel || !throughput_only)
		st = 0; /* else the throughput phase's relay's status */
	if (!kernel && !throughput_only) {
		kill(pid, SIGTERM);
		waitpid(pid, &st, 0);
	}
	__atomic_store_n(&stop_echo, 1, __ATOMIC_RELEASE);
	pthread_join(et, NULL);

	if (kernel)
		printf("kernel, veth va up '%s': %.0f echoes/s (offered %.0f/s)\n", spec, pps,
		       (double)offered / el_s);
	else
		printf("workers %s, up '%s': %.0f echoes/s (offered %.0f/s), relay CPU %.2f s = %.0f "
		       "ns per datagram and direction; over its life %.0f ns per datagram it sent "
		       "(%llu)\n",
		       workers, spec, pps, (double)offered / el_s, cpu, cpu_ns, cpu_sent_ns,
		       (unsigned long long)relay_sent);
	if (!throughput_only)
		printf("  at %.0f/s: RTT p50 %.1f us p99 %.1f us (%llu samples); direct p50 %.1f us "
		       "p99 %.1f us; added beyond the delay: p50 %.1f us, p99 %.1f us; the OS's "
		       "lateness of a %.0f ms sleep: p50 %.1f us, p99 %.1f us\n",
		       rate_pps, p50 / 1e3, p99 / 1e3, (unsigned long long)lat_n, d50 / 1e3,
		       d99 / 1e3, add50 / 1e3, add99 / 1e3, delay_ms > 0 ? delay_ms : 1.0,
		       w50 / 1e3, w99 / 1e3);
	printf("{\"workers\":%s,\"spec\":\"%s\",\"pps\":%.0f,\"offered_pps\":%.0f,\"cpu_ns_per_pkt\":%.0f,"
	       "\"cpu_ns_per_sent\":%.0f,\"relay_sent\":%llu,"
	       "\"rtt_p50_us\":%.1f,\"rtt_p99_us\":%.1f,\"direct_p50_us\":%.1f,\"direct_p99_us\":%.1f,"
	       "\"added_p50_us\":%.1f,\"added_p99_us\":%.1f,\"sleep_late_p50_us\":%.1f,"
	       "\"sleep_late_p99_us\":%.1f,\"exit\":%d}\n",
	       kernel ? "\"kernel\"" : workers, spec, pps, (double)offered / el_s, cpu_ns,
	       cpu_sent_ns, (unsigned long long)relay_sent, p50 / 1e3, p99 / 1e3, d50 / 1e3,
	       d99 / 1e3, add50 / 1e3, add99 / 1e3, w50 / 1e3, w99 / 1e3,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	free(lat);
	return WIFEXITED(st) && WEXITSTATUS(st) <= 1 ? 0 : 1;
}
