/* SPDX-License-Identifier: MIT */
/*
 * The UDP relay's send path (the design: tools/netem/udp/udp.c's essay): the
 * hooks of each direction's driver (struct pktdrv, tools/common/pktpool.h),
 * called by the layer when a qdisc releases, drops or duplicates a packet
 * (udp__dev_xmit, udp__dev_drop, udp__dev_clone_admit, udp__dev_clone),
 * and the worker's send batch (udp__tx_flush).
 *
 * Sending: what the qdiscs release is appended to the worker's batch
 * (up to 128 packets: a receive call's four rounds, or a timer run's
 * departures) and sent in order when it is full, after each receive call
 * and at the end of each loop.  A run of datagrams for one socket and
 * address, all of one size but the last (shorter, not empty), goes as one
 * message with UDP_SEGMENT (GSO, Linux 4.18; probed at the start): the
 * kernel builds and routes one packet and cuts it back into the same
 * datagrams, at the device or at a receiving socket (a receiver that
 * enabled UDP_GRO reads the run at once, with its segment size, as from
 * any GSO sender); up to 64 datagrams and 65000 bytes.  A message the
 * path refuses (EINVAL, EMSGSIZE: its MTU; EIO: no checksum offload) is
 * sent again one datagram a message, and that direction sends datagrams
 * of that size or more (EIO: all) one by one from then on; other errors
 * of a run (a full buffer, an ICMP error) send it one by one once.  So a
 * datagram is counted out only when the kernel took it, or send_error
 * when it refused it alone, as before; the times are the qdiscs'.  Why
 * this and not busy polling, UDP_GRO or io_uring: docs/relay.md, "The
 * per-datagram cost".
 *
 * Threads: the hooks run on the thread acting on the device: a worker
 * (xmit appends to its batch) or main at a tc command (xmit sends at
 * once; counted on the slot of threads that are no worker);
 * udp__tx_flush() on the batch's worker only.  Locks: none of this
 * file's own; clone_admit and clone are called under the queue's lock,
 * so they call nothing in the layer.  Atomics: the client's and the
 * budget's (udp.c), gso_below's minimum (gso_failed()), the drivers'
 * per-slot counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>

#include "../relay.h"
#include "udp_priv.h"
#include "pktpool.h"

/* ------------------------------------------------------------ the driver */

/* A send of a UDP_SEGMENT message of @seg-byte datagrams in direction
 * @dir failed with @e.  When @e says the path cannot take such messages,
 * the direction sends datagrams of @seg bytes and more (EINVAL, EMSGSIZE:
 * the route's MTU) or of any size (EIO: no checksum offload; EOPNOTSUPP,
 * ENOPROTOOPT) one by one from now on; other errors (a full buffer, an
 * ICMP error) change nothing.  Any thread; an atomic minimum. */
