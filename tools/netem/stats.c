/* SPDX-License-Identifier: MIT */
/*
 * The UDP relay's statistics, presented (tools/netem/stats.h): the names
 * of the relay's drop reasons, and the report pinwheel-netem prints at
 * --stats intervals and at its stop, as text or as one JSON object a line
 * (--json; the fields are docs/relay.md's), from a snapshot the relay took
 * (struct udp_stats, udp_setup.c).  Counting is the relay's (udp.c,
 * udp_tx.c): this file only formats, and a UDP proxy's stats in the API
 * (tools/netem/api/udp_proxy.c) read the same numbers under the same names.
 * Threads: the caller's (main for the command line, an API thread for a
 * proxy).  Locks: none; no state of its own.  Costs: a few printf calls
 * a report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

#include "stats.h"

static const char *const dev_name[RELAY_NDIR] = { "up", "down" };

/* A drop reason's name (see stats.h). */
const char *udp_reason_name(unsigned r)
{
	switch (r) {
	case RD_MAX_CLIENTS: return "max_clients";
	case RD_MAX_CLIENTS_PER_ADDR: return "max_clients_per_addr";
	case RD_NO_MEMORY: return "no_memory";
	case RD_CLIENT_SHARE: return "client_share";
	case RD_RCVBUF: return "rcvbuf";
	case RD_LOOP: return "loop";
	case RD_SOCKET_ERROR: return "socket_error";
	case RD_SEND_ERROR: return "send_error";
	default: return pw_drop_reason_name((enum pw_drop_reason)r);
	}
}

/* Every reason's drops (see stats.h). */
uint64_t udp_dropped_total(const struct udp_dir_stats *t)
{
	uint64_t n = 0;
	for (unsigned r = 1; r < RD_NREASONS; r++)
		n += t->dropped[r];
	return n;
}

/* Whether direction @s balances with nothing in flight. */
static int balanced(const struct udp_dir_stats *s)
{
	return s->backlog == 0 && s->rx + s->clones == s->out + udp_dropped_total(s);
}

/* The --json form of @s on @f. */
static void print_json(FILE *f, const struct udp_stats *s)
{
	fprintf(f, "{\"time\":%.3f,\"final\":%s,\"clients\":%u,\"clients_new\":%" PRIu64
		",\"clients_expired\":%" PRIu64 ",\"refused\":%" PRIu64
		",\"upstream_errors\":%" PRIu64,
		s->t, s->final ? "true" : "false", s->clients, s->clients_new, s->clients_expired,
		s->refused, s->upstream_errors);
	fprintf(f, ",\"memory\":{\"max_bytes\":%" PRIu64 ",\"mem_bytes\":%" PRIu64
		",\"mem_peak_bytes\":%" PRIu64 ",\"active_clients\":%" PRId64
		",\"share_bytes\":%" PRIu64 ",\"clients_over_share\":%" PRIu64
		",\"clients_no_memory\":%" PRIu64 ",\"clones_refused\":%" PRIu64,
		s->max_bytes, s->mem, s->mem_peak, s->active, s->share, s->over_share,
		s->no_memory, s->clones_refused);
	if (s->final)
		fprintf(f, ",\"mem_packets\":%" PRIu64, s->mem_packets);
	fprintf(f, "}");
	fprintf(f, ",\"worker_rx\":[");
	for (unsigned i = 0; i < s->nw; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", s->worker_rx[i]);
	fprintf(f, "]");
	for (int d = 0; d < RELAY_NDIR; d++) {
		const struct udp_dir_stats *ds = &s->d[d];
		fprintf(f, ",\"%s\":{\"rx\":%" PRIu64 ",\"rx_bytes\":%" PRIu64 ",\"clones\":%" PRIu64
			",\"out\":%" PRIu64 ",\"out_bytes\":%" PRIu64 ",\"dropped\":%" PRIu64
			",\"drops\":{",
			dev_name[d], ds->rx, ds->rx_bytes, ds->clones, ds->out, ds->out_bytes,
			udp_dropped_total(ds));
		int first = 1;
		for (unsigned r = 1; r < RD_NREASONS; r++)
			if (ds->dropped[r]) {
				fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", udp_reason_name(r),
					ds->dropped[r]);
				first = 0;
			}
		fprintf(f, "},\"backlog\":%" PRIu64 ",\"out_pps\":%.0f,\"out_bps\":%.0f",
			ds->backlog, ds->pps, ds->bps);
		if (s->final)
			fprintf(f, ",\"balance\":%s", balanced(ds) ? "true" : "false");
		if (s->tc[d] && s->tc[d][0])
			fprintf(f, ",\"qdisc\":%s", s->tc[d]);
		struct pw_tc_schedule_status ss;
		if (s->sched[d] && !pw_tc_schedule_status(s->sched[d], &ss))
			fprintf(f, ",\"schedule\":{\"step\":%d,\"line\":%u,\"cycle\":%" PRIu64
				",\"due\":%" PRIu64 ",\"applied\":%" PRIu64 ",\"failed\":%" PRIu64 "}",
				ss.step, ss.line, ss.cycle, ss.due, ss.applied, ss.failed);
		fprintf(f, "}");
	}
	fprintf(f, "}\n");
}

