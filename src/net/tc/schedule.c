/* SPDX-License-Identifier: MIT */
/*
 * Schedules: tc commands applied at given times, on a pinwheel timer
 * (pw_tc_schedule_*() in <pinwheel/net.h>; docs/design/net.md
 * "Schedules").  A link that degrades mid-test, a delay that steps every
 * second, a loss burst that repeats: `2.5s qdisc change dev up root netem
 * delay 80ms loss 2%` a line, optionally `loop` at the end.
 *
 * The text.  Lines are read as tc -batch reads them (iproute2's
 * getcmdline()): a '#' ends the line's text, even inside quotes; a line
 * whose text ends in '\' continues on the next (joined with nothing
 * between, as tc joins them); a CR before the newline is ignored; blank
 * lines are skipped.  The first word of a command is its TIME, the rest
 * the tc command: a decimal (fraction allowed) with a unit, s / sec /
 * secs, ms / msec / msecs, us / usec / usecs, ns / nsec / nsecs, any case
 * (tc's words); a bare number is refused, where tc would read
 * microseconds: a schedule says what it means.  Exact to the nanosecond:
 * the digits are read as integers, never through a double.  Times are
 * offsets from pw_tc_schedule_start() and must not decrease (equal times
 * run in file order).  The last command may be `loop` (the schedule starts
 * again at the last step's time: period = that time, the rule of
 * Mahimahi's traces; a first step at 0s then runs right after the last
 * one, at the same instant) or `TIME loop` (it starts again at TIME, which
 * is at least the last step's time: the last step stays in force until
 * then).  A period of 0 is refused (it would never end).
 *
 * Checking before running.  Every command is checked at load, so that a
 * typo is refused with NAME:LINE before the test starts, not an hour into
 * it: the object and verb must change the configuration (qdisc add,
 * change, replace, link, delete; class add, change, replace, delete: a
 * show in a schedule would print nowhere); the words are run through
 * pw_tc() itself against a scratch runtime that has no device.  tc parses
 * every word (the kind's too) before it looks the device up, so a command
 * whose words are right fails there with "Cannot find device \"NAME\"",
 * and any other answer is the parser's own message naming the bad token.
 * Then the device must exist on the real runtime (and be @dev, when the
 * caller restricts it).  What cannot be known without applying (a change
 * of a qdisc that an earlier step deletes, a handle that does not exist
 * yet) is found at run time: the step is counted failed with tc's message
 * and the schedule goes on, as tc -batch -force would.
 *
 * Who runs a step.  pw_tc() takes the layer's cfg_lock (a mutex, held by
 * any other tc command, device create/destroy and XPS changes for as long
 * as they take) and a delete or replace waits for the retired root's
 * runner, for a grace period (every transmit in progress on every CPU)
 * and for running watchdogs and estimators.  None of those waits can close
 * a cycle with a timer callback (a callback runs with no layer lock held,
 * and what tc waits for runs on other CPUs, or between callbacks on its
 * own), so a step could run in its timer's callback without deadlock; but
 * it would stall that CPU's data path (its watchdogs, its NET_TX pass, its
 * poll hook) for as long as the command and its waits last, and the
 * kernel never runs tc from softirq either.  So by default the timer's
 * callback only counts the steps whose time has come and wakes the
 * schedule's own thread, which runs them through pw_tc() in order, as a
 * process would; the step takes effect one thread wake-up after its time.
 * A work item would not help: it runs on a worker too.  With
 * PW_TC_SCHED_INLINE the callback runs the steps itself: on the simulated
 * clock nothing is stalled (the simulation's one thread runs everything)
 * and a step takes effect at its exact simulated time, so packets enqueued
 * by other callbacks at the same run see it deterministically.  A server
 * with many schedules (pinwheel-netem's API) puts their timers on a
 * scheduler's runtime of its own (pw_tc_schedule_set_timer_rt(): s->trt),
 * whose one worker carries no data path: the callback runs the steps
 * there, in time order across every schedule, and no schedule has a
 * thread; the schedule's times are then on that runtime's clock.
 *
 * Invariants (under s->lock): done <= due; the firings 0 .. due-1 are the
 * ones whose time has come (firing g is step g mod n of pass g / n, due at
 * start + (g / n) * period + time[g mod n], sums clamped at PW_KTIME_MAX);
 * firings run in order, each exactly once, and each ends applied or
 * failed (applied + failed == done).  The timer is armed for firing `due`
 * while running and due < the number of firings (n without a loop).
 * A late callback (a stalled host) counts every firing it passed, and they
 * run in order at once: the configuration then is the one the schedule
 * gives for now, reached through each step, none skipped.
 * Stop clears `running` under the lock (a callback then counts nothing
 * more), cancels the timer (waiting for a callback), and lets the thread
 * run what was due, then joins it: no step after stop returns.
 *
 * Threads and locks: load, start, stop, sync and free on any thread that
 * is no driver callback (a step may wait for transmits); the callback on
 * the CPU the timer fires on; the thread.  s->lock guards the counts and
 * the state, never held across pw_tc() or a timer call; pw_tc() takes
 * cfg_lock and root locks below it.  Costs: one timer and, by default, one
 * sleeping thread per schedule (none on a scheduler's runtime); a step
 * costs its tc command.
 */
