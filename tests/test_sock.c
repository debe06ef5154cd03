/* SPDX-License-Identifier: MIT */
/*
 * Sockets: the reference rule of socket timers (a pending timer holds
 * exactly one reference; the callback or a stop drops it), the destructor
 * called exactly once after the last timer, the pinning switch under the
 * PUSH policy, pacing-rate caps, and XPS's per-socket queue kept while the
 * socket has packets in flight (ooo_okay).  On the simulated clock, then
 * under real threads (run it under TSan): owners resetting and stopping
 * their sockets' timers while callbacks on the workers re-arm or drop.
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
#include "sim.h"

struct tsock {
	struct pw_sock sk;
	struct pw_timer rtx;
	struct pw_hrtimer pace;
	unsigned destructed;  /* atomic */
	unsigned rearm_left;  /* atomic: the callback re-arms this many times */
	unsigned fired;       /* atomic */
	unsigned hh, hs, hc;  /* hrtimer: holds by reset, puts by stop, callbacks */
};

static void t_destruct(struct pw_sock *sk)
{
	struct tsock *s = pw_container_of(sk, struct tsock, sk);
	__atomic_fetch_add(&s->destructed, 1, __ATOMIC_ACQ_REL);
}

/* The retransmit timer: re-arm while asked to, else drop the reference. */
static void rtx_fn(struct pw_timer *t)
{
	struct tsock *s = pw_container_of(t, struct tsock, rtx);
	__atomic_fetch_add(&s->fired, 1, __ATOMIC_RELAXED);
	unsigned left = __atomic_load_n(&s->rearm_left, __ATOMIC_ACQUIRE);
	while (left && !__atomic_compare_exchange_n(&s->rearm_left, &left, left - 1, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	if (left)
		pw_sk_reset_timer(&s->sk, t, pw_jiffies(s->sk.sk_rt) + 1 + left % 3);
	pw_sock_put(&s->sk); /* this expiry's reference */
}

static enum pw_hrtimer_restart pace_fn(struct pw_hrtimer *t)
{
	struct tsock *s = pw_container_of(t, struct tsock, pace);
	__atomic_fetch_add(&s->fired, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->hc, 1, __ATOMIC_RELAXED);
	pw_sock_put(&s->sk);
	return PW_HRTIMER_NORESTART;
}

static void tsock_init(struct tsock *s, struct pw_runtime *rt)
{
	memset(s, 0, sizeof(*s));
	CHECK_EQ(pw_sock_init(&s->sk, rt, t_destruct), 0);
	CHECK_EQ(pw_sk_timer_setup(&s->sk, &s->rtx, rtx_fn), 0);
	CHECK_EQ(pw_sk_hrtimer_setup(&s->sk, &s->pace, pace_fn), 0);
}

static void test_refs_sim(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	struct tsock s;
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	tsock_init(&s, rt);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 1);
	CHECK_EQ(pw_sk_reset_timer(&s.sk, &s.rtx, pw_jiffies(rt) + 10), 0);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 2);
	CHECK_EQ(pw_sk_reset_timer(&s.sk, &s.rtx, pw_jiffies(rt) + 20), 1); /* pending: no new ref */
	CHECK_EQ(pw_sock_refcnt(&s.sk), 2);
	CHECK_EQ(pw_sk_stop_timer(&s.sk, &s.rtx), 1);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 1);
	CHECK_EQ(pw_sk_stop_timer(&s.sk, &s.rtx), 0); /* not pending: nothing dropped */
	CHECK_EQ(pw_sock_refcnt(&s.sk), 1);
	/* fire, with the callback re-arming twice */
	s.rearm_left = 2;
	CHECK_EQ(pw_sk_reset_timer(&s.sk, &s.rtx, pw_jiffies(rt) + 5), 0);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_sim_advance(rt, 100000000), 0);
	CHECK_EQ(s.fired, 3);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 1);
	/* hrtimer: start, restart while queued, fire */
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	uint64_t now = pw_now_ns(rt);
	CHECK_EQ(pw_sk_reset_hrtimer(&s.sk, &s.pace, now + 1000000, 0), 0);
	CHECK_EQ(pw_sk_reset_hrtimer(&s.sk, &s.pace, now + 2000000, 0), 1);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 2);
	CHECK_EQ(pw_sk_stop_hrtimer(&s.sk, &s.pace), 1);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 1);
	CHECK_EQ(pw_sk_reset_hrtimer(&s.sk, &s.pace, now + 1000000, 0), 0);
	CHECK_EQ(pw_sk_reset_timer(&s.sk, &s.rtx, pw_jiffies(rt) + 50), 0);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 3);
	pw_cpu_exit(rt);
	/* the owner lets go first: the timers keep the socket alive */
	pw_sock_put(&s.sk);
	CHECK_EQ(s.destructed, 0);
	CHECK_EQ(pw_sim_advance(rt, 10000000), 0); /* the hrtimer fires */
	CHECK_EQ(s.destructed, 0);
	CHECK_EQ(pw_sim_advance(rt, 100000000), 0); /* then the wheel timer: the last */
	CHECK_EQ(s.destructed, 1);
	CHECK_EQ(pw_sock_refcnt(&s.sk), 0);
	/* bad arguments */
	CHECK_EQ(pw_sock_init(NULL, rt, NULL), -EINVAL);
	CHECK_EQ(pw_sk_reset_timer(NULL, &s.rtx, 1), -EINVAL);
	CHECK_EQ(pw_sk_stop_timer(&s.sk, NULL), -EINVAL);
	pw_runtime_destroy(rt);
}

