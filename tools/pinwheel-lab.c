/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab: the three seed experiments re-run on pinwheel, before and
 * after each seed's fix, measured the way the seed measured it, beside the
 * seed's own numbers.
 *
 *   seed000  paced flows through fq on mq, socket timers re-armed per ACK:
 *            timer_migration=1 (PUSH, not pinned) vs pinned vs PULL; vmstat's
 *            in, cs, us/sy/id per interval (tools/lab/live/seed000.c)
 *   seed001  receive-side mod_timer: one global timer lock (2.4) vs per-CPU
 *            bases without the fast path vs with it; packets/s and a
 *            readprofile-style profile (tools/lab/live/seed001.c, profile.c)
 *   seed003  mq + 8 netem (the seed's tc script): watchdogs not pinned under
 *            PUSH vs pinned vs not pinned under PULL; lock-wait share,
 *            dequeues per CPU, delay accuracy (tools/lab/live/seed003.c)
 *   all      the three, one after another
 *   report   all, then report.md + report.html with the charts (--out)
 *   model    the deterministic model of a seed (or all) alone: each seed at
 *            its own size on the simulated clock, no threads (tools/lab/
 *            model/model.c); seed000|001|003|all|report run it first, merge its
 *            half of each claim into the live run's, and print its section
 *            after the claims table
 *
 * The experiments run one at a time in this process, each running its
 * configurations round by round (--runs, 5 runs of each); a line per run
 * goes to stderr (the machine's load, steal and other processes' CPU
 * around it, and whether they spoil it), the claims tables, sections and
 * tables (or --json) to stdout.  Exit status: 0; 1 if an experiment's
 * invariant broke (every packet accounted for, the configuration in force);
 * 2 for a bad command line.
 *
 * Threads: main only; the experiments start and stop their runtimes'
 * workers themselves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lab/lab.h"

static const char usage[] =
	"usage: pinwheel-lab seed000|seed001|seed003|all|report [options]\n"
	"       pinwheel-lab model seed000|seed001|seed003|all [--cpus N] [--hz H] [--seed S]\n"
	"                    [--json] [--smoke] [--full] [--costs table|measured]\n"
	"\n"
	"  model     the deterministic model alone (the simulated clock, no threads:\n"
	"            seconds): each seed at its own size, the library deciding every\n"
	"            timer; seed000|001|003|all run it first, then the live run\n"
	"  seed000   500 paced flows through fq, socket timers and timer_migration\n"
	"            (the seed's \"on\" = PUSH, not pinned; the fix = pinned; Linux 6.9 = PULL)\n"
	"  seed001   receive-side mod_timer: global lock (2.4) / per-CPU, no fast path /\n"
	"            per-CPU with the fast path (2.6), packets/s and a profile\n"
	"  seed003   mq + 8 netem with estimators: watchdogs migrated (PUSH) / pinned / PULL\n"
	"  all       the three\n"
	"  report    the three, then DIR/report.md and DIR/report.html (default DIR: lab-report)\n"
	"\n"
	"options:\n"
	"  --seconds S     measured seconds per configuration, split over its runs (default 2.5)\n"
	"  --runs N        live runs of each configuration, round by round (default 5;\n"
	"                  --smoke 2): each claim's 95% interval is a bootstrap over them\n"
	"  --interval MS   sample interval, as vmstat's delay (default 500)\n"
	"  --cpus N        runtime CPUs (default: the online CPUs)\n"
	"  --flows N       seed000: paced sockets (default 500, as the seed)\n"
	"  --rate B        seed000: pacing rate per socket, bytes/s (default 300000; the seed: 3000000)\n"
	"  --rtt MS        seed000: the ACK path's delay (default 10)\n"
	"  --threads N     seed001: receiving threads (default: one per CPU; the seed: 8)\n"
	"  --sockets N     seed001: sockets per thread (default 256)\n"
	"  --pps N         seed003: offered packets/s per CPU (default 20000)\n"
	"  --json          the numbers as JSON on stdout instead of the tables\n"
	"  --out DIR       also write DIR/<seed>.csv (the interval samples), SVG charts\n"
	"                  (gnuplot), and for `report` the report\n"
	"  --seed S        random seed (default 1)\n"
	"  --smoke         tiny sizes, 2 short runs of each configuration (the tests' run)\n"
	"  --hz H          the model's HZ (default: the seed's; seed000 runs 1000 and 250)\n"
	"  --full          the model's sweeps: CPU counts, HZ, costs x0.5 and x2\n"
	"  --costs WHICH   the model's cost table: table (default, fixed, with sources) or\n"
	"                  measured (a futex wake and a cache-line ping-pong measured here)\n"
	"  --trend         also the rows that show the trend with more CPUs: oversubscribed\n"
	"                  runtimes (4 x the CPUs), 1 vs n threads (`report` adds them)\n"
	"  -h, --help      this text\n";

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "pinwheel-lab: bad %s \"%s\"; try \"pinwheel-lab --help\"\n", what, arg);
	return 2;
}

