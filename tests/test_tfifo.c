/* SPDX-License-Identifier: MIT */
/*
 * netem's time-ordered queue (src/net/sched/tfifo.c) against a dumb
 * reference, operation by operation, with pw__tfifo_check() after each.
 *
 * The reference is the kernel's tfifo written the slow, obvious way: the
 * in-order list as an array (a packet not earlier than the tail's time
 * goes to its end), the out-of-order packets as an array kept sorted by
 * time with a new packet after every equal time (tfifo_enqueue()'s rbtree
 * insert), netem_peek() choosing the list's head unless the array's first
 * is strictly earlier, tfifo_reset() freeing the array in order and then
 * the list.  Each step also checks that the packet the reference peeks is
 * the least by (time, arrival) of all queued: the order the essay proves.
 *
 * Workloads (each run draws one per phase): netem-like delays around a
 * moving clock with uniform or table-like jitter, many equal times, a
 * clock that goes back and forth, times far in the future, 0 and near
 * UINT64_MAX, with dequeues of what is due, of the first regardless of
 * time, bursts of both, span changes with packets queued (the calendar's
 * width changes: its packets move to the overflow heap), and flushes (the
 * reset order).  The calendar sizes range from the smallest (64 buckets,
 * so that its span overflows often) to 65536.  Packets are malloc'd and
 * freed when they leave, poisoned first, so that the prefetch cursor
 * reading a packet that left shows under ASan (and as a check failure
 * otherwise).
 *
 * PW_SEED=n replays a run; PW_TFIFO_OPS=n sets the operation count.
 * Then the checker is shown to catch broken structures.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"
#include "sched/tfifo.h"

enum { MAXQ = 6000 };

/* ------------------------------------------------------- the reference */

struct ref {
	struct pw_pkt *list[MAXQ];
	unsigned ln;
	struct pw_pkt *ooo[MAXQ]; /* sorted by time, FIFO among equal times */
	unsigned on;
	uint64_t seq;
};

static struct ref R;

static void ref_enqueue(struct pw_pkt *p)
{
	uint64_t t = p->pw_time_to_send;
	if (!R.ln || t >= R.list[R.ln - 1]->pw_time_to_send) {
		R.list[R.ln++] = p;
		return;
	}
	unsigned k = R.on;
	while (k && R.ooo[k - 1]->pw_time_to_send > t) {
		R.ooo[k] = R.ooo[k - 1];
		k--;
	}
	R.ooo[k] = p;
	R.on++;
}

/* netem_peek() */
static struct pw_pkt *ref_peek(void)
{
	if (!R.on)
		return R.ln ? R.list[0] : NULL;
	if (!R.ln)
		return R.ooo[0];
	return R.ooo[0]->pw_time_to_send < R.list[0]->pw_time_to_send ? R.ooo[0] : R.list[0];
}

static void ref_remove(struct pw_pkt *p)
{
	struct pw_pkt **a = R.ln && R.list[0] == p ? R.list : R.ooo;
	unsigned *n = a == R.list ? &R.ln : &R.on;
	CHECK(*n && a[0] == p);
	memmove(a, a + 1, (*n - 1) * sizeof(*a));
	(*n)--;
}

/* tfifo_reset(): the rbtree in order, then the list */
static struct pw_pkt *ref_flush_one(void)
{
	struct pw_pkt *p = R.on ? R.ooo[0] : R.ln ? R.list[0] : NULL;
	if (p)
		ref_remove(p);
	return p;
}

static bool ref_last(uint64_t *t)
{
	bool have = false;
	for (unsigned k = 0; k < R.ln; k++)
		if (!have || R.list[k]->pw_time_to_send > *t)
			*t = R.list[k]->pw_time_to_send, have = true;
	for (unsigned k = 0; k < R.on; k++)
		if (!have || R.ooo[k]->pw_time_to_send > *t)
			*t = R.ooo[k]->pw_time_to_send, have = true;
	return have;
}

