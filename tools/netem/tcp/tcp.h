/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's TCP data path (tools/netem/tcp/tcp.c): proxies that accept
 * TCP connections, connect each to an upstream server, and move the bytes
 * both ways through the proxy's toxics (tools/netem/toxic.h) with
 * toxiproxy's semantics, on worker threads that sleep on their sockets and
 * their pinned pinwheel timers at once.
 *
 * This header is the contract between that data path and its one caller,
 * the API's registry (tools/netem/api/proxy.c), which owns the proxies' names,
 * their JSON and their validation.
 *
 * Threads: tcp_plane_create/destroy and every tcp_proxy_* call from one
 * control thread at a time (the registry serialises them under its lock;
 * the main thread at start and stop); never from a plane worker.  A call
 * returns when it has taken effect: a listener is listening, a closed
 * proxy's connections are closed, a toxic list is the one every
 * connection uses for the chunks it reads from then on.
 */
#ifndef PW_NETEM_TCP_H
#define PW_NETEM_TCP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../toxic.h"

struct pw_runtime;

struct tcp_plane;
struct tcp_proxy;

struct tcp_plane_config {
	unsigned workers;         /* worker threads, one per CPU (0: one per CPU
				     this process may run on, sched_getaffinity) */
	size_t dir_bytes;         /* memory a direction of a connection may hold
				     (its chunks: bytes and headers) before the
				     proxy stops reading its source
				     (0: TCP_DEF_DIR_BYTES) */
	uint64_t max_bytes;       /* all connections' held memory together (0: no
				     bound); a direction holding less than a
				     reserve (64 KiB, or dir_bytes / 4 if less)
				     still reads, and a direction
				     with no toxic whose sink takes its bytes is
				     never stopped, so one slow proxy cannot stop
				     the others */
	struct pw_mem_budget *budget; /* NULL, or the budget max_bytes is: the
				     held memory is counted in its used (with
				     whatever else charges it: the server's tc
				     state, src/net/netmem.c), max_bytes is its
				     limit, and the plane's tc devices (and
				     tc_toxic_check()'s) charge it; it outlives
				     the plane */
	struct pw_runtime *sched_rt; /* where tc toxics' schedules keep their timers
				     (the server's scheduler: one runtime, one
				     worker for them all; NULL: a thread each) */
	uint64_t seed;            /* with has_seed: the seed of the connections'
				     random streams (toxiproxy's -seed); else
				     one drawn at create */
	int has_seed;
	int half_close;           /* 0: toxiproxy's close: once one direction's end
				     of stream is written, the other side is not
				     read any more and closes after what it holds;
				     1: TCP half-close, each direction ends on its
				     own source's EOF */
};
#define TCP_DEF_DIR_BYTES (256u << 10)

/**
 * tcp_plane_create() - start the workers (a pinwheel runtime of its own,
 * one CPU per worker, timers pinned).
 * Context: the control thread.  Return: 0; a negative errno with a
 * message in @err.
 */
int tcp_plane_create(const struct tcp_plane_config *cfg, struct tcp_plane **out, char *err,
		     size_t errlen);

/**
 * tcp_plane_destroy() - close every proxy (as tcp_proxy_close), stop the
 * workers, free @pl (NULL: nothing).
 * Context: the control thread.  Return: nothing.
 */
void tcp_plane_destroy(struct tcp_plane *pl);

/**
 * tcp_plane_runtime() - the pinwheel runtime @pl's workers run (for its
 * statistics: pw_stats_read(), pw_kick_stats_read()).
 * Context: any thread, while @pl lives.  Return: the runtime.
 */
struct pw_runtime *tcp_plane_runtime(const struct tcp_plane *pl);

/**
 * tcp_proxy_open() - listen on @listen (port 0: the kernel picks one; the
 * address bound is written to @bound), one SO_REUSEPORT socket a worker,
 * and proxy each accepted connection to @upstream (connected from the
 * worker that accepted it; refused or unreachable: the client's
 * connection is closed, as toxiproxy closes it).  No upstream (@upstream
 * NULL or @upstream_len 0: a name that does not resolve yet): each
 * connection accepted is closed at once, with no connect tried, and
 * counted in upstream_failed, until tcp_proxy_set_upstream() gives one.
 * @name is for messages
 * and statistics only.  The proxy starts with no toxic.  A port another
 * socket holds (this plane's, another process's, even one that set
 * SO_REUSEPORT itself) is refused: the group is bound only after a plain
 * socket (no SO_REUSEPORT) bound the address, so no one shares it.
 * Context: the control thread.
 * Return: 0; -EADDRINUSE, -EACCES, ... with a message naming the address
 * in @err.
 */
