/* SPDX-License-Identifier: MIT */
/*
 * What the TCP plane's files share (tools/netem/tcp/tcp.c: the plane, its
 * workers, commands and proxies; tools/netem/tcp/conn.c: the connections;
 * tools/netem/tcp/listen.c: the listeners and accepts):
 * the structures, the per-worker counters' helpers, and conn.c's calls.
 * Private to those files and tools/netem/tc_toxic.c (the tc toxic's
 * devices, which hand pieces back to a connection's worker).
 *
 * Threads: a worker's structures (its slots, connections, run list) are
 * its own; the control thread reaches them only through commands
 * (tcp.c).  Locks: as tcp.c says.
 */
#ifndef PW_NETEM_TCP_PRIV_H
#define PW_NETEM_TCP_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include <pinwheel/hrtimer.h>

#include "stream.h"
#include "tc_dev.h"
#include "tcp.h"

#define READ_MAX      (256u << 10) /* bytes one read asks for at most (docs/relay.md: why not 64 KiB) */
#define MAX_SLEEP_NS  100000000ull
#define RETRY_NS      1000000ull  /* a direction stopped by max_bytes or memory */
#define SERVICE_ROUNDS 16         /* read/write rounds a connection gets per turn */
#define TURN_WRITES   64          /* writes a connection gets per turn, at most */
#define TURN_BYTES    (256u << 10) /* bytes it moves per turn, at most (then the
				     others on its worker get their turn) */
#define READ_RESERVE  READ_MAX    /* a direction holding (mem) less than this
				     (or a quarter of dir_bytes, if less:
				     pl->reserve) reads even past max_bytes */
#define BUF_CACHE     (2u << 20) /* bytes of free chunks a worker keeps for reuse */
#define ACCEPT_BATCH  64
#define WRITE_IOV     64

enum tag_kind { TAG_KICK, TAG_LISTEN, TAG_CLIENT, TAG_UPSTREAM };
struct tag {
	enum tag_kind kind;
};

struct conn;
struct slot;
struct worker;

struct dir {
	struct stream s;
	struct conn *c;
	int src, dst;              /* the sockets (the connection's) */
	uint8_t can_read, can_write, done, stalled;
	uint8_t switch_pending;    /* its stream still has an older toxic list
				      (the switch found no memory: retried) */
	struct pw_hrtimer tm;
	uint64_t armed_ns;         /* UINT64_MAX: not armed */
	uint64_t rep_cut, rep_held, rep_mem; /* what the statistics have seen of s */
	uint64_t rep_rwin, rep_rbytes; /* of s.rate's windows and bytes */
	struct tcp_dir_stats *st;  /* the slot's counters */
	struct stream_tc_ops tcops; /* its tc stages' way to their devices */
};

enum conn_state { CONN_CONNECTING, CONN_OPEN, CONN_CLOSED };

struct conn {
	struct tag ctag, utag;
	int cfd, ufd;
	enum conn_state state;
	int linger0;               /* close with a reset */
	int on_run, in_service, dead; /* freed by whoever lets go last */
	int on_stall;              /* on the worker's stalled list */
	struct conn *stall_next;
	unsigned tc_refs;          /* its pieces in tc devices (tc_toxic.c) */
	struct slot *sl;
	struct conn *prev, *next;  /* the slot's connections */
	struct conn *run_next;
	struct dir d[TOXIC_NSTREAMS];
};

/* A proxy on one worker: its listener, connections, toxics, counters. */
struct slot {
	struct tag tag;
	int lfd;
	int paused;                /* lfd out of the epoll set (EMFILE) */
	struct slot *pause_next;   /* the worker's paused listeners */
	struct tcp_proxy *p;
	struct worker *w;
	struct conn *conns;
	struct toxic *tox;         /* the worker's copy of the list */
	const struct toxic **per[TOXIC_NSTREAMS];
	unsigned nper[TOXIC_NSTREAMS];
	void **tcper[TOXIC_NSTREAMS]; /* per[s][k]'s tc device, or NULL */
	struct tcp_proxy_stats st; /* written by the worker only */
};

enum cmd_op { CMD_OPEN, CMD_TOXICS, CMD_CLOSE };

/* A slot's toxic list, made whole by the control thread before any worker
 * sees it (so a switch cannot fail half way); the worker takes it over. */
struct toxic_lists {
	struct toxic *tox;         /* the copy (tc words cleared) */
	const struct toxic **per[TOXIC_NSTREAMS];
	void **tcper[TOXIC_NSTREAMS]; /* per[s][k]'s tc device, or NULL */
	unsigned nper[TOXIC_NSTREAMS];
};

struct waiter {
	pthread_mutex_t m;
	pthread_cond_t cv;
	unsigned left;
	int err;
};

struct cmd {
	struct cmd *next;
	enum cmd_op op;
	struct slot *sl;
	struct toxic_lists *tl;    /* CMD_TOXICS: the worker's to take over */
	struct waiter *wt;
};

struct worker {
	struct tcp_plane *pl;
	unsigned id;
	pthread_t th;
	int started;
	int ep, kick_fd;
	struct tag kick_tag;
	pthread_mutex_t qlock;
	struct cmd *qhead, *qtail;
	int qpending;              /* atomic: commands queued */
	struct conn *run;          /* connections with work */
	struct conn *stalled;      /* a direction waits for memory or max_bytes */
	struct slot *paused;       /* listeners out of the epoll set (EMFILE) */
	uint64_t retry_at;         /* when the stalled and paused are tried again */
	unsigned char *buf;        /* READ_MAX: the direct path's reads */
	struct tc_pkt *tc_back;    /* atomic: pieces tc devices gave back (tc_toxic.c) */
	int busy;                  /* its work queue ran: do not sleep */
	int cpu;                   /* the CPU it is pinned to; -1: not pinned */
};

