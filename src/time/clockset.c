/* SPDX-License-Identifier: MIT */
/*
 * clock_was_set(): the wall clock was stepped.
 *
 * What it does.  An hrtimer on CLOCK_REALTIME keeps its deadline on that
 * clock (hrtimer.c), but a CPU sleeps on the runtime's monotonic clock:
 * when it goes to sleep, its next REALTIME deadline is converted with the
 * offset REALTIME - MONOTONIC of that moment.  If the wall clock is then
 * stepped (settimeofday, NTP's step, a VM resumed), the sleep is too long
 * (clock set forward: the timer is late by the step) or too short (set
 * back: a harmless early wake-up that finds nothing due and sleeps again,
 * now to the right time).  The kernel's answer is clock_was_set(): every
 * CPU re-reads the offsets and reprograms its timer hardware.  Here:
 *  - pw_clock_was_set() kicks every worker, which wakes, runs what is due
 *    with fresh offsets and goes back to sleep until its (re-converted)
 *    next deadline.  Threads that serve CPUs themselves (pw_run_timers())
 *    read the offsets anew on every pass: nothing to do for them.
 *  - On the real clock, the workers learn of steps of the OS clock by
 *    themselves: pw_runtime_start() starts a watcher thread blocked in
 *    read() on a CLOCK_REALTIME timerfd armed far in the future with
 *    TFD_TIMER_CANCEL_ON_SET, which the kernel cancels (read() fails with
 *    ECANCELED) whenever the clock is set; the watcher then calls
 *    pw_clock_was_set() and blocks again.  It costs nothing while the
 *    clock is not set.  pw_runtime_stop() stops it by re-arming the
 *    timerfd to a time already past (read() returns at once) after
 *    raising its stop flag.
 *  - On the simulated clock, pw_sim_set_realtime_offset() steps the wall
 *    clock (the offset of CLOCK_REALTIME over the simulated monotonic
 *    clock) and calls pw_clock_was_set(); pw_sim_advance() then runs what
 *    the new offset made due.
 *
 * Locking: none.  The offset is an atomic word; kicks are the workers'
 * protocol (worker.c).  The watcher's fd and thread belong to
 * pw_runtime_start()/pw_runtime_stop(), which one thread calls at a time.
 *
 * Costs: a step wakes every sleeping worker once; nothing otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int pw_clock_was_set(struct pw_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	__atomic_fetch_add(&rt->clock_was_set_seq, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return 0;
	for (unsigned c = 0; c < rt->ncpus; c++)
		if (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
			pw__kick(rt, c, PW_KICK_WORK, PW__KICK_OTHER); /* wakes it if it sleeps */
	return 0;
}

int pw_sim_set_realtime_offset(struct pw_runtime *rt, int64_t offset_ns)
{
	if (!rt || rt->clock != PW_CLOCK_SIM)
		return -EINVAL;
	__atomic_store_n(&rt->sim_realtime_offset_ns, offset_ns, __ATOMIC_RELAXED);
	return pw_clock_was_set(rt);
}

uint64_t pw_clock_was_set_count(const struct pw_runtime *rt)
{
	return rt ? __atomic_load_n(&rt->clock_was_set_seq, __ATOMIC_RELAXED) : 0;
}

/* Arm @fd to expire at the end of time, cancelled by any clock set. */
static int arm_far(int fd)
{
	struct itimerspec its = { .it_value = { .tv_sec = INT32_MAX } };
	return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL);
}

static void *watch_main(void *arg)
{
	struct pw_runtime *rt = arg;
	int fd = rt->clockwatch_fd;
	while (!__atomic_load_n(&rt->clockwatch_stop, __ATOMIC_ACQUIRE)) {
		uint64_t n;
		ssize_t r = read(fd, &n, sizeof(n));
		if (__atomic_load_n(&rt->clockwatch_stop, __ATOMIC_ACQUIRE))
			break;
		if (r < 0 && errno == ECANCELED) {
			pw_clock_was_set(rt);
			if (arm_far(fd))
				break;
		} else if (r < 0 && errno != EINTR) {
			break; /* the fd is unusable: steps go unnoticed */
		}
	}
	return NULL;
}

int pw__clockwatch_start(struct pw_runtime *rt)
{
	rt->clockwatch_fd = -1;
	if (rt->clock != PW_CLOCK_MONOTONIC)
		return 0;
	int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (arm_far(fd)) {
		int e = errno;
		close(fd);
		return -e;
	}
	rt->clockwatch_fd = fd;
	__atomic_store_n(&rt->clockwatch_stop, 0, __ATOMIC_RELEASE);
	int r = pthread_create(&rt->clockwatch_th, NULL, watch_main, rt);
	if (r) {
		close(fd);
		rt->clockwatch_fd = -1;
		return -r;
	}
	return 0;
}

void pw__clockwatch_stop(struct pw_runtime *rt)
{
	if (rt->clockwatch_fd < 0)
		return;
	__atomic_store_n(&rt->clockwatch_stop, 1, __ATOMIC_RELEASE);
	/* expire now (a time already past): the blocked read() returns */
	struct itimerspec its = { .it_value = { .tv_sec = 0, .tv_nsec = 1 } };
	timerfd_settime(rt->clockwatch_fd, TFD_TIMER_ABSTIME, &its, NULL);
	pthread_join(rt->clockwatch_th, NULL);
	close(rt->clockwatch_fd);
	rt->clockwatch_fd = -1;
}