#define _GNU_SOURCE
#include "tc_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <pinwheel/hrtimer.h>
#include <pinwheel/net.h>
#include <pinwheel/runtime.h>

#define SCHED_ERRLEN 512

struct sched_step {
	uint64_t t_ns;
	unsigned line;
	char *cmd;
	uint64_t applied, failed; /* under s->lock */
};

struct pw_tc_schedule {
	struct pw_runtime *rt;     /* the devices' */
	struct pw_runtime *trt;    /* the timer's and the clock's: rt, or a
				    * scheduler's (pw_tc_schedule_set_timer_rt()) */
	char *name;
	unsigned flags;
	char *confine;             /* PW_TC_SCHED_CONFINE: the device, else NULL */
	struct sched_step *steps;
	unsigned nsteps;
	bool loop;
	uint64_t period_ns;
	struct pw_hrtimer timer;
	pthread_t thread;
	bool has_thread;           /* under lock; set by start, cleared by stop */
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* the thread: due moved, or quit */
	pthread_cond_t done_cv;    /* sync: done moved, or the thread left */
	/* under lock */
	bool running, quit;
	uint64_t start_ns;
	uint64_t due, done;        /* firings whose time came / that ran */
	uint64_t applied, failed;
	int step;                  /* in force: -1 none */
	uint64_t step_g;           /* its firing */
	uint64_t since_ns, applied_ns;
	int failed_step;
	unsigned failed_line;
	int failed_rc;
	char failed_msg[256];
};

/* Does the timer's callback run the steps itself?  With PW_TC_SCHED_INLINE,
 * and on a scheduler's runtime, whose workers carry no data path. */
static bool inline_steps(const struct pw_tc_schedule *s)
{
	return (s->flags & PW_TC_SCHED_INLINE) || s->trt != s->rt;
}

/* The flags every pw_tc() of @s runs with. */
static unsigned tc_flags(const struct pw_tc_schedule *s)
{
	return (s->flags & PW_TC_SCHED_NO_FILES) ? PW_TC_NO_FILES : 0;
}

/* ------------------------------------------------------------- errors */

