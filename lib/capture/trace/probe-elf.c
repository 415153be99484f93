/* probe-elf.c - the files probes are in: an ELF file opened with its
 * function symbols and DWARF (its debug file's when it is stripped), the
 * libraries a probe names or a program needs, the code bytes and the
 * classes of their instructions, and FUNC found among the symbols (or
 * "did you mean"). */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "capture/trace/funcname.h"
#include "capture/trace/usdt.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/elftab.h"
#include "debuginfo/procns.h"

/* --- the file: its symbols and DWARF ---------------------------------- */

void lp_probe_elfobj_close(struct elfobj *o)
{
	lp_dwarf__free(o->dw);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	free(o->fs.syms);
	lp_dwfile__free(o->syms_file);
	free(o->cold);
}

/* Whether e has a static symbol table (.symtab): a file without one,
 * and without a debug file that has one, is stripped. */
static bool has_symtab(Elf *e)
{
	struct lp_elfsyms it;
	return lp_elfsyms__open(&it, e, SHT_SYMTAB);
}

/* The file's function symbols, read as the symbolizer reads them
 * (libdwfl: its .symtab or its debug file's, else its .dynsym and the
 * functions a MiniDebugInfo names), at their link-time addresses. */
static void load_syms(struct elfobj *o, const char *path)
{
	o->syms_file = lp_dwfile__open(path);
	struct lp_dwmod *m = lp_dwfile__module(o->syms_file);
	uint64_t bias = 0;
	int n = m && lp_dwmod__bias(m, &bias) ? lp_dwmod__nsyms(m) : 0;
	o->fs.nsyms = 0;
	o->fs.syms = lp_calloc(n > 0 ? (size_t)n : 1, sizeof(*o->fs.syms));
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Word shndx;
		uint64_t addr;
		const char *name = lp_dwmod__sym(m, i, &s, &addr, &shndx);
		int t = GELF_ST_TYPE(s.st_info);
		if (!name || !name[0] || (t != STT_FUNC && t != STT_GNU_IFUNC) || shndx == SHN_UNDEF ||
		    !s.st_value)
			continue;
		o->fs.syms[o->fs.nsyms++] =
			(struct lp_fsym){ name, addr - bias, s.st_size, t == STT_GNU_IFUNC };
	}
}

int lp_probe_elfobj_open(struct elfobj *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0) {
		lp_error_errno("cannot open '%s'", path);
		return -1;
	}
	elf_version(EV_CURRENT);
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF) {
		lp_error("'%s' is not an ELF file", path);
		return -1;
	}
	load_syms(o, path);
	o->dw = lp_dwarf__open(o->elf, lp_dwfile__module(o->syms_file));
	/* Stripped: neither it nor its debug file (found once, by libdwfl
	 * for both its symbols and its DWARF) has a .symtab. */
	Elf *dbg_elf;
	const char *dbg = lp_dwarf__debug_file_of(o->dw, &dbg_elf);
	o->stripped = !has_symtab(o->elf);
	if (o->stripped && dbg && dbg_elf && has_symtab(dbg_elf)) {
		o->stripped = false;
		o->dbg_path = dbg;
	}
	o->minidebug = o->stripped && lp_elftab__section(o->elf, ".gnu_debugdata");
	return 0;
}

/* --- libraries -------------------------------------------------------- */

static bool lib_matches(const char *path, const char *lib)
{
	if (strchr(lib, '/'))
		return !strcmp(path, lib);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(lib);
	if (strncmp(base, lib, n))
		return false;
	/* "libc" matches libc.so.6 and libc-2.36.so, not libcrypto.so. */
	return base[n] == '\0' || base[n] == '.' || base[n] == '-';
}

