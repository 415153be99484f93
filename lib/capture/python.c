/* python.c - CPython frames for lp-record: finding an interpreter lp knows in
 * a process, and naming the code objects its sampler found (python.h).
 *
 * CPython 3.11 and 3.12 export no table of their own structures' offsets
 * (3.13's _Py_DebugOffsets came later), so they are lp's: taken with
 * offsetof from their headers (Include/internal/pycore_frame.h,
 * pycore_runtime.h, pycore_interp.h, pycore_gil.h, Include/cpython/pystate.h,
 * code.h, unicodeobject.h, bytesobject.h; the same for 3.11.2 and 3.11.7;
 * 3.12 from 3.12.1; 3.13 tells its own, debug_layout) and checked against the
 * running binary before use: its Py_Version says which, and, once the
 * interpreter is up, its first thread state points back at it.  Symbols
 * from the binary's .dynsym (Debian's python3.11 has no .symtab):
 * _PyRuntime, Py_Version, PyCode_Type. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "capture/python.h"
#include "capture/target.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/symbolize.h"

/* One CPython version's layout: what the sampler walks (struct lp_py_proc)
 * and what user space reads of code objects and their strings. */
struct lp_py_layout {
	unsigned major, minor;
	struct lp_py_proc walk;
	uint16_t tstate_interp;		/* PyThreadState.interp */
	uint16_t ob_type;		/* PyObject.ob_type */
	uint16_t code_flags, code_filename, code_qualname, code_linetable;
	uint16_t code_size;		/* bytes of a code object read: past the above */
	uint16_t var_size;		/* PyVarObject.ob_size */
	uint16_t bytes_data;		/* PyBytesObject.ob_sval */
	uint16_t str_length, str_state;	/* PyASCIIObject.length, .state */
	uint16_t str_ascii_data;	/* sizeof(PyASCIIObject): a compact ASCII string's text */
	uint16_t str_compact_data;	/* sizeof(PyCompactUnicodeObject): other compact strings' */
};

static const struct lp_py_layout layouts[] = {
	{
		.major = 3, .minor = 11,
		.walk = {
			.interp_head = 40, .gil_tstate = 576, .tstate_head = 16,
			.tstate_next = 8, .tstate_tid = 160, .tstate_cframe = 56,
			.cframe_frame = 8, .frame_code = 32, .frame_previous = 48,
			.frame_instr = 56, .frame_entry = 68, .code_first = 72,
			.code_adaptive = 184, .frame_size = 72,
		},
		.tstate_interp = 16, .ob_type = 8, .code_flags = 48,
		.code_filename = 112, .code_qualname = 128, .code_linetable = 136,
		.code_size = 144, .var_size = 16, .bytes_data = 32,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
	},
	{
		/* 3.12.1's headers (pyenv's build): no is_entry but frames
		 * of the C stack, the GIL per interpreter, shorter strings. */
		.major = 3, .minor = 12,
		.walk = {
			.interp_head = 40, .gil_interp = 384, .gil_tstate = 8, .gil_locked = 16,
			.gil_base = LP_PY_GIL_POINTER,
			.tstate_head = 72, .tstate_next = 8, .tstate_tid = 144,
			.tstate_cframe = 56, .cframe_frame = 0, .frame_code = 0,
			.frame_previous = 8, .frame_instr = 56, .frame_owner = 70,
			.owner_shim = 3, .code_first = 68, .code_adaptive = 192, .frame_size = 72,
		},
		.tstate_interp = 16, .ob_type = 8, .code_flags = 48,
		.code_filename = 112, .code_qualname = 128, .code_linetable = 136,
		.code_size = 144, .var_size = 16, .bytes_data = 32,
		.str_length = 16, .str_state = 32, .str_ascii_data = 40, .str_compact_data = 56,
	},
};

/* A code object of a process, as read once. */
struct py_code {
	uint64_t addr;
	int32_t first;		/* co_firstlineno, as the sampler read it */
	bool ok;		/* read, and a code object with that first line */
	const char *qualname, *filename;	/* interned in the dictionary */
	unsigned char *table;	/* co_linetable */
	size_t len;
};

