/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem end to end, on loopback: the built binary (argv[1]) run
 * with fork/exec between this test's clients and an echo server thread.
 * Each part starts a relay with --json, sends timestamped datagrams, stops
 * it with SIGTERM and reads the final statistics line; every part checks
 * the balance (rx + clones == out + dropped, backlog 0) and the exit status.
 *
 * Parts: the OS wake-up jitter (a plain sleep, measured first: the delay
 * tolerance is built from it), delay (never early, mean within the
 * tolerance), loss (binomial bounds, and the same count again with the
 * same --seed), duplication, tbf rate (bytes exact, rate within 3% at 10
 * Mbit/s), reordering (about the share asked sent at once), Gilbert-Elliott
 * loss (burst lengths of mean 1/r), many clients on 2 workers (each reply
 * to its own socket, both workers used; --per-queue: a netem per queue),
 * --steer-cpu (the same clients sending from two threads pinned to two
 * CPUs, so each client's datagrams reach both workers: one mapping per
 * client, every datagram accounted for, never early, each reply to its
 * own socket; the idle timer with it; its refusals),
 * --stats reports while running, the same loss and duplication decisions
 * live as on the simulated clock for the same seed and sequence, --max-clients,
 * --max-clients-per-addr (one address held to its cap, another admitted,
 * the count exact as mappings idle out), the idle timer, stop with packets queued
 * (dropped and counted; and a drain that sends them), SIGHUP with packets
 * queued (kept), IPv6, bad configurations (exit 2, the message names the
 * token), --help; the byte budget (issue 26): --max-bytes refusals naming
 * the value, the no_memory drop counted and balanced, a flooding client
 * held to its share while a well-behaved one keeps every datagram, netem
 * duplicates refused past the share; the edges: --to a host name, --to the
 * relay's own address (a loop), RLIMIT_NOFILE 64 with 100 clients.  The
 * budget parts assert counts and properties, never timings.
 *
 * Threads: main (clients, the relay's parent) and the echo server (and
 * two sender threads in the --steer-cpu parts).  Timing
 * tolerances are generous (a loaded 2-core VM): the test asserts what the
 * qdiscs guarantee (never early, counts, balances) tightly and the times
 * loosely.  Label relay, RUN_SERIAL: it runs on the real clock.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "load_probe.h"
#include "now.h"

static const char *relay_bin;
static long spawn_nofile; /* RLIMIT_NOFILE (soft and hard) of the next relay; 0: inherited */

/* Under ThreadSanitizer (this test's build or the relay's) the timings are
 * printed, not judged: the sanitizer's slowdown is not the relay's.  The
 * counts and balances are checked in every build. */
#if PW_TSAN /* load_probe.h */
static const int judge_timing = 0;
#else
static const int judge_timing = 1;
#endif
#define CHECK_TIMING(cond)                                                         \
	do {                                                                       \
		if (judge_timing)                                                  \
			CHECK(cond);                                               \
		else if (!(cond))                                                  \
			printf("  (TSan: not judged: %s)\n", #cond);               \
	} while (0)

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void sleep_ms(unsigned ms)
{
	sleep_until(now_ns() + (uint64_t)ms * 1000000ull);
}

/* ------------------------------------------------------------ load probe */

/*
 * The probe around a judged timing (load_probe.h says why this measure):
 * a thread that sleeps 500 us at a time and at each wake-up takes the
 * longer of its own lateness and the longest wait for a CPU of one of the
 * relay process's threads since the last poll.  What such stalls last
 * beyond @cover_ns (what the figure absorbs: a shaper's burst, a delay's
 * tolerance), summed, plus the steal the machine counts, is time the
 * relay could not keep its pace for.  A figure whose window lost more
 * than its judge allows is printed, not judged (LOADED), and counted, so
 * a run says how many it judged.  Threads: the probe's and the test's
 * main thread (start, stop, the counts).
 */
static struct {
	pthread_t th;
	pid_t pid;
	uint64_t cover_ns, lost_ns, max_ns, steal0;
	int stop;
} RP;
static unsigned timing_judged, timing_loaded;

static void *rprobe_fn(void *arg)
{
	(void)arg;
	struct lp_watch w;
	bool have = lp_watch_open(&w, RP.pid, NULL, 0);
	while (!__atomic_load_n(&RP.stop, __ATOMIC_ACQUIRE)) {
		uint64_t want = now_ns() + 500000;
		sleep_until(want);
		uint64_t late = now_ns() - want, sum = 0;
		uint64_t one = have ? lp_watch_poll(&w, &sum) : 0;
		uint64_t stall = late > one ? late : one;
		if (stall > RP.max_ns)
			RP.max_ns = stall;
		if (stall > RP.cover_ns)
			RP.lost_ns += stall - RP.cover_ns;
	}
	if (have)
		lp_watch_close(&w);
	return NULL;
}

static void rprobe_start(pid_t pid, uint64_t cover_ns)
{
	RP.pid = pid;
	RP.cover_ns = cover_ns;
	RP.lost_ns = RP.max_ns = 0;
	RP.stop = 0;
	RP.steal0 = lp_steal_ns();
	CHECK_EQ(pthread_create(&RP.th, NULL, rprobe_fn, NULL), 0);
}

/* Stop the probe; whether the window lost at most @allow_ns (then the
 * figure is judged), said in a line either way. */
static bool rprobe_quiet(uint64_t allow_ns, const char *what)
{
	__atomic_store_n(&RP.stop, 1, __ATOMIC_RELEASE);
	pthread_join(RP.th, NULL);
	/* the machine's steal, all CPUs': what one CPU lost on average */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t steal = lp_steal_least(lp_steal_ns() - RP.steal0) / (uint64_t)(ncpu > 0 ? ncpu : 1);
	uint64_t lost = RP.lost_ns + steal;
	bool quiet = lost <= allow_ns;
	char la[128];
	printf("  probe (%s): stalls beyond %.1f ms %.1f ms, steal %.1f ms (allowed %.1f), longest "
	       "%.1f ms, load %s: %s\n",
	       what, RP.cover_ns / 1e6, RP.lost_ns / 1e6, steal / 1e6, allow_ns / 1e6,
	       RP.max_ns / 1e6, lp_loadavg(la, sizeof(la)), quiet ? "judged" : "LOADED, not judged");
	if (quiet)
		timing_judged++;
	else
		timing_loaded++;
	return quiet;
}

/* ------------------------------------------------------------ echo server */

#define MAX_REC 16384

static struct {
	int fd;
	int family;
	uint16_t port;
	int stop;
	pthread_t th;
	/* arrivals, for the rate part */
	uint64_t rec_t[MAX_REC];
	uint32_t rec_len[MAX_REC];
	uint32_t rec_seq[MAX_REC]; /* the client's sequence number (bytes 8..11) */
	unsigned nrec; /* under rec_lock (entries below it are written) */
	pthread_mutex_t rec_lock;
	uint64_t received;
} E;

static void *echo_main(void *arg)
{
	(void)arg;
	char buf[65536];
	while (!__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { E.fd, POLLIN, 0 };
		if (poll(&p, 1, 20) <= 0)
			continue;
		for (;;) {
			struct sockaddr_storage a;
			socklen_t al = sizeof(a);
			ssize_t n = recvfrom(E.fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&a,
					     &al);
			if (n < 0)
				break;
			pthread_mutex_lock(&E.rec_lock);
			unsigned k = E.nrec;
			if (k < MAX_REC) {
				E.rec_t[k] = now_ns();
				E.rec_len[k] = (uint32_t)n;
				E.rec_seq[k] = 0;
				if (n >= 12)
					memcpy(&E.rec_seq[k], buf + 8, 4);
				E.nrec = k + 1;
			}
			pthread_mutex_unlock(&E.rec_lock);
			__atomic_fetch_add(&E.received, 1, __ATOMIC_RELAXED);
			sendto(E.fd, buf, (size_t)n, 0, (struct sockaddr *)&a, al);
		}
	}
	return NULL;
}

/* The echo server's records: start again (@reset) or how many there are
 * (entries below the count are complete).  Main. */
static unsigned rec_count(int reset)
{
	pthread_mutex_lock(&E.rec_lock);
	if (reset)
		E.nrec = 0;
	unsigned n = E.nrec;
	pthread_mutex_unlock(&E.rec_lock);
	return n;
}

static int echo_start(int family)
{
	memset(&E, 0, sizeof(E));
	pthread_mutex_init(&E.rec_lock, NULL);
	E.family = family;
	E.fd = socket(family, SOCK_DGRAM, 0);
	CHECK(E.fd >= 0);
	int sz = 4 << 20;
	setsockopt(E.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	struct sockaddr_storage a;
	memset(&a, 0, sizeof(a));
	socklen_t al;
	if (family == AF_INET6) {
		struct sockaddr_in6 *a6 = (void *)&a;
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_loopback;
		al = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (void *)&a;
		a4->sin_family = AF_INET;
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		al = sizeof(*a4);
	}
	if (bind(E.fd, (struct sockaddr *)&a, al)) {
		close(E.fd);
		return -1;
	}
	al = sizeof(a);
	CHECK(getsockname(E.fd, (struct sockaddr *)&a, &al) == 0);
	E.port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
					  : ((struct sockaddr_in *)&a)->sin_port);
	CHECK(pthread_create(&E.th, NULL, echo_main, NULL) == 0);
	return 0;
}

static void echo_stop(void)
{
	__atomic_store_n(&E.stop, 1, __ATOMIC_RELEASE);
	pthread_join(E.th, NULL);
	close(E.fd);
}

/* ------------------------------------------------------------ the relay */

struct relay {
	pid_t pid;
	int err_fd;
	char out_path[64];
	uint16_t port;
	char errtext[16384];
	size_t errlen;
	char *out;       /* its stdout, after stop */
	const char *fin; /* the final JSON line in out */
};

static void read_err(struct relay *r, int timeout_ms, const char *until)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	while (r->errlen < sizeof(r->errtext) - 1) {
		if (until && strstr(r->errtext, until) && strchr(strstr(r->errtext, until), '\n'))
			return;
		uint64_t now = now_ns();
		if (now >= end)
			return;
		struct pollfd p = { r->err_fd, POLLIN, 0 };
		if (poll(&p, 1, (int)((end - now) / 1000000ull) + 1) <= 0)
			continue;
		ssize_t n = read(r->err_fd, r->errtext + r->errlen, sizeof(r->errtext) - 1 - r->errlen);
		if (n <= 0)
			return;
		r->errlen += (size_t)n;
		r->errtext[r->errlen] = '\0';
	}
}

/* Start the relay: --listen LOOPBACK:0 --to the echo server --json, then
 * @args (NULL-terminated).  Returns 0 once it is ready (r->port set), or
 * its exit status (it exited: bad config) with its stderr in r->errtext. */
