/* SPDX-License-Identifier: MIT */
/*
 * Accuracy you can see (src/net/accuracy.c, src/net/tc/tc_accuracy.c), on
 * the simulated clock, exact: netem delay 10ms without jitter puts every
 * sojourn in the 10 ms bucket with zero lateness; a backlogged tbf's
 * judged windows carry exactly its rate; netem loss 10% over 10,000
 * packets with a seed counts exactly the drops the driver saw, with a
 * Wilson interval around 10%; a watchdog fired late (the clock moved past
 * it in one step) shows as lateness and fails the check; children (tbf
 * over netem, mq of netems) have their own figures; off, nothing is
 * stamped or allocated and tc's plain output is unchanged.
 * Threads: one (main).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/time/internal.h" /* pw__sim_set(): a clock step past a timer */
#include "accuracy.h"
#include "check.h"
#include "sim.h"

#define NPKT 12000
static struct pw_pkt pkts[NPKT];
static unsigned sent, dropped, lost_seen;

static int xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)p, (void)ctx;
	sent++;
	return PW_NETDEV_TX_OK;
}

static void drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)p, (void)ctx;
	dropped++;
	if (r == PW_DROP_NETEM_LOSS)
		lost_seen++;
}

static const struct pw_netdev_ops ops = { .xmit = xmit, .drop = drop };

static struct pw_runtime *rt;

static struct pw_netdev *setup(unsigned ntxq, const char *const *cmds, bool acc)
{
	rt = sim_create(2, 1000, 0, 0);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", ntxq, &ops, NULL, &dev), 0);
	char err[512];
	for (; cmds && *cmds; cmds++) {
		int rc = pw_tc(rt, *cmds, 0, NULL, 0, err, sizeof(err));
		if (rc)
			fprintf(stderr, "%s: %s\n", *cmds, err);
		CHECK_EQ(rc, 0);
	}
	if (acc)
		CHECK_EQ(pw_netdev_accuracy_enable(dev, 1), 0);
	sent = dropped = lost_seen = 0;
	return dev;
}

static void teardown(struct pw_netdev *dev)
{
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
	rt = NULL;
}

static void send(struct pw_netdev *dev, unsigned i, uint32_t len)
{
	CHECK(i < NPKT);
	pw_pkt_init(&pkts[i], NULL, len);
	pkts[i].hash = i * 2654435761u;
	pw_dev_queue_xmit(dev, &pkts[i]);
}

static char out[1 << 16];

static void show(const char *cmd, unsigned flags)
{
	char err[512];
	int rc = pw_tc(rt, cmd, flags, out, sizeof(out), err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s: %s\n", cmd, err);
	CHECK_EQ(rc, 0);
}

/* netem delay 10ms, no jitter: every sojourn in the 10 ms bucket, exactly
 * 10 ms, no lateness, the check passes. */
static void test_netem_delay_exact(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root netem delay 10ms limit 10000", NULL };
	struct pw_netdev *dev = setup(1, cmds, true);
	for (unsigned i = 0; i < 1000; i++) {
		send(dev, i, 1000);
		pw_sim_advance(rt, 1000000); /* one a ms */
	}
	pw_sim_advance(rt, 20000000);
	CHECK_EQ(sent, 1000);

	struct pw__acc *s = malloc(sizeof(*s));
	CHECK(s);
	CHECK_EQ(pw__acc_snapshot(dev->qdisc, s), 0);
	CHECK_EQ(s->sojourn.n, 1000);
	CHECK_EQ(s->sojourn.b[pw__acc_bucket(10000000)], 1000);
	CHECK_EQ(s->sojourn.min, 10000000);
	CHECK_EQ(s->sojourn.max, 10000000);
	CHECK_EQ(s->late.n, 1000); /* one fire a packet: each alone */
	CHECK_EQ(s->late.max, 0);
	free(s);

	struct pw_qdisc_accuracy a;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.released, 1000);
	for (int i = 0; i < PW_ACC_NQ; i++) {
		CHECK_EQ(a.sojourn_ns[i], 10000000);
		CHECK_EQ(a.cfg_sojourn_ns[i], 10000000);
	}
	CHECK_EQ(a.late_max_ns, 0);
	CHECK_EQ(a.offered, 1000);
	CHECK_EQ(a.lost, 0);
	CHECK_EQ(a.judged, PW_ACC_SOJOURN | PW_ACC_LOSS | PW_ACC_LATENESS);
	CHECK_EQ(a.failed, 0);
	CHECK_EQ(a.verdict, PW_ACC_PASS);
	CHECK_EQ(pw_netdev_accuracy_check(dev, NULL, 0), PW_ACC_PASS);

	show("qdisc show dev eth0", PW_TC_ACCURACY);
	CHECK(strstr(out, " accuracy over 1.02s: 1000 released, check pass\n"));
	CHECK(strstr(out, "  sojourn min 10ms p10 10ms p50 10ms p90 10ms p99 10ms p99.9 10ms max 10ms\n"));
	CHECK(strstr(out, "  configured p10 10ms p50 10ms"));
	CHECK(strstr(out, "  lateness p50 0ns p99 0ns max 0ns over 1000 fires\n"));
	CHECK(!strstr(out, "histogram"));
	show("qdisc show dev eth0", PW_TC_ACCURACY | PW_TC_DETAILS);
	CHECK(strstr(out, "  histogram 9.96ms:1000\n"));
	show("qdisc show dev eth0", PW_TC_ACCURACY | PW_TC_JSON);
	CHECK(strstr(out, "\"accuracy\":{\"since_ns\":0,"));
	/* the one bucket that holds 10 ms: [9961472, 9961472 + 131072) */
	CHECK(strstr(out, "\"sojourn_buckets\":[[9961472,131072,1000]],"));
	CHECK(strstr(out, "\"check\":{\"verdict\":\"pass\",\"judged\":[\"sojourn\",\"loss\",\"lateness\"],\"failed\":[],\"why\":\"\"}"));
	teardown(dev);
}

