/* trace-python.bpf.h - lp-trace's python:[MODULE:]NAME probes: CPython's
 * calls seen in its eval loop (3.11-3.13), spans opened at a code object's
 * first instruction and ended at its return, a watched return's hardware
 * watchpoint (lp_pywatch) where the eval loop's return is not probed.
 *
 * Not a header of its own: the second half of trace.bpf.c, which includes
 * it after the helpers both halves use (reserve, submit, the stacks,
 * emit_span, prog_extra), so that lp-trace loads one BPF object whose
 * maps both share.  lib/capture/trace/pyprobe.c and pywatch.c are its
 * user-space side. */
#ifndef LP_TRACE_PYTHON_BPF_H
#define LP_TRACE_PYTHON_BPF_H

/* Where the interpreter keeps things, and the globs (lib/capture/trace/pyprobe.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_trace_py);
} pyconf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct lp_trace_pycode_key);
	__type(value, struct lp_trace_pycode);
} pycodes SEC(".maps");

/* A traced interpreter's load bias, by process: where lp_pywatch, which
 * runs at no probe of its own, finds _PyRuntime (set at its first span). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} pybias SEC(".maps");

/* What a watched return's hardware watchpoint costs the thread, ns
 * (lp-trace measures it: lib/capture/trace/pywatch.c). */
volatile __u64 pywatch_ns = 0;
/* Of which before the program's clock read: inside the span it ends. */
volatile __u64 pywatch_in_ns = 0;
/* The calibration's process, and when its last trap reached the program. */
volatile __u32 pywatch_cal_tgid = 0;
volatile __u64 pywatch_cal_ts = 0;
/* Set once lp-trace has taken the eval loop's other breakpoints away, the
 * returns only watched: a matched code object not watched (lp-trace could
 * not) would open spans nothing closes, and its calls are counted lost. */
volatile __u32 py_watch_only = 0;

/* Open python: spans per thread, keyed by tid: a frame's sp is the
 * interpreter frame's address, ret its code object (Python frames are no
 * native frames: their addresses say nothing of depth). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct lp_trace_stack);
} pystacks SEC(".maps");

/* The 8 bytes at off of a buffer of size (a power of two) bytes, off
 * bounded for the verifier. */
#define PY_U64(buf, size, off) (*(const __u64 *)((buf) + ((off) & ((size) - 8))))
#define PY_S32(buf, size, off) (*(const __s32 *)((buf) + ((off) & ((size) - 4))))
#define PY_U32(buf, size, off) (*(const __u32 *)((buf) + ((off) & ((size) - 4))))

/* glob_step's state: the iterative matcher of * and ? (a star's position
 * and where its match began, to backtrack to), over characters: glob at
 * of pyconf's against the name or the file read into pyscratch.  Kept in
 * map memory, not on the stack: the verifier then follows no value from
 * step to step, and one pass over the callback does. */
struct glob {
	__u32 at, plen;		/* the glob: pattern[at, at + plen) */
	__u32 nlen;		/* characters of the text, the lead included */
	__u32 kind;		/* the text's bytes a character */
	__u32 start;		/* its first byte in the record's chars */
	__u32 lead;		/* a '/' before the text */
	__u32 open;		/* the text goes on unread: running out of it matches */
	__u32 p, n;
	__s32 star;
	__u32 mark;
	int result;		/* -1 while running */
};

/* A code object's head, the matcher, and its names as they are sent (too
 * large for the BPF stack). */
struct py_scratch {
	__u8 code[256];
	struct glob g;
	struct lp_trace_event_py e;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} pyscratch SEC(".maps");

/* The most bytes of a name or a file in a record: the masks below keep
 * offsets under four times that and sizes at most that, for the
 * verifier.  The name is read at 0, the file after it, a long name's last
 * characters at PY_TAIL. */
#define PY_TEXT_BYTES (LP_PY_NAME_MAX * 4)
#define PY_TAIL (2 * PY_TEXT_BYTES)
_Static_assert(LP_PY_FILE_MAX * 4 == PY_TEXT_BYTES, "one mask for both texts");
_Static_assert(LP_PY_CHARS_MAX >= 5 * PY_TEXT_BYTES, "room for the masks");

