/* SPDX-License-Identifier: MIT */
/*
 * tc_util: the unit helpers of pinwheel's tc (see tc_util.h): the psched
 * tick arithmetic, rate tables, and the parsers tc's commands use, to
 * iproute2 6.1's behaviour byte for byte.  The output builder and the
 * printers are in tc_print.c.
 *
 * Context: called by the tc parser and printers on the thread running a tc
 * command.  Every object here belongs to its caller; there is no global
 * state, and no function takes a lock.
 */
#define _GNU_SOURCE
#include "tc_util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ====================================================== double to integer */

/* cvttsd2si with a 64-bit destination: INT64_MIN for NaN and overflow. */
static int64_t x86_cvtt64(double d)
{
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)d;
}

uint32_t pw__tc_d2u32(double d)
{
	return (uint32_t)(uint64_t)x86_cvtt64(d);
}

uint64_t pw__tc_d2u64(double d)
{
	/* gcc: below 2^63 a signed convert, else subtract 2^63 first */
	if (d >= 9223372036854775808.0) /* NaN goes the other way */
		return (uint64_t)x86_cvtt64(d - 9223372036854775808.0) ^
		       ((uint64_t)1 << 63);
	return (uint64_t)x86_cvtt64(d);
}

/* ========================================================= psched ticks */

void pw__tc_core_set(struct pw__tc_core *core, uint32_t t2us, uint32_t us2t,
		     uint32_t clock_res)
{
	if (us2t == 0) {
		core->tick_in_usec = 1;
		core->clock_factor = 1;
		return;
	}
	/* a nanosecond clock advertises a multiplier of 1000 meaning 1 */
	if (clock_res == 1000000000)
		t2us = us2t;
	core->clock_factor = (double)clock_res / PW_TIME_UNITS_PER_SEC;
	core->tick_in_usec = (double)t2us / us2t * core->clock_factor;
}

int pw__tc_core_init(struct pw__tc_core *core, const char *path)
{
	unsigned int t2us, us2t, res;
	FILE *f;
	int n;

	core->tick_in_usec = 1;
	core->clock_factor = 1;
	f = fopen(path ? path : "/proc/net/psched", "r");
	if (!f)
		return -1;
	n = fscanf(f, "%08x%08x%08x", &t2us, &us2t, &res);
	fclose(f);
	if (n != 3 || us2t == 0)
		return -1;
	pw__tc_core_set(core, t2us, us2t, res);
	return 0;
}

int pw__tc_core_time2big(const struct pw__tc_core *core, uint32_t usec)
{
	uint64_t t = usec;

	t = pw__tc_d2u64((double)t * core->tick_in_usec);
	return (t >> 32) != 0;
}

uint32_t pw__tc_core_time2tick(const struct pw__tc_core *core, uint32_t usec)
{
	return pw__tc_d2u32(usec * core->tick_in_usec);
}

uint32_t pw__tc_core_tick2time(const struct pw__tc_core *core, uint32_t ticks)
{
	return pw__tc_d2u32(ticks / core->tick_in_usec);
}

uint32_t pw__tc_core_time2ktime(const struct pw__tc_core *core, uint32_t usec)
{
	return pw__tc_d2u32(usec * core->clock_factor);
}

uint32_t pw__tc_core_ktime2time(const struct pw__tc_core *core, uint32_t ktime)
{
	return pw__tc_d2u32(ktime / core->clock_factor);
}

uint32_t pw__tc_calc_xmittime(const struct pw__tc_core *core, uint64_t rate,
			      uint32_t size)
{
	double us = PW_TIME_UNITS_PER_SEC * ((double)size / (double)rate);

	return pw__tc_core_time2tick(core, pw__tc_d2u32(us));
}

uint32_t pw__tc_calc_xmitsize(const struct pw__tc_core *core, uint64_t rate,
			      uint32_t ticks)
{
	double b = (double)rate * pw__tc_core_tick2time(core, ticks);

	return pw__tc_d2u32(b / PW_TIME_UNITS_PER_SEC);
}

