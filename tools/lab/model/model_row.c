/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's model: a row and the results, the shape every seed
 * shares.  mdl_totals() reads a window's interrupts, work, lag and the
 * library's kicks; mdl_row_common() writes the figures every row with a NIC
 * reports; mdl_row_finish() closes a row; mdl_cost_sweep() is --full's
 * x0.5/x2 of the cost table; mdl_row_set()/_get(), mdl_find(),
 * mdl_note(), mdl_seed_checks() and mdl_claims_finish() keep and read a
 * seed's results.  The seeds' files call these; they call only model.c's
 * engine and verdict.c.
 *
 * Threads: the main thread only.  No locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* ------------------------------------------------------------ a row: the shape the seeds share */

void mdl_totals(struct mdl *m, uint64_t kicks_seen, struct mdl_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->secs = (double)(m->t_end - m->t_measure) / 1e9;
	for (unsigned c = 0; c < m->ncpus; c++) {
		const struct mdl_cpu *cpu = &m->cpu[c];
		uint64_t wc = 0;
		for (unsigned k = 0; k < MI_N; k++)
			t->irq[k] += cpu->irq[k];
		for (unsigned k = 0; k < m->ncat; k++)
			wc += cpu->cat_ns[k];
		t->work_ns += wc;
		t->spin_ns += cpu->spin_ns;
		if (cpu->max_lag_ns > t->max_lag_ns)
			t->max_lag_ns = cpu->max_lag_ns;
		if (wc / (t->secs * 1e9) > t->busiest_load)
			t->busiest_load = wc / (t->secs * 1e9);
		struct pw_cpu_stats st, all;
		struct pw_kick_stats ks, kall;
		mdl_stats_window(m, c, &st, &ks);
		t->remote_arms += st.remote_arms;
		t->pushed += st.pushed;
		t->kick[0] += ks.remote_enqueue;
		t->kick[1] += ks.idle_earlier;
		t->kick[2] += ks.hrtimer;
		t->kick[3] += ks.work;
		t->kick[4] += ks.tmigr;
		pw_stats_read(m->rt, c, &all);
		pw_kick_stats_read(m->rt, c, &kall);
		t->remote_total += all.remote_arms;
		t->rekick_total += kall.remote_enqueue;
	}
	t->res_timer = t->kick[0] + t->kick[1] + t->kick[3] + t->kick[4];
	t->cal = t->kick[2];
	/* kicks not charged at an arm: their CPU time, outside the timelines */
	if (t->res_timer + t->cal > kicks_seen)
		t->work_ns += (uint64_t)((t->res_timer + t->cal - kicks_seen) *
					 (m->cost->ns[MC_IPI_SEND] + m->cost->ns[MC_IPI_RECV]));
	t->res = t->irq[MI_RES] + t->res_timer;
	t->in = t->irq[MI_RX] + t->irq[MI_TX] + t->irq[MI_LOC] + t->res + t->cal;
}

void mdl_row_common(struct mdl_row *row, const struct mdl_totals *t, const struct mdl *m)
{
	double secs = t->secs;
	mdl_row_set(row, "in_per_s", t->in / secs, "%.0f");
	mdl_row_set(row, "rx_per_s", t->irq[MI_RX] / secs, "%.0f");
	mdl_row_set(row, "tx_per_s", t->irq[MI_TX] / secs, "%.0f");
	mdl_row_set(row, "loc_per_s", t->irq[MI_LOC] / secs, "%.0f");
	mdl_row_set(row, "res_per_s", t->res / secs, "%.0f");
	mdl_row_set(row, "cal_per_s", t->cal / secs, "%.0f");
	mdl_row_set(row, "res_timer_per_s", t->res_timer / secs, "%.0f");
	mdl_row_set(row, "res_sched_per_s", t->irq[MI_RES] / secs, "%.0f");
	mdl_row_set(row, "sys_pct", 100.0 * t->work_ns / (secs * 1e9 * m->ncpus), "%.2f");
	mdl_row_set(row, "spin_pct", t->work_ns ? 100.0 * t->spin_ns / t->work_ns : 0, "%.2f");
	mdl_row_set(row, "remote_arms", (double)t->remote_arms, "%.0f");
	mdl_row_set(row, "remote_arms_per_s", t->remote_arms / secs, "%.0f");
	mdl_row_set(row, "timer_ipis", (double)(t->kick[0] + t->kick[1]), "%.0f");
	mdl_row_set(row, "timer_ipis_per_s", (t->kick[0] + t->kick[1]) / secs, "%.0f");
	mdl_row_set(row, "kick_remote_enqueue", (double)t->kick[0], "%.0f");
	mdl_row_set(row, "kick_idle_earlier", (double)t->kick[1], "%.0f");
	mdl_row_set(row, "kick_hrtimer", (double)t->kick[2], "%.0f");
	mdl_row_set(row, "kick_work", (double)t->kick[3], "%.0f");
	mdl_row_set(row, "kick_tmigr", (double)t->kick[4], "%.0f");
	mdl_row_set(row, "pushed", (double)t->pushed, "%.0f");
	mdl_row_set(row, "busy_marks_per_s", m->busy_marks / secs, "%.0f");
	mdl_row_set(row, "max_lag_us", t->max_lag_ns / 1e3, "%.1f");
	mdl_row_set(row, "rx", (double)t->irq[MI_RX], "%.0f");
	mdl_row_set(row, "tx", (double)t->irq[MI_TX], "%.0f");
	mdl_row_set(row, "loc", (double)t->irq[MI_LOC], "%.0f");
	mdl_row_set(row, "res", (double)t->res, "%.0f");
	mdl_row_set(row, "cal", (double)t->cal, "%.0f");
}

