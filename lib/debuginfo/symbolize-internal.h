/* symbolize-internal.h - what the pieces of the symbolizer share
 * (symbolize.c: the lookups and their cache; symbolize-syms.c: modules'
 * symbol tables and the names they give; symbolize-procs.c: the
 * processes asked about; symbolize-kernel.c: the kernel's symbols): its
 * state, and the functions one piece calls in another. */
#ifndef LP_SYMBOLIZE_INTERNAL_H
#define LP_SYMBOLIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/hashmap.h"
#include "debuginfo/dwarf.h"

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
	struct lp_perfmap *map;	/* its /tmp/perf-PID.map (stream/perfmap.h) */
	bool tried;
	int64_t tried_ns;	/* when it was last looked for */
	bool found;		/* it had symbols then */
	char path[64];		/* as the process names it: its frames' module */
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
	int64_t when;		/* lp_symbolize_unresolved user frames: retried after a while, */
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

/* symbolize.c: an address no module names, MODULE+0xOFFSET or a bare
 * address; a looked-up address's frames from the cache (n, or 0). */
const struct lp_frame *lp_symbolize_unresolved(struct lp_symbolizer *s, uint64_t addr,
					       const char *module);
size_t lp_symbolize_cached(struct lp_symbolizer *s, pid_t pid, uint64_t addr, bool ret,
			   const struct lp_frame **out);

/* symbolize-syms.c: symbol tables, sorted; the symbol holding an address;
 * a module's table (read once); the name a frame gets. */
void lp_symbolize_symtab_free(struct lp_symtab *t);
int lp_symbolize_sym_cmp(const void *a, const void *b);
struct lp_sym *lp_symbolize_sym_find(struct lp_sym *syms, size_t n, uint64_t addr);
void lp_symbolize_syms_finish(struct lp_sym *syms, size_t *n, char **names,
			      int (*cmp)(const void *, const void *), bool unversion);
struct lp_symtab *lp_symbolize_module_symtab(struct lp_symbolizer *s, struct lp_dwmod *mod);
const char *lp_symbolize_function_name(struct lp_symbolizer *s, struct lp_dwmod *mod,
				       struct lp_symtab *t, uint64_t mstart, const char *modname,
				       uint64_t look);

/* symbolize-procs.c: a process's record (made on first ask), the module
 * holding an address, its uprobes page, its perf JIT map. */
bool lp_symbolize_in_uprobes_page(const struct lp_proc *p, uint64_t addr);
struct lp_proc *lp_symbolize_get_proc(struct lp_symbolizer *s, pid_t pid);
struct lp_dwmod *lp_symbolize_proc_module(struct lp_proc *p, uint64_t addr);
void lp_symbolize_proc_free(struct lp_proc *p);
/* The name of p's JIT symbol holding addr (its perf map), or NULL. */
const char *lp_symbolize_jit_find(struct lp_proc *p, uint64_t addr);

/* symbolize-kernel.c: a kernel address's frame. */
const struct lp_frame *lp_symbolize_resolve_kernel(struct lp_symbolizer *s, uint64_t addr,
						   uint64_t look);

#endif
