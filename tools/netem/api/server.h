/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's --api mode (tools/netem/api/server.c): the process that
 * serves toxiproxy's HTTP API over the TCP data path.
 * Threads: the main thread (it starts the API's threads and a resolver
 * thread for upstream names, and joins them).  Locks: none here.
 */
#ifndef PW_NETEM_SERVER_H
#define PW_NETEM_SERVER_H

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

#endif /* PW_NETEM_SERVER_H */
