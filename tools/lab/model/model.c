/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's model: each seed at its own size, on the simulated clock.
 *
 * What.  A deterministic discrete-event run of a seed's machine (its CPUs,
 * NIC queues, flows) on one PW_CLOCK_SIM runtime, with no worker threads:
 * the main thread acts as each CPU in turn (pw_cpu_enter()) and makes the
 * calls that CPU's kernel would make (sk_reset_timer, dev_queue_xmit,
 * hrtimer_start ...), and the library decides everything a timer subsystem
 * decides: which CPU a timer lands on (the migration policy, the era's
 * kick rule), when a qdisc watchdog fires and so which CPU dequeues, when
 * a wheel timer is due.  The model supplies what the library does not
 * have: the devices' interrupts (RX and TX completion per queue, with the
 * NIC's coalescing), the tasks that make a CPU busy (the application
 * threads), the wire, and the cost of each event in CPU time.  It counts
 * what /proc/interrupts would count and where the work ran.
 *
 * The loop (mdl_run()).  Two sources of events, merged in time order:
 * the model's own queue (a binary heap on time, then insertion order) and
 * the library's timers.  Before each step every CPU's next event is read
 * (pw_next_expiry_ns()); if a timer comes first, the clock is advanced to
 * it with pw_sim_advance(), which runs the due timers of every CPU due then
 * (their callbacks see pw_now_ns() at their time and pw_this_cpu() their
 * CPU), and each CPU that was due takes one local timer interrupt (LOC)
 * there: on a busy CPU its tick is one of these timers, so a watchdog that
 * falls on a tick costs no second interrupt; on an idle CPU its next event
 * is what wakes it (NOHZ idle).  Otherwise the clock is advanced to the
 * next model event (no timer runs on the way) and the seed's dispatcher
 * handles it.  Events that a timer callback causes are queued at or after
 * its time, so nothing runs out of order.
 *
 * Busy and idle.  A CPU is busy, for the library (pw_cpu_set_idle()) and
 * for its tick, while a task runs on it: an application thread the model
 * scheduled, or ksoftirqd: where a seed sets ksoftirqd_on, when its
 * softirq work lags its events by more than MAX_SOFTIRQ_TIME (2 ms); seed003
 * wakes it itself, past __do_softirq()'s budget of passes and time
 * (model_seed003_tx.c), and clears it when a pass leaves nothing.  Interrupt and
 * softirq work on an idle CPU leaves it idle, as idle_cpu() saw it: that
 * is why receive-path arms were pushed.  While busy, a pinned hrtimer at
 * every jiffy boundary is its tick (what hrtimer_check_target() compared
 * a pushed hrtimer against: the target's next event).
 *
 * CPU time.  Each event costs its CPU an amount from the cost table
 * (mdl_cost_table[] in model_costs.c, each entry with its source).  A CPU's work is a
 * timeline: a charge starts when its earlier work ends (free_at) or at the
 * event, whichever is later, so a CPU that cannot keep up lags, and the lag
 * is reported (max_lag) rather than hidden.  Locks (struct mdl_lock) hold
 * simulated time: a CPU that wants one while another holds it waits until
 * the hold ends, spinning, and that spin is charged to it; a lock taken
 * from a CPU that did not hold it last costs a hand-off (its cache lines
 * move; charged as spinning where the lock says so, as perf's
 * _raw_spin_lock counts the stall on its line); a ticket lock's hand-off
 * grows with the CPUs spinning on it (lock_ticket_extra()).  A lock may be taken
 * inside another (mdl_locked_nested(): 3.17's qdisc busylock, held until
 * the root lock inside it is released), and tried (mdl_lock_held_at():
 * spin_trylock()).  Contention and its share of cycles therefore come out
 * of the schedule.  The holds are kept as a calendar of intervals, so work that
 * lags on one CPU does not make another CPU's earlier request wait for it.
 * Simplifications, each stated where it applies: an interrupt's work is
 * queued after the work its CPU is doing rather than preempting it; the
 * library's own timer callbacks (a watchdog's dequeue) act at their expiry
 * even when their CPU's modelled work lags (the lag is then reported).
 *
 * Interrupts counted (struct mdl_cpu.irq[], enum mdl_irq): RX and TX
 * completion per queue after coalescing (the seeds' files), LOC as above,
 * RES for task wake-ups of a CPU that runs another task (an idle CPU
 * polls in mwait and is woken without an IPI) and, from the library's
 * pw_kick_stats, the kicks its era's rule sent (remote_enqueue,
 * idle_earlier, work, tmigr as RES; hrtimer as CAL).  `in` is their sum,
 * as the first number of /proc/stat's intr line counts them and vmstat's
 * in column shows it per second.
 *
 * Invariants (mdl_check(), each seed adds its own): under OFF, pinned and
 * PULL no wheel arm ends on another CPU (pw_cpu_stats.remote_arms 0);
 * under the 3.17 rule the timer IPIs (kicks for remote_enqueue) equal the
 * remote enqueues (remote_arms); every packet handed to the library is
 * accounted for (sent, queued, or dropped by name); the same --seed gives
 * byte-identical output (the test runs it twice).
 *
 * The files.  This one is the engine; model_costs.c the cost table (and
 * the measured costs); model_row.c the results' helpers: a row's shape,
 * which every seed shares (mdl_totals() reads the window's interrupts,
 * work, lag and the library's kicks; mdl_row_common() writes the figures
 * every row with a NIC reports; mdl_row_finish() closes it), the cost
 * sweep (mdl_cost_sweep()), mdl_row_set()/mdl_find()/mdl_note().
 * The seeds' files (model_seed000.c, model_seed001.c, model_seed003.c
 * with model_seed003_tx.c, its transmit path; model_seed000_claims.c) call only down into these three, verdict.c and
 * model_sched.c (seed000's threads' scheduler, which calls only this file) (seed003's tc script is
 * seed003_script.c's, shared with the live run); model_print.c, the way in
 * from lab.h, runs them and prints their results.  No file calls back up.
 *
 * Deterministic: no wall-clock read (mdl_costs_measure(), run only for
 * --costs measured, is the one exception and is outside every run), one
 * PRNG (splitmix64) seeded from --seed, and the library's simulation
 * replays exactly for the same calls.  Fixed-format printing.
 *
 * Threads: every function here is for the main thread only, except
 * mdl_costs_measure()'s helper thread (its own function, joined before
 * it returns).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

