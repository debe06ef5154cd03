/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's TCP listeners: a proxy's group of listening sockets
 * (one a worker, SO_REUSEPORT), the check that a new proxy's address
 * does not take a port this plane already holds, and the accepts on a
 * worker, with the pause of a listener out of descriptors and its return
 * on a retry round.  The plane, its workers and its commands are
 * tools/netem/tcp/tcp.c (whose essay explains the group and the pause); the
 * connections tools/netem/tcp/conn.c.
 *
 * Why the first socket binds without SO_REUSEPORT: a plain bind fails on
 * a port any other socket holds, with SO_REUSEPORT or not (this plane's,
 * another process's), and port 0 gets a port no one holds; the other
 * workers' sockets then join the group on the address it bound.
 * SO_REUSEPORT would also let this process bind one address twice, where
 * toxiproxy's listen fails: tcp_listen_collide() refuses that first.
 *
 * Threads: tcp_listen_one() and tcp_listen_collide() run on the control
 * thread (tcp_proxy_open(), under the plane's lock for the collide walk);
 * tcp_listen_accept() and tcp_listen_resume() on the slot's worker, with
 * no lock: a worker's slots and paused list are its own.
 *
 * Costs: an accept round takes at most ACCEPT_BATCH connections, so one
 * busy listener cannot hold its worker; a paused listener costs nothing
 * until the retry round, one epoll_ctl each.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pinwheel/runtime.h>

#include "tcp_priv.h"

static uint16_t sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return 0;
}

static int sa_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	const struct sockaddr_in6 *a = (const void *)sa;
	return IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr);
}

int tcp_listen_collide(const struct sockaddr *a, const struct sockaddr *b)
{
	if (sa_port(a) == 0 || sa_port(a) != sa_port(b))
		return 0;
	if (sa_any(a) || sa_any(b))
		return 1;
	if (a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, 16);
}

int tcp_listen_one(const struct sockaddr *sa, socklen_t len, int first)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (!first && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
	    bind(fd, sa, len) < 0 ||
	    (first && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
	    listen(fd, 4096) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

void tcp_listen_accept(struct slot *sl)
{
	uint64_t now = pw_now_ns(sl->w->pl->rt);
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(sl->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE) && !sl->paused) {
				/* out of descriptors: the listener leaves the
				 * epoll set (it is level-triggered) and comes
				 * back with a retry round; it stays on the
				 * worker's paused list until it is back */
				ctr_add(&sl->st.fd_exhausted, 1);
				epoll_ctl(sl->w->ep, EPOLL_CTL_DEL, sl->lfd, NULL);
				sl->paused = 1;
				sl->pause_next = sl->w->paused;
				sl->w->paused = sl;
			}
			return;
		}
		tcp_conn_new(sl, fd, now);
	}
}

void tcp_listen_resume(struct worker *w)
{
	struct slot **pp = &w->paused;
	while (*pp) {
		struct slot *sl = *pp;
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = &sl->tag };
		if (epoll_ctl(w->ep, EPOLL_CTL_ADD, sl->lfd, &e) == 0) {
			sl->paused = 0;
			*pp = sl->pause_next;
		} else {
			pp = &sl->pause_next;
		}
	}
}
