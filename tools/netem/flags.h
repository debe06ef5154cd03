/* SPDX-License-Identifier: MIT */
/*
 * Go's flag syntax, which toxiproxy-server's command line follows, for
 * pinwheel-netem's (tools/netem/flags.c has the rules).  Threads: any
 * (Context: any thread, for each).  Locks: none.
 */
#ifndef PW_NETEM_FLAGS_H
#define PW_NETEM_FLAGS_H

#include <stdint.h>
#include <sys/socket.h>

/* toxiproxy-server's defaults: where its API listens without -host/-port */
#define NETEM_TOXI_DEF_HOST "localhost"
#define NETEM_TOXI_DEF_PORT "8474"

/* One argument split as Go's flag package splits it. */
struct netem_flag {
	char name[48];       /* without its dashes, up to '=' */
	const char *value;   /* after '=' (inside the argument), or NULL */
};

enum {
	NETEM_FLAG_BAD = -1, /* "---x", "-=x": bad flag syntax */
	NETEM_FLAG_NONE = 0, /* no flag: "x", "-" (the flags end before it) */
	NETEM_FLAG_OK = 1,   /* a flag: @f filled */
	NETEM_FLAG_END = 2,  /* "--": the flags end after it */
};

/**
 * netem_flag_split() - what @arg is: a flag "-name", "--name",
 * "-name=value", "--name=value" (its name and value into @f), the end of
 * the flags ("--"), no flag, or bad syntax.
 * Return: one of NETEM_FLAG_*.
 */
int netem_flag_split(const char *arg, struct netem_flag *f);

/**
 * netem_parse_gobool() - a boolean as Go's strconv.ParseBool reads it (1,
 * t, T, true, TRUE, True; 0, f, F, false, FALSE, False) into *@out.
 * Return: 0; -EINVAL for anything else.
 */
int netem_parse_gobool(const char *v, int *out);

/**
 * netem_parse_goint64() - an integer as Go's strconv.ParseInt(@v, 0, 64)
 * reads it (toxiproxy's -seed): an optional sign, 0x/0o/0b or a leading 0
 * for hex, octal, binary and octal, '_' between digits or after a prefix.
 * Return: 0; -EINVAL (not such an integer), -ERANGE (outside int64).
 */
int netem_parse_goint64(const char *v, int64_t *out);

/**
 * netem_api_listen_addr() - where toxiproxy-server with -host @host and
 * -port @port listens (NULL: its defaults, localhost and 8474), as Go's
 * net.Listen would: a name is looked up and its first IPv4 address taken
 * (else its first), an empty host is the IPv4 wildcard; a port may be a
 * service name.
 * Context: the main thread (getaddrinfo: may block on DNS).
 * Return: 0; -EINVAL with a message naming the host and port in @err.
 */
int netem_api_listen_addr(const char *host, const char *port, struct sockaddr_storage *ss,
			  socklen_t *len, char *err, size_t errlen);

#endif /* PW_NETEM_FLAGS_H */
