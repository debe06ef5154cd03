/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's --api mode (tools/netem/api/server.c): the process that
 * serves toxiproxy's HTTP API over the TCP data path; and the command
 * line relay's --metrics server.
 * Threads: the main thread (it starts the API's threads and a resolver
 * thread for upstream names, and joins them); the --metrics server's
 * polling thread reads the relay for each scrape.  Locks: none of the
 * API mode's here; the --metrics server takes the caller's lock around
 * each scrape's calls on the relay (netem_relay_metrics_start()).
 */
#ifndef PW_NETEM_SERVER_H
#define PW_NETEM_SERVER_H

#include <pthread.h>

#include "../relay.h"

/**
 * netem_server_main() - run the --api mode of @cfg until SIGINT or
 * SIGTERM: the TCP plane, the registry, the proxies of --config, the API;
 * "pinwheel-netem: api listening on ADDR:PORT" on stderr when ready.
 * Built without libmicrohttpd and jansson, it says which packages to
 * install.  Context: the main thread, before any other thread exists.
 * Return: the process's exit status: 0 after a stop; 1 if the API or the
 * data path could not start; 2 for a bad --config file or a build without
 * the API.
 */
int netem_server_main(const struct relay_config *cfg);

struct udp_relay;
struct netem_relay_metrics;

/**
 * netem_relay_metrics_start() - serve GET /metrics for the command line's
 * relay @r at cfg->metrics_addr (--metrics ADDR:PORT): its series, and
 * with cfg->runtime_metrics the process's and its runtime's (as
 * "relay"), the API's guard in force (--allow-host).  Every call the
 * scrape makes on @r is made with @lock held: the caller holds it too
 * around its own calls on @r (reports, reloads), so @r has one
 * controlling thread at a time, as udp.h asks.  "pinwheel-netem: metrics
 * listening on ADDR:PORT" on stderr when ready.
 * Context: the main thread, with the signals it waits for blocked.
 * Return: 0 and *@out; a negative errno with a message naming --metrics
 * in @err (a build without the API: -ENOTSUP, saying what to install).
 */
int netem_relay_metrics_start(struct udp_relay *r, const struct relay_config *cfg,
			      pthread_mutex_t *lock, struct netem_relay_metrics **out, char *err,
			      size_t errlen);

/**
 * netem_relay_metrics_stop() - stop serving and free @m (NULL: no-op);
 * no scrape runs after it returns.  Context: the thread that started it.
 */
void netem_relay_metrics_stop(struct netem_relay_metrics *m);

#endif /* PW_NETEM_SERVER_H */