/* The least of all queued by (time, arrival): what the order promises. */
static struct pw_pkt *ref_least(void)
{
	struct pw_pkt *m = NULL;
	for (unsigned k = 0; k < R.ln; k++)
		if (!m || pw__tfifo_before(R.list[k], m))
			m = R.list[k];
	for (unsigned k = 0; k < R.on; k++)
		if (!m || pw__tfifo_before(R.ooo[k], m))
			m = R.ooo[k];
	return m;
}

/* ----------------------------------------------------------- the runs */

static struct pw__tfifo tf;
static uint64_t now;

static void leave(struct pw_pkt *p)
{
	memset(p, 0xa5, sizeof(*p)); /* a cursor that reads it finds garbage */
	free(p);
}

static void check_all(const char *what)
{
	if (pw__tfifo_check(&tf, what)) {
		fprintf(stderr, "tfifo check failed after %s\n", what);
		abort();
	}
	CHECK_EQ(pw__tfifo_count(&tf), R.ln + R.on);
	uint64_t a = 0, b = 0;
	bool ha = pw__tfifo_last_ns(&tf, &a), hb = ref_last(&b);
	CHECK_EQ(ha, hb);
	if (ha)
		CHECK_EQ(a, b);
}

static void expect_peek(void)
{
	struct pw_pkt *p = pw__tfifo_peek(&tf), *r = ref_peek();
	if (p != r) {
		fprintf(stderr, "peek: tfifo %p (time %llu seq %llu), reference %p (time %llu seq %llu)\n",
			(void *)p, p ? (unsigned long long)p->pw_time_to_send : 0ull,
			p ? (unsigned long long)p->pw_seq : 0ull, (void *)r,
			r ? (unsigned long long)r->pw_time_to_send : 0ull,
			r ? (unsigned long long)r->pw_seq : 0ull);
		abort();
	}
	CHECK(r == ref_least());
}

static void do_dequeue(void)
{
	expect_peek();
	struct pw_pkt *p = pw__tfifo_peek(&tf);
	if (!p)
		return;
	pw__tfifo_erase_head(&tf, p);
	CHECK(!p->pw_next && !p->pw_left && !p->pw_right);
	ref_remove(p);
	leave(p);
}

static void do_flush(void)
{
	struct pw_pkt *p;
	while ((p = pw__tfifo_flush_one(&tf))) {
		CHECK(p == ref_flush_one());
		leave(p);
	}
	CHECK(!ref_flush_one());
	check_all("flush");
}

/* The workloads: how a packet's time is drawn. */
enum { W_UNIFORM, W_TABLE, W_TIES, W_BACK, W_WILD, W_N };

static uint64_t add_clamp(uint64_t a, int64_t d)
{
	if (d < 0)
		return (uint64_t)(-(d + 1)) + 1 > a ? 0 : a - ((uint64_t)(-(d + 1)) + 1);
	return a + (uint64_t)d > a ? a + (uint64_t)d : UINT64_MAX;
}

static uint64_t draw_time(int w, int64_t lat, int64_t jit)
{
	switch (w) {
	case W_UNIFORM: /* netem's uniform jitter */
		return add_clamp(now, lat - jit + (int64_t)rnd_below(2 * (uint64_t)jit + 1));
	case W_TABLE: { /* a table: a few values of up to 4 sigma */
		static const int q[] = { -4, -2, -1, 0, 0, 0, 1, 1, 2, 3 };
		return add_clamp(now, lat + q[rnd_below(10)] * jit +
					      (rnd_below(4) == 0 ? (int64_t)rnd_below(100) : 0));
	}
	case W_TIES: /* few distinct times */
		return (now / 1000 + rnd_below(5)) * 1000;
	case W_BACK: /* the clock also goes back; delays around it */
		return add_clamp(now, (int64_t)rnd_below(3 * (uint64_t)jit + 1) - jit);
	default: /* anything */
		switch (rnd_below(8)) {
		case 0:
			return 0;
		case 1:
			return UINT64_MAX - rnd_below(3);
		case 2:
			return now + (rnd() >> 8);
		case 3:
			return rnd();
		default:
			return add_clamp(now, lat - jit + (int64_t)rnd_below(2 * (uint64_t)jit + 1));
		}
	}
}

