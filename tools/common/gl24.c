/* SPDX-License-Identifier: MIT */
/*
 * Reference design: the Linux 2.4 timer subsystem as seed 001 found it.
 * One cascading wheel (a 256-slot first vector and four of 64, timers
 * cascaded down a level as time reaches them, the clock stepped one tick
 * at a time) behind one global lock (timerlist_lock), and no mod_timer
 * fast path: every re-arm takes the lock, detaches and re-adds.  Written
 * here from the design, for comparison only; not part of the library.
 * pinwheel-bench runs it through its ops table (bench/impl_global_lock.c
 * adapts gl24_ops) and in its scaling run; pinwheel-lab seed001 runs the
 * multi-thread table as its configuration (a), under its profiler, which
 * names these functions (gl_mod_timer inlined into mt_rearm, internal_add,
 * cascade, gl_run, mt_poll): keep them in this one file.
 *
 * Owns: the one wheel and its lock, the timers (one array), the callback
 * counter (gl24_fired) and the random stream of its initial arms.
 * Threads: the single-thread calls on one thread; the multi-thread table
 * from each worker's thread (struct mt_impl).  Locks: gl.lock, a pthread
 * spin lock, around every arm, delete and the run (dropped around each
 * callback).  Costs: an arm O(1) under the lock; a run O(1) per tick
 * stepped plus a cascade of one slot every 256 ticks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "gl24.h"
#include "burst.h"
#include "now.h"

uint64_t gl24_fired;

/* The design's own random stream (xorshift64*), the default source of
 * its random arms.  Context: the thread that runs setup. */
static uint64_t own_rng = 0x9e3779b97f4a7c15ull;

static uint64_t own_rand(void)
{
	own_rng ^= own_rng >> 12;
	own_rng ^= own_rng << 25;
	own_rng ^= own_rng >> 27;
	return own_rng * 0x2545f4914f6cdd1dull;
}

static uint64_t (*rand_fn)(void) = own_rand;

void gl24_set_rand(uint64_t (*rand)(void))
{
	rand_fn = rand ? rand : own_rand;
}

#define TVR_BITS 8
#define TVN_BITS 6
#define TVR_SIZE (1u << TVR_BITS)
#define TVN_SIZE (1u << TVN_BITS)

struct gl_link {
	struct gl_link *next, *prev;
};

struct gl_timer {
	struct gl_link link; /* next == NULL: not pending */
	uint64_t expires;
	void (*fn)(struct gl_timer *);
};

static struct {
	pthread_spinlock_t lock; /* timerlist_lock */
	uint64_t timer_jiffies;
	unsigned idx[5];
	struct gl_link tv1[TVR_SIZE];
	struct gl_link tvn[4][TVN_SIZE];
} gl;

static struct gl_timer *tm;
static unsigned count;
static enum pw_clock_id clk;
static uint64_t sim_j;

static void list_init(struct gl_link *h)
{
	h->next = h->prev = h;
}

