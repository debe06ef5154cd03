/* SPDX-License-Identifier: MIT */
/*
 * Sockets, the part the packet-scheduling layer needs (net/core/sock.c):
 * the reference count and its destructor, pacing rates with their cap,
 * and the socket timers' reference rule.
 *
 * The rule (sk_reset_timer / sk_stop_timer): a pending socket timer holds
 * exactly one reference on its socket.  Arming a timer that was not
 * pending (mod_timer() returned 0) takes one (taken before the arm and
 * given back if it was pending: taken after, as the kernel's code reads, a
 * timer firing at once on another CPU could drop the caller's reference); a delete that found it
 * pending (timer_delete() returned 1) drops it; a callback that does not
 * re-arm drops it itself.  Why it is exact under concurrency: pending is
 * decided by the timer's own base lock, so every transition
 * inactive -> pending is seen by exactly one arm, and every transition
 * pending -> inactive by exactly one of {the expiry (the callback's put),
 * a delete}.  A callback that re-arms goes inactive -> pending again and
 * takes a new reference before dropping its own.  The hrtimer half is the
 * same with try_to_cancel()/start(): the caller serialises one socket's
 * arms (the kernel's socket lock), the callback may run meanwhile.
 *
 * Pinning: pw_net_set_sk_timers_pinned() decides whether wheel timers are
 * set up PW_TIMER_PINNED (a setup flag since Linux 4.8) and whether
 * hrtimers start PW_HRTIMER_MODE_PINNED (a start mode, read at each
 * start), seed 000's fix, or are left to the migration policy.
 *
 * Threads: any; the count is an atomic; the destructor runs on the thread
 * whose put dropped the last reference.  Locks: none of its own (the timer
 * calls take their base locks).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

int pw_sock_init(struct pw_sock *sk, struct pw_runtime *rt, void (*destruct)(struct pw_sock *))
{
	if (!sk || !rt)
		return -EINVAL;
	sk->sk_refcnt = 1;
	sk->sk_hash = 0;
	sk->sk_pacing_rate = UINT64_MAX;
	sk->sk_max_pacing_rate = UINT64_MAX;
	sk->sk_destruct = destruct;
	sk->sk_rt = rt;
	sk->sk_user = NULL;
	sk->pw_tx_queue = -1;
	sk->pw_inflight = 0;
	return 0;
}

void pw_sock_hold(struct pw_sock *sk)
{
	__atomic_fetch_add(&sk->sk_refcnt, 1, __ATOMIC_RELAXED);
}

void pw_sock_put(struct pw_sock *sk)
{
	if (__atomic_sub_fetch(&sk->sk_refcnt, 1, __ATOMIC_ACQ_REL) == 0 && sk->sk_destruct)
		sk->sk_destruct(sk);
}

uint32_t pw_sock_refcnt(const struct pw_sock *sk)
{
	return __atomic_load_n(&sk->sk_refcnt, __ATOMIC_RELAXED);
}

void pw_sock_set_pacing_rate(struct pw_sock *sk, uint64_t rate)
{
	uint64_t cap = __atomic_load_n(&sk->sk_max_pacing_rate, __ATOMIC_RELAXED);
	__atomic_store_n(&sk->sk_pacing_rate, rate < cap ? rate : cap, __ATOMIC_RELAXED);
}

void pw_sock_set_max_pacing_rate(struct pw_sock *sk, uint64_t cap)
{
	__atomic_store_n(&sk->sk_max_pacing_rate, cap, __ATOMIC_RELAXED);
	uint64_t r = __atomic_load_n(&sk->sk_pacing_rate, __ATOMIC_RELAXED);
	if (r > cap)
		__atomic_store_n(&sk->sk_pacing_rate, cap, __ATOMIC_RELAXED);
}

int pw_net_set_sk_timers_pinned(struct pw_runtime *rt, int pinned)
{
	if (!rt)
		return -EINVAL;
	struct pw__net *net = pw__net_get(rt);
	if (!net)
		return -ENOMEM;
	__atomic_store_n(&net->sk_timers_pinned, pinned ? 1 : 0, __ATOMIC_RELAXED);
	return 0;
}

static int sk_pinned(struct pw_sock *sk, int *pinned)
{
	struct pw__net *net = pw__net_get(sk->sk_rt);
	if (!net)
		return -ENOMEM;
	*pinned = __atomic_load_n(&net->sk_timers_pinned, __ATOMIC_RELAXED);
	return 0;
}

int pw_sk_timer_setup(struct pw_sock *sk, struct pw_timer *t, void (*fn)(struct pw_timer *))
{
	int pinned = 0;
	if (!sk || !t)
		return -EINVAL;
	int rc = sk_pinned(sk, &pinned);
	if (rc)
		return rc;
	return pw_timer_setup(sk->sk_rt, t, fn, pinned ? PW_TIMER_PINNED : 0);
}

int pw_sk_hrtimer_setup(struct pw_sock *sk, struct pw_hrtimer *t,
			enum pw_hrtimer_restart (*fn)(struct pw_hrtimer *))
{
	if (!sk || !t)
		return -EINVAL;
	return pw_hrtimer_setup(sk->sk_rt, t, fn, CLOCK_MONOTONIC, PW_HRTIMER_MODE_ABS);
}

int pw_sk_reset_timer(struct pw_sock *sk, struct pw_timer *t, uint64_t expires)
{
	if (!sk || !t)
		return -EINVAL;
	/* the reference first: the timer may fire on another CPU and drop
	 * it before pw_mod_timer() returns; given back if the timer was
	 * pending already (its reference carries over) or the arm failed.
	 * The caller's own reference keeps that put from reaching 0. */
	pw_sock_hold(sk);
	int rc = pw_mod_timer(t, expires);
	if (rc != 0)
		pw_sock_put(sk);
	return rc;
}

