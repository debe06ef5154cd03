/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: allocation failure at each allocation site in turn,
 * thread creation failure, a worker that cannot pin itself, and teardown
 * while things are in flight.
 *
 * How.  This binary is linked with --wrap for malloc, calloc, realloc,
 * aligned_alloc, strdup, getline, free, pthread_create and pthread_setaffinity_np
 * (tests/CMakeLists.txt), so every call the library (linked statically)
 * makes to them comes here first.  No hook in the library itself.  An
 * allocation made while the injector is armed is counted; the N-th fails
 * (NULL, errno ENOMEM).  A sweep runs an operation with N = 1, 2, ...
 * until a run makes no allocation fail: so every allocation the operation
 * makes, in the order it makes them, fails once.  After each injected
 * failure:
 *  - the operation returned -ENOMEM (or -ENOBUFS where the kernel does:
 *    htb's class allocation; tc: with a message), or succeeded by
 *    another way (an hrtimer queued on another CPU's heap when its own
 *    could not grow): then it must have fully worked;
 *  - nothing half-built remains: the state the operation would have
 *    changed reads as before (tc: every show byte-identical; a device:
 *    not there; a timer: not queued);
 *  - the runtime keeps working: the same operation, not armed, succeeds
 *    and what it built works (timers fire, packets flow, exactly once);
 *  - nothing leaks: the wrapped allocations still live after teardown
 *    equal those live before setup (and ASan's leak checker agrees).
 * Allocations made by libc for itself (stdio buffers, thread stacks) are
 * not wrapped and not counted.
 *
 * The other faults: pthread_create failing for each worker and the wall
 * clock's watcher in turn
 * (pw_runtime_start returns -EAGAIN, starts nothing, and a later start
 * works); pthread_setaffinity_np failing (workers run unpinned,
 * pw_runtime_workers_pinned() says 0, timers still run on each CPU); a
 * runtime destroyed while its workers run callbacks that re-arm; a device
 * destroyed while thousands of packets sit in netem with its watchdogs
 * armed and the workers running (every packet comes back exactly once,
 * nothing after destroy returns).  A work queue cannot be full (an intrusive list: see
 * docs/limits.md).
 *
 * Real-thread parts assert properties, never timings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>

#include "check.h"

/* ------------------------------------------------------------ injector */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
char *__real_strdup(const char *s);
void __real_free(void *p);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __real_pthread_setaffinity_np(pthread_t t, size_t n, const cpu_set_t *set);
ssize_t __real_getline(char **line, size_t *cap, FILE *f);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
char *__wrap_strdup(const char *s);
void __wrap_free(void *p);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_setaffinity_np(pthread_t t, size_t n, const cpu_set_t *set);
ssize_t __wrap_getline(char **line, size_t *cap, FILE *f);

static atomic_int armed;        /* count allocations, fail the fail_at-th */
static atomic_long seen, fail_at;
static atomic_int injected;     /* the armed run had an allocation fail */
static atomic_long live;        /* wrapped allocations not yet freed */
static atomic_int fail_thread;  /* pthread_create: fail the N-th call (1-based), 0 never */
static atomic_int thread_calls;
static atomic_int fail_affinity;

#define MAX_SITES 256
static void *sites[MAX_SITES]; /* distinct return addresses that were failed */
static unsigned nsites;
static void *last_site;
int main(void);
static pthread_mutex_t sites_mu = PTHREAD_MUTEX_INITIALIZER;

static int inject(void *ra)
{
	if (!atomic_load(&armed))
		return 0;
	if (atomic_fetch_add(&seen, 1) + 1 != atomic_load(&fail_at))
		return 0;
	atomic_store(&injected, 1);
	last_site = ra;
	pthread_mutex_lock(&sites_mu);
	unsigned i = 0;
	while (i < nsites && sites[i] != ra)
		i++;
	if (i == nsites && nsites < MAX_SITES)
		sites[nsites++] = ra;
	pthread_mutex_unlock(&sites_mu);
	errno = ENOMEM;
	return 1;
}

void *__wrap_malloc(size_t n)
{
	if (inject(__builtin_return_address(0)))
		return NULL;
	void *p = __real_malloc(n);
	if (p)
		atomic_fetch_add(&live, 1);
	return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
	if (inject(__builtin_return_address(0)))
		return NULL;
	void *p = __real_calloc(n, m);
	if (p)
		atomic_fetch_add(&live, 1);
	return p;
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	if (inject(__builtin_return_address(0)))
		return NULL;
	void *p = __real_aligned_alloc(a, n);
	if (p)
		atomic_fetch_add(&live, 1);
	return p;
}

char *__wrap_strdup(const char *s)
{
	if (inject(__builtin_return_address(0)))
		return NULL;
	char *p = __real_strdup(s);
	if (p)
		atomic_fetch_add(&live, 1);
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	if (inject(__builtin_return_address(0)))
		return NULL; /* @p stays valid, as realloc's failure leaves it */
	void *q = __real_realloc(p, n);
	if (q && !p)
		atomic_fetch_add(&live, 1);
	return q;
}

/* getline() allocates its buffer (libc's malloc, not wrapped): count it,
 * and fail it as an allocation when it would allocate (no buffer yet) */
ssize_t __wrap_getline(char **line, size_t *cap, FILE *f)
{
	int fresh = *line == NULL;
	if (fresh && inject(__builtin_return_address(0)))
		return -1; /* errno ENOMEM, as getline's own failure */
	ssize_t r = __real_getline(line, cap, f);
	if (fresh && *line)
		atomic_fetch_add(&live, 1);
	return r;
}

void __wrap_free(void *p)
{
	if (p)
		atomic_fetch_sub(&live, 1);
	__real_free(p);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	int n = atomic_fetch_add(&thread_calls, 1) + 1;
	if (atomic_load(&fail_thread) && n == atomic_load(&fail_thread))
		return EAGAIN;
	return __real_pthread_create(t, a, fn, arg);
}

int __wrap_pthread_setaffinity_np(pthread_t t, size_t n, const cpu_set_t *set)
{
	if (atomic_load(&fail_affinity))
		return EINVAL;
	return __real_pthread_setaffinity_np(t, n, set);
}

static void arm(long n)
{
	atomic_store(&seen, 0);
	atomic_store(&fail_at, n);
	atomic_store(&injected, 0);
	atomic_store(&armed, 1);
}

static int disarm(void)
{
	atomic_store(&armed, 0);
	return atomic_load(&injected);
}

/*
 * A sweep: for N = 1, 2, ...: setup(); the N-th allocation of op() fails;
 * after_fail(rc) checks the failure and that the runtime still works;
 * teardown(); no wrapped allocation outlives it.  Ends at the first N at
 * which op() made fewer than N allocations (then after_ok() checks the
 * success).  Returns the number of allocations op() makes.
 */
struct scenario {
	const char *name;
	void (*setup)(void);
	int (*op)(void);
	void (*after_fail)(int rc);
	void (*after_ok)(void);
	void (*teardown)(void);
};

static unsigned sweep(const struct scenario *s)
{
	unsigned before_sites = nsites, absorbed = 0;
	for (long n = 1;; n++) {
		long base = atomic_load(&live);
		if (s->setup)
			s->setup();
		arm(n);
		int rc = s->op();
		int hit = disarm();
		if (!hit || rc == 0) {
			/* nothing failed, or the failure was absorbed (e.g. an
			 * hrtimer that found room on another CPU's heap) */
			if (rc != 0)
				fprintf(stderr, "%s: failed (%d) with nothing injected\n", s->name, rc);
			CHECK_EQ(rc, 0);
			absorbed += hit;
			if (hit && getenv("PW_FAULTS_VERBOSE"))
				fprintf(stderr, "%s: allocation %ld absorbed (site: main%+td)\n", s->name,
					n, (char *)last_site - (char *)(uintptr_t)main);
			if (s->after_ok)
				s->after_ok();
		} else {
			/* -ENOBUFS: what the kernel answers for some (htb's class
			 * allocation: "No buffer space available") */
			if (rc != -ENOMEM && rc != -ENOBUFS)
				fprintf(stderr, "%s: allocation %ld failed: returned %d, not -ENOMEM\n",
					s->name, n, rc);
			CHECK(rc == -ENOMEM || rc == -ENOBUFS);
			s->after_fail(rc);
		}
		if (s->teardown)
			s->teardown();
		long now = atomic_load(&live);
		if (now != base)
			fprintf(stderr, "%s: allocation %ld: %ld allocations leaked\n", s->name, n,
				now - base);
		CHECK_EQ(now, base);
		if (!hit) {
			printf("ok - %s: %ld allocations, each failed in turn (%u new sites, %u "
			       "absorbed)\n", s->name, n - 1, nsites - before_sites, absorbed);
			return (unsigned)(n - 1);
		}
	}
}

/* ------------------------------------------------------------- timers */

static struct pw_runtime *rt;

static struct pw_runtime *mk_rt(enum pw_clock_id clk, unsigned ncpus)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = ncpus;
	cfg.clock = clk;
	struct pw_runtime *r = NULL;
	CHECK_EQ(pw_runtime_create(&cfg, &r), 0);
	return r;
}

static void rt_destroy(void)
{
	pw_runtime_destroy(rt);
	rt = NULL;
}

/* runtime create */
static enum pw_clock_id create_clock;
static int op_create(void)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 4;
	cfg.clock = create_clock;
	rt = (struct pw_runtime *)0x1; /* must become NULL on failure */
	return pw_runtime_create(&cfg, &rt);
}
static void create_failed(int rc)
{
	(void)rc;
	CHECK(rt == NULL);
}

