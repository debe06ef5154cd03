/* SPDX-License-Identifier: MIT */
/*
 * The timer migration hierarchy: PW_MIGRATION_PULL, the Linux 6.9 design.
 *
 * What it does
 * ------------
 * Under PULL a timer is always queued on the CPU that arms it (no push at
 * arm time: seeds 000 and 003 in docs/seeds.md are what pushing cost).  What moves is
 * the work of expiring: a CPU going idle hands the first event of its
 * GLOBAL base (non-pinned, non-deferrable timers) up a hierarchy of groups,
 * and one active CPU, the migrator, expires the idle CPUs' global timers
 * remotely when they come due, so an idle CPU does not wake for them.
 * Pinned timers (LOCAL base) and hrtimers always run on their CPU and wake
 * it; deferrable timers (DEF base) never wake an idle CPU and are not
 * handed up: they run when their CPU wakes for something else, as in the
 * kernel.
 *
 * The groups
 * ----------
 * CPUs are the children of level-0 groups, 8 per group (CPU c: group c/8,
 * slot c%8); groups are the children of the next level, 8 per group, up to
 * one top group.  Each group has a state word (atomic, one 32-bit value):
 * a bit per active child and the migrator (the slot of one active child, or
 * NONE when every child is idle), changed together, so a lockless reader
 * never sees a migrator that is not active.  A group is active while one
 * of its children is.  For its idle children a group keeps each one's
 * first event (child_next) and their minimum (next).  An idle group's
 * `next` is its entry in its parent's child_next.
 *
 * Who expires what: the migrator of a group handles its idle children's
 * events.  A CPU is the migrator of its level-0 group, and (if that group
 * is its parent's migrator) of the parent, and so on up: so when a whole
 * group of 8 CPUs is idle, an active CPU of a sibling group handles them
 * all.  When every CPU is idle, the CPU that went idle last is the waker:
 * it sleeps until the top group's first event.  pw__tmigr_duty() is what a
 * CPU must wake for on behalf of others; pw__tmigr_handle() runs it.
 *
 * Going idle and waking (deactivate/activate), and changes of an idle
 * CPU's first event (notify, refresh), lock the groups bottom-up, each
 * held while its parent is taken, so a group's idle/active change and its
 * parent's view of it change together: no lock is ever taken top-down, so
 * there is no lock-order cycle.  Group locks come before base locks: an
 * idle CPU's first event is read from its GLOBAL base while its level-0
 * group is locked; nobody takes a group lock while holding a base lock.
 *
 * Why nothing is missed
 * ---------------------
 * An event handed up is never later than the truth (entries may be early:
 * a deleted timer leaves one; handling it finds nothing due and refreshes
 * the entry).  Ways an idle CPU's global base gets an earlier event:
 *  - a migrator runs it and a callback re-arms (a running timer stays on
 *    its CPU): the migrator refreshes the entry after the run;
 *  - another thread arms a timer there that stays (a thread that is no
 *    CPU, or a timer whose callback runs there): notify() lowers the
 *    entry under the group lock, where deactivate() computes it, so either
 *    deactivate sees the timer or notify sees the CPU idle; if the worker
 *    is awake and not preparing to sleep, it sees the timer itself (the
 *    worker.c kick protocol's ordering), and notify takes no lock.
 * Changes of the top group's first event while every CPU is idle kick the
 * waker (the kick protocol compares with the deadline it sleeps to;
 * without workers, a move earlier counts the kick: pw_kick_stats.tmigr).
 * Whether the CPU an event was queued on must be kicked itself, when the
 * hierarchy did not take the event, is the kick rule's to decide
 * (pw__tmigr_notify() says so; policy.c decides).
 *
 * Departures from the kernel
 * --------------------------
 * Lock order: here a group lock is taken before a base lock (deactivate
 * reads the GLOBAL base's first event under the level-0 group lock); the
 * kernel's tmigr code is called with the timer base lock held, the other
 * way round.  Our order holds because no arm path takes a group lock while
 * it holds a base lock: an arm unlocks its base before pw__tmigr_notify().
 * The kernel changes group state with compare-and-swap walks that need no
 * lock to go idle; here every transition takes the group locks on its path
 * (one for 8 CPUs, two for 64).  A worker goes idle only before it sleeps,
 * a system call away, so the lock is noise next to it, but 8 CPUs of a
 * group that sleep and wake at high rates will contend for it.  One thread
 * at a time runs a CPU's timers (its run guard), so while a migrator runs
 * an idle CPU's global timers, that CPU's own pinned timers and hrtimers
 * wait for it if it wakes (the kernel runs bases under separate locks).
 * Hrtimers are not part of the hierarchy, as in the kernel: under PULL they
 * stay on the arming CPU and wake it.
 *
 * Costs: a busy CPU's loop asks pw__tmigr_handle() each round: two loads
 * per level it migrates for.  Going idle: the group locks on the path, one
 * lock of the GLOBAL base.  A remote expiry: a try of the idle CPU's run
 * guard, its base run, and the refresh.
 */
