/* SPDX-License-Identifier: MIT */
/*
 * The UDP relay's clients (the design is udp.c's essay: "Clients",
 * --max-clients-per-addr): a source address's count of live clients (its
 * own table and stripe locks, leaves), the clients' table (a seeded hash,
 * TAB_LOCKS stripes) and a client's life: found or made for a datagram
 * (udp__client_get()), its own upstream socket, the relay's own sockets
 * told apart (udp__from_self()), its idle timer on the worker's runtime,
 * its references (udp__client_hold()/_put()) and unlinking.
 *
 * Threads and locks: each function says; a client belongs to the worker
 * that made it, another worker reaches it under its stripe lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/net.h>

#include "../relay.h"
#include "udp.h"
#include "udp_priv.h"

/* ------------------------------------------------------------ addresses */

/* @a's key for --max-clients-per-addr: an IPv4 address (or an IPv4-mapped
 * IPv6 one) whole; an IPv6 address's /64 and its scope id.  Any thread. */
static void addr_key(const struct sockaddr_storage *a, uint64_t *key, uint32_t *scope,
		     uint8_t *v6)
{
	*scope = 0;
	*v6 = 0;
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a;
		if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
			uint32_t v4;
			memcpy(&v4, a6->sin6_addr.s6_addr + 12, sizeof(v4));
			*key = v4;
			return;
		}
		memcpy(key, a6->sin6_addr.s6_addr, sizeof(*key));
		*scope = a6->sin6_scope_id;
		*v6 = 1;
		return;
	}
	*key = ((const struct sockaddr_in *)a)->sin_addr.s_addr;
}

/* The hash of a key (seeded per relay, so that a sender cannot simply
 * pick addresses that share a chain).  Any thread. */
static uint32_t addr_key_hash(const struct udp_relay *r, uint64_t key, uint32_t scope, uint8_t v6)
{
	uint64_t h = (key ^ r->addr_seed) * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)scope << 1 | v6) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 31;
	return (uint32_t)(h ^ h >> 32);
}

/* The lock of the address counts of hash @h: their bucket (the table has
 * TAB_LOCKS buckets or more, a power of 2) and their fields.  A leaf: see
 * the essay's last paragraph on locks.  Any thread. */
static pthread_mutex_t *addr_lock(struct udp_relay *r, uint32_t h)
{
	return &r->addr_lock[h & (TAB_LOCKS - 1)].m;
}

/* Count a new client of @a's address: 0 and its count in *@out (NULL
 * when no per-address cap is in force), RD_MAX_CLIENTS_PER_ADDR (the
 * address holds r->per_addr clients) or RD_NO_MEMORY.  Context: a
 * worker making a client, under the client's table stripe; takes the
 * address's stripe (malloc under it, once per address). */
static unsigned addr_take(struct udp_relay *r, const struct sockaddr_storage *a,
			  struct addr_count **out)
{
	*out = NULL;
	if (!r->per_addr)
		return 0;
	uint64_t key;
	uint32_t scope;
	uint8_t v6;
	addr_key(a, &key, &scope, &v6);
	uint32_t h = addr_key_hash(r, key, scope, v6);
	pthread_mutex_t *m = addr_lock(r, h);
	unsigned why = 0;
	pthread_mutex_lock(m);
	struct addr_count **b = &r->addr_tab[h & r->addr_mask], *ac = *b;
	while (ac && !(ac->hash == h && ac->key == key && ac->scope == scope && ac->v6 == v6))
		ac = ac->next;
	if (!ac && (ac = calloc(1, sizeof(*ac)))) {
		ac->key = key;
		ac->scope = scope;
		ac->v6 = v6;
		ac->hash = h;
		ac->next = *b;
		*b = ac;
	}
	if (!ac)
		why = RD_NO_MEMORY;
	else if (ac->n >= r->per_addr)
		why = RD_MAX_CLIENTS_PER_ADDR;
	else
		ac->n++;
	pthread_mutex_unlock(m);
	if (!why)
		*out = ac;
	return why;
}

/* A client counted by addr_take() in @ac released (or not made after
 * all): one less, the count freed at none (nothing for NULL).  Any
 * thread; takes @ac's stripe (free under it), whatever else it holds. */
static void addr_release(struct udp_relay *r, struct addr_count *ac)
{
	if (!ac)
		return;
	pthread_mutex_t *m = addr_lock(r, ac->hash);
	pthread_mutex_lock(m);
	if (!--ac->n) {
		struct addr_count **pp = &r->addr_tab[ac->hash & r->addr_mask];
		while (*pp != ac)
			pp = &(*pp)->next;
		*pp = ac->next;
		free(ac);
	}
	pthread_mutex_unlock(m);
}

