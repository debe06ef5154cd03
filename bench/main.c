/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: the timer operations network code does all day, for
 * pinwheel and its peers side by side, through one ops table (bench.h).
 * A benchmark, not a test: it prints numbers and judges nothing.
 *
 * Implementations: pinwheel (wheel timers), pinwheel-hrtimer, libevent,
 * libuv, libev, dpdk (rte_timer), and two reference designs written here:
 * heap (a binary min-heap: what the event loops use; heap4, its 4-ary
 * variant) and global-lock (the Linux 2.4 design: one cascading wheel
 * behind one lock, no mod_timer fast path).  Peers are found at configure
 * time; a missing one is listed as skipped, with the reason.
 *
 * Workloads, each at every --sizes count of pending timers:
 *   rearm       re-arm a random timer to a random expiry 1-10 s out (the TCP
 *               retransmit pattern).
 *   rearm_same  re-arm a timer to the expiry it already has (the mod_timer
 *               fast path of seed 001); timers visited in order, so this
 *               measures the call, not a cache miss per timer.
 *   cancel_add  cancel + add a random timer, random expiry.
 *   expire      N timers due; run them all; per-timer cost, callback
 *               included.  Libraries that can simulate time (pinwheel, the
 *               reference designs) spread the N over 1 s and step the clock;
 *               the real-clock peers arm all N already due and run one pass.
 *   conn_mix    connections of four timers each: a pace timer re-armed per
 *               message, a deadline pushed later on every response and
 *               cancelled at the end, an idle timer re-armed per message, a
 *               close timer armed at the end; one seeded sequence, replayed
 *               identically against every implementation (nothing is run
 *               during the replay, so every implementation does the same
 *               calls).  ns per timer call.
 *   memory      bytes per pending timer (the caller's object + what the
 *               structure adds), and the resident memory per 1e6 timers.
 * The operations run as an event loop runs them: the loop time is read once
 * per batch of 256 and expiries are computed from it, then what is due runs.
 * Each measurement is repeated (--reps, >= 5 by default): the median and
 * the minimum are printed, so noise is visible.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "lateness.h"
#include "idle.h"
#include "wake.h"
#include "scaling.h"

#define MAX_SIZES 16
#define MAX_REPS 101
#define MAX_IMPLS 16
#define MAX_RESULTS 1024
#define BATCH 256

uint64_t bench_fired;
static __thread uint64_t rng = 0x2545f4914f6cdd1dull; /* per thread: scaling workers */

uint64_t bench_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct {
	const char *name;
	const struct bench_impl *(*get)(const char **why);
} registry[] = {
	{"pinwheel", bench_impl_pinwheel},
	{"pinwheel-hrtimer", bench_impl_pinwheel_hrtimer},
	{"libevent", bench_impl_libevent},
	{"libuv", bench_impl_libuv},
	{"libev", bench_impl_libev},
	{"dpdk", bench_impl_dpdk},
	{"heap", bench_impl_heap},
	{"heap4", bench_impl_heap4},
	{"global-lock", bench_impl_global_lock},
};
#define NREG (sizeof(registry) / sizeof(registry[0]))

static const char *const all_wl[] = {"rearm", "rearm_same", "cancel_add", "expire", "conn_mix",
				     "memory"};
#define NWL (sizeof(all_wl) / sizeof(all_wl[0]))

struct result {
	const char *impl, *workload;
	unsigned pending;
	double median, min; /* ns per op, or bytes per timer for memory */
	double rss_per_1e6; /* memory: resident bytes per 1e6 timers */
	unsigned reps;
	uint64_t ops;
};

static struct result results[MAX_RESULTS];
static unsigned nresults;

