/* SPDX-License-Identifier: MIT */
/*
 * pktpool: the packets, and the driver that takes them back, of every
 * harness that feeds the packet-scheduling layer: pinwheel-netem (the
 * relay), pinwheel-lab seed003 and pinwheel-bench net; and the bare
 * buffers of pinwheel-netem's TCP plane (its chunks, tools/netem/tcp/stream.h).
 *
 * What it owns
 * ------------
 *  - struct pktpool: packets (struct ppkt, a struct pw_pkt first, then the
 *    pool's fields, then the caller's, then the inline bytes) in slots,
 *    one slot per owner (a CPU, a worker).  A slot has two free lists: its
 *    local list, which only its owner touches, and its remote stack, which
 *    any thread pushes to and only the owner pops, always whole (an atomic
 *    exchange), so the stack has no ABA problem.  A slot starts with
 *    @prealloc packets (one arena for the pool) and makes more on demand,
 *    one malloc each, up to @max; it never shrinks while the pool lives.
 *    A thread that owns no slot gets a packet of its own (malloc'd, freed
 *    when it comes back).
 *  - the bytes: each packet carries @inline_bytes inline; a larger payload
 *    gets a buffer of a size class (powers of two from 256 B to 64 KiB),
 *    released when the packet comes back.  p->bufsize is the size
 *    allocated at p->buf, pktpool_bytes() a packet's whole footprint: what
 *    a byte budget counts.
 *  - struct pktpool_budget (optional, cfg.budget): a byte budget the pool
 *    charges before it allocates, never after: a packet made (its stride,
 *    kept charged while the pool lives: a made packet is never freed
 *    before pktpool_destroy), a class buffer (its class size, uncharged
 *    when it is freed), a thread's own packet (its stride, until it comes
 *    back).  A charge that would pass the limit is refused and nothing is
 *    allocated: pktpool_get() returns NULL, pktpool_buf() -ENOBUFS.  The
 *    budget is a plain counter anyone may charge (pktpool_charge()), so
 *    several pools, or memory that is no pool's (a TCP stream's buffers),
 *    can share one.  Without a budget nothing is counted (seed003 and
 *    bench net: unchanged).
 *  - bare buffers (pktpool_bare_get/put): a byte buffer with no packet
 *    around it (a TCP stream's chunk), beginning with a struct pktbuf (8
 *    bytes: its size, its class), of a bare class: multiples of 16 bytes
 *    up to 128, then 8 classes for each power of two up to
 *    PKTPOOL_BARE_MAX (256 KiB), the header included, so a buffer wastes
 *    at most 15 bytes, or an eighth of its size, over what was asked; a
 *    larger request is a malloc of its exact size.  A slot caches the
 *    buffers its owner puts back, a free list per class, up to
 *    cfg.bare_cache bytes (0: no cache, every get a malloc and every put a
 *    free); a put beyond that frees.  A buffer goes back to the slot of
 *    the thread that puts it, not to the one it came from (a buffer has
 *    no home): so a slot's lists are only ever touched by its owner, with
 *    no atomic, and a thread with no slot frees what it puts.  With a
 *    budget a buffer's size is charged while it is out (before the
 *    malloc, or when taken from a list) and uncharged when it is put
 *    back; the holder counts it otherwise (the TCP plane: its held_total).
 *    pktpool_destroy() frees what the lists hold; a buffer still out is
 *    the holder's to put back first (it may also free it with
 *    pktpool_bare_put() on a thread with no slot).
 *  - struct pktdrv: a driver (pktdrv_ops, a struct pw_netdev_ops whose ctx
 *    is the struct pktdrv) that counts what the layer releases (sent; or
 *    dropped, by reason) in per-slot counters and puts the packet back in
 *    its pool, after the caller's optional hooks (measure it, keep it to
 *    send for real, release what it refers to).  A netem duplicate
 *    (ops.clone) is a packet from the calling thread's slot with the
 *    bytes copied.
 *
 * Threads
 * -------
 * A slot's owner is the thread that serves that CPU of the runtime (a
 * worker of pw_runtime_start(), or a thread after pw_cpu_enter()); the
 * driver knows the calling thread's slot by pw_this_cpu(), so a CPU's
 * slot is only ever popped by the thread serving it.  pktpool_get(@self)
 * on @self's owner only; pktpool_put() and the driver's ops from any
 * thread (a put from the owner goes to the local list, from any other
 * thread to the remote stack).  With PKTDRV_ONE_THREAD every call is on
 * one thread (the simulated clock's), and the counters are plain.
 * pktpool_init/destroy, pktpool_count_free() and pktdrv_init/destroy on
 * one thread while no other uses the pool.
 *
 * Locks: none.  A remote push is a compare-and-swap loop on the home
 * slot's stack; a remote pop one exchange; counters relaxed atomic adds
 * on the calling thread's own slot (plain ones with PKTDRV_ONE_THREAD);
 * PKTPOOL_CHECK adds one atomic exchange per put.  A budget is one shared
 * counter: a charge is a compare-and-swap loop on it (exact: the counter
 * never passes the limit), an uncharge one atomic subtraction; only what
 * allocates touches it (a packet made, a class buffer), so a packet
 * reused from a free list with its bytes inline costs the budget nothing.
 *
 * Bare buffers: pktpool_bare_get/put(@self) on @self's owner, or on any
 * thread with @self -1 (a malloc, a free); no lock, no atomic (but the
 * budget's).
 *
 * Costs: get and put from the owner a few loads and stores (inline here);
 * from another thread one CAS on the home slot's cache line; a packet
 * made or a class buffer one malloc (and its free).  A slot is a cache
 * line; a packet sizeof(struct ppkt) (112 bytes on LP64) plus the
 * caller's fields and inline bytes.
 */