static int say(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int say(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* @src into @dst of @len bytes, cut to fit, NUL-terminated. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ------------------------------------------------------------ parsing */

/* A schedule's TIME: digits, an optional fraction, a unit (tc's words).
 * Exact: integers only.  Return: 0 with *ns; -1. */
static int parse_time(const char *s, uint64_t *ns)
{
	static const struct {
		const char *w;
		uint64_t mult;
	} units[] = {
		{ "s", 1000000000ull },  { "sec", 1000000000ull }, { "secs", 1000000000ull },
		{ "ms", 1000000ull },    { "msec", 1000000ull },   { "msecs", 1000000ull },
		{ "us", 1000ull },       { "usec", 1000ull },      { "usecs", 1000ull },
		{ "ns", 1ull },          { "nsec", 1ull },         { "nsecs", 1ull },
	};
	const char *p = s;
	uint64_t ip = 0;
	unsigned ndig = 0;
	for (; *p >= '0' && *p <= '9'; p++, ndig++) {
		if (ip > (UINT64_MAX - 9) / 10)
			return -1;
		ip = ip * 10 + (uint64_t)(*p - '0');
	}
	const char *frac = NULL;
	unsigned nfrac = 0;
	if (*p == '.') {
		frac = ++p;
		for (; *p >= '0' && *p <= '9'; p++)
			nfrac++;
	}
	if (ndig + nfrac == 0)
		return -1;
	uint64_t mult = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(p, units[i].w))
			mult = units[i].mult;
	if (!mult)
		return -1;
	if (ip > PW_KTIME_MAX / mult)
		return -1;
	uint64_t v = ip * mult, scale = mult;
	for (unsigned i = 0; i < nfrac; i++) {
		unsigned d = (unsigned)(frac[i] - '0');
		if (scale < 10) { /* below a nanosecond: only zeros */
			if (d)
				return -1;
			continue;
		}
		scale /= 10;
		v += d * scale;
	}
	if (v > PW_KTIME_MAX)
		return -1;
	*ns = v;
	return 0;
}

static bool matches_any(const char *w, const char *const *words)
{
	for (; *words; words++)
		if (pw__matches(w, *words) == 0)
			return true;
	return false;
}

/* The command's object and verb change the configuration.  Return: 0, or
 * -EINVAL with the bad word in @err. */
static int check_verb(const char *cmd, char *err, size_t errlen)
{
	static const char *const qverbs[] = { "add", "change", "replace", "link", "delete", NULL };
	static const char *const cverbs[] = { "add", "change", "replace", "delete", NULL };
	char *line = strdup(cmd);
	char *argv[8];
	if (!line)
		return say(err, errlen, -ENOMEM, "out of memory");
	int argc = pw__makeargs(line, argv, 8);
	if (argc == -E2BIG)
		argc = 7; /* the first words are all this looks at */
	int rc = 0;
	int a = argc > 0 && !strcmp(argv[0], "tc") ? 1 : 0;
	if (argc < 0) {
		rc = say(err, errlen, -EINVAL, "unterminated quote");
	} else if (argc - a < 1) {
		rc = say(err, errlen, -EINVAL, "no command after the time");
	} else if (pw__matches(argv[a], "qdisc") && pw__matches(argv[a], "class")) {
		rc = say(err, errlen, -EINVAL,
			 "\"%s\": a step is a qdisc or class command", argv[a]);
	} else if (argc - a < 2) {
		rc = say(err, errlen, -EINVAL,
			 "\"%s\" alone shows; a step changes the configuration", argv[a]);
	} else if (!matches_any(argv[a + 1],
				pw__matches(argv[a], "qdisc") == 0 ? qverbs : cverbs)) {
		rc = say(err, errlen, -EINVAL,
			 "\"%s\": a step changes the configuration (add, change, replace, %sdelete)",
			 argv[a + 1], pw__matches(argv[a], "qdisc") == 0 ? "link, " : "");
	}
	free(line);
	return rc;
}

/* The words as tc parses them, on @scratch (a runtime without devices):
 * right words end in "Cannot find device".  The device's name in @devname.
 * Return: 0; -EINVAL/-ENOMEM with tc's message in @err. */
static int check_words(struct pw_runtime *scratch, const char *cmd, unsigned tcflags,
		       char *devname, size_t dlen, char *err, size_t errlen)
{
	char msg[SCHED_ERRLEN];
	static const char cfd[] = "Cannot find device \"";
	int rc = pw_tc(scratch, cmd, tcflags, NULL, 0, msg, sizeof(msg));
	const char *at = rc == -ENODEV ? strstr(msg, cfd) : NULL;
	if (at) {
		at += sizeof(cfd) - 1;
		const char *end = strchr(at, '\n');
		if (!end)
			end = at + strlen(at);
		while (end > at && end[-1] != '"')
			end--;
		size_t n = end > at ? (size_t)(end - at) - 1 : 0;
		if (n >= dlen)
			n = dlen - 1;
		memcpy(devname, at, n);
		devname[n] = '\0';
		return 0;
	}
	if (rc == -ENOMEM)
		return say(err, errlen, -ENOMEM, "out of memory");
	if (rc == -ENODEV) /* no dev word: the kernel's ENODEV */
		return say(err, errlen, -EINVAL, "the command names no device (dev NAME)");
	if (rc == 0) /* a usage text ("help"): tc did nothing */
		return say(err, errlen, -EINVAL, "%s", msg[0] ? msg : "the command does nothing");
	/* tc's first line says what is wrong (a usage text may follow); it
	 * does not always name the word (netem's "Illegal \"latency\""), so
	 * the command follows it */
	msg[strcspn(msg, "\n")] = '\0';
	if (rc == -EPERM) /* a word the caller's flags refuse (PW_TC_NO_FILES) */
		return say(err, errlen, -EPERM, "%s", msg);
	return say(err, errlen, -EINVAL, "%s (in \"%s\")", msg, cmd);
}

/* One step or the loop line, from a whole command line (comments and
 * continuations done).  Return: 0; -errno with "NAME:LINE: ..." in @err. */
static int parse_line(struct pw_tc_schedule *s, struct pw_runtime *scratch, const char *dev,
		      char *text, unsigned lineno, unsigned *cap, char *err, size_t errlen)
{
	static const char ws[] = " \t\r\n";
	char *p = text + strspn(text, ws);
	if (!*p)
		return 0;
	char *w = p;
	p += strcspn(p, ws);
	if (*p)
		*p++ = '\0';
	p += strspn(p, ws);
	size_t n = strlen(p);
	while (n && strchr(ws, p[n - 1]))
		p[--n] = '\0';
	if (s->loop)
		return say(err, errlen, -EINVAL, "%s:%u: \"%s\": nothing may follow \"loop\"",
			   s->name, lineno, w);
	uint64_t last = s->nsteps ? s->steps[s->nsteps - 1].t_ns : 0;
	if (!strcmp(w, "loop") || !strcmp(p, "loop")) {
		uint64_t period = last;
		if (strcmp(w, "loop")) { /* TIME loop */
			if (parse_time(w, &period))
				return say(err, errlen, -EINVAL,
					   "%s:%u: \"%s\" is not a time (a number with s, ms, us or ns)",
					   s->name, lineno, w);
			if (period < last)
				return say(err, errlen, -EINVAL,
					   "%s:%u: \"%s\": the loop comes before the last step",
					   s->name, lineno, w);
		} else if (*p) {
			return say(err, errlen, -EINVAL, "%s:%u: \"%s\": \"loop\" takes no words",
				   s->name, lineno, p);
		}
		if (!s->nsteps)
			return say(err, errlen, -EINVAL, "%s:%u: \"loop\" with no step before it",
				   s->name, lineno);
		if (period == 0)
			return say(err, errlen, -EINVAL,
				   "%s:%u: \"loop\": the period is 0 (give one: TIME loop)", s->name,
				   lineno);
		s->loop = true;
		s->period_ns = period;
		return 0;
	}
	uint64_t t;
	if (parse_time(w, &t))
		return say(err, errlen, -EINVAL,
			   "%s:%u: \"%s\" is not a time (a number with s, ms, us or ns)", s->name,
			   lineno, w);
	if (t < last)
		return say(err, errlen, -EINVAL, "%s:%u: \"%s\" is before the step before it",
			   s->name, lineno, w);
	char msg[SCHED_ERRLEN], devname[64];
	int rc = check_verb(p, msg, sizeof(msg));
	if (!rc)
		rc = check_words(scratch, p, tc_flags(s), devname, sizeof(devname), msg,
				 sizeof(msg));
	if (rc)
		return say(err, errlen, rc, "%s:%u: %s", s->name, lineno, msg);
	if (s->confine) {
		/* as pw_tc_dev() will run it: any name but another device's */
		if (strcmp(devname, s->confine) && pw_netdev_get(s->rt, devname))
			return say(err, errlen, -EPERM,
				   "%s:%u: Error: dev \"%s\" is another device: this schedule acts "
				   "on %s only.", s->name, lineno, devname, s->confine);
	} else if (!pw_netdev_get(s->rt, devname))
		return say(err, errlen, -ENODEV, "%s:%u: Cannot find device \"%s\"", s->name,
			   lineno, devname);
	if (dev && !s->confine && strcmp(dev, devname))
		return say(err, errlen, -EINVAL, "%s:%u: \"%s\": this schedule is for dev %s",
			   s->name, lineno, devname, dev);
	if (s->nsteps == *cap) {
		unsigned nc = *cap ? *cap * 2 : 16;
		struct sched_step *ns = realloc(s->steps, nc * sizeof(*ns));
		if (!ns)
			return say(err, errlen, -ENOMEM, "%s: out of memory", s->name);
		s->steps = ns;
		*cap = nc;
	}
	struct sched_step *st = &s->steps[s->nsteps];
	memset(st, 0, sizeof(*st));
	st->t_ns = t;
	st->line = lineno;
	st->cmd = strdup(p);
	if (!st->cmd)
		return say(err, errlen, -ENOMEM, "%s: out of memory", s->name);
	s->nsteps++;
	return 0;
}

/* The lines of @text as tc -batch reads them, each to parse_line(). */
static int parse_text(struct pw_tc_schedule *s, struct pw_runtime *scratch, const char *dev,
		      const char *text, char *err, size_t errlen)
{
	unsigned cap = 0;
	struct pw__tc_lines it = {.p = text, .join = 0};
	int rc = 0, more;
	while ((more = pw__tc_lines_next(&it)) > 0) {
		if (it.open) {
			rc = say(err, errlen, -EINVAL, "%s:%u: missing continuation line", s->name,
				 it.lineno);
			break;
		}
		rc = parse_line(s, scratch, dev, it.cmd, it.first, &cap, err, errlen);
		if (rc)
			break;
	}
	if (more < 0)
		rc = say(err, errlen, -ENOMEM, "%s: out of memory", s->name);
	pw__tc_lines_free(&it);
	if (!rc && !s->nsteps)
		rc = say(err, errlen, -EINVAL, "%s: no step", s->name);
	return rc;
}

/* ------------------------------------------------------------ running */

static uint64_t add_clamp(uint64_t a, uint64_t b)
{
	return a > PW_KTIME_MAX - b ? PW_KTIME_MAX : a + b;
}

/* How many firings a start gives. */
static uint64_t firings(const struct pw_tc_schedule *s)
{
	return s->loop ? UINT64_MAX : s->nsteps;
}

/* When firing @g comes due. */
static uint64_t due_ns(const struct pw_tc_schedule *s, uint64_t g)
{
	uint64_t cycle = g / s->nsteps, off = s->steps[g % s->nsteps].t_ns;
	if (cycle) {
		uint64_t lap = cycle > PW_KTIME_MAX / s->period_ns ? PW_KTIME_MAX
								   : cycle * s->period_ns;
		off = add_clamp(off, lap);
	}
	return add_clamp(s->start_ns, off);
}

/* Run firing @g through tc and count it.  No lock held. */
static void run_step(struct pw_tc_schedule *s, uint64_t g)
{
	struct sched_step *st = &s->steps[g % s->nsteps];
	char msg[SCHED_ERRLEN];
	int rc = s->confine ? pw_tc_dev(s->rt, s->confine, st->cmd, tc_flags(s), NULL, 0, msg,
					sizeof(msg))
			    : pw_tc(s->rt, st->cmd, tc_flags(s), NULL, 0, msg, sizeof(msg));
	uint64_t now = pw_now_ns(s->trt);
	pthread_mutex_lock(&s->lock);
	if (rc == 0) {
		s->applied++;
		st->applied++;
		s->step = (int)(g % s->nsteps);
		s->step_g = g;
		s->since_ns = due_ns(s, g);
		s->applied_ns = now;
	} else {
		s->failed++;
		st->failed++;
		s->failed_step = (int)(g % s->nsteps);
		s->failed_line = st->line;
		s->failed_rc = rc;
		size_t n = strlen(msg);
		while (n && msg[n - 1] == '\n') /* tc's lines, without the last newline */
			msg[--n] = '\0';
		copy_str(s->failed_msg, sizeof(s->failed_msg), n ? msg : "(no message)");
	}
	s->done++;
	pthread_cond_broadcast(&s->done_cv);
	pthread_mutex_unlock(&s->lock);
}

static enum pw_hrtimer_restart sched_timer(struct pw_hrtimer *t)
{
	struct pw_tc_schedule *s = (struct pw_tc_schedule *)((char *)t -
		offsetof(struct pw_tc_schedule, timer));
	uint64_t now = pw_now_ns(s->trt);
	pthread_mutex_lock(&s->lock);
	if (!s->running) {
		pthread_mutex_unlock(&s->lock);
		return PW_HRTIMER_NORESTART;
	}
	uint64_t from = s->due, total = firings(s);
	while (s->due < total && due_ns(s, s->due) <= now)
		s->due++;
	uint64_t to = s->due;
	bool more = s->due < total;
	uint64_t next = more ? due_ns(s, s->due) : 0;
	if (!inline_steps(s))
		pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (inline_steps(s))
		for (uint64_t g = from; g < to; g++)
			run_step(s, g);
	if (more && pw_hrtimer_start(t, next, PW_HRTIMER_MODE_ABS)) {
		/* -ENOMEM growing the CPU's queue: nothing would wake the
		 * schedule again; say so where status shows it */
		pthread_mutex_lock(&s->lock);
		s->running = false;
		s->quit = true; /* the thread runs what was due, and leaves */
		pthread_cond_signal(&s->wake);
		s->failed_rc = -ENOMEM;
		copy_str(s->failed_msg, sizeof(s->failed_msg),
			 "the timer could not be armed: the schedule stopped");
		pthread_mutex_unlock(&s->lock);
	}
	return PW_HRTIMER_NORESTART; /* re-armed above, or done */
}

static void *sched_thread(void *arg)
{
	struct pw_tc_schedule *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->done == s->due && !s->quit)
			pthread_cond_wait(&s->wake, &s->lock);
		if (s->done == s->due)
			break; /* quit, and what was due has run */
		uint64_t g = s->done;
		pthread_mutex_unlock(&s->lock);
		run_step(s, g);
		pthread_mutex_lock(&s->lock);
	}
	pthread_cond_broadcast(&s->done_cv);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* --------------------------------------------------------------- API */

