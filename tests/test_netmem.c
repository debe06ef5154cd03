/* SPDX-License-Identifier: MIT */
/*
 * tc state's memory (src/net/netmem.c): the count per runtime and the
 * budget, on the simulated clock.
 *
 *  - Exact: a device, then a tree with every kind that allocates (mq,
 *    htb with classes and netem leaves with a table, tbf, fq with flows
 *    made by packets, trace, an estimator, accuracy on), changed and torn
 *    down piece by piece: each delete brings the count back to what it
 *    was before the matching add, and the device's destroy to 0.
 *  - A refusal changes nothing: each command of the tree run against a
 *    budget a little short of what it needs (every limit from what is
 *    used to what the command takes, in steps) either goes through or
 *    fails with -ENOBUFS and tc's message naming the budget, with the
 *    device's qdiscs and classes shown as before and the count as before.
 *  - Deletes go through a spent budget (the default qdisc they leave is
 *    charged past the limit); fq's flows refused on the data path lose no
 *    packet (they take the internal flow: alloc_errors).
 *  - Two runtimes charge one budget: what one holds the other cannot
 *    take; the budget's used is the sum of their counts, 0 at the end.
 *  - pw_net_set_budget() refuses a runtime with a device (-EBUSY).
 *  - Threads (`concurrent`, run under TSan too): two threads, each its
 *    own runtime, add and delete classes against one budget too small for
 *    both: the limit never passed (peak), the used count the sum of the
 *    runtimes' counts at the end, and 0 once they are gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"

#include "net_ledger.h"

#define T0 1000000000ull
#define MS 1000000ull

static uint64_t mem(struct pw_runtime *rt)
{
	return pw_net_mem_bytes(rt);
}

/* tc's answer to @cmd on @rt; its message in @err (may be NULL). */
static int tc(struct pw_runtime *rt, const char *cmd, char *err, size_t len)
{
	char buf[1024];
	if (!err) {
		err = buf;
		len = sizeof(buf);
	}
	return pw_tc(rt, cmd, 0, NULL, 0, err, len);
}

/* The device's qdiscs and classes as tc shows them (with details). */
static char *show(struct pw_runtime *rt, const char *dev)
{
	size_t cap = 1 << 20;
	char *out = malloc(2 * cap), err[256], cmd[128];
	CHECK(out);
	snprintf(cmd, sizeof(cmd), "qdisc show dev %s", dev);
	CHECK_EQ(pw_tc(rt, cmd, PW_TC_DETAILS, out, cap, err, sizeof(err)), 0);
	size_t n = strlen(out);
	snprintf(cmd, sizeof(cmd), "class show dev %s", dev);
	CHECK_EQ(pw_tc(rt, cmd, PW_TC_DETAILS, out + n, cap, err, sizeof(err)), 0);
	return out;
}

/* The commands of the tree, in order, each with the one that undoes it
 * (NULL: undone by a later one). */
static const char *const build[][2] = {
	{ "qdisc add dev eth0 root handle 1: htb default 10", "qdisc del dev eth0 root" },
	{ "class add dev eth0 parent 1: classid 1:1 htb rate 100mbit", NULL },
	{ "class add dev eth0 parent 1:1 classid 1:10 htb rate 10mbit ceil 100mbit",
	  "class del dev eth0 classid 1:10" },
	{ "class add dev eth0 parent 1:1 classid 1:20 htb rate 10mbit ceil 100mbit",
	  "class del dev eth0 classid 1:20" },
	{ "class add dev eth0 parent 1:1 classid 1:30 htb rate 10mbit ceil 100mbit",
	  "class del dev eth0 classid 1:30" },
	{ "qdisc add dev eth0 parent 1:10 handle 10: netem delay 10ms 2ms distribution normal "
	  "limit 5000",
	  "qdisc del dev eth0 parent 1:10" },
	{ "qdisc change dev eth0 parent 1:10 handle 10: netem delay 20ms 4ms distribution pareto "
	  "limit 5000",
	  NULL },
	{ "qdisc add dev eth0 parent 1:20 handle 20: estimator 1s 8s tbf rate 1mbit burst 10k "
	  "limit 100k",
	  "qdisc del dev eth0 parent 1:20" },
	{ "qdisc add dev eth0 parent 1:30 handle 30: fq buckets 4096", "qdisc del dev eth0 parent 1:30" },
	{ "qdisc change dev eth0 parent 1:30 handle 30: fq buckets 16384", NULL },
};
#define NBUILD (sizeof(build) / sizeof(build[0]))

