/* SPDX-License-Identifier: MIT */
/*
 * netem (src/net/sched/netem.c) on the simulated clock, deterministically
 * (every qdisc is given a `seed`, the test's own choices come from a
 * fixed-seed xorshift).  What is tested, against the kernel's sch_netem.c:
 *
 *  - the PRNG: the test's own LFSR113 (prandom_u32_state) checked against
 *    the kernel's self-test vectors, then used to recompute netem's draws
 *    bit for bit (delay, correlation via get_crandom(), loss, duplicate,
 *    corrupt, reorder, slot distribution);
 *  - delay: uniform jitter, the built-in normal/pareto/paretonormal tables
 *    and the installed iproute2 tables (skipped when absent): 1e5 packets,
 *    each leaving at send + max(delay, 0) to the nanosecond, the delays a
 *    Kolmogorov-Smirnov test against the exact discrete CDF of tabledist()
 *    (table values, rnd % n, the rounding, the modulo bias of the uniform),
 *    mean and sd against closed forms; correlated delay bit-exact;
 *  - loss: random (rate, bit-exact, with correlation), the 4-state and
 *    Gilbert-Elliott chains (stationary loss rate and mean burst length
 *    against closed forms, tolerances from the chain's asymptotic
 *    variance), ecn (ECT and CE marked, not-ECT dropped);
 *  - duplicate (clone op, clone failures, pw__netem_dup_failed()), corrupt
 *    (exactly one bit below caplen, the rate, bit/byte uniformity),
 *    reorder with gap (the kernel's counter semantics, the rate);
 *  - rate with packet overhead and cells (departures exactly the wire
 *    time), slot (uniform, bytes budget, distribution), limit (drops,
 *    backlog, duplicates at the limit);
 *  - seed: same seed same trace, other seed another;
 *  - the time-ordered queue (time order, ties in arrival order), tc change
 *    with packets queued, and delete/replace/destroy with packets queued;
 *  - `inorder` (pinwheel's extension): each packet at max(send + its draw,
 *    the previous packet's time) to the ns, none overtaken, the held count
 *    tc -d shows, the sojourn figures beside plain netem's at 100 to
 *    100,000 packets/s (docs/design/net.md), with rate (rate's times
 *    exactly), a change with packets queued, and the refusals.
 *
 * In every test each packet handed to the layer (and each duplicate) comes
 * back exactly once, through xmit or drop: the ledger is checked at the
 * end of each test.
 *
 * Statistical checks: each states its false-failure probability for a
 * correct implementation.  With the fixed seeds the outcome is fixed; the
 * probabilities say how likely a correct change of the draw order (which
 * changes the samples) would trip a check by chance.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "tc/dist.h"
#include "internal.h"
#include "sched/netem.h"
#include "sim.h"

#define T0 1000000000ull   /* the simulated clock starts at 1 s */
#define MS 1000000ll
#define DATALEN 64
#define TWO32 4294967296.0

/* KS at level 1e-4: sqrt(-ln(alpha / 2) / 2) / sqrt(n).  For a discrete
 * law the test is conservative: P(false failure) <= 1e-4. */
#define KS_C 2.2254

/* ---------------------------------------------------- test randomness */

static uint64_t xs = 88172645463325252ull;
static void xs_seed(uint64_t s)
{
	xs = s ? s : 1;
}
static uint64_t xs_next(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}
static uint32_t xs_range(uint32_t lo, uint32_t hi) /* [lo, hi] */
{
	return lo + (uint32_t)(xs_next() % ((uint64_t)hi - lo + 1));
}

/* ------------------------------------------------ the kernel's PRNG */

/* LFSR113 as lib/random32.c's prandom_u32_state(), seeded as
 * prandom_seed_state() (include/linux/prandom.h). */
struct lfsr {
	uint32_t s1, s2, s3, s4;
};

static uint32_t at_least(uint32_t x, uint32_t m)
{
	return x < m ? x + m : x;
}

static void lfsr_seed(struct lfsr *r, uint64_t seed)
{
	uint32_t i = (uint32_t)((seed >> 32) ^ (seed << 10) ^ seed);
	r->s1 = at_least(i, 2);
	r->s2 = at_least(i, 8);
	r->s3 = at_least(i, 16);
	r->s4 = at_least(i, 128);
}

static uint32_t taus(uint32_t s, unsigned a, unsigned b, uint32_t mask, unsigned d)
{
	return ((s & mask) << d) ^ (((s << a) ^ s) >> b);
}

static uint32_t lfsr_next(struct lfsr *r)
{
	r->s1 = taus(r->s1, 6, 13, 0xfffffffeu, 18);
	r->s2 = taus(r->s2, 2, 27, 0xfffffff8u, 2);
	r->s3 = taus(r->s3, 13, 21, 0xfffffff0u, 7);
	r->s4 = taus(r->s4, 3, 12, 0xffffff80u, 13);
	return r->s1 ^ r->s2 ^ r->s3 ^ r->s4;
}

/* get_crandom(): the correlated source. */
struct corr {
	uint32_t last, rho;
};

static uint32_t crandom(struct lfsr *r, struct corr *c)
{
	uint32_t v = lfsr_next(r);
	if (!c || c->rho == 0)
		return v;
	uint64_t rho = (uint64_t)c->rho + 1;
	c->last = (uint32_t)(((uint64_t)v * ((1ull << 32) - rho) + (uint64_t)c->last * rho) >> 32);
	return c->last;
}

/* tabledist() of sch_netem.c, for sigma > 0. */
static int64_t k_tabledist(int64_t mu, int32_t sigma, uint32_t rnd, const int16_t *t, unsigned n)
{
	if (sigma == 0)
		return mu;
	if (!t)
		return (int64_t)(rnd % (2u * (uint32_t)sigma)) + mu - sigma;
	int64_t v = t[rnd % n];
	int64_t x = (int64_t)(sigma % 8192) * v;
	x += x >= 0 ? 4096 : -4096;
	return x / 8192 + (int64_t)(sigma / 8192) * v + mu;
}

/* iproute2's get_percent(): rint(p * UINT32_MAX). */
static uint32_t pct(double percent)
{
	return (uint32_t)rint(percent / 100.0 * 4294967295.0);
}

/* The kernel's own LFSR113 self-test (lib/random32.c): prandom_seed_early()
 * without hardware seed, ten warm-up draws, then the first draw (test1) or
 * the iteration-th draw (test2, from GSL's taus113). */
static void test_lfsr_vectors(void)
{
	static const struct {
		uint32_t seed, iter, result;
	} v[] = {
		{ 1u, 1, 3484351685u },         { 2u, 1, 2623130059u },
		{ 3u, 1, 3125133893u },         { 4u, 1, 984847254u },
		{ 931557656u, 959, 2975593782u }, { 1339693295u, 876, 3887776532u },
		{ 1545556285u, 961, 1615538833u }, { 407983964u, 921, 728767059u },
	};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		struct lfsr r;
		r.s1 = at_least(v[k].seed * 69069u, 2);
		r.s2 = at_least(r.s1 * 69069u, 8);
		r.s3 = at_least(r.s2 * 69069u, 16);
		r.s4 = at_least(r.s3 * 69069u, 128);
		for (int i = 0; i < 10; i++)
			lfsr_next(&r);
		uint32_t x = 0;
		for (uint32_t i = 0; i < v[k].iter; i++)
			x = lfsr_next(&r);
		CHECK_EQ(x, v[k].result);
	}
	/* prandom_seed_state()'s mixing and floors */
	struct lfsr r;
	lfsr_seed(&r, 0);
	CHECK(r.s1 == 2 && r.s2 == 8 && r.s3 == 16 && r.s4 == 128);
	lfsr_seed(&r, 1ull << 32); /* (seed >> 32) ^ (seed << 10) ^ seed = 1 (mod 2^32) */
	CHECK(r.s1 == 3 && r.s2 == 9 && r.s3 == 17 && r.s4 == 129);
	lfsr_seed(&r, 0x100000001ull); /* 1 ^ (1 << 10) ^ 1 */
	CHECK(r.s1 == 1024 && r.s4 == 1024);
	CHECK_EQ(pct(25), 1073741824u);
	CHECK_EQ(pct(100), 0xffffffffu);
}

/* ---------------------------------------------------------- the driver */

enum { CLONE_COPY, CLONE_SHARE, CLONE_FAIL_ODD };

struct ledger {
	struct pw_pkt *pkts;
	unsigned cap, n;
	uint8_t *state;   /* 0 unused, 1 in the layer, 2 sent, 3 dropped */
	uint8_t *reason;
	int32_t *parent;  /* -1 an original, else the packet it duplicates */
	uint64_t *send_ns, *xmit_ns;
	unsigned *order;  /* packet indices in xmit order */
	unsigned norder;
	uint64_t sent, dropped, drop_by[PW_DROP_REASON_MAX];
	uint8_t *data;    /* DATALEN bytes per packet, or NULL */
	int clone_mode;
	unsigned clone_calls;
	int busy_left;
	struct pw_runtime *rt;
	struct pw_netdev *dev;
};

static struct ledger L;

static unsigned idx_of(const struct pw_pkt *p)
{
	CHECK(p >= L.pkts && p < L.pkts + L.n);
	return (unsigned)(p - L.pkts);
}

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)ctx;
	unsigned i = idx_of(p);
	CHECK_EQ(L.state[i], 1);
	if (L.busy_left > 0) {
		L.busy_left--;
		return PW_NETDEV_TX_BUSY;
	}
	L.state[i] = 2;
	L.sent++;
	L.xmit_ns[i] = pw_now_ns(L.rt);
	L.order[L.norder++] = i;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)ctx;
	unsigned i = idx_of(p);
	CHECK_EQ(L.state[i], 1);
	CHECK(r > 0 && r < PW_DROP_REASON_MAX);
	L.state[i] = 3;
	L.reason[i] = (uint8_t)r;
	L.dropped++;
	L.drop_by[r]++;
}

/* The clone op: the test's memory, a new ledger entry (called under the
 * queue lock: no call into the layer). */
static struct pw_pkt *drv_clone(struct pw_netdev *dev, const struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)ctx;
	unsigned src = idx_of(p);
	CHECK_EQ(L.state[src], 1);
	L.clone_calls++;
	if (L.clone_mode == CLONE_FAIL_ODD && (L.clone_calls & 1))
		return NULL;
	CHECK(L.n < L.cap);
	unsigned i = L.n++;
	struct pw_pkt *c = &L.pkts[i];
	pw_pkt_init(c, NULL, p->len);
	c->caplen = p->caplen;
	c->hash = p->hash;
	c->ecn = p->ecn;
	c->user = p->user;
	if (p->data) {
		if (L.clone_mode == CLONE_SHARE) {
			c->data = p->data;
		} else {
			c->data = L.data + (size_t)i * DATALEN;
			memcpy(c->data, p->data, DATALEN);
		}
	}
	L.state[i] = 1;
	L.parent[i] = (int32_t)src;
	L.send_ns[i] = pw_now_ns(L.rt);
	return c;
}

static const struct pw_netdev_ops ops_plain = { .xmit = drv_xmit, .drop = drv_drop };
static const struct pw_netdev_ops ops_clone = { .xmit = drv_xmit, .drop = drv_drop,
						.clone = drv_clone };

static void ledger_free(void)
{
	free(L.pkts);
	free(L.state);
	free(L.reason);
	free(L.parent);
	free(L.send_ns);
	free(L.xmit_ns);
	free(L.order);
	free(L.data);
	memset(&L, 0, sizeof(L));
}

/* A runtime (one CPU, the clock at T0), a ledger for @cap packets (with
 * data buffers if @data) and device eth0 (one queue). */
