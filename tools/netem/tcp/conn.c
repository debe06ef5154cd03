/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-netem's TCP connections: one accepted client socket, its
 * upstream socket, and the two directions between them (TOXIC_UPSTREAM:
 * client -> server, TOXIC_DOWNSTREAM: server -> client), each a struct
 * stream (tools/netem/tcp/stream.c: the chunks through the toxics) with the
 * sockets at its ends.  The plane, its workers and its commands are
 * tools/netem/tcp/tcp.c; the contract tools/netem/tcp/tcp.h.
 *
 * A connection lives on the worker that accepted it: a non-blocking
 * connect to the upstream (refused or unreachable, or no upstream address
 * yet: the client's socket is closed, counted upstream_failed), then both
 * directions.  Both sockets are edge-triggered in the worker's epoll set;
 * a direction remembers whether its source is readable and its sink
 * writable, so stopping a read costs no system call.  A turn (tcp_conn_service) reads, pumps the
 * stream and writes, both ways, until nothing moves, for at most 16
 * rounds, TURN_WRITES writes or TURN_BYTES bytes read or written (struct
 * turn), whichever comes first; a connection with more to do then goes to
 * the back of the run list, so one connection (a 1-byte slicer draining
 * its buffer) cannot hold its worker.  It arms each direction's pinned
 * hrtimer for the time its stream asked for.  The timer's callback only
 * puts the connection on the run list.
 *
 * Back-pressure: a direction holds at most dir_bytes of memory (its
 * stream's mem: each chunk's whole allocation, chunk_mem: a bare class
 * of the plane's pool, tools/common/pktpool.h), not just bytes, so
 * 1-byte reads cannot hold 60 times their size: a read asks for no more
 * than the largest class that fits the room left (and READ_MAX, the
 * largest class), its chunk moves to a smaller class when less came
 * (stream_chunk_fit(): a copy of what came), and small reads behind a
 * waiting chunk gather in one (stream_push_read()).  At the bound the
 * source is simply not read (counted in stalls) and TCP's window does the
 * rest.  Nothing is dropped while the connection lives.  Without a toxic
 * a read is written straight from the worker's buffer when nothing waits
 * before it (no copy, no allocation, no bound: only what the sink does
 * not take is queued).  Plane-wide, max_bytes bounds all directions' held
 * memory together, except that a direction holding less than its reserve
 * (READ_RESERVE, or dir_bytes / 4 if less) may always read up to it (and
 * one holding nothing, a byte at least): one proxy that fills the
 * budget (a slow one, flooded) cannot stop the others.  A direction
 * stopped by max_bytes, or by a failed allocation, goes on its worker's
 * stalled list and is retried every millisecond (tcp.c).
 *
 * Closing, as toxiproxy does: when the end of a direction's stream has
 * been written (its source's EOF or error, or a toxic closing it), its
 * sink is shut down for writing and, unless the plane was made with
 * half_close, the other direction's source is not read any more either
 * (toxiproxy closes that socket): what the other direction holds is
 * delivered, then its sink is shut down too and the connection closed.
 * So a client that half-closes gets no answer written after its FIN
 * reached the server, as through toxiproxy.  A reset_peer that fires, or
 * a connection that had one applied when it opened (toxiproxy sets
 * SO_LINGER 0 on both sockets then), closes both sockets with SO_LINGER 0
 * at once: a reset (toxiproxy lets the other direction flush into its
 * linger-0 socket first; what it held is counted dropped here).  A write
 * error drops what the direction holds (bytes_dropped) and ends it.
 *
 * Writes: with toxics each chunk that reached the output is a write of
 * its own (a slicer's slice, a bandwidth piece, a latency chunk), as
 * toxiproxy writes each; with TCP_NODELAY on both sockets (Go's default,
 * so toxiproxy's too) each is its own segment, and chunks_out counts
 * them.  Without toxics a write takes what the output holds at once (up
 * to 64 chunks in one sendmsg), and the direct path is unchanged.
 *
 * Lifetime: a connection is freed by whoever lets go of it last: its
 * close, the run list (on_run, in_service), or its last piece coming back
 * from a tc toxic's device (tc_refs, tools/netem/tc_toxic.c), so nothing
 * on the run list, in a turn or in a device is ever freed under it.
 *
 * Threads: the owning worker only.  Locks: the proxy's upstream mutex, for
 * the address, at each connect.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/hrtimer.h>
#include <pinwheel/runtime.h>
#include <pinwheel/timer.h>

#include "tcp_priv.h"

/* ------------------------------------------------------------ connections */

/* The statistics and the plane's total catch up with @d's stream (the
 * differences wrap: a drop adds its two's complement). */
static void dir_sync(struct dir *d)
{
	struct tcp_plane *pl = d->c->sl->w->pl;
	uint64_t dc = d->s.cut - d->rep_cut, dh = d->s.held - d->rep_held;
	uint64_t dm = d->s.mem - d->rep_mem;
	if (dc)
		ctr_add(&d->st->bytes_cut, dc);
	if (dh)
		ctr_add(&d->st->held, dh);
	if (dm) {
		ctr_add(&d->st->held_mem, dm);
		if (pl->max_bytes)
			__atomic_add_fetch(pl->held, dm, __ATOMIC_RELAXED);
	}
	d->rep_cut = d->s.cut;
	d->rep_held = d->s.held;
	d->rep_mem = d->s.mem;
	if (d->s.rate.windows != d->rep_rwin) {
		ctr_add(&d->st->rate_ns, (d->s.rate.windows - d->rep_rwin) * STREAM_RATE_WINDOW_NS);
		ctr_add(&d->st->rate_bytes, d->s.rate.bytes - d->rep_rbytes);
		d->rep_rwin = d->s.rate.windows;
		d->rep_rbytes = d->s.rate.bytes;
	}
}

/* What one turn of a connection may still do (TURN_WRITES, TURN_BYTES). */
struct turn {
	unsigned writes;
	uint64_t bytes;
};

static int turn_spent(const struct turn *t)
{
	return t->writes >= TURN_WRITES || t->bytes >= TURN_BYTES;
}

static void dir_arm(struct dir *d, uint64_t when)
{
	if (when == d->armed_ns)
		return;
	if (when == UINT64_MAX)
		pw_hrtimer_try_to_cancel(&d->tm);
	else
		pw_hrtimer_start(&d->tm, when, PW_HRTIMER_MODE_ABS | PW_HRTIMER_MODE_PINNED);
	d->armed_ns = when;
}

static enum pw_hrtimer_restart dir_timer_fn(struct pw_hrtimer *t)
{
	struct dir *d = pw_container_of(t, struct dir, tm);
	d->armed_ns = UINT64_MAX;
	run_add(d->c->sl->w, d->c);
	return PW_HRTIMER_NORESTART;
}

/* Free @c now, or when the run list lets go of it.  Worker. */
static void conn_release(struct conn *c)
{
	if (conn_busy(c))
		c->dead = 1;
	else
		free(c);
}

/* Close @c's sockets, count what it held as dropped, unlink it. */
void tcp_conn_close(struct conn *c)
{
	struct slot *sl = c->sl;
	if (c->state == CONN_CLOSED)
		return;
	for (int i = 0; i < TOXIC_NSTREAMS; i++) {
		struct dir *d = &c->d[i];
		pw_hrtimer_cancel(&d->tm);
		dir_sync(d);
		uint64_t held = d->s.held;
		stream_free(&d->s); /* held and mem 0 */
		if (held)
			ctr_add(&d->st->bytes_dropped, held);
		dir_sync(d);
	}
	if (c->linger0) {
		struct linger lg = { 1, 0 };
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (c->state == CONN_OPEN)
			setsockopt(c->ufd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(c->cfd);
	close(c->ufd);
	c->state = CONN_CLOSED;
	ctr_add(&sl->st.closed, 1);
	ctr_add(&sl->st.active, (uint64_t)-1);
	if (c->prev)
		c->prev->next = c->next;
	else
		sl->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	conn_release(c);
}

struct conn *tcp_conn_new(struct slot *sl, int cfd, uint64_t now)
{
	struct worker *w = sl->w;
	struct tcp_proxy *p = sl->p;
	struct conn *c = calloc(1, sizeof(*c));
	struct sockaddr_storage up;
	socklen_t uplen;
	pthread_mutex_lock(&p->ulock);
	up = p->up;
	uplen = p->uplen;
	pthread_mutex_unlock(&p->ulock);
	if (!uplen) {
		/* no upstream yet (a name that does not resolve): the client is
		 * closed at once, with no connect tried, as toxiproxy closes a
		 * client whose upstream it cannot dial */
		ctr_add(&sl->st.accepted, 1);
		ctr_add(&sl->st.upstream_failed, 1);
		ctr_add(&sl->st.closed, 1);
		close(cfd);
		free(c);
		return NULL;
	}
	int ufd = c ? socket(up.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
	ctr_add(&sl->st.accepted, 1);
	if (ufd < 0) {
		/* out of descriptors is not the upstream's failure */
		if (c && (errno == EMFILE || errno == ENFILE))
			ctr_add(&sl->st.fd_exhausted, 1);
		else
			ctr_add(&sl->st.upstream_failed, 1);
		ctr_add(&sl->st.closed, 1);
		close(cfd);
		free(c);
		return NULL;
	}
	int one = 1;
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->ctag.kind = TAG_CLIENT;
	c->utag.kind = TAG_UPSTREAM;
	c->cfd = cfd;
	c->ufd = ufd;
	c->sl = sl;
	c->state = CONN_CONNECTING;
	uint64_t serial = __atomic_fetch_add(&p->serial, 1, __ATOMIC_RELAXED);
	int err = 0;
	for (int i = 0; i < TOXIC_NSTREAMS; i++) {
		struct dir *d = &c->d[i];
		d->c = c;
		d->src = i == TOXIC_UPSTREAM ? cfd : ufd;
		d->dst = i == TOXIC_UPSTREAM ? ufd : cfd;
		d->armed_ns = UINT64_MAX;
		d->st = &sl->st.dir[i];
		pw_hrtimer_setup(w->pl->rt, &d->tm, dir_timer_fn, CLOCK_MONOTONIC, PW_HRTIMER_MODE_ABS);
		d->tcops.send = tc_dev_send;
		d->tcops.ctx = d;
		if (!err)
			err = stream_init_tc(&d->s, sl->per[i], (void *const *)sl->tcper[i],
					     sl->nper[i], &d->tcops, w->pl->seed, serial, now);
		if (!err) {
			d->s.mem_max = w->pl->dir_bytes;
			d->s.pool = &w->pl->bufs; /* the worker's chunks */
			d->s.self = (int)w->id;
		}
		for (unsigned k = 0; !err && k < d->s.n; k++)
			if (d->s.st[k].active && d->s.st[k].t.type == TOXIC_RESET_PEER)
				c->linger0 = 1;
	}
	c->next = sl->conns;
	if (sl->conns)
		sl->conns->prev = c;
	sl->conns = c;
	ctr_add(&sl->st.active, 1);
	if (err) {
		tcp_conn_close(c);
		return NULL;
	}
	int r = connect(ufd, (const struct sockaddr *)&up, uplen);
	if (r < 0 && errno != EINPROGRESS) {
		ctr_add(&sl->st.upstream_failed, 1);
		tcp_conn_close(c);
		return NULL;
	}
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET };
	ev.data.ptr = &c->ctag;
	int e1 = epoll_ctl(w->ep, EPOLL_CTL_ADD, cfd, &ev);
	ev.data.ptr = &c->utag;
	int e2 = epoll_ctl(w->ep, EPOLL_CTL_ADD, ufd, &ev);
	if (e1 || e2) {
		tcp_conn_close(c);
		return NULL;
	}
	return c;
}

/* The upstream connect finished (or failed).  Return: 1 open, 0 closed. */
static int conn_connected(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (!err) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		if (getpeername(c->ufd, (struct sockaddr *)&peer, &plen) < 0)
			err = errno == ENOTCONN ? EINPROGRESS : errno;
	}
	if (err == EINPROGRESS)
		return 0; /* not yet */
	if (err) {
		ctr_add(&c->sl->st.upstream_failed, 1);
		tcp_conn_close(c);
		return 0;
	}
	c->state = CONN_OPEN;
	return 1;
}

/* The direction's end of stream was written: shut its sink down for
 * writing and (toxiproxy's close) stop reading the other direction. */
static void dir_finish(struct dir *d)
{
	struct conn *c = d->c;
	struct dir *o = &c->d[d == &c->d[0] ? 1 : 0];
	d->done = 1;
	if (d->s.rst)
		c->linger0 = 1;
	if (c->linger0) {
		tcp_conn_close(c); /* a reset takes the whole connection down */
		return;
	}
	shutdown(d->dst, SHUT_WR);
	if (!c->sl->w->pl->half_close)
		stream_source_eof(&o->s);
}

/* A write to the sink failed: drop what the direction holds and end it. */
static void dir_fail(struct dir *d)
{
	dir_sync(d);
	uint64_t held = d->s.held;
	stream_free(&d->s); /* held and mem 0 */
	ctr_add(&d->st->bytes_dropped, held);
	dir_sync(d);
	/* an empty pipeline whose end of stream is at its output */
	int r = stream_init(&d->s, NULL, 0, 0, 0, 0);
	d->s.pool = &d->c->sl->w->pl->bufs;
	d->s.self = (int)d->c->sl->w->id;
	d->rep_cut = d->rep_held = d->rep_mem = d->rep_rwin = d->rep_rbytes = 0;
	d->can_write = 0;
	if (r) {
		tcp_conn_close(d->c);
		return;
	}
	d->s.eof_at = 0;
	dir_finish(d);
}

/* Account @n bytes written from the output queue. */
static void out_consume(struct dir *d, size_t n, uint64_t now)
{
	struct chunkq *q = stream_out(&d->s);
	d->s.held -= n;
	ctr_add(&d->st->bytes_out, n);
	ctr_add(&d->st->chunks_out, 1);
	while (n) {
		struct chunk *h = q->head;
		size_t rem = h->len - h->off;
		if (n >= rem) {
			n -= rem;
			uint64_t delay = now - h->read_ns;
			uint64_t cnt = ctr_get(&d->st->delay_count);
			if (!cnt || delay < ctr_get(&d->st->delay_min_ns))
				__atomic_store_n(&d->st->delay_min_ns, delay, __ATOMIC_RELAXED);
			/* the count after the minimum: a reader that sees the
			 * count (acquire, tcp_proxy_stats()) sees a minimum */
			__atomic_store_n(&d->st->delay_count, cnt + 1, __ATOMIC_RELEASE);
			ctr_add(&d->st->delay_sum_ns, delay);
			ctr_add(&d->st->delay_hist[tcp_delay_bucket(delay)], 1);
			if (delay > ctr_get(&d->st->delay_max_ns))
				__atomic_store_n(&d->st->delay_max_ns, delay, __ATOMIC_RELAXED);
			stream_chunk_free(&d->s, chunkq_pop(q));
		} else {
			h->off += (uint32_t)n;
			q->bytes -= n;
			n = 0;
		}
	}
}

/* Write what the output queue holds, as far as the turn @tb allows.
 * Return: 1 if bytes went out. */
static int dir_write(struct dir *d, uint64_t now, struct turn *tb)
{
	int progress = 0;
	struct chunkq *q = stream_out(&d->s);
	while (q->head && d->can_write && !turn_spent(tb)) {
		struct iovec iov[WRITE_IOV];
		int k = 0;
		/* with toxics each chunk is a write of its own (a slice its own
		 * segment, as toxiproxy writes them); without, one write takes all */
		int most = d->s.n ? 1 : WRITE_IOV;
		for (struct chunk *c = q->head; c && k < most; c = c->next, k++) {
			iov[k].iov_base = c->data + c->off;
			iov[k].iov_len = c->len - c->off;
		}
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)k };
		ssize_t n = sendmsg(d->dst, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			out_consume(d, (size_t)n, now);
			tb->writes++;
			tb->bytes += (uint64_t)n;
			progress = 1;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			d->can_write = 0;
			break;
		}
		dir_fail(d);
		return 1;
	}
	return progress;
}

/* @d's source is not read now: counted once per stop; @retry: the
 * connection goes on the stalled list (max_bytes or memory: nothing of
 * its own will wake it).  The source was readable when last tried
 * (can_read): the stream is told its bytes wait (the rate's judging). */
static int dir_stall(struct dir *d, int retry)
{
	if (!d->stalled)
		ctr_add(&d->st->stalls, 1);
	d->stalled = 1;
	stream_source_held(&d->s, 1);
	if (retry)
		stall_add(d->c->sl->w, d->c);
	return 0;
}

/* Read from the source while there is room.  Return: 1 if it read. */
static int dir_read(struct dir *d, uint64_t now, struct turn *tb)
{
	struct conn *c = d->c;
	struct worker *w = c->sl->w;
	struct tcp_plane *pl = w->pl;
	const uint64_t hdr = sizeof(struct chunk);
	if (!d->can_read || stream_source_done(&d->s))
		return 0;
	/* no toxic, nothing held, the sink writable: the read goes straight
	 * out of the worker's buffer; max_bytes does not stop it (only what
	 * the sink leaves is held) */
	int direct = stream_passthrough(&d->s) && d->can_write;
	size_t room = READ_MAX;
	/* what a partial write leaves is held: never more than the bound
	 * (the largest chunk class within it) */
	size_t top = pktpool_bare_fit(pl->dir_bytes);
	if (top > hdr && room > top - hdr)
		room = top - hdr;
	if (!direct) {
		/* what a direction holds is counted by its memory (chunk_mem):
		 * a read's chunk costs its header too; one holding nothing
		 * reads at least a byte whatever the bounds */
		uint64_t mem = d->s.mem;
		if (mem + hdr < pl->dir_bytes) {
			if (room > pl->dir_bytes - mem - hdr)
				room = (size_t)(pl->dir_bytes - mem - hdr);
		} else if (mem) {
			return dir_stall(d, 0);
		} else {
			room = 1;
		}
		if (pl->max_bytes) {
			/* a direction holding less than its reserve always
			 * reads: one slow proxy cannot stop the others */
			uint64_t all = __atomic_load_n(pl->held, __ATOMIC_RELAXED);
			uint64_t left = all + hdr < pl->max_bytes ? pl->max_bytes - all - hdr : 0;
			uint64_t rsv = mem + hdr < pl->reserve ? pl->reserve - mem - hdr : 0;
			if (left < rsv)
				left = rsv;
			if (!left && !mem)
				left = 1;
			if (!left)
				return dir_stall(d, 1);
			if (room > left)
				room = (size_t)left;
		}
		/* the chunk's class (what it costs) within what the bounds
		 * allow; one holding nothing still reads a byte */
		size_t fit = pktpool_bare_fit(hdr + room);
		if (fit > hdr)
			room = fit - hdr;
		else if (mem)
			return dir_stall(d, 1);
	}
	d->stalled = 0;
	/* room >= 1 here: a zero-length read would look like EOF */
	struct chunk *ch = NULL;
	unsigned char *buf = w->buf;
	if (!direct) {
		ch = stream_chunk_get(&d->s, room, now);
		if (!ch)
			return dir_stall(d, 1);
		buf = ch->data;
	}
	ssize_t n = recv(d->src, buf, room, MSG_DONTWAIT);
	if (n <= 0) {
		if (ch)
			stream_chunk_put(&d->s, ch);
		if (n < 0 && errno == EINTR)
			return 1;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			d->can_read = 0;
			stream_source_held(&d->s, 0); /* empty: a dry backlog ends */
			return 0;
		}
		stream_source_eof(&d->s); /* EOF, or an error: the source ended */
		return 1;
	}
	ctr_add(&d->st->bytes_in, (uint64_t)n);
	ctr_add(&d->st->chunks_in, 1);
	tb->bytes += (uint64_t)n;
	if (direct) {
		tb->writes++;
		ssize_t k = send(d->dst, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			/* counted held, then dropped with the rest */
			ch = stream_chunk_new(&d->s, buf, (size_t)n, now);
			if (ch)
				stream_push(&d->s, ch, now);
			else
				ctr_add(&d->st->bytes_dropped, (uint64_t)n);
			dir_sync(d);
			dir_fail(d);
			return 1;
		}
		if (k < 0)
			k = 0;
		if (k > 0) {
			ctr_add(&d->st->bytes_out, (uint64_t)k);
			ctr_add(&d->st->chunks_out, 1);
		}
		if (k < n) {
			d->can_write = 0;
			ch = stream_chunk_new(&d->s, buf + k, (size_t)(n - k), now);
			if (!ch) {
				ctr_add(&d->st->bytes_dropped, (uint64_t)(n - k));
				tcp_conn_close(c);
				return 1;
			}
			stream_push(&d->s, ch, now);
		}
		return 1;
	}
	ch->len = (uint32_t)n;
	if ((size_t)n < room)
		ch = stream_chunk_fit(&d->s, ch); /* what is held costs what it holds */
	stream_push_read(&d->s, ch, now);
	return 1;
}

/* Give @c a turn: read, pump, write, both ways, until nothing moves. */
void tcp_conn_service(struct conn *c)
{
	struct worker *w = c->sl->w;
	if (c->state == CONN_CONNECTING && !conn_connected(c))
		return;
	if (c->state != CONN_OPEN)
		return;
	if (c->d[0].switch_pending || c->d[1].switch_pending)
		(void)tcp_conn_switch_pending(c); /* no memory yet: retried */
	int rounds = 0, progress;
	struct turn tb = { 0, 0 };
	do {
		uint64_t now = pw_now_ns(w->pl->rt);
		progress = 0;
		for (int i = 0; i < TOXIC_NSTREAMS; i++) {
			struct dir *d = &c->d[i];
			if (d->done)
				continue;
			if (!turn_spent(&tb))
				progress |= dir_read(d, now, &tb);
			if (c->state != CONN_OPEN)
				return;
			uint64_t next = stream_pump(&d->s, now);
			progress |= dir_write(d, now, &tb);
			if (c->state != CONN_OPEN)
				return;
			dir_sync(d);
			if (!d->done && stream_finished(&d->s)) {
				dir_finish(d);
				if (c->state != CONN_OPEN)
					return;
				progress = 1;
			}
			dir_arm(d, d->done ? UINT64_MAX : next);
		}
		if (c->d[0].done && c->d[1].done) {
			tcp_conn_close(c);
			return;
		}
	} while (progress && ++rounds < SERVICE_ROUNDS && !turn_spent(&tb));
	if (progress)
		run_add(w, c); /* more to do: next turn, after the others */
}

/* ------------------------------------------------------------ a slot's connections */

int tcp_conn_switch_pending(struct conn *c)
{
	struct slot *sl = c->sl;
	uint64_t now = pw_now_ns(sl->w->pl->rt);
	int r = 0;
	for (int s = 0; s < TOXIC_NSTREAMS; s++) {
		struct dir *d = &c->d[s];
		if (!d->switch_pending)
			continue;
		if (d->done) {
			d->switch_pending = 0;
			continue;
		}
		if (stream_switch_tc(&d->s, sl->per[s], (void *const *)sl->tcper[s], sl->nper[s],
				     now)) {
			r = -ENOMEM;
			continue;
		}
		d->switch_pending = 0;
		d->armed_ns = UINT64_MAX - 1; /* re-arm from the new pump */
	}
	if (r)
		stall_add(sl->w, c);
	return r;
}

void tcp_slot_set_toxics(struct slot *sl, struct toxic_lists *tl, int *pending)
{
	free(sl->tox);
	sl->tox = tl->tox;
	for (int s = 0; s < TOXIC_NSTREAMS; s++) {
		free(sl->per[s]);
		free(sl->tcper[s]);
		sl->per[s] = tl->per[s];
		sl->tcper[s] = tl->tcper[s];
		sl->nper[s] = tl->nper[s];
	}
	memset(tl, 0, sizeof(*tl));
	for (struct conn *c = sl->conns; c; c = c->next) {
		for (int s = 0; s < TOXIC_NSTREAMS; s++)
			if (!c->d[s].done)
				c->d[s].switch_pending = 1;
		if (tcp_conn_switch_pending(c))
			*pending = 1; /* this one keeps its old list a while */
		run_add(sl->w, c);
	}
}

void tcp_slot_close(struct slot *sl)
{
	if (sl->lfd >= 0) {
		if (!sl->paused)
			epoll_ctl(sl->w->ep, EPOLL_CTL_DEL, sl->lfd, NULL);
		for (struct slot **pp = &sl->w->paused; *pp; pp = &(*pp)->pause_next)
			if (*pp == sl) {
				*pp = sl->pause_next;
				break;
			}
		sl->paused = 0;
		close(sl->lfd);
		sl->lfd = -1;
	}
	while (sl->conns)
		tcp_conn_close(sl->conns);
	free(sl->tox);
	sl->tox = NULL;
	for (int s = 0; s < TOXIC_NSTREAMS; s++) {
		free(sl->per[s]);
		free(sl->tcper[s]);
		sl->per[s] = NULL;
		sl->tcper[s] = NULL;
	}
	sl->nper[0] = sl->nper[1] = 0;
}
