/* SPDX-License-Identifier: MIT */
/*
 * seed003's skb cache lines: what a critical section of 3.17's transmit
 * path pays for the lines of the ACK skbs it touches (docs/lab.md, "seed003
 * with the skb's cache lines as 3.17 touches them", fixed before the run).
 * Pure functions of who wrote each line last, the reading CPU and whether
 * the queued ACKs still fit in the cache; model_seed003_tx.c charges them,
 * tests/lab/test_s3_lines.c checks them alone.  Depends on nothing of the
 * engine.
 *
 * Threads: any (no state, no locks).
 */
#ifndef PW_LAB_MODEL_SEED003_LINES_H
#define PW_LAB_MODEL_SEED003_LINES_H

#include <stdint.h>

enum s3_lines_mode {
	S3_LINES_ONE, /* the model before: one line a skb, never cold */
	S3_LINES_317, /* the lines 3.17's code touches, cold past the cache */
};

struct s3_lines {
	enum s3_lines_mode mode;
	double line_ns;       /* a line another core's cache holds (the table's line) */
	double mem_ns;        /* a line out of every cache (the table's mem) */
	uint64_t cache_bytes; /* the cache the queued ACKs must fit in */
	unsigned ack_lines;   /* lines one queued ACK keeps written */
};

#define S3_LINES_CACHE (16ull << 20) /* docs/benchmarks.md: the chase reaches memory */
#define S3_LINES_PER_ACK 8u          /* sk_buff 4, headers 2, shared info 2 */

/* Are the ACK skbs out of cache with @queued of them queued (in all the
 * netems)?  An LRU cache smaller than a FIFO's footprint evicts each head
 * before it is dequeued. */
int s3_lines_cold(const struct s3_lines *L, uint64_t queued);
/* One step of overlapping misses on CPU @c: its slowest line, line i last
 * written by CPU @w[i] (-1: not a line to pay for). */
double s3_lines_step(const struct s3_lines *L, const int *w, unsigned n, unsigned c, int cold);
/* The enqueue's append (under the root lock): the tail's first line, last
 * written by @tail_l0, built by @tail_builder; -1 when the queue is empty. */
double s3_lines_enq(const struct s3_lines *L, int tail_l0, int tail_builder, unsigned c, int cold);
/* The head's peek when it is not due: its first line. */
double s3_lines_peek(const struct s3_lines *L, int head_l0, unsigned c, int cold);
/* The dequeue (under the root lock): the head's first line (@head_l0) and
 * head/end line (@builder) together, then its shared info (@builder) and
 * the next skb's first line (@next_l0, -1 for none) together. */
double s3_lines_deq(const struct s3_lines *L, int head_l0, int builder, int next_l0, unsigned c,
		    int cold);
/* The driver (under the TX lock): the inlined header's line. */
double s3_lines_drv(const struct s3_lines *L, int builder, unsigned c, int cold);
/* The completion's free (no lock): the sk_buff's first line (@l0: the
 * dequeuer unlinked it) and its shared info (@builder). */
double s3_lines_free(const struct s3_lines *L, int l0, int builder, unsigned c, int cold);

#endif /* PW_LAB_MODEL_SEED003_LINES_H */
