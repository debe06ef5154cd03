/* SPDX-License-Identifier: MIT */
/*
 * Schedules (src/net/tc/schedule.c): timed tc commands on a pinwheel timer.
 *
 * On the simulated clock, exactly, with each step run in the timer's
 * callback (PW_TC_SCHED_INLINE) and again by the schedule's own thread
 * (pw_tc_schedule_sync() after each advance):
 *  - a netem delay changed at 1 s and 2 s: each packet enqueued after a
 *    step leaves at its send time plus that step's delay, to the
 *    nanosecond; packets in flight across a step keep their departure;
 *  - loop, bare (period = the last step's time, the first step at 0 then
 *    runs at the same instant as the last) and `TIME loop`: the step in
 *    force, its pass and the counts at each instant;
 *  - bad text refused at load with NAME:LINE and the bad token (time,
 *    order, tc's words, the verb, the device, loop, continuation);
 *  - a step tc refuses at run time is counted with its message and the
 *    schedule goes on;
 *  - stop: no step after it, the configuration stays; a restart begins
 *    again from the first step;
 *  - a replace step run from the timer's callback with packets queued: the
 *    teardown (grace period, watchdog, estimator) does not deadlock there,
 *    and the queued packets come back dropped with PW_DROP_FLUSH;
 *  - fuzz: random edits of a valid text load and run, or are refused with
 *    the name and a message (seed printed; ASan finds what leaks).
 * Every packet handed to the layer comes back exactly once (the ledger).
 *
 * On the real clock ("threads", label concurrent, run under TSan): worker
 * threads, a sender thread, a looping schedule changing netem every
 * millisecond; steps run in order, every firing applied or failed, none
 * after stop, every packet back once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "net_ledger.h"
#include "sim.h"

#define T0 1000000000ull /* the simulated clock starts at 1 s */
#define MS 1000000ull
#define SEC 1000000000ull

static struct pw_runtime *rt;
static struct pw_netdev *up, *down;
static unsigned mode; /* 0: PW_TC_SCHED_INLINE; 1: the schedule's thread */

static void env_init(void)
{
	rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	CHECK_EQ(pw_netdev_create(rt, "up", 1, &drv, NULL, &up), 0);
	CHECK_EQ(pw_netdev_create(rt, "down", 1, &drv, NULL, &down), 0);
}

