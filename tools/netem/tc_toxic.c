/* SPDX-License-Identifier: MIT */
/*
 * A tc toxic's words, as the TCP proxies (tcp/tc_dev.c: a device per
 * proxy, stream and toxic) and the UDP proxies (api/udp_proxy.c,
 * udp/udp_report.c: the relay's direction devices) both take them: run
 * confined to one device, checked whole before any data path sees them,
 * their schedule loaded inline, the device's report for the API's stats.
 *
 * The client's words.  They come from whoever can reach the API, so
 * every command runs confined to the toxic's own device (pw_tc_dev(): any
 * word after "dev", as tc's quoting leaves it, names the device; another
 * device's name is refused) and reads no file (PW_TC_NO_FILES), decided
 * by tc's parser, not by matching text.  Before a device is made the
 * whole toxic is checked on a device and runtime of its own
 * (tc_toxic_check()): every word and batch line, and for a byte stream
 * the configuration tc reads back, after the words and after each step of
 * the schedule: a netem that loses, duplicates, corrupts or reorders is
 * refused however it was spelt (tc_dev_stream_safe()).
 *
 * Schedules and accuracy.  Every device keeps its qdiscs' accuracy
 * figures (pw_netdev_accuracy_enable() before its words run, so each
 * qdisc counts from its creation): always on, because the figures are
 * about packets gone by, which no later request could count.  A toxic's
 * "schedule" text (the client's line numbers in its messages) is loaded
 * confined to the device and started when the device is made (toxic
 * added, changed or its proxy enabled); its steps run on a pinwheel timer
 * of the plane's runtime and the schedule's own thread, each a tc change
 * that keeps the packets queued; it stops before the device goes.  A
 * disabled proxy's toxic is checked the same way, by the validator
 * (tc_toxic_check(), through tcp_tc_schedule_check()).  The report
 * (tc_report_json()) is tc's JSON show with the accuracy, the library's
 * check over the device and the schedule's status, written as text so
 * this file needs no JSON library.
 *
 * Threads: as tc_toxic.h says.  Locks: none of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/net.h>
#include <pinwheel/runtime.h>

#include "../common/json_str.h"
#include "tc_toxic.h"

/* The words of an API client: no file read (PW_TC_NO_FILES), and every
 * command confined to the toxic's own device (pw_tc_dev(): whatever the
 * client wrote after "dev", quoted or not, names it; another device's name
 * is refused and named), decided by tc's parser on the words it reads. */
#define TC_UNTRUSTED PW_TC_NO_FILES
#define SCHED_UNTRUSTED (PW_TC_SCHED_NO_FILES | PW_TC_SCHED_CONFINE)

/* tc_toxic_set_budget()'s: set before the first check, read only after. */
static struct pw_mem_budget *tc_budget;

void tc_toxic_set_budget(struct pw_mem_budget *b)
{
	tc_budget = b;
}

struct pw_mem_budget *tc_toxic_budget(void)
{
	return tc_budget;
}

void tc_toxic_say_spent(char *err, size_t errlen, const char *toxic, const char *what)
{
	snprintf(err, errlen,
		 "toxic %s: the server's memory budget is spent (--max-bytes %llu: the bytes its "
		 "proxies hold and their tc state together): %s",
		 toxic, tc_budget ? (unsigned long long)tc_budget->limit : 0ull, what);
}

