/* SPDX-License-Identifier: MIT */
/*
 * The trace qdisc (src/net/sched/trace.c, tc/q_trace.c) on the simulated
 * clock, against a deliberately simple model of Mahimahi's link written
 * here from its definition: the opportunities are walked one by one in
 * time order, each gives out its 1504 bytes one byte at a time to the
 * head of a FIFO of the packets that arrived strictly before it, a packet
 * leaves at the opportunity that gave it its last byte, bytes that find
 * no packet are lost, the trace loops with its last line as the period,
 * and the trace's time 0 is the qdisc's creation.  The qdisc computes the
 * same departures another way (in closed form at enqueue); every packet
 * must leave at the model's nanosecond, or be dropped where the model
 * drops it (the limit).
 *
 * Fixed figures, derived by hand from the semantics (and checked against
 * the model too): the trace `1 1 3` with 1500-byte packets queued from
 * time 0 delivers at ms 1, 1, 3, 4, 4, 6, 7, 7, 9; the opportunities
 * that carry two packets' ends are those at ms 375, 750, 1125, ... (every
 * opportunity carries 4 bytes more than a packet: after 375 of them the
 * slack is a packet); 3,006 packets leave before 3,000 ms (2,999
 * opportunities x 1504 bytes / 1500), 45,104 with 100-byte packets.
 * Then: the boundary (an arrival at an opportunity's time waits for the
 * next one), packets spanning opportunities, idle links losing bytes, the
 * loop, `change` (a new trace restarts the clock, carried packets keep
 * their times), a randomized comparison (seeded, printed, replayable with
 * PW_TEST_SEED), tc's words, messages and output, and the exactly-once
 * rule through delete and device destroy with packets queued.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"

#include "net_ledger.h"

#define T0 1000000000ull /* the simulated clock starts at 1 s */
#define MS 1000000ull
#define OPP 1504u

static char tmpdir[64];

/* ------------------------------------------------------------ the model */

struct mpkt {
	uint64_t arrival;
	uint32_t len, left;
	int64_t out;     /* departure ns; -1 still queued; -2 dropped */
	unsigned ends_in; /* which opportunity carried its last byte */
};

struct model {
	const uint32_t *ms;
	unsigned n;
	uint64_t epoch;
	uint32_t limit;
	struct mpkt *p;
	unsigned np;
	unsigned next_arrival; /* packets are given in arrival order */
	unsigned *fifo;        /* indices, head .. tail */
	unsigned head, tail;
	uint64_t k;            /* the next opportunity */
	uint64_t opps;         /* opportunities walked */
	unsigned two_ends[64]; /* the first opportunities carrying 2+ ends: their ms */
	unsigned ntwo;
};

static uint64_t m_time(const struct model *m, uint64_t k)
{
	uint64_t period = (uint64_t)m->ms[m->n - 1] * MS;
	return m->epoch + (k / m->n) * period + (uint64_t)m->ms[k % m->n] * MS;
}

static void m_admit(struct model *m, unsigned i)
{
	struct mpkt *p = &m->p[i];
	if (m->tail - m->head >= m->limit) {
		p->out = -2;
		return;
	}
	p->left = p->len;
	p->out = -1;
	m->fifo[m->tail++] = i;
}

/* Walk the opportunities up to time @until (inclusive), admitting each
 * packet before the first opportunity later than its arrival. */
static void m_run(struct model *m, uint64_t until)
{
	for (;;) {
		uint64_t T = m_time(m, m->k);
		while (m->next_arrival < m->np && m->p[m->next_arrival].arrival < T &&
		       m->p[m->next_arrival].arrival <= until)
			m_admit(m, m->next_arrival++);
		if (T > until)
			return;
		unsigned ends = 0;
		for (unsigned byte = 0; byte < OPP;) {
			if (m->head == m->tail)
				break; /* the rest of this opportunity is lost */
			struct mpkt *p = &m->p[m->fifo[m->head]];
			if (p->left) {
				p->left--;
				byte++;
			}
			if (p->left == 0) {
				p->out = (int64_t)T;
				p->ends_in = (unsigned)m->k;
				m->head++;
				ends++;
			}
		}
		/* a packet of 0 bytes right behind a full opportunity goes with it only
		 * if bytes were left: none here */
		if (ends >= 2 && m->ntwo < 64)
			m->two_ends[m->ntwo++] = (unsigned)((T - m->epoch) / MS);
		m->k++;
		m->opps++;
	}
}

