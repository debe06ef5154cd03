/* SPDX-License-Identifier: MIT */
/*
 * fq on the simulated clock.  Expectations come from models written here
 * from the kernel's sch_fq.c rules (not from fq.c's code): a single-flow
 * pacing model (credit, plen = max(len, quantum) above low_rate_threshold,
 * delay = plen * 1e9 / rate capped at 1 s, lateness absorbed up to half,
 * the watchdog firing at its hard expiry, soft + timer_slack), a DRR order
 * model for unpaced flows (initial_quantum, then quantum per round, new
 * flows before old), and a whole-qdisc model (bands and their weights,
 * DRR, throttling, pacing, EDT, fast path, limits, refill) run against
 * seeded random traffic, packet by packet to the nanosecond.  Directed
 * tests: maxrate, EDT + horizon drop/cap, flow_limit and the band limit,
 * orphan_mask classification, low_rate_threshold, timer_slack as the
 * watchdog's range, gc of idle flows, bands/weights shares, ce_threshold,
 * change/reset/delete/destroy with packets queued (exactly once, the
 * lowered limit dropping from the head), tc show/-s text and a
 * parse -> print -> parse round trip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "rng.h"
#include "sim.h"

#include "net_ledger.h"

#include "internal.h" /* test_peek: fq's peek, which no parent here calls */
#include "sched/fq.h"         /* the model's check of fq's throttled set */
#include "sched/fq_throttle.h"

#define T0 1000000000ull
#define NS 1000000000ull
#define QUANTUM 3028u
#define IQUANTUM 15140u

/* ------------------------------------------------------------ helpers */

