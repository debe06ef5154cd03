/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab seed000: paced flows and timer migration.
 *
 * The seed: 500 TCP flows, each paced at 3,000,000 B/s through fq; with
 * /proc/sys/kernel/timer_migration = 1 the sockets' timers (armed with
 * mod_timer() from sk_reset_timer()) were pushed between CPUs, and vmstat
 * showed ~1.5M interrupts/s and 15% sys; pinned (mod_timer_pinned), ~1.16M
 * and 12%.  Here, on one runtime with workers (one per CPU):
 *
 *   eth0  the data path: an mq device with one TX queue per CPU (XPS: CPU i
 *         -> queue i), fq on each queue;
 *   ack0  the way back: mq, one queue per CPU, a netem delay line of
 *         --rtt ms on each; what eth0 "puts on the wire" (its xmit) comes
 *         back through ack0 as the flow's ACK.
 *
 * F sockets (pw_sock, sk_pacing_rate = R), socket i owned by CPU i % n: its
 * "application" is that CPU's poll hook, which sends while the socket has
 * free packets (a window of W packets, enough for R x RTT so that fq's
 * pacing, not the window, sets the rate).  An ACK arrives in ack0's xmit,
 * on whichever CPU ran that queue (the softirq of the kernel's receive
 * path): as tcp_ack() does, it re-arms the socket's retransmit timer
 * (pw_sk_reset_timer to now + RTO) and its delayed-ACK timer (now + 40 ms),
 * returns the packet to the socket's window and hands the socket to its
 * owner's ready list (waking that worker with a work item if it sleeps).
 * A CPU is busy, for the migration policies, while its poll hook sends;
 * idle when its ready list runs dry (the kernel's idle CPU taking an
 * interrupt).  An ACK processed on an idle CPU under PUSH therefore pushes
 * the socket's timers to a busy CPU: the seed's "on".
 *
 * Configurations (a fresh runtime each; struct cfgdef below): "on", the
 * seed's timer_migration=1 on 3.17, where nothing was pinned, the fq and
 * netem watchdogs included; "off", its timer_migration=0 (the OFF
 * policy); "fix", the patch it proposed (socket timers pinned) with the
 * watchdogs pinned as since 3.18; PULL, 6.9's hierarchy with today's
 * pinning; with --trend, "on" and "off" on 4x the CPUs.  Measured as vmstat
 * does, every --interval: in (the workers' wake-ups + kicks per second),
 * cs (the process's context switches), us/sy/id of the process against the
 * machine's CPUs (getrusage); and the runtime's pushed/remote-arm counts,
 * the goodput and each flow's achieved rate.
 *
 * Runs and claims: each configuration runs R times (--runs, 5), round by
 * round (on, off, fix, PULL, on, ...), --seconds / R each after a 150 ms
 * warm-up, a fresh runtime each; common.c records the machine around each
 * run and leaves the spoiled ones out (steal, other processes' CPU), and
 * an "on" run that pushed no timer is left out as well: it measured
 * timer_migration=0 under another name.  The table gives each row's
 * medians; the claims (in/s and sys on/off, in/s on/fix and PULL/fix) the
 * ratio of the means with its bootstrap interval and verdict (verdict.c).
 *
 * Invariants checked (lab_check): every packet handed to the layer comes
 * back (window full again at the end, drops counted by reason), every
 * socket destructed exactly once after its last timer reference, the
 * configuration in force (PUSH pushed timers, pinned/PULL pushed none).
 *
 * Locking: a socket's state (its window, its timers' arms) under its own
 * spinlock, the analogue of bh_lock_sock(): ACKs of one socket may be
 * processed on two CPUs at once when its data packets changed queue.  The
 * ready lists are lock-free stacks (push from any CPU, drain by the owner).
 * Counters are atomics.  Configuration and teardown run on the main thread
 * while the workers are stopped or the senders are told to stop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "../lab.h"

#define DATA_LEN 1514u  /* an MSS of 1448 on the wire */
#define ACK_LEN 66u
#define RTO_MS 200u     /* TCP_RTO_MIN */
#define DELACK_MS 40u   /* TCP_DELACK_MAX-ish: the delayed-ACK timer */

struct flow {
	struct pw_sock sk;
	pthread_spinlock_t lock;       /* the socket lock */
	struct pw_timer rtx, delack;
	struct pw_pkt **free;          /* the window's packets not in flight */
	unsigned nfree;                /* under lock */
	unsigned owner;                /* the CPU whose poll hook sends */
	struct flow *ready_next;       /* on the owner's ready stack */
	unsigned queued;               /* atomic: on the ready stack */
	uint64_t sent_bytes;           /* atomic: bytes through eth0 */
	unsigned destructed;           /* atomic */
};

struct cpu_state {
	struct flow *ready;            /* atomic: lock-free stack head */
	struct pw_work nudge;          /* wakes the worker to poll */
	unsigned cpu;
	uint64_t polls_busy;           /* this worker only */
} __attribute__((aligned(64)));

struct s0 {
	struct pw_runtime *rt;
	struct pw_netdev *eth0, *ack0;
	unsigned ncpus, nflows, window;
	struct flow *flows;
	struct pw_pkt *pkts;
	struct cpu_state *cpus;
	int stop;                      /* atomic: senders stop */
	/* atomics */
	uint64_t data_sent, acks, drops[PW_DROP_REASON_MAX], rtx_fired, delack_fired;
	uint64_t bytes;
};

static struct s0 S;

static void flow_lock(struct flow *f)
{
	pthread_spin_lock(&f->lock);
}

static void flow_unlock(struct flow *f)
{
	pthread_spin_unlock(&f->lock);
}

/* Any CPU: put @f on its owner's ready stack, waking the owner if the stack
 * was empty (its poll hook may be asleep). */
static void flow_ready(struct flow *f)
{
	if (__atomic_exchange_n(&f->queued, 1, __ATOMIC_ACQ_REL))
		return;
	struct cpu_state *c = &S.cpus[f->owner];
	struct flow *head = __atomic_load_n(&c->ready, __ATOMIC_RELAXED);
	do
		f->ready_next = head;
	while (!__atomic_compare_exchange_n(&c->ready, &head, f, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
	if (!head)
		pw_queue_work_on(S.rt, f->owner, &c->nudge); /* -EBUSY: already queued */
}

static void nudge_fn(struct pw_work *w)
{
	(void)w; /* the poll hook that follows does the work */
}

/* Returns @p to its flow's window and lets the owner send again. */
static void flow_return(struct flow *f, struct pw_pkt *p)
{
	flow_lock(f);
	f->free[f->nfree++] = p;
	flow_unlock(f);
	flow_ready(f);
}

/* The sender: CPU @cpu's poll hook, the sockets' application. */
static int poll_send(struct pw_runtime *rt, unsigned cpu, void *arg)
{
	(void)rt, (void)arg;
	struct cpu_state *c = &S.cpus[cpu];
	struct flow *f = __atomic_exchange_n(&c->ready, NULL, __ATOMIC_ACQUIRE);
	if (!f)
		return 0;
	int stop = __atomic_load_n(&S.stop, __ATOMIC_ACQUIRE);
	int did = 0;
	while (f) {
		struct flow *next = f->ready_next;
		__atomic_store_n(&f->queued, 0, __ATOMIC_RELEASE);
		for (;;) {
			struct pw_pkt *p = NULL;
			flow_lock(f);
			if (!stop && f->nfree)
				p = f->free[--f->nfree];
			flow_unlock(f);
			if (!p)
				break;
			pw_pkt_init(p, NULL, DATA_LEN);
			p->sk = &f->sk;
			p->hash = f->sk.sk_hash;
			p->user = (uint32_t)(f - S.flows);
			pw_dev_queue_xmit(S.eth0, p); /* dropped ones come back via ops.drop */
			did++;
		}
		f = next;
	}
	c->polls_busy++;
	return did;
}

/* eth0's wire: the data packet leaves; it comes back as the flow's ACK
 * through ack0's delay line.  On the CPU running that eth0 queue. */
static int eth0_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)ctx;
	struct flow *f = &S.flows[p->user];
	__atomic_fetch_add(&f->sent_bytes, p->len, __ATOMIC_RELAXED);
	__atomic_fetch_add(&S.bytes, p->len, __ATOMIC_RELAXED);
	__atomic_fetch_add(&S.data_sent, 1, __ATOMIC_RELAXED);
	uint32_t flow = p->user;
	pw_pkt_init(p, NULL, ACK_LEN);
	p->hash = f->sk.sk_hash;
	p->user = flow;
	pw_dev_queue_xmit(S.ack0, p);
	return PW_NETDEV_TX_OK;
}

static void count_drop(struct pw_pkt *p, enum pw_drop_reason r)
{
	if ((unsigned)r < PW_DROP_REASON_MAX)
		__atomic_fetch_add(&S.drops[r], 1, __ATOMIC_RELAXED);
	flow_return(&S.flows[p->user], p);
}

static void eth0_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)ctx;
	count_drop(p, r);
}