/* ATM: whole 53-byte cells carrying 48 bytes each. */
static unsigned int align_to_atm(unsigned int size)
{
	unsigned int cells = size / 48;

	if (size % 48)
		cells++;
	return cells * 53;
}

static unsigned int adjust_size(unsigned int sz, unsigned int mpu,
				enum pw__linklayer ll)
{
	if (sz < mpu)
		sz = mpu;
	return ll == PW_LINKLAYER_ATM ? align_to_atm(sz) : sz;
}

int pw__tc_calc_rtable(const struct pw__tc_core *core,
		       struct pw__tc_ratespec *r, uint32_t rtab[256],
		       int cell_log, unsigned int mtu,
		       enum pw__linklayer linklayer, uint64_t rate)
{
	int i;

	if (mtu == 0)
		mtu = 2047;
	if (cell_log < 0) {
		cell_log = 0;
		while ((mtu >> cell_log) > 255)
			cell_log++;
	}
	for (i = 0; i < 256; i++) {
		unsigned int sz = adjust_size((unsigned int)(i + 1) << cell_log,
					      r->mpu, linklayer);
		rtab[i] = pw__tc_calc_xmittime(core, rate, sz);
	}
	r->cell_align = -1;
	r->cell_log = (unsigned char)cell_log;
	r->linklayer = (uint8_t)(linklayer & PW_TC_LINKLAYER_MASK);
	return cell_log;
}

/* =============================================================== parsers */

static const struct {
	const char *name;
	double scale; /* bits */
} rate_suffixes[] = {
	{ "bit", 1. },
	{ "Kibit", 1024. },
	{ "kbit", 1000. },
	{ "mibit", 1024. * 1024. },
	{ "mbit", 1000000. },
	{ "gibit", 1024. * 1024. * 1024. },
	{ "gbit", 1000000000. },
	{ "tibit", 1024. * 1024. * 1024. * 1024. },
	{ "tbit", 1000000000000. },
	{ "Bps", 8. },
	{ "KiBps", 8. * 1024. },
	{ "KBps", 8000. },
	{ "MiBps", 8. * 1024 * 1024 },
	{ "MBps", 8000000. },
	{ "GiBps", 8. * 1024. * 1024. * 1024. },
	{ "GBps", 8000000000. },
	{ "TiBps", 8. * 1024. * 1024. * 1024. * 1024. },
	{ "TBps", 8000000000000. },
};

/* A rate string's bytes/s as a double.  Return: 0, -1. */
static int rate_bytes(double *out, const char *str)
{
	char *p;
	double bps = strtod(str, &p);
	size_t i;

	if (p == str)
		return -1;
	if (*p) {
		for (i = 0; i < sizeof(rate_suffixes) / sizeof(rate_suffixes[0]); i++) {
			if (strcasecmp(rate_suffixes[i].name, p) == 0)
				break;
		}
		if (i == sizeof(rate_suffixes) / sizeof(rate_suffixes[0]))
			return -1;
		bps *= rate_suffixes[i].scale;
	}
	*out = bps / 8;
	return 0;
}

int pw__get_rate64(uint64_t *rate, const char *str)
{
	double b;

	if (rate_bytes(&b, str))
		return -1;
	*rate = pw__tc_d2u64(b);
	return 0;
}

int pw__get_rate(uint32_t *rate, const char *str)
{
	double b;
	uint32_t r;

	if (rate_bytes(&b, str))
		return -1;
	r = pw__tc_d2u32(b);
	if ((double)r != floor(b))
		return -1;
	*rate = r;
	return 0;
}

