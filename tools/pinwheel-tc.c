/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-tc: tc commands against pinwheel's packet-scheduling layer.
 *
 *   pinwheel-tc [-s] [-j] [-p] [-d] [-force] [-dev NAME[:TXQUEUES]]... -batch FILE|-
 *   pinwheel-tc [OPTIONS] OBJECT COMMAND ...       (one command)
 *   pinwheel-tc [-A] [-check] [-load PPS [-size BYTES] [-for TIME] [-real]] ...
 *   pinwheel-tc [-s] -schedule FILE -load PPS [-for TIME] [-real] ...
 *
 * Accuracy (not iproute2's; docs/design/net.md "Accuracy"): -A keeps each
 * qdisc's achieved figures (pw_netdev_accuracy_enable()) and adds them to
 * qdisc show, after the -s lines, in text and JSON; -check judges them
 * after the commands (and the load), prints `check dev NAME: pass|fail|not
 * judged` and each failure (on stderr under -j) and exits 3 when a
 * qdisc's achieved left its configured (the metric: <pinwheel/net.h>).  -load offers PPS
 * packets a second of -size bytes (default 1000) to every device for
 * -for (default 1s) after the commands, then waits until every packet
 * came back, and prints `qdisc show` with the figures (with -A): on the
 * simulated clock by default (what the configuration gives on a punctual
 * host: deterministic), on this machine's clock with -real (one worker
 * thread; what this host achieves now: a loaded machine fails -check).
 *
 * The devices exist only inside this process: each -dev declares one
 * (default: eth0 with 1 TX queue), with the kernel's default qdiscs
 * (pfifo_fast on one queue, mq of pfifo_fast on several), on a runtime on
 * the simulated clock (no threads; no packets flow).  Commands are parsed
 * and applied by pw_tc(), the library's parser, and print what iproute2's
 * tc prints: show output on stdout, errors on stderr, "Command failed
 * FILE:LINE" after a failed batch line, the batch stopping at the first
 * failure unless -force.  Exit status: 0 if every command succeeded, 1
 * otherwise, 2 for a bad command line of pinwheel-tc itself, 3 when
 * -check found a qdisc whose achieved left its configured.
 *
 * Schedules (a pinwheel extension; docs/relay.md "Links that change"):
 * -schedule FILE is a file of timed tc commands, `TIME COMMAND` and an
 * optional last line `loop`, each command naming its device; every line
 * is checked (pw_tc_schedule_load()) before the commands run, a bad one
 * ends the run with "FILE:LINE: ..." and exit 1.  It starts when the
 * commands are done and runs during -load on the load's clock: on the
 * simulated clock its steps run inside the timer's callback
 * (PW_TC_SCHED_INLINE), at their exact times between the load's packets;
 * with -real on the schedule's own thread.  After the load each device is
 * shown (`qdisc show`, with -s its counters), and after each device that
 * a step names, one line iproute2 never prints: `schedule FILE dev NAME:
 * step I of N (line L) in force, looped C times; applied A, failed F` (a
 * JSON object {"schedule":{...}} under -j).  Without -load only the steps
 * at time 0 run (on the simulated clock, at once) and a note on stderr
 * says how many wait for -load: the schedule's later steps have no clock
 * to run on, and the commands' effect at time 0 is still worth showing.
 *
 * Batch lines as tc reads them: '#' starts a comment, a trailing '\'
 * joins the next line, a leading "tc" is allowed.
 * Threads: one (main); with -load -real, the runtime's worker too (the
 * packet pool's lock between them) and a -schedule's thread (tc's
 * configuration lock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

/* -load's packets: a pool (a free list under a lock: with -real the
 * worker hands packets back); every packet in the layer came from it. */
struct lpkt {
	struct pw_pkt pkt; /* first: a struct pw_pkt * is a struct lpkt * */
	struct lpkt *next;
};
static struct {
	pthread_mutex_t lock;
	struct lpkt *free;
	uint64_t out; /* in the layer */
} pool = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 };