/* The ACK arrives (the receive softirq of whichever CPU ran this ack0
 * queue): tcp_ack()'s timer work, then the window opens. */
static int ack0_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)ctx;
	struct flow *f = &S.flows[p->user];
	uint64_t j = pw_jiffies(S.rt);
	unsigned hz = pw_runtime_hz(S.rt);
	flow_lock(f);
	pw_sk_reset_timer(&f->sk, &f->rtx, j + (uint64_t)RTO_MS * hz / 1000);
	pw_sk_reset_timer(&f->sk, &f->delack, j + (uint64_t)DELACK_MS * hz / 1000);
	f->free[f->nfree++] = p;
	flow_unlock(f);
	__atomic_fetch_add(&S.acks, 1, __ATOMIC_RELAXED);
	flow_ready(f);
	return PW_NETDEV_TX_OK;
}

static void ack0_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)ctx;
	count_drop(p, r);
}

/* The timers should not fire while ACKs flow; when they do (start, end),
 * they drop the pending timer's reference, as the kernel's handlers do. */
static void rtx_fn(struct pw_timer *t)
{
	struct flow *f = pw_container_of(t, struct flow, rtx);
	__atomic_fetch_add(&S.rtx_fired, 1, __ATOMIC_RELAXED);
	pw_sock_put(&f->sk);
}