#define _GNU_SOURCE
#include "tmigr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static inline uint32_t st_load(const struct pw__tgroup *g)
{
	return __atomic_load_n(&g->state, __ATOMIC_ACQUIRE);
}

/* Context: @g locked. */
static inline void st_store(struct pw__tgroup *g, uint32_t st)
{
	__atomic_store_n(&g->state, st, __ATOMIC_RELEASE);
}

/* Context: the holder of the group's lock (lockless readers only read). */
static inline void st64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline struct pw__tgroup *cpu_group(struct pw_runtime *rt, unsigned cpu)
{
	return &rt->tmigr.groups[cpu / PW_TMIGR_ARITY];
}

static inline struct pw__tgroup *parent_of(struct pw_runtime *rt, const struct pw__tgroup *g)
{
	return g->parent < 0 ? NULL : &rt->tmigr.groups[g->parent];
}

static inline struct pw__tgroup *top_group(struct pw_runtime *rt)
{
	return &rt->tmigr.groups[rt->tmigr.ngroups - 1];
}

int pw__tmigr_init(struct pw_runtime *rt)
{
	unsigned count[16], levels = 0, total = 0, n = rt->ncpus;
	do { /* groups per level, until one group holds everything */
		n = (n + PW_TMIGR_ARITY - 1) / PW_TMIGR_ARITY;
		count[levels++] = n;
		total += n;
	} while (n > 1);
	struct pw__tgroup *gs = aligned_alloc(PW_CACHELINE, total * sizeof(*gs));
	if (!gs)
		return -ENOMEM;
	memset(gs, 0, total * sizeof(*gs));
	unsigned base = 0, children = rt->ncpus;
	for (unsigned l = 0; l < levels; l++) {
		for (unsigned i = 0; i < count[l]; i++) {
			struct pw__tgroup *g = &gs[base + i];
			unsigned first = i * PW_TMIGR_ARITY;
			unsigned nch = children - first < PW_TMIGR_ARITY ? children - first
									 : PW_TMIGR_ARITY;
			pw__lock_init(&g->lock);
			g->level = l;
			g->nchildren = nch;
			/* level 0: CPUs; above: the previous level's groups */
			g->first = l == 0 ? first : base - count[l - 1] + first;
			g->parent = l + 1 < levels ? (int32_t)(base + count[l] + i / PW_TMIGR_ARITY) : -1;
			g->slot = i % PW_TMIGR_ARITY;
			g->waker = -1;
			g->next = UINT64_MAX;
			for (unsigned c = 0; c < PW_TMIGR_ARITY; c++)
				g->child_next[c] = UINT64_MAX;
			/* every CPU starts active, and slot 0 migrates */
			g->state = PW_TMIGR_STATE((1u << nch) - 1, 0);
		}
		base += count[l];
		children = count[l];
	}
	rt->tmigr.groups = gs;
	rt->tmigr.ngroups = total;
	rt->tmigr.levels = levels;
	return 0;
}

void pw__tmigr_free(struct pw_runtime *rt)
{
	free(rt->tmigr.groups);
	rt->tmigr.groups = NULL;
}

