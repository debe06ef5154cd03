/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: the cost of the timer operations network code does all
 * day, at 1e3, 1e5 and 1e6 pending timers.  A benchmark, not a test: it
 * prints numbers and judges nothing.
 *
 * Workloads (each repeated --reps times; the table gives the median and
 * the minimum, so noise is visible):
 *   rearm       re-arm a random pending timer to a random expiry 1-10 s out
 *               (the TCP retransmit pattern: nearly every re-arm changes
 *               bucket).
 *   rearm_same  re-arm a pending timer to the expiry it already has (the
 *               mod_timer fast path of seed 001); timers are visited in
 *               order, so this measures the fast path, not a cache miss per
 *               timer, which would cost any library the same ~80 ns.
 *   cancel_add  timer_delete + add_timer on a random timer, random expiry.
 *   expire      N timers due within 1 s; advance the clock and run them all;
 *               per-timer cost, callback included.
 *
 * The operations run as an event loop runs them: each iteration reads the
 * clock once, does 256 operations with expiries computed from that reading
 * (libuv and libevent cache the loop time the same way), then runs what is
 * due.  The clock is the real monotonic clock by default; --clock sim
 * freezes time (pure data-structure cost).  The expire workload always
 * uses the simulated clock, to move time without sleeping.
 *
 * Every implementation plugs into one ops table (struct bench_impl); today
 * only pinwheel, the peers come with the benchmark issue.
 *
 * Usage: pinwheel-bench [--json] [--sizes N,N,...] [--reps R] [--ops N]
 *                       [--clock mono|sim] [--workloads a,b,...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>

#include "lateness.h"
#include "ref_heap.h"

#define MAX_SIZES 16
#define MAX_REPS 101
#define BATCH 256 /* operations per event-loop iteration */

struct bench_impl {
	const char *name;
	/* Make @n pending timers at random expiries 1-10 s out. */
	int (*setup)(unsigned n, enum pw_clock_id clock);
	/* The loop's "now" in ticks, read once a batch (event loops cache it). */
	uint64_t (*now_j)(void);
	/* Run what is due (an event-loop iteration); returns callbacks run. */
	uint64_t (*poll)(void);
	/* Batches, so the per-operation call is the library's own, inlined
	 * where the library inlines it, not an indirect call of the harness. */
	void (*rearm)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j);
	/* timers first .. first+n-1, wrapping at the pending count */
	void (*rearm_same)(unsigned first, size_t n);
	void (*cancel_add)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j);
	/* Arm all @n timers due within @window_j, run them; return fired. */
	uint64_t (*expire_round)(unsigned n, uint64_t window_j, double *ns);
	void (*teardown)(void);
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static inline uint64_t xs(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- pinwheel ---------------------------------------------------------- */

static struct pw_runtime *prt;
static struct pw_timer *ptimers;
static unsigned pn;
static uint64_t pfired;

static void pw_cb(struct pw_timer *t)
{
	(void)t;
	pfired++;
}

static int pw_setup(unsigned n, enum pw_clock_id clock)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = clock;
	int r = pw_runtime_create(&cfg, &prt);
	if (r)
		return r;
	r = pw_cpu_enter(prt, 0);
	if (r)
		return r;
	ptimers = calloc(n, sizeof(*ptimers));
	if (!ptimers)
		return -ENOMEM;
	pn = n;
	uint64_t j = pw_jiffies(prt);
	for (unsigned i = 0; i < n; i++) {
		pw_timer_setup(prt, &ptimers[i], pw_cb, 0);
		pw_mod_timer(&ptimers[i], j + 1000 + xs() % 9000);
	}
	return 0;
}

static uint64_t pw_now_j(void)
{
	return pw_jiffies(prt);
}

static uint64_t pw_poll(void)
{
	int n = pw_run_timers(prt, 0);
	return n > 0 ? (uint64_t)n : 0;
}

static void pw_rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j)
{
	for (size_t k = 0; k < n; k++)
		pw_mod_timer(&ptimers[idx[k]], now_j + delta[k]);
}

static void pw_rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == pn ? 0 : first + 1)
		pw_mod_timer(&ptimers[first], ptimers[first].expires);
}