/* Every CPU runs a timer (a started runtime works). */
static atomic_int fired_on[8];
static void note_cpu(struct pw_timer *t)
{
	(void)t;
	int c = pw_this_cpu();
	CHECK(c >= 0 && c < 8);
	atomic_fetch_add(&fired_on[c], 1);
}

static void timers_fire_everywhere(struct pw_runtime *r, unsigned ncpus)
{
	struct pw_timer t[8];
	for (unsigned c = 0; c < ncpus; c++) {
		atomic_store(&fired_on[c], 0);
		CHECK_EQ(pw_timer_setup(r, &t[c], note_cpu, PW_TIMER_PINNED), 0);
		t[c].expires = pw_jiffies(r) + 1;
		CHECK_EQ(pw_add_timer_on(&t[c], c), 0);
	}
	for (int spins = 0; spins < 20000; spins++) { /* up to ~20 s: a property, not a timing */
		unsigned done = 0;
		for (unsigned c = 0; c < ncpus; c++)
			done += atomic_load(&fired_on[c]) > 0;
		if (done == ncpus)
			break;
		usleep(1000);
	}
	for (unsigned c = 0; c < ncpus; c++) {
		CHECK_EQ(atomic_load(&fired_on[c]), 1);
		CHECK_EQ(pw_timer_delete_sync(&t[c]), 0);
	}
}

