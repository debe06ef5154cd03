/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the trace qdisc's parser (tc/q_trace.c) and its link
 * (sched/trace.c), on the simulated clock.
 *
 * Input: byte 0 the limit; byte 1 the form (a file, or `text` quoted with
 * ' or ") and the packet pattern; bytes 2-3 the pattern's seed; the rest
 * the trace's text, byte for byte.  The text goes through pw_tc() as
 * `trace file PATH` (written to a scratch file) or `trace text '...'`
 * (when it holds no '#', NUL or quote of the kind chosen: tc's own word
 * splitting would cut it otherwise; the file form then).
 * Properties, beyond "no crash, no leak, no undefined behaviour":
 *  - tc accepts the text exactly when a reference reading of the grammar
 *    here does (a file: a number a line, blanks around it, blank lines;
 *    a text: numbers between runs of blanks, newlines and commas; both:
 *    nondecreasing, at least one, the last above 0, each < 2^32);
 *  - then the pattern's packets (bursts, gaps short and long, sizes 0 to
 *    5000 bytes and now and then up to 3000 opportunities' worth, which on
 *    the longest periods reaches past the layer's "never"; in one pattern
 *    a change of the limit and a change to the same trace, which restarts
 *    its clock) leave at exactly the nanosecond a model of Mahimahi's link
 *    gives (the opportunities walked in time order, each giving its 1504
 *    bytes to the FIFO's head), so never before their opportunity, in
 *    order, and are dropped where the model's queue is full;
 *  - every packet comes back exactly once: sent, dropped at the limit, or
 *    (its opportunity beyond the run's end) flushed by the qdisc's delete;
 *    the qdisc's -s counters match.
 * Context: libFuzzer's thread; the runtime has no workers.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>

#define MAXP 256
#define MAXN 4096 /* trace numbers: at most one per two bytes of input */
#define T0 1000000000ull
#define MS 1000000ull
#define OPP 1504u

__extension__ typedef unsigned __int128 u128;

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_trace: %s\n", what);
		abort();
	}
}

/* ------------------------------------------------- the reference reading */

static uint32_t ref_ms[MAXN];
static unsigned ref_n;

static bool digits(const uint8_t *s, size_t len, uint32_t *v)
{
	if (len == 0)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
		if (x > UINT32_MAX)
			return false;
	}
	*v = (uint32_t)x;
	return true;
}

static bool ref_push(uint32_t v)
{
	if (ref_n && v < ref_ms[ref_n - 1])
		return false;
	must(ref_n < MAXN, "more numbers than the input allows");
	ref_ms[ref_n++] = v;
	return true;
}

/* Does the grammar accept @t (@len bytes)?  ref_ms/ref_n: its numbers. */
static bool ref_parse(const uint8_t *t, size_t len, bool text)
{
	ref_n = 0;
	size_t i = 0;
	while (i < len) {
		if (text) {
			static const char seps[] = " \t\r\n,";
			while (i < len && t[i] && strchr(seps, t[i]))
				i++;
			size_t b = i;
			while (i < len && !(t[i] && strchr(seps, t[i])))
				i++;
			uint32_t v;
			if (i > b && (!digits(t + b, i - b, &v) || !ref_push(v)))
				return false;
		} else {
			size_t b = i;
			while (i < len && t[i] != '\n')
				i++;
			size_t e = i++;
			while (b < e && (t[b] == ' ' || t[b] == '\t' || t[b] == '\r'))
				b++;
			while (e > b && (t[e - 1] == ' ' || t[e - 1] == '\t' || t[e - 1] == '\r'))
				e--;
			uint32_t v;
			if (e > b && (!digits(t + b, e - b, &v) || !ref_push(v)))
				return false;
		}
	}
	return ref_n > 0 && ref_ms[ref_n - 1] > 0;
}

/* ------------------------------------------------------------ the model */

struct mpkt {
	uint64_t arrival;
	uint32_t len, left;
	uint64_t out;  /* departure (ns) */
	uint8_t fate;  /* 0 not yet, 1 queued, 2 left at @out, 3 dropped (limit) */
};

static struct {
	struct mpkt p[MAXP];
	unsigned fifo[MAXP], head, tail;
	uint64_t epoch, k;
	uint32_t limit;
} M;

/* The time of opportunity @k, exact (beyond 2^64 ns: larger than any t). */
static u128 m_time(uint64_t k)
{
	u128 period = (u128)ref_ms[ref_n - 1] * MS;
	return (u128)M.epoch + (u128)(k / ref_n) * period + (u128)ref_ms[k % ref_n] * MS;
}

/* M.k to the first opportunity later than @t (the bytes between are lost:
 * nothing is queued).  Whole periods at once, then one by one. */
static void m_skip(uint64_t t)
{
	u128 T = m_time(M.k);
	if (T <= t) {
		u128 period = (u128)ref_ms[ref_n - 1] * MS;
		M.k += (uint64_t)(((u128)t - T) / period) * ref_n;
	}
	while (m_time(M.k) <= t)
		M.k++;
}

