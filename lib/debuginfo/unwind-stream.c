/* unwind-stream.c - copied user stacks of a stream unwound from its map
 * records (unwind-stream.h).
 *
 * A process's maps are the map records of its pid, each over what it
 * overlaps (lp-cat writes them all again when they changed, so a set is
 * whole).  Its modules are a Dwfl of the files those maps name, built when
 * a sample needs it and shared by every process with the same set (a
 * fork's children: one Dwfl, each ELF file opened once, as perf script
 * keeps one per process).  A file whose build-id is not the recording's
 * (rebuilt since) or that is gone is left out of the Dwfl: the unwinding
 * stops at a pc there, counted and said, rather than reading another
 * build's CFI.  The vDSO is ours (vdso.h) when the build-ids agree. */
#include "debuginfo/unwind-stream.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/unwind.h"
#include "debuginfo/vdso.h"
#include "model/addrspace.h"
#include "model/dict.h"

/* perf script's bound on frames (PERF_MAX_STACK_DEPTH, --max-stack). */
#define LP_STREAM_MAX_FRAMES 127
/* Distinct sets' Dwfls kept (each holds its files open): past this many
 * (a system-wide recording), they are all freed and built again as
 * needed, so memory and descriptors stay bounded. */
#define LP_STREAM_MAX_DWFLS 64

/* One pid's maps (their strings in the unwinder's dict). */
struct pidmaps {
	struct lp_addrspace as;
	uint64_t set;		/* the set's hash; 0: changed since computed */
};

/* A file the maps name: whether it is the recording's build. */
struct file {
	char *module;		/* the key: a path or "[vdso]" */
	char *build_id;
	const char *path;	/* what to open (ours, for the vDSO); NULL: not usable */
	const char *why;	/* when not: "no-file" (gone, unreadable), "other-build" */
};

struct lp_stream_unwinder {
	struct lp_unwinder *unw;
	struct lp_dict *strings;	/* the maps' modules and build-ids */
	struct lp_hashmap pids;		/* pid + 1 -> pidmaps */
	struct lp_hashmap dwfls;	/* set -> lp_dwproc */
	struct lp_hashmap files;	/* (module, build-id) hash -> file */
	struct lp_dwproc *current;	/* the Dwfl of the sample being unwound */
	struct lp_stream_unwind_stats st;
	struct lp_stackcopy copy;
	uint64_t pcs[LP_STREAM_MAX_FRAMES];
	unsigned char ret[LP_STREAM_MAX_FRAMES];
	const struct lp_frame **frames;
	size_t frames_cap;
	char why[64], failed_why[64];
};

static struct lp_dwproc *current_modules(void *arg, pid_t pid, uint64_t addr)
{
	struct lp_stream_unwinder *u = arg;

	(void)pid;
	(void)addr;
	return u->current;
}

struct lp_stream_unwinder *lp_stream_unwinder__new(void)
{
	struct lp_stream_unwinder *u = lp_calloc(1, sizeof(*u));

	u->unw = lp_unwinder__new_modules(current_modules, u);
	u->strings = lp_dict__new();
	lp_hashmap__init(&u->pids);
	lp_hashmap__init(&u->dwfls);
	lp_hashmap__init(&u->files);
	return u;
}

static void free_dwfls(struct lp_stream_unwinder *u)
{
	for (size_t i = 0; i < u->dwfls.cap; i++)
		if (u->dwfls.keys[i])
			lp_dwproc__free(u->dwfls.values[i]);
	lp_hashmap__fini(&u->dwfls);
	lp_hashmap__init(&u->dwfls);
	u->current = NULL;
}

void lp_stream_unwinder__free(struct lp_stream_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->pids.cap; i++) {
		struct pidmaps *p = u->pids.keys[i] ? u->pids.values[i] : NULL;

		if (p)
			lp_addrspace__fini(&p->as);
		free(p);
	}
	for (size_t i = 0; i < u->files.cap; i++) {
		struct file *f = u->files.keys[i] ? u->files.values[i] : NULL;

		if (f) {
			free(f->module);
			free(f->build_id);
			free(f);
		}
	}
	free_dwfls(u);
	lp_hashmap__fini(&u->dwfls);
	lp_hashmap__fini(&u->pids);
	lp_hashmap__fini(&u->files);
	lp_unwinder__free(u->unw);
	lp_dict__free(u->strings);
	lp_stackcopy__free(&u->copy);
	free(u->frames);
	free(u);
}

static struct pidmaps *pidmaps(struct lp_stream_unwinder *u, int32_t pid, bool make)
{
	uint64_t key = (uint64_t)(uint32_t)pid + 1;
	struct pidmaps *p = lp_hashmap__get(&u->pids, key);

	if (!p && make) {
		p = lp_calloc(1, sizeof(*p));
		lp_hashmap__put(&u->pids, key, p);
	}
	return p;
}

