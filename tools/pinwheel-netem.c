/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem: an unprivileged network emulator for UDP (and, with
 * --api, toxiproxy's HTTP API over TCP and UDP proxies), on pinwheel's
 * qdiscs and timers.  This file is the program: the command line (parsed
 * by tools/netem/config.c), signals, and the command-line mode over one
 * UDP relay (tools/netem/udp/udp.c, udp_tx.c, udp_setup.c: what runs; tools/netem/stats.c: its
 * reports); --api hands over to tools/netem/api/server.c.
 *
 * Threads: main only here.  Every signal the program takes (SIGINT,
 * SIGTERM, SIGHUP) is blocked in every thread (the mask is set before the
 * relay's workers exist, so they inherit it) and taken by main with
 * sigtimedwait(), between --stats reports: SIGHUP runs the batch files
 * again as changes (udp_relay_reload()), SIGINT/SIGTERM stop the relay
 * (udp_relay_stop(): drain, join, final report and balance).  With
 * --metrics ADDR:PORT, an HTTP server's thread (tools/netem/api/server.c)
 * reads the relay for each scrape.  Locks: ctl, held by main around its
 * calls on the relay (reload; a report, made into memory under it and
 * written to stdout after) and by a scrape around its own, so the relay
 * has one controlling thread at a time; the server starts before the
 * "ready" line and stops before the relay does.  Costs: a wake-up per --stats period, nothing per
 * datagram.
 *
 * Exit status: 0; 1 when the relay could not start its workers or a
 * direction does not balance at the stop; 2 for a bad command line or
 * configuration; 3 when --check found the achieved outside the
 * configured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "netem/flags.h"
#include "netem/relay.h"
#include "netem/api/server.h"
#include "netem/udp/udp.h"
#include "now.h"

int main(int argc, char **argv)
{
	static struct relay_config cfg;
	char err[8192];
	if (relay_parse_args(argc, argv, &cfg, err, sizeof(err))) {
		fprintf(stderr, "pinwheel-netem: %s\n", err);
		return 2;
	}
	if (cfg.help) {
		fputs(relay_help_text, stdout);
		return 0;
	}
	if (cfg.version) {
		printf("pinwheel-netem version %s\n", relay_version);
		return 0;
	}
	/* -host/-port, or toxiproxy-server's defaults: looked up here, the
	 * parser being pure (tools/netem/flags.c) */
	if (cfg.api_resolve && netem_api_listen_addr(cfg.api_host, cfg.api_port, &cfg.api_addr,
						     &cfg.api_len, err, sizeof(err))) {
		fprintf(stderr, "pinwheel-netem: %s\n", err);
		return 2;
	}
	/* --api: toxiproxy's HTTP API (tools/netem/api/server.c) */
	if (cfg.api)
		return netem_server_main(&cfg);
	/* every thread inherits the mask: signals are taken by main only */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct udp_relay *r;
	int rc = udp_relay_start(&cfg, &r, err, sizeof(err));
	if (rc) {
		if (err[0])
			fprintf(stderr, "pinwheel-netem: %s\n", err);
		return rc == -EAGAIN ? 1 : 2;
	}
	/* --metrics: a scrape calls on the relay from the server's thread,
	 * under ctl, which main holds around its own calls on the relay;
	 * started before "ready", so that a port taken is said first */
	static pthread_mutex_t ctl = PTHREAD_MUTEX_INITIALIZER;
	struct netem_relay_metrics *metrics = NULL;
	if (cfg.metrics && netem_relay_metrics_start(r, &cfg, &ctl, &metrics, err, sizeof(err))) {
		fprintf(stderr, "pinwheel-netem: %s\n", err);
		udp_relay_stop(r, 0, NULL);
		return 2;
	}
	const struct relay_config *rc_cfg = udp_relay_config(r);
	char la[80], ta[80];
	relay_format_addr(&rc_cfg->listen, la, sizeof(la));
	relay_format_addr(&rc_cfg->to, ta, sizeof(ta));
	fprintf(stderr, "pinwheel-netem: ready: listening on %s, to %s, %u workers\n", la, ta,
		udp_relay_workers(r));
	/* the schedules' time 0: now, with the workers serving */
	udp_relay_start_schedules(r);

	uint64_t period = (uint64_t)(cfg.stats_s * 1e9);
	uint64_t next_stats = period ? now_ns() + period : UINT64_MAX;
	for (;;) {
		struct timespec ts = { 3600, 0 };
		if (next_stats != UINT64_MAX) {
			uint64_t now = now_ns(), d = next_stats > now ? next_stats - now : 0;
			ts.tv_sec = (time_t)(d / 1000000000ull);
			ts.tv_nsec = (long)(d % 1000000000ull);
		}
		int sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		if (sig == SIGHUP) {
			pthread_mutex_lock(&ctl);
			udp_relay_reload(r);
			pthread_mutex_unlock(&ctl);
		}
		if (next_stats != UINT64_MAX && now_ns() >= next_stats) {
			/* made under ctl, written after it: a stdout nobody
			 * reads holds main, not the scrapes */
			char *text = NULL;
			size_t len = 0;
			FILE *mf = open_memstream(&text, &len);
			pthread_mutex_lock(&ctl);
			udp_relay_report(r, mf ? mf : stdout);
			pthread_mutex_unlock(&ctl);
			if (mf && !fclose(mf))
				fwrite(text, 1, len, stdout);
			free(text);
			fflush(stdout);
			next_stats += period;
			if (next_stats < now_ns())
				next_stats = now_ns() + period;
		}
	}
	netem_relay_metrics_stop(metrics); /* no scrape from here on */
	return udp_relay_stop(r, 1, NULL);
}
