/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's TCP toxics (tools/netem/tcp/stream.c) on a simulated clock:
 * one direction's pipeline driven through stream.h with the time given,
 * no socket and no thread.  Each toxic's semantics exactly (latency never
 * early and in order, bandwidth never faster than its rate and exactly
 * it, slicer pieces within their bounds and their delay apart,
 * limit_data's exact count, timeout, reset_peer, slow_close, toxicity
 * and its seed), the live switch (nothing lost, doubled or reordered; the
 * end of stream moves too), and a seeded random run of toxic lists
 * switched under traffic (PW_SEED replays it), with the ledger pushed ==
 * written + cut + held checked after every step; the tc stage against a
 * fake device that gives pieces back in any order (order kept, a full
 * qdisc's refusal sent again, a drop cut, the window, the switch); the
 * bandwidth limit's achieved rate, exact over its backlogged windows
 * (test_stream_rate).  Deterministic.  The
 * sockets' half is test_netem_tcp.c.
 *
 * Every stream test runs twice: with malloc'd chunks, then with chunks
 * from a pktpool's bare buffers (tools/common/pktpool.h, as the TCP plane
 * takes them: one slot, PKTPOOL_CHECK so a chunk given back twice is
 * caught), mem then counting their class sizes.  The bare-buffer API
 * itself is tested first (test_pool_bare): its classes, fit, the slot's
 * cache and its bound, the budget, the check, a pool without a cache.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "netem_tcp_util.h"
#include "stream.h"

#define MS 1000000ull

/* The pool the second pass takes its chunks from (NULL: the first). */
static struct pktpool *G_pool;

/* ============================================================ stream half */

/* A simulated direction: what was pushed, what came out (and when). */
struct sim {
	struct stream s;
	uint64_t now, pushed, written;
	uint64_t next;       /* the pump's answer */
	uint64_t out_off;    /* stream offset of the next byte written */
	uint64_t in_off;
	int holes;           /* toxics may cut inside the stream */
	/* per written piece, for the checks */
	unsigned npieces;
	uint32_t plen[4096];
	uint64_t pat_ns[4096];   /* when written */
	uint64_t pread_ns[4096]; /* its read time */
};

static void sim_ledger(struct sim *m)
{
	CHECK_EQ(m->pushed, m->written + m->s.cut + m->s.held);
	uint64_t sum = 0;
	for (unsigned i = 0; i <= m->s.n; i++)
		sum += m->s.q[i].bytes;
	for (unsigned i = 0; i < m->s.n; i++)
		sum += m->s.st[i].fl.bytes; /* a tc stage's pieces in its device */
	if (m->s.pend)
		sum += m->s.pend->len - m->s.pend->off; /* small reads gathering */
	CHECK_EQ(sum, m->s.held);
	/* mem: exactly what the chunks cost */
	uint64_t mem = m->s.pend ? chunk_mem(m->s.pend) : 0;
	for (unsigned i = 0; i <= m->s.n; i++)
		for (struct chunk *c = m->s.q[i].head; c; c = c->next)
			mem += chunk_mem(c);
	for (unsigned i = 0; i < m->s.n; i++)
		for (struct chunk *c = m->s.st[i].fl.head; c; c = c->next)
			mem += chunk_mem(c);
	CHECK_EQ(mem, m->s.mem);
}

static void sim_init(struct sim *m, const struct toxic *t, unsigned n, uint64_t serial)
{
	memset(m, 0, sizeof(*m));
	const struct toxic *pt[8];
	for (unsigned i = 0; i < n; i++)
		pt[i] = &t[i];
	CHECK_EQ(stream_init(&m->s, pt, n, 42, serial, 0), 0);
	m->s.pool = G_pool;
	m->s.self = 0;
}

/* Pump at the current time and write out everything that reached the
 * output; bytes must come out in stream order. */
static void sim_pump(struct sim *m)
{
	m->next = stream_pump(&m->s, m->now);
	struct chunk *c;
	while ((c = chunkq_pop(stream_out(&m->s)))) {
		uint32_t len = c->len - c->off;
		if (m->holes) {
			/* a toxic may have cut before these bytes: they are
			 * the next run of the input that matches, never an
			 * earlier one (no reordering, no doubling) */
			uint64_t o = m->out_off;
			for (;; o++) {
				CHECK(o + len <= m->in_off);
				uint32_t k = 0;
				while (k < len && c->data[c->off + k] == ntu_pat(o + k))
					k++;
				if (k == len)
					break;
			}
			m->out_off = o;
		}
		for (uint32_t k = 0; k < len; k++)
			CHECK_EQ(c->data[c->off + k], ntu_pat(m->out_off + k));
		m->out_off += len;
		m->written += len;
		m->s.held -= len;
		if (m->npieces < 4096) {
			m->plen[m->npieces] = len;
			m->pat_ns[m->npieces] = m->now;
			m->pread_ns[m->npieces] = c->read_ns;
			m->npieces++;
		}
		stream_chunk_free(&m->s, c);
	}
	sim_ledger(m);
}

static void sim_push_how(struct sim *m, uint32_t len, int read)
{
	unsigned char buf[65536];
	for (uint32_t k = 0; k < len; k++)
		buf[k] = ntu_pat(m->in_off + k);
	struct chunk *c = stream_chunk_new(&m->s, buf, len, m->now);
	CHECK(c);
	if (G_pool)
		CHECK_EQ(chunk_mem(c), pktpool_bare_size(sizeof(*c) + len));
	else
		CHECK_EQ(chunk_mem(c), sizeof(*c) + len);
	if (read)
		stream_push_read(&m->s, c, m->now); /* as a read: small ones gather */
	else
		stream_push(&m->s, c, m->now);
	m->in_off += len;
	m->pushed += len;
	sim_pump(m);
}

static void sim_push(struct sim *m, uint32_t len)
{
	sim_push_how(m, len, 0);
}

