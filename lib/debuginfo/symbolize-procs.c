/* symbolize-procs.c - the processes whose addresses are asked: their modules
 * (read from /proc/PID/maps, again when an address falls outside them, or
 * from saved maps once they are gone), forks answered by their parent,
 * exits reaped, perf JIT maps and the uprobes page. */
#include "debuginfo/symbolize.h"
#include "debuginfo/symbolize-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/util.h"
#include "debuginfo/procns.h"
#include "stream/perfmap.h"

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

bool lp_symbolize_in_uprobes_page(const struct lp_proc *p, uint64_t addr)
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
	char *file = p->nspid ? lp_procns__path(p->pid, p->jit.path) : lp_strdup(p->jit.path);
	lp_perfmap__free(p->jit.map);
	p->jit.map = lp_perfmap__new(file);
	p->jit.tried = p->jit.found = false;
	free(file);
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

struct lp_proc *lp_symbolize_get_proc(struct lp_symbolizer *s, pid_t pid)
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

struct lp_dwmod *lp_symbolize_proc_module(struct lp_proc *p, uint64_t addr)
{
	for (int depth = 0; p && depth <= LP_FORK_DEPTH; depth++, p = proc_parent(p)) {
		struct lp_dwmod *mod = lp_dwproc__module_at(p->dwp, addr);

		/* A miss rereads the maps, at most every LP_REFRESH_NS, except
		 * in a new process's first moments (ld.so still mapping
		 * libraries). */
		if (!mod && !lp_symbolize_in_uprobes_page(p, addr) &&
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
	struct lp_proc *p = lp_symbolize_get_proc(s, pid), *q;

	if (addr || !p->dwp)
		lp_symbolize_proc_module(p, addr);
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
void lp_symbolize_proc_free(struct lp_proc *p)
{
	lp_dwproc__free(p->dwp);
	lp_perfmap__free(p->jit.map);
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
		lp_symbolize_proc_free(p);
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
	lp_symbolize_module_symtab(s, mod);
}

void lp_symbolizer__prepare(struct lp_symbolizer *s, pid_t pid)
{
	uint64_t key = lp_hashmap__key((uint64_t)(uint32_t)pid + 1);
	struct lp_proc *p = lp_hashmap__get(&s->procs, key);

	if (!p)
		p = lp_symbolize_get_proc(s, pid);	/* reports it */
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

const char *lp_symbolize_jit_find(struct lp_proc *p, uint64_t addr)
{
	return lp_perfmap__find(p->jit.map, addr);
}

bool lp_symbolizer__mapped(struct lp_symbolizer *s, pid_t pid, uint64_t addr)
{
	struct lp_proc *p = lp_symbolize_get_proc(s, pid);

	return lp_symbolize_proc_module(p, addr) || lp_symbolize_in_uprobes_page(p, addr) ||
	       lp_symbolize_jit_find(p, addr);
}

bool lp_symbolizer__in_uprobes(struct lp_symbolizer *s, pid_t pid, uint64_t addr)
{
	return lp_symbolize_in_uprobes_page(lp_symbolize_get_proc(s, pid), addr);
}
