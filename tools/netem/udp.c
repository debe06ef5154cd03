/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's UDP relay, as an instance (struct udp_relay,
 * tools/netem/udp.h): an unprivileged network emulator for UDP, on
 * pinwheel's qdiscs and timers.  The command line and the tc commands it
 * builds are in tools/netem/config.c, the reports' presentation in
 * tools/netem/stats.c, signals in tools/pinwheel-netem.c; this file owns
 * everything that runs: one relay's runtime, its two devices, its sockets,
 * worker threads, packet pool, client mappings, counters, and its stop.
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
 *    timeout to pw_next_expiry_ns(), then receive (recvmmsg, 32 a call, at
 *    most 4 calls a socket a round), pw_run_timers(), pw_run_work() (the
 *    NET_TX work), and send what the qdiscs released (below).  Worker i
 *    has its own SO_REUSEPORT listening socket, so the kernel spreads
 *    clients over workers by their address hash, and owns the clients
 *    whose first datagram it received: their upstream sockets are in its
 *    epoll set, so the replies come back to the same CPU.  XPS maps CPU i
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
 * Locks: none of this file's own on the data path.  Counters are per
 * worker (a slot for threads that are no worker, here and in the drivers),
 * relaxed atomic adds, summed by main.  The budget is atomics only
 * (above).  The client tables are per worker, touched only by their
 * worker (the idle timer is pinned, so it runs there too), and by main
 * after the workers are joined.
 *
 * Stop (udp_relay_stop()): main sets "stopping" and kicks; each worker removes its sockets
 * from its epoll set and says so; then main waits until nothing is in
 * flight or --drain ms have passed, sets "stop_now", joins the workers,
 * prints the qdiscs, destroys the devices (what is still queued is dropped
 * as dev_destroy), releases the clients and prints the balance.
 *
 * Sending: what the qdiscs release is appended to the worker's batch
 * (up to 128 packets: a receive call's four rounds, or a timer run's
 * departures) and sent in order when it is full, after each receive call
 * and at the end of each loop.  A run of datagrams for one socket and
 * address, all of one size but the last (shorter, not empty), goes as one
 * message with UDP_SEGMENT (GSO, Linux 4.18; probed at the start): the
 * kernel builds and routes one packet and cuts it back into the same
 * datagrams, at the device or at a receiving socket (a receiver that
 * enabled UDP_GRO reads the run at once, with its segment size, as from
 * any GSO sender); up to 64 datagrams and 65000 bytes.  A message the
 * path refuses (EINVAL, EMSGSIZE: its MTU; EIO: no checksum offload) is
 * sent again one datagram a message, and that direction sends datagrams
 * of that size or more (EIO: all) one by one from then on; other errors
 * of a run (a full buffer, an ICMP error) send it one by one once.  So a
 * datagram is counted out only when the kernel took it, or send_error
 * when it refused it alone, as before; the times are the qdiscs'.  Why
 * this and not busy polling, UDP_GRO or io_uring: docs/relay.md, "The
 * per-datagram cost".
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
 * one hash lookup.  The kernel's part dominates (docs/relay.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

#include "relay.h"
#include "stats.h"
#include "udp.h"
#include "now.h"
#include "pktpool.h"


#define BATCH      32          /* datagrams a recvmmsg */
#define TX_BATCH   128         /* datagrams a worker's send batch holds */
#define GSO_SEGS   64          /* datagrams one UDP_SEGMENT message carries at most */
#define GSO_BYTES  65000       /* and payload bytes (an IP datagram's 64 KiB less headers) */
#define RX_ROUNDS  4           /* recvmmsg calls a socket a round */
#define INLINE_BUF 512         /* bytes a packet holds inline */
#define MAX_DGRAM  65536       /* the largest UDP payload, rounded up */
#define MAX_SLEEP_NS 100000000ull

_Static_assert(RD_NREASONS <= PKTDRV_MAX_REASONS, "the drivers count every reason");

struct client;

/* A packet: the pool's (pw_pkt first: the layer's pointer is ours; its
 * home slot; h.buf its bytes, INLINE_BUF of them inline after this). */
struct rpkt {
	struct ppkt h;
	struct client *cl;     /* holds a reference */
	uint8_t dir;
};

/* What a worker receives, per direction. */
struct dcount {
	uint64_t rx, rx_bytes, clones;
};

/* One slot of counters (a worker's, or the shared one of other threads). */
struct slot {
	struct dcount d[RELAY_NDIR];
	uint64_t clients_new, clients_expired;
	uint64_t refused;      /* ICMP port unreachable seen on an upstream socket */
	uint64_t upstream_errors; /* other errors there (host/net unreachable, ...) */
	uint64_t clients_over_share, clients_no_memory; /* clients dropped so, once each */
	uint64_t clones_refused; /* netem duplicates the budget refused */
	int64_t active;        /* clients whose bytes went 0 -> held here, minus held -> 0 */
} __attribute__((aligned(64)));