int pw__get_size(uint32_t *size, const char *str)
{
	char *p;
	double sz = strtod(str, &p);

	if (p == str)
		return -1;
	if (*p) {
		if (strcasecmp(p, "kb") == 0 || strcasecmp(p, "k") == 0)
			sz *= 1024;
		else if (strcasecmp(p, "gb") == 0 || strcasecmp(p, "g") == 0)
			sz *= 1024 * 1024 * 1024;
		else if (strcasecmp(p, "gbit") == 0)
			sz *= 1024 * 1024 * 1024 / 8;
		else if (strcasecmp(p, "mb") == 0 || strcasecmp(p, "m") == 0)
			sz *= 1024 * 1024;
		else if (strcasecmp(p, "mbit") == 0)
			sz *= 1024 * 1024 / 8;
		else if (strcasecmp(p, "kbit") == 0)
			sz *= 1024 / 8;
		else if (strcasecmp(p, "b") != 0)
			return -1;
	}
	/* tc: *size = sz, then fail unless *size == floor(sz) */
	if (isnan(sz) || sz < 0 || sz >= 4294967296.0)
		return -1;
	*size = (uint32_t)sz;
	return 0;
}

int pw__get_size_and_cell(uint32_t *size, int *cell_log, const char *str)
{
	const char *slash = strchr(str, '/');
	char tmp[PW__SPRINT_BSIZE];
	int cell, i;

	if (!slash)
		return pw__get_size(size, str);
	if ((size_t)(slash - str) >= sizeof(tmp))
		return -1;
	memcpy(tmp, str, (size_t)(slash - str));
	tmp[slash - str] = '\0';
	if (pw__get_size(size, tmp))
		return -1;
	if (pw__get_integer(&cell, slash + 1, 0))
		return -1;
	for (i = 0; i < 32; i++) {
		if ((int)(1U << i) == cell) {
			*cell_log = i;
			return 0;
		}
	}
	return -1;
}

int pw__get_time(uint32_t *usec, const char *str)
{
	char *p;
	double t = strtod(str, &p);

	if (p == str)
		return -1;
	if (*p) {
		if (strcasecmp(p, "s") == 0 || strcasecmp(p, "sec") == 0 ||
		    strcasecmp(p, "secs") == 0)
			t *= PW_TIME_UNITS_PER_SEC;
		else if (strcasecmp(p, "ms") == 0 || strcasecmp(p, "msec") == 0 ||
			 strcasecmp(p, "msecs") == 0)
			t *= PW_TIME_UNITS_PER_SEC / 1000;
		else if (strcasecmp(p, "us") == 0 || strcasecmp(p, "usec") == 0 ||
			 strcasecmp(p, "usecs") == 0)
			t *= PW_TIME_UNITS_PER_SEC / 1000000;
		else
			return -1;
	}
	*usec = pw__tc_d2u32(t);
	return 0;
}

int pw__get_time64(int64_t *ns, const char *str)
{
	char *p;
	double t = strtod(str, &p);

	if (p == str)
		return -1;
	if (*p) {
		if (strcasecmp(p, "s") == 0 || strcasecmp(p, "sec") == 0 ||
		    strcasecmp(p, "secs") == 0)
			t *= 1000000000.;
		else if (strcasecmp(p, "ms") == 0 || strcasecmp(p, "msec") == 0 ||
			 strcasecmp(p, "msecs") == 0)
			t *= 1000000.;
		else if (strcasecmp(p, "us") == 0 || strcasecmp(p, "usec") == 0 ||
			 strcasecmp(p, "usecs") == 0)
			t *= 1000.;
		else if (strcasecmp(p, "ns") == 0 || strcasecmp(p, "nsec") == 0 ||
			 strcasecmp(p, "nsecs") == 0)
			t *= 1;
		else
			return -1;
	}
	*ns = x86_cvtt64(t);
	return 0;
}

/*
 * strtoull of a whole string.  Context: any (uses errno).  Return: 0 with
 * *res set, -1 when arg is empty, has trailing junk or overflows.
 */
static int whole_ull(unsigned long long *res, const char *arg, int base)
{
	char *end;

	if (!arg || !*arg)
		return -1;
	errno = 0;
	*res = strtoull(arg, &end, base);
	if (end == arg || *end)
		return -1;
	if (*res == ULLONG_MAX && errno == ERANGE)
		return -1;
	return 0;
}

