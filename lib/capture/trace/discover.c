/* discover.c - lp-trace --list, --lines and --vars (see discover.h): the
 * probe resolver's answers (capture/trace/probe-file.c) for many probes at once,
 * printed as tab-separated lines. */
#include "capture/trace/discover.h"

#include <errno.h>
#include <inttypes.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "capture/trace/funcname.h"
#include "capture/trace/usdt.h"
#include "debuginfo/cfg.h"
#include "debuginfo/demangle.h"
#include "debuginfo/dwarf.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* --- --list ------------------------------------------------------------ */

/* The DWARF functions of a file, by entry address. */
struct funcinfo {
	uint64_t addr;
	char *source;		/* "demo.c:42", NULL: no line table */
	long nparams;		/* -1: unknown */
	char *params;		/* "int n, const char *s", "void" */
};

struct funcinfos {
	struct funcinfo *v;
	size_t n;
};

static void add_funcinfo(const struct lp_dwfuncinfo *fi, void *arg)
{
	struct funcinfos *fs = arg;
	char *params = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&params, &len);
	if (!m)
		lp_die(1, "out of memory");
	for (size_t i = 0; i < fi->nparams; i++) {
		const char *t = fi->params[i].type_name, *nm = fi->params[i].name;
		size_t tl = strlen(t);
		/* "char **argv", "int n" */
		fprintf(m, "%s%s%s%s", i ? ", " : "", t, nm && tl && t[tl - 1] != '*' ? " " : "",
			nm ? nm : "");
	}
	if (!fi->nparams)
		fprintf(m, "void");
	if (fclose(m) != 0)
		lp_die(1, "out of memory");
	char *source = NULL;
	if (fi->lines && fi->decl_file && fi->decl_line > 0) {
		const char *b = base_name(fi->decl_file);
		source = lp_malloc(strlen(b) + 16);
		sprintf(source, "%s:%d", b, fi->decl_line);
	}
	fs->v = lp_reallocarray(fs->v, fs->n + 1, sizeof(*fs->v));
	fs->v[fs->n++] = (struct funcinfo){ fi->addr, source, (long)fi->nparams, params };
}

static int funcinfo_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct funcinfo *)a)->addr, y = ((const struct funcinfo *)b)->addr;
	return (x > y) - (x < y);
}

static const struct funcinfo *funcinfo_at(const struct funcinfos *fs, uint64_t addr)
{
	struct funcinfo key = { .addr = addr };
	return fs->n ? bsearch(&key, fs->v, fs->n, sizeof(*fs->v), funcinfo_cmp) : NULL;
}

/* A function's name matches the glob: as its symbol, or demangled. */
static bool name_matches(const char *pattern, const char *name)
{
	if (!pattern || fnmatch(pattern, name, 0) == 0)
		return true;
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return false;
	char *d = lp_symbol__demangle(name, true);
	bool m = d && fnmatch(pattern, d, 0) == 0;
	free(d);
	return m;
}

struct listed {
	const char *spec_prefix;	/* "" for the executable, "FILE:" else */
	const char *path;
	FILE *out;
	long count;
};

/* A function to list, and its symbol's index for lp_probe_file__returns:
 * a compiled copy (a clone) listed as its function, with its suffix. */
struct listed_func {
	struct lp_probe_func fn;
	size_t i;
	char *name;		/* the symbol less a clone's suffix */
	const char *copy;	/* the suffix, past its dot; NULL: none */
};

static int func_cmp(const void *a, const void *b)
{
	const struct listed_func *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (!c)
		c = !x->copy ? -(y->copy != NULL) : !y->copy ? 1 : strcmp(x->copy, y->copy);
	return c ? c : (x->fn.addr > y->fn.addr) - (x->fn.addr < y->fn.addr);
}

