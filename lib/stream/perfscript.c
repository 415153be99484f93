/* perfscript.c - `perf script` text as samples, read line by line exactly the
 * way FlameGraph's stackcollapse-perf.pl (commit 41fee1f) reads it, so that
 * lp-collapse prints the same folded stacks byte for byte: the reader's
 * state, samples opened, extended and ended, their stacks interned and
 * cached, the codec (perfscript.h).  The script's regular expressions are
 * emulated by hand in perfscript-lines.c.
 *
 * What the script decides while reading lives here: which lines open, extend
 * or end a sample, the event filter (its merging of a filtered event into the
 * sample still open), the clean-up of symbol names (+0x offsets, ';', quotes,
 * argument lists, Java's 'L'), "->" inline chains and -F+srcline lines.  What
 * depends only on printing options (the comm-PID/TID frame, _[k] _[j] _[i],
 * [module <addr>] for unresolved frames) is left to folded.c's formatter, so
 * a stream keeps the facts and any option can be applied later.
 *
 * Frames of resolved symbols carry addr 0: the clean-up has already merged
 * call sites, and leaving addresses in would multiply distinct stacks.
 */
#include "stream/perfscript.h"
#include "stream/perfscript-internal.h"

#include <stdlib.h>

#include "base/util.h"

/* A piece of a frame line ("a->b->c" has three) waiting for its interning:
 * strings are offsets into ps->src.pbuf. */
struct piece {
	char kind;
	bool named;		/* its text is its name, "" included ("a->->b") */
	uint64_t addr;
	size_t mod, sym, src;	/* offsets of NUL-terminated strings */
};

/* Line cache: the text of a frame line (from its address on) and whether the
 * sample is Java's -> the frames it gives.  Most lines of a profile repeat,
 * so the clean-up and interning run once per distinct line.  Direct-mapped
 * and bounded (a new line takes its slot's place): a profile whose lines
 * never repeat costs a probe of a table that stays in the CPU's cache. */
struct cache_ent {
	uint64_t hash;
	char *key;		/* NULL: empty; key[len] is the java flag */
	size_t len, keycap;
	const struct lp_frame **frames;
	size_t nframes, fcap;
};

/* Stack cache: the frame pointers of a sample (leaf first) -> its stack. */
struct stack_ent {
	uint64_t hash;
	const struct lp_frame **frames;
	size_t n, fcap;
	const struct lp_stack *stack;	/* NULL: empty slot */
};

#define LINE_CACHE_MAX (1u << 16)	/* slots, 56 bytes each */

#define NO_SLOT SIZE_MAX		/* a line the cache did not look up */

#define STACK_CACHE_MAX (1u << 14)

/* The sample being read ("$pname" is defined), but for its event and
 * frames, which live in the dictionary. */
struct sample_state {
	bool open;
	char *comm;
	size_t comm_len, comm_cap;
	bool java;
	int32_t pid, tid, cpu;
	int64_t time_ns;
	double weight;
};

/* -F+srcline: pieces of the last frame line and how many source lines they
 * still take from the input. */
struct src_state {
	struct piece *pend;
	size_t npend, cappend, srcneed, srcgot;
	char *pbuf;
	size_t plen, pcap;
};

struct lp_perfscript {
	struct lp_dict *dict;
	struct lp_perf_opts opts;
	struct lp_carry *carry;	/* inputs read as one: see codec.h */
	char *filter;		/* the event kept; NULL until known */
	bool filter_all;	/* opts.event_filter == NULL */

	struct sample_state s;
	const char *event;

	/* Frames in reverse order of the script's @stack ("unshift"). */
	const struct lp_frame **rev;
	size_t nrev, caprev;
	const struct lp_frame **out;
	size_t capout;

	struct src_state src;

	/* Scratch for one frame line's pieces (cache misses). */
	const struct lp_frame **tmp;
	size_t captmp;

	struct cache_ent *cache;
	size_t cache_cap, cache_count;
	uint32_t cache_probes, cache_hits, cache_skip;
	struct stack_ent *scache;
	size_t scache_cap, scache_count;
};

/* struct lp_carry's state: what a parser freed in the middle of a sample
 * (or of its source lines) leaves for the next one, its frames as text
 * since its dictionary goes with its reader. */
struct carry_frame {
	char kind;
	bool named;
	uint64_t addr;
	char *module, *symbol, *srcline;
};

struct perf_carry {
	struct sample_state s;
	char *event;
	struct carry_frame *frames;	/* as in rev */
	size_t nframes;
	struct src_state src;
};

static void carry_restore(struct lp_perfscript *ps, struct perf_carry *c);

