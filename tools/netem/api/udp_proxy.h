/* SPDX-License-Identifier: MIT */
/*
 * The API registry's plane for "protocol":"udp" proxies
 * (tools/netem/api/udp_proxy.c): each open proxy is one UDP relay
 * (tools/netem/udp/udp.h) with one worker, its toxics turned into tc
 * commands on the relay's "up" and "down" devices.
 * Threads: the registry calls the ops with its entry mutex held (the API's
 * thread, the resolver's); the relays' workers are internal.  Locks: none
 * of its own.
 */
#ifndef PW_NETEM_UDP_PROXY_H
#define PW_NETEM_UDP_PROXY_H

#include "proxy.h"

/* The ops table; its ctx is NULL (the plane keeps no state of its own). */
extern const struct proxy_plane_ops udp_proxy_plane_ops;

#endif /* PW_NETEM_UDP_PROXY_H */