/* The functions of f that match: a line each, by name. */
static void list_funcs(struct lp_probe_file *f, const char *pattern, struct listed *l)
{
	struct funcinfos fs = { 0 };
	struct listed_func *sorted = NULL;
	size_t n = 0;
	struct lp_probe_func fn;

	for (size_t i = 0; lp_probe_file__func(f, i, &fn); i++) {
		/* GCC's split-off cold parts are not where calls go. */
		bool cold;
		const char *suf = lp_fname__clone_suffix(fn.name, &cold);
		if (cold || !name_matches(pattern, fn.name))
			continue;
		sorted = lp_reallocarray(sorted, n + 1, sizeof(*sorted));
		sorted[n++] = (struct listed_func){
			fn, i, suf ? lp_strndup(fn.name, (size_t)(suf - fn.name)) : lp_strdup(fn.name),
			suf ? suf + 1 : NULL };
	}
	if (!n)
		goto out;
	lp_dwarf__each_function(lp_probe_file__dwarf(f), add_funcinfo, &fs);
	if (fs.n)	/* none without DWARF: qsort may not be given NULL */
		qsort(fs.v, fs.n, sizeof(*fs.v), funcinfo_cmp);
	qsort(sorted, n, sizeof(*sorted), func_cmp);
	for (size_t k = 0; k < n; k++) {
		const struct funcinfo *fi = funcinfo_at(&fs, sorted[k].fn.addr);
		char why[1024];
		int r = lp_probe_file__returns(f, sorted[k].i, why, sizeof(why));
		const char *how = r == LP_RETURNS_URETPROBE ? "uretprobe" : r == LP_RETURNS_INSN ? "insn" : "no";
		fprintf(l->out, "func\t%s%s\t%s\t%s\t", l->spec_prefix, sorted[k].name, l->path,
			fi && fi->source ? fi->source : "-");
		if (fi)
			fprintf(l->out, "%ld\t%s\t", fi->nparams, fi->params);
		else
			fprintf(l->out, "-\t-\t");
		/* The reason as lp-trace gives it, less its "probe 'X': " */
		const char *reason = !strncmp(why, "probe '", 7) && strstr(why, "': ") ? strstr(why, "': ") + 3 : why;
		fprintf(l->out, "%s%s%s\t%s\n", how, why[0] && r != LP_RETURNS_URETPROBE ? ": " : "",
			r != LP_RETURNS_URETPROBE ? reason : "",
			sorted[k].copy ? sorted[k].copy : "-");
		l->count++;
	}
	for (size_t k = 0; k < n; k++)
		free(sorted[k].name);
out:
	for (size_t i = 0; i < fs.n; i++) {
		free(fs.v[i].source);
		free(fs.v[i].params);
	}
	free(fs.v);
	free(sorted);
}

/* The USDT probes of path that match: usdt:PROVIDER:NAME, PROVIDER:NAME
 * and NAME are matched, and "usdt" matches them all. */
static int list_usdt(const char *pattern, struct listed *l)
{
	struct lp_usdt_probe *u;
	size_t nu;
	if (lp_usdt__read(l->path, &u, &nu) < 0)
		return -1;
	for (size_t i = 0; i < nu; i++) {
		char spec[1024], pn[512];
		snprintf(pn, sizeof(pn), "%s:%s", u[i].provider, u[i].name);
		snprintf(spec, sizeof(spec), "usdt:%s:%s", l->path, pn);
		if (pattern && strcmp(pattern, "usdt") && fnmatch(pattern, spec, 0) &&
		    fnmatch(pattern, pn, 0) && fnmatch(pattern, u[i].name, 0))
			continue;
		int size[64];
		bool sign[64];
		int nargs = lp_usdt__arg_types(u[i].args, size, sign, 64);
		fprintf(l->out, "usdt\t%s\t%s\t-\t", spec, l->path);
		if (nargs < 0)
			fprintf(l->out, "-\t");
		else
			fprintf(l->out, "%d\t", nargs);
		for (const char *c = u[i].args; *c; c++)
			fputc(*c == ' ' ? ',' : *c, l->out);
		fprintf(l->out, "%s\tsemaphore=%s\n", u[i].args[0] ? "" : "-", u[i].semaphore ? "yes" : "no");
		l->count++;
	}
	lp_usdt__free(u, nu);
	return 0;
}

long lp_discover__list(const char *pattern, char *const *files, size_t n, const char *exe,
		       bool skip_bad, FILE *out)
{
	long count = 0;
	bool usdt_only = pattern && (!strcmp(pattern, "usdt") || !strncmp(pattern, "usdt:", 5));
	for (size_t i = 0; i < n; i++) {
		char *prefix = lp_malloc(strlen(files[i]) + 2);
		sprintf(prefix, "%s:", files[i]);
		struct listed l = { exe && !strcmp(files[i], exe) ? "" : prefix, files[i], out, 0 };
		if (!usdt_only) {
			/* A mapped file that cannot be read (said) holds
			 * nothing to list; one given, the answer is wrong. */
			struct lp_probe_file *f = lp_probe_file__open(files[i], exe);
			if (!f) {
				free(prefix);
				if (skip_bad)
					continue;
				return -1;
			}
			list_funcs(f, pattern, &l);
			lp_probe_file__free(f);
		}
		int r = list_usdt(pattern, &l);
		free(prefix);
		if (r < 0 && !skip_bad)
			return -1;
		count += l.count;
	}
	return count;
}

