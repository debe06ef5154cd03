/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's configuration: the command line (relay_parse_args),
 * addresses (relay_parse_addr), and the tc commands each direction's device
 * is set up with (relay_dir_cmds), from a spec or a batch file's text.
 * Every function here but relay_read_file() (the one that reads a file:
 * batch files, schedules, --config) is pure: it reads its arguments, writes
 * its outputs and allocates only what it returns, so the fuzzer can run it.
 * Threads: the caller's (the main thread; the fuzzer's).  Locks: none.
 */
#define _GNU_SOURCE
#include "relay.h"

#include "flags.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char relay_help_text[] =
"NAME\n"
"    pinwheel-netem - an unprivileged network emulator for UDP\n"
"\n"
"SYNOPSIS\n"
"    pinwheel-netem --listen ADDR:PORT --to ADDR:PORT\n"
"                   [--up 'QDISC SPEC'] [--down 'QDISC SPEC']\n"
"                   [--up-batch FILE] [--down-batch FILE] [--per-queue]\n"
"                   [--steer-cpu]\n"
"                   [--workers N] [--seed S] [--stats SECONDS] [--json]\n"
"                   [--max-clients N] [--max-clients-per-addr N]\n"
"                   [--idle SECONDS] [--drain MS]\n"
"                   [--max-packets N] [--max-bytes BYTES]\n"
"                   [--up-schedule FILE] [--down-schedule FILE]\n"
"                   [--accuracy] [--check]\n"
"                   [--metrics ADDR:PORT [-runtime-metrics] [--allow-host NAME]...]\n"
"                   [--map ADDR[:PORT]=MAJ:MIN]... [--help]\n"
"    pinwheel-netem --api ADDR:PORT [--config FILE] [--tcp-buffer BYTES]\n"
"                   [--workers N] [--max-bytes BYTES] [--allow-host NAME]...\n"
"                   [-proxy-metrics] [-runtime-metrics] [--seed S]\n"
"    pinwheel-netem [-host HOST] [-port PORT] [-config FILE] [-seed S]\n"
"                   [-proxy-metrics] [-runtime-metrics] [-version]\n"
"                   (toxiproxy-server's command line: the API mode)\n"
"\n"
"DESCRIPTION\n"
"    Relays UDP datagrams between clients and one server through pinwheel's\n"
"    userspace qdiscs (netem, tbf, htb, fq, the fifos, mq), without root.\n"
"    A datagram a client sends to the --listen address is sent to the --to\n"
"    address through device \"up\"; what the server answers comes back to\n"
"    that client through device \"down\", from the --listen address.  Each\n"
"    client address gets its own upstream socket (a NAT-like mapping),\n"
"    forgotten after --idle seconds without traffic.\n"
"\n"
"    A device has one TX queue per worker.  Worker i receives on its own\n"
"    SO_REUSEPORT socket and enqueues on TX queue i (XPS); qdisc watchdogs\n"
"    are pinned to the CPU that arms them.  Without a spec a device keeps the\n"
"    kernel's default: mq with a pfifo_fast per queue.  Packet length, for\n"
"    rates and byte limits, is the UDP payload plus 28 bytes (IPv4 and UDP\n"
"    headers) or 48 (IPv6).\n"
"\n"
"OPTIONS\n"
"    --listen ADDR:PORT   where clients send (A.B.C.D:PORT or [V6]:PORT; port 0\n"
"                         picks one, printed on stderr when ready)\n"
"    --to ADDR:PORT       the server\n"
"    --up SPEC, --down SPEC\n"
"                         the root qdisc of a direction: what follows\n"
"                         \"tc qdisc add dev up root\", e.g.\n"
"                         'netem delay 40ms 5ms distribution normal loss 1%'\n"
"                         or 'tbf rate 10mbit burst 32kb latency 50ms'\n"
"    --up-batch FILE, --down-batch FILE\n"
"                         whole tc commands, one a line, as tc -batch reads\n"
"                         them (qdisc add|change|replace|del, class add|...),\n"
"                         naming device up or down; run after the spec\n"
"    --up-schedule FILE, --down-schedule FILE\n"
"                         timed tc commands, one a line, 'TIME COMMAND' (e.g.\n"
"                         '2.5s qdisc change dev up root netem delay 80ms'),\n"
"                         an optional last line 'loop'; time 0 is when the\n"
"                         relay is ready; every line is checked at start\n"
"    --accuracy           keep each qdisc's achieved sojourn, rate, loss and\n"
"                         the host's timer lateness beside the configured\n"
"                         values, printed with the statistics\n"
"    --check              with --accuracy (implied): at exit, judge the\n"
"                         achieved against the configured (docs/relay.md);\n"
"                         exit status 3 when it left the tolerance\n"
"    --metrics ADDR:PORT  serve Prometheus' text at http://ADDR:PORT/metrics: the\n"
"                         relay's counters as the API's UDP proxies' series,\n"
"                         under proxy=\"relay\" (pinwheel_udp_*, the qdiscs'\n"
"                         pinwheel_qdisc_*, pinwheel_proxy_check with\n"
"                         --accuracy, pinwheel_relay_info naming --listen and\n"
"                         --to); with -runtime-metrics the process's and the\n"
"                         relay runtime's too (docs/metrics.md).  Only\n"
"                         /metrics is served; a loopback ADDR admits only\n"
"                         its own Host names and --allow-host's, and no\n"
"                         browser (the API's rules)\n"
"    --per-queue          install each spec under an mq root, one copy per TX\n"
"                         queue (scales with workers; a rate is then per worker)\n"
"    --steer-cpu          hand each datagram to the worker of the CPU the kernel\n"
"                         received it on, not to the worker its client's\n"
"                         address hashes to: less work crossing between CPUs.\n"
"                         A client keeps one mapping whichever worker gets its\n"
"                         datagrams.  Off by default: clients are no longer\n"
"                         spread by address (one sending thread's clients all\n"
"                         go to one worker), and a client whose datagrams come\n"
"                         in on two CPUs (its sender moved) may see them leave\n"
"                         reordered.  With one worker nothing changes; more\n"
"                         workers than online CPUs are refused (docs/relay.md)\n"
"    --workers N          worker threads, one per CPU (default: online CPUs;\n"
"                         at most 64)\n"
"    --seed S             seed every netem that names none (distinct per qdisc):\n"
"                         reproducible loss, duplication, jitter decisions\n"
"    --stats SECONDS      print statistics every SECONDS (default: only at exit)\n"
"    --json               statistics as one JSON object a line\n"
"    --max-clients N      client mappings at most (default 4096); datagrams of\n"
"                         new clients past it are dropped and counted\n"
"    --max-clients-per-addr N\n"
"                         client mappings one source address may hold (an\n"
"                         IPv4 address, an IPv6 /64), so that one host\n"
"                         using many source ports cannot take every mapping\n"
"                         (default 64: hosts behind a NAT share an address,\n"
"                         each with a few flows; 0, or --max-clients or more:\n"
"                         no such cap); datagrams of its new clients past it\n"
"                         are dropped and counted (max_clients_per_addr)\n"
"    --idle SECONDS       a client mapping's idle timeout (default 60)\n"
"    --drain MS           at SIGINT/SIGTERM, how long queued packets are still\n"
"                         sent at their time (default 1000); the rest are\n"
"                         dropped and counted\n"
"    --max-packets N      packets one worker may hold at once (default: what\n"
"                         half the byte budget holds, shared by the workers)\n"
"    --max-bytes BYTES    the relay's memory budget for datagrams, all workers\n"
"                         together (default 256m; suffixes k, m, g: KiB, MiB,\n"
"                         GiB; 128k..1024g): what is allocated is counted (a\n"
"                         packet's header and inline bytes, its buffer's size\n"
"                         class), before it is allocated; past the budget a\n"
"                         datagram is dropped and counted (no_memory).  Each\n"
"                         client (source address and port) may hold at most\n"
"                         its share: 7/8 of the budget divided among the\n"
"                         clients holding bytes, at least two 64 KiB\n"
"                         datagrams; past it its datagrams are dropped\n"
"                         (client_share); the last 1/8 of the budget only\n"
"                         takes clients holding at most 16544 bytes (1/8 of\n"
"                         the least share).  Under --api it bounds TCP too:\n"
"                         the bytes all the proxies' connections hold and\n"
"                         every proxy's tc state (qdiscs, classes, tables)\n"
"                         together (a connection past it stops being read;\n"
"                         a tc toxic past it is refused: 413)\n"
"    --map ADDR[:PORT]=MAJ:MIN\n"
"                         classify: the datagrams of clients at ADDR (and PORT)\n"
"                         get priority MAJ:MIN both ways, as a tc filter would\n"
"                         give them (an htb class id, e.g. 1:10); repeatable,\n"
"                         the first match counts; others get priority 0 (htb's\n"
"                         default class)\n"
"    --api ADDR:PORT      serve toxiproxy's HTTP API there (its port: 127.0.0.1:8474)\n"
"                         instead of the UDP relay: TCP proxies and their toxics\n"
"                         made and changed at run time by toxiproxy's clients\n"
"                         (docs/relay.md); --listen and --to are not taken then\n"
"    --config FILE        with --api: create the proxies of FILE at start (a JSON\n"
"                         array of proxies, toxiproxy's -config format)\n"
"    --allow-host NAME    with --api (or --metrics) on a loopback address:\n"
"                         admit requests whose Host header is NAME (with the\n"
"                         port or none) beside the address, localhost,\n"
"                         127.0.0.1 and [::1]; others are refused (DNS\n"
"                         rebinding); repeatable\n"
"    --tcp-buffer BYTES   with --api: bytes one direction of a TCP connection may\n"
"                         hold before the proxy stops reading its sender\n"
"                         (default 256k; 4k..1g)\n"
"    --help, -h           this text\n"
"\n"
"TOXIPROXY-SERVER'S COMMAND LINE\n"
"    Options are read as Go's flag package reads toxiproxy-server's: one dash\n"
"    or two (-api and --api are one option), the value as the next argument\n"
"    or after '=' (--api=127.0.0.1:8474), a flag that takes no value set by\n"
"    its name alone or -name=true|false; \"--\" ends the options.  So\n"
"    whatever runs \"toxiproxy-server ARGS\" can run \"pinwheel-netem ARGS\".\n"
"    Without --listen and --to (and the other options only the relay takes),\n"
"    pinwheel-netem is the API, as toxiproxy-server is: on -host:-port,\n"
"    localhost:8474 by default, with no option at all too.\n"
"    -host HOST           the API's address (default localhost; a name is looked\n"
"                         up, its first IPv4 address taken; \"\" or 0.0.0.0: every\n"
"                         IPv4 address); implies the API mode; not with --api\n"
"    -port PORT           the API's port (default 8474); implies the API mode\n"
"    -config FILE         --config: proxies to create at start\n"
"    -seed S              in the API mode, toxiproxy's: the seed of the toxics'\n"
"                         randomness (toxicity, jitter, slicer sizes: a toxic's\n"
"                         own \"seed\" attribute still wins), Go's integer syntax\n"
"                         (negative, 0x..); in the relay mode (--listen/--to)\n"
"                         the relay's --seed above (a decimal: its netem's).\n"
"                         One option, read by the mode it is given in\n"
"    -proxy-metrics       GET /metrics gives toxiproxy's per-proxy series\n"
"                         (toxiproxy_proxy_received_bytes_total,\n"
"                         toxiproxy_proxy_sent_bytes_total) and pinwheel's own\n"
"                         (pinwheel_proxy_*: docs/metrics.md)\n"
"    -runtime-metrics     GET /metrics gives the process's series (process_*)\n"
"                         and pinwheel's runtimes' (pinwheel_runtime_*: timers\n"
"                         pending and fired, kicks by reason, the workers'\n"
"                         wake-up lateness as a histogram); with the relay's\n"
"                         --metrics too (without either, the API's /metrics\n"
"                         is 404, as in toxiproxy)\n"
"    -version             print the version and exit\n"
"\n"
"STATISTICS\n"
"    Per direction: rx (datagrams received), clones (netem duplicates), out\n"
"    (sent), dropped by reason (the qdiscs' reasons, and max_clients,\n"
"    max_clients_per_addr, no_memory, client_share, rcvbuf (the kernel's,\n"
"    at the relay's full receive buffer: counted in rx too), loop (from the\n"
"    relay's own upstream socket: --to leads back to --listen),\n"
"    socket_error, send_error),\n"
"    backlog, the rate sent since the last report; the server's ICMP\n"
"    port-unreachable errors (refused) and other errors on the upstream\n"
"    sockets (upstream_errors); the memory budget (bytes held, peak,\n"
"    active clients, the share, how many clients were dropped by their\n"
"    share or by the budget, clones refused); then\n"
"    the qdiscs as \"tc -s qdisc show\" prints them (with --json: as\n"
"    \"tc -s -j\").  At exit the balance rx + clones == out + dropped,\n"
"    backlog 0, is checked and printed.\n"
"\n"
"SIGNALS\n"
"    SIGHUP   re-read the batch files and apply them as changes (qdisc add and\n"
"             replace become qdisc change; class add and replace, class\n"
"             change): queued packets are kept\n"
"    SIGINT, SIGTERM\n"
"             stop receiving, send what is queued up to --drain, print the\n"
"             final statistics, exit\n"
"\n"
"EXIT STATUS\n"
"    0 after a stop whose statistics balance; 1 if they do not, or on a\n"
"    failure while running; 2 for a bad command line or configuration (the\n"
"    message names the token and the reason; nothing was started).\n"
"\n"
"EXAMPLE\n"
"    pinwheel-netem --listen 127.0.0.1:9000 --to 127.0.0.1:7 \\\n"
"        --up 'netem delay 20ms 2ms loss 1%' --down 'tbf rate 10mbit burst 32kb latency 50ms'\n";

