/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a tc toxic's words as an API client sends them
 * (pinwheel-netem's "tc" toxic: a qdisc, a batch, a schedule), through
 * the real checks and the real pw_tc() (docs/security.md).
 *
 * Input: byte 0 picks the form (bit 0: a batch instead of a qdisc; bit 1:
 * a schedule too); the rest is the words, then, after the first 0x1e
 * (record separator) byte, the schedule's text.  A NUL ends the input
 * early, as a C string would.
 *
 * Each input runs twice:
 *  1. tc_toxic_check() (tools/netem/tc_toxic.c, compiled in), the check
 *     the API's validator and the TCP plane make: the words on a device
 *     and runtime of their own, the parsed configuration read back for a
 *     byte stream, the schedule walked through;
 *  2. the words as the plane runs them on a shared runtime that holds
 *     other devices with trees of their own (pw_tc_dev() confined to the
 *     toxic's device "tcx9", PW_TC_NO_FILES; a batch line by line as
 *     toxic_tc_next_line() splits it), and the schedule loaded the plane's
 *     way (tc_schedule_load_inline(): NO_FILES | CONFINE), run inline
 *     over 3 simulated seconds.
 * Properties, beyond "no crash, no leak, no undefined behaviour":
 *  - no file is opened: open, open64, openat, fopen and fopen64 are
 *    wrapped (the link's --wrap) and any call while an input runs aborts;
 *  - no device but the toxic's own changes: the other devices' `tc -s -d
 *    qdisc show` and `class show` are the same after the input as before
 *    (their qdiscs see no packet, so even the counters must match);
 *  - a refusal says why (a message);
 *  - a check that passes on its own runtime never names another device.
 * The toxic's device is destroyed and made again for every input.
 * Context: libFuzzer's thread; the runtime has no workers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "netem/tc_toxic.h"
#include "netem/toxic.h"

/* ------------------------------------------------------------ no files */

static int guard; /* an input is running: no file may be opened */

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_tc_toxic: %s\n", what);
		abort();
	}
}

#define WRAP_OPEN(name)                                                                     \
	int __real_##name(const char *path, int flags, ...);                                \
	int __wrap_##name(const char *path, int flags, ...);                                \
	int __wrap_##name(const char *path, int flags, ...)                                 \
	{                                                                                   \
		must(!guard, "a client's words opened a file");                             \
		va_list ap;                                                                 \
		va_start(ap, flags);                                                        \
		int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;                         \
		va_end(ap);                                                                 \
		return __real_##name(path, flags, mode);                                    \
	}
WRAP_OPEN(open)
WRAP_OPEN(open64)

int __real_openat(int dfd, const char *path, int flags, ...);
int __wrap_openat(int dfd, const char *path, int flags, ...);
int __wrap_openat(int dfd, const char *path, int flags, ...)
{
	must(!guard, "a client's words opened a file (openat)");
	va_list ap;
	va_start(ap, flags);
	int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
	va_end(ap);
	return __real_openat(dfd, path, flags, mode);
}

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode)
{
	must(!guard, "a client's words opened a file (fopen)");
	return __real_fopen(path, mode);
}

FILE *__real_fopen64(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode)
{
	must(!guard, "a client's words opened a file (fopen64)");
	return __real_fopen64(path, mode);
}

/* ------------------------------------------------------------- devices */

static int drv_xmit(struct pw_netdev *d, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)d, (void)txq, (void)p, (void)ctx;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *d, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)d, (void)p, (void)r, (void)ctx;
}

static const struct pw_netdev_ops drv_ops = { .xmit = drv_xmit, .drop = drv_drop };

static struct pw_runtime *rt;
static const char *const others[] = { "tcx0", "tcx1", "up" };
static char before[1 << 15];

/* What tc shows of every other device, into @buf. */
static void others_show(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		static const char *const fmt[] = { "qdisc show dev %s", "class show dev %s" };
		for (int k = 0; k < 2; k++) {
			char cmd[64], err[256];
			snprintf(cmd, sizeof(cmd), fmt[k], others[i]);
			must(o < len, "show buffer");
			int rc = pw_tc(rt, cmd, PW_TC_STATS | PW_TC_DETAILS, buf + o, len - o, err,
				       sizeof(err));
			must(rc == 0, "show of another device failed");
			o += strlen(buf + o);
		}
	}
}

