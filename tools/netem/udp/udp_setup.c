/* SPDX-License-Identifier: MIT */
/*
 * The UDP relay's control side (the design: tools/netem/udp/udp.c's essay):
 * what the controlling thread ("main") does to one relay.  Setup (batch
 * files, runtime, pool, drivers, devices, tc commands, schedules, the
 * workers' sockets, --steer-cpu's reuseport program) and teardown; the
 * statistics (the counters summed over the slots, tc's qdisc report);
 * and udp.h's functions: start, the configuration, changes (tc
 * commands, SIGHUP), snapshots and reports, stop.  Here rather than in
 * udp.c, which keeps the data path the workers run, so that each file
 * holds one side.
 *
 * Stop (udp_relay_stop()): main sets "stopping" and kicks; each worker removes its sockets
 * from its epoll set and says so; then main waits until nothing is in
 * flight or --drain ms have passed, sets "stop_now", joins the workers,
 * prints the qdiscs, destroys the devices (what is still queued is dropped
 * as dev_destroy), releases the clients and prints the balance.
 *
 * Threads: main only, one call at a time per relay (the caller's to
 * ensure); the workers, started and joined here, run udp.c's loop.
 * sum_dir() reads their counters while they run (racy, each once, what
 * left first).  Locks: none of this file's own; pw_tc takes the layer's
 * configuration lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

#include "../relay.h"
#include "../stats.h"
#include "udp.h"
#include "udp_priv.h"
#include "now.h"
#include "pktpool.h"

/* ------------------------------------------------------------ statistics */

/* Direction @d's counters, summed over the slots.  Any thread (racy
 * while running: each counter is read once; the driver's, what left,
 * first, so that a packet in flight is never counted out and not in). */
static void sum_dir(struct udp_relay *r, enum relay_dir d, struct udp_dir_stats *t)
{
	memset(t, 0, sizeof(*t));
	struct pktdrv_count c;
	pktdrv_read(&r->drv[d], &c);
	t->out = c.sent;
	t->out_bytes = c.sent_bytes;
	for (unsigned k = 1; k < RD_NREASONS; k++)
		t->dropped[k] = c.dropped[k];
	for (unsigned i = 0; i <= r->nw; i++) {
		const struct dcount *s = &r->slots[i].d[d];
		t->rx += __atomic_load_n(&s->rx, __ATOMIC_RELAXED);
		t->rx_bytes += __atomic_load_n(&s->rx_bytes, __ATOMIC_RELAXED);
		t->clones += __atomic_load_n(&s->clones, __ATOMIC_RELAXED);
	}
}

/* Packets in direction @d's device (or in a send batch) now.  Main. */
static int64_t in_flight(struct udp_relay *r, enum relay_dir d)
{
	struct udp_dir_stats t;
	sum_dir(r, d, &t);
	return (int64_t)(t.rx + t.clones) - (int64_t)(t.out + udp_dropped_total(&t));
}

static const char *const dev_name[RELAY_NDIR] = { "up", "down" };

/* "tc -s qdisc show dev X" (or -j): malloc'd, trailing newline removed.
 * Main. */
static char *tc_show(struct udp_relay *r, enum relay_dir d, int json)
{
	char cmd[64], err[512];
	snprintf(cmd, sizeof(cmd), "qdisc show dev %s", dev_name[d]);
	for (size_t cap = 1 << 14; cap <= (1u << 26); cap *= 4) {
		char *out = malloc(cap);
		if (!out)
			return NULL;
		out[0] = '\0';
		int rc = pw_tc(r->rt, cmd,
			       PW_TC_STATS | (json ? PW_TC_JSON : 0) |
				       (r->cfg.accuracy ? PW_TC_ACCURACY : 0),
			       out, cap, err, sizeof(err));
		if (rc == -ENOSPC) {
			free(out);
			continue;
		}
		size_t n = strlen(out);
		while (n && out[n - 1] == '\n')
			out[--n] = '\0';
		return out;
	}
	return NULL;
}

/* ------------------------------------------------------------ setup */

/* Run direction @d's commands (@change: the SIGHUP form), @who before
 * the failing command's origin.  0, or -1 with the origin, the command
 * and pw_tc's message in @msg.  Context: main. */