int tcp_proxy_open(struct tcp_plane *pl, const char *name, const struct sockaddr *listen,
		   socklen_t listen_len, const struct sockaddr *upstream, socklen_t upstream_len,
		   struct tcp_proxy **out, struct sockaddr_storage *bound, socklen_t *bound_len,
		   char *err, size_t errlen);

/**
 * tcp_proxy_set_upstream() - where connections accepted from now on go
 * (@upstream NULL or @upstream_len 0: nowhere, they are closed at once,
 * as tcp_proxy_open() says).
 * Context: the control thread (the workers read it under the proxy's
 * upstream mutex).  Return: 0; -EINVAL (not IPv4 or IPv6).
 */
int tcp_proxy_set_upstream(struct tcp_proxy *p, const struct sockaddr *upstream,
			   socklen_t upstream_len);

/**
 * tcp_proxy_set_toxics() - the proxy's toxics from now on: @n of them, both
 * streams, each stream's in the order given (the order they were added,
 * toxiproxy's chain order).  The array is copied (a tc toxic's strings
 * too).  Live connections switch to the new list without losing, doubling
 * or reordering a byte: what a removed toxic held moves on, what a changed
 * one holds keeps the time it was given.  Whether a toxic applies to a
 * connection (its toxicity) is drawn per connection and toxic, from the
 * toxic's seed when it has one.
 * A tc toxic gets a device per proxy and stream whose qdiscs all the
 * proxy's connections share (a rate shared across connections), made
 * here; one removed or changed drains through its old device, which goes
 * once empty (tools/netem/tc_toxic.c).
 * A kept toxic whose attributes changed restarts as toxiproxy's does
 * (tools/netem/tcp/stream.c: stream_switch()).  The switch is all or nothing:
 * what it needs is allocated before any worker sees it.
 * Context: the control thread.
 * Return: 0; -EINVAL with a message in @err (a tc toxic's words that tc
 * refuses, with tc's message, or netem features a byte stream cannot
 * carry); -ENOMEM; -EOPNOTSUPP for what this data path does not do, said
 * in @err.
 */
int tcp_proxy_set_toxics(struct tcp_proxy *p, const struct toxic *t, unsigned n, char *err,
			 size_t errlen);

/**
 * tcp_proxy_close() - stop listening and close every connection of the
 * proxy (client and upstream sockets: as toxiproxy does when a proxy is
 * deleted or disabled); the bytes they held are counted (dropped_bytes).
 * @p is freed.
 * Context: the control thread.  Return: nothing.
 */
void tcp_proxy_close(struct tcp_proxy *p);

struct tcp_proxy_stats;
/**
 * tcp_proxy_close_stats() - tcp_proxy_close(), and @final (unless NULL)
 * gets @p's counters as the close left them: what its connections held
 * then counted in bytes_dropped, held 0, active 0 (what the registry
 * reports for a proxy deleted or disabled with data in flight).
 * Context: the control thread.  Return: nothing; @p is freed.
 */
void tcp_proxy_close_stats(struct tcp_proxy *p, struct tcp_proxy_stats *final);

/*
 * The achieved delay's histogram: bucket 0 below 16 us, then 8 buckets an
 * octave (each 1/8 of its octave wide) up to 2^37 ns, the last bucket
 * taking anything longer.  8 bytes a bucket, per direction, proxy and
 * worker.  A quantile is read inside its bucket, interpolated by rank
 * between the bucket's bounds narrowed to the smallest and largest delay
 * seen, so it never reads below the one or above the other (a bucket's
 * middle alone could put the median of delays of 50.0-50.3 ms at 48.2).
 */
#define TCP_DELAY_MIN_SHIFT 14
#define TCP_DELAY_OCTAVES   23
#define TCP_DELAY_BUCKETS   (1 + TCP_DELAY_OCTAVES * 8)

/* The bucket of a delay of @ns. */
static inline unsigned tcp_delay_bucket(uint64_t ns)
{
	if (ns < (1ull << TCP_DELAY_MIN_SHIFT))
		return 0;
	unsigned o = 63u - (unsigned)__builtin_clzll(ns);
	if (o >= TCP_DELAY_MIN_SHIFT + TCP_DELAY_OCTAVES)
		return TCP_DELAY_BUCKETS - 1;
	return 1 + (o - TCP_DELAY_MIN_SHIFT) * 8 + (unsigned)((ns >> (o - 3)) & 7);
}

/* The lower bound of bucket @i, ns (bucket i + 1's is its upper bound;
 * the last bucket has none). */
