/* SPDX-License-Identifier: MIT */
/*
 * The packet-scheduling layer: packets, devices with TX queues (XPS),
 * queueing disciplines run like the kernel's qdisc_run(), their watchdog
 * hrtimers, rate estimators, and pw_tc(), the tc command line.  Design:
 * src/net/dev.c (devices, XPS, transmit), src/net/qdisc.c (qdiscs, the
 * queue run, NET_TX), src/net/watchdog.c, src/net/estimator.c,
 * src/net/sched/ (one file per qdisc), src/net/tc/ (tc's side: the
 * commands, each kind's words and text);
 * docs/design/net.md is the overview.
 *
 * Ownership: packets are the caller's memory.  The layer never allocates
 * a packet except through the device's clone op, and hands every packet
 * given to pw_dev_queue_xmit() back exactly once: to ops.xmit (sent) or to
 * ops.drop (not sent, with a reason), including at qdisc delete/replace and
 * device destroy.
 *
 * Conventions: 0 or a negative errno, as the rest of pinwheel; times in ns
 * on the runtime's clock; each function says which threads may call it.
 */
#ifndef PINWHEEL_NET_H
#define PINWHEEL_NET_H

#include <stddef.h>
#include <stdint.h>

#include <pinwheel/hrtimer.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pw_runtime;
struct pw_sock; /* below */
struct pw_timer;
struct pw_netdev; /* opaque */

/* The packet as the layer sees it: a reduced sk_buff. */
struct pw_pkt {
	/* public: set by the caller (pw_pkt_init() fills defaults) */
	void *data;          /* the bytes, or NULL (netem corrupt needs bytes) */
	uint32_t len;        /* bytes on the wire: what rates and limits count */
	uint32_t caplen;     /* bytes at data (<= len; corrupt flips a bit below it) */
	uint32_t hash;       /* flow hash (XPS, flow classification) */
	uint32_t priority;   /* skb->priority: pfifo_fast's band, htb's classid */
	uint64_t tstamp_ns;  /* earliest departure time (EDT), 0 = none */
	struct pw_sock *sk;  /* owning socket, or NULL */
	uint8_t ecn;         /* the IP ECN field: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE */
	uint8_t pw_skq;      /* private: counted in its socket's sk_inflight */
	uint16_t pw_txq;     /* private: the TX queue it was sent on */
	uint32_t user;       /* free for the caller */
	/* private: the qdiscs' room; do not touch while the layer holds it */
	struct pw_pkt *pw_next;
	struct pw_pkt *pw_left, *pw_right; /* netem's time-ordered tree */
	uint64_t pw_time_to_send;
	uint64_t pw_seq;
	uint32_t pw_reason;  /* the drop reason while on a to-free list */
	uint32_t pw_cb;      /* per-qdisc scratch */
	uint64_t pw_acc_ns;  /* private: the tree's enqueue time + 1 while the
			      * device's accuracy is on (0: none) */
};

/**
 * pw_pkt_init() - set @pkt's public fields: @data, @len (and caplen = len),
 * everything else 0 / NULL.  Context: any thread.
 */
void pw_pkt_init(struct pw_pkt *pkt, void *data, uint32_t len);

/* Return codes of pw_dev_queue_xmit() (the kernel's values). */
#define PW_NET_XMIT_SUCCESS 0x00
#define PW_NET_XMIT_DROP    0x01 /* dropped by the qdisc (limit, ...) */
#define PW_NET_XMIT_CN      0x02 /* congestion notification */

/* What the driver's xmit returns. */
#define PW_NETDEV_TX_OK   0x00 /* taken */
#define PW_NETDEV_TX_BUSY 0x10 /* not taken: requeued; the queue stops until
				* pw_netif_wake_queue() */

/* Why a packet was not sent (ops.drop). */
enum pw_drop_reason {
	PW_DROP_QDISC_LIMIT = 1, /* the qdisc was full (its limit) */
	PW_DROP_NETEM_LOSS,      /* netem's loss model */
	PW_DROP_FLUSH,           /* its qdisc was deleted, replaced or reset */
	PW_DROP_DEV_DESTROY,     /* the device was destroyed */
	PW_DROP_NO_QDISC,        /* the queue had no qdisc (noop) */
	PW_DROP_FLOW_LIMIT,      /* fq: the flow's flow_limit */
	PW_DROP_HORIZON,         /* fq: beyond the horizon */
	PW_DROP_OVERSIZE,        /* tbf: larger than the burst */
	PW_DROP_FQ_BAND_LIMIT,   /* fq: its priority band held `limit` packets */
	PW_DROP_REASON_MAX
};