/* --- --lines ----------------------------------------------------------- */

static int site_cmp(const void *a, const void *b)
{
	const struct lp_probe_site *x = a, *y = b;
	if (x->line != y->line)
		return (x->line > y->line) - (x->line < y->line);
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* A function's file, source lines and line probe sites: what --lines
 * and --blocks read. */
struct func_src {
	char *path;
	struct lp_probe_file *f;
	uint64_t vaddr, size;	/* the function's; size 0: unknown */
	const char *file;	/* its source file */
	int lo, hi;		/* its lines */
	const char *base;	/* file's name, as FILE:LINE takes it */
	struct lp_probe_site *sites;	/* the line sites of [lo, hi] */
	size_t nsites;
};

static void func_src_close(struct func_src *s)
{
	free(s->sites);
	lp_probe_file__free(s->f);
	free(s->path);
}

/* Function spec of exe (or pid's) for option opt: 0, or -1 after saying
 * why (s closed). */
static int func_src_open(const char *opt, struct lp_probe_spec *spec, const char *exe, pid_t pid,
			 struct func_src *s)
{
	memset(s, 0, sizeof(*s));
	/* FILE:LINE is looked for in the executable (probe.h): a library's
	 * lines have no probe to give. */
	if (spec->lib) {
		lp_error("--%s '%s': line probes go in the executable only (FILE:LINE has no LIB:)",
			 opt, spec->text);
		return -1;
	}
	s->path = lp_probe__path(spec, exe, pid);
	s->f = s->path ? lp_probe_file__open(s->path, exe) : NULL;
	if (!s->f || lp_probe_file__find(s->f, spec, &s->vaddr, &s->size) < 0)
		goto fail;
	if (!lp_dwarf__func_lines(lp_probe_file__dwarf(s->f), s->vaddr, &s->file, &s->lo, &s->hi)) {
		lp_error("%s: %s has no DWARF line information for %s (build with -g)", spec->text,
			 s->path, spec->func);
		goto fail;
	}
	/* The spec lp-trace is given: the file's name, as users write it;
	 * resolved as lp-trace resolves it (every file of that name). */
	s->base = base_name(s->file);
	struct lp_probe_spec line = { .type = LP_PROBE_LINE, .text = spec->text,
				      .file = (char *)s->base, .line = s->lo };
	if (lp_probe_file__sites(s->f, &line, s->hi, &s->sites, &s->nsites) < 0)
		goto fail;
	return 0;
fail:
	func_src_close(s);
	return -1;
}

int lp_discover__lines(struct lp_probe_spec *spec, const char *exe, pid_t pid, FILE *out)
{
	struct func_src fs;
	FILE *src = NULL;

	if (func_src_open("lines", spec, exe, pid, &fs) < 0)
		return -1;
	struct lp_probe_site *sites = fs.sites;
	size_t nsites = fs.nsites;
	if (nsites)
		qsort(sites, nsites, sizeof(*sites), site_cmp);
	if (!(src = fopen(fs.file, "r")))
		lp_error("note: cannot read %s (%s): line numbers only", fs.file, strerror(errno));
	char *text = NULL;
	size_t cap = 0, k = 0;
	for (int ln = 1; ln <= fs.hi; ln++) {
		ssize_t len = src ? getline(&text, &cap, src) : -1;
		if (len > 0 && text[len - 1] == '\n')
			text[--len] = '\0';
		if (ln < fs.lo)
			continue;
		/* This line's sites: how many, and the costliest hit. */
		size_t nl = 0;
		enum lp_insn worst = LP_INSN_NONE;
		for (; k < nsites && sites[k].line < ln; k++)
			;
		for (; k < nsites && sites[k].line == ln; k++, nl++)
			if (nl == 0 || sites[k].insn > worst)
				worst = sites[k].insn;
		if (nl)
			fprintf(out, "%d\t%s:%d\t%s\t%zu\t%s\n", ln, fs.base, ln, lp_insn__name(worst), nl,
				len >= 0 ? text : "");
		else
			fprintf(out, "%d\t-\t-\t0\t%s\n", ln, len >= 0 ? text : "");
	}
	free(text);
	if (src)
		fclose(src);
	func_src_close(&fs);
	return 0;
}

/* --- --blocks ---------------------------------------------------------- */

/* Widens [*lo, *hi] (0: empty) by block b's lines in file (the
 * function's). */
static void block_lines(struct lp_dwarf *dw, uint64_t cu, const struct lp_insnflow *flow,
			const struct lp_cfg_block *b, const char *file, int *lo, int *hi)
{
	for (size_t i = b->first; i <= b->last; i++) {
		const char *f;
		int line;
		if (!lp_dwarf__line_at(dw, cu, flow->insns[i].vaddr, &f, &line) || line <= 0 ||
		    strcmp(f, file))
			continue;
		if (!*lo || line < *lo)
			*lo = line;
		if (line > *hi)
			*hi = line;
	}
}

/* "FILE:LO-HI", "FILE:LO", or "-" when [lo, hi] is empty. */
static void put_lines(FILE *out, const char *file, int lo, int hi)
{
	if (!lo)
		fputc('-', out);
	else if (lo == hi)
		fprintf(out, "%s:%d", base_name(file), lo);
	else
		fprintf(out, "%s:%d-%d", base_name(file), lo, hi);
}

/* The line whose probe (lp-trace FILE:LINE: one site in the function,
 * sites[] of [vaddr, vaddr + size)) runs once each iteration of loop l:
 * the first of those in a block every iteration runs, the head first.
 * 0 when none: every line there has code outside it too. */
static int loop_probe_line(const struct lp_cfg *g, const struct lp_cfg_loop *l,
			   const struct lp_probe_site *sites, size_t nsites, uint64_t vaddr,
			   uint64_t size)
{
	for (size_t k = 0; k < l->nevery; k++) {
		const struct lp_cfg_block *b = &g->blocks[l->every[k]];
		for (size_t i = 0; i < nsites; i++) {
			if (sites[i].addr < b->start || sites[i].addr >= b->end)
				continue;
			size_t copies = 0;
			for (size_t j = 0; j < nsites; j++)
				copies += sites[j].line == sites[i].line && sites[j].addr >= vaddr &&
					  (!size || sites[j].addr < vaddr + size);
			if (copies == 1)
				return sites[i].line;
		}
	}
	return 0;
}

static void put_flags(FILE *out, unsigned flags)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ LP_CFG_ENTRY, "entry" }, { LP_CFG_LOOP_HEAD, "loop-head" },
		{ LP_CFG_RETURNS, "returns" }, { LP_CFG_INDIRECT, "indirect" } };
	bool any = false;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].bit) {
			fprintf(out, "%s%s", any ? "," : "", names[i].name);
			any = true;
		}
	if (!any)
		fputc('-', out);
}

