/* SPDX-License-Identifier: MIT */
/*
 * One direction of a proxied TCP connection as a pipeline of chunks
 * through the direction's toxics (tools/netem/tcp/stream.c): the chunks, the
 * queues between the stages, each toxic's stage state, the end of the
 * stream (EOF) moving through the stages, and the live switch of the
 * toxic list.  No sockets and no timers here: the caller
 * (tools/netem/tcp/tcp.c) reads chunks in, calls stream_pump() with the time,
 * arms a timer for the time it returns, and writes what reached the
 * output queue.  The chunks and their queues are made, moved and freed
 * in tools/netem/tcp/chunk.c.
 *
 * Threads: a stream belongs to the worker that owns its connection; only
 * that thread calls these.  Locks: none.
 */
#ifndef PW_NETEM_STREAM_H
#define PW_NETEM_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pktpool.h"
#include "../toxic.h"

/* What one read returned (or a piece a toxic cut from it): bytes
 * data[off, len).  A bare buffer of the stream's pool (or, without one,
 * a malloc of its exact size: b.cls 0): b.size is what it costs, header
 * included; b.user is the tc stage's state (TC_IN_DEV, TC_BACK,
 * TC_RESEND). */
struct chunk {
	struct pktbuf b;   /* first: the pool's head */
	struct chunk *next;
	uint32_t len, off;
	uint64_t read_ns;  /* when it was read from the source (statistics) */
	uint64_t ts_ns;    /* the latency toxics' timestamp: read time, moved
			      on by each latency stage it passes */
	uint64_t arr_ns;   /* when it entered the queue it is in */
	uint64_t tc_id;    /* tc stage: its packet's number in the stream */
	unsigned char data[];
};

/* What a chunk costs in memory: its whole allocation, header included
 * (the bare class size: what the stream's mem counts). */
static inline uint64_t chunk_mem(const struct chunk *c)
{
	return c->b.size;
}

/* The bytes data[] has room for (>= len). */
static inline uint32_t chunk_cap(const struct chunk *c)
{
	return c->b.size - (uint32_t)sizeof(*c);
}

/* A FIFO of chunks and the bytes it holds. */
struct chunkq {
	struct chunk *head, *tail;
	uint64_t bytes;
	uint32_t count;    /* chunks */
};

/* A slicer or bandwidth stage makes no new piece while the queue after it
 * holds this many chunks (toxiproxy's toxics have channels of 1024
 * chunks); what is held then costs at most this many headers a stage. */
#define STREAM_QMAX 1024u

/* Small reads (at most STREAM_SMALL bytes) that arrive while the first
 * queue is not empty gather in one pending chunk (at most STREAM_PEND_MAX
 * bytes, at most STREAM_PEND_NS after its first read, or until the pump
 * finds that queue empty) before they enter it, so held bytes cost about
 * what they hold; they are timed from the last read among them (late by
 * that much at most, never early).  While they gather, no read takes the
 * direct path past them (stream_passthrough()). */
#define STREAM_SMALL    1024u
#define STREAM_PEND_MAX (16u << 10)
#define STREAM_PEND_NS  1000000ull

/* Where a chunk in a tc stage's flight queue is. */
enum { TC_IN_DEV = 0, TC_BACK = 1, TC_RESEND = 2 };

/* The largest packet a tc stage makes of a chunk (the device's MTU). */
#define TC_MTU 1500u
/* A tc stage's first window (bytes in its device at once), and its least. */
#define TC_WIN_INIT (64u << 10)
#define TC_RESEND_NS 1000000ull

/**
 * struct stream_tc_ops - how a stream hands a tc stage's pieces to its
 * device (tools/netem/tc_toxic.c; a test's fake).  send() takes a piece
 * of @len bytes numbered @id for device @dev: 0 taken (it comes back
 * through stream_tc_back() later, never from inside send()); a negative
 * errno when it could not be taken (no memory: tried again later).
 */
struct stream_tc_ops {
	int (*send)(void *ctx, void *dev, uint32_t len, uint64_t id);
	void *ctx;
};