#ifndef PW_NETEM_VERSION
#define PW_NETEM_VERSION "unknown" /* built outside CMake (tools/CMakeLists.txt sets it) */
#endif
const char relay_version[] = PW_NETEM_VERSION;

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int relay_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		     size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 8];
	const char *port;
	memset(ss, 0, sizeof(*ss));
	if (!s || !*s)
		return fail(err, errlen, "an empty address");
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return fail(err, errlen, "\"%s\": expected [IPV6]:PORT", s);
		size_t n = (size_t)(close - s - 1);
		if (n == 0 || n >= sizeof(host))
			return fail(err, errlen, "\"%s\": bad IPv6 address", s);
		memcpy(host, s + 1, n);
		host[n] = '\0';
		port = close + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon)
			return fail(err, errlen, "\"%s\": expected ADDR:PORT", s);
		if (memchr(s, ':', (size_t)(colon - s)))
			return fail(err, errlen, "\"%s\": an IPv6 address needs brackets: [ADDR]:PORT",
				    s);
		size_t n = (size_t)(colon - s);
		if (n == 0 || n >= sizeof(host))
			return fail(err, errlen, "\"%s\": bad address", s);
		memcpy(host, s, n);
		host[n] = '\0';
		port = colon + 1;
	}
	char *end;
	errno = 0;
	unsigned long p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535 || !isdigit((unsigned char)*port))
		return fail(err, errlen, "\"%s\": bad port \"%s\" (0..65535)", s, port);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a6);
		return 0;
	}
	return fail(err, errlen,
		    "\"%s\": \"%s\" is not a numeric IPv4 or IPv6 address (host names are not resolved)",
		    s, host);
}