/* Pacing rate capped by SO_MAX_PACING_RATE. */
static void test_pacing_cap(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 0, 0);
	struct pw_sock sk;
	CHECK_EQ(pw_sock_init(&sk, rt, NULL), 0);
	CHECK(sk.sk_pacing_rate == UINT64_MAX);
	pw_sock_set_pacing_rate(&sk, 5000000);
	CHECK_EQ(sk.sk_pacing_rate, 5000000);
	pw_sock_set_max_pacing_rate(&sk, 3000000);
	CHECK_EQ(sk.sk_pacing_rate, 3000000);
	pw_sock_set_pacing_rate(&sk, 4000000);
	CHECK_EQ(sk.sk_pacing_rate, 3000000);
	pw_sock_set_pacing_rate(&sk, 1000000);
	CHECK_EQ(sk.sk_pacing_rate, 1000000);
	pw_runtime_destroy(rt);
}

/* Seed 000's switch: a socket timer armed from an idle CPU under PUSH goes
 * to the busy CPU unless socket timers are pinned. */
static void run_push(int pinned, int *cpu_out)
{
	struct pw_runtime *rt = sim_create(2, 1000, 0, 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_net_set_sk_timers_pinned(rt, pinned), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0);
	struct tsock s;
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	tsock_init(&s, rt);
	CHECK_EQ(pw_sk_reset_timer(&s.sk, &s.rtx, pw_jiffies(rt) + 100), 0);
	*cpu_out = pw_timer_cpu(&s.rtx);
	CHECK_EQ(pw_sk_stop_timer_sync(&s.sk, &s.rtx), 1);
	pw_cpu_exit(rt);
	pw_sock_put(&s.sk);
	CHECK_EQ(s.destructed, 1);
	pw_runtime_destroy(rt);
}

static void test_pinned_switch(void)
{
	int cpu;
	run_push(0, &cpu);
	CHECK_EQ(cpu, 0); /* pushed to the busy CPU */
	run_push(1, &cpu);
	CHECK_EQ(cpu, 1); /* pinned: stays */
}

/* ooo_okay: a socket's packets stay on one TX queue while any is in
 * flight, whatever CPU sends them; once none is, XPS chooses again. */
static unsigned xmit_txq[64];
static unsigned nxmit;
static int d_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)ctx;
	xmit_txq[p->user] = txq;
	nxmit++;
	return PW_NETDEV_TX_OK;
}
static void d_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)p, (void)r, (void)ctx;
	abort();
}
static const struct pw_netdev_ops dops = { .xmit = d_xmit, .drop = d_drop };

