/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's TCP data path: the plane (a runtime, its workers and
 * their loops), the control thread's commands, the proxies (listeners,
 * upstream, toxic lists, statistics).  The connections are
 * tools/netem/tcp/conn.c, the listening sockets and accepts
 * tools/netem/tcp/listen.c, the toxics between their sockets
 * tools/netem/tcp/stream.c, the contract tools/netem/tcp/tcp.h, the structures
 * the files share tools/netem/tcp/tcp_priv.h.
 *
 * Workers
 * -------
 * tcp_plane_create() makes a pinwheel runtime of its own with one CPU per
 * worker (by default one worker per CPU this process may run on:
 * sched_getaffinity, not the online count; worker i pinned to the i-th of
 * those when there are enough) and starts the workers; worker i serves
 * the runtime's CPU i (pw_cpu_enter) with
 * its own loop, as pinwheel-netem's UDP workers do, because it sleeps on
 * sockets and timers at once: epoll_pwait2() with a nanosecond timeout to
 * pw_next_expiry_ns() (epoll_sleep(), tools/common/epoll_sleep.h: the
 * kernel's poll slack, 0.1% of a timeout, taken off it; how late a sleep
 * until the next event ended goes to the runtime's wake-up lateness,
 * pw_wake_lateness_note(), the bounded polls not counted),
 * then the ready sockets, the control thread's
 * commands, pw_run_timers(), pw_run_work(), and the connections that have
 * work (the run list).  A connection's turn is bounded (TURN_WRITES
 * writes or TURN_BYTES bytes, conn.c; a stage's pieces by STREAM_QMAX,
 * stream.c); one with more to do goes to the back of the run list, so a
 * 1-byte slicer draining its buffer shares its worker.  Every delay is a
 * pinned hrtimer a worker arms from
 * its own thread, so it sits on the worker's CPU and the worker's epoll
 * timeout covers it; a timer's callback only puts its connection on the
 * run list, so no connection is changed, or freed, inside a callback.  A
 * worker never sleeps longer than 100 ms (1 ms while a direction waits
 * for memory, max_bytes or a descriptor).  The retry round (retry_round())
 * gives a turn to the connections on the worker's stalled list only (a
 * direction stopped by max_bytes or a failed allocation, a toxic switch
 * waiting for memory) and puts its paused listeners back: no other
 * connection and no lock, so a stalled proxy costs the others nothing.
 *
 * Proxies
 * -------
 * A proxy has one SO_REUSEPORT listening socket per worker, each in its
 * worker's epoll set: the kernel spreads the connections over the
 * workers, and a connection stays on the worker that accepted it.  The
 * first socket binds *without* SO_REUSEPORT and sets it after its bind:
 * so the bind fails (EADDRINUSE) on a port any other socket holds, this
 * process's or another's, with SO_REUSEPORT or not, and port 0 resolves
 * to a port no one holds; the others then bind the port it got with
 * SO_REUSEPORT (the kernel checks a bound socket's flag when another
 * binds).  A process of the same user that sets SO_REUSEPORT after the
 * group is bound can still join it: SO_REUSEPORT's own rule.
 * tcp_proxy_open() also refuses a port another proxy of the plane holds
 * (a clearer message).  Out of descriptors (EMFILE, ENFILE), a listener
 * leaves its epoll set (counted fd_exhausted) and goes on its worker's
 * paused list, which the retry round tries while it is not empty (so a
 * proxy not yet on the plane's list is resumed too); tcp_raise_nofile()
 * is for the server to raise the soft limit at start.
 *
 * Control
 * -------
 * tcp_proxy_* run on one control thread at a time.  They reach a worker
 * through its command queue (a mutex-protected list and an eventfd in its
 * epoll set) and wait until every worker has done the command: a listener
 * to add, a toxic list to switch to (stream_switch() on every connection
 * of the proxy, through tcp_slot_set_toxics()), a proxy to close.  A
 * switch is all or nothing: the control thread makes every worker's
 * lists (struct toxic_lists) and the commands before it sends any, so no
 * worker can fail to take the new list; a connection whose own switch
 * finds no memory keeps its old list on the stalled list until a retry
 * round switches it (its old tc devices stay meanwhile).  The
 * upstream address is the only state both sides touch directly (under the
 * proxy's mutex, read at each accept).  netem's loss, duplication,
 * corruption and reordering in a tc toxic are refused (-EINVAL: a byte
 * stream cannot carry them).
 *
 * tc toxics
 * ---------
 * A tc toxic is a device of the plane's runtime per proxy, stream and
 * toxic (tools/netem/tc_toxic.c), made by tcp_proxy_set_toxics() on the
 * control thread before the switch (tc's refusal is the caller's -EINVAL
 * with tc's message, and nothing changes), handed to the workers with
 * the list (cmd.devs).  A toxic whose name, stream and words stay keeps
 * its device (and its qdisc's state); one removed or changed retires its
 * device once every worker switched away from it: the pieces in it drain
 * through (the streams let the bytes move on at once, see stream.c), and
 * the control thread destroys it at a later call (set_toxics, stats)
 * once it is empty; a proxy's close destroys them all after its
 * connections closed (their bytes counted dropped), the packets coming
 * back to the workers only to drop the connections' references.  After a
 * switch that failed for some connection (no memory) the old devices
 * stay until the proxy closes.  A worker drains what devices gave back
 * (tc_toxic_drain) after its timers and work, and never sleeps while its
 * return stack or its NET_TX work is not empty.
 *
 * Statistics: each worker writes its own copy of a proxy's counters
 * (relaxed atomic stores of values only it writes) and readers sum the
 * copies with relaxed loads: each counter read is one the worker wrote
 * (no torn value), but the loads are not ordered against each other or
 * the worker's stores, so a reader may see a later bytes_out with an
 * earlier bytes_in: the ledger bytes_in == bytes_out + bytes_cut +
 * bytes_dropped + held holds only when the proxy is quiescent.  held
 * counts bytes, held_mem what they cost (chunk_mem: the bound dir_bytes
 * and max_bytes apply to).
 *
 * Chunks: the plane's pktpool (pl->bufs, tools/common/pktpool.h: bare
 * buffers only, a slot per worker, slot i worker i's) gives every chunk;
 * a connection's chunks are made and given back on its worker only (its
 * close too: a proxy closed or deleted from the control thread closes
 * its connections by a command to their workers), so each worker's
 * lists are its own, with no atomic.  A worker keeps up to BUF_CACHE
 * bytes of freed chunks for reuse; tcp_plane_destroy() frees them after
 * the workers stopped.
 *
 * Costs: a command costs each worker one wake-up; a switch walks the
 * proxy's connections on each worker.  Memory: a connection is its struct
 * and what its directions hold (at most 2 x dir_bytes of chunk memory,
 * and STREAM_QMAX piece headers a slicer or bandwidth stage), and each
 * worker up to BUF_CACHE of free chunks; with
 * max_bytes, all directions together hold at most max_bytes plus one
 * reserve (pl->reserve) for each direction that read under it, and one
 * read a worker past a bound another worker just reached.
 *
 * Locks, outermost first (a lock is only taken with those above it held):
 *  1. the registry's mutex (tools/netem/api/proxy.c): held by the control
 *     thread across every tcp_* call it makes; never taken here;
 *  2. the plane's proxy list mutex (pl->lock): the control thread, to add,
 *     find or remove a proxy; workers never take it;
 *  3. a worker's command queue mutex (qlock): the control thread to queue,
 *     the worker to take the queue;
 *  4. a command's waiter mutex: the worker to count itself done, the
 *     control thread to wait;
 *  5. a proxy's upstream mutex (ulock): the control thread to change the
 *     address, a worker at each connect;
 *  6. the layer's (pw_tc and a tc device's queues), inside tc_toxic.c, with
 *     a device's destroy (control thread) waiting for a queue run.
 * In this file none of 2-6 is held while another is taken (each is taken
 * and released on its own, under 1 only); a worker holds none of them
 * while it services connections.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/net.h>
#include <pinwheel/runtime.h>
#include <pinwheel/stats.h>
#include <pinwheel/timer.h>
#include <pinwheel/worker.h>

#include "epoll_sleep.h"
#include "tcp_priv.h"

/* ------------------------------------------------------------ helpers */

static void addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)sa;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)sa;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		snprintf(buf, len, "(address family %d)", sa->sa_family);
	}
}

