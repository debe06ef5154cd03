/* SPDX-License-Identifier: MIT */
/*
 * A test driver for the packet-scheduling layer and its ledger, shared by
 * the net tests on the simulated clock: every packet handed to the layer
 * is recorded, and the driver's xmit/drop check that it comes back once
 * (state 1 -> 2 sent, or 3 dropped), with the CPU, time and queue of each
 * send.  One thread (the simulation's); the ledger is a global.
 */
#ifndef PW_TESTS_NET_LEDGER_H
#define PW_TESTS_NET_LEDGER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "check.h"

/* ---------------------------------------------------------- the driver */

#define MAXPKT 200000

struct ledger {
	struct pw_pkt *pkts;
	uint8_t *state;        /* 0 unused, 1 in the layer, 2 sent, 3 dropped */
	unsigned n;
	uint64_t sent, dropped;
	uint64_t drop_by[PW_DROP_REASON_MAX];
	int xmit_cpu[MAXPKT];  /* the CPU that ran xmit */
	uint64_t xmit_ns[MAXPKT];
	unsigned xmit_txq[MAXPKT];
	unsigned order[MAXPKT]; /* packet indices in xmit order */
	unsigned norder;
	int busy_left;          /* xmit returns BUSY this many times */
	int wake_in_busy;       /* ...and wakes the queue before answering */
	struct pw_runtime *rt;
};

static struct ledger L;

static unsigned idx_of(const struct pw_pkt *p)
{
	return (unsigned)(p - L.pkts);
}

static int drv_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)dev, (void)ctx;
	unsigned i = idx_of(p);
	CHECK(i < L.n);
	CHECK_EQ(L.state[i], 1);
	if (L.busy_left > 0) {
		L.busy_left--;
		if (L.wake_in_busy) /* the completion side frees ring slots meanwhile */
			pw_netif_wake_queue(dev, txq);
		return PW_NETDEV_TX_BUSY;
	}
	L.state[i] = 2;
	L.sent++;
	L.xmit_cpu[i] = pw_this_cpu();
	L.xmit_ns[i] = pw_now_ns(L.rt);
	L.xmit_txq[i] = txq;
	L.order[L.norder++] = i;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *dev, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)dev, (void)ctx;
	unsigned i = idx_of(p);
	CHECK(i < L.n);
	CHECK_EQ(L.state[i], 1);
	CHECK(r > 0 && r < PW_DROP_REASON_MAX);
	L.state[i] = 3;
	L.dropped++;
	L.drop_by[r]++;
}

static const struct pw_netdev_ops drv = { .xmit = drv_xmit, .drop = drv_drop };

static void ledger_init(struct pw_runtime *rt)
{
	free(L.pkts);
	free(L.state);
	memset(&L, 0, sizeof(L));
	L.pkts = calloc(MAXPKT, sizeof(*L.pkts));
	L.state = calloc(MAXPKT, 1);
	CHECK(L.pkts && L.state);
	L.rt = rt;
}

/* A new packet of @len bytes (hash @hash), handed to the layer from @cpu
 * (-1: a thread that is no CPU).  Returns the transmit's result. */
static int send_from(struct pw_netdev *dev, int cpu, uint32_t len, uint32_t hash,
		     uint32_t prio, unsigned *idx)
{
	CHECK(L.n < MAXPKT);
	unsigned i = L.n++;
	struct pw_pkt *p = &L.pkts[i];
	pw_pkt_init(p, NULL, len);
	p->hash = hash;
	p->priority = prio;
	L.state[i] = 1;
	if (idx)
		*idx = i;
	if (cpu >= 0)
		CHECK_EQ(pw_cpu_enter(L.rt, (unsigned)cpu), 0);
	int rc = pw_dev_queue_xmit(dev, p);
	if (cpu >= 0)
		pw_cpu_exit(L.rt);
	return rc;
}

/* Every packet came back exactly once, and none is still in the layer. */
static void ledger_check_all_back(void)
{
	for (unsigned i = 0; i < L.n; i++)
		CHECK(L.state[i] == 2 || L.state[i] == 3);
	CHECK_EQ(L.sent + L.dropped, L.n);
}

static void tc_ok(struct pw_runtime *rt, const char *cmd)
{
	char err[1024];
	int rc = pw_tc(rt, cmd, 0, NULL, 0, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "tc \"%s\": %d: %s\n", cmd, rc, err);
		abort();
	}
}

#endif
