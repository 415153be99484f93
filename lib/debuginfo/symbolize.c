/* symbolize.c - addresses to frames with libdw, /proc/kallsyms and perf JIT
 * maps, cached.
 *
 * Costs that shape this file (PERF-NOTES.md): dwfl_module_addrsym scans the
 * symbol table linearly, 120-160 us per address, so each module's symbols are
 * read once (lp_dwmod__sym, lib/debuginfo/dwarf.h) into a sorted array
 * (shared by every process mapping the same file, keyed by build-id) and
 * answered by binary search; a new Dwfl per sample would reopen every ELF
 * file, so there is one per process, refreshed only when an address falls
 * outside all of its known modules (a dlopen, a late mapping). */
#include <stddef.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "debuginfo/demangle.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/plt.h"
#include "base/hashmap.h"
#include "debuginfo/procns.h"
#include "debuginfo/symbolize.h"
#include "base/util.h"

/* A sorted symbol table.  Addresses are relative to the module's lowest
 * mapped address, which is the same in every process mapping the file. */
struct lp_sym {
	uint64_t start, end;	/* end == start: size unknown, runs to the next */
	const char *name;	/* user symbols: without their symbol version */
	const char *module;	/* kernel symbols: "[module]", or NULL */
	/* User symbols: the name frames show (demangled, in the dictionary),
	 * made at the first address resolved to it; NULL until then. */
	const char *shown;
	bool unsized;		/* had no size: runs to the next symbol */
	bool plt;		/* a PLT stub's (debuginfo/plt.h), no symbol of the file */
};

struct lp_symtab {
	struct lp_sym *syms;
	size_t n;
	char *names;		/* every name, NUL-separated */
};

struct lp_jit {
	struct lp_sym *syms;	/* absolute addresses */
	size_t n;
	char *names;
	struct timespec mtime;
	off_t size;
	bool tried;
	int64_t tried_ns;	/* when it was last looked for */
	char path[64];		/* as the process names it: its frames' module */
	char *file;		/* where we open it (lp_procns__path) */
};

struct lp_proc {
	struct lp_symbolizer *s;
	pid_t pid;
	pid_t nspid;		/* in its own pid namespace; 0: not known yet */
	struct lp_dwproc *dwp;	/* its modules */
	int64_t refreshed_ns;	/* last report of its modules */
	bool dead;		/* seen gone by one reap: freed by the next */
	uint32_t nreports;	/* how often its modules were read */
	uint32_t gen;		/* exec count: part of the cache key */
	struct lp_jit jit;
	uint64_t uprobes_lo, uprobes_hi;	/* its "[uprobes]" page; 0, 0: none seen */
	size_t nmodules;	/* in dwp: 0 when its maps could not be read */
	/* A forked child (lp_symbolizer__fork): its parent, whose modules
	 * answer for it while its own maps cannot be read, as long as the
	 * parent's generation is still pgen (neither exec'd nor a new
	 * process with its pid).  Counted in the parent's refs, which keep
	 * it from being freed. */
	struct lp_proc *parent;
	uint32_t pgen;
	uint32_t refs;
	bool counted;		/* in st.procs: once one of its addresses was asked */
};

struct lp_cached {
	pid_t pid;		/* -1 for the kernel */
	uint32_t gen;
	uint64_t addr;		/* the looked-up address (addr - 1 for returns) */
	int64_t when;		/* unresolved user frames: retried after a while, */
	uint32_t reports;	/* or once the process's modules were read again */
	size_t n;
	const struct lp_frame *frames[];	/* the function, then inlined ones */
};

struct lp_symbolizer {
	struct lp_dict *dict;
	struct lp_hashmap procs;	/* pid -> lp_proc */
	struct lp_hashmap symtabs;	/* build-id (or path) hash -> lp_symtab */
	struct lp_hashmap cache;	/* (pid, addr) hash -> lp_cached */
	struct lp_sym *ksyms;		/* kallsyms, sorted */
	uint64_t sched_start, sched_end;	/* the scheduler's own code (.sched.text) */
	size_t nksyms;
	char *knames;
	bool kloaded;
	uint32_t next_gen;		/* processes' generations, never reused */
	bool inlines, srclines, raw, no_demangle;
	struct lp_hashmap idents;	/* (symtab, address) hash -> lp_ident */
	struct lp_hashmap files;	/* path hash -> lp_file (lp_symbolizer__file) */
	struct lp_hashmap restacked;	/* input frame id -> lp_restacked */
	struct lp_symbolizer_stats st;
	/* The maps of a process that is gone, as read while it ran
	 * (lp_symbolizer__set_saved_maps). */
	char *(*saved_maps)(void *arg, pid_t pid);
	void *saved_arg;
};

/* A binary opened by path to symbolize a raw stream: its own Dwfl, the file
 * at address 0 (so addresses are the file's virtual addresses). */
struct lp_file {
	char *path;
	struct lp_dwfile *dw;
	struct lp_dwmod *mod;	/* NULL: the file cannot be read, or is no ELF */
	bool not_elf;		/* read, and no ELF object: no code to name */
	char *build_id;		/* hex; "" when it has none */
	bool warned;
};

/* Refreshing a process's modules reads /proc/PID/maps: at most this often,
 * so a stream of addresses in anonymous memory does not reread it for each. */
#define LP_REFRESH_NS 100000000LL

struct lp_symbolizer *lp_symbolizer__new(struct lp_dict *dict)
{
	struct lp_symbolizer *s = lp_calloc(1, sizeof(*s));

	s->dict = dict;
	lp_hashmap__init(&s->procs);
	lp_hashmap__init(&s->symtabs);
	lp_hashmap__init(&s->cache);
	lp_hashmap__init(&s->files);
	lp_hashmap__init(&s->restacked);
	lp_hashmap__init(&s->idents);
	return s;
}

static void proc_free(struct lp_proc *p);

static void symtab_free(struct lp_symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->names);
	free(t);
}

