/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench wake: the measurement behind the workers' sleep/kick
 * mechanism (src/time/worker.c).  Two threads ping-pong: each sleeps
 * with a timeout (as a worker sleeps until its next timer) and is woken by
 * the other (a kick).  Three ways to do it:
 *   futex          FUTEX_WAIT with a relative timespec / FUTEX_WAKE (what the
 *                  workers use);
 *   eventfd+epoll  epoll_wait with a millisecond timeout, then read() the
 *                  eventfd / write() the other's eventfd;
 *   +timerfd       as a worker would need for a nanosecond deadline with
 *                  epoll: timerfd_settime before each sleep, then as above.
 * Prints microseconds per round trip (two wake-ups).  System calls per
 * wake-up, by construction: futex 2 (wake, wait), eventfd+epoll 3 (write,
 * epoll_wait, read), +timerfd 4.  Threads pinned to cores 0 and 1 when
 * there are two.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "progress.h"
#include "wake.h"

enum mech { M_FUTEX, M_EPOLL, M_TIMERFD };

struct side {
	uint32_t seq;       /* futex word: bumped by the other side */
	int efd, epfd, tfd; /* eventfd, epoll, timerfd */
	struct side *peer;
	enum mech m;
	unsigned rounds;
	int first, core;
};

static void wake_peer(struct side *s)
{
	if (s->m == M_FUTEX) {
		__atomic_fetch_add(&s->peer->seq, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &s->peer->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	} else {
		uint64_t one = 1;
		if (write(s->peer->efd, &one, sizeof(one)) != sizeof(one))
			perror("write");
	}
}

/* Sleep until woken (a 1 s timeout stands for the next timer). */
static void wait_woken(struct side *s, uint32_t *seen)
{
	if (s->m == M_FUTEX) {
		struct timespec ts = {1, 0};
		while (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == *seen)
			syscall(SYS_futex, &s->seq, FUTEX_WAIT_PRIVATE, *seen, &ts, NULL, 0);
		*seen = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		return;
	}
	if (s->m == M_TIMERFD) {
		struct itimerspec its = {{0, 0}, {1, 0}};
		timerfd_settime(s->tfd, 0, &its, NULL);
	}
	struct epoll_event ev;
	uint64_t v;
	while (epoll_wait(s->epfd, &ev, 1, 1000) < 1)
		;
	if (read(s->efd, &v, sizeof(v)) != sizeof(v))
		perror("read");
}

static void *side_main(void *arg)
{
	struct side *s = arg;
	uint32_t seen = 0;
	if (s->core >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(s->core, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (unsigned i = 0; i < s->rounds; i++) {
		if (s->first) {
			wake_peer(s);
			wait_woken(s, &seen);
		} else {
			wait_woken(s, &seen);
			wake_peer(s);
		}
	}
	return NULL;
}

static int side_init(struct side *s, enum mech m)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	s->efd = s->epfd = s->tfd = -1;
	if (m == M_FUTEX)
		return 0;
	s->efd = eventfd(0, EFD_CLOEXEC);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->efd < 0 || s->epfd < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->efd};
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &ev))
		return -errno;
	if (m == M_TIMERFD) {
		s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		ev.data.fd = s->tfd;
		if (s->tfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev))
			return -errno;
	}
	return 0;
}

static void side_free(struct side *s)
{
	if (s->efd >= 0)
		close(s->efd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->tfd >= 0)
		close(s->tfd);
}

int wake_main(unsigned rounds, int json, const char *machine)
{
	static const struct {
		enum mech m;
		const char *name;
	} mech[] = {{M_FUTEX, "futex"}, {M_EPOLL, "eventfd+epoll"}, {M_TIMERFD, "+timerfd"}};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (!json)
		printf("# %s\n# two threads%s, %u round trips each\n%-14s %12s\n", machine,
		       cores >= 2 ? " pinned to cores 0 and 1" : "", rounds, "mechanism", "us/round");
	const unsigned nmech = sizeof(mech) / sizeof(mech[0]);
	for (unsigned k = 0; k < nmech; k++) {
		struct side a, b;
		pthread_t ta, tb;
		progress_start(k + 1, nmech, "wake: %s, %u round trips", mech[k].name, rounds);
		int r = side_init(&a, mech[k].m);
		if (!r)
			r = side_init(&b, mech[k].m);
		if (r) {
			progress_end();
			fprintf(stderr, "pinwheel-bench wake: %s: %s\n", mech[k].name, strerror(-r));
			return 1;
		}
		a.peer = &b;
		b.peer = &a;
		a.rounds = b.rounds = rounds;
		a.first = 1;
		a.core = cores >= 2 ? 0 : -1;
		b.core = cores >= 2 ? 1 : -1;
		uint64_t t0 = bench_now_ns();
		pthread_create(&tb, NULL, side_main, &b);
		pthread_create(&ta, NULL, side_main, &a);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		double us = (double)(bench_now_ns() - t0) / 1e3 / rounds;
		progress_end();
		if (json)
			printf("{\"impl\":\"%s\",\"workload\":\"wake\",\"us_per_round_trip\":%.2f,"
			       "\"machine\":\"%s\"}\n",
			       mech[k].name, us, machine);
		else
			printf("%-14s %12.2f\n", mech[k].name, us);
		side_free(&a);
		side_free(&b);
	}
	return 0;
}