/* Advance to @until, pumping at every time the pipeline asked for. */
static void sim_run(struct sim *m, uint64_t until)
{
	while (m->next <= until) {
		CHECK(m->next >= m->now);
		m->now = m->next;
		sim_pump(m);
	}
	m->now = until;
	sim_pump(m);
}

static void sim_free(struct sim *m)
{
	stream_free(&m->s);
}

static void test_stream_latency(void)
{
	struct toxic t = ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat");
	t.a.latency.latency_ms = 10;
	t.a.latency.jitter_ms = 8;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	for (int k = 0; k < 200; k++) {
		sim_push(m, 100 + (uint32_t)k);
		sim_run(m, m->now + MS / 2);
	}
	sim_run(m, m->now + 100 * MS);
	CHECK_EQ(m->written, m->pushed);
	CHECK_EQ(m->npieces, 200);
	int late = 0;
	for (unsigned i = 0; i < m->npieces; i++) {
		CHECK(m->pat_ns[i] >= m->pread_ns[i] + 2 * MS); /* never before latency - jitter */
		if (i)
			CHECK(m->pat_ns[i] >= m->pat_ns[i - 1]);    /* in order */
		late += m->pat_ns[i] > m->pread_ns[i] + 10 * MS;
	}
	CHECK(late > 0); /* the jitter did draw both ways */
	sim_free(m);
	free(m);
}

static void test_stream_bandwidth(void)
{
	struct toxic t = ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw");
	t.a.bandwidth.rate_kbps = 10; /* 10,000 B/s: pieces of 1000 bytes, 100 ms */
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	for (int k = 0; k < 4; k++)
		sim_push(m, 5000);
	sim_run(m, 10000 * MS);
	CHECK_EQ(m->written, 20000);
	uint64_t sum = 0;
	for (unsigned i = 0; i < m->npieces; i++) {
		CHECK(m->plen[i] <= 1000);
		sum += m->plen[i];
		/* never faster than the rate: sum bytes need sum/rate seconds */
		CHECK(m->pat_ns[i] * 10000 >= sum * 1000000000ull);
	}
	CHECK_EQ(m->pat_ns[m->npieces - 1], 2000 * MS); /* and exactly the rate */
	sim_free(m);
	free(m);
}

/* The achieved rate (struct stream_rate): bytes over the windows in which
 * the measured bandwidth stage had a backlog, exactly the rate when each
 * window holds one piece; an idle gap, or a sender slower than the link,
 * does not lower it; the lowest of toxics in series is measured; a switch
 * of the rate starts a new backlog; a source held back by the caller's
 * bound keeps the backlog going; no bandwidth limit: nothing. */
static void test_stream_rate(void)
{
	struct toxic t[2] = { ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw"),
			      ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw2") };
	t[0].a.bandwidth.rate_kbps = 100; /* pieces of 10,000 bytes: 100 ms */
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, t, 1, 1);
	CHECK_EQ(m->s.rate.stage, 0);
	for (int k = 0; k < 50; k++)
		sim_push(m, 10000);
	sim_run(m, 10000 * MS);
	CHECK_EQ(m->written, 500000);
	CHECK_EQ(m->s.rate.windows, 50); /* the last one ran dry at its end */
	CHECK_EQ(m->s.rate.bytes, 50 * 10000ull);
	/* 5 s idle, then a second burst: the idle windows are not judged */
	for (int k = 0; k < 30; k++)
		sim_push(m, 10000);
	sim_run(m, 20000 * MS);
	CHECK_EQ(m->s.rate.windows, 80);
	CHECK_EQ(m->s.rate.bytes, 80 * 10000ull);
	/* a sender at half the rate: the queue runs dry in every window */
	for (int k = 0; k < 20; k++) {
		sim_push(m, 5000);
		sim_run(m, m->now + 100 * MS);
	}
	CHECK_EQ(m->s.rate.windows, 80);
	/* chunks that do not divide into pieces: within one piece */
	for (int k = 0; k < 16; k++)
		sim_push(m, 65536);
	sim_run(m, m->now + 20000 * MS);
	uint64_t w = m->s.rate.windows - 80, b = m->s.rate.bytes - 800000;
	CHECK_EQ(w, 104); /* 10.48576 s of backlog: the partial last not judged */
	CHECK(b <= w * 10000 && b + 10000 >= w * 10000);
	/* a switch to 50 KB/s mid-piece: a new backlog, 5,000 bytes a window */
	for (int k = 0; k < 20; k++)
		sim_push(m, 10000);
	sim_run(m, m->now + 1050 * MS);
	uint64_t w0 = m->s.rate.windows, b0 = m->s.rate.bytes;
	t[0].a.bandwidth.rate_kbps = 50;
	const struct toxic *pt[2] = { &t[0], &t[1] };
	CHECK_EQ(stream_switch(&m->s, pt, 1, m->now), 0);
	CHECK_EQ(m->s.rate.kbps, 50);
	sim_run(m, m->now + 60000 * MS);
	CHECK_EQ(m->written, m->pushed);
	CHECK_EQ(m->s.rate.windows, w0 + 18); /* 9 chunks (the head went on at once) */
	CHECK_EQ(m->s.rate.bytes - b0, (m->s.rate.windows - w0) * 5000);
	sim_free(m);

	/* a source the caller holds back (its bound: one chunk at a time, the
	 * next read 0.64 ms after the last piece went): one backlog, the gaps
	 * counted against the rate; the read that finds the source empty
	 * ends it, the partial window not judged */
	t[0].a.bandwidth.rate_kbps = 100;
	sim_init(m, t, 1, 1);
	for (int k = 0; k < 16; k++) {
		sim_push(m, 65536);
		stream_source_held(&m->s, 1);
		sim_run(m, m->now + 656 * MS); /* 655.36 ms of pieces, then the gap */
	}
	stream_source_held(&m->s, 0);
	CHECK_EQ(m->written, 16 * 65536);
	w = m->s.rate.windows;
	b = m->s.rate.bytes;
	CHECK_EQ(w, 104); /* 10.496 s of backlog */
	CHECK(b <= w * 10000 && b + 10000 >= w * 10000);
	CHECK_EQ(m->s.rate.busy, 0);
	/* the same reads from a source that was not held back: each chunk
	 * is a backlog of its own, six whole windows of it judged */
	for (int k = 0; k < 16; k++) {
		sim_push(m, 65536);
		sim_run(m, m->now + 656 * MS);
	}
	CHECK_EQ(m->s.rate.windows, w + 16 * 6);
	CHECK_EQ(m->s.rate.bytes, b + 16 * 6 * 10000ull);
	sim_free(m);

	/* in series: the lowest (100 after 200) is measured, exactly */
	t[0].a.bandwidth.rate_kbps = 200;
	t[1].a.bandwidth.rate_kbps = 100;
	sim_init(m, t, 2, 1);
	CHECK_EQ(m->s.rate.stage, 1);
	for (int k = 0; k < 20; k++)
		sim_push(m, 10000);
	sim_run(m, 5000 * MS);
	CHECK_EQ(m->written, 200000);
	CHECK_EQ(m->s.rate.windows, 20);
	CHECK_EQ(m->s.rate.bytes, 200000);
	sim_free(m);

	/* no limit (rate 0 passes everything; a latency toxic): nothing */
	t[0].a.bandwidth.rate_kbps = 0;
	t[1] = ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat");
	t[1].a.latency.latency_ms = 10;
	sim_init(m, t, 2, 1);
	CHECK_EQ(m->s.rate.stage, -1);
	for (int k = 0; k < 20; k++)
		sim_push(m, 10000);
	sim_run(m, 5000 * MS);
	CHECK_EQ(m->written, 200000);
	CHECK_EQ(m->s.rate.windows, 0);
	CHECK_EQ(m->s.rate.bytes, 0);
	sim_free(m);
	free(m);
}