static void env_init(unsigned cap, bool clone, bool data)
{
	ledger_free();
	L.cap = cap;
	L.pkts = calloc(cap, sizeof(*L.pkts));
	L.state = calloc(cap, 1);
	L.reason = calloc(cap, 1);
	L.parent = calloc(cap, sizeof(*L.parent));
	L.send_ns = calloc(cap, sizeof(*L.send_ns));
	L.xmit_ns = calloc(cap, sizeof(*L.xmit_ns));
	L.order = calloc(cap, sizeof(*L.order));
	CHECK(L.pkts && L.state && L.reason && L.parent && L.send_ns && L.xmit_ns && L.order);
	if (data) {
		L.data = calloc(cap, DATALEN);
		CHECK(L.data);
	}
	L.rt = sim_create(1, 1000, T0, 0);
	CHECK_EQ(pw_netdev_create(L.rt, "eth0", 1, clone ? &ops_clone : &ops_plain, NULL, &L.dev),
		 0);
}

/* Every packet came back exactly once. */
static void ledger_check_all_back(void)
{
	for (unsigned i = 0; i < L.n; i++)
		CHECK(L.state[i] == 2 || L.state[i] == 3);
	CHECK_EQ(L.sent + L.dropped, L.n);
	CHECK_EQ(L.norder, L.sent);
}

/* Destroy the device (what is left is dropped), check the ledger. */
static void env_fini(void)
{
	pw_netdev_destroy(L.dev);
	L.dev = NULL;
	ledger_check_all_back();
	pw_runtime_destroy(L.rt);
	L.rt = NULL;
}

static void tc_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tc_ok(const char *fmt, ...)
{
	char cmd[1024], err[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int rc = pw_tc(L.rt, cmd, 0, NULL, 0, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "tc \"%s\": %d: %s\n", cmd, rc, err);
		abort();
	}
}

/* The data pattern of original packet @i. */
static uint8_t pattern(unsigned i, unsigned j)
{
	uint32_t x = (i + 1) * 2654435761u ^ (j + 1) * 40503u;
	x ^= x >> 15;
	return (uint8_t)(x * 2246822519u >> 24);
}

/* A new original packet of @len bytes (not sent yet). */
static struct pw_pkt *new_pkt(uint32_t len, unsigned *idx)
{
	CHECK(L.n < L.cap);
	unsigned i = L.n++;
	struct pw_pkt *p = &L.pkts[i];
	pw_pkt_init(p, NULL, len);
	if (L.data) {
		p->data = L.data + (size_t)i * DATALEN;
		for (unsigned j = 0; j < DATALEN; j++)
			((uint8_t *)p->data)[j] = pattern(i, j);
		p->caplen = len < DATALEN ? len : DATALEN;
	}
	L.state[i] = 1;
	L.parent[i] = -1;
	*idx = i;
	return p;
}

static int xmit_idx(unsigned i)
{
	L.send_ns[i] = pw_now_ns(L.rt);
	CHECK_EQ(pw_cpu_enter(L.rt, 0), 0);
	int rc = pw_dev_queue_xmit(L.dev, &L.pkts[i]);
	pw_cpu_exit(L.rt);
	CHECK(rc == PW_NET_XMIT_SUCCESS || rc == PW_NET_XMIT_DROP || rc == PW_NET_XMIT_CN);
	return rc;
}

static unsigned send_len(uint32_t len, int *rc)
{
	unsigned i;
	new_pkt(len, &i);
	int r = xmit_idx(i);
	if (rc)
		*rc = r;
	return i;
}

static void advance(uint64_t ns)
{
	CHECK_EQ(pw_sim_advance(L.rt, ns), 0);
}

static struct pw__qdisc *netem_q(void)
{
	struct pw__qdisc *q = pw__qdisc_find(L.dev, 0x10000);
	CHECK(q && q->ops == &pw__netem_ops);
	return q;
}

static struct pw_qdisc_stats qstats(void)
{
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(L.dev, 0, &st), 0);
	return st;
}

/* The prng info of the root netem, with the seed checked. */
static struct pw__netem_prng_info prng_info(uint64_t seed)
{
	struct pw__netem_prng_info pi;
	pw__netem_prng_info(netem_q(), &pi);
	CHECK(pi.seed_given);
	CHECK_EQ(pi.seed, seed);
	return pi;
}

/* The number of bits in which packet @i's data differs from its original
 * pattern; *@byte, *@bit: where (the last difference). */
static unsigned data_diff(unsigned i, unsigned *byte, unsigned *bit)
{
	unsigned orig = L.parent[i] < 0 ? i : (unsigned)L.parent[i];
	const uint8_t *d = L.pkts[i].data;
	unsigned nbits = 0;
	for (unsigned j = 0; j < DATALEN; j++) {
		uint8_t x = d[j] ^ pattern(orig, j);
		if (x) {
			nbits += (unsigned)__builtin_popcount(x);
			*byte = j;
			*bit = (unsigned)__builtin_ctz(x);
		}
	}
	return nbits;
}

/* ------------------------------------------------------- statistics */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* An integer-valued law given by its CDF. */
typedef double (*cdf_fn)(const void *law, int64_t x);

/* The KS distance between sorted @s and @cdf: both step functions move
 * only at integers, so the supremum is attained at a sample value s or at
 * s - 1 (just below it). */
static double ks_distance(const int64_t *s, unsigned n, cdf_fn cdf, const void *law)
{
	double d = 0, below = 0;
	for (unsigned i = 0; i < n;) {
		unsigned j = i;
		while (j < n && s[j] == s[i])
			j++;
		double fn = (double)j / n;
		d = fmax(d, fabs(below - cdf(law, s[i] - 1)));
		d = fmax(d, fabs(fn - cdf(law, s[i])));
		below = fn;
		i = j;
	}
	return d;
}

/* The uniform default: ((rnd % m) + mu) - sigma, m = 2 sigma; residues
 * below rem = 2^32 mod m have q + 1 of the 2^32 values of rnd, the rest q. */
struct ulaw {
	int64_t base;
	uint64_t m, q, rem;
};

static double ulaw_cdf(const void *lp, int64_t x)
{
	const struct ulaw *u = lp;
	if (x < u->base)
		return 0;
	uint64_t k1 = (uint64_t)(x - u->base) + 1; /* residues 0..k1-1 */
	if (k1 >= u->m)
		return 1;
	return (double)(k1 * u->q + (k1 < u->rem ? k1 : u->rem)) / TWO32;
}

/* Exact mean and variance of the uniform law (closed form in q, rem). */
static void ulaw_moments(const struct ulaw *u, double *mean, double *var)
{
	long double q = (long double)u->q, r = (long double)u->rem, m = (long double)u->m;
	long double s1 = q * m * (m - 1) / 2 + r * (r - 1) / 2;
	long double s2 = q * (m - 1) * m * (2 * m - 1) / 6 + (r - 1) * r * (2 * r - 1) / 6;
	long double e = s1 / 4294967296.0L;
	*mean = (double)((long double)u->base + e);
	*var = (double)(s2 / 4294967296.0L - e * e);
}

/* A table law: support values and cumulative counts of rnd (of 2^32). */
struct tlaw {
	int64_t *v;
	uint64_t *cum;
	unsigned k;
	double mean, var;
};

struct vw {
	int64_t v;
	uint64_t w;
};
static int cmp_vw(const void *a, const void *b)
{
	int64_t x = ((const struct vw *)a)->v, y = ((const struct vw *)b)->v;
	return (x > y) - (x < y);
}

/* tabledist(mu, sigma, rnd, table) over all 2^32 rnd: index i takes
 * floor(2^32 / n) values of rnd, one more for i < 2^32 mod n. */
static void tlaw_build(struct tlaw *t, int64_t mu, int32_t sigma, const int16_t *tab, unsigned n)
{
	struct vw *e = malloc(n * sizeof(*e));
	CHECK(e);
	uint64_t q = (1ull << 32) / n, r = (1ull << 32) % n;
	long double sum = 0;
	for (unsigned i = 0; i < n; i++) {
		e[i].v = k_tabledist(mu, sigma, i, tab, n); /* rnd % n == i */
		e[i].w = q + (i < r);
		sum += (long double)e[i].w * (long double)(e[i].v - mu);
	}
	long double mean = sum / 4294967296.0L, var = 0;
	for (unsigned i = 0; i < n; i++) {
		long double x = (long double)(e[i].v - mu) - mean;
		var += (long double)e[i].w * x * x;
	}
	t->mean = (double)(mean + (long double)mu);
	t->var = (double)(var / 4294967296.0L);
	qsort(e, n, sizeof(*e), cmp_vw);
	t->v = malloc(n * sizeof(*t->v));
	t->cum = malloc(n * sizeof(*t->cum));
	CHECK(t->v && t->cum);
	t->k = 0;
	uint64_t c = 0;
	for (unsigned i = 0; i < n; i++) {
		c += e[i].w;
		if (t->k && t->v[t->k - 1] == e[i].v) {
			t->cum[t->k - 1] = c;
		} else {
			t->v[t->k] = e[i].v;
			t->cum[t->k++] = c;
		}
	}
	CHECK_EQ(c, 1ull << 32);
	free(e);
}