static int apply_dir(struct udp_relay *r, enum relay_dir d, int change, const char *who, char *msg,
		     size_t msglen)
{
	struct relay_cmds c;
	char err[4096];
	if (relay_dir_cmds(&r->cfg, d, dev_name[d], r->nw, r->batch_text[d], r->cfg.batch[d], change,
			   &c, err, sizeof(err))) {
		snprintf(msg, msglen, "%s%s", who, err);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < c.n; i++) {
		err[0] = '\0';
		int e = pw_tc(r->rt, c.cmd[i], r->cfg.no_files ? PW_TC_NO_FILES : 0, NULL, 0, err,
			      sizeof(err));
		if (e) {
			size_t n = strlen(err);
			while (n && err[n - 1] == '\n')
				err[--n] = '\0';
			snprintf(msg, msglen, "%s%s: \"tc %s\" failed: %s", who, c.where[i], c.cmd[i],
				 err[0] ? err : strerror(-e));
			rc = -1;
			break;
		}
	}
	relay_cmds_free(&c);
	return rc;
}

/* @w's SO_REUSEPORT socket on --listen (port 0: the first one picks it,
 * the others follow).  Main, before the workers start. */
static int open_listener(struct worker *w, char *err, size_t errlen)
{
	struct udp_relay *r = w->r;
	int fd = socket(r->cfg.listen.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	int one = 1, sz = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&r->cfg.listen, r->cfg.listen_len)) {
		char a[80];
		relay_format_addr(&r->cfg.listen, a, sizeof(a));
		snprintf(err, errlen, "--listen %s: cannot bind: %s", a, strerror(errno));
		close(fd);
		return -1;
	}
	/* port 0: the others bind the port the first one got */
	struct sockaddr_storage got;
	socklen_t gl = sizeof(got);
	if (getsockname(fd, (struct sockaddr *)&got, &gl) == 0) {
		if (got.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&r->cfg.listen)->sin6_port =
				((struct sockaddr_in6 *)&got)->sin6_port;
		else
			((struct sockaddr_in *)&r->cfg.listen)->sin_port =
				((struct sockaddr_in *)&got)->sin_port;
	}
	if (relay_is_own_address(&r->cfg.listen, &r->cfg.to)) {
		char a[80];
		relay_format_addr(&r->cfg.to, a, sizeof(a));
		snprintf(err, errlen, "--to %s: the relay's own --listen address (a loop)", a);
		close(fd);
		return -1;
	}
	w->lfd = fd;
	return 0;
}

/* Worker @id's table, buffers, epoll set, kick eventfd, socket.  Main,
 * before the workers start. */
static int setup_worker(struct udp_relay *r, struct worker *w, unsigned id, char *err,
			size_t errlen)
{
	w->r = r;
	w->id = id;
	w->lfd = w->ep = w->kick_fd = -1;
	unsigned nb = TAB_LOCKS; /* at least: a bucket's clients share one stripe */
	while (nb < 2 * (r->cfg.max_clients / r->nw + 1) && nb < (1u << 20))
		nb <<= 1;
	w->tab = calloc(nb, sizeof(*w->tab));
	w->tab_mask = nb - 1;
	w->overflow = malloc((size_t)BATCH * MAX_DGRAM);
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!w->tab || !w->overflow || w->ep < 0 || w->kick_fd < 0) {
		snprintf(err, errlen, "worker %u: %s", id, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	if (open_listener(w, err, errlen))
		return -1;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = TAG_KICK };
	struct epoll_event el = { .events = EPOLLIN, .data.ptr = TAG_LISTEN };
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->kick_fd, &ev) ||
	    epoll_ctl(w->ep, EPOLL_CTL_ADD, w->lfd, &el)) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		return -1;
	}
	w->listening = 1;
	return 0;
}

/* --steer-cpu: the reuseport group's program, the receiving CPU modulo
 * the workers (udp.c's essay, "Threads").  The kernel takes the index it
 * returns in the group's socket order, which is the workers' (each bound
 * in turn by setup_worker()).  0, or -1 with the message in @err.  Main,
 * after every worker's socket is bound, before the workers start. */
static int attach_steer_cpu(struct udp_relay *r, char *err, size_t errlen)
{
	struct sock_filter code[] = {
		{ BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)(SKF_AD_OFF + SKF_AD_CPU) },
		{ BPF_ALU | BPF_MOD | BPF_K, 0, 0, r->nw },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(code) / sizeof(code[0])), code };
	if (setsockopt(r->w[0].lfd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog))) {
		snprintf(err, errlen, "--steer-cpu: cannot attach the reuseport program: %s "
			 "(Linux 4.5 or later has it; run without --steer-cpu)", strerror(errno));
		return -1;
	}
	return 0;
}