static void grow(void **p, size_t *cap, size_t need, size_t size);

static void carry_free(void *state);

static struct lp_perfscript *lp_perfscript__new(struct lp_dict *dict,
						const struct lp_input_opts *opts)
{
	struct lp_perfscript *ps = lp_calloc(1, sizeof(*ps));
	ps->dict = dict;
	ps->opts = opts->perf;
	ps->carry = opts->carry;
	ps->filter_all = ps->opts.event_filter == NULL;
	if (ps->opts.event_filter && ps->opts.event_filter[0])
		ps->filter = lp_strdup(ps->opts.event_filter);
	ps->cache_cap = 1024;
	ps->cache = lp_calloc(ps->cache_cap, sizeof(*ps->cache));
	ps->scache_cap = 1024;
	ps->scache = lp_calloc(ps->scache_cap, sizeof(*ps->scache));
	/* never NULL: an empty stack is memcpy'd and compared as 0 bytes */
	grow((void **)&ps->rev, &ps->caprev, 1, sizeof(*ps->rev));
	/* only a state this file left: another codec's is not ours */
	if (ps->carry && ps->carry->state && ps->carry->free == carry_free) {
		carry_restore(ps, ps->carry->state);
		ps->carry->state = NULL;
	}
	return ps;
}

static void carry_save(struct lp_perfscript *ps)
{
	lp_carry__fini(ps->carry);
	struct perf_carry *c = lp_calloc(1, sizeof(*c));
	ps->carry->state = c;
	ps->carry->free = carry_free;
	/* the buffers go with it */
	c->s = ps->s;
	ps->s.comm = NULL;
	c->src = ps->src;
	ps->src.pend = NULL;
	ps->src.pbuf = NULL;
	c->event = ps->event ? lp_strdup(ps->event) : NULL;
	c->nframes = ps->nrev;
	c->frames = lp_calloc(ps->nrev ? ps->nrev : 1, sizeof(*c->frames));
	for (size_t i = 0; i < ps->nrev; i++) {
		const struct lp_frame *f = ps->rev[i];
		c->frames[i] = (struct carry_frame){ f->kind, f->named, f->addr,
						     lp_strdup(f->module),
						     lp_strdup(f->symbol),
						     lp_strdup(f->srcline) };
	}
}

static void carry_restore(struct lp_perfscript *ps, struct perf_carry *c)
{
	ps->s = c->s;
	ps->src = c->src;
	ps->event = c->event ? lp_dict__string(ps->dict, c->event, strlen(c->event))
			     : NULL;
	free(c->event);
	grow((void **)&ps->rev, &ps->caprev, c->nframes, sizeof(*ps->rev));
	for (size_t i = 0; i < c->nframes; i++) {
		struct carry_frame *f = &c->frames[i];
		struct lp_frame fr = { .kind = f->kind, .addr = f->addr, .module = f->module,
				       .symbol = f->symbol, .srcline = f->srcline, .build_id = "",
				       .named = f->named };
		ps->rev[i] = lp_dict__frame_copy(ps->dict, &fr);
		free(f->module);
		free(f->symbol);
		free(f->srcline);
	}
	ps->nrev = c->nframes;
	free(c->frames);
	free(c);
}

/* A carried state no parser took (the last input ended in a sample). */
static void carry_free(void *state)
{
	struct perf_carry *c = state;
	free(c->s.comm);
	free(c->event);
	for (size_t i = 0; i < c->nframes; i++) {
		free(c->frames[i].module);
		free(c->frames[i].symbol);
		free(c->frames[i].srcline);
	}
	free(c->frames);
	free(c->src.pend);
	free(c->src.pbuf);
	free(c);
}

static void lp_perfscript__free(struct lp_perfscript *ps)
{
	if (!ps)
		return;
	if (ps->carry && (ps->s.open || ps->src.srcneed))
		carry_save(ps);
	free(ps->filter);
	free(ps->s.comm);
	free(ps->rev);
	free(ps->out);
	free(ps->src.pend);
	free(ps->src.pbuf);
	free(ps->tmp);
	for (size_t i = 0; i < ps->cache_cap; i++) {
		free(ps->cache[i].key);
		free(ps->cache[i].frames);
	}
	free(ps->cache);
	for (size_t i = 0; i < ps->scache_cap; i++)
		free(ps->scache[i].frames);
	free(ps->scache);
	free(ps);
}

static void grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	*p = lp_reallocarray(*p, c, size);
	*cap = c;
}