struct client {
	struct udp_relay *r;
	uint32_t refcnt;       /* atomic */
	uint8_t over_share, no_memory; /* atomic: it had such a drop (counted once) */
	uint32_t ovfl;         /* its upstream socket's SO_RXQ_OVFL count seen (owner) */
	uint64_t held;         /* atomic: bytes its packets take now (both directions) */
	uint16_t lport;        /* its upstream socket's local port (0: unknown) */
	int fd;                /* the upstream socket, connected to --to */
	unsigned owner;
	uint32_t hash;
	uint32_t prio;         /* --map: pkt->priority of its datagrams */
	struct sockaddr_storage addr;
	socklen_t alen;
	uint64_t last_ns;      /* the last datagram either way (owner) */
	struct pw_timer timer; /* the idle timer, pinned on the owner */
	struct pw_sock sk[RELAY_NDIR];
	struct client *hnext;
	int linked;
};

struct worker {
	struct udp_relay *r;
	unsigned id;
	pthread_t th;
	int started;
	int ep, kick_fd, lfd;
	int listening;         /* atomic: 0 once it stopped receiving */
	struct client **tab;
	unsigned tab_mask, nclients;
	/* receive */
	struct mmsghdr rmsg[BATCH];
	struct iovec riov[BATCH];
	struct sockaddr_storage raddr[BATCH];
	union {                /* SO_RXQ_OVFL's control message */
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} rcmsg[BATCH];
	char *overflow;        /* BATCH * MAX_DGRAM: where every datagram is read */
	uint32_t ovfl;         /* the listening socket's SO_RXQ_OVFL count seen */
	int64_t active;        /* clients holding bytes, summed at the start of each rx() */
	/* send: the batch's packets in order (their bytes, socket, address) */
	struct iovec tiov[TX_BATCH];
	int tfd[TX_BATCH];
	const struct sockaddr_storage *tto[TX_BATCH];
	socklen_t ttolen[TX_BATCH];
	struct rpkt *tp[TX_BATCH];
	unsigned nt;
	/* and the messages tx_flush() makes of them: a packet, or a run of
	 * packets to one address under UDP_SEGMENT */
	struct mmsghdr tmsg[TX_BATCH];
	unsigned tfirst[TX_BATCH], tcount[TX_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} tcmsg[TX_BATCH];
} __attribute__((aligned(64)));

struct udp_relay {
	struct relay_config cfg;
	struct pw_runtime *rt;
	struct pw_netdev *dev[RELAY_NDIR];
	struct pktpool pool;   /* a slot per worker */
	struct pktpool_budget budget; /* --max-bytes: what the pool allocates */
	uint64_t shared;       /* the budget less the reserve (7/8 of it) */
	uint64_t floor;        /* the least share: two 64 KiB datagrams */
	uint64_t light;        /* a light client holds at most this: floor / 8 */
	int fd_warned;         /* atomic: the out-of-descriptors message was printed */
	/* the upstream sockets' own addresses, to know a datagram that comes
	 * back from one of them to --listen: a loop */
	uint64_t own_ports[65536 / 64]; /* atomic bits: their local ports now */
	struct sockaddr_storage own_addr; /* their local address (the first's) */
	int own_addr_set;      /* atomic: 0 not yet, 1 being written, 2 set */
	int loop_warned;       /* atomic: the loop message was printed */
	struct pktdrv drv[RELAY_NDIR]; /* each device's */
	uint32_t gso_below[RELAY_NDIR]; /* atomic: UDP_SEGMENT for datagrams shorter than this */
	unsigned nw;
	struct worker *w;
	struct slot *slots;    /* nw + 1: the last for threads that are no worker */
	uint32_t nclients;     /* atomic */
	int stopping, stop_now; /* atomic */
	uint64_t idle_ns;
	uint64_t t0;
	char *batch_text[RELAY_NDIR];
	struct pw_tc_schedule *sched[RELAY_NDIR]; /* --up-schedule / --down-schedule */
	int running;           /* the workers were started */
	double last_t;         /* the previous report's time, and what had left then */
	uint64_t last_out[RELAY_NDIR], last_bytes[RELAY_NDIR];
};

static __thread struct worker *tl_w;

#define ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)

/* ------------------------------------------------------------ the budget */

/* The calling thread's counter slot: its worker's, else the shared one.
 * Any thread. */
static unsigned self_slot(const struct udp_relay *r)
{
	return tl_w && tl_w->r == r ? tl_w->id : r->nw;
}

/* Clients holding bytes now: the slots' transitions summed (each slot
 * read once, relaxed: a moment's count, at worst off by the transitions
 * racing with the read).  Any thread; nw + 1 relaxed loads. */