/* The uniform jitter's configured quantiles, and a normal table's against
 * what 10,000 packets achieve on a punctual clock. */
static void test_netem_jitter(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root netem delay 10ms 2ms limit 20000", NULL };
	struct pw_netdev *dev = setup(1, cmds, true);
	struct pw_qdisc_accuracy a;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	/* r uniform in [0, 4e6): the ceil(p n)-th value */
	CHECK_EQ(a.cfg_sojourn_ns[0], 8000000 + 400000 - 1);
	CHECK_EQ(a.cfg_sojourn_ns[1], 8000000 + 2000000 - 1);
	CHECK_EQ(a.cfg_sojourn_ns[3], 8000000 + 3960000 - 1);
	CHECK_EQ(a.verdict, PW_ACC_NOT_JUDGED);
	teardown(dev);

	const char *cmds2[] = {
		"qdisc add dev eth0 root netem delay 20ms 5ms distribution normal limit 20000",
		NULL
	};
	dev = setup(1, cmds2, true);
	for (unsigned i = 0; i < 10000; i++) {
		send(dev, i, 100);
		if (i % 10 == 9)
			pw_sim_advance(rt, 1000000);
	}
	pw_sim_advance(rt, 100000000);
	CHECK_EQ(sent, 10000);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.released, 10000);
	CHECK(a.cfg_sojourn_ns[1] > 19900000 && a.cfg_sojourn_ns[1] < 20100000);
	CHECK(a.cfg_sojourn_ns[0] < a.cfg_sojourn_ns[1] && a.cfg_sojourn_ns[1] < a.cfg_sojourn_ns[2]);
	for (int i = 0; i < 4; i++) { /* p10..p99: within the 5% tolerance */
		uint64_t w = a.cfg_sojourn_ns[i], g = a.sojourn_ns[i];
		CHECK((g > w ? g - w : w - g) <= w / 20);
	}
	CHECK_EQ(a.late_max_ns, 0);
	CHECK_EQ(a.verdict, PW_ACC_PASS);
	teardown(dev);
}

/* tbf rate 8mbit (1e6 B/s), burst 10kb, backlogged from 0: 10 packets at
 * once, then one at every x.76 ms; every judged window holds exactly 100
 * packets. */