/* ------------------------------------------------------------ clients */

/* Another reference on @cl.  Any thread holding one. */
void udp__client_hold(struct client *cl)
{
	__atomic_fetch_add(&cl->refcnt, 1, __ATOMIC_RELAXED);
}

/* The last reference closes the upstream socket and gives the client's
 * places back (--max-clients', its address's).  Any thread; the last
 * reference takes its address's stripe lock (a leaf). */
void udp__client_put(struct client *cl)
{
	struct udp_relay *r = cl->r;
	if (__atomic_sub_fetch(&cl->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	if (cl->lport)
		__atomic_fetch_and(&r->own_ports[cl->lport >> 6], ~(1ull << (cl->lport & 63)),
				   __ATOMIC_RELAXED);
	if (cl->fd >= 0)
		close(cl->fd);
	__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
	addr_release(r, cl->ac);
	free(cl);
}

/* The port of @a (host order) and its IPv4 address in *@v4 (an IPv4 or
 * v4-mapped IPv6 address; 0 for another IPv6 one).  Any thread. */
static uint16_t addr_port_v4(const struct sockaddr_storage *a, uint32_t *v4)
{
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a;
		*v4 = IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)
			      ? ((const uint32_t *)a6->sin6_addr.s6_addr)[3] : 0;
		return ntohs(a6->sin6_port);
	}
	const struct sockaddr_in *a4 = (const void *)a;
	*v4 = a4->sin_addr.s_addr;
	return ntohs(a4->sin_port);
}

/* Note @cl's upstream socket as the relay's own (its local port; the
 * first one's address).  Context: @cl's owner, once, at its creation;
 * atomics: an or on the port's bitmap word, the address's flag (CAS, then
 * a release store once written). */
static void own_socket(struct client *cl)
{
	struct udp_relay *r = cl->r;
	struct sockaddr_storage a;
	socklen_t al = sizeof(a);
	uint32_t v4;
	if (getsockname(cl->fd, (struct sockaddr *)&a, &al))
		return;
	cl->lport = addr_port_v4(&a, &v4);
	if (!cl->lport)
		return;
	__atomic_fetch_or(&r->own_ports[cl->lport >> 6], 1ull << (cl->lport & 63),
			  __ATOMIC_RELAXED);
	int z = 0;
	if (__atomic_compare_exchange_n(&r->own_addr_set, &z, 1, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED)) {
		r->own_addr = a;
		__atomic_store_n(&r->own_addr_set, 2, __ATOMIC_RELEASE);
	}
}

bool udp__from_self(struct udp_relay *r, const struct sockaddr_storage *a)
{
	uint32_t v4, own4;
	uint16_t port = addr_port_v4(a, &v4);
	if (!(__atomic_load_n(&r->own_ports[port >> 6], __ATOMIC_RELAXED) >> (port & 63) & 1) ||
	    __atomic_load_n(&r->own_addr_set, __ATOMIC_ACQUIRE) != 2)
		return false;
	addr_port_v4(&r->own_addr, &own4);
	if (own4 || v4)
		return own4 == v4;
	return a->ss_family == AF_INET6 && r->own_addr.ss_family == AF_INET6 &&
	       !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)&r->own_addr)->sin6_addr, 16);
}

/* The pw_socks are embedded in the client and never freed on their own. */
static void sock_noop(struct pw_sock *sk)
{
	(void)sk;
}

/* A client address's hash (the table's, the packets' flow hash).  Any thread. */
static uint32_t addr_hash(const struct sockaddr_storage *a)
{
	const unsigned char *b;
	size_t n;
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a;
		b = (const unsigned char *)&a6->sin6_addr;
		n = 16;
		uint32_t h = 2166136261u ^ a6->sin6_port;
		for (size_t i = 0; i < n; i++)
			h = (h ^ b[i]) * 16777619u;
		return h ^ (h >> 15);
	}
	const struct sockaddr_in *a4 = (const void *)a;
	uint32_t h = (uint32_t)a4->sin_addr.s_addr * 0x9e3779b1u ^ (uint32_t)a4->sin_port * 0x85ebca6bu;
	return h ^ (h >> 16);
}

/* Whether two client addresses are the same.  Any thread. */
static bool addr_eq(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) &&
		       x->sin6_scope_id == y->sin6_scope_id;
	}
	const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
	return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
}

/* The jiffy a wheel timer must expire at to fire after @deadline_ns.
 * Any thread. */
