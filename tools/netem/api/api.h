/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's HTTP front (tools/netem/api/api.c): toxiproxy's API served
 * on one address by libmicrohttpd, every request that passes the guard
 * against browsers and DNS rebinding handed to the registry
 * (tools/netem/api/proxy.h).
 * Threads: start and stop from the server's main thread; requests run on
 * the library's one polling thread (a slow registry call holds every
 * client meanwhile); a watchdog thread cuts requests that take longer
 * than API_REQ_TIMEOUT_S to arrive.  Locks: the connection list's
 * mutex (api.c), and the registry's, inside proxy_api_request().
 */
#ifndef PW_NETEM_API_H
#define PW_NETEM_API_H

#include <stddef.h>
#include <sys/socket.h>

struct proxy_registry;
struct netem_api;

#define API_MAX_BODY        (1u << 20) /* bytes of a request body; past it 413 */
#define API_CONN_TIMEOUT_S  10         /* an API connection idle this long is closed */
#define API_REQ_TIMEOUT_S   10         /* a request not wholly received this long
					  after its first byte could come is cut */
#define API_WATCHDOG_MS     200        /* how often the watchdog looks */
#define API_MAX_CONNS       1024       /* API connections at once (no bound per
					  address: local clients are all 127.0.0.1) */

/**
 * netem_api_start() - listen on @addr (only there: the caller chose a
 * loopback or a user-written address) and serve @r's API on a thread of
 * the library's.  The address bound (port 0 resolved) into @bound.
 * Every request passes the guard first (api.c): 403 to a browser's
 * User-Agent, and on a loopback @addr to a Host that names neither this
 * API nor one of the @nallow_host names of @allow_host (--allow-host;
 * copied).
 * GET /metrics (Prometheus' text: metrics.h) is served as @metrics says
 * (NULL, or no kind on: 404, as toxiproxy without -proxy-metrics and
 * -runtime-metrics); @metrics must outlive the API.  @r NULL: the
 * command line relay's --metrics, GET /metrics and nothing else (every
 * other request 404, the guard first as for the API; messages name
 * --metrics).
 * Context: the server's main thread, with the signals it waits for
 * blocked (the polling thread inherits the mask).
 * Return: 0; a negative errno with a message naming the address, or the
 * bad --allow-host name, in @err.
 */
struct netem_metrics_cfg;
int netem_api_start(struct proxy_registry *r, const struct sockaddr *addr, socklen_t len,
		    const char *const *allow_host, unsigned nallow_host,
		    const struct netem_metrics_cfg *metrics, struct netem_api **out,
		    struct sockaddr_storage *bound, socklen_t *bound_len, char *err, size_t errlen);

/**
 * netem_api_stop() - stop serving: the listener closed, the polling
 * thread joined, open API connections closed.  Context: the thread that
 * started it.  Return: none.
 */
void netem_api_stop(struct netem_api *a);

#endif /* PW_NETEM_API_H */
