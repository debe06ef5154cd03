/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's UDP relay, as an instance (struct udp_relay,
 * tools/netem/udp/udp.h): an unprivileged network emulator for UDP, on
 * pinwheel's qdiscs and timers.  The command line and the tc commands it
 * builds are in tools/netem/config.c, the reports' presentation in
 * tools/netem/stats.c, signals in tools/pinwheel-netem.c; this file and
 * its two neighbours own everything that runs: one relay's runtime, its
 * two devices, its sockets, worker threads, packet pool, client mappings,
 * counters, and its stop.  This file: the data path the workers run (the
 * byte budget, the packets, the clients and their counts per source
 * address, receiving, the workers' loop);
 * tools/netem/udp/udp_tx.c the send path (the driver's hooks, the send
 * batch, UDP_SEGMENT); tools/netem/udp/udp_setup.c what the controlling
 * thread does (setup, teardown, the statistics, udp.h's functions:
 * start, changes, reports, stop); tools/netem/udp/udp_priv.h the structs
 * and functions they share.
 * The command line runs one relay; each relay has its own runtime, so
 * several in one process (the API's UDP proxies, not built yet) share
 * nothing below but the process's descriptor limit.
 *
 * What it does
 * ------------
 * Clients send datagrams to --listen; each goes through device "up" (its
 * qdiscs: a spec, a batch file of tc commands, or the default mq of
 * pfifo_fast) and, when a qdisc releases it, out of the client's own
 * upstream socket, connected to --to.  The server's answers arrive on that
 * upstream socket, go through device "down", and leave from the --listen
 * address to the client.  A client is its source address; its mapping (the
 * upstream socket) is forgotten after --idle seconds without a datagram
 * either way.  A client's datagrams carry the priority --map gives its
 * address (htb's class id: the classification a tc filter would make), 0
 * otherwise.
 *
 * Threads
 * -------
 *  - the controlling thread ("main" below: the command line's main
 *    thread, or whichever one thread owns the relay; one call at a time
 *    per relay, the caller's to ensure):
 *    udp_relay_start() configures (pw_tc), opens the sockets, starts the
 *    workers; udp_relay_report() and udp_relay_snapshot() read the
 *    counters; udp_relay_apply() and udp_relay_reload() (SIGHUP) run tc
 *    commands as changes, keeping the packets in flight (pw_tc from main:
 *    the layer's configuration lock serialises it against the data
 *    path's grace periods); udp_relay_stop() stops (SIGINT/SIGTERM on the
 *    command line).
 *  - N workers, worker i serving CPU i of the runtime (pw_cpu_enter) with
 *    its own loop instead of pinwheel's worker threads, because it must
 *    sleep on sockets and timers at once: epoll_pwait2() with a nanosecond
 *    timeout to pw_next_expiry_ns() (epoll_sleep(): the kernel's poll
 *    slack taken off, tools/common/epoll_sleep.h; how late a sleep until
 *    the next event ended goes to the runtime's wake-up lateness,
 *    pw_wake_lateness_note(): a clock read per such sleep; the idle
 *    polls' MAX_SLEEP_NS bound is no event and is not counted), then
 *    receive (recvmmsg, 32 a call, at
 *    most 4 calls a socket a round), pw_run_timers(), pw_run_work() (the
 *    NET_TX work), and send what the qdiscs released (below).  Worker i
 *    has its own SO_REUSEPORT listening socket, so the kernel spreads
 *    clients over workers by their address hash, and owns the clients
 *    whose first datagram it received: their upstream sockets are in its
 *    epoll set, so the replies come back to the same CPU.  With
 *    --steer-cpu a reuseport program (classic BPF: the receiving CPU
 *    modulo N, attached in udp_setup.c) gives a datagram the kernel
 *    received on CPU i to worker i's socket instead, so the kernel's
 *    wake-up of the reader and its free of the datagram stay on the CPU
 *    that received it (with the address hash, on two workers, about half
 *    of them cross to the other CPU's worker).  A client's datagrams then
 *    reach the worker of whichever CPU they came in on; a worker that
 *    gets one of another worker's clients finds it in that worker's
 *    table (Locks, below) and uses it: one mapping per client, its
 *    owner's, and the replies come back to the owner.  What it gives up,
 *    and why it is not the default: spreading by address (one sending
 *    thread's clients all go to the worker of its CPU), and order across
 *    CPUs (a client's datagrams that come in on two CPUs, from a sender
 *    that moved between them, are handled by two workers at once and may
 *    leave in either order).  With one worker there is nothing to steer
 *    (no program); more workers than online CPUs are refused with it
 *    (the workers past the CPUs would receive nothing).  XPS maps CPU i
 *    to TX queue i of both devices; under an mq root each queue is its own
 *    qdisc and lock, under a single root (a spec without --per-queue: one
 *    link, one rate) the queues share it.  Watchdogs are pinned
 *    (pw_net_set_watchdog_pinned) and migration is off, so every timer a
 *    worker arms is on its own CPU and its own epoll timeout covers it; the
 *    only timers armed from elsewhere are main's (a tc command's
 *    estimator or watchdog), and main kicks every worker (an eventfd in
 *    each epoll set) after each tc command.  As a safety net a worker never
 *    sleeps longer than 100 ms.
 *
 * Packets and their ownership
 * ---------------------------
 * Packets and the driver are the harnesses' (tools/common/pktpool.h).  A
 * packet is a struct rpkt: the pool's packet (the pw_pkt, its home slot,
 * its buffer), its client, its direction, and 512 bytes inline (a larger
 * datagram, up to 64 KiB, gets a buffer of the pool's size class for it:
 * 1, 2, 4, ... 64 KiB).  recvmmsg reads every datagram into a per-worker
 * receive area (32 x 64 KiB); the packet is taken, and the bytes copied,
 * only once the datagram is admitted (below).  The pool has a slot per
 * worker: a free list only it touches and a lock-free stack others push
 * to (a whole-stack exchange is the only pop, so no ABA); a slot grows on
 * demand up to --max-packets (by default what half the byte budget holds
 * in packets alone, divided among the workers) and never shrinks while
 * running.  A packet handed to pw_dev_queue_xmit() belongs to the
 * layer until it comes back through ops.xmit (appended to the sending
 * thread's sendmmsg batch, freed after the send) or ops.drop (counted by
 * reason, freed), on whatever thread that happens.  A netem duplicate is
 * ops.clone: a packet from the calling worker's slot (malloc'd on a thread
 * that is no worker), counted as a clone.  Each direction's device has its
 * own driver (struct pktdrv), whose per-worker counters hold what left
 * (out, out_bytes) and every drop by reason; rx and clones are counted in
 * this file's slots.  Every packet holds a reference on its client, so a
 * mapping that expires while its packets are queued lives until the last
 * one is sent or dropped; the last reference closes the upstream socket.
 *
 * Memory: a byte budget, and each client's share of it
 * ---------------------------------------------------
 * --max-bytes B (default 256 MiB) bounds what the relay allocates for
 * datagrams, all workers together: the pool charges its budget (struct
 * pktpool_budget, one atomic counter) before each allocation, never after:
 * a packet made (its stride, 640 bytes: header and inline bytes; kept
 * charged, as the pool keeps the packet for reuse) and a class buffer (its
 * size, given back when the packet is freed).  A refused charge allocates
 * nothing.  What a packet holds is its true footprint (pktpool_bytes():
 * stride plus class size, not the payload), and that is what its client
 * is charged (client->held, both directions, netem duplicates included).
 * A datagram of @len bytes from client C holding h is admitted when
 *   1. h + need <= share, where need = pktpool_bytes_for(len) and
 *      share = max(floor, (7/8 B) / n), n the clients holding bytes now
 *      (C counted), floor two 64 KiB datagrams (132352 bytes): else it is
 *      dropped, client_share;
 *   2. the pool can charge what it must allocate (a class buffer; a packet
 *      when the slot has none free) up to a limit: B for a light client
 *      (h + need <= floor / 8 = 16544 bytes: 25 small datagrams), 7/8 B
 *      for the others: else no_memory.
 * So a flood is held to its clients' shares, and the last eighth of the
 * budget stays for clients that hold little: a well-behaved client's
 * packets are not a lottery against the flood's when the flood's clients
 * fill their part, as they do while the shares sum to more than 7/8 B
 * (shares at their floor: over 1774 clients holding bytes at 256 MiB,
 * over 443 at 64 MiB) or while new clients take shares faster than the
 * old ones drain (a flood's start).  The reserve cannot be exhausted by
 * fewer than B / 8 / 16544 light clients (2028 at 256 MiB, 507 at 64
 * MiB); a flood's new clients each take at most 16544 bytes of it.  (A
 * light threshold of share / 8 instead let a flood's first clients, with
 * shares near 7/8 B while few hold bytes, fill the reserve at its start;
 * the well-behaved client of the abuse run lost three to five times as
 * many in the flood's first second.)  A
 * client's first drop of each kind counts it once (clients_over_share,
 * clients_no_memory).
 * A netem duplicate goes through the same two checks in the driver's
 * clone_admit hook, before the copy is made; refused, netem goes on
 * without it (clones_refused), as when the kernel's skb_clone() fails.
 * n is summed from per-thread counters (a client going 0 -> held counts +1
 * on the thread that charged it, held -> 0 -1 on the one that freed),
 * once per rx() call, so no shared line is written per datagram for it;
 * the budget's counter is written only when the pool allocates or frees
 * (a class buffer, a new packet): a small datagram in a reused packet
 * costs it nothing.  A TCP path (another issue) charges the same budget:
 * its buffers through pktpool_charge() on R.budget with the same two
 * checks, one proxy connection being one client.  Not counted: the
 * receive areas (2 MiB a worker), the clients (a few hundred bytes each),
 * the runtime, malloc's own overhead: the stated overhead over B
 * (docs/limits.md).
 *
 * Nothing is lost silently: a datagram that is not admitted is still read
 * (into the receive area) and counted dropped (no_memory, client_share),
 * one from a new client past --max-clients is counted (max_clients), one
 * from a new client of a source address that holds --max-clients-per-addr
 * clients is counted (max_clients_per_addr), one
 * from the relay's own upstream socket (--to leads back to --listen
 * through an address the command line could not judge) is counted
 * (loop: the ports of the upstream sockets are a bitmap, their address
 * the first one's), a failed send (send_error); the datagrams the kernel
 * dropped at the relay's own full receive buffers are counted from
 * SO_RXQ_OVFL, received and dropped (rcvbuf), when the next datagram on
 * that socket reports the count; per direction, rx + clones == out + dropped + in flight at every
 * instant, and the stop checks it with in flight 0.  (Datagrams still
 * unread in the sockets when the relay stops are not counted: they were
 * never received.)
 *
 * Locks: the client tables' stripes (TAB_LOCKS mutexes, by the client's
 * hash), and nothing else of this file's own on the data path.  The
 * client tables are per worker; a worker's table is changed only by that
 * worker (a new client; its idle timer, pinned there, forgetting one),
 * under the client's stripe lock.  So a worker reads its own table
 * without a lock, and another worker reads it under the stripe lock: a
 * datagram of a client the receiving worker does not have takes its
 * stripe's lock, looks in the other workers' tables, and makes the client
 * only if none has it.  Two workers never make two mappings for one
 * address, and a client is never found and forgotten at once (the idle
 * timer decides under the same lock).  Without --steer-cpu a client's
 * datagrams all come in on its owner's socket, so the lock is taken only
 * for a new client.  last_ns is a relaxed atomic (any receiving worker
 * writes it, the owner's timer reads it under the lock).  Lock order:
 * no stripe lock is taken under another; under one, only a new client's
 * pw_mod_timer() takes a lock (its own CPU's timer base; timer callbacks
 * run without that lock, so the idle timer may take a stripe).  Counters
 * are per worker (a slot for threads that are no worker, here and in the
 * drivers), relaxed atomic adds, summed by main.  The budget is atomics
 * only (above).  Main touches the tables after the workers are joined.
 *
 * Clients per source address (--max-clients-per-addr, default
 * RELAY_DEF_CLIENTS_PER_ADDR): a client is its address and port, so one
 * host with many source ports could take every one of --max-clients'
 * mappings; an address (IPv4, or an IPv6 /64: what one host is usually
 * given) may hold at most that many clients alive, counted as
 * --max-clients counts them (from the client's creation to its release,
 * the last reference: an expired mapping whose packets are still queued
 * holds its place until they leave).  The counts are a second table
 * (struct addr_count, keyed by address, chained by a seeded hash) with its
 * own TAB_LOCKS stripes, which are leaves: a new client takes its
 * address's stripe under its own table stripe (the table stripes hash the
 * port too, so an address's clients are on many of them), a release takes
 * it on whatever thread drops the last reference (a worker, a queue's CPU,
 * main) holding whatever it holds, and nothing is taken under it but
 * malloc's and free's own.  Only a client's creation and release touch it:
 * no datagram of a known client does.  0 (or a value of --max-clients or
 * more, which could never bind first) turns it off: no table, no lock.
 *
 * Stop (udp_relay_stop()): tools/netem/udp/udp_setup.c.  Sending (the send
 * batch, UDP_SEGMENT): tools/netem/udp/udp_tx.c.  The clients (the table,
 * the per-address counts, a client's socket and idle timer):
 * tools/netem/udp/udp_client.c.
 *
 * Costs (per datagram, one direction): a copy from the receive area, the
 * admission (a load of the client's held bytes, an atomic add and
 * subtraction on it; the budget's CAS and subtraction when a class buffer
 * is taken), a pool pop and push, one
 * pw_dev_queue_xmit() (one queue lock round trip; a netem or tbf adds its
 * watchdog's hrtimer start when it throttles), a share of a recvmmsg (up
 * to 32 datagrams) and of a sendmmsg message (a run under UDP_SEGMENT; the
 * down direction's runs share the listening socket, the up direction's
 * are per client), two relaxed atomic adds on the worker's own counters,
 * one hash lookup and the client's reference taken and dropped (an
 * atomic add and subtraction on its line); for another worker's client
 * under --steer-cpu, its stripe's lock and a lookup per worker.  The
 * kernel's part dominates (docs/relay.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/net.h>
#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "../relay.h"
#include "udp.h"
#include "udp_priv.h"
#include "epoll_sleep.h"
#include "pktpool.h"

/* The calling thread's worker (udp_priv.h). */
__thread struct worker *udp__tl_w;

/* ------------------------------------------------------------ the budget */

/* The calling thread's counter slot: its worker's, else the shared one.
 * Any thread. */
static unsigned self_slot(const struct udp_relay *r)
{
	return udp__tl_w && udp__tl_w->r == r ? udp__tl_w->id : r->nw;
}

/* Clients holding bytes now: the slots' transitions summed (each slot
 * read once, relaxed: a moment's count, at worst off by the transitions
 * racing with the read).  Any thread; nw + 1 relaxed loads. */
int64_t udp__active_clients(const struct udp_relay *r)
{
	int64_t n = 0;
	for (unsigned i = 0; i <= r->nw; i++)
		n += __atomic_load_n(&r->slots[i].active, __ATOMIC_RELAXED);
	return n > 0 ? n : 0;
}

/* The share of a client that holds @held bytes when @active clients
 * (perhaps not it) hold some: the budget's first 7/8 divided among them,
 * counting it, at least r->floor.  Any thread; no shared state. */
uint64_t udp__share_of(const struct udp_relay *r, uint64_t held, int64_t active)
{
	uint64_t n = (uint64_t)active + (held == 0);
	uint64_t s = r->shared / (n ? n : 1);
	return s > r->floor ? s : r->floor;
}

/* Whether @cl may take @bytes more (its packet and buffer), with
 * @active clients holding bytes: 0 and in *@limit what the pool may
 * charge the budget to (the whole budget for a light client, one that
 * would hold at most r->light; 7/8 of it for the others), or
 * RD_CLIENT_SHARE.
 * Any thread (the owner for a datagram, a queue's CPU for a duplicate);
 * one relaxed load of cl->held. */
unsigned udp__client_admit(struct client *cl, uint64_t bytes, int64_t active, uint64_t *limit)
{
	uint64_t h = __atomic_load_n(&cl->held, __ATOMIC_RELAXED);
	uint64_t share = udp__share_of(cl->r, h, active);
	if (h + bytes > share)
		return RD_CLIENT_SHARE;
	*limit = h + bytes <= cl->r->light ? cl->r->cfg.max_bytes : cl->r->shared;
	return 0;
}

/* @cl holds @bytes more (a packet admitted).  Any thread: an atomic add on
 * cl->held; a client that held nothing becomes active on the calling
 * thread's slot (a relaxed add on its own line). */
void udp__client_charge(struct client *cl, uint64_t bytes)
{
	if (__atomic_fetch_add(&cl->held, bytes, __ATOMIC_RELAXED) == 0)
		ADD(cl->r->slots[self_slot(cl->r)].active, 1);
}

/* @cl holds @bytes less (its packet freed).  Any thread, as above. */
void udp__client_uncharge(struct client *cl, uint64_t bytes)
{
	if (__atomic_sub_fetch(&cl->held, bytes, __ATOMIC_RELAXED) == 0)
		ADD(cl->r->slots[self_slot(cl->r)].active, -1);
}

/* Count @cl among the clients that had a drop for @why (client_share,
 * no_memory), the first time only.  Any thread: an atomic exchange on the
 * client's flag, a relaxed add on the calling thread's slot. */
static void client_flag(struct client *cl, unsigned why)
{
	uint8_t *f = why == RD_CLIENT_SHARE ? &cl->over_share
		   : why == RD_NO_MEMORY    ? &cl->no_memory : NULL;
	if (!f || __atomic_exchange_n(f, 1, __ATOMIC_RELAXED))
		return;
	struct slot *s = &cl->r->slots[self_slot(cl->r)];
	if (why == RD_CLIENT_SHARE)
		ADD(s->clients_over_share, 1);
	else
		ADD(s->clients_no_memory, 1);
}

/* ------------------------------------------------------------ packets */

/* A packet from @w's slot, or NULL (the slot at --max-packets, the budget
 * refused a new one's stride, or no memory).  Context: @w's thread. */
static struct rpkt *rpkt_alloc(struct worker *w)
{
	return (struct rpkt *)pktpool_get(&w->r->pool, (int)w->id);
}

/* Give @p (and its big buffer) back to @w's slot without touching its
 * client.  @w's thread. */
static void rpkt_unget(struct worker *w, struct rpkt *p)
{
	pktpool_put(&w->r->pool, &p->h, (int)w->id);
}

/* A packet for @len bytes of @cl's, admitted by its share and the budget
 * before anything is allocated, and charged to @cl; NULL with the drop
 * reason in *@why (client_share, no_memory).  Context: @w's thread; the
 * budget's CAS when a packet is made or a class buffer taken, an atomic
 * add on cl->held. */
static struct rpkt *rpkt_admit(struct worker *w, struct client *cl, uint32_t len, unsigned *why)
{
	struct udp_relay *r = w->r;
	size_t need = pktpool_bytes_for(&r->pool, len);
	uint64_t limit;
	*why = udp__client_admit(cl, need, w->active, &limit);
	if (*why)
		return NULL;
	struct rpkt *p = rpkt_alloc(w);
	if (!p) {
		*why = RD_NO_MEMORY;
		return NULL;
	}
	if (len > INLINE_BUF && pktpool_buf_limit(&r->pool, &p->h, len, limit)) {
		rpkt_unget(w, p);
		*why = RD_NO_MEMORY;
		return NULL;
	}
	udp__client_charge(cl, pktpool_bytes(&r->pool, &p->h));
	return p;
}

/* Free @p: its big buffer, back to its slot, its charge and its client
 * reference.  Any thread; atomics: the pool's (a remote push, the
 * budget's subtraction for a class buffer), udp__client_uncharge()'s,
 * udp__client_put()'s. */
void udp__rpkt_free(struct udp_relay *r, struct rpkt *p)
{
	struct client *cl = p->cl;
	uint64_t bytes = pktpool_bytes(&r->pool, &p->h);
	p->cl = NULL;
	pktpool_put(&r->pool, &p->h, udp__tl_w && udp__tl_w->r == r ? (int)udp__tl_w->id : -1);
	if (cl) {
		udp__client_uncharge(cl, bytes);
		udp__client_put(cl);
	}
}

/* ------------------------------------------------------------ receive */

/* Hand @p (@len payload bytes, from @cl, counted received; with a
 * reference on @cl, now the packet's) to direction @dir.  @w's thread. */
static void enqueue(struct worker *w, enum relay_dir dir, struct rpkt *p, struct client *cl,
		    uint32_t len)
{
	struct udp_relay *r = w->r;
	uint32_t hdr = r->cfg.to.ss_family == AF_INET6 ? 48 : 28;
	if (dir == RELAY_DOWN)
		hdr = cl->addr.ss_family == AF_INET6 ? 48 : 28;
	pw_pkt_init(&p->h.pkt, p->h.buf, len + hdr);
	p->h.pkt.caplen = len;
	p->h.pkt.hash = cl->hash;
	p->h.pkt.priority = cl->prio;
	p->h.pkt.sk = &cl->sk[dir];
	p->cl = cl;
	p->dir = (uint8_t)dir;
	pw_dev_queue_xmit(r->dev[dir], &p->h.pkt);
}

/* The datagrams the kernel dropped at a full receive buffer of the socket
 * @mh came from, since the last count it reported (*@seen): counted
 * received and dropped (rcvbuf) in direction @dir, so that the balance
 * holds for them too.  The kernel reports its count (SO_RXQ_OVFL) with
 * the next datagram it queues, so drops are counted when one arrives.
 * Context: @w's thread (@seen is the listening socket's, or a client's of
 * @w's). */
static void count_rcvbuf(struct worker *w, enum relay_dir dir, struct msghdr *mh, uint32_t *seen)
{
	if (mh->msg_controllen < sizeof(struct cmsghdr))
		return;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			uint32_t d = v - *seen;
			*seen = v;
			if (d) {
				ADD(w->r->slots[w->id].d[dir].rx, d);
				pktdrv_count_drops(&w->r->drv[dir], (int)w->id, RD_RCVBUF, d);
			}
		}
}

/* Read up to RX_ROUNDS batches from @fd: the listening socket (@cl NULL:
 * direction up, a client per source address) or @cl's upstream socket
 * (direction down).  Every datagram is read into the overflow area first;
 * then its client is found or made, its share and the budget decide, and
 * only then is a packet (and a class buffer of its size) taken and the
 * bytes copied: nothing is allocated for a datagram that is dropped.
 * Return 1 if it stopped with data perhaps left.  Context: @w's thread. */
static int rx(struct worker *w, int fd, struct client *cl)
{
	struct udp_relay *r = w->r;
	struct slot *s = &r->slots[w->id];
	enum relay_dir dir = cl ? RELAY_DOWN : RELAY_UP;
	uint32_t *seen = cl ? &cl->ovfl : &w->ovfl;
	w->active = udp__active_clients(r);
	for (int round = 0; round < RX_ROUNDS; round++) {
		for (unsigned k = 0; k < BATCH; k++) {
			w->riov[k] = (struct iovec){ w->overflow + (size_t)k * MAX_DGRAM, MAX_DGRAM };
			w->rmsg[k].msg_hdr = (struct msghdr){
				.msg_name = cl ? NULL : &w->raddr[k],
				.msg_namelen = cl ? 0 : sizeof(w->raddr[k]),
				.msg_iov = &w->riov[k], .msg_iovlen = 1,
				.msg_control = w->rcmsg[k].buf,
				.msg_controllen = sizeof(w->rcmsg[k].buf),
			};
		}
		int n = recvmmsg(fd, w->rmsg, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == ECONNREFUSED)
			ADD(s->refused, 1); /* the server's port is closed: its ICMP error */
		else if (n < 0 && cl && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			ADD(s->upstream_errors, 1); /* host or network unreachable, ... */
		int got = n > 0 ? n : 0;
		for (int i = 0; i < got; i++) {
			uint32_t len = w->rmsg[i].msg_len;
			count_rcvbuf(w, dir, &w->rmsg[i].msg_hdr, seen);
			ADD(s->d[dir].rx, 1);
			ADD(s->d[dir].rx_bytes, len);
			unsigned why = 0;
			struct client *c = cl;
			if (!c && udp__from_self(r, &w->raddr[i])) {
				why = RD_LOOP;
				if (!__atomic_exchange_n(&r->loop_warned, 1, __ATOMIC_RELAXED)) {
					char a[80];
					relay_format_addr(&r->cfg.to, a, sizeof(a));
					fprintf(stderr, "pinwheel-netem: a datagram came back from the "
						"relay's own upstream socket: --to %s leads back to "
						"--listen (a loop); such datagrams are dropped and "
						"counted (loop)\n", a);
				}
			} else if (!c) { /* with a reference, and its last_ns now */
				c = udp__client_get(w, &w->raddr[i], w->rmsg[i].msg_hdr.msg_namelen, &why);
			} else { /* @cl, @w's own: the socket is in @w's epoll set */
				udp__client_hold(c);
				__atomic_store_n(&c->last_ns, pw_now_ns(r->rt), __ATOMIC_RELAXED);
			}
			/* last_ns is traffic, admitted or not; the reference is
			 * the packet's, or dropped with the datagram */
			struct rpkt *p = c ? rpkt_admit(w, c, len, &why) : NULL;
			if (!p) {
				pktdrv_count_drop(&r->drv[dir], (int)w->id, why);
				if (c) {
					client_flag(c, why);
					udp__client_put(c);
				}
				continue;
			}
			memcpy(p->h.buf, w->overflow + (size_t)i * MAX_DGRAM, len);
			enqueue(w, dir, p, c, len);
		}
		if (n < BATCH) {
			udp__tx_flush(w);
			return 0; /* empty (EAGAIN), or an error to retry next round */
		}
	}
	udp__tx_flush(w);
	return 1;
}

/* ------------------------------------------------------------ workers */

/* Stop receiving: @w's sockets out of its epoll set.  @w's thread. */
static void stop_listening(struct worker *w)
{
	epoll_ctl(w->ep, EPOLL_CTL_DEL, w->lfd, NULL);
	for (unsigned b = 0; b <= w->tab_mask; b++)
		for (struct client *cl = w->tab[b]; cl; cl = cl->hnext)
			epoll_ctl(w->ep, EPOLL_CTL_DEL, cl->fd, NULL);
	__atomic_store_n(&w->listening, 0, __ATOMIC_RELEASE);
}

/* Worker @arg's loop (see the top of the file).  Its own thread. */
void *udp__worker_main(void *arg)
{
	struct worker *w = arg;
	struct udp_relay *r = w->r;
	udp__tl_w = w;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores > 0 && r->nw <= (unsigned)cores) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->id, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
	}
	if (pw_cpu_enter(r->rt, w->id)) {
		fprintf(stderr, "pinwheel-netem: worker %u cannot serve its CPU\n", w->id);
		abort();
	}
	struct epoll_event ev[64];
	struct epoll_slack slack; /* the poll slack, off the deadline */
	epoll_slack_init(&slack);
	int busy = 0;
	while (!__atomic_load_n(&r->stop_now, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&w->listening, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&r->stopping, __ATOMIC_ACQUIRE))
			stop_listening(w);
		uint64_t next = pw_next_expiry_ns(r->rt, w->id);
		uint64_t now = pw_now_ns(r->rt);
		uint64_t wait = busy || next <= now ? 0 : next - now;
		/* a sleep until the next event, not the poll's bound: how late
		 * it ended goes to the -runtime-metrics histogram */
		int timed = wait && wait <= MAX_SLEEP_NS;
		if (wait > MAX_SLEEP_NS)
			wait = MAX_SLEEP_NS;
		int n = epoll_sleep(w->ep, ev, 64, wait, &slack);
		if (timed)
			pw_wake_lateness_note(r->rt, next, pw_now_ns(r->rt));
		busy = 0;
		for (int i = 0; i < n; i++) {
			void *tag = ev[i].data.ptr;
			if (tag == TAG_KICK) {
				uint64_t v;
				if (read(w->kick_fd, &v, sizeof(v)) < 0) {
					/* EAGAIN: another read took it */
				}
			} else if (tag == TAG_LISTEN) {
				busy |= rx(w, w->lfd, NULL);
			} else {
				struct client *cl = tag;
				busy |= rx(w, cl->fd, cl);
			}
		}
		pw_run_timers(r->rt, w->id);
		if (pw_run_work(r->rt, w->id) > 0)
			busy = 1;
		udp__tx_flush(w);
	}
	udp__tx_flush(w);
	pw_cpu_exit(r->rt);
	return NULL;
}

/* Wake every worker (they recompute their deadlines).  Any thread. */
void udp__kick_all(struct udp_relay *r)
{
	uint64_t one = 1;
	for (unsigned i = 0; i < r->nw; i++)
		if (write(r->w[i].kick_fd, &one, sizeof(one)) < 0) {
			/* the counter is full: the worker is awake anyway */
		}
}