static struct pw_netdev *make_dev(struct pw_runtime *rt, const char *name)
{
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, name, 1, &drv, NULL, &dev), 0);
	CHECK_EQ(pw_netdev_accuracy_enable(dev, 1), 0);
	return dev;
}

/* Packets of @n flows (their hashes) through htb's class 1:30 (fq). */
static void send_flows(struct pw_netdev *dev, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int rc = send_from(dev, 0, 100, 0x9e3779b9u * (i + 1), 0x10030, NULL);
		CHECK(rc == PW_NET_XMIT_SUCCESS || rc == PW_NET_XMIT_DROP);
	}
}

static void drain(struct pw_runtime *rt)
{
	for (int i = 0; i < 20; i++)
		CHECK_EQ(pw_sim_advance(rt, 500 * MS), 0);
}

static void test_exact(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, T0, 0);
	ledger_init(rt);
	CHECK_EQ(mem(rt), 0);
	struct pw_netdev *dev = make_dev(rt, "eth0");
	uint64_t base = mem(rt);
	CHECK(base > 0);
	uint64_t at[NBUILD + 1];
	for (size_t i = 0; i < NBUILD; i++) {
		at[i] = mem(rt);
		tc_ok(rt, build[i][0]);
		CHECK(mem(rt) != at[i] || strstr(build[i][0], "change"));
	}
	at[NBUILD] = mem(rt);
	/* fq's flows: made by packets, counted; gc'd or torn down, uncounted */
	send_flows(dev, 200);
	CHECK(mem(rt) > at[NBUILD]);
	drain(rt);
	/* a trace elsewhere: replace the netem leaf's whole subtree and back */
	uint64_t before = mem(rt);
	tc_ok(rt, "qdisc del dev eth0 parent 1:10");
	tc_ok(rt, "qdisc add dev eth0 parent 1:10 handle 10: trace text \"1 2 3 4 5 10\" name tiny");
	tc_ok(rt, "qdisc change dev eth0 parent 1:10 handle 10: trace text \"2 4 6 8 10 12 14 20\"");
	tc_ok(rt, "qdisc del dev eth0 parent 1:10");
	tc_ok(rt, "qdisc add dev eth0 parent 1:10 handle 10: netem delay 20ms 4ms "
		  "distribution pareto limit 5000");
	CHECK_EQ(mem(rt), before);
	/* undo in reverse: each qdisc delete back to what its add found; a
	 * class delete gives back less than its add took when the add grew
	 * htb's class hash (which never shrinks, as the kernel's) */
	tc_ok(rt, "qdisc del dev eth0 parent 1:30");
	CHECK_EQ(mem(rt), at[8]);
	for (size_t i = NBUILD; i-- > 1;) {
		if (!build[i][1] || !strncmp(build[i][1], "qdisc del dev eth0 parent 1:30", 30))
			continue;
		uint64_t was = mem(rt);
		tc_ok(rt, build[i][1]);
		if (!strncmp(build[i][1], "qdisc", 5))
			CHECK_EQ(mem(rt), at[i]);
		else
			CHECK(mem(rt) >= at[i] && mem(rt) < was);
	}
	tc_ok(rt, "qdisc del dev eth0 root");
	CHECK_EQ(mem(rt), base);
	/* accuracy off and on: its figures uncounted, counted */
	CHECK_EQ(pw_netdev_accuracy_enable(dev, 0), 0);
	CHECK(mem(rt) < base);
	CHECK_EQ(pw_netdev_accuracy_enable(dev, 1), 0);
	CHECK_EQ(mem(rt), base);
	/* an mq device with its children, and XPS */
	struct pw_netdev *mq;
	CHECK_EQ(pw_netdev_create(rt, "eth1", 4, &drv, NULL, &mq), 0);
	uint64_t cpus = 1;
	CHECK_EQ(pw_netdev_set_xps(mq, 2, &cpus, 1), 0);
	tc_ok(rt, "qdisc replace dev eth1 root handle 1: mq");
	tc_ok(rt, "qdisc replace dev eth1 parent 1:2 handle 2: netem delay 1ms");
	pw_netdev_destroy(mq);
	CHECK_EQ(mem(rt), base);
	/* a tree left in place goes with the device */
	for (size_t i = 0; i < NBUILD; i++)
		tc_ok(rt, build[i][0]);
	send_flows(dev, 50);
	pw_netdev_destroy(dev);
	CHECK_EQ(mem(rt), 0);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* Every command of the tree against every limit from what is used to
 * what it takes: through, or refused with nothing changed. */