static inline uint64_t tcp_delay_bucket_lo(unsigned i)
{
	if (i == 0)
		return 0;
	unsigned o = TCP_DELAY_MIN_SHIFT + (i - 1) / 8, sub = (i - 1) % 8;
	return (1ull << o) + ((uint64_t)sub << (o - 3));
}

/* A proxy's statistics: counters since it was opened. */
struct tcp_dir_stats {
	uint64_t bytes_in, bytes_out;   /* read from the source, written to the sink */
	uint64_t chunks_in, chunks_out; /* reads that returned bytes; writes */
	uint64_t bytes_cut;             /* cut by a toxic on purpose (limit_data,
					   timeout, reset_peer) */
	uint64_t bytes_dropped;         /* held when the connection closed */
	uint64_t held;                  /* held now */
	uint64_t held_mem;              /* what it costs in memory now (chunks'
					   headers and allocations: what
					   dir_bytes and max_bytes bound) */
	uint64_t delay_count;           /* chunks whose added delay is summed below */
	uint64_t delay_sum_ns, delay_max_ns; /* written - read time */
	uint64_t delay_min_ns;          /* the smallest (valid while delay_count
					   is not 0) */
	uint64_t delay_hist[TCP_DELAY_BUCKETS]; /* the same, by tcp_delay_bucket()
					   (p50/p99 in the API's stats) */
	uint64_t stalls;                /* times the source was not read: held_mem
					   at dir_bytes, or max_bytes reached */
	uint64_t rate_ns;               /* the bandwidth limit's judged windows'
					   time (stream.h's struct stream_rate:
					   per connection, summed) */
	uint64_t rate_bytes;            /* the bytes it released in them */
};
struct tcp_proxy_stats {
	uint64_t accepted, active, closed;
	uint64_t upstream_failed;       /* connect refused or unreachable, or no
					   upstream address yet */
	uint64_t fd_exhausted;          /* out of descriptors (EMFILE, ENFILE):
					   an accept that failed (its listener
					   paused until a retry round) or an
					   accepted connection closed for want
					   of its upstream socket */
	struct tcp_dir_stats dir[TOXIC_NSTREAMS]; /* [TOXIC_UPSTREAM], [TOXIC_DOWNSTREAM] */
};

/**
 * tcp_proxy_stats() - @p's counters now (each exact; not one instant).
 * Context: the control thread.  Return: nothing (@s filled; zeros for
 * @p NULL).
 */
void tcp_proxy_stats(struct tcp_proxy *p, struct tcp_proxy_stats *s);

/**
 * tcp_proxy_tc_report() - the reports of @p's tc toxics' devices on
 * stream @stream (tools/netem/tc_toxic.c), a JSON array (text), one
 * object per tc toxic of the stream: {"toxic","device","qdiscs": tc -s -j
 * qdisc show with each qdisc's accuracy (achieved sojourn, rate, loss and
 * the host's lateness beside the configured), "check": "pass", "fail" or
 * "not judged" with "why" (include/pinwheel/net.h's metric and
 * tolerance), and "schedule": {"step","line","loops",...} when the toxic
 * has one}; "[]" when the stream has none.
 * Context: the control thread.  Return: the text (malloc'd); NULL (no
 * memory, or @p NULL).
 */
char *tcp_proxy_tc_report(struct tcp_proxy *p, enum toxic_stream stream);

struct pw_runtime;

/**
 * tcp_tc_schedule_check() - would the plane take tc toxic @t, its words
 * and its schedule?  tc_toxic_check() for a byte stream: the words run
 * confined to a device of their own, reading no file, on a runtime of
 * their own (@scratch is not used: each check makes its own, so nothing
 * of a check outlives it); the configuration read back refused if it
 * would lose or reorder bytes, after the words and after each step of
 * the schedule.  Other toxics: 0.  For the registry's validation of any
 * toxic, on an enabled proxy or a disabled one (the plane runs the same
 * check when it sets the toxic).
 * Context: the control thread.  Return: 0; -EINVAL with "toxic NAME: ..."
 * naming the bad token (a batch line, "attributes.schedule:LINE") in
 * @err; -ENOMEM.
 */
int tcp_tc_schedule_check(struct pw_runtime *scratch, const struct toxic *t, char *err,
			  size_t errlen);

/**
 * tcp_raise_nofile() - raise this process's open-file soft limit to its
 * hard limit (each connection costs two descriptors), as the UDP path
 * does; for the server to call once before the plane takes connections.
 * Context: the main thread, at start.  Return: 0 (raised, or already at
 * the hard limit); a negative errno from getrlimit/setrlimit.
 */
int tcp_raise_nofile(void);

#endif /* PW_NETEM_TCP_H */