static void test_ooo_okay(void)
{
	struct pw_runtime *rt = sim_create(2, 1000, 1000000000ull, 0);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 2, &dops, NULL, &dev), 0);
	char err[256];
	CHECK_EQ(pw_tc(rt, "qdisc add dev eth0 root handle 1: mq", 0, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ(pw_tc(rt, "qdisc add dev eth0 parent 1:1 netem delay 10ms", 0, NULL, 0, err,
		       sizeof(err)), 0);
	CHECK_EQ(pw_tc(rt, "qdisc add dev eth0 parent 1:2 netem delay 10ms", 0, NULL, 0, err,
		       sizeof(err)), 0);
	struct pw_sock sk;
	CHECK_EQ(pw_sock_init(&sk, rt, NULL), 0);
	struct pw_pkt p[8];
	for (unsigned i = 0; i < 4; i++) {
		pw_pkt_init(&p[i], NULL, 100);
		p[i].sk = &sk;
		p[i].user = i;
		CHECK_EQ(pw_cpu_enter(rt, i % 2), 0); /* CPUs 0, 1, 0, 1 */
		CHECK_EQ(pw_dev_queue_xmit(dev, &p[i]), PW_NET_XMIT_SUCCESS);
		pw_cpu_exit(rt);
	}
	CHECK_EQ(pw_sim_advance(rt, 20000000), 0);
	CHECK_EQ(nxmit, 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(xmit_txq[i], 0); /* all on CPU 0's queue: the first packet's */
	/* nothing in flight now: CPU 1 sending moves the socket to queue 1 */
	pw_pkt_init(&p[4], NULL, 100);
	p[4].sk = &sk;
	p[4].user = 4;
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	CHECK_EQ(pw_dev_queue_xmit(dev, &p[4]), PW_NET_XMIT_SUCCESS);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_sim_advance(rt, 20000000), 0);
	CHECK_EQ(xmit_txq[4], 1);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
}

/* ------------------------------------------------------- real threads */

#define NSOCK 64
#define OWNERS 2
#define ROUNDS 20000

static struct tsock socks[NSOCK];
static struct pw_runtime *rrt;

static void *owner(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint32_t x = id * 2654435761u + 7;
	for (int r = 0; r < ROUNDS; r++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		struct tsock *s = &socks[(x % (NSOCK / OWNERS)) * OWNERS + id];
		switch ((x >> 8) % 6) {
		case 0:
		case 1:
			pw_sk_reset_timer(&s->sk, &s->rtx, pw_jiffies(rrt) + (x >> 16) % 3);
			break;
		case 2:
			__atomic_store_n(&s->rearm_left, (x >> 20) % 3, __ATOMIC_RELEASE);
			break;
		case 3:
			pw_sk_stop_timer(&s->sk, &s->rtx);
			break;
		case 4:
			if (pw_sk_reset_hrtimer(&s->sk, &s->pace, pw_now_ns(rrt) + (x >> 12) % 2000000,
						0) == 0)
				s->hh++;
			break;
		case 5:
			if (pw_sk_stop_hrtimer(&s->sk, &s->pace) == 1)
				s->hs++;
			break;
		}
		if ((r & 63) == 0) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void refs_threads(int pinned)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 2;
	CHECK_EQ(pw_runtime_create(&cfg, &rrt), 0);
	CHECK_EQ(pw_set_migration(rrt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_net_set_sk_timers_pinned(rrt, pinned), 0);
	for (unsigned i = 0; i < NSOCK; i++)
		tsock_init(&socks[i], rrt);
	CHECK_EQ(pw_runtime_start(rrt), 0);
	pthread_t th[OWNERS];
	for (unsigned i = 0; i < OWNERS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, owner, (void *)(uintptr_t)i), 0);
	for (unsigned i = 0; i < OWNERS; i++)
		pthread_join(th[i], NULL);
	/* stop re-arming, stop every timer and wait, then check the count:
	 * exactly the owner's reference is left */
	for (unsigned i = 0; i < NSOCK; i++)
		__atomic_store_n(&socks[i].rearm_left, 0, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < NSOCK; i++) {
		struct tsock *s = &socks[i];
		/* a callback may re-arm once more while we stop: loop */
		for (int k = 0; k < 3; k++) {
			pw_sk_stop_timer_sync(&s->sk, &s->rtx);
			if (pw_sk_stop_hrtimer_sync(&s->sk, &s->pace) == 1)
				s->hs++;
		}
		if (s->hh != s->hs + __atomic_load_n(&s->hc, __ATOMIC_ACQUIRE))
			fprintf(stderr, "sock %u: hrtimer holds %u, stops %u, callbacks %u\n", i, s->hh,
				s->hs, s->hc);
		CHECK(!pw_timer_pending(&s->rtx));
		CHECK_EQ(pw_sock_refcnt(&s->sk), 1);
		CHECK_EQ(s->destructed, 0);
		pw_sock_put(&s->sk);
		if (s->destructed != 1)
			fprintf(stderr, "sock %u: refcnt %u pending %d queued %d\n", i,
				pw_sock_refcnt(&s->sk), pw_timer_pending(&s->rtx),
				pw_hrtimer_is_queued(&s->pace));
		CHECK_EQ(s->destructed, 1);
	}
	CHECK_EQ(pw_runtime_stop(rrt), 0);
	pw_runtime_destroy(rrt);
	unsigned fired = 0;
	for (unsigned i = 0; i < NSOCK; i++)
		fired += socks[i].fired;
	printf("# %s: %u callbacks ran\n", pinned ? "pinned" : "not pinned", fired);
	CHECK(fired > 0);
}

static void test_refs_threads(void)
{
	refs_threads(0);
	refs_threads(1);
}

int main(void)
{
	RUN(test_refs_sim);
	RUN(test_pacing_cap);
	RUN(test_pinned_switch);
	RUN(test_ooo_okay);
	RUN(test_refs_threads);
	return 0;
}
