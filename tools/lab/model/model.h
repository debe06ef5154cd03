/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's model: a deterministic discrete-event run of each seed on
 * the simulated clock (PW_CLOCK_SIM), the library making every timer
 * decision.  model.c is the engine (its head is the design essay: what is
 * modelled, the invariants), model_costs.c the cost table, model_row.c a
 * row's shape and the results' helpers; model_seed000.c (its claims in
 * model_seed000_claims.c, its threads' scheduler model_sched.c),
 * model_seed001.c and model_seed003.c (its transmit path in
 * model_seed003_tx.c) are the seeds; pinwheel-lab.c's
 * `model` subcommand and lab.h's lab_model_*() are the way in.
 *
 * Threads: the main thread only, everywhere in the model (no worker
 * threads, no wall clock read).
 */
#ifndef PW_LAB_MODEL_H
#define PW_LAB_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "../lab.h"

/* ------------------------------------------------------------ the costs */

/* What one event costs a CPU, in ns (model_costs.c's table says from where). */
enum mdl_cost_id {
	MC_IRQ,        /* a device or timer interrupt: entry, EOI, exit, softirq entry */
	MC_IPI_SEND,   /* sending a reschedule/call-function IPI */
	MC_IPI_RECV,   /* taking one: interrupt entry/exit + scheduler_ipi */
	MC_LINE,       /* one cache line moved between cores of a socket */
	MC_LINE_NUMA,  /* one cache line moved between nodes of a ccNUMA machine */
	MC_HANDOFF,    /* a lock passed between CPUs: its line and the data's */
	MC_QDISC,      /* one qdisc enqueue or dequeue (netem, fq) */
	MC_TIMER_ARM,  /* mod_timer that detaches and enqueues (base lock held) */
	MC_TIMER_FAST, /* mod_timer's fast path: pending, same expiry */
	MC_HR_OP,      /* hrtimer start/cancel (base lock held) */
	MC_HR_RUN,     /* the hrtimer interrupt's work per expired timer */
	MC_TICK,       /* the scheduler tick's work (beyond the interrupt) */
	MC_WAKE,       /* try_to_wake_up + the context switches it causes */
	MC_SYSCALL,    /* a send/recv system call's fixed part */
	MC_COPY_KB,    /* copying 1 KiB between user and kernel */
	MC_TCP_ACK,    /* tcp_ack() on one ACK: clean the RTX queue, free skbs */
	MC_TCP_XMIT,   /* tcp_write_xmit -> ip -> dev_queue_xmit, one skb (no qdisc) */
	MC_TCP_RCV,    /* one data segment up the stack: ip, tcp_v4_rcv, queue */
	MC_DRV_RX,     /* driver RX work per packet (descriptor, skb, GRO) */
	MC_DRV_TX,     /* driver xmit per packet (descriptor, doorbell) */
	MC_TX_CLEAN,   /* TX completion per packet (unmap, free, TSQ check) */
	MC_CLOCK_MMIO, /* a clock read through an uncached device register */
	MC_MEM,        /* a load that misses every cache (DRAM) */
	MC_N
};

struct mdl_cost_def {
	const char *key;    /* JSON and --costs name */
	double ns;          /* the default */
	const char *what;
	const char *source; /* where the figure comes from */
};
extern const struct mdl_cost_def mdl_cost_table[MC_N];

/* The costs a run uses (ns): the table, scaled by --costs measured for the
 * entries the lab can measure here, or by a sweep factor. */
struct mdl_costs {
	double ns[MC_N];
	const char *name; /* "table", "measured", "x0.5 (irq, ipi, line)" */
};
void mdl_costs_default(struct mdl_costs *c);
/* Measure what can be measured on this machine (a futex wake round trip,
 * a cache-line ping-pong between two threads): the only wall-clock reads
 * of the model, made only for --costs measured.  Fills @out (ns, 0: not
 * measured) and returns 0 or -errno.  Main thread; starts and joins one
 * helper thread. */
int mdl_costs_measure(double out[MC_N]);

/* ------------------------------------------------------------ interrupts */

enum mdl_irq {
	MI_RX,  /* NIC receive, per queue vector, after coalescing */
	MI_TX,  /* NIC transmit completion, per queue vector */
	MI_LOC, /* local timer: the tick of a busy CPU, the next event of an idle one */
	MI_RES, /* reschedule IPI (timer kicks by the era's rule, wake-ups) */
	MI_CAL, /* function-call IPI */
	MI_N
};
extern const char *const mdl_irq_name[MI_N];

/* ------------------------------------------------------------ the engine */

/* Where a CPU's time went, for the profile and the shares. */
#define MDL_MAX_CAT 16

struct mdl;

/* A simulated lock: holds occupy simulated time; a CPU that wants it while
 * it is held waits (spins) until it is free.  Holds are kept as a calendar
 * of intervals, so a CPU whose work lags (charged later in simulated time
 * than the event that caused it) neither blocks nor is blocked by requests
 * from the past. */
struct mdl_lock {
	const char *name;
	uint64_t *s, *e;  /* granted intervals [s, e), sorted by s */
	int *who;
	unsigned n, cap;
	int last_who;     /* the holder of the last interval dropped, -1 none */
	int handoff_spin; /* the hand-off is charged as spinning (perf's
			   * _raw_spin_lock counts the stall on the lock's line) */
	int ticket;       /* a ticket lock (x86 before 4.2): each CPU spinning adds
			   * half a hand-off to every hand-off meanwhile (model.c) */
	/* in the measured window */
	uint64_t acq, contended, wait_ns, hold_ns, handoff_ns;
};

struct mdl_cpu {
	uint64_t free_at;        /* the end of the work charged so far */
	uint64_t charged_ns;     /* all work charged to it, spins included, since the start
				  * (not only the window): what landed on it between two
				  * looks is the difference */
	uint64_t cat_ns[MDL_MAX_CAT]; /* charged, by category, in the window */
	uint64_t spin_ns;        /* of which spinning on locks */
	uint64_t irq[MI_N];      /* interrupts taken, in the window */
	uint64_t max_lag_ns;     /* worst free_at - now seen */
	uint64_t task_until;     /* a task runs on it until then (0: none) */
	int busy;                /* marked busy in the library (task or ksoftirqd) */
	int ksoftirqd;           /* its softirq work was deferred to ksoftirqd */
	int tick_on;
	struct pw_hrtimer tick;  /* the scheduler tick, while busy (pinned) */
	struct mdl *m;
	unsigned id;
	uint64_t tick_runs;
};

struct mdl_ev {
	uint64_t t, seq;
	uint32_t type, a;
	uint64_t b;
};

typedef void (*mdl_dispatch_fn)(struct mdl *m, const struct mdl_ev *ev);

struct mdl {
	struct pw_runtime *rt;
	unsigned ncpus, hz;
	uint64_t now;            /* the simulated clock (pw_now_ns()) */
	uint64_t t_measure;      /* the window starts here (after warm-up) */
	uint64_t t_end;
	const struct mdl_costs *cost;
	uint64_t rng;            /* the model's PRNG (splitmix64) */
	struct mdl_cpu *cpu;
	/* the event queue: a binary heap on (t, seq) */
	struct mdl_ev *heap;
	unsigned nev, evcap;
	uint64_t seq;
	mdl_dispatch_fn dispatch;
	void *ctx;               /* the seed's state */
	int acting;              /* the CPU the main thread is entered as, -1 none */
	unsigned ncat;
	const char *cat_name[MDL_MAX_CAT];
	unsigned cat_irq;        /* the category interrupt entry/exit goes to */
	unsigned cat_tick;
	unsigned cat_ipi;
	/* counters in the window */
	uint64_t iterations, timer_steps;
	uint64_t res_sched;      /* reschedule IPIs of task wake-ups (not timers) */
	uint64_t busy_marks;     /* idle -> busy transitions */
	int ksoftirqd_on;        /* model softirq deferral to ksoftirqd */
	uint64_t ksoftirqd_ns;   /* lag beyond which it kicks in (MAX_SOFTIRQ_TIME) */
	/* library counters at the window's start (pw_stats_read, kick stats) */
	struct pw_cpu_stats *st0;
	struct pw_kick_stats *ks0;
	uint64_t *nx;            /* each CPU's next event, read every step */
	/* invariants */
	unsigned nchecks, nfailed;
	char failure[400];
};

/* Create the engine and its runtime: @ncpus CPUs at @hz, simulated clock
 * starting at 0, measuring from @warm_ns to @warm_ns + @run_ns.  Every CPU
 * starts idle.  Context: main thread.  Return: 0 or -errno. */
int mdl_init(struct mdl *m, unsigned ncpus, unsigned hz, uint64_t seed, const struct mdl_costs *c,
	     uint64_t warm_ns, uint64_t run_ns, mdl_dispatch_fn fn, void *ctx);
/* The scheduling domains the library's PUSH walks (pw_config.topo_span[]):
 * @levels 0 is one flat domain. */
struct mdl_topo {
	unsigned levels;
	unsigned span[PW_TOPO_MAX_LEVELS];
};
/* mdl_init() on a machine of @topo's domains (NULL: one flat domain).
 * Context: main thread.  Return: 0; -EINVAL (a topology that does not nest,
 * pw_runtime_create()); -ENOMEM. */
int mdl_init_topo(struct mdl *m, const struct mdl_topo *topo, unsigned ncpus, unsigned hz,
		  uint64_t seed, const struct mdl_costs *c, uint64_t warm_ns, uint64_t run_ns,
		  mdl_dispatch_fn fn, void *ctx);
/* Tear down (the runtime, the queue, the CPUs).  Context: main thread. */
void mdl_fini(struct mdl *m);

/* Name the categories of CPU time (the profile's functions): the index of
 * @name, added if new.  Context: main thread, before the run. */
unsigned mdl_cat(struct mdl *m, const char *name);

/* The PRNG (splitmix64, seeded from --seed): 64 random bits; uniform in
 * [0, n).  Context: main thread. */
uint64_t mdl_rand(struct mdl *m);
uint64_t mdl_rand_below(struct mdl *m, uint64_t n);

/* Schedule event @type at time @t (an earlier @t means now).  Context: main
 * thread, a library callback included. */
void mdl_at(struct mdl *m, uint64_t t, uint32_t type, uint32_t a, uint64_t b);

/* Run events and timers in time order until t_end.  Context: main thread,
 * not from a callback.  Return: 0; -EFAULT when an invariant broke (the
 * message in failure). */
int mdl_run(struct mdl *m);

/* Act as CPU @c for library calls (pw_cpu_enter); -1 to act as none.
 * Context: main thread, never inside a library callback (the thread acts
 * as the callback's CPU there). */
void mdl_act(struct mdl *m, int c);

/* Inside a library callback (pw_sim_advance() acting as a CPU)? */
static inline int mdl_in_callback(const struct mdl *m)
{
	return m->acting < 0 && pw_this_cpu() >= 0;
}

/* In the measured window? */
static inline int mdl_in_window(const struct mdl *m)
{
	return m->now >= m->t_measure;
}

/* Charge @ns of work in category @cat on CPU @c, after its earlier work
 * (from max(now, free_at)).  Context: main thread, callbacks included.
 * Return: the time it ends. */
uint64_t mdl_work(struct mdl *m, unsigned c, double ns, unsigned cat);
/* Take lock @l on CPU @c for @hold_ns (plus a hand-off when another CPU
 * held it last): the CPU waits (spins, charged to @spin_cat) while it is
 * held.  Context: main thread, callbacks included.  Return: the time the
 * hold ends. */
uint64_t mdl_locked(struct mdl *m, unsigned c, struct mdl_lock *l, double hold_ns, unsigned cat,
		    unsigned spin_cat);
/* Take @outer, then @inner while holding it, on CPU @c: @inner for
 * @hold_ns (plus its hand-off), @outer held from its acquisition until
 * @inner is released (3.17's qdisc busylock around the root lock).  The
 * waits on both are charged to @spin_cat.  Context: main thread,
 * callbacks included.  Return: the time both are released. */
uint64_t mdl_locked_nested(struct mdl *m, unsigned c, struct mdl_lock *outer,
			   struct mdl_lock *inner, double hold_ns, unsigned cat, unsigned spin_cat);
/* Is @l held at time @t (spin_trylock() would fail)?  Context: main
 * thread.  Return: 1 or 0. */
int mdl_lock_held_at(const struct mdl_lock *l, uint64_t t);
/* Count one interrupt of @kind on CPU @c and charge its entry/exit.
 * Context: main thread, callbacks included. */
void mdl_irq(struct mdl *m, unsigned c, enum mdl_irq kind);
/* A task wake-up of a thread whose CPU is @to, from CPU @from: the waker's
 * cost, and a reschedule IPI when @to runs another task (an idle CPU
 * polls in mwait and needs none).  Context: main thread. */
void mdl_wake(struct mdl *m, unsigned from, unsigned to);

/* Mark CPU @c busy (a task runs on it) until @until, or idle; starts and
 * stops its tick (a pinned hrtimer at every jiffy while busy).  Context:
 * main thread; from a callback the mark waits for the loop's next step. */
void mdl_task_run(struct mdl *m, unsigned c, uint64_t until);
/* Re-evaluate CPU @c's busy mark now (its task ended, its ksoftirqd
 * state changed).  Context: main thread, not from a callback. */
void mdl_cpu_update(struct mdl *m, unsigned c);

/*
 * A NIC queue's interrupt vector with coalescing (ethtool's usecs/frames):
 * items (packets, completions) arrive at times; the first after the
 * vector was re-enabled starts the usecs timer, and the interrupt fires
 * then, or when the frames-th item arrives if earlier.  The interrupt
 * runs a NAPI poll on the vector's CPU: the seed takes every item due
 * (mdl_vec_next()), charging their work; items that arrive before the
 * poll's work ends are taken by a repoll without a new interrupt (NAPI
 * keeps polling), the rest wait for the next interrupt.  Context (all the
 * mdl_vec_*()): main thread, callbacks included (push).
 */
struct mdl_item {
	uint64_t t;
	uint32_t a, b;
};
struct mdl_vec {
	unsigned id, cpu;
	enum mdl_irq kind;
	uint32_t ev;          /* the seed's event type for this vector's IRQs/polls */
	uint64_t usecs_ns;
	unsigned frames;
	struct mdl_item *ring;
	unsigned head, n, cap;
	int state;            /* 0 idle, 1 interrupt armed, 2 polling */
	uint64_t irq_t, gen;
	uint64_t items;       /* taken, in all */
};
void mdl_vec_init(struct mdl_vec *v, unsigned id, unsigned cpu, enum mdl_irq kind, uint32_t ev,
		  uint64_t usecs_ns, unsigned frames);
void mdl_vec_fini(struct mdl_vec *v);
/* Queue an item arriving at @t (not earlier than the last one queued). */
void mdl_vec_push(struct mdl *m, struct mdl_vec *v, uint64_t t, uint32_t a, uint32_t b);
/* At the vector's event (@ev.b: 0 a repoll, else the interrupt's
 * generation): 1 when it is to be handled (the interrupt counted and
 * charged), 0 when stale. */
int mdl_vec_begin(struct mdl *m, struct mdl_vec *v, const struct mdl_ev *ev);
/* The next item due now, up to the NAPI budget.  Return 1 with @out, or 0. */
int mdl_vec_next(struct mdl *m, struct mdl_vec *v, struct mdl_item *out);
/* After the poll's work was charged: repoll, re-arm or go idle. */
void mdl_vec_end(struct mdl *m, struct mdl_vec *v);
/* Items queued, not yet taken. */
static inline unsigned mdl_vec_pending(const struct mdl_vec *v)
{
	return v->n;
}

/* The library's counters of CPU @c over the measured window.  Context:
 * main thread, after mdl_run(). */
void mdl_stats_window(struct mdl *m, unsigned c, struct pw_cpu_stats *st, struct pw_kick_stats *ks);

/* An unheld lock named @name; free its calendar.  Context: main thread. */
void mdl_lock_init(struct mdl_lock *l, const char *name);
void mdl_lock_fini(struct mdl_lock *l);
/* @n unheld locks named @name (a timer base per CPU, a root lock per
 * queue), and their release (NULL is nothing).  Context: main thread.
 * Return: the array, or NULL when out of memory. */
struct mdl_lock *mdl_locks_new(unsigned n, const char *name);
void mdl_locks_free(struct mdl_lock *l, unsigned n);

/* An invariant: counted; a failure is kept (the first message) and stops
 * the run at its next step.  Context: main thread, callbacks included.
 * Return: @ok. */
int mdl_check(struct mdl *m, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A tc command on the model's runtime (pw_tc()), which must succeed: an
 * invariant (mdl_check()) whose message names @who, the command and tc's
 * message.  Context: main thread.  Return: pw_tc()'s. */
int mdl_tc(struct mdl *m, const char *who, const char *cmd);

/* ------------------------------------------------------------ results */

#define MDL_MAX_ROWS 96
#define MDL_MAX_VALS 80
#define MDL_MAX_CLAIMS 4

/* One configuration's numbers: name/value pairs in print order. */
struct mdl_row {
	char config[40];      /* "off", "push-3.17", ... */
	char label[80];       /* the row's one-line description */
	unsigned cpus, hz;
	char cost_name[32];
	unsigned n;
	const char *key[MDL_MAX_VALS];
	double val[MDL_MAX_VALS];
	const char *fmt[MDL_MAX_VALS]; /* printf format for the text table */
	char profile[640];    /* seed001: a readprofile-like top list */
};

/* One seed's model section. */
struct mdl_seed {
	const char *id;       /* "seed000" */
	char title[160];
	char scale[600];      /* the sizes, the seed's beside */
	unsigned nrows;
	struct mdl_row row[MDL_MAX_ROWS];
	unsigned ncols;       /* the text table's columns: keys of the rows */
	const char *col[16];
	const char *col_head[16];
	struct lab_claims claims;
	unsigned nnotes;
	char notes[8][700];
	unsigned nchecks, nfailed;
	char failure[400];
	double runtime_sim_s; /* simulated seconds, all rows */
};

/* What every seed's row reads off the engine and the library over the
 * measured window (mdl_totals()). */
struct mdl_totals {
	double secs;             /* the window */
	uint64_t irq[MI_N];      /* the model's interrupts by kind, all CPUs */
	uint64_t work_ns, spin_ns; /* charged work (with the kicks below), of it spinning */
	uint64_t max_lag_ns;     /* the worst lag of any CPU */
	double busiest_load;     /* the busiest CPU's work / the window */
	uint64_t remote_arms, pushed;  /* the library's, in the window */
	uint64_t kick[5];        /* remote_enqueue, idle_earlier, hrtimer, work, tmigr */
	uint64_t remote_total, rekick_total; /* remote arms and remote_enqueue kicks, whole run */
	uint64_t res_timer, cal; /* the kicks as interrupts: RES, CAL */
	uint64_t res, in;        /* RES in all (wake-ups and kicks); vmstat's in */
};
/* Sum the window's figures of a finished run into @t.  The kicks not
 * charged where they were sent (@kicks_seen were: the seeds charge an arm's
 * IPI on both CPUs) are added to the work at ipi_send + ipi_recv each.
 * Context: main thread, after mdl_run(). */
void mdl_totals(struct mdl *m, uint64_t kicks_seen, struct mdl_totals *t);
/* The figures every seed with a NIC reports, from @t: in and its kinds per
 * second and as counts, sys and spin shares, the kicks, the lag. */
void mdl_row_common(struct mdl_row *row, const struct mdl_totals *t, const struct mdl *m);
/* Close a row: its configuration, label, size and costs from @m; the
 * simulated time and @m's invariants into @sd.  Context: main thread. */
void mdl_row_finish(struct mdl_seed *sd, struct mdl_row *row, const struct mdl *m,
		    const char *config, const char *label);
/* The cost sweep (--full): MDL_SWEEP_N tables, @base with irq, the IPIs,
 * line and hand-off scaled (x0.5, x2: "x0.5", "x2"), and as many with
 * the task's costs, wake, syscall and copy_kb, scaled ("task x0.5",
 * "task x2"): table @i of set @set (0 the first, 1 the task's). */
#define MDL_SWEEP_N 2
void mdl_cost_sweep(const struct mdl_costs *base, unsigned set, unsigned i,
		    struct mdl_costs *out);

/* The results' helpers.  Context (all): main thread. */
void mdl_row_set(struct mdl_row *r, const char *key, double v, const char *fmt);
double mdl_row_get(const struct mdl_row *r, const char *key);
/* The row of @config at @cpus/@hz (0: any), or NULL. */
const struct mdl_row *mdl_find(const struct mdl_seed *s, const char *config, unsigned cpus,
			       unsigned hz);
/* Figure @key of row @a over row @b (both at @cpus/@hz); NAN if a row is
 * missing or the divisor is not positive. */
double mdl_ratio(const struct mdl_seed *s, const char *a, const char *b, unsigned cpus,
		 unsigned hz, const char *key);
void mdl_note(struct mdl_seed *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copy a finished run's invariants into the seed's. */
void mdl_seed_checks(struct mdl_seed *s, const struct mdl *m);

/* What a model run is asked to do (from the command line). */
struct mdl_opts {
	unsigned cpus;        /* 0: the seed's defaults (swept with --full) */
	unsigned hz;          /* 0: the seed's defaults */
	uint64_t seed;
	int smoke;            /* tiny sizes */
	int full;             /* the sweeps (CPUs, HZ, costs) */
	struct mdl_costs costs;
	int costs_measured;   /* print the measured column */
	double measured[MC_N];
};

/* Run a seed's rows, fill @s (rows, claims, notes, checks).  Context: main
 * thread.  Return: 0 (a broken invariant is in @s's checks); -errno. */
int mdl_seed000(const struct mdl_opts *o, struct mdl_seed *s);
int mdl_seed001(const struct mdl_opts *o, struct mdl_seed *s);
int mdl_seed003(const struct mdl_opts *o, struct mdl_seed *s);

/* Fill each claim's model-only verdict where none is set. */
void mdl_claims_finish(struct lab_claims *cl);

/* Print a seed's model section (the claims table first) as text, or its
 * JSON object (no trailing newline).  Deterministic: the same input gives
 * the same bytes. */
void mdl_print_text(FILE *f, const struct mdl_seed *s, int with_claims);
void mdl_print_json(FILE *f, const struct mdl_seed *s);
/* The cost table with sources (and the measured column, when measured). */
void mdl_print_costs(FILE *f, const struct mdl_opts *o, int json);

#endif /* PW_LAB_MODEL_H */
