/* SPDX-License-Identifier: MIT */
/*
 * <pinwheel/link.h> (src/net/tc/link.c): a link on the simulated clock,
 * through its public calls only.  What is checked:
 *  - netem delay: each packet leaves at its send time + the delay, to the
 *    ns, in order, with its tag and bytes; the statistics as tc -s;
 *  - determinism: the same seed twice gives identical departures and drops
 *    (times, tags, lengths, bytes, duplicates, reasons) under jitter from
 *    the built-in normal table, loss, duplicate, corrupt and reorder;
 *    another seed another run;
 *  - every packet back once: drops on entry (limit), netem loss, a replace
 *    and a delete flushing, a tc change keeping what is queued, close with
 *    packets inside: each tag once (duplicates marked), the ledger's sum;
 *  - errors: bad words with tc's own message (the same as pw_tc() gives
 *    on a device of that name) and nothing built; a batch's bad line named;
 *    words that would read a file refused; a send or an advance earlier
 *    than the clock refused with nothing done; a closed link;
 *  - the tree reachable: htb classes through the priority (each class at
 *    its rate, to the ns), fq's flows through the hash (each flow paced
 *    apart), mq's queues through the hash (each child's delay, the queue
 *    reported);
 *  - duplicates (a copy, marked, same tag and bytes) and corruption (one
 *    bit flipped in the bytes that leave);
 *  - a burst gives what the same sends one at a time give;
 *  - no leak: 100,000 links (no distribution table) created, used, freed
 *    (ASan's leak check in the sanitizer build).
 * `test_link bench [PACKETS]` (not run by ctest: a timing) measures
 * packets per second through netem delay 20ms (docs/link.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/link.h>
#include <pinwheel/pinwheel.h>

#include "check.h"

#define MS 1000000ull

/* -------------------------------------------------------------- helpers */

static struct pw_link *mk(const char *words, unsigned flags, uint64_t seed, unsigned txq)
{
	struct pw_link *l = NULL;
	char err[512];
	int rc = pw_link_create(&l, words, flags, seed, txq, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pw_link_create(%s): %d %s\n", words, rc, err);
		CHECK_EQ(rc, 0);
	}
	return l;
}

/* A recorded packet (departure or drop), its bytes hashed. */
struct rec {
	uint64_t t, tag, bytes_hash;
	uint32_t len, reason;
	uint8_t dup;
	uint16_t txq;
};

struct recs {
	struct rec *r;
	size_t n, cap;
};

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static void recs_add(struct recs *rs, const struct pw_link_pkt *p)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 256;
		rs->r = realloc(rs->r, rs->cap * sizeof(*rs->r));
		CHECK(rs->r);
	}
	struct rec *r = &rs->r[rs->n++];
	memset(r, 0, sizeof(*r)); /* its padding too: runs compare with memcmp */
	r->t = p->time_ns;
	r->tag = p->tag;
	r->len = p->len;
	r->reason = p->reason;
	r->dup = p->dup;
	r->txq = p->txq;
	r->bytes_hash = p->data ? fnv(p->data, p->len) : 0;
}

/* Take every departure and drop into @dep and @drop (either may be NULL:
 * taken and forgotten). */
static void take_all(struct pw_link *l, struct recs *dep, struct recs *drop)
{
	struct pw_link_pkt p[37]; /* an odd size: takes split across calls */
	size_t n;
	while ((n = pw_link_departures(l, p, 37)) > 0)
		for (size_t i = 0; i < n; i++) {
			CHECK_EQ(p[i].reason, 0);
			if (dep)
				recs_add(dep, &p[i]);
		}
	while ((n = pw_link_drops(l, p, 37)) > 0)
		for (size_t i = 0; i < n; i++) {
			CHECK(p[i].reason > 0 && p[i].reason < PW_DROP_REASON_MAX);
			if (drop)
				recs_add(drop, &p[i]);
		}
}

/* The ledger: every tag in [0, n) came back once as an original, a dup
 * only for a tag handed in; the link's sums agree. */