void relay_format_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char h[INET6_ADDRSTRLEN];
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a6->sin6_addr, h, sizeof(h));
		snprintf(buf, len, "[%s]:%u", h, ntohs(a6->sin6_port));
	} else {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a4->sin_addr, h, sizeof(h));
		snprintf(buf, len, "%s:%u", h, ntohs(a4->sin_port));
	}
}

/* "MAJ:MIN" in hex, as tc writes a classid. */
static int parse_classid(const char *v, uint32_t *out)
{
	char *end;
	errno = 0;
	if (!isxdigit((unsigned char)*v))
		return -1;
	unsigned long maj = strtoul(v, &end, 16);
	if (errno || *end != ':' || maj > 0xffff)
		return -1;
	const char *m = end + 1;
	if (!isxdigit((unsigned char)*m))
		return -1;
	unsigned long min = strtoul(m, &end, 16);
	if (errno || *end || min > 0xffff)
		return -1;
	*out = (uint32_t)(maj << 16 | min);
	return 0;
}

/* --map ADDR[:PORT]=MAJ:MIN */
static int parse_map(const char *v, struct relay_map *m, char *err, size_t errlen)
{
	const char *eq = strrchr(v, '=');
	if (!eq)
		return fail(err, errlen, "--map: \"%s\": expected ADDR[:PORT]=MAJ:MIN", v);
	if (parse_classid(eq + 1, &m->classid))
		return fail(err, errlen, "--map: bad class id \"%s\" (MAJ:MIN, hexadecimal)", eq + 1);
	char a[INET6_ADDRSTRLEN + 16];
	size_t n = (size_t)(eq - v);
	if (n == 0 || n + 3 >= sizeof(a))
		return fail(err, errlen, "--map: bad address in \"%s\"", v);
	memcpy(a, v, n);
	a[n] = '\0';
	/* with a port: "[V6]:P" or "A.B.C.D:P"; without: "[V6]" or "A.B.C.D" */
	int has_port = a[0] == '[' ? strstr(a, "]:") != NULL : strchr(a, ':') != NULL;
	if (!has_port)
		strcat(a, ":0");
	char aerr[256];
	socklen_t len;
	if (relay_parse_addr(a, &m->addr, &len, aerr, sizeof(aerr)))
		return fail(err, errlen, "--map: %s", aerr);
	m->any_port = !has_port;
	return 0;
}

