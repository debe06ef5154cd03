/* SPDX-License-Identifier: MIT */
/*
 * The smallest pinwheel program that does something real: this thread acts
 * as CPU 0, arms three timers the kernel way, then sleeps until the next
 * one is due and runs it, until all three have fired.  Builds against the
 * installed library (see examples/CMakeLists.txt, or pkg-config pinwheel).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include <pinwheel/linux.h>

struct job {
	const char *name;
	int done;
	struct timer_list timer;
};

static void job_fn(struct timer_list *t)
{
	struct job *j = from_timer(j, t, timer);
	j->done = 1;
	printf("%-6s fired at jiffy %lu on CPU %d\n", j->name, jiffies, pw_this_cpu());
}

int main(void)
{
	struct pw_runtime *rt;
	struct pw_config cfg;
	struct job jobs[3] = {{"first", 0, {0}}, {"second", 0, {0}}, {"third", 0, {0}}};

	pw_config_init(&cfg);
	cfg.ncpus = 1;
	if (pw_runtime_create(&cfg, &rt) || pw_cpu_enter(rt, 0)) {
		fprintf(stderr, "hello_timer: cannot start pinwheel\n");
		return 1;
	}
	pw_set_default_runtime(rt);

	for (int i = 0; i < 3; i++) {
		timer_setup(&jobs[i].timer, job_fn, 0);
		jobs[i].timer.expires = jiffies + msecs_to_jiffies(10 * (i + 1));
		add_timer(&jobs[i].timer);
	}
	printf("armed 3 timers at jiffy %lu (HZ=%lu)\n", jiffies, HZ);

	while (!jobs[2].done) {
		uint64_t now = pw_now_ns(rt), next = pw_next_expiry_ns(rt, 0);
		if (next > now) {
			struct timespec ts = {(time_t)((next - now) / 1000000000u),
					      (long)((next - now) % 1000000000u)};
			nanosleep(&ts, NULL);
		}
		pw_run_timers(rt, 0);
	}
	pw_cpu_exit(rt);
	pw_runtime_destroy(rt);
	return 0;
}