static void kick(struct worker *w)
{
	uint64_t one = 1;
	if (write(w->kick_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the worker is awake anyway */
	}
}

/* ------------------------------------------------------------ commands */

static void run_commands(struct worker *w)
{
	if (!__atomic_load_n(&w->qpending, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&w->qlock);
	struct cmd *list = w->qhead;
	w->qhead = w->qtail = NULL;
	__atomic_store_n(&w->qpending, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&w->qlock);
	while (list) {
		struct cmd *cm = list;
		list = cm->next;
		int err = 0;
		switch (cm->op) {
		case CMD_OPEN: {
			struct epoll_event ev = { .events = EPOLLIN };
			ev.data.ptr = &cm->sl->tag;
			if (epoll_ctl(w->ep, EPOLL_CTL_ADD, cm->sl->lfd, &ev) < 0)
				err = -errno;
			break;
		}
		case CMD_TOXICS:
			tcp_slot_set_toxics(cm->sl, cm->tl, &err); /* 1: pending */
			break;
		case CMD_CLOSE:
			tcp_slot_close(cm->sl);
			break;
		}
		struct waiter *wt = cm->wt;
		pthread_mutex_lock(&wt->m);
		if (err && !wt->err)
			wt->err = err;
		if (--wt->left == 0)
			pthread_cond_broadcast(&wt->cv);
		pthread_mutex_unlock(&wt->m); /* @cm may be gone from here on */
	}
}

/* Send @op for @p to every worker and wait for all.  Control thread.
 * Return: 0 or the first worker's error. */
static int broadcast(struct tcp_proxy *p, enum cmd_op op, struct toxic_lists *tl)
{
	struct tcp_plane *pl = p->pl;
	struct waiter wt = { .left = pl->nw };
	pthread_mutex_init(&wt.m, NULL);
	pthread_cond_init(&wt.cv, NULL);
	struct cmd *cm = calloc(pl->nw, sizeof(*cm));
	if (!cm)
		return -ENOMEM;
	for (unsigned i = 0; i < pl->nw; i++) {
		struct worker *w = &pl->w[i];
		cm[i] = (struct cmd){
			.op = op, .sl = &p->slot[i], .tl = tl ? &tl[i] : NULL, .wt = &wt
		};
		pthread_mutex_lock(&w->qlock);
		if (w->qtail)
			w->qtail->next = &cm[i];
		else
			w->qhead = &cm[i];
		w->qtail = &cm[i];
		__atomic_store_n(&w->qpending, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&w->qlock);
		kick(w);
	}
	pthread_mutex_lock(&wt.m);
	while (wt.left)
		pthread_cond_wait(&wt.cv, &wt.m);
	pthread_mutex_unlock(&wt.m);
	pthread_mutex_destroy(&wt.m);
	pthread_cond_destroy(&wt.cv);
	free(cm);
	return wt.err;
}

/* ------------------------------------------------------------ workers */

static void handle_event(struct worker *w, struct epoll_event *ev)
{
	struct tag *tag = ev->data.ptr;
	uint32_t e = ev->events;
	switch (tag->kind) {
	case TAG_KICK: {
		uint64_t v;
		if (read(w->kick_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: nothing */
		}
		break;
	}
	case TAG_LISTEN:
		tcp_listen_accept(pw_container_of(tag, struct slot, tag));
		break;
	case TAG_CLIENT:
	case TAG_UPSTREAM: {
		struct conn *c = tag->kind == TAG_CLIENT ? pw_container_of(tag, struct conn, ctag)
							 : pw_container_of(tag, struct conn, utag);
		/* the client's socket is upstream's source and downstream's sink */
		int rd = tag->kind == TAG_CLIENT ? TOXIC_UPSTREAM : TOXIC_DOWNSTREAM;
		if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			c->d[rd].can_read = 1;
		if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR))
			c->d[!rd].can_write = 1;
		run_add(w, c);
		break;
	}
	}
}

/* The retry round (every RETRY_NS while there is something to retry):
 * the stalled connections (max_bytes, memory, a toxic switch that found
 * no memory) get a turn, the paused listeners go back into the epoll
 * set.  Only those: no other connection, and no lock.  Worker. */
static void retry_round(struct worker *w)
{
	w->retry_at = pw_now_ns(w->pl->rt) + RETRY_NS;
	struct conn *list = w->stalled;
	w->stalled = NULL;
	while (list) {
		struct conn *c = list;
		list = c->stall_next;
		c->on_stall = 0;
		if (!c->dead)
			run_add(w, c);
		else if (!conn_busy(c))
			free(c);
	}
	tcp_listen_resume(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tcp_plane *pl = w->pl;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
	}
	if (pw_cpu_enter(pl->rt, w->id)) {
		fprintf(stderr, "pinwheel-netem: TCP worker %u cannot serve its CPU\n", w->id);
		abort();
	}
	tc_toxic_thread(w);
	struct epoll_event ev[64];
	struct epoll_slack slack; /* the poll slack, off the deadline */
	epoll_slack_init(&slack);
	while (!__atomic_load_n(&pl->stop, __ATOMIC_ACQUIRE)) {
		uint64_t next = pw_next_expiry_ns(pl->rt, w->id);
		uint64_t now = pw_now_ns(pl->rt);
		uint64_t wait = w->run || w->busy || tc_toxic_pending(w) || next <= now ? 0 : next - now;
		uint64_t until = wait; /* the sleep's bound, if not the next event's */
		if (until > MAX_SLEEP_NS)
			until = MAX_SLEEP_NS;
		if ((w->stalled || w->paused) && until > RETRY_NS)
			until = RETRY_NS;
		int n = epoll_sleep(w->ep, ev, 64, until, &slack);
		/* a sleep until the next event (not a bound): how late it ended
		 * goes to the -runtime-metrics histogram */
		if (wait && until == wait)
			pw_wake_lateness_note(pl->rt, next, pw_now_ns(pl->rt));
		for (int i = 0; i < n; i++)
			handle_event(w, &ev[i]);
		run_commands(w);
		pw_run_timers(pl->rt, w->id);
		w->busy = pw_run_work(pl->rt, w->id) > 0;
		tc_toxic_drain(w, 0);
		if ((w->stalled || w->paused) && pw_now_ns(pl->rt) >= w->retry_at)
			retry_round(w);
		struct conn *list = w->run;
		w->run = NULL;
		while (list) {
			struct conn *c = list;
			list = c->run_next;
			c->on_run = 0;
			if (!c->dead) {
				c->in_service = 1;
				tcp_conn_service(c);
				c->in_service = 0;
			}
			if (c->dead && !conn_busy(c))
				free(c);
		}
	}
	pw_cpu_exit(pl->rt);
	return NULL;
}

/* ------------------------------------------------------------ the plane */

int tcp_plane_create(const struct tcp_plane_config *cfg, struct tcp_plane **out, char *err,
		     size_t errlen)
{
	struct tcp_plane *pl = calloc(1, sizeof(*pl));
	if (!pl) {
		snprintf(err, errlen, "no memory for the TCP plane");
		return -ENOMEM;
	}
	/* the CPUs this process may run on (a cpuset or taskset may allow
	 * fewer than are online, and not the first ones) */
	int cpus[256];
	unsigned ncpu = 0;
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		for (int i = 0; i < CPU_SETSIZE && ncpu < 256; i++)
			if (CPU_ISSET(i, &allowed))
				cpus[ncpu++] = i;
	unsigned nw = cfg ? cfg->workers : 0;
	if (!nw)
		nw = ncpu ? ncpu : 1;
	if (nw > 256) {
		free(pl);
		snprintf(err, errlen, "%u TCP workers: at most 256", nw);
		return -EINVAL;
	}
	pl->nw = nw;
	pl->dir_bytes = cfg && cfg->dir_bytes ? cfg->dir_bytes : TCP_DEF_DIR_BYTES;
	pl->max_bytes = cfg ? cfg->max_bytes : 0;
	/* with a budget, held memory is counted in it beside the tc state
	 * that charges it (netmem.c), so max_bytes bounds both together */
	pl->held = &pl->held_total;
	if (cfg && cfg->budget) {
		pl->held = &cfg->budget->used;
		pl->max_bytes = cfg->budget->limit;
	}
	pl->reserve = pl->dir_bytes / 4 < READ_RESERVE ? pl->dir_bytes / 4 : READ_RESERVE;
	pl->half_close = cfg ? cfg->half_close : 0;
	pl->sched_rt = cfg ? cfg->sched_rt : NULL;
	if (cfg && cfg->has_seed)
		pl->seed = cfg->seed; /* toxiproxy's -seed */
	else if (getrandom(&pl->seed, sizeof(pl->seed), 0) != sizeof(pl->seed))
		pl->seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	pthread_mutex_init(&pl->lock, NULL);
	const struct pktpool_cfg bc = { .nslots = nw, .pkt_size = sizeof(struct ppkt),
					.bare_cache = BUF_CACHE };
	int r = pktpool_init(&pl->bufs, &bc);
	if (r) {
		pthread_mutex_destroy(&pl->lock);
		free(pl);
		snprintf(err, errlen, "no memory for the TCP plane's chunks");
		return r;
	}
	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = nw;
	r = pw_runtime_create(&pc, &pl->rt);
	if (!r && cfg && cfg->budget && (r = pw_net_set_budget(pl->rt, cfg->budget)))
		pw_runtime_destroy(pl->rt);
	if (!r && cfg && cfg->budget)
		tc_toxic_set_budget(cfg->budget);
	if (r) {
		pktpool_destroy(&pl->bufs);
		pthread_mutex_destroy(&pl->lock);
		free(pl);
		snprintf(err, errlen, "cannot make the TCP plane's runtime: %s", strerror(-r));
		return r;
	}
	pl->w = calloc(nw, sizeof(*pl->w));
	if (!pl->w) {
		r = -ENOMEM;
		snprintf(err, errlen, "no memory for %u TCP workers", nw);
		goto fail;
	}
	for (unsigned i = 0; i < nw; i++) {
		struct worker *w = &pl->w[i];
		w->pl = pl;
		w->id = i;
		w->cpu = nw <= ncpu ? cpus[i] : -1; /* pinned when each has its own */
		w->ep = w->kick_fd = -1;
		pthread_mutex_init(&w->qlock, NULL);
	}
	for (unsigned i = 0; i < nw; i++) {
		struct worker *w = &pl->w[i];
		w->buf = malloc(READ_MAX);
		w->ep = epoll_create1(EPOLL_CLOEXEC);
		w->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (!w->buf || w->ep < 0 || w->kick_fd < 0) {
			r = !w->buf ? -ENOMEM : -errno;
			snprintf(err, errlen, "cannot set up TCP worker %u: %s", i, strerror(-r));
			goto fail;
		}
		w->kick_tag.kind = TAG_KICK;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &w->kick_tag };
		if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->kick_fd, &ev) < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot set up TCP worker %u: %s", i, strerror(-r));
			goto fail;
		}
	}
	for (unsigned i = 0; i < nw; i++) {
		r = -pthread_create(&pl->w[i].th, NULL, worker_main, &pl->w[i]);
		if (r) {
			snprintf(err, errlen, "cannot start TCP worker %u: %s", i, strerror(-r));
			goto fail;
		}
		pl->w[i].started = 1;
	}
	*out = pl;
	return 0;