static int relay_spawn(struct relay *r, const char *const *args, int no_defaults)
{
	memset(r, 0, sizeof(*r));
	char to[64], listen[64];
	if (E.family == AF_INET6) {
		snprintf(to, sizeof(to), "[::1]:%u", E.port);
		snprintf(listen, sizeof(listen), "[::1]:0");
	} else {
		snprintf(to, sizeof(to), "127.0.0.1:%u", E.port);
		snprintf(listen, sizeof(listen), "127.0.0.1:0");
	}
	const char *argv[64];
	int n = 0;
	argv[n++] = relay_bin;
	if (!no_defaults) {
		argv[n++] = "--listen";
		argv[n++] = listen;
		argv[n++] = "--to";
		argv[n++] = to;
		argv[n++] = "--json";
	}
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(r->out_path, sizeof(r->out_path), "/tmp/test_relay.XXXXXX");
	int ofd = mkstemp(r->out_path);
	CHECK(ofd >= 0);
	int ep[2];
	CHECK(pipe(ep) == 0);
	r->pid = fork();
	CHECK(r->pid >= 0);
	if (r->pid == 0) {
		dup2(ofd, 1);
		dup2(ep[1], 2);
		close(ep[0]);
		if (spawn_nofile > 0) {
			struct rlimit rl = { (rlim_t)spawn_nofile, (rlim_t)spawn_nofile };
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		execv(relay_bin, (char *const *)argv);
		_exit(127);
	}
	close(ofd);
	close(ep[1]);
	r->err_fd = ep[0];
	read_err(r, 10000, "ready:");
	const char *rd = strstr(r->errtext, "ready: listening on ");
	if (rd) {
		const char *colon = strchr(rd, ',');
		while (colon > rd && colon[-1] != ':')
			colon--;
		r->port = (uint16_t)atoi(colon);
		CHECK(r->port != 0);
		return 0;
	}
	int st;
	CHECK(waitpid(r->pid, &st, 0) == r->pid);
	read_err(r, 1000, NULL);
	close(r->err_fd);
	unlink(r->out_path);
	CHECK(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void relay_start(struct relay *r, const char *const *args)
{
	int rc = relay_spawn(r, args, 0);
	if (rc) {
		fprintf(stderr, "relay did not start (exit %d): %s\n", rc, r->errtext);
		abort();
	}
}

/* SIGTERM, wait, read the final line; check exit 0 and both balances. */
static void relay_stop(struct relay *r)
{
	CHECK(kill(r->pid, SIGTERM) == 0);
	int st;
	CHECK(waitpid(r->pid, &st, 0) == r->pid);
	read_err(r, 200, NULL);
	close(r->err_fd);
	FILE *f = fopen(r->out_path, "r");
	CHECK(f);
	size_t cap = 1 << 16, len = 0;
	r->out = malloc(cap);
	size_t n;
	while ((n = fread(r->out + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len == cap - 1) {
			cap *= 2;
			r->out = realloc(r->out, cap);
			CHECK(r->out);
		}
	}
	r->out[len] = '\0';
	fclose(f);
	unlink(r->out_path);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "relay exit %d\nstderr: %s\nstdout: %s\n", st, r->errtext, r->out);
		abort();
	}
	r->fin = strstr(r->out, "\"final\":true");
	CHECK(r->fin);
	while (r->fin > r->out && r->fin[-1] != '\n')
		r->fin--;
	CHECK(strstr(r->fin, "\"balance\":true"));
	CHECK(!strstr(r->fin, "\"balance\":false"));
}

/* A counter of the final line: @dir "up"/"down" (NULL: top level), @key. */
static long long fin_get(const struct relay *r, const char *dir, const char *key)
{
	const char *s = r->fin, *end = strchr(s, '\n');
	if (!end)
		end = s + strlen(s);
	if (dir) {
		char k[32];
		snprintf(k, sizeof(k), "\"%s\":{\"rx\"", dir);
		s = strstr(s, k);
		CHECK(s);
		const char *dn = strstr(s + 1, "\"down\":{\"rx\"");
		if (dn && dn < end)
			end = dn;
	}
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(s, k);
	if (!p || p >= end)
		return 0; /* absent: a drop reason that did not happen */
	return strtoll(p + strlen(k), NULL, 10);
}

static void relay_free(struct relay *r)
{
	free(r->out);
	r->out = NULL;
}

/* ------------------------------------------------------------ clients */

struct client {
	int fd;
};

static int client_open(struct client *c)
{
	c->fd = socket(E.family, SOCK_DGRAM, 0);
	CHECK(c->fd >= 0);
	int sz = 4 << 20;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return 0;
}

static void client_send(struct client *c, uint16_t port, uint32_t id, uint32_t seq, size_t len)
{
	char buf[2048];
	CHECK(len >= 16 && len <= sizeof(buf));
	memset(buf, 0x5a, len);
	uint64_t t = now_ns();
	memcpy(buf, &t, 8);
	memcpy(buf + 8, &seq, 4);
	memcpy(buf + 12, &id, 4);
	struct sockaddr_storage a;
	memset(&a, 0, sizeof(a));
	socklen_t al;
	if (E.family == AF_INET6) {
		struct sockaddr_in6 *a6 = (void *)&a;
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_loopback;
		a6->sin6_port = htons(port);
		al = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (void *)&a;
		a4->sin_family = AF_INET;
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a4->sin_port = htons(port);
		al = sizeof(*a4);
	}
	CHECK(sendto(c->fd, buf, len, 0, (struct sockaddr *)&a, al) == (ssize_t)len);
}

/* Receive one reply within @timeout_ms: 1 with its RTT (ns), seq and id; 0 on timeout. */
static int client_recv(struct client *c, int timeout_ms, uint64_t *rtt, uint32_t *seq, uint32_t *id)
{
	struct pollfd p = { c->fd, POLLIN, 0 };
	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	char buf[65536];
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 16)
		return 0;
	uint64_t t;
	memcpy(&t, buf, 8);
	if (rtt)
		*rtt = now_ns() - t;
	if (seq)
		memcpy(seq, buf + 8, 4);
	if (id)
		memcpy(id, buf + 12, 4);
	return 1;
}

/* Receive every reply until @quiet_ms pass without one; the count. */
static unsigned client_drain(struct client *c, int quiet_ms)
{
	unsigned n = 0;
	while (client_recv(c, quiet_ms, NULL, NULL, NULL))
		n++;
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------ parts */

static uint64_t jitter_p99_ns, jitter_mean_ns;

/* The OS wake-up jitter: how late a plain 1 ms sleep wakes. */
static void test_wake_jitter(void)
{
	enum { N = 200 };
	uint64_t late[N], sum = 0;
	for (int i = 0; i < N; i++) {
		uint64_t t = now_ns() + 1000000;
		sleep_until(t);
		late[i] = now_ns() - t;
		sum += late[i];
	}
	qsort(late, N, sizeof(late[0]), cmp_u64);
	jitter_mean_ns = sum / N;
	jitter_p99_ns = late[N * 99 / 100];
	printf("  OS wake-up lateness of a 1 ms sleep: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
	       jitter_mean_ns / 1e3, late[N / 2] / 1e3, jitter_p99_ns / 1e3);
}

/* netem delay 20ms up: no reply earlier than 20 ms; the mean within the
 * tolerance (the plain forwarder's RTT plus a few wake-up jitters). */
static void test_delay(void)
{
	enum { N = 200 };
	struct relay r;
	/* the plain forwarder first: the RTT without the delay */
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--up", "pfifo", NULL });
	uint64_t base[N];
	unsigned nb = 0;
	for (int i = 0; i < N; i++) {
		client_send(&c, r.port, 0, (uint32_t)i, 64);
		uint64_t rtt;
		if (client_recv(&c, 1000, &rtt, NULL, NULL))
			base[nb++] = rtt;
	}
	relay_stop(&r);
	CHECK_EQ(nb, N);
	qsort(base, nb, sizeof(base[0]), cmp_u64);
	CHECK_EQ(fin_get(&r, "up", "out"), N);
	relay_free(&r);

	relay_start(&r, (const char *const[]){ "--workers", "2", "--up", "netem delay 20ms", NULL });
	uint64_t rtts[N], sum = 0, rtt;
	unsigned n = 0;
	rprobe_start(r.pid, 2000000);
	uint64_t t = now_ns(), t0 = t;
	for (int i = 0; i < N; i++) {
		client_send(&c, r.port, 0, (uint32_t)i, 64);
		t += 2000000; /* one every 2 ms: 10 in flight */
		/* wait in poll, so each reply is timed when it arrives */
		for (uint64_t now; (now = now_ns()) < t;)
			if (client_recv(&c, (int)((t - now + 999999) / 1000000), &rtt, NULL, NULL))
				rtts[n++] = rtt, sum += rtt;
	}
	while (n < N && client_recv(&c, 1000, &rtt, NULL, NULL))
		rtts[n++] = rtt, sum += rtt;
	/* the relay's stalls beyond 2 ms, summed, within 5% of the run */
	bool quiet = rprobe_quiet((now_ns() - t0) / 20, "delay 20ms");
	relay_stop(&r);
	CHECK_EQ(n, N);
	qsort(rtts, n, sizeof(rtts[0]), cmp_u64);
	double mean = (double)sum / n;
	double base50 = (double)base[nb / 2];
	double tol = 3e6 + base50 + 4.0 * (double)jitter_p99_ns;
	printf("  delay 20ms: RTT min %.3f ms, p50 %.3f, mean %.3f, p99 %.3f (plain forwarder p50 "
	       "%.3f ms; tolerance on the mean +%.3f ms)\n",
	       rtts[0] / 1e6, rtts[n / 2] / 1e6, mean / 1e6, rtts[n * 99 / 100] / 1e6, base50 / 1e6,
	       tol / 1e6);
	CHECK(rtts[0] >= 20000000);            /* never early */
	if (quiet) {
		CHECK_TIMING(mean <= 20e6 + tol);
		CHECK_TIMING(rtts[n / 2] <= 20e6 + tol);
	}
	CHECK_EQ(fin_get(&r, "up", "out"), N);
	CHECK_EQ(fin_get(&r, "up", "dropped"), 0);
	relay_free(&r);
	close(c.fd);
}

/* Send @n datagrams of @len bytes, @per every @gap_us, then count the replies. */
static unsigned send_burst(struct relay *r, struct client *c, unsigned n, size_t len,
			   unsigned gap_us, unsigned per)
{
	unsigned got = 0;
	uint64_t t = now_ns();
	for (unsigned i = 0; i < n; i++) {
		client_send(c, r->port, 0, i, len);
		if ((i + 1) % per)
			continue;
		t += (uint64_t)gap_us * 1000;
		sleep_until(t);
		while (client_recv(c, 0, NULL, NULL, NULL))
			got++;
	}
	return got + client_drain(c, 1000); /* a second's quiet: a relay slowed
					      * 5-20x (TSan, a loaded host) is done */
}

static unsigned send_count(struct relay *r, struct client *c, unsigned n, size_t len,
			   unsigned gap_us)
{
	return send_burst(r, c, n, len, gap_us, 1);
}

/* A loss count within 5 standard deviations of n p. */
static void check_binomial(long long k, unsigned n, double p)
{
	double mu = n * p, sd = sqrt(n * p * (1 - p));
	printf("    %lld of %u (expected %.0f +- %.1f)\n", k, n, mu, sd);
	fflush(stdout);
	CHECK(k >= mu - 5 * sd && k <= mu + 5 * sd);
}

/* netem loss 10% over 3000 datagrams with --seed: binomial bounds, every
 * datagram accounted for, and the same count again with the same seed. */
static void test_loss(void)
{
	enum { N = 3000 };
	long long lost[2];
	for (int run = 0; run < 2; run++) {
		struct relay r;
		struct client c;
		client_open(&c);
		relay_start(&r, (const char *const[]){ "--workers", "1", "--seed", "7", "--up",
						       "netem loss 10%", NULL });
		unsigned got = send_count(&r, &c, N, 100, 100);
		relay_stop(&r);
		lost[run] = fin_get(&r, "up", "netem_loss");
		check_binomial(lost[run], N, 0.10);
		CHECK_EQ(fin_get(&r, "up", "rx"), N);
		CHECK_EQ(fin_get(&r, "up", "out") + lost[run], N);
		CHECK_EQ(fin_get(&r, "up", "dropped"), lost[run]);
		CHECK_EQ(got, fin_get(&r, "up", "out")); /* what left came back */
		relay_free(&r);
		close(c.fd);
	}
	CHECK_EQ(lost[0], lost[1]); /* the seed decides */
}

/* netem delay 10ms reorder 25%: about a quarter are sent at once (tc
 * sets gap 1), so they come back before the ones sent earlier.  Which
 * ones were sent at once is read from the order of arrival, not from the
 * RTT (a stalled client or relay under a sanitizer makes an immediate
 * packet look late, never out of order): a datagram is early when one
 * sent before it has not arrived yet.  The datagrams are 0.5 ms apart
 * against a 10 ms delay, so about 20 are in flight when one goes at once. */
static void test_reorder(void)
{
	enum { N = 1000 };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--seed", "11", "--up",
					       "netem delay 10ms reorder 25%", NULL });
	unsigned got = 0, early = 0, inversions = 0, low = 0;
	static unsigned char seen[N];
	memset(seen, 0, sizeof(seen));
	uint32_t last = 0;
	uint64_t t = now_ns(), rtt;
	uint32_t seq;
#define ARRIVED()                                                              \
	do {                                                                   \
		got++;                                                         \
		inversions += got > 1 && seq < last;                           \
		last = seq;                                                    \
		if (seq < N && !seen[seq]) {                                   \
			seen[seq] = 1;                                         \
			early += seq > low;                                    \
			while (low < N && seen[low])                           \
				low++;                                         \
		}                                                              \
	} while (0)
	for (unsigned i = 0; i < N; i++) {
		client_send(&c, r.port, 0, i, 64);
		t += 500000;
		for (uint64_t now; (now = now_ns()) < t;)
			if (client_recv(&c, (int)((t - now + 999999) / 1000000), &rtt, &seq, NULL))
				ARRIVED();
	}
	while (client_recv(&c, 300, &rtt, &seq, NULL))
		ARRIVED();
#undef ARRIVED
	relay_stop(&r);
	CHECK_EQ(got, N);
	printf("  reorder 25%%: %u of %u sent at once, %u arrived before an earlier one was\n",
	       early, N, inversions);
	fflush(stdout);
	check_binomial(early, N, 0.25);
	CHECK(inversions > 0);
	relay_free(&r);
	close(c.fd);
}