/* A library's path: as mapped by pid, else found in the usual places. */
char *lp_probe_find_lib(const char *lib, pid_t pid)
{
	char *want = NULL;
	if (strchr(lib, '/'))
		return access(lib, R_OK) == 0 ? lp_strdup(lib) : NULL;
	/* "c" -> "libc", as ld's -l does. */
	if (strncmp(lib, "lib", 3)) {
		want = lp_malloc(strlen(lib) + 4);
		sprintf(want, "lib%s", lib);
		lib = want;
	}
	char *found = NULL;
	struct lp_maps m;
	if (pid > 0 && lp_maps__open(&m, pid) == 0) {
		while (!found && lp_maps__next(&m)) {
			const char *p = strchr(m.name, '/');
			/* Mapped from the process's own file tree. */
			if (p && lib_matches(p, lib))
				found = lp_procns__path(pid, p);
		}
		lp_maps__close(&m);
	}
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib" };
	for (size_t i = 0; !found && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		char *best = NULL;
		while (d && (de = readdir(d))) {
			if (!strstr(de->d_name, ".so") || !lib_matches(de->d_name, lib))
				continue;
			/* An ELF file (libc.so is a linker script), the
			 * shortest versioned name: the soname ld.so loads. */
			char cand[PATH_MAX];
			unsigned char magic[4] = { 0 };
			snprintf(cand, sizeof(cand), "%s/%s", dirs[i], de->d_name);
			int fd = open(cand, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t got = read(fd, magic, 4);
			close(fd);
			if (got != 4 || memcmp(magic, "\177ELF", 4))
				continue;
			bool v = strstr(de->d_name, ".so.") != NULL;
			bool bv = best && strstr(best, ".so.") != NULL;
			if (!best || (v && !bv) || (v == bv && strlen(de->d_name) < strlen(best))) {
				free(best);
				best = lp_strdup(de->d_name);
			}
		}
		if (d)
			closedir(d);
		if (best) {
			found = lp_malloc(strlen(dirs[i]) + strlen(best) + 2);
			sprintf(found, "%s/%s", dirs[i], best);
			free(best);
		}
	}
	free(want);
	return found;
}

/* The directories of exe's DT_RPATH or DT_RUNPATH (ld.so takes RUNPATH
 * when both are there), $ORIGIN made exe's own directory; NULL when it
 * has neither.  pyenv's python3.11 finds its libpython so. */
static char **run_paths(Elf *e, const char *exe, size_t *n)
{
	const char *rpath = NULL, *runpath = NULL, *s;
	struct lp_elfdyn dyn;
	int64_t tag;
	if (lp_elfdyn__open(&dyn, e))
		while ((s = lp_elfdyn__next(&dyn, &tag))) {
			if (tag == DT_RPATH)
				rpath = s;
			else if (tag == DT_RUNPATH)
				runpath = s;
		}
	const char *list = runpath ? runpath : rpath;
	*n = 0;
	if (!list)
		return NULL;
	char *real = realpath(exe, NULL), *slash = real ? strrchr(real, '/') : NULL;
	if (slash)
		*slash = 0;
	char **dirs = NULL, *copy = lp_strdup(list), *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		const char *rest = !strncmp(dir, "$ORIGIN", 7) ? dir + 7
				   : !strncmp(dir, "${ORIGIN}", 9) ? dir + 9 : NULL;
		char *path;
		if (rest && !slash)
			continue;
		if (rest) {
			path = lp_malloc(strlen(real) + strlen(rest) + 1);
			sprintf(path, "%s%s", real, rest);
		} else {
			path = lp_strdup(dir);
		}
		dirs = lp_reallocarray(dirs, *n + 1, sizeof(*dirs));
		dirs[(*n)++] = path;
	}
	free(copy);
	free(real);
	return dirs;
}

/* A command not started yet maps nothing: the libraries its executable
 * needs (DT_NEEDED: in its run paths, else found as LIB:FUNC's are) stand
 * for those it will map. */