static void check_ledger(struct pw_link *l, const struct recs *dep, const struct recs *drop,
			 uint64_t n)
{
	uint8_t *seen = calloc(n, 1);
	uint64_t dups = 0;
	const struct recs *both[2] = { dep, drop };
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < both[k]->n; i++) {
			const struct rec *r = &both[k]->r[i];
			CHECK(r->tag < n);
			if (r->dup) {
				dups++;
				continue;
			}
			CHECK_EQ(seen[r->tag], 0);
			seen[r->tag] = 1;
		}
	for (uint64_t t = 0; t < n; t++)
		CHECK_EQ(seen[t], 1);
	struct pw_link_stats st;
	CHECK_EQ(pw_link_stats(l, &st), 0);
	CHECK_EQ(st.handed_in, n);
	CHECK_EQ(st.duplicates, dups);
	CHECK_EQ(st.departed, dep->n);
	CHECK_EQ(st.dropped, drop->n);
	CHECK_EQ(st.in_flight, 0);
	free(seen);
}

/* ---------------------------------------------------------------- tests */

/* netem delay 20ms: each packet at its send time + 20 ms exactly, in
 * order, its tag and bytes; the root's statistics as tc -s counts them. */
static void test_delay_exact(void)
{
	struct pw_link *l = mk("netem delay 20ms", 0, 1, 1);
	CHECK_EQ(pw_link_now_ns(l), 0);
	char buf[32];
	for (unsigned i = 0; i < 100; i++) {
		int n = snprintf(buf, sizeof(buf), "packet %u", i);
		CHECK_EQ(pw_link_send(l, i * MS, buf, (uint32_t)n, i, 0, 0), 1);
	}
	CHECK_EQ(pw_link_now_ns(l), 99 * MS);
	struct pw_link_stats st;
	CHECK_EQ(pw_link_stats(l, &st), 0);
	CHECK_EQ(st.qlen, 20); /* 80..99 still inside at 99 ms */
	CHECK_EQ(st.in_flight, 20);
	CHECK_EQ(pw_link_advance(l, 1000 * MS), 0);
	CHECK_EQ(pw_link_now_ns(l), 1000 * MS);
	struct pw_link_pkt p[128];
	CHECK_EQ(pw_link_departures(l, p, 128), 100);
	for (unsigned i = 0; i < 100; i++) {
		int n = snprintf(buf, sizeof(buf), "packet %u", i);
		CHECK_EQ(p[i].time_ns, i * MS + 20 * MS);
		CHECK_EQ(p[i].tag, i);
		CHECK_EQ(p[i].len, (uint32_t)n);
		CHECK(p[i].data && !memcmp(p[i].data, buf, (size_t)n));
		CHECK_EQ(p[i].dup, 0);
		CHECK_EQ(p[i].reason, 0);
	}
	CHECK_EQ(pw_link_departures(l, p, 128), 0);
	CHECK_EQ(pw_link_drops(l, p, 128), 0);
	CHECK_EQ(pw_link_stats(l, &st), 0);
	CHECK_EQ(st.sent_packets, 100);
	CHECK_EQ(st.qlen, 0);
	CHECK_EQ(st.backlog, 0);
	CHECK_EQ(st.departed, 100);
	CHECK_EQ(st.in_flight, 0);
	/* tc -s, through the link */
	char out[4096], err[256];
	CHECK_EQ(pw_link_tc(l, "-s qdisc show dev link", out, sizeof(out), err, sizeof(err)), 0);
	CHECK(strstr(out, "qdisc netem") && strstr(out, "delay 20ms"));
	CHECK(strstr(out, " pkt (dropped 0, overlimits 0 requeues 0)"));
	CHECK(strstr(out, "Sent "));
	/* a packet without bytes: its length counts, no data comes back */
	CHECK_EQ(pw_link_send(l, 1000 * MS, NULL, 1500, 7, 0, 0), 1);
	CHECK_EQ(pw_link_advance(l, 1020 * MS), 0);
	CHECK_EQ(pw_link_departures(l, p, 128), 1);
	CHECK(p[0].data == NULL && p[0].len == 1500 && p[0].time_ns == 1020 * MS);
	pw_link_free(l);
}

/* One run of a lossy, jittery, duplicating, corrupting, reordering link. */
static void lossy_run(uint64_t seed, struct recs *dep, struct recs *drop)
{
	struct pw_link *l = mk("netem delay 20ms 5ms distribution normal loss 5% duplicate 3% "
			       "corrupt 3% reorder 10% gap 3",
			       0, seed, 1);
	unsigned char data[200];
	for (unsigned i = 0; i < 5000; i++) {
		uint32_t len = 40 + i % 160;
		for (uint32_t b = 0; b < len; b++)
			data[b] = (unsigned char)(i * 7 + b);
		CHECK(pw_link_send(l, (uint64_t)i * 100000, data, len, i, 0, i) >= 0);
		if (i % 97 == 0)
			take_all(l, dep, drop);
	}
	CHECK_EQ(pw_link_advance(l, 2000 * MS), 0);
	take_all(l, dep, drop);
	check_ledger(l, dep, drop, 5000);
	pw_link_free(l);
}

