/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: packet sequences through each qdisc, on the simulated clock.
 *
 * Input: byte 0 picks a configuration (a tc script on eth0: the fifos,
 * pfifo_fast, netem in several shapes, tbf, an htb tree with a netem leaf,
 * fq, mq with mixed children); the rest is a stream of operations: send a
 * packet (length, priority, hash, socket, EDT stamp, sending CPU), move the
 * clock, make the driver answer BUSY for the next few packets (sometimes
 * waking the queue itself), wake the queue, apply one of the
 * configuration's `tc qdisc/class change` commands, show -s.
 * Properties, beyond "no crash, no leak, no undefined behaviour":
 *  - every packet comes back exactly once (the driver's state machine: in
 *    the layer -> sent or dropped, once, with a valid reason);
 *  - never sent before its time where the configuration promises one
 *    (netem delay D without jitter: not before D after it was handed in);
 *  - tbf never sends more than burst + rate x elapsed (+ one packet);
 *  - nothing is stuck: with the driver answering OK and the clock moved
 *    1000 s on, every packet has left, and every qdisc's -s shows
 *    "backlog 0b 0p" (the counters balance);
 *  - then device destroy flushes nothing twice.
 * Context: libFuzzer's thread; the runtime has no workers.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#define MAXP 2048
#define NSOCK 8

struct config {
	unsigned ntxq;
	const char *setup[8];
	const char *change[4];
	uint64_t min_delay_ns; /* netem without jitter: the least a packet waits */
	uint64_t tbf_rate_Bps, tbf_burst; /* a tbf root to check (0: none) */
};

static const struct config configs[] = {
	{ 1, { "qdisc add dev eth0 root handle 1: pfifo limit 50" },
	  { "qdisc change dev eth0 root handle 1: pfifo limit 10" }, 0, 0, 0 },
	{ 1, { "qdisc add dev eth0 root handle 1: bfifo limit 20000" },
	  { "qdisc change dev eth0 root handle 1: bfifo limit 3000" }, 0, 0, 0 },
	{ 1, { "qdisc add dev eth0 root handle 1: pfifo_head_drop limit 30" }, { NULL }, 0, 0, 0 },
	{ 1, { NULL }, { NULL }, 0, 0, 0 }, /* the default pfifo_fast */
	{ 1, { "qdisc add dev eth0 root handle 1: netem delay 10ms limit 100" },
	  { "qdisc change dev eth0 root handle 1: netem delay 12ms limit 40" }, 10000000, 0, 0 },
	{ 1,
	  { "qdisc add dev eth0 root handle 1: netem delay 10ms 5ms distribution normal loss 5% "
	    "reorder 20% gap 3 seed 7" },
	  { "qdisc change dev eth0 root handle 1: netem delay 1ms 1ms loss gemodel 5% 20%",
	    "qdisc change dev eth0 root handle 1: netem delay 30ms limit 20" },
	  0, 0, 0 },
	{ 1,
	  { "qdisc add dev eth0 root handle 1: netem rate 10mbit 20 slot 1ms 2ms packets 5 limit 200" },
	  { "qdisc change dev eth0 root handle 1: netem rate 1mbit" }, 0, 0, 0 },
	{ 1, { "qdisc add dev eth0 root handle 1: tbf rate 10mbit burst 20k latency 20ms" }, { NULL },
	  0, 1250000, 20480 },
	{ 1,
	  { "qdisc add dev eth0 root handle 1: htb default 20",
	    "class add dev eth0 parent 1: classid 1:1 htb rate 20mbit",
	    "class add dev eth0 parent 1:1 classid 1:10 htb rate 5mbit ceil 20mbit prio 0",
	    "class add dev eth0 parent 1:1 classid 1:20 htb rate 10mbit ceil 15mbit prio 1",
	    "class add dev eth0 parent 1:1 classid 1:30 htb rate 1mbit ceil 2mbit prio 1",
	    "qdisc add dev eth0 parent 1:30 handle 30: netem delay 5ms limit 50" },
	  { "class change dev eth0 parent 1:1 classid 1:20 htb rate 2mbit ceil 4mbit",
	    "class del dev eth0 classid 1:10",
	    "qdisc del dev eth0 parent 1:30" },
	  0, 0, 0 },
	{ 1,
	  { "qdisc add dev eth0 root handle 1: fq quantum 1000 initial_quantum 2000 flow_limit 10 "
	    "limit 300 horizon 100ms" },
	  { "qdisc change dev eth0 root handle 1: fq limit 20",
	    "qdisc change dev eth0 root handle 1: fq maxrate 1mbit horizon_cap",
	    "qdisc change dev eth0 root handle 1: fq nopacing" },
	  0, 0, 0 },
	{ 4,
	  { "qdisc add dev eth0 root handle 1: mq",
	    "qdisc add dev eth0 parent 1:1 handle 10: netem delay 3ms",
	    "qdisc add dev eth0 parent 1:2 handle 20: tbf rate 5mbit burst 5k limit 20000",
	    "qdisc add dev eth0 parent 1:3 handle 30: fq",
	    "qdisc add dev eth0 parent 1:4 handle 40: htb default 1",
	    "class add dev eth0 parent 40: classid 40:1 htb rate 3mbit" },
	  { "qdisc replace dev eth0 parent 1:1 handle 11: pfifo limit 5",
	    "qdisc del dev eth0 parent 1:3" },
	  0, 0, 0 },
};
#define NCONFIG (sizeof(configs) / sizeof(configs[0]))

