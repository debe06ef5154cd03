/* SPDX-License-Identifier: MIT */
/*
 * Kernel-style socket timers: a TCP-like retransmit timer that holds a
 * reference on its socket, re-armed by every ACK, backed off when it fires,
 * stopped when everything is acknowledged, and a socket that outlives its
 * owner's close until its pending timer has run.  The code a stack would
 * keep is conn_send(), conn_ack(), rtx_timer() and conn_close(); main()
 * plays a scripted exchange on the simulated clock (PW_CLOCK_SIM) so that
 * the run is instant and the same on any machine, and checks its own
 * result: exit 0 when every step did what the comment says, 1 otherwise.
 * On the real clock, the thread serving a CPU would run its timers with
 * pw_run_timers() and sleep until pw_next_expiry_ns(), as hello_timer.c
 * does.  One thread: it serves CPU 0 and runs every callback.
 *
 * The reference rule is the kernel's (net/core/sock.c, sk_reset_timer()):
 * a pending socket timer holds exactly one reference; re-arming a pending
 * timer keeps it, arming an idle one takes one, sk_stop_timer() on a
 * pending timer drops it, and the callback drops the one it was given with
 * sock_put() after re-arming if it wants to run again.  So the socket's
 * memory is freed (its destructor runs) by whoever drops the last one:
 * the owner's close, or a timer that fires after it.
 *
 * Builds against the installed library (examples/CMakeLists.txt, or
 * pkg-config pinwheel).
 */
#include <stdio.h>

#include <pinwheel/linux.h>

#define RTO_MIN_MS 50
#define RTO_MAX_MS 1000

struct conn {
	struct sock sk;        /* first: the destructor gets &c->sk */
	struct timer_list rtx; /* the retransmit timer (tcp's icsk_retransmit_timer) */
	unsigned snd_una;      /* first segment not acknowledged */
	unsigned snd_nxt;      /* next segment to send */
	unsigned rto_ms;       /* the retransmit timeout, doubled on each expiry */
	unsigned retransmits;  /* expiries so far */
	int closed;            /* the owner has let go: the timer must not re-arm */
	int freed;             /* the destructor ran */
};

static unsigned long rto_jiffies(const struct conn *c)
{
	return jiffies + msecs_to_jiffies(c->rto_ms);
}

/* The last reference is gone: a stack would free the socket here. */
static void conn_destruct(struct sock *sk)
{
	struct conn *c = (struct conn *)sk;
	c->freed++;
	printf("  [%4lu ms] socket freed\n", jiffies);
}

/* The retransmit timer fired: nothing was acknowledged for an RTO.  Runs
 * on the CPU that serves the timer, holding the reference the pending
 * timer held; it must drop it (sock_put) on every path. */
static void rtx_timer(struct timer_list *t)
{
	struct conn *c = from_timer(c, t, rtx);

	if (!c->closed && c->snd_una != c->snd_nxt) {
		c->retransmits++;
		c->rto_ms = c->rto_ms * 2 > RTO_MAX_MS ? RTO_MAX_MS : c->rto_ms * 2;
		printf("  [%4lu ms] RTO: retransmit segment %u, next RTO %u ms\n", jiffies,
		       c->snd_una, c->rto_ms);
		sk_reset_timer(&c->sk, &c->rtx, rto_jiffies(c)); /* takes a new reference */
	}
	sock_put(&c->sk); /* the reference this expiry held */
}

static int conn_open(struct pw_runtime *rt, struct conn *c)
{
	*c = (struct conn){ .rto_ms = RTO_MIN_MS };
	if (pw_sock_init(&c->sk, rt, conn_destruct)) /* one reference: the owner's */
		return -1;
	return pw_sk_timer_setup(&c->sk, &c->rtx, rtx_timer);
}

