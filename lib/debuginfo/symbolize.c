/* symbolize.c - addresses to frames with libdw, /proc/kallsyms and perf JIT
 * maps, cached: the symbolizer's lifecycle and options, a user address's
 * frames (the function and those inlined in it, or MODULE+0xOFFSET), the
 * cache of them, binaries opened by path, stacks renamed (symbolize.h).
 *
 * Costs that shape these files (PERF-NOTES.md): dwfl_module_addrsym scans the
 * symbol table linearly, 120-160 us per address, so each module's symbols are
 * read once (lp_dwmod__sym, lib/debuginfo/dwarf.h) into a sorted array
 * (shared by every process mapping the same file, keyed by build-id) and
 * answered by binary search; a new Dwfl per sample would reopen every ELF
 * file, so there is one per process, refreshed only when an address falls
 * outside all of its known modules (a dlopen, a late mapping). */
#include "debuginfo/symbolize.h"
#include "debuginfo/symbolize-internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>

#include "base/util.h"
#include "debuginfo/vdso.h"
#include "stream/perfmap.h"

struct lp_symbolizer *lp_symbolizer__new(struct lp_dict *dict)
{
	struct lp_symbolizer *s = lp_calloc(1, sizeof(*s));

	s->dict = dict;
	lp_hashmap__init(&s->procs);
	lp_hashmap__init(&s->symtabs);
	lp_hashmap__init(&s->cache);
	lp_hashmap__init(&s->files);
	lp_hashmap__init(&s->restacked);
	lp_hashmap__init(&s->idents);
	return s;
}

void lp_symbolizer__free(struct lp_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->procs.cap; i++) {
		struct lp_proc *p = s->procs.keys[i] ? s->procs.values[i] : NULL;

		if (p)
			lp_symbolize_proc_free(p);
	}
	for (size_t i = 0; i < s->symtabs.cap; i++)
		if (s->symtabs.keys[i])
			lp_symbolize_symtab_free(s->symtabs.values[i]);
	for (size_t i = 0; i < s->cache.cap; i++)
		if (s->cache.keys[i])
			free(s->cache.values[i]);
	for (size_t i = 0; i < s->files.cap; i++) {
		struct lp_file *f = s->files.keys[i] ? s->files.values[i] : NULL;

		if (!f)
			continue;
		lp_dwfile__free(f->dw);
		free(f->path);
		free(f->build_id);
		free(f);
	}
	lp_hashmap__fini(&s->files);
	for (size_t i = 0; i < s->restacked.cap; i++)
		if (s->restacked.keys[i])
			free(s->restacked.values[i]);
	lp_hashmap__fini(&s->restacked);
	for (size_t i = 0; i < s->idents.cap; i++)
		if (s->idents.keys[i])
			free(s->idents.values[i]);
	lp_hashmap__fini(&s->idents);
	lp_hashmap__fini(&s->procs);
	lp_hashmap__fini(&s->symtabs);
	lp_hashmap__fini(&s->cache);
	free(s->ksyms);
	free(s->knames);
	free(s);
}

/* "file:line", kept in the dictionary: paths may be any length. */
static const char *file_line(struct lp_dict *dict, const char *file, unsigned long long line)
{
	size_t n = strlen(file) + 24;
	char *tmp = lp_malloc(n);
	int len = snprintf(tmp, n, "%s:%llu", file, line);
	const char *s = lp_dict__string(dict, tmp, (size_t)len);
	free(tmp);
	return s;
}

static const char *pc_line(struct lp_dict *dict, struct lp_dwmod *mod, uint64_t pc)
{
	int line;
	const char *file = lp_dwmod__line(mod, pc, &line);

	return file ? file_line(dict, file, (unsigned long long)line) : "";
}

/* The function holding pc, and with s->inlines the functions inlined into
 * it down to the one pc is in: out[0] the function, out[n-1] the innermost.
 * The chain costs milliseconds (lp_dwmod__funcs): once per address, then
 * lp_symbolize_cached. */