/* netem loss gemodel 5% 50%: losses come in bursts of mean 1/r = 2. */
static void test_gemodel(void)
{
	enum { N = 3000 };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--seed", "5", "--up",
					       "netem loss gemodel 5% 50%", NULL });
	static unsigned char seen[N];
	memset(seen, 0, sizeof(seen));
	uint64_t t = now_ns();
	uint32_t seq;
	for (unsigned i = 0; i < N; i++) {
		client_send(&c, r.port, 0, i, 64);
		t += 100000;
		sleep_until(t);
		while (client_recv(&c, 0, NULL, &seq, NULL))
			if (seq < N)
				seen[seq] = 1;
	}
	while (client_recv(&c, 300, NULL, &seq, NULL))
		if (seq < N)
			seen[seq] = 1;
	relay_stop(&r);
	unsigned lost = 0, bursts = 0;
	for (unsigned i = 0; i < N; i++)
		if (!seen[i]) {
			lost++;
			bursts += i == 0 || seen[i - 1];
		}
	CHECK_EQ(lost, fin_get(&r, "up", "netem_loss"));
	CHECK(bursts > 0);
	double mean = (double)lost / bursts;
	printf("  gemodel 5%% 50%%: %u lost in %u bursts, mean burst %.2f (1/r = 2)\n", lost, bursts,
	       mean);
	/* stationary loss p / (p + r) = 9.1%: ~270 losses in ~135 bursts */
	CHECK(lost > 150 && lost < 420);
	CHECK(mean > 1.5 && mean < 2.7);
	relay_free(&r);
	close(c.fd);
}

/* ---- the same decisions on the simulated clock (library level) ---- */

static unsigned char sim_fate[4096]; /* per packet: copies sent */

static int sim_xmit(struct pw_netdev *d, unsigned q, struct pw_pkt *p, void *c)
{
	(void)d, (void)q, (void)c;
	sim_fate[p->user]++;
	free(p);
	return PW_NETDEV_TX_OK;
}

static void sim_drop(struct pw_netdev *d, struct pw_pkt *p, enum pw_drop_reason r, void *c)
{
	(void)d, (void)r, (void)c;
	free(p);
}

static struct pw_pkt *sim_clone(struct pw_netdev *d, const struct pw_pkt *p, void *c)
{
	(void)d, (void)c;
	struct pw_pkt *n = malloc(sizeof(*n));
	if (n) {
		pw_pkt_init(n, NULL, p->len);
		n->user = p->user;
	}
	return n;
}

/* @n datagrams of @len payload bytes through "qdisc add dev up root
 * @spec" on a simulated-clock runtime, 1 ms apart: how many copies of each
 * left (sim_fate). */
static void sim_run(const char *spec, unsigned n, unsigned len)
{
	static const struct pw_netdev_ops ops = { .xmit = sim_xmit, .drop = sim_drop,
						  .clone = sim_clone };
	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = 1;
	pc.clock = PW_CLOCK_SIM;
	struct pw_runtime *rt;
	CHECK_EQ(pw_runtime_create(&pc, &rt), 0);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "up", 1, &ops, NULL, &dev), 0);
	char cmd[256], err[512];
	snprintf(cmd, sizeof(cmd), "qdisc add dev up root %s", spec);
	CHECK_EQ(pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err)), 0);
	memset(sim_fate, 0, sizeof(sim_fate));
	for (unsigned i = 0; i < n; i++) {
		struct pw_pkt *p = malloc(sizeof(*p));
		CHECK(p);
		pw_pkt_init(p, NULL, len + 28);
		p->user = i;
		CHECK_EQ(pw_cpu_enter(rt, 0), 0);
		pw_dev_queue_xmit(dev, p);
		pw_cpu_exit(rt);
		CHECK_EQ(pw_sim_advance(rt, 1000000), 0);
	}
	CHECK_EQ(pw_sim_advance(rt, 10000000000ull), 0);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

/* netem loss 10% duplicate 5% with --seed 7, live: which datagrams the
 * server got, and how many times each, are exactly what the same netem
 * with seed 7 decides on the simulated clock for the same sequence (the
 * relay gives the up root's netem the seed itself: --seed S + 0). */
static void test_same_decisions(void)
{
	enum { N = 2000 };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--seed", "7", "--up",
					       "netem loss 10% duplicate 5%", NULL });
	rec_count(1);
	static unsigned char live[N];
	memset(live, 0, sizeof(live));
	unsigned got = send_count(&r, &c, N, 64, 150);
	relay_stop(&r);
	unsigned nrec = rec_count(0);
	/* the server saw each datagram's sequence number: count copies */
	CHECK_EQ(nrec, fin_get(&r, "up", "out"));
	CHECK_EQ(got, nrec); /* and echoed each one back */
	relay_free(&r);
	close(c.fd);
	for (unsigned k = 0; k < nrec; k++)
		CHECK(E.rec_len[k] == 64);
	for (unsigned k = 0; k < nrec; k++) {
		CHECK(E.rec_seq[k] < N);
		live[E.rec_seq[k]]++;
	}
	sim_run("netem loss 10% duplicate 5% seed 7", N, 64);
	unsigned lost = 0, dup = 0, differ = 0;
	for (unsigned i = 0; i < N; i++) {
		lost += live[i] == 0;
		dup += live[i] == 2;
		if (live[i] != sim_fate[i] && differ++ < 5)
			fprintf(stderr, "  datagram %u: live %u copies, simulated %u\n", i, live[i],
				sim_fate[i]);
	}
	printf("  live vs simulated, seed 7: %u lost, %u duplicated live; %u of %d differ\n", lost,
	       dup, differ, N);
	CHECK(lost > 0 && dup > 0);
	CHECK_EQ(differ, 0);
}

/* Datagram sizes around the inline bytes (512) and the size classes, up
 * to UDP's largest, zero-length too, through netem duplicate 100% (the
 * clone of a large one too): each comes back twice, byte for byte. */
static void test_sizes(void)
{
	static const size_t sizes[] = { 0, 1, 16, 511, 512, 513, 2047, 2048, 2049, 4096, 30000,
					65507 };
	enum { NS = sizeof(sizes) / sizeof(sizes[0]) };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--up", "netem duplicate 100%",
					       NULL });
	static unsigned char out[65536], in[65536];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(r.port) };
	size_t total = 0;
	for (unsigned k = 0; k < NS; k++) {
		for (size_t i = 0; i < sizes[k]; i++)
			out[i] = (unsigned char)(i * 7 + k);
		CHECK(sendto(c.fd, out, sizes[k], 0, (struct sockaddr *)&to, sizeof(to)) ==
		      (ssize_t)sizes[k]);
		for (int copy = 0; copy < 2; copy++) {
			struct pollfd pf = { c.fd, POLLIN, 0 };
			CHECK(poll(&pf, 1, 2000) == 1);
			ssize_t n = recv(c.fd, in, sizeof(in), 0);
			CHECK_EQ(n, (ssize_t)sizes[k]);
			CHECK(!memcmp(in, out, sizes[k]));
		}
		total += sizes[k];
	}
	relay_stop(&r);
	CHECK_EQ(fin_get(&r, "up", "rx"), NS);
	CHECK_EQ(fin_get(&r, "up", "clones"), NS);
	CHECK_EQ(fin_get(&r, "up", "out"), 2 * NS);
	CHECK_EQ(fin_get(&r, "up", "out_bytes"), (long long)(2 * total));
	/* every charge given back: nobody holds bytes at the end */
	CHECK_EQ(fin_get(&r, NULL, "active_clients"), 0);
	relay_free(&r);
	close(c.fd);
}