static double tlaw_cdf(const void *lp, int64_t x)
{
	const struct tlaw *t = lp;
	if (x < t->v[0])
		return 0;
	unsigned lo = 0, hi = t->k - 1; /* the last v <= x */
	while (lo < hi) {
		unsigned mid = (lo + hi + 1) / 2;
		if (t->v[mid] <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return (double)t->cum[lo] / TWO32;
}

static bool tlaw_has(const struct tlaw *t, int64_t x)
{
	unsigned lo = 0, hi = t->k;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (t->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->k && t->v[lo] == x;
}

static void tlaw_free(struct tlaw *t)
{
	free(t->v);
	free(t->cum);
}

/* Sample mean and variance against @mean, @var: |error| < 5 standard
 * errors each (normal approximation, n = 1e5: P(false failure) < 6e-7
 * each; the variance's standard error from the sample fourth moment). */
static void check_moments(const char *what, const int64_t *s, unsigned n, double mean, double var)
{
	long double sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += (long double)s[i];
	double m = (double)(sum / n), v = 0, m4 = 0;
	for (unsigned i = 0; i < n; i++) {
		double e = (double)s[i] - m;
		v += e * e;
		m4 += e * e * e * e;
	}
	v /= n;
	m4 /= n;
	double se_m = sqrt(var / n), se_v = sqrt((m4 - v * v) / n);
	printf("  %-28s mean %.1f (want %.1f, %+.2f se) sd %.1f (want %.1f, var %+.2f se)\n", what,
	       m, mean, (m - mean) / se_m, sqrt(v), sqrt(var), (v - var) / se_v);
	CHECK(fabs(m - mean) < 5 * se_m);
	CHECK(fabs(v - var) < 5 * se_v);
}

/* A binomial count: |k - n p| < 5 sd (P(false failure) < 6e-7). */
static void check_binomial(const char *what, uint64_t k, uint64_t n, double p)
{
	double sd = sqrt((double)n * p * (1 - p));
	printf("  %-28s %" PRIu64 " of %" PRIu64 " (want %.1f, %+.2f sd)\n", what, k, n,
	       (double)n * p, ((double)k - (double)n * p) / sd);
	CHECK(fabs((double)k - (double)n * p) < 5 * sd);
}

/* -------------------------------------------------------- 1. delay */

#define NDELAY 100000

static int64_t *samples;

/* The tables to test: path or name for tc, the table netem must use. */
struct table_case {
	char what[128];
	char arg[512];     /* after "distribution", "" for the uniform default */
	int16_t *t;
	unsigned n;
};

/* 1e5 packets 100 us apart through `delay 10ms 5ms [distribution X]`:
 * each leaves at send + max(d, 0) exactly, d (time_to_send - send) is the
 * draw recomputed bit for bit, and the d's pass KS, mean and sd. */
static void delay_run(const struct table_case *tc, uint64_t seed, const struct tlaw *wrong)
{
	const int64_t mu = 10 * MS;
	const int32_t sigma = 5 * MS;
	env_init(NDELAY, false, false);
	if (tc->arg[0])
		tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 10ms 5ms "
		      "distribution %s seed %" PRIu64, tc->arg, seed);
	else
		tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 10ms 5ms seed %" PRIu64,
		      seed);
	struct pw__netem_prng_info pi = prng_info(seed);
	CHECK_EQ(pi.delay_rho, 0);
	struct lfsr r;
	lfsr_seed(&r, seed);
	for (unsigned i = 0; i < NDELAY; i++) {
		send_len(1000, NULL);
		advance(100000);
	}
	advance(1000 * MS);
	CHECK_EQ(L.sent, NDELAY);
	unsigned negative = 0;
	for (unsigned i = 0; i < NDELAY; i++) {
		int64_t d = (int64_t)(L.pkts[i].pw_time_to_send - L.send_ns[i]);
		int64_t want = k_tabledist(mu, sigma, lfsr_next(&r), tc->t, tc->n);
		if (d != want)
			fprintf(stderr, "%s: packet %u: delay %" PRId64 ", recomputed %" PRId64 "\n",
				tc->what, i, d, want);
		CHECK_EQ(d, want);
		CHECK_EQ(L.state[i], 2);
		CHECK_EQ(L.xmit_ns[i], L.send_ns[i] + (uint64_t)(d > 0 ? d : 0));
		negative += d < 0;
		samples[i] = d;
	}
	qsort(samples, NDELAY, sizeof(*samples), cmp_i64);
	double crit = KS_C / sqrt((double)NDELAY), D, mean, var;
	if (!tc->t) {
		struct ulaw u = { mu - sigma, 2ull * (uint64_t)sigma, 0, 0 };
		u.q = (1ull << 32) / u.m;
		u.rem = (1ull << 32) % u.m;
		D = ks_distance(samples, NDELAY, ulaw_cdf, &u);
		ulaw_moments(&u, &mean, &var);
		/* the closed form with the modulo bias left out: mean mu - 1/2,
		 * var (m^2 - 1) / 12; the bias moves the mean by < sigma / 1000 */
		double m = (double)u.m;
		CHECK(fabs(mean - ((double)mu - 0.5)) < sigma / 1000.0);
		CHECK(fabs(sqrt(var) - sqrt((m * m - 1) / 12)) < sigma / 1000.0);
		CHECK(samples[0] >= mu - sigma && samples[NDELAY - 1] < mu + sigma);
	} else {
		struct tlaw t;
		tlaw_build(&t, mu, sigma, tc->t, tc->n);
		for (unsigned i = 0; i < NDELAY; i++)
			CHECK(tlaw_has(&t, samples[i]));
		D = ks_distance(samples, NDELAY, tlaw_cdf, &t);
		mean = t.mean;
		var = t.var;
		/* the closed form from the table's moments: mu + sigma E[t] / 8192,
		 * sd sigma sd(t) / 8192, to within the +-1/2 of the rounding */
		long double st = 0, st2 = 0;
		for (unsigned i = 0; i < tc->n; i++) {
			st += tc->t[i];
			st2 += (long double)tc->t[i] * tc->t[i];
		}
		st /= tc->n;
		st2 /= tc->n;
		double cf_mean = (double)mu + (double)sigma * (double)st / 8192;
		double cf_sd = (double)sigma * sqrt((double)(st2 - st * st)) / 8192;
		if (tc->n == 4096) { /* equal weights: the closed form is exact */
			CHECK(fabs(mean - cf_mean) <= 0.5 + 1e-9 * cf_mean);
			CHECK(fabs(sqrt(var) - cf_sd) <= 0.5 + 1e-9 * cf_sd);
		}
		if (strstr(tc->what, "normal") && !strstr(tc->what, "pareto")) {
			/* a normal table: mean mu, sd sigma (the table's own accuracy) */
			CHECK(fabs(cf_mean - (double)mu) < 0.01 * sigma);
			CHECK(fabs(cf_sd - (double)sigma) < 0.02 * sigma);
		}
		tlaw_free(&t);
	}
	printf("  %-28s KS D = %.5f (critical %.5f), %u negative\n", tc->what, D, crit, negative);
	CHECK(D < crit);
	check_moments(tc->what, samples, NDELAY, mean, var);
	if (wrong) {
		/* the test can fail: these delays against another table's law */
		double Dw = ks_distance(samples, NDELAY, tlaw_cdf, wrong);
		printf("  %-28s KS D against the wrong law = %.5f\n", tc->what, Dw);
		CHECK(Dw > crit);
	}
	env_fini();
}

static void test_delay_distributions(void)
{
	samples = malloc(NDELAY * sizeof(*samples));
	CHECK(samples);
	uint64_t seed = 1001;

	struct table_case uni = { "uniform 10ms 5ms", "", NULL, 0 };
	delay_run(&uni, seed++, NULL);

	/* the built-in tables: TC_LIB_DIR pointing at an empty directory makes
	 * `distribution NAME` fall back to them */
	char *saved = getenv("TC_LIB_DIR") ? strdup(getenv("TC_LIB_DIR")) : NULL;
	char empty[] = "/tmp/pw-netem-XXXXXX";
	CHECK(mkdtemp(empty));
	CHECK_EQ(setenv("TC_LIB_DIR", empty, 1), 0);
	static const char *const names[] = { "normal", "pareto", "paretonormal" };
	struct tlaw pareto_law;
	{
		int16_t *t;
		unsigned n;
		CHECK_EQ(pw__dist_builtin("pareto", &t, &n), 0);
		tlaw_build(&pareto_law, 10 * MS, 5 * MS, t, n);
		free(t);
	}
	for (size_t k = 0; k < 3; k++) {
		struct table_case c;
		snprintf(c.what, sizeof(c.what), "built-in %s", names[k]);
		snprintf(c.arg, sizeof(c.arg), "%s", names[k]);
		CHECK_EQ(pw__dist_builtin(names[k], &c.t, &c.n), 0);
		delay_run(&c, seed++, k == 0 ? &pareto_law : NULL);
		free(c.t);
	}
	tlaw_free(&pareto_law);
	CHECK_EQ(rmdir(empty), 0);
	if (saved) {
		CHECK_EQ(setenv("TC_LIB_DIR", saved, 1), 0);
	} else {
		CHECK_EQ(unsetenv("TC_LIB_DIR"), 0);
	}

	/* the installed iproute2 tables, by path */
	const char *dir = saved ? saved : "/usr/lib/x86_64-linux-gnu/tc";
	DIR *dp = opendir(dir);
	unsigned found = 0;
	if (dp) {
		char (*files)[256] = calloc(64, sizeof(*files));
		CHECK(files);
		struct dirent *de;
		while ((de = readdir(dp)) && found < 64) {
			size_t l = strlen(de->d_name);
			if (l > 5 && !strcmp(de->d_name + l - 5, ".dist"))
				snprintf(files[found++], sizeof(files[0]), "%s", de->d_name);
		}
		closedir(dp);
		qsort(files, found, sizeof(files[0]), (int (*)(const void *, const void *))strcmp);
		for (unsigned k = 0; k < found; k++) {
			struct table_case c;
			char err[512];
			snprintf(c.what, sizeof(c.what), "installed %.50s", files[k]);
			snprintf(c.arg, sizeof(c.arg), "%s/%s", dir, files[k]);
			if (pw__dist_load(c.arg, &c.t, &c.n, err, sizeof(err)))
				continue; /* not a table netem would take */
			delay_run(&c, seed++, NULL);
			free(c.t);
		}
		free(files);
	}
	if (!found)
		printf("  (no installed tables in %s)\n", dir);
	free(saved);
	free(samples);
	samples = NULL;
}

/* delay 10ms 5ms 25%: every delay is get_crandom() of the LFSR113 stream
 * from the seed and the correlation's starting value, bit for bit. */
static void test_delay_correlation(void)
{
	const unsigned n = 20000;
	const uint64_t seed = 4242;
	env_init(n, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 10ms 5ms 25%% seed %" PRIu64,
	      seed);
	struct pw__netem_prng_info pi = prng_info(seed);
	CHECK_EQ(pi.delay_rho, pct(25));
	struct corr c = { pi.delay_last, pi.delay_rho };
	struct lfsr r;
	lfsr_seed(&r, seed);
	xs_seed(4242);
	for (unsigned i = 0; i < n; i++) {
		send_len(500, NULL);
		advance(xs_range(0, 200000));
	}
	advance(100 * MS);
	CHECK_EQ(L.sent, n);
	double sx = 0, sxx = 0, sxy = 0, prev = 0;
	for (unsigned i = 0; i < n; i++) {
		int64_t want = k_tabledist(10 * MS, 5 * MS, crandom(&r, &c), NULL, 0);
		CHECK_EQ((int64_t)(L.xmit_ns[i] - L.send_ns[i]), want);
		double x = (double)(want - 10 * MS) / (5 * MS);
		sx += x;
		sxx += x * x;
		if (i)
			sxy += x * prev;
		prev = x;
	}
	/* the kernel's arithmetic correlates consecutive draws by about rho
	 * (0.25) only in the mean; printed for the record */
	printf("  lag-1 correlation of the delays %.3f\n",
	       (sxy / (n - 1) - (sx / n) * (sx / n)) / (sxx / n - (sx / n) * (sx / n)));
	env_fini();
}

/* --------------------------------------------------------- 2. loss */

/* loss random P (with and without correlation): the rate, and every loss
 * decision recomputed; lost packets dropped with PW_DROP_NETEM_LOSS,
 * enqueue still returns success (the kernel's __NET_XMIT_BYPASS). */
static void loss_random_run(double p, double corr, uint64_t seed)
{
	const unsigned n = 100000;
	env_init(n, false, false);
	if (corr > 0)
		tc_ok("qdisc add dev eth0 root handle 1: netem loss random %g%% %g%% seed %" PRIu64, p,
		      corr, seed);
	else
		tc_ok("qdisc add dev eth0 root handle 1: netem loss random %g%% seed %" PRIu64, p, seed);
	struct pw__netem_prng_info pi = prng_info(seed);
	CHECK_EQ(pi.loss_rho, corr > 0 ? pct(corr) : 0);
	struct corr c = { pi.loss_last, pi.loss_rho };
	struct lfsr r;
	lfsr_seed(&r, seed);
	uint32_t P = pct(p);
	uint64_t lost = 0;
	for (unsigned i = 0; i < n; i++) {
		int rc;
		unsigned k = send_len(100, &rc);
		CHECK_EQ(rc, PW_NET_XMIT_SUCCESS);
		bool want = P >= crandom(&r, &c);
		CHECK_EQ(L.state[k], want ? 3 : 2);
		if (want)
			CHECK_EQ(L.reason[k], PW_DROP_NETEM_LOSS);
		lost += want;
	}
	CHECK_EQ(L.drop_by[PW_DROP_NETEM_LOSS], lost);
	CHECK_EQ(qstats().drops, lost);
	char what[128];
	snprintf(what, sizeof(what), "loss random %g%% %g%%", p, corr);
	if (corr == 0)
		check_binomial(what, lost, n, ((double)P + 1) / TWO32);
	else
		printf("  %-28s %" PRIu64 " of %u (the kernel's correlation lowers the rate)\n", what,
		       lost, n);
	env_fini();
}

/* A loss chain for the asymptotic statistics: K[s][s2][l] is the
 * probability, from state s before a packet, that the packet is lost (l)
 * and the next state is s2. */
#define MAXS 4
struct chain {
	unsigned n;
	double K[MAXS][MAXS][2];
};

/* Gaussian elimination with partial pivoting, @a n x (n+1). */
static void solve(double *a, unsigned n, double *x)
{
	for (unsigned c = 0; c < n; c++) {
		unsigned p = c;
		for (unsigned r = c + 1; r < n; r++)
			if (fabs(a[r * (n + 1) + c]) > fabs(a[p * (n + 1) + c]))
				p = r;
		for (unsigned k = 0; k <= n; k++) {
			double t = a[c * (n + 1) + k];
			a[c * (n + 1) + k] = a[p * (n + 1) + k];
			a[p * (n + 1) + k] = t;
		}
		CHECK(fabs(a[c * (n + 1) + c]) > 1e-300);
		for (unsigned r = 0; r < n; r++) {
			if (r == c)
				continue;
			double f = a[r * (n + 1) + c] / a[c * (n + 1) + c];
			for (unsigned k = c; k <= n; k++)
				a[r * (n + 1) + k] -= f * a[c * (n + 1) + k];
		}
	}
	for (unsigned c = 0; c < n; c++)
		x[c] = a[c * (n + 1) + n] / a[c * (n + 1) + c];
}

/*
 * The chain's loss rate (mean of l_t), burst-start rate (mean of
 * l_t (1 - l_{t-1})), mean burst length (their ratio) and the asymptotic
 * variances of the two estimates from n packets: on the augmented chain
 * a_t = (s_{t+1}, l_t, l_{t-1}), Sigma_fg = sum over all lags k of
 * Cov(f(a_0), g(a_k)), and the ratio's by the delta method.
 */
struct chain_stats {
	double loss, starts, burst, var_loss, var_burst;
};

static struct chain_stats chain_analyse(const struct chain *c)
{
	const unsigned m = 4 * c->n;
	double P[4 * MAXS][4 * MAXS];
	memset(P, 0, sizeof(P));
	for (unsigned a = 0; a < m; a++) {
		unsigned s = a / 4, l = (a / 2) & 1;
		for (unsigned s2 = 0; s2 < c->n; s2++)
			for (unsigned l2 = 0; l2 < 2; l2++)
				P[a][s2 * 4 + l2 * 2 + l] += c->K[s][s2][l2];
	}
	/* pi P = pi, sum pi = 1 */
	double A[4 * MAXS * (4 * MAXS + 1)], pi[4 * MAXS];
	for (unsigned r = 0; r < m; r++) {
		for (unsigned k = 0; k < m; k++)
			A[r * (m + 1) + k] = r == m - 1 ? 1.0 : P[k][r] - (k == r);
		A[r * (m + 1) + m] = r == m - 1 ? 1.0 : 0.0;
	}
	solve(A, m, pi);
	double f[2][4 * MAXS], mean[2] = { 0, 0 };
	for (unsigned a = 0; a < m; a++) {
		unsigned l = (a / 2) & 1, lp = a & 1;
		f[0][a] = l;
		f[1][a] = l && !lp;
		mean[0] += pi[a] * f[0][a];
		mean[1] += pi[a] * f[1][a];
	}
	double h[2][4 * MAXS], S[2][2];
	for (unsigned i = 0; i < 2; i++)
		for (unsigned a = 0; a < m; a++)
			h[i][a] = f[i][a] - mean[i];
	for (unsigned i = 0; i < 2; i++)
		for (unsigned j = 0; j < 2; j++) {
			double v[4 * MAXS], sum = 0;
			for (unsigned a = 0; a < m; a++) {
				v[a] = h[j][a];
				sum += pi[a] * h[i][a] * h[j][a];
			}
			/* + sum_k>=1 Cov(f_i(a_0), f_j(a_k)) + Cov(f_j(a_0), f_i(a_k)) */
			double vi[4 * MAXS];
			memcpy(vi, h[i], sizeof(vi));
			for (unsigned k = 1; k < 200000; k++) {
				double nv[4 * MAXS], nvi[4 * MAXS], t = 0, big = 0;
				for (unsigned a = 0; a < m; a++) {
					nv[a] = nvi[a] = 0;
					for (unsigned b = 0; b < m; b++) {
						nv[a] += P[a][b] * v[b];
						nvi[a] += P[a][b] * vi[b];
					}
				}
				memcpy(v, nv, sizeof(v));
				memcpy(vi, nvi, sizeof(vi));
				for (unsigned a = 0; a < m; a++) {
					t += pi[a] * (h[i][a] * v[a] + h[j][a] * vi[a]);
					big = fmax(big, fabs(v[a]) + fabs(vi[a]));
				}
				sum += t;
				if (big < 1e-16)
					break;
			}
			S[i][j] = sum;
		}
	struct chain_stats st;
	st.loss = mean[0];
	st.starts = mean[1];
	st.burst = mean[0] / mean[1];
	st.var_loss = S[0][0];
	st.var_burst = (S[0][0] - 2 * st.burst * S[0][1] + st.burst * st.burst * S[1][1]) /
		       (mean[1] * mean[1]);
	return st;
}

/* Send @n packets, return the loss rate and mean burst length seen.
 * Without a delay each packet is back before its send returns, so the
 * ledger is checked and reused every L.cap packets. */
static void measure_losses(unsigned n, double *loss, double *burst)
{
	uint64_t lost = 0, starts = 0;
	bool prev = false;
	for (unsigned i = 0; i < n; i++) {
		if (L.n == L.cap) {
			ledger_check_all_back();
			memset(L.state, 0, L.cap);
			L.n = L.norder = 0;
			L.sent = L.dropped = 0;
			memset(L.drop_by, 0, sizeof(L.drop_by));
		}
		unsigned k = send_len(100, NULL);
		bool l = L.state[k] == 3;
		if (l)
			CHECK_EQ(L.reason[k], PW_DROP_NETEM_LOSS);
		lost += l;
		starts += l && !prev;
		prev = l;
	}
	CHECK_EQ(qstats().drops, lost);
	*loss = (double)lost / n;
	*burst = (double)lost / (double)starts;
}

/* Measured against the closed form, 5 asymptotic standard errors each
 * (Markov-chain CLT: P(false failure) < 6e-7 each); the closed form
 * against the exact chain built from the kernel's comparisons. */
static void check_chain(const char *what, unsigned n, double cf_loss, double cf_burst,
			const struct chain *exact)
{
	struct chain_stats st = chain_analyse(exact);
	CHECK(fabs(st.loss - cf_loss) < 1e-6 * cf_loss);
	CHECK(fabs(st.burst - cf_burst) < 1e-6 * cf_burst);
	double loss, burst;
	measure_losses(n, &loss, &burst);
	double se_l = sqrt(st.var_loss / n), se_b = sqrt(st.var_burst / n);
	printf("  %-28s loss %.5f (closed form %.5f, %+.2f se), mean burst %.4f (%.4f, %+.2f se)\n",
	       what, loss, cf_loss, (loss - cf_loss) / se_l, burst, cf_burst,
	       (burst - cf_burst) / se_b);
	CHECK(fabs(loss - cf_loss) < 5 * se_l);
	CHECK(fabs(burst - cf_burst) < 5 * se_b);
}

/* loss state p13 p31 p32 p23 p14: the GI model's chain.  States: 1 gap
 * reception, 2 burst reception, 3 burst loss, 4 isolated (gap) loss. */
static void loss_4state_run(double p13, double p31, double p32, double p23, double p14,
			    uint64_t seed)
{
	const unsigned n = 1000000;
	env_init(100000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem loss state %g%% %g%% %g%% %g%% %g%% seed %" PRIu64,
	      p13, p31, p32, p23, p14, seed);
	prng_info(seed);
	/* Closed form.  Balance: pi4 = p14 pi1; pi3 p31 = p13 pi1 (what enters
	 * and leaves {3} from/to 1, the 2 <-> 3 flows balancing); pi2 p23 =
	 * p32 pi3.  The loss rate is pi3 + pi4 (entering 3 or 4 is a loss);
	 * a burst starts where a received packet (state 1 or 2 after it) is
	 * followed by a loss: pi1 (p13 + p14) + pi2 p23. */
	double a13 = pct(p13) / TWO32, a31 = pct(p31) / TWO32, a32 = pct(p32) / TWO32,
	       a23 = pct(p23) / TWO32, a14 = pct(p14) / TWO32;
	double r3 = a13 / a31, r2 = a32 * r3 / a23, r4 = a14;
	double pi1 = 1 / (1 + r2 + r3 + r4), pi2 = r2 * pi1, pi3 = r3 * pi1, pi4 = r4 * pi1;
	double cf_loss = pi3 + pi4;
	double cf_burst = cf_loss / (pi1 * (a13 + a14) + pi2 * a23);
	/* Exact: loss_4state()'s comparisons over the 2^32 values of rnd (a
	 * draw equal to a threshold takes no branch: no loss, state kept). */
	double A1 = pct(p13), A2 = pct(p31), A3 = pct(p32), A4 = pct(p14), A5 = pct(p23);
	struct chain c;
	memset(&c, 0, sizeof(c));
	c.n = 4;
	c.K[0][3][1] = A4 / TWO32;
	c.K[0][2][1] = (A1 - 1) / TWO32;
	c.K[0][0][0] = (TWO32 - A4 - (A1 - 1)) / TWO32;
	c.K[1][2][1] = A5 / TWO32;
	c.K[1][1][0] = (TWO32 - A5) / TWO32;
	c.K[2][1][0] = A3 / TWO32;
	c.K[2][0][0] = (A2 - 1) / TWO32;
	c.K[2][2][1] = (TWO32 - 1 - (A2 + A3)) / TWO32;
	c.K[2][2][0] = 2 / TWO32;
	c.K[3][0][0] = 1;
	char what[128];
	snprintf(what, sizeof(what), "loss state %g %g %g %g %g", p13, p31, p32, p23, p14);
	check_chain(what, n, cf_loss, cf_burst, &c);
	env_fini();
}

/* loss gemodel p r 1-h 1-k: Good -> Bad p, Bad -> Good r; a packet is
 * lost with 1-k in Good, 1-h in Bad (by the state it meets, the
 * transition drawn first for the next one). */
static void loss_ge_run(double p, double r, double one_h, double one_k, uint64_t seed)
{
	const unsigned n = 500000;
	env_init(100000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem loss gemodel %g%% %g%% %g%% %g%% seed %" PRIu64,
	      p, r, one_h, one_k, seed);
	prng_info(seed);
	/* Closed form: piB = p / (p + r); loss = piG lG + piB lB; bursts start
	 * at a loss after a reception: sum_s pi_s (1 - l_s) sum_s2 P(s, s2) l_s2. */
	double P = pct(p) / TWO32, R = pct(r) / TWO32;
	double lG = pct(one_k) / TWO32;
	double h = (double)(0xffffffffu - pct(one_h)); /* the kernel's h */
	double lB = (TWO32 - 1 - h) / TWO32;            /* P(rnd > h) */
	double piB = P / (P + R), piG = 1 - piB;
	double cf_loss = piG * lG + piB * lB;
	double starts = piG * (1 - lG) * ((1 - P) * lG + P * lB) +
			piB * (1 - lB) * (R * lG + (1 - R) * lB);
	double cf_burst = cf_loss / starts;
	struct chain c;
	memset(&c, 0, sizeof(c));
	c.n = 2;
	double T[2][2] = { { 1 - P, P }, { R, 1 - R } }, Ls[2] = { lG, lB };
	for (unsigned s = 0; s < 2; s++)
		for (unsigned s2 = 0; s2 < 2; s2++) {
			c.K[s][s2][1] = T[s][s2] * Ls[s];
			c.K[s][s2][0] = T[s][s2] * (1 - Ls[s]);
		}
	char what[128];
	snprintf(what, sizeof(what), "loss gemodel %g %g %g %g", p, r, one_h, one_k);
	check_chain(what, n, cf_loss, cf_burst, &c);
	env_fini();
}

/* ecn: a lost ECN-capable packet (ECT(1), ECT(0)) is marked CE and sent, a
 * lost CE packet is sent as it is (the kernel's INET_ECN_set_ce() succeeds
 * on it), a lost not-ECT one dropped; each mark and each drop counted in
 * the qdisc's drops.  Every decision recomputed. */
static void test_loss_ecn(void)
{
	const unsigned n = 40000;
	const uint64_t seed = 555;
	env_init(n, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem loss random 30%% ecn seed %" PRIu64, seed);
	prng_info(seed);
	struct lfsr r;
	lfsr_seed(&r, seed);
	uint64_t lost = 0, dropped = 0, marked = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned k;
		struct pw_pkt *p = new_pkt(100, &k);
		uint8_t ecn = (uint8_t)(i % 4);
		p->ecn = ecn;
		CHECK_EQ(xmit_idx(k), PW_NET_XMIT_SUCCESS);
		bool l = pct(30) >= lfsr_next(&r);
		lost += l;
		if (!l) {
			CHECK_EQ(L.state[k], 2);
			CHECK_EQ(L.pkts[k].ecn, ecn);
		} else if (ecn == 0) {
			CHECK_EQ(L.state[k], 3);
			CHECK_EQ(L.reason[k], PW_DROP_NETEM_LOSS);
			dropped++;
		} else {
			if (L.state[k] != 2)
				fprintf(stderr, "ecn: lost packet %u with ecn %u dropped\n", i, ecn);
			CHECK_EQ(L.state[k], 2);
			CHECK_EQ(L.pkts[k].ecn, 3);
			marked++;
		}
	}
	CHECK_EQ(L.drop_by[PW_DROP_NETEM_LOSS], dropped);
	CHECK_EQ(qstats().drops, lost);
	check_binomial("ecn: lost", lost, n, (pct(30) + 1.0) / TWO32);
	CHECK(marked > 0 && dropped > 0);
	env_fini();
}

static void test_loss(void)
{
	loss_random_run(2, 0, 2001);
	loss_random_run(10, 50, 2002);
	loss_4state_run(2, 30, 5, 10, 1, 2003);
	loss_4state_run(5, 50, 20, 40, 0.5, 2004);
	loss_ge_run(1, 10, 70, 0.1, 2005);
	loss_ge_run(5, 30, 100, 0, 2006); /* simple Gilbert: mean burst 1/r */
	loss_ge_run(2, 20, 50, 5, 2007);  /* losses in Good weigh in */
	test_loss_ecn();
}

/* ----------------------------------------- 3. duplicate, corrupt, reorder */

/* duplicate P: each draw recomputed; the duplicates (the clone op's) sent
 * too; without a clone op, or when it fails, counted in dup_failed. */
static void dup_run(int mode, bool clone, uint64_t seed, uint64_t *made, uint64_t *failed)
{
	const unsigned n = 50000;
	env_init(2 * n, clone, false);
	L.clone_mode = mode;
	tc_ok("qdisc add dev eth0 root handle 1: netem duplicate 10%% seed %" PRIu64, seed);
	prng_info(seed);
	struct lfsr r;
	lfsr_seed(&r, seed);
	uint64_t want = 0, clones = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned before = L.n;
		int rc;
		unsigned k = send_len(100 + i % 50, &rc);
		CHECK_EQ(rc, PW_NET_XMIT_SUCCESS);
		CHECK_EQ(L.state[k], 2);
		bool d = pct(10) >= lfsr_next(&r);
		want += d;
		unsigned made_now = L.n - before - 1;
		/* the clone (made before the original reaches the queue) is a new
		 * ledger entry after it */
		CHECK(made_now <= (unsigned)d);
		if (made_now) {
			unsigned c = L.n - 1;
			CHECK_EQ(L.parent[c], (int32_t)k);
			CHECK_EQ(L.state[c], 2);
			CHECK_EQ(L.pkts[c].len, L.pkts[k].len);
			clones++;
		}
	}
	uint64_t df = pw__netem_dup_failed(netem_q());
	CHECK_EQ(clones + df, want);
	struct pw_qdisc_stats st = qstats();
	CHECK_EQ(st.packets, n + clones);
	CHECK_EQ(st.drops, 0);
	*made = clones;
	*failed = df;
	if (mode == CLONE_COPY && clone)
		check_binomial("duplicate 10%", clones, n, (pct(10) + 1.0) / TWO32);
	env_fini();
}

