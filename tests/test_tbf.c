/* SPDX-License-Identifier: MIT */
/*
 * tbf on the simulated clock.  Every expectation is computed by a model of
 * the kernel's sch_tbf.c arithmetic written here from its definition
 * (psched_ratecfg_precompute's mult/shift, psched_l2t_ns with overhead,
 * mpu and ATM cells; tokens, ptokens and t_c in ns; the watchdog at now +
 * max(-toks, -ptoks)), fed the same enqueue times: each packet's send time
 * must equal the model's to the nanosecond, and so must overlimits and
 * drops.  Then: the long-run rate (bytes sent by T == burst + rate x T to
 * the packet), the burst at start and after idle (capped at the burst),
 * the peak rate, the limit and oversize drops, and the exactly-once rule
 * through change, replace, delete and device destroy with packets queued.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"

#include "net_ledger.h"

/* ------------------------------------------------------------ the model */

struct mrate {
	uint64_t bps;
	uint32_t mult;
	uint8_t shift;
	unsigned overhead, mpu;
	bool atm;
};

static void mrate_set(struct mrate *r, uint64_t bps, unsigned overhead, unsigned mpu, bool atm)
{
	memset(r, 0, sizeof(*r));
	r->bps = bps;
	r->overhead = overhead;
	r->mpu = mpu;
	r->atm = atm;
	r->mult = 1;
	if (!bps)
		return;
	/* mult = (1e9 << shift) / rate, the largest shift keeping bit 31 clear
	 * or until the factor reaches bit 63 */
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
	uint64_t l = (uint64_t)len + r->overhead;
	if (l < r->mpu)
		l = r->mpu;
	if (r->atm)
		l = ((l + 47) / 48) * 53;
	return (int64_t)((l * r->mult) >> r->shift);
}

#define MQ 200000
struct model {
	struct mrate rate, peak;
	bool has_peak;
	int64_t buffer, mtu, tokens, ptokens, t_c;
	uint32_t limit, max_size, backlog;
	unsigned q[MQ], qh, qt;     /* packet indices */
	unsigned len[MQ];
	int64_t sent_at[MQ];        /* -1 not sent, -2 dropped */
	bool wd_armed;
	int64_t wd;
	uint64_t overlimits, drops, sent_bytes;
};

static struct model M;

/* tc ... tbf rate RATE burst BURST limit LIMIT [peakrate P mtu MTU]: what
 * the kernel keeps (tc sends TCA_TBF_BURST/PBURST in bytes) */
static void model_init(uint64_t rate_bps, uint32_t burst, uint32_t limit, uint64_t peak_bps,
		       uint32_t mtu, unsigned overhead, unsigned mpu, bool atm, int64_t now)
{
	memset(&M, 0, sizeof(M));
	mrate_set(&M.rate, rate_bps, overhead, mpu, atm);
	M.buffer = mrate_ns(&M.rate, burst);
	M.max_size = burst;
	if (peak_bps) {
		M.has_peak = true;
		mrate_set(&M.peak, peak_bps, overhead, mpu, atm);
		M.mtu = mrate_ns(&M.peak, mtu);
		if (mtu < M.max_size)
			M.max_size = mtu;
	}
	M.tokens = M.buffer;
	M.ptokens = M.mtu;
	M.t_c = now;
	M.limit = limit;
	for (unsigned i = 0; i < MQ; i++)
		M.sent_at[i] = -1;
}

static void model_run(int64_t now)
{
	int budget = 64; /* the layer's run quota: tests keep below it */
	while (M.qh != M.qt && budget-- > 0) {
		unsigned i = M.q[M.qh];
		int64_t toks = now - M.t_c;
		if (toks > M.buffer)
			toks = M.buffer;
		int64_t ptoks = 0;
		if (M.has_peak) {
			ptoks = toks + M.ptokens;
			if (ptoks > M.mtu)
				ptoks = M.mtu;
			ptoks -= mrate_ns(&M.peak, M.len[i]);
		}
		toks += M.tokens;
		if (toks > M.buffer)
			toks = M.buffer;
		toks -= mrate_ns(&M.rate, M.len[i]);
		if (toks >= 0 && ptoks >= 0) {
			M.qh++;
			M.t_c = now;
			M.tokens = toks;
			M.ptokens = ptoks;
			M.backlog -= M.len[i];
			M.sent_at[i] = now;
			M.sent_bytes += M.len[i];
			continue;
		}
		M.wd_armed = true;
		M.wd = now + (-toks > -ptoks ? -toks : -ptoks);
		M.overlimits++;
		break;
	}
}