uint32_t relay_map_lookup(const struct relay_config *cfg, const struct sockaddr_storage *addr)
{
	for (unsigned i = 0; i < cfg->nmap; i++) {
		const struct relay_map *m = &cfg->map[i];
		if (m->addr.ss_family != addr->ss_family)
			continue;
		if (addr->ss_family == AF_INET6) {
			const struct sockaddr_in6 *x = (const void *)&m->addr, *y = (const void *)addr;
			if (memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) ||
			    (!m->any_port && x->sin6_port != y->sin6_port))
				continue;
		} else {
			const struct sockaddr_in *x = (const void *)&m->addr, *y = (const void *)addr;
			if (x->sin_addr.s_addr != y->sin_addr.s_addr ||
			    (!m->any_port && x->sin_port != y->sin_port))
				continue;
		}
		return m->classid;
	}
	return 0;
}

static int parse_uint(const char *opt, const char *v, unsigned long lo, unsigned long hi,
		      unsigned *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (!*v || *end || errno || !isdigit((unsigned char)*v) || x < lo || x > hi)
		return fail(err, errlen, "%s: bad value \"%s\" (an integer %lu..%lu)", opt, v, lo,
			    hi);
	*out = (unsigned)x;
	return 0;
}

int relay_parse_bytes(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out,
		      char *err, size_t errlen)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	int shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B") || !strcmp(end, "ib") || !strcmp(end, "b"))
			end += strlen(end);
	} else if (!strcmp(end, "B") || !strcmp(end, "b")) {
		end++;
	}
	if (!*v || *end || errno || !isdigit((unsigned char)*v) || x > (hi >> shift) ||
	    (x << shift) < lo)
		return fail(err, errlen,
			    "%s: bad value \"%s\" (bytes, %llu..%llu; suffixes k, m, g: KiB, MiB, GiB)",
			    opt, v, (unsigned long long)lo, (unsigned long long)hi);
	*out = (uint64_t)x << shift;
	return 0;
}

static int parse_secs(const char *opt, const char *v, double lo, double hi, double *out,
		      char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(x) || x < lo || x > hi)
		return fail(err, errlen, "%s: bad value \"%s\" (seconds, %g..%g)", opt, v, lo, hi);
	*out = x;
	return 0;
}

/* Whether @a is a wildcard or loopback address of its family. */
static int addr_any_or_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(x)) {
			uint32_t v4 = ntohl(((const uint32_t *)x->s6_addr)[3]);
			return v4 == 0 || (v4 >> 24) == 127;
		}
		return IN6_IS_ADDR_UNSPECIFIED(x) || IN6_IS_ADDR_LOOPBACK(x);
	}
	uint32_t v4 = ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);
	return v4 == 0 || (v4 >> 24) == 127;
}

