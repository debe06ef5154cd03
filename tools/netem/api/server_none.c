/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's --api mode (and the relay's --metrics) where the build
 * found no HTTP server or JSON library (tools/netem/api/server.c is the
 * real one): says which packages to install.  The build picks one of the two files, so main() calls
 * netem_server_main() without a conditional.
 * Threads: the main thread.  Locks: none.
 */
#include <errno.h>
#include <stdio.h>

#include "server.h"

/**
 * netem_server_main() - refuse --api: this build has no API.
 * Context: the main thread, before any other thread starts.
 * Return: 2, the tools' exit status for a usage error.
 */
int netem_server_main(const struct relay_config *cfg)
{
	(void)cfg;
	fprintf(stderr, "pinwheel-netem: --api: this build has no HTTP API; install "
			"libmicrohttpd-dev and libjansson-dev (pkg-config libmicrohttpd, jansson) "
			"and build again\n");
	return 2;
}

/**
 * netem_relay_metrics_start() - refuse --metrics: this build has no HTTP
 * server.  Context: the main thread.  Return: -ENOTSUP, saying what to
 * install in @err.
 */
int netem_relay_metrics_start(struct udp_relay *r, const struct relay_config *cfg,
			      pthread_mutex_t *lock, struct netem_relay_metrics **out, char *err,
			      size_t errlen)
{
	(void)r;
	(void)cfg;
	(void)lock;
	*out = NULL;
	snprintf(err, errlen, "--metrics: this build has no HTTP server; install "
			      "libmicrohttpd-dev and libjansson-dev (pkg-config libmicrohttpd, "
			      "jansson) and build again");
	return -ENOTSUP;
}

/* Nothing was started.  Context: the main thread. */
void netem_relay_metrics_stop(struct netem_relay_metrics *m)
{
	(void)m;
}
