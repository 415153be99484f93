/* probe.c - probe specifications resolved with libelf and, through
 * lib/debuginfo/dwarf.h, libdw. */
#include "capture/trace/probe.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "debuginfo/demangle.h"
#include "debuginfo/disasm.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/insnflow.h"
#include "debuginfo/procns.h"
#include "base/syscalls.h"
#include "base/util.h"
#include "capture/trace/funcname.h"
#include "capture/trace/hazard.h"
#include "capture/kfeatures.h"
#include "capture/trace/pyprobe.h"
#include "capture/trace/usdt.h"

/* --- parsing ---------------------------------------------------------- */

static bool is_ident(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' ||
		      s[i] == '$' || s[i] == '@'))
			return false;
	return true;
}

/* A value a probe captures: a name, then members read through it as C
 * writes them ("r->conn", "s.hdr.len", "r->conn->peer.port"). */
static bool is_value_expr(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t w = 0;
		while (i + w < n && (isalnum((unsigned char)s[i + w]) || s[i + w] == '_' ||
				     (i == 0 && (s[w] == '$' || s[w] == '@'))))
			w++;
		if (!w)
			return false;
		i += w;
		if (i == n)
			return true;
		if (s[i] == '.')
			i++;
		else if (i + 1 < n && s[i] == '-' && s[i + 1] == '>')
			i += 2;
		else
			return false;
		if (i == n)
			return false;
	}
	return n > 0;
}

/* The length of the variable's name that starts expr (is_value_expr):
 * what comes before its first member. */
static size_t value_name_len(const char *expr)
{
	size_t n = 0;
	while (expr[n] && expr[n] != '.' && !(expr[n] == '-' && expr[n + 1] == '>'))
		n++;
	return n;
}

/* A function's name as profiles show it: an identifier, or a demangled
 * C++ or Rust name ("store::Shop::checkout", "scale<int>",
 * "(anonymous namespace)::f", "S::operator()"), without its parameters. */
static bool is_func_name(const char *s)
{
	if (is_ident(s, strlen(s)))
		return true;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.$@:<>,*& ~[]()-+=!/%^|", *p))
			return false;
	return *s != '\0';
}

/* Where text's parameter or value list starts: its first '(' but those of
 * "(anonymous namespace)" and "operator()", which are part of a name. */
static char *list_start(char *text)
{
	for (char *p = text; (p = strchr(p, '(')); p++) {
		if (!strncmp(p, "(anonymous namespace)", 21)) {
			p += 20;
			continue;
		}
		if (p - text >= 8 && !strncmp(p - 8, "operator()", 10)) {
			p++;
			continue;
		}
		return p;
	}
	return NULL;
}

/* The ')' closing the '(' at open, or NULL. */
static char *list_end(char *open)
{
	int depth = 0;
	for (char *p = open; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p;
	}
	return NULL;
}

/* "(a,b,c)" at the end of text: splits it off into spec->vars.  A C++
 * parameter list before it, "f(int)(n)", goes to spec->params; one list
 * alone, "f(int)", is both (resolved against the symbols, params_or_args),
 * and only parameters when it cannot be variable names ("f(char**)"). */
static int parse_vars(struct lp_probe_spec *spec, char *text)
{
	char *open = list_start(text);
	if (!open)
		return 0;
	size_t len = strlen(open);
	char *close = list_end(open);
	if (!close) {
		lp_error("probe '%s': missing ')'", spec->text);
		return -1;
	}
	if (close[1] == '(') {
		spec->params = lp_strndup(open, (size_t)(close + 1 - open));
		memmove(open, close + 1, strlen(close + 1) + 1);
		close = list_end(open);
		len = strlen(open);
		if (!close || close[1]) {
			lp_error("probe '%s': expected FUNC(PARAMS)(ARG,...)", spec->text);
			return -1;
		}
	} else if (close[1] == ' ') {
		/* "S::f() const": a parameter list and its qualifiers. */
		spec->params = lp_strdup(open);
		*open = '\0';
		return 0;
	} else if (!close[1]) {
		/* One list: variables if it reads as variable names. */
		bool idents = true;
		for (char *s = open + 1; s < close;) {
			size_t n = strcspn(s, ",)");
			size_t m = n;
			const char *w = s;
			while (m && w[m - 1] == ' ')
				m--;
			while (m && *w == ' ')
				w++, m--;
			idents &= is_value_expr(w, m);
			s += n + (s[n] == ',');
		}
		if (close > open + 1 && !idents && strstr(open, "->")) {
			/* No C++ parameter list has it: a member misspelt. */
			lp_error("probe '%s': bad value '%.*s': expected NAME, NAME->MEMBER or NAME.MEMBER",
				 spec->text, (int)(close - open - 1), open + 1);
			return -1;
		}
		if (close > open + 1 && !idents) {
			spec->params = lp_strdup(open);
			*open = '\0';
			return 0;
		}
		if (close > open + 1)
			spec->params_or_args = true;
		spec->params = lp_strdup(open);
	}
	if (open[len - 1] != ')') {
		lp_error("probe '%s': missing ')'", spec->text);
		return -1;
	}
	open[len - 1] = '\0';
	*open = '\0';
	char *s = open + 1;
	while (*s) {
		size_t n = strcspn(s, ",");
		while (n && s[n - 1] == ' ')
			n--;
		while (*s == ' ')
			s++, n--;
		if (!is_value_expr(s, n)) {
			lp_error("probe '%s': bad variable name '%.*s'", spec->text, (int)n, s);
			return -1;
		}
		spec->vars = lp_reallocarray(spec->vars, spec->nvars + 1, sizeof(char *));
		spec->vars[spec->nvars++] = lp_strndup(s, n);
		s += strcspn(s, ",");
		if (*s == ',')
			s++;
	}
	if (spec->nvars > LP_TRACE_MAX_CAPS) {
		lp_error("probe '%s': at most %d values a probe", spec->text, LP_TRACE_MAX_CAPS);
		return -1;
	}
	return 0;
}

/* syscall:NAME or tp:SUBSYSTEM:EVENT: 1 when s is one, 0 when it is not,
 * -1 after a message. */
static int parse_kernel_spec(struct lp_probe_spec *spec, const char *s)
{
	if (!strncmp(s, "syscall:", 8)) {
		spec->type = LP_PROBE_SYSCALLS;
		spec->name = lp_strdup(s + 8);
		if (lp_syscall__number(spec->name) < 0) {
			lp_error("probe '%s': no system call '%s'", spec->text, spec->name);
			return -1;
		}
		return 1;
	}
	if (!strncmp(s, "tp:", 3)) {
		spec->type = LP_PROBE_TRACEPOINT;
		const char *colon = strchr(s + 3, ':');
		if (!colon || !is_ident(s + 3, colon - (s + 3)) || !is_ident(colon + 1, strlen(colon + 1))) {
			lp_error("probe '%s': expected tp:SUBSYSTEM:EVENT", spec->text);
			return -1;
		}
		spec->name = lp_strdup(s + 3);
		return 1;
	}
	return 0;
}

/* The argument list of usdt:...:NAME(argN[:str],...), split off s into
 * spec->vars as written ("arg1:str"): which arguments to capture, and those
 * to read as C strings (a USDT argument spec gives sizes, not types).  0, or
 * -1 after a message. */
static int parse_usdt_args(struct lp_probe_spec *spec, char *s)
{
	char *open = strchr(s, '(');
	if (!open)
		return 0;
	size_t len = strlen(open);
	if (open[len - 1] != ')') {
		lp_error("probe '%s': missing ')'", spec->text);
		return -1;
	}
	open[len - 1] = '\0';
	*open = '\0';
	for (char *w = strtok(open + 1, ","); w; w = strtok(NULL, ",")) {
		w += strspn(w, " ");
		size_t n = strcspn(w, " ");
		w[n] = '\0';
		char *end;
		long k = strncmp(w, "arg", 3) ? -1 : strtol(w + 3, &end, 10);
		if (k < 0 || k >= LP_TRACE_MAX_CAPS || end == w + 3 || (*end && strcmp(end, ":str"))) {
			lp_error("probe '%s': bad argument '%s' (arg0 to arg%d, ':str' to read a C string)",
				 spec->text, w, LP_TRACE_MAX_CAPS - 1);
			return -1;
		}
		if (spec->nvars == LP_TRACE_MAX_CAPS) {
			lp_error("probe '%s': at most %d values a probe", spec->text, LP_TRACE_MAX_CAPS);
			return -1;
		}
		spec->vars = lp_reallocarray(spec->vars, spec->nvars + 1, sizeof(char *));
		spec->vars[spec->nvars++] = lp_strdup(w);
	}
	return 0;
}

/* usdt:[FILE:]PROVIDER:NAME[(ARGS)]: 1 when s is one, 0 when it is not, -1
 * after a message.  FILE is a path or a library's name (as LIB:FUNC's). */
static int parse_usdt_spec(struct lp_probe_spec *spec, char *s)
{
	if (strncmp(s, "usdt:", 5))
		return 0;
	spec->type = LP_PROBE_USDTS;
	if (parse_usdt_args(spec, s) < 0)
		return -1;
	const char *name = strrchr(s + 5, ':');
	const char *prov = name ? name : s + 5;
	while (prov > s + 5 && prov[-1] != ':')
		prov--;
	if (!name || !is_ident(prov, (size_t)(name - prov)) || !is_ident(name + 1, strlen(name + 1)) ||
	    (prov > s + 5 && prov - 1 == s + 5)) {
		lp_error("probe '%s': expected usdt:PROVIDER:NAME or usdt:FILE:PROVIDER:NAME", spec->text);
		return -1;
	}
	if (prov > s + 5)
		spec->lib = lp_strndup(s + 5, (size_t)(prov - 1 - (s + 5)));
	spec->provider = lp_strndup(prov, (size_t)(name - prov));
	spec->name = lp_strdup(name + 1);
	return 1;
}

/* python:[MODULE:]NAME: 1 when s is one, 0 when it is not, -1 after a
 * message.  NAME is a qualified name (co_qualname: Shop.checkout,
 * main.<locals>.inner) or a glob of them (* and ?), matched whole; MODULE
 * a module's dotted name or a glob (lib/capture/trace/pyprobe.c). */
static int parse_python_spec(struct lp_probe_spec *spec, const char *s)
{
	if (strncmp(s, "python:", 7))
		return 0;
	spec->type = LP_PROBE_PYTHON;
	s += 7;
	const char *colon = strchr(s, ':');
	if (colon) {
		spec->module = lp_strndup(s, (size_t)(colon - s));
		s = colon + 1;
	}
	spec->name = lp_strdup(s);
	struct lp_trace_py *conf = lp_malloc(sizeof(*conf));
	int r = lp_pyprobe__globs(spec->text, spec->module, spec->name, conf);
	free(conf);
	return r < 0 ? -1 : 1;
}