static uint64_t idle_expires_jiffies(const struct udp_relay *r, uint64_t deadline_ns)
{
	uint64_t now = pw_now_ns(r->rt);
	uint64_t hz = pw_runtime_hz(r->rt);
	uint64_t d = deadline_ns > now ? deadline_ns - now : 0;
	return pw_jiffies(r->rt) + (d * hz + 999999999ull) / 1000000000ull + 1;
}

/* The lock of the clients of hash @h: every worker's bucket of @h (the
 * tables have TAB_LOCKS buckets or more, a power of 2, so a bucket's
 * clients all have one stripe), their links and their idle decisions.
 * Any thread; takes nothing. */
static pthread_mutex_t *tab_lock(struct udp_relay *r, uint32_t h)
{
	return &r->tab_lock[h & (TAB_LOCKS - 1)].m;
}

/* Take @cl out of its owner's table and epoll set.  Context: the owner's
 * thread with @cl's stripe lock held, or main after the workers are
 * joined. */
void udp__client_unlink(struct worker *w, struct client *cl)
{
	if (!cl->linked)
		return;
	struct client **pp = &w->tab[cl->hash & w->tab_mask];
	while (*pp && *pp != cl)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = cl->hnext;
	cl->linked = 0;
	w->nclients--;
	epoll_ctl(w->ep, EPOLL_CTL_DEL, cl->fd, NULL);
}

/* The idle timer: on the owner's CPU (pinned).  A client with traffic
 * since it was armed is re-armed for the rest; an idle one is forgotten
 * (its table and timer references dropped: packets still queued keep it).
 * The decision is made under the client's stripe lock: a worker that
 * finds the client in the owner's table (--steer-cpu) has written its
 * last_ns before it, or finds it gone after and makes a new one.
 * Context: the owner's thread (pw_run_timers()); takes the stripe lock. */
