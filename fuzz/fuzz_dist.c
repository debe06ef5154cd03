/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the netem `.dist` table reader (src/net/tc/dist.c).
 *
 * The input is the file's contents, handed to pw__dist_load() through a
 * memfd (its /proc/self/fd path: a name with '/' is read as a path).
 * Properties beyond ASan/UBSan's: success gives 1..16384 values, each in
 * s16 range, and an empty error; failure gives no table, a count of 0, a
 * negative errno and a message; the same input loads to the same table
 * twice; and every value of a loaded table goes through
 * pw__netem_tabledist() for a few (mu, sigma, rnd) without trapping.
 * Context: libFuzzer's thread.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sched/netem.h" /* pw__netem_tabledist() */
#include "tc/dist.h"

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_dist: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	int fd = memfd_create("pw-dist", 0);
	must(fd >= 0, "memfd_create");
	must(write(fd, d, n) == (ssize_t)n, "write");
	char path[64], err[512];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int16_t *t = NULL, *t2 = NULL;
	unsigned cnt = 77, cnt2 = 0;
	int rc = pw__dist_load(path, &t, &cnt, err, sizeof(err));
	if (rc == 0) {
		must(t != NULL && cnt >= 1 && cnt <= 16384, "bad table size");
		must(err[0] == '\0', "error text on success");
		must(pw__dist_load(path, &t2, &cnt2, err, sizeof(err)) == 0, "second load failed");
		must(cnt2 == cnt && !memcmp(t, t2, cnt * sizeof(*t)), "second load differs");
		static const int32_t sigmas[] = { 1, 7, 8191, 8192, 123456, INT32_MAX, INT32_MIN };
		volatile int64_t sink = 0;
		for (unsigned i = 0; i < sizeof(sigmas) / sizeof(sigmas[0]); i++)
			for (unsigned r = 0; r < cnt; r += 1 + cnt / 64)
				sink += pw__netem_tabledist(1000000, sigmas[i], r * 2654435761u, t, cnt);
		(void)sink;
	} else {
		must(rc < 0, "positive return");
		must(t == NULL && cnt == 0, "a table left on failure");
		must(err[0] != '\0', "failure without a message");
	}
	free(t);
	free(t2);
	close(fd);
	return 0;
}