static void list_add_tail(struct gl_link *n, struct gl_link *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static void list_del(struct gl_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = NULL;
}

/* Context: gl.lock held. */
static void internal_add(struct gl_timer *t)
{
	uint64_t e = t->expires, d = e - gl.timer_jiffies;
	struct gl_link *vec;
	if ((int64_t)d < 0)
		vec = &gl.tv1[gl.timer_jiffies & (TVR_SIZE - 1)];
	else if (d < TVR_SIZE)
		vec = &gl.tv1[e & (TVR_SIZE - 1)];
	else if (d < 1ull << (TVR_BITS + TVN_BITS))
		vec = &gl.tvn[0][(e >> TVR_BITS) & (TVN_SIZE - 1)];
	else if (d < 1ull << (TVR_BITS + 2 * TVN_BITS))
		vec = &gl.tvn[1][(e >> (TVR_BITS + TVN_BITS)) & (TVN_SIZE - 1)];
	else if (d < 1ull << (TVR_BITS + 3 * TVN_BITS))
		vec = &gl.tvn[2][(e >> (TVR_BITS + 2 * TVN_BITS)) & (TVN_SIZE - 1)];
	else
		vec = &gl.tvn[3][(e >> (TVR_BITS + 3 * TVN_BITS)) & (TVN_SIZE - 1)];
	list_add_tail(&t->link, vec);
}

static int gl_mod_timer(struct gl_timer *t, uint64_t expires)
{
	pthread_spin_lock(&gl.lock);
	int ret = t->link.next != NULL;
	t->expires = expires;
	if (ret)
		list_del(&t->link);
	internal_add(t);
	pthread_spin_unlock(&gl.lock);
	return ret;
}

static int gl_del_timer(struct gl_timer *t)
{
	pthread_spin_lock(&gl.lock);
	int ret = t->link.next != NULL;
	if (ret)
		list_del(&t->link);
	pthread_spin_unlock(&gl.lock);
	return ret;
}

/* Context: gl.lock held.  Re-add every timer of vector @n's current slot.
 * The slot is emptied onto a local list first: a timer armed while
 * timer_jiffies lagged far behind the clock (a long run of due ticks) can
 * map to the very slot being cascaded, and re-adding it there while walking
 * that list would walk it forever (found when the benchmark hung at 1e6
 * timers on a loaded machine). */
static void cascade(unsigned n)
{
	struct gl_link *head = &gl.tvn[n][gl.idx[n + 1]], local;
	if (head->next == head) {
		list_init(&local);
	} else {
		local.next = head->next;
		local.prev = head->prev;
		local.next->prev = &local;
		local.prev->next = &local;
		list_init(head);
	}
	gl.idx[n + 1] = (gl.idx[n + 1] + 1) & (TVN_SIZE - 1);
	while (local.next != &local) {
		struct gl_link *c = local.next;
		list_del(c);
		internal_add((struct gl_timer *)c);
	}
}

static uint64_t gl_run(uint64_t jnow)
{
	uint64_t n = 0;
	pthread_spin_lock(&gl.lock);
	while ((int64_t)(jnow - gl.timer_jiffies) >= 0) {
		if (!gl.idx[0]) {
			unsigned lvl = 0;
			do
				cascade(lvl);
			while (gl.idx[lvl + 1] == 1 && ++lvl < 4);
		}
		struct gl_link *head = &gl.tv1[gl.idx[0]];
		while (head->next != head) {
			struct gl_timer *t = (struct gl_timer *)head->next;
			list_del(&t->link);
			pthread_spin_unlock(&gl.lock);
			t->fn(t);
			n++;
			pthread_spin_lock(&gl.lock);
		}
		gl.timer_jiffies++;
		gl.idx[0] = (gl.idx[0] + 1) & (TVR_SIZE - 1);
	}
	pthread_spin_unlock(&gl.lock);
	return n;
}

static void cb(struct gl_timer *t)
{
	(void)t;
	gl24_fired++;
}

static uint64_t now_j(void)
{
	return clk == PW_CLOCK_SIM ? sim_j : now_ns() / 1000000;
}

static int setup(unsigned n, enum pw_clock_id clock)
{
	clk = clock;
	sim_j = 10000;
	pthread_spin_init(&gl.lock, PTHREAD_PROCESS_PRIVATE);
	gl.timer_jiffies = now_j();
	for (unsigned i = 0; i < TVR_SIZE; i++)
		list_init(&gl.tv1[i]);
	for (unsigned v = 0; v < 4; v++)
		for (unsigned i = 0; i < TVN_SIZE; i++)
			list_init(&gl.tvn[v][i]);
	/* the vector indexes follow timer_jiffies, as 2.4's did from boot */
	gl.idx[0] = gl.timer_jiffies & (TVR_SIZE - 1);
	for (unsigned v = 0; v < 4; v++)
		gl.idx[v + 1] = (unsigned)((gl.timer_jiffies >> (TVR_BITS + v * TVN_BITS)) + 1) &
				(TVN_SIZE - 1);
	tm = calloc(n, sizeof(*tm));
	if (!tm)
		return -ENOMEM;
	count = n;
	uint64_t j = now_j();
	for (unsigned i = 0; i < n; i++) {
		tm[i].fn = cb;
		gl_mod_timer(&tm[i], j + 1000 + rand_fn() % 9000);
	}
	return 0;
}

static uint64_t poll_due(void)
{
	return gl_run(now_j());
}

static void rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++)
		gl_mod_timer(&tm[idx[k]], jn + delta[k]);
}

