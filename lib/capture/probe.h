/* probe.h - lp-trace's probe specifications: parsing, and resolution with
 * libelf/libdw into attach points (a file and offset for a uprobe, a system
 * call number, a tracepoint) with the values to capture there.
 *
 *   FUNC  FUNC(ARG,...)  LIB:FUNC  FUNC+OFF  0xADDR  FILE.c:LINE[(VAR,...)]
 *   syscall:NAME  tp:SUBSYS:EVENT  usdt:[FILE:]PROVIDER:NAME  python:[MODULE:]NAME
 */
#ifndef LP_PROBE_H
#define LP_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/trace.h"
#include "capture/tracecal.h"

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
	 * returns_why: why not a uretprobe. */
	enum lp_returns returns;
	char *returns_why;
	struct lp_ret_point {
		uint64_t offset;
		unsigned kind, reg;	/* LP_RET_*, DWARF register */
		uint32_t off;		/* from the function's start */
	} *rets;
	size_t nrets;
	enum lp_insn ret_insn;
	/* LP_PROBE_PY: the interpreter's offsets and the glob (every point
	 * of a python: probe has the same). */
	struct lp_trace_py *py;
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

#endif