static void test_refusal_changes_nothing(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, T0, 0);
	ledger_init(rt);
	struct pw_mem_budget b = { .limit = UINT64_MAX };
	CHECK_EQ(pw_net_set_budget(rt, &b), 0);
	struct pw_netdev *dev = make_dev(rt, "eth0");
	CHECK_EQ(b.used, mem(rt));
	unsigned refused = 0;
	const char *more[] = {
		"class change dev eth0 parent 1:1 classid 1:10 htb rate 20mbit ceil 100mbit",
		"class add dev eth0 parent 1:1 classid 1:40 htb rate 1mbit",
		"qdisc add dev eth0 parent 1:40 handle 40: trace text \"1 2 3 10\" name t",
		"qdisc change dev eth0 parent 1:40 handle 40: trace text \"1 2 3 4 5 6 20\"",
		"qdisc replace dev eth0 root handle 2: fq buckets 1024",
	};
	for (size_t i = 0; i < NBUILD + sizeof(more) / sizeof(more[0]); i++) {
		const char *cmd = i < NBUILD ? build[i][0] : more[i - NBUILD];
		uint64_t used = b.used;
		char *was = show(rt, "eth0");
		/* from no room at all upwards: the first limit that lets it
		 * through is about its cost */
		uint64_t step = 64, limit = used;
		int rc;
		for (;;) {
			b.limit = limit;
			char err[512] = "";
			rc = tc(rt, cmd, err, sizeof(err));
			if (!rc)
				break;
			if (rc != -ENOBUFS) fprintf(stderr, "%s at +%llu: %d %s\n", cmd, (unsigned long long)(limit - used), rc, err);
			CHECK_EQ(rc, -ENOBUFS);
			char want[128];
			snprintf(want, sizeof(want), "Error: the tc memory budget (%llu bytes) is spent.",
				 (unsigned long long)limit);
			/* an estimator is started by tc's side, which says its own */
			if (!strstr(err, want) && !strstr(err, "estimator")) {
				fprintf(stderr, "\"%s\" at %llu: %s\n", cmd, (unsigned long long)limit, err);
				CHECK(0);
			}
			refused++;
			CHECK_EQ(b.used, used);
			CHECK_EQ(mem(rt), used);
			char *now = show(rt, "eth0");
			if (strcmp(now, was)) {
				fprintf(stderr, "\"%s\" refused at %llu changed:\n%s\n---\n%s\n", cmd,
					(unsigned long long)limit, was, now);
				CHECK(0);
			}
			free(now);
			limit += step;
			if (limit - used > 64 * step)
				step *= 2; /* large tables: coarser */
		}
		CHECK(b.used <= limit);
		CHECK_EQ(b.used, mem(rt));
		free(was);
		b.limit = UINT64_MAX;
	}
	CHECK(refused > NBUILD);
	/* a spent budget: deletes go through, adds do not */
	b.limit = b.used;
	CHECK_EQ(tc(rt, "qdisc replace dev eth0 root handle 3: htb", NULL, 0), -ENOBUFS);
	tc_ok(rt, "qdisc del dev eth0 root");
	pw_netdev_destroy(dev);
	CHECK_EQ(b.used, 0);
	CHECK_EQ(mem(rt), 0);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

