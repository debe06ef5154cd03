/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench net: packets per second per core through the
 * packet-scheduling layer (src/net): pw_dev_queue_xmit() -> the qdisc ->
 * its watchdog hrtimer -> the queue run -> the driver's xmit, which hands
 * the packet back to a free list for the next send.
 *
 * Configurations: pfifo (no delay: the layer's floor), netem delay 10ms
 * (constant: every packet goes to the tail of the time-ordered list),
 * netem delay 10ms 2ms distribution normal (jitter: out-of-order packets
 * go to the heap), netem delay 10ms rate 1gbit, and mq with 8 netem delay
 * 10ms children (the seed 003 shape; packets spread by hash over the
 * queues).  Each at every --inflight count of packets in flight.
 *
 * Then fq (configuration 6): 1e2, 1e4 and 1e5 flows on sockets, each paced
 * at 3,000,000 bytes/s (seed 000's rate) with 1000-byte packets and
 * quantum 1000 (so every packet is paced), each flow keeping 2 packets in
 * the layer (a window: a new one when one leaves), visited round robin
 * while the clock moves by the pacing period / flows per visit: every flow
 * always has a packet waiting for its slot, so the sends come from the
 * watchdog, as with real paced traffic.  Reported: ns per packet, the
 * watchdog's hrtimer (re)starts per packet and its expiries (wake-ups that
 * sent) per packet, with timer_slack 10us (the default) and 0.  buckets is
 * the flow count rounded up (pinwheel's bucket chains are linear where the
 * kernel's rbtrees are logarithmic).
 *
 * How (one thread, on the simulated clock, acting as CPU 0, so the time is
 * the layer's and the timer subsystem's, nothing else): the sender sends
 * one packet and moves the clock by delay / inflight, so that in steady
 * state `inflight` packets are queued and each step's clock move fires
 * the watchdog for the packets now due: the watchdog is re-armed for
 * about every packet, as with real traffic.  A warm-up fills the queue;
 * then --packets packets are timed (wall clock, the median of --reps).
 * A benchmark, not a test: it prints numbers and judges nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "bench.h"
#include "net.h"
#include "now.h"
#include "pktpool.h"
#include "progress.h"

/* The single-thread runs' packets: @npkt of them without bytes, one slot,
 * and the driver that counts what the layer releases and puts it back
 * (tools/common/pktpool.h), for one thread (the simulated clock's). */
struct net_pool {
	struct pktpool pool;
	struct pktdrv drv;
};

/* @np with @npkt packets; @dc: the driver's hooks (zeroed: none).
 * Return: 0; -ENOMEM. */
static int np_init(struct net_pool *np, unsigned npkt, struct pktdrv_cfg *dc)
{
	const struct pktpool_cfg pc = {
		.nslots = 1, .pkt_size = sizeof(struct ppkt), .prealloc = npkt, .max = npkt,
	};
	if (pktpool_init(&np->pool, &pc))
		return -ENOMEM;
	dc->pool = &np->pool;
	dc->flags = PKTDRV_ONE_THREAD;
	if (pktdrv_init(&np->drv, dc)) {
		pktpool_destroy(&np->pool);
		return -ENOMEM;
	}
	return 0;
}

/* Free @np (its device is gone: every packet is back). */
static void np_free(struct net_pool *np)
{
	pktdrv_destroy(&np->drv);
	pktpool_destroy(&np->pool);
}

struct net_cfg {
	const char *name;
	unsigned ntxq;
	const char *cmds[10];
	uint64_t delay_ns; /* 0: no delay (pfifo) */
	uint64_t step_ns;  /* shapers: the clock step per packet sent (overrides delay) */
	unsigned classes;  /* htb: packets spread over 1:10, 1:20, 1:30 by priority */
};

static const struct net_cfg cfgs[] = {
	{ "pfifo", 1, { "qdisc add dev eth0 root pfifo limit 1000000" }, 0, 0, 0 },
	{ "netem delay", 1, { "qdisc add dev eth0 root netem limit 1000000 delay 10ms" }, 10000000, 0, 0 },
	{ "netem jitter normal", 1,
	  { "qdisc add dev eth0 root netem limit 1000000 delay 10ms 2ms distribution normal" },
	  10000000, 0, 0 },
	{ "netem rate 100gbit", 1,
	  { "qdisc add dev eth0 root netem limit 1000000 delay 10ms rate 100gbit" }, 10000000, 0, 0 },
	{ "mq + 8 netem", 8,
	  { "qdisc add dev eth0 root handle 1: mq",
	    "qdisc add dev eth0 parent 1:1 netem limit 1000000 delay 10ms",
	    "qdisc add dev eth0 parent 1:2 netem limit 1000000 delay 10ms",
	    "qdisc add dev eth0 parent 1:3 netem limit 1000000 delay 10ms",
	    "qdisc add dev eth0 parent 1:4 netem limit 1000000 delay 10ms",
	    "qdisc add dev eth0 parent 1:5 netem limit 1000000 delay 10ms",
	    "qdisc add dev eth0 parent 1:6 netem limit 1000000 delay 10ms",
	    "qdisc add dev eth0 parent 1:7 netem limit 1000000 delay 10ms",
	    "qdisc add dev eth0 parent 1:8 netem limit 1000000 delay 10ms" },
	  10000000, 0, 0 },
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

/*
 * The shapers at line rate (configuration 7): tbf at 10gbit, and htb with
 * three leaves (5, 3 and 2 gbit, ceil 10gbit) under a 10gbit root, fed
 * 1000-byte packets one per clock step of 790 ns: 1.3% faster than the
 * 800 ns a packet takes at 10 Gbit/s.  So the shaper, not the sender, sets
 * the pace ("line rate": every packet leaves when its tokens allow, the
 * watchdog re-armed for about every packet), and the backlog grows by
 * 13 packets per thousand sent.  The figure is the CPU per packet of
 * enqueue + token arithmetic + watchdog + dequeue + driver; the simulated
 * rate shows what the shaper let through: 10.0125 Gbit/s, because the
 * kernel's psched arithmetic (len * mult >> shift, mult rounded down)
 * gives 799 ns for 1000 bytes at 10gbit, as the kernel's tbf does.
 */
static const struct net_cfg shapers[] = {
	{ "tbf 10gbit", 1,
	  { "qdisc add dev eth0 root tbf rate 10gbit burst 100kb limit 100mb" }, 0, 790, 0 },
	{ "htb 3 classes 10gbit", 1,
	  { "qdisc add dev eth0 root handle 1: htb default 10 r2q 1000",
	    "class add dev eth0 parent 1: classid 1:1 htb rate 10gbit burst 100kb cburst 100kb",
	    "class add dev eth0 parent 1:1 classid 1:10 htb rate 5gbit ceil 10gbit burst 100kb cburst 100kb",
	    "class add dev eth0 parent 1:1 classid 1:20 htb rate 3gbit ceil 10gbit burst 100kb cburst 100kb",
	    "class add dev eth0 parent 1:1 classid 1:30 htb rate 2gbit ceil 10gbit burst 100kb cburst 100kb",
	    "qdisc add dev eth0 parent 1:10 pfifo limit 1000000",
	    "qdisc add dev eth0 parent 1:20 pfifo limit 1000000",
	    "qdisc add dev eth0 parent 1:30 pfifo limit 1000000" },
	  0, 790, 3 },
};
#define NSHAPER (sizeof(shapers) / sizeof(shapers[0]))

static double now_s(void)
{
	return (double)now_ns() * 1e-9;
}

/* One measurement: packets/s, or a negative errno. */
static double run_one(const struct net_cfg *c, unsigned inflight, unsigned batch,
		      unsigned packets, uint64_t *queued_at_end, double *sim_bps)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	cfg.sim_start_ns = 1000000000ull;
	struct pw_runtime *rt;
	if (pw_runtime_create(&cfg, &rt))
		return -ENOMEM;
	struct net_pool np;
	struct pktdrv_cfg dc = { 0 };
	unsigned npkt = inflight * 2 + 1024;
	if (np_init(&np, npkt, &dc)) {
		pw_runtime_destroy(rt);
		return -ENOMEM;
	}
	struct pw_netdev *dev;
	double r = -EINVAL;
	if (pw_netdev_create(rt, "eth0", c->ntxq, &pktdrv_ops, &np.drv, &dev))
		goto out;
	if (c->ntxq > 1) { /* CPU 0 may use every queue: the hash spreads */
		uint64_t m = 1;
		for (unsigned q = 0; q < c->ntxq; q++)
			pw_netdev_set_xps(dev, q, &m, 1);
	}
	char err[256];
	for (unsigned k = 0; k < 10 && c->cmds[k]; k++)
		if (pw_tc(rt, c->cmds[k], 0, NULL, 0, err, sizeof(err))) {
			fprintf(stderr, "pinwheel-bench net: %s: %s", c->cmds[k], err);
			goto out_dev;
		}
	pw_cpu_enter(rt, 0);
	uint64_t step = c->delay_ns ? c->delay_ns / inflight : c->step_ns;
	uint64_t frac = c->delay_ns ? c->delay_ns % inflight : 0, acc = 0;
	uint32_t h = 1;
	double t0 = 0;
	uint64_t sim0 = 0, sent0 = 0;
	unsigned warm = c->delay_ns ? inflight * 2 : 1000;
	for (unsigned i = 0; i < warm + packets; i++) {
		if (i == warm) {
			t0 = now_s();
			sim0 = pw_now_ns(rt);
			sent0 = pktdrv_sent(&np.drv);
		}
		struct ppkt *pp = pktpool_get(&np.pool, 0);
		if (!pp) { /* the qdisc holds more than 2x in flight: overload */
			pw_cpu_exit(rt);
			fprintf(stderr, "pinwheel-bench net: %s: more than %u packets queued\n",
				c->name, npkt);
			r = -ENOBUFS;
			goto out_dev;
		}
		struct pw_pkt *p = &pp->pkt;
		pw_pkt_init(p, NULL, 1000);
		h = h * 1103515245u + 12345u;
		p->hash = h;
		if (c->classes) /* 1:10 half, 1:20 and 1:30 a quarter each */
			p->priority = 0x10000u | (0x10u * (1u + ((h >> 16) & 3) / 2 + ((h >> 16) & 3) / 3));
		pw_dev_queue_xmit(dev, p);
		if ((i + 1) % batch)
			continue;
		/* the clock moves by the batch's share of the delay: one timer
		 * pass per batch */
		uint64_t adv = 0;
		for (unsigned k = 0; k < batch; k++) {
			adv += step;
			acc += frac;
			if (acc >= inflight) {
				acc -= inflight;
				adv++;
			}
		}
		if (adv)
			pw_sim_advance(rt, adv);
	}
	double t = now_s() - t0;
	if (sim_bps) {
		uint64_t dt = pw_now_ns(rt) - sim0;
		*sim_bps = dt ? (double)(pktdrv_sent(&np.drv) - sent0) * 1000.0 * 8e9 / (double)dt : 0;
	}
	pw_cpu_exit(rt);
	struct pw_qdisc_stats st;
	*queued_at_end = pw_netdev_qdisc_stats(dev, 0, &st) == 0 ? st.qlen : 0;
	r = t > 0 ? (double)packets / t : 0;
out_dev:
	pw_netdev_destroy(dev);
out:
	pw_runtime_destroy(rt);
	np_free(&np);
	return r;
}

/* ------------------------------------------------------------------ fq */

struct fq_pool {
	struct net_pool np;
	bool in_advance;
	uint64_t last_fire, fires;
	struct pw_runtime *rt;
	struct pw_sock *socks;
	uint8_t *window; /* per flow: its packets in the layer */
};

/* The driver's xmit hook: the flow's window, the watchdog's expiries. */
static int fq_xmit(struct pktdrv *drv, unsigned txq, struct ppkt *p, int self)
{
	(void)txq, (void)self;
	struct fq_pool *fp = drv->arg;
	fp->window[p->pkt.sk - fp->socks]--;
	if (fp->in_advance) { /* sent from the watchdog: one expiry per time */
		uint64_t t = pw_now_ns(fp->rt);
		if (t != fp->last_fire) {
			fp->fires++;
			fp->last_fire = t;
		}
	}
	return PKTDRV_DONE;
}

/* The driver's drop hook: the flow's window. */
static void fq_drop(struct pktdrv *drv, struct ppkt *p, unsigned r, int self)
{
	(void)r, (void)self;
	struct fq_pool *fp = drv->arg;
	fp->window[p->pkt.sk - fp->socks]--;
}

#define FQ_RATE 3000000ull /* bytes/s a flow */
#define FQ_LEN 1000u

/* One fq run: packets/s; watchdog arms and expiries per packet. */
static double fq_run_one(unsigned flows, unsigned slack_ns, unsigned packets, double *arms,
			 double *fires)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	cfg.sim_start_ns = 1000000000ull;
	struct pw_runtime *rt;
	if (pw_runtime_create(&cfg, &rt))
		return -ENOMEM;
	struct fq_pool fp;
	memset(&fp, 0, sizeof(fp));
	fp.rt = rt;
	unsigned npkt = flows * 4 + 1024;
	struct pktdrv_cfg dc = { .xmit = fq_xmit, .drop = fq_drop, .arg = &fp };
	if (np_init(&fp.np, npkt, &dc)) {
		pw_runtime_destroy(rt);
		return -ENOMEM;
	}
	struct pw_sock *socks = calloc(flows, sizeof(*socks));
	fp.socks = socks;
	fp.window = calloc(flows, 1);
	double r = -ENOMEM;
	if (!socks || !fp.window)
		goto out;
	for (unsigned k = 0; k < flows; k++) {
		pw_sock_init(&socks[k], rt, NULL);
		socks[k].sk_hash = k;
		pw_sock_set_pacing_rate(&socks[k], FQ_RATE);
	}
	r = -EINVAL;
	struct pw_netdev *dev;
	if (pw_netdev_create(rt, "eth0", 1, &pktdrv_ops, &fp.np.drv, &dev))
		goto out;
	unsigned buckets = 1;
	while (buckets < flows)
		buckets <<= 1;
	char cmd[256], err[256];
	snprintf(cmd, sizeof(cmd),
		 "qdisc add dev eth0 root fq limit 10000000 flow_limit 1000 quantum 1000 "
		 "initial_quantum 1000 buckets %u timer_slack %uns", buckets < 2 ? 2 : buckets,
		 slack_ns);
	if (pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err))) {
		fprintf(stderr, "pinwheel-bench net: %s: %s", cmd, err);
		goto out_dev;
	}
	pw_cpu_enter(rt, 0);
	/* a flow's period is FQ_LEN / FQ_RATE s; the clock moves 1/flows of
	 * it per packet (the remainder carried) */
	uint64_t period = FQ_LEN * 1000000000ull / FQ_RATE;
	uint64_t step = period / flows, frac = period % flows, acc = 0;
	unsigned warm = flows * 3 < 30000 ? 30000 : flows * 3;
	double t0 = 0;
	uint64_t arms0 = 0, fires0 = 0;
	uint64_t sent0 = 0;
	bool timing = false;
	for (unsigned i = 0; pktdrv_sent(&fp.np.drv) < (uint64_t)warm + packets + sent0; i++) {
		if (!timing && pktdrv_sent(&fp.np.drv) >= warm) {
			timing = true;
			t0 = now_s();
			arms0 = pw_netdev_watchdog_arms(dev, 0);
			fires0 = fp.fires;
			sent0 = pktdrv_sent(&fp.np.drv) - warm;
		}
		unsigned k = i % flows;
		while (fp.window[k] < 2) {
		struct ppkt *pp = pktpool_get(&fp.np.pool, 0);
		if (!pp) {
			pw_cpu_exit(rt);
			fprintf(stderr, "pinwheel-bench net: fq %u flows: more than %u packets queued\n",
				flows, npkt);
			r = -ENOBUFS;
			goto out_dev;
		}
		struct pw_pkt *p = &pp->pkt;
		pw_pkt_init(p, NULL, FQ_LEN);
		p->sk = &socks[k];
		fp.window[k]++;
		pw_dev_queue_xmit(dev, p);
		}
		uint64_t adv = step;
		acc += frac;
		if (acc >= flows) {
			acc -= flows;
			adv++;
		}
		if (adv) {
			fp.in_advance = true;
			pw_sim_advance(rt, adv);
			fp.in_advance = false;
		}
	}
	double t = now_s() - t0;
	pw_cpu_exit(rt);
	packets = (unsigned)(pktdrv_sent(&fp.np.drv) - warm - sent0); /* sent while timed */
	*arms = (double)(pw_netdev_watchdog_arms(dev, 0) - arms0) / packets;
	*fires = (double)(fp.fires - fires0) / packets;
	r = t > 0 ? (double)packets / t : 0;