/* A toxic applied to one direction of one connection. */
struct stage {
	struct toxic t;        /* the toxic's configuration (tc strings cleared) */
	int active;            /* its toxicity drew "applies" for this connection */
	uint64_t rng;          /* its random stream (jitter, slicer sizes) */
	int head_set;          /* head_due_ns is the head chunk's time here */
	uint64_t head_due_ns;  /* when the head (or its next piece) may move on */
	uint32_t piece;        /* bandwidth: the head piece's size */
	uint64_t free_ns;      /* bandwidth, slicer: when the stage is free again */
	uint64_t passed;       /* limit_data: bytes passed */
	uint64_t deadline_ns;  /* timeout, reset_peer: when it closes */
	int triggered;         /* reset_peer: its first chunk (or EOF) came */
	int flush;             /* bandwidth, slicer: its attributes changed: the
				  head (what is left of it) moves on at once, as
				  toxiproxy's interrupted toxic sends it on */
	int gated;             /* slicer, bandwidth: stopped by a full output queue */
	int close_set;         /* slow_close: close_due_ns holds the EOF's time */
	uint64_t close_due_ns;
	void *tc;              /* tc: its device (NULL: passes everything) */
	struct chunkq fl;      /* tc: the chunks sent to it, in stream order */
	uint64_t tc_win;       /* tc: bytes it may have in the device */
	uint64_t tc_out;       /* tc: bytes in the device now */
	unsigned tc_resend;    /* tc: chunks in fl waiting to be sent again */
	uint64_t tc_retry_ns;  /* tc: not before then */
};

/* The rate windows' length (as src/net/accuracy.c's qdisc windows). */
#define STREAM_RATE_WINDOW_NS 100000000ull

/*
 * The achieved rate of the stream's bandwidth limit: the stage measured
 * is the applied bandwidth toxic with the lowest rate (toxics in series:
 * the stream gets the slowest); bytes it released, by release time, in
 * windows of STREAM_RATE_WINDOW_NS counted from the start of each backlog
 * of its input queue (the head's arrival, or the last switch that
 * changed the stage), judged only when the queue (stage 0: or the small
 * reads gathering) held bytes throughout (a window cut short by the queue
 * running dry is not judged, so an idle sender does not look like a slow
 * link); a window with no release while bytes waited is judged at 0.
 * Stage 0's queue running dry while the caller holds back a readable
 * source (stream_source_held(): its bound on what a direction holds) is
 * not the sender's idle: the backlog goes on, and the gap until the next
 * read counts against the rate, which is what the stream got.
 * windows and bytes only grow.
 */
struct stream_rate {
	int stage;             /* the stage measured (-1: none) */
	int busy;              /* its input queue held bytes after its last release */
	int64_t kbps;          /* its rate (KB/s, toxiproxy's unit) */
	uint64_t floor_ns;     /* no backlog begins before (the last change) */
	uint64_t start_ns;     /* the open window's start */
	uint64_t win_bytes;    /* released in the open window so far */
	uint64_t windows;      /* windows judged */
	uint64_t bytes;        /* bytes released in them */
};

/*
 * The pipeline: stage i moves chunks from q[i] to q[i+1]; q[n] is the
 * output the caller writes.  The end of the stream is a token at queue
 * eof_at (-1 while the source is open): every queue before it is empty,
 * and the stages before it are finished.
 */
struct stream {
	unsigned n;
	int self;              /* the owning worker's slot in pool (set with it) */
	struct stage *st;      /* [n] */
	struct chunkq *q;      /* [n + 1] */
	int eof_at;
	int rst;               /* a reset_peer closed it: reset, do not FIN */
	uint64_t held;         /* bytes in all queues */
	uint64_t mem;          /* what those chunks cost (chunk_mem: headers and
				  allocations); the caller's bound on reads */
	struct chunk *pend;    /* small reads gathering before q[0] (held too) */
	uint64_t mem_max;      /* the caller's bound on mem (0: none): gathering
				  never grows mem past it by more than the
				  bytes gathered */
	uint64_t pend_first_ns, pend_last_ns; /* its first and last read */
	uint64_t cut;          /* bytes a toxic cut on purpose (monotonic) */
	uint64_t seed;         /* the connection's seed for unseeded toxics */
	uint64_t serial;       /* the connection's number in its proxy */
	const struct stream_tc_ops *tc_ops; /* NULL: tc stages pass everything */
	uint64_t tc_next_id;   /* the next tc packet's number (never reused) */
	uint64_t tc_dropped;   /* bytes a tc device dropped (cut too) */
	struct pktpool *pool;  /* where its chunks come from and go back (NULL:
				  malloc and free); set after stream_init() */
	struct stream_rate rate; /* its bandwidth limit's achieved rate */
	int src_held;          /* the caller holds back a readable source
				  (stream_source_held()) */
};

/**
 * stream_init() - an empty pipeline through @n toxics @t (all of this
 * stream's direction, in chain order), the toxicity of each drawn now.
 * Context: the owning worker.  Return: 0; -ENOMEM.
 */
int stream_init(struct stream *s, const struct toxic *const *t, unsigned n, uint64_t seed,
		uint64_t serial, uint64_t now_ns);

/**
 * stream_init_tc() - stream_init(), with @dev[k] the device of toxic k when
 * it is a tc toxic (@dev NULL, or an entry NULL: that tc toxic passes
 * everything) and @ops how pieces go to a device.
 * Context: the owning worker.  Return: 0; -ENOMEM.
 */