static void test_spent_budget(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, T0, 0);
	ledger_init(rt);
	struct pw_mem_budget b = { .limit = UINT64_MAX };
	CHECK_EQ(pw_net_set_budget(rt, &b), 0);
	struct pw_netdev *dev = make_dev(rt, "eth0");
	for (size_t i = 0; i < NBUILD; i++)
		tc_ok(rt, build[i][0]);
	/* spent: fq's new flows are refused on the data path, no packet lost */
	b.limit = b.used;
	uint64_t refused = b.refused;
	send_flows(dev, 100);
	CHECK(b.refused > refused);
	CHECK(b.used <= b.limit);
	char out[8192], err[256];
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0 handle 30:", PW_TC_STATS, out, sizeof(out), err,
		       sizeof(err)),
		 0);
	CHECK(strstr(out, "alloc_errors"));
	drain(rt);
	ledger_check_all_back();
	/* deletes: the last class under 1:1 turns it back into a leaf, the
	 * leaf qdiscs leave default pfifos, the root a pfifo_fast */
	tc_ok(rt, "qdisc del dev eth0 parent 1:10");
	tc_ok(rt, "class del dev eth0 classid 1:10");
	tc_ok(rt, "class del dev eth0 classid 1:20");
	tc_ok(rt, "class del dev eth0 classid 1:30");
	tc_ok(rt, "qdisc del dev eth0 root");
	CHECK_EQ(b.used, mem(rt));
	pw_netdev_destroy(dev);
	CHECK_EQ(b.used, 0);
	pw_runtime_destroy(rt);
}

static void test_two_runtimes(void)
{
	struct pw_mem_budget b = { .limit = UINT64_MAX };
	struct pw_runtime *r1 = sim_create(1, 1000, T0, 0), *r2 = sim_create(2, 1000, T0, 0);
	ledger_init(r1);
	CHECK_EQ(pw_net_set_budget(r1, &b), 0);
	CHECK_EQ(pw_net_set_budget(r2, &b), 0);
	struct pw_netdev *d1 = make_dev(r1, "a0"), *d2 = make_dev(r2, "b0");
	CHECK_EQ(pw_net_set_budget(r1, NULL), -EBUSY); /* holds state */
	tc_ok(r1, "qdisc add dev a0 root handle 1: htb");
	tc_ok(r2, "qdisc add dev b0 root handle 1: htb");
	CHECK_EQ(b.used, mem(r1) + mem(r2));
	/* r1 takes what is left, in classes */
	b.limit = b.used + 40 * (1u << 16) / 16; /* a few classes' worth at most */
	char cmd[160];
	unsigned made = 0;
	for (unsigned i = 1;; i++) {
		snprintf(cmd, sizeof(cmd), "class add dev a0 parent 1: classid 1:%x htb rate 1mbit", i);
		int rc = tc(r1, cmd, NULL, 0);
		if (rc) {
			CHECK_EQ(rc, -ENOBUFS);
			break;
		}
		made++;
	}
	CHECK(made > 0);
	CHECK_EQ(b.used, mem(r1) + mem(r2));
	/* r2 cannot have one now, and has one once r1 gave one back */
	CHECK_EQ(tc(r2, "class add dev b0 parent 1: classid 1:1 htb rate 1mbit", NULL, 0), -ENOBUFS);
	tc_ok(r1, "class del dev a0 classid 1:1");
	tc_ok(r2, "class add dev b0 parent 1: classid 1:1 htb rate 1mbit");
	CHECK_EQ(b.used, mem(r1) + mem(r2));
	CHECK(b.peak >= b.used && b.peak <= b.limit);
	pw_netdev_destroy(d1);
	pw_runtime_destroy(r1); /* r2's state stays charged */
	CHECK_EQ(b.used, mem(r2));
	(void)d2;
	pw_runtime_destroy(r2); /* its device goes with it */
	CHECK_EQ(b.used, 0);
}