static void test_duplicate(void)
{
	uint64_t made, failed, made2, failed2;
	dup_run(CLONE_COPY, true, 3001, &made, &failed);
	CHECK_EQ(failed, 0);
	dup_run(CLONE_COPY, false, 3001, &made2, &failed2); /* no clone op */
	CHECK_EQ(made2, 0);
	CHECK_EQ(failed2, made); /* the same draws: the same duplicates wanted */
	dup_run(CLONE_FAIL_ODD, true, 3001, &made2, &failed2);
	CHECK_EQ(made2 + failed2, made);
	CHECK(made2 > 0 && failed2 > 0);

	/* duplicates are delayed like originals and flushed with them */
	env_init(1000, true, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem delay 20ms duplicate 100%% seed 3");
	for (int i = 0; i < 100; i++)
		send_len(200, NULL);
	CHECK_EQ(L.n, 200);
	struct pw_qdisc_stats st = qstats();
	CHECK_EQ(st.qlen, 200);
	CHECK_EQ(st.backlog, 200 * 200);
	advance(20 * MS);
	CHECK_EQ(L.sent, 200);
	for (unsigned i = 0; i < L.n; i++)
		CHECK_EQ(L.xmit_ns[i], T0 + 20 * MS);
	for (int i = 0; i < 50; i++)
		send_len(200, NULL);
	tc_ok("qdisc del dev eth0 root");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 100);
	env_fini();
}