int stream_init_tc(struct stream *s, const struct toxic *const *t, void *const *dev, unsigned n,
		   const struct stream_tc_ops *ops, uint64_t seed, uint64_t serial, uint64_t now_ns);

/**
 * stream_tc_back() - the piece @id of device @dev came back: sent
 * (@how 0: it moves on once every piece before it has), to be sent again
 * (@how 1: the qdisc was full; the stage's window halves), or dropped for
 * good (@how 2: its bytes are cut, counted in tc_dropped too); @now_ns
 * times the resend.
 * Context: the owning worker.
 * Return: 1 the piece was found; 0 it was not (its stage was removed or
 * changed device meanwhile: its bytes moved on already); 2 found and cut
 * (@how 2: the caller resets the connection).
 */
int stream_tc_back(struct stream *s, void *dev, uint64_t id, int how, uint64_t now_ns);

/**
 * stream_free() - free every chunk (counted nowhere) and the stages.
 * Context: the owning worker.  Return: the bytes it held.
 */
uint64_t stream_free(struct stream *s);

/**
 * stream_push() - a chunk read from the source enters the first queue.
 * Context: the owning worker.
 */
void stream_push(struct stream *s, struct chunk *c, uint64_t now_ns);

/**
 * stream_push_read() - as stream_push(), for a chunk just read: a small
 * one gathers with the small reads before it while the first queue is
 * not empty (STREAM_SMALL, STREAM_PEND_MAX, STREAM_PEND_NS); @c may be
 * freed (its bytes copied).
 * Context: the owning worker.
 */
void stream_push_read(struct stream *s, struct chunk *c, uint64_t now_ns);

/**
 * stream_source_eof() - the source ended (EOF or error), or is not to be
 * read any more: the end of stream enters the first queue, behind the
 * data.  A no-op once the end is in the pipeline.
 * Context: the owning worker.
 */
void stream_source_eof(struct stream *s);

/**
 * stream_source_held() - the caller's bound stopped it reading a source
 * that has bytes (@held 1), or a read found the source empty (@held 0:
 * a backlog of stage 0 that ran dry meanwhile ends here, its open window
 * not judged).  Only the achieved rate's judging looks at it (struct
 * stream_rate).
 * Context: the owning worker.
 */
void stream_source_held(struct stream *s, int held);

/**
 * stream_pump() - move every chunk (and the end of stream) as far as the
 * stages let it at @now_ns, cutting what toxics cut.  A slicer or
 * bandwidth stage makes no new piece while its output queue holds
 * STREAM_QMAX chunks (it moves on when that queue is drained: the
 * caller pumps again after it wrote the output).
 * Context: the owning worker.
 * Return: when it must be pumped again (UINT64_MAX: only on new input).
 */
uint64_t stream_pump(struct stream *s, uint64_t now_ns);

/**
 * stream_switch() - change to the @n toxics @t.  A toxic kept (same name
 * and type) keeps its state and queue and takes the new attributes; one
 * whose attributes changed restarts as toxiproxy restarts its pipe: a
 * latency, bandwidth or slicer stage sends the head it was working on
 * on at once (later chunks are timed with the new values), a bandwidth
 * stage's pacing starts again from @now_ns, a timeout's timer starts
 * again from @now_ns; the
 * chunks a removed toxic held move on to the next stage kept (or the
 * output), in order; a new toxic starts empty with its toxicity drawn;
 * removing an applied timeout toxic closes the stream there, as
 * toxiproxy's cleanup does.
 * Context: the owning worker.  Return: 0; -ENOMEM (nothing changed).
 */
int stream_switch(struct stream *s, const struct toxic *const *t, unsigned n, uint64_t now_ns);

/**
 * stream_switch_tc() - stream_switch() with each tc toxic's device in
 * @dev (as stream_init_tc()).  A tc stage kept with the same device keeps
 * its pieces in flight; one removed, or given another device, lets the
 * chunks it had in flight move on at once, in order (their packets drain
 * through the old device and are ignored when they come back).
 * Context: the owning worker.  Return: 0; -ENOMEM (nothing changed).
 */
int stream_switch_tc(struct stream *s, const struct toxic *const *t, void *const *dev, unsigned n,
		     uint64_t now_ns);

/* The output queue (the caller writes its head and pops what went out).
 * Context: the owning worker. */
static inline struct chunkq *stream_out(struct stream *s)
{
	return &s->q[s->n];
}

/* 1 when @s has no toxic and holds nothing, gathered small reads
 * included: a read may then go straight to the sink without overtaking a
 * byte.  Context: the owning worker. */
static inline int stream_passthrough(const struct stream *s)
{
	return s->n == 0 && !s->q[0].head && !s->pend;
}

