/* dwarf.h - the one owner of libdw and libdwfl: a process's modules and a
 * file's (opened with the build-id and .gnu_debuglink lookups libdwfl makes),
 * their symbol tables, source lines, the chain of inlined calls at an
 * address, call frame information, and for lp-trace's probes a file's
 * DWARF read from its ELF: functions, parameters, variables in scope, value
 * types and locations, line tables.  Everything else reaches debug
 * information through here; only the DWARF unwinder (unwind.c) also uses
 * libdwfl, for its thread and frame interface (lp_dwproc__dwfl).
 *
 * Addresses: a module's are run-time addresses (the file's ELF virtual
 * addresses plus its bias); a file's opened alone sit at bias 0.  Names
 * returned point into libdw's memory: valid while their owner lives. */
#ifndef LP_DWARF_H
#define LP_DWARF_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct Dwfl;

/* --- modules: a process's, or one file's ------------------------------ */

struct lp_dwproc;	/* a process's mapped modules */
struct lp_dwfile;	/* a file opened by path, at address 0 */
struct lp_dwmod;	/* one module of either */

/* NULL when libdwfl cannot start one. */
struct lp_dwproc *lp_dwproc__new(void);
void lp_dwproc__free(struct lp_dwproc *p);
/* Reads pid's maps, adding the modules mapped since the last report (a
 * process that is gone adds none), or, when maps is not NULL, takes them
 * from that text (its /proc/PID/maps as read while it ran).  foreign: its
 * file tree is not ours (a container's): its files are opened now, through
 * /proc/PID/root.  Returns how many modules it has. */
size_t lp_dwproc__report(struct lp_dwproc *p, pid_t pid, bool foreign, const char *maps);
/* A process that is gone, its modules as a recording said (lp-symbolize's
 * copied stacks): each file opened from path, named name (a path, or
 * "[vdso]"), its ELF addresses at bias below the run-time ones.  Replaces
 * what was reported; a file that cannot be read, or overlaps one reported
 * before it, is left out.  Returns how many modules it has. */
struct lp_dwfile_at {
	const char *name, *path;
	uint64_t bias;
};
size_t lp_dwproc__report_files(struct lp_dwproc *p, const struct lp_dwfile_at *files, size_t n);
/* The module spanning addr, or NULL. */
struct lp_dwmod *lp_dwproc__module_at(struct lp_dwproc *p, uint64_t addr);
void lp_dwproc__each_module(struct lp_dwproc *p, void (*fn)(struct lp_dwmod *, void *),
			    void *arg);
/* For the unwinder's dwfl_attach_state and dwfl_getthread_frames. */
struct Dwfl *lp_dwproc__dwfl(struct lp_dwproc *p);
/* The CFI of pc's module says the return address at pc is undefined: the
 * outermost frame of a thread.  .eh_frame first, else .debug_frame.  Or no
 * CFI covers pc and it is in the code at its module's entry point (ld.so's
 * _start, which has none). */
bool lp_dwproc__outermost(struct lp_dwproc *p, uint64_t pc);

/* Never NULL; lp_dwfile__module is NULL when the file cannot be read. */
struct lp_dwfile *lp_dwfile__open(const char *path);
struct lp_dwmod *lp_dwfile__module(struct lp_dwfile *f);
void lp_dwfile__free(struct lp_dwfile *f);

/* The module's name (libdwfl's: a path, "[vdso: PID]"), its lowest and
 * highest run-time addresses (each may be NULL). */
const char *lp_dwmod__info(struct lp_dwmod *m, uint64_t *start, uint64_t *end);
/* One pointer the caller may keep with the module (NULL at first). */
void **lp_dwmod__userdata(struct lp_dwmod *m);
/* The build-id's bytes: their count, 0 or less when it has none. */
int lp_dwmod__build_id(struct lp_dwmod *m, const unsigned char **bits);
/* The load bias (run-time less file addresses); false when the file cannot
 * be read (*bias then 0). */
bool lp_dwmod__bias(struct lp_dwmod *m, uint64_t *bias);
/* Its ELF file (the debug file's symbols are libdwfl's concern), or NULL. */
Elf *lp_dwmod__elf(struct lp_dwmod *m, uint64_t *bias);
/* Its symbol table (the debug file's when the file has none, else .dynsym):
 * how many entries, and entry i (1 <= i < count) with its run-time address
 * in *addr (sym->st_value is the file's); NULL for a bad i. */
