/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's in-process sampling profiler (lab.h): readprofile for a
 * userspace process, with two samplers behind one interface.
 *
 * perf (the default): one perf_event_open() software cpu-clock event per
 * thread of the process (pid = the thread, cpu = -1), each with its own
 * mmap'd ring of PERF_RECORD_SAMPLE records (IP, TID, the user callchain's
 * first entry).  The
 * kernel samples it from an hrtimer that runs while the thread runs, so a
 * sample falls wherever the period says, not on the kernel's tick.  The
 * period is near the 1/hz asked for, with its ratio to 1 ms chosen (golden
 * ratio, see pick_period()) so that successive samples fall at phases spread
 * evenly over the millisecond: work that changes phase on millisecond
 * boundaries (the lab's jiffies) is then sampled in proportion to its time.
 * A reader thread of ours drains the rings every PERF_READ_MS, counts the
 * PERF_RECORD_LOST records, and rescans /proc/self/task for threads started
 * since (so a thread is profiled from at most PERF_READ_MS after its start;
 * the ones running at lab_prof_start() from the start).  A sample taken in
 * the kernel (a system call, a page fault) is charged to the user PC the
 * thread returns to, the first entry of its user callchain, as the other
 * sampler charges it.  Where perf_event_paranoid allows user mode only
 * (2, without CAP_PERFMON), the events exclude the kernel, and the kernel
 * leaves the samples that would fall there out (6.x): the shares are then
 * of user time, which the profile's first line says.
 *
 * ITIMER_PROF (the fallback, where perf_event_open() is not allowed or not
 * there; one warning line on stderr naming why): SIGPROF every 1/hz s of
 * the process's CPU time; the kernel checks the timer on its tick and
 * delivers the signal to the thread that was running, and the handler
 * stores the interrupted PC into a preallocated array (one atomic
 * fetch-add to claim a slot, no malloc, no stdio, no lock).  The samples
 * land on the tick, so a workload whose phases follow the same millisecond
 * boundaries is aliased: its shares depend on where the tick falls.
 *
 * lab_prof_stop() resolves the PCs: the executable's own ELF .symtab (read
 * from /proc/self/exe, so static functions are named too; the PIE load
 * bias from dl_iterate_phdr()), and for a PC outside it (libc's spin lock,
 * the futex and other system-call stubs, the vDSO) dladdr(), else
 * "[object]" or "[unknown]".
 *
 * Threads: lab_prof_start/stop/format/share/info run on the main thread,
 * one profile at a time.  The SIGPROF handler runs on whichever thread took
 * the signal and touches only the atomics below.  The perf events (evs[])
 * belong to the main thread before the reader thread starts and after it
 * is joined, and to the reader in between.  No locks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#endif

#include "../lab.h"

/* 2^18 samples: 65 s of 2 busy CPUs at 2 kHz; more are counted as dropped */
#define PROF_CAP (1u << 18)

/* Samples: the PCs, "[unknown]" stored as 1 (0 marks a slot not yet written) */
#define PC_UNKNOWN ((uintptr_t)1)

static _Atomic uintptr_t prof_pc[PROF_CAP];
static atomic_ulong prof_n;       /* slots claimed */
static atomic_ulong prof_dropped; /* samples past PROF_CAP */
static atomic_int prof_on;        /* the sampler running: 0, LAB_PROF_PERF, LAB_PROF_ITIMER */
static int prof_handler_set;

/* The last profile's sampler and its figures (main thread). */
static struct lab_prof_info pinfo;
static int warned;                /* the fallback's warning, printed once */

/* One function of the executable: [lo, hi). */
struct prof_sym {
	uintptr_t lo, hi;
	const char *name;
};

static struct prof_sym *syms;
static size_t nsyms;
static char *sym_strtab;
static int syms_loaded;

/* The resolved profile: one entry per function, most ticks first. */
struct prof_entry {
	char name[64];
	unsigned long ticks;
};

static struct prof_entry *res;
static size_t nres;
static unsigned long res_total;

/* Store one sample.  Context: the SIGPROF handler (async-signal-safe) or
 * the perf reader; any thread.  Atomics only. */
static void prof_put(uintptr_t pc)
{
	unsigned long i = atomic_fetch_add_explicit(&prof_n, 1, memory_order_relaxed);
	if (i < PROF_CAP)
		atomic_store_explicit(&prof_pc[i], pc ? pc : PC_UNKNOWN, memory_order_release);
	else
		atomic_fetch_add_explicit(&prof_dropped, 1, memory_order_relaxed);
}