static struct pw_pkt *pool_get(uint32_t len)
{
	pthread_mutex_lock(&pool.lock);
	struct lpkt *l = pool.free;
	if (l)
		pool.free = l->next;
	pthread_mutex_unlock(&pool.lock);
	if (!l && !(l = malloc(sizeof(*l))))
		return NULL;
	pthread_mutex_lock(&pool.lock);
	pool.out++;
	pthread_mutex_unlock(&pool.lock);
	pw_pkt_init(&l->pkt, NULL, len);
	return &l->pkt;
}

static void pool_put(struct pw_pkt *p)
{
	struct lpkt *l = (struct lpkt *)p;
	pthread_mutex_lock(&pool.lock);
	l->next = pool.free;
	pool.free = l;
	pool.out--;
	pthread_mutex_unlock(&pool.lock);
}

static uint64_t pool_out(void)
{
	pthread_mutex_lock(&pool.lock);
	uint64_t n = pool.out;
	pthread_mutex_unlock(&pool.lock);
	return n;
}

static void pool_free(void)
{
	while (pool.free) {
		struct lpkt *l = pool.free;
		pool.free = l->next;
		free(l);
	}
}

static int dev_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pkt, void *ctx)
{
	(void)dev, (void)txq, (void)ctx;
	pool_put(pkt);
	return PW_NETDEV_TX_OK;
}

static void dev_drop(struct pw_netdev *dev, struct pw_pkt *pkt, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)r, (void)ctx;
	pool_put(pkt);
}

static struct pw_pkt *dev_clone(struct pw_netdev *dev, const struct pw_pkt *pkt, void *ctx)
{
	(void)dev, (void)ctx;
	struct pw_pkt *c = pool_get(pkt->len);
	if (c)
		*c = *pkt;
	return c;
}

static const struct pw_netdev_ops dev_ops = { .xmit = dev_xmit, .drop = dev_drop,
					      .clone = dev_clone };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pinwheel-tc [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       pinwheel-tc [ OPTIONS ] -batch FILE|-\n"
		"where  OBJECT := { qdisc | class }\n"
		"       OPTIONS := { -s[tatistics] | -d[etails] | -j[son] | -p[retty] |\n"
		"                    -f[orce] | -dev NAME[:TXQUEUES] (repeatable; default eth0:1) |\n"
		"                    -A | -check | -load PPS [-size BYTES] [-for TIME] [-real] |\n"
		"                    -schedule FILE }\n"
		"Devices live in this process, on pinwheel's simulated clock (-real: this\n"
		"machine's).  -A: each qdisc's achieved beside its configured in show;\n"
		"-check: exit 3 when one left it; -load: offer PPS packets/s for TIME.\n"
		"-schedule: FILE's timed tc commands (TIME COMMAND, optional last line\n"
		"\"loop\") run from the end of the commands on the load's clock; after\n"
		"-load each device is shown with a \"schedule\" line (pinwheel's, not\n"
		"tc's).  Without -load only its time-0 steps run (no clock moves them on).\n");
}

/* One tc command: run it, print its output and errors.  0 or -errno. */
static int run_cmd(struct pw_runtime *rt, const char *cmd, unsigned flags)
{
	size_t cap = 1 << 16;
	char err[8192];
	for (;;) {
		char *out = malloc(cap);
		if (!out) {
			fprintf(stderr, "pinwheel-tc: out of memory\n");
			return -ENOMEM;
		}
		int rc = pw_tc(rt, cmd, flags, out, cap, err, sizeof(err));
		if (rc == -ENOSPC && !err[0] && cap < (1u << 30)) {
			free(out);
			cap *= 4; /* a show that did not fit: shows change nothing */
			continue;
		}
		fputs(out, stdout);
		fflush(stdout);
		free(out);
		if (err[0])
			fputs(err, stderr);
		return rc;
	}
}

