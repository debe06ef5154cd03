/* SPDX-License-Identifier: MIT */
/*
 * The packet-scheduling layer's core on the simulated clock: devices and
 * XPS, the queue run and its quota, requeue on a busy driver, the
 * watchdog's CPU (pinned, and seed 003's pile-up of unpinned watchdogs
 * under PUSH), teardown with packets queued (delete, replace, device
 * destroy), the estimator, and the exactly-once rule in every test: each
 * packet handed to pw_dev_queue_xmit() comes back once, through xmit or
 * drop, and the ledger is checked at the end of each test.
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

/* --------------------------------------------------------------- tests */

/* A single-queue device: pfifo_fast, packets leave at once on the sending
 * CPU, in band order when queued behind a busy driver. */
static void test_pfifo_fast_inline(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	CHECK(pw_netdev_get(rt, "eth0") == dev);
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), -EEXIST);
	dev = pw_netdev_get(rt, "eth0");
	for (int i = 0; i < 10; i++)
		CHECK_EQ(send_from(dev, 1, 100, (uint32_t)i, 0, NULL), PW_NET_XMIT_SUCCESS);
	CHECK_EQ(L.sent, 10);
	for (unsigned i = 0; i < 10; i++) {
		CHECK_EQ(L.xmit_cpu[i], 1);
		CHECK_EQ(L.xmit_txq[i], 0);
		CHECK_EQ(L.order[i], i);
	}
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(st.packets, 10);
	CHECK_EQ(st.bytes, 1000);
	CHECK_EQ(st.qlen, 0);

	/* a busy driver: the packet is requeued, the queue stops until woken;
	 * packets queue meanwhile in their bands */
	L.busy_left = 1;
	unsigned a, b, c;
	send_from(dev, 0, 100, 0, 0, &a);  /* band 1, refused, requeued */
	CHECK_EQ(L.state[a], 1);
	send_from(dev, 0, 100, 0, 2, &b);  /* priority 2 -> band 2 */
	send_from(dev, 0, 100, 0, 6, &c);  /* priority 6 -> band 0 */
	CHECK_EQ(L.state[b], 1);
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0, &st), 0);
	CHECK_EQ(st.requeues, 1);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(pw_netif_wake_queue(dev, 0), 0);
	pw_cpu_exit(rt);
	pw_sim_advance(rt, 1000000); /* the NET_TX pass the wake scheduled */
	CHECK_EQ(L.order[10], a);   /* the requeued packet first */
	CHECK_EQ(L.order[11], c);   /* then band 0 */
	CHECK_EQ(L.order[12], b);   /* then band 2 */
	ledger_check_all_back();
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

/* A wake that arrives while the driver is answering BUSY is not lost: the
 * queue is rescheduled instead of stopped. */
