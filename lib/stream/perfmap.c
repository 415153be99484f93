/* perfmap.c - perf's map of a process's JIT code (perfmap.h). */
#include "stream/perfmap.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct jsym {
	uint64_t start, end;
	const char *name;	/* into names */
};

struct lp_perfmap {
	char *file;
	struct jsym *syms;	/* by start; one a start */
	size_t n;
	char *names;
	bool read;		/* once, even when the file was not there */
	struct timespec mtime;	/* of the file as read */
	off_t size;
};

struct lp_perfmap *lp_perfmap__new(const char *file)
{
	struct lp_perfmap *m = lp_calloc(1, sizeof(*m));
	m->file = lp_strdup(file);
	return m;
}

static void drop(struct lp_perfmap *m)
{
	free(m->syms);
	free(m->names);
	m->syms = NULL;
	m->names = NULL;
	m->n = 0;
}

void lp_perfmap__free(struct lp_perfmap *m)
{
	if (!m)
		return;
	drop(m);
	free(m->file);
	free(m);
}

/* By start, the longer first, then by name: of the symbols at one start
 * the first is kept, the same every run. */
static int jsym_cmp(const void *a, const void *b)
{
	const struct jsym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return strcmp(x->name, y->name);
}

bool lp_perfmap__load(struct lp_perfmap *m)
{
	struct stat sb;
	m->read = true;
	if (stat(m->file, &sb) < 0) {
		drop(m);
		return false;
	}
	if (m->syms && sb.st_size == m->size && sb.st_mtim.tv_sec == m->mtime.tv_sec &&
	    sb.st_mtim.tv_nsec == m->mtime.tv_nsec)
		return m->n > 0;
	FILE *f = fopen(m->file, "r");
	if (!f)
		return m->n > 0;
	drop(m);
	char *line = NULL;
	size_t cap = 0, n = 0, alloc = 0, total = 0;
	ssize_t len;
	/* The names first in one buffer (offsets), pointers once it is whole. */
	size_t *offs = NULL;
	char *names = NULL;
	size_t ncap = 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		uint64_t start, size;
		int off = 0;
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &off) != 2 || !off)
			continue;
		line[strcspn(line, "\n")] = '\0';
		size_t nl = strlen(line + off) + 1;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			m->syms = lp_reallocarray(m->syms, alloc, sizeof(*m->syms));
			offs = lp_reallocarray(offs, alloc, sizeof(*offs));
		}
		while (total + nl > ncap)
			names = lp_realloc(names, ncap = ncap ? 2 * ncap : 4096);
		memcpy(names + total, line + off, nl);
		offs[n] = total;
		total += nl;
		m->syms[n].start = start;
		m->syms[n].end = start + size;
		n++;
	}
	free(line);
	fclose(f);
	m->names = names ? names : lp_calloc(1, 1);
	for (size_t i = 0; i < n; i++)
		m->syms[i].name = m->names + offs[i];
	free(offs);
	if (n)
		qsort(m->syms, n, sizeof(*m->syms), jsym_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (k == 0 || m->syms[i].start != m->syms[k - 1].start)
			m->syms[k++] = m->syms[i];
	/* A symbol without a size runs to the next one; the last, a page. */
	for (size_t i = 0; i < k; i++)
		if (m->syms[i].end == m->syms[i].start)
			m->syms[i].end = i + 1 < k ? m->syms[i + 1].start : m->syms[i].start + 4096;
	m->n = k;
	m->size = sb.st_size;
	m->mtime = sb.st_mtim;
	return k > 0;
}

/* The last symbol starting at or before addr, if addr lies inside it. */
static const struct jsym *lookup(const struct lp_perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < m->syms[lo - 1].end ? &m->syms[lo - 1] : NULL;
}

const char *lp_perfmap__find(struct lp_perfmap *m, uint64_t addr)
{
	if (!m->read)
		lp_perfmap__load(m);
	const struct jsym *s = lookup(m, addr);
	if (!s) {
		lp_perfmap__load(m);
		s = lookup(m, addr);
	}
	return s ? s->name : NULL;
}
