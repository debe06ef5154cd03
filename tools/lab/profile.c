/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's in-process sampling profiler (lab.h): readprofile for a
 * userspace process.  setitimer(ITIMER_PROF) sends SIGPROF every 1/hz s of
 * the process's CPU time (user and system); the kernel delivers it to the
 * thread that was running, and the handler stores the interrupted PC into
 * a preallocated array (one atomic fetch-add to claim a slot, no malloc,
 * no stdio, no lock).  lab_prof_stop() turns the timer off and resolves
 * the PCs: the executable's own ELF .symtab (read from /proc/self/exe, so
 * static functions are named too; the PIE load bias from
 * dl_iterate_phdr()), and for a PC outside it (libc's spin lock, the futex
 * and other system-call stubs) dladdr(), else "[object]" or "[unknown]".
 * Time the kernel spends in a system call is charged, as readprofile could
 * not, to the user PC the call returns to.
 *
 * Threads: lab_prof_start/stop/format/share run on the main thread, one
 * profile at a time; the handler runs on whichever thread took the signal
 * and touches only the atomics below.  No locks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "lab.h"

/* 2^18 samples: 65 s of 2 busy CPUs at 2 kHz; more are counted as dropped */
#define PROF_CAP (1u << 18)

static _Atomic uintptr_t prof_pc[PROF_CAP];
static atomic_ulong prof_n;       /* slots claimed by the handler */
static atomic_ulong prof_dropped; /* samples past PROF_CAP */
static atomic_int prof_on;
static int prof_handler_set;

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

/* Context: signal handler, any thread.  Async-signal-safe: atomics only. */
static void prof_handler(int sig, siginfo_t *si, void *ucv)
{
	(void)sig, (void)si;
	if (!atomic_load_explicit(&prof_on, memory_order_relaxed))
		return;
	uintptr_t pc = 1; /* "[unknown]": an architecture without a PC here */
#if defined(__x86_64__)
	pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.pc;
#else
	(void)ucv;
#endif
	unsigned long i = atomic_fetch_add_explicit(&prof_n, 1, memory_order_relaxed);
	if (i < PROF_CAP)
		atomic_store_explicit(&prof_pc[i], pc ? pc : 1, memory_order_release);
	else
		atomic_fetch_add_explicit(&prof_dropped, 1, memory_order_relaxed);
}

int lab_prof_start(unsigned hz)
{
	if (!hz || hz > 100000)
		return -EINVAL;
	if (atomic_load(&prof_on))
		return -EBUSY;
	free(res);
	res = NULL;
	nres = 0;
	res_total = 0;
	for (unsigned long i = 0; i < PROF_CAP; i++)
		atomic_store_explicit(&prof_pc[i], 0, memory_order_relaxed);
	atomic_store(&prof_n, 0);
	atomic_store(&prof_dropped, 0);
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
	atomic_store(&prof_on, 1);
	long us = 1000000L / (long)hz;
	if (us < 1)
		us = 1;
	struct itimerval it = {{us / 1000000, us % 1000000}, {us / 1000000, us % 1000000}};
	if (setitimer(ITIMER_PROF, &it, NULL)) {
		int err = errno;
		atomic_store(&prof_on, 0);
		return -err;
	}
	return 0;
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
	if (!atomic_load(&prof_on))
		return;
	struct itimerval off;
	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_PROF, &off, NULL);
	atomic_store(&prof_on, 0);
	if (!syms_loaded)
		load_syms();

	unsigned long n = atomic_load(&prof_n);
	if (n > PROF_CAP)
		n = PROF_CAP;
	uintptr_t *pcs = malloc((n ? n : 1) * sizeof(*pcs));
	res = calloc(n + 1, sizeof(*res));
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
	res_total = m + dropped;
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
	int w = snprintf(buf, len, "    %8lu %-40s %7.2f%%\n", res_total, "total",
			 res_total ? 100.0 : 0.0);
	if (w < 0 || (size_t)w >= len)
		return res_total;
	at = (size_t)w;
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
