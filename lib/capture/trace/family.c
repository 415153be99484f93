/* family.c - a tracer's probes on the targets and their descendants. */
#include "capture/trace/family.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/target.h"
#include "debuginfo/procns.h"
#include "base/util.h"

int lp_probe__resolve_specs(struct lp_probe_spec **specs, int nspecs, const char *exe, pid_t pid,
			    bool first, int verbose, struct lp_probe_point **points,
			    size_t *npoints)
{
	for (int i = 0; i < nspecs; i++) {
		if (!first && (specs[i]->type == LP_PROBE_SYSCALLS ||
			       specs[i]->type == LP_PROBE_TRACEPOINT))
			continue;	/* system-wide: once */
		if (lp_probe__resolve(specs[i], exe, pid, verbose, points, npoints) < 0)
			return -1;
	}
	/* Two probes at one instruction would pair their returns with each
	 * other's entries. */
	for (size_t i = 0; i < *npoints; i++)
		for (size_t j = 0; j < i; j++) {
			struct lp_probe_point *a = &(*points)[j], *b = &(*points)[i];
			if (a->cfg.kind >= LP_PROBE_SYSCALL || b->cfg.kind >= LP_PROBE_SYSCALL ||
			    a->offset != b->offset || strcmp(a->path, b->path))
				continue;
			lp_error("probes '%s' and '%s' are at the same address: give one",
				 a->spec->text, b->spec->text);
			return -1;
		}
	return 0;
}

void lp_probe__free_resolved(struct lp_probe_point **points, size_t *npoints, size_t n)
{
	for (size_t p = 0; points && p < n; p++) {
		for (size_t i = 0; i < npoints[p]; i++)
			lp_probe_point__fini(&points[p][i]);
		free(points[p]);
	}
	free(points);
	free(npoints);
}

char *lp_family__exe(pid_t pid)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0) {
		lp_error_errno("cannot read the executable of pid %d", (int)pid);
		return NULL;
	}
	buf[n] = '\0';
	/* A replaced executable shows as "PATH (deleted)": use /proc's link. */
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		return lp_strdup(link);
	/* The path in the process's own file tree (a container's). */
	return lp_procns__path(pid, buf);
}

/* The processes the targets fork, traced as the target they descend from:
 * each is given its target's points, under the same probe ids. */
struct lp_family {
	struct lp_tracer *tracer;
	const pid_t *pids;		/* the targets */
	size_t npids;
	struct lp_probe_point **points;
	const size_t *npoints;
	int **ids;			/* the probe id of points[p][i] */
	struct adopted { pid_t pid, target; } *adopted;	/* descendants running at start */
	size_t nadopted;
};

static void on_fork(void *arg, pid_t child, pid_t target)
{
	struct lp_family *f = arg;
	for (size_t p = 0; p < f->npids; p++)
		if (f->pids[p] == target)
			for (size_t i = 0; i < f->npoints[p]; i++)
				lp_tracer__attach_child(f->tracer, f->ids[p][i], &f->points[p][i],
							child);
}

/* The targets' descendants running now (a server's pre-forked workers) are
 * traced as the target they descend from.  Listed twice: one that forked
 * while the first list was made, before it was in the filter, had a child
 * the kernel did not follow. */
static int adopt_descendants(struct lp_family *f)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t p = 0; p < f->npids; p++) {
			size_t n;
			pid_t *d = lp_target__descendants(f->pids[p], &n);
			for (size_t i = 0; i < n; i++) {
				int r = lp_tracer__adopt(f->tracer, d[i], f->pids[p]);
				if (r < 0) {
					free(d);
					return -1;
				}
				if (r > 0) {
					f->adopted = lp_reallocarray(f->adopted, f->nadopted + 1,
								     sizeof(*f->adopted));
					f->adopted[f->nadopted++] = (struct adopted){ d[i], f->pids[p] };
				}
			}
			free(d);
		}
	return 0;
}

int lp_family__attach(struct lp_family **fp, struct lp_tracer *t, const pid_t *pids,
		      size_t npids, struct lp_probe_point **points, const size_t *npoints,
		      bool follow)
{
	struct lp_family *f = *fp = lp_calloc(1, sizeof(*f));

	f->tracer = t;
	f->pids = pids;
	f->npids = npids;
	f->points = points;
	f->npoints = npoints;
	f->ids = lp_calloc(npids, sizeof(*f->ids));
	for (size_t p = 0; p < npids; p++)
		if (lp_tracer__add_pid(t, pids[p]) < 0)
			return -1;
	/* Followed before probes are attached: the targets' running
	 * descendants are in the filter, no bystanders (lp_tracer__attach). */
	if (follow && (lp_tracer__follow(t, on_fork, f) < 0 || adopt_descendants(f) < 0))
		return -1;
	for (size_t p = 0; p < npids; p++) {
		f->ids[p] = lp_calloc(npoints[p] + 1, sizeof(**f->ids));
		for (size_t i = 0; i < npoints[p]; i++)
			if ((f->ids[p][i] = lp_tracer__attach(t, &points[p][i], pids[p])) < 0)
				return -1;
	}
	/* The adopted descendants' own uprobes (probes in files others map:
	 * their forks inherit them, not they). */
	for (size_t k = 0; k < f->nadopted; k++)
		on_fork(f, f->adopted[k].pid, f->adopted[k].target);
	return 0;
}

const pid_t *lp_family__pids(const struct lp_family *f, size_t *n)
{
	*n = f->npids;
	return f->pids;
}

int lp_family__id(const struct lp_family *f, size_t p, size_t i)
{
	return f->ids[p] ? f->ids[p][i] : -1;
}

int lp_family__attach_more(struct lp_family *f, size_t p, size_t from, bool follow, int **ids,
			   size_t *nids)
{
	size_t n = f->npoints[p];
	f->ids[p] = lp_reallocarray(f->ids[p], n + 1, sizeof(**f->ids));
	for (size_t i = from; i < n; i++)
		f->ids[p][i] = -1;
	for (size_t i = from; i < n; i++) {
		int id = lp_tracer__attach(f->tracer, &f->points[p][i], f->pids[p]);
		if (id < 0)
			return -1;
		f->ids[p][i] = id;
		*ids = lp_reallocarray(*ids, *nids + 1, sizeof(**ids));
		(*ids)[(*nids)++] = id;
		if (follow)
			lp_tracer__attach_kids(f->tracer, id, &f->points[p][i], f->pids[p]);
	}
	return 0;
}

void lp_family__forget(struct lp_family *f, const int *ids, size_t n)
{
	for (size_t p = 0; p < f->npids; p++)
		for (size_t i = 0; f->ids[p] && i < f->npoints[p]; i++)
			for (size_t k = 0; k < n; k++)
				if (f->ids[p][i] == ids[k])
					f->ids[p][i] = -1;
}

void lp_family__free(struct lp_family *f)
{
	if (!f)
		return;
	for (size_t p = 0; f->ids && p < f->npids; p++)
		free(f->ids[p]);
	free(f->ids);
	free(f->adopted);
	free(f);
}