fail:
	tcp_plane_destroy(pl);
	return r;
}

struct pw_runtime *tcp_plane_runtime(const struct tcp_plane *pl)
{
	return pl->rt;
}

void tcp_plane_destroy(struct tcp_plane *pl)
{
	if (!pl)
		return;
	for (;;) {
		pthread_mutex_lock(&pl->lock);
		struct tcp_proxy *p = pl->proxies;
		pthread_mutex_unlock(&pl->lock);
		if (!p)
			break;
		tcp_proxy_close(p);
	}
	__atomic_store_n(&pl->stop, 1, __ATOMIC_RELEASE);
	if (pl->w) {
		for (unsigned i = 0; i < pl->nw; i++)
			if (pl->w[i].started)
				kick(&pl->w[i]);
		for (unsigned i = 0; i < pl->nw; i++) {
			struct worker *w = &pl->w[i];
			if (w->started)
				pthread_join(w->th, NULL);
		}
		for (unsigned i = 0; i < pl->nw; i++) {
			struct worker *w = &pl->w[i];
			/* pieces the devices gave back late: the connections' last
			 * references (every device is gone: the proxies closed) */
			tc_toxic_drain(w, 1);
			/* connections freed late (dead on the run or stalled
			 * list; one may be on both) */
			while (w->run) {
				struct conn *c = w->run;
				w->run = c->run_next;
				c->on_run = 0;
				if (!conn_busy(c))
					free(c);
			}
			while (w->stalled) {
				struct conn *c = w->stalled;
				w->stalled = c->stall_next;
				c->on_stall = 0;
				if (!conn_busy(c))
					free(c);
			}
			if (w->ep >= 0)
				close(w->ep);
			if (w->kick_fd >= 0)
				close(w->kick_fd);
			free(w->buf);
			pthread_mutex_destroy(&w->qlock);
		}
		free(pl->w);
	}
	pw_runtime_destroy(pl->rt);
	/* every connection closed on its worker, so every chunk is back on
	 * its worker's lists (or freed): the lists go */
	pktpool_destroy(&pl->bufs);
	pthread_mutex_destroy(&pl->lock);
	free(pl);
}