/* `pinwheel-lab model WHAT`: the model alone, its sections (or JSON) on
 * stdout.  Return: the exit status.  Context: main thread. */
static int model_main(const struct lab_opts *o, const struct lab_model_opts *mo, const char *what)
{
	struct lab_model *lm;
	int err = lab_model_run(o, mo, what, &lm);
	if (err == -EINVAL)
		return bad("model", what);
	if (err) {
		fprintf(stderr, "pinwheel-lab: the model: %s\n", strerror(-err));
		return 1;
	}
	if (o->json) {
		fputs("{\"model\":", stdout);
		lab_model_json(stdout, lm);
		fputs("}\n", stdout);
	} else {
		lab_model_print(stdout, lm, NULL, 1);
	}
	int failed = lab_model_failed(lm);
	lab_model_free(lm);
	return failed ? 1 : 0;
}

/* The live results' JSON with the model's as its first member:
 * {"model":{...},"machine":...}.  Return: 0 or -1.  Context: main thread. */
static int print_json_with_model(const struct lab_result *const *done, unsigned n,
				 const struct lab_opts *o, const struct lab_model *lm)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);
	if (!ms)
		return -1;
	lab_print_json(ms, done, n, o);
	if (fclose(ms) || len < 2 || buf[0] != '{') {
		free(buf);
		return -1;
	}
	fputs("{\"model\":", stdout);
	lab_model_json(stdout, lm);
	printf(",%s", buf + 1);
	free(buf);
	return 0;
}

