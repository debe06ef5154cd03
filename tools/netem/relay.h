/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's configuration: the command line, addresses, and the tc
 * commands each direction is set up with (tools/netem/config.c).  Pure
 * functions of their arguments: no runtime, no sockets, no globals, so
 * the fuzzer (fuzz/fuzz_relay.c) and the tests can call them.
 * Threads: whoever calls them (the main thread, the fuzzer): every
 * function here may be called from any thread (Context: any thread, for
 * each); no locks.
 */
#ifndef PW_RELAY_H
#define PW_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct pw_runtime;
struct pw_mem_budget;

/* The two directions: client -> server ("up"), server -> client ("down"). */
enum relay_dir { RELAY_UP = 0, RELAY_DOWN = 1, RELAY_NDIR = 2 };

/* --map ADDR[:PORT]=MAJ:MIN: a client's datagrams, both ways, get
 * pkt->priority MAJ:MIN (htb's classid, pfifo_fast's band), as a tc filter
 * would classify them. */
struct relay_map {
	struct sockaddr_storage addr; /* port 0 in it: any port */
	int any_port;
	uint32_t classid;
};
#define RELAY_MAX_MAPS 64
#define RELAY_MAX_ALLOW_HOSTS 16  /* --allow-host names */

/* What the command line asks for. */
struct relay_config {
	struct sockaddr_storage listen, to;
	socklen_t listen_len, to_len;
	const char *spec[RELAY_NDIR];  /* --up / --down: what follows "root" */
	const char *batch[RELAY_NDIR]; /* --up-batch / --down-batch: file names */
	int per_queue;                 /* --per-queue: the spec per TX queue under mq */
	int steer_cpu;                 /* --steer-cpu: a datagram to the worker of its CPU */
	unsigned workers;              /* --workers (0: one per online CPU) */
	uint64_t seed;                 /* --seed */
	int has_seed;
	double stats_s;                /* --stats (0: only at exit) */
	int json;                      /* --json */
	unsigned max_clients;          /* --max-clients */
	unsigned max_clients_per_addr; /* --max-clients-per-addr (0: no per-address cap) */
	double idle_s;                 /* --idle: a client mapping's idle timeout */
	unsigned drain_ms;             /* --drain: how long a stop sends queued packets */
	unsigned max_packets;          /* --max-packets: packets a worker may hold (0: from the budget) */
	uint64_t max_bytes;            /* --max-bytes: the relay's byte budget, all workers */
	struct relay_map map[RELAY_MAX_MAPS]; /* --map, in the order given */
	unsigned nmap;
	int help;                      /* --help */
	const char *schedule[RELAY_NDIR]; /* --up-schedule / --down-schedule: file names */
	int accuracy;                  /* --accuracy (or --check) */
	int no_files;                  /* words from an API client: PW_TC_NO_FILES */
	struct pw_mem_budget *tc_budget; /* what the relay's tc state charges
					 * (pw_net_set_budget(); NULL: none) */
	struct pw_runtime *sched_rt;   /* with --api: the server's scheduler, where the
					  API's schedules keep their timers (NULL: a
					  thread each) */
	int check;                     /* --check: exit 3 when the achieved left the configured */
	int api;                       /* --api given: serve toxiproxy's HTTP API (server.c) */
	struct sockaddr_storage api_addr; /* --api ADDR:PORT */
	socklen_t api_len;
	const char *config_file;       /* --config FILE: proxies to create at start (with --api) */
	const char *allow_host[RELAY_MAX_ALLOW_HOSTS]; /* --allow-host NAME (with --api) */
	unsigned nallow_host;
	uint64_t tcp_buffer;           /* --tcp-buffer: bytes a TCP direction holds at most */
	/* toxiproxy-server's command line (flags.c) */
	const char *api_host, *api_port; /* -host, -port as given (NULL: not given) */
	int api_resolve;               /* API mode from -host/-port or no relay option: the
					  caller fills api_addr (netem_api_listen_addr()) */
	int proxy_metrics;             /* -proxy-metrics: toxiproxy's series at /metrics */
	int runtime_metrics;           /* -runtime-metrics: the process's and the runtimes' */
	int version;                   /* -version */
	int metrics;                   /* --metrics given: the relay serves GET /metrics */
	struct sockaddr_storage metrics_addr; /* --metrics ADDR:PORT */
	socklen_t metrics_len;
};