/* Send @n segments; the first unacknowledged data arms the timer. */
static void conn_send(struct conn *c, unsigned n)
{
	if (c->snd_una == c->snd_nxt)
		sk_reset_timer(&c->sk, &c->rtx, rto_jiffies(c));
	c->snd_nxt += n;
}

/* An ACK for everything before @ack: re-arm the timer for what is still
 * outstanding (tcp_rearm_rto()), or stop it when nothing is. */
static void conn_ack(struct conn *c, unsigned ack)
{
	if (ack <= c->snd_una || ack > c->snd_nxt)
		return; /* old or bogus */
	c->snd_una = ack;
	c->rto_ms = RTO_MIN_MS; /* new data acknowledged: the backoff ends */
	if (c->snd_una == c->snd_nxt)
		sk_stop_timer(&c->sk, &c->rtx);
	else
		sk_reset_timer(&c->sk, &c->rtx, rto_jiffies(c));
}

/* The owner lets go.  A pending timer keeps the socket alive until it
 * runs; the last sock_put(), here or in rtx_timer(), frees it. */
static void conn_close(struct conn *c)
{
	c->closed = 1;
	sock_put(&c->sk);
}

static int failures;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failures += !ok;
}

int main(void)
{
	struct pw_runtime *rt;
	struct pw_config cfg;
	struct conn a, b;

	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.hz = 1000; /* a jiffy is a millisecond */
	cfg.clock = PW_CLOCK_SIM;
	if (pw_runtime_create(&cfg, &rt) || pw_cpu_enter(rt, 0)) {
		fprintf(stderr, "socket_timers: cannot start pinwheel\n");
		return 1;
	}
	pw_set_default_runtime(rt);
	if (conn_open(rt, &a) || conn_open(rt, &b)) {
		fprintf(stderr, "socket_timers: cannot set up a socket\n");
		return 1;
	}

	printf("connection a: 10 segments, an ACK every 30 ms (RTO %u ms)\n", RTO_MIN_MS);
	conn_send(&a, 10);
	expect(pw_sock_refcnt(&a.sk) == 2, "the pending timer holds one reference beside the owner's");
	for (unsigned seg = 1; seg <= 9; seg++) {
		pw_sim_advance(rt, 30 * 1000000ull);
		conn_ack(&a, seg);
	}
	expect(a.retransmits == 0, "re-armed by each ACK, the 50 ms timer never fired in 270 ms");
	expect(pw_sock_refcnt(&a.sk) == 2, "re-arming a pending timer kept its one reference");

	printf("the last ACK (for segment 9) is late: 180 ms\n");
	pw_sim_advance(rt, 180 * 1000000ull);
	expect(a.retransmits == 2, "the timer fired twice, backed off: at 50 ms, then 100 ms later");
	expect(pw_sock_refcnt(&a.sk) == 2, "each expiry re-armed (a new reference) and dropped its own");
	conn_ack(&a, 10);
	expect(pw_sock_refcnt(&a.sk) == 1 && !timer_pending(&a.rtx),
	       "everything acknowledged: the timer stopped, its reference dropped");
	pw_sim_advance(rt, 2000 * 1000000ull);
	expect(a.retransmits == 2, "a stopped timer stays stopped");
	conn_close(&a);
	expect(a.freed == 1, "the owner's close dropped the last reference: freed at once");

	printf("connection b: one segment, closed by its owner before any ACK\n");
	conn_send(&b, 1);
	conn_close(&b);
	expect(b.freed == 0, "the pending timer's reference keeps the socket alive after close");
	pw_sim_advance(rt, (RTO_MIN_MS + 10) * 1000000ull);
	expect(b.freed == 1 && b.retransmits == 0,
	       "the timer ran, did not re-arm a closed socket, and freed it");

	pw_cpu_exit(rt);
	pw_runtime_destroy(rt);
	printf("%s\n", failures ? "socket_timers: FAILED" : "socket_timers: all as expected");
	return failures ? 1 : 0;
}