void lp_stream_unwinder__map(struct lp_stream_unwinder *u, const struct lp_maprec *r)
{
	struct pidmaps *p = pidmaps(u, r->pid, true);
	struct lp_addrmap x = { r->start, r->end, r->bias, r->module, r->build_id, false };

	if (x.end <= x.start || lp_addrspace__has(&p->as, &x))
		return;		/* nothing, or written again as it was */
	x.module = lp_dict__string(u->strings, r->module, strlen(r->module));
	x.build_id = lp_dict__string(u->strings, r->build_id, strlen(r->build_id));
	lp_addrspace__insert(&p->as, &x);
	p->set = 0;
}

/* The build-id of the file at path, hex, malloc'd; "" when it has none,
 * NULL when it cannot be read. */
static char *file_build_id(const char *path)
{
	static const char hex[] = "0123456789abcdef";
	struct lp_dwfile *f = lp_dwfile__open(path);
	struct lp_dwmod *mod = lp_dwfile__module(f);
	const unsigned char *bits;
	int len = mod ? lp_dwmod__build_id(mod, &bits) : 0;
	char *id = mod ? lp_malloc(len > 0 ? 2 * (size_t)len + 1 : 1) : NULL;

	for (int i = 0; i < len; i++) {
		id[2 * i] = hex[bits[i] >> 4];
		id[2 * i + 1] = hex[bits[i] & 15];
	}
	if (id)
		id[len > 0 ? 2 * len : 0] = '\0';
	lp_dwfile__free(f);
	return id;
}

/* Whether the module is the recording's build: checked once per module
 * and build-id.  Returns what to open, or NULL. */
static const char *usable(struct lp_stream_unwinder *u, const struct lp_addrmap *m)
{
	uint64_t key = lp_hashmap__key(lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, m->module,
								   strlen(m->module) + 1),
						     m->build_id, strlen(m->build_id)));
	struct file *f = lp_hashmap__get(&u->files, key);

	if (f && !strcmp(f->module, m->module) && !strcmp(f->build_id, m->build_id))
		return f->path;
	f = lp_calloc(1, sizeof(*f));
	f->module = lp_strdup(m->module);
	f->build_id = lp_strdup(m->build_id);
	/* The vDSO: ours, when it is the recording's (said by perf's
	 * build-id section; not said, the same kernel is assumed). */
	const char *path = !strcmp(m->module, "[vdso]") ? lp_vdso__path()
			   : m->module[0] == '/' ? m->module : NULL;
	char *id = path ? file_build_id(path) : NULL;

	if (id && (!*m->build_id || !strcmp(id, m->build_id)))
		f->path = path == m->module ? f->module : path;
	else
		f->why = id ? "other-build" : "no-file";
	free(id);
	/* A hash collision replaces the older entry (leaked: rare). */
	lp_hashmap__put(&u->files, key, f);
	return f->path;
}

/* Why the unwinding of pid's copy stopped at pc (a return address when
 * ret): its file is gone or another build, or libdw's why. */
static const char *stopped(struct lp_stream_unwinder *u, const struct pidmaps *p, uint64_t pc,
			   bool ret, const char *why)
{
	const struct lp_addrmap *m = lp_addrspace__find(p ? &p->as : NULL, ret && pc ? pc - 1 : pc);
	uint64_t key = m ? lp_hashmap__key(lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, m->module,
									 strlen(m->module) + 1),
							   m->build_id, strlen(m->build_id))) : 0;
	struct file *f = m ? lp_hashmap__get(&u->files, key) : NULL;

	if (!m)
		return "no-map";
	return f && !f->path && f->why ? f->why : why;
}

/* The set's identity: its maps' ranges, biases and files. */
static uint64_t set_hash(const struct pidmaps *p)
{
	uint64_t h = LP_HASH_INIT;

	for (size_t i = 0; i < p->as.n; i++) {
		h = lp_hash_bytes(h, &p->as.v[i].start, 3 * sizeof(uint64_t));
		h = lp_hash_bytes(h, p->as.v[i].module, strlen(p->as.v[i].module) + 1);
		h = lp_hash_bytes(h, p->as.v[i].build_id, strlen(p->as.v[i].build_id) + 1);
	}
	return h ? h : 1;
}

/* pid's modules: the Dwfl of its set, built now if none is kept. */
static struct lp_dwproc *modules(struct lp_stream_unwinder *u, struct pidmaps *p)
{
	if (!p || !p->as.n)
		return NULL;
	if (!p->set)
		p->set = set_hash(p);
	uint64_t key = lp_hashmap__key(p->set);
	struct lp_dwproc *dw = lp_hashmap__get(&u->dwfls, key);

	if (dw)
		return dw;
	if (u->dwfls.count >= LP_STREAM_MAX_DWFLS)
		free_dwfls(u);
	if (!(dw = lp_dwproc__new()))
		return NULL;
	/* Each file once (its segments are one module), at its bias. */
	struct lp_dwfile_at *files = lp_calloc(p->as.n, sizeof(*files));
	size_t n = 0;