static void gso_failed(struct udp_relay *r, unsigned dir, uint32_t seg, int e)
{
	uint32_t below;
	if (e == EINVAL || e == EMSGSIZE)
		below = seg;
	else if (e == EIO || e == EOPNOTSUPP || e == ENOPROTOOPT)
		below = 0;
	else
		return;
	uint32_t cur = __atomic_load_n(&r->gso_below[dir], __ATOMIC_RELAXED);
	while (below < cur && !__atomic_compare_exchange_n(&r->gso_below[dir], &cur, below, 1,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
}

/* How many of @w's batched packets from @j one message carries: 1, or a
 * run for UDP_SEGMENT: the same socket and address, the length of the
 * first (the last may be shorter; none empty), at most GSO_SEGS datagrams
 * and GSO_BYTES bytes, none before @single_to (those go one by one).
 * Context: @w's thread. */
static unsigned tx_run(const struct worker *w, unsigned j, unsigned single_to)
{
	size_t seg = w->tiov[j].iov_len;
	if (j < single_to || seg == 0 ||
	    seg >= __atomic_load_n(&w->r->gso_below[w->tp[j]->dir], __ATOMIC_RELAXED))
		return 1;
	unsigned n = 1;
	size_t bytes = seg;
	while (j + n < w->nt && n < GSO_SEGS && w->tfd[j + n] == w->tfd[j] &&
	       w->tto[j + n] == w->tto[j]) {
		size_t len = w->tiov[j + n].iov_len;
		if (len == 0 || len > seg || bytes + len > GSO_BYTES)
			break;
		n++;
		bytes += len;
		if (len < seg)
			break;
	}
	return n;
}

/* Send @w's batch, in order: for each run of packets on one socket, its
 * messages (a packet, or a run of datagrams to one address of one size
 * under UDP_SEGMENT: the kernel cuts it back into the same datagrams)
 * through sendmmsg.  A message that fails with UDP_SEGMENT is sent again
 * one datagram a message (gso_failed() decides whether later runs try
 * again).  Every packet is counted (out, or send_error for a datagram sent
 * alone that failed) and freed.  Context: @w's thread. */
void udp__tx_flush(struct worker *w)
{
	struct udp_relay *r = w->r;
	unsigned i = 0, single_to = 0;
	while (i < w->nt) {
		int fd = w->tfd[i];
		unsigned nm = 0, j = i;
		while (j < w->nt && w->tfd[j] == fd) {
			unsigned n = tx_run(w, j, single_to);
			struct msghdr *mh = &w->tmsg[nm].msg_hdr;
			*mh = (struct msghdr){
				.msg_name = (void *)w->tto[j], .msg_namelen = w->ttolen[j],
				.msg_iov = &w->tiov[j], .msg_iovlen = n,
			};
			if (n > 1) {
				uint16_t seg = (uint16_t)w->tiov[j].iov_len;
				mh->msg_control = w->tcmsg[nm].buf;
				mh->msg_controllen = sizeof(w->tcmsg[nm].buf);
				struct cmsghdr *c = CMSG_FIRSTHDR(mh);
				c->cmsg_level = SOL_UDP;
				c->cmsg_type = UDP_SEGMENT;
				c->cmsg_len = CMSG_LEN(sizeof(seg));
				memcpy(CMSG_DATA(c), &seg, sizeof(seg));
			}
			w->tfirst[nm] = j;
			w->tcount[nm] = n;
			nm++;
			j += n;
		}
		unsigned m = 0;
		while (m < nm) {
			int sent = sendmmsg(fd, &w->tmsg[m], nm - m, MSG_DONTWAIT);
			if (sent < 0 && errno == EINTR)
				continue;
			if (sent < 0 && w->tcount[m] > 1) {
				unsigned f = w->tfirst[m];
				gso_failed(r, w->tp[f]->dir, (uint32_t)w->tiov[f].iov_len, errno);
				break;
			}
			unsigned k = sent > 0 ? (unsigned)sent : 1;
			for (unsigned x = m; x < m + k; x++)
				for (unsigned y = w->tfirst[x]; y < w->tfirst[x] + w->tcount[x]; y++) {
					struct rpkt *p = w->tp[y];
					if (sent > 0)
						pktdrv_count_sent(&r->drv[p->dir], (int)w->id,
								  p->h.pkt.caplen);
					else
						pktdrv_count_drop(&r->drv[p->dir], (int)w->id,
								  RD_SEND_ERROR);
					udp__rpkt_free(r, p);
				}
			m += k;
		}
		if (m < nm) { /* message m's run again, one datagram a message */
			i = w->tfirst[m];
			single_to = i + w->tcount[m];
		} else {
			i = j;
		}
	}
	w->nt = 0;
}

/* Where @p goes: up, the client's upstream socket (connected); down, the
 * client's address from its owner's listening socket.  Any thread. */
static void dest_of(struct rpkt *p, int *fd, const struct sockaddr_storage **to, socklen_t *tolen)
{
	struct client *cl = p->cl;
	struct udp_relay *r = cl->r;
	if (p->dir == RELAY_UP) {
		*fd = cl->fd;
		*to = NULL;
		*tolen = 0;
	} else {
		*fd = r->w[cl->owner].lfd;
		*to = &cl->addr;
		*tolen = cl->alen;
	}
}

/* The driver's xmit hook: on the CPU running the queue (@self its slot).
 * A worker batches; another thread (main, at a tc command) sends at once.
 * Either way the packet is this file's to count and free. */
int udp__dev_xmit(struct pktdrv *drv, unsigned txq, struct ppkt *pkt, int self)
{
	(void)txq;
	struct rpkt *p = (struct rpkt *)pkt;
	struct udp_relay *r = p->cl->r;
	int fd;
	const struct sockaddr_storage *to;
	socklen_t tolen;
	dest_of(p, &fd, &to, &tolen);
	struct worker *w = udp__tl_w;
	if (w) {
		if (w->nt == TX_BATCH)
			udp__tx_flush(w);
		unsigned i = w->nt++;
		w->tiov[i] = (struct iovec){ p->h.buf, p->h.pkt.caplen };
		w->tfd[i] = fd;
		w->tto[i] = to;
		w->ttolen[i] = tolen;
		w->tp[i] = p;
		return PKTDRV_KEPT;
	}
	ssize_t sent = sendto(fd, p->h.buf, p->h.pkt.caplen, MSG_DONTWAIT,
			      (const struct sockaddr *)to, tolen);
	if (sent >= 0)
		pktdrv_count_sent(drv, self, p->h.pkt.caplen);
	else
		pktdrv_count_drop(drv, self, RD_SEND_ERROR);
	udp__rpkt_free(r, p);
	return PKTDRV_KEPT;
}

/* The driver's drop hook (it counted the drop and puts the packet back
 * next): the client's charge and reference.  Any thread acting on the
 * device; atomics as udp__client_uncharge() and udp__client_put(). */
void udp__dev_drop(struct pktdrv *drv, struct ppkt *pkt, unsigned why, int self)
{
	(void)drv, (void)why, (void)self;
	struct rpkt *p = (struct rpkt *)pkt;
	struct client *cl = p->cl;
	p->cl = NULL;
	if (cl) {
		udp__client_uncharge(cl, pktpool_bytes(&cl->r->pool, pkt));
		udp__client_put(cl);
	}
}

/* The driver's clone_admit hook (netem duplicate, before anything is
 * allocated): the copy would take @bytes of its client's share and of the
 * budget, as a datagram of the client's would.  Refused: counted
 * (clones_refused), and netem goes on without the duplicate.  Under a
 * queue lock on the CPU running it (main's for a tc command): relaxed
 * loads of the slots, the client and the budget; a relaxed add. */
int udp__dev_clone_admit(struct pktdrv *drv, const struct ppkt *src, size_t bytes, int self)
{
	(void)drv;
	const struct rpkt *sp = (const struct rpkt *)src;
	struct udp_relay *r = sp->cl->r;
	uint64_t limit;
	if (!udp__client_admit(sp->cl, bytes, udp__active_clients(r), &limit) &&
	    pktpool_budget_used(&r->budget) + bytes <= limit)
		return 0;
	ADD(r->slots[self >= 0 ? (unsigned)self : r->nw].clones_refused, 1);
	return -1;
}

/* The driver's clone hook (netem duplicate; the driver made @copy from
 * the calling worker's slot, malloc'd on a thread that is no worker, and
 * copied the bytes): under a queue lock, so no call into the layer. */
int udp__dev_clone(struct pktdrv *drv, const struct ppkt *src, struct ppkt *copy, int self)
{
	(void)drv;
	const struct rpkt *sp = (const struct rpkt *)src;
	struct rpkt *c = (struct rpkt *)copy;
	struct udp_relay *r = sp->cl->r;
	c->cl = sp->cl;
	c->dir = sp->dir;
	udp__client_hold(c->cl);
	udp__client_charge(c->cl, pktpool_bytes(&r->pool, copy));
	ADD(r->slots[self >= 0 ? (unsigned)self : r->nw].d[c->dir].clones, 1);
	return 0;
}
