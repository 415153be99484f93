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

struct lp_pycost {
	struct lp_tracer *t;
	bool said;
	int64_t t0;
	uint64_t hits0, hits;
	double ns_each;
	size_t n;
	pid_t *pids;
	int64_t *cpu0, *cpu;	/* each target's CPU time at t0, as last read */
};

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
	c->hits0 = c->hits = lp_tracer__python_hits(t, &c->ns_each);
	return c;
}

/* The hits since t0 and the targets' CPU time since (a target gone keeps
 * its last reading). */
static double reread(struct lp_pycost *c)
{
	double used = 0;
	c->hits = lp_tracer__python_hits(c->t, &c->ns_each);
	for (size_t i = 0; i < c->n; i++) {
		int64_t now = lp_target__cpu_ns(c->pids[i]);
		if (now >= 0)
			c->cpu[i] = now;
		if (c->cpu0[i] >= 0)
			used += (double)(c->cpu[i] - c->cpu0[i]);
	}
	return used;
}

/* lp's share of what the targets used, in percent (the calibrated cost
 * of a trap can be above what it costs them now: at most all of it). */
static double share(const struct lp_pycost *c, double used)
{
	return fmin(100, 100 * (double)(c->hits - c->hits0) * c->ns_each / used);
}

void lp_pycost__check(struct lp_pycost *c)
{
	if (!c)
		return;
	int64_t dt = lp_monotonic_ns() - c->t0;
	double used = reread(c);	/* read on: a target's last reading counts */
	if (c->said || dt < SAY_NS || c->hits == c->hits0)
		return;	/* said, too soon, or no Python call yet */
	c->said = true;
	char cost[128] = "";
	if (used > 0 && c->ns_each > 0)
		snprintf(cost, sizeof(cost), ", %.1f us each, ~%.0f%% of the CPU time the targets used",
			 c->ns_each / 1e3, share(c, used));
	lp_error("python: every Python call's start and return in the targets traps, traced or "
		 "not (CPython 3.11 has no per-function hook): %.0f traps a second in the first "
		 "%.1f s%s", (double)(c->hits - c->hits0) * 1e9 / (double)dt, (double)dt / 1e9, cost);
}

bool lp_pycost__summary(struct lp_pycost *c, char *buf, size_t size)
{
	if (!c)
		return false;
	double used = reread(c);
	uint64_t hits = c->hits - c->hits0;
	size_t len = strlen(buf);
	snprintf(buf + len, size - len, "; python: %" PRIu64 " traps", hits);
	len = strlen(buf);
	if (hits && used > 0 && c->ns_each > 0)
		snprintf(buf + len, size - len, ", ~%.3f s of the %.3f s the targets ran on a CPU (%.0f%%)",
			 (double)hits * c->ns_each / 1e9, used / 1e9, share(c, used));
	return hits > 0;
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