/* netem duplicate 20%: clones counted, each one delivered. */
static void test_duplicate(void)
{
	enum { N = 2000 };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--seed", "3", "--up",
					       "netem duplicate 20%", NULL });
	unsigned got = send_count(&r, &c, N, 100, 100);
	relay_stop(&r);
	long long clones = fin_get(&r, "up", "clones");
	check_binomial(clones, N, 0.20);
	CHECK_EQ(fin_get(&r, "up", "rx"), N);
	CHECK_EQ(fin_get(&r, "up", "out"), N + clones);
	CHECK_EQ(got, N + clones);
	CHECK_EQ(fin_get(&r, "down", "rx"), N + clones);
	relay_free(&r);
	close(c.fd);
}

/* tbf at @mbit Mbit/s, offered 1.2 x that (@per datagrams of 1000 bytes
 * every @gap_us) for about a second: no drop, the qdisc's byte count
 * exactly out x (payload + 28), the rate at the server within 3%. */
static void run_tbf(const char *spec, double mbit, unsigned n, unsigned gap_us, unsigned per)
{
	enum { LEN = 1000 };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--up", spec, NULL });
	rec_count(1);
	/* both shapers' bursts hold 8 ms at their rate */
	rprobe_start(r.pid, 8000000);
	uint64_t t0 = now_ns();
	unsigned got = send_burst(&r, &c, n, LEN, gap_us, per);
	/* a stall beyond the burst costs the rate what it lasts: half the
	 * 3% tolerance may go to them */
	bool quiet = rprobe_quiet((uint64_t)((now_ns() - t0) * 0.015), spec);
	relay_stop(&r);
	long long out = fin_get(&r, "up", "out");
	CHECK_EQ(fin_get(&r, "up", "rx"), n);
	CHECK_EQ(fin_get(&r, "up", "dropped"), 0); /* the queue stays under latency 500ms */
	CHECK_EQ(out, n);
	CHECK_EQ(got, n);
	CHECK_EQ(fin_get(&r, "up", "out_bytes"), (long long)n * LEN);
	/* the qdisc's own count: tc -s -j "bytes" of the root */
	const char *q = strstr(r.fin, "\"kind\":\"tbf\"");
	CHECK(q);
	const char *b = strstr(q, "\"bytes\":");
	CHECK(b);
	CHECK_EQ(strtoll(b + 8, NULL, 10), (long long)n * (LEN + 28));
	/* the rate past the first burst and the first 5%, at the server */
	unsigned nrec = rec_count(0);
	CHECK(nrec >= n);
	/* the slope of bits received against arrival time (least squares:
	 * a few ms of the echo thread's scheduling delay at either end of the
	 * window, on a loaded VM, do not move it as they move a first/last
	 * difference) */
	unsigned first = n / 20 + 20, last = nrec - 1;
	double secs = (double)(E.rec_t[last] - E.rec_t[first]) / 1e9;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, m = last - first + 1;
	for (unsigned i = first; i <= last; i++) {
		double x = (double)(E.rec_t[i] - E.rec_t[first]) / 1e9;
		double y = (double)(i - first) * (LEN + 28) * 8;
		sx += x, sy += y, sxx += x * x, sxy += x * y;
	}
	double rate = (m * sxy - sx * sy) / (m * sxx - sx * sx);
	printf("  %s: %.3f Mbit/s over %.3f s at the server (%u packets)\n", spec, rate / 1e6, secs,
	       last - first);
	if (quiet)
		CHECK_TIMING(fabs(rate - mbit * 1e6) <= 0.03 * mbit * 1e6);
	relay_free(&r);
	close(c.fd);
}

static void test_tbf_rate(void)
{
	/* 1028 bytes on the wire every 685 us: 12 Mbit/s */
	run_tbf("tbf rate 10mbit burst 10kb latency 500ms", 10, 1400, 685, 1);
	/* 10 of them every 685 us: 120 Mbit/s */
	run_tbf("tbf rate 100mbit burst 100kb latency 500ms", 100, 14000, 685, 10);
}

/* 64 clients on 2 workers: each reply comes back to its own socket, both
 * workers take clients, a mapping per client. */
static void test_many_clients(void)
{
	enum { NC = 64, PER = 20 };
	struct relay r;
	struct client c[NC];
	for (int i = 0; i < NC; i++)
		client_open(&c[i]);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--up", "netem delay 5ms",
					       "--per-queue", "--down", "netem delay 5ms", NULL });
	for (int k = 0; k < PER; k++)
		for (int i = 0; i < NC; i++)
			client_send(&c[i], r.port, (uint32_t)i, (uint32_t)k, 64);
	unsigned got = 0;
	for (int i = 0; i < NC; i++) {
		uint32_t id, seq;
		while (client_recv(&c[i], 500, NULL, &seq, &id)) {
			CHECK_EQ(id, i);
			got++;
			if (got % PER == 0)
				break;
		}
	}
	relay_stop(&r);
	CHECK_EQ(got, NC * PER);
	CHECK_EQ(fin_get(&r, NULL, "clients_new"), NC);
	CHECK_EQ(fin_get(&r, "up", "out"), NC * PER);
	CHECK_EQ(fin_get(&r, "down", "out"), NC * PER);
	const char *w = strstr(r.fin, "\"worker_rx\":[");
	CHECK(w);
	long long w0 = strtoll(w + 13, NULL, 10);
	long long w1 = strtoll(strchr(w, ',') + 1, NULL, 10);
	printf("  %d clients: worker 0 took %lld datagrams, worker 1 %lld\n", NC, w0, w1);
	CHECK(w0 > 0 && w1 > 0);
	CHECK_EQ(w0 + w1, 2 * NC * PER);
	/* --per-queue: an mq root with a netem per TX queue, each one used */
	const char *up = strstr(r.fin, "\"up\":{");
	const char *down = strstr(r.fin, "\"down\":{");
	CHECK(up && down);
	const char *mq = strstr(up, "\"kind\":\"mq\"");
	CHECK(mq && mq < down);
	unsigned nnetem = 0;
	for (const char *q = strstr(up, "\"kind\":\"netem\""); q && q < down;
	     q = strstr(q + 1, "\"kind\":\"netem\"")) {
		const char *pk = strstr(q, "\"packets\":");
		CHECK(pk && strtoll(pk + 10, NULL, 10) > 0);
		nnetem++;
	}
	CHECK_EQ(nnetem, 2);
	relay_free(&r);
	for (int i = 0; i < NC; i++)
		close(c[i].fd);
}

/* --steer-cpu: each datagram to the worker of the CPU it came in on.  The
 * same clients send from two threads, one on each of two CPUs, so every
 * client's datagrams come in on both CPUs and reach both workers (on
 * loopback the receiving CPU is the sender's). */
struct steer_sender {
	struct client *c;
	unsigned nc, per, cpu, round;
	uint16_t port;
	int pinned;
};

static void *steer_send(void *arg)
{
	struct steer_sender *a = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	a->pinned = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
	for (unsigned k = 0; k < a->per; k++)
		for (unsigned i = 0; i < a->nc; i++)
			client_send(&a->c[i], a->port, i, a->round * 1000000u + a->cpu * 10000u + k,
				    64);
	return NULL;
}

/* Send @per datagrams of each of @nc clients from each of CPUs 0 and 1
 * (round @round in the sequence numbers); receive them all: each reply
 * to its own socket, none earlier than @min_rtt_ns after it was sent.
 * The count received. */
static unsigned steer_round_n(struct relay *r, struct client *c, unsigned nc, unsigned per,
			      unsigned round, uint64_t min_rtt_ns, int *pinned, unsigned nt)
{
	struct steer_sender a[2];
	pthread_t th[2];
	for (unsigned t = 0; t < nt; t++) {
		a[t] = (struct steer_sender){ c, nc, per, t, round, r->port, 0 };
		CHECK(pthread_create(&th[t], NULL, steer_send, &a[t]) == 0);
	}
	*pinned = 1;
	for (unsigned t = 0; t < nt; t++) {
		pthread_join(th[t], NULL);
		*pinned &= a[t].pinned;
	}
	unsigned got = 0;
	for (unsigned i = 0; i < nc; i++) {
		uint32_t id, seq;
		uint64_t rtt;
		for (unsigned n = 0; n < nt * per && client_recv(&c[i], 1000, &rtt, &seq, &id); n++) {
			CHECK_EQ(id, i);
			CHECK_EQ(seq / 1000000u, round);
			CHECK(rtt >= min_rtt_ns); /* never early */
			got++;
		}
	}
	return got;
}

/* steer_round_n() with a sender on each of CPUs 0 and 1 */
static unsigned steer_round(struct relay *r, struct client *c, unsigned nc, unsigned per,
			    unsigned round, uint64_t min_rtt_ns, int *pinned)
{
	return steer_round_n(r, c, nc, per, round, min_rtt_ns, pinned, 2);
}