static void pw_cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j)
{
	for (size_t k = 0; k < n; k++) {
		struct pw_timer *t = &ptimers[idx[k]];
		pw_timer_delete(t);
		t->expires = now_j + delta[k];
		pw_add_timer(t);
	}
}

static uint64_t pw_expire_round(unsigned n, uint64_t window_j, double *ns)
{
	uint64_t j = pw_jiffies(prt), before = pfired;
	for (unsigned i = 0; i < n; i++)
		pw_mod_timer(&ptimers[i], j + 1 + xs() % window_j);
	uint64_t t0 = now_ns();
	pw_sim_advance(prt, pw_jiffies_to_ns(prt, window_j + 64));
	*ns = (double)(now_ns() - t0);
	return pfired - before;
}

static void pw_teardown(void)
{
	pw_cpu_exit(prt);
	pw_runtime_destroy(prt);
	free(ptimers);
	prt = NULL;
	ptimers = NULL;
}


/* ---- pinwheel hrtimers --------------------------------------------------- */
/* Same ticks of 1 ms as the wheel rows, so the rows compare; expiries get a
 * random sub-millisecond part, as real nanosecond deadlines have. */

static struct pw_hrtimer *htimers;

static enum pw_hrtimer_restart hr_cb(struct pw_hrtimer *t)
{
	(void)t;
	pfired++;
	return PW_HRTIMER_NORESTART;
}

static int hr_setup(unsigned n, enum pw_clock_id clock)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = clock;
	int r = pw_runtime_create(&cfg, &prt);
	if (r)
		return r;
	r = pw_cpu_enter(prt, 0);
	if (r)
		return r;
	htimers = calloc(n, sizeof(*htimers));
	if (!htimers)
		return -ENOMEM;
	pn = n;
	uint64_t now = pw_now_ns(prt);
	for (unsigned i = 0; i < n; i++) {
		pw_hrtimer_setup(prt, &htimers[i], hr_cb, CLOCK_MONOTONIC, 0);
		pw_hrtimer_start(&htimers[i], now + (1000 + xs() % 9000) * 1000000ull + xs() % 1000000,
				 PW_HRTIMER_MODE_ABS);
	}
	return 0;
}

static uint64_t hr_now_j(void)
{
	return pw_now_ns(prt) / 1000000;
}

static void hr_rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j)
{
	for (size_t k = 0; k < n; k++)
		pw_hrtimer_start(&htimers[idx[k]], (now_j + delta[k]) * 1000000ull + (delta[k] & 0xfffff),
				 PW_HRTIMER_MODE_ABS);
}

static void hr_rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == pn ? 0 : first + 1)
		pw_hrtimer_start(&htimers[first], pw_hrtimer_get_expires(&htimers[first]),
				 PW_HRTIMER_MODE_ABS);
}

static void hr_cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j)
{
	for (size_t k = 0; k < n; k++) {
		struct pw_hrtimer *t = &htimers[idx[k]];
		pw_hrtimer_try_to_cancel(t);
		pw_hrtimer_start(t, (now_j + delta[k]) * 1000000ull + (delta[k] & 0xfffff),
				 PW_HRTIMER_MODE_ABS);
	}
}

static uint64_t hr_expire_round(unsigned n, uint64_t window_j, double *ns)
{
	uint64_t now = pw_now_ns(prt), before = pfired;
	for (unsigned i = 0; i < n; i++)
		pw_hrtimer_start(&htimers[i], now + 1 + xs() % (window_j * 1000000ull),
				 PW_HRTIMER_MODE_ABS);
	uint64_t t0 = now_ns();
	pw_sim_advance(prt, (window_j + 1) * 1000000ull);
	*ns = (double)(now_ns() - t0);
	return pfired - before;
}

static void hr_teardown(void)
{
	pw_cpu_exit(prt);
	pw_runtime_destroy(prt);
	free(htimers);
	prt = NULL;
	htimers = NULL;
}

/* ---- reference d-ary heaps (not pinwheel: what event loops use) -------- */

static struct ref_heap rheap;
static struct ref_timer *rtimers;
static enum pw_clock_id rclock;
static uint64_t rsim_now;