/* Character i of the text at byte start of b, kind bytes each. */
static __always_inline __u32 py_char(const __u8 *b, __u32 start, __u32 kind, __u32 i)
{
	__u32 at = start + i * kind;

	if (kind == 1)
		return b[at & (4 * PY_TEXT_BYTES - 1)];
	if (kind == 2)
		return *(const __u16 *)(b + (at & (4 * PY_TEXT_BYTES - 2)));
	return *(const __u32 *)(b + (at & (4 * PY_TEXT_BYTES - 4)));
}

static long glob_step(__u32 i, void *arg)
{
	__u32 zero = 0;
	struct py_scratch *s = bpf_map_lookup_elem(&pyscratch, &zero);
	const struct lp_trace_py *c = bpf_map_lookup_elem(&pyconf, &zero);
	if (!s || !c)
		return 1;
	struct glob *g = &s->g;
	__u32 p = g->p, n = g->n, plen = g->plen;
	__u32 pc = p < plen ? c->pattern[(g->at + p) & (LP_PY_PAT_MAX - 1)] : 0;

	if (n >= g->nlen) {
		/* The text is used up: only stars may be left, unless it
		 * goes on unread (a long name: its first characters could
		 * begin a match). */
		if (p < plen && pc == '*' && !g->open) {
			g->p = p + 1;
			return 0;
		}
		g->result = g->open || p >= plen;
		return 1;
	}
	__u32 nc = g->lead && n == 0 ? '/' : py_char(s->e.chars, g->start, g->kind, n - g->lead);

	if (p < plen && pc == '*') {
		g->star = (__s32)p;
		g->mark = n;
		g->p = p + 1;
	} else if (p < plen && (pc == '?' || pc == nc)) {
		g->p = p + 1;
		g->n = n + 1;
	} else if (g->star >= 0) {
		g->p = (__u32)g->star + 1;
		g->mark++;
		g->n = g->mark;
	} else {
		g->result = 0;
		return 1;
	}
	return 0;
}

/* The bytes of the name read into s->e.chars, where the file's start. */
static __always_inline __u32 py_name_bytes(const struct py_scratch *s)
{
	__u32 n = s->e.name_len < LP_PY_NAME_MAX ? s->e.name_len : LP_PY_NAME_MAX;

	return n * s->e.name_kind;
}

/* Whether glob i matches the text at byte start of s->e.chars: n
 * characters of kind bytes each, after a '/' (lead), going on unread
 * (open). */
static __always_inline int py_glob(const struct lp_trace_py *c, struct py_scratch *s, __u32 i,
				   __u32 start, __u32 kind, __u32 n, __u32 lead, __u32 open)
{
	s->g = (struct glob){
		.at = c->at[i & (LP_PY_GLOBS - 1)], .plen = c->len[i & (LP_PY_GLOBS - 1)],
		.nlen = n + lead, .kind = kind, .start = start, .lead = lead, .open = open,
		.star = -1, .result = -1,
	};
	/* Each step moves on in the glob or the text, or backtracks to a
	 * star, moving its mark on: no more steps than the two lengths'
	 * product, twice (a glob has at most LP_PY_NAME_MAX characters). */
	bpf_loop(2 * (LP_PY_NAME_MAX + 1) * (LP_PY_NAME_MAX + 2), glob_step, NULL, 0);
	return s->g.result == 1;
}

/* Whether file glob i (2 to 4) of the module matches the file's len
 * characters in s->e.chars: a file cut at its start has no lead, and its
 * tail is matched. */
static __always_inline int py_file_glob(const struct lp_trace_py *c, struct py_scratch *s, __u32 i,
					__u32 len)
{
	return i < c->nglobs &&
	       py_glob(c, s, i, py_name_bytes(s), s->e.file_kind,
		       len < LP_PY_FILE_MAX ? len : LP_PY_FILE_MAX,
		       len <= LP_PY_FILE_MAX && c->lead[i & (LP_PY_GLOBS - 1)], 0);
}

/* A compact str object's characters into s->e.chars from byte start, its
 * kind (bytes a character: 1, 2, 4) into *kind and its length in
 * characters into *len: the first max of them, or with tail the last.
 * 0, or -1 with *kind 0 (not a compact str; unreadable). */