static struct pw_netdev *setup_dev(unsigned hz, const char *fq)
{
	struct pw_runtime *rt = sim_create(2, hz, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root handle 1: fq %s", fq);
	tc_ok(rt, cmd);
	return dev;
}

static struct pw_netdev *setup(const char *fq)
{
	return setup_dev(1000, fq);
}

static void teardown(struct pw_netdev *dev)
{
	struct pw_runtime *rt = L.rt;
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* A packet: socket @sk (or none), @len bytes, @hash, @prio, EDT @ts (0
 * none), ECN @ecn, sent from CPU 0.  Returns the transmit's result. */
static int xmit(struct pw_netdev *dev, struct pw_sock *sk, uint32_t len, uint32_t hash,
		uint32_t prio, uint64_t ts, uint8_t ecn, unsigned *idx)
{
	CHECK(L.n < MAXPKT);
	unsigned i = L.n++;
	struct pw_pkt *p = &L.pkts[i];
	pw_pkt_init(p, NULL, len);
	p->sk = sk;
	p->hash = hash;
	p->priority = prio;
	p->tstamp_ns = ts;
	p->ecn = ecn;
	L.state[i] = 1;
	if (idx)
		*idx = i;
	CHECK_EQ(pw_cpu_enter(L.rt, 0), 0);
	int rc = pw_dev_queue_xmit(dev, p);
	pw_cpu_exit(L.rt);
	return rc;
}

static void advance_to(uint64_t t)
{
	uint64_t now = pw_now_ns(L.rt);
	if (t > now)
		CHECK_EQ(pw_sim_advance(L.rt, t - now), 0);
}

static struct pw_sock *mksock(uint64_t rate, uint64_t cap, uint32_t hash)
{
	struct pw_sock *sk = calloc(1, sizeof(*sk));
	CHECK(sk);
	CHECK_EQ(pw_sock_init(sk, L.rt, NULL), 0);
	sk->sk_hash = hash;
	if (cap != UINT64_MAX)
		pw_sock_set_max_pacing_rate(sk, cap);
	if (rate != UINT64_MAX)
		pw_sock_set_pacing_rate(sk, rate);
	return sk;
}

/* An unpaced socket that still avoids the fast path (a cap that is not
 * "none"): every packet goes through its flow. */
static struct pw_sock *mksock_flow(uint32_t hash)
{
	return mksock(UINT64_MAX - 1, UINT64_MAX - 1, hash);
}

static char out[16384];

/* The value after @key in `tc -s qdisc show` (xstats), or -1; keys after
 * "  gc " (the second line: "throttled" is there the events count) are
 * searched from there. */
static long long xstat(const char *key)
{
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
	const char *from = out;
	if (!strcmp(key, "throttled)")) { /* the first line's count */
		const char *p = strstr(out, "(inactive ");
		CHECK(p);
		p = strstr(p, " throttled ");
		CHECK(p);
		return strtoll(p + 11, NULL, 10);
	}
	if (!strcmp(key, "throttled ") || !strcmp(key, "fastpath ") || !strcmp(key, "gc ")) {
		from = strstr(out, "\n  gc ");
		CHECK(from);
	}
	const char *p = strstr(from, key);
	if (!p)
		return -1;
	return strtoll(p + strlen(key), NULL, 10);
}

static struct pw_qdisc_stats qstats(struct pw_netdev *dev)
{
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	return st;
}

/* ------------------------------------------ the single-flow pacing model */

/*
 * One flow of @n packets of @len bytes queued at once at @t0 at @rate
 * bytes/s (above or below @lrt, the low rate threshold), the watchdog
 * firing at its hard expiry (the throttle time + @slack).  Fills want[].
 */
static void pacing_model(unsigned n, uint32_t len, uint64_t rate, uint64_t lrt, uint64_t slack,
			 uint64_t t0, uint64_t *want)
{
	int64_t credit = IQUANTUM;
	uint64_t tnp = 0, now = t0;
	for (unsigned k = 0; k < n; k++) {
		if (credit <= 0)
			credit += QUANTUM; /* the next turn: a quantum more */
		if (tnp > now)
			now = tnp + slack; /* throttled until the watchdog's hard expiry */
		want[k] = now;
		credit -= len;
		uint64_t plen = len;
		if (rate <= lrt) {
			credit = 0;
		} else {
			if (plen < QUANTUM)
				plen = QUANTUM;
			if (credit > 0)
				continue;
		}
		uint64_t d = plen * NS / rate;
		if (d > NS)
			d = NS;
		if (tnp && now > tnp) {
			uint64_t drift = now - tnp;
			d -= drift < d / 2 ? drift : d / 2;
		}
		tnp = now + d;
	}
}

static void check_sends(unsigned first, unsigned n, const uint64_t *want)
{
	for (unsigned k = 0; k < n; k++) {
		unsigned i = first + k;
		if (L.state[i] != 2 || L.xmit_ns[i] != want[k])
			fprintf(stderr, "packet %u: state %u at %llu, model %llu\n", k, L.state[i],
				(unsigned long long)L.xmit_ns[i], (unsigned long long)want[k]);
		CHECK_EQ(L.state[i], 2);
		CHECK_EQ(L.xmit_ns[i], want[k]);
	}
}

/* 100 packets of @len on one flow (socket @sk, or orphans of hash 5)
 * queued at once under `fq @opts`, paced at @rate (the effective one):
 * every send at the model's time; above the low rate threshold the
 * long-run rate is @rate (bytes by the last send within a quantum or two
 * of the initial quantum + rate x elapsed). */
static void run_pacing(const char *opts, uint64_t sk_rate, uint64_t sk_cap, uint32_t len,
		       uint64_t rate, uint64_t lrt, uint64_t slack)
{
	struct pw_netdev *dev = setup(opts);
	struct pw_sock *sk = sk_rate || sk_cap ? mksock(sk_rate, sk_cap, 7) : NULL;
	const unsigned n = 100;
	unsigned first = L.n;
	for (unsigned k = 0; k < n; k++)
		CHECK_EQ(xmit(dev, sk, len, 5, 0, 0, 0, NULL), PW_NET_XMIT_SUCCESS);
	advance_to(T0 + 300 * NS);
	static uint64_t want[100];
	pacing_model(n, len, rate, lrt, slack, T0, want);
	check_sends(first, n, want);
	uint64_t el = want[n - 1] - T0;
	double bytes = (double)n * len;
	double ideal = (double)rate * (double)el / 1e9;
	uint32_t q = len > QUANTUM ? len : QUANTUM;
	/* lateness up to half a delay is absorbed: the rate holds when the
	 * slack is at most that (else the flow falls behind, as the kernel's) */
	bool absorbed = 2 * slack <= (uint64_t)(rate > lrt ? q : len) * NS / rate;
	if (rate > lrt && absorbed)
		CHECK(bytes >= ideal - q && bytes <= ideal + IQUANTUM + 2.0 * q + len);
	else if (absorbed) /* every packet paced: n - 1 full gaps, less the slack absorbed */
		CHECK(bytes <= ideal + len && bytes >= ideal * 0.9);
	/* beyond the initial quantum the flow waited in the throttled set */
	CHECK_EQ(xstat("throttled ") > 0, n * len > IQUANTUM || rate <= lrt);
	teardown(dev);
	free(sk);
}

/* A flow paced by its socket at R sends at the model's times and at R. */
static void test_pacing_socket(void)
{
	run_pacing("", 3000000, UINT64_MAX, 1000, 3000000, 68750, 10000);
	run_pacing("", 125000, UINT64_MAX, 1514, 125000, 68750, 10000);
	run_pacing("", 1000000000, UINT64_MAX, 64, 1000000000, 68750, 10000);
	run_pacing("", 70000, UINT64_MAX, 9000, 70000, 68750, 10000);
	/* SO_MAX_PACING_RATE caps the socket's rate */
	run_pacing("", 3000000, 500000, 1000, 500000, 68750, 10000);
}

/* At or below low_rate_threshold every packet is paced by its own length. */
static void test_low_rate_threshold(void)
{
	run_pacing("", 50000, UINT64_MAX, 1000, 50000, 68750, 10000);
	run_pacing("", 68750, UINT64_MAX, 200, 68750, 68750, 10000);
	run_pacing("low_rate_threshold 10mbit", 1000000, UINT64_MAX, 1500, 1000000, 1250000, 10000);
}

/* maxrate paces packets without a socket, and caps a socket's rate. */
static void test_maxrate(void)
{
	run_pacing("maxrate 1mbit", 0, 0, 1000, 125000, 68750, 10000);
	run_pacing("maxrate 1mbit", 3000000, UINT64_MAX, 1000, 125000, 68750, 10000);
	run_pacing("maxrate 100mbit", 3000000, UINT64_MAX, 1000, 3000000, 68750, 10000);
}

/* timer_slack is the watchdog's range: the throttled flow is woken at its
 * hard expiry, within [t, t + slack] (here: t + slack, nothing else
 * waking the CPU), and the lateness is absorbed in the next delay. */
static void test_timer_slack(void)
{
	run_pacing("timer_slack 0", 3000000, UINT64_MAX, 1000, 3000000, 68750, 0);
	run_pacing("timer_slack 1ms", 3000000, UINT64_MAX, 1000, 3000000, 68750, 1000000);
	run_pacing("timer_slack 1ms", 50000, UINT64_MAX, 1000, 50000, 68750, 1000000);
	run_pacing("timer_slack 123456ns", 125000, UINT64_MAX, 1000, 125000, 68750, 123456);
}

/* ------------------------------------------------------- DRR by quantum */

/* Stop the device: the next packet is dequeued and refused (BUSY), so
 * what follows stays queued until wake(). */
static void stop_with(struct pw_netdev *dev, struct pw_sock *sk, uint32_t len, uint32_t prio)
{
	L.busy_left = 1;
	xmit(dev, sk, len, 0, prio, 0, 0, NULL);
	CHECK_EQ(L.busy_left, 0);
}

static void wake(struct pw_netdev *dev)
{
	pw_netif_wake_queue(dev, 0);
	CHECK_EQ(pw_sim_advance(L.rt, 0), 0);
}

#define DRR_MAXF 8
struct drr {
	int64_t credit[DRR_MAXF], iq, q;
	unsigned len[DRR_MAXF], left[DRR_MAXF];
	unsigned newl[8192], oldl[8192], nh, nt, oh, ot;
};

/* Serve until @max packets are sent or nothing is left; seq[] gets the
 * flow of each.  New flows first; a flow with credit <= 0 gets a quantum
 * and goes to the old list's tail; an empty new flow goes to the old
 * list, an empty old flow leaves. */
static unsigned drr_serve(struct drr *m, unsigned max, unsigned *seq)
{
	unsigned n = 0;
	while (n < max) {
		bool from_new = m->nh != m->nt;
		if (!from_new && m->oh == m->ot)
			break;
		unsigned i = from_new ? m->newl[m->nh] : m->oldl[m->oh];
		if (m->credit[i] <= 0) {
			m->credit[i] += m->q;
			if (from_new)
				m->nh++;
			else
				m->oh++;
			m->oldl[m->ot++] = i;
			continue;
		}
		if (m->left[i]) {
			m->left[i]--;
			m->credit[i] -= m->len[i];
			seq[n++] = i;
			continue;
		}
		if (from_new) {
			m->nh++;
			m->oldl[m->ot++] = i;
		} else {
			m->oh++;
		}
	}
	return n;
}

/* The DRR order of @nf unpaced flows with @cnt[f] packets of @len[f]
 * bytes: flow 0's first packet alone (the one the stopped driver
 * refused), then the rest arriving, flows 1.. new. */
static unsigned drr_model(unsigned nf, const unsigned *len, const unsigned *cnt, int64_t iq,
			  int64_t q, unsigned *seq)
{
	static struct drr m;
	memset(&m, 0, sizeof(m));
	m.iq = iq;
	m.q = q;
	for (unsigned i = 0; i < nf; i++) {
		m.credit[i] = iq;
		m.len[i] = len[i];
	}
	m.left[0] = 1;
	m.newl[m.nt++] = 0;
	unsigned first;
	CHECK_EQ(drr_serve(&m, 1, &first), 1);
	m.left[0] = cnt[0] - 1;
	for (unsigned i = 1; i < nf; i++) {
		m.left[i] = cnt[i];
		m.newl[m.nt++] = i;
	}
	return drr_serve(&m, 1u << 30, seq);
}

static void run_drr(const char *opts, int64_t iq, int64_t q)
{
	struct pw_netdev *dev = setup(opts);
	enum { NF = 4 };
	static const unsigned len[NF] = { 1500, 700, 100, 3000 };
	static const unsigned cnt[NF] = { 60, 80, 90, 30 };
	struct pw_sock *sk[NF];
	for (unsigned i = 0; i < NF; i++)
		sk[i] = mksock_flow(100 + i);
	unsigned flow_of[MAXPKT];
	unsigned base = L.n;
	stop_with(dev, sk[0], len[0], 6);
	flow_of[base] = 0;
	unsigned left[NF];
	for (unsigned i = 0; i < NF; i++)
		left[i] = cnt[i] - (i == 0);
	/* interleaved arrivals; flow order of first arrival 0, 1, 2, 3 */
	for (unsigned k = 0; k < 90; k++)
		for (unsigned i = 0; i < NF; i++)
			if (k < left[i]) {
				unsigned idx;
				CHECK_EQ(xmit(dev, sk[i], len[i], 0, 6, 0, 0, &idx), PW_NET_XMIT_SUCCESS);
				flow_of[idx] = i;
			}
	CHECK_EQ(L.sent, 0);
	wake(dev);
	static unsigned seq[4096];
	unsigned n = drr_model(NF, len, cnt, iq, q, seq);
	CHECK_EQ(L.sent, n + 1);
	if (getenv("DRRDBG")) {
		for (unsigned k = 0; k < 20; k++)
			fprintf(stderr, "%u/%u ", flow_of[L.order[k + 1]], seq[k]);
		fprintf(stderr, "\n");
	}
	CHECK_EQ(L.order[0], base); /* the requeued one first */
	for (unsigned k = 0; k < n; k++) {
		if (flow_of[L.order[k + 1]] != seq[k])
			fprintf(stderr, "%s: send %u: flow %u, model %u\n", opts, k, flow_of[L.order[k + 1]],
				seq[k]);
		CHECK_EQ(flow_of[L.order[k + 1]], seq[k]);
	}
	/* fairness: while all four were backlogged, the bytes each sent per
	 * round differ by at most a quantum + a packet */
	teardown(dev);
	for (unsigned i = 0; i < NF; i++)
		free(sk[i]);
}

/* Unpaced flows share by quantum (DRR): the initial quantum first, then a
 * quantum per round, exactly in the model's order.  All in band 0
 * (priority 6): a new flow joins the lists of the band its struct last
 * had (0 for a new one) before taking its packet's band, as the kernel's
 * fq_enqueue() orders it; test_bands covers the other bands. */
static void test_drr(void)
{
	run_drr("", IQUANTUM, QUANTUM);
	run_drr("quantum 2000 initial_quantum 5000", 5000, 2000);
	run_drr("quantum 100 initial_quantum 0", 0, 256); /* quantum clamped to 256 */
	run_drr("quantum 9000 initial_quantum 1", 1, 9000);
}

/* The fast path: an unpaced packet on an idle qdisc (and up to 8 while no
 * flow is eligible) skips the flows. */
static void test_fastpath(void)
{
	struct pw_netdev *dev = setup("");
	struct pw_sock *sk = mksock(UINT64_MAX, UINT64_MAX, 1);
	xmit(dev, sk, 1000, 0, 0, 0, 0, NULL);
	xmit(dev, NULL, 1000, 3, 0, 0, 0, NULL);
	CHECK_EQ(L.sent, 2);
	CHECK_EQ(xstat("fastpath "), 2);
	CHECK_EQ(xstat("flows "), 0);
	stop_with(dev, sk, 1000, 0); /* fast path 3, refused by the driver */
	for (int k = 0; k < 12; k++)
		xmit(dev, sk, 1000, 0, 0, 0, 0, NULL);
	/* the first on an empty qdisc, then 7 more while no flow is eligible
	 * (the fast queue below 8), then the flow */
	CHECK_EQ(xstat("fastpath "), 3 + 1 + 7);
	CHECK_EQ(xstat("flows "), 1);
	wake(dev);
	CHECK_EQ(L.sent, 2 + 13);
	for (unsigned k = 1; k < L.norder; k++) /* one socket: FIFO */
		CHECK(L.order[k] > L.order[k - 1]);
	teardown(dev);
	free(sk);
}

/* ------------------------------------------------------ EDT and horizon */

static void test_edt_horizon(void)
{
	struct pw_netdev *dev = setup("");
	struct pw_sock *sk = mksock_flow(1);
	unsigned a, b, c, d;
	xmit(dev, sk, 1000, 0, 0, T0 + 5000000, 0, &a);      /* 5 ms ahead */
	xmit(dev, NULL, 1000, 9, 0, T0 - 1000, 0, &b);       /* in the past: now */
	CHECK_EQ(xmit(dev, sk, 1000, 0, 0, T0 + 10 * NS + 1, 0, &c), PW_NET_XMIT_DROP);
	xmit(dev, sk, 1000, 0, 0, T0 + 10 * NS, 0, &d);      /* at the horizon: kept */
	CHECK_EQ(L.state[b], 2);
	CHECK_EQ(L.xmit_ns[b], T0);
	CHECK_EQ(L.state[c], 3);
	CHECK_EQ(L.drop_by[PW_DROP_HORIZON], 1);
	advance_to(T0 + 11 * NS);
	/* woken at the stamp's hard expiry: + timer_slack */
	CHECK_EQ(L.xmit_ns[a], T0 + 5000000 + 10000);
	CHECK_EQ(L.xmit_ns[d], T0 + 10 * NS + 10000);
	CHECK_EQ(xstat("horizon_drops "), 1);
	teardown(dev);

	/* horizon_cap: brought back to now + horizon */
	dev = setup("horizon 1s horizon_cap");
	xmit(dev, sk, 1000, 0, 0, T0 + 5 * NS, 0, &a);
	advance_to(T0 + 6 * NS);
	CHECK_EQ(L.xmit_ns[a], T0 + NS + 10000);
	CHECK_EQ(xstat("horizon_caps "), 1);
	CHECK_EQ(L.dropped, 0);
	teardown(dev);

	/* EDT stamps are honoured, the socket's rate is not applied to them
	 * (only maxrate is) */
	dev = setup("timer_slack 0");
	struct pw_sock *slow = mksock(1000, UINT64_MAX, 2);
	unsigned idx[5];
	for (unsigned k = 0; k < 5; k++)
		xmit(dev, slow, 1000, 0, 0, T0 + (k + 1) * 1000000, 0, &idx[k]);
	advance_to(T0 + NS);
	for (unsigned k = 0; k < 5; k++)
		CHECK_EQ(L.xmit_ns[idx[k]], T0 + (k + 1) * 1000000);
	/* stamps earlier than the flow's tail go in time order, but not before
	 * the time the flow was throttled to (its time_next_packet) */
	unsigned n0 = L.norder;
	xmit(dev, slow, 1000, 0, 0, T0 + NS + 3000000, 0, &idx[0]);
	xmit(dev, slow, 1000, 0, 0, T0 + NS + 1000000, 0, &idx[1]);
	xmit(dev, slow, 1000, 0, 0, T0 + NS + 2000000, 0, &idx[2]);
	advance_to(T0 + 2 * NS);
	for (unsigned k = 0; k < 3; k++)
		CHECK_EQ(L.xmit_ns[idx[k]], T0 + NS + 3000000);
	CHECK_EQ(L.order[n0], idx[1]);
	CHECK_EQ(L.order[n0 + 1], idx[2]);
	CHECK_EQ(L.order[n0 + 2], idx[0]);
	teardown(dev);
	/* with maxrate, EDT packets are paced too */
	dev = setup("timer_slack 0 maxrate 8kbit");
	for (unsigned k = 0; k < 3; k++)
		xmit(dev, slow, 1000, 0, 0, T0 + 1000, 0, &idx[k]);
	advance_to(T0 + 10 * NS);
	CHECK_EQ(L.xmit_ns[idx[0]], T0 + 1000);
	/* plen is the length (no quantum rounding with a stamp): 1 s at 1000 B/s */
	CHECK_EQ(L.xmit_ns[idx[1]], T0 + 1000 + NS);
	CHECK_EQ(L.xmit_ns[idx[2]], T0 + 1000 + 2 * NS);
	teardown(dev);
	free(sk);
	free(slow);
}

/* -------------------------------------------------------------- limits */

static void test_limits(void)
{
	struct pw_netdev *dev = setup("");
	struct pw_sock *sk = mksock(1000, UINT64_MAX, 1); /* 1 packet/s */
	for (int k = 0; k < 150; k++)
		xmit(dev, sk, 1000, 0, 0, 0, 0, NULL);
	CHECK_EQ(L.sent, 1);
	/* flow_limit 100 queued, the rest dropped */
	CHECK_EQ(L.drop_by[PW_DROP_FLOW_LIMIT], 49);
	CHECK_EQ(xstat("flows_plimit "), 49);
	CHECK_EQ(qstats(dev).qlen, 100);
	CHECK_EQ(qstats(dev).drops, 49);
	teardown(dev);

	/* the limit counts per band */
	free(sk);
	dev = setup("limit 10 flow_limit 1000");
	sk = mksock(1000, UINT64_MAX, 1);
	for (int k = 0; k < 15; k++)
		xmit(dev, sk, 1000, 0, 0, 0, 0, NULL);       /* band 1 */
	struct pw_sock *sk0 = mksock(1000, UINT64_MAX, 2);
	for (int k = 0; k < 12; k++)
		xmit(dev, sk0, 1000, 0, 6, 0, 0, NULL);      /* band 0 */
	CHECK_EQ(L.sent, 2);
	CHECK_EQ(L.drop_by[PW_DROP_FQ_BAND_LIMIT], 4 + 1);
	CHECK_EQ(xstat("band1_drops "), 4);
	CHECK_EQ(xstat("band0_drops "), 1);
	CHECK_EQ(xstat("band1_pkts "), 10);
	CHECK_EQ(xstat("band0_pkts "), 10);
	CHECK_EQ(qstats(dev).qlen, 20);
	teardown(dev);
	free(sk);
	free(sk0);
}

/* Packets without a socket: one flow per (hash & orphan_mask). */
static void test_orphan_mask(void)
{
	struct pw_netdev *dev = setup("orphan_mask 15 maxrate 8kbit");
	xmit(dev, NULL, 1000, 0x10, 0, 0, 0, NULL);
	xmit(dev, NULL, 1000, 0x20, 0, 0, 0, NULL);
	xmit(dev, NULL, 1000, 0x30, 0, 0, 0, NULL);
	CHECK_EQ(xstat("flows "), 1);
	xmit(dev, NULL, 1000, 0x11, 0, 0, 0, NULL);
	CHECK_EQ(xstat("flows "), 2);
	/* a socket is its own flow whatever its hash */
	struct pw_sock *sk = mksock_flow(0x10);
	xmit(dev, sk, 1000, 0x10, 0, 0, 0, NULL);
	CHECK_EQ(xstat("flows "), 3);
	/* orphan_mask 0: every orphan in one flow */
	tc_ok(L.rt, "qdisc replace dev eth0 root handle 2: fq orphan_mask 0 maxrate 8kbit");
	for (uint32_t h = 0; h < 50; h++)
		xmit(dev, NULL, 100, h * 7919, 0, 0, 0, NULL);
	CHECK_EQ(xstat("flows "), 1);
	teardown(dev);
	free(sk);
}

/* hash_ptr(key, bits) as the kernel computes it. */
static unsigned bucket_of(uintptr_t key, unsigned bits)
{
	return (unsigned)(((uint64_t)key * 0x61C8864680B583EBull) >> (64 - bits));
}

/* Idle flows are collected after 3 s, at most 8 per lookup, in the chain
 * the lookup walks. */
static void test_gc(void)
{
	struct pw_netdev *dev = setup("buckets 2 maxrate 1gbit orphan_mask 1023");
	struct pw_sock *sk = mksock(1000, UINT64_MAX, 1); /* keeps a packet queued */
	xmit(dev, sk, 100, 0, 0, 0, 0, NULL);
	xmit(dev, sk, 100, 0, 0, 0, 0, NULL);
	for (uint32_t h = 1; h <= 20; h++)
		xmit(dev, NULL, 100, h, 0, 0, 0, NULL);
	CHECK_EQ(L.sent, 21);
	CHECK_EQ(xstat("flows "), 21);
	CHECK_EQ(xstat("inactive "), 20);
	advance_to(T0 + 2 * NS); /* 2 s: not old enough */
	xmit(dev, NULL, 100, 200, 0, 0, 0, NULL);
	CHECK_EQ(xstat("gc "), 0);
	advance_to(T0 + 5 * NS);
	/* the chain of hash 100's key: its detached flows, at most 8 */
	unsigned b = bucket_of(((uintptr_t)100 << 1) | 1, 1), cand = 0;
	for (uint32_t h = 1; h <= 20; h++)
		cand += bucket_of(((uintptr_t)h << 1) | 1, 1) == b;
	cand += bucket_of(((uintptr_t)200 << 1) | 1, 1) == b;
	CHECK(cand > 0);
	xmit(dev, NULL, 100, 100, 0, 0, 0, NULL);
	long long gc = xstat("gc ");
	CHECK_EQ(gc, cand < 8 ? cand : 8);
	CHECK_EQ(xstat("flows "), 22 - gc + 1);
	/* a resize (fq_rehash) collects every aged detached flow: the 20
	 * orphans (200's and 100's flows and the socket's are still listed) */
	tc_ok(L.rt, "qdisc change dev eth0 root handle 1: fq buckets 64");
	CHECK_EQ(xstat("gc "), 20);
	CHECK_EQ(xstat("flows "), 3);
	xmit(dev, NULL, 100, 5, 0, 0, 0, NULL); /* a collected flow comes back new */
	CHECK_EQ(xstat("flows "), 4);
	teardown(dev);
	free(sk);
}

/* The three bands share by their weights (WRR), each band's flows by
 * DRR. */
static void test_bands(void)
{
	struct pw_netdev *dev = setup("flow_limit 1000 weights 65536 32768 16384");
	struct pw_sock *sk[3];
	static const uint32_t prio[3] = { 6, 0, 2 }; /* bands 0, 1, 2 */
	unsigned band_of[MAXPKT];
	for (unsigned i = 0; i < 3; i++)
		sk[i] = mksock_flow(i + 1);
	unsigned first = L.n;
	stop_with(dev, sk[1], 1000, prio[1]);
	band_of[first] = 1;
	for (unsigned k = 0; k < 300; k++)
		for (unsigned i = 0; i < 3; i++) {
			unsigned idx;
			xmit(dev, sk[i], 1000, 0, prio[i], 0, 0, &idx);
			band_of[idx] = i;
		}
	wake(dev);
	CHECK_EQ(L.sent, 901);
	/* 4 : 2 : 1 while all three were backlogged, to a turn: counted from
	 * band 0's 60th packet (past the start, when every new flow sits on
	 * band 0's new list, see test_drr) to its 300th */
	unsigned cnt[3] = { 0, 0, 0 }, at60[3] = { 0, 0, 0 };
	for (unsigned k = 0; k < L.norder; k++) {
		cnt[band_of[L.order[k]]]++;
		if (cnt[0] == 60 && !at60[0])
			memcpy(at60, cnt, sizeof(cnt));
		if (cnt[0] == 300)
			break;
	}
	unsigned c1 = cnt[1] - at60[1], c2 = cnt[2] - at60[2];
	if (getenv("BANDDBG"))
		fprintf(stderr, "band1 %u band2 %u (from %u %u)\n", c1, c2, at60[1], at60[2]);
	CHECK(c1 >= 120 - 34 && c1 <= 120 + 34);
	CHECK(c2 >= 60 - 17 && c2 <= 60 + 17);
	teardown(dev);
	for (unsigned i = 0; i < 3; i++)
		free(sk[i]);
	/* the priomap decides the band */
	dev = setup("limit 5 bands 3 priomap 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2");
	struct pw_sock *s = mksock(1000, UINT64_MAX, 1);
	for (unsigned k = 0; k < 8; k++)
		xmit(dev, s, 100, 0, k, 0, 0, NULL);
	CHECK_EQ(xstat("band2_pkts "), 5);
	CHECK_EQ(xstat("band2_drops "), 2);
	teardown(dev);
	free(s);
}

/* ce_threshold: a packet later than its due time by more than the
 * threshold gets CE if ECT; ce_mark counts every such packet. */
static void test_ce_threshold(void)
{
	for (int pass = 0; pass < 2; pass++) {
		struct pw_netdev *dev = setup(pass ? "nopacing ce_threshold 10ms" : "nopacing ce_threshold 1ms");
		struct pw_sock *sk = mksock_flow(1);
		stop_with(dev, sk, 1000, 0);
		static const uint8_t ecn[4] = { 0, 1, 2, 3 };
		unsigned idx[20];
		for (unsigned k = 0; k < 20; k++)
			xmit(dev, sk, 1000, 0, 0, 0, ecn[k % 4], &idx[k]);
		advance_to(T0 + 5000000);
		wake(dev);
		CHECK_EQ(L.sent, 21);
		for (unsigned k = 0; k < 20; k++) {
			uint8_t want = ecn[k % 4];
			if (!pass && want)
				want = 3;
			CHECK_EQ(L.pkts[idx[k]].ecn, want);
		}
		CHECK_EQ(xstat("ce_mark "), pass ? -1 : 20);
		teardown(dev);
		free(sk);
	}
}

/* change / replace / delete / destroy with packets queued: each packet
 * back once; a lowered limit drops from the head (through dequeue, as the
 * kernel's fq_change()). */
static void test_change_teardown(void)
{
	struct pw_netdev *dev = setup("");
	struct pw_runtime *rt = L.rt;
	struct pw_sock *sk[3];
	for (unsigned i = 0; i < 3; i++)
		sk[i] = mksock_flow(i + 1);
	stop_with(dev, sk[0], 1000, 0);
	unsigned idx[60];
	for (unsigned k = 0; k < 60; k++)
		xmit(dev, sk[k % 3], 1000, 0, 0, 0, 0, &idx[k]);
	CHECK_EQ(qstats(dev).qlen, 61); /* with the one the driver refused */
	tc_ok(rt, "qdisc change dev eth0 root handle 1: fq buckets 16");
	CHECK_EQ(xstat("flows "), 3);
	CHECK_EQ(qstats(dev).qlen, 61);
	tc_ok(rt, "qdisc change dev eth0 root handle 1: fq limit 10");
	/* from the head: the refused one, then 50 in dequeue order */
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], 51);
	CHECK_EQ(qstats(dev).qlen, 10);
	CHECK_EQ(qstats(dev).backlog, 10000);
	CHECK_EQ(qstats(dev).packets, 1 + 50); /* counted as dequeued, as the kernel */
	wake(dev);
	CHECK_EQ(L.sent, 10);
	/* a change that fails still applies what came before (the kernel) */
	char err[256];
	CHECK(pw_tc(rt, "qdisc change dev eth0 root handle 1: fq flow_limit 7 buckets 1", 0, NULL, 0,
		    err, sizeof(err)) != 0);
	CHECK(!strcmp(err, "RTNETLINK answers: Invalid argument\n"));
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(strstr(out, "flow_limit 7p buckets 16 "));
	/* the policy's INT_MAX bound: refused before anything applies */
	CHECK_EQ(pw_tc(rt, "qdisc change dev eth0 root handle 1: fq initial_quantum 2147483647", 0,
		       NULL, 0, NULL, 0), 0);
	CHECK(pw_tc(rt, "qdisc change dev eth0 root handle 1: fq flow_limit 9 initial_quantum 2147483648",
		    0, NULL, 0, err, sizeof(err)) != 0);
	CHECK(!strcmp(err, "RTNETLINK answers: Numerical result out of range\n"));
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(strstr(out, "flow_limit 7p ") && strstr(out, "initial_quantum 2048Mb "));
	tc_ok(rt, "qdisc change dev eth0 root handle 1: fq limit 10000 flow_limit 100");
	/* replace with packets queued: flushed once each */
	struct pw_sock *slow = mksock(1000, UINT64_MAX, 9);
	for (unsigned k = 0; k < 30; k++)
		xmit(dev, slow, 100, 0, 0, 0, 0, NULL);
	CHECK_EQ(L.sent, 11);
	tc_ok(rt, "qdisc replace dev eth0 root handle 2: fq");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 29);
	for (unsigned k = 0; k < 30; k++)
		xmit(dev, slow, 100, 0, 0, 0, 0, NULL);
	tc_ok(rt, "qdisc del dev eth0 root");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 29 + 29);
	tc_ok(rt, "qdisc add dev eth0 root handle 3: fq");
	for (unsigned k = 0; k < 30; k++)
		xmit(dev, slow, 100, 0, 0, 0, 0, NULL);
	uint64_t dd = L.drop_by[PW_DROP_DEV_DESTROY];
	pw_netdev_destroy(dev);
	CHECK_EQ(L.drop_by[PW_DROP_DEV_DESTROY], dd + 29);
	CHECK_EQ(pw_sim_advance(rt, 2 * NS), 0);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
	for (unsigned i = 0; i < 3; i++)
		free(sk[i]);
	free(slow);
}