int relay_is_own_address(const struct sockaddr_storage *listen, const struct sockaddr_storage *to)
{
	uint16_t lp = listen->ss_family == AF_INET6
			      ? ((const struct sockaddr_in6 *)listen)->sin6_port
			      : ((const struct sockaddr_in *)listen)->sin_port;
	uint16_t tp = to->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)to)->sin6_port
						: ((const struct sockaddr_in *)to)->sin_port;
	if (!lp || lp != tp)
		return 0;
	if (listen->ss_family == to->ss_family) {
		if (listen->ss_family == AF_INET6 &&
		    !memcmp(&((const struct sockaddr_in6 *)listen)->sin6_addr,
			    &((const struct sockaddr_in6 *)to)->sin6_addr, 16))
			return 1;
		if (listen->ss_family == AF_INET &&
		    ((const struct sockaddr_in *)listen)->sin_addr.s_addr ==
			    ((const struct sockaddr_in *)to)->sin_addr.s_addr)
			return 1;
	}
	/* a wildcard listener takes what is sent to any local address: the
	 * loopback ones and the wildcard itself are surely local (another
	 * local address is not known without the interfaces: not refused) */
	const struct in6_addr any6 = IN6ADDR_ANY_INIT;
	int wild = listen->ss_family == AF_INET6
			   ? !memcmp(&((const struct sockaddr_in6 *)listen)->sin6_addr, &any6, 16)
			   : ((const struct sockaddr_in *)listen)->sin_addr.s_addr == 0;
	return wild && addr_any_or_loopback(to) &&
	       (listen->ss_family == AF_INET6 || to->ss_family == AF_INET);
}

/* Every option, by its name without dashes (-name and --name are one; Go's
 * syntax: flags.c).  is_bool: takes no next argument (-name=false turns
 * it off).  relay_only: only the UDP relay takes it, so it means relay
 * mode when neither --api nor -host/-port is given. */
struct opt {
	const char *name;
	unsigned char is_bool, relay_only;
};

static const struct opt opts[] = {
	/* the UDP relay's */
	{ "listen", 0, 1 }, { "to", 0, 1 }, { "up", 0, 1 }, { "down", 0, 1 },
	{ "up-batch", 0, 1 }, { "down-batch", 0, 1 }, { "up-schedule", 0, 1 },
	{ "down-schedule", 0, 1 }, { "per-queue", 1, 1 }, { "steer-cpu", 1, 1 },
	{ "stats", 0, 1 }, { "json", 1, 1 }, { "map", 0, 1 }, { "accuracy", 1, 1 },
	{ "check", 1, 1 }, { "idle", 0, 1 }, { "drain", 0, 1 }, { "max-clients", 0, 1 },
	{ "max-clients-per-addr", 0, 1 }, { "max-packets", 0, 1 }, { "metrics", 0, 1 },
	/* both modes' */
	{ "workers", 0, 0 }, { "seed", 0, 0 }, { "max-bytes", 0, 0 }, { "help", 1, 0 },
	/* the API's, pinwheel's spelling */
	{ "api", 0, 0 }, { "config", 0, 0 }, { "allow-host", 0, 0 }, { "tcp-buffer", 0, 0 },
	/* toxiproxy-server's */
	{ "host", 0, 0 }, { "port", 0, 0 }, { "proxy-metrics", 1, 0 },
	{ "runtime-metrics", 1, 0 }, { "version", 1, 0 },
};

/* @name's entry (-h is -help), or NULL */
static const struct opt *find_opt(const char *name)
{
	if (!strcmp(name, "h"))
		name = "help";
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(name, opts[i].name))
			return &opts[i];
	return NULL;
}