/* The function's structure as DWARF gives it (debuginfo/dwarf.h's
 * lp_dwnode): "inline" and "scope" lines, one numbering for both. */

/* "0x10-0x20,0x30-0x38" ([lo, hi) each), or "-" for none. */
static void put_ranges(FILE *out, const struct lp_dwnode *nd)
{
	if (!nd->nranges)
		fputc('-', out);
	for (size_t i = 0; i < nd->nranges; i++)
		fprintf(out, "%s0x%" PRIx64 "-0x%" PRIx64, i ? "," : "", nd->ranges[i][0], nd->ranges[i][1]);
}

/* What lp-trace takes for a point at the function's offsets (FUNC+OFF of
 * its own body; a copy, named by its symbol), into name; "" when neither
 * (0xADDR then). */
static void entry_base(struct func_src *fs, const struct lp_probe_spec *spec, char *name, size_t size)
{
	struct lp_probe_func fn;

	name[0] = '\0';
	for (size_t i = 0; lp_probe_file__func(fs->f, i, &fn); i++) {
		bool cold;
		const char *suf = lp_fname__clone_suffix(fn.name, &cold);
		if (fn.addr != fs->vaddr || cold || fn.ifunc)
			continue;
		snprintf(name, size, "%s", suf ? fn.name : spec->func);
		if (!suf)
			return;
	}
}

/* The line sites of one file's lines lo..hi: where a block's probe is
 * looked for. */