void lp_symbolizer__free(struct lp_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->procs.cap; i++) {
		struct lp_proc *p = s->procs.keys[i] ? s->procs.values[i] : NULL;

		if (p)
			proc_free(p);
	}
	for (size_t i = 0; i < s->symtabs.cap; i++)
		if (s->symtabs.keys[i])
			symtab_free(s->symtabs.values[i]);
	for (size_t i = 0; i < s->cache.cap; i++)
		if (s->cache.keys[i])
			free(s->cache.values[i]);
	for (size_t i = 0; i < s->files.cap; i++) {
		struct lp_file *f = s->files.keys[i] ? s->files.values[i] : NULL;

		if (!f)
			continue;
		lp_dwfile__free(f->dw);
		free(f->path);
		free(f->build_id);
		free(f);
	}
	lp_hashmap__fini(&s->files);
	for (size_t i = 0; i < s->restacked.cap; i++)
		if (s->restacked.keys[i])
			free(s->restacked.values[i]);
	lp_hashmap__fini(&s->restacked);
	for (size_t i = 0; i < s->idents.cap; i++)
		if (s->idents.keys[i])
			free(s->idents.values[i]);
	lp_hashmap__fini(&s->idents);
	lp_hashmap__fini(&s->procs);
	lp_hashmap__fini(&s->symtabs);
	lp_hashmap__fini(&s->cache);
	free(s->ksyms);
	free(s->knames);
	free(s);
}

/* By address, then the longer first (one with a size before one
 * without). */
static int start_then_size(const struct lp_sym *x, const struct lp_sym *y)
{
	int c = (x->start > y->start) - (x->start < y->start);
	if (c)
		return c;
	return ((y->end - y->start) > (x->end - x->start)) - ((y->end - y->start) < (x->end - x->start));
}

/* Prefer the symbol with a size, then the longer one, then by name, so
 * aliases resolve the same way every run. */
static int sym_cmp(const void *a, const void *b)
{
	const struct lp_sym *x = a, *y = b;
	int c = start_then_size(x, y);
	return c ? c : strcmp(x->name, y->name);
}

/* A user symbol table's aliases at one address (libc's
 * __libc_start_main_impl, __libc_start_main_alias_1 and
 * __libc_start_main@@GLIBC_2.34): the one with a size, then one without a
 * symbol version (the version is no part of the function's name), then
 * the one with fewer leading underscores, the shorter, by name. */
static int user_sym_cmp(const void *a, const void *b)
{
	const struct lp_sym *x = a, *y = b;
	int c = start_then_size(x, y);
	if (c)
		return c;
	bool vx = strchr(x->name, '@') != NULL, vy = strchr(y->name, '@') != NULL;
	if (vx != vy)
		return vx - vy;
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	if (ux != uy)
		return (ux > uy) - (ux < uy);
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return (lx > ly) - (lx < ly);
	return strcmp(x->name, y->name);
}

/* The last symbol starting at or before addr, if addr lies inside it. */
static struct lp_sym *sym_find(struct lp_sym *syms, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* Several symbols at one address: the first of them (sym_cmp order). */
	while (lo > 1 && syms[lo - 2].start == syms[lo - 1].start)
		lo--;
	struct lp_sym *sym = &syms[lo - 1];
	if (sym->end > sym->start ? addr < sym->end : true)
		return sym;
	return NULL;
}

/* Sorts (by cmp), drops duplicates at one address and copies the names
 * into one block, without their symbol versions when unversion says so. */
static void syms_finish(struct lp_sym *syms, size_t *n, char **names,
			int (*cmp)(const void *, const void *), bool unversion)
{
	size_t total = 0, k = 0;
	char *p;

	qsort(syms, *n, sizeof(*syms), cmp);
	for (size_t i = 0; i < *n; i++)
		if (k == 0 || syms[i].start != syms[k - 1].start)
			syms[k++] = syms[i];
	for (size_t i = 0; i < k; i++)
		total += strlen(syms[i].name) + 1;
	*names = p = lp_malloc(total ? total : 1);
	for (size_t i = 0; i < k; i++) {
		size_t len = unversion ? lp_symbol__unversioned_len(syms[i].name)
				       : strlen(syms[i].name);

		memcpy(p, syms[i].name, len);
		p[len] = '\0';
		syms[i].name = p;
		p += len + 1;
	}
	/* A symbol without a size runs to the next one; the last one, a page
	 * (not to the end of the address space). */
	for (size_t i = 0; i < k; i++) {
		syms[i].unsized = syms[i].end == syms[i].start;
		if (syms[i].unsized)
			syms[i].end = i + 1 < k ? syms[i + 1].start : syms[i].start + 4096;
	}
	*n = k;
}

static uint64_t module_key(struct lp_dwmod *mod, const char *name)
{
	const unsigned char *bits;
	int len = lp_dwmod__build_id(mod, &bits);

	if (len > 0)
		return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, bits, len));
	/* "[vdso: PID]": one kernel's vDSO, the same in every process. */
	if (!strncmp(name, "[vdso", 5))
		name = "[vdso]";
	return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT ^ 1, name, strlen(name)));
}

static struct lp_symtab *module_symtab(struct lp_symbolizer *s, struct lp_dwmod *mod)
{
	void **userdata = lp_dwmod__userdata(mod);
	uint64_t start;
	const char *name = lp_dwmod__info(mod, &start, NULL);

	if (*userdata)
		return *userdata;

