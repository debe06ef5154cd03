/* SPDX-License-Identifier: MIT */
/*
 * The tc toxic on TCP proxies (tools/netem/tc_toxic.c): one pinwheel
 * device per proxy, stream direction and tc toxic, on the TCP plane's
 * runtime, whose qdiscs every connection of the proxy shares; the packets
 * that stand for a connection's chunks in it; and their way back to the
 * connection's worker.  Private to the TCP plane (tcp.c, conn.c), but for
 * tc_toxic_check(), which the API's validator calls.
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
#ifndef PW_NETEM_TC_TOXIC_H
#define PW_NETEM_TC_TOXIC_H

#include <stddef.h>
#include <stdint.h>

#include "toxic.h"

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

/**
 * tc_report_json() - tc_dev_report()'s object for any device: @dev named
 * @devname on @rt (its accuracy on: pw_netdev_accuracy_enable()), shown
 * as toxic @toxic, with schedule @sched (NULL: none) -- for a UDP
 * proxy's direction devices as for a TCP proxy's tc toxics.
 * Context: any thread but a driver callback.  Return: the text
 * (malloc'd); NULL (no memory).
 */
char *tc_report_json(struct pw_runtime *rt, struct pw_netdev *dev, const char *devname,
		     const char *toxic, struct pw_tc_schedule *sched);

/**
 * tc_schedule_load_inline() - load the schedule @text, sent by an API
 * client, for device @devname of @rt: no file read, every step confined
 * to @devname (any word after "dev" names it; another device's name is
 * refused), PW_TC_SCHED_NO_FILES | PW_TC_SCHED_CONFINE | @flags; its
 * timer on @timer_rt, the server's scheduler (NULL: on @rt, with a thread
 * of its own; pw_tc_schedule_set_timer_rt()); started by the caller
 * (pw_tc_schedule_start()).
 * Context: the control thread.  Return: 0 with *@out set; -EINVAL,
 * -EPERM, -ENODEV with "schedule:LINE: ..." naming the bad token in @msg;
 * -ENOMEM.
 */
int tc_schedule_load_inline(struct pw_runtime *rt, struct pw_runtime *timer_rt, const char *text,
			    const char *devname, unsigned flags, struct pw_tc_schedule **out,
			    char *msg, size_t msglen);

/**
 * tc_dev_stream_safe() - may device @devname of @rt carry a TCP byte
 * stream's pieces?  Not when one of its netem qdiscs loses, duplicates,
 * corrupts or reorders (loss, duplicate, corrupt, reorder, gap, slot),
 * read from the configuration tc shows (so from the parsed words, however
 * they were spelt).
 * Context: any thread but a driver callback.  Return: 0; -EINVAL with
 * "toxic @toxic: netem OPTION cannot apply to a TCP byte stream ..." in
 * @err; -ENOMEM; -EIO.
 */
int tc_dev_stream_safe(struct pw_runtime *rt, const char *devname, const char *toxic, char *err,
		       size_t errlen);

/**
 * tc_toxic_check() - would tc toxic @t be taken?  Its words run on a
 * device of their own on a runtime of their own (the simulated clock),
 * as the plane runs them (confined, no file read): tc's refusal of any
 * word or batch line, a tree that only fails against what earlier lines
 * made, and with @stream (a TCP proxy) a configuration that would lose or
 * reorder bytes, after the words and after each step of its schedule (run
 * through once, twice when it loops).  Nothing outside the check changes.
 * A toxic of another type: 0.
 * Context: any thread but a driver callback; no lock held.
 * Return: 0; -EINVAL with the message naming the toxic (and the batch line
 * or attributes.schedule:LINE) in @err; -ENOBUFS (the memory budget,
 * tc_toxic_set_budget(), refused what the check built: @err names
 * --max-bytes); -ENOMEM; -EAGAIN (no runtime).
 */
int tc_toxic_check(const struct toxic *t, int stream, char *err, size_t errlen);

struct pw_mem_budget;

/**
 * tc_toxic_set_budget() - the memory budget every tc device of the
 * process charges from now on (the server's --max-bytes, shared with the
 * bytes its proxies hold: src/net/netmem.c): the runtimes
 * tc_toxic_check() makes charge it, and a refusal of it is told apart
 * from tc's own (-ENOBUFS, the message naming --max-bytes).  NULL: none.
 * Context: before the first check (the TCP plane's create); read only
 * after.
 */
void tc_toxic_set_budget(struct pw_mem_budget *b);
/* The budget tc_toxic_set_budget() set (NULL: none): what the UDP
 * relays' runtimes charge too.  Any thread. */
struct pw_mem_budget *tc_toxic_budget(void);

/* The calling thread is worker @w (NULL: none).  Once, at its start. */
void tc_toxic_thread(struct worker *w);

#endif /* PW_NETEM_TC_TOXIC_H */