static int64_t active_clients(const struct udp_relay *r)
{
	int64_t n = 0;
	for (unsigned i = 0; i <= r->nw; i++)
		n += __atomic_load_n(&r->slots[i].active, __ATOMIC_RELAXED);
	return n > 0 ? n : 0;
}

/* The share of a client that holds @held bytes when @active clients
 * (perhaps not it) hold some: the budget's first 7/8 divided among them,
 * counting it, at least r->floor.  Any thread; no shared state. */
static uint64_t share_of(const struct udp_relay *r, uint64_t held, int64_t active)
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
static unsigned client_admit(struct client *cl, uint64_t bytes, int64_t active, uint64_t *limit)
{
	uint64_t h = __atomic_load_n(&cl->held, __ATOMIC_RELAXED);
	uint64_t share = share_of(cl->r, h, active);
	if (h + bytes > share)
		return RD_CLIENT_SHARE;
	*limit = h + bytes <= cl->r->light ? cl->r->cfg.max_bytes : cl->r->shared;
	return 0;
}

/* @cl holds @bytes more (a packet admitted).  Any thread: an atomic add on
 * cl->held; a client that held nothing becomes active on the calling
 * thread's slot (a relaxed add on its own line). */
static void client_charge(struct client *cl, uint64_t bytes)
{
	if (__atomic_fetch_add(&cl->held, bytes, __ATOMIC_RELAXED) == 0)
		ADD(cl->r->slots[self_slot(cl->r)].active, 1);
}

/* @cl holds @bytes less (its packet freed).  Any thread, as above. */
static void client_uncharge(struct client *cl, uint64_t bytes)
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
	*why = client_admit(cl, need, w->active, &limit);
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
	client_charge(cl, pktpool_bytes(&r->pool, &p->h));
	return p;
}

static void client_put(struct client *cl);

/* Free @p: its big buffer, back to its slot, its charge and its client
 * reference.  Any thread; atomics: the pool's (a remote push, the
 * budget's subtraction for a class buffer), client_uncharge()'s,
 * client_put()'s. */
static void rpkt_free(struct udp_relay *r, struct rpkt *p)
{
	struct client *cl = p->cl;
	uint64_t bytes = pktpool_bytes(&r->pool, &p->h);
	p->cl = NULL;
	pktpool_put(&r->pool, &p->h, tl_w && tl_w->r == r ? (int)tl_w->id : -1);
	if (cl) {
		client_uncharge(cl, bytes);
		client_put(cl);
	}
}

/* ------------------------------------------------------------ clients */

/* Another reference on @cl.  Any thread holding one. */
static void client_hold(struct client *cl)
{
	__atomic_fetch_add(&cl->refcnt, 1, __ATOMIC_RELAXED);
}

/* The last reference closes the upstream socket.  Any thread. */
static void client_put(struct client *cl)
{
	struct udp_relay *r = cl->r;
	if (__atomic_sub_fetch(&cl->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	if (cl->lport)
		__atomic_fetch_and(&r->own_ports[cl->lport >> 6], ~(1ull << (cl->lport & 63)),
				   __ATOMIC_RELAXED);
	if (cl->fd >= 0)
		close(cl->fd);
	__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
	free(cl);
}

/* The port of @a (host order) and its IPv4 address in *@v4 (an IPv4 or
 * v4-mapped IPv6 address; 0 for another IPv6 one).  Any thread. */
static uint16_t addr_port_v4(const struct sockaddr_storage *a, uint32_t *v4)
{
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a;
		*v4 = IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)
			      ? ((const uint32_t *)a6->sin6_addr.s6_addr)[3] : 0;
		return ntohs(a6->sin6_port);
	}
	const struct sockaddr_in *a4 = (const void *)a;
	*v4 = a4->sin_addr.s_addr;
	return ntohs(a4->sin_port);
}

/* Note @cl's upstream socket as the relay's own (its local port; the
 * first one's address).  Context: @cl's owner, once, at its creation;
 * atomics: an or on the port's bitmap word, the address's flag (CAS, then
 * a release store once written). */
static void own_socket(struct client *cl)
{
	struct udp_relay *r = cl->r;
	struct sockaddr_storage a;
	socklen_t al = sizeof(a);
	uint32_t v4;
	if (getsockname(cl->fd, (struct sockaddr *)&a, &al))
		return;
	cl->lport = addr_port_v4(&a, &v4);
	if (!cl->lport)
		return;
	__atomic_fetch_or(&r->own_ports[cl->lport >> 6], 1ull << (cl->lport & 63),
			  __ATOMIC_RELAXED);
	int z = 0;
	if (__atomic_compare_exchange_n(&r->own_addr_set, &z, 1, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED)) {
		r->own_addr = a;
		__atomic_store_n(&r->own_addr_set, 2, __ATOMIC_RELEASE);
	}
}