/* FILE:LINE, the part after the last colon a number: 1 when s is one, 0
 * when it is not, -1 after a message. */
static int parse_line_spec(struct lp_probe_spec *spec, char *s)
{
	char *colon = strrchr(s, ':');
	const char *why;
	int64_t line;
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return 0;
	*colon = '\0';
	if (lp_parse_i64(colon + 1, 1, INT_MAX, &line, &why) < 0 || !*s) {
		lp_error("probe '%s': bad line number", spec->text);
		return -1;
	}
	spec->type = LP_PROBE_LINE;
	spec->file = lp_strdup(s);
	spec->line = (int)line;
	return 1;
}

/* [LIB:]FUNC, [LIB:]FUNC+OFF or [LIB:]0xADDR: 0, or -1 after a message. */
static int parse_func_spec(struct lp_probe_spec *spec, char *s)
{
	const char *text = spec->text, *why;
	char *f = s, *colon = NULL;
	/* LIB:FUNC's colon is a single one: "Shop::checkout" is a name. */
	for (char *p = s; (p = strchr(p, ':')); p += 2) {
		if (p[1] != ':') {
			colon = p;
			break;
		}
	}
	if (colon) {
		*colon = '\0';
		if (!*s) {
			lp_error("probe '%s': empty library name", text);
			return -1;
		}
		spec->lib = lp_strdup(s);
		f = colon + 1;
	}
	if (!strncmp(f, "0x", 2)) {
		if (lp_parse_addr(f, UINT64_MAX, &spec->off, &why) < 0) {
			lp_error("probe '%s': bad address: %s", text, why);
			return -1;
		}
		spec->type = LP_PROBE_OFFSET;
		if (spec->nvars) {
			lp_error("probe '%s': values at an address need a FILE:LINE probe", text);
			return -1;
		}
		return 0;
	}
	char *plus = strchr(f, '+');
	if (plus) {
		*plus = '\0';
		if (lp_parse_addr(plus + 1, UINT32_MAX, &spec->off, &why) < 0) {
			lp_error("probe '%s': bad offset '%s': %s", text, plus + 1, why);
			return -1;
		}
		spec->type = LP_PROBE_OFFSET;
		if (spec->nvars) {
			lp_error("probe '%s': values at FUNC+OFF are not supported; use FILE:LINE(VAR)", text);
			return -1;
		}
	} else {
		spec->type = LP_PROBE_FUNC;
	}
	if (!is_func_name(f)) {
		lp_error("probe '%s': bad function name '%s'", text, f);
		return -1;
	}
	spec->func = lp_strdup(f);
	return 0;
}

struct lp_probe_spec *lp_probe_spec__parse(const char *text, bool all_args)
{
	struct lp_probe_spec *spec = lp_calloc(1, sizeof(*spec));
	spec->text = lp_strdup(text);
	spec->all_args = all_args;
	char *s = lp_strdup(text);
	int rc = parse_kernel_spec(spec, s);
	if (rc == 0)
		rc = parse_usdt_spec(spec, s);
	if (rc == 0)
		rc = parse_python_spec(spec, s);
	if (rc == 0)
		rc = parse_vars(spec, s);
	if (rc == 0)
		rc = parse_line_spec(spec, s);
	if (rc == 0)
		rc = parse_func_spec(spec, s);
	free(s);
	if (rc < 0) {
		lp_probe_spec__free(spec);
		errno = EINVAL;
		return NULL;
	}
	return spec;
}

void lp_probe_spec__free(struct lp_probe_spec *spec)
{
	if (!spec)
		return;
	free(spec->text);
	free(spec->lib);
	free(spec->params);
	free(spec->func);
	free(spec->file);
	free(spec->name);
	free(spec->provider);
	free(spec->module);
	for (size_t i = 0; i < spec->nvars; i++)
		free(spec->vars[i]);
	free(spec->vars);
	free(spec);
}

void lp_probe_point__fini(struct lp_probe_point *p)
{
	free(p->name);
	free(p->path);
	free(p->tp_subsys);
	free(p->tp_event);
	free(p->usdt_provider);
	free(p->usdt_name);
	for (size_t i = 0; i < p->nvals; i++)
		free(p->vals[i].name);
	free(p->ret.name);
	free(p->returns_why);
	free(p->walks);
	free(p->copy);
	free(p->rets);
	free(p->py);
}


/* --- system calls and tracefs ---------------------------------------- */

int lp_syscall__number(const char *name)
{
	for (size_t i = 0; i < sizeof(lp_syscalls) / sizeof(lp_syscalls[0]); i++)
		if (!strcmp(lp_syscalls[i].name, name))
			return lp_syscalls[i].nr;
	return -1;
}

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

const char *lp_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct statfs sf;
	for (size_t i = 0; i < 2; i++)
		if (statfs(dirs[i], &sf) == 0 && sf.f_type == TRACEFS_MAGIC)
			return dirs[i];
	if (mount("tracefs", dirs[0], "tracefs", 0, NULL) < 0) {
		lp_error_errno("tracefs is not mounted and mounting it at %s failed", dirs[0]);
		return NULL;
	}
	lp_error("note: mounted tracefs at %s (it was not mounted)", dirs[0]);
	return dirs[0];
}

int lp_syscall__args(const char *name, char names[6][32], bool ptr[6], bool isint[6])
{
	const char *dir = lp_tracefs();
	if (!dir)
		return 0;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_%s/format", dir, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[512];
	int n = 0;
	/* "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;" after
	 * the common fields and __syscall_nr. */
	while (fgets(line, sizeof(line), f) && n < 6) {
		char *p = strstr(line, "field:");
		char *semi = p ? strchr(p, ';') : NULL;
		if (!semi || strstr(line, "common_") || strstr(line, "__syscall_nr"))
			continue;
		char *e = semi;
		while (e > p && (isalnum((unsigned char)e[-1]) || e[-1] == '_'))
			e--;
		snprintf(names[n], 32, "%.*s", (int)(semi - e), e);
		ptr[n] = memchr(p, '*', (size_t)(e - p)) != NULL;
		/* "field:int dfd;": a 32-bit signed value in a 64-bit slot. */
		isint[n] = !strncmp(p + 6, "int ", 4);
		n++;
	}
	fclose(f);
	return n;
}

/* --- ELF symbols ------------------------------------------------------ */

struct elfobj {
	int fd;
	Elf *elf;
	struct lp_fsyms fs;	/* its function symbols */
	bool stripped;		/* symbols from .dynsym: no .symtab, no debug file */
	int dbg_fd;		/* its separate debug file, if any */
	Elf *dbg_elf;
	char *dbg_path;
	struct lp_dwarf *dw;	/* from the debug file when there is one */
	/* Its GCC-split cold parts (NAME.cold), by address: read at first
	 * use (find_leaves). */
	const struct lp_fsym **cold;
	size_t ncold;
	bool cold_read;
};

static void elfobj_close(struct elfobj *o)
{
	lp_dwarf__free(o->dw);
	if (o->dbg_elf)
		elf_end(o->dbg_elf);
	if (o->dbg_fd >= 0)
		close(o->dbg_fd);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	free(o->fs.syms);
	free(o->cold);
	free(o->dbg_path);
}

/* The function symbols of e: its .symtab, else its .dynsym.  Returns
 * whether a .symtab was there. */
static bool load_syms(struct elfobj *o, Elf *e)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	scn = symtab ? symtab : dynsym;
	if (!scn)
		return false;
	gelf_getshdr(scn, &sh);
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	free(o->fs.syms);
	o->fs.nsyms = 0;
	o->fs.syms = lp_calloc(n ? n : 1, sizeof(*o->fs.syms));
	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s))
			continue;
		int t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		const char *name = elf_strptr(e, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		o->fs.syms[o->fs.nsyms++] = (struct lp_fsym){ name, s.st_value, s.st_size, t == STT_GNU_IFUNC };
	}
	return symtab != NULL;
}

static int elfobj_open(struct elfobj *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->dbg_fd = -1;
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
	o->stripped = !load_syms(o, o->elf);
	Elf *dwelf = o->elf;
	char *dbg = o->stripped ? lp_dwarf__debug_file(o->elf, path) : NULL;
	if (dbg) {
		o->dbg_fd = open(dbg, O_RDONLY | O_CLOEXEC);
		o->dbg_elf = o->dbg_fd >= 0 ? elf_begin(o->dbg_fd, ELF_C_READ_MMAP, NULL) : NULL;
		/* Its addresses are the stripped file's: symbols and DWARF
		 * from it, segments and code bytes from the original. */
		if (o->dbg_elf && load_syms(o, o->dbg_elf)) {
			o->stripped = false;
			o->dbg_path = dbg;
			dwelf = o->dbg_elf;
			dbg = NULL;
		} else {
			load_syms(o, o->elf);
		}
		free(dbg);
	}
	o->dw = lp_dwarf__open(o->elf, dwelf);
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
static char *find_lib(const char *lib, pid_t pid)
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

/* --- DWARF types and locations ----------------------------------------- */

/* A DWARF value type as a capture: 0; 1 when void; -1 with `why` when it
 * cannot be captured. */
static int probe_value(const struct lp_dwtype *t, struct lp_probe_value *v, char *why,
		       size_t whysize)
{
	static const enum lp_value_type types[] = {
		[LP_DWT_INT] = LP_VAL_INT, [LP_DWT_UINT] = LP_VAL_UINT, [LP_DWT_BOOL] = LP_VAL_BOOL,
		[LP_DWT_CHAR] = LP_VAL_CHAR, [LP_DWT_PTR] = LP_VAL_PTR, [LP_DWT_STR] = LP_VAL_STR,
	};

	if (t->kind == LP_DWT_VOID)
		return 1;
	if (t->kind == LP_DWT_OTHER) {
		snprintf(why, whysize, "its type '%s' is not an integer, a pointer or a C string",
			 t->name ? t->name : "?");
		return -1;
	}
	v->type = types[t->kind];
	v->size = t->size;
	return 0;
}

/* Integer-class arguments in the SysV x86-64 order: rdi rsi rdx rcx r8 r9. */
static const unsigned char arg_regs[6] = { 5, 4, 1, 2, 8, 9 };

static int add_value(struct lp_probe_point *pt, const char *name, const struct lp_probe_value *v,
		     struct lp_trace_cap cap, int *nstrs)
{
	if (pt->nvals >= LP_TRACE_MAX_CAPS) {
		lp_error("probe '%s': at most %d values a probe", pt->spec->text, LP_TRACE_MAX_CAPS);
		return -1;
	}
	cap.size = (unsigned char)v->size;
	if (v->type == LP_VAL_STR) {
		if (*nstrs < LP_TRACE_MAX_STRS)
			cap.str = (unsigned char)(1 + (*nstrs)++);
	}
	struct lp_probe_value *dst = &pt->vals[pt->nvals];
	*dst = *v;
	dst->name = lp_strdup(name);
	if (v->type == LP_VAL_STR && !cap.str)
		dst->type = LP_VAL_PTR;	/* out of string slots: the pointer */
	pt->cfg.caps[pt->nvals] = cap;
	pt->nvals++;
	pt->cfg.ncaps = (unsigned int)pt->nvals;
	return 0;
}

/* argN (N 0..5): the raw argument register N, as bpftrace's argN.  1 when
 * name is not one, -1 on error. */
static int raw_arg(struct lp_probe_point *pt, const char *v, int *nstrs)
{
	if (strncmp(v, "arg", 3) || v[3] < '0' || v[3] > '5' || v[4])
		return 1;
	struct lp_probe_value raw = { .type = LP_VAL_INT, .size = 8 };
	struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = arg_regs[v[3] - '0'] };
	return add_value(pt, v, &raw, cap, nstrs) < 0 ? -1 : 0;
}