void mdl_row_finish(struct mdl_seed *sd, struct mdl_row *row, const struct mdl *m,
		    const char *config, const char *label)
{
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->label, sizeof(row->label), "%s", label);
	row->cpus = m->ncpus;
	row->hz = m->hz;
	snprintf(row->cost_name, sizeof(row->cost_name), "%s", m->cost->name);
	sd->runtime_sim_s += (double)m->t_end / 1e9;
	mdl_seed_checks(sd, m);
}

void mdl_cost_sweep(const struct mdl_costs *base, unsigned set, unsigned i,
		    struct mdl_costs *out)
{
	static const double f[MDL_SWEEP_N] = {0.5, 2};
	static const char *const names[2][MDL_SWEEP_N] = {{"x0.5", "x2"},
							  {"task x0.5", "task x2"}};
	static const enum mdl_cost_id kernel[] = {MC_IRQ, MC_IPI_SEND, MC_IPI_RECV, MC_LINE,
						  MC_HANDOFF, MC_N};
	static const enum mdl_cost_id task[] = {MC_WAKE, MC_SYSCALL, MC_COPY_KB, MC_N};
	const enum mdl_cost_id *ids = set ? task : kernel;
	*out = *base;
	out->name = names[set ? 1 : 0][i % MDL_SWEEP_N];
	for (unsigned k = 0; ids[k] != MC_N; k++)
		out->ns[ids[k]] *= f[i % MDL_SWEEP_N];
}

/* ------------------------------------------------------------ the results */

void mdl_row_set(struct mdl_row *r, const char *key, double v, const char *fmt)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key)) {
			r->val[i] = v;
			r->fmt[i] = fmt;
			return;
		}
	if (r->n == MDL_MAX_VALS) {
		/* a programming error, not an input: say so and stop */
		fprintf(stderr, "pinwheel-lab: model row %s has more than %d values (%s): "
				"raise MDL_MAX_VALS\n", r->config, MDL_MAX_VALS, key);
		abort();
	}
	r->key[r->n] = key;
	r->val[r->n] = v;
	r->fmt[r->n] = fmt;
	r->n++;
}

double mdl_row_get(const struct mdl_row *r, const char *key)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key))
			return r->val[i];
	return NAN;
}

double mdl_ratio(const struct mdl_seed *s, const char *a, const char *b, unsigned cpus,
		 unsigned hz, const char *key)
{
	const struct mdl_row *x = mdl_find(s, a, cpus, hz), *y = mdl_find(s, b, cpus, hz);
	if (!x || !y)
		return NAN;
	double d = mdl_row_get(y, key);
	return d > 0 ? mdl_row_get(x, key) / d : NAN;
}

const struct mdl_row *mdl_find(const struct mdl_seed *s, const char *config, unsigned cpus,
			       unsigned hz)
{
	/* the run's own cost table (the default or --costs measured) is the
	 * first row's; the cost sweep's rows (x0.5, x2) come after */
	if (!s->nrows)
		return NULL;
	const char *main_costs = s->row[0].cost_name;
	for (unsigned i = 0; i < s->nrows; i++) {
		const struct mdl_row *r = &s->row[i];
		if (!strcmp(r->config, config) && (!cpus || r->cpus == cpus) &&
		    (!hz || r->hz == hz) && !strcmp(r->cost_name, main_costs))
			return r;
	}
	return NULL;
}

void mdl_note(struct mdl_seed *s, const char *fmt, ...)
{
	if (s->nnotes == sizeof(s->notes) / sizeof(s->notes[0]))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->notes[s->nnotes++], sizeof(s->notes[0]), fmt, ap);
	va_end(ap);
}

void mdl_seed_checks(struct mdl_seed *s, const struct mdl *m)
{
	s->nchecks += m->nchecks;
	if (m->nfailed && !s->nfailed)
		snprintf(s->failure, sizeof(s->failure), "%s", m->failure);
	s->nfailed += m->nfailed;
}

void mdl_claims_finish(struct lab_claims *cl)
{
	for (unsigned i = 0; i < cl->n; i++)
		lab_claim_model_finish(&cl->c[i]);
}