static void test_tbf_rate(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root tbf rate 8mbit burst 10kb limit 2mb", NULL };
	struct pw_netdev *dev = setup(1, cmds, true);
	for (unsigned i = 0; i < 1500; i++)
		send(dev, i, 1000);
	pw_sim_advance(rt, 1000000000);
	CHECK_EQ(sent, 10 + 1000);
	struct pw_qdisc_accuracy a;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.windows, 8); /* [100, 200) .. [800, 900) ms; [0, 100) holds the burst */
	CHECK_EQ(a.rate_mean, 1000000);
	CHECK_EQ(a.rate_min, 1000000);
	CHECK_EQ(a.rate_max, 1000000);
	CHECK_EQ(a.cfg_rate, 1000000);
	CHECK(a.judged & PW_ACC_RATE);
	CHECK_EQ(a.failed, 0);
	CHECK_EQ(a.verdict, PW_ACC_PASS);
	/* the backlog drains: windows with an idle part are not judged */
	pw_sim_advance(rt, 2000000000);
	CHECK_EQ(sent, 1500);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.windows, 13); /* [100, 1400) ms: the 1490th packet leaves at 1479.76 */
	CHECK_EQ(a.rate_min, 1000000);
	CHECK_EQ(a.rate_max, 1000000);
	show("qdisc show dev eth0", PW_TC_ACCURACY);
	CHECK(strstr(out, "  rate 8Mbit min 8Mbit max 8Mbit over 13 windows of 100ms, configured 8Mbit\n"));
	teardown(dev);
}

/* netem delay 500ms rate 8mbit, 1500 packets at 0: nothing leaves for
 * 500 ms (a delay line, not a rate: not judged), then one a ms. */
static void test_netem_rate(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root netem delay 500ms rate 8mbit limit 10000",
			       NULL };
	struct pw_netdev *dev = setup(1, cmds, true);
	for (unsigned i = 0; i < 1500; i++)
		send(dev, i, 1000);
	pw_sim_advance(rt, 1500000000);
	struct pw_qdisc_accuracy a;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.released, 1000); /* at 501, 502, ... 1500 ms */
	CHECK_EQ(a.windows, 9);    /* [600, 700) .. [1400, 1500) ms (closed at 1500) */
	CHECK_EQ(a.rate_min, 1000000);
	CHECK_EQ(a.rate_max, 1000000);
	CHECK_EQ(a.cfg_rate, 1000000);
	CHECK(a.judged & PW_ACC_RATE);
	CHECK(!(a.judged & PW_ACC_SOJOURN)); /* rate queues: not netem's draw */
	CHECK_EQ(a.verdict, PW_ACC_PASS);
	teardown(dev);
}

/* loss 10% over 10,000 packets, seeded: the count the driver saw, and a
 * Wilson interval that holds 10%. */
static void test_loss(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root netem loss 10% seed 7", NULL };
	struct pw_netdev *dev = setup(1, cmds, true);
	for (unsigned i = 0; i < 10000; i++)
		send(dev, i, 100);
	pw_sim_advance(rt, 1000000);
	CHECK_EQ(sent + dropped, 10000);
	CHECK_EQ(dropped, lost_seen);
	struct pw_qdisc_accuracy a;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.offered, 10000);
	CHECK_EQ(a.lost, lost_seen);
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(a.lost, st.drops);
	CHECK(a.cfg_loss > 0.0999 && a.cfg_loss < 0.1001);
	CHECK(a.loss_lo < 0.1 && a.loss_hi > 0.1);
	CHECK(a.loss_lo < a.loss && a.loss < a.loss_hi);
	CHECK(a.judged & PW_ACC_LOSS);
	CHECK_EQ(a.verdict, PW_ACC_PASS);
	printf("# loss: %u of 10000, 95%% [%.4f, %.4f]\n", lost_seen, a.loss_lo, a.loss_hi);
	teardown(dev);

	/* a loss far from the configured fails: 50% asked, the achieved read
	 * against a qdisc changed to 10% after the fact */
	const char *cmds2[] = { "qdisc add dev eth0 root netem loss 50% seed 7", NULL };
	dev = setup(1, cmds2, true);
	for (unsigned i = 0; i < 1000; i++)
		send(dev, i, 100);
	CHECK_EQ(pw_tc(rt, "qdisc change dev eth0 root netem loss 10%", 0, NULL, 0, NULL, 0), 0);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK(a.failed & PW_ACC_LOSS);
	CHECK_EQ(a.verdict, PW_ACC_FAIL);
	teardown(dev);
}

/* The clock steps past the watchdog in one go: 50 ms of lateness, a 60 ms
 * sojourn, and the check fails. */