static __always_inline int py_str(const struct lp_trace_py *c, __u64 str, struct py_scratch *s,
				  __u32 start, __u32 max, int tail, __u32 *kind, __u32 *len)
{
	__u32 state = 0;
	__u64 n = 0;

	*kind = 0;
	*len = 0;
	if (!str || bpf_probe_read_user(&state, sizeof(state), (void *)(str + c->str_state)) ||
	    bpf_probe_read_user(&n, sizeof(n), (void *)(str + c->str_length)))
		return -1;
	/* state: interned:2, kind:3, compact:1, ascii:1; an ASCII str's
	 * characters follow a shorter head than the others'. */
	__u32 k = state >> 2 & 7;
	if (!(state >> 5 & 1) || (k != 1 && k != 2 && k != 4) || n > 1u << 30)
		return -1;
	__u64 data = str + (state >> 6 & 1 ? c->str_ascii_data : c->str_compact_data);
	__u32 chars = n < max ? (__u32)n : max;
	if (tail)
		data += (n - chars) * k;
	/* Bytes in [1, PY_TEXT_BYTES] by the mask, for the verifier. */
	__u32 bytes = ((chars * k - 1) & (PY_TEXT_BYTES - 1)) + 1;
	if (chars && bpf_probe_read_user(s->e.chars + (start & (4 * PY_TEXT_BYTES - 1)), bytes,
					 (void *)data))
		return -1;
	*kind = k;
	*len = (__u32)n;
	return 0;
}

/* Whether the code object at code (its head in s->code) of process pt
 * runs a function whose qualified name matches, and with a module part,
 * whose file is the module's; decided once per code object.  The first
 * time it matches, its names go to user space; so do those of one whose
 * name matched alone. */
static __noinline int py_matches(const struct lp_trace_py *c, struct py_scratch *s, __u64 code,
				 __u64 pt, __u32 probe)
{
	__u64 qualname = PY_U64(s->code, 256, c->code_qualname);
	__s32 first = PY_S32(s->code, 256, c->code_first);
	struct lp_trace_pycode_key k = { .tgid = pt >> 32, .code = code };
	struct lp_trace_pycode *v = bpf_map_lookup_elem(&pycodes, &k);

	if (v && v->qualname == qualname && v->first == first)
		return v->matched;
	struct lp_trace_pycode nv = { .qualname = qualname, .first = first, .probe = probe };
	/* Generators and coroutines (CO_GENERATOR, CO_COROUTINE,
	 * CO_ASYNC_GENERATOR) are not traced: they leave at each yield and
	 * come back later, maybe on another thread. */
	__u32 flags = PY_U32(s->code, 256, c->code_flags);
	int named = 0;

	if (!(flags & 0x2a0) &&
	    py_str(c, qualname, s, 0, LP_PY_NAME_MAX, 0, &s->e.name_kind, &s->e.name_len) == 0) {
		__u32 len = s->e.name_len, open = len > LP_PY_NAME_MAX;

		named = py_glob(c, s, 0, 0, s->e.name_kind, open ? LP_PY_NAME_MAX : len, 0, open);
		/* A long name: its last characters as glob 1. */
		__u32 tk = 0, tl = 0;
		if (named && open)
			named = c->tail &&
				py_str(c, qualname, s, PY_TAIL, LP_PY_NAME_MAX, 1, &tk, &tl) == 0 &&
				py_glob(c, s, 1, PY_TAIL, tk, LP_PY_NAME_MAX, 0, 0);
	}
	if (named) {
		__u64 file = PY_U64(s->code, 256, c->code_filename);
		int ok = py_str(c, file, s, py_name_bytes(s), LP_PY_FILE_MAX, 1, &s->e.file_kind,
				&s->e.file_len) == 0;
		__u32 len = s->e.file_len;

		nv.matched = c->nglobs < 3;
		/* The module's three file globs (lp_pyprobe__globs), one after
		 * the other: 6.1's verifier takes a loop around bpf_loop's
		 * callback for a back-edge. */
		if (ok && !nv.matched)
			nv.matched = py_file_glob(c, s, 2, len);
		if (ok && !nv.matched)
			nv.matched = py_file_glob(c, s, 3, len);
		if (ok && !nv.matched)
			nv.matched = py_file_glob(c, s, 4, len);
	}
	if (named) {
		/* Its names, before any span of it: a record as long as
		 * they are. */
		__u32 fchars = s->e.file_len < LP_PY_FILE_MAX ? s->e.file_len : LP_PY_FILE_MAX;
		__u32 bytes = (py_name_bytes(s) + fchars * s->e.file_kind) & (4 * PY_TEXT_BYTES - 1);

		s->e.ev = (struct lp_trace_event){
			.type = LP_EV_PYCODE, .pid = pt >> 32, .tid = (__u32)pt,
			.vals = { code, (__u64)(__s64)first, nv.matched },
		};
		if (bpf_ringbuf_output(&events, &s->e, offsetof(struct lp_trace_event_py, chars) + bytes,
				       BPF_RB_FORCE_WAKEUP)) {
			count(LP_LOST_RING);
			return 0;	/* decided again at its next call */
		}
	}
	bpf_map_update_elem(&pycodes, &k, &nv, BPF_ANY);
	return nv.matched;
}

