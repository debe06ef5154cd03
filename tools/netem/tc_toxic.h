/* SPDX-License-Identifier: MIT */
/*
 * A tc toxic's words (tools/netem/tc_toxic.c), shared by the TCP proxies'
 * devices (tcp/tc_dev.h: one per proxy, stream direction and tc toxic)
 * and the UDP proxies' direction devices (api/udp_proxy.c,
 * udp/udp_report.c): run confined to one device, checked whole
 * (tc_toxic_check(), which the API's validator calls too), a schedule
 * loaded inline, the memory budget they all charge, and a device's report
 * for the API's statistics (tc_report_json()).
 *
 * Threads: as each function says; the checks and reports on the control
 * thread (any thread but a driver callback).  Locks: none of its own (the
 * layer's queue and configuration locks).
 */
#ifndef PW_NETEM_TC_TOXIC_H
#define PW_NETEM_TC_TOXIC_H

#include <stddef.h>
#include <stdint.h>

#include "toxic.h"

struct pw_netdev;
struct pw_runtime;
struct pw_tc_schedule;

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

/**
 * tc_toxic_run_words() - run tc toxic @t's words on device @devname of
 * @rt, confined to it and reading no file (the qdisc form: "qdisc add dev
 * DEV root WORDS"; a batch: each line).
 * Context: any thread but a driver callback.  Return: 0; a negative
 * errno, @err set naming the toxic (and the batch line); -ENOBUFS: the
 * budget refused (tc_toxic_say_spent()).
 */
int tc_toxic_run_words(struct pw_runtime *rt, const char *devname, const struct toxic *t,
		       char *err, size_t errlen);

/* The budget's refusal (-ENOBUFS from the library: src/net/netmem.c) in
 * @err, naming the toxic, --max-bytes and what was refused (@what).  Any
 * thread. */
void tc_toxic_say_spent(char *err, size_t errlen, const char *toxic, const char *what);

#endif /* PW_NETEM_TC_TOXIC_H */