static void setup(void)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	must(pw_runtime_create(&cfg, &rt) == 0, "runtime");
	static const char *const tree[] = {
		"qdisc add dev tcx0 root netem delay 10ms",
		"qdisc add dev tcx1 root handle 1: htb default 10",
		"class add dev tcx1 parent 1: classid 1:10 htb rate 1mbit",
		"qdisc add dev tcx1 parent 1:10 handle 10: netem delay 5ms",
		"qdisc add dev up root tbf rate 1mbit burst 10k latency 50ms",
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct pw_netdev *d;
		must(pw_netdev_create(rt, others[i], 1, &drv_ops, NULL, &d) == 0, "device");
	}
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		must(pw_tc(rt, tree[i], 0, NULL, 0, NULL, 0) == 0, "the other devices' trees");
	others_show(before, sizeof(before));
}

/* --------------------------------------------------------------- input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!rt)
		setup();
	if (size < 1)
		return 0;
	unsigned form = data[0];
	size_t n = strnlen((const char *)data + 1, size - 1);
	char *text = malloc(n + 1);
	must(text != NULL, "malloc");
	memcpy(text, data + 1, n);
	text[n] = '\0';
	char *sched = NULL;
	char *rs = strchr(text, 0x1e);
	if (rs) {
		*rs = '\0';
		if (form & 2)
			sched = rs + 1;
	}
	struct toxic t;
	memset(&t, 0, sizeof(t));
	snprintf(t.name, sizeof(t.name), "fz");
	t.type = TOXIC_TC;
	t.stream = TOXIC_UPSTREAM;
	t.toxicity = 1;
	if (form & 1)
		t.a.tc.batch = text;
	else
		t.a.tc.qdisc = text;
	t.a.tc.schedule = sched;

	guard = 1;
	/* 1. the check itself */
	char err[1024] = "";
	int rc = tc_toxic_check(&t, 1, err, sizeof(err));
	must(rc == 0 || err[0], "a refusal without a message");
	must(rc == 0 || rc == -EINVAL || rc == -ENOMEM || rc == -EAGAIN, "an odd errno");

	/* 2. the words as the plane runs them, beside other devices */
	struct pw_netdev *own;
	must(pw_netdev_create(rt, "tcx9", 1, &drv_ops, NULL, &own) == 0, "own device");
	char msg[512];
	if (!(form & 1)) {
		char *cmd = NULL;
		must(asprintf(&cmd, "qdisc add dev tcx9 root %s", text) >= 0, "asprintf");
		int r = pw_tc_dev(rt, "tcx9", cmd, PW_TC_NO_FILES, NULL, 0, msg, sizeof(msg));
		must(r == 0 || msg[0], "pw_tc_dev refused without a message");
		free(cmd);
	} else {
		const char *p = text, *s;
		unsigned line = 0;
		size_t len;
		while (toxic_tc_next_line(&p, &line, &s, &len)) {
			char *cmd = strndup(s, len);
			must(cmd != NULL, "strndup");
			int r = pw_tc_dev(rt, "tcx9", cmd, PW_TC_NO_FILES, NULL, 0, msg, sizeof(msg));
			must(r == 0 || msg[0], "pw_tc_dev refused without a message");
			free(cmd);
			if (r)
				break;
		}
	}
	if (sched) {
		struct pw_tc_schedule *s = NULL;
		int r = tc_schedule_load_inline(rt, NULL, sched, "tcx9", PW_TC_SCHED_INLINE, &s, msg,
						sizeof(msg));
		must(r == 0 || msg[0], "a schedule refused without a message");
		if (!r) {
			must(pw_tc_schedule_start(s) == 0, "schedule start");
			must(pw_sim_advance(rt, 3000000000ull) == 0, "advance");
			pw_tc_schedule_free(s);
		}
	}
	static char after[sizeof(before)];
	others_show(after, sizeof(after));
	must(!strcmp(before, after), "another device changed");
	pw_netdev_destroy(own);
	guard = 0;
	free(text);
	return 0;
}
