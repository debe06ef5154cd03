/* SPDX-License-Identifier: MIT */
/*
 * pktpool: the slow halves of the pool (making packets, class buffers,
 * init, destroy, counts) and the driver's ops.  The design, threads, locks
 * and costs are in pktpool.h; the hot paths (get, put) are inline there.
 *
 * Threads: pktpool_init/destroy/count_* and pktdrv_init/destroy on one
 * thread while nothing else uses the pool; pktpool__make() on the owner of
 * the slot it makes for (any thread for a thread's own packet); the ops
 * on whichever thread the layer calls them on; pktpool_bare_get/put on
 * the owner of the slot they name (any thread for -1).  Locks: none; a budget
 * is charged with pktpool_charge() (a CAS loop) before each allocation
 * and uncharged (an atomic subtraction) after each free.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "pktpool.h"

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* @p's pool fields for slot @home (-1: a thread's own), its bytes inline.
 * Whoever makes @p. */
static void pkt_setup(struct pktpool *pool, struct ppkt *p, int home)
{
	p->buf = pktpool_inline(pool, p);
	p->bufsize = pool->inline_bytes;
	p->home = (int16_t)home;
	p->cls = 0;
	p->held = 0;
}

int pktpool_init(struct pktpool *pool, const struct pktpool_cfg *cfg)
{
	memset(pool, 0, sizeof(*pool));
	if (!cfg || !cfg->nslots || cfg->nslots > INT16_MAX ||
	    cfg->pkt_size < sizeof(struct ppkt) || cfg->max < cfg->prealloc ||
	    cfg->inline_bytes > PKTPOOL_CLASS_MAX)
		return -EINVAL;
	pool->nslots = cfg->nslots;
	pool->flags = cfg->flags;
	pool->bare_cache = cfg->bare_cache;
	pool->budget = cfg->budget;
	pool->inline_bytes = cfg->inline_bytes;
	pool->inl_off = round_up(cfg->pkt_size, 16);
	pool->stride = round_up(pool->inl_off + cfg->inline_bytes, 16);
	size_t n = (size_t)cfg->nslots * cfg->prealloc;
	if (cfg->prealloc && n / cfg->prealloc != cfg->nslots)
		return -EINVAL;
	pool->slot = aligned_alloc(64, cfg->nslots * sizeof(*pool->slot));
	if (!pool->slot)
		return -ENOMEM;
	memset(pool->slot, 0, cfg->nslots * sizeof(*pool->slot));
	if (cfg->bare_cache) {
		pool->bcache = aligned_alloc(64, cfg->nslots * sizeof(*pool->bcache));
		if (!pool->bcache) {
			free(pool->slot);
			pool->slot = NULL;
			return -ENOMEM;
		}
		memset(pool->bcache, 0, cfg->nslots * sizeof(*pool->bcache));
		for (unsigned s = 0; s < cfg->nslots; s++)
			pool->slot[s].bc = &pool->bcache[s];
	}
	if (n) {
		pool->arena = calloc(n, pool->stride);
		if (!pool->arena) {
			free(pool->bcache);
			free(pool->slot);
			pool->bcache = NULL;
			pool->slot = NULL;
			return -ENOMEM;
		}
		pool->arena_len = n * pool->stride;
		if (pool->budget) /* made now: charged whatever the limit */
			__atomic_fetch_add(&pool->budget->used, pool->arena_len, __ATOMIC_RELAXED);
	}
	for (unsigned s = 0; s < cfg->nslots; s++) {
		struct pktpool_slot *sl = &pool->slot[s];
		for (unsigned i = 0; i < cfg->prealloc; i++) {
			struct ppkt *p = (struct ppkt *)(pool->arena +
							 ((size_t)s * cfg->prealloc + i) * pool->stride);
			pkt_setup(pool, p, (int)s);
			p->pkt.pw_next = (struct pw_pkt *)sl->local;
			sl->local = p;
		}
		sl->made = cfg->prealloc;
		sl->max = cfg->max;
	}
	return 0;
}

/* Whether @p is one of the preallocated packets (freed with the arena). */
static int in_arena(const struct pktpool *pool, const struct ppkt *p)
{
	const char *c = (const char *)p;
	return pool->arena && c >= pool->arena && c < pool->arena + pool->arena_len;
}