/* py_return's and py_reused's arguments. */
struct py_ret {
	__u64 frame, code, previous, now, acc;
	__u32 ret_inside;
	__u32 unwound;		/* the frame is left by an exception */
};

/* py_pop_step's and py_walk_step's state (bpf_loop: the verifier walks a
 * callback once, where loops around emit_span multiply its states). */
struct py_pop {
	struct lp_trace_stack *st;
	struct py_ret *r;
	const struct lp_trace_py *c;
	__u32 at;		/* py_pop_step: pop down to depth at */
	int normal;		/* the span at index at ends by its return;
				 * py_walk_step: at found */
	__u64 cur;		/* py_walk_step: the caller chain's frame reached */
	__u32 walked;
};

/* Ends the innermost open span: by its frame's return when it is at
 * index at and normal, else marked unwound; stops at depth at. */
static long py_pop_step(__u32 i, void *arg)
{
	struct py_pop *pp = arg;
	struct lp_trace_stack *st = pp->st;
	struct py_ret *r = pp->r;
	__u32 d = st->depth;

	if (d <= pp->at || d > LP_TRACE_MAX_DEPTH)
		return 1;
	st->depth = d - 1;
	struct lp_trace_frame *top = &st->frames[(d - 1) & (LP_TRACE_MAX_DEPTH - 1)];
	if (d - 1 == pp->at && pp->normal) {
		emit_span(top, (d - 1) | (r->unwound ? LP_SPAN_F_UNWOUND << 16 : 0), r->now,
			  r->acc + r->ret_inside, 0);
		return 1;
	}
	emit_span(top, (d - 1) | LP_SPAN_F_UNWOUND << 16, r->now, r->acc, 0);
	return 0;
}

/* The index of the open span of frame (and code, unless 0), from the
 * innermost; -1 when none. */
static __always_inline int py_find(struct lp_trace_stack *st, __u64 frame, __u64 code)
{
	__u32 d = st->depth;

	for (int i = 0; i < LP_TRACE_MAX_DEPTH; i++) {
		if ((__u32)i >= d || d > LP_TRACE_MAX_DEPTH)
			break;
		__u32 k = d - 1 - (__u32)i;
		struct lp_trace_frame *f = &st->frames[k & (LP_TRACE_MAX_DEPTH - 1)];
		if (f->sp == frame && (!code || f->ret == code))
			return (int)k;
	}
	return -1;
}

/* One step up the returning frame's chain of callers, from its caller:
 * the first frame on it with an open span is alive, and the spans opened
 * after it are of frames gone (pp->at: the depth to keep); when the chain
 * ends first (at the thread's first frame), every open span is.  A chain
 * longer than the walk decides nothing. */
static long py_walk_step(__u32 i, void *arg)
{
	struct py_pop *pp = arg;

	if (!pp->cur) {
		pp->at = 0;
		pp->normal = 1;	/* found */
		return 1;
	}
	int k = py_find(pp->st, pp->cur, 0);
	if (k >= 0) {
		pp->at = (__u32)k + 1;
		pp->normal = 1;
		return 1;
	}
	if (pp->walked >= LP_TRACE_MAX_DEPTH)
		return 1;
	pp->walked++;
	if (bpf_probe_read_user(&pp->cur, sizeof(pp->cur), (void *)(pp->cur + pp->c->frame_previous)))
		return 1;
	return 0;
}