struct opts {
	unsigned sizes[MAX_SIZES], nsizes;
	const char *wls[NWL];
	unsigned nwl;
	bool use_impl[NREG];
	uint64_t reps, ops;
	int format; /* 0 table, 1 json, 2 csv */
	bool callgrind;
	enum pw_clock_id clock;
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

/* ---- the conn_mix sequence ------------------------------------------------ */

enum { CM_ARM, CM_CANCEL };
struct cm_op {
	uint32_t k;
	uint8_t kind;
	uint32_t delta; /* ms from the batch's loop time */
};

static struct cm_op *conn_mix_sequence(unsigned n, uint64_t ops, uint64_t *ncalls)
{
	unsigned conns = n / 4 ? n / 4 : 1;
	struct cm_op *seq = malloc((ops + 8) * sizeof(*seq));
	uint64_t s = 0x1234567887654321ull ^ n, m = 0;
	if (!seq)
		return NULL;
	while (m < ops) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		unsigned c = (unsigned)(s % conns), r = (unsigned)((s >> 32) % 100);
		uint32_t pace = 4 * c, deadline = pace + 1, idle = pace + 2, close = pace + 3;
		if (r < 60) { /* a message: pace it, the connection is not idle */
			seq[m++] = (struct cm_op){pace, CM_ARM, 1 + (uint32_t)((s >> 20) % 5)};
			seq[m++] = (struct cm_op){idle, CM_ARM, 60000};
		} else if (r < 85) { /* a response: push the deadline later */
			seq[m++] = (struct cm_op){deadline, CM_ARM, 1000 + (uint32_t)((s >> 24) % 1000)};
		} else if (r < 95) { /* the end: cancel, arm the close timer */
			seq[m++] = (struct cm_op){pace, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){deadline, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){idle, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){close, CM_ARM, 2000};
		} else { /* a new connection in the slot */
			seq[m++] = (struct cm_op){close, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){idle, CM_ARM, 60000};
			seq[m++] = (struct cm_op){deadline, CM_ARM, 1500};
		}
	}
	*ncalls = m;
	return seq;
}

/* The measured loops are in this function, so that
 * valgrind --tool=callgrind --toggle-collect=bench_measured counts them
 * alone. */
__attribute__((noinline)) void bench_measured(const struct bench_impl *im, int kind, unsigned n,
					      const unsigned *idx, const uint64_t *delta,
					      const struct cm_op *seq, uint64_t ops);
__attribute__((noinline)) void bench_measured(const struct bench_impl *im, int kind, unsigned n,
					      const unsigned *idx, const uint64_t *delta,
					      const struct cm_op *seq, uint64_t ops)
{
	for (uint64_t k = 0; k < ops;) {
		uint64_t jn = im->now_j();
		size_t b = k + BATCH < ops ? BATCH : (size_t)(ops - k);
		switch (kind) {
		case 0:
			im->rearm(idx + k, delta + k, b, jn);
			break;
		case 1:
			im->rearm_same((unsigned)(k % n), b);
			break;
		case 2:
			im->cancel_add(idx + k, delta + k, b, jn);
			break;
		default:
			for (size_t i = 0; i < b; i++) {
				const struct cm_op *o = &seq[k + i];
				if (o->kind == CM_ARM)
					im->arm(o->k, jn + o->delta);
				else
					im->cancel(o->k);
			}
			break;
		}
		k += b;
		if (kind != 3)
			im->poll();
	}
}

static long rss_pages(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res;
}