struct file_sites {
	const char *file;
	int lo, hi;
	struct lp_probe_site *sites;
	size_t n;
};

/* The sites of each file the blocks' lines are in: the function's own
 * (fs's) where they cover them, one walk of the line tables for each
 * other file. */
static struct file_sites *blocks_sites(struct func_src *fs, const struct lp_dwnode *nodes, size_t n,
				       size_t *nfiles)
{
	struct file_sites *v = lp_calloc(1, sizeof(*v));

	v[0] = (struct file_sites){ fs->file, fs->lo, fs->hi, fs->sites, fs->nsites };
	*nfiles = 1;
	for (size_t i = 0; i < n; i++) {
		const struct lp_dwnode *nd = &nodes[i];
		if (nd->inlined || !nd->file || !nd->lo ||
		    (!strcmp(nd->file, fs->file) && nd->lo >= fs->lo && nd->hi <= fs->hi))
			continue;
		size_t k = 1;
		while (k < *nfiles && strcmp(v[k].file, nd->file))
			k++;
		if (k == *nfiles) {
			v = lp_reallocarray(v, ++*nfiles, sizeof(*v));
			v[k] = (struct file_sites){ nd->file, nd->lo, nd->hi, NULL, 0 };
		}
		if (nd->lo < v[k].lo)
			v[k].lo = nd->lo;
		if (nd->hi > v[k].hi)
			v[k].hi = nd->hi;
	}
	for (size_t k = 1; k < *nfiles; k++) {
		/* A range (hi past lo) is walked quietly: no line of it may
		 * have code of this function. */
		struct lp_probe_spec line = { .type = LP_PROBE_LINE, .text = "--blocks",
					      .file = (char *)base_name(v[k].file), .line = v[k].lo };
		if (lp_probe_file__sites(fs->f, &line, v[k].hi + 1, &v[k].sites, &v[k].n) < 0)
			v[k].n = 0;
	}
	return v;
}

/* The first line of block nd whose probe (lp-trace FILE:LINE) has its
 * site in the block, where --vars lists the block's variables; 0: none. */
static int block_probe_line(const struct lp_dwnode *nd, const struct file_sites *fsv, size_t nfiles)
{
	int best = 0;

	for (size_t k = 0; k < nfiles && nd->lo; k++) {
		if (strcmp(fsv[k].file, nd->file) || nd->lo < fsv[k].lo || nd->hi > fsv[k].hi)
			continue;
		for (size_t i = 0; i < fsv[k].n; i++) {
			const struct lp_probe_site *st = &fsv[k].sites[i];
			if (st->line < nd->lo || st->line > nd->hi || (best && st->line >= best))
				continue;
			for (size_t r = 0; r < nd->nranges; r++)
				if (st->addr >= nd->ranges[r][0] && st->addr < nd->ranges[r][1])
					best = st->line;
		}
		break;
	}
	return best;
}

static void put_structure(FILE *out, struct func_src *fs, const struct lp_probe_spec *spec,
			  const struct lp_dwnode *nodes, size_t n)
{
	char base[512];
	size_t nfiles;
	struct file_sites *fsv = blocks_sites(fs, nodes, n, &nfiles);

	entry_base(fs, spec, base, sizeof(base));
	for (size_t i = 0; i < n; i++) {
		const struct lp_dwnode *nd = &nodes[i];
		fprintf(out, "%s\t%zu\t", nd->inlined ? "inline" : "scope", i);
		if (nd->parent >= 0)
			fprintf(out, "%d", nd->parent);
		else
			fputc('-', out);
		fprintf(out, "\t%d\t", nd->depth);
		if (nd->inlined) {
			fprintf(out, "%s\t", nd->fn.name ? nd->fn.name : "?");
			if (nd->fn.call_file && nd->fn.call_line)
				fprintf(out, "%s:%" PRIu64, base_name(nd->fn.call_file), nd->fn.call_line);
			else
				fputc('-', out);
			fputc('\t', out);
			put_ranges(out, nd);
			/* A point event at its first instruction, each time
			 * the call runs. */
			if (!nd->entry)
				fprintf(out, "\t-\n");
			else if (base[0] && nd->entry >= fs->vaddr && fs->size && nd->entry < fs->vaddr + fs->size)
				fprintf(out, "\t%s+0x%" PRIx64 "\n", base, nd->entry - fs->vaddr);
			else
				fprintf(out, "\t0x%" PRIx64 "\n", nd->entry);
			continue;
		}
		put_lines(out, nd->file ? nd->file : "", nd->lo, nd->hi);
		fputc('\t', out);
		put_ranges(out, nd);
		fputc('\t', out);
		for (size_t v = 0; v < nd->nvars; v++)
			fprintf(out, "%s%s", v ? "," : "", nd->vars[v]);
		if (!nd->nvars)
			fputc('-', out);
		fputc('\t', out);
		int line = block_probe_line(nd, fsv, nfiles);
		put_lines(out, nd->file ? nd->file : "", line, line);
		fputc('\n', out);
	}
	for (size_t k = 1; k < nfiles; k++)
		free(fsv[k].sites);
	free(fsv);
}