void pktpool_destroy(struct pktpool *pool)
{
	if (pool->budget && pool->slot) /* every packet made, the arena's too */
		pktpool_uncharge(pool->budget, pktpool_count_made(pool) * pool->stride);
	for (unsigned s = 0; pool->slot && s < pool->nslots; s++) {
		struct pktpool_slot *sl = &pool->slot[s];
		struct ppkt *lists[2] = {
			sl->local, __atomic_exchange_n(&sl->remote, NULL, __ATOMIC_ACQUIRE)
		};
		for (int l = 0; l < 2; l++)
			for (struct ppkt *p = lists[l], *next; p; p = next) {
				next = (struct ppkt *)p->pkt.pw_next;
				if (!in_arena(pool, p))
					free(p);
			}
		sl->local = NULL;
		if (sl->bc)
			for (unsigned c = 0; c < PKTPOOL_BARE_NCLASS; c++)
				for (struct pktbuf *b = sl->bc->free[c], *next; b; b = next) {
					next = *(struct pktbuf **)(b + 1);
					free(b);
				}
	}
	free(pool->bcache);
	free(pool->arena);
	free(pool->slot);
	memset(pool, 0, sizeof(*pool));
}

struct ppkt *pktpool__make(struct pktpool *pool, int self)
{
	struct pktpool_slot *sl = self >= 0 ? &pool->slot[self] : NULL;
	if (sl && sl->made >= sl->max)
		return NULL;
	if (pool->budget && !pktpool_charge(pool->budget, pool->stride, pool->budget->max))
		return NULL;
	struct ppkt *p = malloc(pool->stride);
	if (!p) {
		if (pool->budget)
			pktpool_uncharge(pool->budget, pool->stride);
		return NULL;
	}
	pkt_setup(pool, p, sl ? self : -1);
	if (sl)
		sl->made++;
	if (pool->flags & PKTPOOL_CHECK)
		__atomic_store_n(&p->held, 1, __ATOMIC_RELEASE);
	return p;
}

/* Free @p's class buffer (uncharged: one atomic subtraction on the
 * budget), back to its inline area.  Whoever holds @p. */
static void drop_class(struct pktpool *pool, struct ppkt *p)
{
	if (!p->cls)
		return;
	free(p->buf);
	if (pool->budget)
		pktpool_uncharge(pool->budget, p->bufsize);
	p->buf = pktpool_inline(pool, p);
	p->bufsize = pool->inline_bytes;
	p->cls = 0;
}

void pktpool__release(struct pktpool *pool, struct ppkt *p)
{
	drop_class(pool, p);
	if (p->home < 0) {
		free(p);
		if (pool->budget)
			pktpool_uncharge(pool->budget, pool->stride);
	}
}

size_t pktpool_class_size(size_t len)
{
	if (len > PKTPOOL_CLASS_MAX)
		return 0;
	size_t c = PKTPOOL_CLASS_MIN;
	while (c < len)
		c <<= 1;
	return c;
}

int pktpool_buf_limit(struct pktpool *pool, struct ppkt *p, size_t len, uint64_t limit)
{
	if (len <= pool->inline_bytes) {
		drop_class(pool, p);
		return 0;
	}
	size_t c = pktpool_class_size(len);
	if (!c)
		return -EMSGSIZE;
	if (p->cls && p->bufsize == c)
		return 0;
	/* the new buffer is charged before the old one is given back: a
	 * replacement never passes the limit even for a moment */
	if (pool->budget && !pktpool_charge(pool->budget, c, limit))
		return -ENOBUFS;
	char *b = malloc(c);
	if (!b) {
		if (pool->budget)
			pktpool_uncharge(pool->budget, c);
		return -ENOMEM;
	}
	drop_class(pool, p);
	uint8_t cls = 1;
	for (size_t k = PKTPOOL_CLASS_MIN; k < c; k <<= 1)
		cls++;
	p->buf = b;
	p->bufsize = (uint32_t)c;
	p->cls = cls;
	return 0;
}

int pktpool_buf(struct pktpool *pool, struct ppkt *p, size_t len)
{
	return pktpool_buf_limit(pool, p, len, pool->budget ? pool->budget->max : 0);
}

size_t pktpool_bytes_for(const struct pktpool *pool, size_t len)
{
	if (len <= pool->inline_bytes)
		return pool->stride;
	size_t c = pktpool_class_size(len);
	return c ? pool->stride + c : 0;
}

uint64_t pktpool_count_free(struct pktpool *pool)
{
	uint64_t n = 0;
	for (unsigned s = 0; s < pool->nslots; s++) {
		struct pktpool_slot *sl = &pool->slot[s];
		for (struct ppkt *p = sl->local; p; p = (struct ppkt *)p->pkt.pw_next)
			n++;
		for (struct ppkt *p = __atomic_load_n(&sl->remote, __ATOMIC_ACQUIRE); p;
		     p = (struct ppkt *)p->pkt.pw_next)
			n++;
	}
	return n;
}

uint64_t pktpool_count_made(const struct pktpool *pool)
{
	uint64_t n = 0;
	for (unsigned s = 0; s < pool->nslots; s++)
		n += pool->slot[s].made;
	return n;
}

/* ------------------------------------------------------------ bare buffers */