static void delack_fn(struct pw_timer *t)
{
	struct flow *f = pw_container_of(t, struct flow, delack);
	__atomic_fetch_add(&S.delack_fired, 1, __ATOMIC_RELAXED);
	pw_sock_put(&f->sk);
}

static void flow_destruct(struct pw_sock *sk)
{
	struct flow *f = pw_container_of(sk, struct flow, sk);
	__atomic_fetch_add(&f->destructed, 1, __ATOMIC_ACQ_REL);
}

static const struct pw_netdev_ops eth0_ops = {.xmit = eth0_xmit, .drop = eth0_drop};
static const struct pw_netdev_ops ack0_ops = {.xmit = ack0_xmit, .drop = ack0_drop};

/*
 * The configurations.  The seed's two vmstat runs are timer_migration=1
 * and =0 on a 3.17 kernel, where qdisc watchdogs were not pinned yet (seed
 * 003's patch came two days later): "on" leaves every timer to PUSH,
 * "off" is the OFF policy.  "fix" is the seed's proposed patch (socket
 * timers pinned) with the watchdogs pinned as every kernel since 3.18;
 * PULL is 6.9's hierarchy with today's pinning (watchdogs yes, socket
 * timers no: sk_reset_timer() still calls mod_timer()).
 */
struct cfgdef {
	const char *name, *key;
	enum pw_migration policy;
	int sk_pinned, wd_pinned, x4;
	double seed_in, seed_sy;
};
enum { CFG_ON, CFG_OFF, CFG_FIX, CFG_PULL, CFG_ON_X4, CFG_OFF_X4, NCFG };
static const struct cfgdef cfgs[NCFG] = {
	{"on: timer_migration=1, nothing pinned", "on", PW_MIGRATION_PUSH, 0, 0, 0, 1.5e6, 15},
	{"off: timer_migration=0", "off", PW_MIGRATION_OFF, 0, 0, 0, 1.16e6, 12},
	{"fix: PUSH, socket timers pinned", "fix", PW_MIGRATION_PUSH, 1, 1, 0, NAN, NAN},
	{"PULL (6.9), socket timers not pinned", "pull", PW_MIGRATION_PULL, 0, 1, 0, NAN, NAN},
	{"on, 4x CPUs (oversubscribed)", "on_x4", PW_MIGRATION_PUSH, 0, 0, 1, NAN, NAN},
	{"off, 4x CPUs (oversubscribed)", "off_x4", PW_MIGRATION_OFF, 0, 0, 1, NAN, NAN},
};

static int tc(struct lab_result *r, const char *cmd)
{
	char err[256] = "";
	int rc = pw_tc(S.rt, cmd, 0, NULL, 0, err, sizeof(err));
	if (rc)
		lab_check(r, 0, "tc %s: %s", cmd, err);
	return rc;
}

struct run_out {
	struct lab_rates avg;
	double mbit, flow_err_max, flow_rate_mean;
	double pushed, remote;
	int pushed_any;
	struct lab_run *run;           /* the run's record (r->run[row][k]) */
};

/* One run of configuration @cf, measured for @seconds after a warm-up,
 * into row @row of @r (its series from @t_off on); @what names the run on
 * the progress line.  Main thread.  Return: 0 or -errno (setup). */
static int run_config(const struct lab_opts *o, struct lab_result *r, const struct cfgdef *cf,
		      unsigned row, double seconds, double t_off, const char *what,
		      struct run_out *out)
{
	memset(&S, 0, sizeof(S));
	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = o->cpus ? o->cpus : lab_online_cpus();
	if (cf->x4)
		pc.ncpus *= 4;
	int err = pw_runtime_create(&pc, &S.rt);
	if (err)
		return err;
	S.ncpus = pw_runtime_ncpus(S.rt);
	S.nflows = o->smoke ? 8 : o->flows;
	uint64_t rate = o->smoke ? 200000 : o->rate;
	unsigned rtt = o->rtt_ms;
	/* W: twice rate x (RTT + a pacing gap), at least 4 */
	double bdp = (double)rate * (rtt + 2) / 1000.0 / DATA_LEN;
	S.window = (unsigned)ceil(2 * bdp) + 4;
	pw_set_migration(S.rt, cf->policy);
	pw_net_set_sk_timers_pinned(S.rt, cf->sk_pinned);
	pw_net_set_watchdog_pinned(S.rt, cf->wd_pinned);