/* A frame starts at address r->frame: any open span recorded there is of
 * a frame gone without returning (an exception left it, and its memory is
 * used again): it and those deeper end now, marked unwound. */
static __noinline int py_reused(struct lp_trace_stack *st, struct py_ret *r)
{
	if (!st)
		return 0;
	int at = py_find(st, r->frame, 0);
	if (at < 0)
		return 0;
	struct py_pop pp = { .st = st, .r = r, .at = (__u32)at, .normal = 0 };
	bpf_loop(LP_TRACE_MAX_DEPTH + 1, py_pop_step, &pp, 0);
	return 0;
}

/* Frame r->frame returns: its span when one is open, and before it, the
 * spans of frames gone without returning (an exception left them): those
 * of its callees; when it has none open, those opened after the nearest
 * open one on its chain of callers (py_walk_step). */
static __noinline int py_return(struct lp_trace_stack *st, struct py_ret *r)
{
	__u32 zero = 0;
	const struct lp_trace_py *c = bpf_map_lookup_elem(&pyconf, &zero);

	if (!st || !c)
		return 0;
	struct py_pop pp = { .st = st, .r = r, .c = c, .cur = r->previous };
	int at = py_find(st, r->frame, r->code);
	if (at >= 0) {
		pp.at = (__u32)at;
		pp.normal = 1;
		bpf_loop(LP_TRACE_MAX_DEPTH + 1, py_pop_step, &pp, 0);
		return 0;
	}
	bpf_loop(LP_TRACE_MAX_DEPTH + 2, py_walk_step, &pp, 0);
	if (!pp.normal)
		return 0;
	pp.normal = 0;	/* each gone: none ends by this return */
	bpf_loop(LP_TRACE_MAX_DEPTH + 1, py_pop_step, &pp, 0);
	return 0;
}

/* An exception has reached frame r->frame (PyTraceBack_Here): the open
 * spans of frames above it, on its chain of callees, are gone: ended now,
 * marked unwound; its own stays open (it may catch the exception), marked
 * raised. */
static __noinline int py_unwound(struct lp_trace_stack *st, struct py_ret *r)
{
	__u32 zero = 0;
	const struct lp_trace_py *c = bpf_map_lookup_elem(&pyconf, &zero);

	if (!st || !c)
		return 0;
	struct py_pop pp = { .st = st, .r = r, .c = c, .cur = r->frame };
	bpf_loop(LP_TRACE_MAX_DEPTH + 2, py_walk_step, &pp, 0);
	if (pp.normal) {
		pp.normal = 0;
		bpf_loop(LP_TRACE_MAX_DEPTH + 1, py_pop_step, &pp, 0);
	}
	__u32 d = st->depth;
	if (d && d <= LP_TRACE_MAX_DEPTH) {
		struct lp_trace_frame *top = &st->frames[(d - 1) & (LP_TRACE_MAX_DEPTH - 1)];
		if (top->sp == r->frame)
			top->flags |= LP_FRAME_F_RAISED;
	}
	return 0;
}

/* Frame's first frame_read bytes in fb: 0, or -1. */
static __always_inline int py_frame(const struct lp_trace_py *c, __u64 frame, __u8 fb[128])
{
	/* Sizes masked, not compared: the verifier takes a mask's bound
	 * (user space keeps them below 128 and 256). */
	__u32 fsize = c->frame_read & 127;

	return fsize < 8 || !frame || bpf_probe_read_user(fb, fsize, (void *)frame) ? -1 : 0;
}

/* The frame the thread holding the GIL runs now (struct lp_trace_py), its
 * first frame_read bytes in fb: 0, or -1. */
