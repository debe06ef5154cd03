/* SPDX-License-Identifier: MIT */
/*
 * A stream's tc stage (pinwheel's own toxic; the model is stream.c's
 * head): the head of its queue cut into pieces of at most TC_MTU bytes,
 * each sent to the stage's device as a packet through the connection's
 * send op while the stage's window has room, what a full qdisc refused
 * sent again first and in order; the device's answers
 * (stream_tc_back()): a piece back (the window grows), refused for a full
 * queue (sent again after TC_RESEND_NS, the window halves), or dropped for
 * good (cut: the caller resets the connection); the pieces that came back
 * moved on to the next queue in stream order.
 *
 * Threads: the owning worker only; no locks.
 */
#include <stdlib.h>

#include "stream.h"

#define NS_PER_MS 1000000ull

uint64_t stream__tc_run(struct stream *s, unsigned i, uint64_t now)
{
	struct stage *st = &s->st[i];
	struct chunkq *in = &s->q[i];
	int pass = !st->tc || !s->tc_ops || !st->active;
	if (pass && st->tc_resend) {
		/* no device any more for what waits to be sent again: it moves on */
		for (struct chunk *c = st->fl.head; c; c = c->next)
			if (c->b.user == TC_RESEND)
				c->b.user = TC_BACK;
		st->tc_resend = 0;
	}
	while (st->fl.head && st->fl.head->b.user == TC_BACK) {
		struct chunk *c = chunkq_pop(&st->fl);
		c->arr_ns = now;
		chunkq_append(&s->q[i + 1], c);
	}
	if (pass) {
		if (st->fl.head)
			return UINT64_MAX; /* what is in flight comes back first */
		while (in->head)
			stream__move_head(s, i, now);
		return UINT64_MAX;
	}
	if (st->tc_resend) {
		if (now < st->tc_retry_ns)
			return st->tc_retry_ns;
		for (struct chunk *c = st->fl.head; c && st->tc_resend; c = c->next) {
			if (c->b.user != TC_RESEND)
				continue;
			uint32_t len = c->len - c->off;
			if (st->tc_out && st->tc_out + len > st->tc_win)
				return UINT64_MAX; /* a piece coming back opens it */
			if (s->tc_ops->send(s->tc_ops->ctx, st->tc, len, c->tc_id)) {
				st->tc_retry_ns = now + TC_RESEND_NS;
				return st->tc_retry_ns;
			}
			c->b.user = TC_IN_DEV;
			st->tc_out += len;
			st->tc_resend--;
		}
	}
	while (in->head) {
		struct chunk *h = in->head;
		uint32_t rem = h->len - h->off, len = rem < TC_MTU ? rem : TC_MTU;
		if (st->tc_out && st->tc_out + len > st->tc_win)
			return UINT64_MAX;
		struct chunk *c;
		if (len == rem) {
			c = chunkq_pop(in);
		} else {
			c = stream_chunk_new(s, h->data + h->off, len, now);
			if (!c)
				return now + NS_PER_MS;
			c->read_ns = h->read_ns;
			c->ts_ns = h->ts_ns;
			h->off += len;
			in->bytes -= len;
			s->mem += chunk_mem(c);
		}
		c->tc_id = s->tc_next_id++;
		c->arr_ns = now;
		if (s->tc_ops->send(s->tc_ops->ctx, st->tc, len, c->tc_id)) {
			c->b.user = TC_RESEND;
			chunkq_append(&st->fl, c);
			st->tc_resend++;
			st->tc_retry_ns = now + TC_RESEND_NS;
			return st->tc_retry_ns;
		}
		c->b.user = TC_IN_DEV;
		chunkq_append(&st->fl, c);
		st->tc_out += len;
	}
	return UINT64_MAX;
}

int stream_tc_back(struct stream *s, void *dev, uint64_t id, int how, uint64_t now_ns)
{
	for (unsigned i = 0; i < s->n; i++) {
		struct stage *st = &s->st[i];
		if (st->tc != dev || st->t.type != TOXIC_TC)
			continue;
		struct chunk *prev = NULL;
		for (struct chunk *c = st->fl.head; c; prev = c, c = c->next) {
			if (c->tc_id != id)
				continue;
			if (c->b.user != TC_IN_DEV)
				return 0; /* a stale copy's answer */
			uint32_t len = c->len - c->off;
			st->tc_out -= len;
			if (how == 0) {
				c->b.user = TC_BACK;
				if (st->tc_win < (4u << 20))
					st->tc_win += TC_MTU;
				return 1;
			}
			if (how == 1) {
				c->b.user = TC_RESEND;
				st->tc_resend++;
				st->tc_win = st->tc_win / 2 > TC_MTU ? st->tc_win / 2 : TC_MTU;
				st->tc_retry_ns = now_ns + TC_RESEND_NS;
				return 1;
			}
			if (prev)
				prev->next = c->next;
			else
				st->fl.head = c->next;
			if (st->fl.tail == c)
				st->fl.tail = prev;
			st->fl.bytes -= len;
			st->fl.count--;
			stream_chunk_free(s, c);
			s->held -= len;
			s->cut += len;
			s->tc_dropped += len;
			return 2;
		}
		return 0;
	}
	return 0;
}