struct py_proc {
	pid_t pid;
	bool python;
	bool settled;		/* CPython found, or known not to be walkable */
	uint32_t reports;	/* the symbolizer's reads of its modules when last looked at */
	/* Its interpreter found but not yet readable (its version, or its
	 * thread list half made at start-up): looked at again every
	 * PY_RETRY_NS until the process has used PY_START_NS of CPU time
	 * since the first look, then given up.  CPU time, not wall time: beside a busy CI run a
	 * CPython 3.13 took more than 2 s of wall time to make its first
	 * thread state, and a snapshot recording had no Python frames. */
	int64_t first_ns, tried_ns;
	int64_t first_cpu_ns;	/* its CPU time at the first look */
	const struct lp_py_layout *layout;	/* the table's, or debug's */
	struct lp_py_layout debug;	/* 3.13: from its _Py_DebugOffsets */
	uint64_t runtime;	/* run-time address of _PyRuntime */
	uint64_t code_type;	/* run-time address of PyCode_Type */
	struct lp_hashmap codes;	/* (address, first line) -> struct py_code */
};

struct lp_python {
	struct lp_dict *dict;
	struct lp_symbolizer *sym;
	/* Modules (by build-id, else path) known to hold no interpreter:
	 * every new process of lp-record -a has its modules looked at, and
	 * a scan of libc's thousands of symbols for each of them kept
	 * lp-record from draining (most processes map the same few). */
	struct lp_hashmap nopy;
	struct lp_hashmap procs;	/* pid -> struct py_proc */
	pid_t *pids;			/* lp_python__pids */
	size_t npids;
	bool warned;			/* an unknown version said */
	/* lp_python__merge's: samples, of which holding the GIL; interpreter
	 * frames kept, Python frame groups left out. */
	uint64_t samples, gil, kept, unplaced;
	char *buf;			/* strings' text */
	size_t cap;
};

struct lp_python *lp_python__new(struct lp_dict *dict, struct lp_symbolizer *sym)
{
	struct lp_python *py = lp_calloc(1, sizeof(*py));

	py->dict = dict;
	py->sym = sym;
	lp_hashmap__init(&py->procs);
	lp_hashmap__init(&py->nopy);
	return py;
}

static void free_proc(struct py_proc *p)
{
	for (size_t i = 0; i < p->codes.cap; i++) {
		struct py_code *c = p->codes.keys[i] ? p->codes.values[i] : NULL;

		if (c)
			free(c->table);
		free(c);
	}
	lp_hashmap__fini(&p->codes);
	free(p);
}

void lp_python__free(struct lp_python *py)
{
	if (!py)
		return;
	for (size_t i = 0; i < py->procs.cap; i++)
		if (py->procs.keys[i])
			free_proc(py->procs.values[i]);
	lp_hashmap__fini(&py->procs);
	lp_hashmap__fini(&py->nopy);
	free(py->pids);
	free(py->buf);
	free(py);
}

static uint64_t pid_key(pid_t pid)
{
	return lp_hashmap__key((uint64_t)(uint32_t)pid + 1);
}

/* len bytes of pid's memory at addr: 0, or -1 when they cannot be read
 * (all of them: a short read is a failure). */
static int peek(pid_t pid, uint64_t addr, void *dst, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static uint64_t word(const unsigned char *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* The symbols of the interpreter, in whichever module defines them: the
 * program itself (Debian's python3.11) or a libpython it links. */
struct py_syms {
	uint64_t runtime, version, code_type;
	struct lp_hashmap *nopy;	/* lp_python's */
};

/* A module's key in nopy: its build-id's hash, else its path's. */
static uint64_t module_key(struct lp_dwmod *m)
{
	const unsigned char *bits;
	int n = lp_dwmod__build_id(m, &bits);
	uint64_t start, end;
	const char *name;

	if (n > 0)
		return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, bits, (size_t)n));
	name = lp_dwmod__info(m, &start, &end);
	return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT ^ 1, name ? name : "", name ? strlen(name) : 0));
}