	uint64_t key = module_key(mod, name ? name : "");
	struct lp_symtab *t = lp_hashmap__get(&s->symtabs, key);
	if (t) {
		*userdata = t;
		return t;
	}
	t = lp_calloc(1, sizeof(*t));
	int nsyms = lp_dwmod__nsyms(mod);
	size_t cap = nsyms > 0 ? (size_t)nsyms : 0;
	t->syms = lp_calloc(cap ? cap : 1, sizeof(*t->syms));
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		uint64_t addr;
		GElf_Word shndx;
		const char *sname = lp_dwmod__sym(mod, i, &sym, &addr, &shndx);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!sname || !*sname || shndx == SHN_UNDEF || addr < start)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		t->syms[t->n].start = addr - start;
		t->syms[t->n].end = addr - start + sym.st_size;
		t->syms[t->n].name = sname;
		t->n++;
	}
	/* The PLT's stubs, which have no symbols: FUNC@plt. */
	uint64_t bias;
	Elf *elf = lp_dwmod__elf(mod, &bias);
	struct lp_plt_stub *stubs = NULL;
	size_t nstubs = elf ? lp_plt__stubs(elf, &stubs) : 0;
	t->syms = lp_reallocarray(t->syms, t->n + nstubs + 1, sizeof(*t->syms));
	for (size_t i = 0; i < nstubs; i++)
		if (stubs[i].start + bias >= start)
			t->syms[t->n++] = (struct lp_sym){ .start = stubs[i].start + bias - start,
							   .end = stubs[i].end + bias - start,
							   .name = stubs[i].name, .plt = true };
	syms_finish(t->syms, &t->n, &t->names, user_sym_cmp, true);
	lp_plt__free(stubs, nstubs);
	/* An empty table may only mean the file could not be read this time
	 * (a vDSO read from a process that is gone): not shared by build-id,
	 * but kept (under its own address) to be freed at the end. */
	if (!t->n)
		key = lp_hashmap__key((uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ULL);
	lp_hashmap__put(&s->symtabs, key, t);
	*userdata = t;
	s->st.modules++;
	s->st.symbols += t->n;
	return t;
}

/* The page the kernel maps for uprobes ("[uprobes]" in the maps, once a
 * probe was hit): probed instructions are single-stepped there out of
 * line and the uretprobe trampoline runs there.  libdwfl leaves it out of
 * its modules, so it is looked for here, to name its frames "[uprobes]"
 * (lp's own code, lpframe.h). */
static void find_uprobes_page(struct lp_proc *p)
{
	uint64_t lo, hi;

	lp_maps__uprobes(p->pid, &lo, &hi);
	if (hi) {
		p->uprobes_lo = lo;
		p->uprobes_hi = hi;
	}
}

static bool in_uprobes_page(const struct lp_proc *p, uint64_t addr)
{
	return addr >= p->uprobes_lo && addr < p->uprobes_hi;
}

/* The JIT map is the process's /tmp/perf-PID.map: in its own root, named
 * by its pid in its own namespace (perf's convention).  Until pid is read,
 * the host's /tmp and pid. */
static void jit_locate(struct lp_proc *p)
{
	pid_t ns = p->nspid ? p->nspid : p->pid;

	snprintf(p->jit.path, sizeof(p->jit.path), "/tmp/perf-%d.map", (int)ns);
	free(p->jit.file);
	p->jit.file = p->nspid ? lp_procns__path(p->pid, p->jit.path) : lp_strdup(p->jit.path);
}

static void proc_report(struct lp_proc *p)
{
	p->refreshed_ns = lp_monotonic_ns();
	p->nreports++;
	if (!p->dwp && !(p->dwp = lp_dwproc__new()))
		return;
	/* A process whose file tree is not ours has its files opened now,
	 * through its root. */
	bool foreign = lp_procns__foreign_root(p->pid);

	p->nmodules = lp_dwproc__report(p->dwp, p->pid, foreign, NULL);
	if (!p->nmodules && p->s->saved_maps) {
		char *maps = p->s->saved_maps(p->s->saved_arg, p->pid);

		if (maps)
			p->nmodules = lp_dwproc__report(p->dwp, p->pid, foreign, maps);
		free(maps);
	}
	find_uprobes_page(p);
	if (!p->nspid && (p->nspid = lp_procns__nspid(p->pid)))
		jit_locate(p);
}

static uint64_t proc_key(pid_t pid)
{
	return lp_hashmap__key((uint64_t)(uint32_t)pid + 1);
}

/* report: read its maps now; otherwise at its first address. */
static struct lp_proc *proc_new(struct lp_symbolizer *s, pid_t pid, bool report)
{
	struct lp_proc *p = lp_calloc(1, sizeof(*p));

	p->s = s;
	p->pid = pid;
	p->gen = ++s->next_gen;
	jit_locate(p);
	if (report)
		proc_report(p);
	lp_hashmap__put(&s->procs, proc_key(pid), p);
	return p;
}

static struct lp_proc *get_proc(struct lp_symbolizer *s, pid_t pid)
{
	struct lp_proc *p = lp_hashmap__get(&s->procs, proc_key(pid));

	if (!p)
		p = proc_new(s, pid, true);
	else if (!p->nreports)	/* announced by a fork, not read yet */
		proc_report(p);
	/* Not the processes only announced by forks (-a: every fork). */
	if (!p->counted) {
		p->counted = true;
		s->st.procs++;
	}
	return p;
}

/* How many forks deep a child's modules are looked for in its ancestors'
 * (each gone before its maps were read): a bound, the links being checked
 * by generation. */
#define LP_FORK_DEPTH 8

/* The parent whose modules answer for a forked child p, or NULL: only when
 * p's own maps could not be read (it exited first; a zombie's are empty)
 * and the parent still runs the program it ran at the fork. */
static struct lp_proc *proc_parent(const struct lp_proc *p)
{
	if (p->nmodules || !p->parent || p->parent->gen != p->pgen)
		return NULL;
	return p->parent;
}

static struct lp_dwmod *proc_module(struct lp_proc *p, uint64_t addr)
{
	for (int depth = 0; p && depth <= LP_FORK_DEPTH; depth++, p = proc_parent(p)) {
		struct lp_dwmod *mod = lp_dwproc__module_at(p->dwp, addr);

		/* A miss rereads the maps, at most every LP_REFRESH_NS, except
		 * in a new process's first moments (ld.so still mapping
		 * libraries). */
		if (!mod && !in_uprobes_page(p, addr) &&
		    (p->nreports < 4 || lp_monotonic_ns() - p->refreshed_ns > LP_REFRESH_NS)) {
			proc_report(p);
			mod = lp_dwproc__module_at(p->dwp, addr);
		}
		if (mod)
			return mod;
	}
	return NULL;
}

struct lp_dwproc *lp_symbolizer__modules(struct lp_symbolizer *s, pid_t pid, uint64_t addr)
{
	struct lp_proc *p = get_proc(s, pid), *q;