/* Defaults. */
#define RELAY_MAX_WORKERS   64
#define RELAY_DEF_CLIENTS   4096
#define RELAY_DEF_CLIENTS_PER_ADDR 64  /* --max-clients-per-addr: docs/relay.md says why */
#define RELAY_DEF_IDLE_S    60.0
#define RELAY_DEF_DRAIN_MS  1000
#define RELAY_DEF_BYTES     (256ull << 20)  /* --max-bytes */
#define RELAY_MIN_BYTES     (128ull << 10)
#define RELAY_MAX_BYTES     (1ull << 40)
#define RELAY_DEF_TCP_BUFFER (256ull << 10)  /* --tcp-buffer */
#define RELAY_MIN_TCP_BUFFER (4ull << 10)
#define RELAY_MAX_TCP_BUFFER (1ull << 30)

/**
 * relay_parse_bytes() - "BYTES" with an optional binary suffix (k, m, g,
 * any case, optionally followed by "iB" or "B": 256m, 256MiB, 1G) into
 * *@out, within @lo..@hi.  Return: 0; -1 with a message naming @opt and
 * the value in @err.  Any thread.
 */
int relay_parse_bytes(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out,
		      char *err, size_t errlen);

/**
 * relay_parse_args() - fill @cfg from @argc/@argv (argv[0] is the program).
 * Return: 0; -1 with a message naming the bad option or value in @err.
 * Nothing is opened (batch files are read by relay_dir_cmds()).
 */
int relay_parse_args(int argc, char **argv, struct relay_config *cfg, char *err, size_t errlen);

/**
 * relay_parse_addr() - "A.B.C.D:PORT", "[V6]:PORT" or "HOST:PORT" with a
 * numeric host into @ss.  Return: 0; -1 with the reason in @err.
 */
int relay_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		     size_t errlen);

/* A list of tc commands, each with where it came from ("--up", "FILE:LINE"). */
struct relay_cmds {
	char **cmd;
	char **where;
	size_t n, cap;
};

void relay_cmds_free(struct relay_cmds *c);

/**
 * relay_dir_cmds() - the tc commands that set up direction @dir's device
 * @dev (of @ntxq TX queues): from the spec ("qdisc add dev DEV root
 * SPEC", or with per_queue an mq root and the spec under each of its
 * classes), then the batch file's lines (@batch_text: the file's text,
 * NULL when there is none; @batch_name names it in messages).  Batch
 * lines are read as tc -batch reads them ('#' comments, '\' joins lines,
 * a leading "tc" word dropped, blank lines skipped).  With a seed, every
 * netem that names none gets " seed N", N distinct per qdisc.
 * @change: the SIGHUP form: batch lines only, "qdisc add|replace" and
 * "class add|replace" turned into "... change".
 * Return: 0; -1 with a message in @err (out of memory).
 */
int relay_dir_cmds(const struct relay_config *cfg, enum relay_dir dir, const char *dev,
		   unsigned ntxq, const char *batch_text, const char *batch_name, int change,
		   struct relay_cmds *out, char *err, size_t errlen);

/**
 * relay_map_lookup() - the classid of the first --map entry @addr
 * matches (same family and address; same port unless the entry has none),
 * or 0.
 */
uint32_t relay_map_lookup(const struct relay_config *cfg, const struct sockaddr_storage *addr);

/**
 * relay_is_own_address() - whether datagrams sent to @to would reach a
 * socket bound to @listen (the same port, and the same address, or a
 * wildcard @listen and a loopback or wildcard @to of a family it takes):
 * a relay sending to itself, a loop.  Port 0 in @listen: never.
 */
int relay_is_own_address(const struct sockaddr_storage *listen, const struct sockaddr_storage *to);

/* Format @ss as "A.B.C.D:PORT" or "[V6]:PORT". */
/* Whether @s has the word @w, separated as tc separates words (blanks,
 * tabs, CR, LF).  Any thread. */
int relay_has_word(const char *s, const char *w);

void relay_format_addr(const struct sockaddr_storage *ss, char *buf, size_t len);

/**
 * relay_read_file() - a text file (batch file, schedule, --config) whole,
 * at most 64 MiB and no NUL byte, into a malloc'd NUL-terminated buffer.
 * Context: any thread.  Return: the text; NULL with the reason, naming
 * @path, in @err.
 */
char *relay_read_file(const char *path, char *err, size_t errlen);

/* The --help text. */
extern const char relay_help_text[];
/* the version -version prints (the project's: CMakeLists.txt) */
extern const char relay_version[];

#endif /* PW_RELAY_H */