/* A batch line, joined with its '\' continuations; NULL at EOF. */
static char *get_cmdline(FILE *f, size_t *lineno)
{
	char *line = NULL, *buf = NULL;
	size_t cap = 0, len = 0;
	ssize_t n;
	while ((n = getline(&buf, &cap, f)) >= 0) {
		(*lineno)++;
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = '\0';
		char *hash = strchr(buf, '#');
		if (hash) {
			*hash = '\0';
			n = hash - buf;
		}
		bool cont = n > 0 && buf[n - 1] == '\\';
		if (cont)
			buf[--n] = '\0';
		char *nl = realloc(line, len + (size_t)n + 2);
		if (!nl) {
			free(line);
			free(buf);
			return NULL;
		}
		line = nl;
		memcpy(line + len, buf, (size_t)n);
		len += (size_t)n;
		line[len] = '\0';
		if (!cont)
			break;
		line[len++] = ' ';
		line[len] = '\0';
	}
	free(buf);
	return line;
}

static int add_dev(struct pw_runtime *rt, const char *spec)
{
	char name[64];
	unsigned long n = 1;
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (nlen == 0 || nlen >= sizeof(name)) {
		fprintf(stderr, "pinwheel-tc: bad device \"%s\"\n", spec);
		return -1;
	}
	memcpy(name, spec, nlen);
	name[nlen] = '\0';
	if (colon) {
		char *end;
		errno = 0;
		n = strtoul(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || n == 0 || n > PW_MAX_TXQ) {
			fprintf(stderr, "pinwheel-tc: bad TX queue count in \"%s\" (1..%u)\n", spec,
				PW_MAX_TXQ);
			return -1;
		}
	}
	struct pw_netdev *dev;
	int rc = pw_netdev_create(rt, name, (unsigned)n, &dev_ops, NULL, &dev);
	if (rc) {
		fprintf(stderr, "pinwheel-tc: cannot create device \"%s\": %s\n", name,
			rc == -EEXIST ? "it exists already" : strerror(-rc));
		return -1;
	}
	return 0;
}

/* -load: what to offer after the commands. */
struct load {
	double pps;
	uint32_t size;
	uint64_t for_ns;
	bool real;
};