static void find_syms(struct lp_dwmod *m, void *arg)
{
	struct py_syms *s = arg, found = { 0 };
	uint64_t key = s->runtime ? 0 : module_key(m);
	int n = s->runtime || lp_hashmap__get(s->nopy, key) ? 0 : lp_dwmod__nsyms(m);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Word shndx;
		uint64_t addr;
		const char *sn = lp_dwmod__sym(m, i, &sym, &addr, &shndx);

		/* All three begin with "P" or "_P": most names are passed
		 * over at their first bytes. */
		if (!sn || sym.st_shndx == SHN_UNDEF || (sn[0] != 'P' && sn[0] != '_'))
			continue;
		if (!strcmp(sn, "_PyRuntime"))
			found.runtime = addr;
		else if (!strcmp(sn, "Py_Version"))
			found.version = addr;
		else if (!strcmp(sn, "PyCode_Type"))
			found.code_type = addr;
	}
	if (found.runtime && found.version && found.code_type) {
		found.nopy = s->nopy;
		*s = found;
	} else if (n > 0) {
		lp_hashmap__put(s->nopy, key, (void *)1);
	}
}

/* The checks of a layout against the live interpreter, once it is up:
 * the first interpreter's first thread state points back at it.  true
 * when they pass or there is nothing to check yet. */
static bool layout_fits(pid_t pid, const struct lp_py_layout *l, uint64_t runtime)
{
	uint64_t interp = 0, ts = 0, back = 0;

	if (peek(pid, runtime + l->walk.interp_head, &interp, sizeof(interp)) < 0)
		return false;
	if (!interp)
		return true;
	if (peek(pid, interp + l->walk.tstate_head, &ts, sizeof(ts)) < 0)
		return false;
	if (!ts)
		return true;
	return peek(pid, ts + l->tstate_interp, &back, sizeof(back)) == 0 && back == interp;
}

/* 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), which opens
 * _PyRuntime: what lp needs of it, as 3.13.0 lays it out (its layout may
 * change with the minor version, never within one). */
struct py_debug_offsets_313 {
	char cookie[8];		/* "xdebugpy" */
	uint64_t version, free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
			ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
			gil_runtime_state_locked, gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			datastack_chunk, status;
	} thread_state;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object, list_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
};

