/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's UDP relay as an instance (these functions:
 * tools/netem/udp/udp_setup.c; the design and the data path: udp.c; sending:
 * udp_tx.c; their shared structs: udp_priv.h): started from a struct
 * relay_config, changed in place (tc commands as changes,
 * packets in flight kept), read (a statistics snapshot, the --stats
 * report), stopped (drain, join, balance).  The command line runs one;
 * the API's UDP proxies (tools/netem/api/udp_proxy.c) one each.
 * Threads: each function is called by the relay's controlling thread
 * (the command line's main thread, or an API thread), one call at a time
 * per relay (the caller serialises them); the relay's own worker threads
 * are internal.  Locks: none taken here beyond the layer's configuration
 * lock inside pw_tc.
 */
#ifndef PW_NETEM_UDP_H
#define PW_NETEM_UDP_H

#include <stddef.h>

#include <stdio.h>

#include "../relay.h"
#include "../stats.h"

struct udp_relay;

/**
 * udp_relay_start() - a relay for @cfg (copied; its strings -- spec,
 * batch and schedule file names -- must outlive the relay): batch files
 * read, runtime, devices, tc commands, sockets bound (a --listen port 0
 * is resolved: udp_relay_config() shows it), workers started.  Schedules
 * wait for udp_relay_start_schedules().
 * Context: the controlling thread.
 * Return: 0 and the relay in *@out; -EINVAL (bad configuration: a tc
 * command, a file, a socket: the message in @err), -ENOMEM, or -EAGAIN (a
 * worker thread could not start); on failure nothing is left.
 */
int udp_relay_start(const struct relay_config *cfg, struct udp_relay **out, char *err,
		    size_t errlen);

/**
 * udp_relay_start_schedules() - the schedules' time 0 is now; a schedule
 * that cannot start is said on stderr.  Context: the controlling thread.
 * Return: 0, or -1 when one did not start.
 */
int udp_relay_start_schedules(struct udp_relay *r);

/**
 * udp_relay_config() - the relay's configuration (its --listen port
 * resolved).  Context: any thread while the relay lives.
 * Return: a pointer into the relay.
 */
const struct relay_config *udp_relay_config(const struct udp_relay *r);

/**
 * udp_relay_workers() - the number of worker threads.  Context: any
 * thread while the relay lives.  Return: it.
 */
unsigned udp_relay_workers(const struct udp_relay *r);

/**
 * udp_relay_runtime() - the pinwheel runtime the relay's workers serve
 * (for its statistics: pw_stats_read() and the like).  Context: any
 * thread while the relay lives.  Return: it.
 */
struct pw_runtime *udp_relay_runtime(const struct udp_relay *r);

/**
 * udp_relay_apply() - run @text (tc -batch lines, @name naming it in
 * messages) on direction @dir as changes ("qdisc add|replace" and "class
 * add|replace" become "change"): what SIGHUP does with a batch file.
 * Packets in flight are kept; the workers are kicked after.  @text
 * becomes the direction's batch text.
 * Context: the controlling thread.
 * Return: 0; -EINVAL with the failing command and pw_tc's message in
 * @err (the commands before it were applied); -ENOMEM.
 */
int udp_relay_apply(struct udp_relay *r, enum relay_dir dir, const char *text, const char *name,
		    char *err, size_t errlen);

/**
 * udp_relay_tc() - run one tc command (@cmd without "tc") on the relay's
 * runtime (devices "up" and "down"), then kick the workers.
 * Context: the controlling thread.
 * Return: 0; pw_tc's negative errno with its message in @err.
 */
int udp_relay_tc(struct udp_relay *r, const char *cmd, char *err, size_t errlen);

/**
 * udp_relay_tc_dev() - udp_relay_tc() for words an API client sent, on
 * direction @dir's device alone: any word after "dev" names it, another
 * device is refused (pw_tc_dev()), no word reads a file (PW_TC_NO_FILES).
 * Context: as udp_relay_tc().  Return: as udp_relay_tc(); -EPERM.
 */
int udp_relay_tc_dev(struct udp_relay *r, enum relay_dir dir, const char *cmd, char *err,
		     size_t errlen);

/**
 * udp_relay_reload() - SIGHUP: each direction's batch file read again and
 * applied as changes (udp_relay_apply()); messages, and the summary
 * "batch files applied", on stderr.  Context: the controlling thread.
 * Return: 0, or -1 when a file or a command failed (the rest applied).
 */
int udp_relay_reload(struct udp_relay *r);

/**
 * udp_relay_snapshot() - the relay's counters now into @s (racy while
 * running: each counter read once); no rates (pps, bps 0: the reports
 * give them, since the report before), no qdisc text (s->tc NULL), no
 * mem_packets (udp_relay_stop() gives it); it changes nothing.
 * Context: the controlling thread.
 * Return: none.
 */
void udp_relay_snapshot(struct udp_relay *r, struct udp_stats *s);

/**
 * udp_relay_report() - a --stats report on @out (text, or JSON with
 * --json), the qdiscs' statistics included.  Context: the controlling
 * thread.  Return: none.
 */
void udp_relay_report(struct udp_relay *r, FILE *out);

/**
 * udp_relay_stop() - stop and free @r: no schedule step, no receiving,
 * up to --drain ms for what is queued, workers joined, --check judged
 * (said on stderr), what is left dropped (dev_destroy), then the final
 * snapshot: printed on stdout with the qdiscs when @print, copied to
 * *@final when not NULL (its tc NULL).  Context: the controlling thread.
 * Return: 0; 1 when a direction does not balance; 3 when --check found
 * the achieved outside the configured (the command line's exit status).
 */
int udp_relay_stop(struct udp_relay *r, int print, struct udp_stats *final);

/* ------------------------------------------------------------------
 * Built with --api only (tools/netem/udp/udp_report.c, beside the tc toxic's
 * report writer, tools/netem/tc_toxic.c): what the API's UDP proxies use.
 */

/**
 * udp_relay_tc_report() - direction @dir's device as the API's statistics
 * show a TCP proxy's tc toxic, shown as toxic @toxic (NULL: ""): one JSON
 * object (text), {"toxic","device","qdiscs": tc -s -j qdisc show with each
 * qdisc's accuracy (the achieved sojourn, rate and loss beside the
 * configured), "check": "pass"|"fail"|"not judged"|"error" and "why",
 * "schedule": {"step","line",...} when the direction runs one} (tc_toxic.h's
 * tc_report_json()).  The figures need a relay started with
 * cfg->accuracy (without: "check":"error").
 * Context: the controlling thread.
 * Return: the text (malloc'd); NULL (no memory, or no such direction).
 */
char *udp_relay_tc_report(struct udp_relay *r, enum relay_dir dir, const char *toxic);

/* What a direction is configured with, for its statistics
 * (udp_relay_stats_json()): the latency and jitter its latency toxics add
 * up to, and the toxics its device comes from ("" or NULL: none). */
struct udp_dir_conf {
	int64_t lat_ms, jit_ms;
	const char *label;
};

/**
 * udp_relay_stats_json() - the counters @s (a snapshot, plus any ledger
 * the caller added) as the API's GET /proxies/NAME/stats shows a UDP
 * proxy, one JSON object (text): "counted_since" @since, the clients,
 * refusals, upstream errors and memory, and per direction ("upstream",
 * "downstream") rx, rx_bytes, clones, out, out_bytes, drops by reason,
 * backlog, the configured latency and jitter of @conf (NULL: 0), the
 * device's report (udp_relay_tc_report(), shown as toxic conf's label;
 * none when @r is NULL) and its "check".  GET /metrics reads the same
 * object for a proxy and for the command line's relay.
 * Context: @r's controlling thread (NULL @r: any thread).
 * Return: the text (malloc'd); NULL when out of memory.
 */
char *udp_relay_stats_json(struct udp_relay *r, const struct udp_stats *s,
			   const struct udp_dir_conf *conf, const char *since);

/**
 * udp_relay_set_schedule() - direction @dir runs the schedule @text from
 * now (an API tc toxic's inline text: any word after "dev" names the
 * direction's device), in place of the one it ran (stopped and freed);
 * @text NULL: none.  The text is checked before anything stops, so a bad
 * one leaves the old schedule running.  The relay's stop stops it.
 * Context: the controlling thread.
 * Return: 0; -EINVAL with "schedule:LINE: ..." naming the bad token in
 * @err; -ENOMEM; -EAGAIN (it did not start: then the direction has none).
 */
int udp_relay_set_schedule(struct udp_relay *r, enum relay_dir dir, const char *text, char *err,
			   size_t errlen);

#endif /* PW_NETEM_UDP_H */
