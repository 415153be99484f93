/* folded.c - folded stacks: reading "a;b;c COUNT" lines, and printing a
 * sample's stack the way stackcollapse-perf.pl prints it.  The printing
 * options live here, the reading decisions in perfscript.c: a stream keeps
 * the facts (module, address, kind, source line) and any option set can be
 * applied to it later. */
#include "stream/folded.h"
#include "stream/frame.h"
#include "stream/attrs.h"
#include "stream/perfscript.h"
#include "model/profile.h"
#include "base/hashmap.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- reading --------------------------------------------------------- */

static inline int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* flamegraph.pl reads /^(.*)\s+?(\d+(?:\.\d*)?)$/: the count is the last
 * word, digits with an optional fraction; the stack everything before the
 * one blank in front of it.  Returns the offset of that blank, or -1. */
static ssize_t split_count(const char *line, size_t len, size_t *num)
{
	size_t e = len, i = len;
	while (i > 0 && (line[i - 1] >= '0' && line[i - 1] <= '9'))
		i--;
	if (i > 0 && line[i - 1] == '.') {
		size_t d = --i;
		while (i > 0 && (line[i - 1] >= '0' && line[i - 1] <= '9'))
			i--;
		if (i == d)	/* ".5" is not a count */
			return -1;
	}
	if (i == e || i == 0 || !(line[i] >= '0' && line[i] <= '9') || !is_blank(line[i - 1]))
		return -1;
	*num = i;
	return (ssize_t)(i - 1);
}

static int lp_folded__sniff(const char *line, size_t len)
{
	size_t num;
	while (len && line[len - 1] == '\r')
		len--;
	ssize_t sp = split_count(line, len, &num);
	/* "comm 12 1.5: 7" would read as a folded line; perf's event lines
	 * come first in a perf script, so they decide. */
	return sp > 0 && !lp_perfscript__sniff(line, len);
}

/* Stack text -> interned stack, so a line seen before costs one hash of its
 * text instead of the interning of every frame: direct-mapped and bounded
 * (a new text takes its slot's place).  One per input, like its
 * dictionary, so a stack found is always the current dictionary's. */
struct stack_cache_ent {
	uint64_t hash;
	char *text;
	size_t len;
	const struct lp_stack *stack;
};
#define STACK_CACHE_BITS 16

/* One input's decoder. */
struct folded_dec {
	struct lp_dict *dict;
	struct stack_cache_ent *cache;	/* 1 << STACK_CACHE_BITS */
	char *scratch;
	size_t scratch_cap;
	const struct lp_frame **fscratch;
	size_t fscratch_cap;
};

static const struct lp_stack *intern_stack(struct folded_dec *d, const char *line, size_t slen);

/* One folded line.  1: a sample in *out (frames of kind user, weight the
 * count, which may be fractional); 0: a blank or '#' comment line; -1:
 * malformed, *why says how. */
static int parse(struct folded_dec *d, const char *line, size_t len, struct lp_sample *out,
		 const char **why)
{
	if (len && line[len - 1] == '\r')
		len--;
	size_t i = 0;
	while (i < len && is_blank(line[i]))
		i++;
	if (i == len || line[0] == '#')
		return 0;
	size_t num;
	ssize_t sp = split_count(line, len, &num);
	if (sp < 0) {
		*why = "no count at the end of the line (expected 'frame;frame COUNT')";
		return -1;
	}
	if (memchr(line, '\0', len)) {
		*why = "NUL byte in a line";
		return -1;
	}
	/* A count may be any length, as in flamegraph.pl. */
	char nbuf[64];
	size_t nlen = len - num;
	char *copy = nlen < sizeof(nbuf) ? nbuf : lp_malloc(nlen + 1);
	memcpy(copy, line + num, nlen);
	copy[nlen] = '\0';
	double w = strtod(copy, NULL);
	if (copy != nbuf)
		free(copy);

	size_t slen = (size_t)sp;
	uint64_t h = lp_cache_hash(line, slen, 0);
	struct stack_cache_ent *ce = &d->cache[h & ((1u << STACK_CACHE_BITS) - 1)];
	const struct lp_stack *st = NULL;
	if (ce->text && ce->hash == h && ce->len == slen && !memcmp(ce->text, line, slen))
		st = ce->stack;
	if (!st)
		st = intern_stack(d, line, slen);
	if (ce->stack != st) {
		if (!ce->text || ce->len != slen || memcmp(ce->text, line, slen)) {
			free(ce->text);
			ce->text = lp_strndup(line, slen);
			ce->len = slen;
		}
		ce->hash = h;
		ce->stack = st;
	}
	memset(out, 0, sizeof(*out));
	out->time_ns = LP_TIME_NONE;
	out->pid = out->tid = out->cpu = LP_ID_NONE;
	out->comm = "";
	out->event = "";
	out->weight = w;
	out->stack = st;
	out->attrs.text = "";
	return 1;
}

