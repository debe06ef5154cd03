/* SPDX-License-Identifier: MIT */
/*
 * The API's registry (tools/netem/api/proxy.c; a proxy's JSON in
 * tools/netem/api/proxy_json.c): toxiproxy's model of proxies
 * and their toxics, its validation, its JSON, and the one request handler
 * the HTTP front (tools/netem/api/api.c) routes every request into.  Pure over
 * the registry and a data plane reached through struct proxy_plane_ops, so
 * the unit test and the fuzzer drive it with a fake plane and no socket;
 * the server (tools/netem/api/server.c) plugs in the TCP data path
 * (tools/netem/tcp/tcp.h).
 *
 * Threads: any thread; requests are serialised by one mutex held for
 * their whole run, the entries guarded by a second one, dropped only
 * around a name lookup (the plane's calls are made under it, which is how
 * they are serialised as tcp.h asks).  Never call from a plane callback.
 */
#ifndef PW_NETEM_PROXY_H
#define PW_NETEM_PROXY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../tcp/tcp.h"
#include "../toxic.h"

/*
 * The data plane behind the registry.  @handle is the plane's own proxy
 * (a struct tcp_proxy for the real one).  Every call is made with the
 * registry's entry mutex held, from the thread of the request, or from
 * the resolver's (set_upstream, proxy_registry_resolve()).
 */
struct proxy_plane_ops {
	/* listen on @listen, connect to @upstream (@upstream_len 0: no
	 * upstream yet, each connection closed at once and counted in
	 * upstream_failed); the bound address into @bound.  Return: 0; a
	 * negative errno with a message in @err. */
	int (*open)(void *ctx, const char *name, const struct sockaddr *listen, socklen_t listen_len,
		    const struct sockaddr *upstream, socklen_t upstream_len, void **handle,
		    struct sockaddr_storage *bound, socklen_t *bound_len, char *err, size_t errlen);
	/* stop listening, close every connection, free @handle; @final
	 * (never NULL) gets the counters as the close left them: what the
	 * connections held counted in bytes_dropped, held 0, active 0 */
	void (*close)(void *ctx, void *handle, struct tcp_proxy_stats *final);
	/* where connections accepted from now on go (@upstream_len 0:
	 * nowhere, as open says).  Return: 0 or a negative errno, after
	 * which the registry closes the proxy and disables it */
	int (*set_upstream)(void *ctx, void *handle, const struct sockaddr *upstream,
			    socklen_t upstream_len);
	/* the proxy's whole toxic list, in the order added.  Return: 0; a
	 * negative errno with a message in @err (-EINVAL, -EOPNOTSUPP: the
	 * request's fault, a 400) */
	int (*set_toxics)(void *ctx, void *handle, const struct toxic *t, unsigned n, char *err,
			  size_t errlen);
	/* the proxy's counters now (NULL when the plane gives stats_json) */
	void (*stats)(void *ctx, void *handle, struct tcp_proxy_stats *s);
	/* would the plane take toxic @t (on any proxy)?  Opens nothing; called
	 * for every toxic added or changed, open proxy or not, so a disabled
	 * proxy refuses what it could not run once enabled.  NULL: all are.
	 * Return: 0; -EINVAL, -EOPNOTSUPP with a message in @err (a 400) */
	int (*validate)(void *ctx, const struct toxic *t, char *err, size_t errlen);
	/* the reports of the proxy's tc toxics on @stream: a JSON array as
	 * text (malloc'd), as tcp_proxy_tc_report() writes it; NULL: no
	 * memory.  NULL op: the plane keeps none (the stats show "tc": []) */
	char *(*tc_report)(void *ctx, void *handle, enum toxic_stream stream);
	/* the proxy's statistics as a JSON object (text, malloc'd), for a
	 * plane whose counters are not struct tcp_proxy_stats (the UDP
	 * plane); NULL op: stats() is used.  NULL return: no memory */
	char *(*stats_json)(void *ctx, void *handle);
	/* optional, for a stats_json plane that keeps its counters across a
	 * proxy's opens (the UDP plane): close() with the counters as the
	 * close left them added into *@kept, the proxy's ledger (NULL before
	 * the first close: the plane allocates it), which the registry keeps
	 * with the proxy, gives to kept_json() (which then stands for
	 * stats_json(), @handle NULL while the proxy is closed) and frees
	 * with kept_free() when the proxy goes */
	void (*close_keep)(void *ctx, void *handle, void **kept);
	char *(*kept_json)(void *ctx, void *handle, const void *kept);
	void (*kept_free)(void *ctx, void *kept);
};

struct proxy_registry;

/* Limits of the registry (past them: 400, named). */
#define PROXY_NAME_MAX   128     /* bytes of a proxy's name, with the NUL */
#define PROXY_MAX        1024    /* proxies */
#define PROXY_MAX_TOXICS 64      /* toxics of one proxy */
#define PROXY_MAX_TC     65536   /* bytes of a tc toxic's qdisc or batch text */