/* The name of a drop reason ("qdisc_limit", ...), "unknown" otherwise. */
const char *pw_drop_reason_name(enum pw_drop_reason r);

/* The device's driver. */
struct pw_netdev_ops {
	/* A qdisc released @pkt on TX queue @txq: send it.  Called on the CPU
	 * running that queue, without the queue's lock, one call at a time
	 * per queue.  Return PW_NETDEV_TX_OK, or PW_NETDEV_TX_BUSY to have it
	 * requeued (the queue then stops until pw_netif_wake_queue()). */
	int (*xmit)(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pkt, void *ctx);
	/* @pkt is not sent, for @reason.  Any thread that acts on the device;
	 * no queue lock held.  Required. */
	void (*drop)(struct pw_netdev *dev, struct pw_pkt *pkt, enum pw_drop_reason reason,
		     void *ctx);
	/* Optional: a copy of @pkt (netem duplicate), caller's memory, or
	 * NULL.  Called under a queue lock: must not call into the layer. */
	struct pw_pkt *(*clone)(struct pw_netdev *dev, const struct pw_pkt *pkt, void *ctx);
};

/* Longest device name, with its NUL (the kernel's IFNAMSIZ). */
#define PW_IFNAMSIZ 16
/* Most TX queues a device may have. */
#define PW_MAX_TXQ 256

/**
 * pw_netdev_create() - a device with @ntxq TX queues on @rt.
 * It starts with the kernel's default qdiscs: pfifo_fast on a single
 * queue, mq with a pfifo_fast per queue otherwise (txqueuelen 1000).
 * XPS starts as CPU i -> queue i mod @ntxq.
 * Context: any thread.  Allocates.
 * Return: 0; -EINVAL (NULL, bad name, @ntxq 0 or above PW_MAX_TXQ, no
 * ops->xmit or ops->drop); -EEXIST (@rt has a device of that name);
 * -ENOBUFS (@rt's memory budget refused it: pw_net_set_budget());
 * -ENOMEM.  On failure *@out is NULL and nothing of the device remains.
 */
int pw_netdev_create(struct pw_runtime *rt, const char *name, unsigned ntxq,
		     const struct pw_netdev_ops *ops, void *ctx, struct pw_netdev **out);

/**
 * pw_netdev_destroy() - flush every queue (each packet to ops.drop with
 * PW_DROP_DEV_DESTROY), stop the watchdogs and estimators, free.  NULL: no-op.
 * Context: any thread that is not inside one of the device's callbacks
 * (xmit, drop, a watchdog), once no thread calls pw_dev_queue_xmit() on it.
 */
void pw_netdev_destroy(struct pw_netdev *dev);

/* The device named @name on @rt, or NULL.  Context: any thread. */
struct pw_netdev *pw_netdev_get(struct pw_runtime *rt, const char *name);
const char *pw_netdev_name(const struct pw_netdev *dev);
unsigned pw_netdev_ntxq(const struct pw_netdev *dev);
struct pw_runtime *pw_netdev_runtime(const struct pw_netdev *dev);

/**
 * pw_netdev_set_xps() - the CPUs that send on TX queue @txq: @cpus is a
 * bitmap of @ncpus_bits bits (bit c = CPU c).  A CPU in no queue's mask
 * picks by hash among all queues; one in several masks picks among them
 * by the packet's hash.  An empty mask removes @txq from XPS.
 * Context: any thread (takes the device's configuration lock; transmits
 * read the map lock-free).  Return: 0; -EINVAL; -ENOMEM.
 */
int pw_netdev_set_xps(struct pw_netdev *dev, unsigned txq, const uint64_t *cpus,
		      unsigned ncpus_bits);

/**
 * pw_netdev_set_txqueuelen() - the default qdiscs' limit (1000).
 * Context: any thread; applies to default qdiscs created afterwards.
 */
int pw_netdev_set_txqueuelen(struct pw_netdev *dev, uint32_t qlen);

/**
 * pw_dev_queue_xmit() - send @pkt through @dev's qdiscs.
 * Picks the TX queue by XPS (a thread that is no CPU: by hash), enqueues
 * under the queue's lock, then runs the queue unless another CPU is
 * running it: up to 64 packets to ops.xmit, the rest rescheduled on this
 * CPU's NET_TX work.  @pkt must not be queued already.
 * Context: any thread.  Return: PW_NET_XMIT_SUCCESS, _DROP or _CN (a
 * dropped packet has gone to ops.drop before this returns); -EINVAL for
 * NULL arguments (nothing done: the packet is still the caller's).
 */
