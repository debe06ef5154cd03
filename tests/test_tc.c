/* SPDX-License-Identifier: MIT */
/*
 * pw_tc(), the tc command line, through its API (tests/tc/run.sh checks
 * pinwheel-tc's output against the live kernel and iproute2):
 *  - round trip: for netem option sets (a fixed-seed random generator
 *    plus hand-picked ones), add -> show -> the printed options, made
 *    parseable again -> `qdisc change ... netem <them>` -> show prints the
 *    same text; and a fresh add of them prints it too (but for iproute2's
 *    duplicate-correlation quirk, checked as such);
 *  - a failed command changes nothing: the -s (and -j) show and class
 *    show of every device are byte-identical before and after, for a list
 *    of failing commands and for random commands;
 *  - a small err buffer gets a NUL-terminated prefix of the message; an
 *    out buffer too small for a show gives -ENOSPC and a prefix;
 *  - seed 003's script (tests/tc/seed003.tc) gives mq 1: and 8 netems
 *    with the expected handles, parents, limits and delays.
 * Single-threaded, on the simulated clock.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

#include "check.h"
#include "sim.h"

#define OUTSZ (1 << 16)
#define ERRSZ 8192

static char out[OUTSZ], err[ERRSZ];

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

static struct pw_netdev *mkdev(struct pw_runtime *rt, const char *name, unsigned ntxq)
{
	struct pw_netdev *d;
	CHECK_EQ(pw_netdev_create(rt, name, ntxq, &drv_ops, NULL, &d), 0);
	return d;
}

/* ------------------------------------------------------------ helpers */

/* Runs @fmt...; the rc.  out and err hold what it said. */
static int tcf(struct pw_runtime *rt, unsigned flags, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int tcf(struct pw_runtime *rt, unsigned flags, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	CHECK(n > 0 && (size_t)n < sizeof(cmd));
	return pw_tc(rt, cmd, flags, out, sizeof(out), err, sizeof(err));
}

/* Runs a command that must succeed. */
#define TC_OK(rt, flags, ...)                                                         \
	do {                                                                          \
		int rc_ = tcf((rt), (flags), __VA_ARGS__);                            \
		if (rc_ != 0) {                                                       \
			fprintf(stderr, "%s:%d: tc failed (%d): %s\n", __FILE__, __LINE__, \
				rc_, err);                                            \
			abort();                                                      \
		}                                                                     \
	} while (0)

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	CHECK(p);
	return p;
}

/* The options of the first line of a show of one qdisc: after "refcnt 2 "
 * (a root on a one-queue device), newline stripped.  Malloc'd. */
static char *show_opts(struct pw_runtime *rt, const char *dev)
{
	TC_OK(rt, 0, "qdisc show dev %s", dev);
	char *p = strstr(out, "refcnt 2 ");
	CHECK(p);
	p += strlen("refcnt 2 ");
	char *nl = strchr(p, '\n');
	CHECK(nl && nl[1] == '\0'); /* one line: the root only */
	return strndup(p, (size_t)(nl - p));
}

/* --------------------------------------------------- (a) round trip */

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r)
{
	r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(r->s >> 33);
}

static unsigned below(struct rng *r, unsigned n)
{
	return rnd(r) % n;
}

static bool chance(struct rng *r, unsigned pct)
{
	return below(r, 100) < pct;
}

struct sbuf {
	char b[2048];
	size_t n;
};

static void sb_add(struct sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(s->b + s->n, sizeof(s->b) - s->n, fmt, ap);
	va_end(ap);
	CHECK(n >= 0 && (size_t)n < sizeof(s->b) - s->n);
	s->n += (size_t)n;
}

/*
 * A netem time as tc 6.1 reads it (get_time(): microseconds), chosen so
 * that printing and parsing it again is stable: tc sends psched ticks of
 * 64 ns (us x 15.625, truncated) and prints tick / 15.625 truncated, so a
 * microsecond count that is not a multiple of 8 loses 1 us on every round
 * trip ("100" prints "99us", whose 99 prints "98us"); from 1 ms on the
 * "%.3g" print absorbs that.  So: multiples of 8 us below 1 ms, at most
 * three significant digits of ms, or seconds.
 */
static void gen_time(struct rng *r, struct sbuf *s, bool allow_zero)
{
	switch (below(r, allow_zero ? 6 : 5)) {
	case 0:
		sb_add(s, "%uus", 8 * (1 + below(r, 124)));
		break;
	case 1:
		sb_add(s, "%u", 8 * (1 + below(r, 124))); /* bare: microseconds */
		break;
	case 2:
		sb_add(s, "%ums", 1 + below(r, 999));
		break;
	case 3:
		sb_add(s, "%u.%ums", 1 + below(r, 99), below(r, 10));
		break;
	case 4:
		sb_add(s, "%u.%us", 1 + below(r, 9), below(r, 10));
		break;
	default:
		sb_add(s, "0");
		break;
	}
}

/* A slot time (get_time64(): nanoseconds), three significant digits. */
static uint64_t gen_slot_ns(struct rng *r)
{
	static const uint64_t scale[] = { 1, 1000, 1000000, 1000000000 };
	uint64_t m = 1 + below(r, 999);
	return m * scale[below(r, 4)];
}