static void client_timer(struct pw_timer *t)
{
	struct client *cl = pw_container_of(t, struct client, timer);
	struct udp_relay *r = cl->r;
	pthread_mutex_t *m = tab_lock(r, cl->hash);
	pthread_mutex_lock(m);
	uint64_t deadline = __atomic_load_n(&cl->last_ns, __ATOMIC_RELAXED) + r->idle_ns;
	if (deadline > pw_now_ns(r->rt) && !__atomic_load_n(&r->stopping, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(m);
		pw_mod_timer(t, idle_expires_jiffies(r, deadline));
		return;
	}
	struct worker *w = &r->w[cl->owner];
	int linked = cl->linked;
	udp__client_unlink(w, cl);
	pthread_mutex_unlock(m);
	ADD(r->slots[w->id].clients_expired, 1);
	if (linked)
		udp__client_put(cl); /* the table's */
	udp__client_put(cl);         /* the timer's */
}

/* @w's table's client for @addr (hash @h), or NULL.  Context: @w's
 * thread (the only one that changes its table), or any worker holding
 * @h's stripe lock. */
static struct client *client_find(struct worker *w, const struct sockaddr_storage *addr,
				  uint32_t h)
{
	for (struct client *cl = w->tab[h & w->tab_mask]; cl; cl = cl->hnext)
		if (cl->hash == h && addr_eq(&cl->addr, addr))
			return cl;
	return NULL;
}

static struct client *client_new(struct worker *w, const struct sockaddr_storage *addr,
				 socklen_t alen, uint32_t h, unsigned *why);

struct client *udp__client_get(struct worker *w, const struct sockaddr_storage *addr,
			       socklen_t alen, unsigned *why)
{
	struct udp_relay *r = w->r;
	uint32_t h = addr_hash(addr);
	uint64_t now = pw_now_ns(r->rt);
	struct client *cl = client_find(w, addr, h);
	if (cl) {
		udp__client_hold(cl);
		__atomic_store_n(&cl->last_ns, now, __ATOMIC_RELAXED);
		return cl;
	}
	pthread_mutex_t *m = tab_lock(r, h);
	pthread_mutex_lock(m);
	for (unsigned i = 0; !cl && i < r->nw; i++)
		if (i != w->id)
			cl = client_find(&r->w[i], addr, h);
	if (cl)
		__atomic_store_n(&cl->last_ns, now, __ATOMIC_RELAXED);
	else
		cl = client_new(w, addr, alen, h, why);
	if (cl)
		udp__client_hold(cl); /* linked: the table's reference keeps it */
	pthread_mutex_unlock(m);
	return cl;
}

/* Say once that a source address (@addr's) holds --max-clients-per-addr
 * clients.  Any thread; an atomic exchange. */
static void warn_per_addr(struct udp_relay *r, const struct sockaddr_storage *addr)
{
	if (__atomic_exchange_n(&r->addr_warned, 1, __ATOMIC_RELAXED))
		return;
	char a[80];
	relay_format_addr(addr, a, sizeof(a));
	fprintf(stderr, "pinwheel-netem: the address of client %s holds %u client mappings "
		"(--max-clients-per-addr%s): its new clients' datagrams are dropped and counted "
		"(max_clients_per_addr) until its mappings expire (--idle); said once\n", a,
		r->per_addr, addr->ss_family == AF_INET6 ? ", an IPv6 /64 as one address" : "");
}

/* A new client of @w's for @addr (hash @h), in its table, with the
 * table's and the timer's references, counted in r->nclients and its
 * address's count; NULL with the drop reason in *@why
 * (max_clients_per_addr, max_clients, no_memory, socket_error) and
 * nothing counted.  Context: @w's thread, @h's stripe lock held (a
 * socket, its connect and an epoll_ctl under it, and the address's
 * stripe lock: a new client's cost only). */
static struct client *client_new(struct worker *w, const struct sockaddr_storage *addr,
				 socklen_t alen, uint32_t h, unsigned *why)
{
	struct udp_relay *r = w->r;
	struct addr_count *ac;
	*why = addr_take(r, addr, &ac);
	if (*why) {
		if (*why == RD_MAX_CLIENTS_PER_ADDR)
			warn_per_addr(r, addr);
		return NULL;
	}
	if (__atomic_add_fetch(&r->nclients, 1, __ATOMIC_RELAXED) > r->cfg.max_clients) {
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		addr_release(r, ac);
		*why = RD_MAX_CLIENTS;
		return NULL;
	}
	struct client *cl = calloc(1, sizeof(*cl));
	if (!cl) {
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		addr_release(r, ac);
		*why = RD_NO_MEMORY;
		return NULL;
	}
	cl->fd = socket(r->cfg.to.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (cl->fd < 0 && (errno == EMFILE || errno == ENFILE) &&
	    !__atomic_exchange_n(&r->fd_warned, 1, __ATOMIC_RELAXED)) {
		struct rlimit rl = { 0, 0 };
		getrlimit(RLIMIT_NOFILE, &rl);
		fprintf(stderr, "pinwheel-netem: out of file descriptors (%s; the limit is %llu, "
			"%u clients): new clients' datagrams are dropped and counted "
			"(socket_error) until mappings expire (--idle); raise ulimit -n or "
			"lower --max-clients\n", strerror(errno), (unsigned long long)rl.rlim_cur,
			__atomic_load_n(&r->nclients, __ATOMIC_RELAXED));
	}
	if (cl->fd < 0 || connect(cl->fd, (const struct sockaddr *)&r->cfg.to, r->cfg.to_len)) {
		if (cl->fd >= 0)
			close(cl->fd);
		free(cl);
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		addr_release(r, ac);
		*why = RD_SOCKET_ERROR;
		return NULL;
	}
	int sz = 1 << 20, one = 1;
	setsockopt(cl->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(cl->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	setsockopt(cl->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = cl };
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, cl->fd, &ev)) {
		close(cl->fd);
		free(cl);
		__atomic_fetch_sub(&r->nclients, 1, __ATOMIC_RELAXED);
		addr_release(r, ac);
		*why = RD_SOCKET_ERROR;
		return NULL;
	}
	cl->r = r;
	cl->ac = ac; /* released with it (udp__client_put()) */
	own_socket(cl); /* its port marked until udp__client_put() closes it */
	cl->refcnt = 2; /* the table's and the timer's */
	cl->owner = w->id;
	cl->hash = h;
	memcpy(&cl->addr, addr, alen);
	cl->prio = relay_map_lookup(&r->cfg, addr);
	cl->alen = alen;
	__atomic_store_n(&cl->last_ns, pw_now_ns(r->rt), __ATOMIC_RELAXED);
	for (int d = 0; d < RELAY_NDIR; d++) {
		pw_sock_init(&cl->sk[d], r->rt, sock_noop);
		cl->sk[d].sk_hash = h;
	}
	pw_timer_setup(r->rt, &cl->timer, client_timer, PW_TIMER_PINNED);
	pw_mod_timer(&cl->timer, idle_expires_jiffies(r, cl->last_ns + r->idle_ns));
	cl->hnext = w->tab[h & w->tab_mask];
	w->tab[h & w->tab_mask] = cl;
	cl->linked = 1;
	w->nclients++;
	ADD(r->slots[w->id].clients_new, 1);
	return cl;
}