/* Fire the model's watchdog up to time @t. */
static void model_advance(int64_t t)
{
	while (M.wd_armed && M.wd <= t) {
		M.wd_armed = false;
		model_run(M.wd);
	}
}

static void model_enqueue(unsigned i, unsigned len, int64_t now)
{
	model_advance(now);
	M.len[i] = len;
	if (len > M.max_size || M.backlog + len > M.limit) {
		M.sent_at[i] = -2;
		M.drops++;
		model_run(now); /* the queue runs after a drop too (__dev_xmit_skb) */
		return;
	}
	M.q[M.qt++] = i;
	M.backlog += len;
	model_run(now);
}

/* The real run matches the model: each packet sent at the model's time. */
static void check_against_model(struct pw_netdev *dev)
{
	for (unsigned i = 0; i < L.n; i++) {
		if (M.sent_at[i] == -2) {
			CHECK_EQ(L.state[i], 3);
		} else if (M.sent_at[i] == -1) {
			CHECK_EQ(L.state[i], 1);
		} else {
			if (L.state[i] != 2 || (int64_t)L.xmit_ns[i] != M.sent_at[i])
				fprintf(stderr, "packet %u: state %u at %llu, model %lld\n", i,
					L.state[i], (unsigned long long)L.xmit_ns[i],
					(long long)M.sent_at[i]);
			CHECK_EQ(L.state[i], 2);
			CHECK_EQ(L.xmit_ns[i], M.sent_at[i]);
		}
	}
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(st.overlimits, M.overlimits);
	CHECK_EQ(st.drops, M.drops);
	CHECK_EQ(st.bytes, M.sent_bytes);
	CHECK_EQ(st.backlog, M.backlog);
}

/* Send one packet at the current time through the layer and the model. */
static void send_both(struct pw_netdev *dev, unsigned len)
{
	unsigned i;
	model_enqueue(L.n, len, (int64_t)pw_now_ns(L.rt));
	send_from(dev, 0, len, 0, 0, &i);
}

/* Advance both to absolute time @t. */
static void advance_to(uint64_t t)
{
	uint64_t now = pw_now_ns(L.rt);
	if (t > now)
		pw_sim_advance(L.rt, t - now);
	model_advance((int64_t)t);
}

#define T0 1000000000ull