static void test_steer_cpu(void)
{
	enum { NC = 16, PER = 50 };
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("  skipped: --steer-cpu needs 2 online CPUs for 2 workers\n");
		return;
	}
	struct relay r;
	struct client c[NC];
	for (int i = 0; i < NC; i++)
		client_open(&c[i]);
	/* one root for both TX queues up (a worker may send the other's
	 * packets), a netem per queue down */
	relay_start(&r, (const char *const[]){ "--workers", "2", "--steer-cpu", "--up",
					       "netem delay 5ms limit 10000", "--down",
					       "pfifo limit 10000", NULL });
	int pinned;
	unsigned got = steer_round(&r, c, NC, PER, 0, 5000000, &pinned);
	relay_stop(&r);
	CHECK_EQ(got, 2 * NC * PER);
	CHECK_EQ(fin_get(&r, NULL, "clients_new"), NC); /* one mapping each */
	CHECK_EQ(fin_get(&r, "up", "rx"), 2 * NC * PER);
	CHECK_EQ(fin_get(&r, "up", "out"), 2 * NC * PER);
	CHECK_EQ(fin_get(&r, "down", "rx"), 2 * NC * PER);
	CHECK_EQ(fin_get(&r, "down", "out"), 2 * NC * PER);
	const char *w = strstr(r.fin, "\"worker_rx\":[");
	CHECK(w);
	long long w0 = strtoll(w + 13, NULL, 10);
	long long w1 = strtoll(strchr(w, ',') + 1, NULL, 10);
	printf("  --steer-cpu, %d clients sending from CPUs 0 and 1: worker 0 took %lld "
	       "datagrams, worker 1 %lld, %lld mappings\n",
	       NC, w0, w1, fin_get(&r, NULL, "clients_new"));
	CHECK_EQ(w0 + w1, 4 * NC * PER);
	if (pinned)
		CHECK(w0 > 0 && w1 > 0); /* each CPU's datagrams to its worker */
	relay_free(&r);

	/* every client sending from CPU 0 only: worker 0 takes every
	 * datagram, its clients' replies come to its own upstream sockets,
	 * and worker 1 receives nothing (the address hash would give it
	 * about half) */
	relay_start(&r, (const char *const[]){ "--workers", "2", "--steer-cpu", NULL });
	got = steer_round_n(&r, c, NC, PER, 3, 0, &pinned, 1);
	relay_stop(&r);
	CHECK_EQ(got, NC * PER);
	CHECK_EQ(fin_get(&r, NULL, "clients_new"), NC);
	w = strstr(r.fin, "\"worker_rx\":[");
	CHECK(w);
	w0 = strtoll(w + 13, NULL, 10);
	w1 = strtoll(strchr(w, ',') + 1, NULL, 10);
	printf("  --steer-cpu, every client on CPU 0: worker 0 took %lld datagrams, "
	       "worker 1 %lld%s\n", w0, w1, pinned ? "" : " (the pin failed: not judged)");
	CHECK_EQ(w0 + w1, 2 * NC * PER);
	if (pinned)
		CHECK_EQ(w1, 0);
	relay_free(&r);

	/* --idle 0.3: the owner's timer forgets a client other workers
	 * found; the next datagrams, from both CPUs, make one new mapping */
	enum { NI = 4, PI = 5 };
	relay_start(&r, (const char *const[]){ "--workers", "2", "--steer-cpu", "--idle", "0.3",
					       NULL });
	got = steer_round(&r, c, NI, PI, 1, 0, &pinned);
	sleep_ms(1000);
	got += steer_round(&r, c, NI, PI, 2, 0, &pinned);
	relay_stop(&r);
	CHECK_EQ(got, 2 * 2 * NI * PI);
	CHECK_EQ(fin_get(&r, "up", "out"), 2 * 2 * NI * PI);
	CHECK(fin_get(&r, NULL, "clients_expired") >= NI);
	CHECK(fin_get(&r, NULL, "clients_new") >= 2 * NI); /* more only if a loaded
							      * machine paused a round */
	printf("  --steer-cpu --idle 0.3: %lld mappings made, %lld expired\n",
	       fin_get(&r, NULL, "clients_new"), fin_get(&r, NULL, "clients_expired"));
	relay_free(&r);
	for (int i = 0; i < NC; i++)
		close(c[i].fd);
}

/* --max-clients 4: the others' datagrams are dropped and counted. */
static void test_max_clients(void)
{
	enum { NC = 8 };
	struct relay r;
	struct client c[NC];
	relay_start(&r, (const char *const[]){ "--workers", "1", "--max-clients", "4", "--stats",
					       "0.1", NULL });
	unsigned got = 0;
	for (int i = 0; i < NC; i++) {
		client_open(&c[i]);
		client_send(&c[i], r.port, (uint32_t)i, 0, 64);
		got += client_recv(&c[i], i < 4 ? 1000 : 100, NULL, NULL, NULL);
	}
	sleep_ms(400); /* the last datagram read (and dropped) before the stop */
	relay_stop(&r);
	CHECK_EQ(got, 4);
	CHECK_EQ(fin_get(&r, "up", "rx"), NC);
	CHECK_EQ(fin_get(&r, "up", "max_clients"), NC - 4);
	CHECK_EQ(fin_get(&r, NULL, "clients_new"), 4);
	CHECK(strstr(r.out, "\"final\":false")); /* --stats 0.1: reports while running */
	relay_free(&r);
	for (int i = 0; i < NC; i++)
		close(c[i].fd);
}

/* --idle 0.2: a quiet client's mapping expires; its next datagram makes a
 * new one. */
static void test_idle(void)
{
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--idle", "0.2", NULL });
	client_send(&c, r.port, 0, 0, 64);
	CHECK(client_recv(&c, 1000, NULL, NULL, NULL));
	sleep_ms(700);
	client_send(&c, r.port, 0, 1, 64);
	CHECK(client_recv(&c, 1000, NULL, NULL, NULL));
	relay_stop(&r);
	CHECK_EQ(fin_get(&r, NULL, "clients_new"), 2);
	CHECK(fin_get(&r, NULL, "clients_expired") >= 1);
	relay_free(&r);
	close(c.fd);
}

/* A client whose datagrams come from IPv4 address @ip (host order): its
 * socket bound there (any loopback address, 127.0.0.0/8, is local). */
static void client_open_from(struct client *c, uint32_t ip)
{
	client_open(c);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(ip) };
	CHECK(bind(c->fd, (struct sockaddr *)&a, sizeof(a)) == 0);
}

/* The replies to @n clients, counted in @got[i]: read until @want came
 * back (or @timeout_ms passed), then until 300 ms pass without one (so
 * that one too many is seen, and the relay has read every datagram sent
 * before).  Return: the replies read.  Main. */
static unsigned replies(struct client *c, int n, int *got, unsigned want, int timeout_ms)
{
	struct pollfd p[64];
	CHECK(n <= 64);
	unsigned total = 0;
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	for (;;) {
		uint64_t now = now_ns();
		if (total < want && now >= end)
			break;
		int wait_ms = total < want ? (int)((end - now) / 1000000ull) + 1 : 300;
		for (int i = 0; i < n; i++)
			p[i] = (struct pollfd){ c[i].fd, POLLIN, 0 };
		int k = poll(p, (nfds_t)n, wait_ms);
		if (k <= 0) {
			if (total >= want)
				break;
			continue;
		}
		for (int i = 0; i < n; i++)
			if (p[i].revents & POLLIN)
				while (client_recv(&c[i], 0, NULL, NULL, NULL)) {
					got[i]++;
					total++;
				}
	}
	return total;
}

/* Whether the relay's latest --stats report (its stdout so far) says
 * @n clients, within @timeout_ms.  Main. */
static int wait_clients(const struct relay *r, long long n, int timeout_ms)
{
	static char text[1 << 20];
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	do {
		FILE *f = fopen(r->out_path, "r");
		CHECK(f);
		size_t len = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[len] = '\0';
		const char *last = NULL;
		for (const char *q = text; (q = strstr(q, "\"clients\":")); q++)
			last = q;
		if (last && strtoll(last + strlen("\"clients\":"), NULL, 10) == n)
			return 1;
		sleep_ms(50);
	} while (now_ns() < end);
	return 0;
}

static void bad(const char *const *args, const char *want);

/* Stop @r with SIGTERM (a clean exit) and return its stdout: the text
 * report (no --json).  The text is static: one at a time. */
static const char *relay_stop_text(struct relay *r)
{
	CHECK(kill(r->pid, SIGTERM) == 0);
	int st;
	CHECK(waitpid(r->pid, &st, 0) == r->pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(r->err_fd);
	FILE *f = fopen(r->out_path, "r");
	CHECK(f);
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	unlink(r->out_path);
	return text;
}

/* --max-clients-per-addr (issue 34): one address's clients are held to
 * the cap while another address's are not, the refused counted under
 * their own reason, and the count is exact as the mappings idle out (the
 * cap admits again); 0 turns it off; the text report names the reason;
 * bad values are refused naming the token.  Two workers: the clients of
 * one address land on both, counted in one table. */
static void test_max_clients_per_addr(void)
{
	enum { NC = 20, CAP = 8, NO = 3 };
	struct relay r;
	struct client c[NC], o[NO];
	int got[NC] = { 0 }, got2[NC] = { 0 }, ogot[NO] = { 0 };
	relay_start(&r, (const char *const[]){ "--workers", "2", "--max-clients", "50",
					       "--max-clients-per-addr", "8", "--idle", "1",
					       "--stats", "0.05", NULL });
	for (int i = 0; i < NC; i++) {
		client_open(&c[i]); /* from 127.0.0.1, each its own port */
		client_send(&c[i], r.port, (uint32_t)i, 0, 64);
	}
	unsigned n1 = replies(c, NC, got, CAP, 5000);
	/* 127.0.0.2 is another address: its clients are admitted */
	for (int j = 0; j < NO; j++) {
		client_open_from(&o[j], 0x7f000002);
		client_send(&o[j], r.port, (uint32_t)(100 + j), 0, 64);
	}
	unsigned n2 = replies(o, NO, ogot, NO, 5000);
	/* every mapping idles out: the address's count is back to 0, and
	 * the clients refused before are admitted, up to the cap again */
	int expired = wait_clients(&r, 0, 15000);
	for (int i = 0; i < NC; i++)
		if (!got[i])
			client_send(&c[i], r.port, (uint32_t)i, 1, 64);
	unsigned n3 = replies(c, NC, got2, CAP, 5000);
	relay_stop(&r);
	printf("  --max-clients-per-addr 8: %u of %d clients of 127.0.0.1 answered, %u of %d "
	       "of 127.0.0.2; after --idle %u of the %d refused; max_clients_per_addr %lld\n",
	       n1, NC, n2, NO, n3, NC - CAP, fin_get(&r, "up", "max_clients_per_addr"));
	CHECK_EQ(n1, CAP);
	CHECK_EQ(n2, NO);
	CHECK(expired);
	CHECK_EQ(n3, CAP);
	for (int i = 0; i < NC; i++)
		CHECK(got[i] <= 1 && !(got[i] && got2[i])); /* the refused ones answered after */
	CHECK_EQ(fin_get(&r, "up", "rx"), NC + NO + (NC - CAP));
	CHECK_EQ(fin_get(&r, "up", "max_clients_per_addr"), (NC - CAP) + (NC - CAP - CAP));
	CHECK_EQ(fin_get(&r, "up", "max_clients"), 0);
	CHECK_EQ(fin_get(&r, NULL, "clients_new"), CAP + NO + CAP);
	CHECK(fin_get(&r, NULL, "clients_expired") >= CAP + NO);
	CHECK(strstr(r.errtext, "--max-clients-per-addr")); /* said once on stderr */
	relay_free(&r);
	for (int i = 0; i < NC; i++)
		close(c[i].fd);
	for (int j = 0; j < NO; j++)
		close(o[j].fd);

	/* 0: no per-address cap, --max-clients alone refuses */
	enum { N0 = 12, MAX0 = 10 };
	struct client z[N0];
	int zgot[N0] = { 0 };
	relay_start(&r, (const char *const[]){ "--workers", "1", "--max-clients", "10",
					       "--max-clients-per-addr", "0", NULL });
	for (int i = 0; i < N0; i++) {
		client_open(&z[i]);
		client_send(&z[i], r.port, (uint32_t)i, 0, 64);
	}
	unsigned n0 = replies(z, N0, zgot, MAX0, 5000);
	relay_stop(&r);
	CHECK_EQ(n0, MAX0);
	CHECK_EQ(fin_get(&r, "up", "max_clients"), N0 - MAX0);
	CHECK_EQ(fin_get(&r, "up", "max_clients_per_addr"), 0);
	relay_free(&r);
	for (int i = 0; i < N0; i++)
		close(z[i].fd);

	/* the text report names the reason */
	char to[64];
	snprintf(to, sizeof(to), "127.0.0.1:%u", E.port);
	CHECK_EQ(relay_spawn(&r, (const char *const[]){ "--listen", "127.0.0.1:0", "--to", to,
							 "--workers", "1",
							 "--max-clients-per-addr", "4", NULL }, 1), 0);
	enum { NT = 6 };
	struct client t[NT];
	int tgot[NT] = { 0 };
	for (int i = 0; i < NT; i++) {
		client_open(&t[i]);
		client_send(&t[i], r.port, (uint32_t)i, 0, 64);
	}
	unsigned nt = replies(t, NT, tgot, 4, 5000);
	const char *text = relay_stop_text(&r);
	CHECK_EQ(nt, 4);
	CHECK(strstr(text, "(max_clients_per_addr 2)"));
	for (int i = 0; i < NT; i++)
		close(t[i].fd);

	/* bad values: exit 2, the message names the option and the value */
	static const char *const vals[] = { "x", "-1", "4194305", "1.5", "8k", "" };
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		char want[80];
		snprintf(want, sizeof(want), "--max-clients-per-addr: bad value \"%s\"", vals[i]);
		bad((const char *const[]){ "--max-clients-per-addr", vals[i], NULL }, want);
	}
	bad((const char *const[]){ "--max-clients-per-addr", NULL },
	    "--max-clients-per-addr needs a value");
}

