/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: the output of the main benchmark.  The machine line and
 * the results as a table (with each implementation's ratio to pinwheel),
 * as JSON (--json) or as CSV (--csv, what plots.sh and tables.sh read).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "report.h"

void machine(char *buf, size_t len)
{
	char model[128] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[256];
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');
				if (p) {
					snprintf(model, sizeof(model), "%s", p + 2);
					model[strcspn(model, "\n")] = 0;
				}
				break;
			}
		fclose(f);
	}
	struct utsname u;
	uname(&u);
	snprintf(buf, len, "%s, %ld cores, Linux %s", model, sysconf(_SC_NPROCESSORS_ONLN),
		 u.release);
}

static const struct result *find(const struct result *results, unsigned n, const char *impl,
				 const char *wl, unsigned pending)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(results[i].impl, impl) && !strcmp(results[i].workload, wl) &&
		    results[i].pending == pending)
			return &results[i];
	return NULL;
}

static void print_json(const struct result *results, unsigned n, const char *clk,
		       const char *mach, uint64_t prefetch, bool burst_calls)
{
	printf("[");
	for (unsigned i = 0; i < n; i++) {
		const struct result *r = &results[i];
		printf("%s\n  {\"impl\": \"%s\", \"workload\": \"%s\", \"pending\": %u, ", i ? "," : "",
		       r->impl, r->workload, r->pending);
		if (!strcmp(r->workload, "memory"))
			printf("\"bytes_per_timer\": %.1f, \"rss_bytes_per_1e6\": %.0f", r->median,
			       r->rss_per_1e6);
		else
			printf("\"ns_per_op\": %.3f, \"min_ns_per_op\": %.3f, \"reps\": %u, "
			       "\"ops\": %llu, \"clock\": \"%s\"",
			       r->median, r->min, r->reps, (unsigned long long)r->ops,
			       !strcmp(r->workload, "expire") ? "sim-or-due" : clk);
		if (r->burst) /* rearm_burst: ns_per_op is per timer */
			printf(", \"burst\": %u, \"prefetch\": %llu%s", r->burst,
			       (unsigned long long)prefetch,
			       !strcmp(r->impl, "pinwheel") && burst_calls ? ", \"calls\": true" : "");
		printf(", \"machine\": \"%s\"}", mach);
	}
	printf("\n]\n");
}

static void print_csv(const struct result *results, unsigned n, const char *mach)
{
	printf("impl,workload,pending,ns_per_op,min_ns_per_op,bytes_per_timer,rss_bytes_per_1e6,"
	       "reps,ops,machine\n");
	for (unsigned i = 0; i < n; i++) {
		const struct result *r = &results[i];
		bool mem = !strcmp(r->workload, "memory");
		printf("%s,%s,%u,", r->impl, r->workload, r->pending);
		if (mem)
			printf(",,%.1f,%.0f,", r->median, r->rss_per_1e6);
		else
			printf("%.3f,%.3f,,,", r->median, r->min);
		printf("%u,%llu,\"%s\"\n", r->reps, (unsigned long long)r->ops, mach);
	}
}

/* Grouped by workload, then size, in the order of the options. */
static void print_table(const struct opts *o, const struct result *results, unsigned n,
			const char *clk, const char *mach)
{
	printf("# pinwheel-bench on %s\n# clock %s, %llu ops a repetition, %llu repetitions; "
	       "x pinwheel: median / pinwheel's median\n",
	       mach, clk, (unsigned long long)o->ops, (unsigned long long)o->reps);
	for (unsigned w = 0; w < o->nwl; w++)
		if (!strcmp(o->wls[w], "rearm_burst"))
			printf("# rearm_burst: ns per timer, bursts of %llu, the loop's prefetch %llu "
			       "ahead%s\n",
			       (unsigned long long)o->burst, (unsigned long long)o->prefetch,
			       o->burst_calls ? ", pinwheel through pw_mod_timer() calls" : "");
	printf("%-17s %-11s %9s %12s %12s %11s\n", "impl", "workload", "pending", "median ns/op",
	       "min ns/op", "x pinwheel");
	for (unsigned w = 0; w < o->nwl; w++)
		for (unsigned s = 0; s < o->nsizes; s++)
			for (unsigned i = 0; i < n; i++) {
				const struct result *r = &results[i];
				if (strcmp(r->workload, o->wls[w]) || r->pending != o->sizes[s])
					continue;
				const struct result *p =
					find(results, n, "pinwheel", r->workload, r->pending);
				if (!strcmp(r->workload, "memory")) {
					printf("%-17s %-11s %9u %9.1f B/timer  RSS %.1f MB per 1e6 timers\n",
					       r->impl, r->workload, r->pending, r->median,
					       r->rss_per_1e6 / 1e6);
					continue;
				}
				printf("%-17s %-11s %9u %12.2f %12.2f", r->impl, r->workload, r->pending,
				       r->median, r->min);
				if (p && p->median > 0)
					printf(" %11.2f", r->median / p->median);
				printf("\n");
			}
}

void print_results(const struct opts *o, const char *mach, const struct result *results,
		   unsigned n)
{
	const char *clk = o->clock == PW_CLOCK_SIM ? "sim" : "monotonic";
	if (o->format == 1)
		print_json(results, n, clk, mach, o->prefetch, o->burst_calls);
	else if (o->format == 2)
		print_csv(results, n, mach);
	else
		print_table(o, results, n, clk, mach);
}