/* ------------------------------------------------------------ proxies */

int tcp_proxy_open(struct tcp_plane *pl, const char *name, const struct sockaddr *listen,
		   socklen_t listen_len, const struct sockaddr *upstream, socklen_t upstream_len,
		   struct tcp_proxy **out, struct sockaddr_storage *bound, socklen_t *bound_len,
		   char *err, size_t errlen)
{
	char as[80];
	if (!upstream)
		upstream_len = 0;
	if (!pl || !listen || !out ||
	    (listen->sa_family != AF_INET && listen->sa_family != AF_INET6) ||
	    (upstream_len && upstream->sa_family != AF_INET && upstream->sa_family != AF_INET6) ||
	    listen_len > sizeof(struct sockaddr_storage) ||
	    upstream_len > sizeof(struct sockaddr_storage)) {
		snprintf(err, errlen, "proxy %s: listen and upstream must be IPv4 or IPv6 addresses",
			 name ? name : "?");
		return -EINVAL;
	}
	addr_str(listen, as, sizeof(as));
	pthread_mutex_lock(&pl->lock);
	for (struct tcp_proxy *q = pl->proxies; q; q = q->next)
		if (tcp_listen_collide(listen, (const struct sockaddr *)&q->bound)) {
			pthread_mutex_unlock(&pl->lock);
			snprintf(err, errlen, "cannot listen on %s: address in use (proxy %s)", as,
				 q->name);
			return -EADDRINUSE;
		}
	pthread_mutex_unlock(&pl->lock);

	struct tcp_proxy *p = calloc(1, sizeof(*p) + pl->nw * sizeof(struct slot));
	if (!p) {
		snprintf(err, errlen, "no memory for proxy %s", name ? name : "?");
		return -ENOMEM;
	}
	p->pl = pl;
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
	pthread_mutex_init(&p->ulock, NULL);
	if (upstream_len)
		memcpy(&p->up, upstream, upstream_len);
	p->uplen = upstream_len;
	for (unsigned i = 0; i < pl->nw; i++) {
		p->slot[i].lfd = -1;
		p->slot[i].tag.kind = TAG_LISTEN;
		p->slot[i].p = p;
		p->slot[i].w = &pl->w[i];
	}
	int r = 0;
	for (unsigned i = 0; i < pl->nw; i++) {
		const struct sockaddr *sa = i ? (const struct sockaddr *)&p->bound : listen;
		socklen_t len = i ? p->boundlen : listen_len;
		int fd = tcp_listen_one(sa, len, i == 0);
		if (fd < 0) {
			r = fd;
			snprintf(err, errlen, "cannot listen on %s: %s", as, strerror(-r));
			goto fail;
		}
		p->slot[i].lfd = fd;
		if (!i) {
			p->boundlen = sizeof(p->bound);
			if (getsockname(fd, (struct sockaddr *)&p->bound, &p->boundlen) < 0) {
				r = -errno;
				snprintf(err, errlen, "cannot listen on %s: %s", as, strerror(-r));
				goto fail;
			}
		}
	}
	r = broadcast(p, CMD_OPEN, NULL);
	if (r) {
		snprintf(err, errlen, "cannot listen on %s: %s", as, strerror(-r));
		broadcast(p, CMD_CLOSE, NULL);
		goto fail;
	}
	pthread_mutex_lock(&pl->lock);
	p->next = pl->proxies;
	pl->proxies = p;
	pthread_mutex_unlock(&pl->lock);
	if (bound)
		memcpy(bound, &p->bound, p->boundlen);
	if (bound_len)
		*bound_len = p->boundlen;
	*out = p;
	return 0;
fail:
	for (unsigned i = 0; i < pl->nw; i++)
		if (p->slot[i].lfd >= 0)
			close(p->slot[i].lfd);
	pthread_mutex_destroy(&p->ulock);
	free(p);
	return r;
}

