/* SPDX-License-Identifier: MIT */
/*
 * A UDP relay's direction devices as the API sees them (built with --api
 * only, beside tools/netem/api/udp_proxy.c): the achieved beside the
 * configured, and a schedule set at run time.
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
#include <stdio.h>
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