static bool recs_equal(const struct recs *a, const struct recs *b)
{
	return a->n == b->n && !memcmp(a->r, b->r, a->n * sizeof(*a->r));
}

/* The same seed twice: identical; another seed: not. */
static void test_determinism(void)
{
	struct recs d1 = { 0 }, x1 = { 0 }, d2 = { 0 }, x2 = { 0 }, d3 = { 0 }, x3 = { 0 };
	lossy_run(7, &d1, &x1);
	lossy_run(7, &d2, &x2);
	lossy_run(8, &d3, &x3);
	CHECK(recs_equal(&d1, &d2));
	CHECK(recs_equal(&x1, &x2));
	CHECK(!recs_equal(&d1, &d3));
	/* what the run shows: losses, duplicates, corruption, reordering */
	uint64_t dups = 0, reordered = 0;
	for (size_t i = 0; i < d1.n; i++) {
		dups += d1.r[i].dup;
		if (i && d1.r[i].tag < d1.r[i - 1].tag)
			reordered++;
	}
	CHECK(x1.n > 150 && x1.n < 350); /* 5% of 5000: 250, sd 15 */
	for (size_t i = 0; i < x1.n; i++)
		CHECK_EQ(x1.r[i].reason, PW_DROP_NETEM_LOSS);
	CHECK(dups > 80 && dups < 220);  /* 3%: about 143 */
	CHECK(reordered > 0);
	/* corrupted: a departure whose bytes are not what was sent */
	unsigned corrupt = 0;
	unsigned char data[200];
	for (size_t i = 0; i < d1.n; i++) {
		uint64_t tag = d1.r[i].tag;
		uint32_t len = 40 + (uint32_t)(tag % 160);
		for (uint32_t b = 0; b < len; b++)
			data[b] = (unsigned char)(tag * 7 + b);
		if (fnv(data, len) != d1.r[i].bytes_hash)
			corrupt++;
	}
	CHECK(corrupt > 80 && corrupt < 220);
	free(d1.r), free(x1.r), free(d2.r), free(x2.r), free(d3.r), free(x3.r);
}

/* Every packet back once through entry drops, a change, a replace, a
 * delete and the close. */
static void test_every_packet_back(void)
{
	struct pw_link *l = mk("netem delay 100ms limit 50", 0, 3, 1);
	struct recs dep = { 0 }, drop = { 0 };
	uint64_t tag = 0;
	unsigned taken = 0;
	for (unsigned i = 0; i < 80; i++)
		taken += (unsigned)pw_link_send(l, 0, NULL, 1000, tag++, 0, 0);
	CHECK_EQ(taken, 50); /* 30 over netem's limit */
	take_all(l, &dep, &drop);
	CHECK_EQ(drop.n, 30);
	for (size_t i = 0; i < drop.n; i++)
		CHECK(drop.r[i].reason == PW_DROP_QDISC_LIMIT && drop.r[i].t == 0);
	/* a change keeps what is queued: netem keeps the departure times */
	char err[512];
	CHECK_EQ(pw_link_tc(l, "qdisc change dev link root netem delay 10ms limit 50", NULL, 0, err,
			    sizeof(err)), 0);
	CHECK_EQ(pw_link_send(l, 50 * MS, NULL, 1000, tag++, 0, 0), 0); /* still full */
	CHECK_EQ(pw_link_advance(l, 99 * MS), 0);
	take_all(l, &dep, &drop);
	CHECK_EQ(dep.n, 0);
	/* a replace flushes the 50 at the clock */
	CHECK_EQ(pw_link_tc(l, "qdisc replace dev link root tbf rate 1mbit burst 1600 latency 1s",
			    NULL, 0, err, sizeof(err)), 0);
	size_t before = drop.n;
	take_all(l, &dep, &drop);
	CHECK_EQ(drop.n - before, 50);
	for (size_t i = before; i < drop.n; i++)
		CHECK(drop.r[i].reason == PW_DROP_FLUSH && drop.r[i].t == 99 * MS);
	/* tbf: 1000-byte packets every 8 ms after the burst */
	for (unsigned i = 0; i < 20; i++)
		pw_link_send(l, 100 * MS, NULL, 1000, tag++, 0, 0);
	CHECK_EQ(pw_link_advance(l, 140 * MS), 0);
	/* a delete flushes tbf's backlog; pfifo_fast comes back */
	CHECK_EQ(pw_link_tc(l, "qdisc del dev link root", NULL, 0, err, sizeof(err)), 0);
	for (unsigned i = 0; i < 10; i++)
		CHECK_EQ(pw_link_send(l, 150 * MS, NULL, 100, tag++, 0, 0), 1);
	/* a slow tbf again, then close with its backlog */
	CHECK_EQ(pw_link_tc(l, "qdisc add dev link root tbf rate 100kbit burst 1600 latency 10s",
			    NULL, 0, err, sizeof(err)), 0);
	for (unsigned i = 0; i < 10; i++)
		pw_link_send(l, 160 * MS, NULL, 1000, tag++, 0, 0);
	pw_link_close(l);
	pw_link_close(l); /* twice: no-op */
	CHECK_EQ(pw_link_send(l, 200 * MS, NULL, 1, tag, 0, 0), -ESHUTDOWN);
	CHECK_EQ(pw_link_tc(l, "qdisc show", NULL, 0, err, sizeof(err)), -ESHUTDOWN);
	take_all(l, &dep, &drop);
	struct pw_link_stats st;
	CHECK_EQ(pw_link_stats(l, &st), 0);
	CHECK(st.drops_by_reason[PW_DROP_FLUSH] > 50);    /* netem's 50 + tbf's backlog */
	CHECK(st.drops_by_reason[PW_DROP_DEV_DESTROY] > 0);
	CHECK_EQ(st.drops_by_reason[PW_DROP_QDISC_LIMIT], 31);
	check_ledger(l, &dep, &drop, tag);
	pw_link_free(l);
	free(dep.r), free(drop.r);
}

