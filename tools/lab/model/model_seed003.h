/* SPDX-License-Identifier: MIT */
/*
 * seed003's model, shared between its two files: model_seed003.c (the
 * machine, the receiver, the closed-loop senders, the rows and claims) and
 * model_seed003_tx.c (3.17's transmit path: netem, its locks, NET_TX and
 * ksoftirqd, the watchdog hrtimers).  Private to them.
 *
 * Threads: the main thread only (model.c).
 */
#ifndef PW_LAB_MODEL_SEED003_H
#define PW_LAB_MODEL_SEED003_H

#include "model.h"
#include "model_seed003_lines.h"

#define S3_NQ 8u            /* TX queues: the seed's NIC */
#define S3_NONE UINT32_MAX
#define S3_QUOTA 64u        /* __qdisc_run()'s weight_p */
#define S3_MAX_RESTART 10u  /* __do_softirq()'s MAX_SOFTIRQ_RESTART */
#define S3_SOFTIRQ_NS 2000000ull /* MAX_SOFTIRQ_TIME: 2 ms */

/* The model's events (model.c's own are above 0x10000). */
enum { S3_EV_RX = 1, S3_EV_TX, S3_EV_GEN, S3_EV_APP_END, S3_EV_NET_TX, S3_EV_DELACK };

enum s3_era { S3_ERA_317, S3_ERA_48, S3_ERA_69 };

struct s3_cfg {
	const char *key, *label;
	enum pw_migration policy;
	enum pw_kick_rule rule;
	enum s3_era era;
	int wd_pinned;
};

/* An ACK: in the pool's free list, a netem's time queue, or the NIC. */
struct s3_pkt {
	uint32_t next, prev;  /* the free list (next), or its netem's queue */
	uint32_t flow;
	uint32_t cum;         /* the segments it acknowledges, cumulative */
	uint32_t cpu;         /* the CPU that built and enqueued it: who wrote its lines */
	int l0;               /* who wrote its first line last (list pointers) */
	uint64_t tts;         /* netem's time_to_send */
};

/* One TX queue: its netem (3.17's), its locks and its watchdog. */
struct s3_txq {
	struct s3 *s;
	unsigned id;
	uint32_t limit;
	uint64_t delay_ns;
	uint32_t head, tail, qlen; /* the time queue, in time_to_send order */
	int throttled;        /* a watchdog is armed: dequeue returns nothing */
	int sched;            /* on a CPU's NET_TX list (__QDISC_STATE_SCHED) */
	uint32_t next_sched;  /* the next queue on that list */
	uint64_t run_until;   /* the last run ends then, on run_cpu's timeline */
	int run_cpu;
	int line_cpu;         /* the CPU that wrote the qdisc's line last */
	struct mdl_lock root, busy, xmit;
	struct pw_hrtimer wd;
	struct mdl_vec txv;   /* TX completions, on CPU id */
	/* in the window */
	uint64_t enq, deq, drops, fires, arms, qlen_sum, qlen_max;
	/* whole run */
	uint64_t enq_all, deq_all, drops_all;
};

/* One CPU's NET_TX: its list, its __do_softirq() pass count, ksoftirqd. */
struct s3_cpu {
	uint32_t head, tail;  /* queue ids, S3_NONE terminated */
	int raised;           /* a pass is queued (NET_TX pending) */
	int in_session;       /* inside one __do_softirq() (its restarts) */
	uint64_t sess_start;
	unsigned passes;
	uint64_t ksoftirqd_since;
	/* in the window */
	uint64_t npasses, restarts, ksoftirqd_wakes, ksoftirqd_ns, trylock_fail;
	uint64_t early_wakes; /* ksoftirqd woken inside the budget: must stay 0 */
};

