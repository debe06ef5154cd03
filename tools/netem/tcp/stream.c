/* SPDX-License-Identifier: MIT */
/*
 * A direction's chunk pipeline through its toxics, with toxiproxy's
 * semantics (toxiproxy v2.8's toxics and link are the reference; the
 * differences kept are listed below).
 *
 * Model
 * -----
 * Toxiproxy runs each toxic as a goroutine between two channels; a chunk
 * is what one read returned, stamped with its read time.  Here a toxic is
 * a stage: stage i takes chunks from queue q[i] and puts them (or pieces
 * of them) on q[i+1]; q[n] is the output the connection writes.  A stage
 * only ever looks at the head of its queue, so a stream never reorders:
 * a chunk that must wait holds back every chunk behind it, as a goroutine
 * that sleeps before its send does.  The end of the stream is a token in
 * queue eof_at, behind all the data: a stage sees it when its queue is
 * empty, and passes it on (slow_close after its delay; reset_peer and
 * limit_data close the stream early instead).  "Closing at stage i" cuts
 * what q[0..i] hold and puts the token in q[i+1]: the source is not read
 * any more and what is past the stage is still delivered, then the
 * connection closes (toxiproxy's stub.Close()).
 *
 * Per toxic (applied: its toxicity drew so for this connection; a toxic
 * not applied passes everything on at once):
 *  - latency: the head leaves at ts + latency + U[-jitter, +jitter] (ts:
 *    its read time, or when it left an earlier latency stage), never
 *    before the chunk ahead of it; a negative sum is no delay.
 *  - bandwidth: pieces of at most rate*100 bytes (100 ms of the rate), a
 *    piece of b bytes leaves b/rate after the stage was free and the
 *    piece there (the stage's virtual clock, so timer lateness does not
 *    drift the rate); rate 0 passes everything.
 *  - slicer: pieces of average_size +/- size_variation bytes (a chunk no
 *    larger than average_size + size_variation is one piece), delay us
 *    apart; the stage is free delay after its last piece.
 *  - limit_data: passes bytes until `bytes` have passed, cuts the rest of
 *    the chunk that reached it and closes there (bytes 0: at the first
 *    chunk).
 *  - timeout: cuts every chunk (toxiproxy drops them "on the ground");
 *    closes when timeout ms passed without a chunk (each chunk restarts
 *    it, as toxiproxy's select loop does); 0: never, and its removal
 *    closes (toxiproxy's Cleanup).
 *  - reset_peer: the first chunk (cut) or the end of stream starts it;
 *    timeout ms later it closes, the connection to be reset (RST).
 *  - slow_close: the end of stream waits delay ms.
 *  - tc (pinwheel's own): the stage cuts the head into pieces of at most
 *    TC_MTU bytes and hands each to its device through the stream's
 *    stream_tc_ops (tools/netem/tc_toxic.c: one device a proxy and
 *    direction, its qdiscs shared by all the proxy's connections); the
 *    piece's bytes stay here, in the stage's flight queue, in stream
 *    order, between its input queue (newer) and q[i+1] (older).  When the
 *    device gives a piece back (stream_tc_back(), the owning worker) it is
 *    marked, and the stage moves the flight queue's head on while it is
 *    back: a piece released early (netem's jitter reorders packets) waits
 *    for its predecessor, so the stream never reorders.  At most tc_win
 *    bytes are in the device at once (TC_WIN_INIT, one piece more for each
 *    piece back, halved when the qdisc was full and refused one: that
 *    piece is sent again TC_RESEND_NS later, in order, before any new
 *    one); a piece dropped for good is cut (tc_dropped).  The end of
 *    stream passes once the flight queue is empty.
 *
 * Toxicity is drawn when the stage is made (a new connection, or a toxic
 * added) and again when the toxic's toxicity changes; seeded toxics draw
 * from their seed and the connection's number in its proxy, so a run is
 * repeatable.
 *
 * The live switch (stream_switch): kept toxics (same name and type) keep
 * their queue and state, with the new attributes (a head already timed
 * keeps its time, unless the attributes changed: then the stage restarts
 * as toxiproxy restarts an updated toxic's goroutine: latency sends the
 * chunk it waits on at once and times the next ones from their read time
 * with the new values; bandwidth and slicer send what is left of the
 * chunk they were cutting at once and pace from the change; timeout's
 * timer starts again from the change); a removed toxic's queue is appended to the next kept
 * stage's (or the output), which holds only older chunks, so the stream's
 * order holds; new toxics start empty; the end-of-stream token moves with
 * its queue.  A tc stage keeps its flight queue only when it keeps its
 * device (stream_switch_tc(): same words); removed, or with a new device,
 * its pieces in flight move on at once like a removed stage's queue (the
 * packets drain through the old device and their answers, found nowhere,
 * are ignored: ids are never reused in a stream).
 *
 * Differences from toxiproxy kept on purpose:
 *  - jitter is drawn in nanoseconds, not whole milliseconds;
 *  - slicer pieces are drawn one after another (avg +/- variation), not by
 *    toxiproxy's recursive halving; both keep every piece within
 *    average_size + size_variation;
 *  - toxicity is redrawn only when it changes, where toxiproxy redraws on
 *    every update of the toxic;
 *  - removing a timeout toxic closes only the connections it applied to
 *    (toxiproxy's cleanup closes every link of that direction);
 *  - toxiproxy restarts a toxic on every update; here only a toxic whose
 *    attributes changed restarts;
 *  - small reads behind a waiting chunk gather (see Memory), where
 *    toxiproxy keeps each read a chunk.
 *
 * The achieved rate (struct stream_rate, stats beside the configured):
 * the applied bandwidth stage with the lowest rate releases bytes in
 * windows from the start of each backlog, judged only while its queue
 * held bytes throughout (src/net/accuracy.c's way).  A reader slower than
 * the rate (a full output queue) or a late pump lowers it: that is what
 * the stream got.  A change of its rate starts a new backlog.
 *
 * Memory: the stream counts what its chunks cost (mem: each chunk's whole
 * allocation, header included, chunk_mem), the caller's bound on reads.  A
 * chunk is a bare buffer of the stream's pool or a malloc
 * (tools/netem/tcp/chunk.c): its cost is its class size, so a chunk holding n
 * bytes costs at most an eighth (or 15 bytes) over its header and n.
 * Every chunk made here (a piece, a tc packet, the gathered reads) asks
 * for exactly what it holds; the gathered reads' buffer grows by doubling
 * (a copy into the next class) and moves to the least class that holds
 * them when it enters q[0] (stream_chunk_fit(), a copy of at most
 * STREAM_PEND_MAX bytes); near the caller's bound (mem_max) a read that
 * would make the buffer's class pass it is not gathered.  The pool gives a
 * chunk back to the worker's own lists, so no chunk ever crosses threads.
 * A slicer or bandwidth stage makes no new piece while the queue after it
 * holds STREAM_QMAX chunks (toxiproxy's toxics have channels of 1024
 * chunks), so a 1-byte slicer cannot turn 256 KiB into 256K headers, nor
 * one pump into 256K allocations; the pump runs the stages again (a few
 * passes) when a later stage drained such a queue, and the caller pumps
 * again after it wrote the output.  Small reads (STREAM_SMALL) that come
 * while the first queue is not empty (the pipeline waits anyway) gather
 * in one pending chunk for at most STREAM_PEND_NS or STREAM_PEND_MAX
 * bytes, timed from the last read among them: late by that much at most,
 * never early; a lone small read is not held back.
 *
 * Costs: a pump walks the stages once (a few times when a full queue
 * drained), O(n + chunks moved); a piece is a new chunk (a buffer from
 * the worker's lists, or a malloc, and a copy of its bytes); a tc answer
 * walks the stage's flight queue to its piece (the head, mostly: devices
 * answer in order unless they reorder).  Threads: the owning worker
 * only; no locks.
 *
 * The files: this one the pipeline, the stages and the switch;
 * stream_tc.c the tc stage's pieces to and from its device; chunk.c the
 * chunks and their queues.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull
#define NS_PER_S  1000000000ull

/* ------------------------------------------------------------ random */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_u01(uint64_t *x)
{
	return (double)(splitmix64(x) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [lo, hi] (lo <= hi). */
static int64_t rng_range(uint64_t *x, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)(hi - lo) + 1;
	return span ? lo + (int64_t)(splitmix64(x) % span) : lo + (int64_t)splitmix64(x);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Draw a stage's toxicity and seed its random stream.  Seeded toxics give
 * connection k of a proxy the same draws every run. */
static void stage_draw(struct stream *s, struct stage *st)
{
	uint64_t base = st->t.has_seed ? st->t.seed : s->seed;
	uint64_t x = base ^ name_hash(st->t.name) ^ ((uint64_t)st->t.stream << 56);
	x ^= splitmix64(&(uint64_t){ s->serial * 0x2545f4914f6cdd1dull + 1 });
	st->rng = splitmix64(&x);
	double tox = st->t.toxicity;
	st->active = tox >= 1.0 ? 1 : tox <= 0.0 ? 0 : rng_u01(&st->rng) < tox;
}

static void stage_init(struct stream *s, struct stage *st, const struct toxic *t, void *dev,
		       uint64_t now)
{
	memset(st, 0, sizeof(*st));
	st->t = *t;
	st->tc = t->type == TOXIC_TC ? dev : NULL;
	st->tc_win = TC_WIN_INIT;
	if (t->type == TOXIC_TC)
		memset(&st->t.a, 0, sizeof(st->t.a)); /* never owned here */
	stage_draw(s, st);
	if (st->t.type == TOXIC_TIMEOUT && st->t.a.timeout.timeout_ms > 0)
		st->deadline_ns = now + (uint64_t)st->t.a.timeout.timeout_ms * NS_PER_MS;
}

/* ------------------------------------------------------------ the rate */

/* The stage of @st[0..n) whose rate the stream gets: the applied
 * bandwidth toxic with the lowest rate (0 passes all: no limit); -1. */
static int rate_stage(const struct stage *st, unsigned n)
{
	int b = -1;
	for (unsigned i = 0; i < n; i++)
		if (st[i].active && st[i].t.type == TOXIC_BANDWIDTH && st[i].t.a.bandwidth.rate_kbps > 0 &&
		    (b < 0 || st[i].t.a.bandwidth.rate_kbps < st[b].t.a.bandwidth.rate_kbps))
			b = (int)i;
	return b;
}

/* Measure stage @i (-1: none) from @now on: the open window is not
 * judged, and no backlog begins before @now. */
static void rate_restart(struct stream *s, int i, uint64_t now)
{
	s->rate.stage = i;
	s->rate.kbps = i >= 0 ? s->st[i].t.a.bandwidth.rate_kbps : 0;
	s->rate.busy = 0;
	s->rate.floor_ns = now;
}

/* The measured stage released @bytes at @now of a chunk that entered its
 * queue at @arr; @dry: the queue is empty after it.  Windows run
 * (start, start + W]: a release at a window's end is in it. */
static void rate_release(struct stream_rate *m, uint64_t now, uint64_t bytes, uint64_t arr, int dry)
{
	const uint64_t W = STREAM_RATE_WINDOW_NS;
	if (!m->busy) {
		m->start_ns = arr > m->floor_ns ? arr : m->floor_ns;
		m->win_bytes = 0;
		m->busy = 1;
	}
	if (now > m->start_ns + W) {
		/* the open window and any after it with no release (a stall
		 * with bytes waiting: judged at 0) ended, backlogged */
		uint64_t k = (now - m->start_ns - 1) / W;
		m->windows += k;
		m->bytes += m->win_bytes;
		m->start_ns += k * W;
		m->win_bytes = 0;
	}
	m->win_bytes += bytes;
	if (dry && now == m->start_ns + W) { /* dry just as the window ended */
		m->windows++;
		m->bytes += m->win_bytes;
	}
	m->busy = !dry;
}

/* ------------------------------------------------------------ moving */

/* May a slicer or bandwidth stage @i make a new piece (its output queue
 * has room for one more chunk)? */
static int piece_room(const struct stream *s, unsigned i)
{
	return s->q[i + 1].count < STREAM_QMAX;
}

/* Move the first @n bytes of q[i]'s head to q[i+1] (the whole head when
 * @n covers it).  Return: 0; -ENOMEM (nothing moved: tried again later). */
static int move_piece(struct stream *s, unsigned i, uint32_t n, uint64_t now)
{
	struct chunk *h = s->q[i].head;
	if (n >= h->len - h->off) {
		stream__move_head(s, i, now);
		return 0;
	}
	struct chunk *p = stream_chunk_new(s, h->data + h->off, n, now);
	if (!p)
		return -ENOMEM;
	p->read_ns = h->read_ns;
	p->ts_ns = h->ts_ns;
	h->off += n;
	s->q[i].bytes -= n;
	s->mem += chunk_mem(p);
	chunkq_append(&s->q[i + 1], p);
	return 0;
}

/* Cut the first @n bytes of q[i]'s head (the whole head when @n covers it). */
static void cut_bytes(struct stream *s, unsigned i, uint64_t n)
{
	struct chunk *h = s->q[i].head;
	uint64_t rem = h->len - h->off;
	if (n >= rem) {
		stream_chunk_free(s, chunkq_pop(&s->q[i]));
		n = rem;
	} else {
		h->off += (uint32_t)n;
		s->q[i].bytes -= n;
	}
	s->held -= n;
	s->cut += n;
}

/* Close the stream before queue @j: cut q[0..j-1] (and the small reads
 * gathering before q[0]), the end token to q[j]. */
static void close_before(struct stream *s, unsigned j)
{
	if (s->pend) {
		uint64_t b = s->pend->len - s->pend->off;
		s->held -= b;
		s->cut += b;
		stream_chunk_free(s, s->pend);
		s->pend = NULL;
	}
	for (unsigned k = 0; k < j; k++) {
		uint64_t b = chunkq_clear(s, &s->q[k]);
		s->held -= b;
		s->cut += b;
	}
	if (s->eof_at < (int)j)
		s->eof_at = (int)j;
}

/* ------------------------------------------------------------ the pipeline */

int stream_init(struct stream *s, const struct toxic *const *t, unsigned n, uint64_t seed,
		uint64_t serial, uint64_t now_ns)
{
	return stream_init_tc(s, t, NULL, n, NULL, seed, serial, now_ns);
}

int stream_init_tc(struct stream *s, const struct toxic *const *t, void *const *dev, unsigned n,
		   const struct stream_tc_ops *ops, uint64_t seed, uint64_t serial, uint64_t now_ns)
{
	memset(s, 0, sizeof(*s));
	s->eof_at = -1;
	s->tc_ops = ops;
	s->seed = seed;
	s->serial = serial;
	s->q = calloc(n + 1, sizeof(*s->q));
	s->st = n ? calloc(n, sizeof(*s->st)) : NULL;
	if (!s->q || (n && !s->st)) {
		free(s->q);
		free(s->st);
		return -ENOMEM;
	}
	s->n = n;
	for (unsigned i = 0; i < n; i++)
		stage_init(s, &s->st[i], t[i], dev ? dev[i] : NULL, now_ns);
	rate_restart(s, rate_stage(s->st, n), now_ns);
	return 0;
}

uint64_t stream_free(struct stream *s)
{
	uint64_t b = 0;
	if (s->pend) {
		b += s->pend->len - s->pend->off;
		stream_chunk_put(s, s->pend);
		s->pend = NULL;
	}
	if (s->q)
		for (unsigned i = 0; i <= s->n; i++)
			b += chunkq_clear(s, &s->q[i]);
	if (s->st)
		for (unsigned i = 0; i < s->n; i++)
			b += chunkq_clear(s, &s->st[i].fl);
	free(s->q);
	free(s->st);
	s->q = NULL;
	s->st = NULL;
	s->held = 0;
	s->mem = 0;
	return b;
}

void stream_push(struct stream *s, struct chunk *c, uint64_t now_ns)
{
	c->arr_ns = now_ns;
	s->held += c->len - c->off;
	s->mem += chunk_mem(c);
	chunkq_append(&s->q[0], c);
}

/* The gathered small reads enter q[0], timed from the last of them. */
static void pend_flush(struct stream *s)
{
	struct chunk *c = s->pend;
	if (!c)
		return;
	s->pend = NULL;
	uint64_t was = chunk_mem(c);
	c = stream_chunk_fit(s, c); /* what it holds, in the least class */
	s->mem -= was - chunk_mem(c);
	c->ts_ns = c->arr_ns = s->pend_last_ns;
	chunkq_append(&s->q[0], c);
}

void stream_push_read(struct stream *s, struct chunk *c, uint64_t now_ns)
{
	uint32_t n = c->len - c->off;
	struct chunk *p = s->pend;
	if (p && (n > STREAM_SMALL || p->len + n > STREAM_PEND_MAX))
		pend_flush(s);
	p = s->pend;
	if (n > STREAM_SMALL || (!p && !s->q[0].head) || s->eof_at >= 0) {
		stream_push(s, c, now_ns);
		return;
	}
	if (!p) {
		c->read_ns = c->ts_ns = c->arr_ns = now_ns;
		s->pend = c;
		s->pend_first_ns = s->pend_last_ns = now_ns;
		s->held += n;
		s->mem += chunk_mem(c);
		return;
	}
	if (chunk_cap(p) < p->len + n) {
		uint32_t cap = chunk_cap(p) * 2 < STREAM_PEND_MAX ? chunk_cap(p) * 2 : STREAM_PEND_MAX;
		if (cap < p->len + n)
			cap = p->len + n;
		uint64_t was = chunk_mem(p);
		if (s->mem_max && s->mem - was + chunk_mem_for(s, cap) > s->mem_max) {
			cap = p->len + n; /* near the bound: just what came */
			if (s->mem - was + chunk_mem_for(s, cap) > s->mem_max) {
				/* even that class would pass the bound (the
				 * caller let @c's own pass): @c goes alone */
				pend_flush(s);
				stream_push(s, c, now_ns);
				return;
			}
		}
		struct chunk *t = chunk_move(s, p, cap);
		if (!t) {
			pend_flush(s);
			stream_push(s, c, now_ns);
			return;
		}
		s->mem += chunk_mem(t) - was;
		s->pend = p = t;
	}
	memcpy(p->data + p->len, c->data + c->off, n);
	p->len += n;
	s->held += n;
	s->pend_last_ns = now_ns;
	stream_chunk_put(s, c);
}

void stream_source_eof(struct stream *s)
{
	s->src_held = 0;
	if (s->eof_at < 0) {
		pend_flush(s); /* behind the data */
		s->eof_at = 0;
	}
}

void stream_source_held(struct stream *s, int held)
{
	s->src_held = held;
	if (!held && s->rate.stage == 0 && !s->q[0].head && !s->pend)
		s->rate.busy = 0; /* the sender is idle now: the backlog ended */
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The latency stage's delay for a chunk, drawn once per chunk. */
static uint64_t latency_delay(struct stage *st)
{
	int64_t d = st->t.a.latency.latency_ms * (int64_t)NS_PER_MS;
	int64_t j = st->t.a.latency.jitter_ms * (int64_t)NS_PER_MS;
	if (j > 0)
		d += rng_range(&st->rng, -j, j - 1);
	return d > 0 ? (uint64_t)d : 0;
}

/* The slicer's next piece of a head holding @rem bytes. */
static uint32_t slicer_piece(struct stage *st, uint64_t rem)
{
	int64_t avg = st->t.a.slicer.average_size, var = st->t.a.slicer.size_variation;
	if (avg < 1)
		avg = 1;
	if (var < 0)
		var = 0;
	if (var >= avg)
		var = avg - 1;
	if ((int64_t)rem <= avg + var)
		return (uint32_t)rem;
	return (uint32_t)rng_range(&st->rng, avg - var, avg + var);
}

/* Run stage @i at @now: move what it lets move from q[i] to q[i+1].
 * Return: when it next needs to run (UINT64_MAX: on new input only). */
static uint64_t stage_run(struct stream *s, unsigned i, uint64_t now)
{
	struct stage *st = &s->st[i];
	struct chunkq *in = &s->q[i];
	uint64_t due = UINT64_MAX;

	if (st->t.type == TOXIC_TC) {
		due = stream__tc_run(s, i, now);
		if (st->fl.head || in->head)
			return due;
		goto eof;
	}
	if (!st->active || st->t.type == TOXIC_SLOW_CLOSE) {
		st->head_set = 0;
		st->flush = 0;
		while (in->head)
			stream__move_head(s, i, now);
		goto eof;
	}
	switch (st->t.type) {
	case TOXIC_LATENCY:
		while (in->head) {
			if (!st->head_set) {
				st->head_due_ns = in->head->ts_ns + latency_delay(st);
				st->head_set = 1;
			}
			if (st->head_due_ns > now)
				return st->head_due_ns;
			in->head->ts_ns = st->head_due_ns;
			stream__move_head(s, i, now);
			st->head_set = 0;
		}
		break;
	case TOXIC_BANDWIDTH: {
		int64_t kbps = st->t.a.bandwidth.rate_kbps;
		if (kbps <= 0) {
			st->head_set = 0;
			st->flush = 0;
			while (in->head)
				stream__move_head(s, i, now);
			break;
		}
		uint64_t rate = (uint64_t)kbps * 1000; /* bytes a second */
		uint64_t maxp = (uint64_t)kbps * 100;  /* 100 ms of it */
		if (st->flush && in->head) {
			/* changed: what is left of the head goes at once and
			 * the pacing starts again (toxiproxy's interrupt) */
			stream__move_head(s, i, now);
			st->free_ns = now;
			st->head_set = 0;
			if (s->rate.stage == (int)i)
				rate_restart(s, (int)i, now); /* a new backlog from here */
		}
		st->flush = 0;
		while (in->head && piece_room(s, i)) {
			struct chunk *h = in->head;
			if (!st->head_set) {
				uint64_t rem = h->len - h->off;
				st->piece = (uint32_t)min_u64(rem, maxp);
				uint64_t start = h->arr_ns > st->free_ns ? h->arr_ns : st->free_ns;
				st->head_due_ns = start + (st->piece * NS_PER_S + rate - 1) / rate;
				st->head_set = 1;
			}
			if (st->head_due_ns > now)
				return st->head_due_ns;
			uint64_t arr = h->arr_ns, was = in->bytes;
			if (move_piece(s, i, st->piece, now))
				return now + NS_PER_MS; /* no memory: try again */
			if (s->rate.stage == (int)i)
				rate_release(&s->rate, now, was - in->bytes, arr,
					     !in->head && (i || (!s->pend && !s->src_held))); /* dry */
			st->free_ns = st->head_due_ns;
			st->head_set = 0;
		}
		break;
	}
	case TOXIC_SLICER: {
		uint64_t gap = st->t.a.slicer.delay_us > 0 ? (uint64_t)st->t.a.slicer.delay_us * NS_PER_US : 0;
		if (st->flush && in->head && in->head->off) {
			/* changed mid-chunk: the rest of it goes at once */
			stream__move_head(s, i, now);
			st->free_ns = now;
		}
		st->flush = 0;
		while (in->head && piece_room(s, i)) {
			struct chunk *h = in->head;
			if (st->free_ns > now)
				return st->free_ns;
			uint64_t at = h->arr_ns > st->free_ns ? h->arr_ns : st->free_ns;
			if (move_piece(s, i, slicer_piece(st, h->len - h->off), now))
				return now + NS_PER_MS;
			st->free_ns = at + gap;
		}
		break;
	}
	case TOXIC_LIMIT_DATA: {
		uint64_t limit = st->t.a.limit_data.bytes > 0 ? (uint64_t)st->t.a.limit_data.bytes : 0;
		while (in->head) {
			struct chunk *h = in->head;
			uint64_t rem = h->len - h->off;
			uint64_t allowed = limit > st->passed ? limit - st->passed : 0;
			if (rem <= allowed) {
				stream__move_head(s, i, now);
				st->passed += rem;
			} else {
				if (allowed && move_piece(s, i, (uint32_t)allowed, now))
					return now + NS_PER_MS;
				st->passed += allowed;
				cut_bytes(s, i, rem - allowed);
			}
			if (st->passed >= limit) {
				close_before(s, i + 1);
				return UINT64_MAX;
			}
		}
		break;
	}
	case TOXIC_TIMEOUT: {
		int64_t ms = st->t.a.timeout.timeout_ms;
		while (in->head) {
			if (ms > 0)
				st->deadline_ns = now + (uint64_t)ms * NS_PER_MS;
			cut_bytes(s, i, UINT64_MAX);
		}
		if (ms > 0) {
			if (now >= st->deadline_ns) {
				close_before(s, i + 1);
				return UINT64_MAX;
			}
			due = st->deadline_ns;
		}
		break;
	}
	case TOXIC_RESET_PEER: {
		int64_t ms = st->t.a.reset_peer.timeout_ms > 0 ? st->t.a.reset_peer.timeout_ms : 0;
		if (!st->triggered && (in->head || s->eof_at == (int)i)) {
			if (in->head)
				cut_bytes(s, i, UINT64_MAX);
			st->triggered = 1;
			st->deadline_ns = now + (uint64_t)ms * NS_PER_MS;
		}
		if (st->triggered) {
			if (now >= st->deadline_ns) {
				s->rst = 1;
				close_before(s, i + 1);
				return UINT64_MAX;
			}
			return st->deadline_ns; /* what comes meanwhile waits */
		}
		break;
	}
	default:
		break;
	}
eof:
	if (s->eof_at == (int)i && !in->head) {
		if (st->active && st->t.type == TOXIC_SLOW_CLOSE) {
			if (!st->close_set) {
				int64_t ms = st->t.a.slow_close.delay_ms > 0 ? st->t.a.slow_close.delay_ms : 0;
				st->close_due_ns = now + (uint64_t)ms * NS_PER_MS;
				st->close_set = 1;
			}
			if (st->close_due_ns > now)
				return min_u64(due, st->close_due_ns);
		}
		s->eof_at = (int)i + 1;
		return UINT64_MAX;
	}
	return due;
}

/* Is stage @i a piece maker stopped by its full output queue that has
 * room again? */
static int piece_waits(const struct stream *s, unsigned i)
{
	const struct stage *st = &s->st[i];
	return st->active && (st->t.type == TOXIC_SLICER || st->t.type == TOXIC_BANDWIDTH) &&
	       s->q[i].head && st->gated && piece_room(s, i);
}

uint64_t stream_pump(struct stream *s, uint64_t now_ns)
{
	uint64_t next;
	/* a stage stopped by its full output queue goes on in the same pump
	 * once a later stage drained that queue (a few passes at most) */
	/* gathered reads go on at their time limit, or once the first queue
	 * they gathered behind has emptied (nothing left to wait behind) */
	if (s->pend && (now_ns >= s->pend_first_ns + STREAM_PEND_NS || !s->q[0].head))
		pend_flush(s);
	for (int pass = 0;; pass++) {
		next = UINT64_MAX;
		int again = 0;
		for (unsigned i = 0; i < s->n; i++) {
			if (s->eof_at > (int)i)
				continue; /* finished: the end of stream is past it */
			next = min_u64(next, stage_run(s, i, now_ns));
			s->st[i].gated = s->q[i].head && !piece_room(s, i);
		}
		for (unsigned i = 0; i < s->n && !again; i++)
			again = s->eof_at <= (int)i && piece_waits(s, i);
		if (!again || pass >= 3)
			break;
	}
	if (s->pend)
		next = min_u64(next, s->pend_first_ns + STREAM_PEND_NS);
	return next;
}

/* ------------------------------------------------------------ the switch */

/* Did a kept toxic's attributes change (tc: its device decides)? */
static int attrs_changed(const struct toxic *a, const struct toxic *b)
{
	switch (b->type) {
	case TOXIC_LATENCY:
		return a->a.latency.latency_ms != b->a.latency.latency_ms ||
		       a->a.latency.jitter_ms != b->a.latency.jitter_ms;
	case TOXIC_BANDWIDTH:
		return a->a.bandwidth.rate_kbps != b->a.bandwidth.rate_kbps;
	case TOXIC_SLOW_CLOSE:
		return a->a.slow_close.delay_ms != b->a.slow_close.delay_ms;
	case TOXIC_TIMEOUT:
		return a->a.timeout.timeout_ms != b->a.timeout.timeout_ms;
	case TOXIC_RESET_PEER:
		return a->a.reset_peer.timeout_ms != b->a.reset_peer.timeout_ms;
	case TOXIC_SLICER:
		return a->a.slicer.average_size != b->a.slicer.average_size ||
		       a->a.slicer.size_variation != b->a.slicer.size_variation ||
		       a->a.slicer.delay_us != b->a.slicer.delay_us;
	case TOXIC_LIMIT_DATA:
		return a->a.limit_data.bytes != b->a.limit_data.bytes;
	default:
		return 0;
	}
}

/* A kept stage whose attributes changed restarts, as toxiproxy restarts
 * the toxic's pipe: the chunk a latency stage waits on goes at once (the
 * ones behind it are timed from their read time with the new delay); a
 * bandwidth or slicer stage sends what is left of its head at once and
 * paces from @now on; a timeout's timer starts again from @now.  The
 * others (limit_data's count, reset_peer once triggered, slow_close's
 * end) keep their state, as toxiproxy's keep theirs. */
static void stage_restart(struct stage *st, uint64_t now)
{
	if (!st->active)
		return;
	switch (st->t.type) {
	case TOXIC_LATENCY:
		if (st->head_set && st->head_due_ns > now)
			st->head_due_ns = now;
		break;
	case TOXIC_BANDWIDTH:
	case TOXIC_SLICER:
		st->head_set = 0;
		st->flush = 1;
		if (st->free_ns > now)
			st->free_ns = now;
		break;
	case TOXIC_TIMEOUT:
		if (st->t.a.timeout.timeout_ms > 0)
			st->deadline_ns = now + (uint64_t)st->t.a.timeout.timeout_ms * NS_PER_MS;
		break;
	default:
		break;
	}
}

int stream_switch(struct stream *s, const struct toxic *const *t, unsigned n, uint64_t now_ns)
{
	return stream_switch_tc(s, t, NULL, n, now_ns);
}

int stream_switch_tc(struct stream *s, const struct toxic *const *t, void *const *dev, unsigned n,
		     uint64_t now_ns)
{
	unsigned on = s->n;
	int *match = calloc(n ? n : 1, sizeof(int));  /* new j -> old i, or -1 */
	unsigned *dest = calloc(on + 1, sizeof(unsigned)); /* old queue -> new queue */
	struct chunkq *nq = calloc(n + 1, sizeof(*nq));
	struct stage *nst = n ? calloc(n, sizeof(*nst)) : NULL;
	if (!match || !dest || !nq || (n && !nst)) {
		free(match);
		free(dest);
		free(nq);
		free(nst);
		return -ENOMEM;
	}
	/* Kept toxics: same name and type; they must keep their relative order
	 * (the registry never reorders), else every toxic counts as new. */
	int last = -1, ordered = 1;
	for (unsigned j = 0; j < n; j++) {
		match[j] = -1;
		for (unsigned i = 0; i < on; i++)
			if (s->st[i].t.type == t[j]->type && !strcmp(s->st[i].t.name, t[j]->name)) {
				match[j] = (int)i;
				break;
			}
		if (match[j] >= 0) {
			if (match[j] <= last)
				ordered = 0;
			last = match[j];
		}
	}
	if (!ordered)
		for (unsigned j = 0; j < n; j++)
			match[j] = -1;
	int *kept_at = calloc(on ? on : 1, sizeof(int)); /* old i -> new j, or -1 */
	if (!kept_at) {
		free(match);
		free(dest);
		free(nq);
		free(nst);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < on; i++)
		kept_at[i] = -1;
	for (unsigned j = 0; j < n; j++)
		if (match[j] >= 0)
			kept_at[match[j]] = (int)j;
	/* Where each old queue goes: a kept stage's input queue to its new
	 * place; a removed stage's to the next queue's destination. */
	dest[on] = n;
	for (int i = (int)on - 1; i >= 0; i--)
		dest[i] = kept_at[i] >= 0 ? (unsigned)kept_at[i] : dest[i + 1];
	/* Oldest first: the output, then the stages from last to first (a tc
	 * stage's chunks in flight are between its output and its input). */
	for (int i = (int)on; i >= 0; i--) {
		if (i < (int)on) {
			struct stage *o = &s->st[i];
			int keep = kept_at[i] >= 0 && (dev ? dev[kept_at[i]] : NULL) == o->tc;
			if (o->fl.head && !keep) {
				for (struct chunk *c = o->fl.head; c; c = c->next)
					c->b.user = TC_BACK;
				chunkq_splice(&nq[dest[i + 1]], &o->fl);
				o->tc_out = 0;
				o->tc_resend = 0;
			}
		}
		chunkq_splice(&nq[dest[i]], &s->q[i]);
	}
	int eof_at = s->eof_at >= 0 ? (int)dest[s->eof_at] : -1;

	int close_at = -1;
	for (unsigned i = 0; i < on; i++) {
		struct stage *o = &s->st[i];
		/* toxiproxy's Cleanup: removing a timeout toxic closes the link */
		if (kept_at[i] < 0 && o->active && o->t.type == TOXIC_TIMEOUT &&
		    (s->eof_at < 0 || s->eof_at <= (int)i) && (int)dest[i] > close_at)
			close_at = (int)dest[i];
	}
	for (unsigned j = 0; j < n; j++) {
		void *dj = dev ? dev[j] : NULL;
		if (match[j] < 0) {
			stage_init(s, &nst[j], t[j], dj, now_ns);
			continue;
		}
		struct stage *o = &s->st[match[j]];
		nst[j] = *o;
		if (t[j]->type == TOXIC_TC && nst[j].tc != dj) {
			nst[j].tc = dj; /* its old flight moved on above */
			memset(&nst[j].fl, 0, sizeof(nst[j].fl));
		}
		double old_tox = o->t.toxicity;
		int changed = attrs_changed(&o->t, t[j]);
		nst[j].t = *t[j];
		if (t[j]->type == TOXIC_TC)
			memset(&nst[j].t.a, 0, sizeof(nst[j].t.a));
		if (old_tox != t[j]->toxicity)
			stage_draw(s, &nst[j]);
		if (changed)
			stage_restart(&nst[j], now_ns);
	}
	/* the measured stage kept, with its rate: its windows go on */
	int rj = rate_stage(nst, n);
	int rkeep = rj >= 0 && match[rj] >= 0 && match[rj] == s->rate.stage &&
		    nst[rj].t.a.bandwidth.rate_kbps == s->rate.kbps;
	free(s->q);
	free(s->st);
	free(match);
	free(dest);
	free(kept_at);
	s->q = nq;
	s->st = nst;
	s->n = n;
	s->eof_at = eof_at;
	if (rkeep)
		s->rate.stage = rj;
	else
		rate_restart(s, rj, now_ns);
	if (close_at >= 0)
		close_before(s, (unsigned)close_at);
	return 0;
}