int lp_discover__blocks(struct lp_probe_spec *spec, const char *exe, pid_t pid, FILE *out)
{
	struct func_src fs;
	struct lp_insnflow flow = { 0 };
	struct lp_cfg g = { 0 };
	int ret = -1;
	uint64_t cu = 0;

	if (func_src_open("blocks", spec, exe, pid, &fs) < 0)
		return -1;
	struct lp_dwarf *dw = lp_probe_file__dwarf(fs.f);
	const char *file = fs.file;
	uint64_t vaddr = fs.vaddr, size = fs.size;
	/* Its unit: that of a line site in it. */
	for (size_t i = 0; i < fs.nsites && !cu; i++)
		if (fs.sites[i].addr >= vaddr && (!size || fs.sites[i].addr < vaddr + size))
			cu = fs.sites[i].cu;
	if (!cu || lp_probe_file__flow(fs.f, cu, vaddr, &flow) < 0 || lp_cfg__build(&flow, &g) < 0) {
		lp_error("%s: cannot decode %s's instructions in %s", spec->text, spec->func, fs.path);
		goto out;
	}
	for (size_t i = 0; i < g.nloops; i++) {
		const struct lp_cfg_loop *l = &g.loops[i];
		const struct lp_cfg_block *h = &g.blocks[l->head];
		int first = loop_probe_line(&g, l, fs.sites, fs.nsites, vaddr, size), llo = 0, lhi = 0;
		for (size_t k = 0; k < l->nblocks; k++)
			block_lines(dw, cu, &flow, &g.blocks[l->blocks[k]], file, &llo, &lhi);
		fprintf(out, "loop\t%zu\t", i);
		if (l->parent >= 0)
			fprintf(out, "%d", l->parent);
		else
			fputc('-', out);
		fprintf(out, "\t%d\t0x%" PRIx64 "\t", l->head, h->start);
		put_lines(out, file, llo, lhi);
		fprintf(out, "\t%zu\t", l->nblocks);
		put_lines(out, file, first, first);
		fputc('\n', out);
	}
	struct lp_dwnode *nodes;
	size_t nnodes;
	if (lp_dwarf__structure(dw, vaddr, &nodes, &nnodes)) {
		put_structure(out, &fs, spec, nodes, nnodes);
		lp_dwnodes__free(nodes, nnodes);
	}
	for (size_t i = 0; i < g.nblocks; i++) {
		const struct lp_cfg_block *b = &g.blocks[i];
		int blo = 0, bhi = 0;
		block_lines(dw, cu, &flow, b, file, &blo, &bhi);
		fprintf(out, "block\t%zu\t0x%" PRIx64 "\t0x%" PRIx64 "\t", i, b->start, b->end);
		put_lines(out, file, blo, bhi);
		fputc('\t', out);
		if (b->succ[0] < 0 && b->succ[1] < 0)
			fputc('-', out);
		for (int k = 0, any = 0; k < 2; k++)
			if (b->succ[k] >= 0)
				fprintf(out, "%s%d", any++ ? "," : "", b->succ[k]);
		fputc('\t', out);
		if (b->loop >= 0)
			fprintf(out, "%d", b->loop);
		else
			fputc('-', out);
		fputc('\t', out);
		put_flags(out, b->flags);
		fputc('\n', out);
	}
	ret = 0;
out:
	lp_cfg__fini(&g);
	lp_insnflow__fini(&flow);
	func_src_close(&fs);
	return ret;
}

/* --- --vars ------------------------------------------------------------ */

