/* SPDX-License-Identifier: MIT */
/*
 * The model's task scheduler: where an application thread runs and when it
 * gets the CPU, as 3.17's CFS decides it for threads that mostly sleep
 * (docs/lab.md, "seed000 with 3.17's scheduler", fixed before the run).
 *
 * Run queues.  A CPU runs one thread at a time; a woken thread waits in its
 * CPU's queue, first come first served (CFS's order among equal threads
 * that mostly sleep), and the seed charges its work when it gets the CPU.
 * A CPU with no thread queued or running is idle (idle_cpu()), whatever
 * softirq work it does.
 *
 * Load.  Each thread keeps PELT's runnable average (1,024 us periods, y^32
 * = 1/2; __update_entity_runnable_avg(), here in continuous form): it
 * grows while the thread is queued or running and decays while it sleeps.
 * A CPU's load is the sum over its queued and running threads x 1024 (nice
 * 0): cfs_rq->runnable_load_avg, what weighted_cpuload() and so
 * source_load()/target_load() at wake_idx 0 read.
 *
 * Wake-up placement (select_task_rq_fair() with SD_BALANCE_WAKE).  If the
 * waker is not the thread's previous CPU, wake_affine() in the waker's
 * lowest domain spanning both: a waker of load 0 wins (3.17's `else
 * balanced = true`); else it wins when 100 (its load + 1024) <= (100 +
 * (imbalance_pct - 100) / 2) x the previous CPU's load, or when its load
 * is at most the previous CPU's and their sum at most its load per thread
 * (the tl_per_task clause, removed in 3.18).  The winner is the target;
 * select_idle_sibling() then takes the target if idle, else the previous
 * CPU if idle and sharing the target's LLC, else, from the LLC domain down,
 * the first group after the target's (CPU order, wrapping) whose CPUs are
 * all idle, else the target.  wake_wide() never applies: a netperf
 * thread wakes nobody.  imbalance_pct: 110 below the LLC (SMT), 117 the
 * LLC, 125 above it (sd_init()).
 *
 * Newly-idle balancing (idle_balance(), load_balance(CPU_NEWLY_IDLE)).
 * When a CPU's thread sleeps and nothing waits there: if its avg_idle is
 * at least sysctl_sched_migration_cost (0.5 ms), its domains lowest first,
 * stopping where avg_idle < the cost spent + the level's; in each, the CPU
 * of highest load among those with a thread waiting, and from it the
 * longest-waiting thread that is cache-cold (last ran 0.5 ms or more ago:
 * task_hot()); one pulled, then stop.  avg_idle starts at 1 ms and, when a
 * thread wakes on a CPU that went idle, moves an eighth toward the idle
 * time, capped at 1 ms (ttwu_do_wakeup(), update_avg()).
 *
 * Costs (the table's): the placement reads a `line` for each CPU whose
 * load or idleness it looks at, on the waker; the balance a `line` for each
 * CPU of each domain walked (update_sg_lb_stats() reads each run queue),
 * and for a pull a `handoff` (the busiest queue's lock) and a `line` (the
 * thread's entity), on the puller.  Not modelled: periodic and NOHZ idle
 * balancing, the groups' capacities and the imbalance's amount, wake-up
 * preemption, a moved thread's cold cache.
 *
 * Calls down into model.c only (mdl_work()); model_seed000.c calls it.
 *
 * Threads: the main thread only (model.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_sched.h"

#define PELT_HALF_NS (32.0 * 1024 * 1024) /* 32 periods of 1,024 us (ns >> 10) */
#define LOAD_SCALE 1024.0                 /* NICE_0_LOAD */

/* The runnable average of @t brought to now. */
static void avg_to(struct mdl_sched *s, struct mdl_task *t)
{
	uint64_t now = s->m->now;
	if (now <= t->avg_t)
		return;
	double d = exp2(-(double)(now - t->avg_t) / PELT_HALF_NS);
	t->avg = t->avg * d + (t->state != MDL_T_SLEEP ? 1 - d : 0);
	t->avg_t = now;
}

unsigned mdl_sched_nr(const struct mdl_sched *s, unsigned cpu)
{
	const struct mdl_rq *rq = &s->rq[cpu];
	return rq->nq + (rq->curr != MDL_SCHED_NONE);
}

double mdl_sched_load(struct mdl_sched *s, unsigned cpu)
{
	struct mdl_rq *rq = &s->rq[cpu];
	double l = 0;
	if (rq->curr != MDL_SCHED_NONE) {
		avg_to(s, &s->t[rq->curr]);
		l += s->t[rq->curr].avg;
	}
	for (uint32_t i = rq->head; i != MDL_SCHED_NONE; i = s->t[i].next) {
		avg_to(s, &s->t[i]);
		l += s->t[i].avg;
	}
	return l * LOAD_SCALE;
}

