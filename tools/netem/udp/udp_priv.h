/* SPDX-License-Identifier: MIT */
/*
 * The UDP relay's private part, shared by tools/netem/udp/udp.c (the data
 * path: budget, packets, receive, the workers' loop), udp_client.c (the
 * clients: their table, per-address counts, sockets, timers), udp_tx.c
 * (the send path), udp_setup.c (setup, statistics, udp.h's functions)
 * and udp_report.c (the devices' reports and schedules for the API's UDP
 * proxies), and included by nothing else: the relay's limits, its structs (the
 * packet, the counter slot, a source address's count, the client, the
 * worker, the relay) and the
 * functions those files call across (the udp__ prefix).  The design is
 * udp.c's essay.  Threads and locks: each declaration says; the header
 * holds no state but udp__tl_w's declaration.
 */
#ifndef PW_NETEM_UDP_PRIV_H
#define PW_NETEM_UDP_PRIV_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

#include "../relay.h"
#include "udp.h"
#include "pktpool.h"

#define BATCH      32          /* datagrams a recvmmsg */
#define TX_BATCH   128         /* datagrams a worker's send batch holds */
#define GSO_SEGS   64          /* datagrams one UDP_SEGMENT message carries at most */
#define GSO_BYTES  65000       /* and payload bytes (an IP datagram's 64 KiB less headers) */
#define RX_ROUNDS  4           /* recvmmsg calls a socket a round */
#define INLINE_BUF 512         /* bytes a packet holds inline */
#define MAX_DGRAM  65536       /* the largest UDP payload, rounded up */
#define MAX_SLEEP_NS 100000000ull
#define TAB_LOCKS  64          /* the client tables' lock stripes (a power of 2) */

_Static_assert(RD_NREASONS <= PKTDRV_MAX_REASONS, "the drivers count every reason");

/* Epoll tags: the kick eventfd, the listening socket (a client's
 * upstream socket is tagged with its struct client). */
#define TAG_KICK   ((void *)1)
#define TAG_LISTEN ((void *)2)

struct client;

/* A source address's clients (--max-clients-per-addr): its key, the
 * IPv4 address (an IPv4-mapped IPv6 one's too) or an IPv6 address's /64
 * and scope, and how many clients of it are alive (made, not yet
 * released: udp__client_put()'s last reference, where r->nclients counts
 * one less too).  In the relay's address table, chained by hash; every
 * field under the stripe lock of its hash (udp_client.c's addr_lock()). */
struct addr_count {
	struct addr_count *next;
	uint64_t key;          /* the IPv4 address, or the IPv6 /64 */
	uint32_t scope;        /* an IPv6 address's scope id */
	uint32_t hash;
	uint8_t v6;
	uint32_t n;            /* its clients alive (at most r->per_addr) */
};

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
	uint64_t last_ns;      /* atomic: the last datagram either way (any worker) */
	struct pw_timer timer; /* the idle timer, pinned on the owner */
	struct pw_sock sk[RELAY_NDIR];
	struct client *hnext;  /* its owner's table: changed under its stripe's lock */
	struct addr_count *ac; /* its address's count (NULL: no per-address cap);
				* set once at its creation */
	int linked;            /* in its owner's table (changed under the same lock) */
};