/* corrupt P: exactly the packets the draws pick have exactly one bit
 * flipped, below caplen; the rate; the flipped bit and byte uniform. */
static void test_corrupt(void)
{
	const unsigned n = 100000;
	const uint64_t seed = 4001;
	env_init(n, false, true);
	tc_ok("qdisc add dev eth0 root handle 1: netem corrupt 5%% seed %" PRIu64, seed);
	prng_info(seed);
	struct lfsr r;
	lfsr_seed(&r, seed);
	xs_seed(99);
	uint64_t hit = 0, bits[8] = { 0 }, bytes[8] = { 0 }, full = 0;
	for (unsigned i = 0; i < n; i++) {
		/* half the packets capture all DATALEN bytes, the rest fewer */
		uint32_t len = (i & 1) ? 1500 : xs_range(1, DATALEN);
		unsigned k = send_len(len, NULL);
		CHECK_EQ(L.state[k], 2);
		bool c = pct(5) >= lfsr_next(&r);
		unsigned byte = 0, bit = 0, nb = data_diff(k, &byte, &bit);
		CHECK_EQ(nb, c ? 1 : 0);
		if (c) {
			CHECK(byte < L.pkts[k].caplen);
			hit++;
			bits[bit]++;
			if (L.pkts[k].caplen == DATALEN) {
				bytes[byte / 8]++;
				full++;
			}
		}
	}
	check_binomial("corrupt 5%", hit, n, (pct(5) + 1.0) / TWO32);
	/* chi-square, 7 degrees of freedom: 29.88 is the 1 - 1e-4 quantile
	 * (P(false failure) 1e-4 each) */
	double x2b = 0, x2y = 0;
	for (int k = 0; k < 8; k++) {
		double e = hit / 8.0, f = full / 8.0;
		x2b += (bits[k] - e) * (bits[k] - e) / e;
		x2y += (bytes[k] - f) * (bytes[k] - f) / f;
	}
	printf("  corrupt: bit chi2 %.2f, byte-octet chi2 %.2f (critical 29.88)\n", x2b, x2y);
	CHECK(x2b < 29.88 && x2y < 29.88);
	env_fini();

	/* no data, or caplen 0: the draws happen, nothing is touched */
	env_init(100, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem corrupt 100%% seed 1");
	for (int i = 0; i < 50; i++)
		send_len(100, NULL);
	CHECK_EQ(L.sent, 50);
	env_fini();
	env_init(100, false, true);
	tc_ok("qdisc add dev eth0 root handle 1: netem corrupt 100%% seed 1");
	for (int i = 0; i < 50; i++) {
		unsigned k;
		struct pw_pkt *p = new_pkt(100, &k);
		p->caplen = 0;
		xmit_idx(k);
		unsigned a, b;
		CHECK_EQ(data_diff(k, &a, &b), 0);
	}
	env_fini();

	/* duplicate + corrupt with a copying clone op: the clone is made
	 * before the original is corrupted and, going through the root's
	 * enqueue itself, gets its own single flip */
	env_init(200, true, true);
	L.clone_mode = CLONE_COPY;
	tc_ok("qdisc add dev eth0 root handle 1: netem duplicate 100%% corrupt 100%% seed 2");
	for (int i = 0; i < 50; i++)
		send_len(DATALEN, NULL);
	CHECK_EQ(L.n, 100);
	CHECK_EQ(L.sent, 100);
	for (unsigned i = 0; i < L.n; i++) {
		unsigned a, b;
		CHECK_EQ(data_diff(i, &a, &b), 1);
	}
	env_fini();
}

/* reorder P [corr] gap G with a delay: the kernel's counter: the first
 * G - 1 packets after a reordered one are delayed without a draw, then each
 * packet draws and goes out at once (at the head) with probability P. */
static void reorder_run(double p, double corr, unsigned gap, uint64_t seed)
{
	const unsigned n = 30000;
	env_init(n, false, false);
	char g[32] = "";
	if (gap)
		snprintf(g, sizeof(g), " gap %u", gap);
	if (corr > 0)
		tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 10ms reorder %g%% %g%%%s "
		      "seed %" PRIu64, p, corr, g, seed);
	else
		tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 10ms reorder %g%%%s "
		      "seed %" PRIu64, p, g, seed);
	struct pw__netem_prng_info pi = prng_info(seed);
	CHECK_EQ(pi.reorder_rho, corr > 0 ? pct(corr) : 0);
	struct corr c = { pi.reorder_last, pi.reorder_rho };
	struct lfsr r;
	lfsr_seed(&r, seed);
	unsigned G = gap ? gap : 1, counter = 0;
	uint64_t draws = 0, at_once_n = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned k = send_len(300, NULL);
		bool at_once = false;
		if (counter >= G - 1) {
			draws++;
			at_once = !(pct(p) < crandom(&r, &c));
		}
		if (at_once) {
			counter = 0;
			at_once_n++;
			CHECK_EQ(L.state[k], 2); /* out at once */
			CHECK_EQ(L.xmit_ns[k], L.send_ns[k]);
		} else {
			counter++;
			CHECK_EQ(L.state[k], 1);
		}
		advance(250000);
	}
	advance(20 * MS);
	for (unsigned i = 0; i < n; i++) {
		CHECK_EQ(L.state[i], 2);
		uint64_t d = L.xmit_ns[i] - L.send_ns[i];
		CHECK(d == 0 || d == (uint64_t)(10 * MS));
	}
	CHECK_EQ(qstats().requeues, at_once_n);
	char what[128];
	snprintf(what, sizeof(what), "reorder %g%% %g%% gap %u", p, corr, gap);
	if (corr == 0)
		check_binomial(what, at_once_n, draws, (pct(p) + 1.0) / TWO32);
	else
		printf("  %-28s %" PRIu64 " of %" PRIu64 " draws\n", what, at_once_n, draws);
	env_fini();
}

static void test_reorder(void)
{
	/* 100% gap 5: exactly every 5th packet */
	env_init(1000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem delay 10ms reorder 100%% gap 5 seed 1");
	for (unsigned i = 0; i < 1000; i++) {
		unsigned k = send_len(100, NULL);
		CHECK_EQ(L.state[k], (i + 1) % 5 == 0 ? 2 : 1);
		advance(MS);
	}
	advance(20 * MS);
	for (unsigned i = 0; i < 1000; i++)
		CHECK_EQ(L.xmit_ns[i] - L.send_ns[i], (i + 1) % 5 == 0 ? 0 : (uint64_t)(10 * MS));
	env_fini();
	reorder_run(25, 0, 3, 5001);
	reorder_run(30, 0, 0, 5002); /* no gap: gap 1, every packet draws */
	reorder_run(25, 50, 4, 5003);
}

/* ---------------------------------------------------- 4. rate, slot, limit */

/* The wire time of sch_netem.c's packet_time_ns(), written as arithmetic:
 * bytes = len + packet overhead; with cells, ceil(bytes / cell) cells of
 * cell + cell overhead bytes; ns = floor(bytes * 1e9 / rate). */
static uint64_t wire_ns(uint32_t len, int32_t po, uint32_t cs, int32_t co, uint64_t rate)
{
	int64_t b = (int64_t)len + po;
	CHECK(b > 0);
	if (cs)
		b = (b + cs - 1) / cs * ((int64_t)cs + co);
	return (uint64_t)b * 1000000000ull / rate;
}

/* Packets of random sizes at random times: each leaves at
 * max(send + delay, previous departure) + wire time, exactly. */
static void rate_run(const char *opts, uint64_t delay, uint64_t rate, int32_t po, uint32_t cs,
		     int32_t co, unsigned n, uint64_t max_gap)
{
	env_init(n, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 %s", opts);
	xs_seed(777);
	uint64_t last = 0, backlogged = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = xs_range(64, 1500);
		unsigned k = send_len(len, NULL);
		uint64_t now = L.send_ns[k];
		backlogged += last > now;
		uint64_t start = now + delay > last ? now + delay : last;
		last = start + wire_ns(len, po, cs, co, rate);
		if (xs_next() % 2)
			advance(xs_range(0, (uint32_t)max_gap));
	}
	advance(100000 * MS);
	CHECK_EQ(L.sent, n);
	xs_seed(777);
	last = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = xs_range(64, 1500);
		CHECK_EQ(L.pkts[i].len, len);
		uint64_t now = L.send_ns[i];
		uint64_t start = now + delay > last ? now + delay : last;
		last = start + wire_ns(len, po, cs, co, rate);
		if (L.xmit_ns[i] != last)
			fprintf(stderr, "rate: packet %u len %u: left at %" PRIu64 ", want %" PRIu64 "\n",
				i, len, L.xmit_ns[i], last);
		CHECK_EQ(L.xmit_ns[i], last);
		CHECK_EQ(L.order[i], i); /* rate: no reordering */
		if (xs_next() % 2)
			xs_range(0, (uint32_t)max_gap);
	}
	printf("  rate %-40s %u packets, %" PRIu64 " behind a queued one\n", opts, n, backlogged);
	/* both cases seen: arriving at an empty queue and behind a queued one */
	CHECK(backlogged > n / 5 && backlogged < n - n / 5);
	env_fini();
}