/* "1s", "500ms", "2.5s", "100us" (no unit: seconds) into ns; -1 if bad. */
static int parse_dur(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	double mul = 1e9;
	if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (v * mul > 3600e9 || v * mul < 1)
		return -1;
	*ns = (uint64_t)(v * mul);
	return 0;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Offer @ld to every device of @rt (pw_netdev_get() of @names), then wait
 * until every packet came back (at most 60 s more).  0 or -1. */
static int run_load(struct pw_runtime *rt, const char *const *names, unsigned n,
		    const struct load *ld)
{
	struct pw_netdev *devs[64];
	for (unsigned i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(names[i], ":"), names[i]);
		devs[i] = pw_netdev_get(rt, name);
		if (!devs[i])
			return -1;
	}
	uint64_t count = (uint64_t)(ld->pps * (double)ld->for_ns / 1e9), nomem = 0;
	uint64_t t0 = pw_now_ns(rt);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t t = t0 + (uint64_t)((double)i * 1e9 / ld->pps);
		if (ld->real)
			sleep_until(t);
		else if (t > pw_now_ns(rt))
			pw_sim_advance(rt, t - pw_now_ns(rt));
		for (unsigned d = 0; d < n; d++) {
			struct pw_pkt *p = pool_get(ld->size);
			if (!p) {
				nomem++;
				continue;
			}
			p->hash = (uint32_t)(i * 2654435761u + d);
			pw_dev_queue_xmit(devs[d], p);
		}
	}
	for (unsigned k = 0; pool_out() && k < 6000; k++) {
		if (ld->real)
			sleep_until(pw_now_ns(rt) + 10000000);
		else
			pw_sim_advance(rt, 10000000);
	}
	if (nomem)
		fprintf(stderr, "pinwheel-tc: -load: %" PRIu64 " packets not sent (out of memory)\n",
			nomem);
	if (pool_out()) {
		fprintf(stderr, "pinwheel-tc: -load: %" PRIu64 " packets still queued 60s after it\n",
			pool_out());
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ -schedule */

/* The whole of @path, NUL-terminated (a schedule is small text); NULL with
 * a message naming the file. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "pinwheel-tc: -schedule: cannot open \"%s\": %s\n", path,
			strerror(errno));
		return NULL;
	}
	size_t len = 0, cap = 4096;
	char *t = malloc(cap);
	while (t) {
		len += fread(t + len, 1, cap - len - 1, f);
		if (ferror(f) || len < cap - 1)
			break;
		char *nt = cap < (64u << 20) ? realloc(t, cap * 2) : NULL;
		if (!nt) {
			free(t);
			t = NULL;
			break;
		}
		t = nt;
		cap *= 2;
	}
	int e = ferror(f) ? errno : 0;
	bool bad = !t || e || memchr(t, '\0', len);
	fclose(f);
	if (bad) {
		fprintf(stderr, "pinwheel-tc: -schedule: cannot read \"%s\": %s\n", path,
			!t ? "out of memory or over 64 MiB" : e ? strerror(e) : "not a text file");
		free(t);
		return NULL;
	}
	t[len] = '\0';
	return t;
}

/* Whether @cmd's `dev NAME` is @dev. */
static bool names_dev(const char *cmd, const char *dev)
{
	size_t dl = strlen(dev);
	for (const char *w = cmd; (w = strstr(w, "dev")); w += 3) {
		if (w != cmd && w[-1] != ' ' && w[-1] != '\t')
			continue;
		const char *n = w + 3;
		if (*n != ' ' && *n != '\t')
			continue;
		n += strspn(n, " \t");
		if (!strncmp(n, dev, dl) && (!n[dl] || n[dl] == ' ' || n[dl] == '\t'))
			return true;
	}
	return false;
}

/* The step in force on @dev: the last step naming it that tc accepted, at
 * or before the schedule's step in force (in this pass of a loop, or the
 * one before).  Return: its index; -1 none yet; -2 no step names @dev. */
static int dev_step(struct pw_tc_schedule *s, const struct pw_tc_schedule_status *st,
		    const char *dev)
{
	int any = -2;
	struct pw_tc_schedule_step step;
	for (unsigned i = 0; i < st->nsteps; i++)
		if (!pw_tc_schedule_step(s, i, &step) && names_dev(step.cmd, dev))
			any = -1;
	if (any == -2 || st->step < 0)
		return any;
	for (int k = 0; k < (int)st->nsteps; k++) {
		int i = st->step - k;
		if (i < 0) {
			if (!st->cycle)
				break;
			i += (int)st->nsteps;
		}
		if (!pw_tc_schedule_step(s, (unsigned)i, &step) && step.applied &&
		    names_dev(step.cmd, dev))
			return i;
	}
	return -1;
}

/* After a device's show: where @s stands for @dev (nothing when no step
 * names it), a line iproute2 never prints, or a JSON object under -j. */
static void print_sched(struct pw_tc_schedule *s, const char *file, const char *dev,
			unsigned flags)
{
	struct pw_tc_schedule_status st;
	if (pw_tc_schedule_status(s, &st))
		return;
	int i = dev_step(s, &st, dev);
	if (i == -2)
		return;
	struct pw_tc_schedule_step step = { 0 };
	if (i >= 0)
		pw_tc_schedule_step(s, (unsigned)i, &step);
	if (flags & PW_TC_JSON) {
		printf("{\"schedule\":{\"file\":\"");
		for (const char *c = file; *c; c++) {
			if (*c == '"' || *c == '\\')
				putchar('\\');
			putchar((unsigned char)*c < 0x20 ? '?' : *c);
		}
		printf("\",\"dev\":\"%s\",\"step\":%d,\"steps\":%u,\"line\":%u,"
		       "\"cycle\":%" PRIu64 ",\"applied\":%" PRIu64 ",\"failed\":%" PRIu64 "}}\n",
		       dev, i + 1, st.nsteps, i >= 0 ? step.line : 0, st.cycle, st.applied,
		       st.failed);
	} else if (i >= 0) {
		printf("schedule %s dev %s: step %d of %u (line %u) in force, looped %" PRIu64
		       " times; applied %" PRIu64 ", failed %" PRIu64 "\n", file, dev, i + 1,
		       st.nsteps, step.line, st.cycle, st.applied, st.failed);
	} else {
		printf("schedule %s dev %s: no step in force yet, looped %" PRIu64
		       " times; applied %" PRIu64 ", failed %" PRIu64 "\n", file, dev, st.cycle,
		       st.applied, st.failed);
	}
	fflush(stdout);
}

/* A step tc refused while the schedule ran: say which.  Return: 1 if any. */
static int sched_failed(struct pw_tc_schedule *s, const char *file)
{
	struct pw_tc_schedule_status st;
	if (pw_tc_schedule_status(s, &st) || !st.failed)
		return 0;
	fprintf(stderr, "pinwheel-tc: -schedule %s:%u: refused: %s (%" PRIu64 " refusals in all)\n",
		file, st.failed_line, st.failed_msg, st.failed);
	return 1;
}

/* `qdisc show dev NAME` of every device, each followed by @sched's line
 * (NULL: none).  Return: 0; 1 if a show failed. */
static int show_devs(struct pw_runtime *rt, const char *const *devs, unsigned ndevs,
		     unsigned flags, struct pw_tc_schedule *sched, const char *sched_file)
{
	int status = 0;
	for (unsigned i = 0; i < ndevs; i++) {
		char cmd[128], name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(devs[i], ":"), devs[i]);
		snprintf(cmd, sizeof(cmd), "qdisc show dev %s", name);
		if (run_cmd(rt, cmd, flags))
			status = 1;
		if (sched)
			print_sched(sched, sched_file, name, flags);
	}
	return status;
}