/* The text form of @s on @f. */
static void print_text(FILE *f, const struct udp_stats *s)
{
	fprintf(f, "--- %.3f s%s: %u clients (%" PRIu64 " new, %" PRIu64 " expired), %" PRIu64
		" port unreachable from the server, %" PRIu64 " other upstream errors\n", s->t,
		s->final ? " (final)" : "", s->clients, s->clients_new, s->clients_expired,
		s->refused, s->upstream_errors);
	fprintf(f, "memory: %" PRIu64 " of %" PRIu64 " bytes (peak %" PRIu64 "), %" PRId64
		" clients holding bytes, share %" PRIu64 " bytes; clients dropped by their "
		"share %" PRIu64 ", by the budget %" PRIu64 "; duplicates refused %" PRIu64 "\n",
		s->mem, s->max_bytes, s->mem_peak, s->active, s->share, s->over_share, s->no_memory,
		s->clones_refused);
	for (int d = 0; d < RELAY_NDIR; d++) {
		const struct udp_dir_stats *ds = &s->d[d];
		fprintf(f, "dev %s: rx %" PRIu64 " (%" PRIu64 " bytes) clones %" PRIu64
			" out %" PRIu64 " (%" PRIu64 " bytes) dropped %" PRIu64,
			dev_name[d], ds->rx, ds->rx_bytes, ds->clones, ds->out, ds->out_bytes,
			udp_dropped_total(ds));
		for (unsigned r = 1; r < RD_NREASONS; r++)
			if (ds->dropped[r])
				fprintf(f, " (%s %" PRIu64 ")", udp_reason_name(r), ds->dropped[r]);
		fprintf(f, " backlog %" PRIu64 " rate %.0f pps %.0f bit/s\n", ds->backlog, ds->pps,
			ds->bps);
		if (s->tc[d] && s->tc[d][0])
			fprintf(f, "%s\n", s->tc[d]);
		char sl[512];
		if (s->sched[d] && pw_tc_schedule_format(s->sched[d], sl, sizeof(sl)) >= 0)
			fprintf(f, "%s\n", sl);
		if (s->final)
			fprintf(f, "balance %s: rx %" PRIu64 " + clones %" PRIu64 " = out %" PRIu64
				" + dropped %" PRIu64 ", backlog %" PRIu64 ": %s\n",
				dev_name[d], ds->rx, ds->clones, ds->out, udp_dropped_total(ds),
				ds->backlog, balanced(ds) ? "ok" : "MISMATCH");
	}
}

/* The command line's report (see stats.h). */
int udp_stats_print(FILE *f, const struct udp_stats *s, int json)
{
	if (json)
		print_json(f, s);
	else
		print_text(f, s);
	fflush(f);
	int ok = 1;
	for (int d = 0; s->final && d < RELAY_NDIR; d++)
		if (s->d[d].rx + s->d[d].clones != s->d[d].out + udp_dropped_total(&s->d[d]))
			ok = 0;
	return ok;
}
