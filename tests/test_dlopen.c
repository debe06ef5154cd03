/* SPDX-License-Identifier: MIT */
/*
 * The shared library as a plugin: a program that does not link libpinwheel
 * dlopen()s it (argv[1], the path CMake built), looks up the entry points
 * with dlsym(), and uses a simulated runtime through them: create, enter
 * CPU 0, arm a timer through pw__mod_timer_lane() (the call the inline
 * pw_mod_timer() makes, which touches the library's thread-local state),
 * destroy, dlclose.  The name 0.1.0's pw_mod_timer() called,
 * pw__mod_timer_slow, must no longer resolve: SOVERSION 1 dropped that
 * alias with the timer's new layout (cmake/libpinwheel.map), so a
 * library that still exported it would say an ABI it no longer has.
 * <pinwheel/pinwheel.h> is included for the types only:
 * nothing here calls or refers to a pinwheel symbol directly (nm shows no
 * undefined pw_ symbol in this binary).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

typedef int (*create_fn)(const struct pw_config *, struct pw_runtime **);
typedef void (*destroy_fn)(struct pw_runtime *);
typedef int (*setup_fn)(struct pw_runtime *, struct pw_timer *, void (*)(struct pw_timer *),
			unsigned);
typedef int (*mod_lane_fn)(struct pw_timer *, uint64_t);
typedef int (*enter_fn)(struct pw_runtime *, unsigned);

static void *lib;

static void *sym(const char *name)
{
	dlerror();
	void *p = dlsym(lib, name);
	const char *err = dlerror();
	if (err || !p) {
		fprintf(stderr, "test_dlopen: dlsym(%s): %s\n", name, err ? err : "NULL");
		exit(1);
	}
	return p;
}

static void expect(const char *what, int got, int want)
{
	if (got != want) {
		fprintf(stderr, "test_dlopen: %s returned %d, expected %d\n", what, got, want);
		exit(1);
	}
}

static void timer_fn(struct pw_timer *t)
{
	(void)t;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_dlopen PATH/libpinwheel.so\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "test_dlopen: dlopen(%s): %s\n", argv[1], dlerror());
		return 1;
	}

	/* dlsym returns void *; POSIX guarantees the conversion to a function
	 * pointer works, ISO C does not say, hence the memcpy. */
	create_fn create;
	destroy_fn destroy;
	setup_fn setup;
	mod_lane_fn mod_lane;
	enter_fn enter;
	void *p;
	p = sym("pw_runtime_create");
	memcpy(&create, &p, sizeof(p));
	p = sym("pw_runtime_destroy");
	memcpy(&destroy, &p, sizeof(p));
	p = sym("pw_timer_setup");
	memcpy(&setup, &p, sizeof(p));
	p = sym("pw__mod_timer_lane");
	memcpy(&mod_lane, &p, sizeof(p));
	if (dlsym(lib, "pw__mod_timer_slow")) {
		fprintf(stderr, "test_dlopen: pw__mod_timer_slow, 0.1.0's name, is still exported "
				"(SOVERSION 1 dropped it: cmake/libpinwheel.map)\n");
		return 1;
	}
	p = sym("pw_cpu_enter");
	memcpy(&enter, &p, sizeof(p));

	/* pw_config_init()'s defaults, by hand, on the simulated clock */
	struct pw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.ncpus = 1;
	cfg.hz = 1000;
	cfg.clock = PW_CLOCK_SIM;

	struct pw_runtime *rt = NULL;
	expect("pw_runtime_create", create(&cfg, &rt), 0);
	if (!rt) {
		fprintf(stderr, "test_dlopen: pw_runtime_create gave no runtime\n");
		return 1;
	}
	expect("pw_cpu_enter(0)", enter(rt, 0), 0);

	struct pw_timer t;
	memset(&t, 0, sizeof(t));
	expect("pw_timer_setup", setup(rt, &t, timer_fn, 0), 0);
	expect("pw__mod_timer_lane (inactive)", mod_lane(&t, 10), 0);
	expect("pw__mod_timer_lane (pending)", mod_lane(&t, 20), 1);

	destroy(rt); /* drops the pending timer and this thread's CPU */
	if (dlclose(lib)) {
		fprintf(stderr, "test_dlopen: dlclose: %s\n", dlerror());
		return 1;
	}
	printf("test_dlopen: ok\n");
	return 0;
}