/* 1 once the source must not be read any more (EOF seen or a toxic closed). */
static inline int stream_source_done(const struct stream *s)
{
	return s->eof_at >= 0;
}

/* 1 when the end of stream reached the output and all was written. */
static inline int stream_finished(const struct stream *s)
{
	return s->eof_at == (int)s->n && !s->q[s->n].head;
}

/**
 * chunk_new() - a chunk holding a copy of @len bytes of @p, malloc'd (for
 * a stream with no pool; freed by stream_chunk_free() of such a stream).
 * Context: any thread.  Return: the chunk; NULL (ENOMEM).
 */
struct chunk *chunk_new(const void *p, size_t len, uint64_t now_ns);

/**
 * stream_chunk_get() - an empty chunk (len, off 0, times @now_ns) with
 * room for at least @cap bytes, from @s's pool (its bare class for the
 * header and @cap) or malloc'd to size without one.  Not counted in @s's
 * mem until it is pushed.
 * Context: the owning worker.  Return: the chunk; NULL (ENOMEM).
 */
struct chunk *stream_chunk_get(struct stream *s, size_t cap, uint64_t now_ns);

/* stream_chunk_get() holding a copy of @len bytes of @p.  The owning
 * worker.  Return: the chunk; NULL (ENOMEM). */
struct chunk *stream_chunk_new(struct stream *s, const void *p, size_t len, uint64_t now_ns);

/* Give back @c, not counted in @s's mem (never pushed, or its cost
 * already taken off).  The owning worker. */
void stream_chunk_put(struct stream *s, struct chunk *c);

/**
 * stream_chunk_fit() - @c (not yet pushed, holding c->len bytes) in the
 * smallest buffer that holds them: a smaller bare class's buffer (the
 * bytes copied) when there is one, so what is held costs what it holds.
 * Kept as it is when no smaller one can be had.
 * Context: the owning worker.  Return: the chunk (@c or its copy).
 */
struct chunk *stream_chunk_fit(struct stream *s, struct chunk *c);

/**
 * chunk_move() - @c (not counted in @s's mem) moved to a buffer with room
 * for @cap bytes (its header and its len bytes copied; without a pool, a
 * realloc); @c is given back.
 * Context: the owning worker.  Return: the new chunk; NULL (no memory:
 * @c unchanged).
 */
struct chunk *chunk_move(struct stream *s, struct chunk *c, size_t cap);

/* Append @c to @q (its unsent bytes to @q's count).  Context: the
 * queue's owner. */
void chunkq_append(struct chunkq *q, struct chunk *c);

/* Append all of @from to @to, in order; @from is left empty.
 * Context: the queues' owner. */
void chunkq_splice(struct chunkq *to, struct chunkq *from);

/* Free what @q holds (its memory leaves @s's mem).  Context: the owning
 * worker.  Return: the bytes it held. */
uint64_t chunkq_clear(struct stream *s, struct chunkq *q);

/* What a chunk with room for @cap bytes costs from @s's allocator (its
 * pool's bare class, or the exact size).  Context: the owning worker.
 * Return: bytes, header included. */
uint64_t chunk_mem_for(const struct stream *s, size_t cap);

/**
 * chunkq_pop() - take the head of @q; @q's byte count drops by what the
 * head still held (the stream's held and mem counts are the caller's to
 * lower: stream_chunk_free() does it).
 * Context: the queue's owner.  Return: the chunk; NULL if @q is empty.
 */
struct chunk *chunkq_pop(struct chunkq *q);

/* Free @c, popped from @s's output queue with all its bytes written
 * (held was lowered by the caller as the bytes went): its memory leaves
 * @s's mem.  Context: the owning worker. */
static inline void stream_chunk_free(struct stream *s, struct chunk *c)
{
	s->mem -= chunk_mem(c);
	stream_chunk_put(s, c);
}

/* ------------------------------------------------------------ stream.c and stream_tc.c only */

/* Move the head of q[@i] (whole) to q[@i+1].  The owning worker. */
static inline void stream__move_head(struct stream *s, unsigned i, uint64_t now)
{
	struct chunk *c = chunkq_pop(&s->q[i]);
	c->arr_ns = now;
	chunkq_append(&s->q[i + 1], c);
}

/**
 * stream__tc_run() - the tc stage @i: pieces of at most TC_MTU bytes to
 * its device while its window has room (what the qdisc refused first, in
 * order), and what came back on to q[@i+1] in stream order.
 * Context: the owning worker.  Return: when it next needs to run, as a
 * stage's run in stream.c (UINT64_MAX: on new input only).
 */
uint64_t stream__tc_run(struct stream *s, unsigned i, uint64_t now);

#endif /* PW_NETEM_STREAM_H */