/* Context: signal handler, any thread.  Async-signal-safe: atomics only. */
static void prof_handler(int sig, siginfo_t *si, void *ucv)
{
	(void)sig, (void)si;
	if (atomic_load_explicit(&prof_on, memory_order_relaxed) != LAB_PROF_ITIMER)
		return;
	uintptr_t pc = PC_UNKNOWN; /* an architecture without a PC here */
#if defined(__x86_64__)
	pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.pc;
#else
	(void)ucv;
#endif
	prof_put(pc);
}

/* Start the ITIMER_PROF sampler.  Return: 0 or -errno.  Context: main thread. */
static int itimer_start(unsigned hz)
{
	if (!prof_handler_set) {
		/* installed once and left in place: a SIGPROF still in
		 * flight after stop is then ignored, not fatal (SIG_DFL) */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = prof_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGPROF, &sa, NULL))
			return -errno;
		prof_handler_set = 1;
	}
	atomic_store(&prof_on, LAB_PROF_ITIMER);
	long us = 1000000L / (long)hz;
	if (us < 1)
		us = 1;
	struct itimerval it = {{us / 1000000, us % 1000000}, {us / 1000000, us % 1000000}};
	if (setitimer(ITIMER_PROF, &it, NULL)) {
		int err = errno;
		atomic_store(&prof_on, 0);
		return -err;
	}
	pinfo.sampler = LAB_PROF_ITIMER;
	pinfo.period_ns = (unsigned long)us * 1000;
	return 0;
}

/* Context: main thread. */
static void itimer_stop(void)
{
	struct itimerval off;
	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_PROF, &off, NULL);
}

/* ------------------------------------------------------------ perf */

/*
 * The perf sampling period for @hz: near 1e9/hz ns, but a number of
 * milliseconds whose fraction is 1/(k + g) or 1 - 1/(k + g) (g = 0.618...,
 * k <= 8), or 1 ms over m + such a fraction (m samples per ms and more).
 * The phases of successive samples within the millisecond then step by a
 * number whose continued fraction has small terms only (m, about k, then
 * the golden ratio's 1s), so after N samples they cover the millisecond
 * evenly within about (m + k + 2) / N.  A period near 1 ms or a simple
 * fraction of it would instead revisit a few phases for a long time (1e9/997
 * ns drifts 3 us a sample).  997 Hz gets 1116 us, 4999 Hz 195.5 us.
 * Context: any.
 */
static unsigned long pick_period(unsigned hz)
{
	const double g = 0.6180339887498949;
	double want = 1e3 / (double)hz; /* ms */
	double best = 1, bestr = 1e300;
	for (int k = 1; k <= 8; k++) {
		double f1 = 1 / (k + g);
		double fs[2] = {f1, 1 - f1};
		for (int j = 0; j < 2; j++) {
			double f = fs[j];
			/* n + f ms, and 1/(m + f) ms */
			for (int n = 0; n <= (int)want + 1; n++) {
				double c = n + f, r = c > want ? c / want : want / c;
				if (r < bestr)
					bestr = r, best = c;
			}
			for (int m = 1; m <= (int)(1 / want) + 1; m++) {
				double c = 1 / (m + f), r = c > want ? c / want : want / c;
				if (r < bestr)
					bestr = r, best = c;
			}
		}
	}
	return (unsigned long)(best * 1e6 + 0.5);
}

#ifdef __linux__

#define PERF_MAX_EV 512     /* threads profiled at once */
#define PERF_READ_MS 10     /* the reader's drain and rescan interval */

/* One thread's event and ring. */
struct perf_ev {
	pid_t tid;
	int fd;
	void *base;         /* the mmap: the control page, then the data */
	size_t len;         /* of the mmap */
	uint64_t data_size; /* a power of 2 */
	int seen;           /* in this rescan of /proc/self/task */
};