	for (size_t i = 0; i < p->as.n; i++) {
		const char *path = usable(u, &p->as.v[i]);
		bool seen = false;

		for (size_t k = 0; k < n && !seen; k++)
			seen = !strcmp(files[k].name, p->as.v[i].module) && files[k].bias == p->as.v[i].bias;
		if (path && !seen)
			files[n++] = (struct lp_dwfile_at){ p->as.v[i].module, path, p->as.v[i].bias };
	}
	lp_dwproc__report_files(dw, files, n);
	free(files);
	lp_hashmap__put(&u->dwfls, key, dw);
	/* The outermost frames the unwinder knows are per pid and pc: a
	 * process's new set may place other code there. */
	lp_unwinder__forget(u->unw, 0);
	return dw;
}

/* pc's raw frame, as lp-cat makes it (perfdata.c's frame()): a return
 * address one less, in its call; its file's address, path and build-id,
 * else the address as it is. */
static const struct lp_frame *raw_frame(struct lp_dict *dict, const struct pidmaps *p,
					uint64_t pc, bool ret)
{
	uint64_t look = ret && pc ? pc - 1 : pc;
	const struct lp_addrmap *m = lp_addrspace__find(p ? &p->as : NULL, look);

	if (!m)
		return lp_dict__frame(dict, LP_FRAME_USER, pc, pc ? "" : "[unknown]", "", "");
	return lp_dict__raw_frame(dict, look - m->bias, m->module, m->build_id);
}

int lp_stream_unwinder__sample(struct lp_stream_unwinder *u, struct lp_dict *dict,
			       struct lp_sample *s, struct lp_attrs_buf *attrs, const char **why)
{
	int rc = lp_stackcopy__read(&s->attrs, &u->copy, why);
	struct pidmaps *p = pidmaps(u, s->pid, false);
	struct lp_unwind_regs regs = { u->copy.ip, u->copy.sp, u->copy.bp };
	enum lp_unwind_end end;
	const char *uwhy = "";
	size_t n = 0, nk = 0;

	if (rc <= 0)
		return rc;
	u->st.samples++;
	u->current = modules(u, p);
	if (u->copy.has_ip && u->copy.has_sp && u->current)
		n = lp_unwinder__unwind(u->unw, s->pid, s->tid, &regs, u->copy.stack, u->copy.len,
					u->pcs, u->ret, LP_STREAM_MAX_FRAMES, &end, &uwhy);
	else if (u->copy.has_ip && u->copy.ip) {
		u->pcs[n] = u->copy.ip;
		u->ret[n++] = 0;
		end = LP_UNWIND_FAILED;
		uwhy = u->current ? "no-registers" : "no-maps";
	} else {
		end = LP_UNWIND_FAILED;
		uwhy = "no-registers";
	}
	if (end == LP_UNWIND_FAILED && n)
		uwhy = stopped(u, p, u->pcs[n - 1], u->ret[n - 1], uwhy);
	if (end == LP_UNWIND_COMPLETE && n >= LP_STREAM_MAX_FRAMES)
		end = LP_UNWIND_TRUNCATED, uwhy = "max-frames";
	/* Outermost first: the unwound frames, then the kernel's. */
	size_t cap = n + (s->stack ? s->stack->nframes : 0) + 1;
	if (cap > u->frames_cap) {
		u->frames_cap = cap * 2;
		u->frames = lp_reallocarray(u->frames, u->frames_cap, sizeof(*u->frames));
	}
	for (size_t i = n; i-- > 0;)
		u->frames[nk++] = raw_frame(dict, p, u->pcs[i], u->ret[i]);
	for (size_t i = 0; s->stack && i < s->stack->nframes; i++)
		if (s->stack->frames[i]->kind == LP_FRAME_KERNEL)
			u->frames[nk++] = s->stack->frames[i];
	if (nk)
		s->stack = lp_dict__stack(dict, u->frames, nk);
	lp_stackcopy__strip(&s->attrs, attrs);
	lp_attrs_buf__add(attrs, "unwind", "dwarf");
	if (end != LP_UNWIND_COMPLETE) {
		/* libdw's messages have spaces: a why= value is a word */
		snprintf(u->why, sizeof(u->why), "%s", uwhy && *uwhy ? uwhy : "unknown");
		for (char *c = u->why; *c; c++)
			if (*c == ' ')
				*c = '-';
		lp_attrs_buf__add(attrs, "truncated", "1");
		lp_attrs_buf__add(attrs, "why", u->why);
		if (end == LP_UNWIND_TRUNCATED)
			u->st.truncated++;
		else
			u->st.failed++, u->st.why = strcpy(u->failed_why, u->why);
	}
	s->attrs = lp_attrs_buf__attrs(attrs);
	return 1;
}

void lp_stream_unwinder__stats(const struct lp_stream_unwinder *u,
			       struct lp_stream_unwind_stats *st)
{
	*st = u->st;
}