/* A function without DWARF: arg0..arg5 are the raw argument registers;
 * anything else needs DWARF. */
static int raw_values(struct lp_probe_point *pt, const char *path)
{
	const struct lp_probe_spec *spec = pt->spec;
	int nstrs = 0;

	for (size_t i = 0; i < spec->nvars; i++) {
		int r = raw_arg(pt, spec->vars[i], &nstrs);
		if (r > 0)
			lp_error("probe '%s': %s has no DWARF debug information for '%s' (arg0..arg5 are its raw arguments)",
				 spec->text, path, spec->func);
		if (r)
			return -1;
	}
	/* The raw return register, as a signed long (what most C functions
	 * return; -1 and errors read right). */
	pt->has_ret = true;
	pt->ret = (struct lp_probe_value){ .name = lp_strdup("ret"), .type = LP_VAL_INT, .size = 8 };
	return 0;
}

/* A parameter, and the integer register it comes in (-1: none, why). */
struct func_arg {
	char name[128];
	struct lp_probe_value v;
	int reg;
	char why[256];
	uint64_t die;		/* its DWARF entry, for the members read through it */
};

/* The parameters in the SysV order, each in the next integer register
 * until one that is not an integer or a pointer (it may shift the rest). */
static size_t func_args(const struct lp_dwparam *params, size_t n, struct func_arg *args)
{
	int nextreg = 0;

	for (size_t k = 0; k < n; k++) {
		struct func_arg *a = &args[k];
		snprintf(a->name, sizeof(a->name), "%s", params[k].name ? params[k].name : "?");
		a->die = params[k].die;
		memset(&a->v, 0, sizeof(a->v));
		a->why[0] = '\0';
		int tr = probe_value(&params[k].type, &a->v, a->why, sizeof(a->why));
		if (tr == 0 && nextreg >= 0 && nextreg < 6) {
			a->reg = arg_regs[nextreg++];
			continue;
		}
		a->reg = -1;
		if (tr == 0)
			snprintf(a->why, sizeof(a->why), "it is not passed in a register");
		/* Anything else may shift the registers: stop. */
		nextreg = -1;
	}
	return n;
}

_Static_assert(LP_DW_MAX_DEREF == LP_CAP_MAX_DEREF, "a member path is one capture");

/* A member path read from a variable where cap reads it: the capture of
 * the member, its value type in *v.  0; -1 with why. */
static int path_capture(const struct lp_dwpath *dp, struct lp_trace_cap *cap,
			struct lp_probe_value *v, char *why, size_t whysize)
{
	if (dp->off0 && cap->kind == LP_CAP_REG) {
		snprintf(why, whysize, "it is in a register: it has no members there");
		return -1;
	}
	cap->off += dp->off0;
	cap->nderef = (unsigned char)dp->nderef;
	for (int i = 0; i < dp->nderef; i++) {
		if (dp->deref[i] > INT32_MAX) {
			snprintf(why, whysize, "a member too far into its struct");
			return -1;
		}
		cap->deref[i] = (int)dp->deref[i];
	}
	/* Named as C writes it ("char[]"), not by its DWARF name. */
	struct lp_dwtype t = dp->type;
	t.name = dp->type_name;
	memset(v, 0, sizeof(*v));
	int r = probe_value(&t, v, why, whysize);
	if (r > 0)
		snprintf(why, whysize, "it has no type");
	return r ? -1 : 0;
}

/* The VARs a function probe names, among its parameters args (dw: the
 * types of the members VARs read). */
static int named_args(struct lp_probe_point *pt, const struct func_arg *args, size_t nargs,
		      struct lp_dwarf *dw)
{
	const struct lp_probe_spec *spec = pt->spec;
	int nstrs = 0;

	for (size_t i = 0; i < spec->nvars; i++) {
		const char *var = spec->vars[i];
		size_t namelen = value_name_len(var), k;
		for (k = 0; k < nargs; k++)
			if (strlen(args[k].name) == namelen && !strncmp(args[k].name, var, namelen))
				break;
		if (var[namelen] && k < nargs) {
			/* A member read through a parameter: r->conn. */
			char why[256];
			struct lp_dwpath dp;
			struct lp_probe_value v;
			struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = (unsigned char)args[k].reg };
			if (args[k].reg < 0) {
				lp_error("probe '%s': cannot capture '%s': %s", spec->text, var, args[k].why);
				return -1;
			}
			if (lp_dwarf__param_path(dw, args[k].die, var, namelen, &dp, why, sizeof(why)) < 0 ||
			    path_capture(&dp, &cap, &v, why, sizeof(why)) < 0) {
				lp_error("probe '%s': cannot capture '%s': %s", spec->text, var, why);
				return -1;
			}
			if (add_value(pt, var, &v, cap, &nstrs) < 0)
				return -1;
			continue;
		}
		if (var[namelen] && k == nargs && !strncmp(var, "arg", 3) && namelen == 4) {
			lp_error("probe '%s': cannot capture '%s': %.4s is a raw register, without a type to read members by",
				 spec->text, var, var);
			return -1;
		}
		int r = k == nargs ? raw_arg(pt, spec->vars[i], &nstrs) : 1;
		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		if (k == nargs) {
			char list[512] = "";
			for (size_t j = 0; j < nargs; j++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
					 "%s%.100s", j ? ", " : "", args[j].name);
			lp_error("probe '%s': %s has no parameter '%.*s' (it has: %s)",
				 spec->text, spec->func, (int)namelen, var, nargs ? list : "none");
			return -1;
		}
		if (args[k].reg < 0) {
			lp_error("probe '%s': cannot capture '%s': %s", spec->text,
				 args[k].name, args[k].why);
			return -1;
		}
		struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = (unsigned char)args[k].reg };
		if (add_value(pt, args[k].name, &args[k].v, cap, &nstrs) < 0)
			return -1;
	}
	return 0;
}

#define LP_MAX_PARAMS 32

static int func_values(struct lp_probe_point *pt, struct lp_dwarf *dw, uint64_t addr,
		       const char *path)
{
	const struct lp_probe_spec *spec = pt->spec;
	struct lp_dwtype rt;
	struct lp_dwparam params[LP_MAX_PARAMS];
	size_t np;

	if (!lp_dwarf__function(dw, addr, &rt, params, LP_MAX_PARAMS, &np))
		return raw_values(pt, path);
	char why[256];
	struct lp_probe_value rv = { 0 };
	if (probe_value(&rt, &rv, why, sizeof(why)) == 0) {
		if (rv.type == LP_VAL_STR)	/* not read back at the return: the pointer */
			rv.type = LP_VAL_PTR;
		pt->has_ret = true;
		pt->ret = rv;
		pt->ret.name = lp_strdup("ret");
	}
	if (!spec->nvars && !spec->all_args)
		return 0;
	struct func_arg args[LP_MAX_PARAMS];
	size_t nargs = func_args(params, np, args);
	if (spec->nvars)
		return named_args(pt, args, nargs, dw);
	int nstrs = 0;
	for (size_t k = 0; k < nargs && pt->nvals < LP_TRACE_MAX_CAPS; k++) {
		if (args[k].reg < 0)
			continue;
		struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = (unsigned char)args[k].reg };
		add_value(pt, args[k].name, &args[k].v, cap, &nstrs);
	}
	return 0;
}

/* Variable name of a line probe, in scope sc at pc: 0; -1 with the
 * message in err (lp-trace's, --vars' reason). */
static int line_value(struct lp_probe_point *pt, struct lp_dwscope *sc, const char *name,
		      uint64_t pc, int *nstrs, char *err, size_t errsize)
{
	const struct lp_probe_spec *spec = pt->spec;
	struct lp_dwtype t;
	struct lp_probe_value val = { 0 };
	struct lp_dwloc loc;
	struct lp_dwpath dp;
	char why[256], var[128];
	size_t namelen = value_name_len(name);

	snprintf(var, sizeof(var), "%.*s", (int)namelen, name);
	if (!lp_dwscope__var(sc, var, &t)) {
		snprintf(err, errsize, "probe '%s': no variable '%s' in scope at 0x%llx", spec->text,
			 var, (unsigned long long)pc);
		return -1;
	}
	if (name[namelen] && lp_dwscope__path(sc, name, namelen, &dp, why, sizeof(why)) < 0) {
		snprintf(err, errsize, "probe '%s': cannot capture '%s': %s", spec->text, name, why);
		return -1;
	}
	int r = name[namelen] ? 0 : probe_value(&t, &val, why, sizeof(why));
	if (r != 0) {
		snprintf(err, errsize, "probe '%s': cannot capture '%s': %s", spec->text, name,
			 r > 0 ? "it has no type" : why);
		return -1;
	}
	r = lp_dwscope__location(sc, &loc, why, sizeof(why));
	if (r > 0)
		snprintf(err, errsize, "probe '%s': cannot capture '%s': it has no location (optimized out)",
			 spec->text, name);
	if (r < 0)
		snprintf(err, errsize, "probe '%s': cannot capture '%s' at 0x%llx: %s", spec->text,
			 name, (unsigned long long)pc, why);
	if (r)
		return -1;
	struct lp_trace_cap cap = { .kind = loc.mem ? LP_CAP_MEM : LP_CAP_REG, .off = loc.off };
	cap.reg = loc.reg == LP_DWLOC_ADDR ? LP_REG_NONE
		: loc.reg == LP_DWLOC_CFA ? LP_REG_CFA : (unsigned char)loc.reg;
	if (name[namelen] && path_capture(&dp, &cap, &val, why, sizeof(why)) < 0) {
		snprintf(err, errsize, "probe '%s': cannot capture '%s': %s", spec->text, name, why);
		return -1;
	}
	if (loc.reg == LP_DWLOC_CFA) {
		pt->cfg.cfa_reg = loc.cfa_reg;
		pt->cfg.cfa_off = loc.cfa_off;
	}
	return add_value(pt, name, &val, cap, nstrs);
}