static int matches(const char *arg, const char *full)
{
	size_t n = strlen(arg);
	return n > 0 && n <= strlen(full) && !strncmp(arg, full, n);
}

int main(int argc, char **argv)
{
	unsigned flags = 0;
	int force = 0;
	const char *batch = NULL, *sched_file = NULL;
	struct pw_tc_schedule *sched = NULL;
	const char *devs[64];
	unsigned ndevs = 0;
	bool acc = false, check = false, load = false;
	struct load ld = { 0, 1000, 1000000000u, false };

	argc--, argv++;
	while (argc > 0 && argv[0][0] == '-') {
		const char *o = argv[0] + 1;
		if (*o == '-')
			o++;
		if (!strcmp(o, "dev")) {
			if (argc < 2 || ndevs == 64) {
				usage(stderr);
				return 2;
			}
			devs[ndevs++] = argv[1];
			argc--, argv++;
		} else if (!strcmp(o, "batch") || !strcmp(o, "b")) {
			if (argc < 2) {
				usage(stderr);
				return 2;
			}
			batch = argv[1];
			argc--, argv++;
		} else if (!strcmp(o, "schedule")) {
			if (argc < 2 || sched_file) {
				fprintf(stderr, "pinwheel-tc: %s takes one FILE, once\n", argv[0]);
				return 2;
			}
			sched_file = argv[1];
			argc--, argv++;
		} else if (!strcmp(o, "A") || !strcmp(o, "accuracy")) {
			flags |= PW_TC_ACCURACY;
			acc = true;
		} else if (!strcmp(o, "check")) {
			acc = check = true;
		} else if (!strcmp(o, "real")) {
			ld.real = true;
		} else if (!strcmp(o, "load") || !strcmp(o, "size") || !strcmp(o, "for")) {
			char *end = NULL;
			bool bad = argc < 2;
			if (!bad && !strcmp(o, "load")) {
				ld.pps = strtod(argv[1], &end);
				bad = *end || !(ld.pps > 0 && ld.pps <= 1e7);
				load = true;
			} else if (!bad && !strcmp(o, "size")) {
				unsigned long v = strtoul(argv[1], &end, 10);
				bad = *end || v == 0 || v > 65535;
				ld.size = (uint32_t)v;
			} else if (!bad) {
				bad = parse_dur(argv[1], &ld.for_ns) != 0;
			}
			if (bad) {
				fprintf(stderr, "pinwheel-tc: bad value \"%s\" for %s\n",
					argc < 2 ? "" : argv[1], argv[0]);
				return 2;
			}
			argc--, argv++;
		} else if (matches(o, "statistics")) {
			flags |= PW_TC_STATS;
		} else if (matches(o, "details")) {
			flags |= PW_TC_DETAILS;
		} else if (matches(o, "json")) {
			flags |= PW_TC_JSON;
		} else if (matches(o, "pretty")) {
			/* accepted; output is compact JSON as tc without -p */
		} else if (matches(o, "force")) {
			force = 1;
		} else if (matches(o, "help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "Option \"%s\" is unknown, try \"pinwheel-tc -help\".\n", argv[0]);
			return 2;
		}
		argc--, argv++;
	}
	if (!batch && argc == 0) {
		usage(stderr);
		return 2;
	}
	if (load && ld.pps * ((double)ld.for_ns / 1e9) > 1e8) {
		fprintf(stderr, "pinwheel-tc: -load %g for %gs is over 1e8 packets\n", ld.pps,
			(double)ld.for_ns / 1e9);
		return 2;
	}

	if (sched_file && ld.real && !load) {
		fprintf(stderr, "pinwheel-tc: -schedule with -real needs -load (the clock that"
			" runs it)\n");
		return 2;
	}

	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = ld.real ? PW_CLOCK_MONOTONIC : PW_CLOCK_SIM;
	struct pw_runtime *rt;
	int rc = pw_runtime_create(&cfg, &rt);
	if (rc) {
		fprintf(stderr, "pinwheel-tc: cannot create the runtime: %s\n", strerror(-rc));
		return 2;
	}
	int status = 0;
	if (ndevs == 0)
		devs[ndevs++] = "eth0";
	for (unsigned i = 0; i < ndevs; i++)
		if (add_dev(rt, devs[i])) {
			pw_runtime_destroy(rt);
			return 2;
		}
	/* accuracy: every device's qdiscs, and those the commands create */
	for (unsigned i = 0; acc && i < ndevs; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(devs[i], ":"), devs[i]);
		struct pw_netdev *d = pw_netdev_get(rt, name);
		if (!d || pw_netdev_accuracy_enable(d, 1)) {
			fprintf(stderr, "pinwheel-tc: cannot keep accuracy on \"%s\"\n", name);
			pw_runtime_destroy(rt);
			return 2;
		}
	}

	/* the schedule: every line checked before any command runs */
	if (sched_file) {
		char *text = read_text(sched_file), err[1024];
		rc = text ? pw_tc_schedule_load(rt, text, sched_file, NULL,
						ld.real ? 0 : PW_TC_SCHED_INLINE, &sched, err,
						sizeof(err)) : -EIO;
		free(text);
		if (rc) {
			if (rc != -EIO)
				fprintf(stderr, "pinwheel-tc: -schedule %s\n", err);
			pw_runtime_destroy(rt);
			return 1;
		}
	}

	if (!batch) {
		size_t len = 1;
		for (int i = 0; i < argc; i++)
			len += strlen(argv[i]) + 3;
		char *cmd = malloc(len);
		if (!cmd) {
			pw_tc_schedule_free(sched);
			pw_runtime_destroy(rt);
			return 2;
		}
		cmd[0] = '\0';
		for (int i = 0; i < argc; i++) {
			/* quote words with spaces so they stay one word */
			bool q = strpbrk(argv[i], " \t\r\n") != NULL;
			if (i)
				strcat(cmd, " ");
			if (q)
				strcat(cmd, "\"");
			strcat(cmd, argv[i]);
			if (q)
				strcat(cmd, "\"");
		}
		status = run_cmd(rt, cmd, flags) ? 1 : 0;
		free(cmd);
	} else {
		FILE *f = strcmp(batch, "-") ? fopen(batch, "r") : stdin;
		if (!f) {
			fprintf(stderr, "Cannot open file \"%s\" for reading: %s\n", batch,
				strerror(errno));
			pw_tc_schedule_free(sched);
			pw_runtime_destroy(rt);
			return 1;
		}
		size_t lineno = 0;
		char *line;
		while ((line = get_cmdline(f, &lineno))) {
			rc = run_cmd(rt, line, flags);
			free(line);
			if (rc) {
				fprintf(stderr, "Command failed %s:%zu\n", batch, lineno);
				status = 1;
				if (!force)
					break;
			}
		}
		if (f != stdin)
			fclose(f);
	}
	if (sched && !load && status == 0) {
		/* no load, no clock moving: the steps at time 0 only */
		rc = pw_tc_schedule_start(sched);
		if (!rc)
			rc = pw_sim_advance(rt, 0);
		pw_tc_schedule_stop(sched);
		struct pw_tc_schedule_status st;
		if (rc || pw_tc_schedule_status(sched, &st)) {
			fprintf(stderr, "pinwheel-tc: -schedule %s: %s\n", sched_file,
				strerror(rc ? -rc : EINVAL));
			status = 1;
		} else {
			if (sched_failed(sched, sched_file))
				status = 1;
			if (st.due < st.nsteps)
				fprintf(stderr, "pinwheel-tc: -schedule %s: %" PRIu64 " of %u steps "
					"applied (those at time 0); the rest need -load\n", sched_file,
					st.applied, st.nsteps);
			if (show_devs(rt, devs, ndevs, flags, sched, sched_file))
				status = 1;
		}
	}
	if (load && status == 0) {
		rc = ld.real ? pw_runtime_start(rt) : 0;
		/* time 0 of the schedule is the load's first packet */
		int srccode = rc || !sched ? 0 : pw_tc_schedule_start(sched);
		if (srccode)
			fprintf(stderr, "pinwheel-tc: -schedule %s: cannot start: %s\n", sched_file,
				strerror(-srccode));
		bool loaded = !rc && !srccode && !run_load(rt, devs, ndevs, &ld);
		if (!loaded) {
			fprintf(stderr, "pinwheel-tc: -load failed%s%s\n", rc ? ": " : "",
				rc ? strerror(-rc) : "");
			status = 1;
		}
		if (sched) {
			pw_tc_schedule_stop(sched);
			if (sched_failed(sched, sched_file))
				status = 1; /* the show still says where it stands */
		}
		if (ld.real)
			pw_runtime_stop(rt);
		if (loaded && ((flags & PW_TC_ACCURACY) || sched) &&
		    show_devs(rt, devs, ndevs, flags, sched, sched_file))
			status = 1;
	}
	if (check && status == 0) {
		for (unsigned i = 0; i < ndevs; i++) {
			char name[64], why[4096];
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(devs[i], ":"), devs[i]);
			int v = pw_netdev_accuracy_check(pw_netdev_get(rt, name), why, sizeof(why));
			/* stdout, but stderr under -j: stdout stays one JSON document */
			FILE *f = (flags & PW_TC_JSON) ? stderr : stdout;
			fprintf(f, "check dev %s: %s\n", name,
				v == PW_ACC_FAIL ? "fail" : v == PW_ACC_PASS ? "pass" :
				v == PW_ACC_NOT_JUDGED ? "not judged" : strerror(-v));
			if (v == PW_ACC_FAIL) {
				fprintf(f, "%s\n", why);
				status = 3;
			}
		}
	}
	pw_tc_schedule_free(sched);
	pw_runtime_destroy(rt);
	pool_free();
	return status;
}