static void m_init(struct model *m, const uint32_t *ms, unsigned n, uint64_t epoch,
		   uint32_t limit, unsigned np)
{
	memset(m, 0, sizeof(*m));
	m->ms = ms;
	m->n = n;
	m->epoch = epoch;
	m->limit = limit;
	m->np = np;
	m->p = calloc(np ? np : 1, sizeof(*m->p));
	m->fifo = calloc(np ? np : 1, sizeof(*m->fifo));
	CHECK(m->p && m->fifo);
}

static void m_free(struct model *m)
{
	free(m->p);
	free(m->fifo);
	m->p = NULL;
	m->fifo = NULL;
}

/* --------------------------------------------------------- the harness */

static const char *write_trace(const char *name, const uint32_t *ms, unsigned n)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	CHECK(f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%u\n", ms[i]);
	CHECK_EQ(fclose(f), 0);
	return path;
}

static const char *write_text(const char *name, const char *text)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	CHECK(f);
	fputs(text, f);
	CHECK_EQ(fclose(f), 0);
	return path;
}

static void advance_to(uint64_t t)
{
	uint64_t now = pw_now_ns(L.rt);
	if (t > now)
		pw_sim_advance(L.rt, t - now);
}

/* The trace @ms as `text`'s word: the numbers separated in @style's way
 * (0 blanks, 1 commas, 2 a file's lines with CRLF and blank lines, 3 a
 * mix of blanks, tabs, newlines and commas).  Returns a malloc()ed word. */
static char *text_of(const uint32_t *ms, unsigned n, unsigned style)
{
	static const char *const seps[4][4] = {
		{ " ", " ", " ", " " },
		{ ",", ",", ",", "," },
		{ "\r\n", "\n\n", "\r\n", "\n" },
		{ "  ", ",", "\t", " ,\n " },
	};
	size_t cap = (size_t)n * 16 + 16, len = 0;
	char *s = malloc(cap);
	CHECK(s);
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%u", i ? seps[style][i % 4] : "",
					ms[i]);
	return s;
}

/* A device on a fresh simulated runtime, its root `trace SPEC limit N`. */
static struct pw_netdev *setup_spec(const char *spec, uint32_t limit)
{
	struct pw_runtime *rt = sim_create(2, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	size_t len = strlen(spec) + 128;
	char *cmd = malloc(len);
	CHECK(cmd);
	snprintf(cmd, len, "qdisc add dev eth0 root handle 1: trace %s limit %u", spec, limit);
	tc_ok(rt, cmd);
	free(cmd);
	return dev;
}

static struct pw_netdev *setup(const char *path, uint32_t limit)
{
	char spec[256];
	snprintf(spec, sizeof(spec), "file %s", path);
	return setup_spec(spec, limit);
}

/* The trace @ms given as @form: 0 a file, 1-4 `text` in text_of()'s
 * style @form - 1 (quoted). */
static struct pw_netdev *setup_form(const uint32_t *ms, unsigned n, unsigned form, uint32_t limit)
{
	if (form == 0)
		return setup(write_trace("form.trace", ms, n), limit);
	char *t = text_of(ms, n, form - 1);
	size_t len = strlen(t) + 16;
	char *spec = malloc(len);
	CHECK(spec);
	snprintf(spec, len, "text \"%s\"", t);
	struct pw_netdev *dev = setup_spec(spec, limit);
	free(spec);
	free(t);
	return dev;
}

static void teardown(struct pw_netdev *dev)
{
	struct pw_runtime *rt = L.rt;
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* Every packet of the ledger where the model has it: sent at its time,
 * dropped, or (@queued_ok) still queued; sends in arrival order. */
static void check_model(const struct model *m)
{
	CHECK_EQ(L.n, m->np);
	for (unsigned i = 0; i < m->np; i++) {
		const struct mpkt *p = &m->p[i];
		if (p->out == -2) {
			CHECK_EQ(L.state[i], 3);
		} else if (p->out == -1) {
			CHECK_EQ(L.state[i], 1);
		} else {
			if (L.state[i] != 2 || L.xmit_ns[i] != (uint64_t)p->out)
				fprintf(stderr, "packet %u (len %u, arrival %" PRIu64 "): state %u at %" PRIu64
						", model %" PRId64 "\n",
					i, p->len, p->arrival, L.state[i], L.xmit_ns[i], p->out);
			CHECK_EQ(L.state[i], 2);
			CHECK_EQ(L.xmit_ns[i], p->out);
		}
	}
	for (unsigned k = 1; k < L.norder; k++)
		CHECK(L.order[k] > L.order[k - 1]);
}

/* --------------------------------------------------------------- tests */

/* The trace `1 1 3`, packets of @len bytes queued from time 0 (more than
 * leave in 3 s): the model's departures, and how many leave before 3 s. */
static unsigned backlogged_113(uint32_t len, unsigned form, struct model *m)
{
	static const uint32_t tr[] = { 1, 1, 3 };
	const unsigned np = len >= 1500 ? 3100 : 45200;
	struct pw_netdev *dev = setup_form(tr, 3, form, 1000000);
	m_init(m, tr, 3, T0, 1000000, np);
	for (unsigned i = 0; i < np; i++) {
		m->p[i].arrival = T0;
		m->p[i].len = len;
		send_from(dev, 0, len, 0, 0, NULL);
	}
	CHECK_EQ(L.sent, 0); /* nothing at time 0: the first opportunity is at 1 ms */
	advance_to(T0 + 3000 * MS - 1);
	m_run(m, T0 + 3000 * MS - 1);
	check_model(m);
	unsigned before = (unsigned)L.sent;
	/* the qdisc's own counters: the backlog is what has not left */
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0x10000, &st), 0);
	CHECK_EQ(st.packets, before);
	CHECK_EQ(st.qlen, np - before);
	CHECK_EQ(st.backlog, (uint64_t)(np - before) * len);
	CHECK_EQ(st.drops, 0);
	teardown(dev);
	return before;
}