int pw_dev_queue_xmit(struct pw_netdev *dev, struct pw_pkt *pkt);

/**
 * pw_netif_wake_queue() - the driver can take packets on @txq again (after
 * it returned PW_NETDEV_TX_BUSY): reschedules the queue on this CPU.
 * Context: any thread.  Return: 0; -EINVAL.
 */
int pw_netif_wake_queue(struct pw_netdev *dev, unsigned txq);

/**
 * pw_net_set_watchdog_pinned() - start qdisc watchdogs of @rt's devices
 * with HRTIMER_MODE_ABS_PINNED (1, the default: after seed 003) or plain
 * ABS (0: before it, so a migration policy may move them).  Applies to
 * watchdogs armed from now on.  pw_netdev_set_watchdog_pinned() overrides
 * it per device (-1 = follow the runtime).
 * Context: any thread.  Return: 0; -EINVAL; -ENOMEM.
 */
int pw_net_set_watchdog_pinned(struct pw_runtime *rt, int pinned);
int pw_netdev_set_watchdog_pinned(struct pw_netdev *dev, int pinned);

/**
 * pw_net_set_watchdog_net_tx() - what a qdisc watchdog of @rt's devices
 * does when it fires.  0 (the default): it runs the queue in its callback,
 * on the CPU it fired on; the dequeue re-arms it while the callback runs,
 * and a running hrtimer is never moved, so only a fresh arm (an empty
 * queue's first packet) can be migrated.  1: it raises NET_TX on that CPU,
 * as the kernel's qdisc_watchdog() does (__netif_schedule()), and the
 * queue runs in that CPU's NET_TX pass: the dequeue re-arms the watchdog
 * after its callback has returned, so under PW_MIGRATION_PUSH an unpinned
 * watchdog re-armed from an idle CPU's softirq moves to a busy CPU, every
 * time (seed 003's mechanism in full).  Same CPU, same order either way;
 * 1 costs a NET_TX pass per fire.  Applies to fires from now on.
 * Context: any thread.  Return: 0; -EINVAL (NULL @rt, @net_tx not 0 or 1);
 * -ENOMEM.
 */
int pw_net_set_watchdog_net_tx(struct pw_runtime *rt, int net_tx);

/* Statistics of a qdisc or class, as tc -s shows them. */
struct pw_qdisc_stats {
	uint64_t bytes, packets;  /* sent */
	uint32_t drops, overlimits, requeues;
	uint32_t qlen;            /* packets queued */
	uint64_t backlog;         /* bytes queued */
	int has_rate;             /* an estimator runs */
	uint64_t bps, pps;        /* its rate: bytes/s and packets/s */
};

/* Lock statistics of a TX queue's qdisc lock (the seed 003 figure). */
struct pw_txq_lock_stats {
	uint64_t acquisitions;
	uint64_t contended;       /* acquisitions that had to wait */
	uint64_t wait_ns;         /* time spent waiting */
};

/**
 * pw_netdev_qdisc_stats() - statistics of the qdisc with handle @handle
 * (MAJ << 16), or of the root qdisc when @handle is 0; mq sums its
 * children.  Context: any thread (takes queue locks).
 * Return: 0; -EINVAL; -ENOENT.
 */
int pw_netdev_qdisc_stats(struct pw_netdev *dev, uint32_t handle, struct pw_qdisc_stats *st);

/**
 * pw_netdev_txq_stats() - the root qdisc statistics of TX queue @txq and
 * its lock's.  Either pointer may be NULL.  Context: any thread.
 */
int pw_netdev_txq_stats(struct pw_netdev *dev, unsigned txq, struct pw_qdisc_stats *st,
			struct pw_txq_lock_stats *lk);

/**
 * pw_netdev_watchdog_arms() - how many times the watchdog hrtimers of TX
 * queue @txq's root qdisc and its children were started or moved (a
 * figure tc -s has no line for: pinwheel-bench net divides it by the
 * packets sent).  Counted since the root qdisc was created.
 * Context: any thread (takes the configuration lock, not the queue's).
 * Return: the count; 0 when @txq is out of range or has no qdisc.
 */
uint64_t pw_netdev_watchdog_arms(struct pw_netdev *dev, unsigned txq);

/**
 * pw_tc() - run one tc command (what follows "tc", e.g. "qdisc add dev
 * eth0 root netem delay 10ms") against @rt's devices.  Commands: qdisc
 * add|change|replace|link|del|show, class add|change|replace|del|show
 * (htb's classes; the other qdiscs' fixed classes show, and refuse
 * changes with the kernel's error); show output is appended to @out
 * (NULL: discarded) in iproute2's exact format.
 * @flags: PW_TC_STATS (-s), PW_TC_JSON (-j), PW_TC_DETAILS (-d),
 * PW_TC_ACCURACY, PW_TC_NO_FILES.
 * Context: any thread (the layer's configuration lock serialises tc).
 * Return: 0; a negative errno with iproute2's message in @err (which may
 * be NULL).  A failed command changes nothing.
 */