static void test_stream_slicer(void)
{
	struct toxic t = ntu_toxic(TOXIC_SLICER, TOXIC_DOWNSTREAM, "sl");
	t.a.slicer.average_size = 100;
	t.a.slicer.size_variation = 30;
	t.a.slicer.delay_us = 50;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_push(m, 10000);
	sim_push(m, 50);
	sim_push(m, 3000);
	sim_run(m, 1000 * MS);
	CHECK_EQ(m->written, 13050);
	for (unsigned i = 0; i < m->npieces; i++) {
		CHECK(m->plen[i] >= 1 && m->plen[i] <= 130);
		if (i)
			CHECK(m->pat_ns[i] >= m->pat_ns[i - 1] + 50000); /* delay apart */
	}
	CHECK(m->npieces >= 13050 / 130);
	sim_free(m);
	free(m);
}

static void test_stream_limit_data(void)
{
	struct toxic t = ntu_toxic(TOXIC_LIMIT_DATA, TOXIC_DOWNSTREAM, "lim");
	t.a.limit_data.bytes = 2500;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_push(m, 1000);
	sim_push(m, 1000);
	CHECK(!stream_source_done(&m->s));
	sim_push(m, 1000);
	CHECK_EQ(m->written, 2500);
	CHECK_EQ(m->s.cut, 500);
	CHECK(stream_source_done(&m->s));
	CHECK(stream_finished(&m->s));
	sim_free(m);
	free(m);
	/* bytes 0: closes at the first chunk, passing nothing */
	t.a.limit_data.bytes = 0;
	m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_pump(m);
	CHECK(!stream_source_done(&m->s));
	sim_push(m, 10);
	CHECK_EQ(m->written, 0);
	CHECK(stream_finished(&m->s));
	sim_free(m);
	free(m);
}

static void test_stream_timeout(void)
{
	struct toxic t = ntu_toxic(TOXIC_TIMEOUT, TOXIC_DOWNSTREAM, "to");
	t.a.timeout.timeout_ms = 100;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_run(m, 50 * MS);
	sim_push(m, 500); /* dropped, and restarts the timeout */
	CHECK_EQ(m->s.cut, 500);
	sim_run(m, 149 * MS);
	CHECK(!stream_finished(&m->s));
	sim_run(m, 150 * MS);
	CHECK(stream_finished(&m->s));
	CHECK_EQ(m->written, 0);
	CHECK(!m->s.rst);
	sim_free(m);
	free(m);
	/* 0: never closes; its removal closes (toxiproxy's cleanup) */
	t.a.timeout.timeout_ms = 0;
	m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_push(m, 100);
	sim_run(m, 100000 * MS);
	CHECK(!stream_source_done(&m->s));
	CHECK_EQ(stream_switch(&m->s, NULL, 0, m->now), 0);
	sim_pump(m);
	CHECK(stream_finished(&m->s));
	CHECK_EQ(m->written, 0);
	sim_free(m);
	free(m);
}

static void test_stream_reset_slow_close(void)
{
	struct toxic t = ntu_toxic(TOXIC_RESET_PEER, TOXIC_DOWNSTREAM, "rp");
	t.a.reset_peer.timeout_ms = 50;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_run(m, 10 * MS);
	sim_push(m, 100);
	sim_push(m, 100); /* waits, then cut with the close */
	sim_run(m, 59 * MS);
	CHECK(!stream_finished(&m->s));
	sim_run(m, 60 * MS);
	CHECK(stream_finished(&m->s));
	CHECK(m->s.rst);
	CHECK_EQ(m->s.cut, 200);
	sim_free(m);
	free(m);

	t = ntu_toxic(TOXIC_SLOW_CLOSE, TOXIC_DOWNSTREAM, "sc");
	t.a.slow_close.delay_ms = 200;
	m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_push(m, 100);
	CHECK_EQ(m->written, 100); /* data is not delayed */
	stream_source_eof(&m->s);
	sim_pump(m);
	sim_run(m, 199 * MS);
	CHECK(!stream_finished(&m->s));
	sim_run(m, 200 * MS);
	CHECK(stream_finished(&m->s));
	sim_free(m);
	free(m);
}