/* Whether @a, a datagram's source on a listening socket, is one of the
 * relay's own upstream sockets: --to leads back to --listen (a loop the
 * command line could not see: a wildcard listener and another local
 * address).  Context: a worker; a relaxed load of the bitmap word, an
 * acquire load of the address's flag when the port's bit is set. */
static bool from_self(struct udp_relay *r, const struct sockaddr_storage *a)
{
	uint32_t v4, own4;
	uint16_t port = addr_port_v4(a, &v4);
	if (!(__atomic_load_n(&r->own_ports[port >> 6], __ATOMIC_RELAXED) >> (port & 63) & 1) ||
	    __atomic_load_n(&r->own_addr_set, __ATOMIC_ACQUIRE) != 2)
		return false;
	addr_port_v4(&r->own_addr, &own4);
	if (own4 || v4)
		return own4 == v4;
	return a->ss_family == AF_INET6 && r->own_addr.ss_family == AF_INET6 &&
	       !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)&r->own_addr)->sin6_addr, 16);
}

/* The pw_socks are embedded in the client and never freed on their own. */
static void sock_noop(struct pw_sock *sk)
{
	(void)sk;
}

/* A client address's hash (the table's, the packets' flow hash).  Any thread. */
static uint32_t addr_hash(const struct sockaddr_storage *a)
{
	const unsigned char *b;
	size_t n;
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a;
		b = (const unsigned char *)&a6->sin6_addr;
		n = 16;
		uint32_t h = 2166136261u ^ a6->sin6_port;
		for (size_t i = 0; i < n; i++)
			h = (h ^ b[i]) * 16777619u;
		return h ^ (h >> 15);
	}
	const struct sockaddr_in *a4 = (const void *)a;
	uint32_t h = (uint32_t)a4->sin_addr.s_addr * 0x9e3779b1u ^ (uint32_t)a4->sin_port * 0x85ebca6bu;
	return h ^ (h >> 16);
}

/* Whether two client addresses are the same.  Any thread. */
static bool addr_eq(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) &&
		       x->sin6_scope_id == y->sin6_scope_id;
	}
	const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
	return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
}

/* The jiffy a wheel timer must expire at to fire after @deadline_ns.
 * Any thread. */
static uint64_t idle_expires_jiffies(const struct udp_relay *r, uint64_t deadline_ns)
{
	uint64_t now = pw_now_ns(r->rt);
	uint64_t hz = pw_runtime_hz(r->rt);
	uint64_t d = deadline_ns > now ? deadline_ns - now : 0;
	return pw_jiffies(r->rt) + (d * hz + 999999999ull) / 1000000000ull + 1;
}

/* Take @cl out of its owner's table and epoll set.  Context: the owner's
 * thread, or main after the workers are joined. */
static void client_unlink(struct worker *w, struct client *cl)
{
	if (!cl->linked)
		return;
	struct client **pp = &w->tab[cl->hash & w->tab_mask];
	while (*pp && *pp != cl)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = cl->hnext;
	cl->linked = 0;
	w->nclients--;
	epoll_ctl(w->ep, EPOLL_CTL_DEL, cl->fd, NULL);
}

/* The idle timer: on the owner's CPU (pinned).  A client with traffic
 * since it was armed is re-armed for the rest; an idle one is forgotten
 * (its table and timer references dropped: packets still queued keep it). */
static void client_timer(struct pw_timer *t)
{
	struct client *cl = pw_container_of(t, struct client, timer);
	struct udp_relay *r = cl->r;
	uint64_t deadline = cl->last_ns + r->idle_ns;
	if (deadline > pw_now_ns(r->rt) && !__atomic_load_n(&r->stopping, __ATOMIC_RELAXED)) {
		pw_mod_timer(t, idle_expires_jiffies(r, deadline));
		return;
	}
	struct worker *w = &r->w[cl->owner];
	int linked = cl->linked;
	client_unlink(w, cl);
	ADD(r->slots[w->id].clients_expired, 1);
	if (linked)
		client_put(cl); /* the table's */
	client_put(cl);         /* the timer's */
}

/* @w's client for @addr: found, or made (NULL with the drop reason in
 * *@why).  Context: @w's thread. */