static size_t pbuf_add(struct lp_perfscript *ps, const char *s, size_t n)
{
	grow((void **)&ps->src.pbuf, &ps->src.pcap, ps->src.plen + n + 1, 1);
	size_t off = ps->src.plen;
	memcpy(ps->src.pbuf + off, s, n);
	ps->src.pbuf[off + n] = '\0';
	ps->src.plen += n + 1;
	return off;
}

static void push_frames(struct lp_perfscript *ps, const struct lp_frame *const *f, size_t n)
{
	/* @stack gets "unshift @stack, @inline": the line's pieces in order in
	 * front of what came before.  rev holds @stack backwards, so the
	 * pieces go in backwards. */
	grow((void **)&ps->rev, &ps->caprev, ps->nrev + n, sizeof(*ps->rev));
	for (size_t i = n; i-- > 0;)
		ps->rev[ps->nrev++] = f[i];
}

/* The CPU ("[003]") and time ("4794564.109216:") between the TID and the
 * event, when perf printed them; not needed by the script, kept for streams. */
static void parse_cpu_time(struct lp_perfscript *ps, const char *l, size_t len, size_t i)
{
	ps->s.cpu = LP_ID_NONE;
	ps->s.time_ns = LP_TIME_NONE;
	while (i < len) {
		while (i < len && pl_space(l[i]))
			i++;
		size_t s = i;
		while (i < len && !pl_space(l[i]))
			i++;
		size_t n = i - s;
		if (n >= 3 && l[s] == '[' && l[i - 1] == ']') {
			size_t k = s + 1;
			while (k < i - 1 && pl_digit(l[k]))
				k++;
			if (k == i - 1)
				ps->s.cpu = lp_perfscript_parse_id(l + s + 1, n - 2);
			continue;
		}
		if (n >= 2 && l[i - 1] == ':') {
			int64_t sec = 0, ns = 0;
			size_t k = s, digits = 0;
			while (k < i - 1 && pl_digit(l[k]) && sec < INT64_MAX / 100)
				sec = sec * 10 + (l[k++] - '0'), digits++;
			if (!digits)
				return;
			if (k < i - 1 && l[k] == '.') {
				int scale = 0;
				for (k++; k < i - 1 && pl_digit(l[k]); k++)
					if (scale < 9)
						ns = ns * 10 + (l[k] - '0'), scale++;
				while (scale++ < 9)
					ns *= 10;
			}
			if (k == i - 1 && sec < INT64_MAX / 1000000000)
				ps->s.time_ns = sec * 1000000000 + ns;
			return;
		}
		if (n)
			return;
	}
}

/* Returns 1 when the line is an event line (handled, or filtered out). */
static int event_line(struct lp_perfscript *ps, const char *l, size_t len)
{
	struct evmatch m;
	if (!lp_perfscript_match_event_line(l, len, &m))
		return 0;
	size_t ev = 0, ev_len = 0, per = 0, per_len = 0;
	bool has_event = lp_perfscript_match_event_name(l, len, &ev, &ev_len, &per, &per_len);
	if (has_event && !ps->filter_all) {
		if (!ps->filter) {
			/* By default only the first event type seen is kept. */
			ps->filter = lp_strndup(l + ev, ev_len);
		} else if (strlen(ps->filter) != ev_len || memcmp(ps->filter, l + ev, ev_len)) {
			/* Filtered: nothing changes, so the frames that follow
			 * join a sample still open (the script's `next`). */
			return 1;
		}
	}
	ps->s.weight = lp_perfscript_parse_period(l + per, per_len);
	ps->event = has_event ? lp_dict__string(ps->dict, l + ev, ev_len) : "";
	/* `if (not $tid)`: no second number, or "0", means the one number
	 * is the TID and the PID is unknown. */
	if (m.d2_len == 0 || (m.d2_len == 1 && l[m.d2] == '0')) {
		ps->s.pid = LP_ID_NONE;
		ps->s.tid = lp_perfscript_parse_id(l + m.d1, m.d1_len);
	} else {
		ps->s.pid = lp_perfscript_parse_id(l + m.d1, m.d1_len);
		ps->s.tid = lp_perfscript_parse_id(l + m.d2, m.d2_len);
	}
	grow((void **)&ps->s.comm, &ps->s.comm_cap, m.comm_len + 1, 1);
	memcpy(ps->s.comm, l, m.comm_len);
	ps->s.comm[m.comm_len] = '\0';
	ps->s.comm_len = m.comm_len;
	ps->s.java = m.comm_len >= 4 && !memcmp(l, "java", 4);
	parse_cpu_time(ps, l, len, m.end);
	/* The stack is not reset: an event line without a blank line before
	 * it adds to the sample still open, as in the script. */
	ps->s.open = true;
	return 1;
}