int tcp_proxy_set_upstream(struct tcp_proxy *p, const struct sockaddr *upstream,
			   socklen_t upstream_len)
{
	if (!upstream)
		upstream_len = 0;
	if (!p || upstream_len > sizeof(struct sockaddr_storage) ||
	    (upstream_len && upstream->sa_family != AF_INET && upstream->sa_family != AF_INET6))
		return -EINVAL;
	pthread_mutex_lock(&p->ulock);
	memset(&p->up, 0, sizeof(p->up));
	if (upstream_len)
		memcpy(&p->up, upstream, upstream_len);
	p->uplen = upstream_len;
	pthread_mutex_unlock(&p->ulock);
	return 0;
}


static int check_toxic(const struct toxic *t, char *err, size_t errlen)
{
	if ((unsigned)t->type >= TOXIC_NTYPES || (unsigned)t->stream >= TOXIC_NSTREAMS) {
		snprintf(err, errlen, "toxic %s: unknown type or stream", t->name);
		return -EINVAL;
	}
	if (!(t->toxicity >= 0.0 && t->toxicity <= 1.0)) {
		snprintf(err, errlen, "toxic %s: toxicity %g is not within 0..1", t->name, t->toxicity);
		return -EINVAL;
	}
	/* toxic.h's bounds, whoever the caller: past them the stages'
	 * arithmetic (ms to ns, KB/s to bytes) would wrap */
	const int64_t MS = TOXIC_MAX_MS, B = TOXIC_MAX_BYTES;
	const char *bad = NULL;
	int64_t v = 0, hi = 0;
#define RANGE(val, max, what)                                  \
	do {                                                   \
		if (!bad && ((val) < 0 || (val) > (max))) {    \
			bad = (what);                          \
			v = (val);                             \
			hi = (max);                            \
		}                                              \
	} while (0)
	switch (t->type) {
	case TOXIC_LATENCY:
		RANGE(t->a.latency.latency_ms, MS, "latency");
		RANGE(t->a.latency.jitter_ms, MS, "jitter");
		break;
	case TOXIC_BANDWIDTH:
		RANGE(t->a.bandwidth.rate_kbps, TOXIC_MAX_RATE_KBPS, "rate");
		break;
	case TOXIC_SLOW_CLOSE:
		RANGE(t->a.slow_close.delay_ms, MS, "delay");
		break;
	case TOXIC_TIMEOUT:
	case TOXIC_RESET_PEER:
		RANGE(t->a.timeout.timeout_ms, MS, "timeout");
		break;
	case TOXIC_SLICER:
		RANGE(t->a.slicer.average_size, B, "average_size");
		RANGE(t->a.slicer.size_variation, B, "size_variation");
		RANGE(t->a.slicer.delay_us, MS * 1000, "delay");
		break;
	case TOXIC_LIMIT_DATA:
		RANGE(t->a.limit_data.bytes, B, "bytes");
		break;
#undef RANGE
	case TOXIC_TC:
		/* the words, and what a byte stream cannot carry, on the parsed
		 * configuration: tc_dev_create() checks them (tc_toxic_check()) */
		return 0;
	default:
		break;
	}
	if (bad) {
		snprintf(err, errlen, "toxic %s: %s %lld is not within 0..%lld", t->name, bad,
			 (long long)v, (long long)hi);
		return -EINVAL;
	}
	return 0;
}