/* peek (the kernel's qdisc_peek_dequeued): the packet dequeue will give,
 * still counted; the dequeue after gives it. */
static void test_peek(void)
{
	struct pw_netdev *dev = setup("");
	struct pw_sock *sk = mksock_flow(1);
	stop_with(dev, sk, 1000, 0);
	unsigned idx[3];
	for (unsigned k = 0; k < 3; k++)
		xmit(dev, sk, 500 + k, 0, 0, 0, 0, &idx[k]);
	struct pw__qdisc *q = __atomic_load_n(&dev->txq[0].qdisc, __ATOMIC_ACQUIRE);
	CHECK(q && q->ops == &pw__fq_ops);
	pw__qlock(&q->root->lock);
	uint32_t qlen = q->st.qlen;
	uint64_t backlog = q->st.backlog;
	struct pw_pkt *p = q->ops->peek(q);
	CHECK(p == &L.pkts[idx[0]]);
	CHECK(q->ops->peek(q) == p);
	CHECK_EQ(q->st.qlen, qlen);
	CHECK_EQ(q->st.backlog, backlog);
	struct pw_pkt *a = q->ops->dequeue(q), *b = q->ops->dequeue(q);
	CHECK(a == p);
	CHECK(b == &L.pkts[idx[1]]);
	CHECK_EQ(q->st.qlen, qlen - 2);
	CHECK_EQ(q->st.backlog, backlog - 500 - 501);
	CHECK(q->ops->peek(q) == &L.pkts[idx[2]]); /* left peeked: the flush takes it */
	pw__qunlock(&q->root->lock);
	pw__pkt_leaves(a);
	pw__pkt_leaves(b);
	drv_drop(dev, a, PW_DROP_FLUSH, NULL);
	drv_drop(dev, b, PW_DROP_FLUSH, NULL);
	tc_ok(L.rt, "qdisc del dev eth0 root");
	CHECK_EQ(L.state[idx[2]], 3);
	teardown(dev);
	free(sk);
}

