/* pyprobe.h - where lp-trace's python:[MODULE:]NAME probes go in a CPython
 * 3.11 to 3.13 interpreter, found in the binary alone (Debian's python3.11
 * has no .symtab: its opcode handlers have no names): the first branch of
 * the handlers of RESUME and its specialized form (a function starts) and
 * of 3.11's RETURN_VALUE (a frame returns), each an instruction the kernel
 * emulates after its breakpoint, reached on every pass through the handler
 * and on no other path; from 3.12 on, the entry of the function the
 * returns pop their frame with.  And what they match: the names' globs, as
 * the kernel reads them (code points), and the names it sends back, as
 * UTF-8. */
#ifndef LP_PYPROBE_H
#define LP_PYPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/trace.h"
#include "capture/trace/tracecal.h"

#define LP_PYPROBE_MAX_SITES 4	/* RESUME's specialized form, RETURN_VALUE, RETURN_CONST, RESUME */

struct lp_pyprobe_site {
	uint64_t vaddr;		/* link-time address of the branch */
	uint64_t offset;	/* its file offset */
	unsigned flags;		/* LP_PROBE_F_PYSTART, LP_PROBE_F_PYRET (| LP_PROBE_F_PYPOP) */
	enum lp_insn insn;	/* its class (a jcc: emulated) */
	/* Every Python call passes it: taken away once the code objects
	 * matched are watched (lib/capture/trace/pywatch.c). */
	bool every;
};

struct lp_pyprobe {
	unsigned major, minor;
	struct lp_trace_py conf;	/* offsets and _PyRuntime; no globs */
	struct lp_pyprobe_site sites[LP_PYPROBE_MAX_SITES];
	size_t nsites;
	size_t file;		/* which of the files holds the interpreter */
	/* A function's calls can be seen alone (lib/capture/trace/pywatch.c):
	 * in 3.11 where RESUME has a site of its own (its code does not join
	 * RESUME_QUICK's), its RESUME kept un-specialized; from 3.12 on by a
	 * hardware watchpoint on its RESUME too. */
	bool watchable;
	/* PyTraceBack_Here's entry (LP_PROBE_F_PYUNWIND), when .dynsym has it:
	 * where an exception reaches a frame. */
	struct lp_pyprobe_site unwind;
	bool has_unwind;
};

/* The sites in the interpreter: the first of files[0..nfiles) with
 * CPython in it (_PyRuntime in its .dynsym: the executable, or the
 * libpython of a --enable-shared build), which out->file says.  probe:
 * the probe's text, for messages; verbose says where each site is.  0, or
 * -1 after saying why. */
int lp_pyprobe__find(const char *const *files, size_t nfiles, const char *probe, bool verbose,
		     struct lp_pyprobe *out);

/* The globs of python:[MODULE:]NAME (probe, as written, for messages;
 * module NULL when it has none), UTF-8, into conf's as code points: NAME
 * a qualified name or a glob of them, MODULE a module's dotted name or a
 * glob of them, which the code's file must match (struct lp_trace_py).
 * 0, or -1 after saying why. */
int lp_pyprobe__globs(const char *probe, const char *module, const char *name,
		      struct lp_trace_py *conf);
/* For messages: the files of module's code ("a/b.py or a/b/__init__.py,
 * or <frozen a.b>"), malloc'd. */
char *lp_pyprobe__module_where(const char *module);
/* A name a python: probe's event carries (struct lp_trace_event_py): len
 * characters of kind bytes each, of which chars holds the first max (with
 * tail, the last), as UTF-8 with "..." where it was cut; malloc'd, or NULL
 * when kind is none (the str could not be read). */
char *lp_pyprobe__str(unsigned kind, unsigned len, const unsigned char *chars, unsigned max,
		      bool tail);

#endif