/* --- frame lines ----------------------------------------------------- */

/* /^\s*(\w+)\s*(.+) \((.*)\)/ with Perl's backtracking: (.+) is greedy, so
 * the module is between the last " (" that has a ')' after it and the last
 * ')' of the line. */
struct frmatch {
	size_t pc, pc_len, fn, fn_len, mod, mod_len;
};

static bool match_frame_line(const char *l, size_t len, struct frmatch *m)
{
	size_t p = 0;
	while (p < len && pl_space(l[p]))
		p++;
	size_t e0 = p;
	while (e0 < len && pl_word(l[e0]))
		e0++;
	if (e0 == p)
		return false;
	const char *rp = memrchr(l + e0, ')', len - e0);
	if (!rp)
		return false;
	size_t r = rp - l;
	size_t q = r;	/* the " (" must start before r - 1 */
	bool found = false;
	while (q-- > e0) {
		if (l[q] == ' ' && q + 1 < r && l[q + 1] == '(') {
			found = true;
			break;
		}
	}
	if (!found)
		return false;
	size_t w = e0;
	while (w < len && pl_space(l[w]))
		w++;
	size_t s;
	if (q >= e0 + 1) {
		s = w < q - 1 ? w : q - 1;
		if (s < e0)
			s = e0;
		m->pc_len = e0 - p;
	} else {
		/* q == e0: \w+ gives back its last character to (.+) */
		if (e0 - p < 2)
			return false;
		s = e0 - 1;
		m->pc_len = s - p;
	}
	m->pc = p;
	m->fn = s;
	m->fn_len = q - s;
	m->mod = q + 2;
	m->mod_len = r - (q + 2);
	return true;
}

static bool is_kernel_module(const char *mod, size_t n)
{
	/* $mod =~ m/(^\[|vmlinux$)/ && $mod !~ /unknown/ */
	bool k = (n && mod[0] == '[') || (n >= 7 && !memcmp(mod + n - 7, "vmlinux", 7));
	return k && !memmem(mod, n, "unknown", 7);
}

bool lp_perfscript__jit_module(const char *mod, size_t n)
{
	/* $mod =~ m:/tmp/perf-\d+\.map: (anywhere in the path) */
	const char *p = mod, *end = mod + n;
	while ((p = memmem(p, end - p, "/tmp/perf-", 10))) {
		const char *d = p + 10;
		while (d < end && pl_digit(*d))
			d++;
		if (d > p + 10 && end - d >= 4 && !memcmp(d, ".map", 4))
			return true;
		p++;
	}
	return false;
}