	err = -ENOMEM;
	S.flows = calloc(S.nflows, sizeof(*S.flows));
	S.pkts = calloc((size_t)S.nflows * S.window, sizeof(*S.pkts));
	S.cpus = aligned_alloc(64, sizeof(*S.cpus) * S.ncpus);
	if (!S.flows || !S.pkts || !S.cpus)
		goto out;
	memset(S.cpus, 0, sizeof(*S.cpus) * S.ncpus);
	for (unsigned c = 0; c < S.ncpus; c++) {
		S.cpus[c].cpu = c;
		pw_work_init(&S.cpus[c].nudge, nudge_fn);
	}
	uint64_t rng = o->seed * 0x9E3779B97F4A7C15ull + 1;
	for (unsigned i = 0; i < S.nflows; i++) {
		struct flow *f = &S.flows[i];
		pw_sock_init(&f->sk, S.rt, flow_destruct);
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		f->sk.sk_hash = (uint32_t)(rng >> 11) | 1;
		pw_sock_set_pacing_rate(&f->sk, rate);
		pthread_spin_init(&f->lock, PTHREAD_PROCESS_PRIVATE);
		f->owner = i % S.ncpus;
		pw_sk_timer_setup(&f->sk, &f->rtx, rtx_fn);
		pw_sk_timer_setup(&f->sk, &f->delack, delack_fn);
		f->free = calloc(S.window, sizeof(*f->free));
		if (!f->free)
			goto out;
		for (unsigned k = 0; k < S.window; k++)
			f->free[f->nfree++] = &S.pkts[(size_t)i * S.window + k];
	}
	unsigned nq = S.ncpus;
	if ((err = pw_netdev_create(S.rt, "eth0", nq < 2 ? 2 : nq, &eth0_ops, NULL, &S.eth0)) ||
	    (err = pw_netdev_create(S.rt, "ack0", nq < 2 ? 2 : nq, &ack0_ops, NULL, &S.ack0)))
		goto out;
	nq = nq < 2 ? 2 : nq;
	err = -EINVAL;
	if (tc(r, "qdisc replace dev eth0 root handle 1: mq") ||
	    tc(r, "qdisc replace dev ack0 root handle 1: mq"))
		goto out;
	for (unsigned q = 0; q < nq; q++) {
		char c1[128], c2[128];
		snprintf(c1, sizeof(c1), "qdisc add dev eth0 parent 1:%x handle %x: fq", q + 1,
			 0x10 + q);
		snprintf(c2, sizeof(c2), "qdisc add dev ack0 parent 1:%x netem delay %ums limit 100000",
			 q + 1, rtt);
		if (tc(r, c1) || tc(r, c2))
			goto out;
	}
	for (unsigned c = 0; c < S.ncpus; c++) {
		uint64_t mask = 1ull << (c % 64);
		unsigned q = c % nq;
		pw_netdev_set_xps(S.eth0, q, &mask, 1);
		pw_netdev_set_xps(S.ack0, q, &mask, 1);
		if ((err = pw_set_poll(S.rt, c, poll_send, NULL)))
			goto out;
	}
	if ((err = pw_runtime_start(S.rt)))
		goto out;
	for (unsigned i = 0; i < S.nflows; i++)
		flow_ready(&S.flows[i]);

