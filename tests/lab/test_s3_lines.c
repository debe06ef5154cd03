/* SPDX-License-Identifier: MIT */
/*
 * test_s3_lines: seed003's skb cache lines (tools/lab/model/
 * model_seed003_lines.c) alone: deterministic, no threads, no clock.
 *
 *   - a dequeue of an skb another CPU built costs more than of one this CPU
 *     built, by two steps of `line` (the head's sk_buff lines together,
 *     then its shared info and the next skb together); a step costs its
 *     slowest line, not the sum;
 *   - the lines go cold when the queued ACKs' footprint reaches the cache,
 *     not one ACK before: then even this CPU's own lines cost `mem`, so the
 *     same dequeue costs more at a larger backlog;
 *   - the enqueue's tail line, the peek, the driver's header, the free;
 *   - S3_LINES_ONE is the model before: one line a skb by its builder,
 *     never cold, nothing in the driver or the free.
 */
#include <stdio.h>
#include <stdlib.h>

#include "model/model_seed003_lines.h"

#include "lab_check.h"

int main(void)
{
	const struct s3_lines L = {S3_LINES_317, 100, 140, S3_LINES_CACHE, S3_LINES_PER_ACK};
	/* 16 MB / (8 lines * 64 bytes): 32768 queued ACKs */
	const uint64_t edge = S3_LINES_CACHE / (S3_LINES_PER_ACK * 64);
	CHECK(edge == 32768, "edge %llu", (unsigned long long)edge);
	CHECK(!s3_lines_cold(&L, 0) && !s3_lines_cold(&L, edge - 1), "cold below the cache");
	CHECK(s3_lines_cold(&L, edge) && s3_lines_cold(&L, 10 * edge), "warm at the cache");

	/* CPU 0 dequeues: built by CPU 0 (the head's first line last written
	 * by CPU 0's previous unlink) vs built by CPU 5 */
	double own = s3_lines_deq(&L, 0, 0, 0, 0, 0);
	double foreign = s3_lines_deq(&L, 0, 5, 5, 0, 0);
	double mixed = s3_lines_deq(&L, 0, 0, 5, 0, 0); /* only the next skb's line */
	CHECK(own == 0, "own dequeue %.1f", own);
	CHECK(foreign == 200, "foreign dequeue %.1f (two steps of 100)", foreign);
	CHECK(mixed == 100, "one foreign line in the second step %.1f", mixed);
	CHECK(s3_lines_deq(&L, 5, 5, -1, 0, 0) == 200, "the last skb: no next line, two steps");

	/* the same dequeue at a backlog past the cache: every line from memory */
	int cold = s3_lines_cold(&L, 2 * edge);
	CHECK(s3_lines_deq(&L, 0, 0, 0, 0, cold) == 280, "own, cold %.1f",
	      s3_lines_deq(&L, 0, 0, 0, 0, cold));
	CHECK(s3_lines_deq(&L, 0, 5, 5, 0, cold) == 280, "foreign, cold");
	CHECK(s3_lines_deq(&L, 0, 5, 5, 0, s3_lines_cold(&L, edge - 1)) <
		      s3_lines_deq(&L, 0, 5, 5, 0, s3_lines_cold(&L, edge)),
	      "a dequeue costs more past the cache");

	/* a step is its slowest line */
	const int w[3] = {0, 5, 7};
	CHECK(s3_lines_step(&L, w, 3, 0, 0) == 100, "step %.1f", s3_lines_step(&L, w, 3, 0, 0));
	const int none[2] = {-1, -1};
	CHECK(s3_lines_step(&L, none, 2, 0, 1) == 0, "no line to pay for");

	/* the enqueue, the peek, the driver, the free */
	CHECK(s3_lines_enq(&L, 3, 3, 3, 0) == 0 && s3_lines_enq(&L, 0, 3, 3, 0) == 100,
	      "the tail's first line: its last writer, not its builder");
	CHECK(s3_lines_peek(&L, 4, 0, 0) == 100 && s3_lines_peek(&L, 0, 0, 1) == 140, "peek");
	CHECK(s3_lines_drv(&L, 5, 0, 0) == 100 && s3_lines_drv(&L, 0, 0, 0) == 0, "driver");
	CHECK(s3_lines_free(&L, 0, 0, 2, 0) == 100 && s3_lines_free(&L, 2, 2, 2, 0) == 0, "free");

	/* the model before */
	const struct s3_lines one = {S3_LINES_ONE, 100, 140, 0, S3_LINES_PER_ACK};
	CHECK(!s3_lines_cold(&one, 1000000), "one: never cold");
	CHECK(s3_lines_deq(&one, 9, 5, 5, 0, 0) == 100 && s3_lines_deq(&one, 9, 0, 5, 0, 0) == 0,
	      "one: a line by the builder");
	CHECK(s3_lines_enq(&one, 0, 3, 0, 0) == 100, "one: the tail's builder");
	CHECK(s3_lines_peek(&one, 5, 0, 0) == 0 && s3_lines_drv(&one, 5, 0, 0) == 0 &&
		      s3_lines_free(&one, 5, 5, 0, 0) == 0,
	      "one: no peek, driver or free lines");

	if (fails)
		return 1;
	printf("test_s3_lines: ok\n");
	return 0;
}