static void backlogged_1500(unsigned form)
{
	struct model m;
	unsigned before = backlogged_113(1500, form, &m);
	/* the figures */
	static const unsigned first_ms[] = { 1, 1, 3, 4, 4, 6, 7, 7, 9 };
	for (unsigned i = 0; i < 9; i++)
		CHECK_EQ((m.p[i].out - (int64_t)T0) / (int64_t)MS, first_ms[i]);
	CHECK_EQ(before, 3006);
	/* 2,999 opportunities before 3,000 ms, 1504 bytes each */
	CHECK_EQ(m.opps, 2999);
	CHECK_EQ(before, m.opps * OPP / 1500);
	/* two ends in one opportunity: at 375, 750, ... ms (7 before 3 s) */
	CHECK_EQ(m.ntwo, 7);
	for (unsigned i = 0; i < m.ntwo; i++)
		CHECK_EQ(m.two_ends[i], 375 * (i + 1));
	/* seen on the qdisc's side: at those ms one packet more than the
	 * opportunities at that ms (2 at 3p+1, 1 at 3p+3) */
	unsigned per_ms[3000] = { 0 };
	for (unsigned k = 0; k < L.norder; k++)
		per_ms[(L.xmit_ns[L.order[k]] - T0) / MS]++;
	unsigned extra = 0;
	for (unsigned t = 1; t < 3000; t++) {
		unsigned opps = t % 3 == 1 ? 2 : t % 3 == 0 ? 1 : 0;
		if (per_ms[t] != opps) {
			CHECK_EQ(per_ms[t], opps + 1);
			CHECK_EQ(t % 375, 0);
			extra++;
		}
	}
	CHECK_EQ(extra, 7);
	m_free(&m);
}

static void test_backlogged_1500(void)
{
	backlogged_1500(0);
}

static void test_backlogged_100(void)
{
	struct model m;
	unsigned before = backlogged_113(100, 0, &m);
	CHECK_EQ(before, 45104);
	CHECK_EQ(before, m.opps * OPP / 100);
	m_free(&m);
}

/* The figures with the trace given inline, `text "1 1 3"` and the
 * other spellings: the same departures as from the file. */
static void test_text_backlogged(void)
{
	for (unsigned form = 1; form <= 4; form++)
		backlogged_1500(form);
	struct model m;
	CHECK_EQ(backlogged_113(100, 2, &m), 45104);
	m_free(&m);
}

/* One packet at a time, directed: the opportunity at the arrival's own
 * instant is not for it; a packet spans opportunities; a small one shares;
 * an idle link loses bytes; the trace loops. */