static uint64_t parse_hex(const char *s, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		int d = pl_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 :
			(c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	return v;
}

/* $tidy_generic and $tidy_java on one piece; writes into dst (n+1 bytes),
 * returns the new length. */
size_t lp_perfscript__tidy(char *dst, const char *src, size_t n, bool java)
{
	size_t len = n;
	memcpy(dst, src, n);
	for (size_t i = 0; i < len; i++)
		if (dst[i] == ';')
			dst[i] = ':';
	/* m/\.\(.*\)\./: a Go method such as net/http.(*Client).Do keeps
	 * its parentheses. */
	bool go = false;
	const char *open = memmem(dst, len, ".(", 2);
	if (open) {
		for (size_t j = (size_t)(open - dst) + 2; j + 1 < len; j++) {
			if (dst[j] == ')' && dst[j + 1] == '.') {
				go = true;
				break;
			}
		}
	}
	if (!go) {
		/* s/\((?!anonymous namespace\)).* // (no blank before "//") */
		static const char anon[] = "anonymous namespace)";
		for (size_t i = 0; i < len; i++) {
			if (dst[i] != '(')
				continue;
			if (len - i - 1 >= sizeof(anon) - 1 &&
			    !memcmp(dst + i + 1, anon, sizeof(anon) - 1))
				continue;
			len = i;
			break;
		}
	}
	/* tr/"\'//d */
	size_t o = 0;
	for (size_t i = 0; i < len; i++)
		if (dst[i] != '"' && dst[i] != '\'')
			dst[o++] = dst[i];
	len = o;
	/* s/^L// if m:/: (Java class names), for commands starting "java" */
	if (java && len && dst[0] == 'L' && memchr(dst, '/', len)) {
		memmove(dst, dst + 1, len - 1);
		len--;
	}
	dst[len] = '\0';
	return len;
}

/* Splits rawfunc at "->" as Perl's split does (trailing empty fields
 * dropped) and turns each piece into a struct piece.  Returns how many. */
static size_t make_pieces(struct lp_perfscript *ps, const char *l, const struct frmatch *m,
			  const char *fn, size_t fn_len, size_t *srcneed)
{
	const char *mod = l + m->mod;
	size_t mod_len = m->mod_len;
	uint64_t pc = parse_hex(l + m->pc, m->pc_len);
	bool kernel = is_kernel_module(mod, mod_len);
	bool jit = !kernel && lp_perfscript__jit_module(mod, mod_len);

	/* Fields, then drop trailing empty ones. */
	size_t nf = 0, start = 0, last_nonempty = 0;
	ps->src.npend = 0;
	ps->src.plen = 0;
	size_t mod_off = pbuf_add(ps, mod, mod_len);
	size_t empty_off = pbuf_add(ps, "", 0);
	bool unknown_seen = false;
	size_t want = 0;
	*srcneed = 0;
	for (size_t i = 0; i <= fn_len; i++) {
		if (i < fn_len && !(fn[i] == '-' && i + 1 < fn_len && fn[i + 1] == '>'))
			continue;
		const char *f = fn + start;
		size_t n = i - start;
		grow((void **)&ps->src.pend, &ps->src.cappend, nf + 1, sizeof(*ps->src.pend));
		struct piece *pc_ = &ps->src.pend[nf];
		pc_->kind = nf ? LP_FRAME_INLINE : kernel ? LP_FRAME_KERNEL :
			jit ? LP_FRAME_JIT : LP_FRAME_USER;
		pc_->named = false;
		pc_->src = empty_off;
		if (n == 9 && !memcmp(f, "[unknown]", 9)) {
			/* Printed from its module (and address) by the
			 * formatter; "[unknown]" modules say nothing more. */
			pc_->addr = pc;
			pc_->mod = mod_off;
			pc_->sym = empty_off;
			if (mod_len == 9 && !memcmp(mod, "[unknown]", 9))
				unknown_seen = true;	/* $is_unknown, never reset */
		} else {
			grow((void **)&ps->src.pbuf, &ps->src.pcap, ps->src.plen + n + 1, 1);
			size_t off = ps->src.plen;
			size_t tl = lp_perfscript__tidy(ps->src.pbuf + off, f, n, ps->s.java);
			ps->src.plen += tl + 1;
			pc_->addr = 0;
			pc_->named = true;
			pc_->sym = off;
			/* A symbol cleaned up to nothing prints as nothing, not
			 * as its module. */
			pc_->mod = tl ? mod_off : empty_off;
		}
		if (ps->opts.srcline && !unknown_seen)
			want = nf + 1;	/* a prefix of the pieces reads a line each */
		nf++;
		if (n) {
			last_nonempty = nf;
			*srcneed = want;
		}
		start = i + 2;
		i++;
	}
	return last_nonempty;
}

static void intern_pending(struct lp_perfscript *ps, size_t n)
{
	grow((void **)&ps->tmp, &ps->captmp, n, sizeof(*ps->tmp));
	for (size_t i = 0; i < n; i++) {
		const struct piece *p = &ps->src.pend[i];
		ps->tmp[i] = p->named ? lp_dict__named_frame(ps->dict, p->kind, ps->src.pbuf + p->mod,
							     ps->src.pbuf + p->sym, ps->src.pbuf + p->src)
				      : lp_dict__frame(ps->dict, p->kind, p->addr, ps->src.pbuf + p->mod,
						       ps->src.pbuf + p->sym, ps->src.pbuf + p->src);
	}
}

static struct cache_ent *cache_probe(struct lp_perfscript *ps, const char *key, size_t klen,
				     unsigned char jf, uint64_t *hv, size_t *slot)
{
	*hv = lp_cache_hash(key, klen, jf);
	*slot = *hv & (ps->cache_cap - 1);
	struct cache_ent *e = &ps->cache[*slot];
	if (e->key && e->hash == *hv && e->len == klen && (unsigned char)e->key[klen] == jf &&
	    !memcmp(e->key, key, klen))
		return e;
	return NULL;
}

/* Doubles the line cache up to its bound; of two entries that meet in one
 * slot, the first keeps it. */
static void cache_grow(struct lp_perfscript *ps)
{
	size_t ncap = ps->cache_cap * 2, count = 0;
	struct cache_ent *nc = lp_calloc(ncap, sizeof(*nc));
	for (size_t j = 0; j < ps->cache_cap; j++) {
		struct cache_ent *e = &ps->cache[j];
		if (!e->key)
			continue;
		struct cache_ent *x = &nc[e->hash & (ncap - 1)];
		if (x->key) {
			free(e->key);
			free(e->frames);
			continue;
		}
		*x = *e;
		count++;
	}
	free(ps->cache);
	ps->cache = nc;
	ps->cache_cap = ncap;
	ps->cache_count = count;
}

static void cache_insert(struct lp_perfscript *ps, size_t slot, uint64_t hv, const char *key,
			 size_t klen, unsigned char jf, const struct lp_frame *const *f, size_t n)
{
	if (slot == NO_SLOT)
		return;
	if (ps->cache_count * 2 >= ps->cache_cap && ps->cache_cap < LINE_CACHE_MAX) {
		cache_grow(ps);
		slot = hv & (ps->cache_cap - 1);
	}
	struct cache_ent *e = &ps->cache[slot];
	if (!e->key)
		ps->cache_count++;
	if (e->keycap < klen + 1) {
		free(e->key);
		e->keycap = klen + 1 > 64 ? klen + 1 : 64;
		e->key = lp_malloc(e->keycap);
	}
	memcpy(e->key, key, klen);
	e->key[klen] = (char)jf;
	grow((void **)&e->frames, &e->fcap, n ? n : 1, sizeof(*e->frames));
	if (n)
		memcpy(e->frames, f, n * sizeof(*e->frames));
	e->hash = hv;
	e->len = klen;
	e->nframes = n;
}

/* A frame line of an open sample; hv and slot are the line cache's probe
 * (not used under srcline, whose frames depend on the lines after). */
/* --inline: the script's inline() on one frame, addr2line -i -f -s -C
 * through the program's resolver (codec.h).  Fills ps->tmp with the frames (outermost first) and
 * returns how many, or 0 when the script falls back to the perf frame (an
 * empty answer, "??" or "??:??:0"). */
static size_t inline_frames(struct lp_perfscript *ps, uint64_t pc, const char *fn,
			    size_t fn_len, const char *mod)
{
	const struct lp_inline_resolver *res = ps->opts.inlines;
	const struct lp_inline_entry *e;
	int n = res->lookup(res->ctx, mod, pc, &e);
	if (n <= 0)
		return 0;
	bool unknown = false;
	for (int i = 0; i < n && !unknown; i++) {
		size_t fl = strlen(e[i].func);
		unknown = fl >= 2 && !strcmp(e[i].func + fl - 2, "??") &&
			  !strncmp(e[i].loc, "??:0", 4);
	}
	if (unknown && fn) {
		/* /^(.+)\+0x([0-9a-f]+)$/: retry at nm's address of the
		 * symbol plus the offset */
		size_t h = fn_len;
		while (h > 0 && pl_hexlc(fn[h - 1]))
			h--;
		if (h < fn_len && h >= 4 && fn[h - 1] == 'x' && fn[h - 2] == '0' &&
		    fn[h - 3] == '+') {
			char *name = lp_strndup(fn, h - 3);
			uint64_t base;
			int found = res->symbol(res->ctx, mod, name, &base);
			free(name);
			if (found == 0)
				return inline_frames(ps, base + parse_hex(fn + h, fn_len - h),
						     NULL, 0, mod);
		}
	}
	if (n == 1 && !strcmp(e[0].func, "??") &&
	    (!ps->opts.context || !strcmp(e[0].loc, "??:0")))
		return 0;
	grow((void **)&ps->tmp, &ps->captmp, (size_t)n, sizeof(*ps->tmp));
	char *text = NULL;
	size_t cap = 0;
	for (int i = 0; i < n; i++) {
		/* addr2line lists the innermost first; the script unshifts */
		const struct lp_inline_entry *x = &e[n - 1 - i];
		size_t fl = strlen(x->func), ll = ps->opts.context ? strlen(x->loc) + 1 : 0;
		grow((void **)&text, &cap, fl + ll + 1, 1);
		memcpy(text, x->func, fl);
		if (ll) {
			text[fl] = ':';
			memcpy(text + fl + 1, x->loc, ll - 1);
		}
		text[fl + ll] = '\0';
		ps->tmp[i] = lp_dict__frame(ps->dict, LP_FRAME_USER, 0, mod, text, "");
	}
	free(text);
	return (size_t)n;
}

/* $mod !~ m/(perf-\d+.map|kernel\.|\[[^\]]+\])/: the modules --inline
 * asks addr2line about. */
static bool inline_module(const char *mod, size_t n)
{
	if (memmem(mod, n, "kernel.", 7))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (mod[i] == '[' && i + 2 < n && mod[i + 1] != ']' &&
		    memchr(mod + i + 2, ']', n - i - 2))
			return false;
		if (n - i > 5 && !memcmp(mod + i, "perf-", 5)) {
			size_t d = i + 5;
			while (d < n && pl_digit(mod[d]))
				d++;
			if (d > i + 5 && n - d >= 4 && !memcmp(mod + d + 1, "map", 3))
				return false;
		}
	}
	return true;
}

