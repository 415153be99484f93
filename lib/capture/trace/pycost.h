/* pycost.h - what python: probes cost the processes they trace.  Until the
 * code named is watched (pywatch.h), and always where it cannot be, they
 * trap every Python call's start and return, traced or not (CPython 3.11
 * has no per-function hook a uprobe can take); then only its own calls.
 * lp-trace says which, and the traps a second, half a second into either,
 * and in its summary their share of the CPU time the targets used, from
 * the kernel's counts of the hits and the targets' process CPU clocks.
 *
 *	c = lp_pycost__new(tracer, pids, n);	(once the probes are attached)
 *	... lp_pycost__check(c) at each poll ...
 *	lp_pycost__summary(c, buf, size);	(appends; true when any trapped)
 *	lp_pycost__free(c);
 */
#ifndef LP_PYCOST_H
#define LP_PYCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct lp_tracer;
struct lp_pycost;

struct lp_pycost *lp_pycost__new(struct lp_tracer *t, const pid_t *pids, size_t n);
/* Reads the counts; half a second after the code named alone began to
 * trap, or, where it does not within 3 s, half a second in, says once
 * (stderr) what the traps cost. */
void lp_pycost__check(struct lp_pycost *c);
/* Appends "; python: N traps (M at hardware watchpoints), ~X s of the Y s
 * the targets ran on a CPU (Z%)" to buf; true when a Python call
 * trapped. */
bool lp_pycost__summary(struct lp_pycost *c, char *buf, size_t size);
void lp_pycost__free(struct lp_pycost *c);

#endif