static void ref_cb(struct ref_timer *t)
{
	(void)t;
	pfired++;
}

static uint64_t ref_now(void)
{
	return rclock == PW_CLOCK_SIM ? rsim_now : now_ns();
}

static int ref_setup_d(unsigned n, enum pw_clock_id clock, unsigned d)
{
	rclock = clock;
	rsim_now = 10000000000ull;
	if (ref_heap_init(&rheap, d, n))
		return -ENOMEM;
	rtimers = calloc(n, sizeof(*rtimers));
	if (!rtimers)
		return -ENOMEM;
	pn = n;
	uint64_t now = ref_now();
	for (unsigned i = 0; i < n; i++) {
		rtimers[i].fn = ref_cb;
		rtimers[i].idx = REF_NOT_QUEUED;
		ref_heap_add(&rheap, &rtimers[i],
			     now + (1000 + xs() % 9000) * 1000000ull + xs() % 1000000);
	}
	return 0;
}

static int ref_setup2(unsigned n, enum pw_clock_id clock)
{
	return ref_setup_d(n, clock, 2);
}

static int ref_setup4(unsigned n, enum pw_clock_id clock)
{
	return ref_setup_d(n, clock, 4);
}

static uint64_t ref_now_j(void)
{
	return ref_now() / 1000000;
}

static uint64_t ref_poll(void)
{
	return ref_heap_expire(&rheap, ref_now());
}

static void ref_rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j)
{
	for (size_t k = 0; k < n; k++)
		ref_heap_update(&rheap, &rtimers[idx[k]],
				(now_j + delta[k]) * 1000000ull + (delta[k] & 0xfffff));
}

static void ref_rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == pn ? 0 : first + 1)
		ref_heap_update(&rheap, &rtimers[first], rtimers[first].key);
}

static void ref_cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j)
{
	for (size_t k = 0; k < n; k++) {
		ref_heap_remove(&rheap, &rtimers[idx[k]]);
		ref_heap_add(&rheap, &rtimers[idx[k]],
			     (now_j + delta[k]) * 1000000ull + (delta[k] & 0xfffff));
	}
}

static uint64_t ref_expire_round(unsigned n, uint64_t window_j, double *ns)
{
	uint64_t now = rsim_now, before = pfired;
	for (unsigned i = 0; i < n; i++)
		ref_heap_update(&rheap, &rtimers[i], now + 1 + xs() % (window_j * 1000000ull));
	uint64_t t0 = now_ns();
	rsim_now += (window_j + 1) * 1000000ull;
	ref_heap_expire(&rheap, rsim_now);
	*ns = (double)(now_ns() - t0);
	return pfired - before;
}

static void ref_teardown(void)
{
	ref_heap_free(&rheap);
	free(rtimers);
	rtimers = NULL;
}

static const struct bench_impl impls[] = {
	{"pinwheel", pw_setup, pw_now_j, pw_poll, pw_rearm, pw_rearm_same, pw_cancel_add,
	 pw_expire_round, pw_teardown},
	{"pinwheel-hrtimer", hr_setup, hr_now_j, pw_poll, hr_rearm, hr_rearm_same, hr_cancel_add,
	 hr_expire_round, hr_teardown},
	{"heap", ref_setup2, ref_now_j, ref_poll, ref_rearm, ref_rearm_same, ref_cancel_add,
	 ref_expire_round, ref_teardown},
	{"heap4", ref_setup4, ref_now_j, ref_poll, ref_rearm, ref_rearm_same, ref_cancel_add,
	 ref_expire_round, ref_teardown},
};

/* ---- harness ----------------------------------------------------------- */