static void frame_line(struct lp_perfscript *ps, const char *l, size_t len,
		       const struct frmatch *m, uint64_t hv, size_t slot)
{
	if (ps->opts.inlines && inline_module(l + m->mod, m->mod_len)) {
		char *mod = lp_strndup(l + m->mod, m->mod_len);
		size_t n = inline_frames(ps, parse_hex(l + m->pc, m->pc_len), l + m->fn,
					 m->fn_len, mod);
		free(mod);
		if (n) {
			/* `next`: no clean-up, no annotation, no source line */
			push_frames(ps, ps->tmp, n);
			if (!ps->opts.srcline)
				cache_insert(ps, slot, hv, l + m->pc, len - m->pc, ps->s.java,
					     ps->tmp, n);
			return;
		}
	}
	/* s/\+0x[\da-f]+$// on the function */
	const char *fn = l + m->fn;
	size_t fn_len = m->fn_len, h = fn_len;
	while (h > 0 && pl_hexlc(fn[h - 1]))
		h--;
	if (h < fn_len && h >= 3 && fn[h - 1] == 'x' && fn[h - 2] == '0' && fn[h - 3] == '+')
		fn_len = h - 3;
	const char *key = l + m->pc;
	size_t klen = len - m->pc;
	unsigned char jf = ps->s.java;
	if (fn_len && fn[0] == '(') {
		/* `next if $rawfunc =~ /^\(/` */
		if (!ps->opts.srcline)
			cache_insert(ps, slot, hv, key, klen, jf, NULL, 0);
		return;
	}

	size_t need;
	size_t n = make_pieces(ps, l, m, fn, fn_len, &need);
	if (ps->opts.srcline) {
		ps->src.npend = n;
		ps->src.srcneed = need;
		ps->src.srcgot = 0;
		if (need == 0) {
			intern_pending(ps, n);
			push_frames(ps, ps->tmp, n);
		}
		return;
	}
	intern_pending(ps, n);
	push_frames(ps, ps->tmp, n);
	cache_insert(ps, slot, hv, key, klen, jf, ps->tmp, n);
}

