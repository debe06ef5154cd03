/* SPDX-License-Identifier: MIT */
/*
 * The load probe of the tests that judge a timing against a bound on the
 * real clock (test_live_rate, test_trace_live): how long the threads of
 * this process (or of one it started) waited for a CPU, and the tally of
 * the figures judged and of those left out as LOADED.
 *
 * What it reads.  /proc/PID/task/TID/schedstat, second field: the time
 * the thread spent runnable but not running, waiting on a run queue for a
 * CPU (the scheduler's run_delay, kept with CONFIG_SCHED_INFO, which
 * distribution kernels have).  The kernel adds a wait to the count when
 * the thread gets the CPU, so a probe thread that polls every thread's
 * count every few hundred microseconds (lp_watch_poll(), one pread() of
 * an open file per thread) sees one thread's count jump by about the
 * length of its longest single wait since the last poll: the figure the
 * tests compare with what their shaper can absorb (a burst's worth of
 * time without a dequeue).
 *
 * Why this measure (2-vCPU VMs).  A shaper on the real clock loses tokens
 * when the thread that must dequeue is kept off the CPU for longer than
 * its burst covers.  The wake-up lateness of a thread that sleeps beside
 * it (the only probe these tests had) misses that under CPU hogs: the
 * scheduler lets a thread waking from a short sleep preempt a hog at
 * once, so the sleeper is on time, while a worker that has run for a
 * while queues behind the hog until the next tick.  With two `yes` beside
 * test_live_rate the probe woke on time in most sub-windows while htb's
 * borrowing class lost tokens far past the 1% the test allows; some
 * thread waited about a scheduler tick at once, again and again, in every
 * one of them, where a quiet VM has a wait of a few ms only now and then
 * (the tests count the stalls' time beyond what their figures absorb, so
 * those few leave a quiet run judged).  The sum of all threads' waits is printed, not judged: a worker
 * wakes thousands of times a second and each wake-up waits a little even
 * on a quiet VM, so the sum follows the wake-up rate as much as the load,
 * and it counts the tests' own threads waiting for one another.  The
 * machine-wide readings do worse: the load average's runnable count is
 * one instant (a compile's burst caught or missed by chance),
 * /proc/pressure/cpu counts every task's wait, other processes' among
 * themselves included, and is absent from kernels without PSI.  Time the
 * hypervisor takes (steal) is in none of these: the wake-up lateness
 * probe, which the tests keep, sees that.
 *
 * Threads: the lp_watch functions belong to the one thread that polls (the
 * tests' probe thread); lp_loadavg() any thread; a tally belongs to the
 * thread that judges (the tests' main thread).  No locks, no shared state.
 */
#ifndef PW_TESTS_LOAD_PROBE_H
#define PW_TESTS_LOAD_PROBE_H

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* PW_TSAN: 1 in a ThreadSanitizer build, whose slowdown is not the
 * library's: the timing tests print their timings there, not judge them. */
#if defined(__SANITIZE_THREAD__)
#define PW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PW_TSAN 1
#endif
#endif
#ifndef PW_TSAN
#define PW_TSAN 0
#endif

#define LP_MAX_TASKS 64

/* The threads watched, each with its schedstat open and its last reading. */
struct lp_watch {
	unsigned n;
	int fd[LP_MAX_TASKS];
	uint64_t wait_ns[LP_MAX_TASKS];
};

/* The run-queue wait in @fd's schedstat (read from the start), or -1. */
static inline int64_t lp__wait(int fd)
{
	char buf[128];
	ssize_t k = pread(fd, buf, sizeof(buf) - 1, 0);
	unsigned long long run, wait;
	if (k <= 0)
		return -1; /* the thread is gone */
	buf[k] = 0;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return -1;
	return (int64_t)wait;
}

/*
 * lp_watch_open() - start watching every thread that process @pid (0: this
 * one; or one the test started, such as a relay) has now, but the @nskip
 * threads in @skip (a test's own helpers whose waits a queue absorbs: its
 * main thread, its senders).  A thread started later is not watched: open
 * after the threads whose waits matter are up.
 * Context: the polling thread; opens /proc files (not from a path that
 * must not block on them); no locks.
 * Return: true; false where no /proc/self/task/TID/schedstat can be read
 * (no procfs, a kernel without CONFIG_SCHED_INFO): the caller has no
 * reading and says so.
 */
static inline bool lp_watch_open(struct lp_watch *w, pid_t pid, const long *skip,
				 unsigned nskip)
{
	char dir[32];
	if (pid)
		snprintf(dir, sizeof(dir), "/proc/%ld/task", (long)pid);
	else
		snprintf(dir, sizeof(dir), "/proc/self/task");
	w->n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *de;
	while ((de = readdir(d)) && w->n < LP_MAX_TASKS) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		long tid = strtol(de->d_name, NULL, 10);
		bool skipped = false;
		for (unsigned i = 0; i < nskip; i++)
			skipped = skipped || skip[i] == tid;
		if (skipped)
			continue;
		char path[80];
		snprintf(path, sizeof(path), "%s/%.16s/schedstat", dir, de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		int64_t v = lp__wait(fd);
		if (v < 0) {
			close(fd);
			continue;
		}
		w->fd[w->n] = fd;
		w->wait_ns[w->n++] = (uint64_t)v;
	}
	closedir(d);
	return w->n > 0;
}