static void test_late_timer(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root netem delay 10ms", NULL };
	struct pw_netdev *dev = setup(1, cmds, true);
	send(dev, 0, 1000);
	CHECK_EQ(sent, 0);
	pw__sim_set(rt, 60000000); /* the host was away: no timer ran */
	CHECK_EQ(pw_sim_advance(rt, 0), 0);
	CHECK_EQ(sent, 1);
	struct pw_qdisc_accuracy a;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.fires, 1);
	CHECK_EQ(a.late_max_ns, 50000000);
	CHECK_EQ(a.late_p99_ns, 50000000);
	CHECK_EQ(a.sojourn_max_ns, 60000000);
	CHECK_EQ(a.failed, PW_ACC_LATENESS);
	CHECK_EQ(a.verdict, PW_ACC_FAIL);
	char why[512];
	CHECK_EQ(pw_netdev_accuracy_check(dev, why, sizeof(why)), PW_ACC_FAIL);
	CHECK(!strcmp(why, "netem 8001: watchdog lateness p99 50ms > 1ms"));
	show("qdisc show dev eth0", PW_TC_ACCURACY);
	CHECK(strstr(out, "check fail (watchdog lateness p99 50ms > 1ms)"));
	/* enabling again starts the counts again */
	CHECK_EQ(pw_netdev_accuracy_enable(dev, 1), 0);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.fires, 0);
	CHECK_EQ(a.since_ns, 60000000);
	CHECK_EQ(a.verdict, PW_ACC_NOT_JUDGED);
	teardown(dev);
}

/* tbf over netem: each has its own figures; the netem child's loss is
 * its own; mq of netems: the sum. */
static void test_children(void)
{
	const char *cmds[] = {
		"qdisc add dev eth0 root handle 1: tbf rate 8mbit burst 10kb limit 2mb",
		"qdisc add dev eth0 parent 1:1 handle 10: netem delay 5ms loss 10% seed 3 limit 5000",
		NULL
	};
	struct pw_netdev *dev = setup(1, cmds, true);
	for (unsigned i = 0; i < 1000; i++)
		send(dev, i, 1000);
	pw_sim_advance(rt, 2000000000);
	CHECK_EQ(sent + dropped, 1000);
	struct pw_qdisc_accuracy root, child;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &root), 0);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0x100000, &child), 0);
	CHECK(!strcmp(root.kind, "tbf") && !strcmp(child.kind, "netem"));
	CHECK_EQ(child.offered, 1000);
	CHECK_EQ(child.lost, lost_seen);
	CHECK_EQ(root.lost, 0);
	CHECK_EQ(child.released, sent);
	CHECK_EQ(root.released, sent);
	CHECK_EQ(child.sojourn_min_ns, 5000000);
	/* a child releases when its parent takes the packet: tbf's wait is
	 * in both, netem's 5 ms is the least of both */
	CHECK_EQ(root.sojourn_max_ns, child.sojourn_max_ns);
	CHECK_EQ(root.sojourn_min_ns, 5000000);
	CHECK(child.sojourn_max_ns > 5000000);
	show("qdisc show dev eth0", PW_TC_ACCURACY);
	CHECK(strstr(out, "qdisc netem 10: parent 1:1"));
	teardown(dev);

	/* mq with a netem per queue: mq shows the sum of its children */
	const char *cmds2[] = {
		"qdisc add dev eth0 root handle 1: mq",
		"qdisc add dev eth0 parent 1:1 netem delay 1ms",
		"qdisc add dev eth0 parent 1:2 netem delay 2ms",
		NULL
	};
	dev = setup(2, cmds2, true);
	for (unsigned i = 0; i < 400; i++)
		send(dev, i, 100);
	pw_sim_advance(rt, 10000000);
	CHECK_EQ(sent, 400);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &root), 0);
	CHECK(!strcmp(root.kind, "mq"));
	CHECK_EQ(root.released, 400);
	CHECK_EQ(root.sojourn_min_ns, 1000000);
	CHECK_EQ(root.sojourn_max_ns, 2000000);
	CHECK_EQ(pw_netdev_accuracy_check(dev, NULL, 0), PW_ACC_PASS);
	teardown(dev);
}

/* A qdisc a later command creates counts too; replacing it frees the old
 * state (ASan: no leak). */
static void test_later_qdisc(void)
{
	struct pw_netdev *dev = setup(1, NULL, true);
	CHECK(dev->qdisc->acc); /* the default pfifo_fast */
	CHECK_EQ(pw_tc(rt, "qdisc replace dev eth0 root netem delay 3ms", 0, NULL, 0, NULL, 0), 0);
	CHECK(dev->qdisc->acc);
	send(dev, 0, 100);
	pw_sim_advance(rt, 5000000);
	struct pw_qdisc_accuracy a;
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), 0);
	CHECK_EQ(a.released, 1);
	CHECK_EQ(a.sojourn_max_ns, 3000000);
	CHECK_EQ(pw_netdev_accuracy_enable(dev, 0), 0);
	CHECK(!dev->qdisc->acc);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0, &a), -ENOENT);
	CHECK_EQ(pw_netdev_accuracy_check(dev, NULL, 0), -ENOENT);
	show("qdisc show dev eth0", PW_TC_ACCURACY);
	CHECK(strstr(out, " accuracy off\n"));
	CHECK_EQ(pw_netdev_accuracy_enable(NULL, 1), -EINVAL);
	CHECK_EQ(pw_netdev_accuracy_enable(dev, 2), -EINVAL);
	CHECK_EQ(pw_netdev_accuracy_read(dev, 0x50000, &a), -ENOENT);
	teardown(dev);
}