static struct pw_netdev *setup(const char *tbf)
{
	struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root handle 1: tbf %s", tbf);
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

/* --------------------------------------------------------------- tests */

/* A long saturated run at 8 Mbit/s (1e6 bytes/s): 30000 packets of 1000
 * bytes queued at once; by time T the bytes sent are the burst plus rate
 * x T, to the packet, and every send time is the model's. */
static void test_rate_long(void)
{
	struct pw_netdev *dev = setup("rate 8mbit burst 10k limit 40000000");
	model_init(1000000, 10240, 40000000, 0, 0, 0, 0, false, (int64_t)T0);
	const unsigned n = 30000;
	for (unsigned k = 0; k < n; k++)
		send_both(dev, 1000);
	/* the burst: 10 packets (10 x 1 ms of tokens <= 10.24 ms) at once */
	CHECK_EQ(L.sent, 10);
	for (uint64_t s = 1; s <= 31; s++) {
		advance_to(T0 + s * 1000000000ull);
		/* bytes by T = burst + rate x T, to the packet */
		uint64_t T = s * 1000000000ull;
		uint64_t expect = 10240 + T / 1000; /* 1e6 B/s: a byte per us */
		if (L.sent < n)
			CHECK_EQ(L.sent, expect / 1000); /* whole packets of 1000 */
	}
	CHECK_EQ(L.sent, n);
	check_against_model(dev);
	/* every throttled dequeue counted: one per enqueue while throttled,
	 * one per watchdog wake that sent and still had a packet waiting */
	CHECK(M.overlimits >= n - 10);
	teardown(dev);
}

/* The burst at start, and after idle the tokens refill to the burst but
 * not beyond. */
static void test_burst(void)
{
	struct pw_netdev *dev = setup("rate 1mbit burst 5000 limit 100000");
	model_init(125000, 5000, 100000, 0, 0, 0, 0, false, (int64_t)T0);
	for (int k = 0; k < 10; k++)
		send_both(dev, 1000);
	CHECK_EQ(L.sent, 5); /* 5 x 8 ms of tokens fit 40 ms */
	advance_to(T0 + 100000000ull);
	CHECK_EQ(L.sent, 10);
	check_against_model(dev);
	/* idle 10 s: tokens capped at the burst */
	advance_to(T0 + 10000000000ull);
	for (int k = 0; k < 10; k++)
		send_both(dev, 1000);
	CHECK_EQ(L.sent, 15);
	advance_to(T0 + 11000000000ull);
	CHECK_EQ(L.sent, 20);
	check_against_model(dev);
	/* packets trickling in below the rate never wait */
	uint64_t overl = M.overlimits;
	for (int k = 0; k < 20; k++) {
		advance_to(pw_now_ns(L.rt) + 10000000ull); /* 1000 B every 10 ms < 1000 B / 8 ms */
		unsigned before = (unsigned)L.sent;
		send_both(dev, 1000);
		CHECK_EQ(L.sent, before + 1);
	}
	CHECK_EQ(M.overlimits, overl);
	check_against_model(dev);
	teardown(dev);
}

/* The peak rate: the burst leaves at the peak rate, then the rate. */
static void test_peakrate(void)
{
	struct pw_netdev *dev = setup("rate 1mbit burst 20k limit 1000000 peakrate 2mbit mtu 1500");
	model_init(125000, 20480, 1000000, 250000, 1500, 0, 0, false, (int64_t)T0);
	for (int k = 0; k < 40; k++)
		send_both(dev, 1500);
	CHECK_EQ(L.sent, 1); /* the peak bucket holds one packet */
	advance_to(T0 + 2000000000ull);
	check_against_model(dev);
	/* the first gaps are the peak rate's 6 ms, the later the rate's 12 ms */
	CHECK_EQ(L.xmit_ns[L.order[1]] - L.xmit_ns[L.order[0]], 6000000);
	CHECK_EQ(L.xmit_ns[L.order[39]] - L.xmit_ns[L.order[38]], 12000000);
	advance_to(T0 + 5000000000ull);
	CHECK_EQ(L.sent, 40);
	check_against_model(dev);
	teardown(dev);
}

/* overhead, mpu and ATM cells in the token arithmetic. */
static void test_overhead_atm(void)
{
	struct pw_netdev *dev =
		setup("rate 2mbit burst 8k limit 100000 mpu 96 overhead 10 linklayer atm");
	model_init(250000, 8192, 100000, 0, 0, 10, 96, true, (int64_t)T0);
	static const unsigned lens[] = { 40, 60, 100, 500, 1000, 1500, 64, 1 };
	for (int k = 0; k < 64; k++)
		send_both(dev, lens[k % 8]);
	advance_to(T0 + 3000000000ull);
	CHECK_EQ(L.sent, 64);
	check_against_model(dev);
	teardown(dev);
}

/* The limit (the child bfifo's bytes) and max_size drops. */
static void test_limit_drops(void)
{
	struct pw_netdev *dev = setup("rate 1mbit burst 2000 limit 5000");
	model_init(125000, 2000, 5000, 0, 0, 0, 0, false, (int64_t)T0);
	for (int k = 0; k < 20; k++)
		send_both(dev, 1000);
	CHECK_EQ(L.sent, 2);
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], 13);
	send_both(dev, 2001); /* over the burst: never sendable */
	CHECK_EQ(L.drop_by[PW_DROP_OVERSIZE], 1);
	send_both(dev, 2000); /* the burst exactly: sendable, but the 5000-byte child is full */
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], 14);
	advance_to(T0 + 1000000000ull);
	check_against_model(dev);
	CHECK_EQ(L.n, L.sent + L.dropped);
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(st.drops, L.dropped);
	CHECK_EQ(st.qlen, 0);
	teardown(dev);
}