static int idle(const struct mdl_sched *s, unsigned cpu)
{
	return mdl_sched_nr(s, cpu) == 0;
}

/* The first CPU of @cpu's domain at level @l. */
static unsigned dom_base(const struct mdl_sched *s, unsigned l, unsigned cpu)
{
	return cpu - cpu % s->span[l];
}

static unsigned imbalance_pct(const struct mdl_sched *s, unsigned l)
{
	return s->span[l] < s->llc ? 110 : s->span[l] == s->llc ? 117 : 125;
}

static void charge_lines(struct mdl_sched *s, unsigned cpu, unsigned n)
{
	if (n)
		mdl_work(s->m, cpu, n * s->m->cost->ns[MC_LINE], s->cat);
}

int mdl_sched_init(struct mdl_sched *s, struct mdl *m, const struct mdl_topo *topo, unsigned llc,
		   unsigned ntasks, int balance, unsigned cat)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	s->ncpus = m->ncpus;
	s->ntasks = ntasks;
	s->balance = balance;
	s->cat = cat;
	for (unsigned l = 0; topo && l < topo->levels && l < PW_TOPO_MAX_LEVELS; l++)
		if (topo->span[l] > 1 && topo->span[l] < m->ncpus)
			s->span[s->nlev++] = topo->span[l];
	s->span[s->nlev++] = m->ncpus;
	s->llc = llc && llc <= m->ncpus ? llc : m->ncpus;
	s->t = calloc(ntasks ? ntasks : 1, sizeof(*s->t));
	s->rq = calloc(m->ncpus, sizeof(*s->rq));
	if (!s->t || !s->rq) {
		mdl_sched_fini(s);
		return -ENOMEM;
	}
	for (unsigned c = 0; c < m->ncpus; c++) {
		struct mdl_rq *rq = &s->rq[c];
		rq->curr = rq->head = rq->tail = MDL_SCHED_NONE;
		rq->avg_idle = 2.0 * MDL_SCHED_MIGRATION_NS;
	}
	for (unsigned i = 0; i < ntasks; i++)
		s->t[i].next = MDL_SCHED_NONE;
	return 0;
}

void mdl_sched_fini(struct mdl_sched *s)
{
	free(s->t);
	free(s->rq);
	s->t = NULL;
	s->rq = NULL;
}

void mdl_sched_place(struct mdl_sched *s, unsigned ti, unsigned cpu)
{
	s->t[ti].cpu = cpu;
	s->t[ti].state = MDL_T_SLEEP;
}

/* select_idle_sibling(p, @target) for a thread last on @prev; @reads
 * counts the CPUs looked at. */
static unsigned idle_sibling(struct mdl_sched *s, unsigned prev, unsigned target, unsigned *reads)
{
	(*reads)++;
	if (idle(s, target))
		return target;
	if (prev != target && target - target % s->llc == prev - prev % s->llc) {
		(*reads)++;
		if (idle(s, prev))
			return prev;
	}
	/* the LLC domain and those below it, highest first */
	for (int l = (int)s->nlev - 1; l >= 0; l--) {
		if (s->span[l] > s->llc)
			continue;
		unsigned g = l ? s->span[l - 1] : 1; /* a group: the level below's span */
		unsigned base = dom_base(s, (unsigned)l, target), ng = s->span[l] / g;
		unsigned own = (target - base) / g;
		for (unsigned k = 0; k < ng; k++) {
			unsigned first = base + ((own + k) % ng) * g, c = first, ok = 1;
			for (; c < first + g && ok; c++) {
				(*reads)++;
				ok = c != target && idle(s, c);
			}
			if (ok)
				return first;
		}
	}
	return target;
}

/* select_task_rq_fair(): the CPU thread @t wakes on, from @waker. */
static unsigned select_rq(struct mdl_sched *s, struct mdl_task *t, unsigned waker)
{
	unsigned prev = t->cpu, target = prev, reads = 0;
	if (waker != prev) {
		unsigned l = 0;
		while (l + 1 < s->nlev && dom_base(s, l, waker) != dom_base(s, l, prev))
			l++;
		double this_load = mdl_sched_load(s, waker), load = mdl_sched_load(s, prev);
		reads += 2;
		int affine = 1;
		if (this_load > 0) {
			double imb = 100 + (imbalance_pct(s, l) - 100) / 2; /* integer, as the kernel's */
			unsigned nr = mdl_sched_nr(s, waker);
			double per_task = nr ? this_load / nr : 0;
			affine = 100 * (this_load + LOAD_SCALE) <= imb * load ||
				 (this_load <= load && this_load + load <= per_task);
		}
		if (affine) {
			target = waker;
			if (mdl_in_window(s->m))
				s->affine++;
		}
	}
	unsigned cpu = idle_sibling(s, prev, target, &reads);
	charge_lines(s, waker, reads);
	return cpu;
}

