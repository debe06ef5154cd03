/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab: what the experiments share (tools/pinwheel-lab.c drives
 * them).  Each experiment (seed000.c, seed001.c, seed003.c) runs its
 * configurations round by round (lab_runs() runs of each) in this process
 * and fills one struct lab_result: a table (one row per configuration, the
 * medians of its runs, the seed's figure beside ours), the summary ratios,
 * the honest notes, per-interval series for the charts, each run's record,
 * the live half of the seed's claims, and the invariants it checked.
 * common.c holds the table/JSON printers, progress lines, the OS-side
 * sampler and the runs' records; verdict.c the claims' intervals and
 * verdicts; profile.c the in-process sampling profiler; report.c the
 * Markdown/HTML report.
 *
 * Threads: the experiments run on the main thread and start their own
 * runtimes' workers; every helper here is for the main thread unless it
 * says otherwise.
 */
#ifndef PW_LAB_H
#define PW_LAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pw_runtime;

struct lab_opts {
	double seconds;        /* measured time per configuration */
	unsigned interval_ms;  /* sample interval (vmstat's delay) */
	unsigned cpus;         /* runtime CPUs; 0 = the machine's online CPUs */
	int smoke;             /* the tests' short run: tiny sizes, invariants only */
	int json;              /* --json: numbers on stdout as JSON */
	const char *out;       /* --out DIR: charts, samples, report */
	uint64_t seed;         /* random seed */
	unsigned runs;         /* live runs of each configuration, interleaved
				* round by round (--runs; 0: 5, --smoke 2) */
	int trend;             /* also the rows that show a trend with more CPUs
				* (oversubscribed runtimes, 1 vs n threads):
				* `report` and --trend */
	/* seed000 */
	unsigned flows;        /* paced sockets */
	uint64_t rate;         /* each one's pacing rate, bytes/s */
	unsigned rtt_ms;       /* the ACK path's netem delay */
	/* seed001 */
	unsigned threads;      /* receiving threads ("NICs"), 0 = one per CPU */
	unsigned sockets;      /* sockets per thread */
	/* seed003 */
	unsigned pps;          /* offered packets/s per CPU */
};

#define LAB_MAX_COLS 12
#define LAB_MAX_ROWS 8
#define LAB_CELL 40
#define LAB_MAX_SAMPLES 512
#define LAB_PROFILE_LEN 4096

/* One per-interval series (a chart line): value @v[i] at @t[i] seconds. */
struct lab_series {
	unsigned n;
	double t[LAB_MAX_SAMPLES], v[LAB_MAX_SAMPLES];
};

/*
 * One live run of one configuration, as the machine saw it (common.c:
 * lab_run_begin()/lab_run_end() around the measured window).  A run is
 * invalid, and left out of every claim's interval, when the VM's steal or
 * the other processes' CPU time during it passed the thresholds below, or
 * when the experiment found its configuration not in force (seed000: PUSH
 * pushed no timer).  Main thread.
 */
#define LAB_MAX_RUNS 32
#define LAB_STEAL_MAX_PCT 5.0   /* steal, % of the machine's CPU time */
#define LAB_OTHERS_MAX_PCT 25.0 /* other processes' CPU, % of the machine's */
enum { LAB_RUN_LOADED = 1, LAB_RUN_NOT_IN_FORCE = 2 };
struct lab_run {
	double t, seconds;           /* start (s since the first run), length */
	double load1_before, load1_after; /* /proc/loadavg, 1 min */
	double steal_pct;            /* /proc/stat steal during the run (NAN: unknown) */
	double others_pct;           /* other processes' CPU: /proc/stat busy minus
				      * this process's getrusage() (NAN: unknown) */
	unsigned invalid;            /* LAB_RUN_* bits; 0: valid */
	char why[120];               /* the reasons, when invalid */
};

/*
 * A seed's claim and what the two instruments say of it (verdict.c): the
 * deterministic model (model.c: fills the model_* fields) and the live run
 * on real threads (seed000.c, seed001.c, seed003.c: fill the live_*
 * fields).  A claim is a ratio, numerator configuration over denominator
 * configuration (e.g. in/s under PUSH with the 3.17 rule over pinned),
 * which the seed says is above 1 (seed_dir +1) or below (-1), or, for a
 * fix said to undo an effect, equal to 1 (seed_dir 0: within
 * LAB_EQUIV_BAND).  Where the seed gives a figure, the claim states with
 * it the band its size must fall in to be "reproduced" (size_lo..size_hi:
 * the seed's effect, ratio - 1, +- LAB_SIZE_BAND of itself), fixed when
 * the claim is made, before anything runs; a ratio on the seed's side
 * outside it is "direction only".  Each seed's section opens with the
 * table of its claims.  Main thread.
 */
#define LAB_MAX_CLAIMS 6
/* The words a verdict is made of, model and live alike (lab_word_str()). */
enum lab_word {
	LAB_W_NONE,    /* not set: read off the ratio */
	LAB_W_REP,     /* "reproduced": direction and, where the seed gives one, size */
	LAB_W_DIR,     /* "direction only": the seed's side of 1.0, the size outside its band */
	LAB_W_NOT,     /* "not reproduced" */
	LAB_W_INC,     /* "inconclusive" */
	LAB_W_NOT_RUN, /* "not run" */
};
const char *lab_word_str(enum lab_word w);
struct lab_claim {
	char id[24];            /* JSON key, e.g. "in_on_over_fix" */
	char claim[240];        /* the seed's claim in one line, with its figure and band */
	char mechanism[240];    /* one line: the mechanism behind it */
	int seed_dir;           /* +1: the seed says ratio > 1; -1: < 1 */
	double seed_ratio;      /* the seed's own figure as a ratio (NAN: none) */
	double size_lo, size_hi;/* the ratios "reproduced" needs (NAN: the seed gives
				 * no size, the direction is the claim) */
	/* the model: deterministic (the same on every machine) */
	int model_run;          /* 0: not run */
	double model_ratio;
	enum lab_word model_word; /* set by lab_claim_model_word(), else from the ratio */
	char model_text[200];   /* where and how: "+28% at 32 CPUs, HZ 1000" */
	/* the live run: the ratio of the configurations' means over
	 * interleaved runs, with its 95% bootstrap interval */
	unsigned live_runs;     /* runs of each configuration; 0: not run */
	double live_ratio, live_lo, live_hi;
	char live_text[200];    /* e.g. "1.21x [1.12, 1.30], 5 runs each" */
	int live_invalid;       /* the machine's load or steal spoiled the runs
				 * (too few valid for an interval): the LAB_RUN_*
				 * bits of why, 0 when valid */
	char live_why[160];     /* why, when invalid */
	enum lab_word live_word, word; /* the live run's; both halves' where they agree or
					* one did not run (LAB_W_NONE, "mixed": they differ) */
	char verdict[120];      /* lab_claim_verdict() */
	/* added with verdict.c: the two halves' own words, and the live runs
	 * behind the interval (lab_claim_live()) */
	char model_verdict[120];/* the model's own verdict ("model: reproduced, ...") */
	char live_verdict[120]; /* the live run's: reproduced / not reproduced /
				 * inconclusive at this machine's noise / inconclusive:
				 * the machine was loaded (...) / not run */
	unsigned live_excluded; /* runs left out of the interval, both sides */
	char live_num_cfg[24], live_den_cfg[24]; /* the ratio's configurations */
	unsigned live_nnum, live_nden;           /* their runs (live_nden 0: a constant) */
	double live_num[LAB_MAX_RUNS], live_den[LAB_MAX_RUNS]; /* each run's figure */
	unsigned char live_num_ok[LAB_MAX_RUNS], live_den_ok[LAB_MAX_RUNS]; /* 0: excluded */
};
struct lab_claims {
	const char *seed;       /* "seed000" */
	unsigned n;
	struct lab_claim c[LAB_MAX_CLAIMS];
};

struct lab_result {
	const char *id;                  /* "seed000" */
	char title[160];                 /* one line: what the experiment is */
	char scale[400];                 /* the sizes used, beside the seed's */
	unsigned ncols;                  /* col 0 is the configuration's name */
	char col[LAB_MAX_COLS][LAB_CELL];
	char col_key[LAB_MAX_COLS][LAB_CELL]; /* JSON key of each column */
	unsigned nrows;
	char cell[LAB_MAX_ROWS][LAB_MAX_COLS][LAB_CELL];
	double val[LAB_MAX_ROWS][LAB_MAX_COLS]; /* the number behind a cell (NAN: none) */
	char row_key[LAB_MAX_ROWS][LAB_CELL];   /* JSON key of each configuration */
	unsigned nsummary;
	char summary[8][240];            /* "in(on)/in(fix): 1.31x (seed) vs ..." */
	unsigned nnotes;
	char notes[8][600];              /* the reading: what 2 cores can and cannot show */
	char profile[LAB_MAX_ROWS][LAB_PROFILE_LEN]; /* readprofile-style lines, per row */
	char series_label[64];           /* what the series measure, e.g. "in/s" */
	struct lab_series series[LAB_MAX_ROWS];
	/* the live runs, per row (common.c), and the seed's claims: the live
	 * half filled by the experiment, the model's merged in by the caller */
	unsigned nruns[LAB_MAX_ROWS];
	struct lab_run run[LAB_MAX_ROWS][LAB_MAX_RUNS];
	struct lab_claims claims;
	unsigned nchecks;                /* invariants checked */
	int failed;                      /* an invariant broke: exit status 1 */
	char failure[400];
};

typedef int (*lab_experiment_fn)(const struct lab_opts *o, struct lab_result *r);
int lab_seed000(const struct lab_opts *o, struct lab_result *r);
int lab_seed001(const struct lab_opts *o, struct lab_result *r);
int lab_seed003(const struct lab_opts *o, struct lab_result *r);
/* seed 003's tc script, its "tc qd" lines with $EST expanded: the live
 * run and the model both run it (seed003_script.c). */
extern const char *const lab_seed003_script[];
extern const unsigned lab_seed003_script_n;

/* ------------------------------------------------------------ common.c */

/* A progress line on stderr: "lab seed000: ...". */
void lab_progress(const struct lab_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Set the columns: name and JSON key, alternating, @n pairs. */
void lab_columns(struct lab_result *r, unsigned n, const char *const *names_keys);
/* Start row @row for configuration @name (JSON key @key); returns @row. */
unsigned lab_row(struct lab_result *r, const char *name, const char *key);
/* Fill a cell with a number printed by @fmt (the number kept for JSON). */
void lab_cellf(struct lab_result *r, unsigned row, unsigned col, double v, const char *fmt);
/* Fill a cell with text only. */
void lab_cells(struct lab_result *r, unsigned row, unsigned col, const char *text);
void lab_summary(struct lab_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lab_note(struct lab_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An invariant: counted; when @ok is 0 the result fails with the message. */
int lab_check(struct lab_result *r, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lab_series_add(struct lab_series *s, double t, double v);

void lab_print_table(FILE *f, const struct lab_result *r);
/* JSON pieces (verdict.c): a quoted, escaped string; a number (null for
 * NAN, the string "inf" / "-inf" for an infinity). */
void lab_json_str(FILE *f, const char *s);
void lab_json_num(FILE *f, double v);
/* The results as one JSON object {"machine":..., "commit":..., "seed000":{...}, ...}. */
void lab_print_json(FILE *f, const struct lab_result *const *rs, unsigned n,
		    const struct lab_opts *o);

/* The machine ("AMD EPYC 7B13, 2 CPUs") and the commit the tool was built from. */
const char *lab_machine(void);
const char *lab_commit(void);
/* CPUs online in the OS. */
unsigned lab_online_cpus(void);

/* What vmstat would show, from the OS and from the runtime's counters. */
struct lab_sample {
	double t;                    /* seconds, CLOCK_MONOTONIC */
	double user_s, sys_s;        /* this process's CPU time (getrusage) */
	uint64_t ctxsw;              /* voluntary + involuntary, every thread */
	uint64_t wakeups, kicks;     /* sums over the runtime's CPUs (pw_stats_read) */
	uint64_t timers, pushed, pulled, remote_arms, armed;
	uint64_t lock_waits, lock_wait_ns, busy_ns, idle_ns;
};
/* Take a sample; @rt may be NULL (OS figures only). */
void lab_sample(struct pw_runtime *rt, struct lab_sample *s);
struct lab_rates {
	double in_s;                 /* (wake-ups + kicks) / s: vmstat's "in" */
	double cs_s;                 /* context switches / s */
	double us, sy, id;           /* % of the machine's CPUs (online CPUs) */
	double timers_s, pushed_s, pulled_s, remote_s, armed_s;
	double lock_wait_share;      /* base-lock wait time / elapsed CPU time */
};
void lab_rates(const struct lab_sample *a, const struct lab_sample *b, struct lab_rates *out);

/* Sleep @ms milliseconds (main thread). */
void lab_sleep_ms(unsigned ms);

/* The live runs: how many of each configuration (o->runs, else 5, --smoke
 * 2) and how long each (o->seconds split over them, at least @min_s). */
unsigned lab_runs(const struct lab_opts *o);
double lab_run_seconds(const struct lab_opts *o, double min_s);
/* Around one run's measured window: the machine before (load, /proc/stat,
 * this process's CPU time), then lab_run_end() records run r->nruns[row]
 * of @row, judged against LAB_STEAL_MAX_PCT and LAB_OTHERS_MAX_PCT, and
 * prints it on stderr (the line says when the run is invalid, and why);
 * the caller may still lab_run_invalidate() it (the configuration not in
 * force) before the claims are filled.  Main thread. */
struct lab_run_mark {
	double t, load1, self_s;
	uint64_t busy, steal, total; /* /proc/stat ticks, all CPUs */
	int stat_ok;
};
void lab_run_begin(struct lab_run_mark *m);
struct lab_run *lab_run_end(struct lab_result *r, unsigned row, const struct lab_run_mark *m,
			    const char *what);
void lab_run_invalidate(struct lab_result *r, struct lab_run *run, unsigned why_bit,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Median of the @n figures @v whose run is valid (all of them when none
 * is), their min and max into *@lo, *@hi (may be NULL); NAN when n is 0. */
double lab_median(const double *v, const struct lab_run *runs, unsigned n, double *lo, double *hi);

/* ------------------------------------------------------------ verdict.c */

/*
 * The verdicts (verdict.c's head is the method).  A claim's live half is
 * the ratio of two configurations' mean figures over their valid runs,
 * with a 95% bootstrap interval; the verdict, fixed before running:
 * "reproduced" when the interval lies on the seed's side of 1.0, "not
 * reproduced" when on the other side, "inconclusive at this machine's
 * noise" otherwise (seed_dir 0: inside / outside LAB_EQUIV_BAND of 1.0).
 */
#define LAB_BOOT_B 10000       /* resamples */
#define LAB_MIN_VALID 3        /* valid runs a side needs (fewer when fewer were asked) */
#define LAB_EQUIV_BAND 0.10    /* seed_dir 0: "no change" is within 10%, model and live */
#define LAB_SIZE_BAND (1.0 / 3) /* a claim's size band: the seed's effect +- a third of it */
#define LAB_MIN_EFFECT 0.02    /* the model: an effect under 2% is none (no direction) */
struct lab_interval {
	double ratio, lo, hi;  /* the point estimate and the 95% interval */
	double tail;           /* the percentile read at each end (0.025 for many runs) */
	unsigned na, nb;       /* runs used (nb 0: a constant denominator) */
};
/* The ratio of @a's mean to @b's (or to @bconst when @nb is 0) and its
 * interval: each side's runs resampled with replacement LAB_BOOT_B times
 * from a fixed-seed generator (the same runs give the same interval), the
 * percentile interval widened for few runs.  x/0 is +inf, 0/0 is 1.
 * Return: 0, or -EINVAL when a side has fewer than 2 runs. */
int lab_boot_ratio(const double *a, unsigned na, const double *b, unsigned nb, double bconst,
		   struct lab_interval *out);
/* One side of a claim's ratio: a configuration's runs, or a constant. */
struct lab_arm {
	const char *cfg;            /* the configuration's key, e.g. "on" */
	unsigned n;                 /* runs (0: the constant) */
	const double *v;            /* each run's figure */
	const struct lab_run *run;  /* each run's record (NULL: all valid) */
	double constant;
};
/* Append claim @id to @cl (NULL when full); the live and model halves
 * empty.  With a seed figure (@seed_ratio finite) its size band is fixed
 * here, the seed's effect +- LAB_SIZE_BAND, and the claim's words get the
 * figure and the band appended as stored (" (xR; size band xLO-HI)";
 * seed_dir 0: " (xR +-B%)"); so a claim's words carry no ratio of their
 * own.  Context: main thread.  Return: the claim, or NULL. */
struct lab_claim *lab_claim_add(struct lab_claims *cl, const char *id, int seed_dir,
				double seed_ratio, const char *claim, const char *mechanism);
/* The model's own word on @c where a ratio alone cannot say it (a rank, a
 * level): @w and the text "model: WORD: detail" (@fmt; NULL: the word
 * alone). */
void lab_claim_model_word(struct lab_claim *c, enum lab_word w, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The model's verdict on @c from its ratio where lab_claim_model_word()
 * set none (direction beyond LAB_MIN_EFFECT, the size band, the = band),
 * its text into model_verdict, then lab_claim_verdict(). */
void lab_claim_model_finish(struct lab_claim *c);
/* A ratio as every table prints it, one rounding everywhere: 3 significant
 * figures (1.29, 8.12, 80.2, 123), "inf" (bare), "n/a" for NAN; @pre and
 * @post around a finite number ("x", "" gives "x1.29"). */
void lab_fmt_ratio(char *buf, size_t n, double v, const char *pre, const char *post);
/* Fill @c's live half from @num over @den (@fmt prints a side's mean, e.g.
 * "%.0f in/s"), then its verdict. */
void lab_claim_live(struct lab_claim *c, const struct lab_arm *num, const struct lab_arm *den,
		    const char *fmt);
/* The live verdict from the live_* fields, the model's from its verdict or
 * ratio, and the two together into c->verdict ("reproduced (model and
 * live)", "model: reproduced; live: inconclusive at this machine's noise"). */
void lab_claim_verdict(struct lab_claim *c);
void lab_claims_verdicts(struct lab_claims *cl);
/* Copy the model's half of each claim of @model into the claim of @into
 * with the same id, appending the model's claims that @into lacks; then
 * the verdicts.  @model may be NULL. */
void lab_claims_merge(struct lab_claims *into, const struct lab_claims *model);
/* The claims table (text: the seed's claim | the model | the live run |
 * verdict, a line per claim on its mechanism and its excluded runs), or
 * the claims as one JSON object {"seed":...,"claims":[{...},...]}. */
void lab_claims_print(FILE *f, const struct lab_claims *cl, int json);

/* ------------------------------------------------------------ profile.c */

/*
 * The in-process sampling profiler (profile.c's head says how).  Two
 * samplers: perf, a perf_event_open() software cpu-clock event per thread
 * (hrtimer-driven, so not aliased with work on millisecond boundaries; a
 * period near 1/@hz s of each thread's CPU time, off the millisecond grid),
 * and ITIMER_PROF, SIGPROF every 1/@hz s of the process's CPU time, taken
 * on the kernel's tick (aliased).  Either way the sampled PC is resolved to
 * a function through the executable's own symbol table (static functions
 * included) or, outside it, dladdr().  lab_prof_start() clears the counts.
 * Context: main thread; one profile at a time.  Return: 0 or -errno.
 */
enum lab_prof_sampler {
	LAB_PROF_AUTO,   /* perf where allowed, else ITIMER_PROF and one warning
			  * line on stderr; PW_LAB_PROFILER=perf|itimer in the
			  * environment picks one */
	LAB_PROF_PERF,   /* perf only: -errno where perf_event_open() fails */
	LAB_PROF_ITIMER, /* ITIMER_PROF only */
};
/* lab_prof_start_with(@hz, LAB_PROF_AUTO). */
int lab_prof_start(unsigned hz);
int lab_prof_start_with(unsigned hz, enum lab_prof_sampler how);
void lab_prof_stop(void);
/* The running or last profile's sampler and figures. */
struct lab_prof_info {
	enum lab_prof_sampler sampler; /* LAB_PROF_PERF or LAB_PROF_ITIMER (0: none yet) */
	unsigned long period_ns;       /* of each thread's CPU time (perf), of the
					* process's (ITIMER_PROF) */
	unsigned threads;              /* perf: threads sampled, in all */
	unsigned unprofiled;           /* perf: threads whose event failed to open */
	unsigned long lost;            /* samples lost (perf's ring full, the PC
					* buffer full), counted in the total; after stop */
	unsigned long samples;         /* so far (running), in all (stopped) */
	unsigned long kernel;          /* perf: samples taken in the kernel (a system
					* call, a fault), charged to the user PC the
					* thread returns to, as ITIMER_PROF does */
	int user_only;                 /* perf: user-mode samples only (not allowed
					* in the kernel: perf_event_paranoid 2) */
	char fallback[160];            /* why perf was not used ("" when it was, or
					* when ITIMER_PROF was asked for) */
};
void lab_prof_info(struct lab_prof_info *out);
/* Ticks counted since lab_prof_start(). */
unsigned long lab_prof_total(void);
/* The top @top functions, as readprofile prints them ("ticks function
 * share%"), into @buf, after a line "    # sampler: ..." naming the sampler
 * and its period (no count first: the readers of the lines skip it).
 * Return: total ticks. */
unsigned long lab_prof_format(char *buf, size_t len, unsigned top);
/* Share (0..1) of the ticks in functions whose name contains one of the
 * NULL-terminated @substrs. */
double lab_prof_share(const char *const *substrs);

/* ------------------------------------------------------------ report.c */

/* Charts (gnuplot SVG, when gnuplot is there), raw samples (CSV) and the
 * report (report.md, report.html) under @dir.  Return: 0 or -errno. */
int lab_write_outputs(const char *dir, const struct lab_result *const *rs, unsigned n,
		      const struct lab_opts *o);

/* ------------------------------------------------------------ the model (model*.c) */

/*
 * The model: each seed as a deterministic discrete-event run on the
 * simulated clock, the library deciding every timer (model.c's head says
 * how).  `pinwheel-lab model WHAT` runs it alone; `pinwheel-lab SEED|all`
 * runs it first; its claims' model half goes into the live run's claims
 * (lab_claims_merge()) and its section follows their table
 * (lab_claims_print()).
 */
struct lab_model_opts {
	unsigned cpus;      /* the model's CPUs; 0: the seed's (swept with full) */
	unsigned hz;        /* 0: the seed's (seed000: 1000 and 250) */
	int full;           /* the sweeps: CPUs, HZ, costs x0.5 / x2 */
	int costs_measured; /* --costs measured: measure here, use what was measured */
};
struct lab_model; /* the sections of one model run: opaque */
/* Run the model of @what ("seed000", "seed001", "seed003" or "all") with
 * @o's seed and smoke sizes.  Return: 0 (*@out set); -EINVAL (@what
 * unknown); -errno. */
int lab_model_run(const struct lab_opts *o, const struct lab_model_opts *mo, const char *what,
		  struct lab_model **out);
/* @seed's claims with the model's half filled (model_*, and the model's
 * verdict in verdict), for lab_claims_merge(), or NULL when @seed was not
 * run. */
struct lab_claims *lab_model_claims(struct lab_model *lm, const char *seed);
/* Print @seed's section (NULL: every seed run, then the cost table) as
 * text; with @claims 1 it opens with the model's claims table (the model
 * run alone), with 0 without it (the caller printed the merged one).
 * Deterministic: the same --seed prints the same bytes. */
void lab_model_print(FILE *f, const struct lab_model *lm, const char *seed, int claims);
/* The model's JSON object {"seed":S,"costs":[...],"seed000":{...},...}. */
void lab_model_json(FILE *f, const struct lab_model *lm);
/* 1 when an invariant of the model broke. */
int lab_model_failed(const struct lab_model *lm);
void lab_model_free(struct lab_model *lm);

/*
 * The model's charts in the report (model_print.c gathers the numbers,
 * report.c draws them).  lab_model_report_sweep() adds the rows the
 * in-against-CPUs chart needs beyond the run's own: seed000 again at 16,
 * 24, 32 and 48 CPUs (those the run lacks; its smoke sizes with --smoke)
 * at the run's first HZ, kept beside the run's rows (its sections and
 * claims are unchanged; lab_model_failed() counts their invariants too); a
 * few seconds.  Return: 0 or -errno.
 * lab_model_charts() fills up to @max charts, each a small table (x
 * categories or CPU counts by series), from the rows at each seed's
 * default size, and returns how many.  Context: main thread.
 */
#define LAB_MCHART_X 16
#define LAB_MCHART_S 10
enum lab_mchart_style {
	LAB_MCHART_STACKED,   /* bars, the series stacked on each x category */
	LAB_MCHART_CLUSTERED, /* bars side by side on each x category */
	LAB_MCHART_LINES,     /* a line per series over numeric x */
};
struct lab_model_chart {
	char name[48];          /* the files' stem, e.g. "model_seed000_irq" */
	const char *seed;       /* "seed000" */
	char title[160];        /* the chart's title */
	char caption[400];      /* one line under it: what it shows, at what size */
	char xlabel[64], ylabel[80];
	char xkey[24];          /* the CSV's first column, e.g. "config", "cpus" */
	enum lab_mchart_style style;
	unsigned nx, ns;
	char xname[LAB_MCHART_X][40];         /* each x: a category or the number */
	double x[LAB_MCHART_X];               /* LAB_MCHART_LINES: the numbers */
	char sname[LAB_MCHART_S][40];         /* each series' legend title */
	char skey[LAB_MCHART_S][40];          /* its CSV column */
	double v[LAB_MCHART_X][LAB_MCHART_S]; /* NAN: no figure */
};
int lab_model_report_sweep(struct lab_model *lm);
unsigned lab_model_charts(const struct lab_model *lm, struct lab_model_chart *out, unsigned max);
/* lab_write_outputs() with the model (report.c): the report opens with
 * each seed's claims table (the verdicts), then the model's charts (SVG
 * where gnuplot is installed, each chart's data as <name>.csv beside it),
 * then the experiments' sections.  @lm may be NULL (no model charts). */
int lab_write_report(const char *dir, const struct lab_result *const *rs, unsigned n,
		     const struct lab_opts *o, const struct lab_model *lm);

#endif /* PW_LAB_H */