static int num(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	struct lab_opts o = {
		.seconds = 2.5, /* 5 runs of 0.5 s: `make run` within a minute on 2 vCPUs */
		.interval_ms = 500,
		.seed = 1,
		.flows = 500,
		.rate = 300000,
		.rtt_ms = 10,
		.sockets = 256,
		.pps = 20000,
	};
	static const struct option lo[] = {
		{"seconds", required_argument, NULL, 's'},
		{"runs", required_argument, NULL, 'N'},
		{"interval", required_argument, NULL, 'i'},
		{"cpus", required_argument, NULL, 'c'},
		{"flows", required_argument, NULL, 'f'},
		{"rate", required_argument, NULL, 'r'},
		{"rtt", required_argument, NULL, 'R'},
		{"threads", required_argument, NULL, 't'},
		{"sockets", required_argument, NULL, 'k'},
		{"pps", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"out", required_argument, NULL, 'o'},
		{"seed", required_argument, NULL, 'S'},
		{"smoke", no_argument, NULL, 'm'},
		{"trend", no_argument, NULL, 'T'},
		{"hz", required_argument, NULL, 'z'},
		{"full", no_argument, NULL, 'F'},
		{"costs", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct lab_model_opts mo = {0};
	int smoke_secs = 0, ch;
	double v;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (num(optarg, 0.05, 3600, &v))
				return bad("--seconds", optarg);
			o.seconds = v;
			smoke_secs = 1;
			break;
		case 'i':
			if (num(optarg, 10, 60000, &v))
				return bad("--interval", optarg);
			o.interval_ms = (unsigned)v;
			break;
		case 'c':
			if (num(optarg, 1, 4096, &v) || v != (unsigned)v)
				return bad("--cpus", optarg);
			o.cpus = (unsigned)v;
			break;
		case 'f':
			if (num(optarg, 1, 1000000, &v) || v != (unsigned)v)
				return bad("--flows", optarg);
			o.flows = (unsigned)v;
			break;
		case 'r':
			if (num(optarg, 1000, 1e10, &v))
				return bad("--rate", optarg);
			o.rate = (uint64_t)v;
			break;
		case 'R':
			if (num(optarg, 1, 10000, &v) || v != (unsigned)v)
				return bad("--rtt", optarg);
			o.rtt_ms = (unsigned)v;
			break;
		case 't':
			if (num(optarg, 1, 4096, &v) || v != (unsigned)v)
				return bad("--threads", optarg);
			o.threads = (unsigned)v;
			break;
		case 'k':
			if (num(optarg, 1, 1000000, &v) || v != (unsigned)v)
				return bad("--sockets", optarg);
			o.sockets = (unsigned)v;
			break;
		case 'p':
			if (num(optarg, 1, 1e8, &v) || v != (unsigned)v)
				return bad("--pps", optarg);
			o.pps = (unsigned)v;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'N':
			if (num(optarg, 2, LAB_MAX_RUNS, &v) || v != (unsigned)v)
				return bad("--runs", optarg);
			o.runs = (unsigned)v;
			break;
		case 'S':
			if (num(optarg, 0, 1.8e19, &v))
				return bad("--seed", optarg);
			o.seed = (uint64_t)v;
			break;
		case 'm':
			o.smoke = 1;
			break;
		case 'T':
			o.trend = 1;
			break;
		case 'z':
			if (num(optarg, 10, 100000, &v) || v != (unsigned)v)
				return bad("--hz", optarg);
			mo.hz = (unsigned)v;
			break;
		case 'F':
			mo.full = 1;
			break;
		case 'C':
			if (strcmp(optarg, "table") && strcmp(optarg, "measured"))
				return bad("--costs", optarg);
			mo.costs_measured = !strcmp(optarg, "measured");
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return bad("option", argv[optind - 1]);
		}
	}
	if (optind < argc && !strcmp(argv[optind], "model")) {
		if (optind + 2 != argc)
			return optind + 2 > argc ? bad("model", "(what: seed000|seed001|seed003|all)")
						 : bad("argument", argv[optind + 2]);
		mo.cpus = o.cpus; /* the model's CPUs, in model mode only */
		return model_main(&o, &mo, argv[optind + 1]);
	}
	if (optind != argc - 1) {
		if (optind >= argc) {
			fputs(usage, stderr);
			return 2;
		}
		return bad("argument", argv[optind + 1]);
	}
	const char *what = argv[optind];
	if (o.smoke && !smoke_secs)
		o.seconds = 0.3;
	if (o.smoke && o.interval_ms > 100)
		o.interval_ms = 100;

	struct {
		const char *id;
		lab_experiment_fn fn;
	} all[] = {{"seed000", lab_seed000}, {"seed001", lab_seed001}, {"seed003", lab_seed003}};
	int report = !strcmp(what, "report");
	int run_all = report || !strcmp(what, "all");
	if (report && !o.out)
		o.out = "lab-report";
	if (report)
		o.trend = 1;
	static struct lab_result res[3];
	const struct lab_result *done[3];
	unsigned n = 0;
	/* the model first (seconds, deterministic): its claims' model column */
	struct lab_model *lm = NULL;
	int merr = lab_model_run(&o, &mo, run_all ? "all" : what, &lm);
	if (merr == -EINVAL)
		return bad("experiment", what);
	/* the report's in-against-CPUs chart: seed000's model at 16-48 CPUs */
	if (!merr && report)
		merr = lab_model_report_sweep(lm);
	if (merr) {
		fprintf(stderr, "pinwheel-lab: the model: %s\n", strerror(-merr));
		lab_model_free(lm);
		return 1;
	}
	for (unsigned k = 0; k < 3; k++) {
		if (!run_all && strcmp(what, all[k].id))
			continue;
		struct lab_result *r = &res[k];
		memset(r, 0, sizeof(*r));
		r->id = all[k].id;
		int err = all[k].fn(&o, r);
		if (err) {
			fprintf(stderr, "pinwheel-lab: %s: %s\n", r->id, strerror(-err));
			lab_model_free(lm);
			return 1;
		}
		/* the model's half of each claim into the live run's (verdict.c) */
		lab_claims_merge(&r->claims, lab_model_claims(lm, r->id));
		if (!o.json) {
			/* the claims (model and live), the model's section, the live table */
			printf("\n== %s: the seed's claims ==\n\n", r->id);
			lab_claims_print(stdout, &r->claims, 0);
			lab_model_print(stdout, lm, r->id, 0);
			lab_print_table(stdout, r);
		}
		fflush(stdout);
		done[n++] = r;
	}
	if (!n) {
		lab_model_free(lm);
		return bad("experiment", what);
	}
	if (o.json && print_json_with_model(done, n, &o, lm)) {
		lab_model_free(lm);
		return 1;
	}
	int failed = lab_model_failed(lm);
	for (unsigned k = 0; k < n; k++)
		failed |= done[k]->failed;
	if (o.out) {
		/* the report: the verdicts, the model's charts, the live runs */
		int err = lab_write_report(o.out, done, n, &o, lm);
		lab_model_free(lm);
		lm = NULL;
		if (err) {
			fprintf(stderr, "pinwheel-lab: writing %s: %s\n", o.out, strerror(-err));
			return 1;
		}
		if (!o.json)
			printf("\nwritten: %s/report.md, %s/report.html (charts, samples, results.json)\n",
			       o.out, o.out);
	}
	lab_model_free(lm);
	if (!o.json)
		printf("\nmachine: %s; commit %s\n", lab_machine(), lab_commit());
	return failed ? 1 : 0;
}