/* The sample's stack: a cache keyed by the frame pointers (as collected,
 * leaf first) spares the dictionary's hashing of every frame id. */
static const struct lp_stack *intern_stack(struct lp_perfscript *ps)
{
	size_t n = ps->nrev, bytes = n * sizeof(*ps->rev);
	uint64_t hv = lp_cache_hash((const char *)ps->rev, bytes, 0);
	struct stack_ent *e = &ps->scache[hv & (ps->scache_cap - 1)];
	if (e->stack && e->hash == hv && e->n == n && !memcmp(e->frames, ps->rev, bytes))
		return e->stack;
	grow((void **)&ps->out, &ps->capout, n, sizeof(*ps->out));
	for (size_t k = 0; k < n; k++)
		ps->out[k] = ps->rev[n - 1 - k];
	const struct lp_stack *st = lp_dict__stack(ps->dict, ps->out, n);
	if (!e->stack && ++ps->scache_count * 2 > ps->scache_cap &&
	    ps->scache_cap < STACK_CACHE_MAX) {
		/* double it; of two entries that meet, the first stays */
		size_t ncap = ps->scache_cap * 2, count = 0;
		struct stack_ent *nc = lp_calloc(ncap, sizeof(*nc));
		for (size_t j = 0; j < ps->scache_cap; j++) {
			struct stack_ent *o = &ps->scache[j];
			struct stack_ent *x = &nc[o->hash & (ncap - 1)];
			if (!o->stack || x->stack) {
				free(o->frames);
				continue;
			}
			*x = *o;
			count++;
		}
		free(ps->scache);
		ps->scache = nc;
		ps->scache_cap = ncap;
		ps->scache_count = count;
		e = &nc[hv & (ncap - 1)];
		if (!e->stack)
			ps->scache_count++;
	}
	grow((void **)&e->frames, &e->fcap, n ? n : 1, sizeof(*e->frames));
	if (bytes)	/* an empty stack's ps->rev may be NULL */
		memcpy(e->frames, ps->rev, bytes);
	e->hash = hv;
	e->n = n;
	e->stack = st;
	return st;
}

/* One -F+srcline line for the next pending piece: s/\[.*?\]//g, then
 * blanks trimmed at both ends. */