static void test_rate(void)
{
	/* 8 Mbit/s = 1e6 B/s; cells of 64 bytes carrying 4 bytes each */
	rate_run("rate 8mbit 20 64 4", 0, 1000000, 20, 64, 4, 20000, 8 * MS);
	/* ATM-like: 48-byte cells of 53, 14 bytes taken off */
	rate_run("rate 100kbit -14 48 5 delay 5ms", 5 * MS, 12500, -14, 48, 5, 3000, 600 * MS);
	/* no cells */
	rate_run("rate 1gbit", 0, 125000000, 0, 0, 0, 20000, 60000);
}

/* Deliveries of a saturated queue, grouped by departure time. */
struct groups {
	unsigned n;
	uint64_t t[4096];
	unsigned first[4096], count[4096];
};

static void group_departures(struct groups *g)
{
	g->n = 0;
	for (unsigned k = 0; k < L.norder; k++) {
		unsigned i = L.order[k];
		CHECK_EQ(i, k); /* in arrival order */
		if (!g->n || L.xmit_ns[i] != g->t[g->n - 1]) {
			CHECK(g->n < 4096);
			g->t[g->n] = L.xmit_ns[i];
			g->first[g->n] = i;
			g->count[g->n++] = 0;
		}
		g->count[g->n - 1]++;
	}
}

static struct groups G;