/* runtime start */
static void start_setup(void)
{
	rt = mk_rt(PW_CLOCK_MONOTONIC, 2);
}
static int op_start(void)
{
	return pw_runtime_start(rt);
}
static void start_ok(void)
{
	timers_fire_everywhere(rt, 2);
	CHECK_EQ(pw_runtime_stop(rt), 0);
}
static void start_failed(int rc)
{
	(void)rc;
	CHECK_EQ(pw_runtime_start(rt), 0); /* nothing was left started */
	start_ok();
}

/* hrtimer heap growth: starting many hrtimers on one CPU */
#define NHR 300
static struct pw_hrtimer hr[NHR];
static atomic_int hr_fired[NHR];
static int hr_failed_at;
static unsigned hr_mode, hr_home;
static enum pw_hrtimer_restart hr_fn(struct pw_hrtimer *t)
{
	atomic_fetch_add(&hr_fired[t - hr], 1);
	return PW_HRTIMER_NORESTART;
}
static void hr_setup(void)
{
	rt = mk_rt(PW_CLOCK_SIM, 2);
	CHECK_EQ(pw_cpu_enter(rt, hr_home), 0); /* set up here: their home is hr_home */
	for (unsigned i = 0; i < NHR; i++) {
		CHECK_EQ(pw_hrtimer_setup(rt, &hr[i], hr_fn, CLOCK_MONOTONIC, 0), 0);
		atomic_store(&hr_fired[i], 0);
	}
	pw_cpu_exit(rt);
	CHECK_EQ(pw_cpu_enter(rt, 1), 0); /* started from CPU 1 */
}
static int op_hr(void)
{
	hr_failed_at = -1;
	for (unsigned i = 0; i < NHR; i++) {
		int rc = pw_hrtimer_start(&hr[i], 1000000 + i * 1000, hr_mode);
		if (rc) {
			hr_failed_at = (int)i;
			return rc;
		}
	}
	return 0;
}
static void hr_check_all_fire(void)
{
	pw_cpu_exit(rt);
	CHECK_EQ(pw_sim_advance(rt, 10000000), 0);
	for (unsigned i = 0; i < NHR; i++)
		CHECK_EQ(atomic_load(&hr_fired[i]), 1);
	CHECK_EQ(pw_runtime_check(rt), 0);
}
static void hr_failed(int rc)
{
	(void)rc;
	CHECK(hr_failed_at >= 0);
	CHECK_EQ(pw_hrtimer_is_queued(&hr[hr_failed_at]), 0); /* a failed start changes nothing */
	for (int i = 0; i < hr_failed_at; i++)
		CHECK_EQ(pw_hrtimer_is_queued(&hr[i]), 1);
	for (unsigned i = (unsigned)hr_failed_at; i < NHR; i++)
		CHECK_EQ(pw_hrtimer_start(&hr[i], 1000000 + i * 1000, hr_mode), 0);
	hr_check_all_fire();
}

