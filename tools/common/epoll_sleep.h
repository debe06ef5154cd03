/* SPDX-License-Identifier: MIT */
/*
 * epoll_sleep(): a worker's sleep on its sockets and its next timer at
 * once, woken at the deadline asked for and not the kernel's poll slack
 * later.  The relay's workers (netem/udp/udp.c) and the TCP proxies' workers
 * (netem/tcp/tcp.c) sleep through it.
 *
 * Why not epoll_pwait2() as it is: select, poll and epoll give their
 * timeout a slack of their own, whatever PR_SET_TIMERSLACK says:
 * 0.1% of the timeout (0.5% for a thread with nice > 0), at least the
 * thread's timer slack, none for a real-time thread (the kernel's
 * select_estimate_accuracy(), fs/select.c).  The kernel may end the sleep
 * anywhere from the timeout to the timeout plus that slack, and a CPU with
 * nothing else to do wakes at the end: a 50 ms timeout carries 50 us of
 * slack by that rule, a 500 ms one 500 us (docs/relay.md, "Figures: TCP
 * proxies side by side", has what was measured, and the command).
 *
 * So the timeout asked for is shortened until its slack ends at the
 * deadline: T' = ceil(T * d / (d + 1)) for the divisor d (1000, or 200
 * when nice > 0), when T / d is a microsecond or more (a shorter sleep's
 * slack is the thread's own, 1 ns in the workers).  An interrupt inside
 * the range can still end the sleep up to T / d early: the worker's loop
 * then finds nothing due and sleeps the short rest, so nothing runs early;
 * it costs at most one more wake-up per long sleep, and only then.
 *
 * The divisor is read once per thread (epoll_slack_init()): a thread
 * reniced or made real-time afterwards sleeps with the old one (late by
 * the slack, or one extra wake-up a sleep), never early.
 *
 * Threads: each worker for itself (the state is the thread's own).
 * Locks: none.  Costs: a multiply and a divide per sleep.
 */
#ifndef PW_COMMON_EPOLL_SLEEP_H
#define PW_COMMON_EPOLL_SLEEP_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

struct epoll_slack {
	unsigned div; /* the kernel's divisor for this thread; 0: no slack */
};

/* The calling thread's divisor (its nice value and scheduling policy).
 * Context: the thread that will sleep. */
static inline void epoll_slack_init(struct epoll_slack *s)
{
	int pol = sched_getscheduler(0);
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0); /* Linux: the calling thread's */
	if (pol == SCHED_FIFO || pol == SCHED_RR || pol < 0)
		s->div = 0;
	else
		s->div = errno == 0 && nice > 0 ? 200 : 1000;
}

/* The timeout to ask for, in ns, so that the kernel's slack ends at
 * @wait_ns from now.  Pure: any thread. */
static inline uint64_t epoll_slack_timeout(const struct epoll_slack *s, uint64_t wait_ns)
{
	if (!s->div || wait_ns / s->div < 1000)
		return wait_ns;
	return (wait_ns * s->div + s->div) / (s->div + 1);
}

/*
 * epoll_sleep() - wait on @ep for up to @max events into @ev, at most
 * @wait_ns (0: do not sleep), the timeout shortened by the kernel's slack
 * (above).  Before Linux 5.11 (no epoll_pwait2(): ENOSYS) epoll_wait()
 * with the wait rounded up to milliseconds.
 * Context: the thread @s was initialized in.  Return: epoll's (events,
 * or -1 with errno).
 */
static inline int epoll_sleep(int ep, struct epoll_event *ev, int max, uint64_t wait_ns,
			      const struct epoll_slack *s)
{
	uint64_t t = epoll_slack_timeout(s, wait_ns);
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	int n = epoll_pwait2(ep, ev, max, &ts, NULL);
	if (n < 0 && errno == ENOSYS)
		n = epoll_wait(ep, ev, max, (int)((wait_ns + 999999) / 1000000));
	return n;
}

#endif /* PW_COMMON_EPOLL_SLEEP_H */