int tc_toxic_run_words(struct pw_runtime *rt, const char *devname, const struct toxic *t,
		       char *err, size_t errlen)
{
	char msg[512] = "";
	const char *words = t->a.tc.qdisc ? t->a.tc.qdisc : t->a.tc.batch;
	if (t->a.tc.qdisc) {
		char *cmd = NULL;
		if (asprintf(&cmd, "qdisc add dev %s root %s", devname, words) < 0)
			return -ENOMEM;
		int r = pw_tc_dev(rt, devname, cmd, TC_UNTRUSTED, NULL, 0, msg, sizeof(msg));
		free(cmd);
		if (r) {
			msg[strcspn(msg, "\n")] = '\0';
			snprintf(err, errlen, "toxic %s: tc refused \"%.*s\": %s", t->name,
				 (int)toxic_utf8_fit(words, strlen(words) > 120 ? 120 : strlen(words)),
				 words, msg[0] ? msg : strerror(-r));
			if (r == -ENOBUFS)
				tc_toxic_say_spent(err, errlen, t->name, "tc refused its qdisc");
			return r == -ENOMEM || r == -ENOBUFS ? r : -EINVAL;
		}
		return 0;
	}
	const char *p = words, *s;
	unsigned line = 0;
	size_t n;
	while (toxic_tc_next_line(&p, &line, &s, &n)) {
		char *cmd = strndup(s, n);
		if (!cmd)
			return -ENOMEM;
		int r = pw_tc_dev(rt, devname, cmd, TC_UNTRUSTED, NULL, 0, msg, sizeof(msg));
		free(cmd);
		if (r) {
			msg[strcspn(msg, "\n")] = '\0';
			snprintf(err, errlen, "toxic %s: tc refused batch line %u \"%.*s\": %s", t->name,
				 line, (int)toxic_utf8_fit(s, n > 120 ? 120 : n), s,
				 msg[0] ? msg : strerror(-r));
			if (r == -ENOBUFS) {
				char what[64];
				snprintf(what, sizeof(what), "tc refused its batch line %u", line);
				tc_toxic_say_spent(err, errlen, t->name, what);
			}
			return r == -ENOMEM || r == -ENOBUFS ? r : -EINVAL;
		}
	}
	return 0;
}

int tc_schedule_load_inline(struct pw_runtime *rt, struct pw_runtime *timer_rt, const char *text,
			    const char *devname, unsigned flags, struct pw_tc_schedule **out,
			    char *msg, size_t msglen)
{
	*out = NULL;
	int r = pw_tc_schedule_load(rt, text, "schedule", devname, SCHED_UNTRUSTED | flags, out,
				    msg, msglen);
	if (!r && timer_rt && (r = pw_tc_schedule_set_timer_rt(*out, timer_rt))) {
		pw_tc_schedule_free(*out);
		*out = NULL;
		snprintf(msg, msglen, "the scheduler: %s", strerror(-r));
	}
	return r;
}

int tc_dev_stream_safe(struct pw_runtime *rt, const char *devname, const char *toxic, char *err,
		       size_t errlen)
{
	/* netem's options as its printer writes them from the parsed
	 * configuration (q_netem.c): whatever spelling the words used */
	static const char *const stream_less[] = { "loss", "duplicate", "corrupt", "reorder",
						   "gap", "slot" };
	char cmd[64], msg[256];
	snprintf(cmd, sizeof(cmd), "qdisc show dev %s", devname);
	size_t cap = 1 << 14;
	char *out = NULL;
	int r;
	for (;;) {
		free(out);
		if (!(out = malloc(cap)))
			return -ENOMEM;
		r = pw_tc(rt, cmd, 0, out, cap, msg, sizeof(msg));
		if (r != -ENOSPC || cap >= (1u << 26))
			break;
		cap *= 4;
	}
	if (r) {
		free(out);
		snprintf(err, errlen, "toxic %s: cannot read back its device: %s", toxic,
			 strerror(-r));
		return r == -ENOMEM ? r : -EIO;
	}
	int bad = -1;
	for (char *l = out, *e; l && *l && bad < 0; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		if (e)
			*e = '\0';
		if (strncmp(l, "qdisc netem ", 12))
			continue;
		for (char *w = strtok(l, " "); w && bad < 0; w = strtok(NULL, " "))
			for (size_t i = 0; i < sizeof(stream_less) / sizeof(stream_less[0]); i++)
				if (!strcmp(w, stream_less[i]))
					bad = (int)i;
	}
	free(out);
	if (bad < 0)
		return 0;
	snprintf(err, errlen,
		 "toxic %s: netem %s cannot apply to a TCP byte stream (it would lose or reorder "
		 "bytes); use it on a udp proxy",
		 toxic, stream_less[bad]);
	return -EINVAL;
}

