/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: schedules of timed tc commands (src/net/tc/schedule.c,
 * pw_tc_schedule_*; what --up-schedule files, pinwheel-tc -schedule and
 * the API's "schedule" attribute all reach), on the simulated clock.
 *
 * Input: byte 0 picks the device restriction (none, eth0, eth1) and
 * whether a packet stream runs through eth0 while the schedule does; the
 * rest is the schedule's text, byte for byte (a NUL ends it early, as a C
 * string would).  Two devices, eth0 with `netem delay 10ms` at its root
 * and eth1 with nothing, so that `change`, `add`, `replace`, `delete` and
 * commands naming a missing device or qdisc are all reachable.
 * Properties, beyond "no crash, no leak, no undefined behaviour":
 *  - a loaded schedule has at least one step; its steps' times never go
 *    back and their lines grow; with a device given, every step names it
 *    (the command holds the word);
 *  - a refusal comes with a message that names the schedule ("f.sched");
 *  - run inline (PW_TC_SCHED_INLINE) over at most three of its periods
 *    (or to its last step) and 10 simulated seconds, the counts agree:
 *    due = applied + failed, and a step in force is one tc applied;
 *  - every packet handed to eth0 meanwhile comes back exactly once, sent
 *    or dropped (a `delete` or a change under it included).
 * Context: libFuzzer's thread; the runtime has no workers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#define T0 1000000000ull
#define MS 1000000ull
#define SEC 1000000000ull
#define NPKT 64u

static struct pw_pkt pkts[NPKT];
static unsigned sent, dropped;

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_schedule: %s\n", what);
		abort();
	}
}

static int drv_xmit(struct pw_netdev *d, unsigned txq, struct pw_pkt *p, void *ctx)
{
	(void)d, (void)txq, (void)ctx, (void)p;
	sent++;
	return PW_NETDEV_TX_OK;
}

static void drv_drop(struct pw_netdev *d, struct pw_pkt *p, enum pw_drop_reason r, void *ctx)
{
	(void)d, (void)p, (void)ctx;
	must(r > 0 && r < PW_DROP_REASON_MAX, "a drop without a reason");
	dropped++;
}

static const struct pw_netdev_ops drv = { .xmit = drv_xmit, .drop = drv_drop };

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 1)
		return 0;
	static const char *const devs[] = { NULL, "eth0", "eth1" };
	const char *only = devs[d[0] % 3];
	int traffic = (d[0] / 3) & 1;
	char *text = malloc(n);
	must(text != NULL, "malloc");
	memcpy(text, d + 1, n - 1);
	text[n - 1] = '\0';

	struct pw_config pc;
	pw_config_init(&pc);
	pc.ncpus = 1;
	pc.clock = PW_CLOCK_SIM;
	pc.sim_start_ns = T0;
	struct pw_runtime *rt;
	must(pw_runtime_create(&pc, &rt) == 0, "runtime");
	struct pw_netdev *eth0, *eth1;
	must(pw_netdev_create(rt, "eth0", 1, &drv, NULL, &eth0) == 0, "netdev");
	must(pw_netdev_create(rt, "eth1", 1, &drv, NULL, &eth1) == 0, "netdev");
	char err[1024];
	must(pw_tc(rt, "qdisc add dev eth0 root netem delay 10ms", 0, NULL, 0, err, sizeof(err)) == 0,
	     "the base qdisc");

	struct pw_tc_schedule *s = NULL;
	err[0] = '\0';
	int rc = pw_tc_schedule_load(rt, text, "f.sched", only, PW_TC_SCHED_INLINE, &s, err,
				     sizeof(err));
	sent = dropped = 0;
	unsigned handed = 0;
	if (rc) {
		must(s == NULL, "a refusal left a schedule");
		must(rc == -EINVAL || rc == -ENODEV || rc == -ENOMEM, "an unexpected errno");
		must(strstr(err, "f.sched") != NULL || rc == -ENOMEM, "a message without the name");
	} else {
		struct pw_tc_schedule_status st;
		must(pw_tc_schedule_status(s, &st) == 0, "status");
		must(st.nsteps >= 1, "a schedule without a step");
		uint64_t last = 0;
		unsigned line = 0;
		for (unsigned i = 0; i < st.nsteps; i++) {
			struct pw_tc_schedule_step sp;
			must(pw_tc_schedule_step(s, i, &sp) == 0, "step");
			must(sp.time_ns >= last, "a step's time goes back");
			must(sp.line > line, "a step's line does not grow");
			must(sp.cmd != NULL, "a step without a command");
			if (only)
				must(strstr(sp.cmd, only) != NULL, "a step not naming its device");
			last = sp.time_ns, line = sp.line;
		}
		must(pw_tc_schedule_step(s, st.nsteps, &(struct pw_tc_schedule_step){ 0 }) == -ERANGE,
		     "a step past the end");
		uint64_t span = st.period_ns ? 3 * st.period_ns : last + 1;
		if (span > 10 * SEC)
			span = 10 * SEC;
		must(pw_tc_schedule_start(s) == 0, "start");
		/* the clock in 64 steps, a packet into eth0 at each when asked */
		for (unsigned k = 1; k <= NPKT; k++) {
			if (traffic) {
				pw_pkt_init(&pkts[k - 1], NULL, 100 + k);
				handed++;
				rc = pw_dev_queue_xmit(eth0, &pkts[k - 1]);
				must(rc == PW_NET_XMIT_SUCCESS || rc == PW_NET_XMIT_DROP ||
					     rc == PW_NET_XMIT_CN,
				     "xmit's return");
			}
			uint64_t at = T0 + span * k / NPKT;
			if (at > pw_now_ns(rt))
				must(pw_sim_advance(rt, at - pw_now_ns(rt)) == 0, "advance");
		}
		must(pw_tc_schedule_stop(s) == 0, "stop");
		must(pw_tc_schedule_status(s, &st) == 0, "status");
		must(st.due == st.applied + st.failed, "due != applied + failed");
		if (st.step >= 0)
			must(st.applied >= 1, "a step in force that tc never applied");
		pw_tc_schedule_free(s);
	}
	/* what is still queued comes back as the devices go */
	if (pw_now_ns(rt) < T0 + 20 * SEC)
		must(pw_sim_advance(rt, T0 + 20 * SEC - pw_now_ns(rt)) == 0, "advance");
	pw_netdev_destroy(eth0);
	pw_netdev_destroy(eth1);
	must(sent + dropped == handed, "a packet lost or seen twice");
	pw_runtime_destroy(rt);
	free(text);
	return 0;
}