static void env_fini(void)
{
	pw_netdev_destroy(up);
	pw_netdev_destroy(down);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

static struct pw_tc_schedule *load_ok(const char *text, const char *dev)
{
	struct pw_tc_schedule *s = NULL;
	char err[512];
	int rc = pw_tc_schedule_load(rt, text, "t.sched", dev, mode ? 0 : PW_TC_SCHED_INLINE, &s,
				     err, sizeof(err));
	if (rc) {
		fprintf(stderr, "load: %d: %s\n", rc, err);
		abort();
	}
	CHECK(s);
	return s;
}

/* Advance the simulation to @t (since T0) and let the due steps run. */
static void until(struct pw_tc_schedule *s, uint64_t t)
{
	uint64_t now = pw_now_ns(rt);
	CHECK(T0 + t >= now);
	CHECK_EQ(pw_sim_advance(rt, T0 + t - now), 0);
	if (s)
		CHECK_EQ(pw_tc_schedule_sync(s), 0);
}

static unsigned send_up(void)
{
	unsigned i;
	CHECK_EQ(send_from(up, -1, 100, 1, 0, &i), PW_NET_XMIT_SUCCESS);
	return i;
}

static struct pw_tc_schedule_status status(struct pw_tc_schedule *s)
{
	struct pw_tc_schedule_status st;
	CHECK_EQ(pw_tc_schedule_status(s, &st), 0);
	return st;
}

/* ------------------------------------------------------ delay steps */

static void test_delay_steps(void)
{
	env_init();
	tc_ok(rt, "qdisc add dev up root netem delay 10ms");
	struct pw_tc_schedule *s = load_ok("# a link that degrades\n"
					   "\n"
					   "1s qdisc change dev up root netem delay 50ms\n"
					   "2s   qdisc change dev up root netem \\\n"
					   "  delay 100ms   # worse\n",
					   "up");
	struct pw_tc_schedule_status st = status(s);
	CHECK_EQ(st.nsteps, 2);
	CHECK_EQ(st.running, 0);
	CHECK_EQ(st.step, -1);
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	CHECK_EQ(pw_tc_schedule_start(s), -EALREADY);
	unsigned a, b, c, d, e, f;
	until(s, 500 * MS);
	a = send_up();
	until(s, 995 * MS);
	b = send_up(); /* in flight across the 1 s step */
	until(s, 1 * SEC - 1);
	CHECK_EQ(status(s).applied, 0);
	c = send_up(); /* the nanosecond before the step: the old delay */
	until(s, 1 * SEC);
	st = status(s);
	CHECK_EQ(st.applied, 1);
	CHECK_EQ(st.due, 1);
	CHECK_EQ(st.step, 0);
	CHECK_EQ(st.line, 3);
	CHECK_EQ(st.since_ns, T0 + 1 * SEC);
	CHECK_EQ(st.cycle, 0);
	CHECK(!strcmp(st.cmd, "qdisc change dev up root netem delay 50ms"));
	d = send_up();
	until(s, 1990 * MS);
	e = send_up(); /* in flight across the 2 s step */
	until(s, 2 * SEC);
	st = status(s);
	CHECK_EQ(st.step, 1);
	CHECK_EQ(st.line, 4); /* where the continued command begins */
	CHECK_EQ(st.applied, 2);
	CHECK_EQ(st.finished, 1);
	f = send_up();
	until(s, 3 * SEC);
	CHECK_EQ(L.xmit_ns[a], T0 + 510 * MS);
	CHECK_EQ(L.xmit_ns[b], T0 + 1005 * MS);
	CHECK_EQ(L.xmit_ns[c], T0 + 1 * SEC - 1 + 10 * MS);
	CHECK_EQ(L.xmit_ns[d], T0 + 1050 * MS);
	CHECK_EQ(L.xmit_ns[e], T0 + 2040 * MS);
	CHECK_EQ(L.xmit_ns[f], T0 + 2100 * MS);
	CHECK_EQ(L.sent, 6);
	char line[512];
	CHECK(pw_tc_schedule_format(s, line, sizeof(line)) > 0);
	printf("  %s\n", line);
	CHECK(strstr(line, "schedule t.sched: step 2/2 (line 4) since 2.000000s, cycle 0:"));
	CHECK(strstr(line, "applied 2, failed 0"));
	pw_tc_schedule_free(s);
	env_fini();
}

/* Steps run in the same simulated instant as other callbacks: a sender
 * timer enqueueing every 100 ms, the schedule changing the delay at the
 * same instants.  Inline, the step runs first when its timer is first. */
static struct pw_hrtimer gen;
static unsigned gen_left;
static enum pw_hrtimer_restart gen_fn(struct pw_hrtimer *t)
{
	send_up();
	if (--gen_left == 0)
		return PW_HRTIMER_NORESTART;
	pw_hrtimer_forward_now(t, 100 * MS);
	return PW_HRTIMER_RESTART;
}

static void test_same_instant(void)
{
	if (mode) /* the thread runs a step when it wakes: not exact here */
		return;
	env_init();
	tc_ok(rt, "qdisc add dev up root netem delay 1ms");
	struct pw_tc_schedule *s = load_ok("100ms qdisc change dev up root netem delay 2ms\n"
					   "300ms qdisc change dev up root netem delay 3ms\n",
					   NULL);
	CHECK_EQ(pw_tc_schedule_start(s), 0); /* armed before the sender */
	gen_left = 5;
	CHECK_EQ(pw_hrtimer_setup(rt, &gen, gen_fn, CLOCK_MONOTONIC, PW_HRTIMER_MODE_ABS), 0);
	CHECK_EQ(pw_hrtimer_start(&gen, T0, PW_HRTIMER_MODE_ABS), 0);
	until(NULL, 1 * SEC); /* one advance: everything happens inside it */
	static const uint64_t want[] = { 1, 2, 2, 3, 3 }; /* ms of delay at 0..400 ms */
	CHECK_EQ(L.n, 5);
	for (unsigned i = 0; i < 5; i++)
		CHECK_EQ(L.xmit_ns[i], T0 + i * 100 * MS + want[i] * MS);
	pw_tc_schedule_free(s);
	env_fini();
}

/* ------------------------------------------------------------- loop */

static void test_loop(void)
{
	env_init();
	tc_ok(rt, "qdisc add dev up root netem delay 1ms");
	/* TIME loop: 10 ms from 0, 20 ms from 1 s, again from 3 s */
	struct pw_tc_schedule *s = load_ok("0s qdisc change dev up root netem delay 10ms\n"
					   "1s qdisc change dev up root netem delay 20ms\n"
					   "3s loop\n",
					   NULL);
	CHECK_EQ(status(s).period_ns, 3 * SEC);
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	until(s, 0); /* the 0 s step runs at the start instant */
	CHECK_EQ(status(s).step, 0);
	unsigned p0 = send_up();
	until(s, 2500 * MS);
	CHECK_EQ(status(s).step, 1);
	unsigned p1 = send_up();
	until(s, 3 * SEC);
	struct pw_tc_schedule_status st = status(s);
	CHECK_EQ(st.step, 0);
	CHECK_EQ(st.cycle, 1);
	CHECK_EQ(st.since_ns, T0 + 3 * SEC);
	CHECK_EQ(st.applied, 3);
	CHECK_EQ(st.finished, 0);
	unsigned p2 = send_up();
	until(s, 4 * SEC);
	CHECK_EQ(status(s).step, 1);
	unsigned p3 = send_up();
	until(s, 6500 * MS);
	st = status(s);
	CHECK_EQ(st.applied, 5); /* 0, 1, 3, 4, 6 s */
	CHECK_EQ(st.cycle, 2);
	struct pw_tc_schedule_step ss;
	CHECK_EQ(pw_tc_schedule_step(s, 0, &ss), 0);
	CHECK_EQ(ss.applied, 3);
	CHECK_EQ(ss.line, 1);
	CHECK_EQ(pw_tc_schedule_step(s, 1, &ss), 0);
	CHECK_EQ(ss.applied, 2);
	CHECK_EQ(ss.time_ns, 1 * SEC);
	CHECK_EQ(pw_tc_schedule_step(s, 2, &ss), -ERANGE);
	CHECK_EQ(L.xmit_ns[p0], T0 + 10 * MS);
	CHECK_EQ(L.xmit_ns[p1], T0 + 2520 * MS);
	CHECK_EQ(L.xmit_ns[p2], T0 + 3010 * MS);
	CHECK_EQ(L.xmit_ns[p3], T0 + 4020 * MS);
	pw_tc_schedule_free(s);

	/* bare loop: period = the last step's time (1 s); the step at 0 s of
	 * the next pass runs at the same instant, after the last */
	s = load_ok("0s qdisc change dev up root netem delay 10ms\n"
		    "500ms qdisc change dev up root netem delay 20ms\n"
		    "1s qdisc change dev up root netem delay 30ms\n"
		    "loop   # again\n",
		    NULL);
	CHECK_EQ(status(s).period_ns, 1 * SEC);
	uint64_t base = pw_now_ns(rt) - T0;
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	until(s, base + 999 * MS);
	CHECK_EQ(status(s).step, 1);
	CHECK_EQ(status(s).applied, 2);
	until(s, base + 1 * SEC);
	st = status(s);
	CHECK_EQ(st.applied, 4); /* 0, 0.5, 1 (the last), 1 (the first again) */
	CHECK_EQ(st.step, 0);
	CHECK_EQ(st.cycle, 1);
	unsigned p4 = send_up();
	until(s, base + 1500 * MS);
	CHECK_EQ(status(s).step, 1);
	CHECK_EQ(status(s).cycle, 1);
	until(s, base + 10 * SEC);
	CHECK_EQ(status(s).applied, 31); /* 3 a pass for 10 passes, and the first of the 11th */
	CHECK_EQ(L.xmit_ns[p4], T0 + base + 1010 * MS);
	pw_tc_schedule_free(s);
	env_fini();
}

/* -------------------------------------------------------- bad lines */

static void bad(const char *text, const char *dev, int want_rc, const char *want)
{
	struct pw_tc_schedule *s = (struct pw_tc_schedule *)&s; /* must be NULLed */
	char err[512];
	int rc = pw_tc_schedule_load(rt, text, "bad.sched", dev, mode ? 0 : PW_TC_SCHED_INLINE,
				     &s, err, sizeof(err));
	if (rc != want_rc || !strstr(err, want)) {
		fprintf(stderr, "load of \"%s\": %d \"%s\", wanted %d with \"%s\"\n", text, rc,
			err, want_rc, want);
		abort();
	}
	CHECK(s == NULL);
	printf("  refused: %s\n", err);
}

static void test_bad_lines(void)
{
	env_init();
	const char *ch = "qdisc change dev up root netem delay 5ms";
	char t[512];
	bad("1x qdisc change dev up root netem delay 5ms", NULL, -EINVAL,
	    "bad.sched:1: \"1x\" is not a time");
	bad("5 qdisc change dev up root netem delay 5ms", NULL, -EINVAL, "\"5\" is not a time");
	bad("-1s qdisc change dev up root netem delay 5ms", NULL, -EINVAL, "\"-1s\" is not a time");
	bad("1.0000000001s qdisc change dev up root netem delay 5ms", NULL, -EINVAL,
	    "\"1.0000000001s\" is not a time");
	bad("99999999999s qdisc change dev up root netem delay 5ms", NULL, -EINVAL,
	    "\"99999999999s\" is not a time");
	snprintf(t, sizeof(t), "# c\n2s %s\n\n1500ms %s\n", ch, ch);
	bad(t, NULL, -EINVAL, "bad.sched:4: \"1500ms\" is before the step before it");
	/* tc's own parser names the bad word */
	bad("1s qdisc change dev up root netem delay 10q", NULL, -EINVAL, "bad.sched:1:");
	bad("1s qdisc change dev up root netem delay 10q", NULL, -EINVAL, "10q");
	bad("1s qdisc change dev up root netem dleay 10ms", NULL, -EINVAL, "dleay");
	bad("1s qdisc change dev up root nettem delay 10ms", NULL, -EINVAL, "nettem");
	bad("1s qdisc change dev up handle zz: netem", NULL, -EINVAL, "zz:");
	bad("1s qdisc change dev up root tbf rate 1mbit", NULL, -EINVAL, "bad.sched:1:");
	bad("1s qdisc show dev up", NULL, -EINVAL, "\"show\": a step changes the configuration");
	bad("1s qdisc", NULL, -EINVAL, "\"qdisc\" alone shows");
	bad("1s filter add dev up", NULL, -EINVAL, "\"filter\": a step is a qdisc or class");
	bad("1s qdisc help", NULL, -EINVAL, "\"help\"");
	bad("1s", NULL, -EINVAL, "bad.sched:1: no command after the time");
	bad("1s qdisc change root netem delay 1ms", NULL, -EINVAL, "names no device");
	bad("1s qdisc change dev eth9 root netem delay 1ms", NULL, -ENODEV,
	    "bad.sched:1: Cannot find device \"eth9\"");
	bad("1s class change dev eth9 classid 1:1 htb rate 1mbit", NULL, -ENODEV,
	    "Cannot find device \"eth9\"");
	bad("1s qdisc change dev up root netem delay 1ms\n"
	    "2s qdisc change dev down root netem delay 1ms\n",
	    "up", -EINVAL, "bad.sched:2: \"down\": this schedule is for dev up");
	bad("1s qdisc change dev up root netem 'delay 1ms", NULL, -EINVAL, "unterminated quote");
	bad("loop\n", NULL, -EINVAL, "bad.sched:1: \"loop\" with no step");
	bad("0s qdisc change dev up root netem delay 1ms\nloop\n", NULL, -EINVAL,
	    "bad.sched:2: \"loop\": the period is 0");
	bad("0s qdisc change dev up root netem delay 1ms\n0s loop\n", NULL, -EINVAL,
	    "the period is 0");
	bad("2s qdisc change dev up root netem delay 1ms\n1s loop\n", NULL, -EINVAL,
	    "bad.sched:2: \"1s\": the loop comes before the last step");
	bad("1s qdisc change dev up root netem delay 1ms\nloop\n3s qdisc del dev up root\n", NULL,
	    -EINVAL, "bad.sched:3: \"3s\": nothing may follow \"loop\"");
	bad("1s qdisc change dev up root netem delay 1ms\nloop now\n", NULL, -EINVAL,
	    "\"now\": \"loop\" takes no words");
	bad("1s qdisc change dev up root \\", NULL, -EINVAL,
	    "bad.sched:1: missing continuation line");
	bad("", NULL, -EINVAL, "bad.sched: no step");
	bad("# nothing\n\n   \n", NULL, -EINVAL, "bad.sched: no step");
	/* what loads: CRLF, abbreviations, a leading "tc", tc's time units */
	struct pw_tc_schedule *s = load_ok(
		"0.5SEC tc qdisc ch dev up root netem delay 1ms\r\n"
		"600msecs qdisc replace dev up root netem delay 2ms\r\n"
		"700000usec class add dev up parent 1: classid 1:1 htb rate 1mbit\r\n"
		"700000001ns qdisc del dev up root\r\n"
		"1.5s qdisc add dev up root handle 1: netem delay 1ms # c \\\n"
		"1.5s qdisc link dev up root handle 1: netem delay 1ms\n",
		NULL);
	struct pw_tc_schedule_step ss;
	CHECK_EQ(pw_tc_schedule_step(s, 0, &ss), 0);
	CHECK_EQ(ss.time_ns, 500 * MS);
	CHECK_EQ(pw_tc_schedule_step(s, 2, &ss), 0);
	CHECK_EQ(ss.time_ns, 700 * MS);
	CHECK_EQ(pw_tc_schedule_step(s, 3, &ss), 0);
	CHECK_EQ(ss.time_ns, 700 * MS + 1);
	CHECK(!strcmp(ss.cmd, "qdisc del dev up root"));
	CHECK_EQ(pw_tc_schedule_step(s, 4, &ss), 0);
	CHECK_EQ(ss.line, 5);
	CHECK(!strcmp(ss.cmd, "qdisc add dev up root handle 1: netem delay 1ms"));
	pw_tc_schedule_free(s);
	CHECK_EQ(pw_tc_schedule_load(NULL, "", NULL, NULL, 0, &s, NULL, 0), -EINVAL);
	CHECK_EQ(pw_tc_schedule_load(rt, "1s qdisc del dev up root", NULL, NULL, 0x100, &s, NULL,
				     0),
		 -EINVAL);
	CHECK_EQ(pw_tc_schedule_start(NULL), -EINVAL);
	CHECK_EQ(pw_tc_schedule_stop(NULL), -EINVAL);
	pw_tc_schedule_free(NULL);
	env_fini();
}

/* ---------------------------------------------------- run-time failure */

static void test_runtime_failure(void)
{
	env_init();
	tc_ok(rt, "qdisc add dev up root netem delay 1ms");
	struct pw_tc_schedule *s = load_ok("1s qdisc change dev up parent 5:1 netem delay 5ms\n"
					   "2s qdisc change dev up root netem delay 30ms\n"
					   "3s qdisc add dev up root netem delay 40ms\n"
					   "4s qdisc change dev up root netem delay 50ms\n",
					   "up");
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	until(s, 1 * SEC);
	struct pw_tc_schedule_status st = status(s);
	CHECK_EQ(st.failed, 1);
	CHECK_EQ(st.applied, 0);
	CHECK_EQ(st.step, -1);
	CHECK_EQ(st.failed_step, 0);
	CHECK_EQ(st.failed_line, 1);
	CHECK(st.failed_rc < 0);
	CHECK(st.failed_msg[0]);
	printf("  step 1 refused at run time: %d %s\n", st.failed_rc, st.failed_msg);
	until(s, 2 * SEC);
	unsigned a = send_up();
	until(s, 3 * SEC);
	st = status(s);
	CHECK_EQ(st.failed, 2); /* add of an existing root */
	CHECK_EQ(st.failed_line, 3);
	CHECK_EQ(st.step, 1);
	printf("  step 3 refused at run time: %d %s\n", st.failed_rc, st.failed_msg);
	unsigned b = send_up();
	until(s, 4 * SEC);
	st = status(s);
	CHECK_EQ(st.step, 3);
	CHECK_EQ(st.applied, 2);
	CHECK_EQ(st.failed, 2);
	CHECK_EQ(st.due, 4);
	CHECK_EQ(st.finished, 1);
	unsigned c = send_up();
	struct pw_tc_schedule_step ss;
	CHECK_EQ(pw_tc_schedule_step(s, 2, &ss), 0);
	CHECK_EQ(ss.failed, 1);
	CHECK_EQ(ss.applied, 0);
	char line[512];
	pw_tc_schedule_format(s, line, sizeof(line));
	printf("  %s\n", line);
	CHECK(strstr(line, "applied 2, failed 2; last failure: line 3:"));
	CHECK(!strchr(line, '\n'));
	until(s, 5 * SEC);
	CHECK_EQ(L.xmit_ns[a], T0 + 2030 * MS);
	CHECK_EQ(L.xmit_ns[b], T0 + 3030 * MS);
	CHECK_EQ(L.xmit_ns[c], T0 + 4050 * MS);
	pw_tc_schedule_free(s);
	env_fini();
}

/* ------------------------------------------------ a scheduler's runtime */

/* Schedules whose timers live on a scheduler's runtime (one for all of
 * them, pw_tc_schedule_set_timer_rt()): the steps run in that timer's
 * callback, on that runtime's clock, and change the devices' runtime;
 * no timer and no thread of theirs on the devices' runtime. */
static void test_timer_rt(void)
{
	env_init();
	struct pw_runtime *srt = sim_create(1, 1000, 5 * SEC, 0);
	tc_ok(rt, "qdisc add dev up root netem delay 1ms");
	tc_ok(rt, "qdisc add dev down root netem delay 1ms");
	struct pw_tc_schedule *a = load_ok("1s qdisc change dev up root netem delay 10ms\n"
					   "2s loop\n",
					   NULL);
	struct pw_tc_schedule *b = load_ok("1500ms qdisc change dev down root netem delay 30ms\n",
					   NULL);
	CHECK_EQ(pw_tc_schedule_set_timer_rt(a, srt), 0);
	CHECK_EQ(pw_tc_schedule_set_timer_rt(b, srt), 0);
	CHECK_EQ(pw_tc_schedule_start(a), 0);
	CHECK_EQ(pw_tc_schedule_start(b), 0);
	CHECK_EQ(pw_tc_schedule_set_timer_rt(a, NULL), -EBUSY); /* running */
	CHECK_EQ(status(a).start_ns, 5 * SEC); /* the scheduler's clock */
	/* nothing of theirs on the devices' runtime */
	CHECK_EQ(pw_next_expiry_ns(rt, 0), UINT64_MAX);
	CHECK_EQ(pw_next_expiry_ns(rt, 1), UINT64_MAX);
	until(NULL, 5 * SEC); /* the devices' clock alone moves nothing */
	CHECK_EQ(status(a).applied, 0);
	CHECK_EQ(pw_sim_advance(srt, 1200 * MS), 0);
	CHECK_EQ(status(a).applied, 1);
	CHECK_EQ(status(b).applied, 0);
	CHECK_EQ(pw_sim_advance(srt, 400 * MS), 0);
	CHECK_EQ(status(b).applied, 1);
	CHECK(status(b).finished);
	unsigned i = send_up(), j;
	CHECK_EQ(send_from(down, -1, 100, 1, 0, &j), PW_NET_XMIT_SUCCESS);
	until(NULL, 6 * SEC);
	CHECK_EQ(L.xmit_ns[i], T0 + 5010 * MS); /* the steps changed rt's devices */
	CHECK_EQ(L.xmit_ns[j], T0 + 5030 * MS);
	CHECK_EQ(pw_sim_advance(srt, 3 * SEC), 0);
	CHECK_EQ(status(a).applied, 2); /* the loop, on the scheduler's clock */
	pw_tc_schedule_free(a);
	pw_tc_schedule_free(b);
	CHECK_EQ(pw_next_expiry_ns(srt, 0), UINT64_MAX);
	pw_runtime_destroy(srt);
	env_fini();
}

/* ------------------------------------------------------------- stop */

static void test_stop(void)
{
	env_init();
	tc_ok(rt, "qdisc add dev up root netem delay 1ms");
	struct pw_tc_schedule *s = load_ok("1s qdisc change dev up root netem delay 10ms\n"
					   "2s qdisc change dev up root netem delay 20ms\n"
					   "2s loop\n",
					   NULL);
	CHECK_EQ(pw_tc_schedule_stop(s), 0); /* never started: nothing */
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	until(s, 1500 * MS);
	CHECK_EQ(status(s).applied, 1);
	CHECK_EQ(pw_tc_schedule_stop(s), 0);
	CHECK_EQ(pw_tc_schedule_stop(s), 0);
	struct pw_tc_schedule_status st = status(s);
	CHECK_EQ(st.running, 0);
	CHECK_EQ(st.step, 0);
	/* the timer is gone: nothing of the schedule's is pending */
	CHECK_EQ(pw_next_expiry_ns(rt, 0), UINT64_MAX);
	CHECK_EQ(pw_next_expiry_ns(rt, 1), UINT64_MAX);
	until(s, 10 * SEC);
	st = status(s);
	CHECK_EQ(st.applied, 1);
	CHECK_EQ(st.due, 1);
	unsigned a = send_up(); /* the step in force at stop stays */
	/* a restart begins from the first step, counts reset */
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	st = status(s);
	CHECK_EQ(st.applied, 0);
	CHECK_EQ(st.step, -1);
	CHECK_EQ(st.start_ns, T0 + 10 * SEC);
	until(s, 12 * SEC);
	CHECK_EQ(status(s).applied, 2);
	CHECK_EQ(status(s).step, 1);
	unsigned b = send_up();
	until(s, 13 * SEC);
	CHECK_EQ(L.xmit_ns[a], T0 + 10010 * MS);
	CHECK_EQ(L.xmit_ns[b], T0 + 12020 * MS);
	pw_tc_schedule_free(s); /* stops a running schedule */
	CHECK_EQ(pw_next_expiry_ns(rt, 0), UINT64_MAX);
	env_fini();
}

/* ------------------------------------------------ teardown in a step */

static void test_replace_step(void)
{
	env_init();
	tc_ok(rt, "qdisc add dev up root netem delay 500ms");
	struct pw_tc_schedule *s = load_ok(
		"100ms qdisc replace dev up root est 250ms 1s tbf rate 1mbit burst 10k latency 50ms\n"
		"1s qdisc replace dev up root netem delay 5ms\n"
		"2s qdisc del dev up root\n",
		NULL);
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	unsigned q[3];
	for (int i = 0; i < 3; i++)
		q[i] = send_up(); /* queued in netem for 500 ms: flushed at 100 ms */
	until(s, 100 * MS);
	CHECK_EQ(status(s).applied, 1);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(L.state[q[i]], 3);
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 3);
	unsigned a = send_up(); /* tbf: under its burst, at once */
	CHECK_EQ(L.state[a], 2);
	until(s, 1 * SEC);
	unsigned b = send_up();
	until(s, 2 * SEC);
	CHECK_EQ(status(s).applied, 3);
	CHECK_EQ(status(s).failed, 0);
	CHECK_EQ(L.xmit_ns[b], T0 + 1005 * MS);
	pw_tc_schedule_free(s);
	env_fini();
}

