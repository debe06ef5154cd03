/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's command line read as Go's flag package reads
 * toxiproxy-server's, so that whatever runs `toxiproxy-server ARGS` (a
 * script, a container's entry point, Testcontainers' toxiproxy modules)
 * can run `pinwheel-netem ARGS` unchanged.  The rules, Go's:
 *   - a flag is "-name" or "--name" (one dash or two mean the same),
 *     with its value as "-name=value" or as the next argument;
 *   - a boolean flag takes no next argument: "-name" is true, and
 *     "-name=false" (any of Go's spellings: 1 0 t f T F true false TRUE
 *     FALSE True False) sets it;
 *   - "--" ends the flags; an argument that does not start with '-' (or
 *     is "-" alone) is no flag;
 *   - "---name", "-=x", "--=x" are bad syntax.
 * relay_parse_args() (config.c) applies them to every option, pinwheel's
 * own (--listen ADDR, --listen=ADDR, -listen ADDR) and toxiproxy's
 * (-host, -port, -config, -seed, -proxy-metrics, -runtime-metrics,
 * -version), with these helpers; -seed's integer is Go's too
 * (strconv.ParseInt(s, 0, 64): a sign, 0x/0o/0b prefixes, a leading 0
 * for octal, '_' between digits).  netem_api_listen_addr() turns -host
 * and -port into the address to listen on, as Go's net.Listen would.
 *
 * Every function here but netem_api_listen_addr() (getaddrinfo) is pure:
 * it reads its arguments and writes its outputs only, so the fuzzer and
 * the tests may call it.  Threads: the caller's (the main thread).
 * Locks: none.
 */
#define _GNU_SOURCE
#include "flags.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int netem_flag_split(const char *arg, struct netem_flag *f)
{
	memset(f, 0, sizeof(*f));
	if (arg[0] != '-' || !arg[1])
		return NETEM_FLAG_NONE;
	const char *name = arg + 1;
	if (*name == '-') {
		name++;
		if (!*name)
			return NETEM_FLAG_END;
	}
	if (!*name || *name == '-' || *name == '=')
		return NETEM_FLAG_BAD;
	const char *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	if (n >= sizeof(f->name))
		n = sizeof(f->name) - 1; /* no option is that long: unknown either way */
	memcpy(f->name, name, n);
	f->name[n] = '\0';
	f->value = eq ? eq + 1 : NULL;
	return NETEM_FLAG_OK;
}

int netem_parse_gobool(const char *v, int *out)
{
	static const char *const yes[] = { "1", "t", "T", "true", "TRUE", "True" };
	static const char *const no[] = { "0", "f", "F", "false", "FALSE", "False" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(v, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcmp(v, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

/* The value of digit @c in @base, or -1. */
static int digit(char c, unsigned base)
{
	int d = c >= '0' && c <= '9' ? c - '0'
	      : c >= 'a' && c <= 'z' ? c - 'a' + 10
	      : c >= 'A' && c <= 'Z' ? c - 'A' + 10
	      : -1;
	return d >= 0 && (unsigned)d < base ? d : -1;
}

int netem_parse_goint64(const char *v, int64_t *out)
{
	const char *s = v;
	int neg = 0;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	unsigned base = 10;
	int prefixed = 0; /* a base prefix: '_' may follow it */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		prefixed = 1;
	} else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
		base = 8;
		s += 2;
		prefixed = 1;
	} else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
		base = 2;
		s += 2;
		prefixed = 1;
	} else if (s[0] == '0' && s[1]) {
		base = 8;
		s += 1;
		prefixed = 1; /* "0_7" is Go's too */
	}
	if (!*s)
		return -EINVAL;
	uint64_t x = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	/* what came last: 'p' a base prefix, 'd' a digit, '_', or 's' the
	 * start; '_' only after a prefix or a digit, the end after a digit */
	char last = prefixed ? 'p' : 's';
	for (; *s; s++) {
		if (*s == '_') {
			if (last != 'p' && last != 'd')
				return -EINVAL;
			last = '_';
			continue;
		}
		int d = digit(*s, base);
		if (d < 0)
			return -EINVAL;
		if (x > (lim - (uint64_t)d) / base)
			return -ERANGE;
		x = x * base + (uint64_t)d;
		last = 'd';
	}
	if (last != 'd')
		return -EINVAL;
	*out = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

int netem_api_listen_addr(const char *host, const char *port, struct sockaddr_storage *ss,
			  socklen_t *len, char *err, size_t errlen)
{
	if (!host)
		host = NETEM_TOXI_DEF_HOST;
	if (!port)
		port = NETEM_TOXI_DEF_PORT;
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	/* an empty host is every address, as in Go (here: every IPv4 one) */
	int rc = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "-host %s -port %s: %s", host, port,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EINVAL;
	}
	/* Go's net.Listen on a name listens on one of its addresses, an IPv4
	 * one first (localhost: 127.0.0.1) */
	const struct addrinfo *pick = res;
	for (const struct addrinfo *a = res; a; a = a->ai_next)
		if (a->ai_family == AF_INET) {
			pick = a;
			break;
		}
	memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	*len = pick->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}
