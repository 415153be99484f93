/* family.h - a tracer's probes on its target processes and their
 * descendants: every probe resolved in each target's executable, attached
 * to that target, and given to the processes it forks (and to those it had
 * forked already: a server's workers) under the same probe ids.  What
 * lp-trace and lp-record --inside (lib/capture/trace/gate.c) attach with.
 *
 *	lp_probe__resolve_specs(specs, n, exe, pid, ...);	(each target's points)
 *	lp_family__attach(&f, tracer, pids, npids, points, npoints, follow);
 *	... lp_tracer__poll(...): forks call back into f ...
 *	lp_tracer__free(tracer); lp_family__free(f);
 */
#ifndef LP_FAMILY_H
#define LP_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "capture/trace/probe.h"
#include "capture/trace/tracer.h"

struct lp_family;

/* Resolves every spec in executable exe (of pid; 0: a command's, not yet
 * running) into *points (*npoints of them); -1 after reporting why.
 * first: the system-wide probes (syscall:, tp:) too, which are resolved
 * for one process only.  Two probes at one instruction are refused: they
 * would pair their returns with each other's entries. */
int lp_probe__resolve_specs(struct lp_probe_spec **specs, int nspecs, const char *exe, pid_t pid,
			    bool first, int verbose, struct lp_probe_point **points,
			    size_t *npoints);

/* Frees the n targets' points (points[p], npoints[p] of them) and the two
 * arrays; accepts NULL. */
void lp_probe__free_resolved(struct lp_probe_point **points, size_t *npoints, size_t n);

/* The executable of process pid as a path lp can open (in its own file
 * tree, a container's; /proc's link for one replaced since it started);
 * malloc'd, or NULL after reporting why. */
char *lp_family__exe(pid_t pid);

/* Adds the targets pids[p] to the tracer's filter, follows their forks and
 * adopts their running descendants when follow, then attaches points[p]
 * (npoints[p] of them) for each pids[p].  *fp is set, also on failure: the
 * tracer calls back into it at each fork, so it is freed after the tracer;
 * the arrays must outlive it.  0, or -1 after reporting why. */
int lp_family__attach(struct lp_family **fp, struct lp_tracer *t, const pid_t *pids,
		      size_t npids, struct lp_probe_point **points, const size_t *npoints,
		      bool follow);

/* --- probes that come and go (lp-trace --control) --- */

/* The targets. */
const pid_t *lp_family__pids(const struct lp_family *f, size_t *n);

/* The probe id of points[p][i] (-1: forgotten, or never attached). */
int lp_family__id(const struct lp_family *f, size_t p, size_t i);

/* Attaches points[p][from..npoints[p]) (the caller appended them) to
 * target p and, when follow, to the processes followed as its children so
 * far (forked before they were there); later forks get them too.  Their
 * ids are appended to *ids (*nids of them).  0, or -1 after reporting why
 * (the ids attached so far are in *ids; the others are -1). */
int lp_family__attach_more(struct lp_family *f, size_t p, size_t from, bool follow, int **ids,
			   size_t *nids);

/* Probes ids are no longer given to the processes forked from now on. */
void lp_family__forget(struct lp_family *f, const int *ids, size_t n);

/* After the tracer is freed; accepts NULL. */
void lp_family__free(struct lp_family *f);

#endif