static void test_slot(void)
{
	/* slot 2ms 5ms packets 4: a burst leaves 4 at a time, the slots
	 * (rnd * (max - min) >> 32) + min apart: in [2ms, 5ms), uniform */
	env_init(400, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 1000 slot 2ms 5ms packets 4 seed 6001");
	for (int i = 0; i < 400; i++)
		send_len(100, NULL);
	CHECK_EQ(L.sent, 4);
	advance(2000 * MS);
	CHECK_EQ(L.sent, 400);
	group_departures(&G);
	CHECK_EQ(G.n, 100);
	CHECK_EQ(G.t[0], T0);
	double sum = 0;
	for (unsigned k = 0; k < G.n; k++) {
		CHECK_EQ(G.count[k], 4);
		if (k) {
			uint64_t gap = G.t[k] - G.t[k - 1];
			CHECK(gap >= (uint64_t)(2 * MS) && gap < (uint64_t)(5 * MS));
			sum += (double)gap;
		}
	}
	/* mean of 99 uniform gaps: 3.5 ms, sd 3ms / sqrt(12); 5 se
	 * (P(false failure) < 6e-7) */
	double mean = sum / 99, se = 3.0 * MS / sqrt(12.0) / sqrt(99.0);
	printf("  slot 2ms 5ms: mean gap %.3f ms (want 3.5, %+.2f se)\n", mean / MS,
	       (mean - 3.5 * MS) / se);
	CHECK(fabs(mean - 3.5 * MS) < 5 * se);
	env_fini();

	/* slot 1ms bytes 3000: a slot ends with the packet that uses up the
	 * byte budget (bytes_left <= 0): every packet but the last of a slot
	 * fits below 3000 bytes; the slots exactly 1 ms apart */
	env_init(600, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 1000 slot 1ms bytes 3000 seed 6002");
	xs_seed(5);
	for (int i = 0; i < 600; i++)
		send_len(xs_range(100, 1500), NULL);
	advance(2000 * MS);
	CHECK_EQ(L.sent, 600);
	{
		uint64_t slot = T0, used = 0;
		for (unsigned i = 0; i < 600; i++) {
			CHECK_EQ(L.xmit_ns[i], slot);
			used += L.pkts[i].len;
			if (used >= 3000) {
				slot += 1 * MS;
				used = 0;
			}
		}
	}
	group_departures(&G);
	for (unsigned k = 0; k < G.n; k++) {
		uint64_t b = 0;
		for (unsigned j = 0; j + 1 < G.count[k]; j++)
			b += L.pkts[G.first[k] + j].len;
		CHECK(b < 3000);
	}
	env_fini();
	/* a budget used up exactly (bytes_left == 0) ends the slot: 3 x 1000 */
	env_init(30, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 1000 slot 1ms bytes 3000 seed 6002");
	for (int i = 0; i < 30; i++)
		send_len(1000, NULL);
	advance(100 * MS);
	for (unsigned i = 0; i < 30; i++)
		CHECK_EQ(L.xmit_ns[i], T0 + (uint64_t)(i / 3) * MS);
	env_fini();

	/* a slot that opened before the head packet's time is drawn afresh
	 * from the dequeue's time (get_slot_next(now)); min == max makes the
	 * draw exact: the packet waits 3 ms from its enqueue, not its 1 ms */
	env_init(10, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem delay 1ms slot 3ms 3ms packets 2 seed 6005");
	advance(10 * MS);
	unsigned a = send_len(100, NULL);   /* slot (T0) < time (T0 + 11ms): redraw */
	advance(3 * MS);
	CHECK_EQ(L.xmit_ns[a], T0 + 13 * MS);
	unsigned b = send_len(100, NULL);   /* slot T0 + 13ms < T0 + 14ms: again */
	unsigned c = send_len(100, NULL);   /* same slot budget as b */
	advance(10 * MS);
	CHECK_EQ(L.xmit_ns[b], T0 + 16 * MS);
	CHECK_EQ(L.xmit_ns[c], T0 + 16 * MS);
	env_fini();

	/* slot distribution: the slot gaps are tabledist(delay, jitter) of the
	 * seeded stream, bit for bit, 3 packets per slot */
	const uint64_t seed = 6003;
	env_init(3000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 10000 slot distribution normal 5ms 1ms "
	      "packets 3 seed %" PRIu64, seed);
	int16_t *t;
	unsigned tn;
	char err[512];
	CHECK_EQ(pw__dist_get("normal", &t, &tn, err, sizeof(err)), 0);
	for (int i = 0; i < 3000; i++)
		send_len(100, NULL);
	advance(100000 * MS);
	CHECK_EQ(L.sent, 3000);
	group_departures(&G);
	CHECK_EQ(G.n, 1000);
	struct lfsr r;
	lfsr_seed(&r, seed);
	uint64_t at = T0;
	for (unsigned k = 0; k < G.n; k++) {
		CHECK_EQ(G.count[k], 3);
		CHECK_EQ(G.t[k], at);
		at += (uint64_t)k_tabledist(5 * MS, 1 * MS, lfsr_next(&r), t, tn);
	}
	free(t);
	env_fini();

	/* sparse traffic with a delay: a slot ends when its budget (2) is used
	 * up, or is drawn afresh (from the dequeue's time) when it opened
	 * before the head packet's time; either way the next delivery is at
	 * least MIN (3 ms) later.  So any 3 consecutive departures span at
	 * least 3 ms, while pairs closer than that do occur (two in a slot),
	 * and some packets wait for a slot beyond their delay. */
	env_init(4000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 1000 delay 1ms slot 3ms 6ms packets 2 "
	      "seed 6004");
	xs_seed(6004);
	for (int i = 0; i < 4000; i++) {
		send_len(100, NULL);
		if (xs_next() % 2)
			advance(xs_range(0, 8 * MS));
	}
	advance(10000 * MS);
	CHECK_EQ(L.sent, 4000);
	unsigned pairs = 0, waited = 0;
	for (unsigned i = 0; i < 4000; i++) {
		CHECK_EQ(L.order[i], i);
		CHECK(L.xmit_ns[i] >= L.send_ns[i] + 1 * MS);
		waited += L.xmit_ns[i] > L.send_ns[i] + 1 * MS;
		if (i >= 2)
			CHECK(L.xmit_ns[i] - L.xmit_ns[i - 2] >= (uint64_t)(3 * MS));
		if (i >= 1)
			pairs += L.xmit_ns[i] - L.xmit_ns[i - 1] < (uint64_t)(3 * MS);
	}
	printf("  slot 3ms 6ms packets 2, sparse: %u close pairs, %u waited for a slot\n", pairs,
	       waited);
	CHECK(pairs > 100 && waited > 100);
	env_fini();
}

/* limit: what does not fit is dropped (PW_DROP_QDISC_LIMIT, XMIT_DROP),
 * backlog and qlen exact. */
static void test_limit(void)
{
	env_init(1000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 50 delay 10ms seed 1");
	xs_seed(17);
	uint64_t bytes = 0;
	for (int i = 0; i < 80; i++) {
		int rc;
		uint32_t len = xs_range(60, 1500);
		unsigned k = send_len(len, &rc);
		if (i < 50) {
			CHECK_EQ(rc, PW_NET_XMIT_SUCCESS);
			bytes += len;
		} else {
			CHECK_EQ(rc, PW_NET_XMIT_DROP);
			CHECK_EQ(L.state[k], 3);
			CHECK_EQ(L.reason[k], PW_DROP_QDISC_LIMIT);
		}
		struct pw_qdisc_stats st = qstats();
		CHECK_EQ(st.qlen, i < 50 ? i + 1 : 50);
		CHECK_EQ(st.backlog, bytes);
	}
	struct pw_qdisc_stats st = qstats();
	CHECK_EQ(st.drops, 30);
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], 30);
	advance(10 * MS);
	st = qstats();
	CHECK_EQ(st.qlen, 0);
	CHECK_EQ(st.backlog, 0);
	CHECK_EQ(st.packets, 50);
	CHECK_EQ(st.bytes, bytes);
	CHECK_EQ(L.sent, 50);
	env_fini();

	/* at the limit with duplicates: the duplicate is enqueued (and dropped)
	 * first; the original dropped too but enqueue says success, as the
	 * kernel's rc_drop once a duplicate went in */
	env_init(1000, true, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 10 delay 10ms duplicate 100%% seed 1");
	for (int i = 0; i < 8; i++) {
		int rc;
		unsigned k = send_len(100, &rc);
		CHECK_EQ(rc, PW_NET_XMIT_SUCCESS);
		if (i >= 5) {
			CHECK_EQ(L.state[k], 3);
			CHECK_EQ(L.reason[k], PW_DROP_QDISC_LIMIT);
			CHECK_EQ(L.state[L.n - 1], 3); /* its duplicate */
		}
	}
	st = qstats();
	CHECK_EQ(st.qlen, 10);
	CHECK_EQ(st.drops, 6);
	env_fini(); /* destroy with 10 queued */
	CHECK_EQ(L.drop_by[PW_DROP_DEV_DESTROY], 10);
}

/* --------------------------------------------------------------- 5. seed */

struct trace {
	unsigned n;
	uint8_t *state;
	uint64_t *xmit_ns;
	int32_t *parent;
	uint8_t *data;
};

static void trace_run(const char *seedopt, struct trace *tr)
{
	const unsigned n = 20000;
	env_init(3 * n, true, true);
	L.clone_mode = CLONE_COPY;
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 10ms 5ms 20%% loss 5%% 10%% "
	      "duplicate 5%% corrupt 5%% reorder 10%% gap 2%s", seedopt);
	xs_seed(31337);
	for (unsigned i = 0; i < n; i++) {
		send_len(xs_range(1, 1500), NULL);
		advance(xs_range(0, 300000));
	}
	advance(100 * MS);
	tr->n = L.n;
	tr->state = malloc(L.n);
	tr->xmit_ns = malloc(L.n * sizeof(uint64_t));
	tr->parent = malloc(L.n * sizeof(int32_t));
	tr->data = malloc((size_t)L.n * DATALEN);
	CHECK(tr->state && tr->xmit_ns && tr->parent && tr->data);
	memcpy(tr->state, L.state, L.n);
	memcpy(tr->xmit_ns, L.xmit_ns, L.n * sizeof(uint64_t));
	memcpy(tr->parent, L.parent, L.n * sizeof(int32_t));
	memcpy(tr->data, L.data, (size_t)L.n * DATALEN);
	for (unsigned i = 0; i < L.n; i++)
		CHECK(L.state[i] == 2 || (L.state[i] == 3 && L.reason[i] == PW_DROP_NETEM_LOSS));
	env_fini();
}

static void trace_free(struct trace *tr)
{
	free(tr->state);
	free(tr->xmit_ns);
	free(tr->parent);
	free(tr->data);
}

/* Entries that differ (over the common length, plus the length difference). */
static unsigned trace_diff(const struct trace *a, const struct trace *b)
{
	unsigned n = a->n < b->n ? a->n : b->n;
	unsigned d = a->n > b->n ? a->n - b->n : b->n - a->n;
	for (unsigned i = 0; i < n; i++)
		d += a->state[i] != b->state[i] || a->xmit_ns[i] != b->xmit_ns[i] ||
		     a->parent[i] != b->parent[i] ||
		     memcmp(a->data + (size_t)i * DATALEN, b->data + (size_t)i * DATALEN, DATALEN);
	return d;
}

static void test_seed(void)
{
	struct trace a, b, c;
	trace_run(" seed 7", &a);
	trace_run(" seed 7", &b);
	trace_run(" seed 8", &c);
	CHECK_EQ(trace_diff(&a, &b), 0);
	unsigned d = trace_diff(&a, &c);
	printf("  seed 7 vs 7: identical (%u packets); seed 7 vs 8: %u differ\n", a.n, d);
	CHECK(d > a.n / 2);
	/* the trace has all of it: losses, duplicates, corruption, reorder */
	unsigned lost = 0, dups = 0, corrupt = 0;
	for (unsigned i = 0; i < a.n; i++) {
		lost += a.state[i] == 3;
		dups += a.parent[i] >= 0;
		unsigned o = a.parent[i] < 0 ? i : (unsigned)a.parent[i];
		for (unsigned j = 0; j < DATALEN; j++)
			if (a.data[(size_t)i * DATALEN + j] != pattern(o, j)) {
				corrupt++;
				break;
			}
	}
	CHECK(lost > 100 && dups > 100 && corrupt > 100);
	trace_free(&a);
	trace_free(&b);
	trace_free(&c);

	/* the seed is shown; without one a random seed, not shown */
	env_init(10, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem delay 1ms seed 7");
	char out[1024];
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(strstr(out, " seed 7"));
	tc_ok("qdisc replace dev eth0 root handle 1: netem delay 1ms");
	struct pw__netem_prng_info p1, p2;
	pw__netem_prng_info(netem_q(), &p1);
	CHECK(!p1.seed_given);
	tc_ok("qdisc replace dev eth0 root handle 1: netem delay 1ms");
	pw__netem_prng_info(netem_q(), &p2);
	CHECK(!p2.seed_given);
	CHECK(p1.seed != p2.seed);
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strstr(out, "seed"));
	env_fini();
}

/* ---------------------------------------------- 6. the time-ordered queue */

static char tmpdir[64];

static void check_time_order(void)
{
	for (unsigned k = 0; k < L.norder; k++) {
		unsigned i = L.order[k];
		CHECK_EQ(L.xmit_ns[i], L.pkts[i].pw_time_to_send);
		if (k) {
			unsigned j = L.order[k - 1];
			uint64_t ta = L.pkts[j].pw_time_to_send, tb = L.pkts[i].pw_time_to_send;
			CHECK(ta < tb || (ta == tb && j < i)); /* ties in arrival order */
		}
	}
}

static void test_tfifo(void)
{
	/* uniform jitter: heavy reordering, every packet at its time */
	env_init(20000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 10ms 5ms seed 8001");
	xs_seed(8001);
	for (int i = 0; i < 20000; i++) {
		send_len(100, NULL);
		if (i % 3 == 0)
			advance(xs_range(0, 300000));
	}
	advance(100 * MS);
	CHECK_EQ(L.sent, 20000);
	check_time_order();
	unsigned inversions = 0;
	for (unsigned k = 1; k < L.norder; k++)
		inversions += L.order[k] < L.order[k - 1];
	CHECK(inversions > 1000);
	env_fini();

	/* a three-valued table (-1, 0, +1 sigma): bursts 1 ms apart meet
	 * earlier bursts' packets at equal times; ties leave in arrival order */
	char path[128];
	snprintf(path, sizeof(path), "%s/three.dist", tmpdir);
	FILE *f = fopen(path, "w");
	CHECK(f);
	fputs("# -1, 0, +1 standard deviation\n-8192 0 8192\n", f);
	CHECK_EQ(fclose(f), 0);
	env_init(30000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 2ms 1ms distribution %s "
	      "seed 8002", path);
	for (int b = 0; b < 6000; b++) {
		for (int i = 0; i < 5; i++)
			send_len(100, NULL);
		advance(MS);
	}
	advance(100 * MS);
	CHECK_EQ(L.sent, 30000);
	check_time_order();
	unsigned ties = 0;
	for (unsigned k = 0; k < L.n; k++) {
		uint64_t d = L.pkts[k].pw_time_to_send - L.send_ns[k];
		CHECK(d == (uint64_t)MS || d == (uint64_t)(2 * MS) || d == (uint64_t)(3 * MS));
		if (k && L.xmit_ns[L.order[k]] == L.xmit_ns[L.order[k - 1]])
			ties++;
	}
	CHECK(ties > 10000);
	env_fini();

	/* tc change with packets queued (list, heap and the reorder queue
	 * behind a busy driver): nothing lost, the queued keep their times,
	 * the new options apply to new packets; a lower limit drops only new
	 * packets */
	env_init(2000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 10000 delay 100ms 50ms reorder 20%% "
	      "seed 8003");
	for (int i = 0; i < 400; i++) {
		send_len(100, NULL);
		advance(10000);
	}
	L.busy_left = 1; /* the next transmit is refused: the queue stops */
	advance(200 * MS);
	unsigned held = L.n - (unsigned)L.sent;
	CHECK(held > 0 && L.sent > 0);
	for (int i = 0; i < 100; i++) /* reordered ones wait in the head queue */
		send_len(100, NULL);
	struct pw_qdisc_stats st = qstats();
	CHECK_EQ(st.qlen, L.n - L.sent);
	uint64_t queued = st.qlen;
	tc_ok("qdisc change dev eth0 root handle 1: netem limit %" PRIu64 " delay 1ms seed 8004",
	      queued);
	CHECK_EQ(L.dropped, 0);
	CHECK_EQ(qstats().qlen, queued);
	int rc;
	unsigned k = send_len(100, &rc); /* full at the new limit */
	CHECK_EQ(rc, PW_NET_XMIT_DROP);
	CHECK_EQ(L.reason[k], PW_DROP_QDISC_LIMIT);
	uint64_t wake = pw_now_ns(L.rt), sent_before = L.sent;
	unsigned old_n = L.n - 1;
	CHECK_EQ(pw_cpu_enter(L.rt, 0), 0);
	CHECK_EQ(pw_netif_wake_queue(L.dev, 0), 0);
	pw_cpu_exit(L.rt);
	advance(1000 * MS);
	CHECK_EQ(L.sent + 1, L.n);
	CHECK_EQ(qstats().qlen, 0);
	/* what was queued leaves at max(its time, the wake), and its time is
	 * the old delay's (100ms +- 50ms) or, reordered, its send time */
	unsigned reordered = 0, prev_r = ~0u;
	for (unsigned k2 = (unsigned)sent_before; k2 < L.norder; k2++) {
		unsigned i = L.order[k2];
		CHECK(i < old_n);
		uint64_t tts = L.pkts[i].pw_time_to_send, d = tts - L.send_ns[i];
		CHECK_EQ(L.xmit_ns[i], tts > wake ? tts : wake);
		CHECK(d == 0 || (d >= (uint64_t)(50 * MS) && d < (uint64_t)(150 * MS)));
		/* after the packet the driver refused: the reorder queue, head
		 * first (enqueued at the head: last in, first out), then the
		 * time-ordered queue */
		if (k2 > sent_before && d == 0) {
			CHECK_EQ(k2, sent_before + 1 + reordered);
			CHECK(i < prev_r);
			prev_r = i;
			reordered++;
		}
	}
	CHECK(reordered > 5);
	unsigned k2 = send_len(100, NULL);
	advance(2 * MS);
	CHECK_EQ(L.xmit_ns[k2], L.send_ns[k2] + 1 * MS);
	env_fini();
}

/* The calendar (sched/tfifo.c) at its edges, through the whole qdisc: a
 * small limit (128 buckets) with jitter far beyond what they span, width
 * changes (tc change) with packets queued, ties from a table, a long
 * pause, then a reset with packets queued: every packet sent leaves at its
 * time_to_send, in (time, arrival) order, and the reset drops the rest. */
static void test_tfifo_calendar(void)
{
	static const char *const opts[] = {
		"limit 100 delay 1ms 500ms", /* the heap takes most */
		"limit 100 delay 10ms 1ms",  /* a narrower width */
		"limit 100 delay 2ms 1ms distribution normal",
		"limit 100 delay 1ms 5s distribution pareto",
	};
	env_init(12000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem %s seed 8101", opts[0]);
	xs_seed(8101);
	unsigned phase = 0;
	for (int i = 0; i < 10000; i++) {
		if (i % 1500 == 1499) {
			phase = (phase + 1) % 4;
			tc_ok("qdisc change dev eth0 root handle 1: netem %s seed %d", opts[phase],
			      8102 + i);
			CHECK_EQ(L.dropped, L.drop_by[PW_DROP_QDISC_LIMIT]);
		}
		send_len(100, NULL);
		if (i == 5000)
			advance(3000 * MS); /* far forward: all due at once */
		else
			advance(xs_range(0, 400000));
	}
	CHECK(qstats().qlen > 0);
	/* a delay below 0 (jitter > latency) sends at once: each packet
	 * leaves at max(time_to_send, its send time); those that waited
	 * leave in (time, arrival) order */
	unsigned waited = 0;
	for (unsigned k = 0; k < L.norder; k++) {
		unsigned i = L.order[k];
		uint64_t tts = L.pkts[i].pw_time_to_send;
		CHECK_EQ(L.xmit_ns[i], tts > L.send_ns[i] ? tts : L.send_ns[i]);
		if (k && tts > L.send_ns[i]) {
			unsigned j = L.order[k - 1];
			uint64_t tj = L.pkts[j].pw_time_to_send;
			CHECK(L.xmit_ns[j] <= tts);
			if (tj > L.send_ns[j])
				CHECK(tj < tts || (tj == tts && j < i));
			waited++;
		}
	}
	CHECK(L.sent > 3000 && waited > 1000);
	tc_ok("qdisc del dev eth0 root"); /* reset: the rest dropped */
	CHECK_EQ(L.sent + L.dropped, L.n);
	CHECK(L.drop_by[PW_DROP_FLUSH] > 0);
	env_fini();
}

/* Delete, replace and destroy with packets in all three of netem's queues
 * (list, heap, reordered) and the core's requeue slot, duplicates
 * included: each dropped once, nothing sent afterwards. */
static void teardown_run(int how)
{
	env_init(2000, true, false);
	L.clone_mode = CLONE_COPY;
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 10000 delay 20ms 10ms reorder 30%% "
	      "duplicate 20%% seed 9001");
	L.busy_left = 1 << 30; /* the driver refuses everything */
	for (int i = 0; i < 300; i++) {
		send_len(100, NULL);
		advance(50000);
	}
	CHECK_EQ(L.sent, 0);
	struct pw_qdisc_stats st = qstats();
	CHECK_EQ(st.qlen, L.n);
	CHECK(L.n > 300);
	switch (how) {
	case 0:
		tc_ok("qdisc del dev eth0 root");
		CHECK_EQ(L.drop_by[PW_DROP_FLUSH], L.n);
		break;
	case 1:
		tc_ok("qdisc replace dev eth0 root handle 2: netem delay 1s");
		CHECK_EQ(L.drop_by[PW_DROP_FLUSH], L.n);
		break;
	case 2:
		break; /* env_fini destroys the device */
	}
	unsigned n = L.n;
	L.busy_left = 0;
	advance(2000 * MS);
	CHECK_EQ(L.sent, 0);
	env_fini();
	if (how == 2)
		CHECK_EQ(L.drop_by[PW_DROP_DEV_DESTROY], n);
}

static void test_teardown(void)
{
	teardown_run(0);
	teardown_run(1);
	teardown_run(2);

	/* netem under mq, packets queued on both queues, device destroyed */
	env_init(1000, true, false);
	ledger_check_all_back();
	pw_netdev_destroy(L.dev);
	CHECK_EQ(pw_netdev_create(L.rt, "eth1", 2, &ops_clone, NULL, &L.dev), 0);
	tc_ok("qdisc add dev eth1 root handle 1: mq");
	tc_ok("qdisc add dev eth1 parent 1:1 netem delay 50ms 10ms duplicate 50%% seed 1");
	tc_ok("qdisc add dev eth1 parent 1:2 netem delay 50ms reorder 50%% seed 2");
	for (int i = 0; i < 200; i++) {
		unsigned k;
		struct pw_pkt *p = new_pkt(100, &k);
		p->hash = (uint32_t)i * 0x9e3779b9u;
		L.send_ns[k] = pw_now_ns(L.rt);
		pw_dev_queue_xmit(L.dev, p); /* no CPU: by hash over both queues */
	}
	advance(30 * MS);
	CHECK(L.sent > 0 && L.sent < L.n);
	env_fini();
}

/* ------------------------------------ 5. inorder (pinwheel's extension) */

/* The packets `inorder` held back, as tc -d prints them (-1: not shown). */
static long long inorder_held_shown(void)
{
	char out[2048];
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", PW_TC_DETAILS, out, sizeof(out), NULL, 0), 0);
	const char *h = strstr(out, " inorder held ");
	return h ? strtoll(h + 14, NULL, 10) : -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct sojourn {
	double mean_ms, p50_ms, p99_ms, max_ms;
	uint64_t held;      /* packets the rule delayed */
	unsigned overtaken; /* packets that left after one enqueued behind them */
};

/* @n packets of 1000 bytes, one every @gap ns, through `netem delay 20ms
 * 5ms seed @seed [inorder]`: each leaves at the time the test computes
 * from the same draws (LFSR113 seeded as the kernel, one draw per packet:
 * the uniform delay), max(send + draw, the previous packet's time) with
 * inorder; the sojourn's figures in *@out. */
static void inorder_run(bool inorder, uint64_t gap, unsigned n, uint64_t seed,
			struct sojourn *out)
{
	env_init(n, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem limit 1000000 delay 20ms 5ms seed %" PRIu64
	      "%s", seed, inorder ? " inorder" : "");
	for (unsigned i = 0; i < n; i++) {
		send_len(1000, NULL);
		advance(gap);
	}
	advance(100 * MS);
	CHECK_EQ(L.sent, n);
	struct lfsr r;
	lfsr_seed(&r, seed);
	uint64_t prev = 0, held = 0;
	uint64_t *soj = malloc(n * sizeof(*soj));
	CHECK(soj);
	double sum = 0;
	for (unsigned i = 0; i < n; i++) {
		int64_t d = k_tabledist(20 * MS, 5 * MS, lfsr_next(&r), NULL, 0);
		uint64_t t = L.send_ns[i] + (uint64_t)d;
		if (inorder && t < prev) {
			t = prev;
			held++;
		}
		prev = t;
		CHECK_EQ(L.xmit_ns[i], t);
		soj[i] = L.xmit_ns[i] - L.send_ns[i];
		sum += (double)soj[i];
	}
	unsigned overtaken = 0, maxi = 0;
	for (unsigned k = 0; k < L.norder; k++) {
		if (k && L.order[k] < maxi)
			overtaken++;
		if (L.order[k] > maxi)
			maxi = L.order[k];
		if (inorder)
			CHECK_EQ(L.order[k], k);
	}
	CHECK_EQ(inorder_held_shown(), inorder ? (long long)held : -1);
	qsort(soj, n, sizeof(*soj), cmp_u64);
	out->mean_ms = sum / n / 1e6;
	out->p50_ms = (double)soj[n / 2] / 1e6;
	out->p99_ms = (double)soj[(uint64_t)n * 99 / 100] / 1e6;
	out->max_ms = (double)soj[n - 1] / 1e6;
	out->held = held;
	out->overtaken = overtaken;
	free(soj);
	env_fini();
}

/* The delay distributions with and without inorder, at 100 to 100,000
 * packets per second (docs/design/net.md prints these lines). */
static void test_inorder(void)
{
	static const uint64_t gaps[] = { 10 * MS, MS, MS / 10, MS / 100 };
	for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		struct sojourn plain, in;
		inorder_run(false, gaps[g], 20000, 4242, &plain);
		inorder_run(true, gaps[g], 20000, 4242, &in);
		printf("  inorder: %6.0f pkt/s  plain mean %.3f p50 %.3f p99 %.3f max %.3f ms, "
		       "%u overtaken | inorder mean %.3f p50 %.3f p99 %.3f max %.3f ms, %" PRIu64
		       " held\n",
		       1e9 / (double)gaps[g], plain.mean_ms, plain.p50_ms, plain.p99_ms, plain.max_ms,
		       plain.overtaken, in.mean_ms, in.p50_ms, in.p99_ms, in.max_ms, in.held);
		CHECK_EQ(in.overtaken, 0);
		/* never earlier than its own draw, never later than the largest
		 * draw: within [15, 25) ms */
		CHECK(in.mean_ms >= plain.mean_ms && in.p50_ms >= plain.p50_ms);
		CHECK(in.max_ms < 25.0 && plain.max_ms < 25.0);
		if (gaps[g] >= 10 * MS) {
			/* 10 ms apart, draws within 10 ms of each other: no
			 * packet can pass another, the two are the same */
			CHECK_EQ(in.held, 0);
			CHECK_EQ(plain.overtaken, 0);
			CHECK(in.mean_ms == plain.mean_ms && in.p99_ms == plain.p99_ms);
		} else {
			CHECK(plain.overtaken > 0 && in.held > 0);
		}
	}
}

/* inorder with rate: rate alone already starts each packet after the last
 * one queued, so the times are rate's, exactly, and nothing is held; with
 * packets queued, a change that turns inorder on keeps the new packets
 * behind every one queued; reorder and gap are refused, by name. */
static void test_inorder_rate_change(void)
{
	uint64_t *plain = malloc(3000 * sizeof(*plain));
	CHECK(plain);
	for (int inorder = 0; inorder < 2; inorder++) {
		env_init(3000, false, false);
		tc_ok("qdisc add dev eth0 root handle 1: netem limit 100000 delay 20ms 5ms rate 10mbit "
		      "seed 99%s", inorder ? " inorder" : "");
		xs_seed(31);
		for (unsigned i = 0; i < 3000; i++) {
			send_len(xs_range(64, 1500), NULL);
			advance(xs_range(0, 2 * MS));
		}
		advance(10000 * MS);
		CHECK_EQ(L.sent, 3000);
		for (unsigned i = 0; i < 3000; i++) {
			CHECK_EQ(L.order[i], i);
			if (inorder)
				CHECK_EQ(L.xmit_ns[i], plain[i]);
			else
				plain[i] = L.xmit_ns[i];
		}
		CHECK_EQ(inorder_held_shown(), inorder ? 0 : -1);
		env_fini();
	}
	free(plain);

	/* plain jitter with packets queued, then inorder */
	env_init(2000, false, false);
	tc_ok("qdisc add dev eth0 root handle 1: netem delay 20ms 10ms seed 5");
	for (unsigned i = 0; i < 1000; i++) {
		send_len(100, NULL);
		advance(MS / 20);
	}
	uint64_t latest = 0;
	CHECK(L.sent < 1000);
	tc_ok("qdisc change dev eth0 root handle 1: netem delay 20ms 10ms seed 5 inorder");
	for (unsigned i = 1000; i < 2000; i++) {
		send_len(100, NULL);
		advance(MS / 20);
	}
	advance(100 * MS);
	CHECK_EQ(L.sent, 2000);
	for (unsigned k = 0; k < 2000; k++)
		if (L.order[k] < 1000 && L.xmit_ns[L.order[k]] > latest)
			latest = L.xmit_ns[L.order[k]];
	for (unsigned i = 1000; i < 2000; i++) {
		CHECK(L.xmit_ns[i] >= latest);
		if (i > 1000)
			CHECK(L.xmit_ns[i] >= L.xmit_ns[i - 1]);
	}
	/* and off again: the word absent from a change turns it off */
	tc_ok("qdisc change dev eth0 root handle 1: netem delay 20ms 10ms seed 5");
	CHECK_EQ(inorder_held_shown(), -1);
	char out[1024];
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "qdisc netem 1: root refcnt 2 limit 1000 delay 20ms  10ms seed 5\n"));
	tc_ok("qdisc change dev eth0 root handle 1: netem delay 20ms 10ms inorder");
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "qdisc netem 1: root refcnt 2 limit 1000 delay 20ms  10ms inorder\n"));
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", PW_TC_JSON, out, sizeof(out), NULL, 0), 0);
	CHECK(strstr(out, "\"gap\":0,\"inorder\":true}"));

	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "delay 20ms 5ms inorder reorder 10%", "netem: \"inorder\" and \"reorder\" exclude each other" },
		{ "delay 20ms reorder 10% 5% inorder", "netem: \"inorder\" and \"reorder\" exclude each other" },
		{ "delay 20ms inorder gap 3", "netem: \"inorder\" and \"gap\" exclude each other" },
		{ "delay 20ms 5ms inorde", "What is \"inorde\"?" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char cmd[256], err[2048];
		snprintf(cmd, sizeof(cmd), "qdisc change dev eth0 root netem %s", bad[i].args);
		err[0] = '\0';
		CHECK(pw_tc(L.rt, cmd, 0, NULL, 0, err, sizeof(err)) != 0);
		if (!strstr(err, bad[i].msg))
			fprintf(stderr, "\"%s\": \"%s\"\n", cmd, err);
		CHECK(strstr(err, bad[i].msg));
	}
	/* the failed changes changed nothing */
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "qdisc netem 1: root refcnt 2 limit 1000 delay 20ms  10ms inorder\n"));
	env_fini();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pw-netem-XXXXXX");
	CHECK(mkdtemp(tmpdir));
	RUN(test_lfsr_vectors);
	RUN(test_delay_distributions);
	RUN(test_delay_correlation);
	RUN(test_loss);
	RUN(test_duplicate);
	RUN(test_corrupt);
	RUN(test_reorder);
	RUN(test_rate);
	RUN(test_slot);
	RUN(test_limit);
	RUN(test_seed);
	RUN(test_tfifo);
	RUN(test_tfifo_calendar);
	RUN(test_teardown);
	RUN(test_inorder);
	RUN(test_inorder_rate_change);
	char path[128];
	snprintf(path, sizeof(path), "%s/three.dist", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	ledger_free();
	return 0;
}