static uint64_t max_of(const uint64_t *v, size_t n)
{
	uint64_t m = 0;

	for (size_t i = 0; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* The layout of a CPython 3.13 from its _Py_DebugOffsets d: 0, or -1 when
 * it is another version, free-threaded, or says what lp cannot use (an
 * offset past what a walk reads). */
static int debug_offsets(const struct py_debug_offsets_313 *dp, unsigned major, unsigned minor,
			 struct lp_py_layout *l)
{
	struct py_debug_offsets_313 d = *dp;

	if (major != 3 || minor != 13 || memcmp(d.cookie, "xdebugpy", 8) || d.free_threaded)
		return -1;
	const uint64_t frame[] = { d.interpreter_frame.previous, d.interpreter_frame.executable,
				   d.interpreter_frame.instr_ptr, d.interpreter_frame.owner };
	const uint64_t code[] = { d.code_object.filename, d.code_object.qualname,
				  d.code_object.linetable, d.code_object.firstlineno };
	const uint64_t other[] = {
		d.runtime_state.interpreters_head, d.interpreter_state.threads_head,
		d.interpreter_state.gil_runtime_state_locked,
		d.interpreter_state.gil_runtime_state_holder, d.thread_state.next,
		d.thread_state.interp, d.thread_state.current_frame,
		d.thread_state.native_thread_id, d.code_object.co_code_adaptive,
		d.pyobject.ob_type, d.bytes_object.ob_size, d.bytes_object.ob_sval,
		d.unicode_object.state, d.unicode_object.length,
	};
	uint64_t fmax = max_of(frame, 4), cmax = max_of(code, 4);

	/* Each within what one read takes (a frame, a code object's head, a
	 * string's head), every other offset a u16. */
	if (fmax + 8 > LP_PY_FRAME_READ || cmax + 8 > 256 || max_of(other, 14) > 0xffff ||
	    d.unicode_object.asciiobject_size + 16 > 128)
		return -1;
	*l = (struct lp_py_layout){
		.major = major, .minor = minor,
		.walk = {
			.interp_head = d.runtime_state.interpreters_head,
			.gil_base = LP_PY_GIL_INTERP,
			.gil_tstate = d.interpreter_state.gil_runtime_state_holder,
			.gil_locked = d.interpreter_state.gil_runtime_state_locked,
			.tstate_head = d.interpreter_state.threads_head,
			.tstate_next = d.thread_state.next,
			.tstate_tid = d.thread_state.native_thread_id,
			.tstate_cframe = d.thread_state.current_frame,
			.frame_direct = 1,
			.frame_code = d.interpreter_frame.executable,
			.frame_previous = d.interpreter_frame.previous,
			.frame_instr = d.interpreter_frame.instr_ptr,
			.frame_owner = d.interpreter_frame.owner,
			.owner_shim = 3,	/* FRAME_OWNED_BY_CSTACK */
			.code_first = d.code_object.firstlineno,
			.code_adaptive = d.code_object.co_code_adaptive,
			.frame_size = (fmax + 8 + 7) & ~7ULL,
		},
		.tstate_interp = d.thread_state.interp,
		.ob_type = d.pyobject.ob_type,
		/* Not among the debug offsets: where 3.11 and 3.12 have it. */
		.code_flags = 48,
		.code_filename = d.code_object.filename,
		.code_qualname = d.code_object.qualname,
		.code_linetable = d.code_object.linetable,
		.var_size = d.bytes_object.ob_size,
		.bytes_data = d.bytes_object.ob_sval,
		.str_length = d.unicode_object.length,
		.str_state = d.unicode_object.state,
		.str_ascii_data = d.unicode_object.asciiobject_size,
		/* PyCompactUnicodeObject: the ASCII header, utf8_length, utf8. */
		.str_compact_data = d.unicode_object.asciiobject_size + 16,
	};
	l->code_size = cmax + 8;
	return 0;
}

/* The layout of a CPython 3.13 at runtime, read from the interpreter itself
 * (debug_offsets). */
static int debug_layout(pid_t pid, uint64_t runtime, unsigned major, unsigned minor,
			struct lp_py_layout *l)
{
	struct py_debug_offsets_313 d;

	if (peek(pid, runtime, &d, sizeof(d)) < 0)
		return -1;
	return debug_offsets(&d, major, minor, l);
}

int lp_python__trace_layout(unsigned major, unsigned minor, const void *runtime, size_t len,
			    struct lp_trace_py *out)
{
	const struct lp_py_layout *l = NULL;
	struct lp_py_layout debug;

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			l = &layouts[i];
	if (!l && len >= sizeof(struct py_debug_offsets_313) &&
	    debug_offsets(runtime, major, minor, &debug) == 0)
		l = &debug;
	if (!l)
		return -1;
	memset(out, 0, sizeof(*out));
	out->gil_base = l->walk.gil_base;
	out->interp_head = l->walk.interp_head;
	out->gil_interp = l->walk.gil_interp;
	out->gil_tstate = l->walk.gil_tstate;
	out->tstate_cframe = l->walk.tstate_cframe;
	out->cframe_frame = l->walk.cframe_frame;
	out->frame_direct = l->walk.frame_direct;
	out->frame_code = l->walk.frame_code;
	out->frame_previous = l->walk.frame_previous;
	out->frame_instr = l->walk.frame_instr;
	out->frame_read = l->walk.frame_size;
	out->code_flags = l->code_flags;
	out->code_first = l->walk.code_first;
	out->code_filename = l->code_filename;
	out->code_qualname = l->code_qualname;
	out->code_read = l->code_size;
	out->code_adaptive = l->walk.code_adaptive;
	out->code_units = l->var_size;
	out->str_state = l->str_state;
	out->str_length = l->str_length;
	out->str_ascii_data = l->str_ascii_data;
	out->str_compact_data = l->str_compact_data;
	return 0;
}

#define PY_RETRY_NS 20000000LL
#define PY_START_NS 2000000000LL

int lp_python__check(struct lp_python *py, pid_t pid, struct lp_py_proc *proc)
{
	uint64_t key = pid_key(pid);
	struct py_proc *p = lp_hashmap__get(&py->procs, key);
	int64_t now = p && p->first_ns ? lp_monotonic_ns() : 0;

	/* A process sampled before ld.so mapped its libpython (a started
	 * command's first ticks, pyenv's builds, a program that embeds
	 * CPython late) is looked at again once the symbolizer has read its
	 * modules again (an address in none of them), and only then: no
	 * per-sample work for the processes that run no Python (-a). */
	if (p && (p->settled || (lp_symbolizer__reports(py->sym, pid) == p->reports &&
				  !(p->first_ns && now - p->tried_ns >= PY_RETRY_NS))))
		return 0;
	if (!p) {
		p = lp_calloc(1, sizeof(*p));
		p->pid = pid;
		lp_hashmap__init(&p->codes);
		lp_hashmap__put(&py->procs, key, p);
	}

	struct lp_dwproc *dwp = lp_symbolizer__modules(py->sym, pid, 0);
	struct py_syms s = { .nopy = &py->nopy };
	uint64_t version = 0;

	p->reports = lp_symbolizer__reports(py->sym, pid);
	if (!dwp)
		return 0;
	lp_dwproc__each_module(dwp, find_syms, &s);
	if (!s.runtime)
		return 0;
	/* Until its interpreter can be read: tried again shortly. */
	p->tried_ns = now ? now : lp_monotonic_ns();
	int64_t cpu = lp_target__cpu_ns(pid);
	if (!p->first_ns) {
		p->first_ns = p->tried_ns;
		p->first_cpu_ns = cpu;
	}
	bool young = cpu >= 0 && cpu - p->first_cpu_ns < PY_START_NS;
	if (peek(pid, s.version, &version, sizeof(version)) < 0) {
		p->settled = !young;
		return 0;
	}
	p->settled = true;
	/* PY_VERSION_HEX: 0xMMmmPPRS. */
	unsigned major = version >> 24 & 0xff, minor = version >> 16 & 0xff;

	for (size_t i = 0; i <= sizeof(layouts) / sizeof(layouts[0]); i++) {
		const struct lp_py_layout *l = &layouts[i];

		/* After the table's: the interpreter's own. */
		if (i == sizeof(layouts) / sizeof(layouts[0])) {
			if (debug_layout(pid, s.runtime, major, minor, &p->debug) < 0)
				break;
			l = &p->debug;
		} else if (l->major != major || l->minor != minor) {
			continue;
		}
		if (!layout_fits(pid, l, s.runtime)) {
			/* At start-up its first thread state may not point back
			 * yet: not settled for a while. */
			p->settled = !young;
			if (p->settled)
				lp_error("pid %d: CPython %u.%u's thread state does not point back at "
					 "its interpreter: no Python frames", (int)pid, major, minor);
			return 0;
		}
		p->python = true;
		p->layout = l;
		p->code_type = s.code_type;
		p->runtime = s.runtime;
		*proc = l->walk;
		proc->runtime = s.runtime;
		py->pids = lp_reallocarray(py->pids, py->npids + 1, sizeof(*py->pids));
		py->pids[py->npids++] = pid;
		return 1;
	}
	if (!py->warned)
		lp_error("pid %d: CPython %u.%u: lp-record knows 3.11's, 3.12's and 3.13's frames "
			 "only: its native frames only", (int)pid, major, minor);
	py->warned = true;
	return 0;
}

void lp_python__forget(struct lp_python *py, pid_t pid)
{
	struct py_proc *p = lp_hashmap__del(&py->procs, pid_key(pid));

	if (p)
		free_proc(p);
	for (size_t i = 0; i < py->npids; i++)
		if (py->pids[i] == pid) {
			py->pids[i] = py->pids[--py->npids];
			break;
		}
}

const pid_t *lp_python__pids(const struct lp_python *py, size_t *n)
{
	*n = py->npids;
	return py->pids;
}

size_t lp_python__utf8(const void *src, size_t len, unsigned kind, char *out)
{
	const unsigned char *s = src;
	unsigned char *o = (unsigned char *)out;
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		uint32_t c;

		if (kind == 1) {
			c = s[i];
		} else if (kind == 2) {
			uint16_t u;
			memcpy(&u, s + 2 * i, 2);
			c = u;
		} else {
			memcpy(&c, s + 4 * i, 4);
		}
		if (c < 0x80) {
			o[n++] = c;
		} else if (c < 0x800) {
			o[n++] = 0xc0 | c >> 6;
			o[n++] = 0x80 | (c & 0x3f);
		} else if (c < 0x10000) {
			o[n++] = 0xe0 | c >> 12;
			o[n++] = 0x80 | (c >> 6 & 0x3f);
			o[n++] = 0x80 | (c & 0x3f);
		} else {
			o[n++] = 0xf0 | (c >> 18 & 7);
			o[n++] = 0x80 | (c >> 12 & 0x3f);
			o[n++] = 0x80 | (c >> 6 & 0x3f);
			o[n++] = 0x80 | (c & 0x3f);
		}
	}
	o[n] = '\0';
	return n;
}

/* A str object's text, as UTF-8, interned; NULL when it is not a compact
 * string (the only kind code objects' names and files are) or cannot be
 * read. */
static const char *read_str(struct lp_python *py, const struct py_proc *p, uint64_t addr)
{
	const struct lp_py_layout *l = p->layout;
	unsigned char head[128];
	uint32_t state;
	uint64_t len;

	if (!addr || l->str_compact_data > sizeof(head) ||
	    peek(p->pid, addr, head, l->str_compact_data) < 0)
		return NULL;
	len = word(head, l->str_length);
	memcpy(&state, head + l->str_state, sizeof(state));
	/* state: interned:2, kind:3, compact:1, ascii:1, ready:1 */
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;

	if (!compact || (kind != 1 && kind != 2 && kind != 4) || len > 1 << 16)
		return NULL;
	size_t raw = len * kind;
	unsigned char *src = lp_malloc(raw ? raw : 1);

	if (peek(p->pid, addr + (ascii ? l->str_ascii_data : l->str_compact_data), src, raw) < 0) {
		free(src);
		return NULL;
	}
	lp_grow(&py->buf, &py->cap, 4 * len + 1);
	size_t n = lp_python__utf8(src, len, kind, py->buf);

	free(src);
	return lp_dict__string(py->dict, py->buf, n);
}

/* Reads the code object at c->addr: its names and line table. */
static void read_code(struct lp_python *py, const struct py_proc *p, struct py_code *c)
{
	const struct lp_py_layout *l = p->layout;
	unsigned char head[256];
	unsigned char bhead[64];
	int32_t first;

	if (l->code_size > sizeof(head) || l->bytes_data > sizeof(bhead) ||
	    peek(p->pid, c->addr, head, l->code_size) < 0 || word(head, l->ob_type) != p->code_type)
		return;
	memcpy(&first, head + l->walk.code_first, sizeof(first));
	if (first != c->first)
		return;	/* another code object at the address since the sample */
	c->qualname = read_str(py, p, word(head, l->code_qualname));
	c->filename = read_str(py, p, word(head, l->code_filename));
	uint64_t table = word(head, l->code_linetable);

	if (!c->qualname || !c->filename || !table || peek(p->pid, table, bhead, l->bytes_data) < 0)
		return;
	uint64_t len = word(bhead, l->var_size);

	if (len > 1 << 24)
		return;
	c->table = lp_malloc(len ? len : 1);
	if (peek(p->pid, table + l->bytes_data, c->table, len) < 0) {
		free(c->table);
		c->table = NULL;
		return;
	}
	c->len = len;
	c->ok = true;
}

/* co_linetable of 3.11 to 3.13 (Objects/locations.md): entries, each a first byte
 * with bit 7 set, bits 3-6 a code, bits 0-2 the code units it covers less
 * one, then the code's bytes.  Codes: 15 no location; 14 a signed varint
 * line delta and three varints (end line, columns); 13 a signed varint line
 * delta, no columns; 10-12 line delta 0-2 and two column bytes; 0-9 the same
 * line, one column byte.  Varints: 6 bits a byte, bit 6 says more follow;
 * signed ones keep the sign in their lowest bit. */
static unsigned varint(const unsigned char *p, const unsigned char *end)
{
	unsigned v = 0, shift = 0;

	while (p < end && shift < 32) {
		v |= (unsigned)(*p & 63) << shift;
		if (!(*p++ & 64))
			break;
		shift += 6;
	}
	return v;
}

int lp_python__line311(const unsigned char *table, size_t len, int first, int lasti)
{
	const unsigned char *p = table, *end = table + len;
	int line = first;
	long unit = 0;

	if (lasti < 0)
		return first;
	while (p < end) {
		unsigned code = *p >> 3 & 15;

		if (code == 14 || code == 13) {
			unsigned v = varint(p + 1, end);

			line += v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
		} else if (code >= 10 && code <= 12) {
			line += code - 10;
		}
		unit += (*p & 7) + 1;
		if (lasti < unit)
			return line;	/* code 15 (none): the line before it */
		do
			p++;
		while (p < end && !(*p & 128));
	}
	return first;
}

const struct lp_frame *lp_python__frame(struct lp_python *py, pid_t pid,
					const struct lp_py_frame *f)
{
	struct py_proc *p = lp_hashmap__get(&py->procs, pid_key(pid));
	char srcline[64];

	if (!p || !p->python)
		return lp_dict__frame(py->dict, LP_FRAME_USER, 0, "[python]", "", "");
	uint64_t key = lp_hashmap__key(lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, &f->code,
								   sizeof(f->code)),
						     &f->first, sizeof(f->first)));
	struct py_code *c = NULL;
	size_t pos = 0;

	while ((c = lp_hashmap__next(&p->codes, key, &pos)))
		if (c->addr == f->code && c->first == f->first)
			break;
	if (!c) {
		c = lp_calloc(1, sizeof(*c));
		c->addr = f->code;
		c->first = f->first;
		read_code(py, p, c);
		lp_hashmap__add(&p->codes, key, c);
	}
	if (!c->ok)
		return lp_dict__frame(py->dict, LP_FRAME_USER, 0, "[python]", "", "");
	snprintf(srcline, sizeof(srcline), ":%d", lp_python__line311(c->table, c->len, c->first,
								     f->lasti));
	lp_grow(&py->buf, &py->cap, strlen(c->filename) + sizeof(srcline));
	strcpy(py->buf, c->filename);
	strcat(py->buf, srcline);
	return lp_dict__frame(py->dict, LP_FRAME_USER, 0, c->filename, c->qualname, py->buf);
}

