/* SPDX-License-Identifier: MIT */
/*
 * A tc toxic's schedule and accuracy report on TCP proxies
 * (tools/netem/tc_toxic.c through tcp.h: what the API's GET
 * /proxies/NAME/stats shows per tc toxic), on a plane of two workers with
 * real sockets on loopback and an echo server thread, asserting
 * properties, never timings:
 *  - a schedule sent inline runs on the toxic's device from its creation:
 *    its steps come (the step in force moves, a loop counts its passes),
 *    every byte comes back in order through the changes, nothing cut or
 *    dropped; the report names the step in force and its line;
 *  - a bad schedule (a bad token, a bad time, times going back, a step
 *    with no "dev") is refused at set_toxics with its line and the token,
 *    and the proxy keeps the toxics it had; the registry's check for a
 *    disabled proxy (tcp_tc_schedule_check()) gives the same verdicts;
 *  - the accuracy report: each qdisc's achieved sojourn beside the
 *    configured one, a check verdict ("pass", "fail" or "not judged"),
 *    the packets counted equal to the pieces the stream sent.
 * The helpers are netem_tcp_util.c's.  Real threads: labelled
 * "concurrent" (run under TSan too).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pinwheel/net.h>
#include <pinwheel/runtime.h>

#include "check.h"
#include "netem_tcp_util.h"
#include "tcp.h"

static struct ntu_echo E;
static struct tcp_plane *PL;

static struct toxic mk_tc(enum toxic_stream st, const char *name, char *qdisc, char *sched)
{
	struct toxic t = ntu_toxic(TOXIC_TC, st, name);
	t.a.tc.qdisc = qdisc;
	t.a.tc.schedule = sched;
	return t;
}

/* The integer after @key in @s (the first occurrence); -1: none. */
static long long json_int(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	if (!p)
		return -1;
	p += strlen(key);
	return strtoll(p, NULL, 10);
}

/* A schedule that flips the delay every 30 ms, looping: its steps come,
 * bytes stay in order, the report follows. */
static void test_schedule_runs(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "netem delay 1ms";
	char sc[] = "# flip the delay\n"
		    "30ms qdisc change dev link root netem delay 4ms\n"
		    "\n"
		    "60ms qdisc change dev anything root netem delay 1ms\n"
		    "loop\n";
	struct toxic t = mk_tc(TOXIC_DOWNSTREAM, "flip", q, sc);
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	uint64_t off = 0;
	long long loops = -1;
	char *rep = NULL;
	for (int k = 0; k < 2000 && loops < 2; k++) {
		ntu_send_pat(fd, off, 2000);
		ntu_recv_pat(fd, off, 2000);
		off += 2000;
		free(rep);
		rep = tcp_proxy_tc_report(p, TOXIC_DOWNSTREAM);
		CHECK(rep != NULL);
		loops = json_int(rep, "\"loops\":");
	}
	if (getenv("PW_TEST_VERBOSE"))
		fprintf(stderr, "%s\n", rep);
	CHECK(loops >= 2);
	CHECK(strstr(rep, "\"toxic\":\"flip\"") != NULL);
	long long step = json_int(rep, "\"schedule\":{\"step\":");
	long long line = json_int(rep, "\"line\":");
	CHECK(step == 0 || step == 1);
	CHECK_EQ(line, step == 0 ? 2 : 4);
	CHECK(json_int(rep, "\"failed\":") == 0);
	free(rep);
	/* the other stream has no tc toxic */
	rep = tcp_proxy_tc_report(p, TOXIC_UPSTREAM);
	CHECK(rep && !strcmp(rep, "[]"));
	free(rep);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_cut, 0);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_dropped, 0);
	CHECK_EQ(s.dir[TOXIC_DOWNSTREAM].bytes_out, off);
	tcp_proxy_close(p);
}

/* set_toxics with @sc refused: -EINVAL, @want (each) in the message. */
static void refused(struct tcp_proxy *p, char *sc, const char *want1, const char *want2)
{
	char q[] = "netem delay 1ms";
	struct toxic t = mk_tc(TOXIC_UPSTREAM, "bad", q, sc);
	char err[512] = "";
	int r = tcp_proxy_set_toxics(p, &t, 1, err, sizeof(err));
	CHECK_EQ(r, -EINVAL);
	if (!strstr(err, want1) || (want2 && !strstr(err, want2)))
		fprintf(stderr, "message: %s\n", err);
	if (getenv("PW_TEST_VERBOSE"))
		fprintf(stderr, "%s\n", err);
	CHECK(strstr(err, want1) != NULL);
	CHECK(!want2 || strstr(err, want2) != NULL);
}