static size_t resolve_module(struct lp_symbolizer *s, struct lp_dwmod *mod, const char *modname,
			     const char *symname, uint64_t pc, const struct lp_frame **out)
{
	struct lp_dwfunc chain[LP_SYM_MAX_INLINE + 1];
	const char *lines[LP_SYM_MAX_INLINE + 1];
	size_t n = s->inlines ? lp_dwmod__funcs(mod, pc, chain, LP_SYM_MAX_INLINE + 1) : 0, k;

	/* chain[0] is the innermost, then each function it is inlined into.
	 * An inlined copy's call site is where its caller (the next one out)
	 * is: kept with the caller's frame. */
	for (k = 0; k < n && k < LP_SYM_MAX_INLINE && chain[k].inlined; k++)
		lines[k + 1] = chain[k].call_known && chain[k].call_file
			? file_line(s->dict, chain[k].call_file, chain[k].call_line) : "";
	lines[0] = s->srclines ? pc_line(s->dict, mod, pc) : "";
	/* Root first: the function (its line: the outermost call site, or pc's
	 * own when nothing is inlined), then the inlined ones outward in. */
	out[0] = lp_dict__frame(s->dict, LP_FRAME_USER, 0, modname, symname,
				s->srclines ? lines[k] : "");
	for (size_t j = 1; j <= k; j++)
		out[j] = lp_dict__frame(s->dict, LP_FRAME_INLINE, 0, modname,
					chain[k - j].name ? chain[k - j].name : "",
					s->srclines ? lines[k - j] : "");
	return k + 1;
}

/* The module's build-id in hex, of any length (--build-id=0xHEX makes
 * long ones), malloc'd; "" when it has none. */
static char *build_id_hex(struct lp_dwmod *mod)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	int len = lp_dwmod__build_id(mod, &bits);
	char *buf = lp_malloc(len > 0 ? 2 * (size_t)len + 1 : 1);

	for (int i = 0; i < len; i++) {
		buf[2 * i] = hex[bits[i] >> 4];
		buf[2 * i + 1] = hex[bits[i] & 15];
	}
	buf[len > 0 ? 2 * len : 0] = 0;
	return buf;
}

/* --raw: the address in the file (its ELF virtual address), the file's
 * path, and its build-id, so lp-symbolize can check it is symbolizing the
 * same build. */
static size_t raw_frame(struct lp_symbolizer *s, struct lp_dwmod *mod, const char *name,
			uint64_t look, const struct lp_frame **out)
{
	uint64_t bias;
	char *id = build_id_hex(mod);

	lp_dwmod__bias(mod, &bias);
	out[0] = lp_dict__raw_frame(s->dict, look - bias, name, id);
	free(id);
	return 1;
}

/* A user address that resolved to no symbol.  Never a frame that says
 * nothing at all (ADDR, MODULE and SYMBOL all "-"): a zero address from an
 * unwinder outside every module is perf's "[unknown]" module. */
const struct lp_frame *lp_symbolize_unresolved(struct lp_symbolizer *s, uint64_t addr,
					       const char *module)
{
	return lp_dict__frame(s->dict, LP_FRAME_USER, addr,
			      module[0] || addr ? module : "[unknown]", "", "");
}

static size_t resolve_user(struct lp_symbolizer *s, pid_t pid, uint64_t addr, uint64_t look,
			   const struct lp_frame **out)
{
	struct lp_proc *p = lp_symbolize_get_proc(s, pid);
	const char *jsym;

	/* A JIT map first when the process has one: libdwfl spans a module
	 * from its lowest to its highest mapping, and JIT code can sit in
	 * between (node maps part of its text far above the rest). */
	/* Looked for again while there is none: a JIT writes its map only
	 * once it has compiled something. */
	if (!p->jit.tried || (!p->jit.found && lp_monotonic_ns() - p->jit.tried_ns > LP_REFRESH_NS)) {
		p->jit.found = lp_perfmap__load(p->jit.map);
		p->jit.tried = true;
		p->jit.tried_ns = lp_monotonic_ns();
	}
	if (p->jit.found && (jsym = lp_symbolize_jit_find(p, look))) {
		out[0] = lp_dict__frame(s->dict, LP_FRAME_JIT, 0, p->jit.path, jsym, "");
		return 1;
	}

	struct lp_dwmod *mod = lp_symbolize_proc_module(p, look);
	if (mod) {
		uint64_t start;
		const char *name = lp_dwmod__info(mod, &start, NULL);
		struct lp_symtab *t = lp_symbolize_module_symtab(s, mod);
		const char *fname;
		uint64_t bias;

		if (!name)
			name = "";
		/* libdwfl names the vDSO "[vdso: PID]": one name for all. */
		if (!strncmp(name, "[vdso", 5))
			name = "[vdso]";
		if (s->raw && name[0] == '/')
			return raw_frame(s, mod, name, look, out);
		if ((fname = lp_symbolize_function_name(s, mod, t, start, name, look)))
			return resolve_module(s, mod, name, fname, look, out);
		/* Still an address in the module's file, the same in every run
		 * (address-space randomization moves only the bias), which
		 * addr2line -e MODULE and lp-symbolize read. */
		out[0] = lp_symbolize_unresolved(s, lp_dwmod__bias(mod, &bias) ? addr - bias : addr, name);
		return 1;
	}
	jsym = lp_symbolize_jit_find(p, look);
	/* The uretprobe trampoline as a return address (a stack taken before
	 * the kernel recorded the original) starts the page: look, one byte
	 * lower, is not in it. */
	bool uprobes = lp_symbolize_in_uprobes_page(p, look) || lp_symbolize_in_uprobes_page(p, addr);
	if (jsym)
		out[0] = lp_dict__frame(s->dict, LP_FRAME_JIT, 0, p->jit.path, jsym, "");
	else
		out[0] = lp_symbolize_unresolved(s, addr, uprobes ? "[uprobes]" : "");
	return 1;
}