struct s3_flow {
	struct pw_sock sk;
	struct pw_timer delack;
	unsigned rxq, app_cpu;
	uint64_t phase, interval; /* its line slots: phase + k * interval */
	uint64_t next_k;
	uint64_t sent, acked;     /* segments sent, and acknowledged at the sender */
	uint64_t segs, acked_rcv; /* segments received, and ACKed by the receiver */
	uint64_t avail;           /* bytes queued for the reader */
	uint64_t pq;              /* segments left to the reader's context: the
				   * prequeue (asleep) or the backlog (copying) */
	int app_waiting, app_running;
};

struct s3 {
	struct mdl m;
	const struct s3_cfg *cf;
	unsigned ncpus, nflows, nrxq;
	uint64_t window;          /* segments a flow may have unacknowledged */
	struct s3_flow *fl;
	struct s3_pkt *pool;
	uint32_t npool, free_head;
	struct pw_netdev *dev;    /* the seed's script, verbatim (its configuration) */
	struct s3_txq q[S3_NQ];
	struct mdl_vec *rxv;
	struct s3_cpu *nc;
	struct mdl_lock *wlock;   /* the timer wheel bases (irqsave) */
	struct mdl_lock *hlock;   /* the hrtimer bases (irqsave) */
	uint64_t link_free;
	unsigned c_tcp, c_qdisc, c_drv, c_timer, c_spin, c_spin_irq, c_app, c_hr, c_copy;
	/* window */
	uint64_t segs, acks, deq, remote_deq, app_runs, kicks_seen, slots, stalls;
	uint64_t *deq_by_cpu;
	uint64_t *deq_qc;         /* dequeues of queue q by CPU c: [q * ncpus + c] */
	uint64_t *enq_qc;         /* ACKs into queue q by CPU c (window): [q * ncpus + c] */
	int prequeue;             /* 3.17-4.13's tcp_prequeue() (tcp_low_latency 0) */
	uint64_t pq_max;          /* most segments a reader found left to it */
	uint64_t segs_all;        /* segments the RX CPUs took in, whole run */
	struct s3_lines lines;    /* what the skbs' lines cost (model_seed003_lines.c) */
	int ticket;               /* 3.17's ticket spinlocks (s3_txq_init() sets its locks) */
	uint64_t queued;          /* ACKs in all the netems now */
	uint64_t queued_max;      /* the most (window) */
	double deq_line_ns;       /* skb lines charged to dequeues under the root lock (window) */
	uint64_t cold_deq;        /* dequeues that found the skbs out of cache (window) */
	/* whole run */
	uint64_t made, freed, drops, acks_total, sent_total, delack_fired, early_deq;
};

static inline struct s3 *s3_of(struct mdl *m)
{
	return m->ctx;
}

/* XPS: the TX queue CPU @cpu sends on. */
static inline unsigned s3_xps(unsigned cpu)
{
	return cpu % S3_NQ;
}

/* The time CPU @c gets to new work: the end of what it was charged. */
static inline uint64_t s3_ct(const struct s3 *s, unsigned c)
{
	return s->m.cpu[c].free_at > s->m.now ? s->m.cpu[c].free_at : s->m.now;
}

/* model_seed003_tx.c: set up queue @q's netem (@limit, @delay_ns) and its
 * watchdog; free it.  Context: main thread. */
void s3_txq_init(struct s3 *s, struct s3_txq *q, unsigned id, uint32_t limit, uint64_t delay_ns);
void s3_txq_fini(struct s3_txq *q);
/* tcp_send_ack() -> dev_queue_xmit() on CPU @cpu: an ACK of flow @fi
 * acknowledging @cum segments, into netem by XPS.  Context: main thread,
 * a model event (not a library callback). */
void s3_send_ack(struct s3 *s, unsigned fi, uint64_t cum, unsigned cpu);
/* CPU @c's NET_TX pass (S3_EV_NET_TX).  Context: a model event. */
void s3_net_tx_pass(struct s3 *s, unsigned c);
/* The TX completion poll of queue @ev->a (S3_EV_TX). */
void s3_tx_poll(struct s3 *s, const struct mdl_ev *ev);

#endif /* PW_LAB_MODEL_SEED003_H */