/* A mid-run change: queued packets keep their times, new ones the new delay. */
static void test_change_midrun(void)
{
	struct pw_link *l = mk("netem delay 20ms", 0, 1, 1);
	char err[256];
	for (unsigned i = 0; i < 10; i++) {
		if (i == 5) {
			CHECK_EQ(pw_link_advance(l, 5 * MS), 0);
			CHECK_EQ(pw_link_tc(l, "qdisc change dev link root netem delay 50ms", NULL, 0,
					    err, sizeof(err)), 0);
		}
		CHECK_EQ(pw_link_send(l, i * MS, NULL, 100, i, 0, 0), 1);
	}
	CHECK_EQ(pw_link_advance(l, 100 * MS), 0);
	struct pw_link_pkt p[16];
	CHECK_EQ(pw_link_departures(l, p, 16), 10);
	for (unsigned i = 0; i < 10; i++) {
		CHECK_EQ(p[i].tag, i);
		CHECK_EQ(p[i].time_ns, i * MS + (i < 5 ? 20 : 50) * MS);
	}
	pw_link_free(l);
}

static int nop_xmit(struct pw_netdev *d, unsigned q, struct pw_pkt *p, void *c)
{
	(void)d, (void)q, (void)p, (void)c;
	return PW_NETDEV_TX_OK;
}

static void nop_drop(struct pw_netdev *d, struct pw_pkt *p, enum pw_drop_reason r, void *c)
{
	(void)d, (void)p, (void)r, (void)c;
}

/* The message pw_tc() gives for @cmd on a fresh device "link", its
 * trailing newline cut as the link cuts it. */
static int tc_says(const char *cmd, char *msg, size_t len)
{
	static const struct pw_netdev_ops nop = { .xmit = nop_xmit, .drop = nop_drop };
	struct pw_config cfg;
	struct pw_runtime *rt;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, PW_LINK_DEV, 1, &nop, NULL, &dev), 0);
	int rc = pw_tc(rt, cmd, PW_TC_NO_FILES, NULL, 0, msg, len);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	return rc;
}

/* Bad words: tc's message, nothing built; a batch's line named; files
 * refused; the clock never goes back. */