/*
 * lp_watch_poll() - how much the watched threads waited for a CPU since
 * the last poll (or the open).  Polled every few hundred microseconds,
 * one thread's growth between two polls is about its longest single wait
 * in them (the file's opening comment).
 * Context: the thread that opened @w.
 * Return: the largest growth of one thread's wait, ns; *@sum (if not
 * NULL): the growth of all of them together.
 */
static inline uint64_t lp_watch_poll(struct lp_watch *w, uint64_t *sum)
{
	uint64_t max = 0, all = 0;
	for (unsigned i = 0; i < w->n; i++) {
		int64_t v = w->fd[i] >= 0 ? lp__wait(w->fd[i]) : -1;
		if (v < 0 || (uint64_t)v < w->wait_ns[i])
			continue;
		uint64_t d = (uint64_t)v - w->wait_ns[i];
		w->wait_ns[i] = (uint64_t)v;
		all += d;
		if (d > max)
			max = d;
	}
	if (sum)
		*sum = all;
	return max;
}

/*
 * lp_watch_close() - stop watching: the files closed.
 * Context: the thread that polls @w.
 */
static inline void lp_watch_close(struct lp_watch *w)
{
	for (unsigned i = 0; i < w->n; i++)
		if (w->fd[i] >= 0)
			close(w->fd[i]);
	w->n = 0;
}

/*
 * lp_steal_ns() - the time the hypervisor has taken from this machine's
 * CPUs (steal, /proc/stat's "cpu" line, all CPUs together), for deltas:
 * a stall no thread's run-queue wait shows.  Counted in clock ticks
 * (USER_HZ) of a finer count, so a delta of one tick may be almost
 * nothing: lp_steal_least() gives what a delta surely holds.
 * Context: any thread; reads /proc/stat.
 * Return: ns since boot; 0 where it cannot be read.
 */
static inline uint64_t lp_steal_ns(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	if (!f)
		return 0;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		       &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8 || hz <= 0)
		return 0;
	return (uint64_t)v[7] * (1000000000ull / (uint64_t)hz);
}

/*
 * lp_steal_least() - the steal a delta of lp_steal_ns() surely holds: all
 * of it but one tick.
 * Context: any thread.
 * Return: ns.
 */
static inline uint64_t lp_steal_least(uint64_t delta_ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 0;
	return delta_ns > tick ? delta_ns - tick : 0;
}

/*
 * lp_loadavg() - /proc/loadavg's line (load averages, runnable/threads),
 * for the output.
 * Context: any thread.
 * Return: @b, "?" where it cannot be read.
 */
static inline const char *lp_loadavg(char *b, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	if (!f || !fgets(b, (int)len, f))
		snprintf(b, len, "?");
	if (f)
		fclose(f);
	b[strcspn(b, "\n")] = 0;
	return b;
}

/* The figures of a test: how many were judged, how many left out as
 * LOADED and the first reason. */
struct lp_tally {
	unsigned judged, loaded;
	char why[200];
};

/*
 * lp_judged(), lp_loaded() - count a figure judged (passed or failed), or
 * left out as LOADED because of the reason @fmt says.
 * Context: the judging thread.
 */
static inline void lp_judged(struct lp_tally *t)
{
	t->judged++;
}

static inline __attribute__((format(printf, 2, 3))) void lp_loaded(struct lp_tally *t,
								   const char *fmt, ...)
{
	if (!t->loaded++) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(t->why, sizeof(t->why), fmt, ap);
		va_end(ap);
	}
}

/*
 * lp_tally_end() - print "@name: N figure(s) judged, M left out as LOADED
 * (the first reason)"; where every figure was left out, say that nothing
 * was judged.
 * Context: the judging thread, at the end.
 * Return: 77 (ctest's SKIP_RETURN_CODE: the run judged nothing, and a
 * skip shows where a pass would hide it) when figures were left out and
 * none judged; 0 otherwise (failures are the caller's to report).
 */
static inline int lp_tally_end(const struct lp_tally *t, const char *name)
{
	printf("%s: %u figure(s) judged, %u left out as LOADED%s%s%s\n", name, t->judged,
	       t->loaded, t->loaded ? " (first: " : "", t->loaded ? t->why : "",
	       t->loaded ? ")" : "");
	if (t->loaded && !t->judged) {
		printf("%s: SKIP: every figure LOADED, nothing judged (the machine was too busy "
		       "to measure: run it alone)\n",
		       name);
		return 77;
	}
	return 0;
}

#endif /* PW_TESTS_LOAD_PROBE_H */