	if (addr || !p->dwp)
		proc_module(p, addr);
	/* A child gone before its maps were read unwinds with the modules
	 * that symbolize it (the unwinder reads only the copied stack). */
	for (int depth = 0; depth < LP_FORK_DEPTH && (q = proc_parent(p)); depth++)
		p = q;
	return p->dwp;
}

uint32_t lp_symbolizer__reports(struct lp_symbolizer *s, pid_t pid)
{
	struct lp_proc *p = lp_hashmap__get(&s->procs, proc_key(pid));

	return p ? p->nreports : 0;
}

/* Drops p's link to its parent (a fork's, or an exec, or p freed). */
static void proc_unlink(struct lp_proc *p)
{
	if (p->parent)
		p->parent->refs--;
	p->parent = NULL;
}

/* Its parent's refs are the caller's: lp_symbolizer__free frees all. */
static void proc_free(struct lp_proc *p)
{
	lp_dwproc__free(p->dwp);
	free(p->jit.syms);
	free(p->jit.names);
	free(p->jit.file);
	free(p);
}

/* Cached answers are keyed by (pid, generation, address): entries of a
 * process that is gone are never hit again.  Past this many the whole
 * cache starts over, so a long whole-system run stays bounded. */
#define LP_CACHE_MAX (1u << 18)

size_t lp_symbolizer__reap(struct lp_symbolizer *s)
{
	size_t freed = 0;

	for (size_t i = 0; i < s->procs.cap; i++) {
		struct lp_proc *p = s->procs.keys[i] ? s->procs.values[i] : NULL;

		if (!p || kill(p->pid, 0) == 0 || errno != ESRCH)
			continue;
		/* A forked child still kept may be symbolized with it: freed
		 * at a reap after its children's. */
		if (p->refs)
			continue;
		/* Its last samples may still be on their way: free it only when
		 * it was already gone at the previous reap. */
		if (!p->dead) {
			p->dead = true;
			continue;
		}
		proc_unlink(p);
		proc_free(p);
		s->procs.values[i] = NULL;
		freed++;
	}
	if (s->cache.count > LP_CACHE_MAX) {
		for (size_t i = 0; i < s->cache.cap; i++)
			if (s->cache.keys[i])
				free(s->cache.values[i]);
		lp_hashmap__fini(&s->cache);
		lp_hashmap__init(&s->cache);
	}
	if (s->idents.count > LP_CACHE_MAX) {
		for (size_t i = 0; i < s->idents.cap; i++)
			if (s->idents.keys[i])
				free(s->idents.values[i]);
		lp_hashmap__fini(&s->idents);
		lp_hashmap__init(&s->idents);
	}
	return freed;
}

static void preload_module(struct lp_dwmod *mod, void *s)
{
	module_symtab(s, mod);
}

void lp_symbolizer__prepare(struct lp_symbolizer *s, pid_t pid)
{
	uint64_t key = lp_hashmap__key((uint64_t)(uint32_t)pid + 1);
	struct lp_proc *p = lp_hashmap__get(&s->procs, key);

	if (!p)
		p = get_proc(s, pid);	/* reports it */
	else if (!p->dead)
		proc_report(p);		/* adds what was mapped since */
	/* The symbol tables too, while the process is there: the vDSO's
	 * image is read from its memory. */
	lp_dwproc__each_module(p->dwp, preload_module, s);
}

/* p runs a new program (an exec), or its pid a new process (a fork): what
 * was known of it is dropped, and its children's links to it with the old
 * generation.  Reported again at its next address.  The symbol tables
 * stay: they belong to files, not processes. */
static void proc_reset(struct lp_symbolizer *s, struct lp_proc *p)
{
	proc_unlink(p);
	lp_dwproc__free(p->dwp);
	p->dwp = NULL;
	p->nmodules = 0;
	p->nreports = 0;
	p->dead = false;
	p->uprobes_lo = p->uprobes_hi = 0;
	p->nspid = 0;		/* a new process may be in another namespace */
	jit_locate(p);
	p->refreshed_ns = 0;
	p->gen = ++s->next_gen;
	free(p->jit.syms);
	free(p->jit.names);
	p->jit.syms = NULL;
	p->jit.names = NULL;
	p->jit.n = 0;
	p->jit.size = 0;
	p->jit.tried = false;
}

void lp_symbolizer__forget(struct lp_symbolizer *s, pid_t pid)
{
	struct lp_proc *p = lp_hashmap__get(&s->procs, proc_key(pid));

	if (p)
		proc_reset(s, p);
}

pid_t lp_symbolizer__nspid(struct lp_symbolizer *s, pid_t pid)
{
	struct lp_proc *p = lp_hashmap__get(&s->procs, proc_key(pid));

	return p ? p->nspid : 0;
}

void lp_symbolizer__fork(struct lp_symbolizer *s, pid_t pid, pid_t ppid)
{
	struct lp_proc *p = lp_hashmap__get(&s->procs, proc_key(pid));
	struct lp_proc *parent;

	if (pid == ppid)
		return;
	/* Neither's maps are read now (with -a, every fork on the system
	 * comes here): the child's at its first address, the parent's when
	 * the child needs them. */
	parent = lp_hashmap__get(&s->procs, proc_key(ppid));
	if (!parent)
		parent = proc_new(s, ppid, false);
	if (p)
		proc_reset(s, p);	/* its pid's last owner is gone */
	else
		p = proc_new(s, pid, false);
	p->parent = parent;
	p->pgen = parent->gen;
	parent->refs++;
}

/* perf's JIT map: "START SIZE NAME" in hex, one symbol a line, appended to
 * as the JIT compiles.  Reread when an address misses and the file changed. */