static __always_inline int py_running(const struct lp_trace_py *c, __u64 bias, __u64 *frame,
				      __u8 fb[128])
{
	__u64 base = bias + c->runtime, ts = 0, cframe = 0;

	if (c->gil_base != LP_PY_GIL_RUNTIME &&
	    (bpf_probe_read_user(&base, sizeof(base), (void *)(base + c->interp_head)) || !base))
		return -1;
	if (c->gil_base == LP_PY_GIL_POINTER &&
	    (bpf_probe_read_user(&base, sizeof(base), (void *)(base + c->gil_interp)) || !base))
		return -1;
	if (bpf_probe_read_user(&ts, sizeof(ts), (void *)(base + c->gil_tstate)) || !ts ||
	    bpf_probe_read_user(&cframe, sizeof(cframe), (void *)(ts + c->tstate_cframe)) || !cframe)
		return -1;
	if (c->frame_direct)
		*frame = cframe;
	else if (bpf_probe_read_user(frame, sizeof(*frame), (void *)(cframe + c->cframe_frame)) ||
		 !*frame)
		return -1;
	return py_frame(c, *frame, fb);
}

/* Opens a span of frame, running code (its first line first), by probe,
 * on the thread's python: stack st (made when NULL, with hit ns of lp's
 * so far): its entry, or NULL. */
static __always_inline struct lp_trace_frame *py_open(struct lp_trace_stack *st, __u64 pt,
						      __u64 frame, __u64 code, __s32 first,
						      __u32 probe, __u64 hit)
{
	__u64 tid = (__u32)pt;

	if (!st) {
		st = get_stack(&pystacks, &tid);
		if (!st)
			return NULL;
		st->tgid = pt >> 32;
		st->depth = 0;
		st->lp_ns = hit;
	}
	st->tid = (__u32)pt;
	__u32 d = st->depth;
	if (d >= LP_TRACE_MAX_DEPTH) {
		count(LP_LOST_DEPTH);
		return NULL;
	}
	struct lp_trace_frame *f = &st->frames[d & (LP_TRACE_MAX_DEPTH - 1)];
	f->sp = frame;
	f->ret = code;
	f->probe = probe;
	f->flags = 0;
	f->lp0 = st->lp_ns;
	__builtin_memset(f->vals, 0, sizeof(f->vals));
	f->vals[0] = code;
	f->vals[1] = (__u64)(__s64)first;
	st->depth = d + 1;
	f->ts = bpf_ktime_get_ns();
	return f;
}

/* A start at r->frame (running r->code, at r->now) where one is open
 * already: from 3.12 on, when it is the innermost one's and no exception
 * was raised in it, the same start seen again (struct lp_trace_py, pops):
 * true, and nothing is to be done; else the spans open at the frame's
 * address are of frames gone unseen,
 * and end (r->acc set to the thread's lp_ns: r is the caller's scratch,
 * one on the stack where the verifier counts every frame's). */
static __always_inline bool py_started(const struct lp_trace_py *c, struct lp_trace_stack *st,
				       struct py_ret *r)
{
	if (!st || !st->depth)
		return false;
	if (c->pops) {
		struct lp_trace_frame *top = &st->frames[(st->depth - 1) & (LP_TRACE_MAX_DEPTH - 1)];
		if (top->sp == r->frame && top->ret == r->code && !(top->flags & LP_FRAME_F_RAISED))
			return true;
	}
	r->acc = st->lp_ns;
	py_reused(st, r);
	return false;
}

/* The probes in CPython's eval loop (python:NAME): one program at the
 * first branch of opcode handlers, where the thread (which holds the GIL)
 * runs the frame its thread state says: RESUME and its specialized form
 * (oparg 0: a function starts) open a span when its code's qualified name
 * matches; 3.11's RETURN_VALUE closes the frame's, as from 3.12 on does
 * the entry of the function that pops it (LP_PROBE_F_PYPOP). */
