/* SPDX-License-Identifier: MIT */
/*
 * The per-base lock under contention (more threads than cores, so holders
 * get preempted and waiters sleep): mutual exclusion (a plain counter
 * incremented under the lock ends exact; TSan sees every access ordered),
 * and no waiter sleeps forever (the test finishes).
 */
#include <pthread.h>

#include "check.h"
#include "lock.h"

#define THREADS 6
#define ROUNDS 200000

static struct pw__lock lock;
static unsigned long counter; /* plain: protected by lock */
static unsigned long in_section;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pw__lock(&lock);
		CHECK_EQ(in_section++, 0);
		counter++;
		if (i % 1000 == 0)
			for (volatile int k = 0; k < 2000; k++) /* a long section now and then */
				;
		in_section--;
		pw__unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	pw__lock_init(&lock);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, worker, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(counter, (unsigned long)THREADS * ROUNDS);
	CHECK_EQ(lock.locked, 0);
	CHECK_EQ(lock.waiters, 0);
	printf("ok - %d threads x %d locked increments\n", THREADS, ROUNDS);
	return 0;
}