/* Stop with packets queued: a delay beyond the drain drops them
 * (dev_destroy) and the balance holds; one within it sends them. */
static void test_stop_queued(void)
{
	enum { N = 100 };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--drain", "200", "--up",
					       "netem delay 5s", NULL });
	for (int i = 0; i < N; i++)
		client_send(&c, r.port, 0, (uint32_t)i, 64);
	sleep_ms(500); /* all read (rx is what the relay read before the stop) */
	uint64_t t = now_ns();
	relay_stop(&r);
	double stop_ms = (double)(now_ns() - t) / 1e6;
	printf("  stop with %d queued for 5 s, --drain 200: exited in %.0f ms\n", N, stop_ms);
	CHECK_TIMING(stop_ms < 3000);
	CHECK_EQ(fin_get(&r, "up", "rx"), N);
	CHECK_EQ(fin_get(&r, "up", "out"), 0);
	CHECK_EQ(fin_get(&r, "up", "dev_destroy"), N);
	relay_free(&r);

	relay_start(&r, (const char *const[]){ "--workers", "2", "--drain", "3000", "--up",
					       "netem delay 1500ms", NULL });
	for (int i = 0; i < N; i++)
		client_send(&c, r.port, 0, (uint32_t)i, 64);
	sleep_ms(500); /* all read, none yet due */
	relay_stop(&r);
	CHECK_EQ(fin_get(&r, "up", "rx"), N);
	CHECK_EQ(fin_get(&r, "up", "out"), N);
	CHECK_EQ(fin_get(&r, "up", "dropped"), 0);
	relay_free(&r);
	close(c.fd);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f);
	fputs(text, f);
	fclose(f);
}

/* SIGHUP with packets queued: the batch file, changed, applies as a
 * change; what was queued is kept and sent; new packets see the new delay. */
static void test_reload(void)
{
	enum { N = 20 };
	char path[] = "/tmp/test_relay_batch.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	write_file(path, "# the up link\nqdisc add dev up root handle 1: netem delay 600ms\n");
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--up-batch", path, NULL });
	for (int i = 0; i < N; i++)
		client_send(&c, r.port, 0, (uint32_t)i, 64);
	sleep_ms(50);
	write_file(path, "qdisc add dev up root handle 1: netem delay 10ms\n");
	CHECK(kill(r.pid, SIGHUP) == 0);
	read_err(&r, 3000, "SIGHUP: batch files");
	CHECK(strstr(r.errtext, "SIGHUP: batch files applied"));
	uint64_t rtt;
	uint32_t seq;
	unsigned fast = 0, old = 0, total = 0;
	for (int i = 0; i < N; i++) {
		client_send(&c, r.port, 0, (uint32_t)(N + i), 64);
		/* an old one may already be back here (a slow SIGHUP on a
		 * loaded machine takes most of its 600 ms): counted too */
		while (client_recv(&c, 0, &rtt, &seq, NULL)) {
			total++;
			if (seq < N)
				old++;
			else
				fast += rtt < 300000000;
		}
		sleep_ms(2);
	}
	while (client_recv(&c, 1500, &rtt, &seq, NULL)) {
		total++;
		if (seq < N)
			old++;
		else
			fast += rtt < 300000000;
	}
	relay_stop(&r);
	printf("  SIGHUP: %u of %d queued before kept and sent, %u of %d after at the new delay\n",
	       old, N, fast, N);
	CHECK_EQ(old, N);
	CHECK_TIMING(fast >= N / 2); /* loose: a reply can wait behind the old ones' wake-ups */
	CHECK_EQ(fin_get(&r, "up", "out"), 2 * N);
	CHECK_EQ(fin_get(&r, "up", "dropped"), 0);
	CHECK(strstr(r.fin, "\"delay\":0.01") || strstr(r.fin, "\"delay\":1e-02"));
	relay_free(&r);
	close(c.fd);
	unlink(path);
}

/* --up-schedule: a bad line stops the start, naming FILE:LINE; a good
 * schedule changes the delay at its time (packets after the step see the
 * new delay), and the final statistics say which step is in force;
 * --accuracy adds each qdisc's achieved figures to the JSON. */
static void test_schedule(void)
{
	char path[] = "/tmp/test_relay_sched.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	struct relay r;
	write_file(path, "0.1s qdisc change dev up root netem delay 5ms\n"
			 "0.05s qdisc change dev up root netem delay 6ms\n");
	int rc = relay_spawn(&r, (const char *const[]){ "--up", "netem delay 400ms",
						       "--up-schedule", path, NULL }, 0);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, ":2:"));        /* the line that goes back in time */
	CHECK(strstr(r.errtext, "0.05s"));
	relay_free(&r);

	write_file(path, "# faster after 150 ms\n150ms qdisc change dev up root netem delay 5ms\n");
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--up", "netem delay 400ms",
					       "--up-schedule", path, "--accuracy", NULL });
	client_send(&c, r.port, 0, 0, 64); /* before the step: 400 ms */
	sleep_ms(300);
	enum { N = 10 };
	uint64_t rtt;
	uint32_t seq;
	unsigned fast = 0, total = 0;
	for (int i = 1; i <= N; i++) {
		client_send(&c, r.port, 0, (uint32_t)i, 64);
		sleep_ms(2);
	}
	while (client_recv(&c, 1500, &rtt, &seq, NULL)) {
		total++;
		fast += seq >= 1 && rtt < 200000000;
	}
	relay_stop(&r);
	printf("  schedule: %u of %d sent after the step came back under 200 ms\n", fast, N);
	CHECK_EQ(total, N + 1);
	CHECK_TIMING(fast == N);
	CHECK(strstr(r.fin, "\"schedule\":{\"step\":0,\"line\":2,"));
	CHECK(strstr(r.fin, "\"applied\":1,\"failed\":0}"));
	CHECK(strstr(r.fin, "\"accuracy\":"));
	relay_free(&r);
	close(c.fd);
	unlink(path);
}

/* --map: two clients, an htb class each with its own netem leaf; the
 * mapped client gets its class's delay, the other the default class's. */
static void test_map(void)
{
	enum { N = 20 };
	char path[] = "/tmp/test_relay_map.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	write_file(path, "qdisc add dev up root handle 1: htb default 20\n"
			 "class add dev up parent 1: classid 1:10 htb rate 100mbit\n"
			 "class add dev up parent 1: classid 1:20 htb rate 100mbit\n"
			 "qdisc add dev up parent 1:10 handle 10: netem delay 5ms\n"
			 "qdisc add dev up parent 1:20 handle 20: netem delay 40ms\n");
	struct client a, b;
	client_open(&a);
	client_open(&b);
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK(bind(a.fd, (struct sockaddr *)&la, sizeof(la)) == 0);
	socklen_t ll = sizeof(la);
	CHECK(getsockname(a.fd, (struct sockaddr *)&la, &ll) == 0);
	char map[64];
	snprintf(map, sizeof(map), "127.0.0.1:%u=1:10", ntohs(la.sin_port));
	struct relay r;
	relay_start(&r, (const char *const[]){ "--workers", "2", "--up-batch", path, "--map", map,
					       NULL });
	uint64_t rtt, amax = 0, bmin = UINT64_MAX;
	unsigned na = 0, nb = 0;
	for (int i = 0; i < N; i++) {
		client_send(&a, r.port, 0, (uint32_t)i, 64);
		client_send(&b, r.port, 1, (uint32_t)i, 64);
		/* a's replies as they come (each timed when it arrives) */
		uint64_t t = now_ns() + 2000000;
		for (uint64_t now; (now = now_ns()) < t;)
			if (client_recv(&a, (int)((t - now + 999999) / 1000000), &rtt, NULL, NULL))
				na++, amax = rtt > amax ? rtt : amax;
	}
	while (na < N && client_recv(&a, 1000, &rtt, NULL, NULL))
		na++, amax = rtt > amax ? rtt : amax;
	while (nb < N && client_recv(&b, 1000, &rtt, NULL, NULL))
		nb++, bmin = rtt < bmin ? rtt : bmin;
	relay_stop(&r);
	printf("  --map %s: its longest RTT %.1f ms (class 1:10, 5 ms); the other's shortest "
	       "%.1f ms (default 1:20, 40 ms)\n", map, amax / 1e6, bmin / 1e6);
	CHECK_EQ(na, N);
	CHECK_EQ(nb, N);
	CHECK(amax < 40000000); /* none through the 40 ms class */
	CHECK(bmin >= 40000000);
	relay_free(&r);
	close(a.fd);
	close(b.fd);
	unlink(path);
}

/* SIGHUP under load: a stream of 3000 datagrams with three reloads
 * meanwhile (the delay 5 ms <-> 15 ms): nothing dropped, everything back. */
