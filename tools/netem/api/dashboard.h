/* SPDX-License-Identifier: MIT */
/*
 * The live dashboard of pinwheel-netem --api (tools/netem/api/dashboard.c):
 * GET / (or /dashboard), one page (dashboard.html, embedded in the
 * binary at build time: no file read, nothing fetched) carrying the
 * process's token, and GET /dashboard/data, the read-only JSON the page
 * polls once a second.  api.c routes both; a browser gets the page by
 * GET or HEAD, and makes API calls (the data included) with the token.
 * Threads: the API's polling thread.  Locks: the registry's two mutexes,
 * taken as a request takes them (netem_dashboard_data() only).
 */
#ifndef PW_NETEM_DASHBOARD_H
#define PW_NETEM_DASHBOARD_H

#include <stddef.h>

struct proxy_registry;

#define NETEM_DASHBOARD_PATH "/dashboard"
#define NETEM_DASHBOARD_DATA_PATH "/dashboard/data"
#define NETEM_DASHBOARD_TOKEN_LEN 32 /* hex digits */

/**
 * netem_dashboard_page() - the page: HTML with its CSS and JS inline, the
 * placeholder of its meta tag "pinwheel-token" replaced by @token.
 * Context: any thread; reads constant data only.
 * Return: a malloc'd copy (not NUL-terminated), its length in @len; NULL
 * when out of memory.
 */
char *netem_dashboard_page(const char *token, size_t *len);

/**
 * netem_dashboard_data() - what the page shows, as JSON: the monotonic
 * time of the reading ("now_ms") and per proxy its toxiproxy JSON (name,
 * listen, upstream, enabled, toxics) with "stats", the object GET
 * /proxies/NAME/stats gives (bytes each way, drops, achieved delay,
 * configured latency, the accuracy check): the facts GET /metrics gives.
 * Context: any thread; takes @r's req_lock and lock (the plane's stats
 * calls run under them, as GET /proxies/NAME/stats does).
 * Return: a malloc'd NUL-terminated text; NULL when out of memory.
 */
char *netem_dashboard_data(struct proxy_registry *r);

#endif /* PW_NETEM_DASHBOARD_H */