struct tcp_plane {
	struct pw_runtime *rt;
	struct pw_runtime *sched_rt; /* tcp_plane_config's (tc_toxic.c) */
	unsigned nw;
	struct worker *w;
	size_t dir_bytes;
	uint64_t max_bytes;
	uint64_t reserve;          /* READ_RESERVE or dir_bytes / 4, the least */
	uint64_t held_total;       /* atomic: all directions' held memory (chunk_mem) */
	uint64_t *held;            /* atomic: &held_total, or the budget's used
				      (tcp_plane_config.budget): what max_bytes bounds */
	struct pktpool bufs;       /* the chunks: a slot per worker (bare buffers
				      only, no packets); see tcp.c */
	int half_close;
	int stop;                  /* atomic */
	uint64_t seed;
	pthread_mutex_t lock;      /* the proxy list */
	struct tcp_proxy *proxies;
	uint64_t tc_serial;        /* tc devices made (names); control thread */
};

struct tcp_proxy {
	struct tcp_plane *pl;
	struct tcp_proxy *next;
	char name[64];
	pthread_mutex_t ulock;     /* up, uplen */
	struct sockaddr_storage up;
	socklen_t uplen;
	struct sockaddr_storage bound;
	socklen_t boundlen;
	uint64_t serial;           /* atomic: connections accepted */
	struct tc_dev *tcdevs;     /* its tc toxics' devices (control thread) */
	struct tc_dev *tcretired;  /* removed or changed: destroyed once empty */
	struct slot slot[];        /* one per worker */
};

/* Add @v to a counter only this thread writes (readers load it relaxed). */
static inline void ctr_add(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static inline uint64_t ctr_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Is @c still referenced (by a list, a turn or a tc device)?  Whoever
 * lets go of it last frees it once it is dead.  @c's worker. */
static inline int conn_busy(const struct conn *c)
{
	return c->on_run || c->in_service || c->tc_refs || c->on_stall;
}

/* Put @c on @w's stalled list (once): it gets a turn at the next retry
 * round.  @w's thread. */
static inline void stall_add(struct worker *w, struct conn *c)
{
	if (c->on_stall)
		return;
	c->on_stall = 1;
	c->stall_next = w->stalled;
	w->stalled = c;
}

/* Put @c on @w's run list (once).  @w's thread. */
static inline void run_add(struct worker *w, struct conn *c)
{
	if (c->on_run)
		return;
	c->on_run = 1;
	c->run_next = w->run;
	w->run = c;
}

/**
 * tcp_conn_new() - a connection for the client socket @cfd accepted on
 * @sl: its upstream connect started, both sockets in the worker's epoll
 * set.  Failures close @cfd and are counted (upstream_failed, closed).
 * Context: @sl's worker.  Return: the connection; NULL (closed).
 */
struct conn *tcp_conn_new(struct slot *sl, int cfd, uint64_t now);

/**
 * tcp_conn_service() - give @c a turn: finish its connect, read, pump,
 * write both ways; it may close (and be freed once off the run list).
 * Context: @c's worker, from its run list (c->in_service set).
 */
void tcp_conn_service(struct conn *c);

/**
 * tcp_conn_close() - close @c's sockets, count what it held as dropped,
 * unlink it; freed now or when the run list lets go of it.
 * Context: @c's worker.
 */
void tcp_conn_close(struct conn *c);

/**
 * tcp_slot_set_toxics() - @sl takes the lists @tl over (its connections to
 * come use them) and its connections switch to them; one whose switch
 * finds no memory keeps its old list until a retry round switches it.
 * Context: @sl's worker, running a command.  Return: via @pending: 1 when
 * some connection still has the old list (its tc devices must stay).
 */
void tcp_slot_set_toxics(struct slot *sl, struct toxic_lists *tl, int *pending);

/**
 * tcp_conn_switch_pending() - switch @c's directions still on an older
 * toxic list to their slot's list.  Context: @c's worker.
 * Return: 0; -ENOMEM (still pending: @c is on the stalled list).
 */
int tcp_conn_switch_pending(struct conn *c);

/**
 * tcp_slot_close() - @sl's listener out and closed, every connection
 * closed (what they held counted dropped), its toxics freed.
 * Context: @sl's worker, running a command.
 */
void tcp_slot_close(struct slot *sl);

/**
 * tcp_listen_one() - a listening socket of a proxy's group on @sa: the
 * @first binds before it sets SO_REUSEPORT, the others join it
 * (tools/netem/tcp/listen.c).
 * Context: the control thread.  Return: the socket; a negative errno.
 */
int tcp_listen_one(const struct sockaddr *sa, socklen_t len, int first);

/**
 * tcp_listen_collide() - would @a (about to be bound) take the port of
 * @b (bound)?  The same port on the same address, or either a wildcard.
 * Context: any thread.  Return: 1 or 0.
 */
int tcp_listen_collide(const struct sockaddr *a, const struct sockaddr *b);

/**
 * tcp_listen_accept() - accept up to ACCEPT_BATCH connections on @sl's
 * listener, a connection each (tcp_conn_new()); out of descriptors, the
 * listener leaves the epoll set for the worker's paused list.
 * Context: @sl's worker.
 */
void tcp_listen_accept(struct slot *sl);

/**
 * tcp_listen_resume() - put @w's paused listeners back in its epoll set
 * (those that fail stay paused for the next retry round).
 * Context: @w's thread, in a retry round.
 */
void tcp_listen_resume(struct worker *w);

#endif /* PW_NETEM_TCP_PRIV_H */
