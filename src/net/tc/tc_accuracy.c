/* SPDX-License-Identifier: MIT */
/*
 * Accuracy you can see, tc's half: a qdisc's achieved figures (kept by
 * accuracy.c while its device's accuracy is on) beside what its
 * configuration asks for, the check that judges the difference, and the
 * text and JSON `qdisc show` prints under PW_TC_ACCURACY (pinwheel-tc -A).
 * Also the public reads, pw_netdev_accuracy_read() and
 * pw_netdev_accuracy_check().
 *
 * The configured side, per kind (read under the root lock from the
 * kind's private state, as its tc print does):
 *  - netem: the sojourn quantiles its delay, jitter and table give when
 *    the host is punctual: with no table, the draw is uniform over
 *    [delay - jitter, delay + jitter); with a table, each of its n entries
 *    is one equally likely delay (the kernel's tabledist(), computed with
 *    netem's own function), sorted; a negative delay sends at once (0).
 *    Not comparable (not judged) when rate, slot, reorder/gap, inorder or
 *    a delay correlation change the distribution.  Its loss: `loss random P`
 *    (P = (loss + 1) / 2^32, the kernel's comparison), judged without a
 *    correlation, ecn or another loss model.  Its rate, judged without
 *    overhead or cells.
 *  - tbf: its rate (judged without overhead or a link layer).
 *  - htb: the sum of its top classes' ceil (shown, not judged: a backlog
 *    in some classes only is held below it on purpose).
 *  - fq: maxrate, a cap per flow (shown, not judged).
 *
 * The check, its metric and tolerance (<pinwheel/net.h> has the table):
 * sojourn p50 (p99 from 100 packets) within max(5%, 1 ms) of the
 * configured quantile; the mean of the judged rate windows within
 * max(5%, two of the largest packets per window); the configured loss
 * inside the achieved loss's Wilson interval at 99.9%; p99 lateness at
 * most 1 ms.  Why these: 1 ms is the floor below which an OS's wake-up
 * jitter (timer slack, scheduling) is normal and a test cannot rely on
 * it; 5% is finer than every report of a loaded emulator (2-5x) and
 * coarser than the histogram's 1.6% buckets and a shaper's packet
 * granularity; the loss interval is 99.9% so that a CI run of many
 * qdiscs does not fail one run in twenty by chance (a correct 95% interval
 * misses the truth 5% of the time).
 *
 * Threads: the tc thread (cfg_lock held) or any thread through the public
 * reads (which take cfg_lock).  Locks: the qdisc's root lock while its
 * state is read.
 */
#define _GNU_SOURCE
#include "tc_accuracy.h"

#include "../accuracy.h"
#include "../sched/fq.h"
#include "../sched/htb.h"
#include "../sched/netem_priv.h"
#include "../sched/tbf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double quantiles[PW_ACC_NQ] = { 0.10, 0.50, 0.90, 0.99, 0.999 };
static const char *const qnames[PW_ACC_NQ] = { "p10", "p50", "p90", "p99", "p99.9" };

/* ------------------------------------------------------ the configured */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* netem's delay quantiles (root lock held).  Return: 0; -ENOMEM. */
static int netem_quantiles(const struct netem_priv *nd, uint64_t *out)
{
	int64_t mu = nd->latency;
	int32_t sigma = (int32_t)nd->jitter;
	if (sigma == 0) {
		for (int i = 0; i < PW_ACC_NQ; i++)
			out[i] = mu > 0 ? (uint64_t)mu : 0;
		return 0;
	}
	if (!nd->delay_dist || nd->delay_dist_n == 0) {
		/* r uniform in [0, 2 sigma): the rank-th value of 2 sigma */
		uint64_t m = 2ull * (uint32_t)sigma;
		for (int i = 0; i < PW_ACC_NQ; i++) {
			uint64_t rank = (uint64_t)ceil(quantiles[i] * (double)m);
			int64_t v = mu - sigma + (int64_t)(rank ? rank - 1 : 0);
			out[i] = v > 0 ? (uint64_t)v : 0;
		}
		return 0;
	}
	unsigned n = nd->delay_dist_n;
	int64_t *v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		v[i] = pw__netem_tabledist(mu, sigma, i, nd->delay_dist, n);
	qsort(v, n, sizeof(*v), cmp_i64);
	for (int i = 0; i < PW_ACC_NQ; i++) {
		uint64_t rank = (uint64_t)ceil(quantiles[i] * (double)n);
		int64_t x = v[rank ? rank - 1 : 0];
		out[i] = x > 0 ? (uint64_t)x : 0;
	}
	free(v);
	return 0;
}