static uint64_t cache_key(pid_t pid, uint32_t gen, uint64_t addr)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &pid, sizeof(pid));

	h = lp_hash_bytes(h, &gen, sizeof(gen));
	return lp_hashmap__key(lp_hash_bytes(h, &addr, sizeof(addr)));
}

size_t lp_symbolize_cached(struct lp_symbolizer *s, pid_t pid, uint64_t addr, bool ret,
			   const struct lp_frame **out)
{
	uint64_t look = ret && addr ? addr - 1 : addr;
	struct lp_proc *p = pid < 0 ? NULL : lp_symbolize_get_proc(s, pid);
	uint32_t gen = p ? p->gen : 0, reports = p ? p->nreports : 0;
	uint64_t key = cache_key(pid, gen, look);
	struct lp_cached *c = lp_hashmap__get(&s->cache, key);
	size_t n;

	s->st.lookups++;
	/* An lp_symbolize_unresolved user address is retried once its entry is older than
	 * LP_REFRESH_NS: a refresh of the process's modules or JIT map may
	 * resolve it by then. */
	if (c && c->pid == pid && c->gen == gen && c->addr == look &&
	    (*c->frames[0]->symbol || pid < 0 ||
	     (c->reports == reports && lp_monotonic_ns() - c->when < LP_REFRESH_NS))) {
		s->st.cache_hits++;
		memcpy(out, c->frames, c->n * sizeof(*out));
		return c->n;
	}
	if (pid < 0) {
		out[0] = lp_symbolize_resolve_kernel(s, addr, look);
		n = 1;
	} else {
		n = resolve_user(s, pid, addr, look, out);
	}
	if (!c || c->n < n) {
		free(c);
		c = lp_malloc(offsetof(struct lp_cached, frames) + n * sizeof(c->frames[0]));
		lp_hashmap__put(&s->cache, key, c);
	}
	c->pid = pid;
	c->gen = gen;
	c->addr = look;
	c->n = n;
	memcpy(c->frames, out, n * sizeof(*out));
	c->when = *out[0]->symbol ? 0 : lp_monotonic_ns();
	c->reports = p ? p->nreports : 0;
	return n;
}

size_t lp_symbolizer__user_frames(struct lp_symbolizer *s, pid_t pid, uint64_t addr, bool ret,
				  const struct lp_frame **out)
{
	return lp_symbolize_cached(s, pid, addr, ret, out);
}

const struct lp_frame *lp_symbolizer__user(struct lp_symbolizer *s, pid_t pid,
					   uint64_t addr, bool ret)
{
	const struct lp_frame *out[LP_SYM_MAX_INLINE + 1];
	size_t n = lp_symbolize_cached(s, pid, addr, ret, out);

	return out[n - 1];
}

void lp_symbolizer__set_options(struct lp_symbolizer *s, bool inlines, bool srclines)
{
	s->inlines = inlines;
	s->srclines = srclines;
}

void lp_symbolizer__set_saved_maps(struct lp_symbolizer *s, char *(*fn)(void *arg, pid_t pid),
				   void *arg)
{
	s->saved_maps = fn;
	s->saved_arg = arg;
}

void lp_symbolizer__set_raw(struct lp_symbolizer *s, bool raw)
{
	s->raw = raw;
}

void lp_symbolizer__set_demangle(struct lp_symbolizer *s, bool demangle)
{
	s->no_demangle = !demangle;
}

/* A file that opens and does not start as an ELF object does: a mapping
 * of data (ld.so.cache, a locale archive) or of a JIT's memfd, where a
 * stack's address is the unwinder's guess or JIT code, never something a
 * symbol table names. */
static bool readable_not_elf(const char *path)
{
	unsigned char magic[SELFMAG];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, magic, sizeof(magic));
	close(fd);
	return n >= 0 && (n < SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0);
}