static void jit_load(struct lp_jit *j)
{
	struct stat sb;
	FILE *f;
	char *line = NULL;
	size_t cap = 0, n = 0, alloc = 0;

	j->tried = true;
	if (stat(j->file, &sb) < 0)
		return;
	if (j->syms && sb.st_size == j->size && sb.st_mtim.tv_sec == j->mtime.tv_sec &&
	    sb.st_mtim.tv_nsec == j->mtime.tv_nsec)
		return;
	f = fopen(j->file, "r");
	if (!f)
		return;
	free(j->syms);
	free(j->names);
	j->syms = NULL;
	j->names = NULL;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, size;
		int off = 0;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &off) != 2 || !off)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			j->syms = lp_reallocarray(j->syms, alloc, sizeof(*j->syms));
		}
		j->syms[n].start = start;
		j->syms[n].end = start + (size ? size : 1);
		j->syms[n].name = lp_strdup(line + off);
		n++;
	}
	free(line);
	fclose(f);
	/* syms_finish copies the names into one block; free the strdups. */
	char **tmp = lp_calloc(n ? n : 1, sizeof(*tmp));
	for (size_t i = 0; i < n; i++)
		tmp[i] = (char *)j->syms[i].name;
	j->n = n;
	syms_finish(j->syms ? j->syms : (j->syms = lp_calloc(1, sizeof(*j->syms))), &j->n,
		    &j->names, sym_cmp, false);
	for (size_t i = 0; i < n; i++)
		free(tmp[i]);
	free(tmp);
	j->size = sb.st_size;
	j->mtime = sb.st_mtim;
}

static const struct lp_sym *jit_find(struct lp_jit *j, uint64_t addr)
{
	const struct lp_sym *sym;

	if (!j->tried)
		jit_load(j);
	sym = j->syms ? sym_find(j->syms, j->n, addr) : NULL;
	if (!sym || addr >= sym->end) {
		jit_load(j);
		sym = j->syms ? sym_find(j->syms, j->n, addr) : NULL;
	}
	return sym && addr < sym->end ? sym : NULL;
}

/* "file:line", kept in the dictionary: paths may be any length. */
static const char *file_line(struct lp_dict *dict, const char *file, unsigned long long line)
{
	size_t n = strlen(file) + 24;
	char *tmp = lp_malloc(n);
	int len = snprintf(tmp, n, "%s:%llu", file, line);
	const char *s = lp_dict__string(dict, tmp, (size_t)len);
	free(tmp);
	return s;
}

static const char *pc_line(struct lp_dict *dict, struct lp_dwmod *mod, uint64_t pc)
{
	int line;
	const char *file = lp_dwmod__line(mod, pc, &line);

	return file ? file_line(dict, file, (unsigned long long)line) : "";
}

/* The function holding pc, and with s->inlines the functions inlined into
 * it down to the one pc is in: out[0] the function, out[n-1] the innermost.
 * The chain costs milliseconds (lp_dwmod__funcs): once per address, then
 * cached. */
static size_t resolve_module(struct lp_symbolizer *s, struct lp_dwmod *mod, const char *modname,
			     const char *symname, uint64_t pc, const struct lp_frame **out)
{
	struct lp_dwfunc chain[LP_SYM_MAX_INLINE + 1];
	const char *lines[LP_SYM_MAX_INLINE + 1];
	size_t n = s->inlines ? lp_dwmod__funcs(mod, pc, chain, LP_SYM_MAX_INLINE + 1) : 0, k;

	/* chain[0] is the innermost, then each function it is inlined into.
	 * An inlined copy's call site is where its caller (the next one out)
	 * is: kept with the caller's frame. */
	for (k = 0; k < n && k < LP_SYM_MAX_INLINE && chain[k].inlined; k++)
		lines[k + 1] = chain[k].call_known && chain[k].call_file
			? file_line(s->dict, chain[k].call_file, chain[k].call_line) : "";
	lines[0] = s->srclines ? pc_line(s->dict, mod, pc) : "";
	/* Root first: the function (its line: the outermost call site, or pc's
	 * own when nothing is inlined), then the inlined ones outward in. */
	out[0] = lp_dict__frame(s->dict, LP_FRAME_USER, 0, modname, symname,
				s->srclines ? lines[k] : "");
	for (size_t j = 1; j <= k; j++)
		out[j] = lp_dict__frame(s->dict, LP_FRAME_INLINE, 0, modname,
					chain[k - j].name ? chain[k - j].name : "",
					s->srclines ? lines[k - j] : "");
	return k + 1;
}

/* The module's build-id in hex, of any length (--build-id=0xHEX makes
 * long ones), malloc'd; "" when it has none. */
static char *build_id_hex(struct lp_dwmod *mod)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	int len = lp_dwmod__build_id(mod, &bits);
	char *buf = lp_malloc(len > 0 ? 2 * (size_t)len + 1 : 1);

	for (int i = 0; i < len; i++) {
		buf[2 * i] = hex[bits[i] >> 4];
		buf[2 * i + 1] = hex[bits[i] & 15];
	}
	buf[len > 0 ? 2 * len : 0] = 0;
	return buf;
}

/* --raw: the address in the file (its ELF virtual address), the file's
 * path, and its build-id, so lp-symbolize can check it is symbolizing the
 * same build. */
static size_t raw_frame(struct lp_symbolizer *s, struct lp_dwmod *mod, const char *name,
			uint64_t look, const struct lp_frame **out)
{
	uint64_t bias;
	char *id = build_id_hex(mod);

	lp_dwmod__bias(mod, &bias);
	out[0] = lp_dict__raw_frame(s->dict, look - bias, name, id);
	free(id);
	return 1;
}

/* The name a user symbol's frames show: demangled (C++, Rust) unless
 * --no-demangle; made once per symbol, at the first address in it. */
static const char *shown_name(struct lp_symbolizer *s, struct lp_sym *sym)
{
	if (sym->shown)
		return sym->shown;
	char *d = s->no_demangle ? NULL : lp_symbol__demangle(sym->name, false);
	sym->shown = d ? lp_dict__string(s->dict, d, strlen(d)) : sym->name;
	free(d);
	return sym->shown;
}

/* Cached identities of addresses no symbol covers (ident_name). */
struct lp_ident {
	const struct lp_symtab *t;
	uint64_t vaddr;
	const char *name;	/* NULL: none */
};

