/* SPDX-License-Identifier: MIT */
/*
 * test_mdl_lock: the model engine's simulated locks (tools/lab/model/
 * model.c) alone, on the simulated clock: deterministic, no threads.
 *
 *   - a lock held by CPU 0 makes CPU 1 and CPU 2, asking at the same time,
 *     wait in turn; each pays the hand-off from another CPU;
 *   - a ticket lock (3.17's x86 spin_lock()): CPU 2, spinning while the
 *     lock passes from CPU 0 to CPU 1, adds half a hand-off, charged to its
 *     own wait; CPU 1, who saw no hand-off between others while it spun,
 *     pays what it pays without the ticket; three waiters pay more than two;
 *   - the lock's counters: acquisitions, contended ones, the wait.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model/model.h"

#include "lab_check.h"

static void none(struct mdl *m, const struct mdl_ev *ev)
{
	(void)m;
	(void)ev;
}

/* CPUs 0..@n-1 ask for a lock at 0 for 1000 ns each; the end of each. */
static void contend(int ticket, unsigned n, uint64_t *end, uint64_t *wait_ns)
{
	struct mdl_costs costs;
	mdl_costs_default(&costs); /* handoff 200 */
	struct mdl m;
	if (mdl_init(&m, 4, 1000, 1, &costs, 0, 1000000000ull, none, NULL)) {
		fprintf(stderr, "mdl_init failed\n");
		exit(1);
	}
	struct mdl_lock l;
	mdl_lock_init(&l, "test");
	l.ticket = ticket;
	unsigned cat = mdl_cat(&m, "work"), spin = mdl_cat(&m, "spin");
	for (unsigned c = 0; c < n; c++)
		end[c] = mdl_locked(&m, c, &l, 1000, cat, spin);
	*wait_ns = l.wait_ns;
	CHECK(l.acq == n && l.contended == n - 1, "acq %llu contended %llu",
	      (unsigned long long)l.acq, (unsigned long long)l.contended);
	mdl_lock_fini(&l);
	mdl_fini(&m);
}

int main(void)
{
	uint64_t e[4], w, et[4], wt;
	contend(0, 3, e, &w);
	/* CPU 0 [0, 1000); CPU 1 1000 + 200 + 1000; CPU 2 2200 + 200 + 1000 */
	CHECK(e[0] == 1000 && e[1] == 2200 && e[2] == 3400, "plain: %llu %llu %llu",
	      (unsigned long long)e[0], (unsigned long long)e[1], (unsigned long long)e[2]);
	CHECK(w == 1000 + 2200, "plain wait %llu", (unsigned long long)w);
	contend(1, 3, et, &wt);
	/* CPU 2 spun over the hand-off 0 -> 1 (at 1000): + 100 */
	CHECK(et[0] == 1000 && et[1] == 2200 && et[2] == 3500, "ticket: %llu %llu %llu",
	      (unsigned long long)et[0], (unsigned long long)et[1], (unsigned long long)et[2]);
	CHECK(wt == w + 100, "ticket wait %llu (plain %llu)", (unsigned long long)wt,
	      (unsigned long long)w);
	/* four CPUs: CPU 3 spins over two hand-offs between others (+200),
	 * CPU 2 over one (+100) */
	contend(1, 4, et, &wt);
	CHECK(et[2] == 3500 && et[3] == 3500 + 200 + 200 + 1000, "ticket, 4: %llu %llu",
	      (unsigned long long)et[2], (unsigned long long)et[3]);
	contend(0, 4, e, &w);
	CHECK(e[3] == 3400 + 1200, "plain, 4: %llu", (unsigned long long)e[3]);
	if (fails)
		return 1;
	printf("test_mdl_lock: ok\n");
	return 0;
}
