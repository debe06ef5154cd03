/* SPDX-License-Identifier: MIT */
/*
 * A toxic, as toxiproxy's API defines it, in plain C: the value the API's
 * registry (tools/netem/api/proxy.c) validates and keeps, and the TCP data
 * path (tools/netem/tcp/tcp.c) applies.  No behaviour lives here: the
 * attributes' meaning is written beside each, toxiproxy's units kept
 * (milliseconds, KB/s, bytes, microseconds), and the registry refuses a
 * value outside the ranges below before a data path ever sees it.
 *
 * Threads: plain data; whoever holds one owns it.  Locks: none.
 */
#ifndef PW_NETEM_TOXIC_H
#define PW_NETEM_TOXIC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum toxic_type {
	TOXIC_LATENCY,      /* latency, jitter (ms) */
	TOXIC_BANDWIDTH,    /* rate (KB/s: 1000 bytes a second) */
	TOXIC_SLOW_CLOSE,   /* delay (ms) */
	TOXIC_TIMEOUT,      /* timeout (ms) */
	TOXIC_RESET_PEER,   /* timeout (ms) */
	TOXIC_SLICER,       /* average_size, size_variation (bytes), delay (us) */
	TOXIC_LIMIT_DATA,   /* bytes */
	TOXIC_TC,           /* qdisc or batch: tc words (pinwheel's own) */
	TOXIC_NTYPES
};

/* toxiproxy's "stream": upstream is client -> server, downstream server ->
 * client.  Its default is downstream. */
enum toxic_stream { TOXIC_UPSTREAM = 0, TOXIC_DOWNSTREAM = 1, TOXIC_NSTREAMS = 2 };

#define TOXIC_NAME_MAX 128   /* bytes, with the NUL */

struct toxic {
	char name[TOXIC_NAME_MAX];   /* default: TYPE_STREAM, as toxiproxy */
	enum toxic_type type;
	enum toxic_stream stream;
	double toxicity;             /* 0..1: the chance it applies to a connection */
	uint64_t seed;               /* pinwheel's: the random stream of this toxic */
	int has_seed;
	union {
		struct { int64_t latency_ms, jitter_ms; } latency;
		struct { int64_t rate_kbps; } bandwidth;
		struct { int64_t delay_ms; } slow_close;
		struct { int64_t timeout_ms; } timeout, reset_peer;
		struct { int64_t average_size, size_variation, delay_us; } slicer;
		struct { int64_t bytes; } limit_data;
		struct {
			char *qdisc;         /* what follows "qdisc add dev DEV root", or NULL */
			char *batch;         /* whole tc commands, one a line, or NULL */
			char *schedule;      /* timed tc commands (a schedule's text,
						the device named by any word after
						"dev"), or NULL */
		} tc;                    /* exactly one of qdisc and batch, schedule
					    optional; owned (malloc'd) */
	} a;
};

/* The ranges the registry accepts (a value outside: 400, named). */
#define TOXIC_MAX_MS        (24ll * 3600 * 1000)  /* a day */
#define TOXIC_MAX_RATE_KBPS (100ll * 1000 * 1000) /* 100 GB/s */
#define TOXIC_MAX_BYTES     (1ll << 50)

/* toxiproxy's name of @t ("latency", ... "limit_data", "tc"); NULL past the
 * end.  Any thread. */
const char *toxic_type_name(enum toxic_type t);

/**
 * toxic_tc_next_line() - the next command of a tc toxic's batch text, read
 * as tc -batch reads a line: '#' starts a comment, blanks around it go, a
 * leading "tc" word is dropped, blank lines are skipped.  *@p walks the
 * text, *@line counts its lines (the command's line when it returns 1).
 * Context: any thread.
 * Return: 1 with the command at *@cmd, *@len bytes (not NUL-terminated);
 * 0 at the end of the text.
 */
static inline int toxic_tc_next_line(const char **p, unsigned *line, const char **cmd,
				     size_t *len)
{
	while (**p) {
		const char *b = *p, *nl = strchr(b, '\n');
		size_t n = nl ? (size_t)(nl - b) : strlen(b);
		*p = nl ? nl + 1 : b + n;
		(*line)++;
		const char *hash = memchr(b, '#', n);
		if (hash)
			n = (size_t)(hash - b);
		while (n && (*b == ' ' || *b == '\t')) {
			b++;
			n--;
		}
		while (n && (b[n - 1] == ' ' || b[n - 1] == '\t' || b[n - 1] == '\r'))
			n--;
		if (n >= 3 && !strncmp(b, "tc", 2) && (b[2] == ' ' || b[2] == '\t')) {
			b += 3;
			n -= 3;
		}
		if (n) {
			*cmd = b;
			*len = n;
			return 1;
		}
	}
	return 0;
}

/* How many of the @n bytes at @s a message may show so that the cut does
 * not split a UTF-8 character: @n, less a last character that does not
 * end within them (for "%.*s" cuts, and for text a full buffer cut).
 * Any thread. */
static inline size_t toxic_utf8_fit(const char *s, size_t n)
{
	size_t i = n;
	while (i && n - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
		i--;
	unsigned char c = i ? (unsigned char)s[i - 1] : 0;
	size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	return i && n - (i - 1) < need ? i - 1 : n;
}

#endif /* PW_NETEM_TOXIC_H */