/* fq as each queue's root under mq: per-queue flows and watchdogs. */
static void test_under_mq(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 2, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root handle 1: mq");
	tc_ok(rt, "qdisc add dev eth0 parent 1:1 handle 10: fq maxrate 8mbit");
	tc_ok(rt, "qdisc add dev eth0 parent 1:2 handle 20: fq maxrate 4mbit");
	for (int k = 0; k < 40; k++)
		send_from(dev, k % 2, 1000, 7, 0, NULL); /* one orphan flow per queue */
	/* each queue: the initial quantum (15 packets) at once, then one
	 * quantum (3 packets) per 3028 B at its maxrate */
	unsigned q0 = 0, q1 = 0;
	for (unsigned i = 0; i < L.n; i++)
		if (L.state[i] == 2)
			*(L.xmit_txq[i] ? &q1 : &q0) += 1;
	CHECK_EQ(q0, 16);
	CHECK_EQ(q1, 16);
	CHECK_EQ(pw_sim_advance(rt, 10 * NS), 0);
	CHECK_EQ(L.sent, 40);
	/* the 8mbit queue finished first */
	uint64_t last0 = 0, last1 = 0;
	for (unsigned i = 0; i < L.n; i++) {
		uint64_t *l = L.xmit_txq[i] ? &last1 : &last0;
		if (L.xmit_ns[i] > *l)
			*l = L.xmit_ns[i];
	}
	CHECK(last0 < last1);
	for (int k = 0; k < 40; k++)
		send_from(dev, k % 2, 1000, 7, 0, NULL);
	tc_ok(rt, "qdisc replace dev eth0 root pfifo");
	CHECK_EQ(L.sent + L.drop_by[PW_DROP_FLUSH], 80);
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* ----------------------------------------------------------- tc text */

#define FQ_DEFAULT_OPTS                                                                  \
	"limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 bands 3 priomap 1 2 2 2 " \
	"1 2 0 0 1 1 1 1 1 1 1 1 weights 589824 196608 65536 quantum 3028b initial_quantum "  \
	"15140b low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us horizon 10s "   \
	"horizon_drop "

/* `tc -s` with flows throttled, the unthrottle latency and a horizon drop,
 * to the byte (values worked out by hand from sch_fq.c). */
static void test_tc_stats_text(void)
{
	struct pw_netdev *dev = setup("");
	struct pw_sock *sk = mksock(1000, UINT64_MAX, 1); /* below the threshold: 100 ms a packet */
	for (int k = 0; k < 3; k++)
		xmit(dev, sk, 100, 0, 0, 0, 0, NULL);
	xmit(dev, NULL, 100, 0, 0, T0 + 11 * NS, 0, NULL);
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
	const char *want1 =
		"qdisc fq 1: root refcnt 2 " FQ_DEFAULT_OPTS "\n"
		" Sent 100 bytes 1 pkt (dropped 1, overlimits 0 requeues 0) \n"
		" backlog 200b 2p requeues 0\n"
		"  flows 1 (inactive 0 throttled 1) band0_pkts 0 band1_pkts 2 band2_pkts 0"
		" next_packet_delay 100ms\n"
		"  gc 0 highprio 0 throttled 1\n"
		" horizon_drops 1\n";
	if (strcmp(out, want1))
		fprintf(stderr, "got:\n%swant:\n%s", out, want1);
	CHECK(!strcmp(out, want1));
	/* woken 10 us late twice: latency EWMA 1250 ns, then 2344 ns */
	advance_to(T0 + 300000000);
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
	const char *want2 =
		"qdisc fq 1: root refcnt 2 " FQ_DEFAULT_OPTS "\n"
		" Sent 300 bytes 3 pkt (dropped 1, overlimits 0 requeues 0) \n"
		" backlog 0b 0p requeues 0\n"
		"  flows 1 (inactive 1 throttled 0) band0_pkts 0 band1_pkts 0 band2_pkts 0\n"
		"  gc 0 highprio 0 throttled 2 latency 2.34us\n"
		" horizon_drops 1\n";
	if (strcmp(out, want2))
		fprintf(stderr, "got:\n%swant:\n%s", out, want2);
	CHECK(!strcmp(out, want2));
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", PW_TC_STATS | PW_TC_JSON, out, sizeof(out), NULL,
		       0), 0);
	CHECK(strstr(out, "\"flows\":1,\"inactive\":1,\"throttled\":0,\"band0_pkts\":0,"
			  "\"band1_pkts\":0,\"band2_pkts\":0,\"gc\":0,\"highprio\":0,\"throttled\":2,"
			  "\"latency\":2344,\"horizon_drops\":1}"));
	teardown(dev);
	free(sk);
}

