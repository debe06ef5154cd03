/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: the conn_mix sequence generator.  Connections of four
 * timers each (pace, deadline, idle, close: timer 4c + 0..3) driven by one
 * seeded random sequence of messages, responses, ends and new connections,
 * generated once per size and replayed identically against every
 * implementation.
 */
#include <stdlib.h>

#include "conn_mix.h"

struct cm_op *conn_mix_sequence(unsigned n, uint64_t ops, uint64_t *ncalls)
{
	unsigned conns = n / 4 ? n / 4 : 1;
	struct cm_op *seq = malloc((ops + 8) * sizeof(*seq));
	uint64_t s = 0x1234567887654321ull ^ n, m = 0;
	if (!seq)
		return NULL;
	while (m < ops) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		unsigned c = (unsigned)(s % conns), r = (unsigned)((s >> 32) % 100);
		uint32_t pace = 4 * c, deadline = pace + 1, idle = pace + 2, close = pace + 3;
		if (r < 60) { /* a message: pace it, the connection is not idle */
			seq[m++] = (struct cm_op){pace, CM_ARM, 1 + (uint32_t)((s >> 20) % 5)};
			seq[m++] = (struct cm_op){idle, CM_ARM, 60000};
		} else if (r < 85) { /* a response: push the deadline later */
			seq[m++] = (struct cm_op){deadline, CM_ARM, 1000 + (uint32_t)((s >> 24) % 1000)};
		} else if (r < 95) { /* the end: cancel, arm the close timer */
			seq[m++] = (struct cm_op){pace, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){deadline, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){idle, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){close, CM_ARM, 2000};
		} else { /* a new connection in the slot */
			seq[m++] = (struct cm_op){close, CM_CANCEL, 0};
			seq[m++] = (struct cm_op){idle, CM_ARM, 60000};
			seq[m++] = (struct cm_op){deadline, CM_ARM, 1500};
		}
	}
	*ncalls = m;
	return seq;
}