/* Destroy @p's retired tc devices that are empty.  A device is retired
 * after every worker switched away from it, so none sends on it again;
 * the layer's destroy waits for a queue run still inside it.  Control
 * thread. */
static void tc_reap(struct tcp_proxy *p, int all)
{
	struct tc_dev **pp = &p->tcretired;
	while (*pp) {
		struct tc_dev *d = *pp;
		if (all || (!d->pinned && !__atomic_load_n(&d->inflight, __ATOMIC_ACQUIRE))) {
			*pp = d->next;
			tc_dev_destroy(d);
		} else {
			pp = &d->next;
		}
	}
}

static void lists_free(struct toxic_lists *tl, unsigned nw)
{
	if (!tl)
		return;
	for (unsigned w = 0; w < nw; w++) {
		free(tl[w].tox);
		for (int s = 0; s < TOXIC_NSTREAMS; s++) {
			free(tl[w].per[s]);
			free(tl[w].tcper[s]);
		}
	}
	free(tl);
}

/* A worker's copy of the @n toxics @t, split by stream, with t[k]'s tc
 * device @devs[k].  Return: 0; -ENOMEM (lists_free() frees what was made). */
static int lists_make(struct toxic_lists *l, const struct toxic *t, void *const *devs, unsigned n)
{
	memset(l, 0, sizeof(*l));
	if (!n)
		return 0;
	l->tox = malloc(n * sizeof(*l->tox));
	for (int s = 0; s < TOXIC_NSTREAMS; s++) {
		l->per[s] = malloc(n * sizeof(*l->per[s]));
		l->tcper[s] = calloc(n, sizeof(*l->tcper[s]));
	}
	if (!l->tox || !l->per[0] || !l->per[1] || !l->tcper[0] || !l->tcper[1])
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		l->tox[i] = t[i];
		if (l->tox[i].type == TOXIC_TC)
			memset(&l->tox[i].a, 0, sizeof(l->tox[i].a));
		unsigned k = l->nper[l->tox[i].stream]++;
		l->per[l->tox[i].stream][k] = &l->tox[i];
		l->tcper[l->tox[i].stream][k] = devs ? devs[i] : NULL;
	}
	return 0;
}