/* Every opportunity at or before @t, in order. */
static void m_walk(uint64_t t)
{
	for (;;) {
		if (M.head == M.tail) {
			m_skip(t);
			return;
		}
		u128 T = m_time(M.k);
		if (T > t)
			return;
		uint32_t avail = OPP;
		while (M.head != M.tail && avail > 0) {
			struct mpkt *p = &M.p[M.fifo[M.head]];
			if (p->left <= avail) {
				avail -= p->left;
				p->left = 0;
				p->out = (uint64_t)T;
				p->fate = 2;
				M.head++;
			} else {
				p->left -= avail;
				avail = 0;
			}
		}
		M.k++;
	}
}

static void m_arrive(unsigned i)
{
	struct mpkt *p = &M.p[i];
	m_walk(p->arrival);
	if (M.tail - M.head >= M.limit) {
		p->fate = 3;
		return;
	}
	p->left = p->len;
	p->fate = 1;
	M.fifo[M.tail++] = i;
}

/* The same trace again at @t: its clock restarts, the queued packets are
 * carried afresh, as if they arrived at @t. */
static void m_retrace(uint64_t t)
{
	m_walk(t);
	for (unsigned h = M.head; h != M.tail; h++)
		M.p[M.fifo[h]].left = M.p[M.fifo[h]].len;
	M.epoch = t;
	M.k = 0;
	m_skip(t);
}

/* ------------------------------------------------------ the real thing */

static struct pw_runtime *rt;
static struct pw_pkt pkts[MAXP];
static uint8_t state[MAXP]; /* 1 in the layer, 2 sent, 3 dropped */
static uint64_t xmit_ns[MAXP];
static enum pw_drop_reason why[MAXP];
static unsigned npkt, last_sent;
static bool any_sent;

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)ctx;
	unsigned i = (unsigned)(p - pkts);
	must(i < npkt && state[i] == 1, "xmit of a packet not in the layer");
	must(!any_sent || i > last_sent, "sent out of order");
	state[i] = 2;
	xmit_ns[i] = pw_now_ns(rt);
	last_sent = i;
	any_sent = true;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)ctx;
	unsigned i = (unsigned)(p - pkts);
	must(i < npkt && state[i] == 1, "drop of a packet not in the layer");
	must(r > 0 && r < PW_DROP_REASON_MAX, "drop without a valid reason");
	state[i] = 3;
	why[i] = r;
}

static const struct pw_netdev_ops drv = { .xmit = drv_xmit, .drop = drv_drop };

static char path[64];
static int fd = -1;

static void rm_scratch(void)
{
	if (fd >= 0)
		unlink(path);
}

static char *cmd;
static size_t cmdcap;