/* thread creation failing for worker i */
static void test_thread_create_fails(void)
{
	for (int i = 1; i <= 3; i++) { /* worker 0, worker 1, the clock watcher */
		long base = atomic_load(&live);
		rt = mk_rt(PW_CLOCK_MONOTONIC, 2);
		atomic_store(&thread_calls, 0);
		atomic_store(&fail_thread, i);
		int rc = pw_runtime_start(rt);
		atomic_store(&fail_thread, 0);
		CHECK_EQ(rc, -EAGAIN);
		CHECK_EQ(pw_runtime_stop(rt), 0); /* nothing running: a no-op */
		CHECK_EQ(pw_runtime_start(rt), 0);
		timers_fire_everywhere(rt, 2);
		rt_destroy();
		CHECK_EQ(atomic_load(&live), base);
	}
	printf("ok - pthread_create failing for worker 1, 2, then the clock watcher: -EAGAIN, "
	       "nothing left running, a later start works\n");
}

/* a worker that cannot pin itself */
static void test_affinity_fails(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = cores >= 2 ? 2 : 1;
	rt = mk_rt(PW_CLOCK_MONOTONIC, n);
	atomic_store(&fail_affinity, 1);
	CHECK_EQ(pw_runtime_start(rt), 0);
	timers_fire_everywhere(rt, n); /* every worker got past its pinning */
	CHECK_EQ(pw_runtime_workers_pinned(rt), 0);
	CHECK_EQ(pw_runtime_stop(rt), 0);
	atomic_store(&fail_affinity, 0);
	CHECK_EQ(pw_runtime_start(rt), 0);
	timers_fire_everywhere(rt, n);
	CHECK_EQ(pw_runtime_workers_pinned(rt), 1); /* n <= cores: pinned when it can */
	rt_destroy();
	printf("ok - pthread_setaffinity_np failing: workers run unpinned and say so; timers run "
	       "on each CPU\n");
}

/* a runtime destroyed while callbacks run and re-arm */
#define NBUSY 64
static struct pw_timer busy_t[NBUSY];
static atomic_long busy_runs;
static void busy_fn(struct pw_timer *t)
{
	atomic_fetch_add(&busy_runs, 1);
	struct timespec ts = { 0, 20000 };
	nanosleep(&ts, NULL);
	pw_mod_timer(t, pw_jiffies(rt) + 1);
}
static void test_destroy_busy(void)
{
	rt = mk_rt(PW_CLOCK_MONOTONIC, 2);
	atomic_store(&busy_runs, 0);
	for (unsigned i = 0; i < NBUSY; i++) {
		CHECK_EQ(pw_timer_setup(rt, &busy_t[i], busy_fn, 0), 0);
		busy_t[i].expires = pw_jiffies(rt) + 1;
		CHECK_EQ(pw_add_timer_on(&busy_t[i], i % 2), 0);
	}
	CHECK_EQ(pw_runtime_start(rt), 0);
	while (atomic_load(&busy_runs) < 200)
		usleep(1000);
	rt_destroy(); /* workers mid-callback, every timer pending or re-arming */
	long after = atomic_load(&busy_runs);
	usleep(20000);
	CHECK_EQ(atomic_load(&busy_runs), after); /* nothing runs after destroy returns */
	printf("ok - runtime destroyed with %d re-arming timers and callbacks running: %ld runs, "
	       "none after\n", NBUSY, after);
}

/* ---------------------------------------------------------------- net */

static atomic_long n_sent, n_dropped, n_after;
static atomic_int dev_gone;

