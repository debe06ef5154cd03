/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's --api mode where the build found no HTTP server or JSON
 * library (tools/netem/api/server.c is the real one): says which packages to
 * install.  The build picks one of the two files, so main() calls
 * netem_server_main() without a conditional.
 * Threads: the main thread.  Locks: none.
 */
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