/* DWARF's x86-64 register numbers, as the assembler names them. */
static const char *reg_name(unsigned reg)
{
	static const char *const names[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip" };
	return reg < sizeof(names) / sizeof(names[0]) ? names[reg] : "?";
}

/* Where the selected variable lives: "reg:rdi", "stack:CFA-20",
 * "stack:rbp-8", "mem:rbx+8", "addr:0x4010", "const:5", "optimized-out",
 * "computed" (DW_OP_stack_value: a value computed from others, stored
 * nowhere), "expr" (another DWARF expression lp-trace cannot read: why in
 * the capture column). */
static void location(struct lp_dwscope *sc, const struct lp_dwvar *v, char *buf, size_t size)
{
	struct lp_dwloc loc;
	char why[256];
	int r = lp_dwscope__location(sc, &loc, why, sizeof(why));
	if (r > 0 && v->has_const)
		snprintf(buf, size, "const:%lld", v->const_value);
	else if (r > 0 || (r < 0 && strstr(why, "optimized out")))
		snprintf(buf, size, "optimized-out");
	else if (r < 0 && strstr(why, "stack_value"))
		snprintf(buf, size, "computed");
	else if (r < 0)
		snprintf(buf, size, "expr");
	else if (!loc.mem)
		snprintf(buf, size, "reg:%s", reg_name(loc.reg));
	else if (loc.reg == LP_DWLOC_ADDR)
		snprintf(buf, size, "addr:0x%llx", (unsigned long long)loc.off);
	else if (loc.reg == LP_DWLOC_CFA)
		snprintf(buf, size, "stack:CFA%+lld", loc.off);
	else
		snprintf(buf, size, "%s:%s%+lld", loc.reg == 6 || loc.reg == 7 ? "stack" : "mem",
			 reg_name(loc.reg), loc.off);
}

int lp_discover__vars(const struct lp_probe_spec *spec, const char *exe, pid_t pid, FILE *out)
{
	char *path = lp_probe__path(spec, exe, pid);
	struct lp_probe_file *f = path ? lp_probe_file__open(path, exe) : NULL;
	struct lp_probe_site *sites = NULL;
	size_t nsites = 0, listed = 0;
	int ret = -1;

	if (!f || lp_probe_file__sites(f, spec, spec->line, &sites, &nsites) < 0)
		goto out;
	if (nsites)
		qsort(sites, nsites, sizeof(*sites), site_cmp);
	for (size_t s = 0; s < nsites; s++) {
		struct lp_dwscope *sc = lp_dwarf__scope(lp_probe_file__dwarf(f), sites[s].cu, sites[s].addr);
		size_t nv = lp_dwscope__nvars(sc);
		for (size_t i = 0; i < nv; i++) {
			struct lp_dwvar v, w;
			char where[128], why[512] = "";
			lp_dwscope__var_at(sc, i, &v);
			if (!v.name)
				continue;
			location(sc, &v, where, sizeof(where));
			/* A name lp_dwscope__var finds nearer in: not this one. */
			const char *shadow = NULL;
			for (size_t j = 0; j < i && !shadow; j++) {
				lp_dwscope__var_at(sc, j, &w);
				if (w.name && !strcmp(w.name, v.name))
					shadow = w.func ? w.func : "?";
			}
			lp_dwscope__var_at(sc, i, &v);
			int r = shadow ? -1 : lp_probe_file__capture(f, spec, &sites[s], v.name, why,
								     sizeof(why));
			/* lp-trace's message, less its "probe 'X': " */
			const char *reason = !strncmp(why, "probe '", 7) && strstr(why, "': ")
					     ? strstr(why, "': ") + 3 : why;
			fprintf(out, "0x%llx\t%s%s\t%s\t%s\t%s\t%s\t", (unsigned long long)sites[s].addr,
				v.inlined ? "inlined:" : "", v.func ? v.func : "?", v.param ? "param" : "local",
				v.name, v.type_name, where);
			if (shadow)
				fprintf(out, "no: shadowed by a nearer '%s' (of %s)\n", v.name, shadow);
			else if (r < 0)
				fprintf(out, "no: %s\n", reason);
			else
				fprintf(out, "yes\n");
			listed++;
		}
		lp_dwscope__free(sc);
	}
	if (!listed)
		lp_error("%s: no variables in scope at %s in %s", spec->text, spec->text, path);
	ret = listed ? 0 : -1;
out:
	free(sites);
	lp_probe_file__free(f);
	free(path);
	return ret;
}
