/* SPDX-License-Identifier: MIT */
/*
 * The packet-scheduling layer under real threads (run it under TSan):
 * workers serving every CPU, packets sent from the workers (through work
 * items: the CPU's own context, so XPS picks its queue) and from threads
 * that are no CPU (by hash), through an mq device with a netem child per
 * queue whose watchdogs fire on the workers, while a tc thread changes
 * the children's options, replaces a child and, at the end, the device is
 * destroyed with packets queued and watchdogs armed.
 *
 * Properties, never timings: every packet comes back exactly once (xmit
 * or drop: a per-packet state moved 1 -> 2/3 by compare-and-swap, so a
 * second return is caught at once), xmit is never called for a packet
 * before its netem delay has passed since it was sent (delays only grow
 * during the run), and at most one thread runs a queue's xmit at a time
 * (the running mark).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "now.h"

#define NCPU 2
#define NTXQ 4
#define EXT_THREADS 2
#define PER_SENDER 20000
#define WORK_ROUNDS 200
#define WORK_BURST 50
#define NPKT (EXT_THREADS * PER_SENDER + NCPU * WORK_ROUNDS * WORK_BURST + 500)
#define MIN_DELAY_NS 200000ull /* every netem delay is at least this */

static struct pw_runtime *rt;
static struct pw_netdev *dev;
static struct pw_pkt *pkts;
static uint64_t *sent_at;
static uint8_t *state; /* atomic: 0 unused, 1 in the layer, 2 sent, 3 dropped */
static uint64_t n_sent, n_dropped, n_early;
static int in_xmit[NTXQ]; /* atomic: threads inside xmit for the queue */
static uint64_t overlap;

static void settle(struct pw_pkt *p, uint8_t to)
{
	unsigned i = (unsigned)(p - pkts);
	CHECK(i < NPKT);
	uint8_t expect = 1;
	if (!__atomic_compare_exchange_n(&state[i], &expect, to, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "packet %u returned twice (state %u -> %u)\n", i, expect, to);
		abort();
	}
}

static int drv_xmit(struct pw_netdev *d, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)d, (void)ctx;
	CHECK(txq < NTXQ);
	if (__atomic_fetch_add(&in_xmit[txq], 1, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_add(&overlap, 1, __ATOMIC_RELAXED);
	unsigned i = (unsigned)(p - pkts);
	uint64_t t = now_ns();
	if (t < __atomic_load_n(&sent_at[i], __ATOMIC_ACQUIRE) + MIN_DELAY_NS)
		__atomic_fetch_add(&n_early, 1, __ATOMIC_RELAXED);
	settle(p, 2);
	__atomic_fetch_add(&n_sent, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&in_xmit[txq], 1, __ATOMIC_ACQ_REL);
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *d, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)d, (void)ctx;
	CHECK(r > 0 && r < PW_DROP_REASON_MAX);
	settle(p, 3);
	__atomic_fetch_add(&n_dropped, 1, __ATOMIC_RELAXED);
}

static const struct pw_netdev_ops drv = { .xmit = drv_xmit, .drop = drv_drop };

static unsigned next_pkt; /* atomic */

static void send_one(uint32_t hash)
{
	unsigned i = __atomic_fetch_add(&next_pkt, 1, __ATOMIC_RELAXED);
	CHECK(i < NPKT);
	struct pw_pkt *p = &pkts[i];
	pw_pkt_init(p, NULL, 100 + (hash & 1023));
	p->hash = hash;
	__atomic_store_n(&state[i], 1, __ATOMIC_RELEASE);
	__atomic_store_n(&sent_at[i], now_ns(), __ATOMIC_RELEASE);
	int rc = pw_dev_queue_xmit(dev, p);
	CHECK(rc == PW_NET_XMIT_SUCCESS || rc == PW_NET_XMIT_DROP || rc == PW_NET_XMIT_CN);
}

static void *ext_sender(void *arg)
{
	uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
	for (int k = 0; k < PER_SENDER; k++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		send_one(x);
		if ((k & 255) == 0)
			sched_yield();
	}
	return NULL;
}

/* Work items: a burst sent from a worker, as that CPU. */
struct burst {
	struct pw_work w;
	unsigned cpu;
	unsigned left;   /* atomic: rounds still to queue */
	unsigned done;   /* atomic */
};
static struct burst bursts[NCPU];