static void test_schedule_bad(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "netem delay 1ms";
	char good[] = "1s qdisc change dev x root netem delay 2ms\n";
	struct toxic t = mk_tc(TOXIC_UPSTREAM, "good", q, good);
	ntu_set_toxics(p, &t, 1);
	char b1[] = "10ms qdisc change dev x root netem delay 2ms\n"
		    "20ms qdisc change dev x root netem delay bogus\n";
	refused(p, b1, "schedule:2", "bogus");
	char b2[] = "soon qdisc change dev x root netem delay 2ms\n";
	refused(p, b2, "schedule:1", "soon");
	char b3[] = "20ms qdisc change dev x root netem delay 2ms\n"
		    "10ms qdisc change dev x root netem delay 3ms\n";
	refused(p, b3, "schedule:2", NULL);
	char b4[] = "10ms qdisc show\n";
	refused(p, b4, "schedule:1", NULL);
	/* the proxy kept its toxic: its device and schedule still there */
	char *rep = tcp_proxy_tc_report(p, TOXIC_UPSTREAM);
	CHECK(rep && strstr(rep, "\"toxic\":\"good\"") && !strstr(rep, "\"toxic\":\"bad\""));
	CHECK_EQ(json_int(rep, "\"schedule\":{\"step\":"), -1); /* 1 s: not yet */
	free(rep);
	tcp_proxy_close(p);
}

/* The registry's check for a disabled proxy (tcp_tc_schedule_check() on a
 * scratch runtime, as the server's validator calls it): the same verdicts
 * as the plane's, and the scratch runtime left with no device. */
static void test_schedule_check(void)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	struct pw_runtime *rt = NULL;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	char q[] = "netem delay 1ms";
	char good[] = "1s qdisc change dev x root netem delay 2ms\nloop\n";
	char bad[] = "1s qdisc change dev x root netem delay 2ms\n"
		     "2s qdisc change dev x root netem delay bogus\n";
	char err[512] = "";
	struct toxic t = mk_tc(TOXIC_UPSTREAM, "c", q, good);
	CHECK_EQ(tcp_tc_schedule_check(rt, &t, err, sizeof(err)), 0);
	t.a.tc.schedule = bad;
	CHECK_EQ(tcp_tc_schedule_check(rt, &t, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "schedule:2") && strstr(err, "bogus"));
	t.a.tc.schedule = NULL;
	CHECK_EQ(tcp_tc_schedule_check(rt, &t, err, sizeof(err)), 0);
	/* a batch: its qdiscs made first, so a step's change finds its qdisc */
	char batch[] = "qdisc add dev d root handle 1: netem delay 1ms\n";
	char sc[] = "5ms qdisc change dev d root handle 1: netem delay 3ms\n";
	t.a.tc.qdisc = NULL;
	t.a.tc.batch = batch;
	t.a.tc.schedule = sc;
	CHECK_EQ(tcp_tc_schedule_check(rt, &t, err, sizeof(err)), 0);
	char out[256] = "x";
	CHECK_EQ(pw_tc(rt, "qdisc show dev pwsch0", 0, out, sizeof(out), NULL, 0), -ENODEV);
	pw_runtime_destroy(rt);
}

/* The accuracy report of a netem delay: sojourn samples, configured
 * quantiles beside them, a verdict. */
static void test_accuracy_report(void)
{
	uint16_t port;
	struct tcp_proxy *p = ntu_proxy_open(PL, E.port, &port);
	char q[] = "netem delay 3ms";
	struct toxic t = mk_tc(TOXIC_UPSTREAM, "acc", q, NULL);
	ntu_set_toxics(p, &t, 1);
	int fd = ntu_client(port, 0);
	const int N = 40; /* one piece each: below the tc stage's piece size */
	for (int k = 0; k < N; k++) {
		ntu_send_pat(fd, (uint64_t)k * 1000, 1000);
		ntu_recv_pat(fd, (uint64_t)k * 1000, 1000);
	}
	char *rep = tcp_proxy_tc_report(p, TOXIC_UPSTREAM);
	CHECK(rep != NULL);
	if (getenv("PW_TEST_VERBOSE"))
		fprintf(stderr, "%s\n", rep);
	CHECK(strstr(rep, "\"accuracy\"") != NULL);
	CHECK(strstr(rep, "\"configured_sojourn_ns\"") != NULL);
	CHECK(strstr(rep, "\"check\":\"pass\"") || strstr(rep, "\"check\":\"fail\""));
	CHECK(!strstr(rep, "\"schedule\""));
	free(rep);
	close(fd);
	struct tcp_proxy_stats s;
	ntu_wait_idle(p, &s);
	CHECK_EQ(s.dir[TOXIC_UPSTREAM].bytes_out, (uint64_t)N * 1000);
	tcp_proxy_close(p);
}

int main(void)
{
	ntu_plane_start(&E, &PL);
	RUN(test_schedule_runs);
	RUN(test_schedule_bad);
	RUN(test_schedule_check);
	RUN(test_accuracy_report);
	ntu_plane_stop(&E, PL);
	return 0;
}
