/* SPDX-License-Identifier: MIT */
/*
 * Toxics as plain values (tools/netem/toxic.h): their names, the copies
 * and frees of what a tc toxic owns (its qdisc or batch text), and their
 * JSON both ways as toxiproxy writes and reads it: the attributes of each
 * type under toxiproxy's names and units, every one an integer (a real,
 * a string, a boolean: 400, as toxiproxy's decoder refuses them), absent
 * or null ones left as they were (a create starts from 0, toxiproxy's
 * default), unknown ones ignored (as toxiproxy does), and the ranges of
 * toxic.h enforced (where toxiproxy takes a negative latency or a
 * toxicity of 2: differences listed in docs/relay.md).  pinwheel's own:
 * "seed" on every type, the tc toxic's "qdisc" or "batch" and its
 * optional "schedule" (texts only: the planes run them with
 * PW_TC_NO_FILES, so no word of theirs reads a file, however spelt).
 * The registry (tools/netem/api/proxy.c) keeps toxics in these terms; the
 * data path (tools/netem/tcp/tcp.c) reads them.
 * Threads: any; no state, no locks.
 */
#define _GNU_SOURCE
#include "../toxic.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

static const char *const type_names[TOXIC_NTYPES] = {
	[TOXIC_LATENCY] = "latency",     [TOXIC_BANDWIDTH] = "bandwidth",
	[TOXIC_SLOW_CLOSE] = "slow_close", [TOXIC_TIMEOUT] = "timeout",
	[TOXIC_RESET_PEER] = "reset_peer", [TOXIC_SLICER] = "slicer",
	[TOXIC_LIMIT_DATA] = "limit_data", [TOXIC_TC] = "tc",
};

const char *toxic_type_name(enum toxic_type t)
{
	return (unsigned)t < TOXIC_NTYPES ? type_names[t] : NULL;
}

int toxic_type_from_name(const char *s, enum toxic_type *t)
{
	for (unsigned i = 0; i < TOXIC_NTYPES; i++)
		if (!strcmp(s, type_names[i])) {
			*t = (enum toxic_type)i;
			return 0;
		}
	return -EINVAL;
}

int toxic_copy(struct toxic *dst, const struct toxic *src)
{
	*dst = *src;
	if (src->type != TOXIC_TC)
		return 0;
	dst->a.tc.qdisc = src->a.tc.qdisc ? strdup(src->a.tc.qdisc) : NULL;
	dst->a.tc.batch = src->a.tc.batch ? strdup(src->a.tc.batch) : NULL;
	dst->a.tc.schedule = src->a.tc.schedule ? strdup(src->a.tc.schedule) : NULL;
	if ((src->a.tc.qdisc && !dst->a.tc.qdisc) || (src->a.tc.batch && !dst->a.tc.batch) ||
	    (src->a.tc.schedule && !dst->a.tc.schedule)) {
		toxic_release(dst);
		return -ENOMEM;
	}
	return 0;
}

void toxic_release(struct toxic *t)
{
	if (t->type != TOXIC_TC)
		return;
	free(t->a.tc.qdisc);
	free(t->a.tc.batch);
	free(t->a.tc.schedule);
	t->a.tc.qdisc = t->a.tc.batch = t->a.tc.schedule = NULL;
}

static int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 400;
}

/* @key of @o: absent or null leaves *@out; a string sets it; else 400. */
static int get_string(json_t *o, const char *key, const char **out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return errf(err, errlen, "bad request body: attributes.%s: expected a string", key);
	*out = json_string_value(v);
	return 0;
}

/* An integer attribute within @lo..@hi (@unit for the message). */
static int get_int(json_t *o, const char *key, int64_t lo, int64_t hi, const char *unit,
		   int64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return errf(err, errlen, "bad request body: attributes.%s: expected an integer (%s)", key,
			    unit);
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return errf(err, errlen, "attributes.%s: %lld is out of range (%lld..%lld %s)", key,
			    (long long)x, (long long)lo, (long long)hi, unit);
	*out = x;
	return 0;
}

/* A tc attribute's text: a non-empty string of at most PROXY_MAX_TC bytes. */
static int get_tc(json_t *o, const char *key, char **out, int *given, char *err, size_t errlen)
{
	const char *s = NULL;
	int rc = get_string(o, key, &s, err, errlen);
	if (rc || !s)
		return rc;
	if (!s[strspn(s, " \t\r\n")])
		return errf(err, errlen, "attributes.%s: empty", key);
	if (strlen(s) >= PROXY_MAX_TC)
		return errf(err, errlen, "attributes.%s: longer than %d bytes", key, PROXY_MAX_TC - 1);
	char *c = strdup(s);
	if (!c)
		return errf(err, errlen, "out of memory");
	free(*out);
	*out = c;
	*given = 1;
	return 0;
}