int tcp_proxy_set_toxics(struct tcp_proxy *p, const struct toxic *t, unsigned n, char *err,
			 size_t errlen)
{
	if (!p || (n && !t)) {
		snprintf(err, errlen, "no proxy or no toxics");
		return -EINVAL;
	}
	for (unsigned i = 0; i < n; i++) {
		int r = check_toxic(&t[i], err, errlen);
		if (r)
			return r;
	}
	tc_reap(p, 0);
	/* each tc toxic's device: the one it has if its words did not
	 * change, else a new one (its words checked by tc here) */
	struct tc_dev **devs = n ? calloc(n, sizeof(*devs)) : NULL;
	if (n && !devs) {
		snprintf(err, errlen, "proxy %s: no memory for its toxics", p->name);
		return -ENOMEM;
	}
	struct tc_dev *keep = NULL, *made = NULL;
	int r = 0;
	for (unsigned i = 0; i < n && !r; i++) {
		if (t[i].type != TOXIC_TC)
			continue;
		for (struct tc_dev **pp = &p->tcdevs; *pp; pp = &(*pp)->next)
			if (tc_dev_matches(*pp, &t[i])) {
				devs[i] = *pp;
				*pp = devs[i]->next;
				devs[i]->next = keep;
				keep = devs[i];
				break;
			}
		if (devs[i])
			continue;
		r = tc_dev_create(p->pl, &t[i], p->pl->tc_serial++, &devs[i], err, errlen);
		if (!r) {
			devs[i]->next = made;
			made = devs[i];
		}
	}
	/* every worker's lists, whole, before any worker sees one */
	struct toxic_lists *tl = NULL;
	if (!r) {
		tl = calloc(p->pl->nw, sizeof(*tl));
		r = tl ? 0 : -ENOMEM;
		for (unsigned w = 0; !r && w < p->pl->nw; w++)
			r = lists_make(&tl[w], t, (void *const *)devs, n);
		if (r)
			snprintf(err, errlen, "proxy %s: no memory for its toxics", p->name);
	}
	if (!r) {
		r = broadcast(p, CMD_TOXICS, tl);
		if (r < 0)
			snprintf(err, errlen, "proxy %s: no memory for its toxics", p->name);
	}
	if (r < 0) {
		/* nothing changes: the kept ones go back, the new ones go */
		lists_free(tl, p->pl->nw);
		while (keep) {
			struct tc_dev *d = keep;
			keep = d->next;
			d->next = p->tcdevs;
			p->tcdevs = d;
		}
		while (made) {
			struct tc_dev *d = made;
			made = d->next;
			tc_dev_destroy(d);
		}
		free(devs);
		return r;
	}
	lists_free(tl, p->pl->nw); /* the workers took their contents */
	/* what is left of the old list is retired: destroyed once empty; while
	 * some connection waits for memory to switch (r 1) it may still use
	 * it, so only with the proxy */
	while (p->tcdevs) {
		struct tc_dev *d = p->tcdevs;
		p->tcdevs = d->next;
		d->pinned |= r != 0;
		d->next = p->tcretired;
		p->tcretired = d;
	}
	for (struct tc_dev **l = &keep; *l;) {
		struct tc_dev *d = *l;
		*l = d->next;
		d->next = p->tcdevs;
		p->tcdevs = d;
	}
	for (struct tc_dev **l = &made; *l;) {
		struct tc_dev *d = *l;
		*l = d->next;
		d->next = p->tcdevs;
		p->tcdevs = d;
	}
	free(devs);
	tc_reap(p, 0);
	return 0;
}