int relay_parse_args(int argc, char **argv, struct relay_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_clients = RELAY_DEF_CLIENTS;
	cfg->max_clients_per_addr = RELAY_DEF_CLIENTS_PER_ADDR;
	cfg->idle_s = RELAY_DEF_IDLE_S;
	cfg->drain_ms = RELAY_DEF_DRAIN_MS;
	cfg->max_packets = 0; /* from the budget */
	cfg->max_bytes = RELAY_DEF_BYTES;
	cfg->tcp_buffer = RELAY_DEF_TCP_BUFFER;
	int have_listen = 0, have_to = 0, relay_only = 0;
	const char *seed_text = NULL, *bad_end = NULL;
	for (int i = 1; i < argc; i++) {
		/* Go's flag syntax (flags.c): -name or --name, the value as
		 * -name=value or the next argument, booleans take none */
		struct netem_flag f;
		int kind = netem_flag_split(argv[i], &f);
		if (kind == NETEM_FLAG_BAD)
			return fail(err, errlen, "bad flag syntax: \"%s\" (see --help)", argv[i]);
		if (kind == NETEM_FLAG_END) {
			bad_end = i + 1 < argc ? argv[i + 1] : NULL;
			break;
		}
		if (kind == NETEM_FLAG_NONE) {
			bad_end = argv[i];
			break;
		}
		const struct opt *op = find_opt(f.name);
		if (!op)
			return fail(err, errlen, "unknown option \"%s\" (see --help)", argv[i]);
		char o[sizeof(f.name) + 2]; /* its canonical spelling, "--name" */
		snprintf(o, sizeof(o), "--%s", op->name);
		relay_only |= op->relay_only;
		if (op->is_bool) {
			int b = 1;
			if (f.value && netem_parse_gobool(f.value, &b))
				return fail(err, errlen, "%s: bad value \"%s\" (true or false)", o,
					    f.value);
			if (!strcmp(o, "--help"))
				cfg->help = b;
			else if (!strcmp(o, "--version"))
				cfg->version = b;
			else if (!strcmp(o, "--json"))
				cfg->json = b;
			else if (!strcmp(o, "--per-queue"))
				cfg->per_queue = b;
			else if (!strcmp(o, "--steer-cpu"))
				cfg->steer_cpu = b;
			else if (!strcmp(o, "--accuracy"))
				cfg->accuracy = b;
			else if (!strcmp(o, "--check"))
				cfg->accuracy = cfg->check = b;
			else if (!strcmp(o, "--proxy-metrics"))
				cfg->proxy_metrics = b;
			else if (!strcmp(o, "--runtime-metrics"))
				cfg->runtime_metrics = b;
			if ((cfg->help || cfg->version) && b)
				return 0;
			continue;
		}
		const char *v = f.value;
		if (!v) {
			if (i + 1 >= argc)
				return fail(err, errlen, "%s needs a value", o);
			v = argv[++i];
		}
		char aerr[256];
		if (!strcmp(o, "--seed")) {
			seed_text = v; /* read once the mode is known (below) */
		} else if (!strcmp(o, "--host")) {
			cfg->api_host = v;
		} else if (!strcmp(o, "--port")) {
			cfg->api_port = v;
		} else		if (!strcmp(o, "--listen") || !strcmp(o, "--to")) {
			int lis = !strcmp(o, "--listen");
			if (relay_parse_addr(v, lis ? &cfg->listen : &cfg->to,
					     lis ? &cfg->listen_len : &cfg->to_len, aerr, sizeof(aerr)))
				return fail(err, errlen, "%s: %s", o, aerr);
			*(lis ? &have_listen : &have_to) = 1;
		} else if (!strcmp(o, "--up") || !strcmp(o, "--down")) {
			size_t n = strspn(v, " \t");
			if (!v[n])
				return fail(err, errlen, "%s: an empty qdisc spec", o);
			cfg->spec[o[2] == 'u' ? RELAY_UP : RELAY_DOWN] = v;
		} else if (!strcmp(o, "--up-schedule") || !strcmp(o, "--down-schedule")) {
			if (!*v)
				return fail(err, errlen, "%s: an empty file name", o);
			cfg->schedule[o[2] == 'u' ? RELAY_UP : RELAY_DOWN] = v;
		} else if (!strcmp(o, "--up-batch") || !strcmp(o, "--down-batch")) {
			if (!*v)
				return fail(err, errlen, "%s: an empty file name", o);
			cfg->batch[o[2] == 'u' ? RELAY_UP : RELAY_DOWN] = v;
		} else if (!strcmp(o, "--workers")) {
			if (parse_uint(o, v, 1, RELAY_MAX_WORKERS, &cfg->workers, err, errlen))
				return -1;
		} else if (!strcmp(o, "--stats")) {
			if (parse_secs(o, v, 0, 86400, &cfg->stats_s, err, errlen))
				return -1;
		} else if (!strcmp(o, "--max-clients")) {
			if (parse_uint(o, v, 1, 1u << 22, &cfg->max_clients, err, errlen))
				return -1;
		} else if (!strcmp(o, "--max-clients-per-addr")) {
			if (parse_uint(o, v, 0, 1u << 22, &cfg->max_clients_per_addr, err, errlen))
				return -1;
		} else if (!strcmp(o, "--idle")) {
			if (parse_secs(o, v, 0.001, 86400, &cfg->idle_s, err, errlen))
				return -1;
		} else if (!strcmp(o, "--drain")) {
			if (parse_uint(o, v, 0, 60000, &cfg->drain_ms, err, errlen))
				return -1;
		} else if (!strcmp(o, "--map")) {
			if (cfg->nmap == RELAY_MAX_MAPS)
				return fail(err, errlen, "--map: more than %d", RELAY_MAX_MAPS);
			if (parse_map(v, &cfg->map[cfg->nmap], err, errlen))
				return -1;
			cfg->nmap++;
		} else if (!strcmp(o, "--max-bytes")) {
			if (relay_parse_bytes(o, v, RELAY_MIN_BYTES, RELAY_MAX_BYTES, &cfg->max_bytes,
					      err, errlen))
				return -1;
		} else if (!strcmp(o, "--api")) {
			if (relay_parse_addr(v, &cfg->api_addr, &cfg->api_len, aerr, sizeof(aerr)))
				return fail(err, errlen, "--api: %s", aerr);
			cfg->api = 1;
		} else if (!strcmp(o, "--metrics")) {
			if (relay_parse_addr(v, &cfg->metrics_addr, &cfg->metrics_len, aerr,
					     sizeof(aerr)))
				return fail(err, errlen, "--metrics: %s", aerr);
			cfg->metrics = 1;
		} else if (!strcmp(o, "--config")) {
			if (!*v)
				return fail(err, errlen, "--config: an empty file name");
			cfg->config_file = v;
		} else if (!strcmp(o, "--allow-host")) {
			if (cfg->nallow_host == RELAY_MAX_ALLOW_HOSTS)
				return fail(err, errlen, "--allow-host: more than %d", RELAY_MAX_ALLOW_HOSTS);
			cfg->allow_host[cfg->nallow_host++] = v;
		} else if (!strcmp(o, "--tcp-buffer")) {
			if (relay_parse_bytes(o, v, RELAY_MIN_TCP_BUFFER, RELAY_MAX_TCP_BUFFER,
					      &cfg->tcp_buffer, err, errlen))
				return -1;
		} else if (!strcmp(o, "--max-packets")) {
			if (parse_uint(o, v, 16, 1u << 24, &cfg->max_packets, err, errlen))
				return -1;
		}
	}
	if (bad_end)
		return fail(err, errlen, "unexpected argument \"%s\" (options start with - or --; "
					 "see --help)", bad_end);
	/* The mode.  -host/-port say where the API listens, as --api does;
	 * without --listen and --to or another option only the relay takes,
	 * pinwheel-netem is toxiproxy-server: the API on -host:-port
	 * (toxiproxy's localhost:8474 by default), with no flag at all too. */
	if ((cfg->api_host || cfg->api_port) && cfg->api)
		return fail(err, errlen, "--api and -host/-port both say where the API listens: "
					 "give one");
	if (cfg->api_host || cfg->api_port ||
	    (!cfg->api && !have_listen && !have_to && !relay_only)) {
		cfg->api = 1;
		cfg->api_resolve = 1; /* the caller looks -host up (netem_api_listen_addr()) */
	}
	if (seed_text) {
		/* toxiproxy's -seed in API mode (Go's integer syntax; the toxics'
		 * randomness); the relay's --seed otherwise (a decimal) */
		if (cfg->api) {
			int64_t sv;
			int rc = netem_parse_goint64(seed_text, &sv);
			if (rc)
				return fail(err, errlen, "--seed: bad value \"%s\" (%s)", seed_text,
					    rc == -ERANGE ? "outside a 64-bit signed integer"
							  : "an integer, as toxiproxy's -seed");
			cfg->seed = (uint64_t)sv;
		} else {
			char *end;
			errno = 0;
			unsigned long long sv = strtoull(seed_text, &end, 10);
			if (!*seed_text || *end || errno || !isdigit((unsigned char)*seed_text))
				return fail(err, errlen, "--seed: bad value \"%s\" (an integer)",
					    seed_text);
			cfg->seed = sv;
		}
		cfg->has_seed = 1;
	}
	if (cfg->proxy_metrics && !cfg->api)
		return fail(err, errlen, "-proxy-metrics: the API's proxies' series; the relay "
					 "(--listen/--to) has no proxies: --metrics ADDR:PORT serves "
					 "its own series");
	if (cfg->runtime_metrics && !cfg->api && !cfg->metrics)
		return fail(err, errlen, "-runtime-metrics: needs --metrics ADDR:PORT (the relay's "
					 "GET /metrics) or the API");
	if (cfg->config_file && !cfg->api)
		return fail(err, errlen, "--config %s: needs --api ADDR:PORT", cfg->config_file);
	if (cfg->nallow_host && !cfg->api && !cfg->metrics)
		return fail(err, errlen, "--allow-host %s: needs --api ADDR:PORT or --metrics "
					 "ADDR:PORT", cfg->allow_host[0]);
	if (cfg->api) {
		/* the API's proxies are TCP; the command-line UDP relay does not
		 * run beside them in one process (yet) */
		if (have_listen || have_to)
			return fail(err, errlen, "--api: --listen/--to (the UDP relay) do not "
						 "run with --api; create proxies through the API");
		if (cfg->schedule[RELAY_UP] || cfg->schedule[RELAY_DOWN] || cfg->accuracy)
			return fail(err, errlen, "--api: --up-schedule, --down-schedule, --accuracy "
						 "and --check belong to the UDP relay (--listen/--to)");
		if (cfg->steer_cpu)
			return fail(err, errlen, "--api: --steer-cpu belongs to the UDP relay "
						 "(--listen/--to); the API's proxies spread by address");
		if (cfg->metrics)
			return fail(err, errlen, "--metrics belongs to the UDP relay (--listen/--to); "
						 "the API serves GET /metrics on its own port "
						 "(-proxy-metrics, -runtime-metrics)");
		return 0;
	}
	if (!have_listen)
		return fail(err, errlen, "--listen ADDR:PORT is required (see --help)");
	if (!have_to)
		return fail(err, errlen, "--to ADDR:PORT is required (see --help)");
	if (cfg->listen.ss_family != cfg->to.ss_family) {
		/* an IPv4 server behind an IPv6 listener works (the upstream
		 * socket is the server's family); nothing to refuse */
	}
	if (cfg->to.ss_family == AF_INET
		    ? ((struct sockaddr_in *)&cfg->to)->sin_port == 0
		    : ((struct sockaddr_in6 *)&cfg->to)->sin6_port == 0)
		return fail(err, errlen, "--to: port 0 is no server port");
	if (relay_is_own_address(&cfg->listen, &cfg->to)) {
		char a[80];
		relay_format_addr(&cfg->to, a, sizeof(a));
		return fail(err, errlen, "--to %s: the relay's own --listen address (a loop)", a);
	}
	return 0;
}