static void test_stream_toxicity(void)
{
	struct toxic t = ntu_toxic(TOXIC_LIMIT_DATA, TOXIC_DOWNSTREAM, "lim");
	t.a.limit_data.bytes = 10;
	t.toxicity = 0.0;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	sim_push(m, 1000);
	CHECK_EQ(m->written, 1000);
	CHECK(!stream_source_done(&m->s));
	sim_free(m);
	/* a seed gives connection k the same draw every time */
	t.toxicity = 0.5;
	t.has_seed = 1;
	t.seed = 1234;
	int applied = 0;
	for (uint64_t k = 0; k < 200; k++) {
		sim_init(m, &t, 1, k);
		int a = m->s.st[0].active;
		sim_free(m);
		sim_init(m, &t, 1, k);
		CHECK_EQ(m->s.st[0].active, a);
		sim_free(m);
		applied += a;
	}
	CHECK(applied > 50 && applied < 150);
	free(m);
}

static void test_stream_switch(void)
{
	struct toxic t[3];
	t[0] = ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat");
	t[0].a.latency.latency_ms = 100;
	t[1] = ntu_toxic(TOXIC_SLICER, TOXIC_DOWNSTREAM, "sl");
	t[1].a.slicer.average_size = 64;
	t[1].a.slicer.size_variation = 16;
	t[1].a.slicer.delay_us = 1000;
	t[2] = ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw");
	t[2].a.bandwidth.rate_kbps = 100;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, t, 3, 1);
	for (int k = 0; k < 50; k++) {
		sim_push(m, 700);
		sim_run(m, m->now + 3 * MS);
	}
	/* every stage holds something: remove the middle one */
	CHECK(m->s.q[0].head && m->s.q[1].head);
	const struct toxic *keep[2] = { &t[0], &t[2] };
	CHECK_EQ(stream_switch(&m->s, keep, 2, m->now), 0);
	sim_ledger(m);
	for (int k = 0; k < 20; k++) {
		sim_push(m, 300);
		sim_run(m, m->now + 2 * MS);
	}
	/* change the latency, add a slicer at the end, then remove all */
	struct toxic t2[3] = { t[0], t[2], t[1] };
	t2[0].a.latency.latency_ms = 5;
	const struct toxic *p3[3] = { &t2[0], &t2[1], &t2[2] };
	CHECK_EQ(stream_switch(&m->s, p3, 3, m->now), 0);
	sim_run(m, m->now + 20 * MS);
	CHECK_EQ(stream_switch(&m->s, NULL, 0, m->now), 0);
	sim_pump(m);
	CHECK_EQ(m->written, m->pushed); /* nothing lost, doubled or reordered */
	CHECK_EQ(m->s.held, 0);
	/* an end of stream in flight moves too */
	sim_free(m);
	sim_init(m, t, 3, 1);
	sim_push(m, 5000);
	stream_source_eof(&m->s);
	sim_pump(m);
	CHECK_EQ(stream_switch(&m->s, keep, 2, m->now), 0);
	sim_run(m, 10000 * MS);
	CHECK_EQ(m->written, 5000);
	CHECK(stream_finished(&m->s));
	sim_free(m);
	free(m);
}

/* Random toxic lists, switched at random under random traffic: the output
 * is always a prefix of the input (toxics cut only a stream's tail), the
 * ledger holds at every step, and once the toxics are gone and the source
 * ended, nothing is held and the stream is finished.  Seeded: the seed is
 * printed on failure through the CHECK's line and replayed by PW_SEED. */
/* ============================================================ the tc stage */

/* A fake device: what was sent, in order. */
static struct {
	unsigned n;
	uint64_t id[4096];
	uint32_t len[4096];
	void *dev[4096];
} FD;

static int fake_send(void *ctx, void *dev, uint32_t len, uint64_t id)
{
	(void)ctx;
	CHECK(FD.n < 4096);
	FD.id[FD.n] = id;
	FD.len[FD.n] = len;
	FD.dev[FD.n] = dev;
	FD.n++;
	return 0;
}

static const struct stream_tc_ops FAKE = { fake_send, NULL };

static void sim_init_tc(struct sim *m, const struct toxic *t, void *const *dev, unsigned n)
{
	memset(m, 0, sizeof(*m));
	memset(&FD, 0, sizeof(FD));
	const struct toxic *pt[8];
	for (unsigned i = 0; i < n; i++)
		pt[i] = &t[i];
	CHECK_EQ(stream_init_tc(&m->s, pt, dev, n, &FAKE, 42, 0, 0), 0);
	m->s.pool = G_pool;
	m->s.self = 0;
}

