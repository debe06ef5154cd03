/* SPDX-License-Identifier: MIT */
/*
 * Limits at their edges (docs/limits.md lists every limit and the test
 * that shows it; these are the ones no other test reached): the value
 * itself works, one past it is refused with the documented error.
 * Simulated clock, deterministic.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "check.h"

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)p, (void)ctx;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)p, (void)r, (void)ctx;
}

static const struct pw_netdev_ops drv = { .xmit = drv_xmit, .drop = drv_drop };

static int mk(unsigned ncpus, unsigned hz, struct pw_runtime **rt)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = ncpus;
	cfg.hz = hz;
	cfg.clock = PW_CLOCK_SIM;
	return pw_runtime_create(&cfg, rt);
}

static void test_runtime_edges(void)
{
	struct pw_runtime *rt;
	CHECK_EQ(mk(PW_MAX_CPUS, 1000, &rt), 0); /* the most CPUs: fine */
	CHECK_EQ(pw_runtime_ncpus(rt), PW_MAX_CPUS);
	struct pw_timer t;
	CHECK_EQ(pw_timer_setup(rt, &t, NULL, 0), -EINVAL); /* a NULL callback */
	pw_runtime_destroy(rt);
	CHECK_EQ(mk(PW_MAX_CPUS + 1, 1000, &rt), -EINVAL);
	CHECK(rt == NULL);
	CHECK_EQ(mk(1, 10, &rt), 0);
	pw_runtime_destroy(rt);
	CHECK_EQ(mk(1, 100000, &rt), 0);
	pw_runtime_destroy(rt);
	CHECK_EQ(mk(1, 9, &rt), -EINVAL);
	CHECK_EQ(mk(1, 100001, &rt), -EINVAL);
	/* extension slots: 0..PW_RUNTIME_EXT_SLOTS-1 */
	CHECK_EQ(mk(1, 1000, &rt), 0);
	static int x;
	CHECK_EQ(pw_runtime_ext_set(rt, PW_RUNTIME_EXT_SLOTS - 1, &x, NULL), 0);
	CHECK_EQ(pw_runtime_ext_set(rt, PW_RUNTIME_EXT_SLOTS - 1, &x, NULL), -EEXIST);
	CHECK_EQ(pw_runtime_ext_set(rt, PW_RUNTIME_EXT_SLOTS, &x, NULL), -EINVAL);
	pw_runtime_destroy(rt);
}

static void test_device_edges(void)
{
	struct pw_runtime *rt;
	struct pw_netdev *d;
	CHECK_EQ(mk(2, 1000, &rt), 0);
	char name[PW_IFNAMSIZ + 1];
	memset(name, 'e', PW_IFNAMSIZ - 1);
	name[PW_IFNAMSIZ - 1] = '\0';
	CHECK_EQ(pw_netdev_create(rt, name, PW_MAX_TXQ, &drv, NULL, &d), 0); /* 15 chars, 256 queues */
	char out[1 << 16], err[512];
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "class show dev %s", name);
	CHECK_EQ(pw_tc(rt, cmd, 0, out, sizeof(out), err, sizeof(err)), 0);
	CHECK(strstr(out, "class mq :100 root") != NULL); /* the 256th queue's class */
	pw_netdev_destroy(d);
	memset(name, 'e', PW_IFNAMSIZ);
	name[PW_IFNAMSIZ] = '\0';
	CHECK_EQ(pw_netdev_create(rt, name, 1, &drv, NULL, &d), -EINVAL); /* 16 chars */
	CHECK(d == NULL);
	CHECK_EQ(pw_netdev_create(rt, "a/b", 1, &drv, NULL, &d), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "a:b", 1, &drv, NULL, &d), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "", 1, &drv, NULL, &d), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "eth0", 0, &drv, NULL, &d), -EINVAL);
	CHECK_EQ(pw_netdev_create(rt, "eth0", PW_MAX_TXQ + 1, &drv, NULL, &d), -EINVAL);
	pw_runtime_destroy(rt);
}

static void test_tc_edges(void)
{
	struct pw_runtime *rt;
	struct pw_netdev *d;
	CHECK_EQ(mk(1, 1000, &rt), 0);
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &d), 0);
	static char cmd[8192];
	char err[512];
	size_t n = (size_t)snprintf(cmd, sizeof(cmd), "qdisc show dev eth0");
	for (int i = 0; i < 600; i++) /* past tc's 512 words */
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " x");
	CHECK_EQ(pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err)), -E2BIG);
	CHECK(strstr(err, "Too many arguments") != NULL);
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0 \"unterminated", 0, NULL, 0, err, sizeof(err)),
		 -EINVAL);
	CHECK(strstr(err, "Unterminated quote") != NULL);
	/* an output buffer too small: -ENOSPC, what fits, NUL-terminated */
	char small[16];
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, small, sizeof(small), err, sizeof(err)),
		 -ENOSPC);
	CHECK_EQ(strlen(small), sizeof(small) - 1);
	/* an error buffer too small: truncated, NUL-terminated */
	char tiny[8];
	CHECK(pw_tc(rt, "qdisc add dev eth0 root nosuch", 0, NULL, 0, tiny, sizeof(tiny)) < 0);
	CHECK(strlen(tiny) < sizeof(tiny));
	pw_netdev_destroy(d);
	pw_runtime_destroy(rt);
}

int main(void)
{
	RUN(test_runtime_edges);
	RUN(test_device_edges);
	RUN(test_tc_edges);
	return 0;
}