/* An address in a module that no symbol covers (a stripped binary's
 * static function, or past the end of a sized symbol) still gets an
 * identity of its own function, "MODULE+0xSTART" as perf report shows it:
 * START the function's first address in the file (ELF virtual address):
 * the start of the FDE covering it (.eh_frame, which stripping keeps),
 * else the end of the symbol before it (the gap it is in).  NULL when
 * neither is known.  Looked up once per (file, address): an FDE lookup
 * parses CFI and allocates. */
static const char *ident_name(struct lp_symbolizer *s, struct lp_dwmod *mod, struct lp_symtab *t,
			      uint64_t mstart, const char *modname, uint64_t look)
{
	uint64_t bias;

	if (!modname[0] || !lp_dwmod__bias(mod, &bias))
		return NULL;
	uint64_t vaddr = look - bias, start;
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &t, sizeof(t));
	uint64_t key = lp_hashmap__key(lp_hash_bytes(h, &vaddr, sizeof(vaddr)));
	struct lp_ident *id = lp_hashmap__get(&s->idents, key);

	if (id && id->t == t && id->vaddr == vaddr)
		return id->name;
	if (!id) {
		id = lp_malloc(sizeof(*id));
		lp_hashmap__put(&s->idents, key, id);
	}
	id->t = t;
	id->vaddr = vaddr;
	id->name = NULL;
	if (!lp_dwmod__fde_start(mod, vaddr, &start)) {
		/* The last symbol before look, which ends before it. */
		size_t lo = 0, hi = t->n;
		uint64_t rel = look - mstart;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (t->syms[mid].start <= rel)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* A PLT stub ends no function: what follows the PLT is code
		 * the file's symbols do not mark either. */
		if (!lo || t->syms[lo - 1].end > rel || t->syms[lo - 1].plt)
			return NULL;
		start = t->syms[lo - 1].end + mstart - bias;
	}
	const char *base = strrchr(modname, '/');
	char buf[512];
	int len = snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base ? base + 1 : modname, start);

	id->name = lp_dict__string(s->dict, buf, len < (int)sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
	return id->name;
}

/* The name of the function holding look in module mod (symbol table t,
 * lowest address mstart, path modname): its symbol's, shown as perf shows
 * it, else its own identity (ident_name); NULL when neither is known. */
static const char *function_name(struct lp_symbolizer *s, struct lp_dwmod *mod, struct lp_symtab *t,
				 uint64_t mstart, const char *modname, uint64_t look)
{
	uint64_t bias, fstart;
	bool have_bias = lp_dwmod__bias(mod, &bias);

	/* An address in the module's span but in none of its file's code: a
	 * JIT's code (node maps some between its segments) not yet in its
	 * map.  Named after the symbol before it, it would keep that wrong
	 * name in the cache; unresolved, it is looked up again. */
	if (have_bias && !lp_dwmod__in_code(mod, look - bias))
		return NULL;

	struct lp_sym *sym = sym_find(t->syms, t->n, look - mstart);
	/* A symbol without a size runs to the next one, unless the FDE
	 * holding look starts past it: a function of its own that the symbol
	 * table does not name. */
	if (sym && sym->unsized && have_bias &&
	    lp_dwmod__fde_start(mod, look - bias, &fstart) && fstart > sym->start + mstart - bias)
		sym = NULL;
	if (sym && sym->name[0])
		return shown_name(s, sym);
	return ident_name(s, mod, t, mstart, modname, look);
}

/* A user address that resolved to no symbol.  Never a frame that says
 * nothing at all (ADDR, MODULE and SYMBOL all "-"): a zero address from an
 * unwinder outside every module is perf's "[unknown]" module. */
static const struct lp_frame *unresolved(struct lp_symbolizer *s, uint64_t addr,
					 const char *module)
{
	return lp_dict__frame(s->dict, LP_FRAME_USER, addr,
			      module[0] || addr ? module : "[unknown]", "", "");
}

static size_t resolve_user(struct lp_symbolizer *s, pid_t pid, uint64_t addr, uint64_t look,
			   const struct lp_frame **out)
{
	struct lp_proc *p = get_proc(s, pid);
	const struct lp_sym *jsym;

	/* A JIT map first when the process has one: libdwfl spans a module
	 * from its lowest to its highest mapping, and JIT code can sit in
	 * between (node maps part of its text far above the rest). */
	/* Looked for again while there is none: a JIT writes its map only
	 * once it has compiled something. */
	if (!p->jit.tried || (!p->jit.syms && lp_monotonic_ns() - p->jit.tried_ns > LP_REFRESH_NS)) {
		jit_load(&p->jit);
		p->jit.tried_ns = lp_monotonic_ns();
	}
	if (p->jit.syms && (jsym = jit_find(&p->jit, look))) {
		out[0] = lp_dict__frame(s->dict, LP_FRAME_JIT, 0, p->jit.path, jsym->name, "");
		return 1;
	}

	struct lp_dwmod *mod = proc_module(p, look);
	if (mod) {
		uint64_t start;
		const char *name = lp_dwmod__info(mod, &start, NULL);
		struct lp_symtab *t = module_symtab(s, mod);
		const char *fname;
		uint64_t bias;

		if (!name)
			name = "";
		/* libdwfl names the vDSO "[vdso: PID]": one name for all. */
		if (!strncmp(name, "[vdso", 5))
			name = "[vdso]";
		if (s->raw && name[0] == '/')
			return raw_frame(s, mod, name, look, out);
		if ((fname = function_name(s, mod, t, start, name, look)))
			return resolve_module(s, mod, name, fname, look, out);
		/* Still an address in the module's file, the same in every run
		 * (address-space randomization moves only the bias), which
		 * addr2line -e MODULE and lp-symbolize read. */
		out[0] = unresolved(s, lp_dwmod__bias(mod, &bias) ? addr - bias : addr, name);
		return 1;
	}
	jsym = jit_find(&p->jit, look);
	if (jsym)
		out[0] = lp_dict__frame(s->dict, LP_FRAME_JIT, 0, p->jit.path, jsym->name, "");
	else
		/* The uretprobe trampoline as a return address (a stack taken
		 * before the kernel recorded the original) starts the page:
		 * look, one byte lower, is not in it. */
		out[0] = unresolved(s, addr, in_uprobes_page(p, look) || in_uprobes_page(p, addr)
					     ? "[uprobes]" : "");
	return 1;
}

