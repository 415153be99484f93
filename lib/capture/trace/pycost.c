/* pycost.c - what python: probes cost the processes they trace (pycost.h). */
#include "capture/trace/pycost.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "capture/target.h"
#include "capture/trace/tracer.h"

#define SAY_NS 500000000	/* the first look at the call rate */
#define ARMING_NS 3000000000	/* how long the code named may take to be watched */

struct lp_pycost {
	struct lp_tracer *t;
	bool said;
	int64_t t0;
	uint64_t hits0, hits, watched0, watched;
	double ns_each, ns_watch;
	int state;		/* LP_PYWATCH_*, as last read */
	int64_t only_t0;	/* when the code named alone began to trap: */
	uint64_t only_hits0;	/* the traps then (at breakpoints: only_bp0), */
	uint64_t only_bp0;
	double only_cost0, only_cpu0;	/* what they had cost, the CPU time used */
	size_t n;
	pid_t *pids;
	int64_t *cpu0, *cpu;	/* each target's CPU time at t0, as last read */
};

/* The hits since t0 and the targets' CPU time since (a target gone keeps
 * its last reading). */
static double reread(struct lp_pycost *c)
{
	double used = 0;
	c->hits = lp_tracer__python_hits(c->t, &c->ns_each);
	c->watched = lp_tracer__python_watch_hits(c->t, &c->ns_watch, &c->state);
	for (size_t i = 0; i < c->n; i++) {
		int64_t now = lp_target__cpu_ns(c->pids[i]);
		if (now >= 0)
			c->cpu[i] = now;
		if (c->cpu0[i] >= 0)
			used += (double)(c->cpu[i] - c->cpu0[i]);
	}
	return used;
}

struct lp_pycost *lp_pycost__new(struct lp_tracer *t, const pid_t *pids, size_t n)
{
	struct lp_pycost *c = lp_calloc(1, sizeof(*c));
	c->t = t;
	c->n = n;
	c->pids = lp_calloc(n ? n : 1, sizeof(*c->pids));
	c->cpu0 = lp_calloc(n ? n : 1, sizeof(*c->cpu0));
	c->cpu = lp_calloc(n ? n : 1, sizeof(*c->cpu));
	for (size_t i = 0; i < n; i++) {
		c->pids[i] = pids[i];
		c->cpu0[i] = c->cpu[i] = lp_target__cpu_ns(pids[i]);
	}
	c->t0 = lp_monotonic_ns();
	reread(c);
	c->hits0 = c->hits;
	c->watched0 = c->watched;
	return c;
}

/* What the traps since t0 cost, ns. */
static double spent(const struct lp_pycost *c)
{
	return (double)(c->hits - c->hits0) * c->ns_each +
	       (double)(c->watched - c->watched0) * c->ns_watch;
}

/* lp's share of what the targets used, in percent (the calibrated cost
 * of a trap can be above what it costs them now: at most all of it). */
static double share(double cost, double used)
{
	return fmin(100, 100 * cost / used);
}

/* Said once the code named alone has trapped for half a second: the
 * traps a second since, what they cost. */
static void say_watched(struct lp_pycost *c, int64_t now, double used)
{
	uint64_t traps = c->hits + c->watched - c->only_hits0;
	double dt = (double)(now - c->only_t0), cost = spent(c) - c->only_cost0;
	char tail[128] = "";
	if (used > c->only_cpu0 && c->ns_each > 0 && c->ns_watch > 0)
		snprintf(tail, sizeof(tail), ", ~%.0f%% of the CPU time the targets used",
			 share(cost, used - c->only_cpu0));
	/* From 3.12 on its start is watched too: no breakpoint traps. */
	if (c->hits == c->only_bp0)
		lp_error("python: only the calls of the code named trap now, at its start and its "
			 "returns (hardware watchpoints, %.1f us each): %.0f traps a second%s",
			 c->ns_watch / 1e3, (double)traps * 1e9 / dt, tail);
	else
		lp_error("python: only the calls of the code named trap now, at its start (a "
			 "breakpoint, %.1f us) and its returns (hardware watchpoints, %.1f us each): "
			 "%.0f traps a second%s", c->ns_each / 1e3, c->ns_watch / 1e3,
			 (double)traps * 1e9 / dt, tail);
}

void lp_pycost__check(struct lp_pycost *c)
{
	if (!c)
		return;
	int64_t now = lp_monotonic_ns(), dt = now - c->t0;
	double used = reread(c);	/* read on: a target's last reading counts */
	if (c->said)
		return;
	if (c->state == LP_PYWATCH_ONLY) {
		if (!c->only_t0) {
			c->only_t0 = now;
			c->only_hits0 = c->hits + c->watched;
			c->only_bp0 = c->hits;
			c->only_cost0 = spent(c);
			c->only_cpu0 = used;
		} else if (now - c->only_t0 >= SAY_NS) {
			c->said = true;
			say_watched(c, now, used);
		}
		return;
	}
	if (dt < SAY_NS || c->hits == c->hits0 || (c->state == LP_PYWATCH_ARMING && dt < ARMING_NS))
		return;	/* too soon, no Python call yet, or its code may yet be watched */
	c->said = true;
	char cost[128] = "";
	if (used > 0 && c->ns_each > 0)
		snprintf(cost, sizeof(cost), ", %.1f us each, ~%.0f%% of the CPU time the targets used",
			 c->ns_each / 1e3, share(spent(c), used));
	lp_error("python: every Python call's start and return in the targets traps, traced or "
		 "not (the eval loop has no per-function hook; one function's code alone is "
		 "watched for a name without a glob in CPython 3.11%s): %.0f traps a second in "
		 "the first %.1f s%s",
		 c->state == LP_PYWATCH_ARMING ? "; the code named is not watched yet" : "",
		 (double)(c->hits - c->hits0) * 1e9 / (double)dt, (double)dt / 1e9, cost);
}

bool lp_pycost__summary(struct lp_pycost *c, char *buf, size_t size)
{
	if (!c)
		return false;
	double used = reread(c);
	uint64_t hits = c->hits - c->hits0, watched = c->watched - c->watched0;
	size_t len = strlen(buf);
	snprintf(buf + len, size - len, "; python: %" PRIu64 " traps", hits + watched);
	len = strlen(buf);
	if (watched)
		snprintf(buf + len, size - len, " (%" PRIu64 " at hardware watchpoints)", watched);
	len = strlen(buf);
	if (hits + watched && used > 0 && c->ns_each > 0)
		snprintf(buf + len, size - len, ", ~%.3f s of the %.3f s the targets ran on a CPU (%.0f%%)",
			 spent(c) / 1e9, used / 1e9, share(spent(c), used));
	return hits + watched > 0;
}

void lp_pycost__free(struct lp_pycost *c)
{
	if (!c)
		return;
	free(c->pids);
	free(c->cpu0);
	free(c->cpu);
	free(c);
}
