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
 * --abuse (issue 26): a hostile load instead, see relay_load_abuse.c: many
 * source ports, random sizes to 64 KiB, zero-length and truncated
 * datagrams, bursts, new clients faster than --idle forgets them, an IPv6
 * mix, SIGHUP during the flood; it reports the relay's peak RSS, a
 * well-behaved client's delay percentiles during the flood (with a
 * lateness probe saying whether the machine was quiet enough to judge
 * them) and the relay's exit balance.  With --check it is a test (ctest
 * relay_abuse; .ci/run for 60 s).
 *
 * Files: this one (the program: options, the echo server, the clients, the
 * throughput and latency phases, --kernel's namespaces), relay_load_abuse.c
 * (--abuse) and relay_load.h (what both use).
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

#define BATCH 32
#define MAXC 64

/* Say what failed, with errno's text, and exit 1.  Context: any thread. */
void die(const char *what)
{
	fprintf(stderr, "pinwheel-relay-load: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Return: 127.0.0.1:@port.  Context: any thread. */
struct sockaddr_in loopback(uint16_t port)
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

/* qsort()'s comparison of two uint64_t.  Context: any thread.
 * Return: -1, 0 or 1. */
int cmp_u64(const void *a, const void *b)
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
uint16_t read_ready_port(int fd, char *buf, size_t len)
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

/* "KEY":NUMBER in @s (the first) (the relay's --json lines).  Context: any
 * thread.  Return: the number, or -1. */
long long json_num(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
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