static void run(uint64_t seed, uint64_t ops)
{
	rng_state = seed;
	static const uint32_t sizes[] = { 64, 100, 1024, 65536 };
	static const uint64_t spans[] = { 0, 1, 999, 100000, 10000000, 3000000000ull,
					  UINT64_MAX };
	uint32_t nb = sizes[rnd_below(4)];
	CHECK_EQ(pw__tfifo_init(&tf, nb), 0);
	memset(&R, 0, sizeof(R));
	now = rnd_below(4) == 0 ? rnd() : 1000000000ull;
	int w = (int)rnd_below(W_N);
	int64_t lat = (int64_t)rnd_below(20000000), jit = 1 + (int64_t)rnd_below(5000000);
	pw__tfifo_set_span(&tf, (uint64_t)(lat + 4 * jit));
	unsigned target = 1 + (unsigned)rnd_below(MAXQ - 10); /* packets kept queued */
	uint64_t enq = 0, deq = 0, moves = 0, in_heap = 0, cursor = 0;
	for (uint64_t op = 0; op < ops; op++) {
		unsigned r = (unsigned)rnd_below(1000);
		if (r < 3) { /* a new phase */
			w = (int)rnd_below(W_N);
			lat = (int64_t)rnd_below(20000000);
			jit = 1 + (int64_t)rnd_below(rnd_below(2) ? 5000 : 5000000);
			target = 1 + (unsigned)rnd_below(MAXQ - 10);
		} else if (r == 3) { /* tc change: the span, with packets queued */
			uint32_t before = tf.cal_count;
			pw__tfifo_set_span(&tf, rnd_below(2) ? spans[rnd_below(7)]
							    : (uint64_t)(lat + 4 * jit));
			moves += before && !tf.cal_count;
			check_all("set_span");
		} else if (r == 4) {
			do_flush();
		} else if (r < 12) { /* a burst of dequeues regardless of time */
			for (unsigned k = (unsigned)rnd_below(50); k; k--)
				do_dequeue();
		} else if (r < 500 && R.ln + R.on < MAXQ - 1 &&
			   (R.ln + R.on < target || rnd_below(2))) {
			struct pw_pkt *p = calloc(1, sizeof(*p));
			CHECK(p);
			p->pw_time_to_send = draw_time(w, lat, jit);
			pw__tfifo_enqueue(&tf, p);
			CHECK_EQ(p->pw_seq, R.seq);
			R.seq++;
			ref_enqueue(p);
			enq++;
		} else if (r < 800) { /* the clock moves */
			if (w == W_BACK && rnd_below(3) == 0)
				now -= rnd_below(now < (uint64_t)jit ? now + 1 : (uint64_t)jit);
			else
				now += rnd_below(1 + (uint64_t)(2 * jit) / (1 + target / 16));
		} else { /* netem's dequeue: what is due */
			expect_peek();
			struct pw_pkt *p;
			while ((p = pw__tfifo_peek(&tf)) && p->pw_time_to_send <= now) {
				do_dequeue();
				deq++;
			}
		}
		expect_peek();
		if (op % 7 == 0 || R.ln + R.on < 50)
			check_all("step");
		in_heap += tf.heap_count != 0;
		for (unsigned k = 0; k < PW_TFIFO_CURSORS; k++)
			cursor += tf.pf[k].p && tf.pf[k].b > tf.cur;
	}
	do_flush();
	nb = tf.nb;
	pw__tfifo_destroy(&tf);
	printf("  %u buckets: %llu enqueued, %llu dequeued when due, %llu span changes moved "
	       "packets; steps with a heap %llu, cursor steps on a packet %llu\n", nb,
	       (unsigned long long)enq, (unsigned long long)deq, (unsigned long long)moves,
	       (unsigned long long)in_heap, (unsigned long long)cursor);
}

static void test_random(void)
{
	uint64_t ops, seed = rng_seed_and_ops("PW_TFIFO_OPS", 400000, &ops);
	for (int k = 0; k < 8; k++)
		run(seed + (uint64_t)k, ops / 8);
}

/* netem's steady state: constant delay plus jitter, every packet due
 * leaving, long enough for the calendar to wrap many times. */