static void test_stream_tc(void)
{
	int devA, devB;
	void *da[1] = { &devA };
	struct toxic t = ntu_toxic(TOXIC_TC, TOXIC_DOWNSTREAM, "tc");
	struct sim m;
	sim_init_tc(&m, &t, da, 1);
	/* pieces of at most TC_MTU, numbered in order; out only in order */
	sim_push(&m, 5000);
	CHECK_EQ(FD.n, 4);
	CHECK_EQ(FD.len[0], TC_MTU);
	CHECK_EQ(FD.len[3], 5000 - 3 * TC_MTU);
	CHECK(FD.dev[0] == &devA);
	for (int k = 3; k >= 1; k--)
		CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[k], 0, m.now), 1);
	sim_pump(&m);
	CHECK_EQ(m.written, 0); /* released early: waits for the first */
	CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[0], 0, m.now), 1);
	CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[0], 0, m.now), 0); /* twice: ignored */
	CHECK_EQ(stream_tc_back(&m.s, &devB, FD.id[1], 0, m.now), 0); /* another device's */
	sim_pump(&m);
	CHECK_EQ(m.written, 5000);

	/* a full qdisc: sent again after TC_RESEND_NS, the window halves */
	FD.n = 0;
	sim_push(&m, 3000);
	CHECK_EQ(FD.n, 2);
	uint64_t id0 = FD.id[0], id1 = FD.id[1], win = m.s.st[0].tc_win;
	CHECK_EQ(stream_tc_back(&m.s, &devA, id0, 1, m.now), 1);
	CHECK_EQ(m.s.st[0].tc_win, win / 2);
	CHECK_EQ(stream_tc_back(&m.s, &devA, id1, 0, m.now), 1);
	sim_pump(&m);
	CHECK_EQ(FD.n, 2); /* not before its time */
	CHECK_EQ(m.next, m.now + TC_RESEND_NS);
	m.now += TC_RESEND_NS;
	sim_pump(&m);
	CHECK_EQ(FD.n, 3);
	CHECK_EQ(FD.id[2], id0);
	CHECK_EQ(m.written, 5000);
	CHECK_EQ(stream_tc_back(&m.s, &devA, id0, 0, m.now), 1);
	sim_pump(&m);
	CHECK_EQ(m.written, 8000);

	/* the window: at most TC_WIN_INIT bytes in the device */
	FD.n = 0;
	m.s.st[0].tc_win = TC_WIN_INIT;
	sim_push(&m, 60000);
	sim_push(&m, 60000);
	uint64_t inside = 0;
	for (unsigned k = 0; k < FD.n; k++)
		inside += FD.len[k];
	CHECK(inside <= TC_WIN_INIT && inside + TC_MTU > TC_WIN_INIT);
	unsigned sent = FD.n;
	for (unsigned k = 0; k < sent; k++)
		CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[k], 0, m.now), 1);
	sim_pump(&m);
	CHECK(FD.n > sent);
	while (m.written < 128000) {
		unsigned from = sent;
		sent = FD.n;
		for (unsigned k = from; k < sent; k++)
			CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[k], 0, m.now), 1);
		sim_pump(&m);
	}
	CHECK_EQ(m.written, 128000);

	/* a drop for good: cut and counted */
	FD.n = 0;
	sim_push(&m, 1000);
	CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[0], 2, m.now), 2);
	CHECK_EQ(m.s.cut, 1000);
	CHECK_EQ(m.s.tc_dropped, 1000);
	sim_pump(&m);
	m.out_off += 1000; /* the hole the drop left */

	/* the end of stream waits for what is in flight */
	FD.n = 0;
	sim_push(&m, 2000);
	stream_source_eof(&m.s);
	sim_pump(&m);
	CHECK(!stream_finished(&m.s));
	CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[0], 0, m.now), 1);
	CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[1], 0, m.now), 1);
	sim_pump(&m);
	CHECK(stream_finished(&m.s));
	CHECK_EQ(m.written, 128000 + 2000);
	sim_free(&m);

	/* the switch: removed, or given another device, with pieces in
	 * flight: they move on at once, in order; their answers are ignored */
	sim_init_tc(&m, &t, da, 1);
	sim_push(&m, 4000);
	CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[1], 0, m.now), 1);
	void *db[1] = { &devB };
	const struct toxic *pt[1] = { &t };
	CHECK_EQ(stream_switch_tc(&m.s, pt, db, 1, m.now), 0);
	sim_pump(&m);
	CHECK_EQ(m.written, 4000);
	CHECK_EQ(stream_tc_back(&m.s, &devA, FD.id[0], 0, m.now), 0);
	FD.n = 0;
	sim_push(&m, 100);
	CHECK(FD.dev[0] == &devB);
	CHECK_EQ(stream_switch_tc(&m.s, NULL, NULL, 0, m.now), 0);
	sim_pump(&m);
	CHECK_EQ(m.written, 4100);
	CHECK_EQ(stream_tc_back(&m.s, &devB, FD.id[0], 0, m.now), 0);
	sim_free(&m);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static struct toxic rand_toxic(uint64_t *x, unsigned k, int cutting)
{
	static const enum toxic_type kinds[] = { TOXIC_LATENCY, TOXIC_BANDWIDTH, TOXIC_SLICER,
						 TOXIC_SLOW_CLOSE, TOXIC_LIMIT_DATA, TOXIC_TIMEOUT,
						 TOXIC_RESET_PEER };
	unsigned nk = cutting ? 7 : 4;
	enum toxic_type ty = kinds[rnd(x) % nk];
	char name[16];
	snprintf(name, sizeof(name), "t%u", k);
	struct toxic t = ntu_toxic(ty, TOXIC_DOWNSTREAM, name);
	t.toxicity = rnd(x) % 4 ? 1.0 : 0.5;
	switch (ty) {
	case TOXIC_LATENCY:
		t.a.latency.latency_ms = (int64_t)(rnd(x) % 20);
		t.a.latency.jitter_ms = (int64_t)(rnd(x) % 10);
		break;
	case TOXIC_BANDWIDTH:
		t.a.bandwidth.rate_kbps = (int64_t)(rnd(x) % 500);
		break;
	case TOXIC_SLICER:
		t.a.slicer.average_size = (int64_t)(1 + rnd(x) % 300);
		t.a.slicer.size_variation = (int64_t)(rnd(x) % 100);
		t.a.slicer.delay_us = (int64_t)(rnd(x) % 2000);
		break;
	case TOXIC_SLOW_CLOSE:
		t.a.slow_close.delay_ms = (int64_t)(rnd(x) % 50);
		break;
	case TOXIC_LIMIT_DATA:
		t.a.limit_data.bytes = (int64_t)(rnd(x) % 100000);
		break;
	case TOXIC_TIMEOUT:
	case TOXIC_RESET_PEER:
		t.a.timeout.timeout_ms = (int64_t)(rnd(x) % 100);
		break;
	default:
		break;
	}
	return t;
}