static void test_errors(void)
{
	static const char *bad[] = {
		"netem delay 20xs", "netem lossy 5%", "netem delay 20ms loss", "bogus 1",
		"tbf rate 1mbit", "htb default x", "netem distribution normal",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pw_link *l = (struct pw_link *)1;
		char err[512], want[512], cmd[256];
		int rc = pw_link_create(&l, bad[i], 0, 1, 1, err, sizeof(err));
		CHECK(rc < 0);
		CHECK(l == NULL);
		snprintf(cmd, sizeof(cmd), "qdisc add dev link root %s", bad[i]);
		int rc2 = tc_says(cmd, want, sizeof(want));
		CHECK_EQ(rc, rc2);
		if (strcmp(err, want)) {
			fprintf(stderr, "%s: link [%s] tc [%s]\n", bad[i], err, want);
			CHECK(0);
		}
		CHECK(err[0]);
	}
	/* the words name the bad token as tc does */
	char err[512];
	struct pw_link *l;
	CHECK_EQ(pw_link_create(&l, "netem lossy 5%", 0, 1, 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "lossy"));
	/* a batch: the failing line named */
	CHECK(pw_link_create(&l, "# a tree\nqdisc add dev link root handle 1: htb default 10\n"
			     "class add dev link parent 1: classid 1:10 htb rate 1mbot\n",
			     PW_LINK_BATCH, 1, 1, err, sizeof(err)) < 0);
	CHECK(!strncmp(err, "line 3: ", 8) && strstr(err, "rate"));
	CHECK(pw_link_create(&l, "qdisc add dev eth0 root pfifo", PW_LINK_BATCH, 1, 1, err,
			     sizeof(err)) < 0);
	CHECK(strstr(err, "eth0"));
	/* no file is ever read: a path and a file-only table refused */
	CHECK_EQ(pw_link_create(&l, "netem delay 10ms 1ms distribution /etc/passwd", 0, 1, 1, err,
				sizeof(err)), -EPERM);
	CHECK(pw_link_create(&l, "netem delay 10ms 1ms distribution experimental", 0, 1, 1, err,
			     sizeof(err)) < 0);
	CHECK_EQ(pw_link_create(&l, "pfifo", 0, 1, PW_MAX_TXQ + 1, err, sizeof(err)), -EINVAL);
	CHECK_EQ(pw_link_create(NULL, NULL, 0, 0, 0, NULL, 0), -EINVAL);
	/* the clock */
	l = mk("netem delay 20ms", 0, 1, 1);
	CHECK_EQ(pw_link_send(l, 10 * MS, NULL, 100, 1, 0, 0), 1);
	CHECK_EQ(pw_link_send(l, 9 * MS, NULL, 100, 2, 0, 0), -EINVAL);
	CHECK(strstr(pw_link_error(l), "earlier than the link's clock"));
	CHECK_EQ(pw_link_advance(l, 5 * MS), -EINVAL);
	CHECK_EQ(pw_link_now_ns(l), 10 * MS);
	struct pw_link_stats st;
	CHECK_EQ(pw_link_stats(l, &st), 0);
	CHECK_EQ(st.handed_in, 1); /* the refused send did nothing */
	/* a bad change mid-run changes nothing */
	CHECK_EQ(pw_link_tc(l, "qdisc change dev link root netem delay 5xx", NULL, 0, err,
			    sizeof(err)), -EINVAL);
	CHECK(strstr(err, "latency"));
	CHECK_EQ(pw_link_send(l, 10 * MS, NULL, 100, 3, 0, 0), 1);
	CHECK_EQ(pw_link_advance(l, 30 * MS), 0);
	struct pw_link_pkt p[4];
	CHECK_EQ(pw_link_departures(l, p, 4), 2);
	CHECK(p[0].time_ns == 30 * MS && p[1].time_ns == 30 * MS);
	/* an output too short: -ENOSPC */
	char tiny[8];
	CHECK_EQ(pw_link_tc(l, "qdisc show", tiny, sizeof(tiny), err, sizeof(err)), -ENOSPC);
	pw_link_free(l);
}

