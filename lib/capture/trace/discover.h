/* discover.h - what can be probed: lp-trace --list, --lines, --blocks and
 * --vars.
 * Each answer comes from the code that resolves probes (capture/trace/probe.h),
 * so what is listed as probeable is what lp-trace accepts.  Output: one
 * tab-separated line per item (man/lp-trace.1, DISCOVERY). */
#ifndef LP_DISCOVER_H
#define LP_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "capture/trace/probe.h"

/* --list [PATTERN]: the functions and USDT probes of each file (files[0]
 * the executable, exe, whose functions are named without a file; the
 * others as FILE:FUNC) whose name matches the glob pattern (NULL: all;
 * "usdt": the USDT probes only).  The number of lines written; -1 after
 * reporting a file that cannot be read, unless skip_bad (a process's maps:
 * reported, and the others listed). */
long lp_discover__list(const char *pattern, char *const *files, size_t n, const char *exe,
		       bool skip_bad, FILE *out);

/* --lines FUNC: the source lines of function spec (LP_PROBE_FUNC) of exe
 * (a LIB's is refused: FILE:LINE probes the executable), each with the
 * line probe that goes there.  0, or -1 after saying why. */
int lp_discover__lines(struct lp_probe_spec *spec, const char *exe, pid_t pid, FILE *out);

/* --blocks FUNC: function spec's basic blocks and loops (debuginfo/cfg.h),
 * each with its source lines, a loop with the line probe that runs once
 * each iteration (once more when it is the test that leaves); and the
 * calls inlined into it and its lexical blocks, nested, as its DWARF gives
 * them (debuginfo/dwarf.h's lp_dwnode), an inlined call with the probe
 * that traces it (FUNC+OFF at its entry), a block with its variables and
 * the line probe where --vars lists them.  0, or -1 after saying why. */
int lp_discover__blocks(struct lp_probe_spec *spec, const char *exe, pid_t pid, FILE *out);

/* --vars FILE:LINE: the variables in scope where lp-trace FILE:LINE
 * probes (spec, LP_PROBE_LINE), where each lives and whether it can be
 * captured.  0, or -1 after saying why. */
int lp_discover__vars(const struct lp_probe_spec *spec, const char *exe, pid_t pid, FILE *out);

#endif