static struct perf_ev evs[PERF_MAX_EV];
static unsigned nevs;
static unsigned long perf_period;
static int perf_user_only;        /* user-mode samples only (exclude_kernel) */
static unsigned long ev_kernel;   /* samples taken in the kernel */
static unsigned ev_opened;        /* threads profiled, in all */
static unsigned ev_failed;        /* threads whose event could not be opened */
static unsigned long ev_lost;     /* PERF_RECORD_LOST's sum */
static pid_t reader_tid;
static pthread_t reader;
static atomic_int reader_stop;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Copy @len bytes at ring offset @off (wrapping).  Context: event owner. */
static void ring_copy(void *dst, const unsigned char *data, uint64_t size, uint64_t off,
		      size_t len)
{
	uint64_t at = off & (size - 1);
	size_t first = len < size - at ? len : (size_t)(size - at);
	memcpy(dst, data + at, first);
	if (first < len)
		memcpy((char *)dst + first, data, len - first);
}

/* Read every record in @e's ring.  Context: the event's owner (the reader
 * thread while it runs, else the main thread). */
static void ev_drain(struct perf_ev *e)
{
	struct perf_event_mmap_page *mp = e->base;
	long page = sysconf(_SC_PAGESIZE);
	const unsigned char *data =
		(const unsigned char *)e->base + (mp->data_offset ? mp->data_offset : (uint64_t)page);
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		ring_copy(&h, data, e->data_size, tail, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break; /* torn: cannot happen; stop rather than misread */
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16) {
			/* ip, pid and tid, then (callchain) nr and nr entries */
			uint64_t ip, nr, ent[3];
			ring_copy(&ip, data, e->data_size, tail + sizeof(h), sizeof(ip));
			if ((h.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER) {
				/* in the kernel: the user PC from the callchain
				 * (PERF_CONTEXT_USER, then the PC), else unknown */
				ev_kernel++;
				ip = PC_UNKNOWN;
				if (!perf_user_only && h.size >= sizeof(h) + 24) {
					ring_copy(&nr, data, e->data_size, tail + sizeof(h) + 16,
						  sizeof(nr));
					if (nr > 3)
						nr = 3;
					if (h.size >= sizeof(h) + 24 + nr * 8)
						ring_copy(ent, data, e->data_size,
							  tail + sizeof(h) + 24, nr * 8);
					else
						nr = 0;
					for (uint64_t k = 0; k + 1 < nr; k++)
						if (ent[k] == (uint64_t)PERF_CONTEXT_USER) {
							ip = ent[k + 1];
							break;
						}
				}
			}
			prof_put((uintptr_t)ip);
		} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
			uint64_t lost;
			ring_copy(&lost, data, e->data_size, tail + sizeof(h) + 8, sizeof(lost));
			ev_lost += (unsigned long)lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

/* Close @e (drained first).  Context: event owner. */
static void ev_close(struct perf_ev *e)
{
	ioctl(e->fd, PERF_EVENT_IOC_DISABLE, 0);
	ev_drain(e);
	munmap(e->base, e->len);
	close(e->fd);
	e->fd = -1;
}

/* Open, map and enable the event of thread @tid into evs[nevs].
 * Return: 0 or -errno.  Context: event owner. */
static int ev_open(pid_t tid)
{
	if (nevs == PERF_MAX_EV)
		return -ENOSPC;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = perf_period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a.disabled = 1;
	a.exclude_hv = 1;
	if (perf_user_only) {
		/* kernel.perf_event_paranoid 2 without CAP_PERFMON: samples
		 * while the thread is in the kernel are not taken at all */
		a.exclude_kernel = 1;
	} else {
		/* a sample in the kernel is charged to the user PC the
		 * thread returns to: the first entry of the user callchain
		 * (one entry: no stack walk) */
		a.sample_type |= PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_kernel = 1;
		a.sample_max_stack = 1;
	}
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* 8 data pages (682 samples of 48 B with the callchain, 1365 of 24 B
	 * without: 0.14 s of one thread at 5 kHz, drained every PERF_READ_MS);
	 * fewer where the locked-memory limit (perf_event_mlock_kb) says no */
	long page = sysconf(_SC_PAGESIZE);
	int err = -ENOMEM;
	for (unsigned pages = 8; pages; pages /= 2) {
		size_t len = (size_t)(pages + 1) * (size_t)page;
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			continue;
		}
		if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
			err = -errno;
			munmap(p, len);
			break;
		}
		struct perf_ev *e = &evs[nevs++];
		e->tid = tid;
		e->fd = fd;
		e->base = p;
		e->len = len;
		e->data_size = (uint64_t)pages * (uint64_t)page;
		e->seen = 1;
		ev_opened++;
		return 0;
	}
	close(fd);
	return err;
}

