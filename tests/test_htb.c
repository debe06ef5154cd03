/* SPDX-License-Identifier: MIT */
/*
 * htb on the simulated clock.
 *
 *  - One class alone: every send time equals a model of the kernel's
 *    token arithmetic written here from its definition (tc's buffer in
 *    64 ns ticks from tc_calc_xmittime(); psched_ratecfg's mult/shift and
 *    l2t with overhead; a class in CAN_SEND sends whatever the packet
 *    costs, then waits on the wait queue until its tokens are back at 0;
 *    the watchdog at that event), to the nanosecond; and the closed form
 *    over a long run: packets sent by T = floor((rate x T + burst) / len)
 *    + 1 (the burst, the rate to the byte, and the one packet of overdraft
 *    a class in CAN_SEND may take).
 *  - ceil caps borrowing; sharing under a parent: the guaranteed rates,
 *    then the excess by quantum within a prio, and to the lowest prio
 *    number first (closed-form shares of the parent's rate).
 *  - Classification: priority == htb's handle goes direct, == a leaf to
 *    it, else the default class, else direct; direct_qlen drops.
 *  - A netem leaf: its delay respected, the class's rate too.
 *  - The exactly-once rule over random sequences of sends, time, class
 *    add/change/delete, leaf grafts and deletes with packets queued, and
 *    htb's qlen/backlog == the packets the ledger has in the layer.
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

#define T0 1000000000ull
#define MS 1000000ull
#define SEC 1000000000ull

/* ------------------------------------------------------------ helpers */

static struct pw_netdev *setup(const char *htb)
{
	struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root handle 1: htb %s", htb);
	tc_ok(rt, cmd);
	return dev;
}