/* The first event of @g's idle children.  Context: @g locked. */
static uint64_t idle_min(const struct pw__tgroup *g, uint32_t active)
{
	uint64_t m = UINT64_MAX;
	for (unsigned i = 0; i < g->nchildren; i++)
		if (!(active & (1u << i)) && pw__ld64(&g->child_next[i]) < m)
			m = pw__ld64(&g->child_next[i]);
	return m;
}

/* A waker to kick once every lock is dropped: the top group's first event
 * became @ns, @earlier than it was. */
struct wake {
	int cpu;
	uint64_t ns;
	bool earlier;
};

/* With workers, the kick protocol compares @w->ns with the deadline the
 * waker sleeps to.  Without them, the kick is counted (PW__KICK_TMIGR)
 * when the hierarchy's first event moved earlier, unless the waker itself
 * moved it (a CPU does not interrupt itself).  Context: any thread holding
 * no lock. */
static void wake_waker(struct pw_runtime *rt, const struct wake *w)
{
	if (w->cpu < 0)
		return;
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		pw__kick(rt, (unsigned)w->cpu, w->ns, PW__KICK_TMIGR);
	else if (w->earlier && w->cpu != pw__self(rt))
		pw__kick_count(rt, (unsigned)w->cpu, PW__KICK_TMIGR);
}

/*
 * @g's idle children's events changed: recompute its first event; if @g is
 * idle, carry it into its parent (locked in turn), or at the top note the
 * waker to kick (*@w).  Context: @g locked; returns with it locked.
 */
static void carry_up(struct pw_runtime *rt, struct pw__tgroup *g, struct wake *w)
{
	uint32_t act = PW_TMIGR_ACTIVE(st_load(g));
	uint64_t nx = idle_min(g, act), old = pw__ld64(&g->next);
	if (nx == old)
		return;
	st64(&g->next, nx);
	if (act)
		return; /* an active group's migrator reads g->next itself */
	struct pw__tgroup *p = parent_of(rt, g);
	if (!p) {
		int32_t waker = __atomic_load_n(&g->waker, __ATOMIC_RELAXED);
		if (waker >= 0) {
			w->cpu = waker;
			w->ns = nx;
			w->earlier = nx < old;
		}
		return;
	}
	pw__lock(&p->lock);
	st64(&p->child_next[g->slot], nx);
	carry_up(rt, p, w);
	pw__unlock(&p->lock);
}

/*
 * Child @s of @g (active) goes idle with first event @v; if @g becomes
 * idle, so does its slot in the parent; at the top, CPU @cpu becomes the
 * waker.  Context: @g locked; returns with it locked.
 */
static void go_idle(struct pw_runtime *rt, struct pw__tgroup *g, unsigned s, uint64_t v,
		    unsigned cpu)
{
	uint32_t st = st_load(g);
	uint32_t act = PW_TMIGR_ACTIVE(st) & ~(1u << s);
	uint32_t mig = PW_TMIGR_MIGRATOR(st);
	if (mig == s) /* hand the migrator role to another active child */
		mig = act ? (uint32_t)__builtin_ctz(act) : PW_TMIGR_NONE;
	st64(&g->child_next[s], v);
	uint64_t nx = idle_min(g, act);
	st64(&g->next, nx);
	st_store(g, PW_TMIGR_STATE(act, mig));
	if (act)
		return;
	struct pw__tgroup *p = parent_of(rt, g);
	if (!p) {
		__atomic_store_n(&g->waker, (int32_t)cpu, __ATOMIC_RELAXED);
		return;
	}
	pw__lock(&p->lock);
	go_idle(rt, p, g->slot, nx, cpu);
	pw__unlock(&p->lock);
}

/* Child @s of @g (idle) becomes active; if @g was idle, so does its slot in
 * the parent.  Context: @g locked; returns with it locked. */