/* The values of a line probe's VARs at pc; quiet: a trial at a candidate
 * address, said nothing of (choose_line_addr). */
static int line_values(struct lp_probe_point *pt, struct lp_dwarf *dw, uint64_t cu, uint64_t pc,
		       bool quiet)
{
	const struct lp_probe_spec *spec = pt->spec;
	if (!spec->nvars)
		return 0;
	struct lp_dwscope *sc = lp_dwarf__scope(dw, cu, pc);
	int nstrs = 0, r = 0;
	char err[512];
	for (size_t v = 0; v < spec->nvars && r == 0; v++)
		r = line_value(pt, sc, spec->vars[v], pc, &nstrs, err, sizeof(err));
	if (r < 0 && !quiet)
		lp_error("%s", err);
	lp_dwscope__free(sc);
	return r;
}

/* --- FILE:LINE -------------------------------------------------------- */

static bool file_matches(const char *path, const char *want)
{
	size_t lp = strlen(path), lw = strlen(want);
	if (lw > lp || strcmp(path + lp - lw, want))
		return false;
	return lw == lp || path[lp - lw - 1] == '/';
}

struct line_hit {
	int line;
	uint64_t addr;
	uint64_t scope;		/* the function or inlined copy (lp_dwarf__func_at) */
	uint64_t cu;
	uint64_t *stmts;	/* every is_stmt row of the line in this scope */
	size_t nstmts;
};

/* The walk of the line tables for FILE:LINE, or the lines lo..hi of FILE
 * (lp-trace --lines). */
struct line_walk {
	const char *file;
	int lo, hi;
	struct lp_dwarf *dw;
	int below, above;	/* the nearest lines with code (lo == hi) */
	bool file_seen;
	struct line_hit *hits;
	size_t nhits;
};

static void line_row(const struct lp_dwline *l, void *arg)
{
	struct line_walk *w = arg;

	if (!file_matches(l->file, w->file))
		return;
	w->file_seen = true;
	if (!l->valid || !l->stmt || l->end)
		return;
	if (l->line < w->lo && l->line > w->below)
		w->below = l->line;
	if (l->line > w->hi && l->line < w->above)
		w->above = l->line;
	if (l->line < w->lo || l->line > w->hi)
		return;
	/* One address per line and function or inlined copy: its lowest. */
	uint64_t scope = lp_dwarf__func_at(w->dw, l->cu, l->addr);
	size_t k;
	for (k = 0; k < w->nhits; k++)
		if (w->hits[k].scope == scope && w->hits[k].line == l->line)
			break;
	if (k == w->nhits) {
		w->hits = lp_reallocarray(w->hits, w->nhits + 1, sizeof(*w->hits));
		w->hits[w->nhits++] = (struct line_hit){ l->line, l->addr, scope, l->cu, NULL, 0 };
	} else if (l->addr < w->hits[k].addr) {
		w->hits[k].addr = l->addr;
	}
	struct line_hit *h = &w->hits[k];
	h->stmts = lp_reallocarray(h->stmts, h->nstmts + 1, sizeof(*h->stmts));
	h->stmts[h->nstmts++] = l->addr;
}

static int resolve_line(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			struct line_hit **hits, size_t *nhits)
{
	if (!lp_dwarf__has_dwarf(o->dw)) {
		lp_error("probe '%s': %s has no DWARF line information (build with -g)", spec->text, path);
		return -1;
	}
	struct line_walk w = { .file = spec->file, .lo = spec->line, .hi = spec->line, .dw = o->dw,
			       .above = INT_MAX };
	lp_dwarf__each_line(o->dw, line_row, &w);
	*hits = w.hits;
	*nhits = w.nhits;
	if (w.nhits)
		return 0;
	if (!w.file_seen) {
		lp_error("probe '%s': no source file '%s' in the line table of %s", spec->text,
			 spec->file, path);
	} else if (w.below && w.above != INT_MAX) {
		lp_error("probe '%s': no code at line %d; nearest lines with code: %d, %d",
			 spec->text, spec->line, w.below, w.above);
	} else {
		lp_error("probe '%s': no code at line %d; nearest line with code: %d", spec->text,
			 spec->line, w.below ? w.below : w.above);
	}
	return -1;
}

/* --- resolution ----------------------------------------------------- */

/* n bytes of the file at offset off, or NULL past its end.  From the
 * file's image: libelf 0.188 keeps each elf_getdata_rawchunk in a list it
 * searches linearly, which made --list of a 10,000-function binary
 * (a read per function) quadratic: 3.6 s of 4.7 for PostgreSQL's. */
static const unsigned char *file_bytes(Elf *elf, uint64_t off, size_t n)
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
static uint64_t skip_endbr(Elf *elf, uint64_t off)
{
	const unsigned char *b = file_bytes(elf, off, 9);
	if (!b || b[0] != 0xf3 || b[1] != 0x0f || b[2] != 0x1e || b[3] != 0xfa)
		return 0;
	enum lp_insn next = lp_insn__classify(b + 4, 5);
	return next == LP_INSN_NOP || next == LP_INSN_EMULATED || next == LP_INSN_CALL ? 4 : 0;
}

/* The class of the instruction at file offset off, which decides what a
 * uprobe there costs (lib/capture/trace/tracecal.c calibrates each class). */
static enum lp_insn insn_at(Elf *elf, uint64_t off)
{
	for (size_t n = 16; n > 0; n /= 2) {
		const unsigned char *b = file_bytes(elf, off, n);
		if (b)
			return lp_insn__classify(b, n);
	}
	return LP_INSN_STEPPED;
}

/* The code of the real function around pc (the out-of-line one an inlined
 * copy is in), every range of it (a .cold part too: its jumps back into
 * the line count), decoded.  -1 when there is no such function or Capstone
 * fails. */