static void test_reload_under_load(void)
{
	enum { N = 3000 };
	char path[] = "/tmp/test_relay_hup.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	write_file(path, "qdisc add dev up root handle 1: netem delay 5ms limit 10000\n");
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--up-batch", path, NULL });
	unsigned got = 0, hups = 0;
	uint64_t t = now_ns();
	for (unsigned i = 0; i < N; i++) {
		client_send(&c, r.port, 0, i, 64);
		if (i % 700 == 350) {
			write_file(path, hups % 2 ? "qdisc add dev up root handle 1: netem delay 5ms limit 10000\n"
						  : "qdisc add dev up root handle 1: netem delay 15ms limit 10000\n");
			CHECK(kill(r.pid, SIGHUP) == 0);
			hups++;
		}
		t += 200000;
		sleep_until(t);
		while (client_recv(&c, 0, NULL, NULL, NULL))
			got++;
	}
	got += client_drain(&c, 500);
	relay_stop(&r); /* reads the rest of its stderr */
	unsigned applied = 0;
	for (const char *p = strstr(r.errtext, "SIGHUP: batch files applied"); p;
	     p = strstr(p + 1, "SIGHUP: batch files applied"))
		applied++;
	printf("  %u SIGHUPs during %d datagrams: %u applied, %u back\n", hups, N, applied, got);
	CHECK_EQ(applied, hups);
	CHECK_EQ(got, N);
	CHECK_EQ(fin_get(&r, "up", "out"), N);
	CHECK_EQ(fin_get(&r, "up", "dropped"), 0);
	relay_free(&r);
	close(c.fd);
	unlink(path);
}

/* No server: the datagrams leave (a network would lose them: the relay
 * counts them out), the server's ICMP port unreachable errors are counted
 * (refused), the relay keeps running, the balance holds. */
static void test_no_server(void)
{
	enum { N = 50 };
	int s = socket(AF_INET, SOCK_DGRAM, 0); /* a port with nobody behind it */
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0);
	socklen_t al = sizeof(a);
	CHECK(getsockname(s, (struct sockaddr *)&a, &al) == 0);
	close(s);
	char to[64];
	snprintf(to, sizeof(to), "127.0.0.1:%u", ntohs(a.sin_port));
	struct relay r;
	CHECK_EQ(relay_spawn(&r, (const char *const[]){ "--listen", "127.0.0.1:0", "--to", to,
							 "--json", "--workers", "1", NULL }, 1), 0);
	struct client c;
	client_open(&c);
	for (int i = 0; i < N; i++) {
		client_send(&c, r.port, 0, (uint32_t)i, 64);
		sleep_ms(1);
	}
	sleep_ms(500);
	relay_stop(&r);
	long long out = fin_get(&r, "up", "out"), err = fin_get(&r, "up", "send_error");
	long long refused = fin_get(&r, NULL, "refused");
	printf("  no server: %lld sent, %lld send errors, %lld port unreachable\n", out, err,
	       refused);
	CHECK_EQ(fin_get(&r, "up", "rx"), N);
	CHECK_EQ(out + err, N); /* the error reaches a send or a receive, not both */
	CHECK(refused + err > 0);
	relay_free(&r);
	close(c.fd);
}

/* The text statistics (no --json) and more workers than CPUs: the final
 * report has tc -s's qdisc lines and both balances "ok". */
static void test_text_stats(void)
{
	char to[64];
	snprintf(to, sizeof(to), "127.0.0.1:%u", E.port);
	struct relay r;
	CHECK_EQ(relay_spawn(&r, (const char *const[]){ "--listen", "127.0.0.1:0", "--to", to,
							 "--workers", "5", "--up", "netem delay 1ms",
							 NULL }, 1), 0);
	struct client c;
	client_open(&c);
	unsigned got = send_count(&r, &c, 100, 64, 200);
	const char *text = relay_stop_text(&r);
	CHECK_EQ(got, 100);
	CHECK(strstr(text, "qdisc netem 8001: root"));
	CHECK(strstr(text, " Sent 9200 bytes 100 pkt (dropped 0, overlimits 0 requeues 0)"));
	CHECK(strstr(text, "balance up: rx 100 + clones 0 = out 100 + dropped 0, backlog 0: ok"));
	CHECK(strstr(text, "balance down: rx 100 + clones 0 = out 100 + dropped 0, backlog 0: ok"));
	close(c.fd);
}

/* Bad configurations: exit 2, a message that names the token. */
static void bad(const char *const *args, const char *want)
{
	struct relay r;
	int rc = relay_spawn(&r, args, 0);
	if (rc != 2 || !strstr(r.errtext, want)) {
		fprintf(stderr, "bad config: exit %d (want 2), stderr \"%s\" (want \"%s\")\n", rc,
			r.errtext, want);
		abort();
	}
	printf("    exit 2: %.*s\n", (int)strcspn(r.errtext, "\n"), r.errtext);
}

static void test_bad_configs(void)
{
	bad((const char *const[]){ "--up", "netem delya 20ms", NULL }, "delya");
	bad((const char *const[]){ "--down", "netem delay 20ms loss 200%", NULL }, "loss");
	bad((const char *const[]){ "--up", "tbf rate 10mbit", NULL }, "burst");
	bad((const char *const[]){ "--up", "bogus", NULL }, "bogus");
	bad((const char *const[]){ "--workers", "0", NULL }, "--workers");
	bad((const char *const[]){ "--frobnicate", NULL }, "--frobnicate");
	bad((const char *const[]){ "--up-batch", "/nonexistent/batch", NULL }, "/nonexistent/batch");
	bad((const char *const[]){ "--stats", "soon", NULL }, "soon");
	bad((const char *const[]){ "--map", "127.0.0.1=1:zz", NULL }, "1:zz");
	bad((const char *const[]){ "--map", "::1=1:10", NULL }, "::1");
	char path[] = "/tmp/test_relay_bad.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	write_file(path, "qdisc add dev up root handle 1: htb default 10\n"
			 "class add dev up parent 1: classid 1:10 htb rate 10mbit ceil 5zbit\n");
	char want[128];
	snprintf(want, sizeof(want), "%s:2", path);
	bad((const char *const[]){ "--up-batch", path, NULL }, want);
	bad((const char *const[]){ "--up-batch", path, NULL }, "Illegal \"ceil\"");
	unlink(path);
	struct relay r;
	int rc = relay_spawn(&r, (const char *const[]){ "--listen", "127.0.0.1:99999", "--to",
							"127.0.0.1:7", NULL }, 1);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, "99999"));
	rc = relay_spawn(&r, (const char *const[]){ "--listen", "localhost:9", "--to",
						    "127.0.0.1:7", NULL }, 1);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, "localhost"));
	rc = relay_spawn(&r, (const char *const[]){ "--listen", "127.0.0.1:0", NULL }, 1);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, "--to"));
	/* --steer-cpu: not with --api; not with more workers than CPUs */
	rc = relay_spawn(&r, (const char *const[]){ "--api", "127.0.0.1:0", "--steer-cpu", NULL }, 1);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, "--steer-cpu"));
	if (sysconf(_SC_NPROCESSORS_ONLN) < 64)
		bad((const char *const[]){ "--workers", "64", "--steer-cpu", NULL }, "--steer-cpu");
}

/* --max-bytes refusals: exit 2, the message names the option and the value. */
static void test_bad_budget(void)
{
	static const char *const vals[] = { "0", "12x", "-5", "100", "127k", "2048g", "1.5m",
					    "m", "99999999999999999999", "" };
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "--max-bytes: bad value \"%s\"", vals[i]);
		bad((const char *const[]){ "--max-bytes", vals[i], NULL }, want);
	}
	bad((const char *const[]){ "--max-bytes", NULL }, "--max-bytes needs a value");
	/* the edges and the suffixes are taken */
	static const char *const good[] = { "128k", "131072", "1m", "1MiB", "1G", "1024g" };
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct relay r;
		relay_start(&r, (const char *const[]){ "--workers", "1", "--max-bytes", good[i],
						       NULL });
		relay_stop(&r);
		relay_free(&r);
	}
}

/* Send @n datagrams of @len bytes from @c to the relay, @gap_us apart
 * (the first 16 bytes: the client's header; the rest a pattern). */
static void send_big(struct client *c, uint16_t port, uint32_t id, unsigned n, size_t len,
		     unsigned gap_us)
{
	static char buf[65536];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(port) };
	for (unsigned i = 0; i < n; i++) {
		memset(buf, 0x77, len);
		uint64_t t = now_ns();
		memcpy(buf, &t, 8);
		memcpy(buf + 8, &i, 4);
		memcpy(buf + 12, &id, 4);
		CHECK(sendto(c->fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len);
		if (gap_us)
			usleep(gap_us);
	}
}

/* The budget: 8 clients each send 4 datagrams of 60000 bytes (a 64 KiB
 * buffer each) into a 2 s delay with --max-bytes 1m.  Each client's share
 * holds two (its floor); together they pass 7/8 of the budget, so the
 * rest is dropped and counted no_memory (or client_share), nothing is
 * allocated past the budget (the peak), the balance holds, and at the end
 * no client holds a byte. */
static void test_budget_no_memory(void)
{
	enum { NC = 8, PER = 4 };
	struct relay r;
	struct client c[NC];
	relay_start(&r, (const char *const[]){ "--workers", "1", "--max-bytes", "1m", "--drain",
					       "0", "--up", "netem delay 2s limit 100000", NULL });
	for (int i = 0; i < NC; i++)
		client_open(&c[i]);
	for (int k = 0; k < PER; k++)
		for (int i = 0; i < NC; i++)
			send_big(&c[i], r.port, (uint32_t)i, 1, 60000, 1000);
	sleep_ms(200);
	relay_stop(&r);
	long long rx = fin_get(&r, "up", "rx"), nomem = fin_get(&r, "up", "no_memory");
	long long share = fin_get(&r, "up", "client_share"), rcv = fin_get(&r, "up", "rcvbuf");
	long long destroyed = fin_get(&r, "up", "dev_destroy"), out = fin_get(&r, "up", "out");
	long long peak = fin_get(&r, NULL, "mem_peak_bytes");
	printf("  --max-bytes 1m, %d x %d datagrams of 60000 bytes: %lld no_memory, %lld "
	       "client_share, %lld rcvbuf, %lld queued (dropped at the stop), %lld out; peak %lld "
	       "bytes; %lld clients dropped by the budget\n", NC, PER, nomem, share, rcv, destroyed,
	       out, peak, fin_get(&r, NULL, "clients_no_memory"));
	CHECK_EQ(rx, NC * PER); /* the kernel's drops at the relay's socket included */
	CHECK_EQ(rx, out + destroyed + nomem + share + rcv);
	CHECK(nomem > 0);
	CHECK(fin_get(&r, NULL, "clients_no_memory") > 0);
	CHECK(peak > 0 && peak <= 1 << 20);
	CHECK_EQ(fin_get(&r, NULL, "max_bytes"), 1 << 20);
	/* at most 7/8 of the budget in 64 KiB buffers: 13 of them */
	CHECK(destroyed + out <= 13);
	CHECK_EQ(fin_get(&r, NULL, "active_clients"), 0);
	relay_free(&r);
	for (int i = 0; i < NC; i++)
		close(c[i].fd);
}

/* Fairness: a flooding client (60 datagrams of 30000 bytes) and a
 * well-behaved one (60 of 100 bytes), interleaved, into a 1 s delay with
 * --max-bytes 1m: the flooder is held to its share (half of 7/8 of the
 * budget with two clients holding bytes: 13 of its 32 KiB buffers) and the
 * rest of its datagrams are dropped (client_share); the well-behaved client
 * holds far under its share and keeps every datagram. */