/* ------------------------------------------------------------ commands */

void relay_cmds_free(struct relay_cmds *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->cmd[i]);
		free(c->where[i]);
	}
	free(c->cmd);
	free(c->where);
	memset(c, 0, sizeof(*c));
}

static int cmds_push(struct relay_cmds *c, char *cmd, const char *fmt, ...)
{
	if (!cmd)
		return -1;
	if (c->n == c->cap) {
		size_t nc = c->cap ? 2 * c->cap : 8;
		char **a = realloc(c->cmd, nc * sizeof(*a));
		if (!a) {
			free(cmd);
			return -1;
		}
		c->cmd = a;
		char **b = realloc(c->where, nc * sizeof(*b));
		if (!b) {
			free(cmd);
			return -1;
		}
		c->where = b;
		c->cap = nc;
	}
	va_list ap;
	va_start(ap, fmt);
	char *w = NULL;
	int r = vasprintf(&w, fmt, ap);
	va_end(ap);
	if (r < 0) {
		free(cmd);
		return -1;
	}
	c->cmd[c->n] = cmd;
	c->where[c->n] = w;
	c->n++;
	return 0;
}

int relay_has_word(const char *s, const char *w)
{
	static const char ws[] = " \t\r\n";
	size_t n = strlen(w);
	for (const char *p = s; *p;) {
		p += strspn(p, ws);
		size_t k = strcspn(p, ws);
		if (k == n && !strncmp(p, w, n))
			return 1;
		p += k;
	}
	return 0;
}