static bool is_eval_frame(const struct lp_frame *f)
{
	return f->kind == LP_FRAME_USER && !strcmp(f->symbol, "_PyEval_EvalFrameDefault");
}

size_t lp_python__merge(struct lp_python *py, pid_t pid, const struct lp_py_event *pe,
			const struct lp_frame *const *in, size_t n, const struct lp_frame **out)
{
	size_t starts[LP_PY_MAX_FRAMES + 1], ngroups = 0, nevals = 0, m = 0;
	size_t nframes = pe->nframes < LP_PY_MAX_FRAMES ? pe->nframes : LP_PY_MAX_FRAMES;

	py->samples++;
	py->gil += !!(pe->pyflags & LP_PY_GIL);
	for (size_t i = 0; i < nframes; i++)
		if (i == 0 || (pe->frames[i - 1].flags & LP_PY_ENTRY))
			starts[ngroups++] = i;
	starts[ngroups] = nframes;
	/* A last group cut off by the walk's bound: not whole, left out. */
	if (ngroups && (pe->pyflags & LP_PY_MORE) && !(pe->frames[nframes - 1].flags & LP_PY_ENTRY))
		ngroups--;
	for (size_t i = 0; i < n; i++)
		nevals += is_eval_frame(in[i]);
	for (size_t i = 0, seen = 0; i < n; i++) {
		if (!is_eval_frame(in[i])) {
			out[m++] = in[i];
			continue;
		}
		/* The group it stands for.  With a group for each, or more
		 * interpreter frames than groups, counted from the root: a
		 * sample in the prologue or epilogue of an eval frame (a
		 * generator's, entered and left at each item it yields) has
		 * that frame on the native stack but not yet, or no longer,
		 * its Python frame in the thread's state; the leaf-most one
		 * stays as it is.  With more groups (a native stack cut short
		 * of its root), counted from the leaf. */
		size_t r = seen++, g;

		if (nevals >= ngroups)
			g = r < ngroups ? ngroups - 1 - r : SIZE_MAX;
		else
			g = nevals - 1 - r;

		if (g >= ngroups) {
			out[m++] = in[i];
			py->kept++;
			continue;
		}
		for (size_t k = starts[g + 1]; k-- > starts[g];)
			out[m++] = lp_python__frame(py, pid, &pe->frames[k]);
	}
	if (ngroups > nevals)
		py->unplaced += ngroups - nevals;
	return m;
}

