/* SPDX-License-Identifier: MIT */
/*
 * The hrtimer queue's 4-ary heap: random inserts and removals against a
 * dumb reference, every invariant checked; pops come out in (deadline,
 * start order); the checker catches a broken heap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../src/time/hrheap.h"
#include "check.h"

enum { N = 2000 };
static struct pw_hrtimer tm[N];
static int in[N];

static void test_random(void)
{
	struct pw__hheap h;
	unsigned live = 0;
	memset(&h, 0, sizeof(h));
	srand(4242);
	for (int step = 0; step < 80000; step++) {
		unsigned i = (unsigned)rand() % N;
		if (in[i]) {
			pw__hheap_remove(&h, &tm[i]);
			CHECK_EQ(tm[i].pw_idx, PW_HHEAP_NONE);
			in[i] = 0;
			live--;
		} else {
			tm[i].pw_expires = (uint64_t)(rand() % 300); /* many ties */
			CHECK_EQ(pw__hheap_reserve(&h), 0);
			pw__hheap_insert(&h, &tm[i]);
			in[i] = 1;
			live++;
		}
		CHECK_EQ(h.n, live);
		if (step % 53 == 0)
			CHECK_EQ(pw__hheap_check(&h, "test"), 0);
		/* the first is the minimum by (deadline, start order) */
		struct pw_hrtimer *f = pw__hheap_first(&h);
		for (unsigned k = 0; f && step % 211 == 0 && k < N; k++)
			if (in[k])
				CHECK(f->pw_expires < tm[k].pw_expires ||
				      (f->pw_expires == tm[k].pw_expires && f->pw_seq <= tm[k].pw_seq));
	}
	/* drain in order */
	uint64_t pk = 0, ps = 0;
	while (h.n) {
		struct pw_hrtimer *f = pw__hheap_first(&h);
		CHECK(f->pw_expires > pk || (f->pw_expires == pk && f->pw_seq > ps) || pk == 0);
		pk = f->pw_expires;
		ps = f->pw_seq;
		pw__hheap_remove(&h, f);
		in[f - tm] = 0;
		if (h.n % 97 == 0)
			CHECK_EQ(pw__hheap_check(&h, "test"), 0);
	}
	pw__hheap_free(&h);
}

static void test_checker_catches_corruption(void)
{
	struct pw__hheap h;
	memset(&h, 0, sizeof(h));
	for (unsigned i = 0; i < 50; i++) {
		tm[i].pw_expires = 1000 - i * 10;
		CHECK_EQ(pw__hheap_reserve(&h), 0);
		pw__hheap_insert(&h, &tm[i]);
	}
	CHECK_EQ(pw__hheap_check(&h, "test"), 0);
	fprintf(stderr, "(the next messages are expected)\n");
	struct pw_hrtimer *last = h.v[h.n - 1].t;
	uint64_t k = last->pw_expires;
	last->pw_expires = 0; /* key no longer matches the deadline */
	CHECK_EQ(pw__hheap_check(&h, "test"), -EFAULT);
	last->pw_expires = k;
	h.v[h.n - 1].key = 0;
	last->pw_expires = 0; /* now it sits below a larger parent */
	CHECK_EQ(pw__hheap_check(&h, "test"), -EFAULT);
	h.v[h.n - 1].key = k;
	last->pw_expires = k;
	last->pw_idx ^= 1;
	CHECK_EQ(pw__hheap_check(&h, "test"), -EFAULT);
	last->pw_idx ^= 1;
	CHECK_EQ(pw__hheap_check(&h, "test"), 0);
	pw__hheap_free(&h);
}

int main(void)
{
	RUN(test_random);
	RUN(test_checker_catches_corruption);
	return 0;
}