/* Exactly once through change, replace, delete and device destroy. */
static void test_teardown(void)
{
	struct pw_netdev *dev = setup("rate 1mbit burst 2000 limit 100000");
	struct pw_runtime *rt = L.rt;
	for (int k = 0; k < 50; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	CHECK_EQ(L.sent, 2);
	/* change keeps the queue; a smaller limit only refuses new packets */
	tc_ok(rt, "qdisc change dev eth0 root handle 1: tbf rate 8mbit burst 2000 limit 1000");
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(st.qlen, 48);
	CHECK_EQ(st.backlog, 48000);
	CHECK_EQ(send_from(dev, 0, 1000, 0, 0, NULL), PW_NET_XMIT_DROP);
	pw_sim_advance(rt, 10000000); /* 10 ms at 1e6 B/s: some leave */
	CHECK(L.sent > 2 && L.sent < 50);
	/* replace with packets queued: flushed once each */
	uint64_t sent = L.sent;
	tc_ok(rt, "qdisc replace dev eth0 root handle 2: tbf rate 1mbit burst 2000 limit 100000");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 50 - sent);
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], 1);
	pw_sim_advance(rt, 1000000000);
	CHECK_EQ(L.sent, sent); /* nothing flushed came out later */
	for (int k = 0; k < 30; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	CHECK_EQ(L.sent, sent + 2); /* idle 1 s: the 2000-byte burst */
	uint64_t fl = L.drop_by[PW_DROP_FLUSH];
	tc_ok(rt, "qdisc del dev eth0 root");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], fl + 28);
	pw_sim_advance(rt, 1000000000);
	/* destroyed with the watchdog armed */
	tc_ok(rt, "qdisc add dev eth0 root handle 3: tbf rate 1mbit burst 2000 latency 1s");
	for (int k = 0; k < 30; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	uint64_t dd = L.drop_by[PW_DROP_DEV_DESTROY];
	pw_netdev_destroy(dev);
	CHECK_EQ(L.drop_by[PW_DROP_DEV_DESTROY], dd + 28);
	pw_sim_advance(rt, 2000000000ull);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* tbf as each queue's root under mq, flushed by a root replace. */
static void test_under_mq(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 2, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root handle 1: mq");
	tc_ok(rt, "qdisc add dev eth0 parent 1:1 handle 10: tbf rate 8mbit burst 1000 limit 100000");
	tc_ok(rt, "qdisc add dev eth0 parent 1:2 handle 20: tbf rate 4mbit burst 1000 limit 100000");
	for (int k = 0; k < 40; k++)
		send_from(dev, k % 2, 1000, 0, 0, NULL);
	CHECK_EQ(L.sent, 2);
	pw_sim_advance(rt, 10000000); /* 10 ms: 10 more on queue 0, 5 on queue 1 */
	unsigned q0 = 0, q1 = 0;
	for (unsigned i = 0; i < L.n; i++)
		if (L.state[i] == 2)
			*(L.xmit_txq[i] ? &q1 : &q0) += 1;
	CHECK_EQ(q0, 11);
	CHECK_EQ(q1, 6);
	tc_ok(rt, "qdisc replace dev eth0 root pfifo");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 40 - 17);
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* The tc side through pw_tc(): show, class show, an error. */
static void test_tc_text(void)
{
	struct pw_netdev *dev = setup("rate 1mbit burst 10k latency 50ms");
	char out[1024], err[1024];
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "qdisc tbf 1: root refcnt 2 rate 1Mbit burst 10Kb lat 50ms \n"));
	CHECK_EQ(pw_tc(L.rt, "class show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "class tbf 1:1 parent 1: \n"));
	CHECK(pw_tc(L.rt, "qdisc change dev eth0 root tbf rate 1mbit burst 10k limit 100 "
			  "peakrate 1mbit mtu 1500", 0, NULL, 0, err, sizeof(err)) != 0);
	CHECK(!strcmp(err, "RTNETLINK answers: Invalid argument\n"));
	CHECK(pw_tc(L.rt, "qdisc change dev eth0 root tbf rate 1mbit", 0, NULL, 0, err,
		    sizeof(err)) != 0);
	CHECK(!strncmp(err, "tbf: the \"burst\" parameter is mandatory.\n", 41));
	teardown(dev);
}

int main(void)
{
	RUN(test_rate_long);
	RUN(test_burst);
	RUN(test_peakrate);
	RUN(test_overhead_atm);
	RUN(test_limit_drops);
	RUN(test_teardown);
	RUN(test_under_mq);
	RUN(test_tc_text);
	free(L.pkts);
	free(L.state);
	return 0;
}
