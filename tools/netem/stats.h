/* SPDX-License-Identifier: MIT */
/*
 * The UDP relay's statistics as numbers, and their presentation
 * (tools/netem/stats.c): the drop reasons the relay adds to the layer's,
 * a snapshot of one relay's counters (struct udp_stats, filled by
 * udp_relay_snapshot() in udp_setup.c), and the report the command line prints
 * from it, as text or as one JSON object a line (--json).
 * Threads: whoever holds a snapshot (main for the command line, an API
 * thread for a proxy's stats); every function here is a pure function of
 * its arguments plus the stream it writes.  Locks: none.
 */
#ifndef PW_NETEM_STATS_H
#define PW_NETEM_STATS_H

#include <stdint.h>
#include <stdio.h>

#include <pinwheel/net.h>

#include "relay.h"

/* The relay's own drop reasons, after the layer's. */
enum {
	RD_MAX_CLIENTS = PW_DROP_REASON_MAX,
	RD_MAX_CLIENTS_PER_ADDR, /* a new client of an address at --max-clients-per-addr */
	RD_NO_MEMORY,          /* the byte budget (or malloc) refused */
	RD_CLIENT_SHARE,       /* the client holds its share of the budget */
	RD_RCVBUF,             /* the kernel dropped it at the relay's full socket */
	RD_LOOP,               /* it came from the relay's own upstream socket */
	RD_SOCKET_ERROR,
	RD_SEND_ERROR,
	RD_NREASONS
};

/* One direction's counters: what came in (rx, clones), what left, every
 * drop by reason; backlog and the rates since the previous snapshot. */
struct udp_dir_stats {
	uint64_t rx, rx_bytes, clones, out, out_bytes;
	uint64_t dropped[RD_NREASONS];
	uint64_t backlog;      /* rx + clones - out - dropped, 0 if negative (a racy read) */
	double pps, bps;       /* out, since the previous snapshot (payload bits) */
};

/* A relay's counters at one moment. */
struct udp_stats {
	double t;              /* seconds since the relay started */
	int final;             /* the last one: the workers joined, the devices gone */
	uint32_t clients;
	uint64_t clients_new, clients_expired, refused, upstream_errors;
	uint64_t max_bytes, mem, mem_peak, share, over_share, no_memory, clones_refused;
	int64_t active;
	uint64_t mem_packets;  /* packets made (final only: read once the workers are joined) */
	unsigned nw;
	uint64_t worker_rx[RELAY_MAX_WORKERS];
	struct udp_dir_stats d[RELAY_NDIR];
	const char *tc[RELAY_NDIR];             /* "tc -s qdisc show" text, or NULL */
	struct pw_tc_schedule *sched[RELAY_NDIR]; /* a direction's schedule, or NULL */
};

/* A drop reason's name, the layer's or the relay's.  Context: any
 * thread.  Return: a static string. */
const char *udp_reason_name(unsigned r);

/* Every reason's drops of @d.  Context: any thread.  Return: their sum. */
uint64_t udp_dropped_total(const struct udp_dir_stats *d);

/**
 * udp_stats_print() - the command line's report of @s on @f: text, or one
 * JSON object on one line with @json; the balance lines when @s is final.
 * Context: any thread (main).  Return: 1 when every direction balances
 * (rx + clones == out + dropped) or @s is not final, else 0.
 */
int udp_stats_print(FILE *f, const struct udp_stats *s, int json);

#endif /* PW_NETEM_STATS_H */