static void teardown(struct pw_netdev *dev)
{
	struct pw_runtime *rt = L.rt;
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

static void advance_to(uint64_t t)
{
	uint64_t now = pw_now_ns(L.rt);
	if (t > now)
		pw_sim_advance(L.rt, t - now);
}

/* Bytes sent so far by packets whose priority is @prio (the class). */
static uint64_t sent_bytes_of(uint32_t prio)
{
	uint64_t b = 0;
	for (unsigned i = 0; i < L.n; i++)
		if (L.state[i] == 2 && L.pkts[i].priority == prio)
			b += L.pkts[i].len;
	return b;
}

/* The ledger's packets still in the layer: htb's qlen and backlog. */
static void check_backlog(struct pw_netdev *dev)
{
	uint64_t n = 0, b = 0;
	for (unsigned i = 0; i < L.n; i++)
		if (L.state[i] == 1)
			n++, b += L.pkts[i].len;
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(st.qlen, n);
	CHECK_EQ(st.backlog, b);
}

/* A number from `tc -s class show dev eth0 classid @cls`: the word after
 * @key ("Sent", "lended:", "tokens:" ...). */
static long long class_stat(const char *cls, const char *key)
{
	char cmd[128], out[4096];
	snprintf(cmd, sizeof(cmd), "class show dev eth0 classid %s", cls);
	CHECK_EQ(pw_tc(L.rt, cmd, PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
	char *p = strstr(out, key);
	CHECK(p != NULL);
	return strtoll(p + strlen(key), NULL, 10);
}

/* ------------------------------------------------- the one-class model */

struct mrate {
	uint64_t bps;
	uint32_t mult;
	uint8_t shift;
	unsigned overhead;
};

static void mrate_set(struct mrate *r, uint64_t bps, unsigned overhead)
{
	memset(r, 0, sizeof(*r));
	r->bps = bps;
	r->overhead = overhead;
	for (unsigned s = 0;; s++) {
		uint64_t f = 1000000000ull << s;
		uint64_t m = f / bps;
		r->mult = (uint32_t)m;
		r->shift = (uint8_t)s;
		if ((m & 0x80000000ull) || (f & (1ull << 63)))
			break;
	}
}

static int64_t mrate_ns(const struct mrate *r, unsigned len)
{
	return (int64_t)((((uint64_t)len + r->overhead) * r->mult) >> r->shift);
}

/* tc's buffer for @burst bytes at @bps: microseconds truncated, then
 * 15.625 ticks per microsecond truncated; the kernel keeps ticks << 6. */
static int64_t tc_buffer_ns(uint64_t bps, uint32_t burst)
{
	double usec = 1000000.0 * (double)burst / (double)bps;
	uint32_t ticks = (uint32_t)((double)(uint32_t)usec * 15.625);
	return (int64_t)ticks << 6;
}

/* A root leaf class with rate == ceil, saturated from time @t0 with @n
 * packets of @len: each send time.  Tokens and ctokens are equal here, so
 * one bucket: send while tokens >= 0 (after the lazy refill, capped at the
 * buffer at each charge), then wait -tokens. */
static void model_one(const struct mrate *r, int64_t buffer, int64_t t0, unsigned n,
		      unsigned len, int64_t *at)
{
	int64_t tokens = buffer, t_c = t0, now = t0;
	for (unsigned k = 0; k < n; k++) {
		at[k] = now;
		int64_t toks = tokens + (now - t_c);
		if (toks > buffer)
			toks = buffer;
		toks -= mrate_ns(r, len);
		tokens = toks;
		t_c = now;
		if (tokens < 0)
			now += -tokens; /* the wait queue's event, the watchdog */
	}
}

/* --------------------------------------------------------------- tests */

static void run_one_class(const char *rate, uint64_t bps, uint32_t burst, const char *extra,
			  unsigned overhead, unsigned n, unsigned len)
{
	struct pw_netdev *dev = setup("default 10");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "class add dev eth0 parent 1: classid 1:10 htb rate %s %s",
		 rate, extra);
	tc_ok(L.rt, cmd);
	tc_ok(L.rt, "qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 100000");
	struct mrate r;
	mrate_set(&r, bps, overhead);
	int64_t buffer = tc_buffer_ns(bps, burst);
	int64_t *at = calloc(n, sizeof(*at));
	CHECK(at);
	model_one(&r, buffer, (int64_t)T0, n, len, at);
	for (unsigned k = 0; k < n; k++)
		send_from(dev, 0, len, 0, 0, NULL);
	advance_to((uint64_t)at[n - 1] + 1);
	for (unsigned k = 0; k < n; k++) {
		if (L.state[k] != 2 || (int64_t)L.xmit_ns[k] != at[k])
			fprintf(stderr, "%s: packet %u (%u) at %llu, model %lld\n", rate, k,
				L.state[k], (unsigned long long)L.xmit_ns[k], (long long)at[k]);
		CHECK_EQ(L.state[k], 2);
		CHECK_EQ((int64_t)L.xmit_ns[k], at[k]);
	}
	CHECK_EQ(L.sent, n);
	check_backlog(dev);
	free(at);
	teardown(dev);
}

/* Each send time is the model's, for a few rates, bursts, overheads. */
static void test_one_class_model(void)
{
	run_one_class("8mbit", 1000000, 1600, "", 0, 3000, 1000);
	run_one_class("1mbit", 125000, 10000, "burst 10000 cburst 10000", 0, 500, 1500);
	run_one_class("3mbit", 375000, 1600, "overhead 24", 24, 1000, 700);
	run_one_class("100mbit", 12500000, 20000, "burst 20000 cburst 20000", 0, 20000, 1514);
}

/* The closed form over 60 s at 8 Mbit/s: by T, floor((rate x T + burst) /
 * len) + 1 packets, checked every 10 ms. */
static void test_one_class_long(void)
{
	struct pw_netdev *dev = setup("default 10");
	tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:10 htb rate 8mbit burst 1600");
	tc_ok(L.rt, "qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 100000");
	const unsigned n = 60100;
	for (unsigned k = 0; k < n; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	for (uint64_t t = 0; t <= 60 * SEC; t += 10 * MS) {
		advance_to(T0 + t);
		uint64_t expect = (1000000ull * t / SEC + 1600) / 1000 + 1;
		CHECK_EQ(L.sent, expect);
	}
	CHECK_EQ(class_stat("1:10", "Sent "), (long long)L.sent * 1000);
	/* each packet after the burst made the class wait: one overlimit
	 * (CANT_SEND) per packet beyond the first */
	CHECK_EQ(class_stat("1:10", "overlimits "), (long long)L.sent - 1);
	teardown(dev);
}

/* A child alone under a parent that can lend: it borrows up to its ceil,
 * not beyond; its rate's share is lent by itself, the rest borrowed. */
static void test_ceil_caps(void)
{
	struct pw_netdev *dev = setup("default 10");
	tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:1 htb rate 80mbit");
	tc_ok(L.rt, "class add dev eth0 parent 1:1 classid 1:10 htb rate 8mbit ceil 24mbit");
	tc_ok(L.rt, "class add dev eth0 parent 1:1 classid 1:20 htb rate 8mbit ceil 80mbit");
	tc_ok(L.rt, "qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 100000");
	const unsigned n = 40000;
	for (unsigned k = 0; k < n; k++)
		send_from(dev, 0, 1000, 0, 0x10010, NULL);
	advance_to(T0 + 10 * SEC);
	/* 24 Mbit/s = 3e6 B/s for 10 s, plus the cburst and one packet */
	uint64_t b = sent_bytes_of(0x10010);
	CHECK(b >= 30000000 && b <= 30000000 + 1600 + 3000);
	long long lent = class_stat("1:10", "lended: ");
	long long borrowed = class_stat("1:10", "borrowed: ");
	/* 8 of its 24 Mbit/s on its own tokens, 16 from 1:1 */
	CHECK(lent > 9000 && lent < 11000);
	CHECK(borrowed > 19000 && borrowed < 21000);
	CHECK_EQ(class_stat("1:1", "lended: "), borrowed);
	teardown(dev);
}

/* Two or three saturated leaves under a parent of rate R: each gets its
 * rate, the excess goes by quantum within a prio, and to the lower prio
 * number first.  @cls: the tc class words; @share: the expected Mbit/s. */
static void run_share(const char *parent, const char *const *cls, unsigned ncls,
		      const double *share_mbit)
{
	struct pw_netdev *dev = setup("default 10");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "class add dev eth0 parent 1: classid 1:1 htb %s", parent);
	tc_ok(L.rt, cmd);
	for (unsigned c = 0; c < ncls; c++) {
		snprintf(cmd, sizeof(cmd), "class add dev eth0 parent 1:1 classid 1:%x htb %s",
			 0x10 * (c + 1), cls[c]);
		tc_ok(L.rt, cmd);
	}
	/* saturate: refill every 50 ms so each leaf always has packets */
	const uint64_t dur = 20 * SEC;
	uint64_t b0[4] = { 0 };
	for (uint64_t t = 0; t <= dur; t += 50 * MS) {
		advance_to(T0 + t);
		for (unsigned c = 0; c < ncls; c++) {
			uint32_t prio = 0x10000 | (0x10 * (c + 1));
			/* keep ~2 MB queued per class: more than 50 ms at 100 Mbit */
			uint64_t queued = 0;
			for (unsigned i = 0; i < L.n; i++)
				if (L.state[i] == 1 && L.pkts[i].priority == prio)
					queued += L.pkts[i].len;
			while (queued < 700000) {
				send_from(dev, 0, 1000, 0, prio, NULL);
				queued += 1000;
			}
		}
		if (t == 2 * SEC) /* skip the start (bursts) */
			for (unsigned c = 0; c < ncls; c++)
				b0[c] = sent_bytes_of(0x10000 | (0x10 * (c + 1)));
	}
	double secs = (double)(dur - 2 * SEC) / 1e9;
	for (unsigned c = 0; c < ncls; c++) {
		double mbit = (double)(sent_bytes_of(0x10000 | (0x10 * (c + 1))) - b0[c]) * 8 /
			      secs / 1e6;
		bool ok = mbit >= share_mbit[c] * 0.995 && mbit <= share_mbit[c] * 1.005;
		if (!ok || getenv("HTB_VERBOSE"))
			fprintf(stderr, "share: class %u got %.3f Mbit/s, expected %.3f\n", c,
				mbit, share_mbit[c]);
		CHECK(ok);
	}
	teardown(dev);
}

static void test_sharing(void)
{
	/* the excess (3) by quantum 12500 : 25000 (rate / r2q) */
	{
		const char *c[] = { "rate 1mbit ceil 6mbit", "rate 2mbit ceil 6mbit" };
		const double s[] = { 2.0, 4.0 };
		run_share("rate 6mbit", c, 2, s);
	}
	/* equal quanta: the excess halves */
	{
		const char *c[] = { "rate 1mbit ceil 6mbit quantum 5000",
				    "rate 2mbit ceil 6mbit quantum 5000" };
		const double s[] = { 2.5, 3.5 };
		run_share("rate 6mbit", c, 2, s);
	}
	/* prio: 1:10 (prio 0) takes the whole excess up to its ceil */
	{
		const char *c[] = { "rate 1mbit ceil 6mbit prio 0", "rate 2mbit ceil 6mbit prio 1" };
		const double s[] = { 4.0, 2.0 };
		run_share("rate 6mbit", c, 2, s);
	}
	/* prio with a ceil: prio 0 stops at its ceil, the rest to prio 1 */
	{
		const char *c[] = { "rate 1mbit ceil 3mbit prio 0", "rate 1mbit ceil 9mbit prio 1",
				    "rate 1mbit ceil 9mbit prio 1 quantum 25000" };
		/* excess 9 - 3 = 6; 1:10 takes 2 more (ceil 3); the other 4 by
		 * quantum 12500 : 25000 between 1:20 and 1:30 */
		const double s[] = { 3.0, 1.0 + 4.0 / 3, 1.0 + 8.0 / 3 };
		run_share("rate 9mbit", c, 3, s);
	}
}

/* Random two- and three-level trees, every leaf saturated: each class
 * (its subtree's bytes) gets at least its rate (the rates are chosen so
 * that each parent's covers its children's) and at most its ceil, and the
 * root's rate is used whole when the ceils allow it (htb conserves work
 * up to the ceils). */
static void test_random_trees(void)
{
	for (unsigned seed = 1; seed <= 5; seed++) {
		rng_state = 1000 + seed;
		struct pw_netdev *dev = setup("");
		struct { uint32_t id, parent; double rate, ceil; bool leaf; } c[16];
		unsigned nc = 0;
		double R = 5 + (double)rnd_below(36); /* Mbit/s */
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "class add dev eth0 parent 1: classid 1:1 htb rate %.0fkbit",
			 R * 1000);
		tc_ok(L.rt, cmd);
		unsigned ntop = 2 + (unsigned)rnd_below(3);
		double eff_sum = 0;
		for (unsigned t = 0; t < ntop; t++) {
			double r = R * 0.9 / ntop * (0.5 + (double)rnd_below(50) / 100);
			double ce = r + (R - r) * (double)rnd_below(101) / 100;
			unsigned ti = nc++;
			c[ti].id = 0x10010 + 0x10 * t;
			c[ti].parent = 0x10001;
			c[ti].rate = r;
			c[ti].ceil = ce;
			c[ti].leaf = rnd_below(2);
			snprintf(cmd, sizeof(cmd),
				 "class add dev eth0 parent 1:1 classid 1:%x htb rate %.0fkbit ceil "
				 "%.0fkbit prio %u",
				 c[ti].id & 0xffff, r * 1000, ce * 1000, (unsigned)rnd_below(2));
			tc_ok(L.rt, cmd);
			double eff = ce;
			if (!c[ti].leaf) {
				unsigned nl = 1 + (unsigned)rnd_below(3);
				double lc = 0;
				for (unsigned l = 0; l < nl; l++) {
					double lr = r * 0.9 / nl * (0.5 + (double)rnd_below(50) / 100);
					double lce = lr + (ce - lr) * (double)rnd_below(101) / 100;
					unsigned li = nc++;
					c[li].id = c[ti].id + 1 + l;
					c[li].parent = c[ti].id;
					c[li].rate = lr;
					c[li].ceil = lce;
					c[li].leaf = true;
					lc += lce;
					snprintf(cmd, sizeof(cmd),
						 "class add dev eth0 parent 1:%x classid 1:%x htb rate "
						 "%.0fkbit ceil %.0fkbit prio %u",
						 c[ti].id & 0xffff, c[li].id & 0xffff, lr * 1000,
						 lce * 1000, (unsigned)rnd_below(2));
					tc_ok(L.rt, cmd);
				}
				if (lc < eff)
					eff = lc;
			}
			eff_sum += eff;
		}
		/* saturate; per-class bytes counted from the xmit order */
		uint64_t queued[16] = { 0 }, sent[16] = { 0 }, sent0[16] = { 0 };
		unsigned seen = 0;
		const uint64_t dur = 10 * SEC, warm = 2 * SEC;
		for (uint64_t t = 0; t <= dur; t += 20 * MS) {
			advance_to(T0 + t);
			for (; seen < L.norder; seen++) {
				struct pw_pkt *p = &L.pkts[L.order[seen]];
				for (unsigned k = 0; k < nc; k++)
					if (c[k].id == p->priority) {
						sent[k] += p->len;
						queued[k] -= p->len;
					}
			}
			if (t == warm)
				memcpy(sent0, sent, sizeof(sent));
			for (unsigned k = 0; k < nc; k++)
				while (c[k].leaf && queued[k] < 300000) {
					send_from(dev, 0, 1000, 0, c[k].id, NULL);
					queued[k] += 1000;
				}
		}
		double secs = (double)(dur - warm) / 1e9, total = 0;
		for (unsigned k = 0; k < nc; k++) {
			uint64_t b = sent[k] - sent0[k];
			for (unsigned j = 0; j < nc; j++) /* an inner class: its leaves */
				if (c[j].parent == c[k].id)
					b += sent[j] - sent0[j];
			double mbit = (double)b * 8 / secs / 1e6;
			if (c[k].parent == 0x10001)
				total += mbit;
			/* an inner class's leaves may not be able to take its rate */
			double floor = c[k].rate, lc = 0;
			bool inner = false;
			for (unsigned j = 0; j < nc; j++)
				if (c[j].parent == c[k].id)
					lc += c[j].ceil, inner = true;
			if (inner && lc < floor)
				floor = lc;
			bool ok = mbit >= floor * 0.99 && mbit <= c[k].ceil * 1.01;
			if (!ok || getenv("HTB_VERBOSE"))
				fprintf(stderr, "tree %u: 1:%x got %.3f, rate %.3f ceil %.3f\n", seed,
					c[k].id & 0xffff, mbit, c[k].rate, c[k].ceil);
			CHECK(ok);
		}
		double want = eff_sum < R ? eff_sum : R;
		if (total < want * 0.99 || total > R * 1.01 || getenv("HTB_VERBOSE"))
			fprintf(stderr, "tree %u: total %.3f, expected %.3f (R %.3f)\n", seed, total,
				want, R);
		CHECK(total >= want * 0.99 && total <= R * 1.01);
		teardown(dev);
	}
}

/* htb under an htb leaf (and so a class tree two qdiscs deep): the outer
 * class's rate, shared by the inner classes as the inner htb says. */
static void test_nested(void)
{
	struct pw_netdev *dev = setup("default 10");
	tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:10 htb rate 8mbit");
	tc_ok(L.rt, "qdisc add dev eth0 parent 1:10 handle 10: htb");
	tc_ok(L.rt, "class add dev eth0 parent 10: classid 10:100 htb rate 8mbit");
	tc_ok(L.rt, "class add dev eth0 parent 10:100 classid 10:1 htb rate 1mbit ceil 8mbit");
	tc_ok(L.rt, "class add dev eth0 parent 10:100 classid 10:2 htb rate 3mbit ceil 8mbit "
		    "prio 1");
	uint64_t b0[2] = { 0 };
	for (uint64_t t = 0; t <= 12 * SEC; t += 20 * MS) {
		advance_to(T0 + t);
		for (uint32_t c = 1; c <= 2; c++) {
			uint64_t queued = 0;
			for (unsigned i = 0; i < L.n; i++)
				if (L.state[i] == 1 && L.pkts[i].priority == (0x100000 | c))
					queued += L.pkts[i].len;
			while (queued < 200000) {
				send_from(dev, 0, 1000, 0, 0x100000 | c, NULL);
				queued += 1000;
			}
		}
		if (t == 2 * SEC)
			for (uint32_t c = 1; c <= 2; c++)
				b0[c - 1] = sent_bytes_of(0x100000 | c);
		check_backlog(dev);
	}
	/* 8 Mbit/s from 1:10; 10:1 (prio 0) takes the excess: 1 + 4 = 5, 10:2
	 * its 3 */
	double m1 = (double)(sent_bytes_of(0x100001) - b0[0]) * 8 / 10 / 1e6;
	double m2 = (double)(sent_bytes_of(0x100002) - b0[1]) * 8 / 10 / 1e6;
	if (getenv("HTB_VERBOSE"))
		fprintf(stderr, "nested: %.3f %.3f\n", m1, m2);
	CHECK(m1 >= 5 * 0.995 && m1 <= 5 * 1.005);
	CHECK(m2 >= 3 * 0.995 && m2 <= 3 * 1.005);
	teardown(dev);
}

/* Classification and the direct queue. */
static void test_classify(void)
{
	struct pw_netdev *dev = setup("default 20 direct_qlen 5");
	tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:1 htb rate 8mbit");
	tc_ok(L.rt, "class add dev eth0 parent 1:1 classid 1:10 htb rate 1mbit");
	tc_ok(L.rt, "class add dev eth0 parent 1:1 classid 1:20 htb rate 1mbit");
	/* to the leaf named, to the default for an inner class or unknown id */
	send_from(dev, 0, 500, 0, 0x10010, NULL);
	send_from(dev, 0, 500, 0, 0x10001, NULL);
	send_from(dev, 0, 500, 0, 0x10099, NULL);
	send_from(dev, 0, 500, 0, 7, NULL);
	CHECK_EQ(class_stat("1:10", "Sent "), 500);
	CHECK_EQ(class_stat("1:20", "Sent "), 1500);
	CHECK_EQ(class_stat("1:1", "Sent "), 2000);
	/* to htb's handle: direct, unshaped (1 Gbyte at once) */
	for (int k = 0; k < 100; k++)
		send_from(dev, 0, 10000, 0, 0x10000, NULL);
	CHECK_EQ(L.sent, 104);
	char out[512];
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(strstr(out, "direct_packets_stat 100 ") != NULL);
	/* direct_qlen: the driver refuses, the direct queue fills to 5 */
	L.busy_left = 1000000;
	for (int k = 0; k < 10; k++)
		send_from(dev, 0, 100, 0, 0x10000, NULL);
	/* one requeued in the root, five queued, four dropped */
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], 4);
	L.busy_left = 0;
	pw_netif_wake_queue(dev, 0);
	pw_sim_advance(L.rt, MS);
	CHECK_EQ(L.sent, 110);
	check_backlog(dev);
	/* no default class: unclassified go direct */
	tc_ok(L.rt, "qdisc replace dev eth0 root handle 2: htb");
	tc_ok(L.rt, "class add dev eth0 parent 2: classid 2:10 htb rate 1kbit burst 1");
	send_from(dev, 0, 1000, 0, 0x20010, NULL); /* its burst: 1 packet */
	send_from(dev, 0, 1000, 0, 0x20010, NULL); /* waits 8 s */
	send_from(dev, 0, 1000, 0, 5, NULL);       /* direct */
	CHECK_EQ(L.sent, 112);
	CHECK_EQ(L.pkts[L.n - 1].priority, 5u);
	CHECK_EQ(L.state[L.n - 1], 2);
	CHECK_EQ(L.state[L.n - 2], 1);
	teardown(dev);
}