static struct client *client_get(struct worker *w, const struct sockaddr_storage *addr,
				 socklen_t alen, unsigned *why)
{
	struct udp_relay *r = w->r;
	uint32_t h = addr_hash(addr);
	for (struct client *cl = w->tab[h & w->tab_mask]; cl; cl = cl->hnext)
		if (cl->hash == h && addr_eq(&cl->addr, addr))
			return cl;
	if (__atomic_add_fetch(&r->nclients, 1, __ATOMIC_RELAXED) > r->cfg.max_clients) {
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		*why = RD_MAX_CLIENTS;
		return NULL;
	}
	struct client *cl = calloc(1, sizeof(*cl));
	if (!cl) {
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		*why = RD_NO_MEMORY;
		return NULL;
	}
	cl->fd = socket(r->cfg.to.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (cl->fd < 0 && (errno == EMFILE || errno == ENFILE) &&
	    !__atomic_exchange_n(&r->fd_warned, 1, __ATOMIC_RELAXED)) {
		struct rlimit rl = { 0, 0 };
		getrlimit(RLIMIT_NOFILE, &rl);
		fprintf(stderr, "pinwheel-netem: out of file descriptors (%s; the limit is %llu, "
			"%u clients): new clients' datagrams are dropped and counted "
			"(socket_error) until mappings expire (--idle); raise ulimit -n or "
			"lower --max-clients\n", strerror(errno), (unsigned long long)rl.rlim_cur,
			__atomic_load_n(&r->nclients, __ATOMIC_RELAXED));
	}
	if (cl->fd < 0 || connect(cl->fd, (const struct sockaddr *)&r->cfg.to, r->cfg.to_len)) {
		if (cl->fd >= 0)
			close(cl->fd);
		free(cl);
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		*why = RD_SOCKET_ERROR;
		return NULL;
	}
	int sz = 1 << 20, one = 1;
	setsockopt(cl->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(cl->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	setsockopt(cl->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = cl };
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, cl->fd, &ev)) {
		close(cl->fd);
		free(cl);
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		*why = RD_SOCKET_ERROR;
		return NULL;
	}
	cl->r = r;
	own_socket(cl); /* its port marked until client_put() closes it */
	cl->refcnt = 2; /* the table's and the timer's */
	cl->owner = w->id;
	cl->hash = h;
	memcpy(&cl->addr, addr, alen);
	cl->prio = relay_map_lookup(&r->cfg, addr);
	cl->alen = alen;
	cl->last_ns = pw_now_ns(r->rt);
	for (int d = 0; d < RELAY_NDIR; d++) {
		pw_sock_init(&cl->sk[d], r->rt, sock_noop);
		cl->sk[d].sk_hash = h;
	}
	pw_timer_setup(r->rt, &cl->timer, client_timer, PW_TIMER_PINNED);
	pw_mod_timer(&cl->timer, idle_expires_jiffies(r, cl->last_ns + r->idle_ns));
	cl->hnext = w->tab[h & w->tab_mask];
	w->tab[h & w->tab_mask] = cl;
	cl->linked = 1;
	w->nclients++;
	ADD(r->slots[w->id].clients_new, 1);
	return cl;
}

/* ------------------------------------------------------------ the driver */

/* A send of a UDP_SEGMENT message of @seg-byte datagrams in direction
 * @dir failed with @e.  When @e says the path cannot take such messages,
 * the direction sends datagrams of @seg bytes and more (EINVAL, EMSGSIZE:
 * the route's MTU) or of any size (EIO: no checksum offload; EOPNOTSUPP,
 * ENOPROTOOPT) one by one from now on; other errors (a full buffer, an
 * ICMP error) change nothing.  Any thread; an atomic minimum. */
static void gso_failed(struct udp_relay *r, unsigned dir, uint32_t seg, int e)
{
	uint32_t below;
	if (e == EINVAL || e == EMSGSIZE)
		below = seg;
	else if (e == EIO || e == EOPNOTSUPP || e == ENOPROTOOPT)
		below = 0;
	else
		return;
	uint32_t cur = __atomic_load_n(&r->gso_below[dir], __ATOMIC_RELAXED);
	while (below < cur && !__atomic_compare_exchange_n(&r->gso_below[dir], &cur, below, 1,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
}

/* How many of @w's batched packets from @j one message carries: 1, or a
 * run for UDP_SEGMENT: the same socket and address, the length of the
 * first (the last may be shorter; none empty), at most GSO_SEGS datagrams
 * and GSO_BYTES bytes, none before @single_to (those go one by one).
 * Context: @w's thread. */
static unsigned tx_run(const struct worker *w, unsigned j, unsigned single_to)
{
	size_t seg = w->tiov[j].iov_len;
	if (j < single_to || seg == 0 ||
	    seg >= __atomic_load_n(&w->r->gso_below[w->tp[j]->dir], __ATOMIC_RELAXED))
		return 1;
	unsigned n = 1;
	size_t bytes = seg;
	while (j + n < w->nt && n < GSO_SEGS && w->tfd[j + n] == w->tfd[j] &&
	       w->tto[j + n] == w->tto[j]) {
		size_t len = w->tiov[j + n].iov_len;
		if (len == 0 || len > seg || bytes + len > GSO_BYTES)
			break;
		n++;
		bytes += len;
		if (len < seg)
			break;
	}
	return n;
}

/* Send @w's batch, in order: for each run of packets on one socket, its
 * messages (a packet, or a run of datagrams to one address of one size
 * under UDP_SEGMENT: the kernel cuts it back into the same datagrams)
 * through sendmmsg.  A message that fails with UDP_SEGMENT is sent again
 * one datagram a message (gso_failed() decides whether later runs try
 * again).  Every packet is counted (out, or send_error for a datagram sent
 * alone that failed) and freed.  Context: @w's thread. */
static void tx_flush(struct worker *w)
{
	struct udp_relay *r = w->r;
	unsigned i = 0, single_to = 0;
	while (i < w->nt) {
		int fd = w->tfd[i];
		unsigned nm = 0, j = i;
		while (j < w->nt && w->tfd[j] == fd) {
			unsigned n = tx_run(w, j, single_to);
			struct msghdr *mh = &w->tmsg[nm].msg_hdr;
			*mh = (struct msghdr){
				.msg_name = (void *)w->tto[j], .msg_namelen = w->ttolen[j],
				.msg_iov = &w->tiov[j], .msg_iovlen = n,
			};
			if (n > 1) {
				uint16_t seg = (uint16_t)w->tiov[j].iov_len;
				mh->msg_control = w->tcmsg[nm].buf;
				mh->msg_controllen = sizeof(w->tcmsg[nm].buf);
				struct cmsghdr *c = CMSG_FIRSTHDR(mh);
				c->cmsg_level = SOL_UDP;
				c->cmsg_type = UDP_SEGMENT;
				c->cmsg_len = CMSG_LEN(sizeof(seg));
				memcpy(CMSG_DATA(c), &seg, sizeof(seg));
			}
			w->tfirst[nm] = j;
			w->tcount[nm] = n;
			nm++;
			j += n;
		}
		unsigned m = 0;
		while (m < nm) {
			int sent = sendmmsg(fd, &w->tmsg[m], nm - m, MSG_DONTWAIT);
			if (sent < 0 && errno == EINTR)
				continue;
			if (sent < 0 && w->tcount[m] > 1) {
				unsigned f = w->tfirst[m];
				gso_failed(r, w->tp[f]->dir, (uint32_t)w->tiov[f].iov_len, errno);
				break;
			}
			unsigned k = sent > 0 ? (unsigned)sent : 1;
			for (unsigned x = m; x < m + k; x++)
				for (unsigned y = w->tfirst[x]; y < w->tfirst[x] + w->tcount[x]; y++) {
					struct rpkt *p = w->tp[y];
					if (sent > 0)
						pktdrv_count_sent(&r->drv[p->dir], (int)w->id,
								  p->h.pkt.caplen);
					else
						pktdrv_count_drop(&r->drv[p->dir], (int)w->id,
								  RD_SEND_ERROR);
					rpkt_free(r, p);
				}
			m += k;
		}
		if (m < nm) { /* message m's run again, one datagram a message */
			i = w->tfirst[m];
			single_to = i + w->tcount[m];
		} else {
			i = j;
		}
	}
	w->nt = 0;
}

/* Where @p goes: up, the client's upstream socket (connected); down, the
 * client's address from its owner's listening socket.  Any thread. */
static void dest_of(struct rpkt *p, int *fd, const struct sockaddr_storage **to, socklen_t *tolen)
{
	struct client *cl = p->cl;
	struct udp_relay *r = cl->r;
	if (p->dir == RELAY_UP) {
		*fd = cl->fd;
		*to = NULL;
		*tolen = 0;
	} else {
		*fd = r->w[cl->owner].lfd;
		*to = &cl->addr;
		*tolen = cl->alen;
	}
}

/* The driver's xmit hook: on the CPU running the queue (@self its slot).
 * A worker batches; another thread (main, at a tc command) sends at once.
 * Either way the packet is this file's to count and free. */
static int dev_xmit(struct pktdrv *drv, unsigned txq, struct ppkt *pkt, int self)
{
	(void)txq;
	struct rpkt *p = (struct rpkt *)pkt;
	struct udp_relay *r = p->cl->r;
	int fd;
	const struct sockaddr_storage *to;
	socklen_t tolen;
	dest_of(p, &fd, &to, &tolen);
	struct worker *w = tl_w;
	if (w) {
		if (w->nt == TX_BATCH)
			tx_flush(w);
		unsigned i = w->nt++;
		w->tiov[i] = (struct iovec){ p->h.buf, p->h.pkt.caplen };
		w->tfd[i] = fd;
		w->tto[i] = to;
		w->ttolen[i] = tolen;
		w->tp[i] = p;
		return PKTDRV_KEPT;
	}
	ssize_t sent = sendto(fd, p->h.buf, p->h.pkt.caplen, MSG_DONTWAIT,
			      (const struct sockaddr *)to, tolen);
	if (sent >= 0)
		pktdrv_count_sent(drv, self, p->h.pkt.caplen);
	else
		pktdrv_count_drop(drv, self, RD_SEND_ERROR);
	rpkt_free(r, p);
	return PKTDRV_KEPT;
}

/* The driver's drop hook (it counted the drop and puts the packet back
 * next): the client's charge and reference.  Any thread acting on the
 * device; atomics as client_uncharge() and client_put(). */
static void dev_drop(struct pktdrv *drv, struct ppkt *pkt, unsigned why, int self)
{
	(void)drv, (void)why, (void)self;
	struct rpkt *p = (struct rpkt *)pkt;
	struct client *cl = p->cl;
	p->cl = NULL;
	if (cl) {
		client_uncharge(cl, pktpool_bytes(&cl->r->pool, pkt));
		client_put(cl);
	}
}

/* The driver's clone_admit hook (netem duplicate, before anything is
 * allocated): the copy would take @bytes of its client's share and of the
 * budget, as a datagram of the client's would.  Refused: counted
 * (clones_refused), and netem goes on without the duplicate.  Under a
 * queue lock on the CPU running it (main's for a tc command): relaxed
 * loads of the slots, the client and the budget; a relaxed add. */
static int dev_clone_admit(struct pktdrv *drv, const struct ppkt *src, size_t bytes, int self)
{
	(void)drv;
	const struct rpkt *sp = (const struct rpkt *)src;
	struct udp_relay *r = sp->cl->r;
	uint64_t limit;
	if (!client_admit(sp->cl, bytes, active_clients(r), &limit) &&
	    pktpool_budget_used(&r->budget) + bytes <= limit)
		return 0;
	ADD(r->slots[self >= 0 ? (unsigned)self : r->nw].clones_refused, 1);
	return -1;
}

/* The driver's clone hook (netem duplicate; the driver made @copy from
 * the calling worker's slot, malloc'd on a thread that is no worker, and
 * copied the bytes): under a queue lock, so no call into the layer. */
static int dev_clone(struct pktdrv *drv, const struct ppkt *src, struct ppkt *copy, int self)
{
	(void)drv;
	const struct rpkt *sp = (const struct rpkt *)src;
	struct rpkt *c = (struct rpkt *)copy;
	struct udp_relay *r = sp->cl->r;
	c->cl = sp->cl;
	c->dir = sp->dir;
	client_hold(c->cl);
	client_charge(c->cl, pktpool_bytes(&r->pool, copy));
	ADD(r->slots[self >= 0 ? (unsigned)self : r->nw].d[c->dir].clones, 1);
	return 0;
}

/* ------------------------------------------------------------ receive */

/* Hand @p (@len payload bytes, from @cl, counted received) to direction
 * @dir.  @w's thread. */
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
	client_hold(cl);
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
	w->active = active_clients(r);
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
			if (!c && from_self(r, &w->raddr[i])) {
				why = RD_LOOP;
				if (!__atomic_exchange_n(&r->loop_warned, 1, __ATOMIC_RELAXED)) {
					char a[80];
					relay_format_addr(&r->cfg.to, a, sizeof(a));
					fprintf(stderr, "pinwheel-netem: a datagram came back from the "
						"relay's own upstream socket: --to %s leads back to "
						"--listen (a loop); such datagrams are dropped and "
						"counted (loop)\n", a);
				}
			} else if (!c) {
				c = client_get(w, &w->raddr[i], w->rmsg[i].msg_hdr.msg_namelen, &why);
			}
			if (c)
				c->last_ns = pw_now_ns(r->rt); /* traffic, admitted or not */
			struct rpkt *p = c ? rpkt_admit(w, c, len, &why) : NULL;
			if (!p) {
				pktdrv_count_drop(&r->drv[dir], (int)w->id, why);
				if (c)
					client_flag(c, why);
				continue;
			}
			memcpy(p->h.buf, w->overflow + (size_t)i * MAX_DGRAM, len);
			enqueue(w, dir, p, c, len);
		}
		if (n < BATCH) {
			tx_flush(w);
			return 0; /* empty (EAGAIN), or an error to retry next round */
		}
	}
	tx_flush(w);
	return 1;
}

