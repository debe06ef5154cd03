/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: pinwheel-netem's configuration (tools/netem/config.c) and a
 * datagram stream through the devices it configures, on the simulated
 * clock.
 *
 * Input: sections split by NUL bytes:
 *   1. command-line words, one a line (after a default --listen/--to, so
 *      later words override them);
 *   2. the up batch file's text, 3. the down batch file's text (used as
 *      --up-batch / --down-batch when not empty);
 *   4. a stream of operations: a datagram (length, client 127.0.0.1:1000+k
 *      classified by --map as the relay classifies it, direction, sending CPU), move the clock, SIGHUP (the batch files again as
 *      changes), show -s / -s -j.
 * The runtime and devices are set up as the relay sets them up: a CPU and
 * a TX queue per worker (at most 4 here), XPS CPU i -> queue i, watchdogs
 * pinned, migration off, then relay_dir_cmds() through pw_tc().
 * Properties, beyond "no crash, no leak, no undefined behaviour":
 *  - a refused command line or configuration says why (a non-empty
 *    message), as the relay's exit status 2 does;
 *  - the addresses parsed print and parse back to the same bytes; each
 *    --map entry's address finds it (or an earlier entry that matches);
 *  - with --seed, every netem the commands configure names a seed;
 *  - every datagram and every duplicate comes back exactly once (sent or
 *    dropped with a valid reason), and with the clock moved 1000 s on the
 *    relay's balance holds: rx + clones == out + dropped, backlog 0.
 * Context: libFuzzer's thread; the runtime has no workers.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "netem/relay.h"

#define MAXP 4096
#define NCLIENT 16

static struct pw_runtime *rt;
static struct pw_pkt pkts[MAXP];
static unsigned char state[MAXP]; /* 1 in the layer, 2 sent, 3 dropped */
static unsigned npkt;
static uint64_t rx, clones, out_n, dropped;
static struct pw_sock socks[NCLIENT][2];
static char out[1 << 16], err[4096];

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_relay: %s (err: %s)\n", what, err);
		abort();
	}
}

static unsigned index_of(const struct pw_pkt *p)
{
	unsigned i = (unsigned)(p - pkts);
	must(i < npkt && state[i] == 1, "a packet the layer does not hold came back");
	return i;
}

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)txq, (void)ctx;
	state[index_of(p)] = 2;
	out_n++;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)ctx;
	must(r > 0 && r < PW_DROP_REASON_MAX, "a drop without a valid reason");
	state[index_of(p)] = 3;
	dropped++;
}

static struct pw_pkt *drv_clone(struct pw_netdev *dev, const struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)ctx;
	if (npkt >= MAXP)
		return NULL;
	unsigned k = npkt++;
	struct pw_pkt *c = &pkts[k];
	pw_pkt_init(c, NULL, p->len);
	c->caplen = p->caplen;
	c->user = p->user;
	c->hash = p->hash;
	c->sk = p->sk;
	state[k] = 1;
	clones++;
	return c;
}

static const struct pw_netdev_ops drv = { .xmit = drv_xmit, .drop = drv_drop, .clone = drv_clone };

static const char *const devname[RELAY_NDIR] = { "up", "down" };

/* Run direction @d's commands; 0, or -1 after the first failure (which
 * must say why). */
static int apply(const struct relay_config *cfg, enum relay_dir d, unsigned ntxq,
		 const char *batch, int change)
{
	struct relay_cmds c;
	must(relay_dir_cmds(cfg, d, devname[d], ntxq, batch, "batch", change, &c, err,
			    sizeof(err)) == 0, "relay_dir_cmds");
	int rc = 0;
	for (size_t i = 0; i < c.n; i++) {
		must(c.where[i] && c.where[i][0], "a command without its origin");
		if (cfg->has_seed && !change && relay_has_word(c.cmd[i], "netem"))
			must(relay_has_word(c.cmd[i], "seed"), "a netem without a seed");
		err[0] = '\0';
		if (pw_tc(rt, c.cmd[i], 0, NULL, 0, err, sizeof(err))) {
			must(err[0] != '\0', "a refused command without a message");
			rc = -1;
			break;
		}
	}
	relay_cmds_free(&c);
	return rc;
}