/* The stack of a folded line's text: every ';'-separated field is a frame,
 * empty ones too. */
static const struct lp_stack *intern_stack(struct folded_dec *d, const char *line, size_t slen)
{
	struct lp_dict *dict = d->dict;
	if (d->scratch_cap < slen + 1) {
		d->scratch_cap = slen + 1 > 256 ? slen + 1 : 256;
		d->scratch = lp_realloc(d->scratch, d->scratch_cap);
	}
	memcpy(d->scratch, line, slen);
	d->scratch[slen] = '\0';
	size_t nframes = 0;
	if (slen) {
		/* every ';'-separated field is a frame, empty ones too */
		size_t n = 1;
		for (size_t k = 0; k < slen; k++)
			n += d->scratch[k] == ';';
		if (d->fscratch_cap < n) {
			d->fscratch_cap = n * 2;
			d->fscratch = lp_reallocarray(d->fscratch, d->fscratch_cap, sizeof(*d->fscratch));
		}
		char *s = d->scratch;
		for (;;) {
			char *semi = strchr(s, ';');
			if (semi)
				*semi = '\0';
			d->fscratch[nframes++] = lp_dict__named_frame(dict, LP_FRAME_USER, "", s, "");
			if (!semi)
				break;
			s = semi + 1;
		}
	}
	return lp_dict__stack(dict, d->fscratch, nframes);
}

static void *folded_open(struct lp_dict *dict, const struct lp_input_opts *opts)
{
	struct folded_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	d->cache = lp_calloc(1u << STACK_CACHE_BITS, sizeof(*d->cache));
	return d;
}

static void folded_close(void *dec)
{
	struct folded_dec *d = dec;
	for (size_t i = 0; i < 1u << STACK_CACHE_BITS; i++)
		free(d->cache[i].text);
	free(d->cache);
	free(d->scratch);
	free(d->fscratch);
	free(d);
}

static int folded_next(void *dec, char *line, size_t len, bool terminated,
		       struct lp_record *rec, const char **why)
{
	if (memchr(line, '\0', len)) {
		*why = "NUL byte in a line";
		return LP_CODEC_BAD;
	}
	int rc = parse(dec, line, len, &rec->sample, why);
	if (rc < 0) {
		if (!*why)
			*why = "malformed folded line";
		return LP_CODEC_BAD;
	}
	if (rc > 0)
		rec->kind = LP_REC_SAMPLE;
	return rc;
}

const struct lp_codec lp_codec_folded = {
	.name = "folded", .format = LP_INPUT_FOLDED, .sniff = lp_folded__sniff,
	.open = folded_open, .next = folded_next, .close = folded_close,
};

/* --- formatting ------------------------------------------------------ */

