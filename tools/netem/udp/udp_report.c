/* SPDX-License-Identifier: MIT */
/*
 * A UDP relay's direction devices as the API sees them (built with --api
 * only, beside tools/netem/api/udp_proxy.c): the achieved beside the
 * configured, the statistics' JSON (a UDP proxy's GET /stats, and what
 * GET /metrics reads for a proxy or the command line's relay), and a
 * schedule set at run time.
 *
 * The report.  udp_relay_tc_report() is the object a TCP proxy's tc toxic
 * shows in GET /proxies/{name}/stats (tools/netem/tc_toxic.c's
 * tc_report_json(), the one writer of it: tc's JSON show with each
 * qdisc's accuracy, the library's check over the device, the schedule's
 * status), made for the relay's "up" or "down" device.  Its figures come
 * from the device's accuracy counts, which the relay keeps when started
 * with cfg->accuracy (pw_netdev_accuracy_enable() in udp_setup.c's
 * setup()): a qdisc counts from its creation, so a "qdisc change" keeps
 * its figures and a "replace" starts them again.
 *
 * Schedules.  udp_relay_set_schedule() gives a direction the schedule an
 * API tc toxic carries (inline text, any word after "dev" replaced by the
 * direction's device: tc_schedule_load_inline()), in r->sched[dir], the
 * slot a --up-schedule file's schedule takes: the relay's stop stops and
 * frees it (udp_setup.c), its report shows its step.  The text is loaded
 * and checked before the old schedule stops, so a bad one changes
 * nothing.
 *
 * Threads: the relay's controlling thread (an API request's, or the
 * resolver's), one call at a time per relay as udp.h asks; a schedule's
 * steps run on its own thread.  Locks: none of its own (pw_tc's
 * configuration lock inside the layer; a schedule's stop waits for a step
 * in progress).  Reads struct udp_relay (udp_priv.h) for its runtime,
 * devices and schedule slots.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/net.h>

#include "../tc_toxic.h"
#include "udp.h"
#include "udp_priv.h"

static const char *const dev_name[RELAY_NDIR] = { "up", "down" };

/* The report of a direction (see udp.h). */
char *udp_relay_tc_report(struct udp_relay *r, enum relay_dir dir, const char *toxic)
{
	if (!r || (unsigned)dir >= RELAY_NDIR || !r->dev[dir])
		return NULL;
	return tc_report_json(r->rt, r->dev[dir], dev_name[dir], toxic ? toxic : "",
			      r->sched[dir]);
}

/* Direction @d's object: the counters of @s, the latency configured
 * (@c: NULL for none) and the device's report (none without @r). */
static json_t *dir_json(struct udp_relay *r, int d, const struct udp_dir_stats *s,
			const struct udp_dir_conf *c)
{
	json_t *j = json_object(), *dr = json_object(), *tc = json_array();
	json_object_set_new(j, "rx", json_integer((json_int_t)s->rx));
	json_object_set_new(j, "rx_bytes", json_integer((json_int_t)s->rx_bytes));
	json_object_set_new(j, "clones", json_integer((json_int_t)s->clones));
	json_object_set_new(j, "out", json_integer((json_int_t)s->out));
	json_object_set_new(j, "out_bytes", json_integer((json_int_t)s->out_bytes));
	for (unsigned k = 0; k < RD_NREASONS; k++)
		if (s->dropped[k])
			json_object_set_new(dr, udp_reason_name(k),
					    json_integer((json_int_t)s->dropped[k]));
	json_object_set_new(j, "dropped_total", json_integer((json_int_t)udp_dropped_total(s)));
	json_object_set_new(j, "dropped", dr);
	json_object_set_new(j, "backlog", json_integer((json_int_t)s->backlog));
	json_object_set_new(j, "latency_ms", json_integer(c ? c->lat_ms : 0));
	json_object_set_new(j, "jitter_ms", json_integer(c ? c->jit_ms : 0));
	/* the device's report, as a TCP proxy's tc toxic's; the stream's
	 * check is the report's ("error": the figures are off: not judged) */
	const char *check = "not judged";
	char *text = r ? udp_relay_tc_report(r, (enum relay_dir)d, c ? c->label : NULL) : NULL;
	json_t *rep = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (json_is_object(rep)) {
		const char *k = json_string_value(json_object_get(rep, "check"));
		if (k && (!strcmp(k, "pass") || !strcmp(k, "fail")))
			check = !strcmp(k, "pass") ? "pass" : "fail";
		json_array_append_new(tc, rep);
	} else {
		json_decref(rep);
	}
	json_object_set_new(j, "tc", tc);
	json_object_set_new(j, "check", json_string(check));
	return j;
}

/* The statistics as the API shows them (see udp.h). */
char *udp_relay_stats_json(struct udp_relay *r, const struct udp_stats *s,
			   const struct udp_dir_conf *conf, const char *since)
{
	json_t *j = json_object();
	if (!j)
		return NULL;
	json_object_set_new(j, "counted_since", json_string(since ? since : ""));
	json_object_set_new(j, "clients", json_integer((json_int_t)s->clients));
	json_object_set_new(j, "clients_new", json_integer((json_int_t)s->clients_new));
	json_object_set_new(j, "clients_expired", json_integer((json_int_t)s->clients_expired));
	json_object_set_new(j, "refused", json_integer((json_int_t)s->refused));
	json_object_set_new(j, "upstream_errors", json_integer((json_int_t)s->upstream_errors));
	json_object_set_new(j, "mem", json_integer((json_int_t)s->mem));
	json_object_set_new(j, "upstream",
			    dir_json(r, RELAY_UP, &s->d[RELAY_UP], conf ? &conf[RELAY_UP] : NULL));
	json_object_set_new(j, "downstream", dir_json(r, RELAY_DOWN, &s->d[RELAY_DOWN],
						      conf ? &conf[RELAY_DOWN] : NULL));
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return text;
}

/* A direction's schedule (see udp.h). */
int udp_relay_set_schedule(struct udp_relay *r, enum relay_dir dir, const char *text, char *err,
			   size_t errlen)
{
	if ((unsigned)dir >= RELAY_NDIR) {
		snprintf(err, errlen, "no such direction");
		return -EINVAL;
	}
	struct pw_tc_schedule *s = NULL;
	if (text) {
		char msg[512] = "";
		int rc = tc_schedule_load_inline(r->rt, r->cfg.sched_rt, text, dev_name[dir], 0, &s, msg,
						 sizeof(msg));
		if (rc == -ENOMEM) {
			snprintf(err, errlen, "out of memory");
			return rc;
		}
		if (rc) {
			snprintf(err, errlen, "%s", msg[0] ? msg : strerror(-rc));
			return -EINVAL;
		}
	}
	pw_tc_schedule_free(r->sched[dir]); /* stopped first: no step after this */
	r->sched[dir] = s;
	if (s) {
		int rc = pw_tc_schedule_start(s);
		if (rc) {
			snprintf(err, errlen, "the schedule did not start: %s", strerror(-rc));
			pw_tc_schedule_free(s);
			r->sched[dir] = NULL;
			return rc == -ENOMEM ? rc : -EAGAIN;
		}
	}
	udp__kick_all(r);
	return 0;
}

int udp_relay_tc_dev(struct udp_relay *r, enum relay_dir dir, const char *cmd, char *err,
		     size_t errlen)
{
	if ((unsigned)dir >= RELAY_NDIR) {
		snprintf(err, errlen, "no such direction");
		return -EINVAL;
	}
	return udp__tc(r, dev_name[dir], cmd, PW_TC_NO_FILES, err, errlen);
}