static void sb_ns(struct sbuf *s, struct rng *r, uint64_t ns)
{
	if (chance(r, 30))
		sb_add(s, "%llu", (unsigned long long)ns); /* bare: ns */
	else if (ns % 1000000 == 0)
		sb_add(s, "%llums", (unsigned long long)(ns / 1000000));
	else if (ns % 1000 == 0)
		sb_add(s, "%lluus", (unsigned long long)(ns / 1000));
	else
		sb_add(s, "%lluns", (unsigned long long)ns);
}

/* A percentage, in one of tc's spellings. */
static void gen_pct(struct rng *r, struct sbuf *s, bool nonzero)
{
	unsigned v;
	switch (below(r, 4)) {
	case 0:
		v = below(r, 101);
		if (nonzero && v == 0)
			v = 1;
		sb_add(s, "%u%%", v);
		break;
	case 1:
		sb_add(s, "%u.%02u%%", below(r, 100), 1 + below(r, 99));
		break;
	case 2:
		sb_add(s, "0.%04u", 1 + below(r, 9999)); /* bare: still percent */
		break;
	default:
		sb_add(s, "%u.%u", below(r, 100), 1 + below(r, 9));
		break;
	}
}

static const char *const dists[] = { "normal", "pareto", "paretonormal" };

/* Random netem options; *slot_dist gets the slot table's name (the
 * show does not print it), or NULL. */