	/* warm-up: the windows fill (a few RTTs), fq learns the flows */
	lab_sleep_ms(o->smoke ? 100 : 150);
	struct lab_sample a, prev, b;
	struct lab_run_mark mark;
	lab_run_begin(&mark);
	lab_sample(S.rt, &a);
	uint64_t bytes0 = __atomic_load_n(&S.bytes, __ATOMIC_RELAXED);
	uint64_t *fb0 = calloc(S.nflows, sizeof(*fb0));
	if (!fb0) {
		err = -ENOMEM;
		goto stop;
	}
	for (unsigned i = 0; i < S.nflows; i++)
		fb0[i] = __atomic_load_n(&S.flows[i].sent_bytes, __ATOMIC_RELAXED);
	prev = a;
	unsigned n_int = (unsigned)ceil(seconds * 1000.0 / o->interval_ms);
	if (n_int < 1)
		n_int = 1;
	for (unsigned k = 0; k < n_int; k++) {
		lab_sleep_ms(o->interval_ms);
		lab_sample(S.rt, &b);
		struct lab_rates rr;
		lab_rates(&prev, &b, &rr);
		lab_series_add(&r->series[row], t_off + (b.t - a.t), rr.in_s);
		prev = b;
	}
	lab_rates(&a, &b, &out->avg);
	out->run = lab_run_end(r, row, &mark, what);
	if (getenv("LAB_DEBUG"))
		fprintf(stderr, "%s: wakeups %.0f/s kicks %.0f/s timers %.0f/s pinned workers %d\n",
			cf->name, (double)(b.wakeups - a.wakeups) / (b.t - a.t),
			(double)(b.kicks - a.kicks) / (b.t - a.t), out->avg.timers_s,
			pw_runtime_workers_pinned(S.rt));
	double secs = b.t - a.t;
	out->mbit = (double)(__atomic_load_n(&S.bytes, __ATOMIC_RELAXED) - bytes0) * 8 / secs / 1e6;
	double sum = 0, worst = 0;
	for (unsigned i = 0; i < S.nflows; i++) {
		double fr = (double)(__atomic_load_n(&S.flows[i].sent_bytes, __ATOMIC_RELAXED) -
				     fb0[i]) / secs;
		sum += fr;
		double e = fabs(fr - (double)rate) / (double)rate;
		if (e > worst)
			worst = e;
	}
	free(fb0);
	out->flow_rate_mean = sum / S.nflows;
	out->flow_err_max = worst;
	out->pushed = out->avg.pushed_s;
	out->remote = out->avg.remote_s;
	err = 0;
stop:
	/* stop sending, let the flights land, then the timers and the devices */
	__atomic_store_n(&S.stop, 1, __ATOMIC_RELEASE);
	lab_sleep_ms(rtt + 50);
	for (unsigned i = 0; i < S.nflows; i++) {
		flow_lock(&S.flows[i]);
		pw_sk_stop_timer(&S.flows[i].sk, &S.flows[i].rtx);
		pw_sk_stop_timer(&S.flows[i].sk, &S.flows[i].delack);
		flow_unlock(&S.flows[i]);
	}
	pw_runtime_stop(S.rt);
	/* an ACK processed after the stops above re-armed: stop again, now
	 * that no callback or ACK runs */
	for (unsigned i = 0; i < S.nflows; i++) {
		pw_sk_stop_timer_sync(&S.flows[i].sk, &S.flows[i].rtx);
		pw_sk_stop_timer_sync(&S.flows[i].sk, &S.flows[i].delack);
	}
	pw_netdev_destroy(S.eth0);
	pw_netdev_destroy(S.ack0);
	S.eth0 = S.ack0 = NULL;
	/* invariants */
	unsigned short_window = 0, refs_wrong = 0;
	for (unsigned i = 0; i < S.nflows; i++) {
		if (S.flows[i].nfree != S.window)
			short_window++;
		if (pw_sock_refcnt(&S.flows[i].sk) != 1)
			refs_wrong++;
		pw_sock_put(&S.flows[i].sk);
	}
	unsigned destructed_wrong = 0;
	for (unsigned i = 0; i < S.nflows; i++)
		if (__atomic_load_n(&S.flows[i].destructed, __ATOMIC_ACQUIRE) != 1)
			destructed_wrong++;
	lab_check(r, !short_window, "%s: %u flows did not get every packet back", cf->name,
		  short_window);
	lab_check(r, !refs_wrong, "%s: %u sockets held a reference beyond the owner's after their "
		  "timers stopped", cf->name, refs_wrong);
	lab_check(r, !destructed_wrong, "%s: %u sockets not destructed exactly once", cf->name,
		  destructed_wrong);
	lab_check(r, S.data_sent > 0 && S.acks > 0, "%s: no traffic (sent %llu, acks %llu)",
		  cf->name, (unsigned long long)S.data_sent, (unsigned long long)S.acks);
	/* the configuration in force: the pinning each socket timer got at setup */
	unsigned pin_wrong = 0;
	for (unsigned i = 0; i < S.nflows; i++) {
		uint32_t fl = __atomic_load_n(&S.flows[i].rtx.pw_flags, __ATOMIC_RELAXED);
		if (!!(fl & PW_TIMER_PINNED) != cf->sk_pinned)
			pin_wrong++;
	}
	lab_check(r, !pin_wrong, "%s: %u socket timers with the wrong pinning", cf->name,
		  pin_wrong);
	lab_check(r, pw_get_migration(S.rt) == cf->policy,
		  "%s: the migration policy changed", cf->name);
	if (!err) {
		out->pushed_any = b.pushed > a.pushed;
		/* only PUSH pushes, and only what is not pinned */
		if (cf->policy != PW_MIGRATION_PUSH || (cf->sk_pinned && cf->wd_pinned))
			lab_check(r, b.pushed == a.pushed, "%s: %llu timers pushed", cf->name,
				  (unsigned long long)(b.pushed - a.pushed));
		/* PUSH with something to push, and nothing pushed: the run measured
		 * timer_migration=0 under another name.  PUSH moves a timer only
		 * when the arming CPU's idle mark is set (its worker's last poll
		 * round sent nothing) and another CPU's is clear; with 2 CPUs that
		 * means the one other worker was mid-send at that moment.  A run
		 * where every re-arm found its own CPU busy, or no other CPU busy,
		 * pushes nothing: not counted for the claims. */
		else if (S.ncpus > 1 && !out->pushed_any && out->run)
			lab_run_invalidate(r, out->run, LAB_RUN_NOT_IN_FORCE,
					   "PUSH pushed no timer: every re-arm found its own CPU "
					   "busy or no other CPU busy (not in force)");
	}
out:
	if (S.eth0)
		pw_netdev_destroy(S.eth0);
	if (S.ack0)
		pw_netdev_destroy(S.ack0);
	if (S.flows)
		for (unsigned i = 0; i < S.nflows; i++) {
			free(S.flows[i].free);
			pthread_spin_destroy(&S.flows[i].lock);
		}
	pw_runtime_destroy(S.rt);
	free(S.flows);
	free(S.pkts);
	free(S.cpus);
	return err;
}