/* htb's classes through the priority: each at its rate. */
static void test_htb_classes(void)
{
	struct pw_link *l = mk("qdisc add dev link root handle 1: htb default 30\n"
			       "class add dev link parent 1: classid 1:10 htb rate 1mbit\n"
			       "class add dev link parent 1: classid 1:30 htb rate 8mbit\n",
			       PW_LINK_BATCH, 1, 1);
	for (unsigned i = 0; i < 10; i++)
		CHECK_EQ(pw_link_send(l, 0, NULL, 1000, i, 0x10010, 0), 1); /* 1:10 */
	for (unsigned i = 0; i < 10; i++)
		CHECK_EQ(pw_link_send(l, 0, NULL, 1000, 100 + i, 0, 0), 1); /* default 1:30 */
	CHECK_EQ(pw_link_advance(l, 1000 * MS), 0);
	struct pw_link_pkt p[32];
	CHECK_EQ(pw_link_departures(l, p, 32), 20);
	uint64_t last10 = 0, last30 = 0;
	unsigned n10 = 0, n30 = 0;
	for (unsigned i = 0; i < 20; i++) {
		if (p[i].tag < 100) {
			if (n10++ >= 3) /* after the burst: 1000 bytes at 1 Mbit/s */
				CHECK_EQ(p[i].time_ns - last10, 8 * MS);
			last10 = p[i].time_ns;
		} else {
			if (n30++ >= 3) /* at 8 Mbit/s */
				CHECK_EQ(p[i].time_ns - last30, 1 * MS);
			last30 = p[i].time_ns;
		}
	}
	CHECK(n10 == 10 && n30 == 10);
	char out[4096], err[256];
	CHECK_EQ(pw_link_tc(l, "-s class show dev link", out, sizeof(out), err, sizeof(err)), 0);
	const char *c10 = strstr(out, "class htb 1:10"), *c30 = strstr(out, "class htb 1:30");
	CHECK(c10 && c30);
	CHECK(strstr(c10, "Sent 10000 bytes 10 pkt") && strstr(c30, "Sent 10000 bytes 10 pkt"));
	pw_link_free(l);
}

/* The time the last of @n packets per flow over @flows flows leaves fq. */
static uint64_t fq_last(unsigned flows, unsigned n)
{
	struct pw_link *l = mk("fq maxrate 8mbit quantum 1514 initial_quantum 1514", 0, 1, 1);
	for (unsigned i = 0; i < n; i++)
		for (unsigned f = 0; f < flows; f++)
			CHECK_EQ(pw_link_send(l, 0, NULL, 1000, i * flows + f, 0, 0x1000 + f), 1);
	if (flows > 1) {
		char out[4096], err[256];
		CHECK_EQ(pw_link_tc(l, "-s qdisc show", out, sizeof(out), err, sizeof(err)), 0);
		char want[32];
		snprintf(want, sizeof(want), "flows %u ", flows);
		CHECK(strstr(out, want));
	}
	CHECK_EQ(pw_link_advance(l, 1000 * MS), 0);
	struct pw_link_pkt p[64];
	size_t got = pw_link_departures(l, p, 64);
	CHECK_EQ(got, flows * n);
	uint64_t last = p[got - 1].time_ns;
	pw_link_free(l);
	return last;
}

/* fq's flows through the hash: each flow paced by maxrate on its own, so
 * two flows take as long as one with the same packets each. */
static void test_fq_flows(void)
{
	uint64_t one = fq_last(1, 10), two = fq_last(2, 10), one20 = fq_last(1, 20);
	CHECK(one >= 5 * MS); /* paced: a quantum (1514 bytes) at 8 Mbit/s a packet, after the first */
	CHECK_EQ(two, one);
	CHECK(one20 > one + 9 * MS);
}

/* mq's queues through the hash: each child's own delay; txq reported. */
static void test_mq_txqueues(void)
{
	struct pw_link *l = mk("qdisc add dev link root handle 1: mq\n"
			       "qdisc replace dev link parent 1:1 netem delay 10ms\n"
			       "qdisc replace dev link parent 1:2 netem delay 20ms\n"
			       "qdisc replace dev link parent 1:3 netem delay 30ms\n"
			       "qdisc replace dev link parent 1:4 netem delay 40ms\n",
			       PW_LINK_BATCH, 1, 4);
	for (uint32_t q = 0; q < 4; q++) /* skb_tx_hash: hash * 4 >> 32 */
		CHECK_EQ(pw_link_send(l, q * MS, NULL, 100, q, 0, (q << 30) | 12345u), 1);
	CHECK_EQ(pw_link_advance(l, 100 * MS), 0);
	struct pw_link_pkt p[8];
	CHECK_EQ(pw_link_departures(l, p, 8), 4);
	for (unsigned i = 0; i < 4; i++) {
		CHECK_EQ(p[i].tag, i);
		CHECK_EQ(p[i].txq, i);
		CHECK_EQ(p[i].time_ns, i * MS + (i + 1) * 10 * MS);
	}
	struct pw_link_stats st;
	CHECK_EQ(pw_link_stats(l, &st), 0);
	CHECK_EQ(st.sent_packets, 4); /* mq: its children summed */
	pw_link_free(l);
}