static void test_steady(void)
{
	rng_state = 77;
	CHECK_EQ(pw__tfifo_init(&tf, 4096), 0);
	memset(&R, 0, sizeof(R));
	pw__tfifo_set_span(&tf, 10000000 + 4 * 2000000);
	now = 1000000000ull;
	for (int i = 0; i < 400000; i++) {
		struct pw_pkt *p = calloc(1, sizeof(*p));
		CHECK(p);
		p->pw_time_to_send = draw_time(i % 3 ? W_TABLE : W_UNIFORM, 10000000, 2000000);
		pw__tfifo_enqueue(&tf, p);
		R.seq++;
		ref_enqueue(p);
		now += 2500; /* 4000 in flight */
		struct pw_pkt *q;
		while ((q = pw__tfifo_peek(&tf)) && q->pw_time_to_send <= now)
			do_dequeue();
		if (i % 1000 == 0)
			check_all("steady");
	}
	CHECK(tf.cal_count > 1000);
	CHECK(tf.heap_count == 0);
	do_flush();
	pw__tfifo_destroy(&tf);
}

static struct pw_pkt *add(uint64_t t)
{
	struct pw_pkt *p = calloc(1, sizeof(*p));
	CHECK(p);
	p->pw_time_to_send = t;
	pw__tfifo_enqueue(&tf, p);
	return p;
}

static void test_checker_catches_corruption(void)
{
	CHECK_EQ(pw__tfifo_init(&tf, 64), 0);
	pw__tfifo_set_span(&tf, 64000); /* 1 us buckets */
	add(100000);
	for (int i = 0; i < 40; i++)
		add(50000 + (uint64_t)(i * 997) % 40000);
	add(0); /* too far back for the calendar: the heap */
	add(1);
	add(60000); /* waits in pend */
	CHECK_EQ(pw__tfifo_check(&tf, "test"), 0);
	CHECK(tf.cal_count > 30 && tf.heap_count == 2 && tf.pend);
	fprintf(stderr, "(the next messages are expected)\n");

	struct pw_pkt *first = pw__tfifo_cal_first(&tf);
	uint64_t t = first->pw_time_to_send;
	first->pw_time_to_send = t + 64000; /* in the wrong bucket */
	CHECK_EQ(pw__tfifo_check(&tf, "test"), -EFAULT);
	first->pw_time_to_send = t;

	uint32_t i = (uint32_t)(tf.cur & (tf.nb - 1));
	tf.l0[i >> 6] ^= 1ull << (i & 63); /* a non-empty bucket's bit clear */
	CHECK_EQ(pw__tfifo_check(&tf, "test"), -EFAULT);
	tf.l0[i >> 6] ^= 1ull << (i & 63);

	tf.cal_max++; /* a wrong latest */
	CHECK_EQ(pw__tfifo_check(&tf, "test"), -EFAULT);
	tf.cal_max--;

	tf.root->pw_left->pw_time_to_send = 0; /* heap child before its parent? equal */
	tf.root->pw_left->pw_seq = 0;
	CHECK_EQ(pw__tfifo_check(&tf, "test"), -EFAULT);
	tf.root->pw_left->pw_time_to_send = 1;
	tf.root->pw_left->pw_seq = tf.seq - 2;

	tf.tail->pw_time_to_send = 10; /* the tail's time not remembered */
	CHECK_EQ(pw__tfifo_check(&tf, "test"), -EFAULT);
	tf.tail_ns = 10; /* out-of-order packets after the tail */
	CHECK_EQ(pw__tfifo_check(&tf, "test"), -EFAULT);
	tf.tail->pw_time_to_send = tf.tail_ns = 100000;

	CHECK_EQ(pw__tfifo_check(&tf, "test"), 0);
	struct pw_pkt *p;
	uint64_t last = 0;
	unsigned n = 0;
	while ((p = pw__tfifo_flush_one(&tf))) {
		CHECK(n == 0 || p->pw_time_to_send >= last);
		last = p->pw_time_to_send;
		n++;
		free(p);
	}
	CHECK_EQ(n, 44);
	pw__tfifo_destroy(&tf);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	RUN(test_random);
	RUN(test_steady);
	RUN(test_checker_catches_corruption);
	return 0;
}
