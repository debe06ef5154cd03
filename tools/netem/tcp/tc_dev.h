/* SPDX-License-Identifier: MIT */
/*
 * The tc toxic on TCP proxies (tools/netem/tcp/tc_dev.c): one pinwheel
 * device per proxy, stream direction and tc toxic, on the TCP plane's
 * runtime, whose qdiscs every connection of the proxy shares; the packets
 * that stand for a connection's chunks in it; and their way back to the
 * connection's worker.  Private to the TCP plane (tcp.c, conn.c); its
 * words are run and checked by ../tc_toxic.h's functions.
 *
 * A tc toxic's "schedule" runs on the device from its creation (a
 * pw_tc_schedule on the plane's runtime), and every device keeps its
 * qdiscs' accuracy figures for the API's statistics (tc_dev_report()).
 *
 * Threads: tc_dev_create/destroy and the reports on the control thread; tc_dev_send and
 * tc_toxic_drain on a worker; the device's driver callbacks on whichever
 * worker (or the control thread, at destroy) the layer calls them.
 * Locks: none of its own (the layer's queue and configuration locks).
 */
#ifndef PW_NETEM_TC_DEV_H
#define PW_NETEM_TC_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "../tc_toxic.h"

struct tcp_plane;
struct worker;
struct pw_netdev;
struct pw_runtime;
struct pw_tc_schedule;

/* A tc toxic's device. */
struct tc_dev {
	struct tc_dev *next;       /* the proxy's list it is on */
	struct pw_netdev *dev;
	char devname[16];
	char toxic[TOXIC_NAME_MAX];
	enum toxic_stream stream;
	char *words;               /* the toxic's qdisc or batch text (a copy) */
	int batch;                 /* words is a batch */
	char *sched_text;          /* the toxic's schedule text (a copy), or NULL */
	struct pw_tc_schedule *sched; /* running from the device's creation */
	struct pw_runtime *rt;     /* the plane's (tc show for the report) */
	int pinned;                /* a connection may still use it: destroyed
				      only with the proxy */
	uint64_t inflight;         /* atomic: packets in the device */
};

/**
 * tc_dev_create() - a device for the tc toxic @t on @pl's runtime, its
 * qdiscs set from @t's words (the qdisc form: "qdisc add dev DEV root
 * WORDS"; a batch: each command, the word after "dev" replaced by the
 * device's name).  @serial makes the name unique.
 * Context: the control thread.  Return: 0; -EINVAL with tc's message
 * naming the toxic in @err; -ENOMEM.
 */
int tc_dev_create(struct tcp_plane *pl, const struct toxic *t, uint64_t serial,
		  struct tc_dev **out, char *err, size_t errlen);

/**
 * tc_dev_destroy() - destroy the device (what it still holds comes back
 * to the connections' workers as flushed) and free @d.
 * Context: the control thread, once no worker sends on it.
 */
void tc_dev_destroy(struct tc_dev *d);

/* Does @d serve toxic @t as it is now (same name, stream, words and
 * schedule)? */
int tc_dev_matches(const struct tc_dev *d, const struct toxic *t);

/**
 * tc_dev_send() - struct stream_tc_ops.send for a direction (@ctx: its
 * struct dir): a packet of @len bytes numbered @id into device @dev; the
 * connection holds a reference until it comes back.
 * Context: the direction's worker.  Return: 0; -ENOMEM.
 */
int tc_dev_send(void *ctx, void *dev, uint32_t len, uint64_t id);

/**
 * tc_toxic_drain() - hand what the devices gave back to @w's connections:
 * each piece to its stream (stream_tc_back), the connection to the run
 * list, or reset when a qdisc dropped a piece for good; a closed
 * connection's pieces only drop its references (freed at the last).
 * With @w stopped (@final 1, the plane's end) from the control thread.
 * Context: @w's thread.  Return: 1 if anything came back.
 */
int tc_toxic_drain(struct worker *w, int final);

/* Is anything waiting for tc_toxic_drain()?  @w's thread. */
int tc_toxic_pending(struct worker *w);

/**
 * tc_dev_report() - @d's report for the API's statistics, a JSON object
 * (text): {"toxic","device","qdiscs": tc -s -j qdisc show with each
 * qdisc's accuracy, "check": "pass"|"fail"|"not judged" and "why" (the
 * library's check over the device: metric and tolerance in
 * include/pinwheel/net.h), and "schedule": {"step","line","loops","due",
 * "applied","failed", "last_failure"} when it has one}.
 * Context: the control thread (any thread but a driver callback).
 * Return: the text (malloc'd); NULL (no memory).
 */
char *tc_dev_report(struct tc_dev *d);

/* The calling thread is worker @w (NULL: none).  Once, at its start. */
void tc_toxic_thread(struct worker *w);

#endif /* PW_NETEM_TC_DEV_H */