/* @cmd with " seed N" appended when it configures a netem that names no
 * seed; takes @cmd (freed or returned). */
static char *with_seed(const struct relay_config *cfg, char *cmd, uint64_t n)
{
	if (!cmd || !cfg->has_seed || !relay_has_word(cmd, "netem") || relay_has_word(cmd, "seed"))
		return cmd;
	char *s = NULL;
	if (asprintf(&s, "%s seed %llu", cmd, (unsigned long long)(cfg->seed + n)) < 0)
		s = NULL;
	free(cmd);
	return s;
}

/* Turn "qdisc add|replace ..." / "class add|replace ..." into "... change ...". */
static char *as_change(char *cmd)
{
	char *p = cmd + strspn(cmd, " \t");
	size_t w1 = strcspn(p, " \t");
	if (!((w1 == 5 && !strncmp(p, "qdisc", 5)) || (w1 == 5 && !strncmp(p, "class", 5))))
		return cmd;
	char *q = p + w1;
	q += strspn(q, " \t");
	size_t w2 = strcspn(q, " \t");
	if (!((w2 == 3 && !strncmp(q, "add", 3)) || (w2 == 7 && !strncmp(q, "replace", 7))))
		return cmd;
	char *s = NULL;
	if (asprintf(&s, "%.*schange%s", (int)(q - cmd), cmd, q + w2) < 0)
		s = NULL;
	free(cmd);
	return s;
}

int relay_dir_cmds(const struct relay_config *cfg, enum relay_dir dir, const char *dev,
		   unsigned ntxq, const char *batch_text, const char *batch_name, int change,
		   struct relay_cmds *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const char *opt = dir == RELAY_UP ? "--up" : "--down";
	uint64_t nseed = (uint64_t)dir * 100000;
	const char *spec = cfg->spec[dir];
	char *c;
	if (spec && !change) {
		if (cfg->per_queue && ntxq > 1) {
			if (asprintf(&c, "qdisc add dev %s root handle 1: mq", dev) < 0)
				c = NULL;
			if (cmds_push(out, c, "%s", opt))
				goto oom;
			for (unsigned q = 1; q <= ntxq; q++) {
				if (asprintf(&c, "qdisc add dev %s parent 1:%x %s", dev, q, spec) < 0)
					c = NULL;
				if (cmds_push(out, with_seed(cfg, c, nseed++), "%s", opt))
					goto oom;
			}
		} else {
			if (asprintf(&c, "qdisc add dev %s root %s", dev, spec) < 0)
				c = NULL;
			if (cmds_push(out, with_seed(cfg, c, nseed++), "%s", opt))
				goto oom;
		}
	}
	if (batch_text) {
		size_t lineno = 0, first = 0;
		const char *p = batch_text;
		char *line = NULL;
		size_t len = 0;
		while (*p) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			lineno++;
			if (!line)
				first = lineno;
			while (n > 0 && p[n - 1] == '\r')
				n--;
			const char *hash = memchr(p, '#', n);
			if (hash)
				n = (size_t)(hash - p);
			int cont = n > 0 && p[n - 1] == '\\';
			if (cont)
				n--;
			char *nlp = realloc(line, len + n + 2);
			if (!nlp)
				goto oom_line;
			line = nlp;
			memcpy(line + len, p, n);
			len += n;
			line[len] = '\0';
			p = nl ? nl + 1 : p + strlen(p);
			if (cont && *p) {
				line[len++] = ' ';
				line[len] = '\0';
				continue;
			}
			/* a whole command: skip blanks and a leading "tc" */
			char *s = line + strspn(line, " \t");
			if (!strncmp(s, "tc", 2) && (s[2] == ' ' || s[2] == '\t'))
				s += 2 + strspn(s + 2, " \t");
			if (*s) {
				char *cmd = strdup(s);
				/* a change keeps the seed the add gave */
				cmd = !cmd ? NULL : change ? as_change(cmd) : with_seed(cfg, cmd, nseed);
				nseed++;
				if (cmds_push(out, cmd, "%s:%zu", batch_name, first))
					goto oom_line;
			}
			free(line);
			line = NULL;
			len = 0;
		}
		free(line);
		(void)first;
		goto done;
oom_line:
		free(line);
		goto oom;
	}
done:
	return 0;
oom:
	relay_cmds_free(out);
	return fail(err, errlen, "out of memory");
}

/* ------------------------------------------------------------ files */

char *relay_read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot open \"%s\": %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (len < cap - 1)
			break;
		if (cap >= (64u << 20)) {
			snprintf(err, errlen, "\"%s\" is larger than 64 MiB", path);
			free(buf);
			fclose(f);
			return NULL;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	if (!buf) {
		snprintf(err, errlen, "\"%s\": out of memory", path);
		fclose(f);
		return NULL;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read \"%s\": %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	buf[len] = '\0';
	fclose(f);
	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "\"%s\" is not a text file (a NUL byte)", path);
		free(buf);
		return NULL;
	}
	return buf;
}
