/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-relay-load's shared part: what relay_load.c (the program, its
 * throughput and latency phases, --kernel) and relay_load_abuse.c (--abuse)
 * both use; defined in relay_load.c, each with its Context and Return.
 * No locks.
 */
#ifndef PW_BENCH_RELAY_LOAD_H
#define PW_BENCH_RELAY_LOAD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* The most RTTs (or lateness samples) a phase records. */
#define MAXLAT (1 << 20)

void die(const char *what);
struct sockaddr_in loopback(uint16_t port);
int cmp_u64(const void *a, const void *b);
uint16_t read_ready_port(int fd, char *buf, size_t len);
long long json_num(const char *s, const char *key);

/* pinwheel-relay-load RELAY --abuse [options] (relay_load_abuse.c).
 * Context: the main thread.  Return: the exit status. */
int abuse_main(const char *relay, int argc, char **argv);

#endif