static void go_active(struct pw_runtime *rt, struct pw__tgroup *g, unsigned s)
{
	uint32_t st = st_load(g);
	uint32_t was = PW_TMIGR_ACTIVE(st), act = was | (1u << s);
	uint32_t mig = PW_TMIGR_MIGRATOR(st) == PW_TMIGR_NONE ? s : PW_TMIGR_MIGRATOR(st);
	st64(&g->child_next[s], UINT64_MAX);
	st64(&g->next, idle_min(g, act));
	st_store(g, PW_TMIGR_STATE(act, mig));
	if (was)
		return;
	struct pw__tgroup *p = parent_of(rt, g);
	if (!p) {
		__atomic_store_n(&g->waker, -1, __ATOMIC_RELAXED);
		return;
	}
	pw__lock(&p->lock);
	go_active(rt, p, g->slot);
	pw__unlock(&p->lock);
}

/* @cpu's global first event, read under its level-0 group's lock. */
static uint64_t global_next(struct pw_runtime *rt, unsigned cpu)
{
	return pw__base_next_ns(rt, &rt->cpus[cpu].base[PW_BASE_GLOBAL]);
}

/* Idle child @s of @g now hands up @v: carry it if it changed.
 * Context: @g locked; returns with it locked. */
static void set_entry(struct pw_runtime *rt, struct pw__tgroup *g, unsigned s, uint64_t v,
		      struct wake *w)
{
	if (v == pw__ld64(&g->child_next[s]))
		return;
	st64(&g->child_next[s], v);
	carry_up(rt, g, w);
}

void pw__tmigr_deactivate(struct pw_runtime *rt, unsigned cpu)
{
	struct pw__tgroup *g = cpu_group(rt, cpu);
	unsigned s = cpu % PW_TMIGR_ARITY;
	struct wake w = {-1, 0, false};

	pw__lock(&g->lock);
	if (PW_TMIGR_ACTIVE(st_load(g)) & (1u << s)) {
		/* before reading the base: an arm by this CPU's own thread
		 * (runtimes without workers) that does not see the mark went
		 * into the base before this read (see pw__arm_notify()) */
		__atomic_store_n(&rt->cpus[cpu].base[PW_BASE_GLOBAL].tmigr_idle, 1, __ATOMIC_RELAXED);
		go_idle(rt, g, s, global_next(rt, cpu), cpu);
	} else {
		set_entry(rt, g, s, global_next(rt, cpu), &w); /* idle already: refresh */
	}
	pw__unlock(&g->lock);
	wake_waker(rt, &w);
}

void pw__tmigr_activate(struct pw_runtime *rt, unsigned cpu)
{
	struct pw__tgroup *g = cpu_group(rt, cpu);
	unsigned s = cpu % PW_TMIGR_ARITY;

	pw__lock(&g->lock);
	if (!(PW_TMIGR_ACTIVE(st_load(g)) & (1u << s))) {
		go_active(rt, g, s);
		__atomic_store_n(&rt->cpus[cpu].base[PW_BASE_GLOBAL].tmigr_idle, 0, __ATOMIC_RELAXED);
	}
	pw__unlock(&g->lock);
}

void pw__tmigr_refresh(struct pw_runtime *rt, unsigned cpu)
{
	struct pw__tgroup *g = cpu_group(rt, cpu);
	unsigned s = cpu % PW_TMIGR_ARITY;
	struct wake w = {-1, 0, false};

	pw__lock(&g->lock);
	if (!(PW_TMIGR_ACTIVE(st_load(g)) & (1u << s)))
		set_entry(rt, g, s, global_next(rt, cpu), &w);
	pw__unlock(&g->lock);
	wake_waker(rt, &w);
}

bool pw__tmigr_notify(struct pw_runtime *rt, unsigned cpu, uint64_t event_ns)
{
	bool workers = __atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE);
	if (workers && !pw__worker_may_sleep(rt, cpu))
		return false; /* awake, not preparing to sleep: it will see the timer */

	struct pw__tgroup *g = cpu_group(rt, cpu);
	unsigned s = cpu % PW_TMIGR_ARITY;
	struct wake w = {-1, 0, false};
	bool idle;

	pw__lock(&g->lock);
	idle = !(PW_TMIGR_ACTIVE(st_load(g)) & (1u << s));
	if (idle && event_ns < pw__ld64(&g->child_next[s]))
		set_entry(rt, g, s, event_ns, &w);
	pw__unlock(&g->lock);
	if (idle)
		wake_waker(rt, &w);
	return !idle; /* it runs its global timers itself: the kick rule decides */
}