/* The printed options, made parseable again: "p" and "b" suffixes off,
 * "Kb"/"Mb" sizes back to bytes. */
static void reparse(const char *printed, char *dst, size_t cap)
{
	size_t n = 0;
	dst[0] = '\0';
	char *copy = strdup(printed), *save = NULL;
	CHECK(copy);
	const char *prev = "";
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char buf[64];
		size_t l = strlen(w);
		snprintf(buf, sizeof(buf), "%s", w);
		if ((!strcmp(prev, "limit") || !strcmp(prev, "flow_limit")) && l && w[l - 1] == 'p')
			buf[l - 1] = '\0';
		if (!strcmp(prev, "quantum") || !strcmp(prev, "initial_quantum")) {
			double v = strtod(w, NULL);
			if (strstr(w, "Mb"))
				v *= 1048576;
			else if (strstr(w, "Kb"))
				v *= 1024;
			snprintf(buf, sizeof(buf), "%.0f", v);
		}
		n += (size_t)snprintf(dst + n, cap - n, " %s", buf);
		CHECK(n < cap);
		prev = w;
	}
	free(copy);
}

static void show_opts(char *dst, size_t cap)
{
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	const char *p = strstr(out, "refcnt 2 ");
	CHECK(p);
	snprintf(dst, cap, "%s", p + 9);
	size_t l = strlen(dst);
	while (l && (dst[l - 1] == '\n' || dst[l - 1] == ' '))
		dst[--l] = '\0';
}

/* parse -> print -> parse: the printed options, given back, print the
 * same, for random option sets. */
static void test_round_trip(void)
{
	struct pw_netdev *dev = setup("");
	rng_state = 0xf00dull;
	static const char *const times[] = { "1ms", "40ms", "250us", "2s", "7us", "1500us" };
	static const char *const rates[] = { "1mbit", "550kbit", "10gbit", "8kbit", "123456bit" };
	for (int it = 0; it < 300; it++) {
		char opts[1024];
		size_t n = 0;
		opts[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(opts + n, sizeof(opts) - n, __VA_ARGS__))
		if (rnd_below(2)) ADD(" limit %u", (unsigned)rnd_below(100000));
		if (rnd_below(2)) ADD(" flow_limit %u", (unsigned)rnd_below(1000));
		if (rnd_below(2)) ADD(" quantum %u", (unsigned)rnd_below(3000000));
		if (rnd_below(2)) ADD(" initial_quantum %u", (unsigned)rnd_below(1u << 20));
		if (rnd_below(3) == 0) ADD(" maxrate %s", rates[rnd_below(5)]);
		if (rnd_below(3) == 0) ADD(" low_rate_threshold %s", rates[rnd_below(5)]);
		if (rnd_below(3) == 0) ADD(" buckets %u", 2u + (unsigned)rnd_below(200000));
		if (rnd_below(3) == 0) ADD(rnd_below(2) ? " pacing" : " nopacing");
		if (rnd_below(3) == 0) ADD(" refill_delay %s", times[rnd_below(6)]);
		if (rnd_below(3) == 0) ADD(" orphan_mask %u", (unsigned)rnd_below(70000));
		if (rnd_below(3) == 0) ADD(" timer_slack %s", times[rnd_below(5)]);
		if (rnd_below(3) == 0) ADD(" ce_threshold %s", times[rnd_below(6)]);
		if (rnd_below(3) == 0) ADD(" horizon %s", times[rnd_below(6)]);
		if (rnd_below(3) == 0) ADD(rnd_below(2) ? " horizon_cap" : " horizon_drop");
		if (rnd_below(4) == 0) {
			ADD(" bands 3 priomap");
			for (int k = 0; k < 16; k++)
				ADD(" %u", (unsigned)rnd_below(3));
		}
		if (rnd_below(4) == 0)
			ADD(" weights %u %u %u", 16384 + (unsigned)rnd_below(1000000),
			    16384 + (unsigned)rnd_below(100000), 16384 + (unsigned)rnd_below(100));
#undef ADD
		char cmd[4096], t1[2048], t2[2048], again[2048];
		snprintf(cmd, sizeof(cmd), "qdisc replace dev eth0 root handle 1: fq%s", opts);
		tc_ok(L.rt, cmd);
		show_opts(t1, sizeof(t1));
		reparse(t1, again, sizeof(again));
		tc_ok(L.rt, "qdisc del dev eth0 root");
		snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root handle 1: fq%s", again);
		tc_ok(L.rt, cmd);
		show_opts(t2, sizeof(t2));
		if (strcmp(t1, t2))
			fprintf(stderr, "fq%s\n first: %s\n again: %s\n", opts, t1, t2);
		CHECK(!strcmp(t1, t2));
		tc_ok(L.rt, "qdisc del dev eth0 root");
	}
	teardown(dev);
}

