/* dlgate.c - whether loaded libraries can throw through traced calls
 * (dlgate.h). */
#include "capture/trace/dlgate.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "capture/trace/hazard.h"
#include "debuginfo/elftab.h"

/* A file judged: its identity (keys are hashes of it), its soname and the
 * sonames it needs (DT_NEEDED), whether it can throw and why. */
struct judged {
	uint64_t dev, ino;
	char soname[128];
	char **needed;
	size_t nneeded;
	bool throws;
	char why[256];
};

struct lp_dlgate {
	struct lp_hashmap files;	/* hash of (dev, ino) -> struct judged */
	pid_t *dirty;
	size_t ndirty;
	bool all;
};

struct lp_dlgate *lp_dlgate__new(void)
{
	struct lp_dlgate *g = lp_calloc(1, sizeof(*g));
	lp_hashmap__init(&g->files);
	return g;
}

void lp_dlgate__free(struct lp_dlgate *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->files.cap; i++) {
		if (!g->files.keys[i])
			continue;
		struct judged *j = g->files.values[i];
		for (size_t k = 0; k < j->nneeded; k++)
			free(j->needed[k]);
		free(j->needed);
		free(j);
	}
	lp_hashmap__fini(&g->files);
	free(g->dirty);
	free(g);
}

void lp_dlgate__dirty(struct lp_dlgate *g, pid_t pid)
{
	for (size_t i = 0; i < g->ndirty; i++)
		if (g->dirty[i] == pid)
			return;
	g->dirty = lp_reallocarray(g->dirty, g->ndirty + 1, sizeof(*g->dirty));
	g->dirty[g->ndirty++] = pid;
}

bool lp_dlgate__pending(const struct lp_dlgate *g)
{
	return g->all || g->ndirty;
}

void lp_dlgate__all_dirty(struct lp_dlgate *g)
{
	g->all = true;
}

/* Its DT_SONAME (else the name's last part) and DT_NEEDED into j. */
static void read_deps(Elf *elf, const char *name, struct judged *j)
{
	const char *base = strrchr(name, '/');
	snprintf(j->soname, sizeof(j->soname), "%s", base ? base + 1 : name);
	struct lp_elfdyn dyn;
	int64_t tag;
	const char *s;
	if (!lp_elfdyn__open(&dyn, elf))
		return;
	while ((s = lp_elfdyn__next(&dyn, &tag))) {
		if (tag == DT_SONAME) {
			snprintf(j->soname, sizeof(j->soname), "%s", s);
		} else if (tag == DT_NEEDED) {
			j->needed = lp_reallocarray(j->needed, j->nneeded + 1, sizeof(*j->needed));
			j->needed[j->nneeded++] = lp_strdup(s);
		}
	}
}

/* The file mapped at m in pid, judged once, read through the process's
 * own view of it (/proc/PID/map_files: a container's files too).  One
 * that cannot be read may throw. */
static struct judged *judge(struct lp_dlgate *g, pid_t pid, const struct lp_maps *m)
{
	uint64_t key = lp_hashmap__key(m->dev * 0x100000001b3ULL ^ m->ino);
	struct judged *j = lp_hashmap__get(&g->files, key);
	if (j && j->dev == m->dev && j->ino == m->ino)
		return j;
	if (j) {	/* another file under this hash: judged anew each time */
		lp_hashmap__del(&g->files, key);
		for (size_t k = 0; k < j->nneeded; k++)
			free(j->needed[k]);
		free(j->needed);
		free(j);
	}
	j = lp_calloc(1, sizeof(*j));
	j->dev = m->dev;
	j->ino = m->ino;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->lo, (unsigned long long)m->hi);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (e && elf_kind(e) == ELF_K_ELF) {
		read_deps(e, m->name, j);
		j->throws = lp_hazard__throws(e, m->name, j->why, sizeof(j->why));
	} else {
		const char *base = strrchr(m->name, '/');
		snprintf(j->soname, sizeof(j->soname), "%s", base ? base + 1 : m->name);
		j->throws = true;
		snprintf(j->why, sizeof(j->why), "%s cannot be read", m->name);
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	lp_hashmap__put(&g->files, key, j);
	return j;
}

/* A file pid maps executable: judged, and whether the program links it. */
struct mapped {
	struct judged *j;
	bool linked;
};

/* 1 with why when a file pid maps executable and does not link can throw;
 * 0 when none (or pid is gone).  What the program links (the executable,
 * the dynamic linker and what they need, transitively) was there before
 * any call began, as under a uretprobe placed at its start: lp-trace
 * judges the executable and the probed file when it resolves the probe
 * (lib/capture/trace/probe-return.c), and the libraries loaded later here. */
static int check_pid(struct lp_dlgate *g, pid_t pid, char *why, size_t whysize)
{
	char exe[64];
	struct stat est;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	struct lp_maps m;
	if (stat(exe, &est) < 0 || lp_maps__open(&m, pid) < 0)
		return 0;
	struct mapped *f = NULL;
	size_t n = 0;
	while (lp_maps__next(&m)) {
		if (!m.exec || !m.ino)
			continue;
		bool have = false;
		for (size_t i = 0; i < n && !have; i++)
			have = f[i].j->dev == m.dev && f[i].j->ino == m.ino;
		if (have)
			continue;
		f = lp_reallocarray(f, n + 1, sizeof(*f));
		f[n].j = judge(g, pid, &m);
		f[n].linked = (m.ino == (uint64_t)est.st_ino && m.dev == (uint64_t)est.st_dev) ||
			      !strncmp(f[n].j->soname, "ld-linux", 8);
		n++;
	}
	lp_maps__close(&m);
	/* What the linked files need is linked, until nothing more is. */
	for (bool more = true; more;) {
		more = false;
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; f[i].linked && k < f[i].j->nneeded; k++)
				for (size_t l = 0; l < n; l++)
					if (!f[l].linked && !strcmp(f[l].j->soname, f[i].j->needed[k]))
						more = f[l].linked = true;
	}
	int r = 0;
	for (size_t i = 0; i < n && !r; i++)
		if (!f[i].linked && f[i].j->throws) {
			snprintf(why, whysize, "%s", f[i].j->why);
			r = 1;
		}
	free(f);
	return r;
}

int lp_dlgate__check(struct lp_dlgate *g, const pid_t *pids, size_t npids, pid_t *who, char *why,
		     size_t whysize)
{
	const pid_t *read = g->all ? pids : g->dirty;
	size_t n = g->all ? npids : g->ndirty;
	int r = 0;
	for (size_t i = 0; i < n && !r; i++)
		if ((r = check_pid(g, read[i], why, whysize)))
			*who = read[i];
	g->ndirty = 0;
	g->all = false;
	return r;
}