/* Open events for the process's threads that have none (not the reader's);
 * close those of threads that have left (their rings drained: the thread's
 * events end before it leaves /proc).  Context: event owner. */
static void ev_rescan(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	for (unsigned i = 0; i < nevs; i++)
		evs[i].seen = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long t = strtol(de->d_name, &end, 10);
		if (*end || t <= 0 || (pid_t)t == reader_tid)
			continue;
		unsigned i;
		for (i = 0; i < nevs && evs[i].tid != (pid_t)t; i++)
			;
		if (i < nevs) {
			evs[i].seen = 1;
			continue;
		}
		int err = ev_open((pid_t)t);
		if (err && err != -ESRCH) /* ESRCH: it left meanwhile */
			ev_failed++;
	}
	closedir(d);
	for (unsigned i = 0; i < nevs;) {
		if (evs[i].seen) {
			i++;
			continue;
		}
		ev_close(&evs[i]);
		evs[i] = evs[--nevs];
	}
}

/* The reader thread: drain the rings and pick up new threads every
 * PERF_READ_MS until told to stop.  Context: its own thread. */
static void *reader_main(void *arg)
{
	(void)arg;
	reader_tid = my_tid();
	while (!atomic_load(&reader_stop)) {
		struct timespec ts = {0, PERF_READ_MS * 1000000L};
		nanosleep(&ts, NULL);
		for (unsigned i = 0; i < nevs; i++)
			ev_drain(&evs[i]);
		ev_rescan();
	}
	return NULL;
}

/* Why perf_event_open() is not allowed, as one line.  Context: main thread. */
static void perf_why(int err, char *buf, size_t len)
{
	int paranoid = -99;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -99;
		fclose(f);
	}
	if (err == -ENOENT || err == -ENOSYS || err == -EOPNOTSUPP || err == -ENODEV)
		snprintf(buf, len, "perf_event_open(cpu-clock): %s (no perf events here)",
			 strerror(-err));
	else if (paranoid != -99)
		snprintf(buf, len, "perf_event_open(cpu-clock): %s (kernel.perf_event_paranoid = %d)",
			 strerror(-err), paranoid);
	else
		snprintf(buf, len, "perf_event_open(cpu-clock): %s", strerror(-err));
}

/* Start the perf sampler.  Return: 0 or -errno (nothing left open).
 * Context: main thread. */
static int perf_start(unsigned hz)
{
	perf_period = pick_period(hz);
	nevs = 0;
	ev_opened = ev_failed = 0;
	ev_lost = 0;
	ev_kernel = 0;
	perf_user_only = 0;
	reader_tid = 0;
	atomic_store(&reader_stop, 0);
	/* this thread's first: it decides whether perf is allowed at all,
	 * and whether in the kernel too (perf_event_paranoid <= 1, or
	 * CAP_PERFMON) or in user mode only */
	int err = ev_open(my_tid());
	if (err == -EACCES || err == -EPERM) {
		perf_user_only = 1;
		err = ev_open(my_tid());
	}
	if (err) {
		perf_why(err, pinfo.fallback, sizeof(pinfo.fallback));
		return err;
	}
	ev_rescan();
	atomic_store(&prof_on, LAB_PROF_PERF);
	err = -pthread_create(&reader, NULL, reader_main, NULL);
	if (err) {
		atomic_store(&prof_on, 0);
		while (nevs)
			ev_close(&evs[--nevs]);
		snprintf(pinfo.fallback, sizeof(pinfo.fallback), "the reader thread: %s",
			 strerror(-err));
		return err;
	}
	pinfo.sampler = LAB_PROF_PERF;
	pinfo.period_ns = perf_period;
	return 0;
}

/* Context: main thread. */
static void perf_stop(void)
{
	atomic_store(&reader_stop, 1);
	pthread_join(reader, NULL);
	/* the last records, then the rings go */
	while (nevs)
		ev_close(&evs[--nevs]);
	pinfo.threads = ev_opened;
	pinfo.unprofiled = ev_failed;
	pinfo.lost = ev_lost;
	pinfo.kernel = ev_kernel;
	pinfo.user_only = perf_user_only;
}

#else /* !__linux__ */

static int perf_start(unsigned hz)
{
	(void)hz;
	snprintf(pinfo.fallback, sizeof(pinfo.fallback), "perf_event_open: not on this OS");
	return -ENOSYS;
}

static void perf_stop(void)
{
}

#endif