/* ------------------------------------------------------------ PRNG */

uint64_t mdl_rand(struct mdl *m)
{
	uint64_t z = (m->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t mdl_rand_below(struct mdl *m, uint64_t n)
{
	return n ? mdl_rand(m) % n : 0;
}

/* ------------------------------------------------------------ event queue */

enum {
	EV_WINDOW = 0x10000, /* the measured window opens: snapshot the library */
	EV_CPU_UPDATE,       /* re-evaluate CPU a's busy mark */
};

static int ev_before(const struct mdl_ev *a, const struct mdl_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void mdl_at(struct mdl *m, uint64_t t, uint32_t type, uint32_t a, uint64_t b)
{
	if (m->nev == m->evcap) {
		unsigned cap = m->evcap ? m->evcap * 2 : 1024;
		struct mdl_ev *h = realloc(m->heap, cap * sizeof(*h));
		if (!h) {
			mdl_check(m, 0, "event queue: out of memory");
			return;
		}
		m->heap = h;
		m->evcap = cap;
	}
	if (t < m->now)
		t = m->now;
	struct mdl_ev e = {t, m->seq++, type, a, b};
	unsigned i = m->nev++;
	while (i) {
		unsigned p = (i - 1) / 2;
		if (!ev_before(&e, &m->heap[p]))
			break;
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = e;
}

static struct mdl_ev ev_pop(struct mdl *m)
{
	struct mdl_ev top = m->heap[0], last = m->heap[--m->nev];
	unsigned i = 0, n = m->nev;
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, s = i;
		const struct mdl_ev *best = &last;
		if (l < n && ev_before(&m->heap[l], best)) {
			s = l;
			best = &m->heap[l];
		}
		if (r < n && ev_before(&m->heap[r], best))
			s = r;
		if (s == i)
			break;
		m->heap[i] = m->heap[s];
		i = s;
	}
	if (n)
		m->heap[i] = last;
	return top;
}

/* ------------------------------------------------------------ checks */

int mdl_check(struct mdl *m, int ok, const char *fmt, ...)
{
	m->nchecks++;
	if (ok)
		return 1;
	if (!m->nfailed++) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(m->failure, sizeof(m->failure), fmt, ap);
		va_end(ap);
	}
	return 0;
}

int mdl_tc(struct mdl *m, const char *who, const char *cmd)
{
	char err[256] = "";
	int rc = pw_tc(m->rt, cmd, 0, NULL, 0, err, sizeof(err));
	mdl_check(m, rc == 0, "%s: tc %s: %s", who, cmd, err);
	return rc;
}

/* ------------------------------------------------------------ locks */

void mdl_lock_init(struct mdl_lock *l, const char *name)
{
	memset(l, 0, sizeof(*l));
	l->name = name;
	l->last_who = -1;
}

struct mdl_lock *mdl_locks_new(unsigned n, const char *name)
{
	struct mdl_lock *l = calloc(n ? n : 1, sizeof(*l));
	for (unsigned i = 0; l && i < n; i++)
		mdl_lock_init(&l[i], name);
	return l;
}

void mdl_locks_free(struct mdl_lock *l, unsigned n)
{
	for (unsigned i = 0; l && i < n; i++)
		mdl_lock_fini(&l[i]);
	free(l);
}

void mdl_lock_fini(struct mdl_lock *l)
{
	free(l->s);
	free(l->e);
	free(l->who);
	memset(l, 0, sizeof(*l));
}

/* Make room for one more interval.  Return 0 or -ENOMEM. */
static int lock_grow(struct mdl_lock *l)
{
	if (l->n < l->cap)
		return 0;
	unsigned cap = l->cap ? l->cap * 2 : 16;
	uint64_t *s = realloc(l->s, cap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	l->s = s;
	uint64_t *e = realloc(l->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	l->e = e;
	int *w = realloc(l->who, cap * sizeof(*w));
	if (!w)
		return -ENOMEM;
	l->who = w;
	l->cap = cap;
	return 0;
}

/* Drop intervals that ended before @now; remember who held it last. */
static void lock_prune(struct mdl_lock *l, uint64_t now)
{
	unsigned k = 0;
	while (k < l->n && l->e[k] <= now)
		k++;
	if (!k)
		return;
	l->last_who = l->who[k - 1];
	memmove(l->s, l->s + k, (l->n - k) * sizeof(*l->s));
	memmove(l->e, l->e + k, (l->n - k) * sizeof(*l->e));
	memmove(l->who, l->who + k, (l->n - k) * sizeof(*l->who));
	l->n -= k;
}

/* ------------------------------------------------------------ CPU work */

static void lag_check(struct mdl *m, unsigned c)
{
	struct mdl_cpu *cpu = &m->cpu[c];
	uint64_t lag = cpu->free_at > m->now ? cpu->free_at - m->now : 0;
	if (mdl_in_window(m) && lag > cpu->max_lag_ns)
		cpu->max_lag_ns = lag;
	if (m->ksoftirqd_on && !cpu->ksoftirqd && lag > m->ksoftirqd_ns) {
		cpu->ksoftirqd = 1;
		mdl_at(m, m->now, EV_CPU_UPDATE, c, 0);
	}
}

uint64_t mdl_work(struct mdl *m, unsigned c, double ns, unsigned cat)
{
	struct mdl_cpu *cpu = &m->cpu[c];
	uint64_t s = cpu->free_at > m->now ? cpu->free_at : m->now;
	uint64_t d = (uint64_t)llround(ns);
	cpu->free_at = s + d;
	cpu->charged_ns += d;
	if (mdl_in_window(m))
		cpu->cat_ns[cat] += d;
	lag_check(m, c);
	return cpu->free_at;
}

/* The hand-off to CPU @c after @prev: none from itself, else @hand. */
static uint64_t lock_hand(int prev, unsigned c, uint64_t hand)
{
	return prev >= 0 && prev != (int)c ? hand : 0;
}

/* A ticket lock's cost of CPU @c spinning over [@req, @t): half a hand-off
 * more for each hand-off between other CPUs in that time (with k spinners
 * a hand-off costs handoff + (k - 1) x handoff / 2: Boyd-Wickizer et al.,
 * 2012), charged to @c's own wait: the bookings made before are not
 * lengthened. */
static uint64_t lock_ticket_extra(const struct mdl_lock *l, unsigned c, uint64_t req, uint64_t t,
				  uint64_t hand)
{
	if (!l->ticket || !hand)
		return 0;
	int prev = l->last_who;
	unsigned n = 0;
	for (unsigned j = 0; j < l->n && l->s[j] < t; j++) {
		n += l->s[j] > req && prev >= 0 && l->who[j] != prev && l->who[j] != (int)c;
		prev = l->who[j];
	}
	return n * hand / 2;
}

/* The earliest start >= @t at which CPU @c can hold @l for @hold (plus a
 * hand-off when another CPU held it last, and a ticket lock's cost of the
 * spin since @t, *@extra): *@at the calendar index to book it at, *@total
 * the hold with its hand-off and *@extra. */
static uint64_t lock_find(const struct mdl_lock *l, unsigned c, uint64_t t, uint64_t hold,
			  uint64_t hand, unsigned *at, uint64_t *total, uint64_t *extra)
{
	const uint64_t req = t;
	int prev = l->last_who;
	unsigned i = 0;
	for (; i < l->n; i++) {
		if (l->e[i] <= t) {
			prev = l->who[i];
			continue;
		}
		uint64_t need = hold + lock_hand(prev, c, hand) +
				lock_ticket_extra(l, c, req, t, hand);
		if (l->s[i] >= t + need)
			break;
		t = l->e[i];
		prev = l->who[i];
	}
	*at = i;
	*extra = lock_ticket_extra(l, c, req, t, hand);
	*total = hold + lock_hand(prev, c, hand) + *extra;
	return t;
}

/* Book [@t, @t + @len) for CPU @c at calendar index @i. */
static void lock_book(struct mdl *m, struct mdl_lock *l, unsigned i, unsigned c, uint64_t t,
		      uint64_t len)
{
	if (lock_grow(l)) {
		mdl_check(m, 0, "lock %s: out of memory", l->name);
		return;
	}
	memmove(l->s + i + 1, l->s + i, (l->n - i) * sizeof(*l->s));
	memmove(l->e + i + 1, l->e + i, (l->n - i) * sizeof(*l->e));
	memmove(l->who + i + 1, l->who + i, (l->n - i) * sizeof(*l->who));
	l->s[i] = t;
	l->e[i] = t + len;
	l->who[i] = (int)c;
	l->n++;
}

/* The window's accounting of one acquisition of @l by CPU @c. */
static void lock_account(struct mdl *m, struct mdl_lock *l, unsigned c, uint64_t wait,
			 uint64_t hold, uint64_t hand, unsigned cat, unsigned spin_cat)
{
	struct mdl_cpu *cpu = &m->cpu[c];
	if (!mdl_in_window(m))
		return;
	uint64_t spin = wait + (l->handoff_spin ? hand : 0);
	cpu->cat_ns[spin_cat] += spin;
	cpu->spin_ns += wait;
	cpu->cat_ns[cat] += hold + hand - (l->handoff_spin ? hand : 0);
	l->acq++;
	l->contended += wait > 0;
	l->wait_ns += wait;
	l->hold_ns += hold + hand;
	l->handoff_ns += hand;
}

uint64_t mdl_locked(struct mdl *m, unsigned c, struct mdl_lock *l, double hold_ns, unsigned cat,
		    unsigned spin_cat)
{
	struct mdl_cpu *cpu = &m->cpu[c];
	uint64_t req = cpu->free_at > m->now ? cpu->free_at : m->now;
	lock_prune(l, m->now);
	uint64_t hold = (uint64_t)llround(hold_ns);
	uint64_t hand = (uint64_t)llround(m->cost->ns[MC_HANDOFF]);
	unsigned i;
	uint64_t total, extra;
	uint64_t t = lock_find(l, c, req, hold, hand, &i, &total, &extra);
	lock_book(m, l, i, c, t, total);
	uint64_t wait = t - req;
	cpu->free_at = t + total;
	cpu->charged_ns += wait + total;
	/* a ticket lock's extra is spin (the wait), not the hand-off */
	lock_account(m, l, c, wait + extra, hold, total - hold - extra, cat, spin_cat);
	lag_check(m, c);
	return cpu->free_at;
}

uint64_t mdl_locked_nested(struct mdl *m, unsigned c, struct mdl_lock *outer,
			   struct mdl_lock *inner, double hold_ns, unsigned cat, unsigned spin_cat)
{
	struct mdl_cpu *cpu = &m->cpu[c];
	uint64_t req = cpu->free_at > m->now ? cpu->free_at : m->now;
	lock_prune(outer, m->now);
	lock_prune(inner, m->now);
	uint64_t hold = (uint64_t)llround(hold_ns);
	uint64_t hand = (uint64_t)llround(m->cost->ns[MC_HANDOFF]);
	uint64_t t = req, to = req, ti = req, ri = req, tot_o = 0, tot_i = 0, ex_o = 0, ex_i = 0;
	unsigned io = 0, ii = 0;
	/* the outer's slot must cover the wait for the inner and its hold:
	 * move on until one does (each step starts later: it ends) */
	for (unsigned k = 0; k < 100000; k++) {
		to = lock_find(outer, c, t, 0, hand, &io, &tot_o, &ex_o);
		ri = to + tot_o; /* the inner asked for once the outer is held */
		ti = lock_find(inner, c, ri, hold, hand, &ii, &tot_i, &ex_i);
		uint64_t len = ti + tot_i - to, tot2, ex2;
		unsigned io2;
		/* free over [to, to + len)? (its hand-off is inside len) */
		uint64_t to2 = lock_find(outer, c, to, len, 0, &io2, &tot2, &ex2);
		if (to2 == to) {
			io = io2;
			tot_o = len;
			break;
		}
		t = to2 > to ? to2 : to + 1;
	}
	lock_book(m, outer, io, c, to, tot_o);
	lock_book(m, inner, ii, c, ti, tot_i);
	/* the outer's own hand-off is inside the wait before the inner */
	lock_account(m, outer, c, to - req, 0, 0, cat, spin_cat);
	lock_account(m, inner, c, ti - to + ex_i, hold, tot_i - hold - ex_i, cat, spin_cat);
	cpu->free_at = ti + tot_i;
	cpu->charged_ns += ti + tot_i - req;
	lag_check(m, c);
	return cpu->free_at;
}

int mdl_lock_held_at(const struct mdl_lock *l, uint64_t t)
{
	for (unsigned i = 0; i < l->n && l->s[i] <= t; i++)
		if (t < l->e[i])
			return 1;
	return 0;
}

void mdl_irq(struct mdl *m, unsigned c, enum mdl_irq kind)
{
	if (mdl_in_window(m))
		m->cpu[c].irq[kind]++;
	if (kind == MI_RES || kind == MI_CAL)
		mdl_work(m, c, m->cost->ns[MC_IPI_RECV], m->cat_ipi);
	else
		mdl_work(m, c, m->cost->ns[MC_IRQ], m->cat_irq);
}

void mdl_wake(struct mdl *m, unsigned from, unsigned to)
{
	mdl_work(m, from, m->cost->ns[MC_WAKE] / 2, m->cat_ipi);
	if (to != from && m->cpu[to].task_until > m->now) {
		mdl_work(m, from, m->cost->ns[MC_IPI_SEND], m->cat_ipi);
		mdl_irq(m, to, MI_RES);
		if (mdl_in_window(m))
			m->res_sched++;
	}
}

/* ------------------------------------------------------------ busy / idle, the tick */

void mdl_act(struct mdl *m, int c)
{
	if (m->acting == c)
		return;
	if (m->acting >= 0)
		pw_cpu_exit(m->rt);
	m->acting = -1;
	if (c >= 0 && pw_cpu_enter(m->rt, (unsigned)c) == 0)
		m->acting = c;
}

static uint64_t jiffy_ns(const struct mdl *m)
{
	return 1000000000ull / m->hz;
}

/* The tick, while its CPU is busy: the tick's work; ksoftirqd's backlog
 * looked at.  Context: a timer callback inside pw_sim_advance(), on the
 * tick's CPU. */
static enum pw_hrtimer_restart tick_fn(struct pw_hrtimer *t)
{
	struct mdl_cpu *cpu = pw_container_of(t, struct mdl_cpu, tick);
	struct mdl *m = cpu->m;
	m->now = pw_now_ns(m->rt);
	cpu->tick_runs++;
	mdl_work(m, cpu->id, m->cost->ns[MC_TICK], m->cat_tick);
	if (m->ksoftirqd_on && cpu->ksoftirqd && cpu->free_at <= m->now + jiffy_ns(m)) {
		cpu->ksoftirqd = 0;
		mdl_at(m, m->now, EV_CPU_UPDATE, cpu->id, 0);
	}
	if (!cpu->busy) {
		cpu->tick_on = 0;
		return PW_HRTIMER_NORESTART;
	}
	pw_hrtimer_forward(t, m->now, jiffy_ns(m));
	return PW_HRTIMER_RESTART;
}

void mdl_cpu_update(struct mdl *m, unsigned c)
{
	struct mdl_cpu *cpu = &m->cpu[c];
	int busy = cpu->task_until > m->now || cpu->ksoftirqd;
	if (busy == cpu->busy)
		return;
	cpu->busy = busy;
	if (busy && mdl_in_window(m))
		m->busy_marks++;
	mdl_act(m, -1);
	mdl_check(m, pw_cpu_set_idle(m->rt, c, !busy) == 0, "pw_cpu_set_idle(%u)", c);
	if (busy && !cpu->tick_on) {
		uint64_t j = jiffy_ns(m);
		mdl_act(m, (int)c);
		int err = pw_hrtimer_start(&cpu->tick, (m->now / j + 1) * j,
					   PW_HRTIMER_MODE_ABS | PW_HRTIMER_MODE_PINNED);
		mdl_check(m, err == 0, "tick start on CPU %u: %d", c, err);
		cpu->tick_on = 1;
	} else if (!busy && cpu->tick_on) {
		/* NOHZ idle: the tick stops (a running callback decides itself) */
		if (pw_hrtimer_try_to_cancel(&cpu->tick) == 1)
			cpu->tick_on = 0;
	}
}

void mdl_task_run(struct mdl *m, unsigned c, uint64_t until)
{
	struct mdl_cpu *cpu = &m->cpu[c];
	if (until > cpu->task_until)
		cpu->task_until = until;
	/* inside a timer callback the thread acts as the callback's CPU: a
	 * tick started now would land there, so the mark waits for the loop */
	if (mdl_in_callback(m))
		mdl_at(m, m->now, EV_CPU_UPDATE, c, 0);
	else
		mdl_cpu_update(m, c);
	mdl_at(m, until, EV_CPU_UPDATE, c, 0);
}

/* ------------------------------------------------------------ setup */

unsigned mdl_cat(struct mdl *m, const char *name)
{
	for (unsigned i = 0; i < m->ncat; i++)
		if (!strcmp(m->cat_name[i], name))
			return i;
	if (m->ncat == MDL_MAX_CAT)
		return MDL_MAX_CAT - 1;
	m->cat_name[m->ncat] = name;
	return m->ncat++;
}

int mdl_init(struct mdl *m, unsigned ncpus, unsigned hz, uint64_t seed, const struct mdl_costs *c,
	     uint64_t warm_ns, uint64_t run_ns, mdl_dispatch_fn fn, void *ctx)
{
	return mdl_init_topo(m, NULL, ncpus, hz, seed, c, warm_ns, run_ns, fn, ctx);
}

int mdl_init_topo(struct mdl *m, const struct mdl_topo *topo, unsigned ncpus, unsigned hz,
		  uint64_t seed, const struct mdl_costs *c, uint64_t warm_ns, uint64_t run_ns,
		  mdl_dispatch_fn fn, void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->ncpus = ncpus;
	m->hz = hz;
	m->cost = c;
	m->rng = seed * 0x2545f4914f6cdd1dull + 0x1234567;
	m->t_measure = warm_ns;
	m->t_end = warm_ns + run_ns;
	m->dispatch = fn;
	m->ctx = ctx;
	m->acting = -1;
	m->ksoftirqd_ns = 2000000; /* MAX_SOFTIRQ_TIME: 2 ms */
	m->cat_irq = mdl_cat(m, "irq");
	m->cat_ipi = mdl_cat(m, "ipi+wake");
	m->cat_tick = mdl_cat(m, "tick");
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = ncpus;
	cfg.hz = hz;
	cfg.clock = PW_CLOCK_SIM;
	if (topo) {
		cfg.topo_levels = topo->levels;
		for (unsigned l = 0; l < topo->levels && l < PW_TOPO_MAX_LEVELS; l++)
			cfg.topo_span[l] = topo->span[l];
	}
	int err = pw_runtime_create(&cfg, &m->rt);
	if (err)
		return err;
	m->cpu = calloc(ncpus, sizeof(*m->cpu));
	m->st0 = calloc(ncpus, sizeof(*m->st0));
	m->ks0 = calloc(ncpus, sizeof(*m->ks0));
	m->nx = calloc(ncpus, sizeof(*m->nx));
	if (!m->cpu || !m->st0 || !m->ks0 || !m->nx) {
		mdl_fini(m);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < ncpus; i++) {
		struct mdl_cpu *cpu = &m->cpu[i];
		cpu->m = m;
		cpu->id = i;
		cpu->busy = 0;
		mdl_act(m, (int)i);
		pw_hrtimer_setup(m->rt, &cpu->tick, tick_fn, CLOCK_MONOTONIC,
				 PW_HRTIMER_MODE_ABS | PW_HRTIMER_MODE_PINNED);
		/* CPUs start idle: nothing runs until the model says so */
		pw_cpu_set_idle(m->rt, i, 1);
	}
	mdl_act(m, -1);
	mdl_at(m, warm_ns, EV_WINDOW, 0, 0);
	return 0;
}

void mdl_fini(struct mdl *m)
{
	mdl_act(m, -1);
	pw_runtime_destroy(m->rt);
	m->rt = NULL;
	free(m->cpu);
	free(m->st0);
	free(m->ks0);
	free(m->nx);
	free(m->heap);
	m->cpu = NULL;
	m->st0 = NULL;
	m->ks0 = NULL;
	m->nx = NULL;
	m->heap = NULL;
	m->nev = m->evcap = 0;
}

/* ------------------------------------------------------------ the loop */

static void sim_to(struct mdl *m, uint64_t t)
{
	uint64_t cur = pw_now_ns(m->rt);
	mdl_act(m, -1);
	if (t > cur)
		pw_sim_advance(m->rt, t - cur);
	else
		pw_sim_advance(m->rt, 0);
	m->now = t > cur ? t : cur;
}

static void window_open(struct mdl *m)
{
	for (unsigned c = 0; c < m->ncpus; c++) {
		pw_stats_read(m->rt, c, &m->st0[c]);
		pw_kick_stats_read(m->rt, c, &m->ks0[c]);
	}
}

int mdl_run(struct mdl *m)
{
	uint64_t stuck_t = UINT64_MAX, stuck_n = 0;
	for (;;) {
		uint64_t t_ev = m->nev ? m->heap[0].t : UINT64_MAX;
		uint64_t t_tm = UINT64_MAX;
		for (unsigned c = 0; c < m->ncpus; c++) {
			m->nx[c] = pw_next_expiry_ns(m->rt, c);
			if (m->nx[c] < t_tm)
				t_tm = m->nx[c];
		}
		if (t_tm <= t_ev && t_tm <= m->t_end) {
			uint64_t t = t_tm < m->now ? m->now : t_tm;
			m->now = t;
			/* each CPU due now takes one local timer interrupt */
			for (unsigned c = 0; c < m->ncpus; c++)
				if (m->nx[c] <= t)
					mdl_irq(m, c, MI_LOC);
			sim_to(m, t);
			m->timer_steps++;
			m->iterations++;
			/* a CPU that stays due after its timers ran would spin here */
			stuck_n = t == stuck_t ? stuck_n + 1 : 0;
			stuck_t = t;
			mdl_check(m, stuck_n < 100000, "no progress: timers stay due at %llu ns",
				  (unsigned long long)t);
			if (m->nfailed)
				return -EFAULT;
			continue;
		}
		if (t_ev > m->t_end) {
			sim_to(m, m->t_end);
			break;
		}
		struct mdl_ev ev = ev_pop(m);
		if (ev.t > m->now)
			sim_to(m, ev.t);
		m->iterations++;
		switch (ev.type) {
		case EV_WINDOW:
			window_open(m);
			break;
		case EV_CPU_UPDATE:
			mdl_cpu_update(m, ev.a);
			break;
		default:
			m->dispatch(m, &ev);
		}
		if (m->nfailed)
			return -EFAULT;
	}
	mdl_act(m, -1);
	return 0;
}

void mdl_stats_window(struct mdl *m, unsigned c, struct pw_cpu_stats *st, struct pw_kick_stats *ks)
{
	struct pw_cpu_stats s;
	struct pw_kick_stats k;
	pw_stats_read(m->rt, c, &s);
	pw_kick_stats_read(m->rt, c, &k);
	const struct pw_cpu_stats *a = &m->st0[c];
	const struct pw_kick_stats *b = &m->ks0[c];
	memset(st, 0, sizeof(*st));
	st->pushed = s.pushed - a->pushed;
	st->pulled = s.pulled - a->pulled;
	st->armed = s.armed - a->armed;
	st->fast_path = s.fast_path - a->fast_path;
	st->same_bucket = s.same_bucket - a->same_bucket;
	st->remote_arms = s.remote_arms - a->remote_arms;
	ks->remote_enqueue = k.remote_enqueue - b->remote_enqueue;
	ks->idle_earlier = k.idle_earlier - b->idle_earlier;
	ks->hrtimer = k.hrtimer - b->hrtimer;
	ks->work = k.work - b->work;
	ks->tmigr = k.tmigr - b->tmigr;
}

/* ------------------------------------------------------------ NIC vectors */

#define NAPI_BUDGET 64

void mdl_vec_init(struct mdl_vec *v, unsigned id, unsigned cpu, enum mdl_irq kind, uint32_t ev,
		  uint64_t usecs_ns, unsigned frames)
{
	memset(v, 0, sizeof(*v));
	v->id = id;
	v->cpu = cpu;
	v->kind = kind;
	v->ev = ev;
	v->usecs_ns = usecs_ns;
	v->frames = frames ? frames : 1;
}

void mdl_vec_fini(struct mdl_vec *v)
{
	free(v->ring);
	v->ring = NULL;
	v->n = v->cap = v->head = 0;
}

static struct mdl_item *vec_at(struct mdl_vec *v, unsigned i)
{
	return &v->ring[(v->head + i) & (v->cap - 1)];
}

static void vec_arm(struct mdl *m, struct mdl_vec *v, uint64_t t)
{
	v->state = 1;
	v->irq_t = t;
	mdl_at(m, t, v->ev, v->id, ++v->gen);
}

void mdl_vec_push(struct mdl *m, struct mdl_vec *v, uint64_t t, uint32_t a, uint32_t b)
{
	if (v->n == v->cap) {
		unsigned cap = v->cap ? v->cap * 2 : 64;
		struct mdl_item *r = malloc(cap * sizeof(*r));
		if (!r) {
			mdl_check(m, 0, "vector %u: out of memory", v->id);
			return;
		}
		for (unsigned i = 0; i < v->n; i++)
			r[i] = *vec_at(v, i);
		free(v->ring);
		v->ring = r;
		v->cap = cap;
		v->head = 0;
	}
	*vec_at(v, v->n++) = (struct mdl_item){t, a, b};
	if (v->state == 0)
		vec_arm(m, v, t + v->usecs_ns);
	else if (v->state == 1 && v->n >= v->frames && vec_at(v, v->frames - 1)->t < v->irq_t)
		vec_arm(m, v, vec_at(v, v->frames - 1)->t); /* the frames-th item: interrupt then */
}

int mdl_vec_begin(struct mdl *m, struct mdl_vec *v, const struct mdl_ev *ev)
{
	if (ev->b) {
		if (v->state != 1 || ev->b != v->gen)
			return 0;
		mdl_irq(m, v->cpu, v->kind);
	} else if (v->state != 2) {
		return 0;
	}
	v->state = 2;
	v->irq_t = 0; /* counts the poll's items against the budget */
	return 1;
}

int mdl_vec_next(struct mdl *m, struct mdl_vec *v, struct mdl_item *out)
{
	if (!v->n || vec_at(v, 0)->t > m->now || v->irq_t >= NAPI_BUDGET)
		return 0;
	*out = *vec_at(v, 0);
	v->head = (v->head + 1) & (v->cap - 1);
	v->n--;
	v->items++;
	v->irq_t++;
	return 1;
}

void mdl_vec_end(struct mdl *m, struct mdl_vec *v)
{
	uint64_t end = m->cpu[v->cpu].free_at > m->now ? m->cpu[v->cpu].free_at : m->now;
	if (v->n && vec_at(v, 0)->t <= end) {
		/* NAPI polls on: what came meanwhile, or what the budget left */
		v->state = 2;
		mdl_at(m, end, v->ev, v->id, 0);
		return;
	}
	v->state = 0;
	if (v->n) {
		uint64_t first = vec_at(v, 0)->t;
		vec_arm(m, v, (first > end ? first : end) + v->usecs_ns);
		if (v->n >= v->frames && vec_at(v, v->frames - 1)->t < v->irq_t)
			vec_arm(m, v, vec_at(v, v->frames - 1)->t);
	}
}