static void burst_fn(struct pw_work *w)
{
	struct burst *b = pw_container_of(w, struct burst, w);
	CHECK_EQ(pw_this_cpu(), (int)b->cpu);
	for (int k = 0; k < WORK_BURST; k++)
		send_one((uint32_t)k * 40503u + b->cpu);
	__atomic_fetch_add(&b->done, 1, __ATOMIC_RELEASE);
}

static void tc_ok(const char *cmd)
{
	char err[512];
	int rc = pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "tc %s: %d %s\n", cmd, rc, err);
		abort();
	}
}

static int stop_tc; /* atomic */

static void *tc_thread(void *arg)
{
	(void)arg;
	unsigned k = 0;
	char cmd[160], out[1 << 14];
	while (!__atomic_load_n(&stop_tc, __ATOMIC_ACQUIRE) || k < 48) {
		unsigned q = 1 + k % NTXQ;
		/* delays only grow, so "never before its delay" holds */
		snprintf(cmd, sizeof(cmd), "qdisc change dev eth0 parent 1:%u handle %u: netem delay %uus",
			 q, 10 + q, 200 + k);
		tc_ok(cmd);
		CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
		if (k % 16 == 15) {
			/* delete queue 4's child (its packets flushed, the queue
			 * drops meanwhile), then a new one */
			tc_ok("qdisc del dev eth0 parent 1:4");
			snprintf(cmd, sizeof(cmd),
				 "qdisc add dev eth0 parent 1:4 handle 14: netem delay %uus", 200 + k);
			tc_ok(cmd);
		}
		k++;
		struct timespec ts = { 0, 500000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(void)
{
	pkts = calloc(NPKT, sizeof(*pkts));
	sent_at = calloc(NPKT, sizeof(*sent_at));
	state = calloc(NPKT, 1);
	CHECK(pkts && sent_at && state);

	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = NCPU;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	CHECK_EQ(pw_netdev_create(rt, "eth0", NTXQ, &drv, NULL, &dev), 0);
	tc_ok("qdisc add dev eth0 root handle 1: mq");
	for (unsigned q = 1; q <= NTXQ; q++) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 parent 1:%u handle %u: netem delay 200us",
			 q, 10 + q);
		tc_ok(cmd);
	}
	CHECK_EQ(pw_runtime_start(rt), 0);

	pthread_t ext[EXT_THREADS], tct;
	CHECK_EQ(pthread_create(&tct, NULL, tc_thread, NULL), 0);
	for (int i = 0; i < EXT_THREADS; i++)
		CHECK_EQ(pthread_create(&ext[i], NULL, ext_sender, (void *)(uintptr_t)(i + 1)), 0);
	for (unsigned c = 0; c < NCPU; c++) {
		bursts[c].cpu = c;
		pw_work_init(&bursts[c].w, burst_fn);
	}
	/* queue each CPU's bursts one at a time (an item is queued once) */
	for (int r = 0; r < WORK_ROUNDS; r++)
		for (unsigned c = 0; c < NCPU; c++) {
			while (__atomic_load_n(&bursts[c].done, __ATOMIC_ACQUIRE) < (unsigned)r)
				sched_yield();
			CHECK_EQ(pw_queue_work_on(rt, c, &bursts[c].w), 0);
		}
	for (unsigned c = 0; c < NCPU; c++)
		while (__atomic_load_n(&bursts[c].done, __ATOMIC_ACQUIRE) < WORK_ROUNDS)
			sched_yield();
	for (int i = 0; i < EXT_THREADS; i++)
		pthread_join(ext[i], NULL);
	__atomic_store_n(&stop_tc, 1, __ATOMIC_RELEASE);
	pthread_join(tct, NULL);

	/* destroy with packets still queued and watchdogs armed */
	for (int k = 0; k < 500; k++)
		send_one((uint32_t)k * 2246822519u);
	pw_netdev_destroy(dev);
	CHECK_EQ(pw_runtime_stop(rt), 0);
	pw_runtime_destroy(rt);

	unsigned n = __atomic_load_n(&next_pkt, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n; i++)
		if (state[i] != 2 && state[i] != 3) {
			fprintf(stderr, "packet %u never came back (state %u)\n", i, state[i]);
			abort();
		}
	CHECK_EQ(n_sent + n_dropped, n);
	CHECK_EQ(n_early, 0);
	CHECK_EQ(overlap, 0);
	CHECK(n_sent > 0);
	printf("ok - %u packets: %llu sent, %llu dropped\n", n, (unsigned long long)n_sent,
	       (unsigned long long)n_dropped);
	free(pkts);
	free(sent_at);
	free(state);
	return 0;
}