/* One thread's runtime: htb classes added and deleted in turn, in
 * rounds both threads go through together (a barrier between phases), so
 * that what is asked of the budget at once is known, not left to how the
 * threads happen to be scheduled: 2 classes each first (room for both),
 * then 6 more each (room for about 4 between them: some are refused),
 * then every class deleted. */
static pthread_barrier_t churn_bar;

struct churn {
	struct pw_runtime *rt;
	struct pw_mem_budget *b;
	unsigned added, refused, added_first;
};

static void churn_add(struct churn *c, unsigned from, unsigned to)
{
	char cmd[128];
	for (unsigned i = from; i <= to; i++) {
		snprintf(cmd, sizeof(cmd), "class add dev c0 parent 1: classid 1:%x htb rate 1mbit",
			 i);
		int rc = tc(c->rt, cmd, NULL, 0);
		CHECK(rc == 0 || rc == -ENOBUFS);
		if (rc)
			c->refused++;
		else
			c->added++, c->added_first += i <= 2;
		CHECK(__atomic_load_n(&c->b->used, __ATOMIC_RELAXED) <= c->b->limit);
	}
}

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(c->rt, "c0", 1, &drv, NULL, &dev), 0);
	CHECK_EQ(pw_netdev_accuracy_enable(dev, 1), 0);
	tc_ok(c->rt, "qdisc add dev c0 root handle 1: htb");
	char cmd[128];
	for (unsigned round = 0; round < 40; round++) {
		pthread_barrier_wait(&churn_bar);
		churn_add(c, 1, 2);
		pthread_barrier_wait(&churn_bar);
		churn_add(c, 3, 8);
		pthread_barrier_wait(&churn_bar);
		for (unsigned i = 1; i <= 8; i++) {
			snprintf(cmd, sizeof(cmd), "class del dev c0 classid 1:%x", i);
			int rc = tc(c->rt, cmd, NULL, 0);
			CHECK(rc == 0 || rc == -ENOENT || rc == -EINVAL);
		}
	}
	return NULL;
}

static void test_threads(void)
{
	struct pw_mem_budget b = { .limit = UINT64_MAX };
	struct churn c[2];
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		c[i] = (struct churn){ .rt = sim_create(1, 1000, T0, 0), .b = &b };
		CHECK_EQ(pw_net_set_budget(c[i].rt, &b), 0);
	}
	/* room for both devices and roots, and for about 8 classes more:
	 * a device with its root and figures is under 100 KB, a class with
	 * its leaf and figures about 62 KB */
	b.limit = 2 * 100000 + 8 * 62000;
	CHECK_EQ(pthread_barrier_init(&churn_bar, NULL, 2), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, churn_main, &c[i]), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&churn_bar);
	printf("  threads: added %u + %u, refused %u + %u\n", c[0].added, c[1].added, c[0].refused,
	       c[1].refused);
	/* every round asked for 16 classes where about 8 fit */
	CHECK(c[0].refused + c[1].refused >= 40);
	CHECK_EQ(c[0].added_first, 80); /* the first 2 of each round had room */
	CHECK_EQ(c[1].added_first, 80);
	CHECK(b.peak <= b.limit);
	CHECK_EQ(b.used, mem(c[0].rt) + mem(c[1].rt));
	for (int i = 0; i < 2; i++)
		pw_runtime_destroy(c[i].rt);
	CHECK_EQ(b.used, 0);
}

int main(void)
{
	RUN(test_exact);
	RUN(test_refusal_changes_nothing);
	RUN(test_spent_budget);
	RUN(test_two_runtimes);
	RUN(test_threads);
	return 0;
}