int lp_dwmod__nsyms(struct lp_dwmod *m);
const char *lp_dwmod__sym(struct lp_dwmod *m, int i, GElf_Sym *sym, uint64_t *addr,
			  GElf_Word *shndx);
/* The source line of run-time address addr: its file (NULL when unknown)
 * and *line (0 when unknown). */
const char *lp_dwmod__line(struct lp_dwmod *m, uint64_t addr, int *line);
/* The start (file address) of the function holding file address vaddr,
 * from its FDE in .eh_frame_hdr's table; false when not known. */
bool lp_dwmod__fde_start(struct lp_dwmod *m, uint64_t vaddr, uint64_t *start);
/* Whether vaddr (the file's address) is in one of its executable
 * segments; true when the module has no ELF to tell. */
bool lp_dwmod__in_code(struct lp_dwmod *m, uint64_t vaddr);

/* One function of the chain at an address: an inlined copy, or the real
 * function it is inlined into (the last of a chain). */
struct lp_dwfunc {
	const char *name;	/* DW_AT_name, through abstract origins; NULL: none */
	const char *linkage;	/* DW_AT_linkage_name likewise; NULL: none */
	bool inlined;		/* DW_TAG_inlined_subroutine */
	bool non_mangled;	/* its language does not mangle (C, Fortran 77...) */
	/* An inlined copy's call site, in its caller: the file (NULL when
	 * unknown) and line; call_known: both attributes were there. */
	const char *call_file;
	uint64_t call_line;
	bool call_known;
};

/* The functions holding run-time address addr, innermost first: the
 * inlined copies from the innermost out, then the real function.  Fills up
 * to max; returns how many (0: no DWARF function there).  dwarf_getscopes
 * costs milliseconds: callers cache. */
size_t lp_dwmod__funcs(struct lp_dwmod *m, uint64_t addr, struct lp_dwfunc *out, size_t max);

/* --- one file's DWARF read from its ELF (lp-trace's probes) ------------- */

struct lp_dwarf;

/* A stripped file's separate debug file, where gdb looks for it: by
 * build-id under /usr/lib/debug, or by its .gnu_debuglink name beside it,
 * in .debug/ beside it, or under /usr/lib/debug.  A path through a
 * process's root (/proc/PID/root/..., lp_procns__path) has its debug file
 * looked for by build-id in that process's tree, then in ours, and under
 * /usr/lib/debug of that tree.  malloc'd; NULL: none. */
char *lp_dwarf__debug_file(Elf *elf, const char *path);

/* Link-time address vaddr of elf -> its file offset *off, through the
 * PT_LOAD segment holding it (and *avail, unless NULL: the segment's bytes
 * in the file from there).  0, or -1 when no segment holds it. */
int lp_dwarf__file_offset(Elf *elf, uint64_t vaddr, uint64_t *off, uint64_t *avail);
/* The DWARF of the file m is (an lp_dwfile's module; NULL: none): its own,
 * or its separate debug file's, found once with its symbols by the
 * lookups lp_dwarf__debug_file makes first.  code: the file itself (its
 * .eh_frame).  Never NULL; lp_dwarf__has_dwarf says whether there is
 * DWARF.  code and m must outlive it. */
struct lp_dwarf *lp_dwarf__open(Elf *code, struct lp_dwmod *m);
bool lp_dwarf__has_dwarf(const struct lp_dwarf *d);
/* The separate debug file the DWARF is read from, and its ELF: NULL (and
 * *elf NULL) when the DWARF is the file's own or there is none. */
const char *lp_dwarf__debug_file_of(const struct lp_dwarf *d, Elf **elf);
void lp_dwarf__free(struct lp_dwarf *d);

/* The canonical frame address at file address pc as a DWARF register plus
 * an offset, from .eh_frame, else .debug_frame.  -1: not that simple. */
int lp_dwarf__cfa(struct lp_dwarf *d, uint64_t pc, unsigned *reg, long long *off);
/* The code range [*lo, *hi) of the CFI row that starts at vaddr (a
 * function's first row, when vaddr is a function's start).  -1: none. */