static void test_wake_during_busy(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	L.busy_left = 1;
	L.wake_in_busy = 1;
	unsigned a;
	send_from(dev, 0, 100, 0, 0, &a);
	CHECK_EQ(L.state[a], 1); /* refused once, requeued */
	CHECK_EQ(pw_sim_advance(rt, 1000000), 0); /* NET_TX runs it: no wake needed */
	CHECK_EQ(L.state[a], 2);
	send_from(dev, 0, 100, 0, 0, NULL); /* the queue is not stopped */
	CHECK_EQ(L.sent, 2);
	ledger_check_all_back();
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

/* XPS: CPU i -> queue i mod N by default; set_xps changes it; a thread
 * that is no CPU picks by hash. */
static void test_xps(void)
{
	struct pw_runtime *rt = sim_create(4, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "mq0", 3, &drv, NULL, &dev), 0);
	for (int cpu = 0; cpu < 4; cpu++) {
		unsigned i;
		send_from(dev, cpu, 60, 7, 0, &i);
		CHECK_EQ(L.xmit_txq[i], (unsigned)cpu % 3);
		CHECK_EQ(L.xmit_cpu[i], cpu);
	}
	/* CPU 3 may use queues 1 and 2: the hash picks among them */
	uint64_t m3 = 1u << 3, none = 0;
	CHECK_EQ(pw_netdev_set_xps(dev, 0, &none, 4), 0);
	CHECK_EQ(pw_netdev_set_xps(dev, 1, &m3, 4), 0);
	CHECK_EQ(pw_netdev_set_xps(dev, 2, &m3, 4), 0);
	bool seen[3] = { false, false, false };
	for (uint32_t h = 0; h < 64; h++) {
		unsigned i;
		send_from(dev, 3, 60, h * 0x9e3779b9u, 0, &i);
		seen[L.xmit_txq[i]] = true;
	}
	CHECK(!seen[0] && seen[1] && seen[2]);
	/* CPU 0 now has no queue in its map: by hash over all queues */
	bool any[3] = { false, false, false };
	for (uint32_t h = 0; h < 64; h++) {
		unsigned i;
		send_from(dev, 0, 60, h * 0x9e3779b9u, 0, &i);
		any[L.xmit_txq[i]] = true;
	}
	CHECK(any[0] && any[1] && any[2]);
	/* not a CPU: by hash, the same hash the same queue; xmit runs there */
	unsigned i1, i2;
	send_from(dev, -1, 60, 12345, 0, &i1);
	send_from(dev, -1, 60, 12345, 0, &i2);
	CHECK_EQ(L.xmit_txq[i1], L.xmit_txq[i2]);
	CHECK_EQ(L.xmit_cpu[i1], -1);
	CHECK_EQ(pw_netdev_set_xps(dev, 3, &m3, 4), -EINVAL);
	ledger_check_all_back();
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

/* The queue run stops at the quota (64) and the rest goes out from this
 * CPU's NET_TX pass. */
static void test_quota(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root pfifo limit 1000");
	/* stop the queue, fill it, wake it: the wake runs NET_TX on CPU 1 */
	L.busy_left = 1;
	for (int i = 0; i < 200; i++)
		CHECK_EQ(send_from(dev, 1, 100, 0, 0, NULL), PW_NET_XMIT_SUCCESS);
	CHECK_EQ(L.sent, 0);
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	pw_netif_wake_queue(dev, 0);
	pw_cpu_exit(rt);
	CHECK_EQ(L.sent, 0); /* nothing inline: the wake only schedules */
	CHECK_EQ(pw_run_work(rt, 1), 1);
	CHECK_EQ(L.sent, 64);
	CHECK_EQ(pw_run_work(rt, 1), 1);
	CHECK_EQ(L.sent, 128);
	pw_sim_advance(rt, 1000);
	CHECK_EQ(L.sent, 200);
	for (unsigned i = 0; i < 200; i++) {
		CHECK_EQ(L.order[i], i);
		CHECK_EQ(L.xmit_cpu[i], 1);
	}
	/* limit: the 1001st queued packet is dropped with its reason */
	L.busy_left = 1;
	int drops = 0;
	for (int i = 0; i < 1002; i++)
		if (send_from(dev, 0, 100, 0, 0, NULL) == PW_NET_XMIT_DROP)
			drops++;
	CHECK_EQ(drops, 1); /* 1 requeued + 1000 queued, 1 dropped */
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], 1);
	pw_netdev_destroy(dev); /* the rest dropped: device destroy */
	CHECK_EQ(L.drop_by[PW_DROP_DEV_DESTROY], 1001);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* netem delay: each packet leaves exactly `delay` after it was sent, from
 * the CPU whose watchdog fired, which (pinned) is the sending CPU. */