/* A netem leaf: every packet leaves at least its delay after it came, and
 * the class's rate holds (htb runs again when netem's watchdog fires:
 * the leaf shares htb's root). */
static void test_netem_leaf(void)
{
	struct pw_netdev *dev = setup("default 10");
	tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:10 htb rate 8mbit burst 1600");
	tc_ok(L.rt, "qdisc add dev eth0 parent 1:10 handle 10: netem delay 10ms limit 100000");
	char out[1024];
	CHECK_EQ(pw_tc(L.rt, "class show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(strstr(out, "class htb 1:10 root leaf 10: prio 0 ") != NULL);
	uint64_t *in = calloc(MAXPKT, sizeof(*in));
	CHECK(in);
	const unsigned n = 5000;
	/* 1000 packets at once, then one every 0.5 ms (2 Mbyte/s offered) */
	for (unsigned k = 0; k < n; k++) {
		if (k >= 1000)
			advance_to(T0 + (k - 1000) * 500000ull);
		in[L.n] = pw_now_ns(L.rt);
		send_from(dev, 0, 1000, 0, 0, NULL);
	}
	advance_to(T0 + 10 * SEC);
	CHECK_EQ(L.sent, n);
	uint64_t last = 0;
	for (unsigned i = 0; i < L.n; i++) {
		CHECK(L.xmit_ns[i] >= in[i] + 10 * MS);
		CHECK(L.xmit_ns[i] >= last); /* in order */
		last = L.xmit_ns[i];
	}
	/* the rate: by T (from the first departure) at most burst + rate x T
	 * + one packet */
	uint64_t t_first = L.xmit_ns[0];
	for (unsigned k = 0; k < n; k++) {
		uint64_t T = L.xmit_ns[k] - t_first;
		CHECK((uint64_t)(k + 1) * 1000 <= 1000000ull * T / SEC + 1600 + 1000);
	}
	/* saturated: the last packet leaves when the rate says (5 s of data) */
	CHECK(L.xmit_ns[n - 1] - t_first >= 4990 * MS && L.xmit_ns[n - 1] - t_first <= 5010 * MS);
	free(in);
	teardown(dev);
}

/* Random sequences: sends, time, class add/change/delete, leaf grafts and
 * deletes, with packets queued; every packet back once, the backlog
 * always the ledger's. */
static void test_random_ledger(void)
{
	for (unsigned seed = 1; seed <= 6; seed++) {
		rng_state = seed; /* fixed seeds: replayable */
		struct pw_netdev *dev = setup("default 20");
		tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:1 htb rate 4mbit ceil 8mbit");
		bool have[8] = { 0 };
		char cmd[256], err[2048];
		for (unsigned step = 0; step < 3000; step++) {
			unsigned op = (unsigned)(rnd() % 100);
			unsigned c = (unsigned)(rnd() % 8); /* class 1:1c (c: 0..7) */
			if (op < 55) {
				uint32_t prio = rnd() % 4 == 0 ? 0x10000 : 0x10010 + c;
				send_from(dev, 0, 64 + (uint32_t)(rnd() % 1400), 0, prio, NULL);
			} else if (op < 75) {
				pw_sim_advance(L.rt, rnd() % (5 * MS));
			} else if (op < 83) {
				/* add or change (parent: 1:1, or another leaf) */
				unsigned p = (unsigned)(rnd() % 8);
				const char *parent = "1:1";
				char pb[16];
				if (p != c && have[p] && rnd() % 3 == 0) {
					snprintf(pb, sizeof(pb), "1:1%x", p);
					parent = pb;
				}
				snprintf(cmd, sizeof(cmd),
					 "class replace dev eth0 parent %s classid 1:1%x htb rate %ukbit "
					 "ceil %ukbit prio %u",
					 parent, c, 100 + (unsigned)(rnd() % 2000),
					 2200 + (unsigned)(rnd() % 4000),
					 (unsigned)(rnd() % 8));
				if (pw_tc(L.rt, cmd, 0, NULL, 0, err, sizeof(err)) == 0)
					have[c] = true;
			} else if (op < 90) {
				snprintf(cmd, sizeof(cmd), "class del dev eth0 classid 1:1%x", c);
				int rc = pw_tc(L.rt, cmd, 0, NULL, 0, err, sizeof(err));
				if (rc == 0)
					have[c] = false;
				else
					CHECK(rc == -EBUSY || rc == -ENOENT);
			} else if (op < 95) {
				static const char *const kinds[] = {
					"pfifo limit 20", "tbf rate 2mbit burst 3000 limit 30000",
					"netem delay 2ms limit 50",
				};
				snprintf(cmd, sizeof(cmd), "qdisc replace dev eth0 parent 1:1%x handle 1%x: %s",
					 c, c, kinds[rnd() % 3]);
				pw_tc(L.rt, cmd, 0, NULL, 0, err, sizeof(err));
				/* under a tbf leaf: a netem child (peeked by tbf
				 * through the stash) */
				snprintf(cmd, sizeof(cmd),
					 "qdisc replace dev eth0 parent 1%x:1 handle 2%x: netem delay 1ms", c,
					 c);
				if (rnd() % 2)
					pw_tc(L.rt, cmd, 0, NULL, 0, err, sizeof(err));
			} else if (op < 98) {
				snprintf(cmd, sizeof(cmd), "qdisc del dev eth0 parent 1:1%x", c);
				pw_tc(L.rt, cmd, 0, NULL, 0, err, sizeof(err));
			} else {
				snprintf(cmd, sizeof(cmd), "class change dev eth0 classid 1:1 htb "
							   "rate %ukbit ceil 9mbit",
					 500 + (unsigned)(rnd() % 8000));
				tc_ok(L.rt, cmd);
			}
			check_backlog(dev);
		}
		pw_sim_advance(L.rt, 2 * SEC);
		check_backlog(dev);
		if (seed % 2)
			tc_ok(L.rt, "qdisc del dev eth0 root");
		teardown(dev);
	}
}

/* Deleting and replacing with packets queued; a leaf turning inner. */
static void test_teardown(void)
{
	struct pw_netdev *dev = setup("default 10");
	tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:10 htb rate 1mbit burst 1600");
	for (int k = 0; k < 20; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	CHECK_EQ(L.sent, 2); /* burst + one */
	/* 1:10 gets a child: its pfifo and its 18 packets go */
	tc_ok(L.rt, "class add dev eth0 parent 1:10 classid 1:11 htb rate 1mbit");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 18);
	check_backlog(dev);
	/* unclassified now: 1:10 is inner, so direct */
	send_from(dev, 0, 1000, 0, 0, NULL);
	CHECK_EQ(L.sent, 3);
	uint64_t sent = L.sent;
	for (int k = 0; k < 10; k++)
		send_from(dev, 0, 1000, 0, 0x10011, NULL);
	char err[256];
	CHECK_EQ(pw_tc(L.rt, "class del dev eth0 classid 1:10", 0, NULL, 0, err, sizeof(err)),
		 -EBUSY);
	CHECK(!strcmp(err, "Error: HTB class in use.\n"));
	uint64_t fl = L.drop_by[PW_DROP_FLUSH];
	tc_ok(L.rt, "class del dev eth0 classid 1:11");
	/* what 1:11 had not sent was flushed with it */
	CHECK(L.sent > sent);
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH] - fl, 10 - (L.sent - sent));
	check_backlog(dev);
	/* 1:10 a leaf again with a fresh pfifo: classified there */
	for (int k = 0; k < 5; k++)
		send_from(dev, 0, 1000, 0, 0x10010, NULL);
	check_backlog(dev);
	/* a user qdisc on the leaf, then replace the root */
	tc_ok(L.rt, "qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 100");
	for (int k = 0; k < 5; k++)
		send_from(dev, 0, 1000, 0, 0x10010, NULL);
	check_backlog(dev);
	tc_ok(L.rt, "qdisc replace dev eth0 root handle 2: pfifo");
	check_backlog(dev);
	pw_sim_advance(L.rt, SEC);
	teardown(dev);
}