int pw_sk_stop_timer(struct pw_sock *sk, struct pw_timer *t)
{
	if (!sk || !t)
		return -EINVAL;
	int rc = pw_timer_delete(t);
	if (rc == 1)
		pw_sock_put(sk);
	return rc;
}

int pw_sk_stop_timer_sync(struct pw_sock *sk, struct pw_timer *t)
{
	if (!sk || !t)
		return -EINVAL;
	int rc = pw_timer_delete_sync(t);
	if (rc == 1)
		pw_sock_put(sk);
	return rc;
}

/* Dequeue @t, waiting out a running callback first (the kernel's
 * hrtimer_cancel() loop): 1 if it was queued, 0 if not.  While we wait
 * nobody else starts it (the caller serialises the socket's arms; the
 * callback may only restart itself through its return value, and then it
 * is queued again when we look next). */
static int cancel_wait(struct pw_hrtimer *t)
{
	int rc;
	while ((rc = pw_hrtimer_try_to_cancel(t)) == -1)
		sched_yield();
	return rc;
}

int pw_sk_reset_hrtimer(struct pw_sock *sk, struct pw_hrtimer *t, uint64_t expires_ns,
			uint64_t slack_ns)
{
	if (!sk || !t)
		return -EINVAL;
	int pinned = 0;
	int rc = sk_pinned(sk, &pinned);
	if (rc)
		return rc;
	/* queued: its reference carries over to the new start; not: a new
	 * one, taken before the start (the timer may fire at once) */
	int was = cancel_wait(t);
	if (was < 0)
		return was;
	if (was == 0)
		pw_sock_hold(sk);
	unsigned mode = PW_HRTIMER_MODE_ABS | (pinned ? PW_HRTIMER_MODE_PINNED : 0);
	rc = pw_hrtimer_start_range_ns(t, expires_ns, slack_ns, mode);
	if (rc) {
		pw_sock_put(sk); /* not pending: no reference for it */
		return rc;
	}
	return was;
}

int pw_sk_stop_hrtimer(struct pw_sock *sk, struct pw_hrtimer *t)
{
	if (!sk || !t)
		return -EINVAL;
	int rc = pw_hrtimer_try_to_cancel(t); /* -1: running; its callback decides */
	if (rc == 1)
		pw_sock_put(sk);
	return rc;
}

int pw_sk_stop_hrtimer_sync(struct pw_sock *sk, struct pw_hrtimer *t)
{
	if (!sk || !t)
		return -EINVAL;
	int rc = cancel_wait(t);
	if (rc == 1)
		pw_sock_put(sk);
	return rc;
}