static void gen_netem(struct rng *r, struct sbuf *s, const char **slot_dist)
{
	*slot_dist = NULL;
	bool delay = chance(r, 70), loss = false;
	unsigned order[9];
	for (unsigned i = 0; i < 9; i++)
		order[i] = i;
	for (unsigned i = 8; i > 0; i--) {
		unsigned j = below(r, i + 1), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	bool want_loss = chance(r, 50), want_ecn = chance(r, 30);
	for (unsigned k = 0; k < 9; k++) {
		switch (order[k]) {
		case 0:
			if (chance(r, 50)) {
				if (chance(r, 20))
					sb_add(s, " limit %uk", 1 + below(r, 64));
				else
					sb_add(s, " limit %u", below(r, 200000));
			}
			break;
		case 1:
			if (!delay)
				break;
			sb_add(s, " %s ", chance(r, 20) ? "latency" : "delay");
			gen_time(r, s, false);
			if (chance(r, 70)) {
				sb_add(s, " ");
				gen_time(r, s, true);
				/* a table needs a jitter: not after a "0" */
				bool zero = s->b[s->n - 1] == '0' && s->b[s->n - 2] == ' ';
				if (chance(r, 50)) {
					sb_add(s, " ");
					gen_pct(r, s, false);
				}
				if (!zero && chance(r, 30))
					sb_add(s, " distribution %s", dists[below(r, 3)]);
			}
			break;
		case 2:
			if (!want_loss)
				break;
			loss = true;
			switch (below(r, 3)) {
			case 0:
				sb_add(s, chance(r, 50) ? " loss random " : " loss ");
				gen_pct(r, s, true);
				if (chance(r, 50)) {
					sb_add(s, " ");
					gen_pct(r, s, false);
				}
				break;
			case 1: {
				sb_add(s, " loss state ");
				gen_pct(r, s, true);
				unsigned more = below(r, 5);
				for (unsigned i = 0; i < more; i++) {
					sb_add(s, " ");
					gen_pct(r, s, false);
				}
				break;
			}
			default: {
				sb_add(s, " loss gemodel ");
				gen_pct(r, s, true);
				unsigned more = below(r, 4);
				for (unsigned i = 0; i < more; i++) {
					sb_add(s, " ");
					gen_pct(r, s, false);
				}
				break;
			}
			}
			break;
		case 3:
			if (chance(r, 30)) {
				sb_add(s, " duplicate ");
				gen_pct(r, s, true);
				if (chance(r, 50)) {
					sb_add(s, " ");
					gen_pct(r, s, false);
				}
			}
			break;
		case 4:
			if (chance(r, 30)) {
				sb_add(s, " corrupt ");
				gen_pct(r, s, true);
				if (chance(r, 50)) {
					sb_add(s, " ");
					gen_pct(r, s, false);
				}
			}
			break;
		case 5:
			if (delay && chance(r, 40)) {
				sb_add(s, " reorder ");
				gen_pct(r, s, true);
				if (chance(r, 50)) {
					sb_add(s, " ");
					gen_pct(r, s, false);
				}
				if (chance(r, 50))
					sb_add(s, " gap %u", 1 + below(r, 20));
			}
			break;
		case 6:
			if (chance(r, 35)) {
				static const char *const units[] = { "bit", "kbit", "mbit", "gbit",
								     "bps", "kbps", "mbps", "" };
				unsigned u = below(r, 8);
				unsigned v = 1 + below(r, u == 3 ? 50 : 5000);
				if (u == 0 || u == 7)
					v = 8 * (1 + below(r, 100000)); /* whole bytes */
				sb_add(s, " rate %u%s", v, units[u]);
				if (chance(r, 50)) {
					sb_add(s, " %d", (int)below(r, 100) - 40);
					if (chance(r, 50)) {
						sb_add(s, " %u", below(r, 200));
						if (chance(r, 50))
							sb_add(s, " %d", (int)below(r, 40) - 20);
					}
				}
			}
			break;
		case 7:
			if (chance(r, 30)) {
				if (chance(r, 30)) {
					*slot_dist = dists[below(r, 3)];
					sb_add(s, " slot distribution %s ", *slot_dist);
					sb_ns(s, r, gen_slot_ns(r));
					sb_add(s, " ");
					sb_ns(s, r, gen_slot_ns(r));
				} else {
					uint64_t a = gen_slot_ns(r), b = gen_slot_ns(r);
					if (b < a) {
						uint64_t t = a;
						a = b, b = t;
					}
					sb_add(s, " slot ");
					sb_ns(s, r, a);
					if (chance(r, 70)) {
						sb_add(s, " ");
						sb_ns(s, r, b);
					}
				}
				if (chance(r, 50))
					sb_add(s, " packets %u", 1 + below(r, 1000));
				if (chance(r, 50)) {
					if (chance(r, 30))
						sb_add(s, " bytes %uk", 1 + below(r, 64));
					else
						sb_add(s, " bytes %u", 1 + below(r, 100000));
				}
			}
			break;
		default:
			if (chance(r, 30))
				sb_add(s, " seed %llu",
				       (unsigned long long)(((uint64_t)rnd(r) << 32) | rnd(r)));
			break;
		}
	}
	if (loss && want_ecn)
		sb_add(s, " ecn");
}

/*
 * netem_print_opt()'s text made parseable again: the loss models' labels
 * go (tc prints "loss state p13 1% p31 ..." but reads "loss state 1%
 * ..."), the rate's overheads become positional, a slot table gets its
 * name back.  *sends_corr: whether the result makes tc send
 * TCA_NETEM_CORR (a delay, loss, reorder or corrupt correlation); *dup_corr
 * the position of a duplicate correlation word in @dst, if any.
 */
static void reparse(const char *printed, const char *slot_dist, struct sbuf *dst,
		    bool *sends_corr, size_t *dup_corr_at, size_t *dup_corr_len)
{
	char *copy = xstrdup(printed);
	char *w[128];
	unsigned n = 0;
	for (char *t = strtok(copy, " "); t; t = strtok(NULL, " ")) {
		CHECK(n < 128);
		w[n++] = t;
	}
	*sends_corr = false;
	*dup_corr_at = *dup_corr_len = 0;
	/* how many numbers follow word i */
#define NUMS_AFTER(i, cnt)                                                        \
	do {                                                                      \
		cnt = 0;                                                          \
		while ((i) + 1 + cnt < n && (isdigit((unsigned char)w[(i) + 1 + cnt][0]) || \
					     w[(i) + 1 + cnt][0] == '-'))         \
			cnt++;                                                    \
	} while (0)
	for (unsigned i = 0; i < n; i++) {
		unsigned c;
		if (!strcmp(w[i], "loss") && i + 1 < n &&
		    (!strcmp(w[i + 1], "state") || !strcmp(w[i + 1], "gemodel"))) {
			sb_add(dst, " loss %s", w[i + 1]);
			i += 2;
			/* label value pairs */
			while (i + 1 < n && isdigit((unsigned char)w[i + 1][0]) &&
			       (!strcmp(w[i], "p13") || !strcmp(w[i], "p31") ||
				!strcmp(w[i], "p32") || !strcmp(w[i], "p23") ||
				!strcmp(w[i], "p14") || !strcmp(w[i], "p") || !strcmp(w[i], "r") ||
				!strcmp(w[i], "1-h") || !strcmp(w[i], "1-k"))) {
				sb_add(dst, " %s", w[i + 1]);
				i += 2;
			}
			i--;
		} else if (!strcmp(w[i], "rate")) {
			CHECK(i + 1 < n);
			int po = 0, co = 0;
			unsigned cs = 0;
			unsigned j = i + 2;
			for (; j + 1 < n; j += 2) {
				if (!strcmp(w[j], "packetoverhead"))
					po = atoi(w[j + 1]);
				else if (!strcmp(w[j], "cellsize"))
					cs = (unsigned)atoi(w[j + 1]);
				else if (!strcmp(w[j], "celloverhead"))
					co = atoi(w[j + 1]);
				else
					break;
			}
			sb_add(dst, " rate %s %d %u %d", w[i + 1], po, cs, co);
			i = j - 1;
		} else if (!strcmp(w[i], "limit") && i + 1 < n && w[i + 1][0] == '-') {
			/* "limit %d" of a u32: 4294967295 prints -1, which get_size()
			 * refuses; what it means is the unsigned value */
			sb_add(dst, " limit %u", (unsigned)strtol(w[i + 1], NULL, 10));
			i++;
		} else if (!strcmp(w[i], "slot") && i + 1 < n && !strcmp(w[i + 1], "distribution")) {
			CHECK(slot_dist);
			sb_add(dst, " slot distribution %s", slot_dist);
			i++;
		} else if (!strcmp(w[i], "delay") || !strcmp(w[i], "loss") ||
			   !strcmp(w[i], "reorder") || !strcmp(w[i], "corrupt") ||
			   !strcmp(w[i], "duplicate")) {
			NUMS_AFTER(i, c);
			sb_add(dst, " %s", w[i]);
			for (unsigned k = 1; k <= c; k++) {
				if (!strcmp(w[i], "duplicate") && k == 2) {
					*dup_corr_at = dst->n;
					*dup_corr_len = strlen(w[i + k]) + 1;
				}
				sb_add(dst, " %s", w[i + k]);
			}
			if ((!strcmp(w[i], "delay") && c == 3) ||
			    (strcmp(w[i], "delay") && strcmp(w[i], "duplicate") && c == 2))
				*sends_corr = true;
			i += c;
		} else {
			sb_add(dst, " %s", w[i]);
		}
	}
#undef NUMS_AFTER
	free(copy);
}

/* What a printed netem text says about its duplicate correlation: the
 * text with " duplicate X C" -> " duplicate X". */
static char *drop_dup_corr(const char *printed)
{
	char *s = xstrdup(printed);
	char *p = strstr(s, " duplicate ");
	CHECK(p);
	p += strlen(" duplicate ");
	char *sp = strchr(p, ' ');
	CHECK(sp && isdigit((unsigned char)sp[1]));
	char *end = strchr(sp + 1, ' ');
	memmove(sp, end ? end : sp + strlen(sp), strlen(end ? end : sp + strlen(sp)) + 1);
	return s;
}

static unsigned n_fresh_quirk;

static void round_trip_one(struct pw_runtime *rt, const char *opts, const char *slot_dist)
{
	int rc = tcf(rt, 0, "qdisc add dev eth0 root handle 1: netem%s", opts);
	if (rc != 0) {
		fprintf(stderr, "netem%s: %d %s\n", opts, rc, err);
		abort();
	}
	char *t1 = show_opts(rt, "eth0");
	struct sbuf again = { .n = 0 };
	bool corr;
	size_t dat, dlen;
	reparse(t1, slot_dist, &again, &corr, &dat, &dlen);

	/* change with the printed options: the same text */
	rc = tcf(rt, 0, "qdisc change dev eth0 root handle 1: netem%s", again.b);
	if (rc != 0) {
		fprintf(stderr, "netem%s\n printed %s\n change netem%s: %d %s\n", opts, t1,
			again.b, rc, err);
		abort();
	}
	char *t2 = show_opts(rt, "eth0");
	if (strcmp(t1, t2)) {
		fprintf(stderr, "netem%s\n first:  %s\n again:  %s\n (change netem%s)\n", opts,
			t1, t2, again.b);
		abort();
	}

	/* a fresh qdisc from them: the same text, but for iproute2 6.1's
	 * quirk -- a duplicate correlation alone is not sent */
	TC_OK(rt, 0, "qdisc add dev eth1 root handle 1: netem%s", again.b);
	char *t3 = show_opts(rt, "eth1");
	char *want = t1;
	if (dlen && !corr) {
		want = drop_dup_corr(t1);
		n_fresh_quirk++;
	}
	if (strcmp(want, t3)) {
		fprintf(stderr, "netem%s\n first: %s\n fresh: %s\n (add netem%s)\n", opts, want,
			t3, again.b);
		abort();
	}
	if (want != t1)
		free(want);
	TC_OK(rt, 0, "qdisc del dev eth0 root");
	TC_OK(rt, 0, "qdisc del dev eth1 root");
	free(t1);
	free(t2);
	free(t3);
}

static void test_round_trip(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 1000000000ull, 0);
	mkdev(rt, "eth0", 1);
	mkdev(rt, "eth1", 1);
	static const char *const picked[] = {
		" delay 100ms",
		" delay 100ms 10ms",
		" delay 100ms 10ms 25%",
		" delay 10ms 3ms distribution normal",
		" delay 10ms 3ms 10% distribution pareto",
		" delay 1.5s 2500us 0.5",
		" limit 70000 delay 6ms",
		" loss 1%",
		" loss random 0.5% 25%",
		" drop 0.001%",
		" loss state 1%",
		" loss state 1% 20% 5% 70% 0.1%",
		" loss gemodel 2%",
		" loss gemodel 2% 30% 90% 0.5% ecn",
		" duplicate 5% 10%",
		" duplicate 5% 10% delay 1ms 1ms 1%",
		" corrupt 0.1% 5% duplicate 1% 2%",
		" delay 10ms reorder 25% 50% gap 5",
		" delay 10ms reorder 25%",
		" rate 1mbit",
		" rate 100kbit 20 100 -5",
		" rate 10mbit 0 53",
		" rate 40gbit -4",
		" rate 1mibit",
		" slot 10ms",
		" slot 10ms 20ms packets 5 bytes 1500",
		" slot 800 1500000 bytes 64k",
		" limit 5k seed 42",
		" limit 4294967295 seed 18446744073709551615",
		" delay 10ms 2ms 30% loss 1% 20% reorder 25% 10% gap 3 corrupt 1% rate 1mbit slot 5ms"
		" seed 7 ecn duplicate 3%",
	};
	for (size_t i = 0; i < sizeof(picked) / sizeof(picked[0]); i++)
		round_trip_one(rt, picked[i], NULL);
	round_trip_one(rt, " slot distribution normal 10ms 2ms packets 5 bytes 64k", "normal");
	round_trip_one(rt, " delay 1ms slot distribution pareto 1ms 100us", "pareto");

	struct rng r = { 0x5eed003ull };
	unsigned n = 0;
	for (int i = 0; i < 400; i++) {
		struct sbuf s = { .n = 0 };
		const char *sd;
		gen_netem(&r, &s, &sd);
		round_trip_one(rt, s.b, sd);
		n++;
	}
	CHECK(n_fresh_quirk > 0); /* the generator reaches the quirk */
	printf("# round trip: %zu picked + %u random option sets (%u with the duplicate"
	       " correlation quirk)\n",
	       sizeof(picked) / sizeof(picked[0]) + 2, n, n_fresh_quirk);
	pw_runtime_destroy(rt);
}

