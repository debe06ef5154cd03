/* SPDX-License-Identifier: MIT */
/*
 * The chunks of a TCP direction's stream and their queues: where a chunk's
 * memory comes from and goes back to, and the FIFO between two stages
 * (the pipeline that moves them is tools/netem/tcp/stream.c; struct chunk,
 * struct chunkq and the declarations are in stream.h).
 *
 * A chunk is a bare buffer (tools/common/pktpool.h: pktpool_bare_get(),
 * pktpool_bare_put()) of the stream's pool, from the owning worker's slot
 * (s->self), so a chunk never crosses threads; or, for a stream with no
 * pool (the tests, chunk_new() of a caller with none), a malloc of its
 * exact size, marked as a buffer of no class (b.cls 0).  Invariant: a
 * chunk's b.size is its whole allocation, header included (chunk_mem(),
 * what the stream's mem counts), and chunk_cap() bytes fit in data[].
 * Making a chunk never counts it in the stream's mem: the caller does as
 * it pushes it (stream.c).  stream_chunk_fit() moves a chunk to the least
 * class that holds its bytes (a copy), so held bytes cost what they hold;
 * chunk_move() is the copy it and the gathering of small reads share.
 *
 * Threads: the worker that owns the stream (chunk_new(): any thread, it
 * touches no pool).  Locks: none here (the pool's slot is the worker's
 * own).  Costs: a get or put is the pool's (a list pop or push) or a
 * malloc/free; a move or fit copies the chunk's bytes once; the queue
 * operations are O(1).
 */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

/* A chunk's fields for an empty chunk read at @now. */
static void chunk_init(struct chunk *c, uint64_t now)
{
	c->b.user = TC_IN_DEV;
	c->next = NULL;
	c->len = 0;
	c->off = 0;
	c->read_ns = c->ts_ns = c->arr_ns = now;
	c->tc_id = 0;
}

/* A malloc'd chunk of @size bytes (header included): a buffer of no
 * class, as the pool's own exact ones. */
static struct chunk *chunk_malloc(size_t size)
{
	struct chunk *c = malloc(size);
	if (!c)
		return NULL;
	c->b.size = (uint32_t)size;
	c->b.cls = 0;
	c->b.held = 1;
	return c;
}

struct chunk *chunk_new(const void *p, size_t len, uint64_t now_ns)
{
	struct chunk *c = chunk_malloc(sizeof(*c) + len);
	if (!c)
		return NULL;
	chunk_init(c, now_ns);
	c->len = (uint32_t)len;
	memcpy(c->data, p, len);
	return c;
}

struct chunk *stream_chunk_get(struct stream *s, size_t cap, uint64_t now_ns)
{
	struct chunk *c;
	if (cap > UINT32_MAX - sizeof(*c))
		return NULL;
	if (s->pool)
		c = (struct chunk *)pktpool_bare_get(s->pool, s->self, sizeof(*c) + cap);
	else
		c = chunk_malloc(sizeof(*c) + cap);
	if (c)
		chunk_init(c, now_ns);
	return c;
}

struct chunk *stream_chunk_new(struct stream *s, const void *p, size_t len, uint64_t now_ns)
{
	struct chunk *c = stream_chunk_get(s, len, now_ns);
	if (c) {
		memcpy(c->data, p, len);
		c->len = (uint32_t)len;
	}
	return c;
}

void stream_chunk_put(struct stream *s, struct chunk *c)
{
	if (s->pool)
		(void)pktpool_bare_put(s->pool, &c->b, s->self);
	else
		free(c);
}

/* @c (not counted in @s's mem) moved to a buffer of @cap bytes of data
 * (its header and its len bytes copied); @c is given back.  Return: the
 * new chunk; NULL (no memory: @c unchanged). */
struct chunk *chunk_move(struct stream *s, struct chunk *c, size_t cap)
{
	struct chunk *n;
	if (!s->pool) {
		n = realloc(c, sizeof(*c) + cap);
		if (n)
			n->b.size = (uint32_t)(sizeof(*c) + cap);
		return n;
	}
	n = (struct chunk *)pktpool_bare_get(s->pool, s->self, sizeof(*c) + cap);
	if (!n)
		return NULL;
	struct pktbuf b = n->b;
	memcpy(n, c, sizeof(*c) + c->len);
	b.user = c->b.user;
	n->b = b;
	stream_chunk_put(s, c);
	return n;
}

struct chunk *stream_chunk_fit(struct stream *s, struct chunk *c)
{
	size_t want = sizeof(*c) + c->len;
	size_t size = s->pool ? pktpool_bare_size(want) : want;
	if (size >= c->b.size)
		return c;
	struct chunk *n = chunk_move(s, c, c->len);
	return n ? n : c;
}

void chunkq_append(struct chunkq *q, struct chunk *c)
{
	c->next = NULL;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->bytes += c->len - c->off;
	q->count++;
}

struct chunk *chunkq_pop(struct chunkq *q)
{
	struct chunk *c = q->head;
	if (!c)
		return NULL;
	q->head = c->next;
	if (!q->head)
		q->tail = NULL;
	q->bytes -= c->len - c->off;
	q->count--;
	c->next = NULL;
	return c;
}

/* Append all of @from to @to, in order; @from is left empty. */
void chunkq_splice(struct chunkq *to, struct chunkq *from)
{
	if (!from->head)
		return;
	if (to->tail)
		to->tail->next = from->head;
	else
		to->head = from->head;
	to->tail = from->tail;
	to->bytes += from->bytes;
	to->count += from->count;
	from->head = from->tail = NULL;
	from->bytes = 0;
	from->count = 0;
}

/* Free what @q holds (its memory leaves @s's mem).  Return: its bytes. */
uint64_t chunkq_clear(struct stream *s, struct chunkq *q)
{
	uint64_t b = q->bytes;
	struct chunk *c;
	while ((c = chunkq_pop(q)))
		stream_chunk_free(s, c);
	return b;
}

/* What a chunk with room for @cap bytes costs from @s's allocator. */
uint64_t chunk_mem_for(const struct stream *s, size_t cap)
{
	size_t want = sizeof(struct chunk) + cap;
	return s->pool ? pktpool_bare_size(want) : want;
}