/* Off: no state, no stamp; and tc's own output is the same whether it is
 * on or off (only the flag adds lines). */
static void test_off(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root handle 1: tbf rate 8mbit burst 10kb limit 2mb",
			       "qdisc add dev eth0 parent 1:1 handle 10: netem delay 5ms", NULL };
	static char plain_off[sizeof(out)], plain_on[sizeof(out)];
	for (int on = 0; on <= 1; on++) {
		struct pw_netdev *dev = setup(1, cmds, on);
		for (unsigned i = 0; i < 100; i++)
			send(dev, i, 1000);
		pw_sim_advance(rt, 1000000000);
		CHECK_EQ(sent, 100);
		for (unsigned i = 0; i < 100; i++)
			CHECK_EQ(pkts[i].pw_acc_ns != 0, on);
		CHECK_EQ(dev->qdisc->acc != NULL, on);
		show("qdisc show dev eth0", PW_TC_STATS | PW_TC_DETAILS);
		snprintf(on ? plain_on : plain_off, sizeof(plain_on), "%s", out);
		show("qdisc show dev eth0", PW_TC_STATS | PW_TC_JSON);
		CHECK_EQ(strstr(out, "accuracy") != NULL, 0);
		teardown(dev);
	}
	CHECK(!strcmp(plain_on, plain_off));
}

/* The histogram's buckets: contiguous, each value in its own. */
static void test_buckets(void)
{
	uint64_t next = 0;
	for (unsigned i = 0; i < PW__ACC_NBUCKETS; i++) {
		uint64_t lo, w;
		pw__acc_bucket_range(i, &lo, &w);
		CHECK_EQ(lo, next);
		CHECK_EQ(pw__acc_bucket(lo), i);
		CHECK_EQ(pw__acc_bucket(lo + (w - 1)), i);
		CHECK(w == 1 || lo / w >= PW__ACC_SUB); /* at most 1/64 wide */
		next = lo + w;
	}
	CHECK_EQ(next, 0); /* wrapped: every uint64_t is covered */
	CHECK_EQ(pw__acc_bucket(UINT64_MAX), PW__ACC_NBUCKETS - 1);
	/* values of every magnitude, each in the bucket whose range holds it */
	uint64_t x = 88172645463325252ull;
	for (unsigned i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t v = x >> (i % 64), lo, w;
		unsigned b = (unsigned)pw__acc_bucket(v);
		CHECK(b < PW__ACC_NBUCKETS);
		pw__acc_bucket_range(b, &lo, &w);
		CHECK(v >= lo && v - lo < w);
	}
}

/* The simulated clock at 0: the root lock's cached reading is 0 ("not
 * read"), so releases take the slow path, which reads it: every packet
 * still counts, at sojourn 0. */
static void test_time_zero(void)
{
	const char *cmds[] = { "qdisc add dev eth0 root pfifo limit 100", NULL };
	struct pw_netdev *dev = setup(1, cmds, true);
	for (unsigned i = 0; i < 5; i++)
		send(dev, i, 100);
	pw_sim_advance(rt, 1000000);
	for (unsigned i = 5; i < 10; i++)
		send(dev, i, 100);
	CHECK_EQ(sent, 10);
	struct pw__acc *s = malloc(sizeof(*s));
	CHECK(s);
	CHECK_EQ(pw__acc_snapshot(dev->qdisc, s), 0);
	CHECK_EQ(s->sojourn.n, 10);
	CHECK_EQ(s->sojourn.b[0], 10);
	CHECK_EQ(s->sojourn.min, 0);
	CHECK_EQ(s->sojourn.max, 0);
	CHECK_EQ(s->sojourn.sum, 0);
	CHECK_EQ(s->offered, 10);
	free(s);
	teardown(dev);
}

/* ------------------------------------------------------------- bench */