#define PW_TC_STATS   0x1
#define PW_TC_JSON    0x2
#define PW_TC_DETAILS 0x4
#define PW_TC_ACCURACY 0x8 /* show: each qdisc's accuracy (pw_netdev_accuracy_enable()) */
/* Words from someone who does not own this host's files (an API client):
 * every word that would read a file is refused (-EPERM, the file never
 * opened, the message the same whether the path exists or not), decided on
 * the words as tc's quoting and prefix rules leave them.  netem's
 * `distribution NAME` then takes the built-in tables only (normal, pareto,
 * paretonormal: equal to iproute2's), never a system `.dist` file, so a
 * file-only table (`experimental`) is refused too; trace's `file` is
 * refused (its `text` form is not).  Without the flag a file is opened
 * once, a regular file only, its size bounded (a FIFO or /dev/zero is an
 * error, not a hang). */
#define PW_TC_NO_FILES 0x10
int pw_tc(struct pw_runtime *rt, const char *cmd, unsigned flags, char *out, size_t outlen,
	  char *err, size_t errlen);

/**
 * pw_tc_dev() - pw_tc() confined to device @dev: the device a command's
 * `dev WORD` names (WORD as tc's quoting leaves it) is @dev whatever WORD
 * says, unless WORD is another device of @rt, which is refused; a show
 * without `dev` shows @dev alone.  So words from a client that owns one
 * device (a proxy's tc toxic) reach no other, however they are spelt.
 * Context: as pw_tc().
 * Return: as pw_tc(); -EPERM with "Error: dev \"WORD\" is another device:
 * ..." naming it; -EINVAL when @dev is NULL or empty.
 */
int pw_tc_dev(struct pw_runtime *rt, const char *dev, const char *cmd, unsigned flags, char *out,
	      size_t outlen, char *err, size_t errlen);

/* ------------------------------------------------------------ schedules */

/*
 * A schedule: tc commands applied at given times (src/net/tc/schedule.c,
 * docs/design/net.md "Schedules").  The text holds one step a line,
 * `TIME COMMAND` (`2.5s qdisc change dev up root netem delay 80ms`), TIME
 * a decimal with a unit (s, ms, us, ns, and tc's spellings of them) counted
 * from pw_tc_schedule_start(), never decreasing; '#' comments, blank lines
 * and '\' continuations as tc -batch reads them; and an optional last line
 * `loop` (start again after the last step's time) or `TIME loop` (start
 * again at TIME).  Each step runs through pw_tc() when its time comes, as
 * a `change` typed then would: packets queued keep their departure times.
 */
struct pw_tc_schedule; /* opaque */

/* pw_tc_schedule_load() flags. */
#define PW_TC_SCHED_INLINE 0x1 /* run each step in the timer's callback, on
				* the CPU it fires on (exact on the simulated
				* clock); default: the schedule's own thread */