/* tbf with a grafted child (tbf's class 1:1 is now graftable). */
static void test_tbf_graft(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root handle 1: tbf rate 8mbit burst 2000 limit 100000");
	for (int k = 0; k < 10; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	CHECK_EQ(L.sent, 2);
	tc_ok(rt, "qdisc add dev eth0 parent 1:1 handle 10: netem delay 5ms");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 8); /* the bfifo's went */
	char out[512];
	CHECK_EQ(pw_tc(rt, "class show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "class tbf 1:1 parent 1: leaf 10: \n"));
	uint64_t t = pw_now_ns(rt);
	for (int k = 0; k < 10; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	pw_sim_advance(rt, 100 * MS);
	CHECK_EQ(L.sent, 12);
	for (unsigned i = 10; i < 20; i++)
		CHECK(L.xmit_ns[i] >= t + 5 * MS);
	/* deleting the child leaves the kernel's noop: dropped */
	tc_ok(rt, "qdisc del dev eth0 parent 1:1");
	CHECK_EQ(send_from(dev, 0, 1000, 0, 0, NULL), PW_NET_XMIT_DROP);
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/*
 * A netem leaf that loses a packet consumes it (the kernel's SUCCESS |
 * __NET_XMIT_BYPASS): the parent counts a drop and neither qlen nor
 * backlog, so nothing phantom stays queued and no watchdog keeps firing
 * for it.  Under htb (the class's drops too) and under tbf; a later packet
 * that netem keeps still goes out.
 */
static void test_netem_loss_leaf(void)
{
	for (int parent = 0; parent < 2; parent++) {
		struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
		ledger_init(rt);
		struct pw_netdev *dev;
		CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
		if (parent == 0) {
			tc_ok(rt, "qdisc add dev eth0 root handle 1: htb default 10");
			tc_ok(rt, "class add dev eth0 parent 1: classid 1:10 htb rate 1mbit");
			tc_ok(rt, "qdisc add dev eth0 parent 1:10 handle 10: netem loss 100%");
		} else {
			tc_ok(rt, "qdisc add dev eth0 root handle 1: tbf rate 1mbit burst 2000 limit 100000");
			tc_ok(rt, "qdisc add dev eth0 parent 1:1 handle 10: netem loss 100%");
		}
		for (int k = 0; k < 5; k++)
			CHECK_EQ(send_from(dev, 0, 1000, 0, 0, NULL), PW_NET_XMIT_SUCCESS);
		pw_sim_advance(rt, 100 * MS);
		CHECK_EQ(L.sent, 0);
		CHECK_EQ(L.drop_by[PW_DROP_NETEM_LOSS], 5);
		struct pw_qdisc_stats st;
		CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
		CHECK_EQ(st.qlen, 0);
		CHECK_EQ(st.backlog, 0);
		CHECK_EQ(st.drops, 5);
		if (parent == 0)
			CHECK_EQ(class_stat("1:10", "dropped "), 5);
		char out[2048];
		CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
		CHECK(strstr(out, "backlog 0b 0p") != NULL);
		CHECK(strstr(out, "5000b 5p") == NULL);
		/* keeping netem: the same path sends */
		tc_ok(rt, parent == 0 ? "qdisc change dev eth0 parent 1:10 handle 10: netem loss 0%"
				      : "qdisc change dev eth0 parent 1:1 handle 10: netem loss 0%");
		CHECK_EQ(send_from(dev, 0, 1000, 0, 0, NULL), PW_NET_XMIT_SUCCESS);
		pw_sim_advance(rt, 100 * MS);
		CHECK_EQ(L.sent, 1);
		CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
		CHECK_EQ(st.qlen, 0);
		CHECK_EQ(st.packets, 1);
		pw_netdev_destroy(dev);
		ledger_check_all_back();
		pw_runtime_destroy(rt);
	}
}

/* netem loss under htb and under tbf: a lost packet is no parent's
 * backlog (netem answers the kernel's __NET_XMIT_BYPASS; before, htb and
 * tbf counted every loss in their qlen forever: found by fuzz_relay). */
static void test_lossy_leaf(void)
{
	struct pw_netdev *dev = setup("default 10");
	tc_ok(L.rt, "class add dev eth0 parent 1: classid 1:10 htb rate 100mbit");
	tc_ok(L.rt, "qdisc add dev eth0 parent 1:10 handle 10: netem delay 1ms loss 30% seed 5");
	for (int k = 0; k < 300; k++) {
		send_from(dev, 0, 500, 0, 0, NULL);
		check_backlog(dev);
	}
	advance_to(pw_now_ns(L.rt) + 100 * MS);
	check_backlog(dev);
	long long lost = (long long)L.drop_by[PW_DROP_NETEM_LOSS];
	CHECK(lost > 30 && lost < 150);
	CHECK_EQ(L.sent + lost, 300);
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(st.qlen, 0);
	CHECK_EQ(st.drops, lost); /* the kernel's htb counts its leaf's losses too */
	teardown(dev);

	struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root handle 1: tbf rate 100mbit burst 20k limit 100000");
	tc_ok(rt, "qdisc add dev eth0 parent 1:1 handle 10: netem loss 50% seed 9");
	for (int k = 0; k < 200; k++) {
		send_from(dev, 0, 500, 0, 0, NULL);
		check_backlog(dev);
	}
	pw_sim_advance(rt, 100 * MS);
	check_backlog(dev);
	CHECK_EQ(L.sent + L.drop_by[PW_DROP_NETEM_LOSS], 200);
	teardown(dev);
}

int main(void)
{
	test_one_class_model();
	test_one_class_long();
	test_ceil_caps();
	test_sharing();
	test_random_trees();
	test_nested();
	test_classify();
	test_netem_leaf();
	test_random_ledger();
	test_teardown();
	test_tbf_graft();
	test_netem_loss_leaf();
	test_lossy_leaf();
	printf("test_htb: ok\n");
	return 0;
}