static void test_directed(void)
{
	static const uint32_t tr[] = { 0, 2, 2, 5 }; /* period 5 ms */
	const char *path = write_trace("directed.trace", tr, 4);
	struct pw_netdev *dev = setup(path, 100);
	unsigned i;
	/* at time 0 (creation): the opportunity at 0 is not for it; 2 ms */
	send_from(dev, 0, 100, 0, 0, &i);
	advance_to(T0 + 2 * MS);
	CHECK_EQ(L.state[i], 2);
	CHECK_EQ(L.xmit_ns[i], T0 + 2 * MS);
	/* at 2 ms exactly: both opportunities at 2 ms were burned; the next
	 * is 5 ms (the last line) */
	send_from(dev, 0, 100, 0, 0, &i);
	advance_to(T0 + 5 * MS - 1);
	CHECK_EQ(L.state[i], 1);
	advance_to(T0 + 5 * MS);
	CHECK_EQ(L.xmit_ns[i], T0 + 5 * MS);
	/* at 5 ms: the loop's 0 is at 5 ms too, burned; a 3000-byte packet
	 * takes 7 (1504), 7 (1496 of the next): leaves at 7 ms */
	unsigned big, small;
	send_from(dev, 0, 3000, 0, 0, &big);
	/* a 4-byte one right behind shares the second opportunity at 7 ms,
	 * which had 8 bytes left */
	send_from(dev, 0, 4, 0, 0, &small);
	unsigned next;
	/* and a 5-byte one: 4 bytes left, so its last byte is at 10 ms */
	send_from(dev, 0, 5, 0, 0, &next);
	advance_to(T0 + 20 * MS);
	CHECK_EQ(L.xmit_ns[big], T0 + 7 * MS);
	CHECK_EQ(L.xmit_ns[small], T0 + 7 * MS);
	CHECK_EQ(L.xmit_ns[next], T0 + 10 * MS);
	/* 0.5 ms before 22 ms (an opportunity at 22 x2): it leaves at 22 */
	advance_to(T0 + 21 * MS + MS / 2);
	send_from(dev, 0, 1504, 0, 0, &i);
	unsigned j;
	send_from(dev, 0, 1, 0, 0, &j);
	advance_to(T0 + 30 * MS);
	CHECK_EQ(L.xmit_ns[i], T0 + 22 * MS);
	CHECK_EQ(L.xmit_ns[j], T0 + 22 * MS); /* the second opportunity at 22 */
	/* far later: the loop, 100,000 periods on */
	advance_to(T0 + 500000 * MS + 3 * MS);
	send_from(dev, 0, 1, 0, 0, &i);
	advance_to(T0 + 500000 * MS + 10 * MS);
	CHECK_EQ(L.xmit_ns[i], T0 + 500000 * MS + 5 * MS);
	teardown(dev);
}

/* Random traces, arrivals, sizes and limits against the model. */
static void random_run(uint64_t seed, unsigned form)
{
	uint64_t s = seed;
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
	uint32_t tr[64];
	unsigned n = 1 + (unsigned)(RND() % 40);
	uint32_t v = (uint32_t)(RND() % 3);
	for (unsigned i = 0; i < n; i++) {
		if (RND() % 3)
			v += (uint32_t)(RND() % 4);
		tr[i] = v;
	}
	if (tr[n - 1] == 0)
		tr[n - 1] = 1;
	uint32_t limit = 1 + (uint32_t)(RND() % 60);
	struct pw_netdev *dev = setup_form(tr, n, form, limit);
	const unsigned np = 3000;
	struct model m;
	m_init(&m, tr, n, T0, limit, np);
	uint64_t t = T0;
	for (unsigned i = 0; i < np; i++) {
		/* bursts and gaps; never on the ms grid (ties with the
		 * watchdog are not the model's business) */
		uint64_t gap = RND() % 4 == 0 ? RND() % (20 * MS) : RND() % (MS / 2);
		t += gap;
		if (t % MS == 0)
			t++;
		uint32_t len = RND() % 8 == 0 ? (uint32_t)(RND() % 5000) : 40 + (uint32_t)(RND() % 1461);
		m.p[i].arrival = t;
		m.p[i].len = len;
		advance_to(t);
		send_from(dev, 0, len, 0, 0, NULL);
	}
#undef RND
	uint64_t end = t + 10000 * MS;
	advance_to(end);
	m_run(&m, end);
	check_model(&m);
	CHECK_EQ(L.sent + L.dropped, np);
	CHECK_EQ(L.drop_by[PW_DROP_QDISC_LIMIT], L.dropped);
	struct pw_qdisc_stats st;
	CHECK_EQ(pw_netdev_qdisc_stats(dev, 0x10000, &st), 0);
	CHECK_EQ(st.drops, L.dropped);
	CHECK_EQ(st.qlen, 0);
	m_free(&m);
	teardown(dev);
}

static void test_random(void)
{
	uint64_t base = 0x5eed7ace;
	const char *env = getenv("PW_TEST_SEED");
	if (env)
		base = strtoull(env, NULL, 0);
	printf("# seed 0x%" PRIx64 " (PW_TEST_SEED replays)\n", base);
	for (unsigned r = 0; r < 40; r++)
		random_run(base + r * 0x9e3779b97f4a7c15ull, 0);
}