#ifndef PW_COMMON_PKTPOOL_H
#define PW_COMMON_PKTPOOL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <pinwheel/net.h>

/* One packet.  The caller's packet struct begins with it. */
struct ppkt {
	struct pw_pkt pkt;  /* first: the layer's pointer is the pool's; its
			     * pw_next links the free lists while the packet is
			     * free (the layer does not hold it then) */
	char *buf;          /* the bytes: the inline area, a class buffer, or
			     * NULL (a pool without bytes) */
	uint32_t bufsize;   /* bytes allocated at buf (0: none) */
	int16_t home;       /* the slot it goes back to; -1: a thread's own
			     * packet, freed when it comes back */
	uint8_t cls;        /* buf: 0 the inline area, else a class buffer */
	uint8_t held;       /* PKTPOOL_CHECK: 1 from get to put (atomic) */
};

/* A byte budget (see the top).  Any thread charges and uncharges it;
 * max is set before it is shared and read only after. */
struct pktpool_budget {
	uint64_t used;     /* atomic: bytes charged now */
	uint64_t peak;     /* atomic: the most charged at once */
	uint64_t refused;  /* atomic: charges refused */
	uint64_t max;      /* the limit pktpool_get() and pktpool_buf() charge against */
};

/**
 * pktpool_charge() - add @bytes to @b if that keeps it at most @limit.
 * Context: any thread.  Atomics: a compare-and-swap loop on b->used; the
 * peak's is taken only when it grows.
 * Return: 1 charged; 0 refused (nothing changed but b->refused).
 */