int pw_tc_schedule_load(struct pw_runtime *rt, const char *text, const char *name,
			const char *dev, unsigned flags, struct pw_tc_schedule **out, char *err,
			size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!rt || !text || !out ||
	    (flags & ~(PW_TC_SCHED_INLINE | PW_TC_SCHED_NO_FILES | PW_TC_SCHED_CONFINE)) ||
	    ((flags & PW_TC_SCHED_CONFINE) && (!dev || !*dev)))
		return say(err, errlen, -EINVAL, "invalid argument");
	struct pw_tc_schedule *s = calloc(1, sizeof(*s));
	if (!s)
		return say(err, errlen, -ENOMEM, "out of memory");
	s->rt = rt;
	s->trt = rt;
	s->flags = flags;
	s->step = -1;
	s->failed_step = -1;
	s->name = strdup(name ? name : "schedule");
	int rc = -ENOMEM;
	if ((flags & PW_TC_SCHED_CONFINE) && !(s->confine = strdup(dev))) {
		say(err, errlen, rc, "out of memory");
		goto fail_nolock;
	}
	if (s->confine && !pw_netdev_get(rt, s->confine)) {
		rc = say(err, errlen, -ENODEV, "%s: Cannot find device \"%s\"",
			 s->name ? s->name : "schedule", s->confine);
		goto fail_nolock;
	}
	if (!s->name) {
		say(err, errlen, rc, "out of memory");
		goto fail_nolock;
	}
	/* the scratch runtime tc's parser runs on (no device, no thread) */
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	struct pw_runtime *scratch = NULL;
	rc = pw_runtime_create(&cfg, &scratch);
	if (rc) {
		say(err, errlen, rc, "%s: cannot check the commands: %s", s->name, strerror(-rc));
		goto fail_nolock;
	}
	rc = parse_text(s, scratch, dev, text, err, errlen);
	pw_runtime_destroy(scratch);
	if (rc)
		goto fail_nolock;
	if (pthread_mutex_init(&s->lock, NULL)) {
		rc = say(err, errlen, -ENOMEM, "out of memory");
		goto fail_nolock;
	}
	if (pthread_cond_init(&s->wake, NULL)) {
		rc = say(err, errlen, -ENOMEM, "out of memory");
		goto fail_mutex;
	}
	if (pthread_cond_init(&s->done_cv, NULL)) {
		rc = say(err, errlen, -ENOMEM, "out of memory");
		pthread_cond_destroy(&s->wake);
		goto fail_mutex;
	}
	*out = s;
	return 0;