/* Split @d into NUL-terminated sections (copied into @buf). */
static size_t sections(const uint8_t *d, size_t n, char *buf, const char *sec[4], size_t *rest)
{
	size_t s = 0, start = 0;
	for (int k = 0; k < 4; k++)
		sec[k] = "";
	for (size_t i = 0; i < n && s < 3; i++)
		if (d[i] == 0) {
			memcpy(buf + start, d + start, i - start);
			buf[i] = '\0';
			sec[s++] = buf + start;
			start = i + 1;
		}
	*rest = start;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > 1 << 16)
		return 0;
	char *buf = malloc(n + 1);
	must(buf != NULL, "malloc");
	const char *sec[4];
	size_t rest;
	sections(d, n, buf, sec, &rest);

	/* 1: the command line */
	char *words = strdup(sec[0]);
	must(words != NULL, "strdup");
	char *argv[72] = { "pinwheel-netem", "--listen", "127.0.0.1:9000", "--to", "[::1]:7" };
	int argc = 5;
	for (char *save, *w = strtok_r(words, "\n", &save); w && argc < 71;
	     w = strtok_r(NULL, "\n", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	struct relay_config cfg;
	err[0] = '\0';
	if (relay_parse_args(argc, argv, &cfg, err, sizeof(err))) {
		must(err[0] != '\0', "a refused command line without a message");
		goto out_words;
	}
	if (cfg.help)
		goto out_words;
	for (int a = 0; a < 2; a++) {
		const struct sockaddr_storage *ss = a ? &cfg.to : &cfg.listen;
		char txt[96];
		struct sockaddr_storage back;
		socklen_t bl;
		relay_format_addr(ss, txt, sizeof(txt));
		must(relay_parse_addr(txt, &back, &bl, err, sizeof(err)) == 0, "an address that "
		     "does not parse back");
		must(bl == (a ? cfg.to_len : cfg.listen_len), "address length");
		must(!memcmp(&back, ss, bl), "an address that parses back differently");
	}
	/* --map: each entry's own address finds it, or an earlier entry (the
	 * first match counts); the clients' priorities below come from it */
	for (unsigned k = 0; k < cfg.nmap; k++) {
		uint32_t c = relay_map_lookup(&cfg, &cfg.map[k].addr);
		unsigned j;
		for (j = 0; j < k; j++)
			if (relay_map_lookup(&(struct relay_config){ .map = { cfg.map[j] }, .nmap = 1 },
					     &cfg.map[k].addr))
				break;
		must(j < k || c == cfg.map[k].classid, "a --map entry that does not find itself");
	}
	uint32_t prio[NCLIENT];
	for (int c = 0; c < NCLIENT; c++) {
		struct sockaddr_storage ss;
		socklen_t sl;
		char a[32];
		snprintf(a, sizeof(a), "127.0.0.1:%d", 1000 + c);
		must(relay_parse_addr(a, &ss, &sl, err, sizeof(err)) == 0, "a client address");
		prio[c] = relay_map_lookup(&cfg, &ss);
	}
	const char *batch[RELAY_NDIR] = { sec[1][0] ? sec[1] : NULL, sec[2][0] ? sec[2] : NULL };

	/* the runtime and devices, as the relay has them */
	unsigned ncpu = cfg.workers ? (cfg.workers > 4 ? 4 : cfg.workers) : 2;
	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = ncpu;
	pc.clock = PW_CLOCK_SIM;
	pc.sim_start_ns = 1000000000ull;
	must(pw_runtime_create(&pc, &rt) == 0, "runtime");
	pw_set_migration(rt, PW_MIGRATION_OFF);
	pw_net_set_watchdog_pinned(rt, 1);
	struct pw_netdev *dev[RELAY_NDIR];
	for (int k = 0; k < RELAY_NDIR; k++) {
		must(pw_netdev_create(rt, devname[k], ncpu, &drv, NULL, &dev[k]) == 0, "netdev");
		for (unsigned q = 0; q < ncpu; q++) {
			uint64_t m = 1ull << q;
			must(pw_netdev_set_xps(dev[k], q, &m, ncpu) == 0, "xps");
		}
	}
	for (int c = 0; c < NCLIENT; c++)
		for (int k = 0; k < RELAY_NDIR; k++) {
			must(pw_sock_init(&socks[c][k], rt, NULL) == 0, "sock");
			socks[c][k].sk_hash = (uint32_t)c * 2654435761u;
		}
	npkt = 0;
	rx = clones = out_n = dropped = 0;
	int ok = 1;
	for (int k = 0; k < RELAY_NDIR && ok; k++)
		if (apply(&cfg, k, ncpu, batch[k], 0))
			ok = 0; /* the relay would exit 2 here */

	/* 4: the datagrams */
	size_t i = rest;
#define NEXT() (i < n ? d[i++] : 0)
	while (ok && i < n) {
		uint8_t op = NEXT();
		switch (op % 10) {
		case 0: case 1: case 2: case 3: case 4: case 5: {
			if (npkt >= MAXP - 64)
				break;
			uint8_t a = NEXT(), b = NEXT(), c = NEXT();
			unsigned k = npkt++;
			struct pw_pkt *p = &pkts[k];
			unsigned cl = b % NCLIENT, dir = (b >> 4) & 1;
			pw_pkt_init(p, NULL, (unsigned)a * 6u + 28u);
			p->caplen = (unsigned)a * 6u;
			p->hash = socks[cl][dir].sk_hash;
			p->priority = prio[cl];
			p->sk = &socks[cl][dir];
			p->user = dir;
			state[k] = 1;
			rx++;
			must(pw_cpu_enter(rt, c % ncpu) == 0, "cpu_enter");
			pw_dev_queue_xmit(dev[dir], p);
			pw_cpu_exit(rt);
			break;
		}
		case 6: case 7: {
			uint8_t a = NEXT();
			must(pw_sim_advance(rt, (uint64_t)a * a * 10000ull) == 0, "advance");
			break;
		}
		case 8:
			for (int k = 0; k < RELAY_NDIR; k++)
				apply(&cfg, k, ncpu, batch[k], 1); /* SIGHUP: may fail */
			break;
		case 9:
			for (int k = 0; k < RELAY_NDIR; k++) {
				char cmd[32];
				snprintf(cmd, sizeof(cmd), "qdisc show dev %s", devname[k]);
				pw_tc(rt, cmd, PW_TC_STATS | ((op >> 4) & 1 ? PW_TC_JSON : 0), out,
				      sizeof(out), err, sizeof(err));
			}
			break;
		}
	}
	/* the drain: a second of clock per round, until nothing is queued or
	 * 1000 s have passed (a fuzzed config may hold packets longer: netem
	 * delay 2000s, rate 1bit); each device's root counts what it holds */
	for (int k = 0; k < 1000; k++) {
		unsigned held[RELAY_NDIR] = { 0, 0 };
		for (unsigned j = 0; j < npkt; j++)
			if (state[j] == 1)
				held[pkts[j].user]++;
		for (int v = 0; v < RELAY_NDIR; v++) {
			struct pw_qdisc_stats st;
			must(pw_netdev_qdisc_stats(dev[v], 0, &st) == 0, "root stats");
			if (st.qlen != held[v])
				fprintf(stderr, "dev %s: root qlen %u, %u packets held\n", devname[v],
					st.qlen, held[v]);
			must(st.qlen == held[v], "the root's qlen is not what the devices hold");
		}
		if (!held[0] && !held[1])
			break;
		must(pw_sim_advance(rt, k < 10 ? 100000000ull : 1000000000ull) == 0, "advance");
	}
	for (int k = 0; k < RELAY_NDIR; k++)
		pw_netdev_destroy(dev[k]); /* the stop: what is left is dropped */
	must(rx + clones == out_n + dropped, "the balance: rx + clones != out + dropped");
	for (unsigned k = 0; k < npkt; k++)
		must(state[k] == 2 || state[k] == 3, "not back after destroy");
	for (int c = 0; c < NCLIENT; c++)
		for (int k = 0; k < RELAY_NDIR; k++)
			pw_sock_put(&socks[c][k]);
	pw_runtime_destroy(rt);
	rt = NULL;
out_words:
	free(words);
	free(buf);
	return 0;
}