/*
 * The groups whose idle children CPU @cpu handles, into @out (at most one
 * per level, plus the top once more when it is the waker): each group on
 * its path up where it is the migrator (of the CPU, then of the group
 * below), and the top when every CPU is idle and @cpu went idle last.
 * Lockless snapshot.  Return: how many.
 */
static unsigned served_groups(struct pw_runtime *rt, unsigned cpu, struct pw__tgroup **out)
{
	struct pw__tgroup *g = cpu_group(rt, cpu), *top = top_group(rt);
	unsigned s = cpu % PW_TMIGR_ARITY, n = 0;

	for (;;) {
		uint32_t st = st_load(g);
		if (!(PW_TMIGR_ACTIVE(st) & (1u << s)) || PW_TMIGR_MIGRATOR(st) != s)
			break;
		out[n++] = g;
		struct pw__tgroup *p = parent_of(rt, g);
		if (!p)
			break;
		s = g->slot;
		g = p;
	}
	/* the waker: in the simulation it acts without going active first */
	if (__atomic_load_n(&top->waker, __ATOMIC_RELAXED) == (int32_t)cpu &&
	    !PW_TMIGR_ACTIVE(st_load(top)))
		out[n++] = top;
	return n;
}

#define PW_TMIGR_MAX_SERVED 8 /* levels of 4096 CPUs (4) plus the waker's top */

uint64_t pw__tmigr_duty(struct pw_runtime *rt, unsigned cpu)
{
	struct pw__tgroup *gs[PW_TMIGR_MAX_SERVED];
	unsigned n = served_groups(rt, cpu, gs);
	uint64_t best = UINT64_MAX;
	for (unsigned i = 0; i < n; i++)
		if (pw__ld64(&gs[i]->next) < best)
			best = pw__ld64(&gs[i]->next);
	return best;
}

/* Run idle CPU @cpu's due global timers as CPU @self.  Context: see
 * pw__tmigr_handle(). */
static int run_remote(struct pw_runtime *rt, unsigned self, unsigned cpu, uint64_t now,
		      bool guards_held)
{
	struct pw__cpu *c = &rt->cpus[cpu];
	if (cpu == self) { /* the waker's own entry: its own run did that */
		pw__tmigr_refresh(rt, cpu);
		return 0;
	}
	if (__atomic_load_n(&c->offline, __ATOMIC_ACQUIRE))
		return 0;
	if (!guards_held && !pw__guard_try(c))
		return 0; /* it woke and runs them itself, or another migrator does */
	int n = pw__base_run(rt, &c->base[PW_BASE_GLOBAL], pw__ns_to_jiffies(rt, now));
	pw__tmigr_refresh(rt, cpu);
	if (!guards_held)
		pw__guard_release(c);
	if (n > 0)
		pw__count_add(&rt->cpus[self].stats.pulled, (uint64_t)n);
	return n;
}

/* Handle the due events of @g's idle children (recursively: an idle
 * child group's children are all idle).  Context: see pw__tmigr_handle(). */
static int handle_group(struct pw_runtime *rt, struct pw__tgroup *g, unsigned self,
			uint64_t now, bool guards_held)
{
	uint32_t act = PW_TMIGR_ACTIVE(st_load(g));
	int n = 0;
	for (unsigned i = 0; i < g->nchildren; i++) {
		if ((act & (1u << i)) || pw__ld64(&g->child_next[i]) > now)
			continue;
		if (g->level == 0)
			n += run_remote(rt, self, g->first + i, now, guards_held);
		else
			n += handle_group(rt, &rt->tmigr.groups[g->first + i], self, now,
					  guards_held);
	}
	return n;
}