struct result {
	const char *impl, *workload;
	unsigned pending;
	double median, min;
	unsigned reps;
	uint64_t ops;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void summarize(struct result *r, double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	r->min = v[0];
	r->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	r->reps = n;
}

static unsigned *index_stream(unsigned n, uint64_t ops)
{
	unsigned *idx = malloc(ops * sizeof(*idx));
	if (!idx)
		return NULL;
	for (uint64_t k = 0; k < ops; k++)
		idx[k] = (unsigned)(xs() % n);
	return idx;
}

static int run_workload(const struct bench_impl *im, const char *wl, unsigned n, unsigned reps,
			uint64_t ops, enum pw_clock_id clock, struct result *res)
{
	double v[MAX_REPS];
	bool expire = !strcmp(wl, "expire");
	int r = im->setup(n, expire ? PW_CLOCK_SIM : clock);
	if (r) {
		fprintf(stderr, "pinwheel-bench: %s setup failed: %s\n", im->name, strerror(-r));
		return r;
	}
	unsigned *idx = expire ? NULL : index_stream(n, ops);
	uint64_t *delta = expire ? NULL : malloc(ops * sizeof(*delta));
	if (!expire && (!idx || !delta)) {
		fprintf(stderr, "pinwheel-bench: out of memory\n");
		return -ENOMEM;
	}
	for (uint64_t k = 0; !expire && k < ops; k++)
		delta[k] = 1000 + xs() % 9000;

	for (unsigned rep = 0; rep < reps; rep++) {
		if (expire) {
			double total = 0, ns;
			uint64_t fired = 0;
			while (fired < ops) {
				uint64_t f = im->expire_round(n, 1000, &ns);
				if (f != n) {
					fprintf(stderr, "pinwheel-bench: expire fired %llu of %u\n",
						(unsigned long long)f, n);
					return -EIO;
				}
				fired += f;
				total += ns;
			}
			v[rep] = total / (double)fired;
			res->ops = fired;
			continue;
		}
		uint64_t t0 = now_ns();
		int kind = !strcmp(wl, "rearm") ? 0 : !strcmp(wl, "rearm_same") ? 1 : 2;
		for (uint64_t k = 0; k < ops;) {
			/* One event-loop iteration: read the clock once, do a
			 * batch of operations, run what is due. */
			uint64_t jn = im->now_j();
			size_t b = k + BATCH < ops ? BATCH : (size_t)(ops - k);
			if (kind == 0)
				im->rearm(idx + k, delta + k, b, jn);
			else if (kind == 1)
				im->rearm_same((unsigned)(k % n), b);
			else
				im->cancel_add(idx + k, delta + k, b, jn);
			k += b;
			im->poll();
		}
		v[rep] = (double)(now_ns() - t0) / (double)ops;
		res->ops = ops;
	}
	free(idx);
	free(delta);
	im->teardown();
	res->impl = im->name;
	res->workload = wl;
	res->pending = n;
	summarize(res, v, reps);
	return 0;
}

static void machine(char *buf, size_t len)
{
	char model[128] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[256];
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');
				if (p) {
					snprintf(model, sizeof(model), "%s", p + 2);
					model[strcspn(model, "\n")] = 0;
				}
				break;
			}
		fclose(f);
	}
	struct utsname u;
	uname(&u);
	snprintf(buf, len, "%s, %ld cores, Linux %s", model, sysconf(_SC_NPROCESSORS_ONLN),
		 u.release);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: pinwheel-bench [--json] [--sizes N,N,...] [--reps R] [--ops N]\n"
		   "                      [--clock mono|sim] [--workloads rearm,rearm_same,cancel_add,expire]\n"
		   "       pinwheel-bench lateness [--json] [--samples N]\n"
		   "defaults: --sizes 1000,100000,1000000 --reps 5 --ops 2000000 --clock mono;\n"
		   "          lateness: --samples 10000 (about a minute)\n");
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi) {
		fprintf(stderr, "pinwheel-bench: %s: bad value '%s' (want %llu..%llu)\n", opt, s,
			(unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *all_wl[] = {"rearm", "rearm_same", "cancel_add", "expire"};
	const char *wls[4];
	unsigned nwl = 4;
	unsigned sizes[MAX_SIZES] = {1000, 100000, 1000000};
	unsigned nsizes = 3;
	uint64_t reps = 5, ops = 2000000;
	int json = 0;
	enum pw_clock_id clock = PW_CLOCK_MONOTONIC;

	memcpy(wls, all_wl, sizeof(wls));
	if (argc > 1 && !strcmp(argv[1], "lateness")) {
		uint64_t samples = 10000;
		int ljson = 0;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--json")) {
				ljson = 1;
			} else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
				if (parse_u64("--samples", argv[++i], 10, 10000000, &samples))
					return 2;
			} else {
				fprintf(stderr, "pinwheel-bench lateness: unknown or incomplete option '%s'\n",
					argv[i]);
				usage(stderr);
				return 2;
			}
		}
		char mach[256];
		machine(mach, sizeof(mach));
		return lateness_main((unsigned)samples, ljson, mach);
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--reps") && val) {
			if (parse_u64(a, val, 1, MAX_REPS, &reps))
				return 2;
			i++;
		} else if (!strcmp(a, "--ops") && val) {
			if (parse_u64(a, val, 1000, 1000000000, &ops))
				return 2;
			i++;
		} else if (!strcmp(a, "--clock") && val) {
			if (!strcmp(val, "mono"))
				clock = PW_CLOCK_MONOTONIC;
			else if (!strcmp(val, "sim"))
				clock = PW_CLOCK_SIM;
			else {
				fprintf(stderr, "pinwheel-bench: --clock: bad value '%s' (want mono or sim)\n", val);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--sizes") && val) {
			char buf[256];
			snprintf(buf, sizeof(buf), "%s", val);
			nsizes = 0;
			for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
				uint64_t v;
				if (nsizes == MAX_SIZES || parse_u64("--sizes", tok, 1, 50000000, &v))
					return 2;
				sizes[nsizes++] = (unsigned)v;
			}
			if (!nsizes) {
				fprintf(stderr, "pinwheel-bench: --sizes: empty list\n");
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--workloads") && val) {
			char buf[256];
			snprintf(buf, sizeof(buf), "%s", val);
			nwl = 0;
			for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
				unsigned k;
				for (k = 0; k < 4 && strcmp(tok, all_wl[k]); k++)
					;
				if (k == 4 || nwl == 4) {
					fprintf(stderr, "pinwheel-bench: --workloads: unknown workload '%s'\n", tok);
					return 2;
				}
				wls[nwl++] = all_wl[k];
			}
			if (!nwl) {
				fprintf(stderr, "pinwheel-bench: --workloads: empty list\n");
				return 2;
			}
			i++;
		} else {
			fprintf(stderr, "pinwheel-bench: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}

	char mach[256];
	machine(mach, sizeof(mach));
	if (json)
		printf("[");
	else
		printf("# pinwheel-bench on %s\n# clock %s, %llu ops a repetition, %llu repetitions\n"
		       "%-10s %-11s %9s %12s %12s\n",
		       mach, clock == PW_CLOCK_SIM ? "sim" : "monotonic", (unsigned long long)ops,
		       (unsigned long long)reps, "impl", "workload", "pending", "median ns/op",
		       "min ns/op");
	int first = 1;
	for (size_t m = 0; m < sizeof(impls) / sizeof(impls[0]); m++)
		for (unsigned w = 0; w < nwl; w++)
			for (unsigned s = 0; s < nsizes; s++) {
				struct result r = {0};
				if (run_workload(&impls[m], wls[w], sizes[s], (unsigned)reps, ops, clock, &r))
					return 1;
				if (json) {
					printf("%s\n  {\"impl\": \"%s\", \"workload\": \"%s\", \"pending\": %u, "
					       "\"ns_per_op\": %.3f, \"min_ns_per_op\": %.3f, \"reps\": %u, "
					       "\"ops\": %llu, \"clock\": \"%s\", \"machine\": \"%s\"}",
					       first ? "" : ",", r.impl, r.workload, r.pending, r.median,
					       r.min, r.reps, (unsigned long long)r.ops,
					       !strcmp(r.workload, "expire") || clock == PW_CLOCK_SIM
						       ? "sim"
						       : "monotonic",
					       mach);
				} else {
					printf("%-10s %-11s %9u %12.2f %12.2f\n", r.impl, r.workload,
					       r.pending, r.median, r.min);
				}
				fflush(stdout);
				first = 0;
			}
	if (json)
		printf("\n]\n");
	return 0;
}