/* The link of a bare buffer on a free list: the 8 bytes after its header. */
static inline struct pktbuf **bare_link(struct pktbuf *b)
{
	return (struct pktbuf **)(b + 1);
}

size_t pktpool_bare_fit(size_t len)
{
	if (len < 16)
		return 0;
	if (len >= PKTPOOL_BARE_MAX)
		return PKTPOOL_BARE_MAX;
	int c = pktpool_bare_class(len);
	size_t sz = pktpool_bare_class_size((unsigned)c);
	return sz <= len ? sz : pktpool_bare_class_size((unsigned)c - 1);
}

struct pktbuf *pktpool_bare_get(struct pktpool *pool, int self, size_t len)
{
	if (len < sizeof(struct pktbuf) + sizeof(struct pktbuf *))
		len = sizeof(struct pktbuf) + sizeof(struct pktbuf *);
	int c = pktpool_bare_class(len);
	size_t size = c < 0 ? len : pktpool_bare_class_size((unsigned)c);
	if (size > UINT32_MAX)
		return NULL;
	if (pool->budget && !pktpool_charge(pool->budget, size, pool->budget->max))
		return NULL;
	struct pktpool_bcache *bc =
		(unsigned)self < pool->nslots ? pool->slot[self].bc : NULL;
	struct pktbuf *b = NULL;
	if (bc && c >= 0 && (b = bc->free[c])) {
		bc->free[c] = *bare_link(b);
		__atomic_store_n(&bc->bytes, bc->bytes - size, __ATOMIC_RELAXED);
	} else {
		b = malloc(size);
		if (!b) {
			if (pool->budget)
				pktpool_uncharge(pool->budget, size);
			return NULL;
		}
		b->size = (uint32_t)size;
		b->cls = (uint8_t)(c + 1);
	}
	b->user = 0;
	if (pool->flags & PKTPOOL_CHECK)
		__atomic_store_n(&b->held, 1, __ATOMIC_RELEASE);
	else
		b->held = 1;
	return b;
}

int pktpool_bare_put(struct pktpool *pool, struct pktbuf *b, int self)
{
	if (pool->flags & PKTPOOL_CHECK) {
		if (__atomic_exchange_n(&b->held, 0, __ATOMIC_ACQ_REL) != 1)
			return -EALREADY;
	} else {
		b->held = 0;
	}
	size_t size = b->size;
	if (pool->budget)
		pktpool_uncharge(pool->budget, size);
	struct pktpool_bcache *bc =
		(unsigned)self < pool->nslots ? pool->slot[self].bc : NULL;
	if (!bc || !b->cls || bc->bytes + size > pool->bare_cache) {
		free(b);
		return 0;
	}
	*bare_link(b) = bc->free[b->cls - 1];
	bc->free[b->cls - 1] = b;
	__atomic_store_n(&bc->bytes, bc->bytes + size, __ATOMIC_RELAXED);
	return 0;
}

uint64_t pktpool_bare_cached(const struct pktpool *pool)
{
	uint64_t n = 0;
	for (unsigned s = 0; pool->bcache && s < pool->nslots; s++)
		n += __atomic_load_n(&pool->bcache[s].bytes, __ATOMIC_RELAXED);
	return n;
}

/* ------------------------------------------------------------ the driver */

int pktdrv_init(struct pktdrv *drv, const struct pktdrv_cfg *cfg)
{
	memset(drv, 0, sizeof(*drv));
	if (!cfg || !cfg->pool || !cfg->pool->nslots || cfg->bad_reason >= PKTDRV_MAX_REASONS)
		return -EINVAL;
	drv->pool = cfg->pool;
	drv->flags = cfg->flags;
	drv->bad_reason = cfg->bad_reason;
	drv->nslots = cfg->pool->nslots;
	drv->xmit = cfg->xmit;
	drv->drop = cfg->drop;
	drv->clone = cfg->clone;
	drv->clone_admit = cfg->clone_admit;
	drv->arg = cfg->arg;
	size_t len = (drv->nslots + 1) * sizeof(*drv->count);
	drv->count = aligned_alloc(64, len);
	if (!drv->count)
		return -ENOMEM;
	memset(drv->count, 0, len);
	return 0;
}

void pktdrv_destroy(struct pktdrv *drv)
{
	free(drv->count);
	drv->count = NULL;
}

int pktdrv_self(const struct pktdrv *drv)
{
	if (drv->flags & PKTDRV_ONE_THREAD)
		return 0;
	int c = pw_this_cpu();
	return c >= 0 && (unsigned)c < drv->nslots ? c : -1;
}

/* Slot @self's counters (-1: the shared slot). */
static inline struct pktdrv_count *slot_count(struct pktdrv *drv, int self)
{
	return &drv->count[self >= 0 ? (unsigned)self : drv->nslots];
}