static void test_budget_fair(void)
{
	enum { N = 60 };
	struct relay r;
	struct client flood, good;
	client_open(&flood);
	client_open(&good);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--max-bytes", "1m", "--up",
					       "netem delay 1s limit 100000", NULL });
	/* the well-behaved client first, so that both hold bytes from the start */
	client_send(&good, r.port, 1, 0, 100);
	for (unsigned i = 0; i < N; i++) {
		send_big(&flood, r.port, 0, 1, 30000, 500);
		if (i + 1 < N)
			client_send(&good, r.port, 1, i + 1, 100);
	}
	unsigned good_back = 0, flood_back = 0;
	uint32_t id;
	while (good_back < N && client_recv(&good, 3000, NULL, NULL, &id))
		good_back += id == 1;
	flood_back = client_drain(&flood, 500);
	relay_stop(&r);
	long long share = fin_get(&r, "up", "client_share");
	printf("  flooder: %u of %d back, %lld dropped by its share; well-behaved: %u of %d back; "
	       "%lld client(s) over their share\n", flood_back, N, share, good_back, N,
	       fin_get(&r, NULL, "clients_over_share"));
	CHECK_EQ(good_back, N);
	CHECK(share > 0);
	CHECK(flood_back < N);
	CHECK_EQ(fin_get(&r, NULL, "clients_over_share"), 1);
	CHECK_EQ(fin_get(&r, "up", "no_memory"), 0);
	CHECK_EQ(fin_get(&r, "up", "rx"), 2 * N);
	CHECK_EQ(fin_get(&r, NULL, "active_clients"), 0);
	relay_free(&r);
	close(flood.fd);
	close(good.fd);
}

/* netem's duplicates are charged to their client and refused past its
 * share, before the copy is made: one client, --max-bytes 128k (its share
 * the floor, 132352 bytes), duplicate 100% and a 1 s delay, 10 datagrams
 * of 30000 bytes (33408 bytes each with its packet): the first and its
 * copy, then the second are admitted (100224 bytes); the second's copy
 * would pass the share and is refused (clones_refused); the later ones
 * are dropped (client_share); every datagram and copy accounted for. */
static void test_budget_clones(void)
{
	enum { N = 10 };
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "1", "--max-bytes", "128k", "--up",
					       "netem delay 1s duplicate 100% limit 1000", NULL });
	send_big(&c, r.port, 0, N, 30000, 1000);
	unsigned back = client_drain(&c, 1500);
	relay_stop(&r);
	long long rx = fin_get(&r, "up", "rx"), clones = fin_get(&r, "up", "clones");
	long long refused = fin_get(&r, NULL, "clones_refused");
	long long share = fin_get(&r, "up", "client_share"), out = fin_get(&r, "up", "out");
	printf("  duplicate 100%% under --max-bytes 128k: %lld received, %lld copies made, %lld "
	       "refused, %lld dropped by the share, %lld out, %u echoes back\n", rx, clones, refused,
	       share, out, back);
	CHECK_EQ(rx, N);
	CHECK(refused >= 1);
	CHECK(share >= 1);
	CHECK(clones < rx - share); /* not every admitted datagram got its copy */
	CHECK(out <= 3);            /* three 32 KiB packets at most */
	CHECK_EQ(fin_get(&r, NULL, "active_clients"), 0);
	relay_free(&r);
	close(c.fd);
}

/* The edges of part 4 of issue 26: --to a name that does not resolve, --to
 * the relay's own --listen address (a loop): exit 2 with the token named;
 * out of descriptors (RLIMIT_NOFILE 64 with 100 clients): the relay keeps
 * running, says so once, counts the new clients' datagrams socket_error,
 * and balances. */
static void test_edges(void)
{
	struct relay r;
	int rc = relay_spawn(&r, (const char *const[]){ "--listen", "127.0.0.1:0", "--to",
						    "no-such-host.invalid:7", NULL }, 1);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, "no-such-host.invalid"));
	printf("    exit 2: %.*s\n", (int)strcspn(r.errtext, "\n"), r.errtext);
	rc = relay_spawn(&r, (const char *const[]){ "--listen", "127.0.0.1:9", "--to",
						    "127.0.0.1:9", NULL }, 1);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, "loop"));
	printf("    exit 2: %.*s\n", (int)strcspn(r.errtext, "\n"), r.errtext);
	rc = relay_spawn(&r, (const char *const[]){ "--listen", "0.0.0.0:9", "--to",
						    "127.0.0.1:9", NULL }, 1);
	CHECK_EQ(rc, 2);
	CHECK(strstr(r.errtext, "loop"));

	/* a loop the command line cannot see: a wildcard listener, --to another
	 * local address on its port; the datagram that comes back from the
	 * relay's own upstream socket is dropped and counted (loop) */
	struct ifaddrs *ifa = NULL, *i4 = NULL;
	if (getifaddrs(&ifa) == 0)
		for (struct ifaddrs *x = ifa; x && !i4; x = x->ifa_next)
			if (x->ifa_addr && x->ifa_addr->sa_family == AF_INET &&
			    (ntohl(((struct sockaddr_in *)x->ifa_addr)->sin_addr.s_addr) >> 24) != 127)
				i4 = x;
	if (i4) {
		char host[INET_ADDRSTRLEN], lis[64], to[64];
		inet_ntop(AF_INET, &((struct sockaddr_in *)i4->ifa_addr)->sin_addr, host,
			  sizeof(host));
		int s = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t al = sizeof(a);
		CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0);
		CHECK(getsockname(s, (struct sockaddr *)&a, &al) == 0);
		close(s); /* a free port, for the relay to take */
		snprintf(lis, sizeof(lis), "0.0.0.0:%u", ntohs(a.sin_port));
		snprintf(to, sizeof(to), "%s:%u", host, ntohs(a.sin_port));
		CHECK_EQ(relay_spawn(&r, (const char *const[]){ "--listen", lis, "--to", to, "--json",
								 "--workers", "1", NULL }, 1), 0);
		struct client c;
		client_open(&c);
		client_send(&c, r.port, 0, 0, 64);
		sleep_ms(300);
		relay_stop(&r);
		printf("  --listen %s --to %s: up rx %lld, out %lld, loop %lld\n", lis, to,
		       fin_get(&r, "up", "rx"), fin_get(&r, "up", "out"), fin_get(&r, "up", "loop"));
		CHECK_EQ(fin_get(&r, "up", "rx"), 2);
		CHECK_EQ(fin_get(&r, "up", "out"), 1); /* the one that looped back */
		CHECK_EQ(fin_get(&r, "up", "loop"), 1);
		CHECK_EQ(fin_get(&r, NULL, "clients_new"), 1);
		CHECK(strstr(r.errtext, "(a loop)"));
		relay_free(&r);
		close(c.fd);
	} else {
		printf("  SKIP: no local IPv4 address but loopback (the runtime loop check)\n");
	}
	freeifaddrs(ifa);

	enum { NC = 100 };
	spawn_nofile = 64;
	relay_start(&r, (const char *const[]){ "--workers", "1", NULL });
	spawn_nofile = 0;
	struct client c[NC];
	unsigned got = 0;
	for (int i = 0; i < NC; i++) {
		client_open(&c[i]);
		client_send(&c[i], r.port, (uint32_t)i, 0, 64);
	}
	for (int i = 0; i < NC; i++)
		got += client_recv(&c[i], i < 40 ? 1000 : 50, NULL, NULL, NULL);
	relay_stop(&r);
	long long serr = fin_get(&r, "up", "socket_error");
	printf("  RLIMIT_NOFILE 64, %d clients: %u replies, %lld socket_error; stderr: %.*s\n", NC,
	       got, serr, (int)strcspn(strstr(r.errtext, "out of") ? strstr(r.errtext, "out of")
								   : r.errtext, "\n"),
	       strstr(r.errtext, "out of") ? strstr(r.errtext, "out of") : r.errtext);
	CHECK(serr > 0);
	CHECK_EQ(got + serr, NC);
	CHECK_EQ(fin_get(&r, "up", "rx"), NC);
	CHECK(strstr(r.errtext, "out of file descriptors"));
	relay_free(&r);
	for (int i = 0; i < NC; i++)
		close(c[i].fd);
}

static void test_help(void)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' --help", relay_bin);
	FILE *p = popen(cmd, "r");
	CHECK(p);
	char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	CHECK_EQ(pclose(p), 0);
	CHECK(strstr(buf, "SYNOPSIS") && strstr(buf, "--listen") && strstr(buf, "EXIT STATUS"));
}

/* IPv6 on ::1 (skipped where the host has none). */
static void test_ipv6(void)
{
	echo_stop();
	if (echo_start(AF_INET6)) {
		printf("  SKIP: no IPv6 loopback\n");
		CHECK(echo_start(AF_INET) == 0);
		return;
	}
	struct relay r;
	struct client c;
	client_open(&c);
	relay_start(&r, (const char *const[]){ "--workers", "2", "--up", "netem delay 1ms", NULL });
	unsigned got = send_count(&r, &c, 50, 200, 200);
	relay_stop(&r);
	CHECK_EQ(got, 50);
	const char *q = strstr(r.fin, "\"kind\":\"netem\"");
	CHECK(q);
	const char *b = strstr(q, "\"bytes\":");
	CHECK(b);
	CHECK_EQ(strtoll(b + 8, NULL, 10), 50LL * (200 + 48)); /* IPv6 + UDP headers */
	relay_free(&r);
	close(c.fd);
	echo_stop();
	CHECK(echo_start(AF_INET) == 0);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_relay PATH-TO-pinwheel-netem\n");
		return 2;
	}
	relay_bin = argv[1];
	signal(SIGPIPE, SIG_IGN);
	CHECK(echo_start(AF_INET) == 0);
	RUN(test_help);
	RUN(test_bad_configs);
	RUN(test_bad_budget);
	RUN(test_edges);
	RUN(test_budget_no_memory);
	RUN(test_budget_fair);
	RUN(test_budget_clones);
	RUN(test_wake_jitter);
	RUN(test_delay);
	RUN(test_loss);
	RUN(test_duplicate);
	RUN(test_sizes);
	RUN(test_reorder);
	RUN(test_gemodel);
	RUN(test_same_decisions);
	RUN(test_tbf_rate);
	RUN(test_many_clients);
	RUN(test_steer_cpu);
	RUN(test_max_clients);
	RUN(test_idle);
	RUN(test_max_clients_per_addr);
	RUN(test_stop_queued);
	RUN(test_reload);
	RUN(test_schedule);
	RUN(test_reload_under_load);
	RUN(test_map);
	RUN(test_no_server);
	RUN(test_text_stats);
	RUN(test_ipv6);
	echo_stop();
	printf("# timing figures: %u judged, %u left out as LOADED\n", timing_judged, timing_loaded);
	return 0;
}
