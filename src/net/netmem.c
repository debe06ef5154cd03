/* SPDX-License-Identifier: MIT */
/*
 * The layer's configuration memory: what tc state costs, counted per
 * runtime and charged to a budget the caller owns (net.h's
 * struct pw_mem_budget, pw_net_set_budget(), pw_net_mem_bytes()).  The
 * kernel has no such counter (its tc state is kmalloc'd against the
 * machine); pinwheel-netem needs one so that a client of its API cannot
 * grow the server past --max-bytes with qdiscs and classes
 * (docs/design/net.md, "The memory budget").
 *
 * What is counted.  Every allocation the kernel side makes for state that
 * lives beyond one request: a device (its struct, XPS maps, grace-period
 * slots, TX queues), a qdisc (struct and private area, as allocated:
 * rounded to the cache line), its accuracy figures (allocated with the
 * qdisc when its device keeps them), an estimator, htb's classes and
 * class hash, mq's child array, netem's tfifo calendar and the
 * distribution tables it adopts from tc's side (counted when netem takes
 * them, uncounted when it gives them back), fq's bucket array (adopted
 * likewise) and its flows, trace's delivery table and label.  What tc's
 * side allocates for the length of one command (parsed words, option
 * structs, output) is not counted, nor the runtime's fixed per-CPU state,
 * nor packets (the caller's).  The size charged is the size asked of
 * malloc, so the count is exact: building and tearing down any tree
 * brings it back to where it was.
 *
 * The rule.  A charge comes before the allocation it pays for: the
 * budget is asked first (pw_mem_budget_charge(): a compare-and-swap loop
 * that never lets used pass limit), and a refusal fails the allocation
 * with -ENOBUFS, tc's message naming the budget.  Each such point was
 * already an allocation that could fail, and the layer's rule that a
 * failed command changes nothing holds the same way for -ENOBUFS as for
 * -ENOMEM.  Two kinds of allocation are charged past the limit
 * (pw__mem_charge_force()): what a delete builds in place of what it
 * removes (the default root or leaf; a delete frees more than it builds,
 * and must not fail for want of memory it is about to give back), and the
 * default qdiscs of a device being made (charged with the device, which
 * was charged against the limit).  fq's flows, made on the data path
 * under the root lock, are charged against the limit: a refused flow is
 * an allocation error fq already handles (its packet takes the internal
 * flow, alloc_errors counts it; nothing is lost).
 *
 * The counter and the budget.  net->mem is the runtime's count (atomic:
 * fq's flows are charged by whichever CPU enqueues); net->budget the
 * budget, set while the runtime holds no tc state (pw_net_set_budget()
 * refuses otherwise), so every byte is uncharged from the budget it was
 * charged to.  The budget is shared: several runtimes (pinwheel-netem's
 * TCP plane, each UDP relay, the validator's scratch runtime) and the
 * caller's own memory (the TCP plane's held bytes) charge one counter.
 *
 * Threads: any; configuration paths under cfg_lock (and a root lock
 * where a kind adopts a table under it), fq's flows under their root
 * lock.  Locks: none taken here but cfg_lock in pw_net_set_budget();
 * the counters are atomics.  Costs: a charge is one CAS loop on the
 * budget (shared: contended only by allocations, never by packets) and
 * one atomic add on the runtime's count.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ budgets */

int pw_mem_budget_charge(struct pw_mem_budget *b, uint64_t bytes)
{
	uint64_t u = __atomic_load_n(&b->used, __ATOMIC_RELAXED);
	do {
		if (u + bytes > b->limit || u + bytes < u) {
			__atomic_fetch_add(&b->refused, 1, __ATOMIC_RELAXED);
			return -ENOBUFS;
		}
	} while (!__atomic_compare_exchange_n(&b->used, &u, u + bytes, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	uint64_t n = u + bytes, pk = __atomic_load_n(&b->peak, __ATOMIC_RELAXED);
	while (n > pk && !__atomic_compare_exchange_n(&b->peak, &pk, n, 1, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED))
		;
	return 0;
}

void pw_mem_budget_uncharge(struct pw_mem_budget *b, uint64_t bytes)
{
	__atomic_fetch_sub(&b->used, bytes, __ATOMIC_RELAXED);
}

int pw_net_set_budget(struct pw_runtime *rt, struct pw_mem_budget *b)
{
	if (!rt)
		return -EINVAL;
	struct pw__net *net = pw__net_get(rt);
	if (!net)
		return -ENOMEM;
	pthread_mutex_lock(&net->cfg_lock);
	int rc = 0;
	if (__atomic_load_n(&net->mem, __ATOMIC_RELAXED) || net->devs)
		rc = -EBUSY;
	else
		__atomic_store_n(&net->budget, b, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&net->cfg_lock);
	return rc;
}

uint64_t pw_net_mem_bytes(struct pw_runtime *rt)
{
	if (!rt)
		return 0;
	struct pw__net *net = pw_runtime_ext(rt, PW_RUNTIME_EXT_NET);
	return net ? __atomic_load_n(&net->mem, __ATOMIC_RELAXED) : 0;
}

/* ------------------------------------------------------------ charges */

/* The budget's refusal said to tc.  Context: the request's thread. */
static void say_refused(const struct pw_mem_budget *b, struct pw__extack *ext)
{
	pw__extack_msg(ext, "Error: the tc memory budget (%llu bytes) is spent.",
		       (unsigned long long)b->limit);
}

int pw__mem_charge(struct pw__net *net, size_t bytes, struct pw__extack *ext)
{
	struct pw_mem_budget *b = __atomic_load_n(&net->budget, __ATOMIC_ACQUIRE);
	if (b && pw_mem_budget_charge(b, bytes)) {
		say_refused(b, ext);
		return -ENOBUFS;
	}
	__atomic_fetch_add(&net->mem, bytes, __ATOMIC_RELAXED);
	return 0;
}

void pw__mem_charge_force(struct pw__net *net, size_t bytes)
{
	struct pw_mem_budget *b = __atomic_load_n(&net->budget, __ATOMIC_ACQUIRE);
	if (b) {
		uint64_t n = __atomic_add_fetch(&b->used, bytes, __ATOMIC_RELAXED);
		uint64_t pk = __atomic_load_n(&b->peak, __ATOMIC_RELAXED);
		while (n > pk && !__atomic_compare_exchange_n(&b->peak, &pk, n, 1,
							     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
	__atomic_fetch_add(&net->mem, bytes, __ATOMIC_RELAXED);
}

void pw__mem_uncharge(struct pw__net *net, size_t bytes)
{
	if (!bytes)
		return;
	struct pw_mem_budget *b = __atomic_load_n(&net->budget, __ATOMIC_ACQUIRE);
	if (b)
		pw_mem_budget_uncharge(b, bytes);
	__atomic_fetch_sub(&net->mem, bytes, __ATOMIC_RELAXED);
}

void *pw__mem_alloc(struct pw__net *net, size_t bytes, size_t align, struct pw__extack *ext,
		    int *err)
{
	int rc = pw__mem_charge(net, bytes, ext);
	void *p = NULL;
	if (!rc) {
		p = align ? aligned_alloc(align, bytes) : malloc(bytes);
		if (p)
			memset(p, 0, bytes);
		else {
			pw__mem_uncharge(net, bytes);
			rc = -ENOMEM;
		}
	}
	if (err)
		*err = rc;
	return p;
}

void pw__mem_free(struct pw__net *net, void *p, size_t bytes)
{
	if (!p)
		return;
	free(p);
	pw__mem_uncharge(net, bytes);
}
