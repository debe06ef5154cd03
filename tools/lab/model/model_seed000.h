/* SPDX-License-Identifier: MIT */
/*
 * seed000's model, shared between its two files: model_seed000.c (the
 * machine, the flows, the netperf threads, the rows) and
 * model_seed000_claims.c (the claims and the notes read off the rows).
 * Private to them.
 *
 * Threads: the main thread only (model.c).
 */
#ifndef PW_LAB_MODEL_SEED000_H
#define PW_LAB_MODEL_SEED000_H

#include "model.h"

#define MSS 1448u
#define SEGS 2u                          /* segments per skb (TSO autosize) */
#define WIRE_LEN (SEGS * (MSS + 66u))    /* 3028: what fq and the wire count */
#define PAYLOAD (SEGS * MSS)
/* the seed's vmstat columns (the means of its rows after the first) */
#define SEED_CS_OFF 32263.0 /* cs, timer_migration=0: the input */
#define SEED_CS_ON 35560.0  /* cs, timer_migration=1: printed beside, not used */
#define SEED_R_OFF (12.0 / 9) /* r: the outputs' targets */
#define SEED_R_ON (24.0 / 15)
#define SEED_FLOWS 500u
#define SEED_RATE 3000000.0
/* two switches a wake-up; each writes the flows' bytes over the wake-ups */
#define WAKE_BYTES (SEED_FLOWS * SEED_RATE / (SEED_CS_OFF / 2))

/* The claims and the notes from the rows run at @cpus (@ncpu of them) x
 * @hz (@nhz): the headline at 32 CPUs when it ran, else the first count,
 * and the first HZ.  Context: main thread, after the rows. */
void mdl_seed000_claims(struct mdl_seed *sd, const unsigned *cpus_def, unsigned ncpu,
			const unsigned *hz_def, unsigned nhz);

#endif /* PW_LAB_MODEL_SEED000_H */