fail_mutex:
	pthread_mutex_destroy(&s->lock);
fail_nolock:
	for (unsigned i = 0; i < s->nsteps; i++)
		free(s->steps[i].cmd);
	free(s->steps);
	free(s->name);
	free(s->confine);
	free(s);
	return rc;
}

int pw_tc_schedule_set_timer_rt(struct pw_tc_schedule *s, struct pw_runtime *trt)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	int busy = s->running || s->has_thread;
	if (!busy)
		s->trt = trt ? trt : s->rt;
	pthread_mutex_unlock(&s->lock);
	return busy ? -EBUSY : 0;
}

int pw_tc_schedule_start(struct pw_tc_schedule *s)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (s->running || s->has_thread) {
		pthread_mutex_unlock(&s->lock);
		return -EALREADY;
	}
	s->start_ns = pw_now_ns(s->trt);
	s->due = s->done = s->applied = s->failed = 0;
	s->step = -1;
	s->step_g = 0;
	s->since_ns = s->applied_ns = 0;
	s->failed_step = -1;
	s->failed_line = 0;
	s->failed_rc = 0;
	s->failed_msg[0] = '\0';
	for (unsigned i = 0; i < s->nsteps; i++)
		s->steps[i].applied = s->steps[i].failed = 0;
	s->quit = false;
	s->running = true;
	uint64_t first = due_ns(s, 0);
	pthread_mutex_unlock(&s->lock);
	int rc = 0;
	if (!inline_steps(s)) {
		int e = pthread_create(&s->thread, NULL, sched_thread, s);
		if (e) {
			rc = -e;
			goto undo;
		}
		pthread_mutex_lock(&s->lock);
		s->has_thread = true;
		pthread_mutex_unlock(&s->lock);
	}
	rc = pw_hrtimer_setup(s->trt, &s->timer, sched_timer, CLOCK_MONOTONIC,
			      PW_HRTIMER_MODE_ABS);
	if (!rc)
		rc = pw_hrtimer_start(&s->timer, first, PW_HRTIMER_MODE_ABS);
	if (!rc)
		return 0;
	pw_tc_schedule_stop(s);
	return rc;