static int drv_xmit(struct pw_netdev *d, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)d, (void)txq, (void)ctx;
	if (atomic_load(&dev_gone))
		atomic_fetch_add(&n_after, 1);
	p->user = 1;
	atomic_fetch_add(&n_sent, 1);
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *d, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)d, (void)r, (void)ctx;
	if (atomic_load(&dev_gone))
		atomic_fetch_add(&n_after, 1);
	p->user = 2;
	atomic_fetch_add(&n_dropped, 1);
}

static const struct pw_netdev_ops drv_ops = { .xmit = drv_xmit, .drop = drv_drop };
static struct pw_netdev *dev0, *dev1;

/* device create: the first (builds the layer's state) and a second */
static int first_dev;
static void dev_setup(void)
{
	rt = mk_rt(PW_CLOCK_SIM, 2);
	dev0 = dev1 = NULL;
	if (!first_dev)
		CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv_ops, NULL, &dev0), 0);
}
static int op_dev(void)
{
	dev1 = (struct pw_netdev *)0x1;
	return pw_netdev_create(rt, "eth1", 4, &drv_ops, NULL, &dev1);
}
static char out[1 << 16], err[4096];
static void dev_ok(void)
{
	CHECK(dev1 != NULL);
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth1", 0, out, sizeof(out), err, sizeof(err)), 0);
	CHECK(strstr(out, "qdisc mq 0: root") != NULL);
	pw_netdev_destroy(dev1);
	dev1 = NULL;
}
static void dev_failed(int rc)
{
	(void)rc;
	CHECK(dev1 == NULL);
	CHECK(pw_tc(rt, "qdisc show dev eth1", 0, out, sizeof(out), err, sizeof(err)) != 0);
	CHECK_EQ(op_dev(), 0); /* the name is free, the layer works */
	dev_ok();
}
static void dev_teardown(void)
{
	if (dev0)
		pw_netdev_destroy(dev0);
	dev0 = NULL;
	rt_destroy();
}

/* XPS */
static int op_xps(void)
{
	uint64_t mask = 1; /* CPU 0 */
	return pw_netdev_set_xps(dev0, 0, &mask, 1);
}
static void xps_setup(void)
{
	rt = mk_rt(PW_CLOCK_SIM, 2);
	CHECK_EQ(pw_netdev_create(rt, "eth0", 4, &drv_ops, NULL, &dev0), 0);
}
static void xps_failed(int rc)
{
	(void)rc;
	CHECK_EQ(op_xps(), 0);
}

/* tc commands: each after its prerequisites, with packets queued in
 * whatever the prerequisites built, on the sim clock */
struct tc_case {
	const char *pre[5];
	const char *cmd;
	unsigned flags;
};
static const struct tc_case tc_cases[] = {
	{ { NULL }, "qdisc add dev eth1 root handle 1: netem delay 10ms 1ms", 0 },
	{ { NULL }, "qdisc add dev eth1 root handle 1: netem delay 10ms 1ms distribution normal", 0 },
	{ { NULL }, "qdisc add dev eth1 root handle 1: est 1sec 4sec netem delay 1ms rate 10mbit", 0 },
	{ { NULL }, "qdisc add dev eth1 root handle 1: tbf rate 1mbit burst 10k latency 50ms", 0 },
	{ { "qdisc add dev eth1 root handle 1: tbf rate 1mbit burst 10k latency 50ms" },
	  "qdisc change dev eth1 root handle 1: tbf rate 2mbit burst 20k limit 30000", 0 },
	{ { NULL }, "qdisc add dev eth0 root handle 1: mq", 0 },
	{ { "qdisc add dev eth0 root handle 1: mq" },
	  "qdisc replace dev eth0 parent 1:2 handle 20: est 1sec 4sec netem delay 5ms", 0 },
	{ { "qdisc add dev eth0 root handle 1: mq",
	    "qdisc replace dev eth0 parent 1:2 handle 20: netem delay 5ms" },
	  "qdisc change dev eth0 parent 1:2 handle 20: netem delay 7ms loss 1%", 0 },
	{ { "qdisc add dev eth1 root handle 1: netem delay 10ms" },
	  "qdisc replace dev eth1 root handle 2: pfifo limit 100", 0 },
	{ { "qdisc add dev eth1 root handle 1: netem delay 10ms" }, "qdisc del dev eth1 root", 0 },
	{ { NULL }, "qdisc add dev eth1 root handle 1: htb default 20 r2q 5", 0 },
	{ { "qdisc add dev eth1 root handle 1: htb default 20" },
	  "class add dev eth1 parent 1: classid 1:1 htb rate 10mbit ceil 20mbit", 0 },
	{ { "qdisc add dev eth1 root handle 1: htb default 20",
	    "class add dev eth1 parent 1: classid 1:1 htb rate 10mbit",
	    "class add dev eth1 parent 1:1 classid 1:20 htb rate 5mbit ceil 10mbit" },
	  "class change dev eth1 parent 1:1 classid 1:20 htb rate 6mbit ceil 8mbit prio 2", 0 },
	{ { "qdisc add dev eth1 root handle 1: htb default 20",
	    "class add dev eth1 parent 1: classid 1:1 htb rate 10mbit",
	    "class add dev eth1 parent 1:1 classid 1:20 htb rate 5mbit ceil 10mbit" },
	  "qdisc add dev eth1 parent 1:20 handle 20: netem delay 5ms", 0 },
	{ { "qdisc add dev eth1 root handle 1: htb default 20",
	    "class add dev eth1 parent 1: classid 1:1 htb rate 10mbit",
	    "class add dev eth1 parent 1:1 classid 1:20 htb rate 5mbit ceil 10mbit" },
	  "class del dev eth1 classid 1:20", 0 },
	{ { "qdisc add dev eth1 root handle 1: tbf rate 1mbit burst 10k latency 50ms" },
	  "qdisc add dev eth1 parent 1:1 handle 10: netem delay 1ms", 0 },
	{ { "qdisc add dev eth0 root handle 1: mq" }, "qdisc show", PW_TC_STATS | PW_TC_JSON },
	{ { "qdisc add dev eth0 root handle 1: mq" }, "class show dev eth0", PW_TC_STATS },
};
static const struct tc_case *cur_tc;