unsigned mdl_sched_wake(struct mdl_sched *s, unsigned ti, unsigned waker, int *run)
{
	struct mdl *m = s->m;
	struct mdl_task *t = &s->t[ti];
	avg_to(s, t);
	unsigned cpu = s->balance ? select_rq(s, t, waker) : t->cpu;
	if (mdl_in_window(m)) {
		s->wakes++;
		s->moved += cpu != t->cpu;
	}
	struct mdl_rq *rq = &s->rq[cpu];
	if (rq->idle_stamp) {
		double delta = (double)(m->now - rq->idle_stamp), max = 2.0 * MDL_SCHED_MIGRATION_NS;
		rq->avg_idle += (delta - rq->avg_idle) / 8;
		if (rq->avg_idle > max)
			rq->avg_idle = max;
		rq->idle_stamp = 0;
	}
	t->cpu = cpu;
	t->next = MDL_SCHED_NONE;
	if (rq->curr == MDL_SCHED_NONE) {
		t->state = MDL_T_RUNNING;
		rq->curr = ti;
		*run = 1;
	} else {
		t->state = MDL_T_QUEUED;
		if (rq->tail == MDL_SCHED_NONE)
			rq->head = ti;
		else
			s->t[rq->tail].next = ti;
		rq->tail = ti;
		rq->nq++;
		*run = 0;
	}
	return cpu;
}

/* Take the first waiting thread of @cpu that may move (@cold: last ran
 * long enough ago), or any first one; MDL_SCHED_NONE if none. */
static uint32_t dequeue(struct mdl_sched *s, unsigned cpu, int cold)
{
	struct mdl_rq *rq = &s->rq[cpu];
	uint32_t prev = MDL_SCHED_NONE;
	for (uint32_t i = rq->head; i != MDL_SCHED_NONE; prev = i, i = s->t[i].next) {
		if (cold && s->m->now - s->t[i].last_ran < MDL_SCHED_MIGRATION_NS)
			continue;
		if (prev == MDL_SCHED_NONE)
			rq->head = s->t[i].next;
		else
			s->t[prev].next = s->t[i].next;
		if (rq->tail == i)
			rq->tail = prev;
		rq->nq--;
		s->t[i].next = MDL_SCHED_NONE;
		return i;
	}
	return MDL_SCHED_NONE;
}

/* idle_balance(@cpu): a thread pulled to it, or MDL_SCHED_NONE. */
static uint32_t idle_balance(struct mdl_sched *s, unsigned cpu)
{
	struct mdl *m = s->m;
	struct mdl_rq *rq = &s->rq[cpu];
	rq->idle_stamp = m->now;
	if (rq->avg_idle < MDL_SCHED_MIGRATION_NS)
		return MDL_SCHED_NONE;
	if (mdl_in_window(m))
		s->newidle++;
	double spent = 0;
	for (unsigned l = 0; l < s->nlev; l++) {
		double cost = s->span[l] * m->cost->ns[MC_LINE];
		if (rq->avg_idle < spent + cost)
			break;
		charge_lines(s, cpu, s->span[l]);
		spent += cost;
		unsigned base = dom_base(s, l, cpu), best = cpu;
		double best_load = -1;
		for (unsigned c = base; c < base + s->span[l]; c++) {
			if (c == cpu || !s->rq[c].nq)
				continue;
			double load = mdl_sched_load(s, c);
			if (load > best_load) {
				best_load = load;
				best = c;
			}
		}
		if (best == cpu)
			continue;
		uint32_t ti = dequeue(s, best, 1);
		if (ti == MDL_SCHED_NONE)
			continue;
		mdl_work(m, cpu, m->cost->ns[MC_HANDOFF] + m->cost->ns[MC_LINE], s->cat);
		if (mdl_in_window(m)) {
			s->pulls++;
			s->pulls_far += best - best % s->llc != cpu - cpu % s->llc;
		}
		avg_to(s, &s->t[ti]);
		s->t[ti].cpu = cpu;
		rq->idle_stamp = 0;
		return ti;
	}
	return MDL_SCHED_NONE;
}

uint32_t mdl_sched_sleep(struct mdl_sched *s, unsigned cpu)
{
	struct mdl_rq *rq = &s->rq[cpu];
	if (rq->curr != MDL_SCHED_NONE) {
		struct mdl_task *t = &s->t[rq->curr];
		avg_to(s, t);
		t->state = MDL_T_SLEEP;
		t->last_ran = s->m->now;
		rq->curr = MDL_SCHED_NONE;
	}
	uint32_t next = dequeue(s, cpu, 0);
	if (next == MDL_SCHED_NONE && s->balance)
		next = idle_balance(s, cpu);
	if (next != MDL_SCHED_NONE) {
		s->t[next].state = MDL_T_RUNNING;
		rq->curr = next;
	}
	return next;
}
