/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's model: the cost of each event in CPU time.  The fixed
 * table (mdl_cost_table[], each entry with its source; mdl_costs_default())
 * and, for --costs measured only, the few entries measured on this machine
 * (mdl_costs_measure(): a futex wake and a cache-line ping-pong between two
 * threads).  The engine (model.c) charges them; the seeds' files pick a
 * set and --full sweeps it (mdl_cost_sweep(), model_row.c).
 *
 * Threads: the main thread, except mdl_costs_measure()'s helper thread
 * (its own function, joined before it returns).  No locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

/* ------------------------------------------------------------ the cost table */

/*
 * Fixed before the first run; never fitted to a seed.  Figures are rounded
 * orders of magnitude for x86 servers of the seeds' years unless the entry
 * says otherwise; --full sweeps the interrupt, IPI, cache-line and
 * hand-off costs x0.5 and x2 to show what depends on them.
 */
const struct mdl_cost_def mdl_cost_table[MC_N] = {
	[MC_IRQ] = {"irq", 1000, "interrupt entry, EOI, exit (+ softirq entry)",
		    "LKML 2001-10-08, J. Lundell, 'A note on APIC bus latency': an interrupt "
		    "message exchange takes 2-3 us on the serial APIC bus of pre-P4 Intel; "
		    "system-bus APICs since: ~1 us with the entry/exit code (order of magnitude)"},
	[MC_IPI_SEND] = {"ipi_send", 300, "sending an IPI (ICR write, smp_send_reschedule)",
			 "an APIC register write plus the call path: a few hundred ns (order of "
			 "magnitude; the x2APIC ICR is an MSR write, the xAPIC one MMIO)"},
	[MC_IPI_RECV] = {"ipi_recv", 1000, "taking an IPI (entry/exit, scheduler_ipi)",
			 "as irq: the receiving CPU takes an interrupt"},
	[MC_LINE] = {"line", 100, "a cache line moved between cores",
		     "T. David, R. Guerraoui, V. Trigonakis, 'Everything you always wanted to know "
		     "about synchronization but were afraid to ask', SOSP 2013: tens of ns within "
		     "a socket, 100+ ns across sockets on their Xeon/Opteron machines"},
	[MC_LINE_NUMA] = {"line_numa", 500, "a cache line moved between ccNUMA nodes",
			  "M. Woodacre et al., 'The SGI Altix 3000 global shared-memory "
			  "architecture' (SGI, 2003): remote accesses of several hundred ns across "
			  "the NUMAlink fabric (seed 001's machine class)"},
	[MC_HANDOFF] = {"handoff", 200, "a contended lock passed to another CPU",
			"two line transfers (the lock's and the data's), from 'line'"},
	[MC_QDISC] = {"qdisc", 200, "one qdisc enqueue or dequeue",
		      "docs/design/net.md: pinwheel-bench net, netem delay 10ms, 214 ns of CPU per "
		      "packet for enqueue + dequeue + driver on the AMD EPYC VM; the kernel's "
		      "netem/fq do the same work on an skb"},
	[MC_TIMER_ARM] = {"timer_arm", 100, "mod_timer that detaches and enqueues",
			  "docs/benchmarks.md: random re-arm 22-47 ns (pinwheel), 14-23 ns (the "
			  "2.4 design) at 1e3-1e5 timers, in a loop with warm caches; x2-4 for the "
			  "kernel's cold lines"},
	[MC_TIMER_FAST] = {"timer_fast", 5, "mod_timer's fast path (pending, same expiry)",
			   "docs/benchmarks.md: same-expiry re-arm 2.3-2.8 ns (two loads and a "
			   "compare)"},
	[MC_HR_OP] = {"hr_op", 150, "hrtimer start or cancel",
		      "docs/benchmarks.md: pinwheel-hrtimer re-arm 42-90 ns at 1e3-1e5 (a heap; "
		      "the kernel's rbtree is slower, docs/design/net.md's 103-452 ns tree)"},
	[MC_HR_RUN] = {"hr_run", 200, "the hrtimer interrupt's work per expired timer",
		       "docs/benchmarks.md: pinwheel-hrtimer expire 172-434 ns a timer"},
	[MC_TICK] = {"tick", 1500, "the scheduler tick's work (scheduler_tick, RCU, accounting)",
		     "order of magnitude of tick_sched_timer's path on a busy CPU: ~1-2 us"},
	[MC_WAKE] = {"wake", 2000, "a task wake-up with its two context switches",
		     "lmbench lat_ctx / pipe ping-pong on 2010s x86: a wake-up plus switch of ~1-3 "
		     "us (order of magnitude)"},
	[MC_SYSCALL] = {"syscall", 500, "a send/recv system call's fixed part",
			"lmbench lat_syscall ~0.1-0.3 us plus the socket layer (order of "
			"magnitude)"},
	[MC_COPY_KB] = {"copy_kb", 150, "copying 1 KiB user <-> kernel",
			"~7 GB/s copy_user on 2010s x86 (rep movsb), order of magnitude; 2004's "
			"Itanium 2 ~1-2 GB/s would be x4"},
	[MC_TCP_ACK] = {"tcp_ack", 1500, "tcp_ack() on one ACK (clean RTX queue, free skbs)",
			"per-packet TCP processing of 1-2 us on 2010s x86 (e.g. the Linux "
			"baselines of IX, OSDI 2014, and TAS, EuroSys 2019; order of magnitude)"},
	[MC_TCP_XMIT] = {"tcp_xmit", 1500, "tcp_write_xmit -> ip -> dev_queue_xmit, one skb",
			 "as tcp_ack"},
	[MC_TCP_RCV] = {"tcp_rcv", 1000, "one data segment up the stack (ip, tcp_v4_rcv)",
			"as tcp_ack"},
	[MC_DRV_RX] = {"drv_rx", 300, "driver RX work per packet",
		       "a descriptor, an skb, GRO: a few hundred ns (order of magnitude)"},
	[MC_DRV_TX] = {"drv_tx", 300, "driver xmit per packet", "as drv_rx"},
	[MC_TX_CLEAN] = {"tx_clean", 300, "TX completion per packet (unmap, free, TSQ)",
			 "as drv_rx"},
	[MC_CLOCK_MMIO] = {"clock_mmio", 500, "a clock read through an uncached device register",
			   "R. Neugebauer et al., 'Understanding PCIe performance for end host "
			   "networking', SIGCOMM 2018: device register reads of several hundred ns "
			   "to ~1 us; seed 001's sn_gettimeoffset() read the SHub RTC so"},
	[MC_MEM] = {"mem", 140, "a load that misses every cache (to memory)",
		    "docs/benchmarks.md, pinwheel-bench overlap part 1: a dependent chase over "
		    "32-256 MB costs 130-151 ns a load (4 KiB pages) on this VM"},
};