void lp_python__notes(const struct lp_python *py)
{
	if (!py || !py->samples)
		return;
	lp_error("%" PRIu64 " samples of Python threads (%" PRIu64 " holding the GIL): %" PRIu64
		 " interpreter frames kept without their Python frames, %" PRIu64
		 " Python frame groups with no interpreter frame to stand in",
		 py->samples, py->gil, py->kept, py->unplaced);
}

/* Whether thread state ts holds the GIL (bpf/profile.bpf.c, py_holds_gil). */
static bool holds_gil(pid_t pid, const struct lp_py_proc *w, uint64_t runtime, uint64_t interp,
		      uint64_t ts)
{
	uint64_t base = runtime, holder = 0;
	uint32_t locked = 1;

	if (w->gil_base == LP_PY_GIL_POINTER &&
	    (peek(pid, interp + w->gil_interp, &base, sizeof(base)) < 0 || !base))
		return false;
	if (w->gil_base == LP_PY_GIL_INTERP)
		base = interp;
	if (w->gil_base != LP_PY_GIL_RUNTIME && peek(pid, base + w->gil_locked, &locked, sizeof(locked)) < 0)
		return false;
	return locked && peek(pid, base + w->gil_tstate, &holder, sizeof(holder)) == 0 && holder == ts;
}

