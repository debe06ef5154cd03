/* SPDX-License-Identifier: MIT */
/*
 * What the lab's C tests of pure model parts share: CHECK(cond, fmt, ...),
 * which counts a failure with its message and goes on (so one run lists
 * every broken figure), and the count main() returns.  Threads: the
 * test's one thread.  Locks: none.
 */
#ifndef PW_TESTS_LAB_CHECK_H
#define PW_TESTS_LAB_CHECK_H

#include <stdio.h>

static int fails; /* CHECKs failed so far: main() returns it */

#define CHECK(c, ...)                                                                     \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
			fprintf(stderr, __VA_ARGS__);                                     \
			fprintf(stderr, "\n");                                            \
			fails++;                                                          \
		}                                                                         \
	} while (0)

#endif /* PW_TESTS_LAB_CHECK_H */
