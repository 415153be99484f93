/* probe.h - lp-trace's probe specifications: parsing, and resolution with
 * libelf/libdw into attach points (a file and offset for a uprobe, a system
 * call number, a tracepoint) with the values to capture there.
 *
 *   FUNC  FUNC(ARG,...)  LIB:FUNC  FUNC+OFF  0xADDR  FILE.c:LINE[(VAR,...)]
 *   (an ARG or VAR may read members: r->conn->fd, local.hdr.len)
 *   syscall:NAME  tp:SUBSYS:EVENT  usdt:[FILE:]PROVIDER:NAME  python:[MODULE:]NAME
 */
#ifndef LP_PROBE_H
#define LP_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/trace.h"
#include "capture/trace/tracecal.h"

enum lp_probe_type {
	LP_PROBE_FUNC,		/* entry + return: a span */
	LP_PROBE_OFFSET,	/* FUNC+OFF or an address: a point event */
	LP_PROBE_LINE,		/* FILE:LINE: a point event */
	LP_PROBE_SYSCALLS,	/* syscall:NAME: a span */
	LP_PROBE_TRACEPOINT,	/* tp:SUBSYS:EVENT: a point event */
	LP_PROBE_USDTS,		/* usdt:[FILE:]PROVIDER:NAME: a point event */
	LP_PROBE_PYTHON,	/* python:[MODULE:]NAME: a span per call of the Python functions named */
};

/* How a function's returns are seen (lp-trace --returns). */
enum lp_returns {
	LP_RETURNS_AUTO,	/* a uretprobe where it is safe, else LP_RETURNS_INSN */
	LP_RETURNS_URETPROBE,	/* cheap, but rewrites the return address on the stack */
	LP_RETURNS_INSN,	/* uprobes on the function's ret (and tail jmp) instructions */
};

struct lp_probe_spec {
	enum lp_probe_type type;
	char *text;		/* as written */
	char *lib;		/* LIB of LIB:FUNC, or NULL: the executable */
	char *func;		/* FUNC; NULL for an address */
	uint64_t off;		/* FUNC+OFF, or the address */
	char *file;		/* FILE of FILE:LINE */
	int line;
	char *name;		/* syscall NAME, tracepoint SUBSYS:EVENT, USDT NAME,
				 * python: NAME (a glob of qualified names) */
	char *provider;		/* USDT PROVIDER (its FILE in lib, or NULL) */
	char *module;		/* python: MODULE, or NULL */
	char **vars;		/* (ARG,...) or (VAR,...) */
	size_t nvars;
	/* A C++ function's parameter list, "(int, char**)", as written:
	 * FUNC(PARAMS)(ARG,...), or FUNC(PARAMS) alone, then also read as
	 * FUNC(ARG,...) when no function has those parameters (params_or_args). */
	char *params;
	bool params_or_args;
	bool all_args;		/* --args */
	bool no_demangle;	/* lp-trace --no-demangle: spans named by the symbol */
	enum lp_returns returns;	/* lp-trace --returns */
};

/* How a captured value is printed. */
enum lp_value_type {
	LP_VAL_INT,		/* signed, `size` bytes */
	LP_VAL_UINT,
	LP_VAL_BOOL,
	LP_VAL_CHAR,
	LP_VAL_PTR,		/* hex */
	LP_VAL_STR,		/* a C string read at capture, up to LP_TRACE_STR_MAX - 1 bytes */
};

struct lp_probe_value {
	char *name;
	enum lp_value_type type;
	int size;
};

/* One place to attach: a probe may resolve to several (inlined copies of a
 * line, several processes). */
struct lp_probe_point {
	const struct lp_probe_spec *spec;
	char *name;		/* the probe's name in the stream */
	char *copy;		/* a function's compiled copy: its clone suffix ("isra.0") */
	char *path;		/* binary (uprobes) */
	uint64_t offset;	/* file offset to attach at */
	int sysnr;		/* LP_PROBE_SYSCALLS */
	char *tp_subsys, *tp_event;	/* LP_PROBE_TRACEPOINT */
	char *usdt_provider, *usdt_name;	/* LP_PROBE_USDTS, in path */
	struct lp_trace_probe cfg;	/* what the BPF side needs */
	enum lp_insn insn;	/* the class of the probed instruction (uprobes) */
	struct lp_probe_value vals[LP_TRACE_MAX_CAPS];
	size_t nvals;
	bool has_ret;
	struct lp_probe_value ret;
	/* LP_PROBE_ENTRY: a uretprobe (returns URETPROBE), or uprobes on the
	 * instructions that leave the function (INSN): at file offset
	 * rets[i].offset, lp_return's cookie LP_RET_COOKIE(id, rets[i].kind,
	 * rets[i].reg, rets[i].off); ret_insn the costliest class among them.
	 * returns_why: why not a uretprobe.  dl_gate: INSN only because a
	 * library the program may load later could throw through a uretprobe
	 * (lib/capture/trace/dlgate.c): the tracer may arm a uretprobe per call
	 * until one that can is loaded, rets ready for then.  walks: "X calls
	 * backtrace", when a uretprobe would cut such a backtrace short. */
	enum lp_returns returns;
	char *returns_why;
	bool dl_gate;
	char *walks;
	struct lp_ret_point {
		uint64_t offset;
		unsigned kind, reg;	/* LP_RET_*, DWARF register */
		uint32_t off;		/* from the function's start */
	} *rets;
	size_t nrets;
	enum lp_insn ret_insn;
	/* LP_PROBE_PY: the interpreter's offsets and the glob (every point
	 * of a python: probe has the same); the opcode whose handler the
	 * point is at (or PyTraceBack_Here), and whether the code objects it
	 * matches may have their returns watched (lib/capture/trace/pywatch.c:
	 * a name without a glob, an interpreter whose RESUME has a site of
	 * its own, hardware watchpoints that fire). */
	struct lp_trace_py *py;
	bool py_every;		/* LP_PROBE_PY: a site every call passes (pyprobe.h) */
	bool py_watch;
};