static struct pw_runtime *rt;
static struct pw_pkt pkts[MAXP];
static uint8_t state[MAXP]; /* 1 in the layer, 2 sent, 3 dropped */
static uint64_t enq_ns[MAXP];
static unsigned npkt;
static int busy_left, wake_in_busy;
static uint64_t sent_bytes, t0;
static const struct config *cfg;
static struct pw_sock socks[NSOCK];

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_qdisc: %s\n", what);
		abort();
	}
}

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)ctx;
	unsigned i = (unsigned)(p - pkts);
	must(i < npkt && state[i] == 1, "xmit of a packet not in the layer");
	if (busy_left > 0) {
		busy_left--;
		if (wake_in_busy)
			pw_netif_wake_queue(dev, txq);
		return PW_NETDEV_TX_BUSY;
	}
	uint64_t now = pw_now_ns(rt);
	must(now - enq_ns[i] >= cfg->min_delay_ns, "sent before its delay");
	state[i] = 2;
	sent_bytes += p->len;
	if (cfg->tbf_rate_Bps) {
		double allowed = (double)cfg->tbf_burst + (double)cfg->tbf_rate_Bps * (double)(now - t0) / 1e9;
		must((double)sent_bytes <= allowed + 1600.0, "tbf sent more than burst + rate x time");
	}
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)ctx;
	unsigned i = (unsigned)(p - pkts);
	must(i < npkt && state[i] == 1, "drop of a packet not in the layer");
	must(r > 0 && r < PW_DROP_REASON_MAX, "drop without a valid reason");
	state[i] = 3;
}

static const struct pw_netdev_ops drv = { .xmit = drv_xmit, .drop = drv_drop };

static char out[1 << 16], err[2048];

static void tc(const char *cmd, int must_work)
{
	int rc = pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err));
	if (must_work && rc) {
		fprintf(stderr, "fuzz_qdisc: \"%s\": %d %s\n", cmd, rc, err);
		abort();
	}
}