static int function_flow(struct elfobj *o, uint64_t cu, uint64_t pc, struct lp_insnflow *f)
{
	Elf *elf = o->elf;
	uint64_t lo[16], hi[16];
	int n = lp_dwarf__func_ranges(o->dw, cu, pc, lo, hi, 16);
	if (n < 0)	/* none, or more ranges than we keep */
		return -1;
	struct lp_range r[16];
	size_t nr = (size_t)n;
	for (size_t i = 0; i < nr; i++)
		r[i] = (struct lp_range){ lo[i], hi[i] };
	/* In address order, for lp_insnflow__find's search. */
	for (size_t i = 1; i < nr; i++)
		for (size_t j = i; j > 0 && r[j].lo < r[j - 1].lo; j--) {
			struct lp_range t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	for (size_t i = 0; i < nr; i++) {
		uint64_t foff;
		if (lp_dwarf__file_offset(elf, r[i].lo, &foff, NULL) < 0)
			goto fail;
		const unsigned char *b = file_bytes(elf, foff, r[i].hi - r[i].lo);
		if (!b || lp_insnflow__decode(b, r[i].hi - r[i].lo, r[i].lo, f) < 0)
			goto fail;
	}
	return 0;
fail:
	lp_insnflow__fini(f);
	return -1;
}

/* Where in a line its probe costs least (PERF-NOTES.md: an instruction the
 * kernel single-steps out of line costs ~10x one it emulates).  The line's
 * first instruction is the natural place; a later one is taken only when
 * it is cheaper, every pass through the first instruction reaches it and
 * nothing else does (straight-line code between them, no jump of the
 * function into it, no switch whose targets are unknown), and it is the
 * line's own: with VARs, it starts a statement of the line (an is_stmt
 * row: where a debugger would stop too) where they can be read; without,
 * any of the line's instructions will do (its count is the same, and at
 * -O2 gcc states few: a loop's jcc, a call are often mid-statement).
 * Returns the address; *cls its class; *why, when it stays single-stepped,
 * why. */
static uint64_t choose_line_addr(struct lp_probe_point *pt, struct elfobj *o,
				 const struct line_hit *h, enum lp_insn *cls, const char **why)
{
	Elf *elf = o->elf;
	uint64_t foff;
	*cls = lp_dwarf__file_offset(elf, h->addr, &foff, NULL) == 0 ? insn_at(elf, foff) : LP_INSN_STEPPED;
	*why = NULL;
	if (*cls != LP_INSN_STEPPED)
		return h->addr;
	bool counts = pt->spec->nvars == 0;
	uint64_t last = h->addr;
	for (size_t i = 0; i < h->nstmts; i++)
		if (h->stmts[i] > last)
			last = h->stmts[i];
	if (last == h->addr && !counts) {
		*why = "it has no other statement";
		return h->addr;
	}
	struct lp_insnflow f = { 0 };
	if (function_flow(o, h->cu, h->addr, &f) < 0) {
		*why = "its function's code could not be decoded";
		return h->addr;
	}
	uint64_t best = h->addr;
	long i = lp_insnflow__find(&f, h->addr);
	if (f.indirect_jumps) {
		*why = "its function has a switch through a table (jump targets unknown)";
		i = -1;
	}
	if (i < 0 && !*why)
		*why = "no instruction starts at its address";
	bool past_call = false;	/* a callee may not come back (exit, longjmp) */
	for (long j = i; j >= 0 && (size_t)j < f.n && (counts || f.insns[j].vaddr <= last); j++) {
		const struct lp_insnflow_insn *in = &f.insns[j];
		if (j > i) {
			if (in->vaddr != f.insns[j - 1].vaddr + f.insns[j - 1].size)
				break;	/* the function's next range: not straight on */
			if (lp_insnflow__is_target(&f, in->vaddr)) {
				/* Reached otherwise than through the first: a
				 * probe here or past it would count passes that
				 * skipped the line's start. */
				if (!*why)
					*why = "a jump of its function lands inside it, past its first instruction";
				break;
			}
			bool own = false;
			for (size_t k = 0; k < h->nstmts; k++)
				own |= h->stmts[k] == in->vaddr;
			const char *file;
			int line;
			if (!own && counts && !past_call)
				own = lp_dwarf__line_at(o->dw, h->cu, in->vaddr, &file, &line) &&
				      line == h->line && file_matches(file, pt->spec->file);
			enum lp_insn c = lp_insn__classify(in->bytes, in->size);
			if (own && c < *cls) {
				struct lp_probe_point trial = { .spec = pt->spec };
				int ok = line_values(&trial, o->dw, h->cu, in->vaddr, true) == 0;
				lp_probe_point__fini(&trial);
				if (ok) {
					best = in->vaddr;
					*cls = c;
					if (c == LP_INSN_NOP)
						break;
				} else if (!*why) {
					*why = "its variables cannot be read at its cheaper statements";
				}
			}
		}
		if (in->branches || !in->falls_through)
			break;	/* past it, not every pass */
		past_call |= in->calls;
	}
	if (*cls == LP_INSN_STEPPED && !*why)
		*why = counts ? "none of its instructions reached on every pass is a push, a jump, a call or a nop"
			      : "none of its statements reached on every pass starts with a push, a jump, a call or a nop";
	lp_insnflow__fini(&f);
	return best;
}

static struct lp_probe_point *new_point(const struct lp_probe_spec *spec, const char *path,
					struct lp_probe_point **points, size_t *n)
{
	*points = lp_reallocarray(*points, *n + 1, sizeof(**points));
	struct lp_probe_point *pt = &(*points)[(*n)++];
	memset(pt, 0, sizeof(*pt));
	pt->spec = spec;
	pt->path = lp_strdup(path);
	pt->sysnr = -1;
	return pt;
}

/* --- returns: a uretprobe, or the instructions that leave ------------ */

/* A function's code: its symbol's size, else the range of its unwind
 * information (an FDE of .eh_frame or .debug_frame). */
static int func_range(struct elfobj *o, uint64_t vaddr, uint64_t size, struct lp_range *r)
{
	if (size) {
		*r = (struct lp_range){ vaddr, vaddr + size };
		return 0;
	}
	return lp_dwarf__fde_range(o->dw, vaddr, &r->lo, &r->hi);
}

/* Whether the frame at pc is gone (CFA = rsp + 8, the return address at
 * the stack top): only there can a jmp be a tail call.  True when the
 * unwind information does not say. */
static bool frame_gone(struct elfobj *o, uint64_t pc)
{
	unsigned reg;
	long long off;
	if (lp_dwarf__cfa(o->dw, pc, &reg, &off) < 0)
		return true;
	return reg == 7 && off == 8;
}

static int cold_cmp(const void *a, const void *b)
{
	uint64_t x = (*(const struct lp_fsym *const *)a)->value, y = (*(const struct lp_fsym *const *)b)->value;
	return (x > y) - (x < y);
}

/* The cold parts that may hold address a (from the one returned on,
 * while their start is at most a), or NULL: a binary search, since every
 * call a function makes is looked up (--list asks of every function). */
static const struct lp_fsym *const *cold_parts(struct elfobj *o, uint64_t a)
{
	if (!o->cold_read) {
		o->cold_read = true;
		for (size_t k = 0; k < o->fs.nsyms; k++)
			if (strstr(o->fs.syms[k].name, ".cold")) {
				o->cold = lp_reallocarray(o->cold, o->ncold + 1, sizeof(*o->cold));
				o->cold[o->ncold++] = &o->fs.syms[k];
			}
		if (o->ncold)
			qsort(o->cold, o->ncold, sizeof(*o->cold), cold_cmp);
	}
	/* Parts do not overlap: the last that starts at or before a, and
	 * the aliases that start with it. */
	size_t lo = 0, hi = o->ncold;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (o->cold[mid]->value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	while (lo > 1 && o->cold[lo - 2]->value == o->cold[lo - 1]->value)
		lo--;
	return &o->cold[lo - 1];
}

/* The instructions that leave the function at vaddr (its symbol s, or NULL)
 * into pt->rets; the function's GCC-split cold part (NAME.cold) with it.
 * *leaf: it calls nothing and leaves only by ret (no exception can start
 * or pass while it runs, nor any other code read its stack); *reads_ret:
 * where it reads its own return address, from its start, else -1.  -1
 * when its code cannot be found or read (or Capstone opened). */
static int find_leaves(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
		       const struct lp_fsym *s, uint64_t vaddr, bool verbose, struct lp_probe_point *pt,
		       bool *leaf, int64_t *reads_ret)
{
	struct lp_range r[8];
	size_t nr = 1;
	*reads_ret = -1;
	if (func_range(o, vaddr, s ? s->size : 0, &r[0]) < 0)
		return -1;
	/* NAME.cold parts that the code jumps to are the function's too. */
	size_t namelen = s ? strlen(s->name) : 0;
	struct lp_disasm d = { 0 };
	for (size_t scanned = 0; scanned < nr; scanned++) {
		uint64_t off;
		size_t n = (size_t)(r[scanned].hi - r[scanned].lo);
		const unsigned char *code = lp_dwarf__file_offset(o->elf, r[scanned].lo, &off, NULL) == 0
			? file_bytes(o->elf, off, n) : NULL;
		size_t before = d.noutside;
		if (!code || lp_disasm__scan(code, n, r[scanned].lo, r, nr, &d) < 0) {
			lp_disasm__fini(&d);
			return -1;
		}
		for (size_t i = before; s && i < d.noutside && nr < 8; i++)
			for (const struct lp_fsym *const *cp = cold_parts(o, d.outside[i]);
			     cp && cp < o->cold + o->ncold && (*cp)->value <= d.outside[i]; cp++) {
				const struct lp_fsym *c = *cp;
				if (d.outside[i] >= c->value + c->size ||
				    strncmp(c->name, s->name, namelen) || strncmp(c->name + namelen, ".cold", 5))
					continue;
				bool have = false;
				for (size_t j = 0; j < nr; j++)
					have |= r[j].lo == c->value;
				if (!have)
					r[nr++] = (struct lp_range){ c->value, c->value + c->size };
			}
	}
	/* A jump into a cold part scanned after it was seen is no tail call;
	 * a jmp while the frame is still there is none either. */
	pt->rets = lp_calloc(d.nleaves ? d.nleaves : 1, sizeof(*pt->rets));
	pt->ret_insn = LP_INSN_NONE;
	*leaf = !d.calls;
	for (size_t i = 0; i < d.nleaves; i++) {
		const struct lp_leave *l = &d.leaves[i];
		bool internal = false;
		for (size_t k = 0; l->to && k < nr; k++)
			internal |= l->to >= r[k].lo && l->to < r[k].hi;
		if (internal || (l->kind != LP_RET_INSN && !frame_gone(o, l->vaddr)))
			continue;
		uint64_t off;
		if (lp_dwarf__file_offset(o->elf, l->vaddr, &off, NULL) < 0)
			continue;
		*leaf &= l->kind == LP_RET_INSN;
		pt->rets[pt->nrets++] = (struct lp_ret_point){ off, l->kind, l->reg,
							       (uint32_t)(l->vaddr - r[0].lo) };
		enum lp_insn c = lp_insn__classify(l->bytes, l->size);
		if (c > pt->ret_insn)
			pt->ret_insn = c;
	}
	if (d.undecoded && verbose)
		lp_error("%s: %zu bytes of %s that Capstone could not decode were skipped",
			 spec->text, d.undecoded, path);
	/* The slot of the return address: CFA - 8, the CFA being rsp or rbp
	 * plus an offset at each instruction (glibc's dlsym and dlopen read
	 * it to know their caller: a uretprobe makes that the trampoline). */
	for (size_t i = 0; i < d.nrefs && *reads_ret < 0; i++) {
		unsigned reg;
		long long off;
		if (lp_dwarf__cfa(o->dw, d.refs[i].vaddr, &reg, &off) == 0 && reg == d.refs[i].base &&
		    d.refs[i].disp == off - 8)
			*reads_ret = (int64_t)(d.refs[i].vaddr - r[0].lo);
	}
	pt->cfg.func_lo = r[0].lo;
	pt->cfg.func_hi = r[0].hi;
	lp_disasm__fini(&d);
	return 0;
}

/* What file path (o) says, and of Go's register ABI what its symbols say
 * when its build information does not. */
static void file_hazards(const struct elfobj *o, const char *path, struct lp_hazard *hz)
{
	lp_hazard__file(o->elf, path, lp_fname__sym(&o->fs, "runtime.morestack") != NULL, hz);
	/* Go 1.17 wrote no inline version: its ABI0 wrappers say. */
	for (size_t i = 0; hz->go && !hz->go_version[0] && i < o->fs.nsyms && !hz->regabi; i++) {
		size_t n = strlen(o->fs.syms[i].name);
		hz->regabi = n > 5 && !strcmp(o->fs.syms[i].name + n - 5, ".abi0");
	}
}

/* The hazards of the file probed and of the executable that runs it (a C++
 * program calling a C library's function with a callback that throws). */
static void hazards(const struct elfobj *o, const char *path, const char *exe, struct lp_hazard *hz)
{
	memset(hz, 0, sizeof(*hz));
	file_hazards(o, path, hz);
	if (!exe || !strcmp(exe, path))
		return;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (e && elf_kind(e) == ELF_K_ELF) {
		struct lp_hazard he = { 0 };
		lp_hazard__file(e, exe, false, &he);
		hz->cxx |= he.cxx;
		if (!hz->why[0])
			memcpy(hz->why, he.why, sizeof(hz->why));
		if (!hz->loads[0])
			memcpy(hz->loads, he.loads, sizeof(hz->loads));
		if (!hz->walks[0])
			memcpy(hz->walks, he.walks, sizeof(hz->walks));
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/* How function probe pt (symbol s, or NULL, at vaddr) sees its returns:
 * with a uretprobe unless that is unsafe (struct lp_hazard), or --returns
 * says.  -1 with why it cannot be traced in err (lp-trace's message, and
 * --list's reason). */
static int choose_returns(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			  const struct lp_hazard *hz, const struct lp_fsym *s, uint64_t vaddr, bool verbose,
			  struct lp_probe_point *pt, char *err, size_t errsize)
{
	/* What is said against a uretprobe: what the file does now, else
	 * what a library it may load could do. */
	const char *against = hz->why[0] ? hz->why : hz->loads;
	pt->returns = LP_RETURNS_URETPROBE;
	if (spec->returns == LP_RETURNS_URETPROBE) {
		if (against[0])
			lp_error("warning: probe '%s': uretprobe as --returns says, though %s: the program may break",
				 spec->text, against);
		pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
		return 0;
	}
	/* Go code keeps g in r14 from 1.17 on (its register ABI); before,
	 * a return cannot be told whose goroutine's it is. */
	const char *name = s ? s->name : "";
	bool go_code = hz->go && strchr(name, '.');
	if (go_code && !hz->regabi) {
		snprintf(err, errsize, "probe '%s': %s was built by %s, before Go 1.17's register ABI: a return cannot be matched to its goroutine, and a uretprobe would kill the program at its first stack growth; not traced",
			 spec->text, path, hz->go_version[0] ? hz->go_version : "a Go older than 1.17");
		return -1;
	}
	bool leaf;
	int64_t reads_ret;
	if (find_leaves(spec, o, path, s, vaddr, verbose, pt, &leaf, &reads_ret) < 0) {
		if (spec->returns == LP_RETURNS_AUTO && !against[0]) {
			pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
			return 0;	/* nothing known against a uretprobe */
		}
		snprintf(err, errsize, "probe '%s': cannot read the code of %s in %s (no symbol size, no unwind information): its returns cannot be probed, and a uretprobe would break the program (%s); not traced",
			 spec->text, s ? s->name : spec->text, path, against[0] ? against : "--returns insn");
		return -1;
	}
	char why[sizeof(hz->why)];
	snprintf(why, sizeof(why), "%s", against[0] ? against : "--returns insn");
	if (reads_ret >= 0 && (spec->returns == LP_RETURNS_AUTO || !against[0]))
		snprintf(why, sizeof(why), "%s reads its return address (at +%lld)", s ? s->name : spec->text,
			 (long long)reads_ret);
	if (spec->returns == LP_RETURNS_AUTO && !against[0] && reads_ret < 0) {
		free(pt->rets);
		pt->rets = NULL;
		pt->nrets = 0;
		pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
		return 0;
	}
	/* A function that calls nothing and leaves by ret: nothing can read
	 * its return address while it runs (but a signal handler; in Go,
	 * the runtime's asynchronous preemption can scan a stack there).  A
	 * function that is only a ret has its return at its entry: two
	 * uprobes there would run in no known order. */
	bool ret_at_entry = false;
	for (size_t i = 0; i < pt->nrets; i++)
		ret_at_entry |= pt->rets[i].offset == pt->offset;
	if ((spec->returns == LP_RETURNS_AUTO || ret_at_entry) && leaf && !hz->go && reads_ret < 0) {
		if (verbose)
			lp_error("%s: a uretprobe, though %s: it calls nothing%s", spec->text, why,
				 ret_at_entry ? " and is only a ret" : "");
		free(pt->rets);
		pt->rets = NULL;
		pt->nrets = 0;
		return 0;
	}
	pt->returns = LP_RETURNS_INSN;
	pt->returns_why = lp_strdup(why);
	if (go_code)
		pt->cfg.flags |= LP_PROBE_F_GO;
	/* Only a library loaded later could break a uretprobe: the tracer
	 * may arm one per call until one that can is loaded (dl_gate), and
	 * says how it took the returns. */
	pt->dl_gate = spec->returns == LP_RETURNS_AUTO && !hz->why[0] && reads_ret < 0 && !go_code;
	if (pt->dl_gate)
		pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
	else if (verbose)
		lp_probe_point__say_returns(pt);
	return 0;
}

void lp_probe_point__say_returns(const struct lp_probe_point *pt)
{
	lp_error("%s: returns probed at %zu instruction%s (%s, not a uretprobe: %s)%s", pt->spec->text,
		 pt->nrets, pt->nrets == 1 ? "" : "s", lp_insn__name(pt->ret_insn), pt->returns_why,
		 (pt->cfg.flags & LP_PROBE_F_GO) ? "; calls kept per goroutine" : "");
}

/* C++'s catch, __cxa_begin_catch, where calls left by an exception end:
 * in the executable (a static libstdc++), else in libstdc++.  Once per
 * list of points.  Not found: those calls end at the next traced call or
 * return above them. */
static void add_catch(const struct lp_probe_spec *spec, const char *exe, pid_t pid, bool verbose,
		      struct lp_probe_point **points, size_t *n)
{
	static const char sym[] = "__cxa_begin_catch";
	char *paths[2] = { exe ? lp_strdup(exe) : NULL, find_lib("libstdc++", pid) };
	for (int i = 0; i < 2; i++) {
		struct elfobj lo;
		if (!paths[i])
			continue;
		if (elfobj_open(&lo, paths[i]) < 0) {
			elfobj_close(&lo);
			continue;
		}
		const struct lp_fsym *c = lp_fname__sym(&lo.fs, sym);
		uint64_t off;
		bool found = c && lp_dwarf__file_offset(lo.elf, c->value, &off, NULL) == 0;
		bool have = false;
		for (size_t k = 0; found && k < *n; k++)
			have |= (*points)[k].cfg.kind == LP_PROBE_CATCH && (*points)[k].offset == off &&
				!strcmp((*points)[k].path, paths[i]);
		if (found && !have) {
			struct lp_probe_point *pt = new_point(spec, paths[i], points, n);
			pt->name = lp_strdup(sym);
			pt->offset = off;
			pt->cfg.kind = LP_PROBE_CATCH;
			pt->cfg.vaddr = c->value;
			if (verbose)
				lp_error("%s: calls an exception leaves end at %s in %s", spec->text, sym,
					 paths[i]);
		}
		elfobj_close(&lo);
		if (found)
			break;
	}
	free(paths[0]);
	free(paths[1]);
}

/* The dynamic linker exe names (PT_INTERP), as pid sees it; NULL for a
 * static executable. */
static char *interp_of(const char *exe, pid_t pid)
{
	int fd = exe ? open(exe, O_RDONLY | O_CLOEXEC) : -1;
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	char *interp = NULL;
	size_t nph = 0;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &nph) == 0)
		for (size_t i = 0; i < nph && !interp; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP || !ph.p_filesz)
				continue;
			size_t len = 0;
			const char *raw = elf_rawfile(e, &len);
			if (raw && ph.p_offset + ph.p_filesz <= len && !raw[ph.p_offset + ph.p_filesz - 1])
				interp = pid > 0 ? lp_procns__path(pid, raw + ph.p_offset)
						 : lp_strdup(raw + ph.p_offset);
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return interp;
}

/* ld.so's _dl_debug_state, called as each library is loaded: where the
 * tracer sees what a program loads (struct lp_probe_point.dl_gate), in
 * its dynamic linker, else in the executable (a static one).  Once per
 * list of points.  False when there is none. */
static bool add_dl(const struct lp_probe_spec *spec, const char *exe, pid_t pid, bool verbose,
		   struct lp_probe_point **points, size_t *n)
{
	static const char sym[] = "_dl_debug_state";
	char *path = interp_of(exe, pid);
	if (!path && exe)
		path = lp_strdup(exe);
	struct elfobj lo;
	bool found = false;
	if (path && elfobj_open(&lo, path) == 0) {
		const struct lp_fsym *c = lp_fname__sym(&lo.fs, sym);
		uint64_t off;
		found = c && lp_dwarf__file_offset(lo.elf, c->value, &off, NULL) == 0;
		bool have = false;
		for (size_t k = 0; found && k < *n; k++)
			have |= (*points)[k].cfg.kind == LP_PROBE_DL && !strcmp((*points)[k].path, path);
		if (found && !have) {
			struct lp_probe_point *pt = new_point(spec, path, points, n);
			pt->name = lp_strdup(sym);
			pt->offset = off;
			pt->cfg.kind = LP_PROBE_DL;
			pt->cfg.vaddr = c->value;
			if (verbose)
				lp_error("%s: the libraries the program loads are seen at %s in %s", spec->text,
					 sym, path);
		}
	}
	if (path)
		elfobj_close(&lo);
	free(path);
	return found;
}

/* syscall:NAME and tp:SUBSYS:EVENT: no file to read. */
static void kernel_point(const struct lp_probe_spec *spec, struct lp_probe_point **points,
			 size_t *n)
{
	struct lp_probe_point *pt = new_point(spec, "", points, n);
	pt->name = lp_strdup(spec->text);
	if (spec->type == LP_PROBE_SYSCALLS) {
		pt->cfg.kind = LP_PROBE_SYSCALL;
		pt->sysnr = lp_syscall__number(spec->name);
	} else {
		pt->cfg.kind = LP_PROBE_TP;
		size_t k = strcspn(spec->name, ":");
		pt->tp_subsys = lp_strndup(spec->name, k);
		pt->tp_event = lp_strdup(spec->name + k + 1);
	}
}

/* --- USDT probes ------------------------------------------------------ */

/* The probe PROVIDER:NAME among a file's, or NULL. */
static const struct lp_usdt_probe *usdt_find(const struct lp_usdt_probe *u, size_t nu,
					     const char *provider, const char *name)
{
	for (size_t i = 0; i < nu; i++)
		if (!strcmp(u[i].provider, provider) && !strcmp(u[i].name, name))
			return &u[i];
	return NULL;
}

/* usdt:PROVIDER:X where the file has no X but X__entry and X__return (or
 * X__start and X__done): the pair's halves in pair[], true. */
static bool usdt_pair(const struct lp_usdt_probe *u, size_t nu, const struct lp_probe_spec *spec,
		      const struct lp_usdt_probe *pair[2])
{
	static const char *const halves[][2] = { { "__entry", "__return" }, { "__start", "__done" } };
	for (size_t k = 0; k < sizeof(halves) / sizeof(halves[0]); k++) {
		for (int h = 0; h < 2; h++) {
			char name[256];
			snprintf(name, sizeof(name), "%s%s", spec->name, halves[k][h]);
			pair[h] = usdt_find(u, nu, spec->provider, name);
		}
		if (pair[0] && pair[1])
			return true;
	}
	return false;
}

/* Why PROVIDER:NAME is not in path: the provider's probes there, else the
 * providers it has. */
static void usdt_missing(const struct lp_probe_spec *spec, const char *path, const char *also,
			 const struct lp_usdt_probe *u, size_t nu)
{
	if (!nu) {
		lp_error("probe '%s': no USDT probes in %s%s", spec->text, path, also);
		return;
	}
	char list[1024] = "";
	size_t len = 0;
	bool prov = false;
	for (size_t i = 0; i < nu; i++)
		prov |= !strcmp(u[i].provider, spec->provider);
	for (size_t i = 0; i < nu && len < sizeof(list); i++) {
		if (prov ? strcmp(u[i].provider, spec->provider)
			 : i && !strcmp(u[i].provider, u[i - 1].provider))
			continue;
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s%s%s", len ? ", " : "",
					u[i].provider, prov ? ":" : "", prov ? u[i].name : "");
	}
	lp_error("probe '%s': no USDT probe %s:%s in %s%s; %s: %s", spec->text, spec->provider,
		 spec->name, path, also, prov ? "its probes there" : "its providers", list);
}

/* flags: LP_PROBE_F_OPEN or _CLOSE for a pair's halves (attached in that
 * order, one after the other), else 0.  The values: the arguments listed in
 * the spec (cap.off: which; ":str" a C string), else all, typed by size and
 * sign from the argument spec; a closing half has none (its span carries
 * the opening half's).  -1 after a message. */
static int usdt_point(const struct lp_probe_spec *spec, const char *path, const struct lp_usdt_probe *u,
		      unsigned flags, struct lp_probe_point **points, size_t *n)
{
	struct lp_probe_point *pt = new_point(spec, path, points, n);
	pt->name = lp_strdup(spec->text);
	pt->cfg.kind = LP_PROBE_USDT;
	pt->cfg.flags = flags;
	pt->usdt_provider = lp_strdup(u->provider);
	pt->usdt_name = lp_strdup(u->name);
	/* sys/sdt.h puts a 1-byte nop at every probe site on x86 (_SDT_NOP):
	 * its class is what a hit costs. */
	static const unsigned char sdt_nop[] = { 0x90 };
	pt->insn = lp_insn__classify(sdt_nop, sizeof(sdt_nop));
	if (flags & LP_PROBE_F_CLOSE)
		return 0;
	int size[LP_TRACE_MAX_CAPS], nstrs = 0;
	bool sign[LP_TRACE_MAX_CAPS];
	/* An argument spec lp cannot read: the probe still fires, without values. */
	int k = lp_usdt__arg_types(u->args, size, sign, LP_TRACE_MAX_CAPS);
	size_t nv = spec->nvars ? spec->nvars : (size_t)(k > 0 ? k : 0);
	for (size_t i = 0; i < nv; i++) {
		int a = spec->nvars ? atoi(spec->vars[i] + 3) : (int)i;
		bool str = spec->nvars && strchr(spec->vars[i], ':');
		if (a >= k) {
			lp_error("probe '%s': %s:%s in %s has %d argument%s (arg0 to arg%d)", spec->text,
				 u->provider, u->name, path, k < 0 ? 0 : k, k == 1 ? "" : "s", k - 1);
			return -1;
		}
		char nm[16];
		snprintf(nm, sizeof(nm), "arg%d", a);
		struct lp_probe_value v = { .size = str ? 8 : size[a],
					    .type = str ? LP_VAL_STR : sign[a] ? LP_VAL_INT : LP_VAL_UINT };
		if (add_value(pt, nm, &v, (struct lp_trace_cap){ .off = a }, &nstrs) < 0)
			return -1;
	}
	return 0;
}

/* The directories of exe's DT_RPATH or DT_RUNPATH (ld.so takes RUNPATH
 * when both are there), $ORIGIN made exe's own directory; NULL when it
 * has neither.  pyenv's python3.11 finds its libpython so. */
static char **run_paths(Elf *e, Elf_Data *d, const GElf_Shdr *sh, const char *exe, size_t *n)
{
	const char *rpath = NULL, *runpath = NULL;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Dyn dyn;
		if (!gelf_getdyn(d, (int)i, &dyn))
			continue;
		if (dyn.d_tag == DT_RPATH)
			rpath = elf_strptr(e, sh->sh_link, dyn.d_un.d_val);
		else if (dyn.d_tag == DT_RUNPATH)
			runpath = elf_strptr(e, sh->sh_link, dyn.d_un.d_val);
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
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while (e && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t ndirs = 0;
		char **dirs = d ? run_paths(e, d, &sh, exe, &ndirs) : NULL;
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *name;
			char *path = NULL;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED ||
			    !(name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)))
				continue;
			for (size_t k = 0; k < ndirs && !path; k++) {
				path = lp_malloc(strlen(dirs[k]) + strlen(name) + 2);
				sprintf(path, "%s/%s", dirs[k], name);
				if (access(path, R_OK) < 0) {
					free(path);
					path = NULL;
				}
			}
			if (!path && !(path = find_lib(name, 0)))
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
static char **target_files(const char *exe, pid_t pid, size_t *n)
{
	char **files = lp_usdt__files(exe, pid, n);
	if (pid <= 0)
		add_needed(exe, &files, n);
	return files;
}

/* usdt:[FILE:]PROVIDER:NAME: in FILE, else in the executable, then the
 * files pid maps (or the libraries it needs, pid 0). */
static int usdt_points(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
		       struct lp_probe_point **points, size_t *n)
{
	size_t nfiles;
	char **files;
	if (spec->lib) {
		char *path = find_lib(spec->lib, pid);
		if (!path) {
			lp_error("probe '%s': no file or library '%s'", spec->text, spec->lib);
			return -1;
		}
		files = lp_calloc(1, sizeof(*files));
		files[0] = path;
		nfiles = 1;
	} else {
		files = target_files(exe, pid, &nfiles);
	}
	int ret = -1;
	struct lp_usdt_probe *all = NULL;	/* every file's, for the message */
	size_t nall = 0;
	for (size_t i = 0; i < nfiles && ret < 0; i++) {
		struct lp_usdt_probe *u;
		size_t nu;
		if (lp_usdt__read(files[i], &u, &nu) < 0) {
			if (i == 0)
				break;
			continue;
		}
		const struct lp_usdt_probe *hit = usdt_find(u, nu, spec->provider, spec->name), *pair[2];
		/* Found: 0, or -1 for good after the values' message. */
		if (hit) {
			ret = usdt_point(spec, files[i], hit, 0, points, n);
		} else if (usdt_pair(u, nu, spec, pair)) {
			hit = pair[0];
			ret = usdt_point(spec, files[i], pair[0], LP_PROBE_F_OPEN, points, n);
			if (ret == 0)
				ret = usdt_point(spec, files[i], pair[1], LP_PROBE_F_CLOSE, points, n);
		}
		all = lp_reallocarray(all, nall + nu, sizeof(*all));
		memcpy(all + nall, u, nu * sizeof(*u));
		nall += nu;
		free(u);
		if (hit)
			break;
		if (i == nfiles - 1)
			usdt_missing(spec, files[0], nfiles == 1 ? "" : pid > 0 ? " or the files it maps"
								  : " or the libraries it needs", all, nall);
	}
	lp_usdt__free(all, nall);
	lp_usdt__free_files(files, nfiles);
	return ret;
}

static void free_hits(struct line_hit *hits, size_t nhits)
{
	for (size_t i = 0; i < nhits; i++)
		free(hits[i].stmts);
	free(hits);
}

/* FILE:LINE: a point at each function or inlined copy with code there. */
static int line_points(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
		       bool verbose, struct lp_probe_point **points, size_t *n)
{
	struct line_hit *hits;
	size_t nhits;
	if (resolve_line(spec, o, path, &hits, &nhits) < 0)
		return -1;
	for (size_t i = 0; i < nhits; i++) {
		uint64_t off;
		if (lp_dwarf__file_offset(o->elf, hits[i].addr, &off, NULL) < 0)
			continue;
		struct lp_probe_point *pt = new_point(spec, path, points, n);
		char name[512];
		snprintf(name, sizeof(name), "%s:%d", spec->file, spec->line);
		pt->name = lp_strdup(name);
		pt->cfg.kind = LP_PROBE_POINT;
		const char *why;
		uint64_t addr = choose_line_addr(pt, o, &hits[i], &pt->insn, &why);
		if (addr != hits[i].addr && lp_dwarf__file_offset(o->elf, addr, &off, NULL) < 0)
			addr = hits[i].addr, pt->insn = LP_INSN_STEPPED;
		pt->offset = off;
		pt->cfg.vaddr = addr;
		if (line_values(pt, o->dw, hits[i].cu, addr, false) < 0) {
			free_hits(hits, nhits);
			return -1;
		}
		if (pt->insn == LP_INSN_STEPPED)
			lp_error("note: probe '%s': each hit at 0x%llx is single-stepped out of line (insn=stepped in its cost record: about ten times a function probe's cost): %s",
				 spec->text, (unsigned long long)addr, why);
		if (verbose)
			lp_error("%s: %s at 0x%llx (file offset 0x%llx, %s instruction%s)", spec->text,
				 path, (unsigned long long)addr, (unsigned long long)off,
				 lp_insn__name(pt->insn),
				 addr == hits[i].addr ? "" : spec->nvars ? ", a later statement of the line"
				 : ", later in the line");
	}
	free_hits(hits, nhits);
	return 0;
}

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

/* Where spec's probe goes in o: its function's compiled copies (find_func;
 * for FUNC+OFF the function itself, at OFF), each with its address in
 * (*copies)[k].sym->value (+OFF), *shown its spans' name; an address's
 * one copy has no symbol.  -1 after saying why. */
static int func_address(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
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
		lp_error("note: %s is stripped: using its dynamic symbols (.dynsym)", path);
	if (o->dbg_path && verbose)
		lp_error("note: %s is stripped: using its debug file %s", path, o->dbg_path);
	if (!*ncopies) {
		char hint[512];
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

/* A function probe's entry (past an endbr64 when that is cheaper), its
 * values and how its returns are seen; *catch: C++'s catch is to be
 * probed too. */
static int func_entry(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
		      const char *exe, const struct lp_fsym *fsym, const char *shown, uint64_t vaddr,
		      uint64_t off, bool verbose, struct lp_probe_point *pt, bool *catch)
{
	if (shown) {
		/* As lp-record names its frames: "store::Shop::checkout(long)". */
		size_t len = (spec->lib ? strlen(spec->lib) + 1 : 0) + strlen(shown) + 1;
		pt->name = lp_malloc(len);
		snprintf(pt->name, len, "%s%s%s", spec->lib ? spec->lib : "",
			 spec->lib ? ":" : "", shown);
	} else {
		pt->name = lp_strdup(spec->lib ? spec->text : spec->func);
		char *paren = list_start(pt->name);
		if (paren)
			*paren = '\0';
	}
	pt->cfg.kind = LP_PROBE_ENTRY;
	uint64_t skip = skip_endbr(o->elf, off);
	if (skip && verbose) {
		enum lp_insn next = insn_at(o->elf, off + skip);
		lp_error("%s: starts with endbr64: probing the %s at +%llu (%s, not single-stepped)",
			 spec->text, next == LP_INSN_NOP ? "nop" : "push, call or jump",
			 (unsigned long long)skip, next == LP_INSN_NOP ? "optimised" : "emulated");
	}
	if (func_values(pt, o->dw, vaddr, path) < 0)
		return -1;
	pt->offset = off + skip;
	pt->cfg.vaddr = vaddr + skip;
	struct lp_hazard hz;
	hazards(o, path, exe, &hz);
	char err[1024];
	if (choose_returns(spec, o, path, &hz, fsym, vaddr, verbose, pt, err, sizeof(err)) < 0) {
		lp_error("%s", err);
		return -1;
	}
	*catch = hz.cxx && pt->returns == LP_RETURNS_INSN;
	return 0;
}

/* FUNC, FUNC+OFF, 0xADDR: a point at each compiled copy of FUNC (one
 * for the others), all named as FUNC; the catch and ld.so points it
 * needs, once. */
static int func_point(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
		      const char *exe, pid_t pid, bool verbose, struct lp_probe_point **points,
		      size_t *n)
{
	struct lp_fcopy *copies;
	size_t ncopies, first = *n;
	uint64_t vaddr0;
	char *shown = NULL;
	bool catch = false, gate = false;
	int ret = -1;

	if (func_address(spec, o, path, verbose, &copies, &ncopies, &vaddr0, &shown) < 0)
		goto out;
	for (size_t k = 0; k < ncopies; k++) {
		const struct lp_fsym *fsym = copies[k].sym;
		uint64_t vaddr = k ? fsym->value : vaddr0, off;
		if (lp_dwarf__file_offset(o->elf, vaddr, &off, NULL) < 0) {
			lp_error("probe '%s': address 0x%llx is not in a loaded segment of %s",
				 spec->text, (unsigned long long)vaddr, path);
			goto out;
		}
		struct lp_probe_point *pt = new_point(spec, path, points, n);
		pt->cfg.vaddr = vaddr;
		if (copies[k].copy)
			pt->copy = lp_strdup(copies[k].copy);
		if (spec->type == LP_PROBE_FUNC) {
			bool c = false;
			if (func_entry(spec, o, path, exe, fsym, shown, vaddr, off, verbose, pt, &c) < 0)
				goto out;
			catch |= c;
		} else {
			pt->name = lp_strdup(spec->text);
			pt->cfg.kind = LP_PROBE_POINT;
			pt->offset = off;
		}
		pt->insn = insn_at(o->elf, pt->offset);
		gate |= pt->dl_gate;
		if (verbose)
			lp_error("%s: %s at 0x%llx (file offset 0x%llx, %s instruction)%s%s",
				 spec->text, path, (unsigned long long)pt->cfg.vaddr,
				 (unsigned long long)pt->offset, lp_insn__name(pt->insn),
				 pt->copy ? ", its copy " : "", pt->copy ? fsym->name : "");
	}
	/* Last: they move *points. */
	if (catch)
		add_catch(spec, exe, pid, verbose, points, n);
	if (gate && !add_dl(spec, exe, pid, verbose, points, n)) {
		for (size_t k = first; k < first + ncopies; k++)
			(*points)[k].dl_gate = false;
	} else if (gate && (*points)[*n - 1].cfg.kind == LP_PROBE_DL) {
		/* Before the function: the tracer watches the loads before
		 * it arms any uretprobe. */
		struct lp_probe_point dl = (*points)[*n - 1];
		memmove(&(*points)[first + 1], &(*points)[first], (*n - 1 - first) * sizeof(**points));
		(*points)[first] = dl;
	}
	ret = 0;
out:
	lp_fname__free_copies(copies, ncopies);
	free(shown);
	return ret;
}

/* python:[MODULE:]NAME in the interpreter: exe, or the libpython it maps or needs
 * (pyenv's builds); a point at each site (lib/capture/trace/pyprobe.c), the
 * globs in its settings. */
static int python_points(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
			 bool verbose, struct lp_probe_point **points, size_t *n)
{
	struct lp_pyprobe pp;
	size_t nfiles;
	char **files = target_files(exe, pid, &nfiles);
	int r = lp_pyprobe__find((const char *const *)files, nfiles, spec->text, verbose, &pp);
	if (r < 0) {
		lp_usdt__free_files(files, nfiles);
		return -1;
	}
	const char *path = files[pp.file];
	if (lp_pyprobe__globs(spec->text, spec->module, spec->name, &pp.conf) < 0) {
		lp_usdt__free_files(files, nfiles);
		return -1;
	}
	for (size_t i = 0; i < pp.nsites; i++) {
		struct lp_probe_point *pt = new_point(spec, path, points, n);
		pt->name = lp_strdup(spec->text);
		pt->offset = pp.sites[i].offset;
		pt->insn = pp.sites[i].insn;
		pt->cfg.kind = LP_PROBE_PY;
		pt->cfg.vaddr = pp.sites[i].vaddr;
		pt->cfg.flags = pp.sites[i].flags;
		pt->py = lp_malloc(sizeof(*pt->py));
		*pt->py = pp.conf;
	}
	lp_usdt__free_files(files, nfiles);
	return 0;
}

char *lp_probe__path(const struct lp_probe_spec *spec, const char *exe, pid_t pid)
{
	if (!spec->lib)
		return lp_strdup(exe);
	char *path = find_lib(spec->lib, pid);
	if (!path)
		lp_error("probe '%s': no library '%s' %s", spec->text, spec->lib,
			 pid > 0 ? "mapped by the process or in the library directories"
				 : "in the library directories");
	return path;
}

int lp_probe__resolve(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
		      bool verbose, struct lp_probe_point **points, size_t *n)
{
	if (spec->type == LP_PROBE_SYSCALLS || spec->type == LP_PROBE_TRACEPOINT) {
		kernel_point(spec, points, n);
		return 0;
	}
	if (spec->type == LP_PROBE_USDTS)
		return usdt_points(spec, exe, pid, points, n);
	if (spec->type == LP_PROBE_PYTHON)
		return python_points(spec, exe, pid, verbose, points, n);
	char *path = lp_probe__path(spec, exe, pid);
	if (!path)
		return -1;
	struct elfobj o;
	int ret = -1;
	if (elfobj_open(&o, path) == 0)
		ret = spec->type == LP_PROBE_LINE
			? line_points(spec, &o, path, verbose, points, n)
			: func_point(spec, &o, path, exe, pid, verbose, points, n);
	elfobj_close(&o);
	free(path);
	return ret;
}

/* --- discovery: the same questions, of a file opened once ------------ */

struct lp_probe_file {
	struct elfobj o;
	char *path, *exe;
	struct lp_hazard hz;
	bool hz_read;
};

struct lp_probe_file *lp_probe_file__open(const char *path, const char *exe)
{
	struct lp_probe_file *f = lp_calloc(1, sizeof(*f));
	if (elfobj_open(&f->o, path) < 0) {
		elfobj_close(&f->o);
		free(f);
		return NULL;
	}
	f->path = lp_strdup(path);
	f->exe = exe ? lp_strdup(exe) : NULL;
	return f;
}

void lp_probe_file__free(struct lp_probe_file *f)
{
	if (!f)
		return;
	elfobj_close(&f->o);
	free(f->path);
	free(f->exe);
	free(f);
}

struct lp_dwarf *lp_probe_file__dwarf(struct lp_probe_file *f)
{
	return f->o.dw;
}

const char *lp_probe_file__debug_path(const struct lp_probe_file *f)
{
	return f->o.dbg_path;
}

bool lp_probe_file__stripped(const struct lp_probe_file *f)
{
	return f->o.stripped;
}

bool lp_probe_file__func(const struct lp_probe_file *f, size_t i, struct lp_probe_func *out)
{
	if (i >= f->o.fs.nsyms)
		return false;
	const struct lp_fsym *s = &f->o.fs.syms[i];
	*out = (struct lp_probe_func){ s->name, s->value, s->size, s->ifunc };
	return true;
}

int lp_probe_file__returns(struct lp_probe_file *f, size_t i, char *why, size_t whysize)
{
	const struct lp_fsym *s = &f->o.fs.syms[i];
	uint64_t off;
	why[0] = '\0';
	if (s->ifunc) {
		snprintf(why, whysize, "an IFUNC resolver, run once by ld.so");
		return -1;
	}
	if (lp_dwarf__file_offset(f->o.elf, s->value, &off, NULL) < 0) {
		snprintf(why, whysize, "not in a loaded segment");
		return -1;
	}
	if (!f->hz_read) {
		hazards(&f->o, f->path, f->exe, &f->hz);
		f->hz_read = true;
	}
	/* As func_entry decides it, with --returns auto and nothing said. */
	struct lp_probe_spec spec = { .type = LP_PROBE_FUNC, .text = (char *)s->name,
				      .func = (char *)s->name, .returns = LP_RETURNS_AUTO };
	struct lp_probe_point pt = { .spec = &spec, .offset = off + skip_endbr(f->o.elf, off) };
	int r = choose_returns(&spec, &f->o, f->path, &f->hz, s, s->value, false, &pt, why, whysize);
	if (r == 0 && pt.returns == LP_RETURNS_INSN)
		snprintf(why, whysize, "%s%s", pt.returns_why,
			 pt.dl_gate && lp_kfeature__has(LP_KF_UPROBE_SESSION) &&
			 lp_kfeature__has(LP_KF_UPROBE_MULTI)
			 ? "; traced in a process: a uretprobe per call until it loads a library that can throw" : "");
	r = r < 0 ? -1 : (int)pt.returns;
	lp_probe_point__fini(&pt);
	return r;
}

int lp_probe_file__find(struct lp_probe_file *f, struct lp_probe_spec *spec, uint64_t *vaddr,
			uint64_t *size)
{
	struct lp_fcopy *copies;
	size_t n;
	char *shown = NULL;
	int r = func_address(spec, &f->o, f->path, false, &copies, &n, vaddr, &shown);
	free(shown);
	*size = r == 0 && n && copies[0].sym ? copies[0].sym->size : 0;
	lp_fname__free_copies(copies, n);
	return r;
}

int lp_probe_file__sites(struct lp_probe_file *f, const struct lp_probe_spec *spec, int hi,
			 struct lp_probe_site **sites, size_t *n)
{
	struct line_hit *hits = NULL;
	size_t nhits = 0;
	*sites = NULL;
	*n = 0;
	if (hi == spec->line) {
		if (resolve_line(spec, &f->o, f->path, &hits, &nhits) < 0)
			return -1;
	} else if (lp_dwarf__has_dwarf(f->o.dw)) {
		struct line_walk w = { .file = spec->file, .lo = spec->line, .hi = hi, .dw = f->o.dw };
		lp_dwarf__each_line(f->o.dw, line_row, &w);
		hits = w.hits;
		nhits = w.nhits;
	}
	*sites = lp_calloc(nhits ? nhits : 1, sizeof(**sites));
	for (size_t i = 0; i < nhits; i++) {
		/* Where line_points puts it, for the same reasons. */
		struct lp_probe_point pt = { .spec = spec };
		struct lp_probe_site *st = &(*sites)[(*n)++];
		uint64_t off;
		st->line = hits[i].line;
		st->cu = hits[i].cu;
		st->addr = choose_line_addr(&pt, &f->o, &hits[i], &st->insn, &st->why);
		if (st->addr != hits[i].addr && lp_dwarf__file_offset(f->o.elf, st->addr, &off, NULL) < 0)
			st->addr = hits[i].addr, st->insn = LP_INSN_STEPPED;
		lp_probe_point__fini(&pt);
	}
	free_hits(hits, nhits);
	return 0;
}

int lp_probe_file__capture(struct lp_probe_file *f, const struct lp_probe_spec *spec,
			   const struct lp_probe_site *site, const char *name, char *why,
			   size_t whysize)
{
	struct lp_probe_point pt = { .spec = spec };
	struct lp_dwscope *sc = lp_dwarf__scope(f->o.dw, site->cu, site->addr);
	int nstrs = 0;
	int r = line_value(&pt, sc, name, site->addr, &nstrs, why, whysize);
	lp_dwscope__free(sc);
	lp_probe_point__fini(&pt);
	return r;
}