/* ------------------------------------- (b) a failure changes nothing */

static const char *const devnames[] = { "eth0", "eth1", "eth2", "eth3" };

/* Everything tc can say about every device. */
static char *snapshot(struct pw_runtime *rt)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	CHECK(buf);
	buf[0] = '\0';
	static const unsigned flags[] = { PW_TC_STATS, PW_TC_STATS | PW_TC_JSON, PW_TC_DETAILS };
	for (size_t d = 0; d < 4; d++) {
		for (size_t f = 0; f < 3; f++) {
			for (int c = 0; c < 2; c++) {
				TC_OK(rt, flags[f], "%s show dev %s", c ? "class" : "qdisc",
				      devnames[d]);
				size_t n = strlen(out);
				if (len + n + 1 > cap) {
					cap = 2 * (len + n + 1);
					buf = realloc(buf, cap);
					CHECK(buf);
				}
				memcpy(buf + len, out, n + 1);
				len += n;
			}
		}
	}
	TC_OK(rt, PW_TC_STATS, "qdisc show");
	size_t n = strlen(out);
	buf = realloc(buf, len + n + 1);
	CHECK(buf);
	memcpy(buf + len, out, n + 1);
	return buf;
}

static void setup_tree(struct pw_runtime *rt)
{
	mkdev(rt, "eth0", 1);
	mkdev(rt, "eth1", 4);
	mkdev(rt, "eth2", 8);
	mkdev(rt, "eth3", 1);
	TC_OK(rt, 0, "qdisc add dev eth0 root handle 1: bfifo limit 10k");
	TC_OK(rt, 0, "qdisc add dev eth1 root handle 1: mq");
	TC_OK(rt, 0, "%s", "qdisc add dev eth1 parent 1:1 handle 10: est 1sec 4sec netem"
			   " delay 10ms 1ms 5% loss 1% seed 5");
	TC_OK(rt, 0, "qdisc add dev eth1 parent 1:2 handle 20: pfifo limit 20");
	TC_OK(rt, 0, "qdisc add dev eth1 parent 1:3 handle 30: pfifo_head_drop limit 30");
	TC_OK(rt, 0, "%s", "qdisc add dev eth3 root handle 3: netem delay 10ms 2ms 30% loss"
			   " state 1% reorder 25% 10% gap 3 corrupt 1% rate 1mbit 20 slot 5ms"
			   " packets 3 ecn limit 5000 seed 3");
}