static void test_netem_delay_pinned(void)
{
	struct pw_runtime *rt = sim_create(4, 1000, 1000000000ull, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth1", 4, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth1 root handle 1: mq");
	for (int q = 1; q <= 4; q++) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "qdisc add dev eth1 parent 1:%d netem delay %dms", q,
			 q * 2);
		tc_ok(rt, cmd);
	}
	uint64_t t0 = pw_now_ns(rt);
	unsigned idx[4][10];
	for (int k = 0; k < 10; k++) {
		for (int cpu = 0; cpu < 4; cpu++)
			send_from(dev, cpu, 1000, 0, 0, &idx[cpu][k]);
		pw_sim_advance(rt, 100000); /* 0.1 ms apart */
	}
	CHECK_EQ(L.sent, 0);
	pw_sim_advance(rt, 20000000);
	for (int cpu = 0; cpu < 4; cpu++)
		for (int k = 0; k < 10; k++) {
			unsigned i = idx[cpu][k];
			CHECK_EQ(L.state[i], 2);
			CHECK_EQ(L.xmit_txq[i], (unsigned)cpu);
			CHECK_EQ(L.xmit_cpu[i], cpu);
			CHECK_EQ(L.xmit_ns[i], t0 + (uint64_t)k * 100000 +
						   (uint64_t)(cpu + 1) * 2000000);
		}
	ledger_check_all_back();
	/* stats: mq sums its children */
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0x10000, &st), 0);
	CHECK_EQ(st.packets, 40);
	CHECK_EQ(st.bytes, 40000);
	struct pw_txq_lock_stats lk;
	CHECK_EQ(pw_netdev_txq_stats(dev, 2, &st, &lk), 0);
	CHECK_EQ(st.packets, 10);
	CHECK(lk.acquisitions >= 20);
	CHECK_EQ(lk.contended, 0); /* one thread: never contended */
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

/* A pinned hrtimer re-armed every millisecond on CPU 0: the busy CPU's
 * tick, which is what lets PUSH move other CPUs' hrtimers there (a remote
 * hrtimer may not become the target's first timer). */
static struct pw_hrtimer tick;
static uint64_t tick_count;
static enum pw_hrtimer_restart tick_fn(struct pw_hrtimer *t)
{
	tick_count++;
	pw_hrtimer_forward_now(t, 1000000);
	return PW_HRTIMER_RESTART;
}

/* Seed 003: unpinned watchdogs under PUSH with CPU 0 busy and the others
 * idle all land on CPU 0, which then does every dequeue; pinned, each
 * stays on its CPU; under PULL unpinned hrtimers stay local too. */
static void run_watchdogs(int pinned, enum pw_migration pol, int net_tx, int busy_first,
			  int rounds, int *on_cpu0, int *local)
{
	struct pw_runtime *rt = sim_create(4, 1000, 1000000000ull, 0);
	ledger_init(rt);
	CHECK_EQ(pw_set_migration(rt, pol), 0);
	CHECK_EQ(pw_net_set_watchdog_pinned(rt, pinned), 0);
	CHECK_EQ(pw_net_set_watchdog_net_tx(rt, net_tx), 0);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth1", 4, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth1 root handle 1: mq");
	for (int q = 1; q <= 4; q++) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "qdisc add dev eth1 parent 1:%d netem delay 10ms", q);
		tc_ok(rt, cmd);
	}
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	pw_hrtimer_setup(rt, &tick, tick_fn, CLOCK_MONOTONIC, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED);
	pw_hrtimer_start(&tick, 1000000, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED);
	pw_cpu_exit(rt);
	if (!busy_first)
		for (unsigned c = 1; c < 4; c++)
			CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0);
	for (int k = 0; k < rounds; k++) {
		for (int cpu = 0; cpu < 4; cpu++)
			send_from(dev, cpu, 1000, 0, 0, NULL);
		if (busy_first && k == 0) /* the first arms made busy: now idle */
			for (unsigned c = 1; c < 4; c++)
				CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0);
		pw_sim_advance(rt, 250000);
	}
	pw_sim_advance(rt, 20000000);
	*on_cpu0 = *local = 0;
	for (unsigned i = 0; i < L.n; i++) {
		CHECK_EQ(L.state[i], 2);
		if (L.xmit_cpu[i] == 0)
			(*on_cpu0)++;
		if (L.xmit_cpu[i] == (int)L.xmit_txq[i])
			(*local)++;
	}
	ledger_check_all_back();
	pw_hrtimer_cancel(&tick);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