/* Duplicates: a marked copy with the same tag and bytes; corruption: one
 * bit flipped in what leaves. */
static void test_dup_corrupt(void)
{
	struct pw_link *l = mk("netem delay 1ms duplicate 100%", 0, 1, 1);
	unsigned char d[64];
	for (unsigned i = 0; i < 10; i++) {
		memset(d, (int)i, sizeof(d));
		CHECK_EQ(pw_link_send(l, i * MS, d, sizeof(d), i, 0, 0), 1);
	}
	CHECK_EQ(pw_link_advance(l, 20 * MS), 0);
	struct pw_link_pkt p[32];
	CHECK_EQ(pw_link_departures(l, p, 32), 20);
	unsigned dups = 0;
	for (unsigned i = 0; i < 20; i++) {
		memset(d, (int)p[i].tag, sizeof(d));
		CHECK(p[i].len == sizeof(d) && !memcmp(p[i].data, d, sizeof(d)));
		dups += p[i].dup;
	}
	CHECK_EQ(dups, 10);
	struct pw_link_stats st;
	CHECK_EQ(pw_link_stats(l, &st), 0);
	CHECK(st.duplicates == 10 && st.departed == 20 && st.in_flight == 0);
	pw_link_free(l);

	l = mk("netem corrupt 100%", 0, 1, 1);
	for (unsigned i = 0; i < 50; i++) {
		memset(d, 0x55, sizeof(d));
		CHECK_EQ(pw_link_send(l, 0, d, sizeof(d), i, 0, 0), 1);
	}
	CHECK_EQ(pw_link_advance(l, 1 * MS), 0);
	CHECK_EQ(pw_link_departures(l, p, 32), 32);
	size_t got = 32 + pw_link_departures(l, p + 0, 0); /* max 0: nothing */
	CHECK_EQ(got, 32);
	unsigned n = 0;
	for (;;) {
		size_t k = pw_link_departures(l, p, 32);
		if (!k)
			break;
		for (size_t i = 0; i < k; i++, n++) {
			const unsigned char *b = p[i].data;
			unsigned bits = 0;
			for (size_t j = 0; j < sizeof(d); j++)
				bits += (unsigned)__builtin_popcount((unsigned)(b[j] ^ 0x55));
			CHECK_EQ(bits, 1);
		}
	}
	CHECK_EQ(n, 18); /* the first 32 were freed by the max-0 take */
	pw_link_free(l);
}

/* A burst gives what the same sends one at a time give; a refusal stops it. */
static void test_burst(void)
{
	const size_t n = 3000;
	uint64_t *t = calloc(n, sizeof(*t)), *tag = calloc(n, sizeof(*tag));
	uint32_t *len = calloc(n, sizeof(*len)), *hash = calloc(n, sizeof(*hash));
	uint8_t *taken = calloc(n, 1);
	unsigned char *data = malloc(n * 100);
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		t[i] = i * 50000;
		tag[i] = 1000 + i;
		len[i] = 20 + (uint32_t)(i % 80);
		hash[i] = (uint32_t)i;
		for (uint32_t b = 0; b < len[i]; b++)
			data[off++] = (unsigned char)(i + b);
	}
	const char *w = "netem delay 10ms 3ms loss 10% duplicate 5% corrupt 5%";
	struct pw_link *a = mk(w, 0, 11, 1), *b = mk(w, 0, 11, 1);
	struct pw_link_burst br = { .n = n, .time_ns = t, .len = len, .data = data, .tag = tag,
				    .hash = hash, .taken = taken };
	CHECK_EQ(pw_link_send_burst(a, &br), (long)n);
	off = 0;
	unsigned dropped_in = 0;
	for (size_t i = 0; i < n; i++) {
		int r = pw_link_send(b, t[i], data + off, len[i], tag[i], 0, hash[i]);
		CHECK_EQ(r, taken[i]);
		dropped_in += r == 0;
		off += len[i];
	}
	CHECK(dropped_in > 0);
	pw_link_advance(a, 1000 * MS);
	pw_link_advance(b, 1000 * MS);
	struct recs da = { 0 }, xa = { 0 }, db = { 0 }, xb = { 0 };
	take_all(a, &da, &xa);
	take_all(b, &db, &xb);
	CHECK(recs_equal(&da, &db) && recs_equal(&xa, &xb));
	/* a time earlier than the clock: refused at its index */
	uint64_t t2[3] = { 1000 * MS, 1001 * MS, 999 * MS };
	uint32_t l2[3] = { 1, 1, 1 };
	struct pw_link_burst b2 = { .n = 3, .time_ns = t2, .len = l2 };
	CHECK_EQ(pw_link_send_burst(a, &b2), 2);
	CHECK(strstr(pw_link_error(a), "packet 2:"));
	struct pw_link_burst b3 = { .n = 1 };
	CHECK_EQ(pw_link_send_burst(a, &b3), -EINVAL);
	pw_link_free(a);
	pw_link_free(b);
	free(da.r), free(xa.r), free(db.r), free(xb.r);
	free(t), free(tag), free(len), free(hash), free(taken), free(data);
}

