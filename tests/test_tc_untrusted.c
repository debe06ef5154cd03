/* SPDX-License-Identifier: MIT */
/*
 * tc's words from someone who does not own the host (pinwheel-netem's API
 * clients): PW_TC_NO_FILES, pw_tc_dev() and the schedule loader's
 * PW_TC_SCHED_NO_FILES / PW_TC_SCHED_CONFINE, decided on the words as tc's
 * quoting, continuation and prefix rules leave them; and, for the command
 * line's own files, a file opened once, a regular file only, its size
 * bounded (docs/security.md).
 *
 * Every open()/fopen() of the library is counted here (the test links with
 * --wrap for them, tests/CMakeLists.txt), so "no file is read" is checked
 * as the property it is, not by the message.  Simulated clock, one thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/net.h>
#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"

/* ------------------------------------------------ the opens, counted */

static unsigned n_open;

#define WRAP_OPEN(name)                                                                     \
	int __real_##name(const char *path, int flags, ...);                                \
	int __wrap_##name(const char *path, int flags, ...);                                \
	int __wrap_##name(const char *path, int flags, ...)                                 \
	{                                                                                   \
		n_open++;                                                                   \
		mode_t mode = 0;                                                            \
		if (flags & O_CREAT) {                                                      \
			va_list ap;                                                         \
			va_start(ap, flags);                                                \
			mode = (mode_t)va_arg(ap, int);                                     \
			va_end(ap);                                                         \
		}                                                                           \
		return __real_##name(path, flags, mode);                                    \
	}
WRAP_OPEN(open)
WRAP_OPEN(open64)

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode)
{
	n_open++;
	return __real_fopen(path, mode);
}

FILE *__real_fopen64(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode)
{
	n_open++;
	return __real_fopen64(path, mode);
}

/* ---------------------------------------------------------- devices */

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)p, (void)ctx;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)p, (void)r, (void)ctx;
}

static const struct pw_netdev_ops drv_ops = { .xmit = drv_xmit, .drop = drv_drop };

static char out[1 << 16], err[4096];

static struct pw_runtime *env(struct pw_netdev **a, struct pw_netdev **b)
{
	struct pw_runtime *rt = sim_create(1, 1000, 1000000000ull, 0);
	CHECK_EQ(pw_netdev_create(rt, "a", 1, &drv_ops, NULL, a), 0);
	CHECK_EQ(pw_netdev_create(rt, "b", 1, &drv_ops, NULL, b), 0);
	return rt;
}

/* "qdisc show dev @dev" as text. */
static const char *show(struct pw_runtime *rt, const char *dev)
{
	static char buf[4096];
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "qdisc show dev %s", dev);
	CHECK_EQ(pw_tc(rt, cmd, 0, buf, sizeof(buf), err, sizeof(err)), 0);
	return buf;
}

/* ------------------------------------------------------ no file read */

/* The words that would read a file, however tc lets them be spelt. */
static const char *const file_words[] = {
	"qdisc add dev a root netem delay 10ms 5ms distribution /etc/passwd",
	"qdisc add dev a root netem delay 10ms 5ms distribution ../../../../../../etc/passwd",
	"qdisc add dev a root netem delay 10ms 5ms distribution /nonexistent/nothing",
	"qdisc add dev a root netem delay 10ms 5ms distrib /etc/passwd",
	"qdisc add dev a root netem delay 10ms 5ms \"distribution\" '/etc/passwd'",
	"qdisc add dev a root netem delay 10ms 5ms distribution /dev/zero",
	"qdisc add dev a root netem delay 10ms 5ms distribution experimental",
	"qdisc add dev a root netem delay 10ms 5ms distribution passwd",
	"qdisc add dev a root netem slot distribution /etc/passwd 1ms 1ms",
	"qdisc add dev a root trace file /etc/passwd",
	"qdisc add dev a root \"trace\" \"file\" /etc/passwd",
	"qdisc add dev a root trace 'file' /nonexistent/nothing",
	"qdisc add dev a root tbf rate 1mbit burst 10k latency 1ms",
};