static void run_pileup(int pinned, enum pw_migration pol, int *on_cpu0, int *local)
{
	run_watchdogs(pinned, pol, 0, 0, 20, on_cpu0, local);
}

static void test_watchdog_pileup(void)
{
	int on0, local;
	run_pileup(1, PW_MIGRATION_PUSH, &on0, &local);
	CHECK_EQ(local, 80); /* pinned: every dequeue on its own CPU */
	CHECK_EQ(on0, 20);
	run_pileup(0, PW_MIGRATION_PUSH, &on0, &local);
	CHECK_EQ(on0, 80);   /* unpinned under PUSH: all on the busy CPU */
	run_pileup(0, PW_MIGRATION_PULL, &on0, &local);
	CHECK_EQ(local, 80); /* PULL: hrtimers stay on their CPU */
	/* the per-device switch overrides the runtime's */
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "x", 1, &drv, NULL, &dev), 0);
	CHECK_EQ(pw_netdev_set_watchdog_pinned(dev, 0), 0);
	CHECK_EQ(pw_netdev_set_watchdog_pinned(dev, -1), 0);
	CHECK_EQ(pw_netdev_set_watchdog_pinned(dev, 2), -EINVAL);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

/* Seed 003 at the re-arm: each queue's CPU busy when its netem first arms
 * (the watchdog starts where it is), idle afterwards.  Run in the callback
 * (net_tx 0), the watchdog is re-armed while it runs and never moves: every
 * dequeue stays on its queue's CPU.  Raised to NET_TX as the kernel does
 * (net_tx 1), the pass re-arms it after the callback, from an idle CPU,
 * and PUSH moves it to the busy CPU 0.  run_pileup() with the first arms
 * made busy. */
static void run_rearm(int net_tx, int *on_cpu0, int *local)
{
	run_watchdogs(0, PW_MIGRATION_PUSH, net_tx, 1, 40, on_cpu0, local);
}

static void test_watchdog_net_tx(void)
{
	int on0, local;
	run_rearm(0, &on0, &local);
	printf("re-armed in the callback: %d of 160 dequeues on CPU 0, %d local\n", on0, local);
	CHECK_EQ(local, 160); /* never moved */
	run_rearm(1, &on0, &local);
	printf("re-armed from NET_TX: %d of 160 dequeues on CPU 0, %d local\n", on0, local);
	CHECK(on0 >= 40 + 3 * 30); /* queues 1-3 moved after their first packets */
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	CHECK_EQ(pw_net_set_watchdog_net_tx(rt, 2), -EINVAL);
	CHECK_EQ(pw_net_set_watchdog_net_tx(NULL, 1), -EINVAL);
	pw_runtime_destroy(rt);
}

/* Delete, replace and destroy with packets queued: all of them dropped
 * with PW_DROP_FLUSH / PW_DROP_DEV_DESTROY, none lost, none sent after. */