#define NPKT 64
static struct pw_pkt pkts[NPKT];

static char *snapshot(void)
{
	static const char *const shows[] = { "qdisc show dev eth0", "class show dev eth0",
					     "qdisc show dev eth1", "class show dev eth1" };
	size_t len = 0;
	char *buf = __real_malloc(1 << 18);
	CHECK(buf);
	buf[0] = '\0';
	for (unsigned s = 0; s < 4; s++) {
		CHECK_EQ(pw_tc(rt, shows[s], PW_TC_STATS | PW_TC_DETAILS, out, sizeof(out), err,
			       sizeof(err)), 0);
		size_t n = strlen(out);
		CHECK(len + n < (1 << 18));
		memcpy(buf + len, out, n + 1);
		len += n;
	}
	return buf;
}

static char *tc_before;
static void tc_setup(void)
{
	rt = mk_rt(PW_CLOCK_SIM, 2);
	CHECK_EQ(pw_netdev_create(rt, "eth0", 4, &drv_ops, NULL, &dev0), 0);
	CHECK_EQ(pw_netdev_create(rt, "eth1", 1, &drv_ops, NULL, &dev1), 0);
	for (unsigned i = 0; i < 5 && cur_tc->pre[i]; i++)
		CHECK_EQ(pw_tc(rt, cur_tc->pre[i], 0, NULL, 0, err, sizeof(err)), 0);
	atomic_store(&n_sent, 0);
	atomic_store(&n_dropped, 0);
	for (unsigned i = 0; i < NPKT; i++) {
		pw_pkt_init(&pkts[i], NULL, 1000);
		pkts[i].hash = i * 2654435761u;
		CHECK_EQ(pw_cpu_enter(rt, i % 2), 0);
		pw_dev_queue_xmit(i % 3 ? dev0 : dev1, &pkts[i]);
		pw_cpu_exit(rt);
	}
	tc_before = snapshot();
}
static int op_tc(void)
{
	err[0] = '\0';
	return pw_tc(rt, cur_tc->cmd, cur_tc->flags, out, sizeof(out), err, sizeof(err));
}
static void tc_failed(int rc)
{
	(void)rc;
	if (!err[0])
		fprintf(stderr, "%s: -ENOMEM without a message\n", cur_tc->cmd);
	CHECK(err[0] != '\0');
	char *now = snapshot();
	if (strcmp(now, tc_before))
		fprintf(stderr, "%s: a failed command changed:\n%s\n---\n%s\n", cur_tc->cmd,
			tc_before, now);
	CHECK(strcmp(now, tc_before) == 0);
	__real_free(now);
	CHECK_EQ(op_tc(), 0);
}
static void tc_teardown(void)
{
	__real_free(tc_before);
	/* packets: every one comes back exactly once, sent or dropped */
	CHECK_EQ(pw_sim_advance(rt, 2000000000ull), 0);
	pw_netdev_destroy(dev0);
	pw_netdev_destroy(dev1);
	dev0 = dev1 = NULL;
	CHECK_EQ(atomic_load(&n_sent) + atomic_load(&n_dropped), NPKT);
	for (unsigned i = 0; i < NPKT; i++)
		CHECK(pkts[i].user == 1 || pkts[i].user == 2);
	rt_destroy();
}