static int whole_ll(long long *res, const char *arg, int base)
{
	char *end;

	if (!arg || !*arg)
		return -1;
	errno = 0;
	*res = strtoll(arg, &end, base);
	if (end == arg || *end)
		return -1;
	if ((*res == LLONG_MAX || *res == LLONG_MIN) && errno == ERANGE)
		return -1;
	return 0;
}

int pw__get_u64(uint64_t *val, const char *arg, int base)
{
	unsigned long long r;

	if (whole_ull(&r, arg, base))
		return -1;
	*val = r;
	return 0;
}

int pw__get_u32(uint32_t *val, const char *arg, int base)
{
	unsigned long long r;

	if (whole_ull(&r, arg, base) || r > 0xFFFFFFFFULL)
		return -1;
	*val = (uint32_t)r;
	return 0;
}

int pw__get_u16(uint16_t *val, const char *arg, int base)
{
	unsigned long long r;

	if (whole_ull(&r, arg, base) || r > 0xFFFFULL)
		return -1;
	*val = (uint16_t)r;
	return 0;
}

int pw__get_u8(uint8_t *val, const char *arg, int base)
{
	unsigned long long r;

	if (whole_ull(&r, arg, base) || r > 0xFFULL)
		return -1;
	*val = (uint8_t)r;
	return 0;
}

int pw__get_unsigned(unsigned int *val, const char *arg, int base)
{
	unsigned long long r;

	if (whole_ull(&r, arg, base) || r > UINT_MAX)
		return -1;
	*val = (unsigned int)r;
	return 0;
}

int pw__get_s32(int32_t *val, const char *arg, int base)
{
	long long r;

	if (whole_ll(&r, arg, base) || r > INT32_MAX || r < INT32_MIN)
		return -1;
	*val = (int32_t)r;
	return 0;
}

int pw__get_integer(int *val, const char *arg, int base)
{
	long long r;

	if (whole_ll(&r, arg, base) || r > INT_MAX || r < INT_MIN)
		return -1;
	*val = (int)r;
	return 0;
}

int pw__parse_percent(double *val, const char *str)
{
	char *p;
	double v = strtod(str, &p) / 100.;

	if (isnan(v))
		return -1;
	*val = v;
	if (v > 1.0 || v < 0.0)
		return 1;
	if (*p && strcmp(p, "%"))
		return -1;
	return 0;
}

uint32_t pw__percent_to_u32(double p)
{
	return pw__tc_d2u32(rint(p * UINT32_MAX));
}

int pw__get_percent(uint32_t *per, const char *str)
{
	double p;

	if (pw__parse_percent(&p, str))
		return -1;
	*per = pw__percent_to_u32(p);
	return 0;
}

int pw__get_qdisc_handle(uint32_t *h, const char *str)
{
	uint32_t maj;
	char *p;

	if (strcmp(str, "none") == 0) {
		*h = PW_TC_H_UNSPEC;
		return 0;
	}
	maj = (uint32_t)strtoul(str, &p, 16);
	if (p == str || maj >= (1U << 16))
		return -1;
	if (*p != ':' && *p != '\0')
		return -1;
	*h = maj << 16;
	return 0;
}

int pw__get_tc_classid(uint32_t *h, const char *str)
{
	uint32_t maj, min;
	char *p;

	if (strcmp(str, "root") == 0) {
		*h = PW_TC_H_ROOT;
		return 0;
	}
	if (strcmp(str, "none") == 0) {
		*h = PW_TC_H_UNSPEC;
		return 0;
	}
	maj = (uint32_t)strtoul(str, &p, 16);
	if (p == str) {
		maj = 0;
		if (*p != ':')
			return -1;
	}
	if (*p == ':') {
		if (maj >= (1U << 16))
			return -1;
		maj <<= 16;
		str = p + 1;
		min = (uint32_t)strtoul(str, &p, 16);
		if (*p != '\0' || min >= (1U << 16))
			return -1;
		maj |= min;
	} else if (*p != '\0') {
		return -1;
	}
	*h = maj;
	return 0;
}