/* The same random runs with the trace given as text (each spelling):
 * every packet at the model's nanosecond, so at the file's. */
static void test_text_random(void)
{
	uint64_t base = 0x5eed7ace;
	const char *env = getenv("PW_TEST_SEED");
	if (env)
		base = strtoull(env, NULL, 0);
	printf("# seed 0x%" PRIx64 " (PW_TEST_SEED replays)\n", base);
	for (unsigned r = 0; r < 40; r++)
		random_run(base + r * 0x9e3779b97f4a7c15ull, 1 + r % 4);
}

/* change: a new trace restarts the clock at the change; what was carried
 * leaves as scheduled, the rest is carried afresh.  A change of the limit
 * alone moves nothing. */
static void test_change(void)
{
	static const uint32_t slow[] = { 10 }, fast[] = { 1 };
	const char *p_slow = write_trace("slow.trace", slow, 1);
	struct pw_netdev *dev = setup(p_slow, 100);
	unsigned idx[5];
	for (int k = 0; k < 5; k++)
		send_from(dev, 0, 1000, 0, 0, &idx[k]);
	/* on `10`: ends at 1000..5000 bytes, opportunities of 1504: 10, 20,
	 * 20, 30, 40 ms */
	advance_to(T0 + 12 * MS);
	CHECK_EQ(L.sent, 1);
	tc_ok(L.rt, "qdisc change dev eth0 root trace limit 3");
	advance_to(T0 + 15 * MS);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "qdisc change dev eth0 root trace file %s",
		 write_trace("fast.trace", fast, 1));
	tc_ok(L.rt, cmd);
	/* from 15 ms on `1`: 1000, 2000, 3000, 4000 bytes -> 16, 17, 17, 18 */
	advance_to(T0 + 100 * MS);
	CHECK_EQ(L.xmit_ns[idx[0]], T0 + 10 * MS);
	CHECK_EQ(L.xmit_ns[idx[1]], T0 + 16 * MS);
	CHECK_EQ(L.xmit_ns[idx[2]], T0 + 17 * MS);
	CHECK_EQ(L.xmit_ns[idx[3]], T0 + 17 * MS);
	CHECK_EQ(L.xmit_ns[idx[4]], T0 + 18 * MS);
	/* the lowered limit (3) holds */
	for (int k = 0; k < 5; k++)
		send_from(dev, 0, 1504, 0, 0, NULL);
	CHECK_EQ(L.dropped, 2);
	char out[512], err[512];
	CHECK_EQ(pw_tc(L.rt, "qdisc show dev eth0", 0, out, sizeof(out), err, sizeof(err)), 0);
	char want[512];
	snprintf(want, sizeof(want), "qdisc trace 1: root refcnt 2 file %s/fast.trace limit 3\n",
		 tmpdir);
	CHECK(!strcmp(out, want));
	teardown(dev);
}

/* tc: show, -s, -j, and the errors naming their token. */
static void expect_err(struct pw_runtime *rt, const char *cmd, const char *msg)
{
	char err[1024];
	err[0] = '\0';
	int rc = pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err));
	if (rc == 0 || !strstr(err, msg)) {
		fprintf(stderr, "tc \"%s\": rc %d, \"%s\", expected \"%s\"\n", cmd, rc, err, msg);
		abort();
	}
	/* a failed command changes nothing: the root is still the default */
	char out[512];
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strncmp(out, "qdisc pfifo_fast 0: root", 24));
}