static struct lp_file *open_file(struct lp_symbolizer *s, const char *path)
{
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, path, strlen(path)));
	struct lp_file *f = lp_hashmap__get(&s->files, key);

	if (f && !strcmp(f->path, path))
		return f;
	f = lp_calloc(1, sizeof(*f));
	f->path = lp_strdup(path);
	f->dw = lp_dwfile__open(path);
	f->mod = lp_dwfile__module(f->dw);
	f->not_elf = !f->mod && readable_not_elf(path);
	f->build_id = f->mod ? build_id_hex(f->mod) : lp_strdup("");
	/* A path hash collision replaces the older entry (leaked: rare). */
	lp_hashmap__put(&s->files, key, f);
	return f;
}

/* lp_symbolizer__file, its frames' module named modname. */
static int file_frames(struct lp_symbolizer *s, const char *path, const char *modname,
		       const char *build_id, uint64_t addr, const struct lp_frame **out, size_t *n)
{
	struct lp_file *f = open_file(s, path);
	uint64_t start;

	*n = 0;
	if (!f->mod)
		return f->not_elf ? 0 : -1;	/* 0: nothing there to name */
	if (build_id && *build_id && strcmp(build_id, f->build_id))
		return -2;
	lp_dwmod__info(f->mod, &start, NULL);
	struct lp_symtab *t = lp_symbolize_module_symtab(s, f->mod);
	const char *name = lp_symbolize_function_name(s, f->mod, t, start, modname, addr);
	if (!name)
		return 0;
	*n = resolve_module(s, f->mod, modname, name, addr, out);
	return 0;
}

int lp_symbolizer__file(struct lp_symbolizer *s, const char *path, const char *build_id,
			uint64_t addr, const struct lp_frame **out, size_t *n)
{
	return file_frames(s, path, path, build_id, addr, out, n);
}

void lp_symbolizer__stats(const struct lp_symbolizer *s, struct lp_symbolizer_stats *st)
{
	*st = s->st;
}

struct lp_restacked {
	const struct lp_frame *in;
	size_t n;
	const struct lp_frame *out[];
};

/* One input frame to output frames: a raw frame symbolized from its file,
 * anything else copied. */
static struct lp_restacked *restack_frame(struct lp_symbolizer *s, const struct lp_frame *f)
{
	uint64_t key = lp_hashmap__key(f->id);
	struct lp_restacked *r = lp_hashmap__get(&s->restacked, key);
	const struct lp_frame *out[LP_SYM_MAX_INLINE + 1];
	size_t n = 0;

	if (r && r->in == f)
		return r;
	/* A raw [vdso] frame (lp-cat's, of perf.data) is named from our own
	 * vDSO when it is the same build, as perf names it from its copy. */
	const char *path = !strcmp(f->module, "[vdso]") ? lp_vdso__path() : f->module;
	if (f->kind == LP_FRAME_USER && f->addr && !*f->symbol && path && path[0] == '/' &&
	    !*f->srcline) {
		const char *id = f->build_id[0] ? f->build_id : NULL;
		int rc = file_frames(s, path, f->module, id, f->addr, out, &n);
		struct lp_file *file = open_file(s, path);

		if (rc < 0 && !file->warned) {
			file->warned = true;
			lp_error("%s: %s: its frames are left unsymbolized", f->module,
				 rc == -2 ? "not the build that was recorded (build-id differs)"
					  : "cannot read it");
		}
		if (rc < 0)
			n = 0;
		if (rc == 0 && n == 0)	/* no symbol there: keep the address */
			out[n++] = lp_dict__frame(s->dict, LP_FRAME_USER, f->addr, f->module, "", "");
	}
	if (!n)
		out[n++] = lp_dict__frame_copy(s->dict, f);
	free(r);
	r = lp_malloc(offsetof(struct lp_restacked, out) + n * sizeof(r->out[0]));
	r->in = f;
	r->n = n;
	memcpy(r->out, out, n * sizeof(*out));
	lp_hashmap__put(&s->restacked, key, r);
	return r;
}

const struct lp_stack *lp_symbolizer__restack(struct lp_symbolizer *s, const struct lp_stack *in)
{
	size_t cap = in->nframes * (1 + LP_SYM_MAX_INLINE) + 1, n = 0;
	const struct lp_frame **frames = lp_calloc(cap, sizeof(*frames));
	const struct lp_stack *out;

	for (size_t i = 0; i < in->nframes; i++) {
		struct lp_restacked *r = restack_frame(s, in->frames[i]);

		memcpy(frames + n, r->out, r->n * sizeof(*frames));
		n += r->n;
	}
	out = lp_dict__stack(s->dict, frames, n);
	free(frames);
	return out;
}