/* ------------------------------------------------------------ workers */

#define TAG_KICK   ((void *)1)
#define TAG_LISTEN ((void *)2)

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
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct udp_relay *r = w->r;
	tl_w = w;
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
	int busy = 0;
	while (!__atomic_load_n(&r->stop_now, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&w->listening, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&r->stopping, __ATOMIC_ACQUIRE))
			stop_listening(w);
		uint64_t now = pw_now_ns(r->rt);
		uint64_t next = pw_next_expiry_ns(r->rt, w->id);
		uint64_t wait = busy || next <= now ? 0 : next - now;
		if (wait > MAX_SLEEP_NS)
			wait = MAX_SLEEP_NS;
		struct timespec ts = { (time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull) };
		int n = epoll_pwait2(w->ep, ev, 64, &ts, NULL);
		if (n < 0 && errno == ENOSYS) /* before Linux 5.11: milliseconds, rounded up */
			n = epoll_wait(w->ep, ev, 64, (int)((wait + 999999) / 1000000));
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
		tx_flush(w);
	}
	tx_flush(w);
	pw_cpu_exit(r->rt);
	return NULL;
}

/* Wake every worker (they recompute their deadlines).  Any thread. */
static void kick_all(struct udp_relay *r)
{
	uint64_t one = 1;
	for (unsigned i = 0; i < r->nw; i++)
		if (write(r->w[i].kick_fd, &one, sizeof(one)) < 0) {
			/* the counter is full: the worker is awake anyway */
		}
}

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
		int e = pw_tc(r->rt, c.cmd[i], 0, NULL, 0, err, sizeof(err));
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
	unsigned nb = 16;
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
				client_unlink(w, cl);
				if (pw_timer_delete_sync(&cl->timer) == 1)
					client_put(cl); /* the timer's */
				client_put(cl);         /* the table's */
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
	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = r->nw;
	int rc = pw_runtime_create(&pc, &r->rt);
	if (rc) {
		snprintf(err, errlen, "cannot create the runtime: %s", strerror(-rc));
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
			.xmit = dev_xmit, .drop = dev_drop, .clone = dev_clone,
			.clone_admit = dev_clone_admit,
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
	err[0] = '\0';
	if (setup(r, err, errlen)) {
		teardown(r);
		free(r);
		return -EINVAL;
	}
	r->t0 = pw_now_ns(r->rt);
	for (unsigned i = 0; i < r->nw; i++) {
		int e = pthread_create(&r->w[i].th, NULL, worker_main, &r->w[i]);
		if (e) {
			snprintf(err, errlen, "cannot start worker %u: %s", i, strerror(e));
			__atomic_store_n(&r->stop_now, 1, __ATOMIC_RELEASE);
			kick_all(r);
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
	kick_all(r);
	return rc ? -EINVAL : 0;
}

/* One tc command (see udp.h). */
int udp_relay_tc(struct udp_relay *r, const char *cmd, char *err, size_t errlen)
{
	err[0] = '\0';
	int rc = pw_tc(r->rt, cmd, 0, NULL, 0, err, errlen);
	size_t n = strlen(err);
	while (n && err[n - 1] == '\n')
		err[--n] = '\0';
	if (rc && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	kick_all(r);
	return rc;
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
	kick_all(r);
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
		/* the rate since the last report (payload bits) */
		double dt = t - r->last_t;
		ds->pps = dt > 0 ? (double)(ds->out - r->last_out[d]) / dt : 0;
		ds->bps = dt > 0 ? 8.0 * (double)(ds->out_bytes - r->last_bytes[d]) / dt : 0;
		r->last_out[d] = ds->out;
		r->last_bytes[d] = ds->out_bytes;
		int64_t b = (int64_t)(ds->rx + ds->clones) -
			    (int64_t)(ds->out + udp_dropped_total(ds));
		ds->backlog = b > 0 ? (uint64_t)b : 0;
		s->sched[d] = r->sched[d];
	}
	r->last_t = t;
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
	s->active = active_clients(r);
	s->share = share_of(r, 1, s->active);
}

/* A --stats report (see udp.h). */
void udp_relay_report(struct udp_relay *r)
{
	char *tc[RELAY_NDIR];
	for (int d = 0; d < RELAY_NDIR; d++)
		tc[d] = tc_show(r, d, r->cfg.json);
	struct udp_stats s;
	udp_relay_snapshot(r, &s);
	for (int d = 0; d < RELAY_NDIR; d++)
		s.tc[d] = tc[d];
	udp_stats_print(stdout, &s, r->cfg.json);
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
	kick_all(r);
	for (unsigned i = 0; i < r->nw; i++)
		while (__atomic_load_n(&r->w[i].listening, __ATOMIC_ACQUIRE)) {
			kick_all(r);
			usleep(200);
		}
	uint64_t deadline = now_ns() + (uint64_t)r->cfg.drain_ms * 1000000ull;
	while (now_ns() < deadline && (in_flight(r, RELAY_UP) > 0 || in_flight(r, RELAY_DOWN) > 0))
		usleep(1000);
	__atomic_store_n(&r->stop_now, 1, __ATOMIC_RELEASE);
	kick_all(r);
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
