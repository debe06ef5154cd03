/* SPDX-License-Identifier: MIT */
/* Minimal test assertions: print where and what, then abort the test. */
#ifndef PW_TESTS_CHECK_H
#define PW_TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                   \
		}                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                             \
	do {                                                                       \
		long long va_ = (long long)(a), vb_ = (long long)(b);              \
		if (va_ != vb_) {                                                  \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", \
				__FILE__, __LINE__, #a, va_, #b, vb_);             \
			abort();                                                   \
		}                                                                  \
	} while (0)

#define RUN(fn)                                                                    \
	do {                                                                       \
		fn();                                                              \
		printf("ok - %s\n", #fn);                                          \
		fflush(stdout);                                                    \
	} while (0)

#endif