static void test_stream_random(void)
{
	const char *env = getenv("PW_SEED");
	uint64_t seed0 = env ? strtoull(env, NULL, 0) : 0x5eed;
	struct sim *m = calloc(1, sizeof(*m));
	for (uint64_t run = 0; run < 300; run++) {
		uint64_t x = seed0 + run * 0x9e3779b97f4a7c15ull;
		if (!x)
			x = 1;
		int cutting = (int)(run % 2);
		struct toxic pool[6];
		unsigned np = 1 + (unsigned)(rnd(&x) % 5);
		for (unsigned k = 0; k < np; k++)
			pool[k] = rand_toxic(&x, k, cutting);
		const struct toxic *sel[6];
		unsigned n = 0;
		for (unsigned k = 0; k < np; k++)
			if (rnd(&x) % 2)
				sel[n++] = &pool[k];
		sim_init(m, pool, 0, run);
		/* a timeout or reset_peer that stops applying (its toxicity
		 * redrawn, or reset_peer removed) lets later bytes through
		 * after the ones it cut, as in toxiproxy */
		m->holes = cutting;
		CHECK_EQ(stream_switch(&m->s, sel, n, 0), 0);
		for (int step = 0; step < 200; step++) {
			uint64_t r = rnd(&x) % 10;
			if (r < 5 && !stream_source_done(&m->s)) {
				sim_push(m, 1 + (uint32_t)(rnd(&x) % 5000));
			} else if (r < 8) {
				sim_run(m, m->now + rnd(&x) % (5 * MS));
			} else {
				/* a new list: a random subset in chain order, some
				 * toxics changed */
				n = 0;
				for (unsigned k = 0; k < np; k++) {
					if (rnd(&x) % 3 == 0)
						pool[k] = rand_toxic(&x, k, cutting); /* changed (or a new type) */
					if (rnd(&x) % 2)
						sel[n++] = &pool[k];
				}
				CHECK_EQ(stream_switch(&m->s, sel, n, m->now), 0);
				sim_pump(m);
			}
		}
		stream_source_eof(&m->s);
		sim_run(m, m->now + 1000 * MS);
		CHECK_EQ(stream_switch(&m->s, NULL, 0, m->now), 0);
		sim_pump(m);
		CHECK_EQ(m->s.held, 0);
		CHECK(stream_finished(&m->s));
		if (!cutting)
			CHECK_EQ(m->written, m->pushed);
		sim_free(m);
	}
	free(m);
}

/* A kept toxic whose attributes changed restarts as toxiproxy's pipe
 * does; one set again unchanged keeps its state. */
static void test_stream_restart(void)
{
	struct toxic t = ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat");
	t.a.latency.latency_ms = 5000;
	const struct toxic *pt = &t;
	struct sim *m = calloc(1, sizeof(*m));
	/* 5000 -> 0: the waiting chunk goes at the change */
	sim_init(m, &t, 1, 1);
	sim_push(m, 100);
	sim_run(m, 500 * MS);
	CHECK_EQ(m->written, 0);
	t.a.latency.latency_ms = 0;
	CHECK_EQ(stream_switch(&m->s, &pt, 1, m->now), 0);
	sim_pump(m);
	CHECK_EQ(m->written, 100);
	CHECK_EQ(m->pat_ns[0], 500 * MS);
	sim_free(m);
	/* 5000 -> 1000: the head goes at once, the chunk behind it 1000 ms
	 * after its read; set again unchanged: nothing restarts */
	t.a.latency.latency_ms = 5000;
	sim_init(m, &t, 1, 1);
	sim_push(m, 100);
	sim_run(m, 200 * MS);
	sim_push(m, 100);
	sim_run(m, 500 * MS);
	t.a.latency.latency_ms = 1000;
	CHECK_EQ(stream_switch(&m->s, &pt, 1, m->now), 0);
	sim_pump(m);
	CHECK_EQ(m->written, 100);
	sim_run(m, 1100 * MS);
	CHECK_EQ(stream_switch(&m->s, &pt, 1, m->now), 0); /* unchanged */
	sim_run(m, 1199 * MS);
	CHECK_EQ(m->written, 100);
	sim_run(m, 1200 * MS);
	CHECK_EQ(m->written, 200);
	CHECK_EQ(m->pat_ns[1], 1200 * MS);
	sim_free(m);
	/* timeout 0 -> 2000 at 1 s: closes 2 s after the change, not before */
	struct toxic to = ntu_toxic(TOXIC_TIMEOUT, TOXIC_DOWNSTREAM, "to");
	const struct toxic *pto = &to;
	sim_init(m, &to, 1, 1);
	sim_run(m, 1000 * MS);
	to.a.timeout.timeout_ms = 2000;
	CHECK_EQ(stream_switch(&m->s, &pto, 1, m->now), 0);
	sim_pump(m);
	CHECK(!stream_source_done(&m->s));
	sim_run(m, 2999 * MS);
	CHECK(!stream_source_done(&m->s));
	sim_run(m, 3000 * MS);
	CHECK(stream_finished(&m->s));
	sim_free(m);
	/* bandwidth 1 KB/s -> 100 KB/s at 1 s: what is left of the chunk it
	 * paced goes at once, the pacing starts again at the change */
	struct toxic bw = ntu_toxic(TOXIC_BANDWIDTH, TOXIC_DOWNSTREAM, "bw");
	const struct toxic *pbw = &bw;
	bw.a.bandwidth.rate_kbps = 1;
	sim_init(m, &bw, 1, 1);
	sim_push(m, 10000);
	sim_run(m, 1000 * MS);
	CHECK_EQ(m->written, 1000);
	bw.a.bandwidth.rate_kbps = 100;
	CHECK_EQ(stream_switch(&m->s, &pbw, 1, m->now), 0);
	sim_pump(m);
	CHECK_EQ(m->written, 10000);
	sim_push(m, 1000);
	sim_run(m, 1009 * MS);
	CHECK_EQ(m->written, 10000);
	sim_run(m, 1010 * MS);
	CHECK_EQ(m->written, 11000); /* 1000 bytes at 100,000 B/s */
	sim_free(m);
	free(m);
}