int lab_seed000(const struct lab_opts *o, struct lab_result *r)
{
	unsigned ncpus = o->cpus ? o->cpus : lab_online_cpus();
	unsigned flows = o->smoke ? 8 : o->flows;
	uint64_t rate = o->smoke ? 200000 : o->rate;
	snprintf(r->title, sizeof(r->title),
		 "paced flows through fq, socket timers and timer migration (vmstat per %u ms)",
		 o->interval_ms);
	snprintf(r->scale, sizeof(r->scale),
		 "%u flows x %llu B/s (%.1f Mbit/s offered), RTT %u ms, %u CPUs, %.1f s per "
		 "configuration (%u interleaved runs); the seed: 500 flows x 3000000 B/s (12 Gbit/s) on "
		 "a many-CPU host",
		 flows, (unsigned long long)rate, flows * (double)rate * 8 / 1e6, o->rtt_ms, ncpus,
		 lab_runs(o) * lab_run_seconds(o, 0.25), lab_runs(o));
	static const char *const cols[] = {
		"configuration", "config", "in/s", "in_s", "cs/s", "cs_s", "us%", "us", "sy%", "sy",
		"id%", "id", "pushed/s", "pushed_s", "remote arms/s", "remote_arms_s", "Mbit/s",
		"mbit_s", "flow rate err", "flow_rate_err_max", "seed in/s", "seed_in_s", "seed sy%",
		"seed_sy"};
	lab_columns(r, 12, cols);
	snprintf(r->series_label, sizeof(r->series_label), "in/s (wake-ups + kicks)");
	/*
	 * Each configuration runs R times (--runs, 5; --smoke 2), round by
	 * round (on, off, fix, PULL, on, ...), each for seconds / R: the
	 * wake-up rate of this closed loop swings between runs of one
	 * configuration (the flows' phases decide how many watchdog expiries a
	 * packet shares), so the table gives the median of the valid runs and,
	 * for in/s, their range, and the claims the bootstrap interval of
	 * their ratios (verdict.c).
	 */
	unsigned reps = lab_runs(o);
	double per = lab_run_seconds(o, 0.25);
	static struct run_out runs[NCFG][LAB_MAX_RUNS];
	struct run_out res[NCFG];
	double in_lo[NCFG], in_hi[NCFG];
	unsigned ncfg = o->trend && !o->smoke ? NCFG : CFG_ON_X4;
	unsigned row_of[NCFG];
	for (unsigned c = 0; c < ncfg; c++)
		row_of[c] = lab_row(r, cfgs[c].name, cfgs[c].key);
	for (unsigned k = 0; k < reps; k++)
		for (unsigned c = 0; c < ncfg; c++) {
			char what[96];
			snprintf(what, sizeof(what), "%s, run %u of %u", cfgs[c].key, k + 1, reps);
			memset(&runs[c][k], 0, sizeof(runs[c][k]));
			int err = run_config(o, r, &cfgs[c], row_of[c], per, k * per, what, &runs[c][k]);
			if (err)
				return err;
		}
	/* each run's figures, and whether it counts */
	static double v_in[NCFG][LAB_MAX_RUNS], v_sy[NCFG][LAB_MAX_RUNS];
	for (unsigned c = 0; c < ncfg; c++) {
		struct run_out *x = &res[c];
		memset(x, 0, sizeof(*x));
		const struct lab_run *rr = r->run[row_of[c]];
		double v[LAB_MAX_RUNS];
#define MED(field)                                                                 \
	do {                                                                       \
		for (unsigned k = 0; k < reps; k++)                                \
			v[k] = runs[c][k].field;                                   \
		x->field = lab_median(v, rr, reps, NULL, NULL);                    \
	} while (0)
		MED(avg.in_s);
		MED(avg.cs_s);
		MED(avg.us);
		MED(avg.sy);
		MED(avg.id);
		MED(pushed);
		MED(remote);
		MED(mbit);
		MED(flow_err_max);
#undef MED
		for (unsigned k = 0; k < reps; k++) {
			v_in[c][k] = runs[c][k].avg.in_s;
			v_sy[c][k] = runs[c][k].avg.sy;
			x->pushed_any |= runs[c][k].pushed_any;
		}
		lab_median(v_in[c], rr, reps, &in_lo[c], &in_hi[c]);
		unsigned row = row_of[c];
		char cell[LAB_CELL];
		if (reps > 1)
			snprintf(cell, sizeof(cell), "%.0f [%.0f-%.0f]", x->avg.in_s, in_lo[c], in_hi[c]);
		else
			snprintf(cell, sizeof(cell), "%.0f", x->avg.in_s);
		lab_cellf(r, row, 1, x->avg.in_s, "%.0f");
		lab_cells(r, row, 1, cell);
		lab_cellf(r, row, 2, x->avg.cs_s, "%.0f");
		lab_cellf(r, row, 3, x->avg.us, "%.1f");
		lab_cellf(r, row, 4, x->avg.sy, "%.1f");
		lab_cellf(r, row, 5, x->avg.id, "%.1f");
		lab_cellf(r, row, 6, x->pushed, "%.0f");
		lab_cellf(r, row, 7, x->remote, "%.0f");
		lab_cellf(r, row, 8, x->mbit, "%.1f");
		lab_cellf(r, row, 9, 100 * x->flow_err_max, "%.2f%%");
		if (!isnan(cfgs[c].seed_in)) {
			lab_cellf(r, row, 10, cfgs[c].seed_in, "%.3g");
			lab_cellf(r, row, 11, cfgs[c].seed_sy, "%.0f");
		} else {
			lab_cells(r, row, 10, "-");
			lab_cells(r, row, 11, "-");
		}
	}

	/* the claims, each a ratio of two configurations over their runs */
	struct lab_claims *cl = &r->claims;
	cl->seed = r->id;
#define ARM(cfgi) {.cfg = cfgs[cfgi].key, .n = reps, .v = v_in[cfgi], .run = r->run[row_of[cfgi]]}
	const struct lab_arm on = ARM(CFG_ON), off = ARM(CFG_OFF), fix = ARM(CFG_FIX),
			     pull = ARM(CFG_PULL);
#undef ARM
	struct lab_arm on_sy = on, off_sy = off;
	on_sy.v = v_sy[CFG_ON];
	off_sy.v = v_sy[CFG_OFF];
	struct lab_claim *c;
	if ((c = lab_claim_add(cl, "in_on_over_off", +1, 1.5e6 / 1.16e6,
			       "timer_migration=1 raises vmstat's in: ~1.5M/s vs ~1.16M/s with 0",
			       "ACKs re-arm their socket's timers on the CPU that processed them; "
			       "PUSH moves a re-arm made on an idle CPU to a busy one, whose "
			       "expiries then wake and work away from the flow")))
		lab_claim_live(c, &on, &off, "%.0f in/s");
	if ((c = lab_claim_add(cl, "sy_on_over_off", +1, 15.0 / 12.0,
			       "timer_migration=1 raises sys time: 15% vs 12% with 0",
			       "the pushed timers' remote arms (the other CPU's base lock, a kick) "
			       "and their expiries away from the flow are kernel work")))
		lab_claim_live(c, &on_sy, &off_sy, "%.2f%% sy");
	if ((c = lab_claim_add(cl, "in_on_over_fix", +1, NAN,
			       "the proposed fix (mod_timer_pinned in sk_reset_timer), with the "
			       "watchdogs pinned as since 3.18, removes the rise (the post measured "
			       "timer_migration=0, not the patch)",
			       "pinned socket timers stay on the ACK's CPU under PUSH: nothing to push; "
			       "here the qdisc watchdogs are pinned too, as since 3.18")))
		lab_claim_live(c, &on, &fix, "%.0f in/s");
	if ((c = lab_claim_add(cl, "in_pull_over_fix", 0, 1.0,
			       "6.9's PULL (after the post) keeps the re-arms where they are made, so "
			       "in/s should match the fix's figure (socket timers and watchdogs pinned)",
			       "PULL never moves a timer at arm time; an idle CPU hands its global "
			       "timers' next expiry to the hierarchy and a busy CPU runs it remotely")))
		lab_claim_live(c, &pull, &fix, "%.0f in/s");

	if (reps > 1)
		lab_note(r, "each configuration ran %u times for %.2f s, round by round; the table gives "
			 "the median of the valid runs and, for in/s, [min-max]: the wake-up rate of one "
			 "configuration swings between runs (how many fq/netem watchdog expiries the "
			 "flows' packets share depends on their phases), so the claims above read the "
			 "bootstrap interval of the ratio, never the ranges.", reps, per);
	const struct lab_claim *c_in = &cl->c[0];
	lab_summary(r, "in(on)/in(off): ours %.2fx [%.2f, %.2f] (%s), the seed's 1.29x (1.5M / 1.16M)",
		    c_in->live_ratio, c_in->live_lo, c_in->live_hi, c_in->live_verdict);
	const struct lab_claim *c_sy = &cl->c[1];
	lab_summary(r, "sy(on)/sy(off): ours %.2fx [%.2f, %.2f] (%s; medians %.1f%% / %.1f%%), the "
		    "seed's 1.25x (15%% / 12%%)", c_sy->live_ratio, c_sy->live_lo, c_sy->live_hi,
		    c_sy->live_verdict, res[CFG_ON].avg.sy, res[CFG_OFF].avg.sy);
	lab_summary(r, "the proposed fix (socket timers pinned): in(on)/in(fix) %.2fx, sy(on)/sy(fix) "
		    "%.2fx; PULL: in(PULL)/in(fix) %.2fx (medians)",
		    res[CFG_ON].avg.in_s / res[CFG_FIX].avg.in_s,
		    res[CFG_ON].avg.sy / res[CFG_FIX].avg.sy,
		    res[CFG_PULL].avg.in_s / res[CFG_FIX].avg.in_s);
	lab_summary(r, "the migrations themselves under \"on\": %.0f timers pushed/s, %.0f remote "
		    "arms/s (0 in every other row)", res[CFG_ON].pushed, res[CFG_ON].remote);
	lab_note(r, "in is the workers' wake-ups plus the kicks they received (each a futex wake: "
		 "what an IPI or timer interrupt is to the kernel); cs, us, sy from getrusage() of the "
		 "whole process, as shares of the machine's %u CPUs.", lab_online_cpus());
	lab_note(r, "PUSH moves a timer armed on an idle CPU to a busy one (get_nohz_timer_target()); "
		 "with %u CPUs there is at most one other CPU to push to, so the seed's spread over "
		 "many CPUs cannot be reproduced, only its direction; compare the pushed/s and remote "
		 "arms/s columns, which count the migrations themselves.", ncpus);
	if (ncfg == NCFG) {
		lab_summary(r, "with 4x the CPUs (%u workers on %u cores): in(on)/in(off) %.2fx, "
			    "sy(on)/sy(off) %.2fx", 4 * ncpus, lab_online_cpus(),
			    res[CFG_ON_X4].avg.in_s / res[CFG_OFF_X4].avg.in_s,
			    res[CFG_ON_X4].avg.sy / res[CFG_OFF_X4].avg.sy);
		lab_note(r, "the 4x rows run %u runtime CPUs on %u cores (workers unpinned, time-shared): "
			 "more CPUs for PUSH to move timers between, as on the seed's host, at the price "
			 "of the OS scheduler's own noise.", 4 * ncpus, lab_online_cpus());
	}
	if (!strcmp(c_in->live_verdict, "not reproduced"))
		lab_note(r, "here \"on\" wakes the workers less than \"off\" (%.2fx, the interval below "
			 "1.0): PUSH gathers the "
			 "timers armed on idle CPUs onto a busy one, so the idle ones sleep longer, which "
			 "is what timer migration was for; the seed's host paid instead for what a timer "
			 "away from its flow costs there (the fq dequeue and the TCP work it triggers on "
			 "another CPU: cross-CPU wake-ups and cache misses), which this model only counts "
			 "as the pushed and remote arms columns, not as extra wake-ups.",
			 c_in->live_ratio);
	unsigned nopush = 0;
	for (unsigned k = 0; k < reps; k++)
		nopush += !runs[CFG_ON][k].pushed_any;
	if (nopush && ncpus > 1)
		lab_note(r, "PUSH pushed no timer in %u of the %u \"on\" runs: no other CPU was busy "
			 "at the moments ACKs re-armed timers on an idle one (with 2 CPUs, the one other "
			 "worker must be mid-send); those runs measured \"off\" under another name and "
			 "are left out of the claims (load too light, or both workers in step)",
			 nopush, reps);
	if (res[CFG_ON].avg.id > 50)
		lab_note(r, "the machine was mostly idle (%.0f%% idle under PUSH): at this load the "
			 "extra wake-ups cost little CPU; raise --flows/--rate to load it as the seed "
			 "did (500 x 3000000 is the seed's own size).", res[CFG_ON].avg.id);
	return 0;
}