bool lp_symbolizer__mapped(struct lp_symbolizer *s, pid_t pid, uint64_t addr)
{
	struct lp_proc *p = get_proc(s, pid);

	return proc_module(p, addr) || in_uprobes_page(p, addr) || jit_find(&p->jit, addr);
}

bool lp_symbolizer__in_uprobes(struct lp_symbolizer *s, pid_t pid, uint64_t addr)
{
	return in_uprobes_page(get_proc(s, pid), addr);
}

const struct lp_frame *lp_symbolizer__uprobes_frame(struct lp_symbolizer *s, uint64_t addr)
{
	return unresolved(s, addr, "[uprobes]");
}

static void kallsyms_load(struct lp_symbolizer *s)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t len = 0, cap = 1 << 22, alloc = 0, k = 0;
	char *buf, *p, *end;

	s->kloaded = true;
	if (!f)
		return;
	/* Read whole (~10 MB) and parse in place: the names stay in the buffer,
	 * with no allocation per symbol.  sscanf on 200 000
	 * lines costs more than the kernel's formatting of them. */
	buf = lp_malloc(cap);
	for (size_t n; (n = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
		len += n;
		if (cap - len < 65536)
			buf = lp_realloc(buf, cap *= 2);
	}
	fclose(f);
	buf[len] = 0;
	s->knames = buf;
	for (p = buf; p < buf + len; p = end + 1) {
		char *nl = memchr(p, '\n', buf + len - p), *name, *mod;
		uint64_t addr;

		end = nl ? nl : buf + len;
		*end = 0;
		addr = strtoull(p, &name, 16);
		/* "ADDR T name" or "ADDR t name\t[module]"; text symbols only. */
		if (!addr || name[0] != ' ' || !name[1] || name[2] != ' ')
			continue;
		if (!strchr("tTwW", name[1]))
			continue;
		name += 3;
		mod = strchr(name, '\t');
		if (mod)
			*mod++ = 0;
		if (!mod && !strcmp(name, "__sched_text_start"))
			s->sched_start = addr;
		else if (!mod && !strcmp(name, "__sched_text_end"))
			s->sched_end = addr;
		if (s->nksyms == alloc) {
			alloc = alloc ? 2 * alloc : 65536;
			s->ksyms = lp_reallocarray(s->ksyms, alloc, sizeof(*s->ksyms));
		}
		s->ksyms[s->nksyms].start = s->ksyms[s->nksyms].end = addr;
		s->ksyms[s->nksyms].name = name;
		s->ksyms[s->nksyms].module = mod;
		s->nksyms++;
	}
	if (!s->nksyms)
		return;
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), sym_cmp);
	for (size_t i = 0; i < s->nksyms; i++)
		if (!k || s->ksyms[i].start != s->ksyms[k - 1].start)
			s->ksyms[k++] = s->ksyms[i];
	s->nksyms = k;
	for (size_t i = 0; i + 1 < k; i++)
		s->ksyms[i].end = s->ksyms[i + 1].start;
	/* The last symbol: give it a page, not the rest of the address space. */
	s->ksyms[k - 1].end = s->ksyms[k - 1].start + 4096;
}

static const struct lp_frame *resolve_kernel(struct lp_symbolizer *s, uint64_t addr,
					     uint64_t look)
{
	const struct lp_sym *sym;

	if (!s->kloaded)
		kallsyms_load(s);
	sym = s->nksyms ? sym_find(s->ksyms, s->nksyms, look) : NULL;
	if (sym && look < sym->end) {
		return lp_dict__frame(s->dict, LP_FRAME_KERNEL, 0,
				      sym->module ? sym->module : "[kernel.kallsyms]", sym->name, "");
	}
	return lp_dict__frame(s->dict, LP_FRAME_KERNEL, addr, "[kernel.kallsyms]", "", "");
}

static uint64_t cache_key(pid_t pid, uint32_t gen, uint64_t addr)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &pid, sizeof(pid));

	h = lp_hash_bytes(h, &gen, sizeof(gen));
	return lp_hashmap__key(lp_hash_bytes(h, &addr, sizeof(addr)));
}

static size_t cached(struct lp_symbolizer *s, pid_t pid, uint64_t addr, bool ret,
		     const struct lp_frame **out)
{
	uint64_t look = ret && addr ? addr - 1 : addr;
	struct lp_proc *p = pid < 0 ? NULL : get_proc(s, pid);
	uint32_t gen = p ? p->gen : 0, reports = p ? p->nreports : 0;
	uint64_t key = cache_key(pid, gen, look);
	struct lp_cached *c = lp_hashmap__get(&s->cache, key);
	size_t n;

	s->st.lookups++;
	/* An unresolved user address is retried once its entry is older than
	 * LP_REFRESH_NS: a refresh of the process's modules or JIT map may
	 * resolve it by then. */
	if (c && c->pid == pid && c->gen == gen && c->addr == look &&
	    (*c->frames[0]->symbol || pid < 0 ||
	     (c->reports == reports && lp_monotonic_ns() - c->when < LP_REFRESH_NS))) {
		s->st.cache_hits++;
		memcpy(out, c->frames, c->n * sizeof(*out));
		return c->n;
	}
	if (pid < 0) {
		out[0] = resolve_kernel(s, addr, look);
		n = 1;
	} else {
		n = resolve_user(s, pid, addr, look, out);
	}
	if (!c || c->n < n) {
		free(c);
		c = lp_malloc(offsetof(struct lp_cached, frames) + n * sizeof(c->frames[0]));
		lp_hashmap__put(&s->cache, key, c);
	}
	c->pid = pid;
	c->gen = gen;
	c->addr = look;
	c->n = n;
	memcpy(c->frames, out, n * sizeof(*out));
	c->when = *out[0]->symbol ? 0 : lp_monotonic_ns();
	c->reports = p ? p->nreports : 0;
	return n;
}

size_t lp_symbolizer__user_frames(struct lp_symbolizer *s, pid_t pid, uint64_t addr, bool ret,
				  const struct lp_frame **out)
{
	return cached(s, pid, addr, ret, out);
}