/* What @q's configuration asks for, and which figures can be judged
 * (*comparable: PW_ACC_* bits).  Root lock held.  Return: 0; -ENOMEM. */
static int configured(struct pw__qdisc *q, struct pw_qdisc_accuracy *a, unsigned *comparable)
{
	const char *id = q->ops->id;
	*comparable = PW_ACC_LATENESS;
	if (!strcmp(id, "netem")) {
		const struct netem_priv *nd = pw__qdisc_priv(q);
		int rc = netem_quantiles(nd, a->cfg_sojourn_ns);
		if (rc)
			return rc;
		a->has_cfg_sojourn = 1;
		if (!nd->rate && !nd->slot_config.min_delay && !nd->slot_config.max_delay &&
		    !nd->reorder && !nd->gap && !nd->delay_cor.rho && !nd->inorder)
			*comparable |= PW_ACC_SOJOURN;
		if (nd->loss_model == CLG_RANDOM) {
			a->has_cfg_loss = 1;
			a->cfg_loss = nd->loss ? ((double)nd->loss + 1.0) / 4294967296.0 : 0.0;
			if (!nd->loss_cor.rho && !nd->ecn)
				*comparable |= PW_ACC_LOSS;
		}
		if (nd->rate) {
			a->cfg_rate = nd->rate;
			if (!nd->packet_overhead && !nd->cell_size)
				*comparable |= PW_ACC_RATE;
		}
	} else if (!strcmp(id, "tbf")) {
		const struct tbf_priv *t = pw__qdisc_priv(q);
		a->cfg_rate = t->rate.rate_bytes_ps;
		if (!t->rate.overhead && t->rate.linklayer != PW_LINKLAYER_ATM && !t->rate.mpu)
			*comparable |= PW_ACC_RATE;
	} else if (!strcmp(id, "htb")) {
		const struct htb_priv *h = pw__qdisc_priv(q);
		for (unsigned i = 0; h->hash && i < h->hashsize; i++)
			for (const struct htb_class *c = h->hash[i]; c; c = c->hnext)
				if (!c->parent)
					a->cfg_rate += c->ceil.rate_bytes_ps;
	} else if (!strcmp(id, "fq")) {
		const struct fq_priv *f = pw__qdisc_priv(q);
		if (f->flow_max_rate != UINT64_MAX) {
			a->cfg_rate = f->flow_max_rate;
			a->cfg_rate_per_flow = 1;
		}
	}
	return 0;
}

/* ----------------------------------------------------------- the check */