/* Parses one PROBE argument; NULL after reporting why on stderr. */
struct lp_probe_spec *lp_probe_spec__parse(const char *text, bool all_args);
void lp_probe_spec__free(struct lp_probe_spec *spec);

/* Resolves a uprobe spec (FUNC, LIB:FUNC, FUNC+OFF, address, FILE:LINE, usdt:) in
 * the context of executable `exe` run by `pid` (0 for a command not yet
 * started: libraries are then looked up in the usual directories).
 * Appends to *points (*n of them).  -1 after reporting on stderr.
 * `verbose` reports choices (endbr64 skipped, .dynsym used) on stderr. */
int lp_probe__resolve(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
		      bool verbose, struct lp_probe_point **points, size_t *n);

/* syscall:NAME -> its number; -1 when unknown. */
int lp_syscall__number(const char *name);

/* Names of a system call's arguments from tracefs, whether each is a
 * pointer, or a (signed 32-bit) int; fills up to 6, returns how many; 0 when
 * tracefs has no format for it. */
int lp_syscall__args(const char *name, char names[6][32], bool ptr[6], bool isint[6]);

/* The tracefs directory, mounting tracefs at /sys/kernel/tracing when it
 * is not (saying so on stderr); NULL after reporting why. */
const char *lp_tracefs(void);

void lp_probe_point__fini(struct lp_probe_point *p);

/* Says on stderr how function probe p's returns are probed at their
 * instructions, and why (lp-trace -v). */
void lp_probe_point__say_returns(const struct lp_probe_point *p);

/* The file a FUNC, LIB:FUNC or FILE:LINE spec resolves in: exe, or the
 * library LIB (mapped by pid, else in the library directories).
 * malloc'd; NULL after reporting why. */
char *lp_probe__path(const struct lp_probe_spec *spec, const char *exe, pid_t pid);

/* --- discovery (lp-trace --list, --lines, --vars) ----------------------
 * The questions lp_probe__resolve answers for one probe, asked of a file
 * opened once, answered by the same code. */

struct lp_probe_file;

/* path's symbols and DWARF (its debug file's when it is stripped); exe:
 * the executable that runs it (its hazards count for returns), or NULL.
 * NULL after reporting why. */
struct lp_probe_file *lp_probe_file__open(const char *path, const char *exe);
void lp_probe_file__free(struct lp_probe_file *f);
struct lp_dwarf *lp_probe_file__dwarf(struct lp_probe_file *f);
/* Its separate debug file, NULL when none was used. */
const char *lp_probe_file__debug_path(const struct lp_probe_file *f);
/* Only its dynamic symbols are known (no .symtab, no debug file). */
bool lp_probe_file__stripped(const struct lp_probe_file *f);

/* Function symbol i (what FUNC names); false past the last. */
struct lp_probe_func {
	const char *name;
	uint64_t addr, size;	/* link-time address; size 0: unknown */
	bool ifunc;		/* an IFUNC resolver */
};
bool lp_probe_file__func(const struct lp_probe_file *f, size_t i, struct lp_probe_func *out);
/* How lp-trace FUNC (--returns auto) sees function i's returns:
 * LP_RETURNS_URETPROBE, LP_RETURNS_INSN with why not a uretprobe, or -1:
 * it would refuse to trace it, why. */
int lp_probe_file__returns(struct lp_probe_file *f, size_t i, char *why, size_t whysize);
/* FUNC of spec (LP_PROBE_FUNC): its address and symbol size (0:
 * unknown).  -1 after lp-trace's message. */
int lp_probe_file__find(struct lp_probe_file *f, struct lp_probe_spec *spec, uint64_t *vaddr,
			uint64_t *size);

/* One place lp-trace FILE:LINE probes: a function or inlined copy with
 * code at the line. */
struct lp_probe_site {
	int line;
	uint64_t addr;		/* the address chosen in the line (file address) */
	uint64_t cu;		/* its unit (lp_dwarf__scope) */
	enum lp_insn insn;	/* its class: what a hit costs */
	const char *why;	/* LP_INSN_STEPPED: why no cheaper place; static */
};
/* The sites of lines spec->line..hi of spec->file (LP_PROBE_LINE), *n of
 * them, in line order.  One line (hi == spec->line) with none: -1 after
 * lp-trace's message; a range with none: 0 and *n 0. */
int lp_probe_file__sites(struct lp_probe_file *f, const struct lp_probe_spec *spec, int hi,
			 struct lp_probe_site **sites, size_t *n);
/* The instructions of the function holding pc (of unit cu, as a site's),
 * decoded into flow (debuginfo/insnflow.h).  -1 when they cannot be. */
struct lp_insnflow;
int lp_probe_file__flow(struct lp_probe_file *f, uint64_t cu, uint64_t pc, struct lp_insnflow *flow);
/* Whether lp-trace FILE:LINE(name) captures name at site: 0; -1 with
 * lp-trace's message in why. */
int lp_probe_file__capture(struct lp_probe_file *f, const struct lp_probe_spec *spec,
			   const struct lp_probe_site *site, const char *name, char *why,
			   size_t whysize);

#endif