static void test_teardown_with_packets(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 2, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root handle 1: mq");
	tc_ok(rt, "qdisc add dev eth0 parent 1:1 handle 10: netem delay 50ms");
	tc_ok(rt, "qdisc add dev eth0 parent 1:2 handle 20: netem delay 50ms");
	for (int i = 0; i < 30; i++)
		send_from(dev, i % 2, 100, 0, 0, NULL);
	/* replace the child of 1:1: its 15 packets are flushed */
	tc_ok(rt, "qdisc replace dev eth0 parent 1:1 handle 11: pfifo");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 15);
	/* delete 1:2's: its 15 flushed, the queue then drops (noop) */
	tc_ok(rt, "qdisc del dev eth0 parent 1:2");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 30);
	CHECK_EQ(send_from(dev, 1, 100, 0, 0, NULL), PW_NET_XMIT_CN);
	CHECK_EQ(L.drop_by[PW_DROP_NO_QDISC], 1);
	/* queue 0 now pfifo: inline */
	CHECK_EQ(send_from(dev, 0, 100, 0, 0, NULL), PW_NET_XMIT_SUCCESS);
	CHECK_EQ(L.sent, 1);
	pw_sim_advance(rt, 100000000);
	CHECK_EQ(L.sent, 1); /* nothing flushed came out later */
	/* root replaced: the whole mq tree goes */
	tc_ok(rt, "qdisc add dev eth0 parent 1:2 netem delay 1s");
	for (int i = 0; i < 5; i++)
		send_from(dev, 1, 100, 0, 0, NULL);
	tc_ok(rt, "qdisc replace dev eth0 root netem delay 1s");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 35);
	for (int i = 0; i < 7; i++)
		send_from(dev, i % 2, 100, 0, 0, NULL);
	/* destroy with the watchdog armed */
	pw_netdev_destroy(dev);
	CHECK_EQ(L.drop_by[PW_DROP_DEV_DESTROY], 7);
	pw_sim_advance(rt, 2000000000ull);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* The estimator: a constant source of R bytes/s converges to R (within
 * the EWMA's lag), in bytes and packets. */
static void test_estimator(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root handle 1: est 250ms 1sec pfifo");
	/* 1000 packets of 1250 bytes per second = 1.25 MB/s = 10 Mbit/s */
	for (int ms = 0; ms < 20000; ms++) {
		send_from(dev, 0, 1250, 0, 0, NULL);
		pw_sim_advance(rt, 1000000);
	}
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0x10000, &st), 0);
	CHECK(st.has_rate);
	/* each sample spans the timer's actual period: the wheel rounds a
	 * 250-jiffy timeout to its level's 8-jiffy granularity (as the
	 * kernel's does), so one sample is within 242..258 ms of traffic, and
	 * with ewma_log 2 the average leans on the last few samples */
	CHECK(st.bps > 1250000 * 96 / 100 && st.bps < 1250000 * 104 / 100);
	CHECK(st.pps >= 960 && st.pps <= 1040);
	char out[4096];
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
	char want[64];
	snprintf(want, sizeof(want), "pps backlog 0b 0p requeues 0\n");
	char pps[32];
	snprintf(pps, sizeof(pps), " %llupps ", (unsigned long long)st.pps);
	if (!strstr(out, want) || !strstr(out, pps) || !strstr(out, " rate ")) {
		fprintf(stderr, "%s", out);
		CHECK(0);
	}
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* The EWMA arithmetic, bit-exact against a direct computation: random
 * bursts, one per jiffy; a fire is seen as a change of the reading (with
 * random burst sizes the chance that both averages stay put is nil), and
 * the model folds in the bytes and packets sent since the previous fire:
 * avg += (sample << (10 - intvl_log) >> ewma_log) - (avg >> ewma_log), u64,
 * read as avg >> 8.  est 250ms 1sec: intvl_log 0, ewma_log 2. */