/* --------------------------------------------- the whole-qdisc model */

/*
 * fq as sch_fq.c defines it, with plain arrays: flows found by a linear
 * search of their key, lists as arrays, the throttled set scanned for its
 * earliest (time, arrival) entry, and the watchdog (one hrtimer: kept when
 * already armed within [t, t + slack], firing at its hard expiry).  The
 * layer's runs: after each enqueue and at each watchdog expiry, dequeue
 * until nothing comes.
 */
#define MF 256          /* flows */
#define MP 20000        /* packets */
#define MS 12           /* sockets */

struct mflow {
	bool used, detached, throttled;
	uintptr_t key;
	int credit, band;
	uint64_t age, tnp, tseq;
	uint32_t sk_hash;             /* the socket's sk_hash when the flow was made */
	unsigned fifo[MP / 4], nfifo; /* packet indices in arrival order (tts non-decreasing) */
	unsigned ooo[64], nooo;       /* earlier-stamped ones, sorted */
	int qlen;
};

struct mlist {
	unsigned v[MF * 4], h, t;
};

struct mcfg {
	uint32_t limit, flow_plimit, quantum, iq, orphan_mask, lrt, slack;
	uint64_t refill_j, maxrate, horizon, ce;
	bool horizon_drop, rate_enable;
	uint8_t prio2band[16];
	int weight[3];
};

static struct {
	struct mcfg c;
	struct mflow f[MF];
	unsigned nf;
	struct mlist newl[3], oldl[3];
	int bcredit[3];
	unsigned band_nr;
	unsigned internal[MP], ih, it;
	unsigned band_cnt[3];
	unsigned qlen, flows, inactive, nthr;
	uint64_t backlog, tndf, seq;
	bool wd_armed;
	uint64_t wd_soft, wd_hard;
	/* per packet */
	uint64_t tts[MP];
	unsigned len[MP], band[MP];
	struct pw_sock *sk[MP];
	bool has_ts[MP];
	uint8_t ecn[MP];
	int64_t sent_at[MP];  /* -1 queued / not yet, -2 dropped */
	int reason[MP];
	uint64_t sent_pkts, ce_mark, fast;
	unsigned order[MP], norder; /* send order */
} M;

static void m_push(struct mlist *l, unsigned f)
{
	CHECK(l->t < MF * 4);
	l->v[l->t++] = f;
}

static void m_compact(struct mlist *l)
{
	if (l->h == l->t)
		l->h = l->t = 0;
	else if (l->t > MF * 3) {
		memmove(l->v, l->v + l->h, (l->t - l->h) * sizeof(l->v[0]));
		l->t -= l->h;
		l->h = 0;
	}
}

static void m_add_tail(unsigned fi, bool to_new)
{
	struct mflow *f = &M.f[fi];
	m_push(to_new ? &M.newl[f->band] : &M.oldl[f->band], fi);
}

static void m_init(const struct mcfg *c)
{
	memset(&M, 0, sizeof(M));
	M.c = *c;
	M.tndf = UINT64_MAX;
	for (unsigned i = 0; i < MP; i++)
		M.sent_at[i] = -1;
}

static uint64_t m_j(uint64_t now)
{
	return now / 1000000; /* HZ 1000 */
}

static bool m_fast_ok(unsigned i, uint64_t now)
{
	if (M.tts[i] > now)
		return false;
	if (M.qlen) {
		if (M.flows != M.inactive + M.nthr)
			return false;
		if (M.it - M.ih >= 8)
			return false;
		if (M.tndf <= now)
			return false;
	}
	struct pw_sock *sk = M.sk[i];
	if (sk && (sk->sk_pacing_rate != UINT64_MAX || sk->sk_max_pacing_rate != UINT64_MAX))
		return false;
	return M.c.maxrate == UINT64_MAX;
}

static void m_drop(unsigned i, int reason)
{
	M.sent_at[i] = -2;
	M.reason[i] = reason;
}

static void m_enqueue(unsigned i, uint32_t hash, uint32_t prio, uint64_t now)
{
	unsigned band = M.c.prio2band[prio & 15];
	M.band[i] = band;
	if (M.band_cnt[band] >= M.c.limit)
		return m_drop(i, PW_DROP_FQ_BAND_LIMIT);
	if (!M.has_ts[i]) {
		M.tts[i] = now;
	} else {
		if ((int64_t)M.tts[i] > (int64_t)(now + M.c.horizon)) {
			if (M.c.horizon_drop)
				return m_drop(i, PW_DROP_HORIZON);
			M.tts[i] = now + M.c.horizon;
		}
	}
	if (m_fast_ok(i, now)) {
		M.fast++;
		M.internal[M.it++] = i;
		M.qlen++;
		M.backlog += M.len[i];
		return;
	}
	uintptr_t key = M.sk[i] ? (uintptr_t)M.sk[i] : (((uintptr_t)(hash & M.c.orphan_mask) << 1) | 1);
	unsigned fi = MF;
	for (unsigned k = 0; k < M.nf; k++)
		if (M.f[k].key == key)
			fi = k;
	if (fi == MF) {
		CHECK(M.nf < MF);
		fi = M.nf++;
		struct mflow *nf = &M.f[fi];
		memset(nf, 0, sizeof(*nf));
		nf->used = true;
		nf->key = key;
		nf->detached = true;
		nf->age = m_j(now) | 1; /* jiffies | 1, as fq_flow_set_detached() */
		nf->credit = (int)M.c.iq;
		nf->sk_hash = M.sk[i] ? M.sk[i]->sk_hash : 0;
		M.flows++;
		M.inactive++;
	}
	struct mflow *f = &M.f[fi];
	if (M.sk[i] && f->sk_hash != M.sk[i]->sk_hash) {
		/* a new socket at the old one's address: a fresh start, out of
		 * the throttled set to its (previous) band's old list */
		f->credit = (int)M.c.iq;
		f->sk_hash = M.sk[i]->sk_hash;
		if (f->throttled) {
			f->throttled = false;
			M.nthr--;
			m_add_tail(fi, false);
		}
		f->tnp = 0;
	}
	if ((uint32_t)f->qlen >= M.c.flow_plimit)
		return m_drop(i, PW_DROP_FLOW_LIMIT);
	if (f->detached) {
		m_add_tail(fi, true); /* the band it had before this packet */
		if ((int64_t)(f->age + M.c.refill_j - m_j(now)) < 0 && (uint32_t)f->credit < M.c.quantum)
			f->credit = (int)M.c.quantum;
	}
	f->band = (int)band;
	M.band_cnt[band]++;
	if (f->qlen == 0)
		M.inactive--;
	f->qlen++;
	if (!f->nfifo || M.tts[i] >= M.tts[f->fifo[f->nfifo - 1]]) {
		CHECK(f->nfifo < MP / 4);
		f->fifo[f->nfifo++] = i;
		f->detached = false;
	} else {
		CHECK(f->nooo < 64);
		unsigned k = f->nooo;
		while (k > 0 && M.tts[f->ooo[k - 1]] > M.tts[i]) {
			f->ooo[k] = f->ooo[k - 1];
			k--;
		}
		f->ooo[k] = i;
		f->nooo++;
	}
	M.qlen++;
	M.backlog += M.len[i];
}

/* The flow's next packet: the sorted list's first if earlier than the
 * FIFO's. */
static int m_peek(struct mflow *f, bool *from_ooo)
{
	if (f->nooo && (!f->nfifo || M.tts[f->ooo[0]] < M.tts[f->fifo[0]])) {
		*from_ooo = true;
		return (int)f->ooo[0];
	}
	*from_ooo = false;
	return f->nfifo ? (int)f->fifo[0] : -1;
}

static void m_unthrottle_due(uint64_t now)
{
	if (M.tndf > now)
		return;
	M.tndf = UINT64_MAX;
	for (;;) {
		int best = -1;
		for (unsigned k = 0; k < M.nf; k++) {
			struct mflow *f = &M.f[k];
			if (!f->throttled)
				continue;
			if (best < 0 || f->tnp < M.f[best].tnp ||
			    (f->tnp == M.f[best].tnp && f->tseq < M.f[best].tseq))
				best = (int)k;
		}
		if (best < 0)
			return;
		if (M.f[best].tnp > now) {
			M.tndf = M.f[best].tnp;
			return;
		}
		M.f[best].throttled = false;
		M.nthr--;
		m_add_tail((unsigned)best, false);
	}
}

static void m_wd_arm(uint64_t t)
{
	if (M.wd_armed && M.wd_soft - t <= M.c.slack)
		return;
	M.wd_armed = true;
	M.wd_soft = t;
	M.wd_hard = t + M.c.slack;
}

static void m_send(unsigned i, uint64_t now)
{
	M.qlen--;
	M.backlog -= M.len[i];
	M.sent_at[i] = (int64_t)now;
	M.sent_pkts++;
	M.order[M.norder++] = i;
}