int lab_prof_start_with(unsigned hz, enum lab_prof_sampler how)
{
	if (!hz || hz > 100000)
		return -EINVAL;
	if (atomic_load(&prof_on))
		return -EBUSY;
	if (how == LAB_PROF_AUTO) {
		const char *env = getenv("PW_LAB_PROFILER");
		if (env && !strcmp(env, "itimer"))
			how = LAB_PROF_ITIMER;
		else if (env && !strcmp(env, "perf"))
			how = LAB_PROF_PERF;
	}
	free(res);
	res = NULL;
	nres = 0;
	res_total = 0;
	for (unsigned long i = 0; i < PROF_CAP; i++)
		atomic_store_explicit(&prof_pc[i], 0, memory_order_relaxed);
	atomic_store(&prof_n, 0);
	atomic_store(&prof_dropped, 0);
	memset(&pinfo, 0, sizeof(pinfo));
	if (how != LAB_PROF_ITIMER) {
		int err = perf_start(hz);
		if (!err || how == LAB_PROF_PERF)
			return err;
		if (!warned) {
			warned = 1;
			fprintf(stderr,
				"lab profiler: %s: falling back to ITIMER_PROF, whose samples fall on "
				"the kernel's tick (work that changes phase on millisecond boundaries "
				"is aliased)\n",
				pinfo.fallback);
		}
	}
	return itimer_start(hz);
}

int lab_prof_start(unsigned hz)
{
	return lab_prof_start_with(hz, LAB_PROF_AUTO);
}

void lab_prof_info(struct lab_prof_info *out)
{
	*out = pinfo;
	if (atomic_load(&prof_on))
		out->samples = atomic_load(&prof_n);
}

/* ------------------------------------------------------------ symbols */

/* dl_iterate_phdr() callback: the executable's load bias.  Context: main thread. */
static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
	return 1; /* the first object is the executable */
}

