/* SPDX-License-Identifier: MIT */
/*
 * A link: network emulation inside a program or a test, on a simulated
 * clock.  One call builds what a user of <pinwheel/net.h> would otherwise
 * assemble: a runtime on the simulated clock, a device named "link" whose
 * root qdisc (or tree) comes from tc's words, and a driver that collects
 * what leaves and what is dropped.  The caller sends packets at times of
 * its choosing, moves the clock, and takes the departures and the drops in
 * order: no thread, no socket, no root, no waiting for real time, and the
 * same departures for the same seed and inputs on every machine.
 * Design: src/net/tc/link.c; docs/link.md is the user's guide.
 *
 * Times are nanoseconds on the link's own clock, which starts at 0.  Every
 * packet handed in comes back exactly once, as a departure or as a drop
 * (with its reason), including what a tc command flushes (a replaced or
 * deleted qdisc) and what pw_link_close() finds inside; a copy netem's
 * `duplicate` makes comes back too, marked dup.
 *
 * Conventions: 0 or a negative errno, as the rest of pinwheel; tc's
 * message in the caller's buffer (create, tc) or in pw_link_error() (the
 * other calls).  A link is used by one thread at a time (the caller
 * serialises calls on one link; different links are independent), a
 * thread that serves no CPU of a pinwheel runtime.
 */
#ifndef PINWHEEL_LINK_H
#define PINWHEEL_LINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pw_link; /* opaque */

/* The device's name: what tc commands on a link name after `dev`. */
#define PW_LINK_DEV "link"

/* pw_link_create()'s @flags */
#define PW_LINK_BATCH 0x1 /* @tc is tc commands, one a line (tc -batch), not a qdisc's words */

/**
 * pw_link_create() - a link whose root qdisc is @tc: a qdisc's words as
 * they follow `tc qdisc add dev link root` ("netem delay 20ms 5ms loss
 * 1%"), or with PW_LINK_BATCH tc commands one a line, as `tc -batch`
 * reads them ('#' comments, '\' continuations), run in order (a tree:
 * `qdisc add dev link root handle 1: htb default 10`, `class add ...`).
 * Words that begin with `qdisc`, `class` or `tc` are taken as commands
 * without the flag.  NULL or empty: the device's default qdiscs
 * (pfifo_fast; mq of pfifo_fast with several TX queues).  Every command
 * runs with PW_TC_NO_FILES: netem's distributions are the built-in
 * tables, never a system file.
 * @seed: every netem of the link given no `seed` of its own draws its
 * seed from a stream this seeds, in the order the commands create or
 * change them, so the same @seed and the same calls give the same
 * departures, drops and times on every machine.
 * @txqueues: the device's TX queues (1 to PW_MAX_TXQ; 0 means 1).  A
 * packet's flow hash picks its queue (the kernel's skb_tx_hash()), so the
 * children of an `mq` root are reached through the hash.
 * Context: any thread.  Allocates.
 * Return: 0 and *@out; a negative errno with tc's message (iproute2's
 * words, naming the bad token; for a batch prefixed with "line N: ") in
 * @err (which may be NULL): -EINVAL, -ENOENT, -EPERM (a word that would
 * read a file), -ENOMEM, -EMFILE (a link is a runtime: PW_MAX_RUNTIMES
 * of them alive at once), ...  On failure *@out is NULL.
 */
int pw_link_create(struct pw_link **out, const char *tc, unsigned flags, uint64_t seed,
		   unsigned txqueues, char *err, size_t errlen);

/**
 * pw_link_send() - hand a packet to the link at time @time_ns: the clock
 * first moves to @time_ns (running what is due until then: departures
 * before it are collected first), then the packet enters the root qdisc.
 * @data: its bytes (copied; netem's corruption flips a bit in the copy),
 * or NULL for a packet of @len bytes that carries none.  @len: its length
 * on the wire, what rates and limits count (no header is added).  @tag:
 * the caller's, given back with it.  @priority: skb->priority
 * (pfifo_fast's band, htb's classid MAJ:MIN as MAJ << 16 | MIN, fq's band).
 * @hash: the flow hash (fq's flow, the TX queue under mq).
 * Context: the link's thread.
 * Return: 1 when the qdisc took it (queued, or left at once: see
 * pw_link_departures()); 0 when it was dropped on entry (a limit, netem's
 * loss: see pw_link_drops()); -EINVAL (NULL link, or @time_ns earlier than
 * the link's clock: nothing done, pw_link_error() says so); -ESHUTDOWN
 * (the link is closed); -ENOMEM (nothing done).
 */
int pw_link_send(struct pw_link *l, uint64_t time_ns, const void *data, uint32_t len,
		 uint64_t tag, uint32_t priority, uint32_t hash);

/* Many packets in one call (pw_link_send_burst()): arrays of @n, NULL
 * where a field is 0 for every packet (tag: NULL numbers them by their
 * index in the burst). */
struct pw_link_burst {
	size_t n;
	const uint64_t *time_ns;  /* [n], each >= the one before; NULL: all now */
	const uint32_t *len;      /* [n], required */
	const void *data;         /* the packets' bytes one after another (the sum
				   * of len), or NULL: none carry bytes */
	const uint64_t *tag;      /* [n] or NULL */
	const uint32_t *priority; /* [n] or NULL */
	const uint32_t *hash;     /* [n] or NULL */
	uint8_t *taken;           /* out [n], or NULL: 1 taken, 0 dropped on entry */
};