/* A slicer of 1-byte pieces makes no more than STREAM_QMAX pieces ahead
 * of an output nobody drains (one pump is bounded work and memory), and
 * goes on as it is drained: every byte once, in order. */
static void test_stream_qmax(void)
{
	struct toxic t = ntu_toxic(TOXIC_SLICER, TOXIC_DOWNSTREAM, "sl");
	t.a.slicer.average_size = 1;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	unsigned char buf[65536];
	for (uint32_t k = 0; k < sizeof(buf); k++)
		buf[k] = ntu_pat(k);
	stream_push(&m->s, chunk_new(buf, sizeof(buf), 0), 0);
	m->in_off = m->pushed = sizeof(buf);
	stream_pump(&m->s, 0);
	CHECK(stream_out(&m->s)->count <= STREAM_QMAX);
	CHECK(stream_out(&m->s)->count > 0);
	stream_pump(&m->s, 0);
	CHECK(stream_out(&m->s)->count <= STREAM_QMAX);
	for (int i = 0; i < 200 && m->written < sizeof(buf); i++)
		sim_pump(m); /* each drains the output and the slicer goes on */
	CHECK_EQ(m->written, sizeof(buf));
	sim_free(m);
	free(m);
}

/* Small reads behind a waiting chunk gather (their memory near their
 * bytes), timed from the last of them: never early, all in order. */
static void test_stream_gather(void)
{
	struct toxic t = ntu_toxic(TOXIC_LATENCY, TOXIC_DOWNSTREAM, "lat");
	t.a.latency.latency_ms = 100;
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, &t, 1, 1);
	for (int k = 0; k < 3000; k++) {
		sim_push_how(m, 1, 1);
		m->now += 1000; /* 1 us apart */
	}
	CHECK(m->s.q[0].count <= 8);
	CHECK(m->s.mem <= m->s.held + 8 * (sizeof(struct chunk) + STREAM_PEND_MAX / 2));
	sim_run(m, 10 * MS);
	stream_source_eof(&m->s);
	sim_run(m, 1000 * MS);
	CHECK_EQ(m->written, 3000);
	CHECK(stream_finished(&m->s));
	/* each piece left no sooner than 100 ms after its last byte's read
	 * (byte j was read at j us) */
	uint64_t end = 0;
	for (unsigned i = 0; i < m->npieces; i++) {
		end += m->plen[i];
		CHECK(m->pat_ns[i] >= (end - 1) * 1000 + 100 * MS);
	}
	CHECK(m->npieces < 3000);
	sim_free(m);
	free(m);
}

/* With no toxic the first queue is the output: small reads gathered
 * behind a chunk the sink has not taken go on as soon as it has, not a
 * gathering time later (and while they gather the reader takes no direct
 * path past them: stream_passthrough()). */
static void read_no_pump(struct sim *m, uint32_t len)
{
	unsigned char buf[4096];
	CHECK(len <= sizeof(buf));
	for (uint32_t k = 0; k < len; k++)
		buf[k] = ntu_pat(m->in_off + k);
	struct chunk *c = stream_chunk_new(&m->s, buf, len, m->now);
	CHECK(c);
	stream_push_read(&m->s, c, m->now);
	m->in_off += len;
	m->pushed += len;
}

static void test_stream_gather_drained(void)
{
	struct sim *m = calloc(1, sizeof(*m));
	sim_init(m, NULL, 0, 1);
	read_no_pump(m, 2000); /* large: straight in */
	for (int k = 0; k < 5; k++)
		read_no_pump(m, 10); /* small, behind it: gathered */
	CHECK(m->s.pend != NULL);
	CHECK_EQ(m->s.q[0].count, 1);
	sim_pump(m); /* the sink takes the 2,000 */
	CHECK_EQ(m->written, 2000);
	CHECK(m->s.pend != NULL);
	CHECK(!stream_passthrough(&m->s)); /* no read goes past the gathered */
	sim_pump(m); /* the same instant: nothing left to gather behind */
	CHECK(m->s.pend == NULL);
	CHECK_EQ(m->written, 2050);
	CHECK(stream_passthrough(&m->s));
	sim_free(m);
	free(m);
}

/* ============================================================ the pool's bare buffers */