static void test_tc(void)
{
	static const uint32_t tr[] = { 1, 1, 3 };
	char good[128];
	snprintf(good, sizeof(good), "%s", write_trace("tc.trace", tr, 3));
	struct pw_runtime *rt = sim_create(1, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	char cmd[1024], msg[512];
#define ERR(args, m)                                                                       \
	do {                                                                               \
		snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root trace %s", args);      \
		expect_err(rt, cmd, m);                                                    \
	} while (0)
	ERR("", "Error: trace: a trace is required (\"file PATH\" or \"text TEXT\").");
	ERR("limit 10", "Error: trace: a trace is required");
	ERR("file", "Command line is not complete");
	ERR("bogus", "trace: unknown parameter \"bogus\"");
	snprintf(msg, sizeof(msg), "file %s/none.trace", tmpdir);
	char want_msg[512];
	snprintf(want_msg, sizeof(want_msg),
		 "trace: cannot open \"%s/none.trace\": No such file or directory", tmpdir);
	ERR(msg, want_msg);
	snprintf(msg, sizeof(msg), "file %s limit 0", good);
	ERR(msg, "trace: illegal value for \"limit\": \"0\"");
	snprintf(msg, sizeof(msg), "file %s limit 1000001", good);
	ERR(msg, "trace: illegal value for \"limit\": \"1000001\"");
	snprintf(msg, sizeof(msg), "file %s limit -1", good);
	ERR(msg, "trace: illegal value for \"limit\": \"-1\"");
	snprintf(msg, sizeof(msg), "file %s file %s", good, good);
	ERR(msg, "trace: duplicate \"file\" specification");
	static const struct {
		const char *name, *text, *msg;
	} bad[] = {
		{ "empty.trace", "", "holds no line" },
		{ "blank.trace", "\n  \n", "holds no line" },
		{ "word.trace", "1\n2\nten\n", "line 3: \"ten\" is not a time in milliseconds" },
		{ "frac.trace", "1.5\n", "line 1: \"1.5\" is not a time in milliseconds" },
		{ "neg.trace", "-1\n3\n", "line 1: \"-1\" is not a time in milliseconds" },
		{ "two.trace", "1 2\n", "line 1: \"1 2\" is not a time in milliseconds" },
		{ "big.trace", "4294967296\n", "line 1: \"4294967296\" is not a time" },
		{ "back.trace", "1\n5\n4\n", "line 3: \"4\" goes back in time (the line before is 5)" },
		{ "zero.trace", "0\n0\n", "ends at 0 ms" },
		{ "nul.trace", "1\n2\0\n", "line 2: not text" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *p = write_text(bad[i].name, bad[i].text);
		if (!strcmp(bad[i].name, "nul.trace")) {
			FILE *f = fopen(p, "w");
			CHECK(f);
			fwrite("1\n2\0\n", 1, 5, f);
			fclose(f);
		}
		snprintf(msg, sizeof(msg), "file %s", p);
		ERR(msg, bad[i].msg);
	}
	snprintf(msg, sizeof(msg), "file %s", tmpdir);
	ERR(msg, "not a regular file"); /* a directory: refused at the open */
#undef ERR
	/* blanks around numbers, blank lines and CRLF are read */
	const char *ok = write_text("ok.trace", " 1 \r\n\n\t2\n3");
	snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root handle 1: trace file %s limit 2", ok);
	tc_ok(rt, cmd);
	char out[1024];
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	char want[1024];
	snprintf(want, sizeof(want), "qdisc trace 1: root refcnt 2 file %s limit 2\n", ok);
	CHECK(!strcmp(out, want));
	/* -s: the occupancy and the drops */
	for (int k = 0; k < 5; k++)
		send_from(dev, 0, 1000, 0, 0, NULL);
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), NULL, 0), 0);
	snprintf(want, sizeof(want),
		 "qdisc trace 1: root refcnt 2 file %s limit 2\n"
		 " Sent 0 bytes 0 pkt (dropped 3, overlimits 0 requeues 0) \n"
		 " backlog 2000b 2p requeues 0\n",
		 ok);
	if (strcmp(out, want))
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", out, want);
	CHECK(!strcmp(out, want));
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", PW_TC_JSON, out, sizeof(out), NULL, 0), 0);
	snprintf(want, sizeof(want),
		 "[{\"kind\":\"trace\",\"handle\":\"1:\",\"root\":true,\"refcnt\":2,"
		 "\"options\":{\"file\":\"%s\",\"limit\":2}}]\n",
		 ok);
	if (strcmp(out, want))
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", out, want);
	CHECK(!strcmp(out, want));
	/* a change that fails changes nothing */
	snprintf(cmd, sizeof(cmd), "qdisc change dev eth0 root trace file %s/back.trace", tmpdir);
	CHECK(pw_tc(rt, cmd, 0, NULL, 0, NULL, 0) != 0);
	advance_to(T0 + 5 * MS);
	CHECK_EQ(L.sent, 2);
	CHECK_EQ(L.xmit_ns[0], T0 + 1 * MS);
	CHECK_EQ(L.xmit_ns[1], T0 + 2 * MS);
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* A long trace (200,000 lines, its file over 1 MB: the reader's buffer
 * grows) through both forms: a random arrival pattern leaves at the same
 * nanoseconds, packet for packet. */
static void long_run(unsigned form, uint64_t *xmit, uint8_t *state, unsigned np)
{
	const unsigned n = 200000;
	uint32_t *tr = malloc(n * sizeof(*tr));
	CHECK(tr);
	for (unsigned i = 0; i < n; i++)
		tr[i] = 1000000 + i / 3 + i / 7; /* from 1000 s on, 21 a 10 ms */
	struct pw_netdev *dev = setup_form(tr, n, form, 300);
	uint64_t s = 42, t = T0;
	for (unsigned i = 0; i < np; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		t += s % (3 * MS) + 1;
		if (t % MS == 0)
			t++;
		advance_to(T0 + 1000000 * MS + (t - T0));
		send_from(dev, 0, 40 + (uint32_t)(s % 4000), 0, 0, NULL);
	}
	advance_to(T0 + 1000000 * MS + 200000 * MS);
	for (unsigned i = 0; i < np; i++) {
		xmit[i] = L.xmit_ns[i];
		state[i] = L.state[i];
	}
	teardown(dev);
	free(tr);
}

static void test_text_long(void)
{
	enum { NP = 3000 };
	static uint64_t xf[NP], xt[NP];
	static uint8_t sf[NP], st[NP];
	long_run(0, xf, sf, NP);
	long_run(3, xt, st, NP);
	unsigned sent = 0;
	for (unsigned i = 0; i < NP; i++) {
		CHECK_EQ(sf[i], st[i]);
		CHECK_EQ(xf[i], xt[i]);
		sent += sf[i] == 2;
	}
	CHECK(sent > NP / 2); /* the comparison compared departures */
}

/* tc with `text`: the messages name the number and the token, show
 * prints the label and the count, change moves between the forms. */
static void test_text_tc(void)
{
	struct pw_runtime *rt = sim_create(1, 1000, T0, 0);
	ledger_init(rt);
	struct pw_netdev *dev;
	CHECK_EQ(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev), 0);
	char cmd[1024];
#define ERR(args, m)                                                                       \
	do {                                                                               \
		snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root trace %s", args);      \
		expect_err(rt, cmd, m);                                                    \
	} while (0)
	ERR("text", "Command line is not complete");
	ERR("text ''", "trace: text holds no number (a trace needs at least one)");
	ERR("text ' ,\n'", "trace: text holds no number");
	ERR("text '1 2 ten'", "trace: text number 3: \"ten\" is not a time in milliseconds");
	ERR("text 1,1.5", "trace: text number 2: \"1.5\" is not a time in milliseconds");
	ERR("text '1 -1'", "trace: text number 2: \"-1\" is not a time");
	ERR("text 4294967296", "trace: text number 1: \"4294967296\" is not a time");
	ERR("text '1 5 4'", "trace: text number 3: \"4\" goes back in time (the number before is 5)");
	ERR("text '0 0'", "trace: text ends at 0 ms: the last number is the period");
	ERR("text 1 text 2", "trace: duplicate \"text\" specification");
	ERR("text 1 file /x", "trace: \"file\" and \"text\" are exclusive");
	ERR("file /x name up", "trace: \"name\" labels a \"text\" trace");
	ERR("name up", "trace: \"name\" labels a \"text\" trace");
	ERR("text 1 name 'a b'", "trace: illegal value for \"name\": \"a b\"");
	ERR("text 1 name ''", "trace: illegal value for \"name\": \"\"");
	/* a long bad token is shown cut */
	char tok[200];
	memset(tok, '7', 100);
	memcpy(tok + 100, "x", 2);
	snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root trace text '1 %s'", tok);
	char err[1024];
	CHECK(pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err)) != 0);
	CHECK(strstr(err, "trace: text number 2: \"7777777777"));
	CHECK(strstr(err, "...\" is not a time"));
