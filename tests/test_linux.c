/* SPDX-License-Identifier: MIT */
/*
 * <pinwheel/linux.h>: kernel-style code compiles and behaves as in the
 * kernel, on the default runtime (simulated clock).
 */
#include <errno.h>

#include <pinwheel/linux.h>
#include <time.h> /* after linux.h: POSIX timer_delete must not clash */

#include "check.h"
#include "sim.h"

struct conn {
	int id;
	int fired;
	int cpu;
	unsigned long at;
	struct timer_list rtx;
	struct timer_list keepalive;
};

static void rtx_fn(struct timer_list *t)
{
	struct conn *c = from_timer(c, t, rtx);
	c->fired++;
	c->cpu = pw_this_cpu();
	c->at = jiffies;
}

static void keepalive_fn(struct timer_list *t)
{
	struct conn *c = from_timer(c, t, keepalive);
	c->fired += 100;
	/* a periodic timer re-arms itself from its callback */
	if (c->fired < 300)
		mod_timer(&c->keepalive, jiffies + msecs_to_jiffies(1000));
}

static void test_kernel_style(void)
{
	struct conn c = {.id = 1};

	CHECK_EQ(timer_setup(&c.rtx, rtx_fn, 0), 0);
	CHECK_EQ(timer_setup(&c.keepalive, keepalive_fn, TIMER_DEFERRABLE), 0);
	unsigned long start = jiffies;
	c.rtx.expires = jiffies + HZ;
	add_timer(&c.rtx);
	CHECK(timer_pending(&c.rtx));
	CHECK_EQ(mod_timer(&c.rtx, c.rtx.expires), 1);
	CHECK_EQ(mod_timer(&c.rtx, jiffies + msecs_to_jiffies(200)), 1);
	CHECK_EQ(mod_timer_pending(&c.keepalive, jiffies + 5), 0);
	CHECK_EQ(mod_timer(&c.keepalive, jiffies + msecs_to_jiffies(1000)), 0);
	CHECK_EQ(timer_reduce(&c.rtx, jiffies + msecs_to_jiffies(300)), 1);
	CHECK_EQ(c.rtx.expires, start + 200);

	CHECK_EQ(pw_sim_advance(pw_default_runtime(), 250000000ull), 0);
	CHECK_EQ(c.fired, 1);
	CHECK(time_after_eq(c.at, start + 200));
	CHECK(time_before_eq(c.at, start + 200 + 8));
	CHECK(!timer_pending(&c.rtx));

	CHECK_EQ(pw_sim_advance(pw_default_runtime(), 5000000000ull), 0);
	CHECK_EQ(c.fired, 301); /* keepalive ran three times, then stopped */

	c.rtx.expires = jiffies + 3;
	CHECK_EQ(add_timer_on(&c.rtx, 1), 0);
	CHECK_EQ(add_timer_on(&c.rtx, -1), -EINVAL);
	CHECK_EQ(del_timer(&c.rtx), 1);
	CHECK_EQ(timer_delete(&c.rtx), 0);
	c.rtx.expires = jiffies + 3;
	CHECK_EQ(add_timer_on(&c.rtx, 1), 0);
	CHECK_EQ(pw_sim_advance(pw_default_runtime(), 10000000ull), 0);
	CHECK_EQ(c.fired, 302);
	CHECK_EQ(c.cpu, 1);

	CHECK_EQ(mod_timer(&c.rtx, jiffies + 10), 0);
	CHECK_EQ(del_timer_sync(&c.rtx), 1);
	CHECK_EQ(timer_delete_sync(&c.rtx), 0);
	CHECK_EQ(mod_timer(&c.rtx, jiffies + 10), 0);
	CHECK_EQ(timer_shutdown_sync(&c.rtx), 1);
	CHECK_EQ(mod_timer(&c.rtx, jiffies + 10), -ESHUTDOWN);
	CHECK_EQ(timer_shutdown(&c.keepalive), 0);
	(void)TIMER_PINNED;
}

static void test_time_macros(void)
{
	unsigned long a = (unsigned long)-5, b = 5; /* b is after a across the wrap */
	CHECK(time_after(b, a));
	CHECK(time_before(a, b));
	CHECK(time_after_eq(b, a));
	CHECK(time_after_eq(a, a));
	CHECK(time_before_eq(a, a));
	CHECK(!time_after(a, b));
	CHECK_EQ(HZ, 1000);
	CHECK_EQ(msecs_to_jiffies(1), 1);
	CHECK_EQ(msecs_to_jiffies(1500), 1500);
	CHECK_EQ(usecs_to_jiffies(1), 1); /* rounds up */
	CHECK_EQ(usecs_to_jiffies(2000), 2);
	CHECK_EQ(jiffies_to_msecs(250), 250);
	CHECK_EQ(msecs_to_jiffies((unsigned)-1), MAX_JIFFY_OFFSET);
}

/* Socket timers by their kernel names: a pending timer holds a reference,
 * the callback drops it, the last put runs the destructor. */
static int sk_freed;
static void sk_free_fn(struct sock *sk)
{
	(void)sk;
	sk_freed++;
}
struct tcp_sock_like {
	struct sock sk;
	struct timer_list rtx;
};
static void rtx_expired(struct timer_list *t)
{
	struct tcp_sock_like *tp = from_timer(tp, t, rtx);
	sock_put(&tp->sk);
}
static void test_sock_names(void)
{
	struct tcp_sock_like tp;
	sk_freed = 0;
	CHECK_EQ(pw_sock_init(&tp.sk, pw_default_runtime(), sk_free_fn), 0);
	CHECK_EQ(pw_sk_timer_setup(&tp.sk, &tp.rtx, rtx_expired), 0);
	sk_reset_timer(&tp.sk, &tp.rtx, jiffies + 2);
	sk_reset_timer(&tp.sk, &tp.rtx, jiffies + 3);
	CHECK_EQ(pw_sock_refcnt(&tp.sk), 2);
	sk_stop_timer(&tp.sk, &tp.rtx);
	CHECK_EQ(pw_sock_refcnt(&tp.sk), 1);
	sk_reset_timer(&tp.sk, &tp.rtx, jiffies + 1);
	sock_hold(&tp.sk);
	__sock_put(&tp.sk);
	sock_put(&tp.sk); /* the owner lets go; the timer keeps it */
	CHECK_EQ(sk_freed, 0);
	CHECK_EQ(pw_sim_advance(pw_default_runtime(), 10000000), 0);
	CHECK_EQ(sk_freed, 1);
}

int main(void)
{
	/* twice: jiffies from 0, then from 1000 before the 64-bit wrap, so
	 * that the kernel-style code runs across it (the kernel's
	 * INITIAL_JIFFIES idea) */
	for (int wrap = 0; wrap < 2; wrap++) {
		struct pw_config cfg;
		struct pw_runtime *rt;
		pw_config_init(&cfg);
		cfg.ncpus = 2;
		cfg.clock = PW_CLOCK_SIM;
		cfg.initial_jiffies = wrap ? 0 - 1000ull : 0;
		CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
		pw_set_default_runtime(rt);
		CHECK(pw_default_runtime() == rt);
		if (wrap)
			CHECK_EQ(jiffies, (unsigned long)-1000);
		RUN(test_kernel_style);
		if (wrap)
			CHECK(jiffies < 10000); /* it wrapped */
		RUN(test_time_macros);
		RUN(test_sock_names);
		CHECK_EQ(pw_runtime_check(rt), 0);
		pw_runtime_destroy(rt);
		CHECK(pw_default_runtime() == NULL);
	}
	return 0;
}