#define PW_TC_SCHED_NO_FILES 0x2 /* every step checked and run with PW_TC_NO_FILES */
#define PW_TC_SCHED_CONFINE 0x4  /* with @dev: every step runs as pw_tc_dev(@dev)
				  * (any device word names @dev but another
				  * device's name, refused at load) instead
				  * of each step having to name @dev */

/**
 * pw_tc_schedule_load() - parse and check @text, a schedule named @name
 * (a file name: errors say NAME:LINE), for @rt's devices.  Every line is
 * checked now: the time, the order of times, the command's words as tc
 * parses them (without applying it), that it changes the configuration
 * (qdisc or class add|change|replace|link|delete) and that its device
 * exists on @rt; with @dev not NULL, that every step names device @dev.
 * Nothing runs until pw_tc_schedule_start().
 * Context: any thread but a driver callback (it runs tc's parser).
 * Allocates.  Return: 0 with *@out set; -EINVAL with "NAME:LINE: what is
 * wrong" naming the bad token in @err (the tc parser's own message for a
 * command's words), -ENODEV (a device that @rt does not have), -ENOMEM.
 * On failure *@out is NULL.
 */
int pw_tc_schedule_load(struct pw_runtime *rt, const char *text, const char *name,
			const char *dev, unsigned flags, struct pw_tc_schedule **out, char *err,
			size_t errlen);

/**
 * pw_tc_schedule_start() - time 0 of @s is now: arm its timer for the first
 * step (and start its thread, unless PW_TC_SCHED_INLINE).  A stopped
 * schedule starts again from its first step, its counts reset.
 * Context: any thread but a driver callback; start, stop and free of one
 * schedule from one thread at a time (its owner).  Return: 0; -EINVAL;
 * -EALREADY (running); -EAGAIN/-ENOMEM (the thread or the timer).
 */
int pw_tc_schedule_start(struct pw_tc_schedule *s);

/**
 * pw_tc_schedule_set_timer_rt() - before it starts, put @s's timer on
 * @trt, a scheduler's runtime (NULL: back on the devices' runtime), whose
 * workers carry no data path: every step then runs in that timer's
 * callback (as PW_TC_SCHED_INLINE, without stalling the devices' CPUs),
 * its times on @trt's clock (start_ns, since_ns, applied_ns too), so one
 * runtime and its worker serve every schedule attached to it instead of a
 * thread each.  @trt must outlive @s's running.
 * Context: the schedule's owner.  Return: 0; -EINVAL; -EBUSY (started).
 */
int pw_tc_schedule_set_timer_rt(struct pw_tc_schedule *s, struct pw_runtime *trt);

/**
 * pw_tc_schedule_stop() - cancel @s's timer and wait: the steps whose time
 * had come are applied (or counted failed) before it returns, and no step
 * runs after.  Stopping a schedule that does not run: no-op.
 * Context: any thread but a driver callback (a step in progress may wait
 * for transmits) and a thread holding no net-layer lock.
 * Return: 0; -EINVAL; -EDEADLK (from its own timer's callback).
 */
int pw_tc_schedule_stop(struct pw_tc_schedule *s);

/**
 * pw_tc_schedule_sync() - wait until every step whose time has come is
 * applied (or failed).  With the schedule's thread on the simulated clock,
 * call it after each pw_sim_advance() to see a step's effect at once.
 * Context: as pw_tc_schedule_stop().  Return: 0; -EINVAL.
 */
int pw_tc_schedule_sync(struct pw_tc_schedule *s);

/**
 * pw_tc_schedule_free() - stop @s, then free it.  NULL: no-op.  Call it
 * before pw_runtime_destroy() of its runtime (its timer lives there).
 * Context: as pw_tc_schedule_stop().
 */
void pw_tc_schedule_free(struct pw_tc_schedule *s);

/* Where a schedule is: which step is in force, and the counts since start. */
struct pw_tc_schedule_status {
	int running;           /* started and not stopped */
	int finished;          /* no loop, and every step has run */
	unsigned nsteps;
	uint64_t period_ns;    /* the loop's period; 0: no loop */
	uint64_t start_ns;     /* time 0 of the schedule (runtime clock) */
	/* the step in force: the last one tc accepted (-1, 0, NULL: none yet) */
	int step;              /* its index, 0 .. nsteps-1 */
	unsigned line;         /* its line in the text */
	const char *cmd;       /* its command (the schedule's copy) */
	uint64_t cycle;        /* in which pass of the loop (0: the first) */
	uint64_t since_ns;     /* when it came due (runtime clock) */
	uint64_t applied_ns;   /* when tc returned for it (runtime clock) */
	/* counts since start: steps whose time came, applied, refused by tc */
	uint64_t due, applied, failed;
	/* the last refusal: its step (-1 none), line, errno and tc's message */
	int failed_step;
	unsigned failed_line;
	int failed_rc;
	char failed_msg[256];
};

/**
 * pw_tc_schedule_status() - @s's status in *@st.
 * Context: any thread (takes the schedule's lock, briefly).
 * Return: 0; -EINVAL.
 */
int pw_tc_schedule_status(struct pw_tc_schedule *s, struct pw_tc_schedule_status *st);

/* One step of a schedule, and its counts since start. */
struct pw_tc_schedule_step {
	uint64_t time_ns;      /* offset from time 0 */
	unsigned line;
	const char *cmd;       /* the schedule's copy */
	uint64_t applied, failed;
};

/**
 * pw_tc_schedule_step() - step @i of @s in *@st.
 * Context: any thread.  Return: 0; -EINVAL; -ERANGE (no step @i).
 */
int pw_tc_schedule_step(struct pw_tc_schedule *s, unsigned i, struct pw_tc_schedule_step *st);

/**
 * pw_tc_schedule_format() - the status on one line, for a tool's
 * statistics: `schedule NAME: step I/N (line L) since Ts, cycle C: CMD;
 * applied A, failed F` and, after a refusal, `; last failure: line L:
 * MESSAGE`.  Always NUL-terminated (cut at @len).
 * Context: any thread.  Return: the length it needed (as snprintf); -EINVAL.
 */
int pw_tc_schedule_format(struct pw_tc_schedule *s, char *buf, size_t len);

/* ------------------------------------------------------------ sockets */

/*
 * struct pw_sock: what the layer needs of a socket (net/core/sock.c's
 * part): a reference count with a destructor, the pacing rates fq reads,
 * the flow hash, and the TX queue XPS chose for it, kept while it has
 * packets in the layer (the kernel's sk_tx_queue_mapping, changed only
 * when ooo_okay: nothing in flight, so no reordering).  Embed it in your
 * socket; pw_sock_init() it; the last pw_sock_put() calls @destruct.
 */
struct pw_sock {
	uint32_t sk_refcnt;          /* atomic; pw_sock_hold()/pw_sock_put() */
	uint32_t sk_hash;            /* flow hash (packets copy it) */
	uint64_t sk_pacing_rate;     /* bytes/s; ~0 = unlimited (fq) */
	uint64_t sk_max_pacing_rate; /* SO_MAX_PACING_RATE cap; ~0 = none */
	void (*sk_destruct)(struct pw_sock *sk);
	struct pw_runtime *sk_rt;
	void *sk_user;               /* free for the caller */
	/* private */
	int32_t pw_tx_queue;         /* atomic: cached TX queue, -1 none */
	uint32_t pw_inflight;        /* atomic: its packets in the layer */
};

/**
 * pw_sock_init() - @sk with one reference (the caller's), no rates, no
 * cached queue.  Context: the owner, before @sk is shared.
 * Return: 0; -EINVAL.
 */
int pw_sock_init(struct pw_sock *sk, struct pw_runtime *rt, void (*destruct)(struct pw_sock *));

/* sock_hold() / sock_put(): the last put calls sk_destruct (on the thread
 * that dropped it).  Context: any thread holding a reference. */
void pw_sock_hold(struct pw_sock *sk);
void pw_sock_put(struct pw_sock *sk);
/* The count now (tests; racy by nature). */
uint32_t pw_sock_refcnt(const struct pw_sock *sk);

/* SO_MAX_PACING_RATE and the stack's rate: sk_pacing_rate is kept at most
 * the cap.  Context: the socket's owner. */
void pw_sock_set_pacing_rate(struct pw_sock *sk, uint64_t rate);
void pw_sock_set_max_pacing_rate(struct pw_sock *sk, uint64_t cap);

/**
 * pw_net_set_sk_timers_pinned() - whether socket timers (wheel timers set
 * up from now on with pw_sk_timer_setup(), hrtimers started from now on
 * with pw_sk_reset_hrtimer()) are pinned (1: seed 000's
 * fix, mod_timer_pinned) or left to the migration policy (0, the default,
 * as the kernel's sk_reset_timer()).  Wheel timers: a flag fixed at setup
 * (as since Linux 4.8); hrtimers: the start mode, read at each
 * pw_sk_reset_hrtimer().  Context: any thread.  Return: 0; -EINVAL;
 * -ENOMEM.
 */
int pw_net_set_sk_timers_pinned(struct pw_runtime *rt, int pinned);

/* Set up a socket's wheel timer / hrtimer (absolute, CLOCK_MONOTONIC) on
 * @sk's runtime, pinned per the switch above.  Return: as the timer calls. */
int pw_sk_timer_setup(struct pw_sock *sk, struct pw_timer *t, void (*fn)(struct pw_timer *));
int pw_sk_hrtimer_setup(struct pw_sock *sk, struct pw_hrtimer *t,
			enum pw_hrtimer_restart (*fn)(struct pw_hrtimer *));

/**
 * pw_sk_reset_timer() - the kernel's sk_reset_timer(): (re)arm @t for jiffy
 * @expires; a timer that was not pending takes a reference on @sk, so a
 * pending socket timer always holds exactly one.  The callback drops it
 * (pw_sock_put()) unless it re-arms with pw_sk_reset_timer() (which then
 * takes a new one).  pw_sk_stop_timer(): timer_delete(), dropping the
 * pending timer's reference; _sync also waits for a running callback (not
 * from that callback).  Context: the socket's owner (arms of one socket's
 * timer are serialised by the caller, as under the kernel's socket lock);
 * the callback may run meanwhile on any CPU.  Return: the timer call's
 * result (0 inactive / 1 pending, or -errno with no reference taken or
 * dropped).
 */
int pw_sk_reset_timer(struct pw_sock *sk, struct pw_timer *t, uint64_t expires);
int pw_sk_stop_timer(struct pw_sock *sk, struct pw_timer *t);
int pw_sk_stop_timer_sync(struct pw_sock *sk, struct pw_timer *t);

/* The hrtimer counterparts (TCP's pacing timer): start @t at @expires_ns
 * (CLOCK_MONOTONIC, absolute) with @slack_ns; a timer that was not queued
 * takes a reference.  The callback drops it when it returns NORESTART and
 * keeps it when it returns RESTART (still pending).  Reset and the _sync
 * stop first wait for a running callback (so not from that callback);
 * pw_sk_stop_hrtimer() does not wait (-1: the callback runs and decides).
 * Return: 1 (was queued), 0 (was not), or -errno (the start failed; no
 * reference is left for it). */
int pw_sk_reset_hrtimer(struct pw_sock *sk, struct pw_hrtimer *t, uint64_t expires_ns,
			uint64_t slack_ns);
int pw_sk_stop_hrtimer(struct pw_sock *sk, struct pw_hrtimer *t);
int pw_sk_stop_hrtimer_sync(struct pw_sock *sk, struct pw_hrtimer *t);

/* ------------------------------------------------------------ accuracy */

/*
 * Accuracy you can see (docs/design/net.md "Accuracy"): per qdisc, what it
 * achieved beside what it was configured to do, and the host's share of
 * the difference (its watchdogs' lateness), judged with the metric below.
 *
 * The check (PW_ACC_* bits of judged/failed; a figure is judged only with
 * enough samples and a configuration it can be compared with):
 *  - SOJOURN (netem with delay/jitter, no rate, slot, reorder, inorder or
 *    delay correlation; 20+ packets): the achieved p50 (and p99 from 100
 *    packets) within max(5%, 1 ms) of the configured quantile;
 *  - RATE (tbf, netem rate; 3+ judged windows): the mean of the 100 ms
 *    windows in which the qdisc stayed backlogged (and in the window
 *    before, which released something) within max(5%, two of its largest packets per window) of
 *    the configured rate;
 *  - LOSS (netem random loss without correlation or ecn; 100+ packets
 *    offered): the configured probability inside the Wilson interval of
 *    the achieved at 99.9% (z = 3.29; the 95% interval is shown);
 *  - LATENESS (any watchdog fire): p99 of (fired - asked) at most 1 ms.
 */
#define PW_ACC_SOJOURN  0x1
#define PW_ACC_RATE     0x2
#define PW_ACC_LOSS     0x4
#define PW_ACC_LATENESS 0x8
#define PW_ACC_TOL_PCT   5        /* relative tolerance, percent */
#define PW_ACC_FLOOR_NS  1000000  /* absolute floor of the time tolerances */

enum pw_acc_verdict {
	PW_ACC_NOT_JUDGED = 0, /* nothing could be compared */
	PW_ACC_PASS = 1,
	PW_ACC_FAIL = 2,
};

/* The quantiles reported: p10, p50, p90, p99, p99.9. */
#define PW_ACC_NQ 5

struct pw_qdisc_accuracy {
	uint32_t handle, parent;       /* parent: PW_TC_H_ROOT (0xffffffff) or a class */
	char kind[16];
	uint64_t since_ns, now_ns;     /* counted since, read at (runtime clock) */
	/* sojourn: enqueue into the tree -> release by this qdisc, ns */
	uint64_t released;             /* the samples: packets released with a stamp
					* (not a netem duplicate, nor one queued
					* before counting began) */
	uint64_t sojourn_min_ns, sojourn_mean_ns, sojourn_max_ns;
	uint64_t sojourn_ns[PW_ACC_NQ];
	int has_cfg_sojourn;           /* netem: the quantiles its delay,
					* jitter and table give */
	uint64_t cfg_sojourn_ns[PW_ACC_NQ];
	/* rate over windows, bytes/s */
	uint64_t window_ns;
	uint64_t windows;              /* judged windows (backlogged throughout) */
	uint64_t rate_mean, rate_min, rate_max;
	uint64_t max_packet;           /* the largest packet released, bytes */
	uint64_t cfg_rate;             /* 0: none configured */
	int cfg_rate_per_flow;         /* fq's maxrate (a cap per flow): not judged */
	/* loss: the qdisc's own random loss */
	uint64_t offered, lost;
	double loss, loss_lo, loss_hi; /* lost / offered and its Wilson 95% interval */
	int has_cfg_loss;
	double cfg_loss;
	/* the host: watchdog fires, fired - asked, ns */
	uint64_t fires, late_p50_ns, late_p99_ns, late_max_ns;
	/* the check */
	unsigned judged, failed;       /* PW_ACC_* */
	enum pw_acc_verdict verdict;
	char why[192];                 /* the failures, or why nothing was judged */
};

/**
 * pw_netdev_accuracy_enable() - keep (@on 1) or stop keeping (0) the
 * accuracy figures of every qdisc of @dev, and of the qdiscs tc commands
 * create on it later.  1 when it is on already starts the counts again.
 * Off costs the data path one branch per hook and no memory; on, about
 * 60 kB per qdisc and a few ns per packet (docs/design/net.md).
 * Context: any thread but a driver callback (takes the configuration lock
 * and the queues' locks).  Return: 0; -EINVAL; -ENOMEM (then it is off).
 */
int pw_netdev_accuracy_enable(struct pw_netdev *dev, int on);

/**
 * pw_netdev_accuracy_read() - the accuracy of @dev's qdisc with handle
 * @handle (MAJ << 16; 0: the root), its configured values and the check's
 * verdict.  mq: the sum of its children (no rate).
 * Context: any thread but a driver callback.  Return: 0; -EINVAL;
 * -ENOENT (no such qdisc, or accuracy off); -ENOMEM.
 */
int pw_netdev_accuracy_read(struct pw_netdev *dev, uint32_t handle,
			    struct pw_qdisc_accuracy *out);

/**
 * pw_netdev_accuracy_check() - the check over every qdisc of @dev (mq's
 * children each, not mq): PW_ACC_FAIL when one failed (each failing
 * qdisc's "KIND HANDLE: failures" a line in @why, which may be NULL),
 * else PW_ACC_PASS when one was judged, else PW_ACC_NOT_JUDGED.
 * Context: any thread but a driver callback.  Return: the verdict (>= 0);
 * -EINVAL; -ENOENT (accuracy off); -ENOMEM.
 */
int pw_netdev_accuracy_check(struct pw_netdev *dev, char *why, size_t len);

/* ------------------------------------------------- memory: tc state's budget */

/*
 * The layer's configuration memory: every byte it allocates for tc state
 * (devices, qdiscs and their private areas, htb classes, netem's tables,
 * tfifo calendars, fq's buckets and flows, estimators, accuracy figures)
 * is counted per runtime (pw_net_mem_bytes()), and charged to the
 * runtime's budget when it has one (pw_net_set_budget()): a plain counter
 * the caller owns, which several runtimes, and the caller's own memory,
 * may share.  An allocation the budget refuses fails as an allocation
 * failure would, with -ENOBUFS, and tc's message is "Error: the tc memory
 * budget (N bytes) is spent."; the command changes nothing.  What a delete
 * builds (the default qdisc left in place) is charged past the limit: a
 * delete always goes through.  Packets are the caller's, never counted.
 * Design: src/net/netmem.c, docs/design/net.md.
 */
struct pw_mem_budget {
	uint64_t limit;   /* bytes charged at most; set before the budget is
			   * shared, read only after (UINT64_MAX: no limit) */
	uint64_t used;    /* atomic: bytes charged now */
	uint64_t peak;    /* atomic: the most charged at once */
	uint64_t refused; /* atomic: charges refused */
};

/**
 * pw_mem_budget_charge() - add @bytes to @b's used count if that keeps it
 * at most b->limit (what the layer does before each allocation; a caller
 * may charge its own memory to the same budget).
 * Context: any thread; a compare-and-swap loop on b->used, no lock.
 * Return: 0; -ENOBUFS (refused: b->refused counts it, nothing else changes).
 */
int pw_mem_budget_charge(struct pw_mem_budget *b, uint64_t bytes);

/* Give back @bytes charged to @b.  Any thread: one atomic subtraction. */
void pw_mem_budget_uncharge(struct pw_mem_budget *b, uint64_t bytes);

/**
 * pw_net_set_budget() - charge @rt's tc state to @b from now on (NULL:
 * none, the default).  @b outlives @rt's state: until the runtime is
 * destroyed or another budget is set.
 * Context: any thread; takes the layer's configuration mutex.
 * Return: 0; -EINVAL (@rt NULL); -EBUSY (@rt holds tc state already: a
 * device exists; set the budget before the first device); -ENOMEM.
 */
int pw_net_set_budget(struct pw_runtime *rt, struct pw_mem_budget *b);

/**
 * pw_net_mem_bytes() - the bytes of tc state @rt's layer holds now (what
 * it charged, budget or not; 0 once every device is gone).
 * Context: any thread (a relaxed load).  Return: the count; 0 for NULL.
 */
uint64_t pw_net_mem_bytes(struct pw_runtime *rt);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_NET_H */
