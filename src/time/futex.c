/* SPDX-License-Identifier: MIT */
/* The futex system call, wrapped once (futex.h).  Context: any thread. */
#define _GNU_SOURCE
#include "futex.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void pw__futex_wait(uint32_t *addr, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;
	if (timeout_ns != PW_FUTEX_FOREVER) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
		ts.tv_nsec = (long)(timeout_ns % 1000000000u);
		tp = &ts;
	}
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, tp, NULL, 0);
}

void pw__futex_wake(uint32_t *addr, uint32_t n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n > INT_MAX ? INT_MAX : (int)n, NULL, NULL,
		0);
}
