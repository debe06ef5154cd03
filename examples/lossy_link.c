/* SPDX-License-Identifier: MIT */
/*
 * A lossy link inside a program: `netem delay 20ms 5ms loss 5%` on a
 * simulated clock, in-process, seeded.  Twenty datagrams go in 10 ms
 * apart; the program moves the clock, prints what left (when, which, how
 * late) and what was lost, changes the link mid-run with a tc command as
 * `tc qdisc change` would, and checks that every datagram came back once.
 * The same output on every run and every machine.  Builds against the
 * installed library (examples/CMakeLists.txt, or pkg-config pinwheel).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pinwheel/link.h>
#include <pinwheel/net.h>

#define MS 1000000ull

/* Print what left and what was dropped since the last call; count them. */
static unsigned drain(struct pw_link *l, const uint64_t *sent_at, unsigned *lost)
{
	struct pw_link_pkt p[16];
	size_t n;
	unsigned got = 0;
	while ((n = pw_link_departures(l, p, 16)) > 0)
		for (size_t i = 0; i < n; i++, got++)
			printf("%8.3f ms  left     #%-2" PRIu64 " \"%.*s\" after %.3f ms\n",
			       p[i].time_ns / 1e6, p[i].tag, (int)p[i].len, (const char *)p[i].data,
			       (p[i].time_ns - sent_at[p[i].tag]) / 1e6);
	while ((n = pw_link_drops(l, p, 16)) > 0)
		for (size_t i = 0; i < n; i++, (*lost)++)
			printf("%8.3f ms  dropped  #%-2" PRIu64 " (%s)\n", p[i].time_ns / 1e6, p[i].tag,
			       pw_drop_reason_name((enum pw_drop_reason)p[i].reason));
	return got;
}

int main(void)
{
	struct pw_link *l;
	char err[512];
	/* the root qdisc as tc's words; seed 5: the same losses every run */
	int rc = pw_link_create(&l, "netem delay 20ms 5ms loss 5%", 0, 5, 1, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pw_link_create: %s\n", err);
		return 1;
	}
	uint64_t sent_at[20];
	unsigned left = 0, lost = 0;
	for (unsigned i = 0; i < 20; i++) {
		char msg[16];
		int len = snprintf(msg, sizeof(msg), "hello %u", i);
		if (i == 10) {
			/* mid-run, at the link's clock: what is queued keeps its times */
			printf("-- tc qdisc change dev link root netem delay 50ms loss 20%% (at %.0f ms)\n",
			       pw_link_now_ns(l) / 1e6);
			if (pw_link_tc(l, "qdisc change dev link root netem delay 50ms loss 20%", NULL, 0, err,
				       sizeof(err))) {
				fprintf(stderr, "tc: %s\n", err);
				return 1;
			}
		}
		sent_at[i] = i * 10 * MS;
		/* the clock moves to the send's time first: what is due leaves */
		if (pw_link_send(l, sent_at[i], msg, (uint32_t)len, i, 0, 0) < 0) {
			fprintf(stderr, "send: %s\n", pw_link_error(l));
			return 1;
		}
		left += drain(l, sent_at, &lost);
	}
	pw_link_advance(l, 1000 * MS);
	left += drain(l, sent_at, &lost);

	char out[2048];
	pw_link_tc(l, "-s qdisc show dev link", out, sizeof(out), NULL, 0);
	printf("-- tc -s qdisc show dev link\n%s", out);
	pw_link_free(l);
	printf("%u left, %u lost, of 20\n", left, lost);
	return left + lost == 20 ? 0 : 1; /* every datagram back once */
}