void lp_folded_buf__reset(struct lp_folded_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void lp_folded_buf__free(struct lp_folded_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

static void buf_reserve(struct lp_folded_buf *b, size_t n)
{
	lp_grow(&b->s, &b->cap, b->len + n + 1);
}

static void buf_add(struct lp_folded_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_addc(struct lp_folded_buf *b, char c)
{
	buf_reserve(b, 1);
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

static void add_id(struct lp_folded_buf *b, int32_t id)
{
	char tmp[16];
	int n = id == LP_ID_NONE ? snprintf(tmp, sizeof(tmp), "?") :
		snprintf(tmp, sizeof(tmp), "%" PRId32, id);
	buf_add(b, tmp, (size_t)n);
}

bool lp_folded_opts__option(struct lp_folded_opts *o, int c)
{
	switch (c) {
	case LP_FOLDED_OPT_PID: o->pid = true; break;
	case LP_FOLDED_OPT_TID: o->tid = true; break;
	case LP_FOLDED_OPT_KERNEL: o->kernel = true; break;
	case LP_FOLDED_OPT_JIT: o->jit = true; break;
	case LP_FOLDED_OPT_ALL: o->kernel = o->jit = true; break;
	case LP_FOLDED_OPT_ADDRS: o->addrs = true; break;
	case LP_FOLDED_OPT_SRCLINE: o->srcline = true; break;
	default: return false;
	}
	return true;
}

size_t lp_folded__comm(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
		       const struct lp_sample *s, const struct lp_folded_opts *o)
{
	if (!s->comm || !s->comm[0])
		return 0;
	size_t start = out->len;
	buf_add(out, s->comm, strlen(s->comm));
	if (o->tid) {
		buf_addc(out, '-');
		add_id(out, s->pid);
		buf_addc(out, '/');
		add_id(out, s->tid);
	} else if (o->pid) {
		buf_addc(out, '-');
		add_id(out, s->pid);
	}
	for (size_t i = start; i < out->len; i++)	/* $pname =~ tr/ /_/ */
		if (out->s[i] == ' ')
			out->s[i] = '_';
	if (kinds)
		buf_addc(kinds, LP_FRAME_USER);
	return 1;
}

/* The kind a frame shows in flame graphs: its own, or for frames read from
 * folded text (all "user"), the one its annotation names. */
static char shown_kind(char kind, const char *text, size_t n)
{
	if (kind != LP_FRAME_USER || n < 4 || text[n - 4] != '_' || text[n - 3] != '[' ||
	    text[n - 1] != ']')
		return kind;
	switch (text[n - 2]) {
	case 'k': return LP_FRAME_KERNEL;
	case 'j': return LP_FRAME_JIT;
	case 'i': return LP_FRAME_INLINE;
	}
	return kind;
}

static void format_frame(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
			 const struct lp_frame *f, const struct lp_folded_opts *o)
{
	size_t start = out->len;
	if (f->symbol[0] || f->named) {
		buf_add(out, f->symbol, strlen(f->symbol));
		/* a ';' inside a frame would split it (stream input) */
		for (size_t i = start; i < out->len; i++)
			if (out->s[i] == ';')
				out->s[i] = ':';
	} else if (f->module[0] || f->addr) {
		/* [unknown]: "[basename-of-module]", "[unknown]" when the
		 * module is not known either, " <addr>" under --addrs; then
		 * the same clean-up as any symbol. */
		const char *name = f->module;
		if (!lp_frame__has_module(f)) {
			name = "unknown";
		} else {
			const char *slash = strrchr(name, '/');
			if (slash)
				name = slash + 1;
		}
		char addr[32] = "";
		if (o->addrs)
			snprintf(addr, sizeof(addr), " <%" PRIx64 ">", f->addr);
		size_t nl = strlen(name), al = strlen(addr);
		char *raw = lp_malloc(nl + al + 3);
		raw[0] = '[';
		memcpy(raw + 1, name, nl);
		memcpy(raw + 1 + nl, addr, al);
		raw[1 + nl + al] = ']';
		raw[2 + nl + al] = '\0';
		buf_reserve(out, nl + al + 2);
		size_t tl = lp_perfscript__tidy(out->s + out->len, raw, nl + al + 2, false);
		out->len += tl;
		free(raw);
	} else {
		buf_add(out, "[unknown]", 9);	/* nothing known: never an empty frame */
	}
	const char *text = out->s ? out->s + start : "";
	size_t tlen = out->len - start;
	if (f->kind == LP_FRAME_INLINE) {
		if (!memmem(text, tlen, "_[i]", 4))
			buf_add(out, "_[i]", 4);
	} else if (o->kernel && f->kind == LP_FRAME_KERNEL) {
		buf_add(out, "_[k]", 4);
	} else if (o->jit && (f->kind == LP_FRAME_JIT ||
			      lp_perfscript__jit_module(f->module, strlen(f->module)))) {
		if (!memmem(text, tlen, "_[j]", 4))
			buf_add(out, "_[j]", 4);
	}
	if (o->srcline && f->srcline[0]) {
		buf_addc(out, ':');
		buf_add(out, f->srcline, strlen(f->srcline));
	}
	if (kinds)
		buf_addc(kinds, shown_kind(f->kind, out->s + start, out->len - start));
}

static size_t frames(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
		     const struct lp_stack *st, const struct lp_folded_opts *o, int sep)
{
	for (size_t i = 0; i < st->nframes; i++) {
		if (sep || i)
			buf_addc(out, ';');
		format_frame(out, kinds, st->frames[i], o);
	}
	if (!out->s)
		buf_reserve(out, 0), out->s[0] = '\0';
	return st->nframes;
}

size_t lp_folded__frames(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
			 const struct lp_stack *st, const struct lp_folded_opts *o)
{
	return frames(out, kinds, st, o, out->len > 0);
}

size_t lp_folded__format(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
			 const struct lp_sample *s, const struct lp_folded_opts *o)
{
	size_t n = lp_folded__comm(out, kinds, s, o);
	return n + frames(out, kinds, s->stack, o, n > 0);
}

/* --- what the counts are ---------------------------------------------- */

void lp_folded_units__header(struct lp_folded_units *u, const struct lp_header *h)
{
	static const char *const ns_modes[] = { "off", "wall" };
	/* A tracer's stream holds no samples: its header, which lp-join
	 * writes after lp-record's, does not change what theirs count. */
	if (lp_attrs__is(&h->attrs, "mode", "trace") || lp_attrs__is(&h->attrs, "producer", "lp-trace"))
		return;
	u->cur = LP_FOLDED_WEIGHTS;
	if (lp_attrs__is(&h->attrs, "mode", "cpu") || lp_attrs__is(&h->attrs, "mode", "snapshot"))
		u->cur = LP_FOLDED_SAMPLES;
	for (size_t i = 0; i < sizeof(ns_modes) / sizeof(ns_modes[0]); i++)
		if (lp_attrs__is(&h->attrs, "mode", ns_modes[i])) {
			u->cur = LP_FOLDED_NS;
			if (!u->ns_mode)
				u->ns_mode = ns_modes[i];
		}
}

const char *lp_folded_units__ns(const struct lp_folded_units *u)
{
	return u->ns && !u->samples && !u->weights ? u->ns_mode : NULL;
}

int lp_folded__ns_comment(FILE *out, const char *prog, const char *mode)
{
	return fprintf(out, "# %s: counts are nanoseconds (mode=%s): flamegraph.pl --countname=ns\n",
		       prog, mode) < 0 ? -1 : 0;
}

/* --- aggregation ----------------------------------------------------- */

struct agg_ent {
	const struct lp_stack *stack;
	const char *comm;
	int32_t pid, tid;
	double weight;
};

struct lp_folded_agg {
	struct lp_folded_opts opts;
	struct lp_hashmap map;		/* agg_hash -> index + 1 into v */
	struct agg_ent *v;
	size_t n, cap;
	/* Comms copied once: a reader's sample comm may point into its line
	 * buffer (lp input), valid only until the next record. */
	struct lp_hashmap comms;	/* hash of the comm -> its copy */
	const char *last_comm;		/* the last one met: they come in runs */
	struct lp_folded_buf text, kinds;
};

struct lp_folded_agg *lp_folded_agg__new(const struct lp_folded_opts *o)
{
	struct lp_folded_agg *a = lp_calloc(1, sizeof(*a));
	a->opts = *o;
	lp_hashmap__init(&a->map);
	lp_hashmap__init(&a->comms);
	return a;
}

void lp_folded_agg__free(struct lp_folded_agg *a)
{
	if (!a)
		return;
	lp_hashmap__fini(&a->map);
	free(a->v);
	for (size_t i = 0; i < a->comms.cap; i++)
		if (a->comms.keys[i])
			free(a->comms.values[i]);
	lp_hashmap__fini(&a->comms);
	lp_folded_buf__free(&a->text);
	lp_folded_buf__free(&a->kinds);
	free(a);
}

static inline uint64_t agg_hash(const struct lp_stack *st, const char *comm, int32_t pid,
				int32_t tid)
{
	uint64_t h = (uint64_t)(uintptr_t)st * 0x9e3779b97f4a7c15ULL;
	h ^= (uint64_t)(uintptr_t)comm * 0xc2b2ae3d27d4eb4fULL;
	h ^= ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid) * 0x165667b19e3779f9ULL;
	return lp_hashmap__key(h ^ (h >> 31));
}

static const char *agg_comm(struct lp_folded_agg *a, const char *comm)
{
	if (a->last_comm && !strcmp(a->last_comm, comm))
		return a->last_comm;
	size_t n = strlen(comm);
	uint64_t h = lp_hashmap__key(lp_cache_hash(comm, n, 0));
	char *c;
	for (size_t pos = 0; (c = lp_hashmap__next(&a->comms, h, &pos));)
		if (!strcmp(c, comm))
			return a->last_comm = c;
	c = lp_strndup(comm, n);
	lp_hashmap__add(&a->comms, h, c);
	return a->last_comm = c;
}

void lp_folded_agg__add(struct lp_folded_agg *a, const struct lp_sample *s)
{
	/* Only what the printed line depends on is part of the key. */
	int32_t pid = a->opts.pid || a->opts.tid ? s->pid : 0;
	int32_t tid = a->opts.tid ? s->tid : 0;
	const char *comm = agg_comm(a, s->comm ? s->comm : "");
	uint64_t h = agg_hash(s->stack, comm, pid, tid);
	void *v;
	for (size_t pos = 0; (v = lp_hashmap__next(&a->map, h, &pos));) {
		struct agg_ent *e = &a->v[(uintptr_t)v - 1];
		if (e->stack == s->stack && e->comm == comm && e->pid == pid && e->tid == tid) {
			e->weight += s->weight;
			return;
		}
	}
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = lp_reallocarray(a->v, a->cap, sizeof(*a->v));
	}
	a->v[a->n++] = (struct agg_ent){ s->stack, comm, pid, tid, s->weight };
	lp_hashmap__add(&a->map, h, (void *)(uintptr_t)a->n);
}

void lp_folded_agg__flush(struct lp_folded_agg *a, struct lp_profile *p, int side)
{
	for (size_t i = 0; i < a->n; i++) {
		struct agg_ent *e = &a->v[i];
		struct lp_sample s = { .comm = e->comm, .pid = e->pid, .tid = e->tid,
				       .stack = e->stack };
		lp_folded_buf__reset(&a->text);
		lp_folded_buf__reset(&a->kinds);
		lp_folded__format(&a->text, &a->kinds, &s, &a->opts);
		lp_profile__add(p, a->text.s ? a->text.s : "", a->text.len,
				a->kinds.s, side, e->weight);
	}
	a->n = 0;
	lp_hashmap__clear(&a->map);
}