static void test_no_files(void)
{
	struct pw_netdev *a, *b;
	struct pw_runtime *rt = env(&a, &b);
	n_open = 0;
	static char first_dist[sizeof(err)];
	first_dist[0] = 0;
	for (size_t i = 0; i < sizeof(file_words) / sizeof(file_words[0]); i++) {
		const char *cmd = file_words[i];
		int rc = pw_tc(rt, cmd, PW_TC_NO_FILES, NULL, 0, err, sizeof(err));
		if (strstr(cmd, "tbf")) { /* no file word: as without the flag */
			CHECK_EQ(rc, 0);
			CHECK_EQ(pw_tc(rt, "qdisc del dev a root", 0, NULL, 0, err, sizeof(err)), 0);
			continue;
		}
		if (rc != -EPERM) {
			fprintf(stderr, "%s: %d %s\n", cmd, rc, err);
			abort();
		}
		/* nothing of a file said (a bare name is a table's name) */
		CHECK(!strstr(err, "root:") && !strstr(err, "No such"));
		CHECK(!strchr(cmd, '/') || (!strstr(err, "passwd") && !strstr(err, "nonexistent")));
		CHECK(strstr(err, "file"));
		/* the same words whether the path exists or not */
		if (strstr(cmd, "distribution /") || strstr(cmd, "distribution ../")) {
			if (!first_dist[0])
				snprintf(first_dist, sizeof(first_dist), "%s", err);
			CHECK(!strcmp(err, first_dist));
		}
		CHECK(!strstr(show(rt, "a"), "netem") && !strstr(show(rt, "a"), "trace"));
	}
	CHECK_EQ(n_open, 0);

	/* the built-in tables need no file */
	static const char *const builtin[] = { "normal", "pareto", "paretonormal" };
	for (size_t i = 0; i < 3; i++) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd),
			 "qdisc replace dev a root netem delay 10ms 5ms distribution %s", builtin[i]);
		CHECK_EQ(pw_tc(rt, cmd, PW_TC_NO_FILES, NULL, 0, err, sizeof(err)), 0);
	}
	CHECK_EQ(n_open, 0);
	CHECK(strstr(show(rt, "a"), "delay 10ms  5ms"));
	/* trace's inline text is not a file */
	CHECK_EQ(pw_tc(rt, "qdisc replace dev a root trace text 1,2,3", PW_TC_NO_FILES, NULL, 0,
		       err, sizeof(err)),
		 0);
	CHECK_EQ(n_open, 0);
	pw_runtime_destroy(rt);
}