#undef ERR
	/* show: the label and the count; -j the same */
	tc_ok(rt, "qdisc add dev eth0 root handle 1: trace text '1 1 3' name lte-up limit 2");
	char out[1024];
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "qdisc trace 1: root refcnt 2 name lte-up lines 3 limit 2\n"));
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", PW_TC_JSON, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "[{\"kind\":\"trace\",\"handle\":\"1:\",\"root\":true,\"refcnt\":2,"
			   "\"options\":{\"name\":\"lte-up\",\"lines\":3,\"limit\":2}}]\n"));
	/* change to a file, then back to a text without a name */
	static const uint32_t ten[] = { 10 };
	char path[256];
	snprintf(path, sizeof(path), "%s", write_trace("ten.trace", ten, 1));
	snprintf(cmd, sizeof(cmd), "qdisc change dev eth0 root trace file %s", path);
	tc_ok(rt, cmd);
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	char want[512];
	snprintf(want, sizeof(want), "qdisc trace 1: root refcnt 2 file %s limit 2\n", path);
	CHECK(!strcmp(out, want));
	/* packets on the text `2,4` from the change at 3 ms: 1000 B at 5 ms,
	 * 2000 B ends at 7 ms (the opportunities at 5, 7) */
	advance_to(T0 + 3 * MS);
	tc_ok(rt, "qdisc change dev eth0 root trace text 2,4");
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "qdisc trace 1: root refcnt 2 lines 2 limit 2\n"));
	advance_to(T0 + 3 * MS + 1);
	unsigned a, b;
	send_from(dev, 0, 1000, 0, 0, &a);
	send_from(dev, 0, 1000, 0, 0, &b);
	advance_to(T0 + 20 * MS);
	CHECK_EQ(L.xmit_ns[a], T0 + 5 * MS);
	CHECK_EQ(L.xmit_ns[b], T0 + 7 * MS);
	/* a failed change (a bad text) changes nothing */
	CHECK(pw_tc(rt, "qdisc change dev eth0 root trace text '3 2'", 0, NULL, 0, NULL, 0) != 0);
	CHECK_EQ(pw_tc(rt, "qdisc show dev eth0", 0, out, sizeof(out), NULL, 0), 0);
	CHECK(!strcmp(out, "qdisc trace 1: root refcnt 2 lines 2 limit 2\n"));
	pw_netdev_destroy(dev);
	ledger_check_all_back();
	pw_runtime_destroy(rt);
}