static void set_cmd(const char *verb, const uint8_t *t, size_t len, int form, uint32_t limit)
{
	if (cmdcap < len + 256) {
		cmdcap = len + 256;
		cmd = realloc(cmd, cmdcap);
		must(cmd != NULL, "memory");
	}
	if (form == 0) {
		snprintf(cmd, cmdcap, "qdisc %s dev eth0 root handle 1: trace file %s limit %u", verb,
			 path, limit);
	} else {
		char q = form == 1 ? '\'' : '"';
		snprintf(cmd, cmdcap, "qdisc %s dev eth0 root handle 1: trace text %c%.*s%c limit %u",
			 verb, q, (int)len, (const char *)t, q, limit);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 4)
		return 0;
	uint32_t limit = d[0] >= 224 ? 1000 : 1 + d[0] % 48;
	int form = d[1] % 3; /* 0 file, 1 text '...', 2 text "..." */
	unsigned pattern = (d[1] / 3) % 4;
	uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)d[2] << 8 | d[3]);
	const uint8_t *t = d + 4;
	size_t len = n - 4;
	if (form && (memchr(t, '#', len) || memchr(t, '\0', len) ||
		     memchr(t, form == 1 ? '\'' : '"', len)))
		form = 0;
	if (form == 0) {
		if (fd < 0) {
			snprintf(path, sizeof(path), "/tmp/fuzz_trace.XXXXXX");
			fd = mkstemp(path);
			must(fd >= 0, "scratch file");
			atexit(rm_scratch);
		}
		must(ftruncate(fd, 0) == 0 && pwrite(fd, t, len, 0) == (ssize_t)len, "scratch write");
	}
	bool ok = ref_parse(t, len, form != 0);

	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = 2;
	pc.clock = PW_CLOCK_SIM;
	pc.sim_start_ns = T0;
	must(pw_runtime_create(&pc, &rt) == 0, "runtime");
	struct pw_netdev *dev;
	must(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &dev) == 0, "netdev");
	set_cmd("add", t, len, form, limit);
	char err[1024];
	int rc = pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err));
	if ((rc == 0) != ok) {
		fprintf(stderr, "form %d: tc %d \"%s\", the reference %s\n", form, rc, err,
			ok ? "accepts" : "refuses");
		must(0, "tc and the grammar disagree");
	}
	if (rc) {
		must(err[0] != '\0', "a refusal without a message");
		pw_netdev_destroy(dev);
		pw_runtime_destroy(rt);
		return 0;
	}

	/* the pattern: arrivals never on the trace's millisecond grid (a
	 * change restarts it at 1 ns past a millisecond: never there either) */
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
	memset(&M, 0, sizeof(M));
	M.epoch = T0;
	M.limit = limit;
	m_skip(T0);
	npkt = 1 + (unsigned)(RND() % MAXP);
	uint64_t period = (uint64_t)ref_ms[ref_n - 1] * MS;
	uint64_t far = period < 1000000 * MS ? 2 * period : 2000000 * MS;
	uint64_t at = T0;
	unsigned change_limit = pattern == 3 ? (unsigned)(RND() % npkt) : MAXP;
	unsigned change_trace = pattern == 3 ? (unsigned)(RND() % npkt) : MAXP;
	any_sent = false;
	for (unsigned i = 0; i < npkt; i++) {
		uint64_t r = RND();
		uint64_t gap = pattern == 0 ? r % 1000 :
			       pattern == 1 ? r % (2 * MS) :
			       r % 4 == 0   ? (r >> 2) % far :
					      (r >> 2) % (MS / 2);
		if (i == change_limit || i == change_trace) {
			uint64_t c = at + gap / 2 + 1;
			c = c - (c - T0) % MS + MS + 1; /* 1 ns past a millisecond */
			must(pw_sim_advance(rt, c - pw_now_ns(rt)) == 0, "advance");
			if (i == change_limit) {
				m_walk(c);
				M.limit = 1 + (uint32_t)(r % 32);
				char lc[128];
				snprintf(lc, sizeof(lc), "qdisc change dev eth0 root trace limit %u",
					 M.limit);
				must(pw_tc(rt, lc, 0, NULL, 0, err, sizeof(err)) == 0, "change limit");
			} else {
				m_retrace(c);
				set_cmd("change", t, len, form, M.limit);
				must(pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err)) == 0, "change trace");
			}
			at = c;
		}
		at += gap;
		while ((at - T0) % MS <= 1)
			at += 7;
		struct mpkt *m = &M.p[i];
		m->arrival = at;
		uint64_t lr = RND();
		static const uint32_t sizes[8] = { 0, 1, 100, 1500, 1503, 1504, 1505, 3008 };
		m->len = lr % 3 ? sizes[lr % 8] : (uint32_t)((lr >> 3) % 5001);
		if (lr % 61 == 0) /* now and then a giant: deep backlogs, the clock's end */
			m->len = (uint32_t)((lr >> 8) % (OPP * 3000));
		m_arrive(i);
		must(pw_sim_advance(rt, at - pw_now_ns(rt)) == 0, "advance");
		pw_pkt_init(&pkts[i], NULL, m->len);
		state[i] = 1;
		pw_dev_queue_xmit(dev, &pkts[i]);
	}
#undef RND
	/* the run's end: far past the last arrival (with the long gaps, 2^60
	 * ns short of the layer's "never", where a time wrapped past 2^64
	 * would show); what is due by then has left at the model's
	 * nanosecond, the rest is queued */
	uint64_t end = pattern == 2 ? PW_KTIME_MAX - (1ull << 60) : at + (1ull << 59);
	m_walk(end);
	must(pw_sim_advance(rt, end - pw_now_ns(rt)) == 0, "advance");
	uint64_t sent = 0, dropped = 0, queued = 0;
	for (unsigned i = 0; i < npkt; i++) {
		const struct mpkt *m = &M.p[i];
		if (state[i] != m->fate || (m->fate == 2 && xmit_ns[i] != m->out)) {
			fprintf(stderr, "packet %u of %u (len %u, arrival +%llu ns): state %u at %llu, "
					"model %u at %llu\n", i, npkt, m->len,
				(unsigned long long)(m->arrival - T0), state[i],
				(unsigned long long)xmit_ns[i], m->fate, (unsigned long long)m->out);
			must(0, "the qdisc and the model disagree");
		}
		must(m->fate != 2 || xmit_ns[i] > m->arrival, "left before its opportunity");
		must(m->fate != 3 || why[i] == PW_DROP_QDISC_LIMIT, "dropped for another reason");
		sent += m->fate == 2;
		dropped += m->fate == 3;
		queued += m->fate == 1;
	}
	struct pw_qdisc_stats st;
	must(pw_netdev_qdisc_stats(dev, 0x10000, &st) == 0, "stats");
	must(st.packets == sent && st.drops == dropped && st.qlen == queued, "-s counters");
	must(pw_tc(rt, "qdisc del dev eth0 root", 0, NULL, 0, err, sizeof(err)) == 0, "delete");
	for (unsigned i = 0; i < npkt; i++)
		must(state[i] == 2 || (state[i] == 3 && (M.p[i].fate == 3 || why[i] == PW_DROP_FLUSH)),
		     "not back, or flushed for another reason");
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
	rt = NULL;
	return 0;
}