struct worker {
	struct udp_relay *r;
	unsigned id;
	pthread_t th;
	int started;
	int ep, kick_fd, lfd;
	int listening;         /* atomic: 0 once it stopped receiving */
	struct client **tab;   /* its clients: changed by it only, under their stripe's lock */
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
	struct {               /* the stripe of the clients of hash h: h % TAB_LOCKS */
		pthread_mutex_t m;
	} __attribute__((aligned(64))) tab_lock[TAB_LOCKS];
	struct slot *slots;    /* nw + 1: the last for threads that are no worker */
	uint32_t nclients;     /* atomic */
	/* --max-clients-per-addr: the clients alive per source address.  A
	 * new client is counted under its address's stripe (taken under the
	 * client's table stripe: the only lock order, nothing taken under an
	 * address stripe), a released one under the same stripe on whatever
	 * thread drops the last reference; main frees the table after the
	 * workers are joined */
	unsigned per_addr;     /* the cap in force (0: none; set before the workers) */
	struct addr_count **addr_tab; /* chained by hash; its buckets' stripe: hash % TAB_LOCKS */
	unsigned addr_mask;    /* buckets - 1 (TAB_LOCKS buckets or more, a power of 2) */
	uint64_t addr_seed;    /* the hash's seed (set before the workers) */
	int addr_warned;       /* atomic: the per-address message was printed */
	struct {               /* the stripe of the addresses of hash h: h % TAB_LOCKS */
		pthread_mutex_t m;
	} __attribute__((aligned(64))) addr_lock[TAB_LOCKS];
	int stopping, stop_now; /* atomic */
	uint64_t idle_ns;
	uint64_t t0;
	char *batch_text[RELAY_NDIR];
	struct pw_tc_schedule *sched[RELAY_NDIR]; /* --up-schedule / --down-schedule */
	int running;           /* the workers were started */
	double last_t;         /* the previous report's time, and what had left then */
	uint64_t last_out[RELAY_NDIR], last_bytes[RELAY_NDIR];
};

/* The worker the calling thread is (set by udp__worker_main() on its
 * own thread), NULL on any other thread.  Defined in udp.c. */
extern __thread struct worker *udp__tl_w;

#define ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)

/* ------------------------------------------------ udp.c: budget, packets */

/**
 * udp__active_clients() - the clients holding bytes now: the slots'
 * transitions summed, each read once (a moment's count).
 * Context: any thread; nw + 1 relaxed loads, no lock.
 * Return: the count, 0 or more.
 */
int64_t udp__active_clients(const struct udp_relay *r);

/**
 * udp__share_of() - the share of a client holding @held bytes when
 * @active clients (perhaps not it) hold some: 7/8 of the budget divided
 * among them, counting it, at least r->floor.
 * Context: any thread; no shared state, no lock.
 * Return: the share in bytes.
 */
uint64_t udp__share_of(const struct udp_relay *r, uint64_t held, int64_t active);

/**
 * udp__client_admit() - whether @cl may take @bytes more, with @active
 * clients holding bytes (udp.c's essay, "Memory").
 * Context: any thread (the owner for a datagram, a queue's CPU for a
 * duplicate); one relaxed load of cl->held, no lock.
 * Return: 0 and in *@limit what the pool may charge the budget to, or
 * RD_CLIENT_SHARE.
 */
unsigned udp__client_admit(struct client *cl, uint64_t bytes, int64_t active, uint64_t *limit);

/**
 * udp__client_charge() - @cl holds @bytes more (a packet admitted); one
 * that held nothing becomes active on the calling thread's slot.
 * Context: any thread; an atomic add on cl->held, a relaxed add on the
 * caller's slot; no lock.
 * Return: nothing.
 */
void udp__client_charge(struct client *cl, uint64_t bytes);

/**
 * udp__client_uncharge() - @cl holds @bytes less (its packet freed).
 * Context: any thread, atomics as udp__client_charge().
 * Return: nothing.
 */
void udp__client_uncharge(struct client *cl, uint64_t bytes);

/**
 * udp__rpkt_free() - free @p: its big buffer, back to its slot, its
 * client's charge and reference.
 * Context: any thread; the pool's atomics, udp__client_uncharge()'s,
 * udp__client_put()'s; no lock.
 * Return: nothing.
 */
void udp__rpkt_free(struct udp_relay *r, struct rpkt *p);

/* ------------------------------------------------ udp_client.c: the clients */

/**
 * udp__client_hold() - another reference on @cl.
 * Context: any thread holding one; a relaxed atomic add.
 * Return: nothing.
 */
void udp__client_hold(struct client *cl);

/**
 * udp__client_put() - drop a reference on @cl; the last one closes its
 * upstream socket, gives back its places (r->nclients, its address's
 * count) and frees it.
 * Context: any thread holding one; an acq_rel atomic subtraction; the
 * last one takes its address's stripe lock (a leaf: any lock may be held).
 * Return: nothing.
 */
void udp__client_put(struct client *cl);

/**
 * udp__client_unlink() - take @cl out of its owner @w's table and epoll
 * set (nothing if it is not linked).
 * Context: the owner's thread with @cl's stripe lock held (udp_client.c's
 * tab_lock()), or main after the workers are joined (no lock).
 * Return: nothing.
 */