static void test_estimator_exact(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	tc_ok(rt, "qdisc add dev eth0 root handle 1: est 250ms 1sec pfifo limit 100000");
	uint64_t avg_b = 0, avg_p = 0, bytes = 0, pkts = 0, last_b = 0, last_p = 0;
	uint64_t seen_b = 0, seen_p = 0;
	uint32_t x = 12345;
	unsigned fires = 0;
	for (int ms = 0; ms < 30000; ms++) {
		CHECK_EQ(pw_sim_advance(rt, 1000000), 0);
		struct pw_qdisc_stats st;
		CHECK_EQ(pw_netdev_qdisc_stats(dev, 0x10000, &st), 0);
		if (st.bps != seen_b || st.pps != seen_p) {
			uint64_t sb = (bytes - last_b) << 10, sp = (pkts - last_p) << 10;
			avg_b += (sb >> 2) - (avg_b >> 2);
			avg_p += (sp >> 2) - (avg_p >> 2);
			last_b = bytes, last_p = pkts;
			CHECK_EQ(st.bps, avg_b >> 8);
			CHECK_EQ(st.pps, avg_p >> 8);
			seen_b = st.bps, seen_p = st.pps;
			fires++;
		}
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		unsigned n = x % 4;
		for (unsigned k = 0; k < n; k++) {
			uint32_t len = 64 + (x >> 8) % 1400;
			send_from(dev, 0, len, 0, 0, NULL);
			bytes += len;
			pkts++;
		}
		if (L.n > MAXPKT - 8)
			break;
	}
	CHECK(fires >= 110); /* ~120 periods in 30 s */
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* Bad arguments get errors, never crashes. */
static void test_bad_args(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	struct pw_netdev_ops noxmit = { .drop = drv_drop };
	CHECK_EQ(pw_netdev_create(rt, "a", 1, &noxmit, NULL, &dev), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "", 1, &drv, NULL, &dev), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "0123456789abcdef", 1, &drv, NULL, &dev), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "a", 0, &drv, NULL, &dev), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "a", PW_MAX_TXQ + 1, &drv, NULL, &dev), -EINVAL);
	CHECK_EQ(pw_netdev_create(NULL, "a", 1, &drv, NULL, &dev), -EINVAL);
	CHECK_EQ(pw_dev_queue_xmit(NULL, NULL), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "a", 1, &drv, NULL, &dev), 0);
	CHECK_EQ(pw_dev_queue_xmit(dev, NULL), -EINVAL);
	CHECK_EQ(pw_netif_wake_queue(dev, 1), -EINVAL);
	CHECK_EQ(pw_netdev_set_txqueuelen(dev, 5), 0);
	char err[512];
	CHECK_EQ(pw_tc(rt, "qdisc add dev b root pfifo", 0, NULL, 0, err, sizeof(err)), -ENODEV);
	CHECK(!strcmp(err, "Cannot find device \"b\"\n"));
	CHECK_EQ(pw_tc(NULL, "qdisc show", 0, NULL, 0, NULL, 0), -EINVAL);
	CHECK_EQ(pw_tc(rt, "qdisc add dev a root mq", 0, NULL, 0, err, sizeof(err)),
		 -EOPNOTSUPP);
	CHECK(!strcmp(err, "RTNETLINK answers: Operation not supported\n"));
	/* pfifo default limit follows txqueuelen */
	tc_ok(rt, "qdisc add dev a root pfifo");
	char out[512];
	CHECK_EQ(pw_tc(rt, "qdisc show dev a", 0, out, sizeof(out), NULL, 0), 0);
	/* the failed mq took 8001: as the kernel's counter moves on failure */
	if (strcmp(out, "qdisc pfifo 8002: root refcnt 2 limit 5p\n")) {
		fprintf(stderr, "%s", out);
		CHECK(0);
	}
	/* a too-small output buffer */
	CHECK_EQ(pw_tc(rt, "qdisc show dev a", 0, out, 8, NULL, 0), -ENOSPC);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

int main(void)
{
	RUN(test_pfifo_fast_inline);
	RUN(test_wake_during_busy);
	RUN(test_xps);
	RUN(test_quota);
	RUN(test_netem_delay_pinned);
	RUN(test_watchdog_pileup);
	RUN(test_watchdog_net_tx);
	RUN(test_teardown_with_packets);
	RUN(test_estimator);
	RUN(test_estimator_exact);
	RUN(test_bad_args);
	free(L.pkts);
	free(L.state);
	return 0;
}