const char *const mdl_irq_name[MI_N] = {"rx", "tx", "loc", "res", "cal"};

void mdl_costs_default(struct mdl_costs *c)
{
	for (unsigned i = 0; i < MC_N; i++)
		c->ns[i] = mdl_cost_table[i].ns;
	c->name = "table";
}

/* --------------------------------------------------- measured costs (opt-in) */

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long futex(uint32_t *w, int op, uint32_t v)
{
	return syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

#define PP_BATCHES 25
#define PP_ROUNDS 400 /* round trips a batch */

struct pingpong {
	uint32_t word;                  /* futex ping-pong: whose turn */
	uint64_t line __attribute__((aligned(64))); /* cache-line ping-pong */
};

/* The helper: answers each futex ping with a pong, then bounces the line.
 * Context: its own thread, joined by mdl_costs_measure(). */
static void *pong(void *arg)
{
	struct pingpong *p = arg;
	for (unsigned i = 0; i < PP_BATCHES * PP_ROUNDS; i++) {
		while (__atomic_load_n(&p->word, __ATOMIC_ACQUIRE) != 1)
			futex(&p->word, FUTEX_WAIT_PRIVATE, 0);
		__atomic_store_n(&p->word, 0, __ATOMIC_RELEASE);
		futex(&p->word, FUTEX_WAKE_PRIVATE, 1);
	}
	for (uint64_t i = 0; i < PP_BATCHES * PP_ROUNDS * 10; i++) {
		while (__atomic_load_n(&p->line, __ATOMIC_ACQUIRE) != 2 * i + 1)
			;
		__atomic_store_n(&p->line, 2 * i + 2, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * What the lab can measure here: a futex wake round trip between two
 * threads (two wake-ups, each with its switches: what "wake" costs) and a
 * cache-line ping-pong (two line transfers a round trip).  Each is the
 * fastest of PP_BATCHES batches, so that a batch the VM preempted does not
 * count.  Context: main thread; starts and joins one thread.
 */
int mdl_costs_measure(double out[MC_N])
{
	for (unsigned i = 0; i < MC_N; i++)
		out[i] = 0;
	struct pingpong *p = aligned_alloc(64, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	pthread_t th;
	if (pthread_create(&th, NULL, pong, p)) {
		free(p);
		return -EAGAIN;
	}
	double wake = INFINITY, line = INFINITY;
	for (unsigned b = 0; b < PP_BATCHES; b++) {
		uint64_t t0 = wall_ns();
		for (unsigned i = 0; i < PP_ROUNDS; i++) {
			__atomic_store_n(&p->word, 1, __ATOMIC_RELEASE);
			futex(&p->word, FUTEX_WAKE_PRIVATE, 1);
			while (__atomic_load_n(&p->word, __ATOMIC_ACQUIRE) != 0)
				futex(&p->word, FUTEX_WAIT_PRIVATE, 1);
		}
		double d = (double)(wall_ns() - t0) / PP_ROUNDS / 2;
		if (d < wake)
			wake = d;
	}
	uint64_t k = 0;
	for (unsigned b = 0; b < PP_BATCHES; b++) {
		uint64_t t0 = wall_ns();
		for (unsigned i = 0; i < PP_ROUNDS * 10; i++, k++) {
			__atomic_store_n(&p->line, 2 * k + 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&p->line, __ATOMIC_ACQUIRE) != 2 * k + 2)
				;
		}
		double d = (double)(wall_ns() - t0) / (PP_ROUNDS * 10.0) / 2;
		if (d < line)
			line = d;
	}
	pthread_join(th, NULL);
	out[MC_WAKE] = wake;
	out[MC_LINE] = line;
	out[MC_HANDOFF] = 2 * line;
	free(p);
	return 0;
}
