/* SPDX-License-Identifier: MIT */
/*
 * tools/common/epoll_sleep.h: the timeout a worker asks epoll for, so
 * that the kernel's poll slack ends at its deadline and not later.
 * Pure arithmetic (the kernel's slack formula applied to the shortened
 * timeout), then one real sleep on an empty epoll set that must return
 * no event and not before the shortened timeout (a bound, not a timing).
 * Single thread; no locks.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "epoll_sleep.h"
#include "now.h"
#include "check.h"

/* The kernel's slack for a relative timeout of @t ns (fs/select.c's
 * estimate, with a 1 ns thread timer slack as the workers set). */
static uint64_t kslack(uint64_t t, unsigned div)
{
	if (!div)
		return 0;
	uint64_t s = (t % 1000000000ull) / div + (t / 1000000000ull) * (1000000000ull / div);
	if (s > 100000000ull)
		s = 100000000ull;
	return s < 1 ? 1 : s;
}

static void test_timeout(void)
{
	static const unsigned divs[] = { 1000, 200 };
	for (unsigned k = 0; k < 2; k++) {
		struct epoll_slack s = { divs[k] };
		uint64_t below = 1000ull * divs[k]; /* slack under 1 us: as asked */
		for (uint64_t t = 0; t < below; t += 997)
			CHECK_EQ(epoll_slack_timeout(&s, t), t);
		for (uint64_t t = below; t < 10000000000ull; t = t * 21 / 20 + 13) {
			uint64_t a = epoll_slack_timeout(&s, t);
			CHECK(a < t);
			/* the range's end reaches the deadline, within 1 ns of
			 * rounding, and never past it by more than 2 ns */
			uint64_t end = a + kslack(a, divs[k]);
			CHECK(end + 1 >= t);
			CHECK(end <= t + 2);
		}
	}
	/* a real-time thread: the kernel gives no slack, nothing is taken off */
	struct epoll_slack rt = { 0 };
	CHECK_EQ(epoll_slack_timeout(&rt, 50000000ull), 50000000ull);
	/* 50 ms, nice 0: 49.95 ms asked, the slack (49.95 us) ends at 50 ms */
	struct epoll_slack n0 = { 1000 };
	CHECK_EQ(epoll_slack_timeout(&n0, 50000000ull), 49950050ull);
}

static void test_sleep(void)
{
	struct epoll_slack s;
	epoll_slack_init(&s);
	CHECK(s.div == 1000 || s.div == 200 || s.div == 0);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0);
	struct epoll_event ev[4];
	uint64_t t0 = now_ns();
	CHECK_EQ(epoll_sleep(ep, ev, 4, 5000000ull, &s), 0); /* nothing ready */
	CHECK(now_ns() - t0 >= epoll_slack_timeout(&s, 5000000ull));
	CHECK_EQ(epoll_sleep(ep, ev, 4, 0, &s), 0); /* 0: a look, no sleep */
	close(ep);
}

int main(void)
{
	RUN(test_timeout);
	RUN(test_sleep);
	return 0;
}