/* One dequeue: the packet index, or -1. */
static int m_dequeue(uint64_t now)
{
	if (!M.qlen)
		return -1;
	if (M.ih != M.it) {
		unsigned i = M.internal[M.ih++];
		if (M.ih == M.it)
			M.ih = M.it = 0;
		m_send(i, now);
		return (int)i;
	}
	m_unthrottle_due(now);
	int retry = 0;
	for (;;) {
		unsigned b = M.band_nr;
		struct mlist *head = NULL;
		if (M.bcredit[b] > 0) {
			if (M.newl[b].h != M.newl[b].t)
				head = &M.newl[b];
			else if (M.oldl[b].h != M.oldl[b].t)
				head = &M.oldl[b];
		}
		if (!head) {
			bool again = false;
			while (++retry <= 3) {
				M.band_nr = (M.band_nr + 1) % 3;
				int c = M.bcredit[M.band_nr] + M.c.weight[M.band_nr];
				M.bcredit[M.band_nr] = c < M.c.weight[M.band_nr] ? c : M.c.weight[M.band_nr];
				if (M.bcredit[M.band_nr] > 0) {
					again = true;
					break;
				}
				retry = 0;
			}
			if (again)
				continue;
			if (M.tndf != UINT64_MAX)
				m_wd_arm(M.tndf);
			return -1;
		}
		unsigned fi = head->v[head->h];
		struct mflow *f = &M.f[fi];
		retry = 0;
		if (f->credit <= 0) {
			f->credit += (int)M.c.quantum;
			head->h++;
			m_compact(head);
			m_add_tail(fi, false);
			continue;
		}
		bool from_ooo;
		int pi = m_peek(f, &from_ooo);
		if (pi < 0) {
			head->h++;
			m_compact(head);
			if (head == &M.newl[b])
				m_add_tail(fi, false);
			else {
				f->detached = true;
				f->age = m_j(now) | 1;
			}
			continue;
		}
		unsigned i = (unsigned)pi;
		uint64_t t = M.tts[i] > f->tnp ? M.tts[i] : f->tnp;
		if (now < t) {
			head->h++;
			m_compact(head);
			f->tnp = t;
			f->throttled = true;
			f->tseq = M.seq++;
			M.nthr++;
			if (M.tndf > t)
				M.tndf = t;
			continue;
		}
		if (from_ooo) {
			memmove(f->ooo, f->ooo + 1, (f->nooo - 1) * sizeof(f->ooo[0]));
			f->nooo--;
		} else {
			memmove(f->fifo, f->fifo + 1, (f->nfifo - 1) * sizeof(f->fifo[0]));
			f->nfifo--;
		}
		m_send(i, now);
		if ((int64_t)(now - t - M.c.ce) > 0) {
			if (M.ecn[i] == 1 || M.ecn[i] == 2)
				M.ecn[i] = 3;
			M.ce_mark++;
		}
		if (--f->qlen == 0)
			M.inactive++;
		M.band_cnt[M.band[i]]--;
		uint64_t plen = M.len[i];
		f->credit -= (int)plen;
		M.bcredit[b] -= (int)plen;
		if (!M.c.rate_enable)
			return (int)i;
		uint64_t rate = M.c.maxrate;
		if (!M.has_ts[i]) {
			if (M.sk[i] && M.sk[i]->sk_pacing_rate < rate)
				rate = M.sk[i]->sk_pacing_rate;
			if (rate <= M.c.lrt) {
				f->credit = 0;
			} else {
				if (plen < M.c.quantum)
					plen = M.c.quantum;
				if (f->credit > 0)
					return (int)i;
			}
		}
		if (rate != UINT64_MAX) {
			uint64_t d = rate ? plen * NS / rate : plen * NS;
			if (d > NS)
				d = NS;
			if (f->tnp && now > f->tnp) {
				uint64_t late = now - f->tnp;
				d -= late < d / 2 ? late : d / 2;
			}
			f->tnp = now + d;
		}
		return (int)i;
	}
}

static void m_run(uint64_t now)
{
	while (m_dequeue(now) >= 0)
		;
}

/* Fire the model's watchdog up to @t. */
static void m_advance(uint64_t t)
{
	while (M.wd_armed && M.wd_hard <= t) {
		M.wd_armed = false;
		m_run(M.wd_hard);
	}
}

static void m_check(struct pw_netdev *dev, bool xstats)
{
	for (unsigned i = 0; i < L.n; i++) {
		bool bad = false;
		if (M.sent_at[i] == -2)
			bad = L.state[i] != 3;
		else if (M.sent_at[i] == -1)
			bad = L.state[i] != 1;
		else
			bad = L.state[i] != 2 || (int64_t)L.xmit_ns[i] != M.sent_at[i] ||
			      L.pkts[i].ecn != M.ecn[i];
		if (bad) {
			fprintf(stderr, "packet %u (len %u band %u ts %d): state %u at %llu ecn %u, "
					"model %lld ecn %u\n",
				i, M.len[i], M.band[i], M.has_ts[i], L.state[i],
				(unsigned long long)L.xmit_ns[i], L.pkts[i].ecn,
				(long long)M.sent_at[i], M.ecn[i]);
			CHECK(0);
		}
	}
	/* and in the same order (packets sent at one time included) */
	CHECK_EQ(L.norder, M.norder);
	for (unsigned k = 0; k < M.norder; k++) {
		if (L.order[k] != M.order[k])
			fprintf(stderr, "send %u: packet %u, model %u (at %llu)\n", k, L.order[k],
				M.order[k], (unsigned long long)L.xmit_ns[L.order[k]]);
		CHECK_EQ(L.order[k], M.order[k]);
	}
	struct pw__qdisc *q = __atomic_load_n(&dev->txq[0].qdisc, __ATOMIC_ACQUIRE);
	CHECK(q && q->ops == &pw__fq_ops);
	pw__qlock(&q->root->lock);
	uint64_t nthr = 0;
	const struct fq_priv *fq = pw__qdisc_priv(q);
	CHECK_EQ(pw__fqt_check(&fq->throttled, &nthr), 0);
	CHECK_EQ(nthr, M.nthr);
	pw__qunlock(&q->root->lock);
	struct pw_qdisc_stats st = qstats(dev);
	CHECK_EQ(st.qlen, M.qlen);
	CHECK_EQ(st.backlog, M.backlog);
	CHECK_EQ(st.packets, M.sent_pkts);
	if (xstats) {
		CHECK_EQ(xstat("flows "), M.flows);
		CHECK_EQ(xstat("inactive "), M.inactive);
		CHECK_EQ(xstat("throttled)"), M.nthr);
		CHECK_EQ(xstat("band0_pkts "), M.band_cnt[0]);
		CHECK_EQ(xstat("band1_pkts "), M.band_cnt[1]);
		CHECK_EQ(xstat("band2_pkts "), M.band_cnt[2]);
		long long ce = xstat("ce_mark ");
		CHECK_EQ(ce < 0 ? 0 : (uint64_t)ce, M.ce_mark);
		long long fp = xstat("fastpath ");
		CHECK_EQ(fp < 0 ? 0 : (uint64_t)fp, M.fast);
	}
}

struct mconf {
	const char *tc;
	struct mcfg c;
};

static void m_default(struct mcfg *c)
{
	memset(c, 0, sizeof(*c));
	c->limit = 10000;
	c->flow_plimit = 100;
	c->quantum = QUANTUM;
	c->iq = IQUANTUM;
	c->orphan_mask = 1023;
	c->lrt = 68750;
	c->slack = 10000;
	c->refill_j = 40;
	c->maxrate = UINT64_MAX;
	c->horizon = 10 * NS;
	c->ce = 1000ull * ~0u;
	c->horizon_drop = true;
	c->rate_enable = true;
	static const uint8_t pm[16] = { 1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1 };
	memcpy(c->prio2band, pm, 16);
	c->weight[0] = 9 << 16;
	c->weight[1] = 3 << 16;
	c->weight[2] = 1 << 16;
}