static int sym_cmp(const void *a, const void *b)
{
	const struct prof_sym *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Read exactly @len bytes at @off.  Return: 0, -1.  Context: main thread. */
static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, off);
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Read the executable's function symbols.  Context: main thread. */
static void load_syms(void)
{
	syms_loaded = 1;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	Elf64_Sym *st = NULL;
	if (pread_all(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !eh.e_shnum || eh.e_shnum > 4096)
		goto out;
	sh = malloc((size_t)eh.e_shnum * sizeof(*sh));
	if (!sh || pread_all(fd, sh, (size_t)eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff))
		goto out;
	/* .symtab (every function), else .dynsym (exported ones) */
	int symi = -1;
	for (int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			symi = i;
	if (symi < 0)
		for (int i = 0; i < eh.e_shnum; i++)
			if (sh[i].sh_type == SHT_DYNSYM)
				symi = i;
	if (symi < 0 || sh[symi].sh_link >= eh.e_shnum || sh[symi].sh_entsize != sizeof(Elf64_Sym))
		goto out;
	const Elf64_Shdr *ss = &sh[symi], *sstr = &sh[ss->sh_link];
	size_t n = (size_t)(ss->sh_size / sizeof(Elf64_Sym));
	if (!n || ss->sh_size > (64u << 20) || sstr->sh_size > (64u << 20) || !sstr->sh_size)
		goto out;
	st = malloc(ss->sh_size);
	sym_strtab = malloc(sstr->sh_size + 1);
	if (!st || !sym_strtab || pread_all(fd, st, ss->sh_size, (off_t)ss->sh_offset) ||
	    pread_all(fd, sym_strtab, sstr->sh_size, (off_t)sstr->sh_offset))
		goto fail;
	sym_strtab[sstr->sh_size] = 0;
	uintptr_t bias = 0;
	if (eh.e_type == ET_DYN)
		dl_iterate_phdr(first_object, &bias);
	size_t nplt = 0;
	for (int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_type == SHT_PROGBITS && sh[i].sh_addr && sh[i].sh_size &&
		    sh[i].sh_name < 1u << 30)
			nplt++; /* counted generously: named below */
	syms = calloc(n + nplt, sizeof(*syms));
	if (!syms)
		goto fail;
	/* the PLT stubs have no symbols: name them as one "[plt]" */
	if (eh.e_shstrndx < eh.e_shnum) {
		const Elf64_Shdr *ns = &sh[eh.e_shstrndx];
		char *names = ns->sh_size < (1u << 20) ? malloc(ns->sh_size + 1) : NULL;
		if (names && !pread_all(fd, names, ns->sh_size, (off_t)ns->sh_offset)) {
			names[ns->sh_size] = 0;
			for (int i = 0; i < eh.e_shnum; i++) {
				if (sh[i].sh_type != SHT_PROGBITS || !sh[i].sh_addr ||
				    !sh[i].sh_size || sh[i].sh_name >= ns->sh_size ||
				    strncmp(names + sh[i].sh_name, ".plt", 4))
					continue;
				struct prof_sym *s = &syms[nsyms++];
				s->lo = bias + (uintptr_t)sh[i].sh_addr;
				s->hi = s->lo + (uintptr_t)sh[i].sh_size;
				s->name = "[plt]";
			}
		}
		free(names);
	}
	for (size_t i = 0; i < n; i++) {
		if (ELF64_ST_TYPE(st[i].st_info) != STT_FUNC || !st[i].st_value ||
		    st[i].st_shndx == SHN_UNDEF || st[i].st_name >= sstr->sh_size)
			continue;
		struct prof_sym *s = &syms[nsyms++];
		s->lo = bias + (uintptr_t)st[i].st_value;
		s->hi = s->lo + (uintptr_t)st[i].st_size;
		s->name = sym_strtab + st[i].st_name;
	}
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
	/* a symbol without a size reaches up to the next one */
	for (size_t i = 0; i < nsyms; i++)
		if (syms[i].hi == syms[i].lo)
			syms[i].hi = i + 1 < nsyms ? syms[i + 1].lo : syms[i].lo + 1;
	goto out;
fail:
	free(syms);
	free(sym_strtab);
	syms = NULL;
	sym_strtab = NULL;
	nsyms = 0;
out:
	free(st);
	free(sh);
	close(fd);
}

/* The executable's function holding @pc, or NULL.  Context: main thread. */
static const char *exe_sym(uintptr_t pc)
{
	size_t lo = 0, hi = nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (syms[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo: the first symbol above pc; look back over overlapping ones */
	for (size_t i = lo; i-- > 0 && lo - i <= 4;)
		if (pc >= syms[i].lo && pc < syms[i].hi)
			return syms[i].name;
	return NULL;
}

/* Copy a function name, folding the compiler's clones (foo.cold,
 * foo.part.0, foo.constprop.0) into foo.  Context: main thread. */
static void put_name(char *dst, size_t len, const char *name)
{
	size_t n = strcspn(name, ".");
	if (!n)
		n = strlen(name);
	if (n >= len)
		n = len - 1;
	memcpy(dst, name, n);
	dst[n] = 0;
}

/* The function holding @pc: the executable's .symtab, else dladdr().
 * Context: main thread (after stop). */
static void name_of(uintptr_t pc, char *dst, size_t len)
{
	const char *s = pc > 1 ? exe_sym(pc) : NULL;
	if (s) {
		put_name(dst, len, s);
		return;
	}
	Dl_info di;
	if (pc > 1 && dladdr((void *)pc, &di)) {
		if (di.dli_sname) {
			put_name(dst, len, di.dli_sname);
			return;
		}
		if (di.dli_fname && di.dli_fname[0]) {
			const char *b = strrchr(di.dli_fname, '/');
			snprintf(dst, len, "[%s]", b ? b + 1 : di.dli_fname);
			return;
		}
	}
	snprintf(dst, len, "[unknown]");
}

static int pc_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct prof_entry *x = a, *y = b;
	if (x->ticks != y->ticks)
		return x->ticks > y->ticks ? -1 : 1;
	return strcmp(x->name, y->name);
}

void lab_prof_stop(void)
{
	int on = atomic_load(&prof_on);
	if (!on)
		return;
	if (on == LAB_PROF_ITIMER)
		itimer_stop();
	else
		perf_stop();
	atomic_store(&prof_on, 0);
	if (!syms_loaded)
		load_syms();

	unsigned long n = atomic_load(&prof_n);
	if (n > PROF_CAP)
		n = PROF_CAP;
	uintptr_t *pcs = malloc((n ? n : 1) * sizeof(*pcs));
	res = calloc(n + 2, sizeof(*res)); /* + [dropped], [lost] */
	if (!pcs || !res) {
		free(pcs);
		free(res);
		res = NULL;
		return;
	}
	/* a slot claimed by a handler that has not stored yet reads 0: skipped */
	unsigned long m = 0;
	for (unsigned long i = 0; i < n; i++) {
		uintptr_t pc = atomic_load_explicit(&prof_pc[i], memory_order_acquire);
		if (pc)
			pcs[m++] = pc;
	}
	qsort(pcs, m, sizeof(*pcs), pc_cmp);
	/* equal PCs are adjacent: resolve each distinct PC once, and merge
	 * entries of one name (several PCs of one function, clones) */
	for (unsigned long i = 0; i < m;) {
		unsigned long j = i;
		while (j < m && pcs[j] == pcs[i])
			j++;
		char name[64];
		name_of(pcs[i], name, sizeof(name));
		size_t e;
		for (e = 0; e < nres; e++)
			if (!strcmp(res[e].name, name))
				break;
		if (e == nres)
			snprintf(res[nres++].name, sizeof(res[0].name), "%s", name);
		res[e].ticks += j - i;
		i = j;
	}
	unsigned long dropped = atomic_load(&prof_dropped);
	if (dropped) {
		snprintf(res[nres].name, sizeof(res[0].name), "[dropped: buffer full]");
		res[nres++].ticks = dropped;
	}
	if (pinfo.lost) {
		snprintf(res[nres].name, sizeof(res[0].name), "[lost: perf ring full]");
		res[nres++].ticks = pinfo.lost;
	}
	res_total = m + dropped + pinfo.lost;
	pinfo.lost += dropped;
	pinfo.samples = res_total;
	qsort(res, nres, sizeof(*res), entry_cmp);
	free(pcs);
}

unsigned long lab_prof_total(void)
{
	if (atomic_load(&prof_on)) {
		unsigned long n = atomic_load(&prof_n);
		return n;
	}
	return res_total;
}

unsigned long lab_prof_format(char *buf, size_t len, unsigned top)
{
	if (!len)
		return res_total;
	buf[0] = 0;
	size_t at = 0;
	/* which sampler: a line readprofile's parsers skip (no count first) */
	int w;
	if (pinfo.sampler == LAB_PROF_PERF) {
		char failed[64] = "";
		if (pinfo.unprofiled)
			snprintf(failed, sizeof(failed), " (%u more not: perf_event_open failed)",
				 pinfo.unprofiled);
		w = snprintf(buf, len,
			     "    # sampler: perf cpu-clock (hrtimer), every %.1f us of each "
			     "thread's %s time, %u thread%s%s, %.1f%% in the kernel, %lu lost\n",
			     (double)pinfo.period_ns / 1e3, pinfo.user_only ? "user" : "CPU",
			     pinfo.threads, pinfo.threads == 1 ? "" : "s", failed,
			     res_total ? 100.0 * (double)pinfo.kernel / (double)res_total : 0.0,
			     pinfo.lost);
	}
	else if (pinfo.sampler == LAB_PROF_ITIMER)
		w = snprintf(buf, len,
			     "    # sampler: ITIMER_PROF (SIGPROF on the kernel's tick), asked every "
			     "%.1f us of the process's CPU time%s%s\n",
			     (double)pinfo.period_ns / 1e3, pinfo.fallback[0] ? "; perf: " : "",
			     pinfo.fallback);
	else
		w = 0;
	if (w < 0 || (size_t)w >= len) {
		buf[0] = 0;
		w = 0;
	}
	at = (size_t)w;
	w = snprintf(buf + at, len - at, "    %8lu %-40s %7.2f%%\n", res_total, "total",
		     res_total ? 100.0 : 0.0);
	if (w < 0 || (size_t)w >= len - at) {
		buf[at] = 0;
		return res_total;
	}
	at += (size_t)w;
	for (size_t i = 0; i < nres && i < top; i++) {
		w = snprintf(buf + at, len - at, "    %8lu %-40s %7.2f%%\n", res[i].ticks, res[i].name,
			     100.0 * (double)res[i].ticks / (double)res_total);
		if (w < 0 || (size_t)w >= len - at) {
			buf[at] = 0; /* no half line */
			break;
		}
		at += (size_t)w;
	}
	return res_total;
}

double lab_prof_share(const char *const *substrs)
{
	if (!res_total || !substrs)
		return 0;
	unsigned long t = 0;
	for (size_t i = 0; i < nres; i++)
		for (const char *const *s = substrs; *s; s++)
			if (strstr(res[i].name, *s)) {
				t += res[i].ticks;
				break;
			}
	return (double)t / (double)res_total;
}