static __always_inline int py_hit(struct pt_regs *ctx)
{
	if (stopped)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 id = bpf_get_attach_cookie(ctx), zero = 0;
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	struct lp_trace_py *c = bpf_map_lookup_elem(&pyconf, &zero);
	if (!p || !c)
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	if (foreign(p, pt))
		return 0;
	count(LP_COUNT_PY_HITS);
	__u64 tid = (__u32)pt;
	/* Its cost, for the spans open on this thread. */
	struct lp_trace_stack *fst = bpf_map_lookup_elem(&stacks, &tid);
	if (fst)
		fst->lp_ns += p->hit_ns;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&pystacks, &tid);
	if (st && st->tgid != pt >> 32) {	/* a thread id reused by another process */
		st->tgid = pt >> 32;
		st->depth = 0;
	}
	__u64 acc = st ? st->lp_ns : 0;
	if (st)
		st->lp_ns = acc + p->hit_ns;
	bool ret = p->flags & LP_PROBE_F_PYRET;
	/* Nothing open, nothing to close. */
	if ((ret || (p->flags & LP_PROBE_F_PYUNWIND)) && (!st || !st->depth))
		return 0;

	__u64 bias = ctx->ip - p->vaddr, frame = 0, exc = 0;
	__u8 fb[128] = {};
	if (p->flags & LP_PROBE_F_PYPOP) {
		/* The frame popped: the second argument; the first, the
		 * thread state, holds any exception leaving it. */
		frame = PT_REGS_PARM2(ctx);
		if (py_frame(c, frame, fb) ||
		    bpf_probe_read_user(&exc, sizeof(exc), (void *)(PT_REGS_PARM1(ctx) + c->tstate_exc)))
			return 0;
	} else if (py_running(c, bias, &frame, fb)) {
		return 0;
	}
	__u64 code = PY_U64(fb, 128, c->frame_code);

	if (p->flags & LP_PROBE_F_PYUNWIND) {
		struct py_ret r = { .frame = frame, .now = now, .acc = acc };
		return py_unwound(st, &r);
	}
	if (ret) {
		struct py_ret r = { .frame = frame, .code = code,
				    .previous = PY_U64(fb, 128, c->frame_previous), .now = now,
				    .acc = acc, .ret_inside = p->ret_inside_ns, .unwound = exc != 0 };
		return py_return(st, &r);
	}
	/* The handler has just stored its instruction: oparg in its high
	 * byte (0: the function starts; else a generator or coroutine
	 * resumes). */
	__u16 insn = 0;
	if (bpf_probe_read_user(&insn, sizeof(insn), (void *)PY_U64(fb, 128, c->frame_instr)) ||
	    insn >> 8)
		return 0;
	struct py_ret r = { .frame = frame, .code = code, .now = now };
	if (py_started(c, st, &r))
		return 0;
	struct py_scratch *s = bpf_map_lookup_elem(&pyscratch, &zero);
	__u32 csize = c->code_read & (sizeof(s->code) - 1);
	if (!s || csize < 8 || bpf_probe_read_user(s->code, csize, (void *)code))
		return 0;
	if (!py_matches(c, s, code, pt, id))
		return 0;
	__u32 tgid = pt >> 32;
	if (py_watch_only) {
		struct lp_trace_pycode_key k = { .tgid = tgid, .code = code };
		struct lp_trace_pycode *v = bpf_map_lookup_elem(&pycodes, &k);
		if (!v || !v->armed) {
			count(LP_LOST_UNWATCHED);
			return 0;
		}
	}
	__u64 *known = bpf_map_lookup_elem(&pybias, &tgid);
	if (!known || *known != bias)
		bpf_map_update_elem(&pybias, &tgid, &bias, BPF_ANY);
	py_open(st, pt, frame, code, PY_S32(s->code, 256, c->code_first), id, p->hit_ns);
	return 0;
}

SEC("uprobe")
DEAR_TRAP_PROG(lp_py, py_hit)

/* Asks lp-trace to write a watched function's RESUME back over the form
 * the interpreter specialized it to again (3.11): whether it was sent.
 * Out of line: its event is not on lp_pywatch's stack, which the verifier
 * counts with those of the calls below it (512 bytes in all). */
static __noinline int py_ask_quick(__u64 pt, __u64 code)
{
	struct lp_trace_event ev = { .type = LP_EV_PYQUICK, .pid = pt >> 32, .tid = (__u32)pt,
				     .vals = { code } };

	return bpf_ringbuf_output(&events, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP) == 0;
}

/* A watched return (lib/capture/trace/pywatch.c): a hardware watchpoint on
 * a RETURN_VALUE of a code object python:NAME matched, in each of the
 * process's threads, traps once the eval loop has read the instruction
 * and before it runs it: the frame running is the one returning.  Also
 * where a watched function's RESUME, specialized again by the
 * interpreter, is seen and asked back (LP_EV_PYQUICK); a return whose
 * start no probe could see then is counted lost ("unwatched"). */
