/* SPDX-License-Identifier: MIT */
/*
 * seed003's skb cache lines (model_seed003_lines.h): which lines 3.17's
 * enqueue, dequeue, driver and completion touch, in how many dependent
 * steps, and what a line costs: 0 when the reading CPU wrote it last and it
 * is still cached, `line` when another CPU's cache holds it, `mem` once the
 * queued ACKs' footprint passes the cache (then whoever wrote it).  The
 * lines of one step are read together (their misses overlap), so a step
 * costs its slowest line.  S3_LINES_ONE is the model before (one line a
 * skb, by its builder, never cold), kept for --full's comparison row.
 *
 * Threads: any; no state, no locks.
 */
#include "model_seed003_lines.h"

int s3_lines_cold(const struct s3_lines *L, uint64_t queued)
{
	if (L->mode != S3_LINES_317)
		return 0;
	return queued * L->ack_lines * 64ull >= L->cache_bytes;
}

static double line_cost(const struct s3_lines *L, int w, unsigned c, int cold)
{
	if (w < 0)
		return 0;
	if (cold)
		return L->mem_ns;
	return (unsigned)w == c ? 0 : L->line_ns;
}

double s3_lines_step(const struct s3_lines *L, const int *w, unsigned n, unsigned c, int cold)
{
	double worst = 0;
	for (unsigned i = 0; i < n; i++) {
		double x = line_cost(L, w[i], c, cold);
		if (x > worst)
			worst = x;
	}
	return worst;
}

double s3_lines_enq(const struct s3_lines *L, int tail_l0, int tail_builder, unsigned c, int cold)
{
	if (L->mode == S3_LINES_ONE)
		return line_cost(L, tail_builder, c, 0);
	return s3_lines_step(L, &tail_l0, 1, c, cold);
}

double s3_lines_peek(const struct s3_lines *L, int head_l0, unsigned c, int cold)
{
	if (L->mode == S3_LINES_ONE)
		return 0;
	return s3_lines_step(L, &head_l0, 1, c, cold);
}

double s3_lines_deq(const struct s3_lines *L, int head_l0, int builder, int next_l0, unsigned c,
		    int cold)
{
	if (L->mode == S3_LINES_ONE)
		return line_cost(L, builder, c, 0);
	const int first[2] = {head_l0, builder};
	const int second[2] = {builder, next_l0};
	return s3_lines_step(L, first, 2, c, cold) + s3_lines_step(L, second, 2, c, cold);
}

double s3_lines_drv(const struct s3_lines *L, int builder, unsigned c, int cold)
{
	if (L->mode == S3_LINES_ONE)
		return 0;
	return s3_lines_step(L, &builder, 1, c, cold);
}

double s3_lines_free(const struct s3_lines *L, int l0, int builder, unsigned c, int cold)
{
	if (L->mode == S3_LINES_ONE)
		return 0;
	const int w[2] = {l0, builder};
	return s3_lines_step(L, w, 2, c, cold);
}