static void srcline_line(struct lp_perfscript *ps, const char *l, size_t len)
{
	size_t idx = ps->src.srcgot++;
	if (idx < ps->src.npend) {
		grow((void **)&ps->src.pbuf, &ps->src.pcap, ps->src.plen + len + 1, 1);
		char *d = ps->src.pbuf + ps->src.plen;
		size_t o = 0;
		for (size_t i = 0; i < len; i++) {
			if (l[i] == '[') {
				const char *close = memchr(l + i + 1, ']', len - i - 1);
				if (close) {
					i = close - l;
					continue;
				}
			}
			d[o++] = l[i];
		}
		size_t s = 0;
		while (s < o && pl_space(d[s]))
			s++;
		while (o > s && pl_space(d[o - 1]))
			o--;
		memmove(d, d + s, o - s);
		d[o - s] = '\0';
		ps->src.pend[idx].src = ps->src.plen;
		ps->src.plen += o - s + 1;
	}
	if (ps->src.srcgot == ps->src.srcneed) {
		intern_pending(ps, ps->src.npend);
		push_frames(ps, ps->tmp, ps->src.npend);
		ps->src.srcneed = ps->src.srcgot = 0;
	}
}

/* The codec's next (codec.h): one line.  A sample ends at a blank line
 * only: one still open at the end of input is dropped, as the script does
 * (the last line of a file without a final newline cannot end one).  A
 * line not understood is skipped with a warning, as the script skips it. */
static int perf_next(void *dec, char *line, size_t len, bool terminated, struct lp_record *rec,
		     const char **why)
{
	struct lp_perfscript *ps = dec;
	struct lp_sample *out = &rec->sample;
	if (memchr(line, '\0', len)) {
		*why = "NUL byte in a line";
		return LP_CODEC_SKIP;
	}
	if (ps->src.srcneed) {
		/* `$_ = <>`: the next line is the source line, whatever it is */
		srcline_line(ps, line, len);
		return 0;
	}
	if (len && line[0] == '#')
		return 0;
	if (len == 0) {
		if (!ps->s.open)
			return 0;	/* `next if not $pname` */
		memset(out, 0, sizeof(*out));
		out->time_ns = ps->s.time_ns;
		out->pid = ps->s.pid;
		out->tid = ps->s.tid;
		out->cpu = ps->s.cpu;
		out->comm = lp_dict__string(ps->dict, ps->s.comm, ps->s.comm_len);
		out->event = ps->event ? ps->event : "";
		out->weight = ps->s.weight;
		out->stack = intern_stack(ps);
		out->attrs.text = "";
		out->attrs.len = 0;
		ps->nrev = 0;
		ps->s.open = false;
		rec->kind = LP_REC_SAMPLE;
		return 1;
	}
	if (event_line(ps, line, len))
		return 0;
	/* The line cache first: a line seen before needs no parsing.  Its
	 * key starts after the leading blanks, which change nothing. */
	uint64_t hv = 0;
	size_t slot = NO_SLOT;
	if (ps->cache_skip) {
		ps->cache_skip--;
	} else if (!ps->opts.srcline) {
		size_t p = 0;
		while (p < len && pl_space(line[p]))
			p++;
		struct cache_ent *e = cache_probe(ps, line + p, len - p, ps->s.java, &hv, &slot);
		/* Lines that never repeat (unsymbolized JIT code) make the
		 * cache a cost: when under 1 in 16 probes hits, rest it. */
		if (++ps->cache_probes == 1u << 16) {
			if (ps->cache_hits < ps->cache_probes / 16)
				ps->cache_skip = 1u << 20;
			ps->cache_probes = ps->cache_hits = 0;
		}
		if (e) {
			ps->cache_hits++;
			if (ps->s.open)
				push_frames(ps, e->frames, e->nframes);
			return 0;
		}
	}
	struct frmatch m;
	if (match_frame_line(line, len, &m)) {
		if (ps->s.open)
			frame_line(ps, line, len, &m, hv, slot);
		return 0;
	}
	*why = "unrecognized line";
	return LP_CODEC_SKIP;
}

int lp_perfscript__sniff(const char *line, size_t len)
{
	struct evmatch m;
	return lp_perfscript_match_event_line(line, len, &m);
}

/* --- the codec ---------------------------------------------------------- */

static void *perf_open(struct lp_dict *dict, const struct lp_input_opts *opts)
{
	return lp_perfscript__new(dict, opts);
}

static void perf_close(void *dec)
{
	lp_perfscript__free(dec);
}

const struct lp_codec lp_codec_perf = {
	.name = "perf", .format = LP_INPUT_PERF, .sniff = lp_perfscript__sniff,
	.open = perf_open, .next = perf_next, .close = perf_close,
};