static const char *const failing[] = {
	/* parse errors (tc's own messages) */
	"qdisc add dev eth0 root handle 1: bfifo limit 10kib",
	"qdisc change dev eth0 root handle 1: bfifo limit 4g",
	"qdisc change dev eth0 root handle 1: bfifo foo",
	"qdisc change dev eth0 root handle 1: bfifo limit",
	"qdisc replace dev eth0 root handle 1: blah limit 4",
	"qdisc replace dev eth0 root handle 1: pfifo_fast bands 3",
	"qdisc replace dev eth1 root handle 1: mq foo",
	"qdisc add dev eth0 dev eth0 root pfifo",
	"qdisc add dev eth0 root handle 1: handle 2: pfifo",
	"qdisc add dev eth0 root root pfifo",
	"qdisc add dev eth0 parent 1:1 parent 1:2 pfifo",
	"qdisc add dev eth0 root handle xyz pfifo",
	"qdisc add dev eth0 root est 10sec 1sec pfifo",
	"qdisc add dev eth0 root est 1sec",
	"qdisc add dev eth0 root stab overhead 4 pfifo",
	"qdisc add dev eth0 ingress",
	"qdisc foo",
	"foo bar",
	"qdisc show dev eth0 foo",
	"qdisc show dev eth0 root handle 1:",
	"qdisc show dev eth0 handle",
	"class show dev eth1 root root",
	"class show dev eth1 classid zz",
	"qdisc show dev eth9",
	"class show dev eth9",
	/* netem parse errors: a change must not half-apply */
	"qdisc change dev eth3 root handle 3: netem delay 20ms loss 101%",
	"qdisc change dev eth3 root handle 3: netem delay 20ms loss 1% loss 2%",
	"qdisc change dev eth3 root handle 3: netem delay 20ms rate 10xbit",
	"qdisc change dev eth3 root handle 3: netem reorder 10%",
	"qdisc change dev eth3 root handle 3: netem delay 1ms gap 5",
	"qdisc change dev eth3 root handle 3: netem ecn",
	"qdisc change dev eth3 root handle 3: netem delay 1ms distribution normal",
	"qdisc change dev eth3 root handle 3: netem delay 1ms 1ms distribution /nonexistent/x",
	"qdisc change dev eth3 root handle 3: netem slot 10ms 5ms",
	"qdisc change dev eth3 root handle 3: netem slot distribution normal 1ms 0",
	"qdisc change dev eth3 root handle 3: netem delay 300s",
	"qdisc change dev eth3 root handle 3: netem seed x",
	"qdisc change dev eth3 root handle 3: netem rate 10%",
	"qdisc change dev eth3 root handle 3: netem foo",
	"qdisc change dev eth3 root handle 3: netem help",
	"qdisc change dev eth1 handle 10: netem delay 20ms limit x",
	/* the kernel side's refusals */
	"qdisc add root handle 1: pfifo",
	"qdisc add dev eth9 root pfifo",
	"qdisc add dev eth0 root handle 1: bfifo limit 5",
	"qdisc add dev eth0 root handle 2: pfifo",
	"qdisc add dev eth0 root handle 1: mq",
	"qdisc add dev eth0 root handle 5: mq",
	"qdisc replace dev eth0 root handle 1: pfifo limit 5",
	"qdisc change dev eth0 root handle 1: pfifo limit 5",
	"qdisc change dev eth0 root handle 7: pfifo",
	"qdisc change dev eth0 handle 7: pfifo",
	"qdisc add dev eth0 root blah",
	"qdisc add dev eth0",
	"qdisc del dev eth0",
	"qdisc del dev eth0 root handle 3:",
	"qdisc del dev eth0 root pfifo",
	"qdisc del dev eth0 handle 1:",
	"qdisc del dev eth0 parent 1:1",
	"qdisc del dev eth2 root",
	"qdisc del dev eth2 parent :1",
	"qdisc add dev eth1 root handle 1: mq",
	"qdisc add dev eth1 root handle 2: mq",
	"qdisc add dev eth1 root est 1sec 4sec handle 5: mq",
	"qdisc add dev eth1 parent 1:9 handle 90: pfifo",
	"qdisc add dev eth1 parent 2:1 handle 90: pfifo",
	"qdisc add dev eth1 parent 20:1 handle 90: pfifo",
	"qdisc add dev eth1 parent 1:4 handle 20: pfifo",
	"qdisc add dev eth1 parent 1:2 handle 21: pfifo",
	"qdisc add dev eth1 parent 1:4 handle 40: mq",
	"qdisc change dev eth1 handle 10: pfifo limit 5",
	"qdisc change dev eth1 parent 1:2 handle 20: bfifo",
	"qdisc link dev eth0 root pfifo",
	"class add dev eth1 parent 1: classid 1:1",
	"class add dev eth1 classid 1:1 pfifo",
	"class change dev eth1 classid 1:7",
	"class del dev eth1 classid 1:1",
	"class del dev eth1 classid 20:1",
	"class add dev eth0 classid 1:1",
	"class add dev eth9 classid 1:1",
	"class add classid 1:1",
	"class add dev eth1 handle 1:1",
	"class replace dev eth1 classid 1:1 htb rate 1mbit",
};