static void test_pool_bare(void)
{
	/* the classes: 16-byte steps to 128, then 8 a power of two; each
	 * holds what was asked, wasting less than 16 bytes or an eighth */
	CHECK_EQ(pktpool_bare_class_size(0), 16);
	CHECK_EQ(pktpool_bare_class_size(PKTPOOL_BARE_NCLASS - 1), PKTPOOL_BARE_MAX);
	for (unsigned c = 1; c < PKTPOOL_BARE_NCLASS; c++) {
		CHECK(pktpool_bare_class_size(c) > pktpool_bare_class_size(c - 1));
		CHECK_EQ(pktpool_bare_class((size_t)pktpool_bare_class_size(c)), (int)c);
		CHECK_EQ(pktpool_bare_class((size_t)pktpool_bare_class_size(c - 1) + 1), (int)c);
	}
	for (size_t len = 1; len <= PKTPOOL_BARE_MAX; len += len < 8192 ? 1 : 61) {
		size_t sz = pktpool_bare_size(len);
		CHECK(sz >= len);
		CHECK(sz - len < 16 || sz - len < len / 8);
		size_t f = pktpool_bare_fit(len);
		if (len < 16) {
			CHECK_EQ(f, 0);
			continue;
		}
		CHECK(f <= len && f >= 16);
		CHECK_EQ(pktpool_bare_size(f), f);
		CHECK(pktpool_bare_size(f + 1) > len);
	}
	CHECK_EQ(pktpool_bare_fit(15), 0);
	CHECK_EQ(pktpool_bare_fit(10u << 20), PKTPOOL_BARE_MAX);
	CHECK_EQ(pktpool_bare_class(PKTPOOL_BARE_MAX + 1), -1);
	CHECK_EQ(pktpool_bare_size(300000), 300000);

	/* a slot's cache: a buffer put back is the next one of its class */
	struct pktpool_budget bud = { .max = 4096 };
	struct pktpool pool;
	const struct pktpool_cfg cfg = { .nslots = 2, .pkt_size = sizeof(struct ppkt),
					 .flags = PKTPOOL_CHECK, .bare_cache = 1024,
					 .budget = &bud };
	CHECK_EQ(pktpool_init(&pool, &cfg), 0);
	CHECK_EQ(pktpool_count_made(&pool), 0);
	struct pktbuf *a = pktpool_bare_get(&pool, 0, 100);
	CHECK(a && a->size == 112 && a->cls);
	CHECK_EQ(pktpool_budget_used(&bud), 112);
	a->user = 7;
	CHECK_EQ(pktpool_bare_put(&pool, a, 0), 0);
	CHECK_EQ(pktpool_bare_put(&pool, a, 0), -EALREADY); /* twice: refused */
	CHECK_EQ(pktpool_budget_used(&bud), 0);
	CHECK_EQ(pktpool_bare_cached(&pool), 112);
	struct pktbuf *b = pktpool_bare_get(&pool, 0, 97); /* the same class */
	CHECK(b == a && b->user == 0);
	CHECK_EQ(pktpool_bare_cached(&pool), 0);
	/* slot 1 has its own lists; a thread with no slot (-1) mallocs and frees */
	struct pktbuf *c = pktpool_bare_get(&pool, 1, 100);
	CHECK(c && c != a);
	CHECK_EQ(pktpool_bare_put(&pool, c, -1), 0);
	CHECK_EQ(pktpool_bare_cached(&pool), 0);
	/* the budget: a get it refuses allocates nothing */
	CHECK(!pktpool_bare_get(&pool, 0, 4000 + 1));
	CHECK_EQ(bud.refused, 1);
	CHECK_EQ(pktpool_budget_used(&bud), 112);
	/* the cache's bound: past 1024 bytes a put frees */
	struct pktbuf *x[8];
	for (int i = 0; i < 8; i++)
		CHECK((x[i] = pktpool_bare_get(&pool, 0, 200)) && x[i]->size == 208);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(pktpool_bare_put(&pool, x[i], 0), 0);
	CHECK_EQ(pktpool_bare_cached(&pool), 4 * 208);
	/* above the largest class: an exact malloc, freed when put */
	bud.max = 1u << 20;
	struct pktbuf *big = pktpool_bare_get(&pool, 0, 300000);
	CHECK(big && big->size == 300000 && !big->cls);
	CHECK_EQ(pktpool_bare_put(&pool, big, 0), 0);
	CHECK_EQ(pktpool_bare_cached(&pool), 4 * 208);
	CHECK_EQ(pktpool_bare_put(&pool, b, 1), 0); /* to slot 1's lists */
	CHECK_EQ(pktpool_bare_cached(&pool), 4 * 208 + 112);
	CHECK_EQ(pktpool_budget_used(&bud), 0);
	pktpool_destroy(&pool); /* frees the lists (ASan: no leak) */

	/* a pool without a cache (the relay's, the lab's): no lists at all */
	const struct pktpool_cfg plain = { .nslots = 1, .pkt_size = sizeof(struct ppkt),
					   .prealloc = 2, .max = 2 };
	CHECK_EQ(pktpool_init(&pool, &plain), 0);
	CHECK(!pool.bcache && !pool.slot[0].bc);
	a = pktpool_bare_get(&pool, 0, 5000);
	CHECK(a && a->size == pktpool_bare_size(5000));
	CHECK_EQ(pktpool_bare_put(&pool, a, 0), 0);
	CHECK_EQ(pktpool_bare_cached(&pool), 0);
	CHECK_EQ(pktpool_count_free(&pool), 2);
	pktpool_destroy(&pool);
}

static void run_streams(void)
{
	RUN(test_stream_latency);
	RUN(test_stream_bandwidth);
	RUN(test_stream_rate);
	RUN(test_stream_slicer);
	RUN(test_stream_limit_data);
	RUN(test_stream_timeout);
	RUN(test_stream_reset_slow_close);
	RUN(test_stream_toxicity);
	RUN(test_stream_switch);
	RUN(test_stream_tc);
	RUN(test_stream_random);
	RUN(test_stream_restart);
	RUN(test_stream_qmax);
	RUN(test_stream_gather);
	RUN(test_stream_gather_drained);
}

int main(void)
{
	RUN(test_pool_bare);
	run_streams(); /* malloc'd chunks */
	struct pktpool pool;
	const struct pktpool_cfg cfg = { .nslots = 1, .pkt_size = sizeof(struct ppkt),
					 .flags = PKTPOOL_CHECK, .bare_cache = 1u << 20 };
	CHECK_EQ(pktpool_init(&pool, &cfg), 0);
	G_pool = &pool;
	run_streams(); /* the pool's */
	CHECK(pktpool_bare_cached(&pool) <= 1u << 20);
	G_pool = NULL;
	pktpool_destroy(&pool);
	return 0;
}