/* a device destroyed while packets wait in netem, watchdogs armed, senders sending */
#define NSEND 2
#define PER_SENDER 20000
static struct pw_pkt *spkts[NSEND];
static atomic_long offered;
static void *sender(void *arg)
{
	long id = (long)arg;
	for (unsigned i = 0; i < PER_SENDER; i++) {
		struct pw_pkt *p = &spkts[id][i];
		pw_pkt_init(p, NULL, 500);
		p->hash = i;
		atomic_fetch_add(&offered, 1);
		pw_dev_queue_xmit(dev0, p);
	}
	return NULL;
}
static void test_destroy_dev_in_flight(void)
{
	rt = mk_rt(PW_CLOCK_MONOTONIC, 2);
	CHECK_EQ(pw_netdev_create(rt, "eth0", 2, &drv_ops, NULL, &dev0), 0);
	CHECK_EQ(pw_tc(rt, "qdisc add dev eth0 root handle 1: mq", 0, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ(pw_tc(rt, "qdisc add dev eth0 parent 1:1 netem delay 20ms limit 100000", 0, NULL,
		       0, err, sizeof(err)), 0);
	CHECK_EQ(pw_tc(rt, "qdisc add dev eth0 parent 1:2 netem delay 5ms 4ms limit 100000", 0,
		       NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ(pw_runtime_start(rt), 0);
	atomic_store(&n_sent, 0);
	atomic_store(&n_dropped, 0);
	atomic_store(&n_after, 0);
	atomic_store(&dev_gone, 0);
	atomic_store(&offered, 0);
	pthread_t th[NSEND];
	for (long i = 0; i < NSEND; i++) {
		spkts[i] = __real_calloc(PER_SENDER, sizeof(struct pw_pkt));
		CHECK(spkts[i]);
		CHECK_EQ(pthread_create(&th[i], NULL, sender, (void *)i), 0);
	}
	/* the senders finish (destroy's contract: no transmit on a device
	 * being destroyed); then, once the 5 ms child has sent some, destroy
	 * with both netem queues holding packets, their watchdogs armed and
	 * the workers dequeuing */
	for (int i = 0; i < NSEND; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	for (int spins = 0; atomic_load(&n_sent) == 0 && spins < 10000; spins++)
		usleep(1000);
	CHECK(atomic_load(&n_sent) > 0);
	pw_netdev_destroy(dev0);
	atomic_store(&dev_gone, 1);
	dev0 = NULL;
	long sent = atomic_load(&n_sent), dropped = atomic_load(&n_dropped);
	CHECK_EQ(sent + dropped, atomic_load(&offered));
	usleep(30000); /* a watchdog that outlived its device would fire now */
	CHECK_EQ(atomic_load(&n_after), 0);
	for (int i = 0; i < NSEND; i++) {
		for (unsigned k = 0; k < PER_SENDER; k++) {
			struct pw_pkt *p = &spkts[i][k];
			CHECK(p->user == 0 || p->user == 1 || p->user == 2);
		}
		__real_free(spkts[i]);
	}
	rt_destroy();
	printf("ok - device destroyed with packets in netem and watchdogs armed: %ld offered = "
	       "%ld sent + %ld dropped, nothing after\n", sent + dropped, sent, dropped);
}

/* fq allocates a flow on the data path (the kernel's GFP_ATOMIC): a
 * failure counts alloc_errors and the packet goes to the internal queue,
 * still sent, exactly once */
#define NFQ 24
static struct pw_sock fq_sk[NFQ];
static struct pw_pkt fq_pkt[NFQ];
static long fq_injected;
static void fq_setup(void)
{
	rt = mk_rt(PW_CLOCK_SIM, 2);
	CHECK_EQ(pw_netdev_create(rt, "eth1", 1, &drv_ops, NULL, &dev1), 0);
	CHECK_EQ(pw_tc(rt, "qdisc add dev eth1 root handle 1: fq", 0, NULL, 0, err, sizeof(err)),
		 0);
	atomic_store(&n_sent, 0);
	atomic_store(&n_dropped, 0);
	for (unsigned i = 0; i < NFQ; i++) {
		CHECK_EQ(pw_sock_init(&fq_sk[i], rt, NULL), 0);
		pw_sock_set_pacing_rate(&fq_sk[i], 1000000);
		pw_pkt_init(&fq_pkt[i], NULL, 1000);
		fq_pkt[i].sk = &fq_sk[i];
	}
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
}
static int op_fq(void)
{
	for (unsigned i = 0; i < NFQ; i++)
		CHECK_EQ(pw_dev_queue_xmit(dev1, &fq_pkt[i]), PW_NET_XMIT_SUCCESS);
	fq_injected = atomic_load(&injected);
	return 0;
}
static void fq_check(void)
{
	pw_cpu_exit(rt);
	CHECK_EQ(pw_sim_advance(rt, 100000000ull), 0);
	CHECK_EQ(atomic_load(&n_sent), NFQ);
	CHECK_EQ(atomic_load(&n_dropped), 0);
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth1", PW_TC_STATS, out, sizeof(out), err, sizeof(err)),
		 0);
	char want[64];
	snprintf(want, sizeof(want), "alloc_errors %ld", fq_injected);
	if (fq_injected)
		CHECK(strstr(out, want) != NULL);
	else
		CHECK(strstr(out, "alloc_errors") == NULL);
}
static void fq_fail(int rc)
{
	(void)rc;
	CHECK(0); /* never: fq absorbs the failure */
}
static void fq_teardown(void)
{
	pw_netdev_destroy(dev1);
	dev1 = NULL;
	for (unsigned i = 0; i < NFQ; i++)
		pw_sock_put(&fq_sk[i]);
	rt_destroy();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);

	create_clock = PW_CLOCK_MONOTONIC;
	sweep(&(struct scenario){ "pw_runtime_create (4 CPUs)", NULL, op_create, create_failed,
				  rt_destroy, NULL });
	create_clock = PW_CLOCK_SIM;
	sweep(&(struct scenario){ "pw_runtime_create (sim)", NULL, op_create, create_failed,
				  rt_destroy, NULL });
	sweep(&(struct scenario){ "pw_runtime_start", start_setup, op_start, start_failed,
				  start_ok, rt_destroy });
	hr_mode = PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED;
	hr_home = 1;
	sweep(&(struct scenario){ "pw_hrtimer_start x300 pinned (heap growth)", hr_setup, op_hr,
				  hr_failed, hr_check_all_fire, rt_destroy });
	hr_mode = PW_HRTIMER_MODE_REL;
	hr_home = 0;
	sweep(&(struct scenario){ "pw_hrtimer_start x300 moving CPU 0 -> 1 (room on the old one)", hr_setup,
				  op_hr, hr_failed, hr_check_all_fire, rt_destroy });
	first_dev = 1;
	sweep(&(struct scenario){ "pw_netdev_create (the first: the layer's state)", dev_setup,
				  op_dev, dev_failed, dev_ok, dev_teardown });
	first_dev = 0;
	sweep(&(struct scenario){ "pw_netdev_create (4 queues)", dev_setup, op_dev, dev_failed,
				  dev_ok, dev_teardown });
	sweep(&(struct scenario){ "pw_netdev_set_xps", xps_setup, op_xps, xps_failed, NULL,
				  dev_teardown });
	unsigned total = 0;
	for (size_t i = 0; i < sizeof(tc_cases) / sizeof(tc_cases[0]); i++) {
		cur_tc = &tc_cases[i];
		char name[300];
		snprintf(name, sizeof(name), "tc %s", cur_tc->cmd);
		total += sweep(&(struct scenario){ name, tc_setup, op_tc, tc_failed, NULL,
						   tc_teardown });
	}
	CHECK(total > 0);
	CHECK(sweep(&(struct scenario){ "fq: a flow per socket on the data path", fq_setup, op_fq,
					fq_fail, fq_check, fq_teardown }) >= NFQ); /* a flow each, at least */
	printf("# %u distinct allocation sites failed at least once\n", nsites);

	test_thread_create_fails();
	test_affinity_fails();
	test_destroy_busy();
	test_destroy_dev_in_flight();
	return 0;
}