const struct lp_frame *lp_symbolizer__user(struct lp_symbolizer *s, pid_t pid,
					   uint64_t addr, bool ret)
{
	const struct lp_frame *out[LP_SYM_MAX_INLINE + 1];
	size_t n = cached(s, pid, addr, ret, out);

	return out[n - 1];
}

const struct lp_frame *lp_symbolizer__kernel(struct lp_symbolizer *s, uint64_t addr, bool ret)
{
	const struct lp_frame *out[1];

	cached(s, -1, addr, ret, out);
	return out[0];
}

void lp_symbolizer__set_options(struct lp_symbolizer *s, bool inlines, bool srclines)
{
	s->inlines = inlines;
	s->srclines = srclines;
}

void lp_symbolizer__load_kernel(struct lp_symbolizer *s)
{
	if (!s->kloaded)
		kallsyms_load(s);
}

bool lp_symbolizer__in_scheduler(struct lp_symbolizer *s, uint64_t addr)
{
	if (!s->kloaded)
		kallsyms_load(s);
	return addr >= s->sched_start && addr < s->sched_end;
}

void lp_symbolizer__set_saved_maps(struct lp_symbolizer *s, char *(*fn)(void *arg, pid_t pid),
				   void *arg)
{
	s->saved_maps = fn;
	s->saved_arg = arg;
}

void lp_symbolizer__set_raw(struct lp_symbolizer *s, bool raw)
{
	s->raw = raw;
}

void lp_symbolizer__set_demangle(struct lp_symbolizer *s, bool demangle)
{
	s->no_demangle = !demangle;
}

/* A file that opens and does not start as an ELF object does: a mapping
 * of data (ld.so.cache, a locale archive) or of a JIT's memfd, where a
 * stack's address is the unwinder's guess or JIT code, never something a
 * symbol table names. */
static bool readable_not_elf(const char *path)
{
	unsigned char magic[SELFMAG];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, magic, sizeof(magic));
	close(fd);
	return n >= 0 && (n < SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0);
}

static struct lp_file *open_file(struct lp_symbolizer *s, const char *path)
{
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, path, strlen(path)));
	struct lp_file *f = lp_hashmap__get(&s->files, key);

	if (f && !strcmp(f->path, path))
		return f;
	f = lp_calloc(1, sizeof(*f));
	f->path = lp_strdup(path);
	f->dw = lp_dwfile__open(path);
	f->mod = lp_dwfile__module(f->dw);
	f->not_elf = !f->mod && readable_not_elf(path);
	f->build_id = f->mod ? build_id_hex(f->mod) : lp_strdup("");
	/* A path hash collision replaces the older entry (leaked: rare). */
	lp_hashmap__put(&s->files, key, f);
	return f;
}

int lp_symbolizer__file(struct lp_symbolizer *s, const char *path, const char *build_id,
			uint64_t addr, const struct lp_frame **out, size_t *n)
{
	struct lp_file *f = open_file(s, path);
	uint64_t start;

	*n = 0;
	if (!f->mod)
		return f->not_elf ? 0 : -1;	/* 0: nothing there to name */
	if (build_id && *build_id && strcmp(build_id, f->build_id))
		return -2;
	lp_dwmod__info(f->mod, &start, NULL);
	struct lp_symtab *t = module_symtab(s, f->mod);
	const char *name = function_name(s, f->mod, t, start, path, addr);
	if (!name)
		return 0;
	*n = resolve_module(s, f->mod, path, name, addr, out);
	return 0;
}

void lp_symbolizer__stats(const struct lp_symbolizer *s, struct lp_symbolizer_stats *st)
{
	*st = s->st;
}

struct lp_restacked {
	const struct lp_frame *in;
	size_t n;
	const struct lp_frame *out[];
};

/* One input frame to output frames: a raw frame symbolized from its file,
 * anything else copied. */
static struct lp_restacked *restack_frame(struct lp_symbolizer *s, const struct lp_frame *f)
{
	uint64_t key = lp_hashmap__key(f->id);
	struct lp_restacked *r = lp_hashmap__get(&s->restacked, key);
	const struct lp_frame *out[LP_SYM_MAX_INLINE + 1];
	size_t n = 0;

	if (r && r->in == f)
		return r;
	if (f->kind == LP_FRAME_USER && f->addr && !*f->symbol && f->module[0] == '/' &&
	    !*f->srcline) {
		const char *id = f->build_id[0] ? f->build_id : NULL;
		int rc = lp_symbolizer__file(s, f->module, id, f->addr, out, &n);
		struct lp_file *file = open_file(s, f->module);

		if (rc < 0 && !file->warned) {
			file->warned = true;
			lp_error("%s: %s: its frames are left unsymbolized", f->module,
				 rc == -2 ? "not the build that was recorded (build-id differs)"
					  : "cannot read it");
		}
		if (rc < 0)
			n = 0;
		if (rc == 0 && n == 0)	/* no symbol there: keep the address */
			out[n++] = lp_dict__frame(s->dict, LP_FRAME_USER, f->addr, f->module, "", "");
	}
	if (!n)
		out[n++] = lp_dict__frame_copy(s->dict, f);
	free(r);
	r = lp_malloc(offsetof(struct lp_restacked, out) + n * sizeof(r->out[0]));
	r->in = f;
	r->n = n;
	memcpy(r->out, out, n * sizeof(*out));
	lp_hashmap__put(&s->restacked, key, r);
	return r;
}

const struct lp_stack *lp_symbolizer__restack(struct lp_symbolizer *s, const struct lp_stack *in)
{
	size_t cap = in->nframes * (1 + LP_SYM_MAX_INLINE) + 1, n = 0;
	const struct lp_frame **frames = lp_calloc(cap, sizeof(*frames));
	const struct lp_stack *out;

	for (size_t i = 0; i < in->nframes; i++) {
		struct lp_restacked *r = restack_frame(s, in->frames[i]);

		memcpy(frames + n, r->out, r->n * sizeof(*frames));
		n += r->n;
	}
	out = lp_dict__stack(s->dict, frames, n);
	free(frames);
	return out;
}