int pw__tmigr_handle(struct pw_runtime *rt, unsigned cpu, uint64_t now, bool guards_held)
{
	struct pw__tgroup *gs[PW_TMIGR_MAX_SERVED];
	unsigned n = served_groups(rt, cpu, gs);
	int ran = 0;
	for (unsigned i = 0; i < n; i++)
		if (pw__ld64(&gs[i]->next) <= now)
			ran += handle_group(rt, gs[i], cpu, now, guards_held);
	return ran;
}

void pw__tmigr_offline(struct pw_runtime *rt, unsigned cpu, unsigned to)
{
	struct pw__tgroup *top = top_group(rt);
	pw__tmigr_deactivate(rt, cpu); /* its bases are empty: nothing handed up */
	pw__lock(&top->lock);
	bool handover = !PW_TMIGR_ACTIVE(st_load(top)) &&
			__atomic_load_n(&top->waker, __ATOMIC_RELAXED) == (int32_t)cpu;
	if (handover)
		__atomic_store_n(&top->waker, (int32_t)to, __ATOMIC_RELAXED);
	pw__unlock(&top->lock);
	pw__tmigr_refresh(rt, to); /* it holds @cpu's timers now */
	if (!handover)
		return;
	/* the hierarchy needs @to awake for its first event (every CPU is
	 * idle in it, @to too) */
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		pw__kick(rt, to, 0, PW__KICK_TMIGR);
	else
		pw__kick_count(rt, to, PW__KICK_TMIGR);
}

/* Check group @g (locked by the caller) and its view of its children. */
static int check_group(struct pw_runtime *rt, struct pw__tgroup *g)
{
	uint32_t st = st_load(g), act = PW_TMIGR_ACTIVE(st), mig = PW_TMIGR_MIGRATOR(st);
	unsigned idx = (unsigned)(g - rt->tmigr.groups);
	const char *bad = NULL;

	if (act & ~((1u << g->nchildren) - 1))
		bad = "active bit beyond the children";
	else if (act ? mig >= g->nchildren || !(act & (1u << mig)) : mig != PW_TMIGR_NONE)
		bad = "migrator is not an active child (or missing)";
	else if (idle_min(g, act) != pw__ld64(&g->next))
		bad = "next is not the first idle child's event";
	for (unsigned i = 0; !bad && i < g->nchildren; i++) {
		bool on = act & (1u << i);
		if (g->level == 0) { /* a CPU: its bit is all there is */
			if (!on && pw__ld64(&g->child_next[i]) > global_next(rt, g->first + i))
				bad = "an idle CPU's handed-up event is later than its first global timer";
		} else {
			struct pw__tgroup *c = &rt->tmigr.groups[g->first + i];
			if ((PW_TMIGR_ACTIVE(st_load(c)) != 0) != on)
				bad = "a group's active bit disagrees with the group";
			else if (!on && pw__ld64(&g->child_next[i]) != pw__ld64(&c->next))
				bad = "an idle group's entry is not its first event";
		}
		if (!bad && (act & (1u << i)) && pw__ld64(&g->child_next[i]) != UINT64_MAX)
			bad = "an active child has an event handed up";
	}
	if (!bad && g->parent < 0 &&
	    (act ? __atomic_load_n(&g->waker, __ATOMIC_RELAXED) != -1
		 : __atomic_load_n(&g->waker, __ATOMIC_RELAXED) < 0))
		bad = "the waker is set iff everything is idle";
	if (bad) {
		fprintf(stderr, "pinwheel: timer migration group %u (level %u): %s\n", idx,
			g->level, bad);
		return -EFAULT;
	}
	return 0;
}

int pw__tmigr_check(struct pw_runtime *rt)
{
	/* one group at a time: the checker's callers are quiescent (a group's
	 * view of its child groups is compared without their locks) */
	for (unsigned i = 0; i < rt->tmigr.ngroups; i++) {
		struct pw__tgroup *g = &rt->tmigr.groups[i];
		pw__lock(&g->lock);
		int r = check_group(rt, g);
		pw__unlock(&g->lock);
		if (r)
			return r;
	}
	return 0;
}