/* ------------------------------------------------------------- fuzz */

/* Random edits of a valid schedule: each load either succeeds (and the
 * schedule starts, runs a while and frees) or fails with "NAME:" and a
 * message; never a crash or a leak (ASan).  The seed is printed. */
static uint64_t fz = 0x9e3779b97f4a7c15ull;
static uint64_t fz_next(void)
{
	fz ^= fz << 13;
	fz ^= fz >> 7;
	fz ^= fz << 17;
	return fz;
}

static void test_fuzz(void)
{
	static const char base[] = "# fuzz\n"
				   "0s qdisc change dev up root netem delay 1ms\n"
				   "1.5s qdisc change dev up root netem delay 2ms loss 1% \\\n"
				   "  rate 1mbit\n"
				   "2s class change dev up classid 1:1 htb rate 1mbit\n"
				   "2500ms qdisc del dev up root\n"
				   "3s loop\n";
	static const char alphabet[] = " \t\n\r#\\'\"0123456789.smunqdiscdevuploop:%-";
	const uint64_t seed = 20261204;
	printf("  fuzz seed %" PRIu64 "\n", seed);
	fz = seed;
	env_init();
	tc_ok(rt, "qdisc add dev up root handle 1: htb");
	unsigned ok = 0, refused = 0;
	pw_tc_schedule_free(load_ok(base, "up"));
	for (int it = 0; it < 5000; it++) {
		char text[1024];
		size_t n = strlen(base);
		memcpy(text, base, n + 1);
		int edits = 1 + (int)(fz_next() % 4);
		for (int e = 0; e < edits; e++) {
			size_t at = n ? (size_t)(fz_next() % n) : 0;
			switch (fz_next() % 3) {
			case 0: /* replace a byte */
				if (n)
					text[at] = alphabet[fz_next() % (sizeof(alphabet) - 1)];
				break;
			case 1: /* delete a run */
				if (n) {
					size_t k = 1 + (size_t)(fz_next() % 8);
					if (at + k > n)
						k = n - at;
					memmove(text + at, text + at + k, n - at - k + 1);
					n -= k;
				}
				break;
			default: /* insert a byte */
				if (n + 2 < sizeof(text)) {
					memmove(text + at + 1, text + at, n - at + 1);
					text[at] = alphabet[fz_next() % (sizeof(alphabet) - 1)];
					n++;
				}
				break;
			}
		}
		struct pw_tc_schedule *s = NULL;
		char err[512];
		int rc = pw_tc_schedule_load(rt, text, "fz", NULL, mode ? 0 : PW_TC_SCHED_INLINE, &s,
					     err, sizeof(err));
		if (rc) {
			CHECK(s == NULL);
			CHECK(rc == -EINVAL || rc == -ENODEV);
			CHECK(!strncmp(err, "fz", 2));
			refused++;
			continue;
		}
		ok++;
		CHECK_EQ(pw_tc_schedule_start(s), 0);
		until(s, pw_now_ns(rt) - T0 + 7 * SEC);
		struct pw_tc_schedule_status st = status(s);
		CHECK_EQ(st.applied + st.failed, st.due);
		pw_tc_schedule_free(s);
		/* back to a known configuration for the next one */
		pw_tc(rt, "qdisc del dev up root", 0, NULL, 0, NULL, 0);
		tc_ok(rt, "qdisc add dev up root handle 1: htb");
	}
	printf("  fuzz: %u loaded and ran, %u refused\n", ok, refused);
	CHECK(ok > 0 && refused > 0);
	env_fini();
}

