/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the wheel data structure itself (src/time/wheel.c): level
 * selection, rounding (never early, at most one granule late), clamping,
 * the lazy next expiry, collection, clock forwarding, jiffies wrap-around,
 * and that the invariant checker catches corruption.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wheel.h"

static struct pw__wheel w;

static void tinit(struct pw_timer *t, uint64_t expires)
{
	memset(t, 0, sizeof(*t));
	t->pw_flags = PW__TF_MAGIC;
	t->expires = expires;
}

static int check_wheel(void)
{
	return pw__wheel_check(&w, NULL, NULL, 0, PW__TF_MAGIC_MASK, PW__TF_MAGIC, "test");
}

static uint64_t lvl_start(unsigned lvl)
{
	return lvl ? 63ull << (3 * (lvl - 1)) : 0;
}

static void test_levels(void)
{
	uint64_t be;
	pw__wheel_init(&w, 1000, 0);
	CHECK_EQ(w.depth, 9);
	for (uint64_t e = 0; e < 63; e++) {
		unsigned idx = pw__wheel_calc_index(&w, e, &be);
		CHECK_EQ(idx / 64, 0);
		CHECK_EQ(be, e + 1); /* level 0 rounds one jiffy up */
	}
	for (unsigned lvl = 1; lvl < 9; lvl++) {
		CHECK_EQ(pw__wheel_calc_index(&w, lvl_start(lvl), &be) / 64, lvl);
		CHECK_EQ(pw__wheel_calc_index(&w, lvl_start(lvl) - 1, &be) / 64, lvl - 1);
	}
	/* HZ <= 100: 8 levels */
	pw__wheel_init(&w, 100, 0);
	CHECK_EQ(w.depth, 8);
	CHECK_EQ(pw__wheel_calc_index(&w, lvl_start(7) + 5, &be) / 64, 7);
}

static void test_rounding_random(void)
{
	srand(7);
	for (int i = 0; i < 200000; i++) {
		uint64_t clk = ((uint64_t)rand() << 20) ^ (uint64_t)rand();
		if (i % 4 == 0)
			clk = UINT64_MAX - (uint64_t)(rand() % 5000); /* around the wrap */
		pw__wheel_init(&w, 1000, clk);
		uint64_t delta = (uint64_t)rand() % (1u << (rand() % 31));
		if (delta >= w.cutoff)
			continue; /* clamped: test_past_and_clamp */
		uint64_t e = clk + delta, be;
		unsigned idx = pw__wheel_calc_index(&w, e, &be);
		unsigned lvl = idx / 64;
		uint64_t gran = 1ull << (3 * lvl);
		CHECK(pw__after_eq(be, e));                 /* never early */
		CHECK(be - e <= gran);                       /* at most one granule */
		CHECK(be - clk < 64 * gran);                 /* within the level window */
		if (lvl > 0)
			CHECK(gran * 63 <= 8 * delta);       /* gran <= 8/63 of the delay */
		CHECK_EQ(idx % 64, (be >> (3 * lvl)) & 63);
	}
}

static void test_past_and_clamp(void)
{
	uint64_t be;
	pw__wheel_init(&w, 1000, 1000);
	CHECK_EQ(pw__wheel_calc_index(&w, 900, &be), 1000 % 64);
	CHECK_EQ(be, 1000);
	unsigned idx = pw__wheel_calc_index(&w, 1000 + (1ull << 50), &be);
	CHECK_EQ(idx / 64, 8);
	CHECK(be <= 1000 + w.cutoff);
	CHECK(be > 1000 + w.timeout_max - (1ull << 24));
}

static void test_next_expiry_and_collect(void)
{
	static struct pw_timer t[100];
	struct pw_timer *heads[PW_WHEEL_LVL_MAX];
	unsigned idxs[PW_WHEEL_LVL_MAX];

	pw__wheel_init(&w, 1000, 0);
	CHECK(!pw__wheel_has_buckets(&w));
	for (int i = 0; i < 100; i++) {
		tinit(&t[i], 10 + (uint64_t)i * 13);
		pw__wheel_add(&w, &t[i]);
		CHECK_EQ(check_wheel(), 0);
	}
	CHECK_EQ(w.count, 100);
	CHECK_EQ(pw__wheel_next_expiry(&w), 11);
	pw__wheel_detach(&w, &t[0]);
	CHECK(w.recalc);
	CHECK_EQ(check_wheel(), 0);
	CHECK_EQ(pw__wheel_next_expiry(&w), 24);

	/* run everything in order: each collected timer is due, never early */
	uint64_t last = 0;
	unsigned seen = 0;
	while (pw__wheel_has_buckets(&w)) {
		uint64_t at = pw__wheel_next_expiry(&w);
		CHECK(at >= last);
		last = at;
		unsigned n = pw__wheel_collect(&w, heads, idxs);
		CHECK(n >= 1);
		CHECK_EQ(w.clk, at + 1);
		for (unsigned l = 0; l < n; l++)
			while (heads[l]) {
				struct pw_timer *x = heads[l];
				CHECK(x->expires <= at);
				CHECK(at - x->expires <= 512); /* delays < 1.3 s: level <= 2 */
				pw__wheel_detach(&w, x);
				seen++;
			}
		CHECK_EQ(check_wheel(), 0);
	}
	CHECK_EQ(seen, 99);
	CHECK_EQ(w.count, 0);
}