/**
 * pw_link_send_burst() - pw_link_send() for each packet of @b in order.
 * Context: the link's thread.
 * Return: the packets handed in, @b->n when all were; fewer when packet
 * [return value] was refused (pw_link_error() says why: a time earlier
 * than the clock, -ENOMEM) and none after it was sent; -EINVAL (NULL
 * arguments, no len array); -ESHUTDOWN (closed).
 */
long pw_link_send_burst(struct pw_link *l, const struct pw_link_burst *b);

/**
 * pw_link_advance() - move the link's clock to @to_ns, running every
 * timer due until then (netem's delays, shapers' watchdogs, estimators):
 * what leaves meanwhile is collected for pw_link_departures().
 * Context: the link's thread.
 * Return: 0; -EINVAL (NULL, or @to_ns earlier than the clock: nothing
 * done, pw_link_error() says so).
 */
int pw_link_advance(struct pw_link *l, uint64_t to_ns);

/* The link's clock, ns (0 at creation); 0 for NULL.  Context: the link's thread. */
uint64_t pw_link_now_ns(const struct pw_link *l);

/* A packet that came back: a departure (reason 0) or a drop. */
struct pw_link_pkt {
	uint64_t time_ns;     /* when it left, or was dropped */
	uint64_t tag;         /* the sender's tag (a duplicate: its original's) */
	const void *data;     /* its bytes as they left (NULL: sent without);
			       * valid until the next call that takes packets
			       * of the same kind, or pw_link_free() */
	uint32_t len;
	uint16_t txq;         /* the TX queue it went through */
	uint8_t dup;          /* 1: a copy netem's `duplicate` made */
	uint8_t pad_;
	uint32_t reason;      /* drops: enum pw_drop_reason (<pinwheel/net.h>;
			       * pw_drop_reason_name()); departures: 0 */
	uint32_t pad2_;
};

/**
 * pw_link_departures() - take up to @max of the packets that left, in the
 * order they left (time, then the order the layer released them), into
 * @out.  Call again until it returns 0.
 * Context: the link's thread.  Return: the count taken (0: none left, or
 * bad arguments).
 */
size_t pw_link_departures(struct pw_link *l, struct pw_link_pkt *out, size_t max);

/**
 * pw_link_drops() - take up to @max of the packets dropped (at entry, by
 * a qdisc, flushed by a tc command or pw_link_close()), in the order they
 * were dropped, into @out.  Context and return: as pw_link_departures().
 */
size_t pw_link_drops(struct pw_link *l, struct pw_link_pkt *out, size_t max);

/* The link's figures: its root qdisc's as `tc -s qdisc show` prints them
 * (mq: the sum of its children), and the link's own ledger. */
struct pw_link_stats {
	uint64_t now_ns;
	/* the root qdisc (tc -s): Sent BYTES bytes PACKETS pkt (dropped DROPS,
	 * overlimits O requeues R) backlog BACKLOGb QLENp */
	uint64_t sent_bytes, sent_packets;
	uint64_t qdisc_drops, overlimits, requeues;
	uint64_t backlog, qlen;
	/* the ledger: handed_in + duplicates == departed + dropped + in_flight */
	uint64_t handed_in;   /* packets pw_link_send() took or dropped on entry */
	uint64_t duplicates;  /* copies netem made */
	uint64_t departed;    /* left the link (taken or not) */
	uint64_t dropped;     /* dropped, any reason (taken or not) */
	uint64_t in_flight;   /* inside the qdiscs now */
	uint64_t drops_by_reason[16]; /* [enum pw_drop_reason] */
};

/**
 * pw_link_stats() - @l's figures in *@st.  Context: the link's thread.
 * Return: 0; -EINVAL.
 */
int pw_link_stats(struct pw_link *l, struct pw_link_stats *st);

/**
 * pw_link_tc() - run tc commands on the link mid-run, at its clock: one
 * command, or several one a line (a batch, stopping at the first failure;
 * those before it stay applied), each what follows `tc`, optionally led
 * by tc's options -s, -d, -j ("-s qdisc show dev link", "qdisc change dev
 * link root netem delay 50ms").  A change keeps the packets queued (netem
 * keeps their departure times, as the kernel); a replace or delete flushes
 * its qdisc's packets to the drops (reason flush).  PW_TC_NO_FILES always.
 * What tc prints is appended to @out (NULL: discarded).
 * Context: the link's thread.
 * Return: 0; a negative errno with tc's message in @err (a batch's line
 * named): as pw_tc(), -ENOSPC when @out is too short (the command ran),
 * -ESHUTDOWN (closed).
 */
int pw_link_tc(struct pw_link *l, const char *cmd, char *out, size_t outlen, char *err,
	       size_t errlen);

/**
 * pw_link_error() - the message of @l's last failed call ("" when none).
 * Context: the link's thread; valid until its next call.
 */
const char *pw_link_error(const struct pw_link *l);

/**
 * pw_link_close() - end the link: every packet still inside comes back as
 * a drop (reason dev_destroy), at the link's clock.  Departures and drops
 * can still be taken; sends and tc commands fail with -ESHUTDOWN.
 * Closing twice: no-op.  Context: the link's thread.
 */
void pw_link_close(struct pw_link *l);

/**
 * pw_link_free() - close @l and free it with every packet it holds (what
 * was not taken is lost).  NULL: no-op.  Context: the link's thread.
 */
void pw_link_free(struct pw_link *l);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_LINK_H */
