/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-tc: tc commands against pinwheel's packet-scheduling layer.
 *
 *   pinwheel-tc [-s] [-j] [-p] [-d] [-force] [-dev NAME[:TXQUEUES]]... -batch FILE|-
 *   pinwheel-tc [OPTIONS] OBJECT COMMAND ...       (one command)
 *
 * The devices exist only inside this process: each -dev declares one
 * (default: eth0 with 1 TX queue), with the kernel's default qdiscs
 * (pfifo_fast on one queue, mq of pfifo_fast on several), on a runtime on
 * the simulated clock (no threads; no packets flow).  Commands are parsed
 * and applied by pw_tc(), the library's parser, and print what iproute2's
 * tc prints: show output on stdout, errors on stderr, "Command failed
 * FILE:LINE" after a failed batch line, the batch stopping at the first
 * failure unless -force.  Exit status: 0 if every command succeeded, 1
 * otherwise, 2 for a bad command line of pinwheel-tc itself.
 *
 * Batch lines as tc reads them: '#' starts a comment, a trailing '\'
 * joins the next line, a leading "tc" is allowed.
 * Threads: one (main).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

static int dev_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pkt, void *ctx)
{
	(void)dev, (void)txq, (void)pkt, (void)ctx;
	return PW_NETDEV_TX_OK;
}

static void dev_drop(struct pw_netdev *dev, struct pw_pkt *pkt, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)pkt, (void)r, (void)ctx;
}

static const struct pw_netdev_ops dev_ops = { .xmit = dev_xmit, .drop = dev_drop };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pinwheel-tc [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       pinwheel-tc [ OPTIONS ] -batch FILE|-\n"
		"where  OBJECT := { qdisc | class }\n"
		"       OPTIONS := { -s[tatistics] | -d[etails] | -j[son] | -p[retty] |\n"
		"                    -f[orce] | -dev NAME[:TXQUEUES] (repeatable; default eth0:1) }\n"
		"Devices live in this process, on pinwheel's simulated clock.\n");
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

static int matches(const char *arg, const char *full)
{
	size_t n = strlen(arg);
	return n > 0 && n <= strlen(full) && !strncmp(arg, full, n);
}

int main(int argc, char **argv)
{
	unsigned flags = 0;
	int force = 0;
	const char *batch = NULL;
	const char *devs[64];
	unsigned ndevs = 0;

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

	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
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

	if (!batch) {
		size_t len = 1;
		for (int i = 0; i < argc; i++)
			len += strlen(argv[i]) + 3;
		char *cmd = malloc(len);
		if (!cmd) {
			pw_runtime_destroy(rt);
			return 2;
		}
		cmd[0] = '\0';
		for (int i = 0; i < argc; i++) {
			/* quote words with spaces so they stay one word */
			bool q = strpbrk(argv[i], " \t") != NULL;
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
	pw_runtime_destroy(rt);
	return status;
}