static void test_forward(void)
{
	struct pw_timer t;
	pw__wheel_init(&w, 1000, 100);
	pw__wheel_forward(&w, 5000); /* empty: jump to now */
	CHECK_EQ(w.clk, 5000);
	tinit(&t, 5100);
	pw__wheel_add(&w, &t);
	pw__wheel_forward(&w, 9000); /* never past the next expiry */
	CHECK_EQ(w.clk, 5104);      /* level 1 bucket of 5100 */
	pw__wheel_forward(&w, 100); /* never backwards */
	CHECK_EQ(w.clk, 5104);
	CHECK_EQ(check_wheel(), 0);
}

static void test_wrap(void)
{
	static struct pw_timer t[300];
	struct pw_timer *heads[PW_WHEEL_LVL_MAX];
	unsigned idxs[PW_WHEEL_LVL_MAX];
	uint64_t clk0 = UINT64_MAX - 1000;

	pw__wheel_init(&w, 1000, clk0);
	for (int i = 0; i < 300; i++) {
		tinit(&t[i], clk0 + (uint64_t)i * 11);
		pw__wheel_add(&w, &t[i]);
	}
	CHECK_EQ(check_wheel(), 0);
	unsigned seen = 0;
	uint64_t prev = clk0;
	while (pw__wheel_has_buckets(&w)) {
		uint64_t at = pw__wheel_next_expiry(&w);
		CHECK(pw__after_eq(at, prev));
		prev = at;
		unsigned n = pw__wheel_collect(&w, heads, idxs);
		for (unsigned l = 0; l < n; l++)
			while (heads[l]) {
				CHECK(pw__after_eq(at, heads[l]->expires));
				pw__wheel_detach(&w, heads[l]);
				seen++;
			}
		CHECK_EQ(check_wheel(), 0);
	}
	CHECK_EQ(seen, 300);
	CHECK(w.clk < 10000); /* wrapped */
}

static void test_checker_catches_corruption(void)
{
	static struct pw_timer t[10];
	pw__wheel_init(&w, 1000, 0);
	for (int i = 0; i < 10; i++) {
		tinit(&t[i], 100 + (uint64_t)i * 100);
		pw__wheel_add(&w, &t[i]);
	}
	CHECK_EQ(check_wheel(), 0);
	fprintf(stderr, "(the next messages are expected)\n");

	w.pending_map[0] ^= 1; /* a bit for an empty bucket */
	CHECK_EQ(check_wheel(), -EFAULT);
	w.pending_map[0] ^= 1;
	CHECK_EQ(check_wheel(), 0);

	t[3].pw_idx ^= 1; /* wrong bucket in the timer's index */
	CHECK_EQ(check_wheel(), -EFAULT);
	t[3].pw_idx ^= 1;

	w.count++;
	CHECK_EQ(check_wheel(), -EFAULT);
	w.count--;

	uint64_t e = t[5].expires;
	t[5].expires = e + 5000; /* would make the timer early */
	CHECK_EQ(check_wheel(), -EFAULT);
	t[5].expires = e;

	uint64_t ne = w.next_expiry;
	w.next_expiry = ne + 1; /* cached next expiry later than the truth */
	w.recalc = false;
	CHECK_EQ(check_wheel(), -EFAULT);
	w.next_expiry = ne;

	CHECK_EQ(pw__wheel_check(&w, NULL, NULL, 0, PW__TF_CPU_MASK, 3, "test"), -EFAULT);
	CHECK_EQ(check_wheel(), 0);
}

int main(void)
{
	RUN(test_levels);
	RUN(test_rounding_random);
	RUN(test_past_and_clamp);
	RUN(test_next_expiry_and_collect);
	RUN(test_forward);
	RUN(test_wrap);
	RUN(test_checker_catches_corruption);
	return 0;
}