static void test_failure_changes_nothing(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 1000000000ull, 0);
	setup_tree(rt);
	char *before = snapshot(rt);
	for (size_t i = 0; i < sizeof(failing) / sizeof(failing[0]); i++) {
		int rc = pw_tc(rt, failing[i], PW_TC_STATS, out, sizeof(out), err, sizeof(err));
		if (rc >= 0 || !err[0]) {
			fprintf(stderr, "expected a failure with a message: %s -> %d \"%s\"\n",
				failing[i], rc, err);
			abort();
		}
		char *after = snapshot(rt);
		if (strcmp(before, after)) {
			fprintf(stderr, "changed by the failed \"%s\" (%s)\n--- before\n%s--- after\n%s",
				failing[i], err, before, after);
			abort();
		}
		free(after);
	}

	/* random commands, valid and not: whenever one fails, nothing moved */
	static const char *const verbs[] = { "add", "change", "replace", "link", "del" };
	static const char *const kinds[] = { "pfifo", "bfifo", "pfifo_head_drop", "pfifo_fast",
					     "mq", "netem", "blah", "" };
	static const char *const fifo_words[] = { "limit 5", "limit 5k", "limit 100", "" };
	static const char *const netem_words[] = {
		"limit 5", "delay 10ms", "delay 10ms 1ms 5%", "loss 1%", "loss state 1% 2%",
		"loss gemodel 1%", "loss 1% ecn", "delay 5ms reorder 5% gap 2", "duplicate 1% 1%",
		"corrupt 2%", "rate 1mbit", "slot 1ms", "seed 9", "delay 1ms 1ms distribution normal",
		"",
	};
	static const char *const bad_words[] = {
		"limit x", "limit", "loss 200%", "reorder 5%", "gap 2", "rate 1xbit", "slot 2ms 1ms",
		"distribution normal", "bands 3", "foo", "ecn", "seed",
	};
	static const char *const where[] = { "root", "root", "parent 1:1", "parent 1:2",
					     "parent 1:4", "parent 1:9", "parent 10:1", "",
					     "root root", "parent" };
	static const char *const handles[] = { "", "", "handle 1:", "handle 3:", "handle 10:",
					       "handle 20:", "handle 77:", "handle x" };
	struct rng r = { 42 };
	unsigned nfail = 0, nok = 0, nchanged = 0;
	for (int i = 0; i < 3000; i++) {
		char cmd[512];
		unsigned k = below(&r, 8);
		const char *w1 = "", *w2 = "";
		if (k <= 2)
			w1 = fifo_words[below(&r, 4)];
		else if (k == 5)
			w1 = netem_words[below(&r, 15)], w2 = netem_words[below(&r, 15)];
		if (chance(&r, 15))
			w2 = bad_words[below(&r, 12)];
		int n = snprintf(cmd, sizeof(cmd), "qdisc %s dev %s %s %s %s%s %s %s",
				 verbs[below(&r, 5)], devnames[below(&r, 4)], where[below(&r, 10)],
				 handles[below(&r, 8)], chance(&r, 10) ? "est 1sec 4sec " : "",
				 kinds[k], w1, w2);
		CHECK(n > 0 && (size_t)n < sizeof(cmd));
		int rc = pw_tc(rt, cmd, 0, out, sizeof(out), err, sizeof(err));
		char *after = snapshot(rt);
		if (rc < 0) {
			nfail++;
			if (strcmp(before, after)) {
				fprintf(stderr, "changed by the failed \"%s\" (%d: %s)\n", cmd, rc,
					err);
				abort();
			}
		} else {
			nok++;
			nchanged += strcmp(before, after) != 0;
		}
		free(before);
		before = after;
	}
	CHECK(nfail > 1000 && nok > 100 && nchanged > 50); /* the snapshot sees changes */
	printf("# %zu listed failures, %u random failures, %u random successes (%u changed"
	       " something)\n",
	       sizeof(failing) / sizeof(failing[0]), nfail, nok, nchanged);
	free(before);
	pw_runtime_destroy(rt);
}

