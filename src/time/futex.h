/* SPDX-License-Identifier: MIT */
/*
 * Futex helpers: the only place that makes the futex system call.  Users:
 * the base lock's slow path (lock.c), waiting for a running callback
 * (runwait.c) and the workers' sleep and kicks (worker.c).  Process-private
 * futexes; spurious wake-ups are allowed, callers re-check their word.
 */
#ifndef PW_TIME_FUTEX_H
#define PW_TIME_FUTEX_H

#include <stdint.h>

#define PW_FUTEX_FOREVER UINT64_MAX

/* Sleep while *@addr holds @val, at most @timeout_ns (PW_FUTEX_FOREVER: no
 * limit).  Context: any thread holding no spinning lock. */
void pw__futex_wait(uint32_t *addr, uint32_t val, uint64_t timeout_ns);

/* Wake up to @n threads waiting on @addr (UINT32_MAX: all).  Context: any
 * thread. */
void pw__futex_wake(uint32_t *addr, uint32_t n);

#endif /* PW_TIME_FUTEX_H */