static __always_inline struct lp_trace_frame *pywatch_hit(struct bpf_perf_event_data *ctx,
							   __u64 now, __u64 pt)
{
	__u32 tgid = pt >> 32, zero = 0;
	__u64 *bias = bpf_map_lookup_elem(&pybias, &tgid);
	struct lp_trace_py *c = bpf_map_lookup_elem(&pyconf, &zero);
	if (!bias || !c)
		return NULL;
	count(LP_COUNT_PY_WATCH);
	__u64 tid = (__u32)pt, hit = pywatch_ns;
	struct lp_trace_stack *fst = bpf_map_lookup_elem(&stacks, &tid);
	if (fst)
		fst->lp_ns += hit;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&pystacks, &tid);
	if (st && st->tgid != tgid) {
		st->tgid = tgid;
		st->depth = 0;
	}
	__u64 acc = st ? st->lp_ns : 0;
	if (st)
		st->lp_ns = acc + hit;
	__u64 frame = 0;
	__u8 fb[128] = {};
	if (py_running(c, *bias, &frame, fb))
		return NULL;
	__u64 code = PY_U64(fb, 128, c->frame_code);
	struct lp_trace_pycode_key k = { .tgid = tgid, .code = code };
	struct lp_trace_pycode *v = bpf_map_lookup_elem(&pycodes, &k);
	if (!v || !v->armed)
		return NULL;
	__u64 at = PY_U64(fb, 128, c->frame_instr);
	struct py_ret r = { .frame = frame, .code = code,
			    .previous = PY_U64(fb, 128, c->frame_previous), .now = now,
			    .acc = acc, .ret_inside = pywatch_in_ns };
	/* From 3.12 on its RESUME is watched too: the eval loop reads it
	 * as the frame starts (the instruction last begun, its previous
	 * one's or none yet). */
	if (c->pops && ctx->addr == v->entry) {
		if (at > ctx->addr || py_started(c, st, &r))
			return NULL;
		/* The span has the trap's part after the read but before
		 * the program ran (the calibration's inside_ns is the rest). */
		struct lp_trace_frame *f = py_open(st, pt, frame, code, v->first, v->probe, hit);
		if (f)
			f->lp0 -= hit - pywatch_in_ns;
		return f;
	}
	/* The eval loop reading the instruction after the one it has run
	 * (ctx->addr is the watched address): not the interpreter reading
	 * all of the code as it quickens it, from RESUME's handler (3.11). */
	if ((!c->pops && at == v->entry) || at >= ctx->addr)
		return NULL;
	__u16 unit = 0;
	bool quick = !c->pops && !bpf_probe_read_user(&unit, sizeof(unit), (void *)v->entry) &&
		     unit != v->entry_unit;
	if (quick && !v->asked && py_ask_quick(pt, code))
		v->asked = 1;
	if (quick && (!st || py_find(st, frame, code) < 0)) {
		count(LP_LOST_UNWATCHED);
		return NULL;
	}
	py_return(st, &r);
	return NULL;
}

SEC("perf_event")
int lp_pywatch(struct bpf_perf_event_data *ctx)
{
	__u64 now = bpf_ktime_get_ns(), pt = bpf_get_current_pid_tgid();
	/* lp-trace timing a trap on a variable of its own: the time the
	 * program starts (pywatch.c). */
	if (pt >> 32 == pywatch_cal_tgid) {
		pywatch_cal_ts = now;
		return 0;
	}
	if (stopped)
		return 0;
	struct lp_trace_frame *opened = pywatch_hit(ctx, now, pt);
	/* This run beyond the calibration's is the thread's time too (not
	 * of a span it opened: it ran before the span's start). */
	__u64 tid = (__u32)pt, ran = bpf_ktime_get_ns() - now;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&pystacks, &tid);
	if (st && st->tgid == pt >> 32)
		st->lp_ns += ran;
	if (opened)
		opened->lp0 += ran;
	struct lp_trace_stack *fst = bpf_map_lookup_elem(&stacks, &tid);
	if (fst)
		fst->lp_ns += ran;
	return 0;
}

#endif