/* Free everything (main, workers joined or never started). */
static void teardown(struct udp_relay *r)
{
	for (int d = 0; d < RELAY_NDIR; d++) {
		pw_tc_schedule_free(r->sched[d]); /* stopped: no step after this */
		r->sched[d] = NULL;
	}
	for (int d = 0; d < RELAY_NDIR; d++) {
		pw_netdev_destroy(r->dev[d]); /* what is queued: dropped, dev_destroy */
		r->dev[d] = NULL;
	}
	for (unsigned i = 0; r->w && i < r->nw; i++) {
		struct worker *w = &r->w[i];
		for (unsigned b = 0; w->tab && b <= w->tab_mask; b++) {
			struct client *cl = w->tab[b];
			while (cl) {
				struct client *next = cl->hnext;
				udp__client_unlink(w, cl); /* the workers are joined: no lock */
				if (pw_timer_delete_sync(&cl->timer) == 1)
					udp__client_put(cl); /* the timer's */
				udp__client_put(cl);         /* the table's */
				cl = next;
			}
		}
	}
	pktpool_destroy(&r->pool);
	for (int d = 0; d < RELAY_NDIR; d++)
		pktdrv_destroy(&r->drv[d]);
	for (unsigned i = 0; r->w && i < r->nw; i++) {
		struct worker *w = &r->w[i];
		free(w->tab);
		free(w->overflow);
		if (w->lfd >= 0)
			close(w->lfd);
		if (w->ep >= 0)
			close(w->ep);
		if (w->kick_fd >= 0)
			close(w->kick_fd);
	}
	free(r->w);
	r->w = NULL;
	/* every client is released by now (the devices' packets dropped,
	 * the tables emptied), and so every address count: freed in case */
	for (unsigned b = 0; r->addr_tab && b <= r->addr_mask; b++)
		while (r->addr_tab[b]) {
			struct addr_count *ac = r->addr_tab[b];
			r->addr_tab[b] = ac->next;
			free(ac);
		}
	free(r->addr_tab);
	r->addr_tab = NULL;
	for (unsigned i = 0; i < TAB_LOCKS; i++) {
		pthread_mutex_destroy(&r->tab_lock[i].m);
		pthread_mutex_destroy(&r->addr_lock[i].m);
	}
	pw_runtime_destroy(r->rt);
	r->rt = NULL;
	free(r->slots);
	for (int d = 0; d < RELAY_NDIR; d++)
		free(r->batch_text[d]);
}

/* Everything before the workers start: batch files, runtime, devices,
 * the tc commands, the workers' sockets.  0, or -1 (the message in @err,
 * or printed already when @err is empty).  Main. */