static inline int pktpool_charge(struct pktpool_budget *b, uint64_t bytes, uint64_t limit)
{
	uint64_t u = __atomic_load_n(&b->used, __ATOMIC_RELAXED);
	do {
		if (u + bytes > limit || u + bytes < u) {
			__atomic_fetch_add(&b->refused, 1, __ATOMIC_RELAXED);
			return 0;
		}
	} while (!__atomic_compare_exchange_n(&b->used, &u, u + bytes, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	uint64_t n = u + bytes, pk = __atomic_load_n(&b->peak, __ATOMIC_RELAXED);
	while (n > pk && !__atomic_compare_exchange_n(&b->peak, &pk, n, 1, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED))
		;
	return 1;
}

/* Give back @bytes charged to @b.  Any thread; one atomic subtraction. */
static inline void pktpool_uncharge(struct pktpool_budget *b, uint64_t bytes)
{
	__atomic_fetch_sub(&b->used, bytes, __ATOMIC_RELAXED);
}

/* Bytes charged to @b now.  Any thread (a relaxed load). */
static inline uint64_t pktpool_budget_used(const struct pktpool_budget *b)
{
	return __atomic_load_n(&b->used, __ATOMIC_RELAXED);
}

/* The head of a bare buffer (pktpool_bare_get()): the caller's struct
 * begins with it.  While the buffer is on a free list its 8 bytes after
 * the header link the list. */
struct pktbuf {
	uint32_t size;  /* bytes allocated, this header included (what it costs) */
	uint8_t cls;    /* its bare class + 1; 0: a malloc of its exact size */
	uint8_t held;   /* 1 from get to put (atomic with PKTPOOL_CHECK) */
	uint16_t user;  /* the holder's: never touched by the pool while out */
};

/* Bare classes: 8 of 16 to 128 bytes, then 8 a power of two up to the max. */
#define PKTPOOL_BARE_MAX    (256u << 10)
#define PKTPOOL_BARE_NCLASS 96u

/* A slot's bare buffers on their free lists (its owner's only). */
struct pktpool_bcache {
	struct pktbuf *free[PKTPOOL_BARE_NCLASS];
	uint64_t bytes;       /* on the lists now (atomic stores: read by stats) */
} __attribute__((aligned(64)));

/* One slot: an owner's free lists. */
struct pktpool_slot {
	struct ppkt *local;   /* the owner's */
	struct ppkt *remote;  /* atomic: pushed by any thread, taken whole by the owner */
	unsigned made;        /* packets this slot made (owner) */
	unsigned max;         /* most it may make */
	struct pktpool_bcache *bc; /* its bare buffers' lists (NULL: no cache) */
} __attribute__((aligned(64)));

#define PKTPOOL_CHECK 0x1  /* every put checks the packet was out: twice is refused */

/* The smallest and largest class buffer. */
#define PKTPOOL_CLASS_MIN 256u
#define PKTPOOL_CLASS_MAX 65536u

struct pktpool_cfg {
	unsigned nslots;       /* owners: a slot per CPU or worker (1..32767) */
	size_t pkt_size;       /* the caller's packet struct (struct ppkt first) */
	uint32_t inline_bytes; /* bytes each packet carries (0: no bytes) */
	unsigned prealloc;     /* packets per slot made by pktpool_init() */
	unsigned max;          /* packets per slot at most (at least prealloc) */
	unsigned flags;        /* PKTPOOL_CHECK */
	struct pktpool_budget *budget; /* charged for what the pool allocates (NULL: none) */
	size_t bare_cache;     /* bytes of bare buffers a slot keeps for reuse (0: none) */
};

struct pktpool {
	struct pktpool_slot *slot;
	unsigned nslots;
	unsigned flags;
	size_t stride;         /* bytes of one packet: the caller's struct, the inline bytes */
	size_t inl_off;        /* where the inline bytes start in a packet */
	uint32_t inline_bytes;
	char *arena;           /* the preallocated packets */
	size_t arena_len;
	struct pktpool_budget *budget; /* or NULL */
	size_t bare_cache;     /* cfg.bare_cache */
	struct pktpool_bcache *bcache; /* nslots of them (NULL without a cache) */
};

/**
 * pktpool_init() - a pool as @cfg says, each slot holding its prealloc
 * packets.  Context: one thread, before the pool is shared.
 * Return: 0; -EINVAL (a bad @cfg); -ENOMEM.
 */
int pktpool_init(struct pktpool *pool, const struct pktpool_cfg *cfg);

/**
 * pktpool_destroy() - free every packet on the free lists and the pool's
 * own memory.  Packets still out (in the layer, in a send batch) are the
 * caller's to bring back first.  Context: one thread, the pool unused.
 */
void pktpool_destroy(struct pktpool *pool);

/* Internal, the slow halves of pktpool_get() and pktpool_put()
 * (pktpool.c): make a packet for slot @self (-1: the caller's own);
 * release @p's class buffer, and free @p if it is a thread's own. */
struct ppkt *pktpool__make(struct pktpool *pool, int self);
void pktpool__release(struct pktpool *pool, struct ppkt *p);

/**
 * pktpool_get() - a free packet of slot @self (its bytes inline), or, when
 * @self is no slot (-1, a thread that owns none), one made for the caller.
 * The pw_pkt's fields are stale: pw_pkt_init() it.
 * A packet made is charged to the budget (its stride) before the malloc.
 * Context: @self's owner (any thread for -1).
 * Return: the packet; NULL when the slot has made its max and has none
 * free, the budget refused the stride, or malloc failed.
 */
static inline struct ppkt *pktpool_get(struct pktpool *pool, int self)
{
	if ((unsigned)self >= pool->nslots)
		return pktpool__make(pool, -1);
	struct pktpool_slot *s = &pool->slot[self];
	struct ppkt *p = s->local;
	if (!p) {
		p = __atomic_exchange_n(&s->remote, NULL, __ATOMIC_ACQUIRE);
		if (!p)
			return pktpool__make(pool, self);
	}
	s->local = (struct ppkt *)p->pkt.pw_next;
	if (pool->flags & PKTPOOL_CHECK)
		__atomic_store_n(&p->held, 1, __ATOMIC_RELEASE);
	return p;
}

/**
 * pktpool_put() - @p back to its slot (its class buffer released): the
 * local list when @self is its home slot, else the home's remote stack; a
 * thread's own packet is freed.  Context: any thread; @self is the calling
 * thread's slot (-1: none).
 * Return: 0; -EALREADY with PKTPOOL_CHECK when @p was not out (a second
 * put: nothing done).
 */
static inline int pktpool_put(struct pktpool *pool, struct ppkt *p, int self)
{
	if ((pool->flags & PKTPOOL_CHECK) &&
	    __atomic_exchange_n(&p->held, 0, __ATOMIC_ACQ_REL) != 1)
		return -EALREADY;
	int home = p->home;
	if (p->cls || home < 0) {
		pktpool__release(pool, p); /* frees a thread's own packet */
		if (home < 0)
			return 0;
	}
	struct pktpool_slot *s = &pool->slot[home];
	if (home == self) {
		p->pkt.pw_next = (struct pw_pkt *)s->local;
		s->local = p;
		return 0;
	}
	struct ppkt *head = __atomic_load_n(&s->remote, __ATOMIC_RELAXED);
	do
		p->pkt.pw_next = (struct pw_pkt *)head;
	while (!__atomic_compare_exchange_n(&s->remote, &head, p, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
	return 0;
}

/**
 * pktpool_buf() - room for @len bytes at p->buf: the inline area when it
 * is large enough, else a class buffer (the smallest class of at least
 * @len; p->bufsize says its size).  What p->buf held is not copied; the
 * inline area stays where pktpool_inline() says.  With a budget the class
 * size is charged (against budget->max) before the malloc, and a class
 * buffer @p had is uncharged when it is freed.
 * Context: whoever holds @p.
 * Return: 0; -EMSGSIZE (@len above PKTPOOL_CLASS_MAX); -ENOBUFS (the
 * budget refused: nothing allocated, @p unchanged); -ENOMEM.
 */
int pktpool_buf(struct pktpool *pool, struct ppkt *p, size_t len);

/* pktpool_buf() charging against @limit instead of budget->max (a caller
 * that keeps the last part of the budget for some users).  Without a
 * budget @limit is ignored.  Context: whoever holds @p; atomics: the
 * budget's CAS (pktpool_charge()) and, for a replaced buffer, its
 * subtraction. */
int pktpool_buf_limit(struct pktpool *pool, struct ppkt *p, size_t len, uint64_t limit);

/* The inline area of @p (NULL when the pool carries no bytes).  Any thread. */
static inline char *pktpool_inline(const struct pktpool *pool, struct ppkt *p)
{
	return pool->inline_bytes ? (char *)p + pool->inl_off : NULL;
}

/* The class size pktpool_buf() allocates for @len (0 above the largest).
 * Any thread. */
size_t pktpool_class_size(size_t len);

/* The bytes @p takes: the packet with its inline area, plus its class
 * buffer.  Whoever holds @p. */
static inline size_t pktpool_bytes(const struct pktpool *pool, const struct ppkt *p)
{
	return pool->stride + (p->cls ? p->bufsize : 0);
}

/* The bytes a packet holding @len bytes takes (pktpool_bytes() after
 * pktpool_buf(@len)): what to check against a budget before asking.
 * 0 when @len is above PKTPOOL_CLASS_MAX.  Any thread. */
size_t pktpool_bytes_for(const struct pktpool *pool, size_t len);

/* Packets on the free lists now (while no thread uses the pool: the
 * count of a whole pool is every packet made).  Context: one thread. */
uint64_t pktpool_count_free(struct pktpool *pool);

/* Packets the slots have made so far.  Context: one thread, as above. */
uint64_t pktpool_count_made(const struct pktpool *pool);

/* ------------------------------------------------------------ bare buffers */

/* The bare class of a buffer of @len bytes (header included): its index,
 * -1 above PKTPOOL_BARE_MAX.  Any thread. */
static inline int pktpool_bare_class(size_t len)
{
	if (len <= 128)
		return len ? (int)((len - 1) >> 4) : 0;
	if (len > PKTPOOL_BARE_MAX)
		return -1;
	unsigned p = 63u - (unsigned)__builtin_clzll((unsigned long long)(len - 1)); /* 7..17 */
	size_t step = (size_t)1 << (p - 3);
	size_t j = (len - ((size_t)1 << p) + step - 1) / step; /* 1..8 */
	return (int)(8 + (p - 7) * 8 + j - 1);
}

/* The size of bare class @cls (an index below PKTPOOL_BARE_NCLASS).  Any thread. */
static inline size_t pktpool_bare_class_size(unsigned cls)
{
	if (cls < 8)
		return 16u * (cls + 1);
	unsigned p = 7 + (cls - 8) / 8, j = (cls - 8) % 8 + 1;
	return ((size_t)1 << p) + j * ((size_t)1 << (p - 3));
}

/* The bytes pktpool_bare_get(@len) allocates: its class size, or @len
 * itself above PKTPOOL_BARE_MAX.  Any thread. */
static inline size_t pktpool_bare_size(size_t len)
{
	int c = pktpool_bare_class(len);
	return c < 0 ? len : pktpool_bare_class_size((unsigned)c);
}

/* The largest bare class size at most @len (0 below the smallest, 16):
 * what to ask for to stay within @len.  Any thread. */
size_t pktpool_bare_fit(size_t len);

/**
 * pktpool_bare_get() - a buffer of at least @len bytes (the struct pktbuf
 * at its start included; @len at least sizeof(struct pktbuf) + 8): from
 * slot @self's list of its class, else a malloc (of the class size; of
 * @len above PKTPOOL_BARE_MAX).  b->size says what it costs; its bytes
 * are stale.  With a budget its size is charged first (against max).
 * Context: @self's owner; any thread for -1 (no slot: a malloc).
 * Return: the buffer; NULL (the budget refused, or malloc failed).
 */
struct pktbuf *pktpool_bare_get(struct pktpool *pool, int self, size_t len);

/**
 * pktpool_bare_put() - @b back: on slot @self's list of its class while
 * the slot caches less than bare_cache bytes, else freed (always for a
 * thread with no slot, -1, and for a buffer of no class).  With a budget
 * its size is uncharged.
 * Context: @self's owner (any thread for -1); whoever holds @b.
 * Return: 0; -EALREADY with PKTPOOL_CHECK when @b was not out (nothing
 * done).
 */
int pktpool_bare_put(struct pktpool *pool, struct pktbuf *b, int self);

/* Bytes of bare buffers the slots keep on their lists.  Any thread (racy
 * while running: each slot's count is read once). */
uint64_t pktpool_bare_cached(const struct pktpool *pool);

/* ------------------------------------------------------------ the driver */

#define PKTDRV_MAX_REASONS 32   /* drop reasons counted: the layer's, then the caller's */
#define PKTDRV_ONE_THREAD 0x1   /* every call on one thread: slot 0, plain counters */

/* What a driver counted, per slot (summed by pktdrv_read()). */
struct pktdrv_count {
	uint64_t sent;                         /* packets */
	uint64_t sent_bytes;                   /* what pktdrv_count_sent() was given */
	uint64_t dropped[PKTDRV_MAX_REASONS];  /* by reason */
} __attribute__((aligned(64)));

/* An xmit hook's answer. */
enum {
	PKTDRV_DONE = 0,  /* the driver counts it sent and puts it back */
	PKTDRV_KEPT = 1,  /* the hook keeps it (it counts and puts back itself) */
};

struct pktdrv;

struct pktdrv_cfg {
	struct pktpool *pool;
	unsigned flags;       /* PKTDRV_ONE_THREAD */
	unsigned bad_reason;  /* where a drop reason outside the layer's range is counted */
	/* Optional hooks, on the thread of the op, @self its slot (-1: none):
	 * xmit before the driver counts @p sent (return PKTDRV_DONE or
	 * PKTDRV_KEPT); drop after it counted the drop and before it puts
	 * @p back; clone after it made @copy (bytes and the pw_pkt's public
	 * fields copied), under a queue lock (no call into the layer):
	 * return 0, or -1 to have @copy put back and the clone refused. */
	int (*xmit)(struct pktdrv *drv, unsigned txq, struct ppkt *p, int self);
	void (*drop)(struct pktdrv *drv, struct ppkt *p, unsigned reason, int self);
	int (*clone)(struct pktdrv *drv, const struct ppkt *src, struct ppkt *copy, int self);
	/* clone_admit, before the driver takes a packet or a class buffer for
	 * a duplicate of @src that would take @bytes (pktpool_bytes_for() its
	 * length), under the same queue lock: return 0 to go on, -1 to refuse
	 * (nothing allocated; the qdisc sees a failed clone, as the kernel's
	 * skb_clone() failing). */
	int (*clone_admit)(struct pktdrv *drv, const struct ppkt *src, size_t bytes, int self);
	void *arg;            /* the hooks' */
};

struct pktdrv {
	struct pktpool *pool;
	unsigned flags, bad_reason, nslots;
	int (*xmit)(struct pktdrv *drv, unsigned txq, struct ppkt *p, int self);
	void (*drop)(struct pktdrv *drv, struct ppkt *p, unsigned reason, int self);
	int (*clone)(struct pktdrv *drv, const struct ppkt *src, struct ppkt *copy, int self);
	int (*clone_admit)(struct pktdrv *drv, const struct ppkt *src, size_t bytes, int self);
	void *arg;
	struct pktdrv_count *count;  /* nslots + 1: the last for threads with no slot */
	uint64_t twice;              /* atomic: PKTPOOL_CHECK puts refused */
};

/* The device ops: pw_netdev_create(rt, name, ntxq, &pktdrv_ops, drv, &dev). */
extern const struct pw_netdev_ops pktdrv_ops;

/**
 * pktdrv_init() - a driver for @cfg->pool, counters zero.
 * Context: one thread, before the device exists.
 * Return: 0; -EINVAL; -ENOMEM.
 */
int pktdrv_init(struct pktdrv *drv, const struct pktdrv_cfg *cfg);

/* Free the counters (the device is gone).  Context: one thread. */
void pktdrv_destroy(struct pktdrv *drv);

/* The calling thread's slot: 0 with PKTDRV_ONE_THREAD, else the CPU it
 * serves (pw_this_cpu()) when that is a slot, else -1.  Any thread. */
int pktdrv_self(const struct pktdrv *drv);

/* Count, on slot @self's counters (-1: the shared slot), one packet sent
 * with @bytes, or one dropped for @reason (an index below
 * PKTDRV_MAX_REASONS; above, counted under bad_reason): for a hook that
 * kept a packet, or a drop before the layer saw one.  Any thread. */
void pktdrv_count_sent(struct pktdrv *drv, int self, uint64_t bytes);
void pktdrv_count_drop(struct pktdrv *drv, int self, unsigned reason);
/* @n drops at once (datagrams a kernel counted, never seen).  Any thread. */
void pktdrv_count_drops(struct pktdrv *drv, int self, unsigned reason, uint64_t n);

/* Every slot's counters summed into *@sum.  Any thread (racy while
 * running: each counter is read once). */
void pktdrv_read(const struct pktdrv *drv, struct pktdrv_count *sum);

/* Packets sent, summed over the slots.  Any thread (as pktdrv_read()). */
static inline uint64_t pktdrv_sent(const struct pktdrv *drv)
{
	if (drv->flags & PKTDRV_ONE_THREAD)
		return drv->count[0].sent;
	uint64_t n = 0;
	for (unsigned i = 0; i <= drv->nslots; i++)
		n += __atomic_load_n(&drv->count[i].sent, __ATOMIC_RELAXED);
	return n;
}

/* Puts PKTPOOL_CHECK refused (packets the layer gave back twice).  Any thread. */
static inline uint64_t pktdrv_twice(const struct pktdrv *drv)
{
	return __atomic_load_n(&drv->twice, __ATOMIC_RELAXED);
}

/* Put @p back from the calling thread's slot @self, counting a refused
 * put in drv->twice.  Any thread. */
void pktdrv_put(struct pktdrv *drv, struct ppkt *p, int self);

#endif /* PW_COMMON_PKTPOOL_H */