out_dev:
	pw_netdev_destroy(dev);
out:
	pw_runtime_destroy(rt);
	np_free(&fp.np);
	free(socks);
	free(fp.window);
	return r;
}

static int cmp_d(const void *a, const void *b);

static int fq_cells(unsigned packets, unsigned reps, int json, bool *first)
{
	static const unsigned flows[] = { 100, 10000, 100000 }, slack[] = { 10000, 0 };
	if (!json)
		printf("# fq: paced flows on sockets (%llu B/s each, %u-byte packets), "
		       "watchdog arms and expiries per packet\n"
		       "%-22s %9s %6s %10s %10s %10s %10s\n",
		       (unsigned long long)FQ_RATE, FQ_LEN, "qdisc", "flows", "slack", "Mpkt/s",
		       "ns/pkt", "arms/pkt", "fires/pkt");
	unsigned cell = 0;
	for (unsigned f = 0; f < 3; f++)
		for (unsigned s = 0; s < 2; s++) {
			progress_start(++cell, 6, "net: fq, %u flows, timer_slack %uns", flows[f],
				       slack[s]);
			double v[64], arms = 0, fires = 0;
			unsigned n = reps > 64 ? 64 : reps;
			for (unsigned r = 0; r < n; r++) {
				v[r] = fq_run_one(flows[f], slack[s], packets, &arms, &fires);
				if (v[r] < 0)
					return 1;
			}
			progress_end();
			qsort(v, n, sizeof(v[0]), cmp_d);
			double med = v[n / 2];
			if (json)
				printf("%s{\"qdisc\":\"fq\",\"flows\":%u,\"timer_slack_ns\":%u,\"pps\":%.0f,"
				       "\"ns_per_pkt\":%.1f,\"arms_per_pkt\":%.4f,\"fires_per_pkt\":%.4f}",
				       *first ? "" : ",", flows[f], slack[s], med, 1e9 / med, arms, fires);
			else
				printf("%-22s %9u %6s %10.2f %10.1f %10.4f %10.4f\n", "fq", flows[f],
				       slack[s] ? "10us" : "0", med / 1e6, 1e9 / med, arms, fires);
			*first = false;
			fflush(stdout);
		}
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int shaper_cells(unsigned packets, unsigned reps, int json, bool *first)
{
	if (!json)
		printf("# shapers at line rate (10 Gbit/s of 1000-byte packets offered 0.125%% "
		       "above the rate)\n%-22s %9s %6s %10s %10s %10s\n",
		       "qdisc", "", "", "Mpkt/s", "ns/pkt", "Gbit/s(sim)");
	for (unsigned c = 0; c < NSHAPER; c++) {
		progress_start(c + 1, (unsigned)NSHAPER, "net: %s", shapers[c].name);
		double v[64], bps = 0;
		uint64_t queued = 0;
		unsigned n = reps > 64 ? 64 : reps;
		for (unsigned r = 0; r < n; r++) {
			v[r] = run_one(&shapers[c], 20000, 1, packets, &queued, &bps);
			if (v[r] < 0)
				return 1;
		}
		progress_end();
		qsort(v, n, sizeof(v[0]), cmp_d);
		double med = v[n / 2];
		if (json)
			printf("%s{\"qdisc\":\"%s\",\"pps\":%.0f,\"ns_per_pkt\":%.1f,"
			       "\"sim_gbps\":%.4f}",
			       *first ? "" : ",", shapers[c].name, med, 1e9 / med, bps / 1e9);
		else
			printf("%-22s %9s %6s %10.2f %10.1f %10.4f\n", shapers[c].name, "", "",
			       med / 1e6, 1e9 / med, bps / 1e9);
		*first = false;
		fflush(stdout);
	}
	return 0;
}

/*
 * Configuration 8: the alternative to fq's one watchdog that a userspace
 * stack uses today, one timer per flow, re-armed after every packet it
 * sends.  The timer work of one paced packet is then one re-arm of that
 * flow's timer (with the other flows' timers pending) and one expiry.
 * Measured through pinwheel-bench's ops table (bench.h), which drives each
 * library by its own calls: `n` timers pending, then re-arms of random
 * timers to 1..10 ms out (ns per re-arm), then an expiry round of all `n`
 * timers (ns per callback); the sum is the per-flow design's timer cost
 * per packet, to set beside fq's whole cost per packet (configuration 6:
 * enqueue, flow lookup, pacing, the shared watchdog, dequeue, driver) and
 * its 0.33-1 watchdog arms per packet.
 */
#include "registry.h"

static int perflow_cells(int json, bool *first)
{
	static const unsigned flows[] = { 100, 10000, 100000 };
	static const char *const peers[] = { "pinwheel", "pinwheel-hrtimer", "libevent", "libuv" };
	enum { NRE = 200000 };
	unsigned *idx = malloc(NRE * sizeof(*idx));
	uint64_t *delta = malloc(NRE * sizeof(*delta));
	if (!idx || !delta) {
		free(idx);
		free(delta);
		return 1;
	}
	if (!json)
		printf("# one timer per flow (the alternative to fq's watchdog): per packet one "
		       "re-arm + one expiry\n%-22s %9s %10s %10s %10s %10s\n", "timers", "flows",
		       "rearm ns", "expire ns", "ns/pkt", "ops/pkt");
	for (unsigned f = 0; f < 3; f++)
		for (unsigned k = 0; k < sizeof(peers) / sizeof(peers[0]); k++) {
			const struct bench_impl *im = NULL;
			const char *why = NULL;
			for (unsigned r = 0; r < NREG; r++)
				if (!strcmp(bench_registry[r].name, peers[k]) && bench_registry[r].get)
					im = bench_registry[r].get(&why);
			if (!im)
				continue; /* not built here */
			unsigned n = flows[f];
			if (im->setup(n, PW_CLOCK_SIM))
				continue;
			for (unsigned i = 0; i < NRE; i++) {
				idx[i] = (unsigned)(bench_rand() % n);
				delta[i] = 1 + bench_rand() % 10;
			}
			uint64_t t0 = bench_now_ns();
			for (unsigned i = 0; i < NRE; i += 64)
				im->rearm(idx + i, delta + i, NRE - i < 64 ? NRE - i : 64, im->now_j());
			double rearm = (double)(bench_now_ns() - t0) / NRE;
			double ens = 0;
			uint64_t fired = im->expire_round(n, 10, &ens);
			double expire = fired ? ens / (double)fired : 0;
			im->teardown();
			if (json)
				printf("%s{\"timers\":\"%s\",\"flows\":%u,\"rearm_ns\":%.1f,"
				       "\"expire_ns\":%.1f,\"ns_per_pkt\":%.1f,\"ops_per_pkt\":2}",
				       *first ? "" : ",", peers[k], n, rearm, expire, rearm + expire);
			else
				printf("%-22s %9u %10.1f %10.1f %10.1f %10d\n", peers[k], n, rearm, expire,
				       rearm + expire, 2);
			*first = false;
			fflush(stdout);
		}
	free(idx);
	free(delta);
	return 0;
}

int net_main(unsigned packets, const unsigned *inflight, unsigned ninflight,
	     const unsigned *batch, unsigned nbatch, unsigned reps, unsigned only, int json,
	     const char *machine)
{
	unsigned total = (only ? 1 : (unsigned)NCFG) * ninflight * nbatch, cell = 0;
	if (json)
		printf("{\"benchmark\":\"net\",\"machine\":\"%s\",\"packets\":%u,\"results\":[", machine,
		       packets);
	else
		printf("# pinwheel-bench net: packets/s per core, one thread on the simulated clock\n"
		       "# machine: %s; %u packets timed per run, median of %u runs\n"
		       "# batch: packets sent per clock step (one timer pass per batch)\n"
		       "%-22s %9s %6s %10s %10s %10s\n",
		       machine, packets, reps, "qdisc", "inflight", "batch", "Mpkt/s", "ns/pkt",
		       "queued");
	bool first = true;
	if (only == NCFG + 1 || only == NCFG + 2 || only == NCFG + 3) { /* fq, shapers, per-flow */
		int rc = only == NCFG + 1   ? fq_cells(packets, reps, json, &first)
			 : only == NCFG + 2 ? shaper_cells(packets, reps, json, &first)
					    : perflow_cells(json, &first);
		if (json)
			printf("]}\n");
		return rc;
	}
	for (unsigned c = 0; c < NCFG; c++)
		if (!only || c + 1 == only)
		for (unsigned k = 0; k < ninflight; k++)
		for (unsigned bi = 0; bi < nbatch; bi++) {
			progress_start(++cell, total, "net: %s, %u in flight, batch %u", cfgs[c].name,
				       inflight[k], batch[bi]);
			double v[64];
			uint64_t queued = 0;
			unsigned n = reps > 64 ? 64 : reps;
			for (unsigned r = 0; r < n; r++) {
				v[r] = run_one(&cfgs[c], inflight[k], batch[bi], packets, &queued, NULL);
				if (v[r] < 0)
					return 1;
			}
			progress_end();
			qsort(v, n, sizeof(v[0]), cmp_d);
			double med = v[n / 2];
			if (json) {
				printf("%s{\"qdisc\":\"%s\",\"inflight\":%u,\"batch\":%u,\"pps\":%.0f,"
				       "\"ns_per_pkt\":%.1f,\"queued\":%llu}",
				       first ? "" : ",", cfgs[c].name, inflight[k], batch[bi], med,
				       1e9 / med, (unsigned long long)queued);
			} else {
				printf("%-22s %9u %6u %10.2f %10.1f %10llu\n", cfgs[c].name,
				       inflight[k], batch[bi], med / 1e6, 1e9 / med,
				       (unsigned long long)queued);
			}
			first = false;
			fflush(stdout);
		}
	if (!only && (fq_cells(packets, reps, json, &first) ||
		      shaper_cells(packets, reps, json, &first) || perflow_cells(json, &first)))
		return 1;
	if (json)
		printf("]}\n");
	return 0;
}

/* ------------------------------------------------------- real workers */

/*
 * --workers W: the real clock, one worker per CPU (pw_runtime_start()),
 * each CPU's poll hook sending from its own pool of `inflight` packets, 32
 * a round (the NAPI-poll analog: the worker loop is the application's
 * loop). A packet goes back to its sender's pool when xmit gets it, so
 * each CPU keeps `inflight` packets in the layer: with a delay D the
 * most a CPU can send is inflight / D per second (the "bound" column), and
 * a CPU that cannot keep up sends less. Measured over --ms after a warm-up:
 * packets per second per core and CPU time per packet (getrusage: the
 * whole process, workers included). Single-root qdiscs get a device with
 * one queue per CPU sharing the root's lock (as the kernel's netem root on
 * a multi-queue NIC); mq + 8 netem a queue (and lock) per CPU.
 */
#include <sys/resource.h>
#include <unistd.h>

#define MAXW 64

/* Each CPU's sender state, written by its worker only. */
struct wcpu {
	uint32_t h;
} __attribute__((aligned(64)));

/* The run: a pool slot per CPU (packets come back to their sender's slot,
 * from whichever CPU sent them: tools/common/pktpool.h) and a driver that
 * counts per CPU. */
struct wctx {
	struct pktpool pool;
	struct pktdrv drv;
	struct wcpu cpu[MAXW];
	struct pw_netdev *dev;
	int stop; /* atomic */
};

static int w_poll(struct pw_runtime *rt, unsigned cpu, void *arg)
{
	(void)rt;
	struct wctx *w = arg;
	if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		return 0;
	struct wcpu *wc = &w->cpu[cpu];
	int n = 0;
	while (n < 32) {
		struct ppkt *p = pktpool_get(&w->pool, (int)cpu);
		if (!p)
			break;
		pw_pkt_init(&p->pkt, NULL, 1000);
		wc->h = wc->h * 1103515245u + 12345u;
		p->pkt.hash = wc->h;
		pw_dev_queue_xmit(w->dev, &p->pkt);
		n++;
	}
	return n;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static uint64_t w_total(struct wctx *w)
{
	return pktdrv_sent(&w->drv);
}

/* One run: packets/s over all CPUs, CPU seconds per packet in *cpp. */
static int run_workers(const struct net_cfg *c, unsigned workers, unsigned inflight,
		       unsigned ms, double *pps, double *cpp)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = workers;
	struct pw_runtime *rt;
	if (pw_runtime_create(&cfg, &rt))
		return -ENOMEM;
	struct wctx *w = aligned_alloc(64, sizeof(*w));
	int rc = -ENOMEM;
	if (!w) {
		pw_runtime_destroy(rt);
		return rc;
	}
	memset(w, 0, sizeof(*w));
	const struct pktpool_cfg pc = {
		.nslots = workers, .pkt_size = sizeof(struct ppkt), .prealloc = inflight,
		.max = inflight,
	};
	if ((rc = pktpool_init(&w->pool, &pc))) {
		pw_runtime_destroy(rt);
		free(w);
		return rc;
	}
	const struct pktdrv_cfg dc = { .pool = &w->pool };
	if ((rc = pktdrv_init(&w->drv, &dc)))
		goto out;
	for (unsigned cpu = 0; cpu < workers; cpu++)
		w->cpu[cpu].h = cpu + 1;
	unsigned ntxq = c->ntxq > 1 ? c->ntxq : workers;
	rc = pw_netdev_create(rt, "eth0", ntxq, &pktdrv_ops, &w->drv, &w->dev);
	if (rc)
		goto out;
	char err[256];
	for (unsigned k = 0; k < 10 && c->cmds[k]; k++)
		if (pw_tc(rt, c->cmds[k], 0, NULL, 0, err, sizeof(err))) {
			fprintf(stderr, "pinwheel-bench net: %s: %s", c->cmds[k], err);
			rc = -EINVAL;
			goto out_dev;
		}
	for (unsigned cpu = 0; cpu < workers; cpu++)
		pw_set_poll(rt, cpu, w_poll, w);
	rc = pw_runtime_start(rt);
	if (rc)
		goto out_dev;
	struct timespec warm = { 0, 300000000 };
	nanosleep(&warm, NULL);
	uint64_t n0 = w_total(w);
	double t0 = now_s(), c0 = cpu_s();
	struct timespec run = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&run, NULL);
	uint64_t n1 = w_total(w);
	double t1 = now_s(), c1 = cpu_s();
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	pw_runtime_stop(rt);
	*pps = (double)(n1 - n0) / (t1 - t0);
	*cpp = n1 > n0 ? (c1 - c0) / (double)(n1 - n0) : 0;
	rc = 0;
out_dev:
	pw_netdev_destroy(w->dev);
out:
	pw_runtime_destroy(rt);
	pktdrv_destroy(&w->drv);
	pktpool_destroy(&w->pool);
	free(w);
	return rc;
}