/* @attrs (an object, or NULL) into @t's attributes; what is absent stays. */
int toxic_parse_attrs(json_t *attrs, struct toxic *t, char *err, size_t errlen)
{
	if (!attrs || json_is_null(attrs))
		return 0;
	if (!json_is_object(attrs))
		return errf(err, errlen, "bad request body: attributes: expected an object");
	const int64_t MS = TOXIC_MAX_MS, B = TOXIC_MAX_BYTES;
	int rc = 0;
	switch (t->type) {
	case TOXIC_LATENCY:
		rc = get_int(attrs, "latency", 0, MS, "ms", &t->a.latency.latency_ms, err, errlen);
		if (!rc)
			rc = get_int(attrs, "jitter", 0, MS, "ms", &t->a.latency.jitter_ms, err, errlen);
		break;
	case TOXIC_BANDWIDTH:
		rc = get_int(attrs, "rate", 0, TOXIC_MAX_RATE_KBPS, "KB/s", &t->a.bandwidth.rate_kbps,
			     err, errlen);
		break;
	case TOXIC_SLOW_CLOSE:
		rc = get_int(attrs, "delay", 0, MS, "ms", &t->a.slow_close.delay_ms, err, errlen);
		break;
	case TOXIC_TIMEOUT:
		rc = get_int(attrs, "timeout", 0, MS, "ms", &t->a.timeout.timeout_ms, err, errlen);
		break;
	case TOXIC_RESET_PEER:
		rc = get_int(attrs, "timeout", 0, MS, "ms", &t->a.reset_peer.timeout_ms, err, errlen);
		break;
	case TOXIC_SLICER:
		rc = get_int(attrs, "average_size", 0, B, "bytes", &t->a.slicer.average_size, err, errlen);
		if (!rc)
			rc = get_int(attrs, "size_variation", 0, B, "bytes",
				     &t->a.slicer.size_variation, err, errlen);
		if (!rc)
			rc = get_int(attrs, "delay", 0, MS * 1000, "us", &t->a.slicer.delay_us, err, errlen);
		break;
	case TOXIC_LIMIT_DATA:
		rc = get_int(attrs, "bytes", 0, B, "bytes", &t->a.limit_data.bytes, err, errlen);
		break;
	case TOXIC_TC: {
		int q = 0, b = 0, sg = 0;
		char *qd = NULL, *bt = NULL, *sc = NULL;
		if ((rc = get_tc(attrs, "qdisc", &qd, &q, err, errlen)) ||
		    (rc = get_tc(attrs, "batch", &bt, &b, err, errlen)) ||
		    (rc = get_tc(attrs, "schedule", &sc, &sg, err, errlen))) {
			free(qd);
			free(bt);
			free(sc);
			break;
		}
		if (sg) { /* a schedule given replaces the one there was */
			free(t->a.tc.schedule);
			t->a.tc.schedule = sc;
		}
		if (q && b) {
			free(qd);
			free(bt);
			rc = errf(err, errlen, "a tc toxic takes one of qdisc or batch, not both");
			break;
		}
		if (q || b) { /* the one given replaces what was there */
			free(t->a.tc.qdisc);
			free(t->a.tc.batch);
			t->a.tc.qdisc = qd;
			t->a.tc.batch = bt;
		}
		break;
	}
	default:
		break;
	}
	if (rc)
		return rc;
	json_t *sv = json_object_get(attrs, "seed");
	if (sv && !json_is_null(sv)) {
		int64_t seed = 0;
		if ((rc = get_int(attrs, "seed", 0, INT64_MAX, "an integer", &seed, err, errlen)))
			return rc;
		t->seed = (uint64_t)seed;
		t->has_seed = 1;
	}
	return 0;
}

int toxic_parse_toxicity(json_t *o, double *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, "toxicity");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return errf(err, errlen, "bad request body: toxicity: expected a number");
	double x = json_number_value(v);
	if (!(x >= 0 && x <= 1))
		return errf(err, errlen, "toxicity: %g is out of range (0..1)", x);
	*out = x;
	return 0;
}

json_t *toxic_to_json(const struct toxic *t)
{
	json_t *a = json_object();
	switch (t->type) {
	case TOXIC_LATENCY:
		json_object_set_new(a, "latency", json_integer(t->a.latency.latency_ms));
		json_object_set_new(a, "jitter", json_integer(t->a.latency.jitter_ms));
		break;
	case TOXIC_BANDWIDTH:
		json_object_set_new(a, "rate", json_integer(t->a.bandwidth.rate_kbps));
		break;
	case TOXIC_SLOW_CLOSE:
		json_object_set_new(a, "delay", json_integer(t->a.slow_close.delay_ms));
		break;
	case TOXIC_TIMEOUT:
		json_object_set_new(a, "timeout", json_integer(t->a.timeout.timeout_ms));
		break;
	case TOXIC_RESET_PEER:
		json_object_set_new(a, "timeout", json_integer(t->a.reset_peer.timeout_ms));
		break;
	case TOXIC_SLICER:
		json_object_set_new(a, "average_size", json_integer(t->a.slicer.average_size));
		json_object_set_new(a, "size_variation", json_integer(t->a.slicer.size_variation));
		json_object_set_new(a, "delay", json_integer(t->a.slicer.delay_us));
		break;
	case TOXIC_LIMIT_DATA:
		json_object_set_new(a, "bytes", json_integer(t->a.limit_data.bytes));
		break;
	case TOXIC_TC:
		if (t->a.tc.qdisc)
			json_object_set_new(a, "qdisc", json_string(t->a.tc.qdisc));
		if (t->a.tc.batch)
			json_object_set_new(a, "batch", json_string(t->a.tc.batch));
		if (t->a.tc.schedule)
			json_object_set_new(a, "schedule", json_string(t->a.tc.schedule));
		break;
	default:
		break;
	}
	if (t->has_seed)
		json_object_set_new(a, "seed", json_integer((json_int_t)t->seed));
	json_t *j = json_object();
	json_object_set_new(j, "attributes", a);
	json_object_set_new(j, "name", json_string(t->name));
	json_object_set_new(j, "type", json_string(toxic_type_name(t->type)));
	json_object_set_new(j, "stream",
			    json_string(t->stream == TOXIC_UPSTREAM ? "upstream" : "downstream"));
	double x = t->toxicity;
	json_object_set_new(j, "toxicity", x == floor(x) ? json_integer((json_int_t)x) : json_real(x));
	return j;
}