/* ------------------------------------------- (c) small buffers */

static void test_buffers(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 1000000000ull, 0);
	mkdev(rt, "eth0", 8);
	TC_OK(rt, 0, "qdisc add dev eth0 root handle 1: mq");
	TC_OK(rt, 0, "qdisc add dev eth0 parent 1:1 handle 10: netem delay 10ms");

	/* err: a long message (netem's usage after "What is") */
	static const char *const bad[] = {
		"qdisc add dev eth0 parent 1:2 netem foo",
		"qdisc add dev eth0 parent 1:2 netem delay 1ms loss 1% loss 2%",
		"qdisc add dev eth9 root pfifo",
		"qdisc add dev eth0 root handle 1: mq",
		"qdisc help",
	};
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		char full[ERRSZ];
		int rc_full = pw_tc(rt, bad[b], 0, NULL, 0, full, sizeof(full));
		size_t len = strlen(full);
		CHECK(len > 10);
		/* err NULL, or of size 0: same result, nothing written */
		CHECK_EQ(pw_tc(rt, bad[b], 0, NULL, 0, NULL, 100), rc_full);
		char sentinel = 'Z';
		CHECK_EQ(pw_tc(rt, bad[b], 0, NULL, 0, &sentinel, 0), rc_full);
		CHECK_EQ(sentinel, 'Z');
		size_t sizes[] = { 1, 2, 3, 7, 16, len / 2, len - 1, len, len + 1, len + 2 };
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			size_t sz = sizes[k];
			char *e = malloc(sz + 8);
			CHECK(e);
			memset(e, 'X', sz + 8);
			CHECK_EQ(pw_tc(rt, bad[b], 0, NULL, 0, e, sz), rc_full);
			size_t el = strnlen(e, sz);
			CHECK(el < sz);                       /* NUL-terminated inside */
			CHECK(!strncmp(e, full, el));         /* a prefix */
			CHECK_EQ(el, len < sz - 1 ? len : sz - 1); /* as much as fits */
			for (size_t j = sz; j < sz + 8; j++)  /* nothing past it */
				CHECK_EQ(e[j], 'X');
			if (sz > len)
				CHECK(!strcmp(e, full));
			free(e);
		}
	}

	/* out: a show larger than the buffer */
	static const unsigned fl[] = { 0, PW_TC_STATS, PW_TC_JSON, PW_TC_STATS | PW_TC_JSON };
	for (size_t f = 0; f < 4; f++) {
		char *full = malloc(OUTSZ);
		CHECK(full);
		CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", fl[f], full, OUTSZ, err, sizeof(err)), 0);
		size_t len = strlen(full);
		CHECK(len > 100);
		CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", fl[f], NULL, 0, err, sizeof(err)), 0);
		CHECK_EQ(err[0], '\0');
		size_t sizes[] = { 1, 2, 10, len / 3, len - 1, len, len + 1 };
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			size_t sz = sizes[k];
			char *o = malloc(sz + 8);
			CHECK(o);
			memset(o, 'X', sz + 8);
			int rc = pw_tc(rt, "qdisc show dev eth0", fl[f], o, sz, err, sizeof(err));
			if (sz <= len) {
				CHECK_EQ(rc, -ENOSPC);
				CHECK_EQ(strlen(o), sz - 1);
				CHECK(!strncmp(o, full, sz - 1));
			} else {
				CHECK_EQ(rc, 0);
				CHECK(!strcmp(o, full));
			}
			CHECK_EQ(err[0], '\0'); /* ENOSPC has no message */
			for (size_t j = sz; j < sz + 8; j++)
				CHECK_EQ(o[j], 'X');
			free(o);
		}
		/* and the show changed nothing */
		char *again = malloc(OUTSZ);
		CHECK(again);
		CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", fl[f], again, OUTSZ, NULL, 0), 0);
		CHECK(!strcmp(again, full));
		free(again);
		free(full);
	}
	/* a modifying command prints nothing, whatever the out buffer */
	char tiny[1] = { 'X' };
	CHECK_EQ(pw_tc(rt, "qdisc change dev eth0 handle 10: netem delay 20ms", 0, tiny, 1, err,
		       sizeof(err)),
		 0);
	CHECK_EQ(tiny[0], '\0');
	CHECK(strstr((tcf(rt, 0, "qdisc show dev eth0 handle 10:"), out), "delay 20ms"));
	/* the obvious misuse */
	CHECK_EQ(pw_tc(NULL, "qdisc show", 0, out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK_EQ(pw_tc(rt, NULL, 0, out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK_EQ(pw_tc(rt, "", 0, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_EQ(out[0], '\0');
	CHECK(pw_tc(rt, "qdisc show dev \"eth0", 0, out, sizeof(out), err, sizeof(err)) < 0);
	pw_runtime_destroy(rt);
}

/* ------------------------------------------------- (d) seed 003 */

static const char *const seed003_lines[] = {
	"tc qd add dev eth1 root handle 1: mq",
	"tc qd add dev eth1 parent 1:1 est 1sec 4sec netem limit 70000 delay 6ms",
	"tc qd add dev eth1 parent 1:2 est 1sec 4sec netem limit 70000 delay 8ms",
	"tc qd add dev eth1 parent 1:3 est 1sec 4sec netem limit 70000 delay 10ms",
	"tc qd add dev eth1 parent 1:4 est 1sec 4sec netem limit 70000 delay 12ms",
	"tc qd add dev eth1 parent 1:5 est 1sec 4sec netem limit 70000 delay 14ms",
	"tc qd add dev eth1 parent 1:6 est 1sec 4sec netem limit 70000 delay 16ms",
	"tc qd add dev eth1 parent 1:7 est 1sec 4sec netem limit 80000 delay 18ms",
	"tc qd add dev eth1 parent 1:8 est 1sec 4sec netem limit 90000 delay 20ms",
};

/* The script's command lines: tests/tc/seed003.tc where this source lives,
 * else the copy above (which must then be what the file says). */
static unsigned seed003_script(char lines[][512], unsigned max)
{
	char path[4096];
	const char *src = __FILE__;
	const char *slash = strrchr(src, '/');
	snprintf(path, sizeof(path), "%.*s/tc/seed003.tc", slash ? (int)(slash - src) : 1,
		 slash ? src : ".");
	FILE *f = fopen(path, "r");
	unsigned n = 0;
	if (f) {
		char buf[512];
		while (fgets(buf, sizeof(buf), f)) {
			char *h = strchr(buf, '#');
			if (h)
				*h = '\0';
			buf[strcspn(buf, "\r\n")] = '\0';
			char *p = buf;
			while (*p == ' ' || *p == '\t')
				p++;
			if (!*p)
				continue;
			CHECK(n < max);
			snprintf(lines[n++], 512, "%s", p);
		}
		fclose(f);
		CHECK_EQ(n, 9);
		for (unsigned i = 0; i < n; i++)
			CHECK(!strcmp(lines[i], seed003_lines[i]));
	} else {
		for (; n < 9; n++)
			snprintf(lines[n], 512, "%s", seed003_lines[n]);
	}
	return n;
}

static void test_seed003(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, 1000000000ull, 0);
	struct pw_netdev *eth1 = mkdev(rt, "eth1", 8);
	char lines[16][512];
	unsigned n = seed003_script(lines, 16);
	for (unsigned i = 0; i < n; i++) {
		int rc = pw_tc(rt, lines[i], PW_TC_STATS, out, sizeof(out), err, sizeof(err));
		if (rc) {
			fprintf(stderr, "%s: %d %s\n", lines[i], rc, err);
			abort();
		}
		CHECK_EQ(out[0], '\0');
	}
	TC_OK(rt, 0, "qdisc show dev eth1");
	/* 9 qdiscs: mq 1: at the root, a netem 800N: under 1:N */
	unsigned nq = 0, seen = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		nq++;
		if (!strncmp(line, "qdisc mq ", 9)) {
			CHECK(!strcmp(line, "qdisc mq 1: root "));
			seen |= 1;
			continue;
		}
		unsigned h, par, lim, del;
		CHECK_EQ(sscanf(line, "qdisc netem %x: parent 1:%u limit %u delay %ums", &h, &par,
				&lim, &del),
			 4);
		CHECK(par >= 1 && par <= 8);
		CHECK_EQ(h, 0x8000 + par);
		CHECK_EQ(lim, par <= 6 ? 70000 : par == 7 ? 80000 : 90000);
		CHECK_EQ(del, 4 + 2 * par);
		char want[128];
		snprintf(want, sizeof(want), "qdisc netem %x: parent 1:%u limit %u delay %ums", h,
			 par, lim, del);
		CHECK(!strcmp(line, want));
		CHECK(!(seen & (1u << par)));
		seen |= 1u << par;
	}
	CHECK_EQ(nq, 9);
	CHECK_EQ(seen, 0x1ff);

	/* the same through -j, and the estimators through -s */
	TC_OK(rt, PW_TC_JSON, "qdisc show dev eth1");
	unsigned nk = 0;
	for (const char *p = out; (p = strstr(p, "\"kind\":\"netem\"")); p++)
		nk++;
	CHECK_EQ(nk, 8);
	TC_OK(rt, PW_TC_STATS, "qdisc show dev eth1");
	unsigned nr = 0;
	for (const char *p = out; (p = strstr(p, " rate 0bit 0pps ")); p++)
		nr++;
	CHECK_EQ(nr, 8);
	/* every class of the mq has its netem as the leaf */
	TC_OK(rt, 0, "class show dev eth1");
	for (unsigned i = 1; i <= 8; i++) {
		char want[64];
		snprintf(want, sizeof(want), "class mq 1:%u root leaf %x: \n", i, 0x8000 + i);
		CHECK(strstr(out, want));
	}
	/* and the device's queues are those netems */
	for (unsigned i = 1; i <= 8; i++) {
		struct pw_qdisc_stats st;
		CHECK_EQ(pw_netdev_qdisc_stats(eth1, (0x8000u + i) << 16, &st), 0);
		CHECK_EQ(st.qlen, 0);
	}
	pw_runtime_destroy(rt);
}

int main(void)
{
	RUN(test_round_trip);
	RUN(test_failure_changes_nothing);
	RUN(test_buffers);
	RUN(test_seed003);
	return 0;
}