/* --------------------------------------- the command line's own files */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_files_bounded(void)
{
	struct pw_netdev *a, *b;
	struct pw_runtime *rt = env(&a, &b);
	char dir[] = "/tmp/pw-untrusted-XXXXXX";
	CHECK(mkdtemp(dir));
	char fifo[256], big[256], good[256], trace[256];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(big, sizeof(big), "%s/big.dist", dir);
	snprintf(good, sizeof(good), "%s/good.dist", dir);
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	int fd = open(big, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, (off_t)300 << 20), 0); /* sparse: above both bounds */
	close(fd);
	FILE *f = fopen(good, "w");
	CHECK(f);
	for (int i = -8; i <= 8; i++)
		fprintf(f, "%d\n", i * 1000);
	fclose(f);
	f = fopen(trace, "w");
	CHECK(f);
	fprintf(f, "1\n2\n3\n");
	fclose(f);

	struct {
		const char *fmt, *path, *said;
	} bad[] = {
		{ "qdisc add dev a root netem delay 10ms 5ms distribution %s", "/dev/zero",
		  "not a regular file" },
		{ "qdisc add dev a root netem delay 10ms 5ms distribution %s", fifo,
		  "not a regular file" },
		{ "qdisc add dev a root netem delay 10ms 5ms distribution %s", dir,
		  "not a regular file" },
		{ "qdisc add dev a root netem delay 10ms 5ms distribution %s", big,
		  "larger than" },
		{ "qdisc add dev a root trace file %s", fifo, "not a regular file" },
		{ "qdisc add dev a root trace file %s", "/dev/zero", "not a regular file" },
		{ "qdisc add dev a root trace file %s", big, "larger than" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), bad[i].fmt, bad[i].path);
		double t0 = now_s();
		int rc = pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err));
		/* refused at the open: no read of /dev/zero, no wait on the FIFO */
		CHECK(now_s() - t0 < 5.0);
		if (rc >= 0 || !strstr(err, bad[i].said)) {
			fprintf(stderr, "%s: %d \"%s\"\n", cmd, rc, err);
			abort();
		}
	}
	/* a good file is read, opened once */
	char cmd[512];
	n_open = 0;
	snprintf(cmd, sizeof(cmd), "qdisc add dev a root netem delay 10ms 5ms distribution %s",
		 good);
	CHECK_EQ(pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ(n_open, 1);
	n_open = 0;
	snprintf(cmd, sizeof(cmd), "qdisc replace dev b root trace file %s", trace);
	CHECK_EQ(pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ(n_open, 1);
	unlink(fifo);
	unlink(big);
	unlink(good);
	unlink(trace);
	rmdir(dir);
	pw_runtime_destroy(rt);
}

/* --------------------------------------------------- one device only */

static void test_confine(void)
{
	struct pw_netdev *a, *b;
	struct pw_runtime *rt = env(&a, &b);
	CHECK_EQ(pw_tc(rt, "qdisc add dev b root netem delay 1ms", 0, NULL, 0, err, sizeof(err)),
		 0);
	char b_before[4096];
	snprintf(b_before, sizeof(b_before), "%s", show(rt, "b"));

	/* another device, however it is spelt, is refused and named */
	static const char *const other[] = {
		"qdisc replace dev b root netem delay 7s",
		"qdisc replace \"dev\" b root netem delay 7s",
		"qdisc replace dev 'b' root netem delay 7s",
		"q r dev b root netem delay 7s",
		"qdisc del dev b root",
		"qdisc show dev b",
		"class add dev b parent 1: classid 1:1 htb rate 1mbit",
		"class show dev b",
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		int rc = pw_tc_dev(rt, "a", other[i], 0, out, sizeof(out), err, sizeof(err));
		if (rc != -EPERM || !strstr(err, "dev \"b\" is another device")) {
			fprintf(stderr, "%s: %d %s\n", other[i], rc, err);
			abort();
		}
		CHECK(!strcmp(show(rt, "b"), b_before));
	}
	/* any other word names the confining device */
	CHECK_EQ(pw_tc_dev(rt, "a", "qdisc add dev link root netem delay 7s", 0, NULL, 0, err,
			   sizeof(err)),
		 0);
	CHECK(strstr(show(rt, "a"), "delay 7s"));
	CHECK_EQ(pw_tc_dev(rt, "a", "qdisc change dev a root netem delay 8s", 0, NULL, 0, err,
			   sizeof(err)),
		 0);
	CHECK(strstr(show(rt, "a"), "delay 8s"));
	CHECK(!strcmp(show(rt, "b"), b_before));
	/* a show without dev: its own device alone */
	CHECK_EQ(pw_tc_dev(rt, "a", "qdisc show", 0, out, sizeof(out), err, sizeof(err)), 0);
	CHECK(strstr(out, "delay 8s") && !strstr(out, "delay 1ms"));
	/* without a device to confine to: refused */
	CHECK_EQ(pw_tc_dev(rt, NULL, "qdisc show", 0, out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK_EQ(pw_tc_dev(rt, "", "qdisc show", 0, out, sizeof(out), err, sizeof(err)), -EINVAL);
	pw_runtime_destroy(rt);
}

/* ---------------------------------------------------------- schedules */

static int sched_load(struct pw_runtime *rt, const char *text, unsigned flags,
		      struct pw_tc_schedule **s)
{
	return pw_tc_schedule_load(rt, text, "s", "a", flags | PW_TC_SCHED_INLINE, s, err,
				   sizeof(err));
}

static void test_schedule(void)
{
	struct pw_netdev *a, *b;
	struct pw_runtime *rt = env(&a, &b);
	CHECK_EQ(pw_tc(rt, "qdisc add dev a root netem delay 1ms", 0, NULL, 0, err, sizeof(err)),
		 0);
	CHECK_EQ(pw_tc(rt, "qdisc add dev b root netem delay 1ms", 0, NULL, 0, err, sizeof(err)),
		 0);
	const unsigned U = PW_TC_SCHED_NO_FILES | PW_TC_SCHED_CONFINE;
	struct pw_tc_schedule *s = NULL;
	n_open = 0;
	/* a file word joined by a continuation, quoted, or by prefix */
	static const char *const files[] = {
		"1s qdisc change dev x root netem delay 5ms 1ms distribution \\\n/etc/passwd\n",
		"1s qdisc change dev x root netem delay 5ms 1ms \"distribution\" /etc/passwd\n",
		"1s qdisc change dev x root netem delay 5ms 1ms dist \\\n/nonexistent\n",
		"1s qdisc replace dev x root trace \\\nfile /etc/passwd\n",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int rc = sched_load(rt, files[i], U, &s);
		if (rc != -EPERM || s || strstr(err, "root:") || strstr(err, "No such")) {
			fprintf(stderr, "%s: %d %s\n", files[i], rc, err);
			abort();
		}
	}
	CHECK_EQ(n_open, 0);
	/* another device, refused at load, named */
	CHECK_EQ(sched_load(rt, "1s qdisc change dev x root netem delay 5ms\n"
				"2s qdisc change \\\n\"dev\" b root netem delay 9s\n",
			    U, &s),
		 -EPERM);
	CHECK(strstr(err, "s:2:") && strstr(err, "dev \"b\""));
	/* without CONFINE, the step must name the device (as before) */
	CHECK_EQ(sched_load(rt, "1s qdisc change dev x root netem delay 5ms\n", 0, &s), -ENODEV);
	CHECK_EQ(pw_tc_schedule_load(rt, "1s qdisc del dev x root\n", "s", NULL,
				     PW_TC_SCHED_CONFINE, &s, err, sizeof(err)),
		 -EINVAL);
	/* a confined schedule runs on its own device only */
	CHECK_EQ(sched_load(rt, "1s qdisc change dev link root netem delay 5ms\n"
				"2s qdisc change dev a root netem delay 6ms 1ms distribution pareto\n",
			    U, &s),
		 0);
	CHECK_EQ(pw_tc_schedule_start(s), 0);
	CHECK_EQ(pw_sim_advance(rt, 1500000000ull), 0);
	CHECK(strstr(show(rt, "a"), "delay 5ms"));
	CHECK_EQ(pw_sim_advance(rt, 1000000000ull), 0);
	CHECK(strstr(show(rt, "a"), "delay 6ms"));
	CHECK(strstr(show(rt, "b"), "delay 1ms"));
	struct pw_tc_schedule_status st;
	CHECK_EQ(pw_tc_schedule_status(s, &st), 0);
	CHECK_EQ(st.applied, 2);
	CHECK_EQ(st.failed, 0);
	pw_tc_schedule_free(s);
	CHECK_EQ(n_open, 0);
	pw_runtime_destroy(rt);
}

int main(void)
{
	RUN(test_no_files);
	RUN(test_files_bounded);
	RUN(test_confine);
	RUN(test_schedule);
	return 0;
}
