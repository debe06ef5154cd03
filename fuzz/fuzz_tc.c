/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the tc command parser and its effects (pw_tc()).
 *
 * The input is a batch: one tc command per line (what follows "tc"), the
 * first byte choosing the show flags.  Each input runs on two fresh
 * devices (eth0: one TX queue, eth1: four) of one simulated-clock runtime
 * made once.  Properties, beyond "no crash, no leak, no undefined
 * behaviour" (ASan + UBSan):
 *  - a command that fails changes nothing: every show of both devices
 *    (-s -d, -s -j; qdisc and class) is byte-identical before and
 *    after it, and it said why (a non-empty error);
 *  - a command that succeeds leaves output NUL-terminated and shows that
 *    are stable (the same show twice gives the same bytes);
 *  - `qdisc add|replace X` that succeeded, repeated as `qdisc change X`
 *    with the same words, is either refused (some kinds cannot change) or
 *    leaves every show byte-identical: the options parse to the
 *    configuration they were built from.
 * Context: libFuzzer's thread; the runtime has no workers (sim clock).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

static struct pw_runtime *rt;
static char out[1 << 16], err[4096];

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

static void must(int ok, const char *what, const char *cmd)
{
	if (!ok) {
		fprintf(stderr, "fuzz_tc: %s\n command: %s\n err: %s\n", what, cmd, err);
		abort();
	}
}

/* Every show of both devices, concatenated (malloc'd). */
static char *snapshot(void)
{
	/* -s -d text holds everything the plain and -s texts do; JSON is its own printer */
	static const unsigned flags[] = { PW_TC_STATS | PW_TC_DETAILS, PW_TC_STATS | PW_TC_JSON };
	static const char *const shows[] = { "qdisc show dev eth0", "class show dev eth0",
					     "qdisc show dev eth1", "class show dev eth1" };
	size_t len = 0, cap = 1 << 14;
	char *buf = malloc(cap);
	if (!buf)
		abort();
	buf[0] = '\0';
	for (size_t f = 0; f < 2; f++)
		for (size_t s = 0; s < 4; s++) {
			int rc = pw_tc(rt, shows[s], flags[f], out, sizeof(out), err, sizeof(err));
			must(rc == 0, "show failed", shows[s]);
			size_t n = strlen(out);
			if (len + n + 1 > cap) {
				cap = 2 * (len + n + 1);
				buf = realloc(buf, cap);
				if (!buf)
					abort();
			}
			memcpy(buf + len, out, n + 1);
			len += n;
		}
	return buf;
}

static void one(const char *cmd, unsigned flags)
{
	char *before = snapshot();
	err[0] = '\0';
	int rc = pw_tc(rt, cmd, flags, out, sizeof(out), err, sizeof(err));
	must(memchr(out, '\0', sizeof(out)) != NULL, "output not terminated", cmd);
	must(memchr(err, '\0', sizeof(err)) != NULL, "error not terminated", cmd);
	must(rc == 0 || rc < 0, "positive return", cmd);
	must(rc == 0 || err[0] != '\0', "failed without a message", cmd);
	char *after = snapshot();
	if (rc != 0) {
		must(strcmp(before, after) == 0, "a failed command changed the configuration", cmd);
	} else {
		char *again = snapshot();
		must(strcmp(after, again) == 0, "show is not stable", cmd);
		free(again);
		const char *rest = NULL;
		if (!strncmp(cmd, "qdisc add ", 10))
			rest = cmd + 10;
		else if (!strncmp(cmd, "qdisc replace ", 14))
			rest = cmd + 14;
		if (rest) {
			char chg[5000];
			snprintf(chg, sizeof(chg), "qdisc change %s", rest);
			if (pw_tc(rt, chg, 0, NULL, 0, err, sizeof(err)) == 0) {
				char *changed = snapshot();
				must(strcmp(after, changed) == 0,
				     "change with the same options changed the configuration", chg);
				free(changed);
			}
		}
	}
	free(before);
	free(after);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (!rt) {
		struct pw_config cfg;
		pw_config_init(&cfg);
		cfg.ncpus = 2;
		cfg.clock = PW_CLOCK_SIM;
		if (pw_runtime_create(&cfg, &rt))
			abort();
	}
	if (n < 1 || n > 8192)
		return 0;
	unsigned flags = d[0] & (PW_TC_STATS | PW_TC_JSON | PW_TC_DETAILS);
	struct pw_netdev *e0, *e1;
	if (pw_netdev_create(rt, "eth0", 1, &drv_ops, NULL, &e0) ||
	    pw_netdev_create(rt, "eth1", 4, &drv_ops, NULL, &e1))
		abort();
	char line[4096];
	size_t i = 1;
	while (i < n) {
		size_t k = 0;
		while (i < n && d[i] != '\n') {
			if (k < sizeof(line) - 1)
				line[k++] = d[i] ? (char)d[i] : ' ';
			i++;
		}
		i++;
		line[k] = '\0';
		one(line, flags);
	}
	pw_netdev_destroy(e0);
	pw_netdev_destroy(e1);
	return 0;
}