int lp_python__walk(struct lp_python *py, pid_t pid, pid_t tid, struct lp_py_event *e)
{
	struct py_proc *p = lp_hashmap__get(&py->procs, pid_key(pid));
	uint64_t interp = 0, ts = 0, cframe = 0, frame = 0;

	if (!p || !p->python)
		return -1;
	const struct lp_py_proc *w = &p->layout->walk;
	uint64_t runtime = p->runtime;

	if (peek(pid, runtime + w->interp_head, &interp, sizeof(interp)) < 0 || !interp ||
	    peek(pid, interp + w->tstate_head, &ts, sizeof(ts)) < 0)
		return -1;
	for (int i = 0;; i++) {
		uint64_t ntid = 0;

		if (i == LP_PY_MAX_THREADS || !ts || peek(pid, ts + w->tstate_tid, &ntid, sizeof(ntid)) < 0)
			return -1;
		if (ntid == (uint64_t)tid)
			break;
		if (peek(pid, ts + w->tstate_next, &ts, sizeof(ts)) < 0)
			return -1;
	}
	memset(e, 0, offsetof(struct lp_py_event, frames));
	e->pid = pid;
	e->tid = tid;
	e->flags = LP_EV_PYTHON;
	if (holds_gil(pid, w, runtime, interp, ts))
		e->pyflags |= LP_PY_GIL;
	if (w->frame_direct ? peek(pid, ts + w->tstate_cframe, &frame, sizeof(frame)) < 0
			    : peek(pid, ts + w->tstate_cframe, &cframe, sizeof(cframe)) < 0 || !cframe ||
			      peek(pid, cframe + w->cframe_frame, &frame, sizeof(frame)) < 0)
		return 0;
	/* Bounded as the kernel's walk is: a chain read while it changes, or
	 * garbage, may loop. */
	for (int steps = 0; frame && steps < 2 * LP_PY_MAX_FRAMES + 1; steps++) {
		unsigned char buf[LP_PY_FRAME_READ];
		struct lp_py_frame *f = &e->frames[e->nframes];

		if (e->nframes == LP_PY_MAX_FRAMES) {
			e->pyflags |= LP_PY_MORE;
			break;
		}
		if (w->frame_size > sizeof(buf) || peek(pid, frame, buf, w->frame_size) < 0)
			break;
		/* 3.12's frame of the C stack (bpf/profile.bpf.c, py_frame). */
		if (w->owner_shim && buf[w->frame_owner] == w->owner_shim) {
			if (e->nframes)
				e->frames[e->nframes - 1].flags |= LP_PY_ENTRY;
			frame = word(buf, w->frame_previous);
			continue;
		}
		uint64_t code = word(buf, w->frame_code), instr = word(buf, w->frame_instr);
		uint64_t start = code + w->code_adaptive;

		f->code = code;
		f->lasti = instr >= start && instr - start < (1u << 30) ? (int32_t)((instr - start) / 2) : -1;
		f->first = 0;
		f->flags = w->frame_entry && buf[w->frame_entry] ? LP_PY_ENTRY : 0;
		f->pad = 0;
		e->nframes++;
		frame = word(buf, w->frame_previous);
	}
	/* The code objects' first lines in one system call: the thread is
	 * held for every one (a frame read is one already). */
	struct iovec local[LP_PY_MAX_FRAMES], remote[LP_PY_MAX_FRAMES];

	for (uint32_t i = 0; i < e->nframes; i++) {
		local[i] = (struct iovec){ &e->frames[i].first, sizeof(e->frames[i].first) };
		remote[i] = (struct iovec){ (void *)(uintptr_t)(e->frames[i].code + w->code_first),
					    sizeof(e->frames[i].first) };
	}
	if (e->nframes)
		process_vm_readv(pid, local, e->nframes, remote, e->nframes, 0);
	return 0;
}