/* The bench's rearm_burst workload, through the loop every design runs
 * (burst.h): the caller's prefetch of these timers, then gl_mod_timer(). */
#define GL_OBJ(k) (&tm[k])
static const void *obj(unsigned k)
{
	return GL_OBJ(k);
}
#define GL_ARM(k, jn, d) gl_mod_timer(&tm[k], (jn) + (d))
static void rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			unsigned burst, unsigned prefetch)
{
	HARNESS_REARM_BURST(idx, delta, n, jn, burst, prefetch, GL_OBJ, sizeof(struct gl_timer),
			    GL_ARM);
}

static void rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1)
		gl_mod_timer(&tm[first], tm[first].expires);
}

static void cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++) {
		gl_del_timer(&tm[idx[k]]);
		gl_mod_timer(&tm[idx[k]], jn + delta[k]);
	}
}

static uint64_t expire_round(unsigned n, uint64_t window_j, double *ns)
{
	uint64_t before = gl24_fired;
	for (unsigned i = 0; i < n; i++)
		gl_mod_timer(&tm[i], sim_j + 1 + rand_fn() % window_j);
	uint64_t t0 = now_ns();
	sim_j += window_j + 1;
	gl_run(sim_j);
	*ns = (double)(now_ns() - t0);
	return gl24_fired - before;
}

static void arm(unsigned k, uint64_t expires_j)
{
	gl_mod_timer(&tm[k], expires_j);
}

static void cancel(unsigned k)
{
	gl_del_timer(&tm[k]);
}

static size_t extra(unsigned n)
{
	(void)n;
	return 0;
}

static void teardown(void)
{
	pthread_spin_destroy(&gl.lock);
	free(tm);
	tm = NULL;
}

const struct gl24_ops gl24_ops = {
	setup, now_j, poll_due, rearm, rearm_same, cancel_add, expire_round,
	arm, cancel, sizeof(struct gl_timer), extra, teardown, rearm_burst, obj,
};

/* ---- the multi-thread table (scaling): every worker's timers in the one
 * wheel behind the one lock, as every CPU's were in 2.4 ------------------ */

static unsigned mt_per;

static int mt_setup(unsigned workers, unsigned per_worker)
{
	mt_per = per_worker;
	return setup(workers * per_worker, PW_CLOCK_MONOTONIC);
}

static int mt_enter(unsigned w)
{
	(void)w;
	return 0;
}

static void mt_rearm(unsigned w, const unsigned *idx, const uint64_t *delta, size_t n)
{
	uint64_t jn = now_j();
	struct gl_timer *mine = &tm[(size_t)w * mt_per];
	for (size_t k = 0; k < n; k++)
		gl_mod_timer(&mine[idx[k]], jn + delta[k]);
}

static void mt_poll(unsigned w)
{
	(void)w;
	gl_run(now_j());
}

static void mt_leave(unsigned w)
{
	(void)w;
}

static const struct mt_impl mt_global_lock = {
	"global-lock", mt_setup, mt_enter, mt_rearm, mt_poll, mt_leave, teardown,
};

const struct mt_impl *gl24_mt_impl(void)
{
	return &mt_global_lock;
}