static void add_needed(const char *exe, char ***files, size_t *n)
{
	elf_version(EV_CURRENT);
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	Elf *e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct lp_elfdyn dyn;
	if (e && lp_elfdyn__open(&dyn, e)) {
		size_t ndirs = 0;
		char **dirs = run_paths(e, exe, &ndirs);
		const char *name;
		int64_t tag;
		while ((name = lp_elfdyn__next(&dyn, &tag))) {
			char *path = NULL;
			if (tag != DT_NEEDED)
				continue;
			for (size_t k = 0; k < ndirs && !path; k++) {
				path = lp_malloc(strlen(dirs[k]) + strlen(name) + 2);
				sprintf(path, "%s/%s", dirs[k], name);
				if (access(path, R_OK) < 0) {
					free(path);
					path = NULL;
				}
			}
			if (!path && !(path = lp_probe_find_lib(name, 0)))
				continue;
			*files = lp_reallocarray(*files, *n + 1, sizeof(**files));
			(*files)[(*n)++] = path;
		}
		for (size_t k = 0; k < ndirs; k++)
			free(dirs[k]);
		free(dirs);
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/* The files a probe may be in: exe, then the files pid maps, or (pid 0)
 * the libraries exe needs. */
char **lp_probe_target_files(const char *exe, pid_t pid, size_t *n)
{
	char **files = lp_usdt__files(exe, pid, n);
	if (pid <= 0)
		add_needed(exe, &files, n);
	return files;
}

/* --- its code: bytes, instruction classes ----------------------------- */

/* n bytes of the file at offset off, or NULL past its end.  From the
 * file's image: libelf 0.188 keeps each elf_getdata_rawchunk in a list it
 * searches linearly, which made --list of a 10,000-function binary
 * (a read per function) quadratic: 3.6 s of 4.7 for PostgreSQL's. */
const unsigned char *lp_probe_file_bytes(Elf *elf, uint64_t off, size_t n)
{
	size_t size;
	const char *image = elf_rawfile(elf, &size);
	if (!image || off > size || n > size - off)
		return NULL;
	return (const unsigned char *)image + off;
}

/* The cost of a uprobe depends on the probed instruction (PERF-NOTES.md):
 * endbr64 is single-stepped out of line (~13 us), push %rbp is emulated
 * (~0.6 us), a 5-byte nop optimised.  When a function opens with endbr64
 * followed by a push, a call or a nop, probe that: the stack pointer and the
 * arguments are the same there. */
uint64_t lp_probe_skip_endbr(Elf *elf, uint64_t off)
{
	const unsigned char *b = lp_probe_file_bytes(elf, off, 9);
	if (!b || b[0] != 0xf3 || b[1] != 0x0f || b[2] != 0x1e || b[3] != 0xfa)
		return 0;
	enum lp_insn next = lp_insn__classify(b + 4, 5);
	return next == LP_INSN_NOP || next == LP_INSN_EMULATED || next == LP_INSN_CALL ? 4 : 0;
}

/* The class of the instruction at file offset off, which decides what a
 * uprobe there costs (lib/capture/trace/tracecal.c calibrates each class). */
enum lp_insn lp_probe_insn_at(Elf *elf, uint64_t off)
{
	for (size_t n = 16; n > 0; n /= 2) {
		const unsigned char *b = lp_probe_file_bytes(elf, off, n);
		if (b)
			return lp_insn__classify(b, n);
	}
	return LP_INSN_STEPPED;
}

/* --- FUNC among its symbols, or "did you mean" ------------------------ */

/* FUNC is an IFUNC resolver: say so, with the implementations it may pick. */
static void ifunc_error(const struct lp_probe_spec *spec, const struct elfobj *o, const char *path)
{
	char impls[512] = "";
	size_t nl = strlen(spec->func);
	for (size_t i = 0; i < o->fs.nsyms && strlen(impls) < 300; i++) {
		const char *nm = o->fs.syms[i].name;
		if (o->fs.syms[i].ifunc || strncmp(nm, "__", 2) || strncmp(nm + 2, spec->func, nl) ||
		    nm[2 + nl] != '_')
			continue;
		snprintf(impls + strlen(impls), sizeof(impls) - strlen(impls), "%s%s",
			 impls[0] ? ", " : "", nm);
	}
	if (!impls[0] && o->stripped)
		snprintf(impls, sizeof(impls), " (not among the dynamic symbols of this stripped file)");
	else if (impls[0])
		memmove(impls + 2, impls, strlen(impls) + 1), memcpy(impls, ": ", 2);
	lp_error("probe '%s': %s in %s is an IFUNC resolver, run once by ld.so; probe its implementation%s",
		 spec->text, spec->func, path, impls);
}

/* A function's inlined copies as probes, CALLER+0xOFF, with their call
 * sites. */
struct copy {
	const char *caller;
	uint64_t off;
	const char *file;
	uint64_t line;
};
struct copy_list {
	const struct elfobj *o;
	VEC(struct copy) copies;
};

static void add_copy(const struct lp_dwcopy *c, void *arg)
{
	struct copy_list *l = arg;
	const struct lp_fsym *caller = c->caller ? lp_fname__sym(&l->o->fs, c->caller) : NULL;
	if (!caller || c->entry < caller->value)
		return;	/* not in a function a probe can name */
	const char *file = c->fn.call_file ? strrchr(c->fn.call_file, '/') : NULL;
	struct copy cp = { caller->name, c->entry - caller->value, file ? file + 1 : c->fn.call_file,
			   c->fn.call_line };
	LP_PUSH(l->copies, cp);
}

static int copy_cmp(const void *a, const void *b)
{
	const struct copy *x = a, *y = b;
	int r = strcmp(x->caller, y->caller);
	return r ? r : (x->off > y->off) - (x->off < y->off);
}

/* FUNC has no symbol: when its DWARF has it inlined into other functions,
 * say where, and how those copies are probed (true: said). */
static bool inlined_only(const struct lp_probe_spec *spec, const struct elfobj *o, const char *path)
{
	struct copy_list l = { .o = o };
	size_t n = o->dw ? lp_dwarf__inlined_copies(o->dw, spec->func, add_copy, &l) : 0;
	struct copy *v = l.copies.v;
	if (!n) {
		free(v);
		return false;
	}
	char list[320] = "";
	qsort(v, l.copies.n, sizeof(*v), copy_cmp);
	for (size_t i = 0; i < l.copies.n && i < 3; i++) {
		size_t len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s+0x%" PRIx64 " (%s:%" PRIu64 ")",
			 i ? ", " : ": ", v[i].caller, v[i].off, v[i].file ? v[i].file : "?", v[i].line);
	}
	lp_error("probe '%s': %s has no code of its own in %s: it is inlined, %zu %s%s%s; a "
		 "copy's entry is a probe as named there (an event: a copy has no return), a "
		 "line of its body probes every copy (FILE:LINE)",
		 spec->text, spec->func, path, n, n == 1 ? "copy" : "copies", list,
		 l.copies.n > 3 ? ", ..." : "");
	free(v);
	return true;
}

/* Where spec's probe goes in o: its function's compiled copies (find_func;
 * for FUNC+OFF the function itself, at OFF), each with its address in
 * (*copies)[k].sym->value (+OFF), *shown its spans' name; an address's
 * one copy has no symbol.  -1 after saying why. */
int lp_probe_func_address(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			  bool verbose, struct lp_fcopy **copies, size_t *ncopies, uint64_t *vaddr0,
			  char **shown)
{
	*copies = NULL;
	*ncopies = 0;
	*shown = NULL;
	if (!spec->func) {
		*copies = lp_calloc(1, sizeof(**copies));
		*ncopies = 1;
		*vaddr0 = spec->off;
		return 0;
	}
	struct lp_fname_query q = { spec->text, spec->func, spec->params, spec->params_or_args,
				    spec->no_demangle, false };
	int found = lp_fname__find(&o->fs, &q, path, copies, ncopies, shown);
	if (q.params_used) {
		/* "f(x)" named a parameter list: no values to capture. */
		struct lp_probe_spec *sp = (struct lp_probe_spec *)spec;
		for (size_t v = 0; v < sp->nvars; v++)
			free(sp->vars[v]);
		sp->nvars = 0;
	}
	if (found < 0)
		return -1;
	if (o->stripped && (verbose || !*ncopies))
		lp_error("note: %s is stripped: using its dynamic symbols (.dynsym)%s", path,
			 o->minidebug ? " and its MiniDebugInfo (.gnu_debugdata)" : "");
	if (o->dbg_path && verbose)
		lp_error("note: %s is stripped: using its debug file %s", path, o->dbg_path);
	if (!*ncopies) {
		char hint[512];
		if (inlined_only(spec, o, path))
			return -1;
		lp_fname__suggest(&o->fs, spec->func, hint, sizeof(hint));
		lp_error("probe '%s': no function '%s' in %s%s", spec->text, spec->func, path, hint);
		return -1;
	}
	const struct lp_fsym *s = (*copies)[0].sym;
	if (s->ifunc) {
		/* ld.so calls it once to pick an implementation; the calls the
		 * user means go to that implementation. */
		ifunc_error(spec, o, path);
		return -1;
	}
	if (spec->type == LP_PROBE_OFFSET) {
		/* An offset is into one body: the function's own. */
		size_t k = 0;
		while (k < *ncopies && (*copies)[k].copy)
			k++;
		if (k == *ncopies) {
			lp_error("probe '%s': %s has no body of its own in %s, only copies (%s...): "
				 "name one by its symbol", spec->text, spec->func, path, s->name);
			return -1;
		}
		s = (*copies)[k].sym;
		if (s->size && spec->off >= s->size) {
			lp_error("probe '%s': offset %llu is past the end of %s (%llu bytes)",
				 spec->text, (unsigned long long)spec->off, spec->func,
				 (unsigned long long)s->size);
			return -1;
		}
		struct lp_fcopy own = (*copies)[k];
		(*copies)[k].copy = NULL;
		for (size_t i = 0; i < *ncopies; i++)
			free((*copies)[i].copy);
		(*copies)[0] = own;
		*ncopies = 1;
		*vaddr0 = s->value + spec->off;
		return 0;
	}
	*vaddr0 = s->value;
	return 0;
}