/* ------------------------------------------- real clock, real threads */

static uint64_t rsent, rdropped; /* atomic */

static int rx_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)p, (void)ctx;
	__atomic_fetch_add(&rsent, 1, __ATOMIC_RELAXED);
	return PW_NETDEV_TX_OK;
}

static void rx_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)p, (void)r, (void)ctx;
	__atomic_fetch_add(&rdropped, 1, __ATOMIC_RELAXED);
}

#define RPKTS 20000
static struct pw_pkt rpkts[RPKTS];
static uint32_t rstop; /* atomic */
static unsigned rn;

static void *sender(void *arg)
{
	struct pw_netdev *dev = arg;
	struct timespec ts = { 0, 50000 };
	for (rn = 0; rn < RPKTS && !__atomic_load_n(&rstop, __ATOMIC_ACQUIRE); rn++) {
		pw_pkt_init(&rpkts[rn], NULL, 200);
		rpkts[rn].hash = rn;
		pw_dev_queue_xmit(dev, &rpkts[rn]);
		if (rn % 16 == 15)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void test_threads(void)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 2;
	struct pw_runtime *r;
	CHECK_EQ(pw_runtime_create(&cfg, &r), 0);
	static const struct pw_netdev_ops ops = { .xmit = rx_xmit, .drop = rx_drop };
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(r, "up", 2, &ops, NULL, &dev), 0);
	char err[512];
	CHECK_EQ(pw_tc(r, "qdisc add dev up root netem delay 1ms", 0, NULL, 0, err, sizeof(err)),
		 0);
	/* every millisecond a change; a replace and a failing step each pass */
	struct pw_tc_schedule *s;
	int rc = pw_tc_schedule_load(r,
				     "0ms qdisc change dev up root netem delay 2ms 1ms\n"
				     "1ms qdisc change dev up root netem delay 3ms loss 1%\n"
				     "2ms qdisc replace dev up root netem delay 1ms\n"
				     "3ms qdisc change dev up parent 7:1 netem delay 1ms\n"
				     "4ms loop\n",
				     "threads.sched", "up", 0, &s, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(pw_runtime_start(r), 0);
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, sender, dev), 0);
	struct pw_tc_schedule_status st;
	uint64_t late[20];
	unsigned nlate = 0;
	for (int i = 0; i < 20; i++) {
		sleep_ms(10);
		CHECK_EQ(pw_tc_schedule_status(s, &st), 0);
		CHECK(st.applied + st.failed <= st.due);
		if (st.step >= 0) { /* printed, never asserted: a timing */
			CHECK(st.applied_ns >= st.since_ns);
			late[nlate++] = st.applied_ns - st.since_ns;
		}
		char line[512];
		CHECK(pw_tc_schedule_format(s, line, sizeof(line)) > 0);
	}
	CHECK_EQ(pw_tc_schedule_stop(s), 0);
	CHECK_EQ(pw_tc_schedule_status(s, &st), 0);
	CHECK_EQ(st.applied + st.failed, st.due); /* what was due ran */
	CHECK(st.due >= 8);
	CHECK(st.failed >= 1);
	/* 3 of each 4 steps apply, the 4th fails, in order */
	CHECK_EQ(st.failed, st.due / 4);
	uint64_t due = st.due;
	sleep_ms(30);
	CHECK_EQ(pw_tc_schedule_status(s, &st), 0);
	CHECK_EQ(st.due, due); /* none after stop */
	CHECK_EQ(st.applied + st.failed, due);
	printf("  threads: %" PRIu64 " steps due, %" PRIu64 " applied, %" PRIu64 " failed\n",
	       st.due, st.applied, st.failed);
	for (unsigned i = 1; i < nlate; i++) /* insertion sort */
		for (unsigned j = i; j > 0 && late[j - 1] > late[j]; j--) {
			uint64_t x = late[j];
			late[j] = late[j - 1];
			late[j - 1] = x;
		}
	if (nlate)
		printf("  step in force, due to tc's return: median %" PRIu64 " ns, max %" PRIu64
		       " ns (%u samples)\n",
		       late[nlate / 2], late[nlate - 1], nlate);
	__atomic_store_n(&rstop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	pw_tc_schedule_free(s);
	CHECK_EQ(pw_runtime_stop(r), 0);
	pw_netdev_destroy(dev);
	CHECK_EQ(__atomic_load_n(&rsent, __ATOMIC_RELAXED) +
			 __atomic_load_n(&rdropped, __ATOMIC_RELAXED),
		 rn);
	pw_runtime_destroy(r);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "threads")) {
		RUN(test_threads);
		return 0;
	}
	for (mode = 0; mode < 2; mode++) {
		printf("# steps run %s\n", mode ? "by the schedule's thread" : "inline");
		RUN(test_delay_steps);
		RUN(test_same_instant);
		RUN(test_loop);
		RUN(test_bad_lines);
		RUN(test_runtime_failure);
		RUN(test_stop);
		RUN(test_replace_step);
		if (mode == 0)
			RUN(test_timer_rt);
		RUN(test_fuzz);
	}
	return 0;
}