/* *@c += @v: plain on one thread, else a relaxed atomic add. */
static inline void count_add(const struct pktdrv *drv, uint64_t *c, uint64_t v)
{
	if (drv->flags & PKTDRV_ONE_THREAD)
		*c += v;
	else
		__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

void pktdrv_count_sent(struct pktdrv *drv, int self, uint64_t bytes)
{
	struct pktdrv_count *c = slot_count(drv, self);
	count_add(drv, &c->sent, 1);
	if (bytes)
		count_add(drv, &c->sent_bytes, bytes);
}

void pktdrv_count_drop(struct pktdrv *drv, int self, unsigned reason)
{
	pktdrv_count_drops(drv, self, reason, 1);
}

void pktdrv_count_drops(struct pktdrv *drv, int self, unsigned reason, uint64_t n)
{
	if (reason >= PKTDRV_MAX_REASONS)
		reason = drv->bad_reason;
	count_add(drv, &slot_count(drv, self)->dropped[reason], n);
}

void pktdrv_read(const struct pktdrv *drv, struct pktdrv_count *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i <= drv->nslots; i++) {
		const struct pktdrv_count *c = &drv->count[i];
		sum->sent += __atomic_load_n(&c->sent, __ATOMIC_RELAXED);
		sum->sent_bytes += __atomic_load_n(&c->sent_bytes, __ATOMIC_RELAXED);
		for (unsigned r = 0; r < PKTDRV_MAX_REASONS; r++)
			sum->dropped[r] += __atomic_load_n(&c->dropped[r], __ATOMIC_RELAXED);
	}
}

void pktdrv_put(struct pktdrv *drv, struct ppkt *p, int self)
{
	if (pktpool_put(drv->pool, p, self))
		__atomic_fetch_add(&drv->twice, 1, __ATOMIC_RELAXED);
}

/* ops.xmit: the CPU running queue @txq. */
static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pkt, void *ctx)
{
	(void)dev;
	struct pktdrv *drv = ctx;
	struct ppkt *p = (struct ppkt *)pkt;
	int self = pktdrv_self(drv);
	if (drv->xmit && drv->xmit(drv, txq, p, self) == PKTDRV_KEPT)
		return PW_NETDEV_TX_OK;
	count_add(drv, &slot_count(drv, self)->sent, 1);
	pktdrv_put(drv, p, self);
	return PW_NETDEV_TX_OK;
}

/* ops.drop: any thread acting on the device. */
static void drv_drop(struct pw_netdev *dev, struct pw_pkt *pkt, enum pw_drop_reason why,
		     void *ctx)
{
	(void)dev;
	struct pktdrv *drv = ctx;
	struct ppkt *p = (struct ppkt *)pkt;
	int self = pktdrv_self(drv);
	unsigned r = (unsigned)why;
	if (r < 1 || r >= PW_DROP_REASON_MAX)
		r = drv->bad_reason;
	count_add(drv, &slot_count(drv, self)->dropped[r], 1);
	if (drv->drop)
		drv->drop(drv, p, r, self);
	pktdrv_put(drv, p, self);
}

/* ops.clone (netem duplicate): under a queue lock, so no call into the
 * layer; a packet of the calling thread's slot (its own packet on a
 * thread with none), the bytes copied. */
static struct pw_pkt *drv_clone(struct pw_netdev *dev, const struct pw_pkt *pkt, void *ctx)
{
	(void)dev;
	struct pktdrv *drv = ctx;
	const struct ppkt *src = (const struct ppkt *)pkt;
	int self = pktdrv_self(drv);
	if (drv->clone_admit &&
	    drv->clone_admit(drv, src, pktpool_bytes_for(drv->pool, src->buf ? pkt->caplen : 0),
			     self))
		return NULL;
	struct ppkt *c = pktpool_get(drv->pool, self);
	if (!c)
		return NULL;
	if (src->buf) {
		if (pktpool_buf(drv->pool, c, pkt->caplen)) {
			pktpool_put(drv->pool, c, self);
			return NULL;
		}
		memcpy(c->buf, src->buf, pkt->caplen);
	}
	pw_pkt_init(&c->pkt, src->buf ? c->buf : pkt->data, pkt->len);
	c->pkt.caplen = pkt->caplen;
	c->pkt.hash = pkt->hash;
	c->pkt.priority = pkt->priority;
	c->pkt.tstamp_ns = pkt->tstamp_ns;
	c->pkt.sk = pkt->sk;
	c->pkt.ecn = pkt->ecn;
	if (drv->clone && drv->clone(drv, src, c, self)) {
		pktpool_put(drv->pool, c, self);
		return NULL;
	}
	return &c->pkt;
}

const struct pw_netdev_ops pktdrv_ops = {
	.xmit = drv_xmit,
	.drop = drv_drop,
	.clone = drv_clone,
};