/*
 * `test_accuracy bench [PACKETS]` (not run by ctest: a timing): the cost
 * of accuracy on, per packet, as a ratio to off in the same run.  One
 * thread on the simulated clock, netem `delay 10ms` with 5e4 packets in
 * flight, 32 sent per clock step (pinwheel-bench net's configuration 2
 * with --batch 32): each packet's enqueue, watchdog and release, the
 * clock's event loop included, in the thread's CPU time.  Nine pairs of
 * runs (off then on, on then off, alternating); medians, and the median
 * of the pairs' ratios with their range.
 */
static struct pw_pkt **bfree;
static unsigned bnfree;

static int bxmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)ctx;
	bfree[bnfree++] = p;
	return PW_NETDEV_TX_OK;
}

static void bdrop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)r, (void)ctx;
	bfree[bnfree++] = p;
}

static const struct pw_netdev_ops bops = { .xmit = bxmit, .drop = bdrop };

/* This thread's CPU time: other jobs on the machine do not count in it
 * (their cache pollution still does). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double bench_run(int on, unsigned npk, unsigned inflight, struct pw_pkt *pool)
{
	const unsigned batch = 32;
	struct pw_runtime *brt = sim_create(1, 1000, 0, 0);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(brt, "eth0", 1, &bops, NULL, &dev), 0);
	CHECK_EQ(pw_tc(brt, "qdisc add dev eth0 root netem delay 10ms limit 200000", 0, NULL, 0,
		       NULL, 0), 0);
	if (on)
		CHECK_EQ(pw_netdev_accuracy_enable(dev, 1), 0);
	bnfree = 0;
	for (unsigned i = 0; i < inflight; i++)
		bfree[bnfree++] = &pool[i];
	uint64_t step = 10000000ull * batch / inflight; /* inflight per 10 ms */
	unsigned done = 0;
	uint64_t t0 = cpu_ns();
	while (done < npk) {
		for (unsigned b = 0; b < batch && bnfree && done < npk; b++, done++) {
			struct pw_pkt *p = bfree[--bnfree];
			pw_pkt_init(p, NULL, 1000);
			p->hash = done;
			pw_dev_queue_xmit(dev, p);
		}
		pw_sim_advance(brt, step);
	}
	while (bnfree < inflight) /* every packet released */
		pw_sim_advance(brt, step);
	uint64_t t1 = cpu_ns();
	pw_netdev_destroy(dev);
	pw_runtime_destroy(brt);
	return (double)(t1 - t0) / npk;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int bench(unsigned npk, int only)
{
	const unsigned inflight = 50000, reps = 9;
	struct pw_pkt *pool = calloc(inflight, sizeof(*pool));
	bfree = calloc(inflight, sizeof(*bfree));
	CHECK(pool && bfree);
	double off[9], on[9], ratio[9];
	for (unsigned r = 0; r < reps; r++) { /* in pairs, the order alternating */
		if (r & 1)
			on[r] = only == 0 ? 0 : bench_run(1, npk, inflight, pool);
		off[r] = only == 1 ? 0 : bench_run(0, npk, inflight, pool);
		if (!(r & 1))
			on[r] = only == 0 ? 0 : bench_run(1, npk, inflight, pool);
		ratio[r] = off[r] > 0 ? on[r] / off[r] : 0;
	}
	qsort(off, reps, sizeof(double), cmp_d);
	qsort(on, reps, sizeof(double), cmp_d);
	qsort(ratio, reps, sizeof(double), cmp_d);
	printf("# test_accuracy bench %u: netem delay 10ms, %u in flight, 32 per clock step, "
	       "simulated clock, %u pairs of runs (off, on)\n", npk, inflight, reps);
	printf("off %.1f ns/pkt, on %.1f ns/pkt (medians), on/off of the medians %.3f, "
	       "median of the pairs' ratios %.3f [%.3f .. %.3f]\n", off[reps / 2], on[reps / 2],
	       on[reps / 2] / off[reps / 2], ratio[reps / 2], ratio[0], ratio[reps - 1]);
	free(pool);
	free(bfree);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench(argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1000000,
			     argc > 3 ? !strcmp(argv[3], "on") : -1); /* "on"/"off": one side */
	RUN(test_buckets);
	RUN(test_time_zero);
	RUN(test_netem_delay_exact);
	RUN(test_netem_jitter);
	RUN(test_tbf_rate);
	RUN(test_netem_rate);
	RUN(test_loss);
	RUN(test_late_timer);
	RUN(test_children);
	RUN(test_later_qdisc);
	RUN(test_off);
	return 0;
}