static void check_drop(struct pw_netdev *dev, struct pw_pkt *pkt, enum pw_drop_reason reason,
		       void *ctx)
{
	(void)dev;
	(void)pkt;
	(void)reason;
	(void)ctx; /* a checking device carries no packet */
}

static int check_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pkt, void *ctx)
{
	(void)dev;
	(void)txq;
	(void)pkt;
	(void)ctx;
	return PW_NETDEV_TX_OK;
}

static const struct pw_netdev_ops check_ops = { .xmit = check_xmit, .drop = check_drop };

/* A schedule's steps, run once through on device @devname of @rt (the
 * simulated clock; the schedule loaded inline), each step's result checked
 * for a byte stream: two passes when it loops (a pass starts from where
 * the last one left the device).  Return: 0; -EINVAL with the step's line
 * in @err; -ENOMEM. */
static int sched_walk(struct pw_runtime *rt, const char *devname, struct pw_tc_schedule *sc,
		      const struct toxic *t, char *err, size_t errlen)
{
	int r = pw_tc_schedule_start(sc);
	if (r)
		return r == -ENOMEM ? r : -EINVAL;
	struct pw_tc_schedule_status st;
	uint64_t seen = 0;
	for (unsigned i = 0; !pw_tc_schedule_status(sc, &st) && !st.finished && st.cycle < 2 &&
			     i < 4 * st.nsteps + 8;
	     i++) {
		uint64_t next = pw_next_expiry_ns(rt, 0);
		uint64_t now = pw_now_ns(rt);
		if (next == UINT64_MAX || (r = pw_sim_advance(rt, next > now ? next - now : 0)))
			break;
		if (pw_tc_schedule_status(sc, &st) || st.due == seen)
			continue;
		seen = st.due;
		char msg[512];
		r = tc_dev_stream_safe(rt, devname, t->name, msg, sizeof(msg));
		if (r) {
			snprintf(err, errlen, "%s, after attributes.schedule:%u", msg, st.line);
			break;
		}
	}
	pw_tc_schedule_stop(sc);
	return r;
}

int tc_toxic_check(const struct toxic *t, int stream, char *err, size_t errlen)
{
	if (t->type != TOXIC_TC)
		return 0;
	if (!t->a.tc.qdisc && !t->a.tc.batch) {
		snprintf(err, errlen, "toxic %s: a tc toxic needs a qdisc or a batch", t->name);
		return -EINVAL;
	}
	/* a runtime of its own, on the simulated clock: no other device, no
	 * thread, nothing shared with a data path */
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	struct pw_runtime *rt = NULL;
	struct pw_netdev *dev = NULL;
	const char *devname = "pwcheck0";
	int r = pw_runtime_create(&cfg, &rt);
	/* what the check builds is memory too: charged like the plane's */
	if (!r && tc_budget)
		r = pw_net_set_budget(rt, tc_budget);
	if (!r)
		r = pw_netdev_create(rt, devname, 1, &check_ops, NULL, &dev);
	if (r) {
		if (rt)
			pw_runtime_destroy(rt);
		snprintf(err, errlen, "toxic %s: cannot check its words: %s", t->name,
			 strerror(-r));
		if (r == -ENOBUFS)
			tc_toxic_say_spent(err, errlen, t->name, "no room to check its words");
		return r == -ENOMEM || r == -ENOBUFS ? r : -EAGAIN;
	}
	r = tc_toxic_run_words(rt, devname, t, err, errlen);
	if (!r && stream)
		r = tc_dev_stream_safe(rt, devname, t->name, err, errlen);
	if (!r && t->a.tc.schedule) {
		char msg[512] = "";
		struct pw_tc_schedule *sc = NULL;
		r = tc_schedule_load_inline(rt, NULL, t->a.tc.schedule, devname, PW_TC_SCHED_INLINE,
					    &sc, msg, sizeof(msg));
		if (r && r != -ENOMEM)
			snprintf(err, errlen, "toxic %s: attributes.%s", t->name,
				 msg[0] ? msg : strerror(-r));
		if (!r && stream)
			r = sched_walk(rt, devname, sc, t, err, errlen);
		pw_tc_schedule_free(sc);
		if (r == -ENOBUFS)
			tc_toxic_say_spent(err, errlen, t->name, "its schedule's steps need more");
		if (r && r != -ENOMEM && r != -ENOBUFS)
			r = -EINVAL;
	}
	if (r == -ENOMEM)
		snprintf(err, errlen, "toxic %s: no memory to check its words", t->name);
	pw_netdev_destroy(dev);
	pw_runtime_destroy(rt);
	return r;
}