/* Every qdisc's -s says "backlog 0b 0p". */
static void all_empty(void)
{
	must(pw_tc(rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), err, sizeof(err)) == 0,
	     "show failed");
	for (char *p = strstr(out, " backlog "); p; p = strstr(p + 1, " backlog ")) {
		if (strncmp(p, " backlog 0b 0p", 14)) {
			fprintf(stderr, "%s\n", out);
			must(0, "a qdisc holds a backlog with every packet gone");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 1)
		return 0;
	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = 2;
	pc.clock = PW_CLOCK_SIM;
	pc.sim_start_ns = 1000000000ull;
	if (pw_runtime_create(&pc, &rt))
		abort();
	cfg = &configs[d[0] % NCONFIG];
	struct pw_netdev *dev;
	must(pw_netdev_create(rt, "eth0", cfg->ntxq, &drv, NULL, &dev) == 0, "netdev");
	for (unsigned i = 0; i < 8 && cfg->setup[i]; i++)
		tc(cfg->setup[i], 1);
	for (unsigned i = 0; i < NSOCK; i++) {
		must(pw_sock_init(&socks[i], rt, NULL) == 0, "sock");
		pw_sock_set_pacing_rate(&socks[i], 100000ull << i);
	}
	npkt = 0;
	busy_left = wake_in_busy = 0;
	sent_bytes = 0;
	t0 = pw_now_ns(rt);
	static const uint32_t prios[8] = { 0, 1, 6, 0x10010, 0x10020, 0x10030, 0x10000, 0x400001 };
	size_t i = 1;
#define NEXT() (i < n ? d[i++] : 0)
	while (i < n) {
		uint8_t op = NEXT();
		switch (op % 10) {
		case 0: case 1: case 2: case 3: case 4: {
			if (npkt >= MAXP)
				break;
			unsigned k = npkt++;
			struct pw_pkt *p = &pkts[k];
			uint8_t a = NEXT(), b = NEXT(), c = NEXT();
			pw_pkt_init(p, NULL, 60u + (unsigned)a * 6u);
			p->priority = prios[b & 7];
			p->hash = (uint32_t)c * 2654435761u;
			if (b & 0x08)
				p->sk = &socks[(b >> 4) & (NSOCK - 1)];
			if ((b & 0x80) && (c & 1))
				p->tstamp_ns = pw_now_ns(rt) + (uint64_t)(c >> 1) * 1000000ull;
			p->ecn = c & 3;
			state[k] = 1;
			enq_ns[k] = pw_now_ns(rt);
			int cpu = (a & 0x80) ? -1 : (a & 1);
			if (cpu >= 0)
				must(pw_cpu_enter(rt, (unsigned)cpu) == 0, "cpu_enter");
			pw_dev_queue_xmit(dev, p);
			if (cpu >= 0)
				pw_cpu_exit(rt);
			break;
		}
		case 5: {
			uint8_t a = NEXT();
			must(pw_sim_advance(rt, (uint64_t)a * a * 10000ull) == 0, "advance");
			break;
		}
		case 6: {
			uint8_t a = NEXT();
			busy_left = a & 3;
			wake_in_busy = (a >> 2) & 1;
			break;
		}
		case 7:
			busy_left = 0;
			for (unsigned q = 0; q < cfg->ntxq; q++)
				pw_netif_wake_queue(dev, q);
			break;
		case 8: {
			uint8_t a = NEXT();
			unsigned nch = 0;
			while (nch < 4 && cfg->change[nch])
				nch++;
			if (nch)
				tc(cfg->change[a % nch], 0); /* may fail (e.g. deleted): changes nothing then */
			break;
		}
		case 9:
			pw_tc(rt, "qdisc show dev eth0", PW_TC_STATS, out, sizeof(out), err, sizeof(err));
			break;
		}
	}
	/* nothing stuck: the driver takes everything, the clock moves on */
	busy_left = 0;
	for (unsigned q = 0; q < cfg->ntxq; q++)
		pw_netif_wake_queue(dev, q);
	for (int k = 0; k < 4; k++)
		must(pw_sim_advance(rt, 250000000000ull) == 0, "advance");
	for (unsigned k = 0; k < npkt; k++)
		if (state[k] == 1) {
			fprintf(stderr, "packet %u (len %u prio %#x) still in the layer\n", k, pkts[k].len,
				pkts[k].priority);
			must(0, "a packet is stuck");
		}
	all_empty();
	pw_netdev_destroy(dev);
	for (unsigned k = 0; k < npkt; k++)
		must(state[k] == 2 || state[k] == 3, "not back");
	for (unsigned s = 0; s < NSOCK; s++)
		pw_sock_put(&socks[s]);
	pw_runtime_destroy(rt);
	rt = NULL;
	return 0;
}
