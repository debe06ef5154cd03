/* SPDX-License-Identifier: MIT */
/*
 * The dashboard's server side: the page and its data (dashboard.h).
 *
 * The page is tools/netem/api/dashboard.html, turned into a C array at
 * build time (tools/netem/api/embed.cmake writes dashboard_page.h in the
 * build tree), so the binary carries it: no file is read at run time and
 * the page names no other resource (its CSS and JS are inline, no CDN).
 * It reads GET /dashboard/data once a second and draws per proxy what it
 * carries each way (bytes/s from the difference of two readings), the
 * delay it added in the last second against the latency its toxics
 * configure, drops by reason and the accuracy check.
 *
 * The page also changes the proxies and toxics, through toxiproxy's own
 * API calls (POST /proxies, POST and DELETE /proxies/NAME and its
 * toxics): its script sends each with the process's token, which this
 * file writes into the page's meta tag when it is served; api.c's guard
 * lets a browser's request through only with it (the page itself aside),
 * the Host rule in force for all (docs/security.md).  The data is
 * read-only by construction: one GET builds the JSON from the registry's
 * own serialisers (proxy__proxy_json(), proxy__stats_json(),
 * proxy_json.c), the same counters GET /metrics turns into series.
 *
 * Threads: the API's polling thread.  Locks: netem_dashboard_data() takes
 * req_lock, then lock, as a request does, and holds them while it reads
 * every proxy.  Costs: per proxy one plane stats call and one tc report
 * per stream, each reading (as GET /proxies/NAME/stats).
 */
#define _GNU_SOURCE
#include "dashboard.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy_priv.h"

/* generated in the build tree (embed.cmake), not a file of the source
 * tree: hence the angle brackets, from the include path CMake adds */
#include <dashboard_page.h>

/* where the page's meta tag takes the token (dashboard.html) */
static const char TOKEN_SLOT[] = "@PINWHEEL_TOKEN@";

char *netem_dashboard_page(const char *token, size_t *len)
{
	size_t n = sizeof(dashboard_page), slot = sizeof(TOKEN_SLOT) - 1, t = strlen(token);
	const char *at = memmem(dashboard_page, n, TOKEN_SLOT, slot);
	size_t head = at ? (size_t)(at - (const char *)dashboard_page) : n;
	size_t out = at ? n - slot + t : n;
	char *p = malloc(out ? out : 1);
	if (!p)
		return NULL;
	memcpy(p, dashboard_page, head);
	if (at) {
		memcpy(p + head, token, t);
		memcpy(p + head + t, at + slot, n - head - slot);
	}
	*len = out;
	return p;
}

char *netem_dashboard_data(struct proxy_registry *r)
{
	json_t *list = json_array(), *top = json_object();
	if (!list || !top) {
		json_decref(list);
		json_decref(top);
		return NULL;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&r->req_lock);
	pthread_mutex_lock(&r->lock);
	for (unsigned i = 0; i < r->n; i++) {
		json_t *p = proxy__proxy_json(r->e[i]);
		if (p)
			json_object_set_new(p, "stats", proxy__stats_json(r, r->e[i]));
		json_array_append_new(list, p);
	}
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&r->req_lock);
	json_object_set_new(top, "now_ms",
			    json_real((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6));
	json_object_set_new(top, "proxies", list);
	char *s = json_dumps(top, JSON_COMPACT);
	json_decref(top);
	return s;
}