/* ------------------------------------------------------------ the report */

/* "tc -s -j qdisc show dev D" with the accuracy: malloc'd; NULL (no
 * memory, or tc failed). */
static char *qdisc_show(struct pw_runtime *rt, const char *devname)
{
	char cmd[64], err[256];
	snprintf(cmd, sizeof(cmd), "qdisc show dev %s", devname);
	for (size_t cap = 1 << 14; cap <= (1u << 24); cap *= 4) {
		char *out = malloc(cap);
		if (!out)
			return NULL;
		out[0] = '\0';
		int rc = pw_tc(rt, cmd, PW_TC_STATS | PW_TC_JSON | PW_TC_ACCURACY, out, cap, err,
			       sizeof(err));
		if (rc == -ENOSPC) {
			free(out);
			continue;
		}
		if (rc) {
			free(out);
			return NULL;
		}
		size_t n = strlen(out);
		while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = '\0';
		return out;
	}
	return NULL;
}

char *tc_report_json(struct pw_runtime *rt, struct pw_netdev *dev, const char *devname,
		     const char *toxic, struct pw_tc_schedule *sched)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputs("{\"toxic\":", f);
	json_put_str(f, toxic);
	fputs(",\"device\":", f);
	json_put_str(f, devname);
	char *q = qdisc_show(rt, devname);
	fprintf(f, ",\"qdiscs\":%s", q && q[0] ? q : "[]");
	free(q);
	char why[2048] = "";
	int v = pw_netdev_accuracy_check(dev, why, sizeof(why));
	fprintf(f, ",\"check\":\"%s\",\"why\":",
		v == PW_ACC_FAIL ? "fail" : v == PW_ACC_PASS ? "pass" :
		v == PW_ACC_NOT_JUDGED ? "not judged" : "error");
	size_t wn = strlen(why);
	while (wn && why[wn - 1] == '\n')
		why[--wn] = '\0';
	json_put_str(f, why);
	struct pw_tc_schedule_status ss;
	if (sched && !pw_tc_schedule_status(sched, &ss)) {
		fprintf(f,
			",\"schedule\":{\"step\":%d,\"line\":%u,\"loops\":%" PRIu64 ",\"steps\":%u,"
			"\"due\":%" PRIu64 ",\"applied\":%" PRIu64 ",\"failed\":%" PRIu64
			",\"finished\":%s",
			ss.step, ss.line, ss.cycle, ss.nsteps, ss.due, ss.applied, ss.failed,
			ss.finished ? "true" : "false");
		if (ss.failed_step >= 0) {
			fprintf(f, ",\"last_failure\":{\"line\":%u,\"error\":", ss.failed_line);
			json_put_str(f, ss.failed_msg);
			fputc('}', f);
		}
		fputc('}', f);
	}
	fputc('}', f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