/* 100,000 links, each used and freed: nothing leaks (the ASan build's
 * leak check), nothing grows. */
static void test_many_links(void)
{
	const char *words[] = { "netem delay 1ms", "pfifo limit 10", "tbf rate 1mbit burst 2k latency 10ms",
				NULL };
	for (unsigned i = 0; i < 100000; i++) {
		struct pw_link *l = mk(words[i % 4], 0, i, 1 + i % 3);
		struct pw_link_pkt p[4];
		pw_link_send(l, 0, "abc", 3, 1, 0, i);
		pw_link_send(l, 0, NULL, 1000, 2, 0, i);
		pw_link_advance(l, 2 * MS);
		pw_link_departures(l, p, 1); /* one taken, the rest freed by free */
		if (i % 2)
			pw_link_send(l, 2 * MS, "x", 1, 3, 0, 0);
		pw_link_free(l);
	}
}

/* ------------------------------------------------------------- bench */

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * `test_link bench [PACKETS]`: packets per second through a link of netem
 * delay 20ms, one thread's CPU time, 10,000 packets in flight (one sent
 * every 2 us of link time), departures taken every 32 sends: one send a
 * call, then bursts of 32.  Medians of 5 runs.  The same shape as
 * pinwheel-bench net --config 2 --batch 1 (the layer alone), which
 * docs/link.md shows beside it.
 */
static double bench_run(unsigned npk, int burst)
{
	struct pw_link *l = mk("netem delay 20ms limit 1000000", 0, 1, 1);
	struct pw_link_pkt p[64];
	uint64_t tt[32], tg[32];
	uint32_t ln[32];
	for (unsigned i = 0; i < 32; i++)
		ln[i] = 1000;
	struct pw_link_burst b = { .n = 32, .time_ns = tt, .len = ln, .tag = tg };
	uint64_t t0 = cpu_ns();
	for (unsigned i = 0; i < npk; i += 32) {
		if (burst) {
			for (unsigned k = 0; k < 32; k++)
				tt[k] = (uint64_t)(i + k) * 2000, tg[k] = i + k;
			CHECK_EQ(pw_link_send_burst(l, &b), 32);
		} else {
			for (unsigned k = 0; k < 32; k++)
				pw_link_send(l, (uint64_t)(i + k) * 2000, NULL, 1000, i + k, 0, 0);
		}
		while (pw_link_departures(l, p, 64) == 64)
			;
	}
	uint64_t t1 = cpu_ns();
	pw_link_free(l);
	return (double)(t1 - t0) / npk;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int bench(unsigned npk)
{
	double one[5], many[5];
	for (int r = 0; r < 5; r++) {
		one[r] = bench_run(npk, 0);
		many[r] = bench_run(npk, 1);
	}
	qsort(one, 5, sizeof(double), cmp_d);
	qsort(many, 5, sizeof(double), cmp_d);
	printf("# test_link bench %u: netem delay 20ms, 10000 in flight, CPU time, median of 5\n",
	       npk);
	printf("link one a call: %.1f ns/pkt (%.2f Mpps)\n", one[2], 1e3 / one[2]);
	printf("link burst of 32: %.1f ns/pkt (%.2f Mpps)\n", many[2], 1e3 / many[2]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench(argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 2000000);
	RUN(test_delay_exact);
	RUN(test_determinism);
	RUN(test_every_packet_back);
	RUN(test_change_midrun);
	RUN(test_errors);
	RUN(test_htb_classes);
	RUN(test_fq_flows);
	RUN(test_mq_txqueues);
	RUN(test_dup_corrupt);
	RUN(test_burst);
	RUN(test_many_links);
	return 0;
}
