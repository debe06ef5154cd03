/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by pinwheel-netem's TCP tests (test_netem_tcp.c,
 * test_netem_tcp_fair.c, test_netem_tc_toxic.c; test_netem_stream.c takes
 * the toxic and pattern helpers only): a toxic with its defaults, the byte
 * pattern every stream carries, a monotonic clock and a sleep, an echo
 * server thread on loopback, a proxy on a plane, a client socket, sending
 * and receiving the pattern, and the proxy's byte ledger
 * (bytes_in == bytes_out + cut + dropped + held) checked.
 *
 * Threads: the echo server runs one thread of its own (ntu_echo_start()
 * to ntu_echo_stop()); every other helper runs on the calling test
 * thread, and the socket helpers may run on several test threads at once
 * (they keep no state).  No lock is taken here; the plane's own locks are
 * taken inside tcp.h's calls.  A failed step ends the test through
 * check.h's CHECK (a message naming it, then abort).
 */
#ifndef PW_TESTS_NETEM_TCP_UTIL_H
#define PW_TESTS_NETEM_TCP_UTIL_H

#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "tcp.h"

/* The echo server: one thread, epoll, every connection echoed back; EOF
 * or an error closes that connection.  @port is set by ntu_echo_start()
 * (a test may point its proxies elsewhere by changing its own copy). */
struct ntu_echo {
	int lfd, ep, stop_fd;
	uint16_t port;
	pthread_t th;
};

/**
 * ntu_toxic() - a toxic of @type on @st named @name, toxicity 1, the
 * rest zero.
 * Context: any thread; no lock.
 * Return: the toxic, by value.
 */
struct toxic ntu_toxic(enum toxic_type type, enum toxic_stream st, const char *name);

/**
 * ntu_pat() - byte @i of the pattern every test stream carries (it does
 * not repeat with a short period, so a lost, doubled or reordered piece
 * shows).
 * Context: any thread; no lock.
 * Return: the byte.
 */
unsigned char ntu_pat(uint64_t i);

/**
 * ntu_now_s() - CLOCK_MONOTONIC in seconds.
 * Context: any thread; no lock.
 * Return: the time.
 */
double ntu_now_s(void);

/**
 * ntu_sleep_ms() - sleep @ms milliseconds (nanosleep, not resumed on a
 * signal).
 * Context: any thread; no lock.
 * Return: nothing.
 */
void ntu_sleep_ms(int ms);

/**
 * ntu_loop_addr() - 127.0.0.1:@port.
 * Context: any thread; no lock.
 * Return: the address.
 */
struct sockaddr_in ntu_loop_addr(uint16_t port);

/**
 * ntu_echo_start() - listen on 127.0.0.1 (a free port, in @e->port) and
 * start the echo server's thread.
 * Context: the test's main thread; @e is the caller's until
 * ntu_echo_stop().
 * Return: nothing (a failure ends the test).
 */
void ntu_echo_start(struct ntu_echo *e);

/**
 * ntu_echo_stop() - stop the echo server's thread and close its
 * listener.  Connections still open are left to the process's exit.
 * Context: the thread that called ntu_echo_start().
 * Return: nothing.
 */
void ntu_echo_stop(struct ntu_echo *e);

/**
 * ntu_plane_start() - the echo server @e started and a plane of two
 * workers, 64 KiB a direction, into *@pl: the setup the data-path tests
 * share.  Context: the test's main thread.  Return: nothing (a failure,
 * printed, ends the test).
 */
void ntu_plane_start(struct ntu_echo *e, struct tcp_plane **pl);

/**
 * ntu_plane_stop() - destroy @pl, then stop the echo server @e.
 * Context: the test's main thread, no proxy of @pl in use.
 */
void ntu_plane_stop(struct ntu_echo *e, struct tcp_plane *pl);

/**
 * ntu_proxy_open() - a proxy named "t" on @pl from 127.0.0.1 (a free
 * port, in *@port) to 127.0.0.1:@up_port.
 * Context: a test thread; tcp_proxy_open()'s locks.
 * Return: the proxy (a failure prints tcp.h's message and ends the test).
 */
struct tcp_proxy *ntu_proxy_open(struct tcp_plane *pl, uint16_t up_port, uint16_t *port);

/**
 * ntu_set_toxics() - replace @p's toxics with @t[0..@n).
 * Context: a test thread; tcp_proxy_set_toxics()'s locks.
 * Return: nothing (a refusal prints tcp.h's message and ends the test).
 */
void ntu_set_toxics(struct tcp_proxy *p, const struct toxic *t, unsigned n);

/**
 * ntu_client() - a TCP socket connected to 127.0.0.1:@port, TCP_NODELAY,
 * a 20 s receive timeout, O_NONBLOCK when @nonblock.
 * Context: any test thread; no lock.
 * Return: the descriptor.
 */
int ntu_client(uint16_t port, int nonblock);

/**
 * ntu_send_pat() - send @len pattern bytes from stream offset @off
 * (blocking).
 * Context: any test thread; no lock.
 * Return: nothing (a failed send ends the test).
 */
void ntu_send_pat(int fd, uint64_t off, size_t len);

/**
 * ntu_recv_pat() - receive exactly @len bytes and check they are the
 * pattern from stream offset @off.
 * Context: any test thread; no lock.
 * Return: nothing (EOF, an error or a wrong byte ends the test).
 */
void ntu_recv_pat(int fd, uint64_t off, size_t len);

/**
 * ntu_drain() - read until EOF or an error.
 * Context: any test thread; no lock.
 * Return: the bytes read; *@err the errno that ended it (0: EOF).
 */
size_t ntu_drain(int fd, int *err);

/**
 * ntu_check_ledger() - each direction's bytes_in == bytes_out + cut +
 * dropped + held (the figures are printed when not).
 * Context: any test thread; no lock.
 * Return: nothing (an unbalanced ledger ends the test).
 */
void ntu_check_ledger(const struct tcp_proxy_stats *s);

/**
 * ntu_wait_idle() - wait (at most 10 s) until @p has no connection and
 * holds nothing, then check its final ledger.
 * Context: a test thread; tcp_proxy_stats()'s locks.
 * Return: nothing; *@s the last stats read.
 */
void ntu_wait_idle(struct tcp_proxy *p, struct tcp_proxy_stats *s);

/**
 * ntu_wait_held() - wait (at most 5 s) until @p's direction @d holds
 * exactly @bytes, and check it does.
 * Context: a test thread; tcp_proxy_stats()'s locks.
 * Return: nothing (still another figure after 5 s ends the test); *@s
 * the last stats read.
 */
void ntu_wait_held(struct tcp_proxy *p, enum toxic_stream d, uint64_t bytes,
		   struct tcp_proxy_stats *s);

#endif