undo:
	pthread_mutex_lock(&s->lock);
	s->running = false;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int pw_tc_schedule_stop(struct pw_tc_schedule *s)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	bool was = s->running, th = s->has_thread;
	s->running = false;
	s->quit = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (was) {
		int rc = pw_hrtimer_cancel(&s->timer);
		if (rc == -EDEADLK) {
			pthread_mutex_lock(&s->lock);
			s->running = true;
			s->quit = false;
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
	}
	if (th) {
		pthread_join(s->thread, NULL);
		pthread_mutex_lock(&s->lock);
		s->has_thread = false;
		pthread_cond_broadcast(&s->done_cv);
		pthread_mutex_unlock(&s->lock);
	}
	return 0;
}

int pw_tc_schedule_sync(struct pw_tc_schedule *s)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	uint64_t want = s->due;
	while (s->done < want && (s->running || s->has_thread))
		pthread_cond_wait(&s->done_cv, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void pw_tc_schedule_free(struct pw_tc_schedule *s)
{
	if (!s)
		return;
	pw_tc_schedule_stop(s);
	pthread_cond_destroy(&s->done_cv);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	for (unsigned i = 0; i < s->nsteps; i++)
		free(s->steps[i].cmd);
	free(s->steps);
	free(s->name);
	free(s->confine);
	free(s);
}

int pw_tc_schedule_status(struct pw_tc_schedule *s, struct pw_tc_schedule_status *st)
{
	if (!s || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&s->lock);
	st->running = s->running;
	st->finished = !s->loop && s->done == s->nsteps;
	st->nsteps = s->nsteps;
	st->period_ns = s->loop ? s->period_ns : 0;
	st->start_ns = s->start_ns;
	st->step = s->step;
	if (s->step >= 0) {
		st->line = s->steps[s->step].line;
		st->cmd = s->steps[s->step].cmd;
		st->cycle = s->step_g / s->nsteps;
		st->since_ns = s->since_ns;
		st->applied_ns = s->applied_ns;
	}
	st->due = s->due;
	st->applied = s->applied;
	st->failed = s->failed;
	st->failed_step = s->failed_step;
	st->failed_line = s->failed_line;
	st->failed_rc = s->failed_rc;
	memcpy(st->failed_msg, s->failed_msg, sizeof(st->failed_msg));
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int pw_tc_schedule_step(struct pw_tc_schedule *s, unsigned i, struct pw_tc_schedule_step *st)
{
	if (!s || !st)
		return -EINVAL;
	if (i >= s->nsteps)
		return -ERANGE;
	pthread_mutex_lock(&s->lock);
	st->time_ns = s->steps[i].t_ns;
	st->line = s->steps[i].line;
	st->cmd = s->steps[i].cmd;
	st->applied = s->steps[i].applied;
	st->failed = s->steps[i].failed;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int pw_tc_schedule_format(struct pw_tc_schedule *s, char *buf, size_t len)
{
	struct pw_tc_schedule_status st;
	if (!s || (!buf && len))
		return -EINVAL;
	pw_tc_schedule_status(s, &st);
	char head[128], fail[400] = "";
	if (st.step >= 0)
		snprintf(head, sizeof(head), "step %d/%u (line %u) since %.6fs, cycle %llu: ",
			 st.step + 1, st.nsteps, st.line, (double)(st.since_ns - st.start_ns) / 1e9,
			 (unsigned long long)st.cycle);
	else
		snprintf(head, sizeof(head), "no step yet (%u steps): ", st.nsteps);
	if (st.failed_rc) {
		/* the message on one line */
		char m[sizeof(st.failed_msg)];
		copy_str(m, sizeof(m), st.failed_msg);
		for (char *c = m; *c; c++)
			if (*c == '\n')
				*c = ' ';
		snprintf(fail, sizeof(fail), "; last failure: line %u: %s", st.failed_line, m);
	}
	int n = snprintf(buf, len, "schedule %s: %s%s; applied %llu, failed %llu%s", s->name,
			 head, st.step >= 0 ? st.cmd : "-", (unsigned long long)st.applied,
			 (unsigned long long)st.failed, fail);
	return n < 0 ? -EINVAL : n;
}