static void model_iteration(unsigned conf, unsigned nops)
{
	struct mcfg c;
	m_default(&c);
	char opts[512] = "";
	switch (conf % 6) {
	case 0:
		break;
	case 1:
		snprintf(opts, sizeof(opts), "quantum 1000 initial_quantum 3000 flow_limit 20 limit 40"
					     " weights 16384 32768 65536");
		c.quantum = 1000, c.iq = 3000, c.flow_plimit = 20, c.limit = 40;
		c.weight[0] = 16384, c.weight[1] = 32768, c.weight[2] = 65536;
		break;
	case 2:
		snprintf(opts, sizeof(opts), "maxrate 20mbit timer_slack 50us orphan_mask 7"
					     " ce_threshold 2ms refill_delay 5ms");
		c.maxrate = 2500000, c.slack = 50000, c.orphan_mask = 7, c.ce = 2000000;
		c.refill_j = 5;
		break;
	case 3:
		snprintf(opts, sizeof(opts), "nopacing ce_threshold 500us");
		c.rate_enable = false, c.ce = 500000;
		break;
	case 4:
		snprintf(opts, sizeof(opts), "low_rate_threshold 4mbit horizon 5ms horizon_cap"
					     " timer_slack 0 bands 3 priomap 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0");
		c.lrt = 500000, c.horizon = 5000000, c.horizon_drop = false, c.slack = 0;
		for (unsigned k = 0; k < 16; k++)
			c.prio2band[k] = (uint8_t)(k % 3);
		break;
	case 5:
		snprintf(opts, sizeof(opts), "horizon 8ms quantum 20000 initial_quantum 0 timer_slack 1ms");
		c.horizon = 8000000, c.quantum = 20000, c.iq = 0, c.slack = 1000000;
		break;
	}
	struct pw_netdev *dev = setup(opts);
	m_init(&c);
	struct pw_sock *socks[MS];
	for (unsigned s = 0; s < MS; s++) {
		uint64_t rate = UINT64_MAX, cap = UINT64_MAX;
		switch (s % 4) {
		case 0: rate = 200000 + rnd_below(5000000); break;  /* paced */
		case 1: rate = 20000 + rnd_below(100000); break;    /* slow, maybe below the threshold */
		case 2: rate = cap = UINT64_MAX - 1; break;         /* unpaced, never the fast path */
		case 3: break;                                      /* unpaced: the fast path */
		}
		socks[s] = mksock(rate, cap, (uint32_t)s);
	}
	uint64_t now = T0;
	for (unsigned op = 0; op < nops && L.n < MP; op++) {
		uint64_t r = rnd_below(100);
		if (r < 30) {
			now += rnd_below(r < 3 ? 50000000 : 400000);
			m_advance(now);
			advance_to(now);
			continue;
		}
		if (r == 99) /* a new socket at an old address */
			socks[rnd_below(MS)]->sk_hash += MS;
		unsigned i = L.n;
		struct pw_sock *sk = rnd_below(5) ? socks[rnd_below(MS)] : NULL;
		uint32_t len = 64 + (uint32_t)rnd_below(r < 50 ? 1450 : 9000);
		uint32_t hash = (uint32_t)rnd_below(40);
		uint32_t prio = (uint32_t)rnd_below(16);
		uint64_t ts = 0;
		uint64_t tr = rnd_below(20);
		if (tr == 0)
			ts = now + rnd_below(12000000);      /* ahead, maybe past a horizon */
		else if (tr == 1)
			ts = now - rnd_below(1000000);       /* in the past */
		else if (tr == 2)
			ts = now + 11 * NS;                  /* beyond the default horizon */
		uint8_t ecn = (uint8_t)rnd_below(4);
		M.len[i] = len;
		M.sk[i] = sk;
		M.has_ts[i] = ts != 0;
		M.tts[i] = ts;
		M.ecn[i] = ecn;
		m_advance(now);
		m_enqueue(i, hash, prio, now);
		m_run(now);
		xmit(dev, sk, len, hash, prio, ts, ecn, NULL);
		CHECK_EQ(pw_sim_advance(L.rt, 0), 0);
		if (op % 97 == 0)
			m_check(dev, op % 388 == 0);
	}
	m_check(dev, true);
	/* drain */
	now += 60 * NS;
	m_advance(now);
	advance_to(now);
	m_check(dev, true);
	CHECK_EQ(M.qlen, 0);
	if (getenv("FQ_MODEL_DEBUG"))
		fprintf(stderr, "conf %u: %u pkts, %llu sent, %llu dropped (limit %llu flow %llu horizon %llu), "
				"%llu fast, %llu ce, throttled %lld, flows %u\n",
			conf % 6, L.n, (unsigned long long)L.sent, (unsigned long long)L.dropped,
			(unsigned long long)L.drop_by[PW_DROP_QDISC_LIMIT],
			(unsigned long long)L.drop_by[PW_DROP_FLOW_LIMIT],
			(unsigned long long)L.drop_by[PW_DROP_HORIZON], (unsigned long long)M.fast,
			(unsigned long long)M.ce_mark, xstat("throttled "), M.flows);
	teardown(dev);
	for (unsigned s = 0; s < MS; s++)
		free(socks[s]);
}

/* ----------------------------------------- the throttled set, alone */

/*
 * fq_throttle.c against a deliberately dumb reference: entries in an
 * array, the due ones found by scanning for the least (t, seq), the next
 * time by a scan.  Times are drawn near now (ties included: a time another
 * entry has), far (every level of the wheel, up to the top of the 64-bit
 * range), and now and then behind the wheel's clock (a clock going back:
 * the rebuild); now mostly moves forward by small and large steps, now and
 * then back.  pw__fqt_check() after every operation.
 */
#define TN 600

static struct {
	struct pw__fqt w;
	struct pw__fqt_node n[TN];
	bool in[TN];
	uint64_t t[TN], seq[TN];
	uint64_t seq_next;
	unsigned count;
} TS;

static uint64_t t_draw(uint64_t now)
{
	uint64_t r = rnd_below(100), d;
	if (r < 15 && TS.count) { /* a time another entry has */
		unsigned k = (unsigned)rnd_below(TN);
		while (!TS.in[k])
			k = (k + 1) % TN;
		return TS.t[k];
	}
	if (r < 50)
		d = 1 + rnd_below(600);
	else if (r < 95)
		d = 1 + rnd_below(1ull << rnd_below(63));
	else if (r < 97)
		return UINT64_MAX - rnd_below(1ull << 40); /* the top level */
	else
		return now > 0 ? now - rnd_below(now < 100000 ? now : 100000) : 0; /* behind */
	return now + d < now ? UINT64_MAX : now + d;
}

static void t_check(void)
{
	uint64_t n = 0;
	CHECK_EQ(pw__fqt_check(&TS.w, &n), 0);
	CHECK_EQ(n, TS.count);
	CHECK_EQ(pw__fqt_empty(&TS.w), TS.count == 0);
	uint64_t m = UINT64_MAX;
	for (unsigned k = 0; k < TN; k++)
		if (TS.in[k] && TS.t[k] < m)
			m = TS.t[k];
	CHECK_EQ(pw__fqt_next(&TS.w), m);
}

static void t_take_due(uint64_t now)
{
	uint64_t next = 0;
	struct pw__fqt_node *got = pw__fqt_take_due(&TS.w, now, &next);
	for (;;) {
		int best = -1;
		for (unsigned k = 0; k < TN; k++)
			if (TS.in[k] && TS.t[k] <= now &&
			    (best < 0 || TS.t[k] < TS.t[best] ||
			     (TS.t[k] == TS.t[best] && TS.seq[k] < TS.seq[best])))
				best = (int)k;
		if (best < 0)
			break;
		if (got != &TS.n[best])
			fprintf(stderr, "take_due(%llu): got %d, want %d (t %llu seq %llu)\n",
				(unsigned long long)now, got ? (int)(got - TS.n) : -1, best,
				(unsigned long long)TS.t[best], (unsigned long long)TS.seq[best]);
		CHECK(got == &TS.n[best]);
		got = got->next;
		TS.in[best] = false;
		TS.count--;
	}
	CHECK(got == NULL);
	uint64_t m = UINT64_MAX;
	for (unsigned k = 0; k < TN; k++)
		if (TS.in[k] && TS.t[k] < m)
			m = TS.t[k];
	CHECK_EQ(next, m);
}

static void test_throttle_random(void)
{
	uint64_t ops;
	rng_state = rng_seed_and_ops("PW_FQT_OPS", 60000, &ops);
	for (unsigned round = 0; round < 4; round++) {
		memset(&TS, 0, sizeof(TS));
		pw__fqt_init(&TS.w);
		uint64_t now = round == 3 ? UINT64_MAX / 2 : rnd_below(1ull << 40);
		/* rounds differ in how far time moves per step */
		unsigned far = round == 0 ? 8 : round == 1 ? 20 : 40;
		for (uint64_t op = 0; op < ops / 4; op++) {
			uint64_t r = rnd_below(100);
			if (r < 45) {
				unsigned k = (unsigned)rnd_below(TN);
				if (TS.in[k])
					continue;
				uint64_t t = t_draw(now);
				pw__fqt_add(&TS.w, &TS.n[k], t, now);
				CHECK_EQ(TS.n[k].t, t);
				TS.in[k] = true;
				TS.t[k] = t;
				TS.seq[k] = TS.seq_next++;
				TS.count++;
			} else if (r < 55) {
				if (!TS.count)
					continue;
				unsigned k = (unsigned)rnd_below(TN);
				while (!TS.in[k])
					k = (k + 1) % TN;
				pw__fqt_del(&TS.w, &TS.n[k]);
				TS.in[k] = false;
				TS.count--;
			} else if (r < 57) {
				now -= rnd_below(now < 1000000 ? now : 1000000); /* back */
				t_take_due(now);
			} else {
				uint64_t d = rnd_below(r < 90 ? 700 : 1ull << rnd_below(far));
				now = now + d < now ? UINT64_MAX : now + d;
				t_take_due(now);
			}
			t_check();
		}
		/* drain */
		t_take_due(UINT64_MAX);
		CHECK_EQ(TS.count, 0u);
		t_check();
	}
}

/* Seeded random traffic against the model, every packet to the ns. */
static void test_model_random(void)
{
	uint64_t ops;
	rng_state = rng_seed_and_ops("PW_FQ_OPS", 3000, &ops);
	for (unsigned it = 0; it < 48; it++)
		model_iteration(it, (unsigned)ops);
}

int main(void)
{
	RUN(test_pacing_socket);
	RUN(test_low_rate_threshold);
	RUN(test_maxrate);
	RUN(test_timer_slack);
	RUN(test_drr);
	RUN(test_fastpath);
	RUN(test_edt_horizon);
	RUN(test_limits);
	RUN(test_orphan_mask);
	RUN(test_gc);
	RUN(test_bands);
	RUN(test_ce_threshold);
	RUN(test_change_teardown);
	RUN(test_peek);
	RUN(test_under_mq);
	RUN(test_tc_stats_text);
	RUN(test_round_trip);
	RUN(test_throttle_random);
	RUN(test_model_random);
	free(L.pkts);
	free(L.state);
	return 0;
}