void udp__client_unlink(struct worker *w, struct client *cl);

/**
 * udp__client_get() - the client for @addr: @w's own, another worker's
 * (under --steer-cpu a client's datagrams may come in on any worker's
 * socket), or a new one of @w's; with a reference for the caller (the
 * packet's) and its last_ns now.
 * Context: @w's thread; its own clients without a lock, the others' and a
 * new one under @addr's stripe lock.
 * Return: the client; NULL with the drop reason in *@why.
 */
struct client *udp__client_get(struct worker *w, const struct sockaddr_storage *addr,
			       socklen_t alen, unsigned *why);

/**
 * udp__from_self() - whether @a, a datagram's source on a listening
 * socket, is one of the relay's own upstream sockets: --to leads back to
 * --listen (a loop the command line could not see: a wildcard listener
 * and another local address).
 * Context: a worker; a relaxed load of the bitmap word, an acquire load of
 * the address's flag when the port's bit is set.  Return: true if so.
 */
bool udp__from_self(struct udp_relay *r, const struct sockaddr_storage *a);

/* ------------------------------------------------ udp.c: the workers */

/**
 * udp__worker_main() - worker @arg's loop (udp.c's essay, "Threads"),
 * until r->stop_now.
 * Context: the worker's own thread (pthread_create()'s start routine).
 * Return: NULL.
 */
void *udp__worker_main(void *arg);

/**
 * udp__kick_all() - wake every worker of @r (they recompute their
 * deadlines): a write on each one's eventfd.
 * Context: any thread.
 * Return: nothing.
 */
void udp__kick_all(struct udp_relay *r);

/*
 * udp__tc() - one tc command on @r's runtime, confined to device @dev
 * (pw_tc_dev(); NULL: any, pw_tc()) with @flags; tc's message in @err
 * without its last newline (strerror when tc gave none); then every
 * worker woken to see the change.  udp_relay_tc() and
 * udp_relay_tc_dev() are this.
 * Context: as udp_relay_tc().  Return: pw_tc()'s.
 */
int udp__tc(struct udp_relay *r, const char *dev, const char *cmd, unsigned flags, char *err,
	    size_t errlen);

/* ------------------------------------------------ udp_tx.c: the send path */

/**
 * udp__tx_flush() - send @w's batch in order and empty it; every packet
 * counted (out, or send_error) and freed (udp_tx.c's essay).
 * Context: @w's thread.
 * Return: nothing.
 */
void udp__tx_flush(struct worker *w);

/**
 * udp__dev_xmit() - the driver's xmit hook (struct pktdrv_cfg): a worker
 * batches @pkt, another thread sends it at once; either way it is counted
 * and freed.
 * Context: the thread running the queue (@self its slot).
 * Return: PKTDRV_KEPT.
 */
int udp__dev_xmit(struct pktdrv *drv, unsigned txq, struct ppkt *pkt, int self);

/**
 * udp__dev_drop() - the driver's drop hook: @pkt's client charge and
 * reference (the driver counted the drop and frees the packet).
 * Context: any thread acting on the device; atomics only.
 * Return: nothing.
 */
void udp__dev_drop(struct pktdrv *drv, struct ppkt *pkt, unsigned why, int self);

/**
 * udp__dev_clone_admit() - the driver's clone_admit hook: whether a netem
 * duplicate of @src taking @bytes fits its client's share and the budget;
 * refused, counted as clones_refused.
 * Context: under a queue lock on the CPU running it (main's for a tc
 * command); relaxed loads and a relaxed add.
 * Return: 0 admitted, -1 refused.
 */
int udp__dev_clone_admit(struct pktdrv *drv, const struct ppkt *src, size_t bytes, int self);

/**
 * udp__dev_clone() - the driver's clone hook: @copy (made and filled by
 * the driver) takes @src's client, direction, a reference and a charge;
 * counted as a clone.
 * Context: under a queue lock: no call into the layer.
 * Return: 0.
 */
int udp__dev_clone(struct pktdrv *drv, const struct ppkt *src, struct ppkt *copy, int self);

#endif /* PW_NETEM_UDP_PRIV_H */