int net_workers_main(unsigned workers, unsigned ms, const unsigned *inflight,
		     unsigned ninflight, unsigned reps, unsigned only, int json,
		     const char *machine)
{
	if (workers > MAXW)
		workers = MAXW;
	unsigned total = (only ? 1 : (unsigned)NCFG) * ninflight, cell = 0;
	if (json)
		printf("{\"benchmark\":\"net-workers\",\"machine\":\"%s\",\"workers\":%u,\"ms\":%u,"
		       "\"results\":[",
		       machine, workers, ms);
	else
		printf("# pinwheel-bench net --workers %u: the real clock, a worker per CPU sending 32 "
		       "packets a poll round\n"
		       "# machine: %s; %u ms per run, median of %u runs; inflight per CPU\n"
		       "%-22s %9s %12s %12s %12s\n",
		       workers, machine, ms, reps, "qdisc", "inflight", "Mpkt/s/core", "bound",
		       "cpu ns/pkt");
	bool first = true;
	for (unsigned c = 0; c < NCFG; c++)
		if (!only || c + 1 == only)
			for (unsigned k = 0; k < ninflight; k++) {
				progress_start(++cell, total, "net: %s, %u in flight per CPU, %u workers",
					       cfgs[c].name, inflight[k], workers);
				double v[64], cp[64];
				unsigned n = reps > 64 ? 64 : reps;
				for (unsigned r = 0; r < n; r++)
					if (run_workers(&cfgs[c], workers, inflight[k], ms, &v[r], &cp[r]))
						return 1;
				progress_end();
				qsort(v, n, sizeof(v[0]), cmp_d);
				qsort(cp, n, sizeof(cp[0]), cmp_d);
				double per = v[n / 2] / workers, cpu = cp[n / 2] * 1e9;
				double bound = cfgs[c].delay_ns ? (double)inflight[k] * 1e9 /
									  (double)cfgs[c].delay_ns
								: 0;
				if (json)
					printf("%s{\"qdisc\":\"%s\",\"inflight\":%u,\"pps_per_core\":%.0f,"
					       "\"bound\":%.0f,\"cpu_ns_per_pkt\":%.1f}",
					       first ? "" : ",", cfgs[c].name, inflight[k], per, bound, cpu);
				else if (bound > 0)
					printf("%-22s %9u %12.2f %12.2f %12.1f\n", cfgs[c].name, inflight[k],
					       per / 1e6, bound / 1e6, cpu);
				else
					printf("%-22s %9u %12.2f %12s %12.1f\n", cfgs[c].name, inflight[k],
					       per / 1e6, "-", cpu);
				first = false;
				fflush(stdout);
			}
	if (json)
		printf("]}\n");
	return 0;
}