int lp_dwarf__fde_range(struct lp_dwarf *d, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/* How a value is printed and read, from its DWARF type. */
enum lp_dwtype_kind {
	LP_DWT_VOID,		/* no type */
	LP_DWT_INT,		/* signed (enums too) */
	LP_DWT_UINT,
	LP_DWT_BOOL,
	LP_DWT_CHAR,
	LP_DWT_PTR,
	LP_DWT_STR,		/* a pointer to a 1-byte character */
	LP_DWT_OTHER,		/* not capturable: a struct, a float... */
};
struct lp_dwtype {
	enum lp_dwtype_kind kind;
	int size;		/* bytes */
	const char *name;	/* LP_DWT_OTHER: the type's name, or NULL */
};

struct lp_dwparam {
	const char *name;	/* NULL: unnamed */
	struct lp_dwtype type;
	char type_name[96];	/* as C writes it: "const char *" */
	uint64_t die;		/* its DIE (lp_dwarf__param_path) */
};

/* The function starting at file address addr: its return type and its
 * first max formal parameters (*n of them).  false: no DWARF for it. */
bool lp_dwarf__function(struct lp_dwarf *d, uint64_t addr, struct lp_dwtype *ret,
			struct lp_dwparam *params, size_t max, size_t *n);

/* A member read through a variable, as C writes it: "r->conn",
 * "s.hdr.len", "r->conn->peer.port" (at most LP_DW_MAX_DEREF pointers
 * followed; a C++ reference is followed by '.').  The value is at the
 * variable's own storage + off0 (only a variable in memory has members
 * there, s.len), then, for each pointer followed, at what was read there +
 * deref[i]. */
#define LP_DW_MAX_DEREF 3
struct lp_dwpath {
	long long off0;
	int nderef;
	long long deref[LP_DW_MAX_DEREF];
	struct lp_dwtype type;	/* the member's */
	char type_name[96];
};
/* expr ("r->conn"), whose first namelen bytes name the parameter whose
 * DIE is param (lp_dwparam.die), its members after: the path into *out,
 * 0; -1 with why (no such member, not a pointer, a bit-field...). */
int lp_dwarf__param_path(struct lp_dwarf *d, uint64_t param, const char *expr, size_t namelen,
			 struct lp_dwpath *out, char *why, size_t whysize);

/* One out-of-line function of the DWARF (lp-trace --list). */
struct lp_dwfuncinfo {
	uint64_t addr;		/* its entry, a file address */
	const char *name;
	const char *decl_file;	/* NULL: unknown */
	int decl_line;		/* 0: unknown */
	bool lines;		/* its unit has a line table */
	const struct lp_dwparam *params;
	size_t nparams;		/* those in params: at most LP_DW_MAX_PARAMS */
};
#define LP_DW_MAX_PARAMS 32
/* Calls fn on every function with code of every unit, in no order. */
void lp_dwarf__each_function(struct lp_dwarf *d, void (*fn)(const struct lp_dwfuncinfo *, void *),
			     void *arg);
/* The source lines of the function starting at file address addr: its
 * file (as its unit's line table names it) and the lines from its
 * declaration to the last of its own code (the lines of what is inlined
 * into it from elsewhere not counted; their call lines are).  false: no
 * DWARF function starts there, or it has no line table. */
bool lp_dwarf__func_lines(struct lp_dwarf *d, uint64_t addr, const char **file, int *lo, int *hi);

/* One inlined call or lexical block of a function (lp-trace --blocks). */
struct lp_dwnode {
	bool inlined;		/* an inlined call; else a lexical block */
	int parent;		/* the node it is in (an index); -1: the function */
	int depth;		/* 1: in the function itself, not in another node */
	uint64_t (*ranges)[2];	/* its code, [lo, hi) file addresses, in address order */
	size_t nranges;		/* 0: none (a block the compiler left empty) */
	/* An inlined call: the callee (fn.name) and its call site
	 * (fn.call_file, fn.call_line), and where the call starts
	 * (DW_AT_entry_pc, else its lowest address; 0: no code). */
	struct lp_dwfunc fn;
	uint64_t entry;
	/* A block: the file of the function or inlined callee it is in (as
	 * the line table names it; NULL: unknown), its lines (those of the
	 * rows of its code, code inlined into it at its call's line; 0:
	 * none), and the names of the variables declared in it. */
	const char *file;
	int lo, hi;
	const char **vars;
	size_t nvars;
};
/* The inlined calls and lexical blocks of the function starting at file
 * address addr, nested: a tree in preorder (a node before those it holds,
 * each's in address order), *n nodes in *nodes (lp_dwnodes__free).  false:
 * no DWARF function starts there. */
bool lp_dwarf__structure(struct lp_dwarf *d, uint64_t addr, struct lp_dwnode **nodes, size_t *n);
void lp_dwnodes__free(struct lp_dwnode *nodes, size_t n);

/* One copy of a function inlined into another (lp_dwarf__inlined_copies). */
struct lp_dwcopy {
	const char *caller;	/* the out-of-line function it is in; NULL: unnamed */
	struct lp_dwfunc fn;	/* the inlined function, its call site */
	uint64_t entry;		/* where it starts, a file address; 0: no code */
};
/* Calls fn on each copy of the function named name inlined anywhere in d
 * (its DW_AT_name, through abstract origins); returns how many.  A walk
 * of every unit: for an error's hint, not a probe's every use. */
size_t lp_dwarf__inlined_copies(struct lp_dwarf *d, const char *name,
				void (*fn)(const struct lp_dwcopy *, void *), void *arg);

/* Where a variable lives at an address. */
#define LP_DWLOC_ADDR 0x100u	/* reg: none; off is a fixed address */
#define LP_DWLOC_CFA 0x101u	/* reg: the canonical frame address */
struct lp_dwloc {
	bool mem;		/* in memory at reg + off; else in register reg */
	unsigned reg;		/* a DWARF register number, or LP_DWLOC_* */
	long long off;
	/* reg == LP_DWLOC_CFA: the CFA at the address, a register + offset */
	unsigned cfa_reg;
	long long cfa_off;
};

struct lp_dwscope;

/* The scopes at file address pc of compilation unit cu (lp_dwline.cu):
 * the variables a line probe can name, those of the functions an inlined
 * copy is inlined into too.  Never NULL. */
struct lp_dwscope *lp_dwarf__scope(struct lp_dwarf *d, uint64_t cu, uint64_t pc);
void lp_dwscope__free(struct lp_dwscope *sc);
/* The innermost variable or parameter called name in scope: its type in
 * *t; it is the one lp_dwscope__location reads.  false: none. */
bool lp_dwscope__var(struct lp_dwscope *sc, const char *name, struct lp_dwtype *t);
/* The members in expr after its first namelen bytes, which name the
 * variable lp_dwscope__var found last: as lp_dwarf__param_path. */
int lp_dwscope__path(struct lp_dwscope *sc, const char *expr, size_t namelen,
		     struct lp_dwpath *out, char *why, size_t whysize);
/* One parameter or local variable in scope (lp-trace --vars). */
struct lp_dwvar {
	const char *name;	/* NULL: unnamed */
	bool param;
	const char *func;	/* the function it belongs to (an inlined copy's name) */
	bool inlined;		/* func is a copy inlined there */
	struct lp_dwtype type;
	char type_name[96];
	bool has_const;		/* no location but a constant value (DW_AT_const_value) */
	long long const_value;
};
/* The parameters and local variables in scope at the scope's pc, the
 * innermost block's first, out through the functions it is inlined into
 * (the unit's globals, which lp_dwscope__var also finds, not among them):
 * their count. */
size_t lp_dwscope__nvars(struct lp_dwscope *sc);
/* The i-th of them into *v, made the one lp_dwscope__location reads. */
void lp_dwscope__var_at(struct lp_dwscope *sc, size_t i, struct lp_dwvar *v);
/* Where that variable is at pc: 0; 1: it has no location at all; -1 with
 * why (optimized out there, an expression not a register, an offset or an
 * address). */
int lp_dwscope__location(struct lp_dwscope *sc, struct lp_dwloc *loc, char *why, size_t whysize);

/* One row of a line table that names a file. */
struct lp_dwline {
	const char *file;
	int line;
	uint64_t addr;		/* file address */
	bool valid;		/* line and addr were read */
	bool stmt, end;		/* is_stmt; end_sequence */
	uint64_t cu;		/* its compilation unit, for the calls below */
};
/* Calls fn on every such row of every unit, in order. */
void lp_dwarf__each_line(struct lp_dwarf *d, void (*fn)(const struct lp_dwline *, void *),
			 void *arg);
/* The line of the row of unit cu (a DIE offset, as lp_dwline's) whose
 * code holds addr, stated or not (is_stmt), and its file: false when no
 * row does. */
bool lp_dwarf__line_at(struct lp_dwarf *d, uint64_t cu, uint64_t addr, const char **file,
		       int *line);
/* The innermost function or inlined copy holding pc: an identity (its DIE's
 * offset); 0: none. */
uint64_t lp_dwarf__func_at(struct lp_dwarf *d, uint64_t cu, uint64_t pc);
/* The ranges [lo[i], hi[i]) of the real function holding pc (the out-of-line
 * one an inlined copy is in), those under 1 MiB: how many, or -1 when it has
 * none or more than max. */
int lp_dwarf__func_ranges(struct lp_dwarf *d, uint64_t cu, uint64_t pc, uint64_t *lo,
			  uint64_t *hi, size_t max);

#endif