/* Wilson's interval of @k successes in @n at @z. */
static void wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi)
{
	if (!n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	double nn = (double)n, p = (double)k / nn, z2 = z * z;
	double den = 1.0 + z2 / nn;
	double c = (p + z2 / (2 * nn)) / den;
	double h = z * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / den;
	*lo = k == 0 || c - h < 0 ? 0 : c - h; /* exact at the ends */
	*hi = k == n || c + h > 1 ? 1 : c + h;
}

static void why_add(struct pw_qdisc_accuracy *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void why_add(struct pw_qdisc_accuracy *a, const char *fmt, ...)
{
	size_t used = strlen(a->why);
	if (used + 1 >= sizeof(a->why))
		return;
	if (used)
		used += (size_t)snprintf(a->why + used, sizeof(a->why) - used, "; ");
	if (used + 1 >= sizeof(a->why))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->why + used, sizeof(a->why) - used, fmt, ap);
	va_end(ap);
}

static uint64_t tol_ns(uint64_t cfg)
{
	uint64_t rel = cfg / 100 * PW_ACC_TOL_PCT + cfg % 100 * PW_ACC_TOL_PCT / 100;
	return rel > PW_ACC_FLOOR_NS ? rel : PW_ACC_FLOOR_NS;
}

static uint64_t absdiff(uint64_t x, uint64_t y)
{
	return x > y ? x - y : y - x;
}

/* Judge the figures of @a that @comparable allows. */
static void judge(struct pw_qdisc_accuracy *a, unsigned comparable)
{
	char b1[32], b2[32], b3[32];
	if ((comparable & PW_ACC_SOJOURN) && a->released >= 20) {
		a->judged |= PW_ACC_SOJOURN;
		for (int i = 1; i <= 3; i += 2) { /* p50, p99 */
			if (i == 3 && a->released < 100)
				break;
			uint64_t want = a->cfg_sojourn_ns[i], got = a->sojourn_ns[i];
			if (absdiff(got, want) > tol_ns(want)) {
				a->failed |= PW_ACC_SOJOURN;
				why_add(a, "sojourn %s %s, configured %s (tolerance %s)", qnames[i],
					pw__sprint_time64((int64_t)got, b1, sizeof(b1)),
					pw__sprint_time64((int64_t)want, b2, sizeof(b2)),
					pw__sprint_time64((int64_t)tol_ns(want), b3, sizeof(b3)));
			}
		}
	}
	if ((comparable & PW_ACC_RATE) && a->cfg_rate && a->windows >= 3) {
		a->judged |= PW_ACC_RATE;
		uint64_t rel = a->cfg_rate / 100 * PW_ACC_TOL_PCT;
		/* two of the largest packets per window, in bytes/s */
		uint64_t pk = a->window_ns ? (uint64_t)(2.0 * (double)a->max_packet *
							 1e9 / (double)a->window_ns) : 0;
		uint64_t tol = rel > pk ? rel : pk;
		if (absdiff(a->rate_mean, a->cfg_rate) > tol) {
			a->failed |= PW_ACC_RATE;
			why_add(a, "rate %s, configured %s (tolerance %s)",
				pw__sprint_rate(a->rate_mean, false, b1, sizeof(b1)),
				pw__sprint_rate(a->cfg_rate, false, b2, sizeof(b2)),
				pw__sprint_rate(tol, false, b3, sizeof(b3)));
		}
	}
	if ((comparable & PW_ACC_LOSS) && a->has_cfg_loss && a->offered >= 100) {
		a->judged |= PW_ACC_LOSS;
		double lo, hi;
		wilson(a->lost, a->offered, 3.29, &lo, &hi);
		if (a->cfg_loss < lo || a->cfg_loss > hi) {
			a->failed |= PW_ACC_LOSS;
			why_add(a, "loss %.4g%% (99.9%% interval [%.4g%%, %.4g%%]), configured %.4g%%",
				100 * a->loss, 100 * lo, 100 * hi, 100 * a->cfg_loss);
		}
	}
	if ((comparable & PW_ACC_LATENESS) && a->fires) {
		a->judged |= PW_ACC_LATENESS;
		if (a->late_p99_ns > PW_ACC_FLOOR_NS) {
			a->failed |= PW_ACC_LATENESS;
			why_add(a, "watchdog lateness p99 %s > %s",
				pw__sprint_time64((int64_t)a->late_p99_ns, b1, sizeof(b1)),
				pw__sprint_time64(PW_ACC_FLOOR_NS, b2, sizeof(b2)));
		}
	}
	if (a->failed)
		a->verdict = PW_ACC_FAIL;
	else if (a->judged)
		a->verdict = PW_ACC_PASS;
	else {
		a->verdict = PW_ACC_NOT_JUDGED;
		why_add(a, a->released || a->offered ? "nothing comparable yet"
						       : "no packets yet");
	}
}

/* ------------------------------------------------------------- filling */

/* pw__tc_accuracy_fill(), handing the snapshot to *@keep (the caller
 * frees it) when @keep is not NULL. */
static int fill(struct pw__qdisc *q, struct pw_qdisc_accuracy *out, struct pw__acc **keep)
{
	memset(out, 0, sizeof(*out));
	struct pw__acc *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	int rc = pw__acc_snapshot(q, s);
	if (rc) {
		free(s);
		return rc;
	}
	out->handle = q->handle;
	out->parent = q->parent;
	snprintf(out->kind, sizeof(out->kind), "%s", q->ops->id);
	out->since_ns = s->since_ns;
	out->now_ns = pw_now_ns(q->dev->rt);
	out->released = s->sojourn.n;
	out->sojourn_min_ns = s->sojourn.n ? s->sojourn.min : 0;
	out->sojourn_max_ns = s->sojourn.max;
	out->sojourn_mean_ns = s->sojourn.n ? s->sojourn.sum / s->sojourn.n : 0;
	for (int i = 0; i < PW_ACC_NQ; i++)
		out->sojourn_ns[i] = pw__acc_quantile(&s->sojourn, quantiles[i]);
	out->window_ns = s->win.window_ns;
	out->windows = s->win.judged;
	out->max_packet = s->win.max_pkt;
	if (s->win.judged && s->win.window_ns) {
		double per = 1e9 / (double)s->win.window_ns;
		out->rate_mean = (uint64_t)((double)s->win.judged_bytes / (double)s->win.judged * per + 0.5);
		out->rate_min = (uint64_t)((double)s->win.min_bytes * per + 0.5);
		out->rate_max = (uint64_t)((double)s->win.max_bytes * per + 0.5);
	}
	out->offered = s->offered;
	out->lost = s->lost;
	out->loss = s->offered ? (double)s->lost / (double)s->offered : 0;
	wilson(s->lost, s->offered, 1.96, &out->loss_lo, &out->loss_hi);
	out->fires = s->late.n;
	out->late_p50_ns = pw__acc_quantile(&s->late, 0.50);
	out->late_p99_ns = pw__acc_quantile(&s->late, 0.99);
	out->late_max_ns = s->late.max;
	if (keep)
		*keep = s;
	else
		free(s);
	unsigned comparable = PW_ACC_LATENESS;
	if (!(q->ops->flags & PW__QF_MQ)) {
		pw__qlock(&q->root->lock);
		rc = configured(q, out, &comparable);
		pw__qunlock(&q->root->lock);
		if (rc) {
			if (keep) {
				free(*keep);
				*keep = NULL;
			}
			return rc;
		}
	}
	judge(out, comparable);
	return 0;
}

int pw__tc_accuracy_fill(struct pw__qdisc *q, struct pw_qdisc_accuracy *out)
{
	return fill(q, out, NULL);
}

static struct pw__qdisc *find_q(struct pw_netdev *dev, uint32_t handle)
{
	return handle ? pw__qdisc_find(dev, handle) : dev->qdisc;
}

int pw_netdev_accuracy_read(struct pw_netdev *dev, uint32_t handle, struct pw_qdisc_accuracy *out)
{
	if (!dev || !out)
		return -EINVAL;
	pthread_mutex_lock(&dev->net->cfg_lock);
	struct pw__qdisc *q = find_q(dev, handle);
	int rc = q ? pw__tc_accuracy_fill(q, out) : -ENOENT;
	pthread_mutex_unlock(&dev->net->cfg_lock);
	return rc;
}

struct check_arg {
	int worst;
	char *why;
	size_t len;
	int rc;
};

static void check_one(struct pw_netdev *dev, struct pw__qdisc *q, void *arg)
{
	(void)dev;
	struct check_arg *ca = arg;
	if ((q->ops->flags & (PW__QF_MQ | PW__QF_BUILTIN)) || !q->acc)
		return;
	struct pw_qdisc_accuracy a;
	int rc = pw__tc_accuracy_fill(q, &a);
	if (rc) {
		if (rc != -ENOENT)
			ca->rc = rc;
		return;
	}
	if (a.verdict == PW_ACC_FAIL && ca->why && ca->len) {
		size_t used = strlen(ca->why);
		snprintf(ca->why + used, ca->len - used, "%s%s %x: %s", used ? "\n" : "", a.kind,
			 a.handle >> 16, a.why);
	}
	if (a.verdict == PW_ACC_FAIL || (a.verdict == PW_ACC_PASS && ca->worst == PW_ACC_NOT_JUDGED))
		ca->worst = (int)a.verdict;
}

int pw_netdev_accuracy_check(struct pw_netdev *dev, char *why, size_t len)
{
	if (!dev)
		return -EINVAL;
	if (why && len)
		why[0] = '\0';
	struct check_arg ca = { PW_ACC_NOT_JUDGED, why, len, 0 };
	pthread_mutex_lock(&dev->net->cfg_lock);
	if (!dev->acc_on)
		ca.rc = -ENOENT;
	else
		pw__tc_for_each_qdisc(dev, check_one, &ca);
	pthread_mutex_unlock(&dev->net->cfg_lock);
	return ca.rc ? ca.rc : ca.worst;
}

/* ------------------------------------------------------------ printing */

static const char *verdict_name(enum pw_acc_verdict v)
{
	return v == PW_ACC_PASS ? "pass" : v == PW_ACC_FAIL ? "fail" : "not judged";
}

static void print_bits(struct pw__out *o, const char *key, unsigned bits)
{
	static const char *const names[] = { "sojourn", "rate", "loss", "lateness" };
	pw__open_json_array(o, PW_PRINT_JSON, key);
	for (unsigned i = 0; i < 4; i++)
		if (bits & (1u << i))
			pw__print_string(o, PW_PRINT_JSON, NULL, NULL, names[i]);
	pw__close_json_array(o, PW_PRINT_JSON, NULL);
}

static char *t64(uint64_t ns, char *b, size_t n)
{
	return pw__sprint_time64((int64_t)(ns > INT64_MAX ? INT64_MAX : ns), b, n);
}

/* The sojourn histogram's non-empty buckets: JSON [[lo_ns, width_ns,
 * count], ...]; text (-d) "  histogram LO:COUNT ..." (LO the bucket's
 * lowest value). */
static void print_buckets(struct pw__out *o, const struct pw__acc_hist *h)
{
	char b[32];
	if (o->json)
		pw__open_json_array(o, PW_PRINT_JSON, "sojourn_buckets");
	else
		pw__print_fp(o, "  histogram");
	for (unsigned i = 0; i < PW__ACC_NBUCKETS; i++) {
		if (!h->b[i])
			continue;
		uint64_t lo, w;
		pw__acc_bucket_range(i, &lo, &w);
		if (o->json) {
			pw__open_json_array(o, PW_PRINT_JSON, NULL);
			pw__print_u64(o, PW_PRINT_JSON, NULL, NULL, lo);
			pw__print_u64(o, PW_PRINT_JSON, NULL, NULL, w);
			pw__print_u64(o, PW_PRINT_JSON, NULL, NULL, h->b[i]);
			pw__close_json_array(o, PW_PRINT_JSON, NULL);
		} else {
			pw__print_fp(o, " %s:%" PRIu64, t64(lo, b, sizeof(b)), h->b[i]);
		}
	}
	if (o->json)
		pw__close_json_array(o, PW_PRINT_JSON, NULL);
	else
		pw__print_nl(o);
}

static void print_json(struct pw__out *o, const struct pw_qdisc_accuracy *a,
		       const struct pw__acc_hist *h)
{
	pw__open_json_object(o, "accuracy");
	pw__print_u64(o, PW_PRINT_JSON, "since_ns", NULL, a->since_ns);
	pw__print_u64(o, PW_PRINT_JSON, "now_ns", NULL, a->now_ns);
	pw__open_json_object(o, "sojourn_ns");
	pw__print_u64(o, PW_PRINT_JSON, "count", NULL, a->released);
	pw__print_u64(o, PW_PRINT_JSON, "min", NULL, a->sojourn_min_ns);
	pw__print_u64(o, PW_PRINT_JSON, "mean", NULL, a->sojourn_mean_ns);
	for (int i = 0; i < PW_ACC_NQ; i++)
		pw__print_u64(o, PW_PRINT_JSON, qnames[i], NULL, a->sojourn_ns[i]);
	pw__print_u64(o, PW_PRINT_JSON, "max", NULL, a->sojourn_max_ns);
	pw__close_json_object(o);
	print_buckets(o, h);
	if (a->has_cfg_sojourn) {
		pw__open_json_object(o, "configured_sojourn_ns");
		for (int i = 0; i < PW_ACC_NQ; i++)
			pw__print_u64(o, PW_PRINT_JSON, qnames[i], NULL, a->cfg_sojourn_ns[i]);
		pw__close_json_object(o);
	}
	pw__open_json_object(o, "rate");
	pw__print_u64(o, PW_PRINT_JSON, "window_ns", NULL, a->window_ns);
	pw__print_u64(o, PW_PRINT_JSON, "windows", NULL, a->windows);
	pw__print_u64(o, PW_PRINT_JSON, "mean", NULL, a->rate_mean);
	pw__print_u64(o, PW_PRINT_JSON, "min", NULL, a->rate_min);
	pw__print_u64(o, PW_PRINT_JSON, "max", NULL, a->rate_max);
	if (a->cfg_rate)
		pw__print_u64(o, PW_PRINT_JSON, "configured", NULL, a->cfg_rate);
	if (a->cfg_rate_per_flow)
		pw__print_bool(o, PW_PRINT_JSON, "per_flow", NULL, true);
	pw__close_json_object(o);
	pw__open_json_object(o, "loss");
	pw__print_u64(o, PW_PRINT_JSON, "offered", NULL, a->offered);
	pw__print_u64(o, PW_PRINT_JSON, "lost", NULL, a->lost);
	pw__print_float(o, PW_PRINT_JSON, "ratio", NULL, a->loss);
	pw__print_float(o, PW_PRINT_JSON, "wilson95_lo", NULL, a->loss_lo);
	pw__print_float(o, PW_PRINT_JSON, "wilson95_hi", NULL, a->loss_hi);
	if (a->has_cfg_loss)
		pw__print_float(o, PW_PRINT_JSON, "configured", NULL, a->cfg_loss);
	pw__close_json_object(o);
	pw__open_json_object(o, "lateness_ns");
	pw__print_u64(o, PW_PRINT_JSON, "fires", NULL, a->fires);
	pw__print_u64(o, PW_PRINT_JSON, "p50", NULL, a->late_p50_ns);
	pw__print_u64(o, PW_PRINT_JSON, "p99", NULL, a->late_p99_ns);
	pw__print_u64(o, PW_PRINT_JSON, "max", NULL, a->late_max_ns);
	pw__close_json_object(o);
	pw__open_json_object(o, "check");
	pw__print_string(o, PW_PRINT_JSON, "verdict", NULL, verdict_name(a->verdict));
	print_bits(o, "judged", a->judged);
	print_bits(o, "failed", a->failed);
	pw__print_string(o, PW_PRINT_JSON, "why", NULL, a->why);
	pw__close_json_object(o);
	pw__close_json_object(o);
}

static void print_text(struct pw__out *o, const struct pw_qdisc_accuracy *a,
		       const struct pw__acc_hist *h)
{
	char b1[32], b2[32], b3[32], b4[32];
	pw__print_fp(o, " accuracy over %s: %" PRIu64 " released, check %s",
		     t64(a->now_ns - a->since_ns, b1, sizeof(b1)), a->released,
		     verdict_name(a->verdict));
	if (a->why[0])
		pw__print_fp(o, " (%s)", a->why);
	pw__print_nl(o);
	pw__print_fp(o, "  sojourn min %s", t64(a->sojourn_min_ns, b1, sizeof(b1)));
	for (int i = 0; i < PW_ACC_NQ; i++)
		pw__print_fp(o, " %s %s", qnames[i], t64(a->sojourn_ns[i], b1, sizeof(b1)));
	pw__print_fp(o, " max %s", t64(a->sojourn_max_ns, b1, sizeof(b1)));
	pw__print_nl(o);
	if (a->has_cfg_sojourn) {
		pw__print_fp(o, "  configured");
		for (int i = 0; i < PW_ACC_NQ; i++)
			pw__print_fp(o, " %s %s", qnames[i], t64(a->cfg_sojourn_ns[i], b1, sizeof(b1)));
		if (!(a->judged & PW_ACC_SOJOURN))
			pw__print_fp(o, " (not judged)");
		pw__print_nl(o);
	}
	if (o->details) /* -d: the buckets themselves */
		print_buckets(o, h);
	pw__print_fp(o, "  rate %s min %s max %s over %" PRIu64 " windows of %s",
		     pw__sprint_rate(a->rate_mean, false, b1, sizeof(b1)),
		     pw__sprint_rate(a->rate_min, false, b2, sizeof(b2)),
		     pw__sprint_rate(a->rate_max, false, b3, sizeof(b3)), a->windows,
		     t64(a->window_ns, b4, sizeof(b4)));
	if (a->cfg_rate)
		pw__print_fp(o, ", configured %s%s", pw__sprint_rate(a->cfg_rate, false, b1, sizeof(b1)),
			     a->cfg_rate_per_flow ? " per flow" : "");
	pw__print_nl(o);
	pw__print_fp(o, "  loss %" PRIu64 "/%" PRIu64 " %.4g%% [%.4g%%, %.4g%%]", a->lost, a->offered,
		     100 * a->loss, 100 * a->loss_lo, 100 * a->loss_hi);
	if (a->has_cfg_loss)
		pw__print_fp(o, ", configured %.4g%%", 100 * a->cfg_loss);
	pw__print_nl(o);
	pw__print_fp(o, "  lateness p50 %s p99 %s max %s over %" PRIu64 " fires",
		     t64(a->late_p50_ns, b1, sizeof(b1)), t64(a->late_p99_ns, b2, sizeof(b2)),
		     t64(a->late_max_ns, b3, sizeof(b3)), a->fires);
	pw__print_nl(o);
}

void pw__tc_print_accuracy(struct pw__out *o, struct pw__qdisc *q)
{
	struct pw_qdisc_accuracy a;
	struct pw__acc *s = NULL;
	int rc = fill(q, &a, &s);
	if (rc) {
		pw__print_string(o, PW_PRINT_ANY, "accuracy", " accuracy %s",
				 rc == -ENOENT ? "off" : "unavailable");
		pw__print_nl(o);
		return;
	}
	if (o->json)
		print_json(o, &a, &s->sojourn);
	else
		print_text(o, &a, &s->sojourn);
	free(s);
}