static int run_cell(const struct bench_impl *im, const char *wl, unsigned n,
		    const struct opts *o, struct result *res)
{
	double v[MAX_REPS];
	bool expire = !strcmp(wl, "expire"), memory = !strcmp(wl, "memory");
	int kind = !strcmp(wl, "rearm") ? 0 : !strcmp(wl, "rearm_same") ? 1
				: !strcmp(wl, "cancel_add") ? 2 : 3;
	uint64_t ops = o->ops;
	unsigned reps = o->callgrind ? 1 : (unsigned)o->reps;
	long rss0 = rss_pages();
	int r = im->setup(n, expire ? PW_CLOCK_SIM : o->clock);

	memset(res, 0, sizeof(*res));
	res->impl = im->name;
	res->workload = wl;
	res->pending = n;
	if (r) {
		fprintf(stderr, "pinwheel-bench: %s: setup of %u timers failed: %s\n", im->name, n,
			strerror(-r));
		return r;
	}
	if (memory) {
		res->median = res->min = (double)(im->timer_bytes + im->extra_bytes(n));
		res->rss_per_1e6 = (double)(rss_pages() - rss0) * (double)sysconf(_SC_PAGESIZE) /
				   n * 1e6;
		res->reps = 1;
		res->ops = n;
		im->teardown();
		return 0;
	}

	unsigned *idx = NULL;
	uint64_t *delta = NULL;
	struct cm_op *seq = NULL;
	if (kind == 3 && !expire) {
		seq = conn_mix_sequence(n, ops, &ops);
		if (!seq)
			return -ENOMEM;
	} else if (!expire) {
		idx = malloc(ops * sizeof(*idx));
		delta = malloc(ops * sizeof(*delta));
		if (!idx || !delta)
			return -ENOMEM;
		for (uint64_t k = 0; k < ops; k++) {
			idx[k] = (unsigned)(bench_rand() % n);
			delta[k] = 1000 + bench_rand() % 9000;
		}
	}
	for (unsigned rep = 0; rep < reps; rep++) {
		if (expire) {
			double total = 0, ns;
			uint64_t fired = 0;
			while (fired < ops) {
				uint64_t f = im->expire_round(n, 1000, &ns);
				if (f != n) {
					fprintf(stderr, "pinwheel-bench: %s: expire ran %llu of %u timers\n",
						im->name, (unsigned long long)f, n);
					return -EIO;
				}
				fired += f;
				total += ns;
			}
			v[rep] = total / (double)fired;
			res->ops = fired;
			continue;
		}
		uint64_t t0 = bench_now_ns();
		bench_measured(im, kind, n, idx, delta, seq, ops);
		v[rep] = (double)(bench_now_ns() - t0) / (double)ops;
		res->ops = ops;
	}
	free(idx);
	free(delta);
	free(seq);
	im->teardown();
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

static const struct result *find(const char *impl, const char *wl, unsigned pending)
{
	for (unsigned i = 0; i < nresults; i++)
		if (!strcmp(results[i].impl, impl) && !strcmp(results[i].workload, wl) &&
		    results[i].pending == pending)
			return &results[i];
	return NULL;
}

static void print_results(const struct opts *o, const char *mach)
{
	const char *clk = o->clock == PW_CLOCK_SIM ? "sim" : "monotonic";
	if (o->format == 1) {
		printf("[");
		for (unsigned i = 0; i < nresults; i++) {
			const struct result *r = &results[i];
			printf("%s\n  {\"impl\": \"%s\", \"workload\": \"%s\", \"pending\": %u, ", i ? "," : "",
			       r->impl, r->workload, r->pending);
			if (!strcmp(r->workload, "memory"))
				printf("\"bytes_per_timer\": %.1f, \"rss_bytes_per_1e6\": %.0f",
				       r->median, r->rss_per_1e6);
			else
				printf("\"ns_per_op\": %.3f, \"min_ns_per_op\": %.3f, \"reps\": %u, "
				       "\"ops\": %llu, \"clock\": \"%s\"",
				       r->median, r->min, r->reps, (unsigned long long)r->ops,
				       !strcmp(r->workload, "expire") ? "sim-or-due" : clk);
			printf(", \"machine\": \"%s\"}", mach);
		}
		printf("\n]\n");
		return;
	}
	if (o->format == 2) {
		printf("impl,workload,pending,ns_per_op,min_ns_per_op,bytes_per_timer,rss_bytes_per_1e6,"
		       "reps,ops,machine\n");
		for (unsigned i = 0; i < nresults; i++) {
			const struct result *r = &results[i];
			bool mem = !strcmp(r->workload, "memory");
			printf("%s,%s,%u,", r->impl, r->workload, r->pending);
			if (mem)
				printf(",,%.1f,%.0f,", r->median, r->rss_per_1e6);
			else
				printf("%.3f,%.3f,,,", r->median, r->min);
			printf("%u,%llu,\"%s\"\n", r->reps, (unsigned long long)r->ops, mach);
		}
		return;
	}
	printf("# pinwheel-bench on %s\n# clock %s, %llu ops a repetition, %llu repetitions; "
	       "x pinwheel: median / pinwheel's median\n",
	       mach, clk, (unsigned long long)o->ops, (unsigned long long)o->reps);
	printf("%-17s %-11s %9s %12s %12s %11s\n", "impl", "workload", "pending", "median ns/op",
	       "min ns/op", "x pinwheel");
	for (unsigned w = 0; w < o->nwl; w++)
		for (unsigned s = 0; s < o->nsizes; s++)
			for (unsigned i = 0; i < nresults; i++) {
				const struct result *r = &results[i];
				if (strcmp(r->workload, o->wls[w]) || r->pending != o->sizes[s])
					continue;
				const struct result *p = find("pinwheel", r->workload, r->pending);
				if (!strcmp(r->workload, "memory")) {
					printf("%-17s %-11s %9u %9.1f B/timer  RSS %.1f MB per 1e6 timers\n",
					       r->impl, r->workload, r->pending, r->median,
					       r->rss_per_1e6 / 1e6);
					continue;
				}
				printf("%-17s %-11s %9u %12.2f %12.2f", r->impl, r->workload, r->pending,
				       r->median, r->min);
				if (p && p->median > 0)
					printf(" %11.2f", r->median / p->median);
				printf("\n");
			}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pinwheel-bench [--json | --csv] [--sizes N,...] [--reps R] [--ops N]\n"
		"                      [--clock mono|sim] [--workloads W,...] [--impls I,...]\n"
		"                      [--callgrind]\n"
		"       pinwheel-bench lateness [--json] [--samples N]\n"
		"       pinwheel-bench scaling [--json | --csv] [--workers N] [--timers PER_WORKER] [--ms MS]\n"
		"       pinwheel-bench idle [--json] [--cpus N] [--ms MS]\n"
		"       pinwheel-bench wake [--json] [--rounds N]\n"
		"workloads: rearm rearm_same cancel_add expire conn_mix memory\n"
		"impls: pinwheel pinwheel-hrtimer libevent libuv libev dpdk heap heap4 global-lock\n"
		"defaults: --sizes 1000,10000,100000,1000000 --reps 5 --ops 1000000 --clock mono\n"
		"--callgrind: one repetition, fixed operation counts, nothing timed; run under\n"
		"  valgrind --tool=callgrind --toggle-collect=bench_measured and divide by ops\n"
		"lateness: --samples 10000 (about a minute)\n"
		"scaling: --workers <online CPUs> --timers 10000 --ms 1000 (per configuration)\n"
		"idle: --cpus <online CPUs, at least 2> --ms 2000 (per migration policy)\n"
		"wake: --rounds 20000 (futex vs eventfd+epoll vs +timerfd ping-pong)\n");
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

/* One numeric option of a subcommand (lateness, scaling, idle, wake). */
struct num_opt {
	const char *name;
	uint64_t lo, hi;
	uint64_t *val;
};

/* Parse the options of subcommand argv[1]: --json (*@format = 1), --csv (2,
 * if @csv_ok) and the @n numeric ones.  Return: 0, or -1 after a message
 * naming the bad option or value. */
static int parse_sub(int argc, char **argv, const struct num_opt *nums, unsigned n, bool csv_ok,
		     int *format)
{
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			*format = 1;
			continue;
		}
		if (csv_ok && !strcmp(argv[i], "--csv")) {
			*format = 2;
			continue;
		}
		unsigned k = 0;
		while (k < n && strcmp(argv[i], nums[k].name))
			k++;
		if (k < n && i + 1 < argc) {
			if (parse_u64(nums[k].name, argv[++i], nums[k].lo, nums[k].hi, nums[k].val))
				return -1;
			continue;
		}
		fprintf(stderr, "pinwheel-bench %s: unknown or incomplete option '%s'\n", argv[1],
			argv[i]);
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Split the comma list @val; call @each for every item.  Return: -1 on a bad
 * item or an empty list (after a message naming it). */
static int for_each_item(const char *opt, const char *val, int (*each)(const char *, void *),
			 void *ctx)
{
	char buf[512];
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", val);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), n++)
		if (each(tok, ctx))
			return -1;
	if (!n) {
		fprintf(stderr, "pinwheel-bench: %s: empty list\n", opt);
		return -1;
	}
	return 0;
}

static int add_size(const char *tok, void *ctx)
{
	struct opts *o = ctx;
	uint64_t v;
	if (o->nsizes == MAX_SIZES) {
		fprintf(stderr, "pinwheel-bench: --sizes: more than %d sizes\n", MAX_SIZES);
		return -1;
	}
	if (parse_u64("--sizes", tok, 4, 20000000, &v))
		return -1;
	o->sizes[o->nsizes++] = (unsigned)v;
	return 0;
}

static int add_workload(const char *tok, void *ctx)
{
	struct opts *o = ctx;
	for (unsigned k = 0; k < NWL; k++)
		if (!strcmp(tok, all_wl[k]) && o->nwl < NWL) {
			o->wls[o->nwl++] = all_wl[k];
			return 0;
		}
	fprintf(stderr, "pinwheel-bench: --workloads: unknown workload '%s'\n", tok);
	return -1;
}

static int add_impl(const char *tok, void *ctx)
{
	struct opts *o = ctx;
	for (unsigned k = 0; k < NREG; k++)
		if (!strcmp(tok, registry[k].name)) {
			o->use_impl[k] = true;
			return 0;
		}
	fprintf(stderr, "pinwheel-bench: --impls: unknown implementation '%s'\n", tok);
	return -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	bool impls_given = false;
	memset(o, 0, sizeof(*o));
	o->reps = 5;
	o->ops = 1000000;
	o->clock = PW_CLOCK_MONOTONIC;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;
		if (!strcmp(a, "--json"))
			o->format = 1;
		else if (!strcmp(a, "--csv"))
			o->format = 2;
		else if (!strcmp(a, "--callgrind"))
			o->callgrind = true;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!val) {
			bad = 1;
		} else if (!strcmp(a, "--reps")) {
			bad = parse_u64(a, val, 1, MAX_REPS, &o->reps), i++;
		} else if (!strcmp(a, "--ops")) {
			bad = parse_u64(a, val, 1000, 1000000000, &o->ops), i++;
		} else if (!strcmp(a, "--clock")) {
			i++;
			if (!strcmp(val, "mono"))
				o->clock = PW_CLOCK_MONOTONIC;
			else if (!strcmp(val, "sim"))
				o->clock = PW_CLOCK_SIM;
			else {
				fprintf(stderr, "pinwheel-bench: --clock: bad value '%s' (want mono or sim)\n",
					val);
				return -1;
			}
		} else if (!strcmp(a, "--sizes")) {
			bad = for_each_item(a, val, add_size, o), i++;
		} else if (!strcmp(a, "--workloads")) {
			bad = for_each_item(a, val, add_workload, o), i++;
		} else if (!strcmp(a, "--impls")) {
			bad = for_each_item(a, val, add_impl, o), i++, impls_given = true;
		} else {
			bad = 1;
		}
		if (bad) {
			if (bad == 1)
				fprintf(stderr, "pinwheel-bench: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return -1;
		}
	}
	if (!o->nsizes) {
		unsigned def[] = {1000, 10000, 100000, 1000000};
		memcpy(o->sizes, def, sizeof(def));
		o->nsizes = 4;
	}
	if (!o->nwl)
		for (unsigned k = 0; k < NWL; k++)
			o->wls[o->nwl++] = all_wl[k];
	if (!impls_given)
		for (unsigned k = 0; k < NREG; k++)
			o->use_impl[k] = true;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	char mach[256];

	machine(mach, sizeof(mach));
	/* A fixed mmap threshold: big arrays are mapped and unmapped, never kept
	 * resident by malloc for the next implementation, so the memory
	 * workload's resident-set deltas are each implementation's own. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	if (argc > 1 && !strcmp(argv[1], "lateness")) {
		uint64_t samples = 10000;
		int format = 0;
		const struct num_opt nums[] = {{"--samples", 10, 10000000, &samples}};
		if (parse_sub(argc, argv, nums, 1, false, &format))
			return 2;
		return lateness_main((unsigned)samples, format == 1, mach);
	}
	if (argc > 1 && !strcmp(argv[1], "scaling")) {
		uint64_t workers = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN), per = 10000, ms = 1000;
		int format = 0;
		const struct num_opt nums[] = {{"--workers", 1, 1024, &workers},
					       {"--timers", 1, 10000000, &per},
					       {"--ms", 10, 600000, &ms}};
		if (parse_sub(argc, argv, nums, 3, true, &format))
			return 2;
		return scaling_main((unsigned)workers, (double)ms / 1000.0, (unsigned)per, format, mach);
	}
	if (argc > 1 && !strcmp(argv[1], "wake")) {
		uint64_t rounds = 20000;
		int format = 0;
		const struct num_opt nums[] = {{"--rounds", 1, 100000000, &rounds}};
		if (parse_sub(argc, argv, nums, 1, false, &format))
			return 2;
		return wake_main((unsigned)rounds, format == 1, mach);
	}
	if (argc > 1 && !strcmp(argv[1], "idle")) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		uint64_t cpus = online > 2 ? (uint64_t)online : 2, ms = 2000;
		int format = 0;
		const struct num_opt nums[] = {{"--cpus", 2, 4096, &cpus}, {"--ms", 10, 600000, &ms}};
		if (parse_sub(argc, argv, nums, 2, false, &format))
			return 2;
		return idle_main((unsigned)cpus, (unsigned)ms, format == 1, mach);
	}
	if (parse_args(argc, argv, &o))
		return 2;

	for (unsigned k = 0; k < NREG; k++) {
		if (!o.use_impl[k])
			continue;
		const char *why = "not built: its development package was not found when "
				  "configuring (see bench/CMakeLists.txt)";
		const struct bench_impl *im = registry[k].get ? registry[k].get(&why) : NULL;
		if (!im) {
			fprintf(stderr, "pinwheel-bench: skipping %s: %s\n", registry[k].name, why);
			continue;
		}
		for (unsigned w = 0; w < o.nwl; w++)
			for (unsigned s = 0; s < o.nsizes; s++) {
				if (nresults == MAX_RESULTS)
					break;
				if (run_cell(im, o.wls[w], o.sizes[s], &o, &results[nresults]))
					return 1;
				if (o.callgrind)
					fprintf(stderr, "pinwheel-bench: %s %s %u: %llu operations\n",
						im->name, o.wls[w], o.sizes[s],
						(unsigned long long)results[nresults].ops);
				nresults++;
			}
	}
	if (!o.callgrind)
		print_results(&o, mach);
	return 0;
}