int pw__get_linklayer(unsigned int *val, const char *arg)
{
	if (pw__matches(arg, "ethernet") == 0)
		*val = PW_LINKLAYER_ETHERNET;
	else if (pw__matches(arg, "atm") == 0 || pw__matches(arg, "adsl") == 0)
		*val = PW_LINKLAYER_ATM;
	else
		return -1;
	return 0;
}

int pw__matches(const char *cmd, const char *pattern)
{
	size_t len = strlen(cmd);

	if (len > strlen(pattern))
		return -1;
	return memcmp(pattern, cmd, len);
}

int pw__tc_lines_next(struct pw__tc_lines *it)
{
	free(it->cmd);
	it->cmd = NULL;
	it->len = 0;
	it->open = false;
	if (!*it->p)
		return 0;
	it->first = it->lineno + 1;
	while (*it->p) {
		const char *p = it->p, *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		it->lineno++;
		it->p = nl ? nl + 1 : p + n;
		if (n && p[n - 1] == '\r')
			n--;
		const char *hash = memchr(p, '#', n);
		if (hash)
			n = (size_t)(hash - p);
		bool cont = !hash && n && p[n - 1] == '\\';
		if (cont)
			n--;
		char *c = realloc(it->cmd, it->len + n + 2);
		if (!c)
			return -ENOMEM;
		it->cmd = c;
		memcpy(c + it->len, p, n);
		it->len += n;
		if (cont && it->join)
			c[it->len++] = it->join;
		c[it->len] = '\0';
		if (!cont)
			return 1;
	}
	it->open = true; /* the text ended inside a continuation */
	return 1;
}

void pw__tc_lines_free(struct pw__tc_lines *it)
{
	free(it->cmd);
	it->cmd = NULL;
	it->len = 0;
}

int pw__makeargs(char *line, char *argv[], int maxargs)
{
	static const char ws[] = " \t\r\n";
	char *cp = strchr(line, '#');
	int argc = 0;

	if (cp)
		*cp = '\0';
	cp = line;
	while (*cp) {
		cp += strspn(cp, ws);
		if (*cp == '\0')
			break;
		if (argc >= maxargs - 1)
			return -E2BIG;
		if (*cp == '\'' || *cp == '"') {
			char quote = *cp++;

			argv[argc++] = cp;
			cp = strchr(cp, quote);
			if (!cp)
				return -EINVAL;
		} else {
			argv[argc++] = cp;
			cp += strcspn(cp, ws);
			if (*cp == '\0')
				break;
		}
		*cp++ = '\0';
	}
	if (maxargs > 0)
		argv[argc] = NULL;
	return argc;
}

/* ------------------------------------------------------------ files */

FILE *pw__open_regular(const char *path, uint64_t max, char *why, size_t whylen)
{
	int e;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		if (why && whylen)
			snprintf(why, whylen, "%s", strerror(e));
		errno = e;
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		e = errno;
		if (why && whylen)
			snprintf(why, whylen, "%s", strerror(e));
	} else if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
		if (why && whylen)
			snprintf(why, whylen, "not a regular file");
	} else if ((uint64_t)st.st_size > max) {
		e = EFBIG;
		if (why && whylen)
			snprintf(why, whylen, "larger than %llu bytes", (unsigned long long)max);
	} else {
		/* blocking again: a regular file never waits, and stdio's
		 * reads then need no EAGAIN handling */
		int fl = fcntl(fd, F_GETFL);
		FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? NULL : fdopen(fd, "r");
		if (f)
			return f;
		e = errno;
		if (why && whylen)
			snprintf(why, whylen, "%s", strerror(e));
	}
	close(fd);
	errno = e;
	return NULL;
}