void tcp_proxy_close(struct tcp_proxy *p)
{
	tcp_proxy_close_stats(p, NULL);
}

void tcp_proxy_close_stats(struct tcp_proxy *p, struct tcp_proxy_stats *final)
{
	if (!p)
		return;
	struct tcp_plane *pl = p->pl;
	pthread_mutex_lock(&pl->lock);
	for (struct tcp_proxy **pp = &pl->proxies; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&pl->lock);
	while (broadcast(p, CMD_CLOSE, NULL) == -ENOMEM) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL); /* the command array: retry */
	}
	/* its connections are closed (what their pieces in the devices held
	 * counted dropped): the devices go, their packets back to the workers,
	 * which free the connections with the last */
	while (p->tcdevs) {
		struct tc_dev *d = p->tcdevs;
		p->tcdevs = d->next;
		tc_dev_destroy(d);
	}
	tc_reap(p, 1);
	if (final)
		tcp_proxy_stats(p, final);
	pthread_mutex_destroy(&p->ulock);
	free(p);
}

void tcp_proxy_stats(struct tcp_proxy *p, struct tcp_proxy_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (!p)
		return;
	if (p->tcretired)
		tc_reap(p, 0);
	for (unsigned i = 0; i < p->pl->nw; i++) {
		const struct tcp_proxy_stats *w = &p->slot[i].st;
		/* relaxed loads: each value is one the worker wrote, but not
		 * one instant (the ledger balances only when quiescent) */
		for (int d = 0; d < TOXIC_NSTREAMS; d++) {
			const struct tcp_dir_stats *a = &w->dir[d];
			struct tcp_dir_stats *b = &s->dir[d];
			b->bytes_out += ctr_get(&a->bytes_out);
			b->bytes_cut += ctr_get(&a->bytes_cut);
			b->bytes_dropped += ctr_get(&a->bytes_dropped);
			b->held += ctr_get(&a->held);
			b->held_mem += ctr_get(&a->held_mem);
			b->bytes_in += ctr_get(&a->bytes_in);
			b->chunks_in += ctr_get(&a->chunks_in);
			b->chunks_out += ctr_get(&a->chunks_out);
			uint64_t dc = __atomic_load_n(&a->delay_count, __ATOMIC_ACQUIRE);
			uint64_t mn = ctr_get(&a->delay_min_ns);
			if (dc && (!b->delay_count || mn < b->delay_min_ns))
				b->delay_min_ns = mn;
			b->delay_count += dc;
			b->delay_sum_ns += ctr_get(&a->delay_sum_ns);
			for (unsigned k = 0; k < TCP_DELAY_BUCKETS; k++)
				b->delay_hist[k] += ctr_get(&a->delay_hist[k]);
			uint64_t m = ctr_get(&a->delay_max_ns);
			if (m > b->delay_max_ns)
				b->delay_max_ns = m;
			b->stalls += ctr_get(&a->stalls);
			b->rate_ns += ctr_get(&a->rate_ns);
			b->rate_bytes += ctr_get(&a->rate_bytes);
		}
		s->accepted += ctr_get(&w->accepted);
		s->active += ctr_get(&w->active);
		s->closed += ctr_get(&w->closed);
		s->upstream_failed += ctr_get(&w->upstream_failed);
		s->fd_exhausted += ctr_get(&w->fd_exhausted);
	}
}

int tcp_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur >= rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	return 0;
}