/* The clock's end: with the longest period (4,294,967,295 ms) a deep
 * backlog reaches opportunities beyond the layer's "never" (PW_KTIME_MAX,
 * about 2^63 ns).  Those packets wait, behind the last one that can leave,
 * instead of taking a time wrapped round past 2^64 (long past: they would
 * leave at once, out of their turn); the delete flushes them. */
static void test_clock_end(void)
{
	struct pw_netdev *dev = setup_spec("text 4294967295", 10);
	const uint64_t period = 4294967295ull * MS;
	unsigned a, b, c;
	send_from(dev, 0, OPP * 1000, 0, 0, &a); /* ends in opportunity 999 */
	send_from(dev, 0, OPP * 3400, 0, 0, &b); /* 4399: past 2^64 ns */
	send_from(dev, 0, 1, 0, 0, &c);
	uint64_t ta = T0 + 1000 * period;
	advance_to(ta - 1);
	CHECK_EQ(L.sent, 0);
	advance_to(ta + 1000 * period);
	CHECK_EQ(L.sent, 1);
	CHECK_EQ(L.xmit_ns[a], ta);
	CHECK_EQ(L.state[b], 1);
	CHECK_EQ(L.state[c], 1);
	tc_ok(L.rt, "qdisc del dev eth0 root");
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 2);
	teardown(dev);
}

/* Packets queued when the qdisc is deleted, replaced or its device
 * destroyed come back, flushed. */
static void test_teardown(void)
{
	static const uint32_t tr[] = { 100 };
	const char *path = write_trace("td.trace", tr, 1);
	struct pw_netdev *dev = setup(path, 1000);
	for (int k = 0; k < 50; k++)
		send_from(dev, 0, 1500, 0, 0, NULL);
	advance_to(T0 + 150 * MS);
	CHECK_EQ(L.sent, 1);
	tc_ok(L.rt, "qdisc del dev eth0 root");
	CHECK_EQ(L.dropped, 49);
	CHECK_EQ(L.drop_by[PW_DROP_FLUSH], 49);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "qdisc add dev eth0 root handle 2: trace file %s", path);
	tc_ok(L.rt, cmd);
	for (int k = 0; k < 20; k++)
		send_from(dev, 0, 1500, 0, 0, NULL);
	/* the new qdisc's clock starts at its creation (150 ms): 250 ms */
	advance_to(T0 + 250 * MS);
	CHECK_EQ(L.sent, 2);
	CHECK_EQ(L.xmit_ns[L.order[1]], T0 + 250 * MS);
	teardown(dev); /* destroy with 19 queued */
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pw-trace-XXXXXX");
	CHECK(mkdtemp(tmpdir));
	RUN(test_backlogged_1500);
	RUN(test_backlogged_100);
	RUN(test_directed);
	RUN(test_change);
	RUN(test_random);
	RUN(test_tc);
	RUN(test_text_backlogged);
	RUN(test_text_random);
	RUN(test_text_long);
	RUN(test_text_tc);
	RUN(test_clock_end);
	RUN(test_teardown);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	CHECK_EQ(system(cmd), 0);
	free(L.pkts);
	free(L.state);
	return 0;
}