/* proxy_registry_create() flags */
#define PROXY_NUMERIC_HOSTS 1u   /* resolve no host name (the fuzzer: no DNS);
				    an upstream name is then refused (400) */

#define PROXY_RESOLVE_RETRY_S 2  /* how often the server looks up the upstream
				    names that did not resolve yet */
#define PROXY_RERESOLVE_S     30 /* ... and the ones that did, again */

/**
 * proxy_registry_create() - an empty registry over the plane @ops/@ctx.
 * Context: any thread.  Return: 0; -ENOMEM.
 */
int proxy_registry_create(const struct proxy_plane_ops *ops, void *ctx, unsigned flags,
			  struct proxy_registry **out);

/**
 * proxy_registry_set_udp() - the plane for "protocol":"udp" proxies
 * (without one, such a proxy is refused with a 400).
 * Context: the owner, before any request.  Return: none.
 */
void proxy_registry_set_udp(struct proxy_registry *r, const struct proxy_plane_ops *ops,
			    void *ctx);

/**
 * proxy_registry_destroy() - close every proxy still open in the plane
 * and free the registry.  Context: the owner, no request in flight (the
 * HTTP front stopped).  Return: none.
 */
void proxy_registry_destroy(struct proxy_registry *r);

/**
 * proxy_api_request() - serve one request of toxiproxy's API: @method
 * ("GET", "POST", ...), @path ("/proxies/NAME/toxics", no query string),
 * @body of @len bytes (any bytes; NULL when @len is 0).
 * *@out_body gets a malloc'd NUL-terminated body for the caller to free,
 * or NULL when the answer has none (204, 405); *@content_type a static
 * string, or NULL with no body.
 * Context: any thread; takes the registry's mutex.
 * Return: the HTTP status (200, 201, 204, 400, 404, 405, 409, 500).
 */
int proxy_api_request(struct proxy_registry *r, const char *method, const char *path,
		      const char *body, size_t len, char **out_body, const char **content_type);

/**
 * proxy_registry_populate() - what POST /populate does with @json (a JSON
 * array of proxies: toxiproxy's -config file), for the server at start.
 * Context: any thread; takes the registry's mutex.
 * Return: 0; -EINVAL with the error message in @err.
 */
int proxy_registry_populate(struct proxy_registry *r, const char *json, size_t len, char *err,
			    size_t errlen);

/**
 * proxy_registry_resolve() - look up again the upstream names that did not
 * resolve yet (a proxy made with one is open with no upstream address:
 * the plane closes each client's connection at once, with no connect
 * tried, and counts it in upstream_failed) and those resolved
 * PROXY_RERESOLVE_S ago or
 * more; an address found or changed is given to the plane for the
 * connections accepted from then on.  The name service is asked with no
 * lock held, so a slow one stalls no request.
 * Context: the server's resolver thread (any thread but a plane worker);
 * takes the registry's mutex, twice, briefly.
 * Return: how many proxies got a new address; *@pending (may be NULL) how
 * many names still do not resolve.
 */
unsigned proxy_registry_resolve(struct proxy_registry *r, unsigned *pending);

/**
 * proxy_registry_count() - how many proxies there are, and how many of
 * them are open in the plane (@open may be NULL).  For tests.
 * Context: any thread; takes the registry's mutex.  Return: the count.
 */
unsigned proxy_registry_count(struct proxy_registry *r, unsigned *open);

/* ---------------------------------------------------- tools/netem/api/toxic.c
 * Helpers on struct toxic (declared here: toxic.h is the data path's
 * contract and declares only toxic_type_name()).  Any thread; no locks. */

/**
 * toxic_type_from_name() - the type toxiproxy calls @s ("latency", ...,
 * "tc") into *@t.  Return: 0; -EINVAL for a name it does not know.
 */
int toxic_type_from_name(const char *s, enum toxic_type *t);

/**
 * toxic_copy() - *@dst = *@src with the tc strings duplicated.
 * Return: 0; -ENOMEM (then @dst owns nothing).
 */
int toxic_copy(struct toxic *dst, const struct toxic *src);

/** toxic_release() - free what @t owns (a tc toxic's strings). */
void toxic_release(struct toxic *t);

struct json_t;

/**
 * toxic_to_json() - toxiproxy's JSON of @t: {"attributes", "name", "type",
 * "stream", "toxicity"} in that order.  Return: a new reference; NULL
 * when out of memory.
 */
struct json_t *toxic_to_json(const struct toxic *t);

/**
 * toxic_parse_attrs() - the JSON object @attrs (NULL or null: nothing)
 * into @t's attributes of its type and "seed"; what is absent or null
 * stays.  Return: 0; 400 with the message (naming the attribute) in @err.
 */
int toxic_parse_attrs(struct json_t *attrs, struct toxic *t, char *err, size_t errlen);

/**
 * toxic_parse_toxicity() - @o's "toxicity" (absent or null: unchanged),
 * a number in 0..1, into *@out.  Return: 0; 400 with the message in @err.
 */
int toxic_parse_toxicity(struct json_t *o, double *out, char *err, size_t errlen);

#endif /* PW_NETEM_PROXY_H */