static int setup(struct udp_relay *r, char *err, size_t errlen)
{
	for (int d = 0; d < RELAY_NDIR; d++)
		if (r->cfg.batch[d]) {
			r->batch_text[d] = relay_read_file(r->cfg.batch[d], err, errlen);
			if (!r->batch_text[d])
				return -1;
		}
	/* a descriptor per client: raise the soft limit to the hard one */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl); /* best effort: past it, socket_error drops */
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	r->nw = r->cfg.workers ? r->cfg.workers
			     : (unsigned)(cpus < 1 ? 1 : cpus > RELAY_MAX_WORKERS ? RELAY_MAX_WORKERS
									       : cpus);
	r->idle_ns = (uint64_t)(r->cfg.idle_s * 1e9);
	if (r->cfg.steer_cpu && cpus > 0 && r->nw > (unsigned)cpus) {
		snprintf(err, errlen, "--steer-cpu with --workers %u: this machine has %ld online "
			 "CPUs, and a datagram goes to the worker of the CPU it came in on, so "
			 "workers %ld..%u would receive nothing; use --workers %ld or fewer, or "
			 "drop --steer-cpu", r->nw, cpus, cpus, r->nw - 1, cpus);
		return -1;
	}
	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = r->nw;
	int rc = pw_runtime_create(&pc, &r->rt);
	if (rc) {
		snprintf(err, errlen, "cannot create the runtime: %s", strerror(-rc));
		return -1;
	}
	if (r->cfg.tc_budget && (rc = pw_net_set_budget(r->rt, r->cfg.tc_budget))) {
		snprintf(err, errlen, "cannot set the runtime's memory budget: %s", strerror(-rc));
		return -1;
	}
	pw_set_migration(r->rt, PW_MIGRATION_OFF);
	pw_net_set_watchdog_pinned(r->rt, 1);
	r->slots = aligned_alloc(64, (r->nw + 1) * sizeof(*r->slots));
	if (!r->slots) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(r->slots, 0, (r->nw + 1) * sizeof(*r->slots));
	/* the packets: a slot per worker, grown on demand to --max-packets,
	 * or to what half the budget holds in packets alone (shared by the
	 * workers), so that packets made, kept for reuse, leave at least
	 * half of it to the buffers of large datagrams */
	r->budget.max = r->cfg.max_bytes;
	r->shared = r->cfg.max_bytes - r->cfg.max_bytes / 8;
	struct pktpool_cfg pool_cfg = {
		.nslots = r->nw, .pkt_size = sizeof(struct rpkt), .inline_bytes = INLINE_BUF,
		.max = r->cfg.max_packets, .budget = &r->budget,
	};
	if (pktpool_init(&r->pool, &pool_cfg)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!r->cfg.max_packets) {
		uint64_t per = r->cfg.max_bytes / 2 / r->pool.stride / r->nw;
		per = per < 64 ? 64 : per > (1u << 24) ? (1u << 24) : per;
		for (unsigned i = 0; i < r->nw; i++)
			r->pool.slot[i].max = (unsigned)per;
	}
	r->floor = 2 * pktpool_bytes_for(&r->pool, PKTPOOL_CLASS_MAX);
	r->light = r->floor / 8;
	for (int d = 0; d < RELAY_NDIR; d++) {
		const struct pktdrv_cfg dc = {
			.pool = &r->pool, .bad_reason = RD_SEND_ERROR,
			.xmit = udp__dev_xmit, .drop = udp__dev_drop, .clone = udp__dev_clone,
			.clone_admit = udp__dev_clone_admit,
		};
		if (pktdrv_init(&r->drv[d], &dc)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	for (int d = 0; d < RELAY_NDIR; d++) {
		rc = pw_netdev_create(r->rt, dev_name[d], r->nw, &pktdrv_ops, &r->drv[d], &r->dev[d]);
		if (rc) {
			snprintf(err, errlen, "cannot create device %s: %s", dev_name[d],
				 strerror(-rc));
			return -1;
		}
		for (unsigned q = 0; q < r->nw; q++) {
			uint64_t m = 1ull << q;
			pw_netdev_set_xps(r->dev[d], q, &m, r->nw);
		}
	}
	for (int d = 0; d < RELAY_NDIR; d++)
		if (apply_dir(r, d, 0, "", err, errlen))
			return -1;
	for (int d = 0; d < RELAY_NDIR; d++) {
		if (r->cfg.accuracy && (rc = pw_netdev_accuracy_enable(r->dev[d], 1))) {
			snprintf(err, errlen, "--accuracy: dev %s: %s", dev_name[d], strerror(-rc));
			return -1;
		}
		if (!r->cfg.schedule[d])
			continue;
		char *text = relay_read_file(r->cfg.schedule[d], err, errlen);
		if (!text)
			return -1;
		/* every line checked now: a bad one stops the start */
		rc = pw_tc_schedule_load(r->rt, text, r->cfg.schedule[d], dev_name[d], 0, &r->sched[d],
					 err, errlen);
		free(text);
		if (rc)
			return -1;
	}
	/* --max-clients-per-addr: a cap of --max-clients or more never binds
	 * first; then, as for 0, no table (udp.c's essay, "Locks") */
	if (r->cfg.max_clients_per_addr && r->cfg.max_clients_per_addr < r->cfg.max_clients) {
		unsigned nb = TAB_LOCKS; /* at least: a bucket's counts share one stripe */
		while (nb < r->cfg.max_clients && nb < (1u << 20))
			nb <<= 1;
		r->addr_tab = calloc(nb, sizeof(*r->addr_tab));
		if (!r->addr_tab) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		r->addr_mask = nb - 1;
		r->addr_seed = now_ns() ^ (uint64_t)(uintptr_t)r ^ (uint64_t)getpid() << 32;
		r->per_addr = r->cfg.max_clients_per_addr;
	}
	r->w = aligned_alloc(64, r->nw * sizeof(*r->w));
	if (!r->w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(r->w, 0, r->nw * sizeof(*r->w));
	for (unsigned i = 0; i < r->nw; i++)
		r->w[i].lfd = r->w[i].ep = r->w[i].kick_fd = -1;
	for (unsigned i = 0; i < r->nw; i++)
		if (setup_worker(r, &r->w[i], i, err, errlen))
			return -1;
	if (r->cfg.steer_cpu && r->nw > 1 && attach_steer_cpu(r, err, errlen))
		return -1;
	/* UDP_SEGMENT where the kernel has it (4.18): a kernel without it
	 * would ignore the control message and send a run as one datagram */
	int zero = 0;
	uint32_t gso = setsockopt(r->w[0].lfd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) ? 0
										      : 65536;
	for (int d = 0; d < RELAY_NDIR; d++)
		r->gso_below[d] = gso;
	return 0;
}

/* ------------------------------------------------------------ the instance */

/* Start (see udp.h). */
int udp_relay_start(const struct relay_config *cfg, struct udp_relay **out, char *err,
		    size_t errlen)
{
	*out = NULL;
	struct udp_relay *r = aligned_alloc(64, (sizeof(*r) + 63) / 64 * 64);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	for (unsigned i = 0; i < TAB_LOCKS; i++) {
		pthread_mutex_init(&r->tab_lock[i].m, NULL);
		pthread_mutex_init(&r->addr_lock[i].m, NULL);
	}
	err[0] = '\0';
	if (setup(r, err, errlen)) {
		teardown(r);
		free(r);
		return -EINVAL;
	}
	r->t0 = pw_now_ns(r->rt);
	for (unsigned i = 0; i < r->nw; i++) {
		int e = pthread_create(&r->w[i].th, NULL, udp__worker_main, &r->w[i]);
		if (e) {
			snprintf(err, errlen, "cannot start worker %u: %s", i, strerror(e));
			__atomic_store_n(&r->stop_now, 1, __ATOMIC_RELEASE);
			udp__kick_all(r);
			for (unsigned j = 0; j < i; j++)
				pthread_join(r->w[j].th, NULL);
			teardown(r);
			free(r);
			return -EAGAIN;
		}
		r->w[i].started = 1;
	}
	r->running = 1;
	*out = r;
	return 0;
}

/* The schedules' time 0 (see udp.h). */
int udp_relay_start_schedules(struct udp_relay *r)
{
	int rc = 0;
	for (int d = 0; d < RELAY_NDIR; d++)
		if (r->sched[d] && pw_tc_schedule_start(r->sched[d])) {
			fprintf(stderr, "pinwheel-netem: %s: the schedule did not start\n",
				r->cfg.schedule[d]);
			rc = -1;
		}
	return rc;
}

/* The configuration (see udp.h). */
const struct relay_config *udp_relay_config(const struct udp_relay *r)
{
	return &r->cfg;
}

/* The workers (see udp.h). */
unsigned udp_relay_workers(const struct udp_relay *r)
{
	return r->nw;
}

struct pw_runtime *udp_relay_runtime(const struct udp_relay *r)
{
	return r->rt;
}

/* Changes on a direction (see udp.h). */
int udp_relay_apply(struct udp_relay *r, enum relay_dir dir, const char *text, const char *name,
		    char *err, size_t errlen)
{
	char *copy = strdup(text ? text : "");
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	free(r->batch_text[dir]);
	r->batch_text[dir] = copy;
	const char *keep = r->cfg.batch[dir];
	r->cfg.batch[dir] = name;
	int rc = apply_dir(r, dir, 1, "", err, errlen);
	r->cfg.batch[dir] = keep;
	udp__kick_all(r);
	return rc ? -EINVAL : 0;
}

/* One tc command (see udp.h), and udp_relay_tc_dev()'s (udp_priv.h). */
int udp__tc(struct udp_relay *r, const char *dev, const char *cmd, unsigned flags, char *err,
	    size_t errlen)
{
	err[0] = '\0';
	int rc = dev ? pw_tc_dev(r->rt, dev, cmd, flags, NULL, 0, err, errlen)
		     : pw_tc(r->rt, cmd, flags, NULL, 0, err, errlen);
	size_t n = strlen(err);
	while (n && err[n - 1] == '\n')
		err[--n] = '\0';
	if (rc && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	udp__kick_all(r);
	return rc;
}

int udp_relay_tc(struct udp_relay *r, const char *cmd, char *err, size_t errlen)
{
	return udp__tc(r, NULL, cmd, 0, err, errlen);
}

/* SIGHUP (see udp.h). */
int udp_relay_reload(struct udp_relay *r)
{
	int ok = 1;
	for (int d = 0; d < RELAY_NDIR; d++) {
		if (!r->cfg.batch[d])
			continue;
		char err[8192];
		char *text = relay_read_file(r->cfg.batch[d], err, sizeof(err));
		if (!text) {
			fprintf(stderr, "pinwheel-netem: SIGHUP: %s (kept the old configuration)\n",
				err);
			ok = 0;
			continue;
		}
		free(r->batch_text[d]);
		r->batch_text[d] = text;
		if (apply_dir(r, d, 1, "SIGHUP: ", err, sizeof(err))) {
			fprintf(stderr, "pinwheel-netem: %s\n", err);
			ok = 0;
		}
	}
	udp__kick_all(r);
	fprintf(stderr, "pinwheel-netem: SIGHUP: batch files %s\n",
		ok ? "applied" : "applied up to the first failure");
	return ok ? 0 : -1;
}

/* A snapshot (see udp.h). */
void udp_relay_snapshot(struct udp_relay *r, struct udp_stats *s)
{
	memset(s, 0, sizeof(*s));
	double t = (double)(pw_now_ns(r->rt) - r->t0) / 1e9;
	s->t = t;
	for (int d = 0; d < RELAY_NDIR; d++) {
		struct udp_dir_stats *ds = &s->d[d];
		sum_dir(r, d, ds);
		int64_t b = (int64_t)(ds->rx + ds->clones) -
			    (int64_t)(ds->out + udp_dropped_total(ds));
		ds->backlog = b > 0 ? (uint64_t)b : 0;
		s->sched[d] = r->sched[d];
	}
	for (unsigned i = 0; i <= r->nw; i++) {
		const struct slot *sl = &r->slots[i];
		s->clients_new += __atomic_load_n(&sl->clients_new, __ATOMIC_RELAXED);
		s->clients_expired += __atomic_load_n(&sl->clients_expired, __ATOMIC_RELAXED);
		s->refused += __atomic_load_n(&sl->refused, __ATOMIC_RELAXED);
		s->upstream_errors += __atomic_load_n(&sl->upstream_errors, __ATOMIC_RELAXED);
		s->over_share += __atomic_load_n(&sl->clients_over_share, __ATOMIC_RELAXED);
		s->no_memory += __atomic_load_n(&sl->clients_no_memory, __ATOMIC_RELAXED);
		s->clones_refused += __atomic_load_n(&sl->clones_refused, __ATOMIC_RELAXED);
	}
	s->nw = r->nw;
	for (unsigned i = 0; i < r->nw && i < RELAY_MAX_WORKERS; i++)
		s->worker_rx[i] = __atomic_load_n(&r->slots[i].d[RELAY_UP].rx, __ATOMIC_RELAXED) +
				  __atomic_load_n(&r->slots[i].d[RELAY_DOWN].rx, __ATOMIC_RELAXED);
	/* the budget: what the pool holds now (at the final report: the
	 * packets made, kept for reuse, and nothing else), its peak */
	s->clients = __atomic_load_n(&r->nclients, __ATOMIC_RELAXED);
	s->max_bytes = r->cfg.max_bytes;
	s->mem = pktpool_budget_used(&r->budget);
	s->mem_peak = __atomic_load_n(&r->budget.peak, __ATOMIC_RELAXED);
	s->active = udp__active_clients(r);
	s->share = udp__share_of(r, 1, s->active);
}

/* The rates of @s since the previous report (payload bits), which
 * becomes @s: the reports' own state, so that other snapshots (GET
 * /metrics, the API's stats) leave the reports' intervals alone.
 * Context: the controlling thread, reporting. */
static void report_rates(struct udp_relay *r, struct udp_stats *s)
{
	double dt = s->t - r->last_t;
	for (int d = 0; d < RELAY_NDIR; d++) {
		struct udp_dir_stats *ds = &s->d[d];
		ds->pps = dt > 0 ? (double)(ds->out - r->last_out[d]) / dt : 0;
		ds->bps = dt > 0 ? 8.0 * (double)(ds->out_bytes - r->last_bytes[d]) / dt : 0;
		r->last_out[d] = ds->out;
		r->last_bytes[d] = ds->out_bytes;
	}
	r->last_t = s->t;
}

/* A --stats report (see udp.h). */
void udp_relay_report(struct udp_relay *r, FILE *out)
{
	char *tc[RELAY_NDIR];
	for (int d = 0; d < RELAY_NDIR; d++)
		tc[d] = tc_show(r, d, r->cfg.json);
	struct udp_stats s;
	udp_relay_snapshot(r, &s);
	report_rates(r, &s);
	for (int d = 0; d < RELAY_NDIR; d++)
		s.tc[d] = tc[d];
	udp_stats_print(out, &s, r->cfg.json);
	for (int d = 0; d < RELAY_NDIR; d++)
		free(tc[d]);
}

/* Stop (see udp.h). */
int udp_relay_stop(struct udp_relay *r, int print, struct udp_stats *final)
{
	/* no step of a schedule from now on; no more receiving, then drain
	 * up to --drain */
	for (int d = 0; d < RELAY_NDIR; d++)
		if (r->sched[d])
			pw_tc_schedule_stop(r->sched[d]);
	__atomic_store_n(&r->stopping, 1, __ATOMIC_RELEASE);
	udp__kick_all(r);
	for (unsigned i = 0; i < r->nw; i++)
		while (__atomic_load_n(&r->w[i].listening, __ATOMIC_ACQUIRE)) {
			udp__kick_all(r);
			usleep(200);
		}
	uint64_t deadline = now_ns() + (uint64_t)r->cfg.drain_ms * 1000000ull;
	while (now_ns() < deadline && (in_flight(r, RELAY_UP) > 0 || in_flight(r, RELAY_DOWN) > 0))
		usleep(1000);
	__atomic_store_n(&r->stop_now, 1, __ATOMIC_RELEASE);
	udp__kick_all(r);
	for (unsigned i = 0; i < r->nw; i++)
		pthread_join(r->w[i].th, NULL);

	char *tc[RELAY_NDIR] = { NULL, NULL };
	for (int d = 0; print && d < RELAY_NDIR; d++)
		tc[d] = tc_show(r, d, r->cfg.json);
	/* --check: the achieved against the configured, per direction, before
	 * the devices go */
	int check_failed = 0;
	for (int d = 0; r->cfg.check && d < RELAY_NDIR; d++) {
		char why[2048] = "";
		int v = pw_netdev_accuracy_check(r->dev[d], why, sizeof(why));
		fprintf(stderr, "pinwheel-netem: check dev %s: %s%s%s\n", dev_name[d],
			v == PW_ACC_FAIL ? "FAIL" : v == PW_ACC_PASS ? "pass" :
			v == PW_ACC_NOT_JUDGED ? "not judged" : "error",
			why[0] ? "\n" : "", why);
		check_failed |= v == PW_ACC_FAIL;
	}
	/* what the drain left is dropped (dev_destroy) before the balance */
	for (int d = 0; d < RELAY_NDIR; d++) {
		pw_netdev_destroy(r->dev[d]);
		r->dev[d] = NULL;
	}
	struct udp_stats s;
	udp_relay_snapshot(r, &s);
	report_rates(r, &s);
	s.final = 1;
	s.mem_packets = pktpool_count_made(&r->pool); /* the workers joined: read alone */
	int ok = 1;
	for (int d = 0; d < RELAY_NDIR; d++)
		if (s.d[d].rx + s.d[d].clones != s.d[d].out + udp_dropped_total(&s.d[d]))
			ok = 0;
	if (print) {
		for (int d = 0; d < RELAY_NDIR; d++)
			s.tc[d] = tc[d];
		udp_stats_print(stdout, &s, r->cfg.json);
	}
	for (int d = 0; d < RELAY_NDIR; d++) {
		free(tc[d]);
		s.tc[d] = NULL;
		s.sched[d] = NULL;
	}
	if (final)
		*final = s;
	teardown(r);
	free(r);
	return !ok ? 1 : check_failed ? 3 : 0;
}
