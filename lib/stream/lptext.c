/* lptext.c - the lp text stream (formats/lp-stream.md): its decoder, the
 * codec lp_codec_lp, and its writer (lptext.h).  The only file that knows
 * the text of a record. */
#include "stream/lptext.h"
#include "stream/attrs.h"
#include "stream/codec.h"
#include "model/dict.h"
#include "base/digits.h"
#include "base/hashmap.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- reading -------------------------------------------------------- */

static const char *const record_kinds[] = {
	[LP_REC_FRAME] = "frame", [LP_REC_STACK] = "stack", [LP_REC_SAMPLE] = "sample",
	[LP_REC_SPAN] = "span", [LP_REC_EVENT] = "event", [LP_REC_LOST] = "lost",
	[LP_REC_COST] = "cost", [LP_REC_PROBE] = "probe",
};

/* A line that only an lp stream has: the header, or a record of a known
 * kind (so `grep ^span` output still reads as a stream). */
static int lp_text__sniff(const char *line, size_t len)
{
	/* The kinds that are most of a stream first, without a loop. */
	if (len > 6 && !memcmp(line, "sample\t", 7))
		return 1;
	if (len > 4 && !memcmp(line, "span\t", 5))
		return 1;
	if (len >= strlen(LP_STREAM_MAGIC) && !memcmp(line, LP_STREAM_MAGIC, strlen(LP_STREAM_MAGIC)) &&
	    (line[strlen(LP_STREAM_MAGIC)] == '\t' || len == strlen(LP_STREAM_MAGIC)))
		return 1;
	for (size_t k = LP_REC_FRAME; k <= LP_REC_PROBE; k++) {
		size_t n = strlen(record_kinds[k]);
		if (len > n && !memcmp(line, record_kinds[k], n) && line[n] == '\t')
			return 1;
	}
	return 0;
}

/* Splits up to max tab-separated fields in place; the rest of the line
 * (after the last split tab) stays intact in *rest.  Returns the count. */
/* memchr(p, '\t', end - p) for the short fields of a record: a word at a
 * time inline rather than a call per field.  The lowest byte the zero-byte
 * test flags is always a true tab (false flags only follow a true one). */
static inline char *find_tab(char *p, char *end)
{
	const uint64_t ones = 0x0101010101010101ULL;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return memchr(p, '\t', end - p);
	while (end - p >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		x ^= ones * '\t';
		uint64_t m = (x - ones) & ~x & (ones * 0x80);
		if (m)
			return p + (__builtin_ctzll(m) >> 3);
		p += 8;
	}
	for (; p < end; p++)
		if (*p == '\t')
			return p;
	return NULL;
}

static size_t split_fields(char *line, size_t len, char **fields, size_t max,
			   char **rest, size_t *rest_len)
{
	size_t n = 0;
	char *p = line, *end = line + len;
	*rest = end;
	*rest_len = 0;
	while (n < max) {
		char *tab = find_tab(p, end);
		fields[n++] = p;
		if (!tab) {
			return n;
		}
		*tab = '\0';
		p = tab + 1;
	}
	*rest = p;
	*rest_len = end - p;
	return n;
}

static int parse_int(const char *s, int64_t *out)
{
	if (s[0] == '-' && s[1] == '\0') {
		*out = LP_TIME_NONE;
		return 0;
	}
	const char *p = s;
	int neg = 0;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (!*p)
		return -1;
	/* Up to 18 digits cannot overflow: no check per digit then. */
	uint64_t v = 0;
	const char *q = p;
	for (; *q; q++) {
		unsigned d = (unsigned char)*q - '0';
		if (d > 9)
			return -1;
		v = v * 10 + d;
	}
	if (q - p > 18) {
		v = 0;
		for (; *p; p++) {
			uint64_t nv = v * 10 + (uint64_t)(*p - '0');
			if (nv / 10 != v || nv > (uint64_t)INT64_MAX)
				return -1;
			v = nv;
		}
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* parse_int of a field whose length is known (the NUL is at s[len]):
 * timestamps, eight digits at a time in one word. */
static int parse_int_len(const char *s, size_t len, int64_t *out)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0xf0f0f0f0f0f0f0f0ULL;
	if (len < 8 || len > 18 || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return parse_int(s, out);
	uint64_t v = 0;
	size_t i = 0;
	for (; len - i >= 8; i += 8) {
		uint64_t x;
		memcpy(&x, s + i, 8);
		/* every byte '0'..'9': 0x3X, and still 0x3X after adding 6 */
		if ((x & high) != ones * 0x30 || ((x + ones * 6) & high) != ones * 0x30)
			return parse_int(s, out);
		x -= ones * '0';	/* the first digit is the lowest byte */
		x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffULL;
		x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffULL;
		x = (x * 10000 + (x >> 32)) & 0xffffffffULL;
		v = v * 100000000 + x;
	}
	for (; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return parse_int(s, out);
		v = v * 10 + d;
	}
	*out = (int64_t)v;
	return 0;
}

/* A time: "-" (LP_TIME_NONE) or ns from 0 to INT64_MAX (formats/lp-stream.md):
 * CLOCK_MONOTONIC is never negative, and with both ends in that range a
 * duration end - start cannot overflow. */
#define TIME_RANGE "times are 0 to 9223372036854775807 ns"
static int parse_time(const char *s, size_t len, int64_t *out)
{
	if (parse_int_len(s, len, out) < 0)
		return -1;
	return *out < 0 && *out != LP_TIME_NONE ? -1 : 0;
}

/* Why a time did not parse: its range when it is an integer. */
static const char *time_why(const char *s)
{
	const char *p = s + (*s == '-');
	return *p && strspn(p, "0123456789") == strlen(p) ? ": " TIME_RANGE : "";
}

static int parse_id32(const char *s, int32_t *out)
{
	int64_t v;
	if (parse_int(s, &v) < 0)
		return -1;
	if (v == LP_TIME_NONE) {
		*out = LP_ID_NONE;
		return 0;
	}
	if (v < 0 || v > INT32_MAX)
		return -1;
	*out = (int32_t)v;
	return 0;
}

/* Stream ids are 16 hex digits when written by lp; any other token is
 * hashed so hand-written streams can say "f1". */
static uint64_t id_key(const char *s)
{
	size_t n = strlen(s);
	uint64_t v = 0;
	if (n == 16) {
		int bad = 0;
		for (size_t i = 0; i < 16; i++) {
			int d = lp_hexval(s[i]);
			bad |= d;	/* negative once any byte is not a digit */
			v = v << 4 | (uint64_t)(d & 15);
		}
		if (bad >= 0)
			return lp_hashmap__key(v);
	}
	return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, s, n) ^ 0x5bd1e995);
}

static char *unescape_field(char *s)
{
	if (s[0] == '-' && !s[1])
		return "";	/* see put_field */
	/* one pass over a short name: the end, or a backslash */
	char *p = s;
	while (*p && *p != '\\')
		p++;
	if (*p) {
		size_t n = strlen(s);
		s[lp_unescape(s, s, n)] = '\0';
	}
	return s;
}

static void set_attrs(struct lp_attrs *a, char *rest, size_t len)
{
	a->text = len ? rest : "";
	a->len = len;
}

/* One input's decoder: ids as written in this input -> interned objects
 * (writers derive ids from content, but hand-written streams may use any
 * token). */
struct lp_dec {
	struct lp_dict *dict;
	struct lp_hashmap frame_ids, stack_ids;
	const struct lp_frame **scratch;
	size_t scratch_cap;
	char *value;		/* an attribute's value (lp_attrs__get) */
	size_t value_cap;
	char *msg;		/* why a line is bad */
	size_t msg_cap;
};

static void *lp_open(struct lp_dict *dict, const struct lp_input_opts *opts)
{
	struct lp_dec *r = lp_calloc(1, sizeof(*r));
	r->dict = dict;
	lp_hashmap__init(&r->frame_ids);
	lp_hashmap__init(&r->stack_ids);
	return r;
}

static void lp_close(void *dec)
{
	struct lp_dec *r = dec;
	if (!r)
		return;
	lp_hashmap__fini(&r->frame_ids);
	lp_hashmap__fini(&r->stack_ids);
	free(r->scratch);
	free(r->value);
	free(r->msg);
	free(r);
}

__attribute__((format(printf, 3, 4)))
static int bad(struct lp_dec *r, const char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	lp_grow(&r->msg, &r->msg_cap, (size_t)(n > 0 ? n : 0) + 1);
	va_start(ap, fmt);
	vsnprintf(r->msg, r->msg_cap, fmt, ap);
	va_end(ap);
	*why = r->msg;
	return LP_CODEC_BAD;
}

#define BAD(...) return bad(r, whyp, __VA_ARGS__)

/* One record kind each, from its line: 1, or -1 with *whyp (BAD). */
static int next_header(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	char *f[2], *rest;
	size_t rest_len, n = split_fields(line, len, f, 2, &rest, &rest_len);
	int64_t version;
	if (n < 2 || parse_int(f[1], &version) < 0 || version < 1)
		BAD("bad header: expected '%s<TAB>VERSION'", LP_STREAM_MAGIC);
	if (version > LP_STREAM_VERSION)
		BAD("stream version %lld is newer than this program's (%d)",
		    (long long)version, LP_STREAM_VERSION);
	rec->kind = LP_REC_HEADER;
	rec->header.version = (int)version;
	set_attrs(&rec->header.attrs, rest, rest_len);
	return 1;
}

/* A record's first n fields (f[0] its kind) split in place, and what
 * follows them, its attributes; -1 with *whyp when it has fewer. */
static int take_fields(struct lp_dec *r, char *line, size_t len, char **f, size_t n,
		       char **rest, size_t *rest_len, const char **whyp)
{
	size_t got = split_fields(line, len, f, n, rest, rest_len);
	if (got < n)
		BAD("%s: expected %zu fields, got %zu", f[0], n, got);
	return 0;
}

/* frame ID KIND ADDR MODULE SYMBOL SRCLINE [attrs] */
static int next_frame(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	char *f[7], *rest;
	size_t rest_len;
	if (take_fields(r, line, len, f, 7, &rest, &rest_len, whyp) < 0)
		return -1;
	if (strlen(f[2]) != 1 || !strchr("ukji", f[2][0]))
		BAD("frame: unknown kind '%s' (u, k, j or i)", f[2]);
	uint64_t addr = 0;
	const char *why;
	if (strcmp(f[3], "-") && lp_parse_addr(f[3], UINT64_MAX, &addr, &why) < 0)
		BAD("frame: address '%s': %s", f[3], why);
	struct lp_attrs attrs = { rest ? rest : "", rest ? rest_len : 0 };
	/* named=1: SYMBOL "-" is the empty name, not an unresolved one */
	bool named = attrs.len && lp_attrs__is(&attrs, "named", "1");
	ssize_t idlen = lp_attrs__get(&attrs, "build_id", &r->value, &r->value_cap);
	if (idlen >= 0 && (!idlen || strspn(r->value, "0123456789abcdef") != (size_t)idlen))
		BAD("frame: build_id '%s' is not lower-case hex", r->value);
	/* lp=1: lp's own code (lpframe.h), also when this reader's table does
	 * not know the symbol */
	bool lp = attrs.len && lp_attrs__is(&attrs, "lp", "1");
	struct lp_frame proto = {
		.kind = f[2][0], .addr = addr, .module = unescape_field(f[4]),
		.symbol = unescape_field(f[5]), .srcline = unescape_field(f[6]),
		.build_id = idlen > 0 ? r->value : "", .named = named, .lp = lp,
	};
	const struct lp_frame *fr = lp_dict__frame_copy(r->dict, &proto);
	lp_hashmap__put(&r->frame_ids, id_key(f[1]), (void *)fr);
	rec->kind = LP_REC_FRAME;
	rec->frame = fr;
	return 1;
}

/* stack ID FRAMEID,FRAMEID,... */
static int next_stack(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	char *f[3], *rest;
	size_t rest_len;
	if (take_fields(r, line, len, f, 3, &rest, &rest_len, whyp) < 0)
		return -1;
	size_t nf = 0;
	if (strcmp(f[2], "-") && f[2][0]) {
		for (char *p = f[2]; p; nf++) {
			char *comma = strchr(p, ',');
			if (comma)
				*comma = '\0';
			if (nf == r->scratch_cap) {
				r->scratch_cap = r->scratch_cap ? 2 * r->scratch_cap : 64;
				r->scratch = lp_reallocarray(r->scratch, r->scratch_cap,
							     sizeof(*r->scratch));
			}
			r->scratch[nf] = lp_hashmap__get(&r->frame_ids, id_key(p));
			if (!r->scratch[nf])
				BAD("stack: frame '%s' is not defined before its use", p);
			p = comma ? comma + 1 : NULL;
		}
	}
	const struct lp_stack *st = lp_dict__stack(r->dict, r->scratch, nf);
	lp_hashmap__put(&r->stack_ids, id_key(f[1]), (void *)st);
	rec->kind = LP_REC_STACK;
	rec->stack = st;
	return 1;
}

/* sample TIME PID TID CPU COMM EVENT WEIGHT STACK [attrs] */
static int next_sample(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	struct lp_sample *s = &rec->sample;
	char *f[9], *rest;
	size_t rest_len;
	if (take_fields(r, line, len, f, 9, &rest, &rest_len, whyp) < 0)
		return -1;
	if (parse_time(f[1], f[2] - f[1] - 1, &s->time_ns) < 0)
		BAD("sample: bad time '%s'%s", f[1], time_why(f[1]));
	if (parse_id32(f[2], &s->pid) < 0 || parse_id32(f[3], &s->tid) < 0 ||
	    parse_id32(f[4], &s->cpu) < 0)
		BAD("sample: bad pid, tid or cpu");
	s->comm = unescape_field(f[5]);
	s->event = unescape_field(f[6]);
	const char *why;
	int64_t iw;
	if (parse_int(f[7], &iw) == 0 && iw >= 0)	/* the common case, without strtod */
		s->weight = (double)iw;
	else if (lp_parse_double(f[7], &s->weight, &why) < 0 || s->weight < 0)
		BAD("sample: bad weight '%s'", f[7]);
	if (!strcmp(f[8], "-")) {
		s->stack = lp_dict__stack(r->dict, NULL, 0);
	} else {
		s->stack = lp_hashmap__get(&r->stack_ids, id_key(f[8]));
		if (!s->stack)
			BAD("sample: stack '%s' is not defined before its use", f[8]);
	}
	set_attrs(&s->attrs, rest, rest_len);
	rec->kind = LP_REC_SAMPLE;
	return 1;
}

/* span START END PID TID PROBE DEPTH [attrs] */
static int next_span(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	struct lp_span *sp = &rec->span;
	char *f[7], *rest;
	size_t rest_len;
	int64_t depth;
	if (take_fields(r, line, len, f, 7, &rest, &rest_len, whyp) < 0)
		return -1;
	if (parse_time(f[1], f[2] - f[1] - 1, &sp->start_ns) < 0 ||
	    sp->start_ns == LP_TIME_NONE)
		BAD("span: bad start '%s'%s", f[1], time_why(f[1]));
	if (parse_time(f[2], f[3] - f[2] - 1, &sp->end_ns) < 0)
		BAD("span: bad end '%s'%s", f[2], time_why(f[2]));
	if (sp->end_ns != LP_TIME_NONE && sp->end_ns < sp->start_ns)
		BAD("span: ends (%s) before it starts (%s)", f[2], f[1]);
	if (parse_id32(f[3], &sp->pid) < 0 || parse_id32(f[4], &sp->tid) < 0)
		BAD("span: bad pid or tid");
	sp->probe = unescape_field(f[5]);
	if (parse_int(f[6], &depth) < 0 || depth < 0 || depth > INT32_MAX)
		BAD("span: bad depth '%s'", f[6]);
	sp->depth = (int32_t)depth;
	set_attrs(&sp->attrs, rest, rest_len);
	rec->kind = LP_REC_SPAN;
	return 1;
}

/* event TIME PID TID PROBE [attrs] */
static int next_event(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	struct lp_event *ev = &rec->event;
	char *f[5], *rest;
	size_t rest_len;
	if (take_fields(r, line, len, f, 5, &rest, &rest_len, whyp) < 0)
		return -1;
	if (parse_time(f[1], strlen(f[1]), &ev->time_ns) < 0)
		BAD("event: bad time '%s'%s", f[1], time_why(f[1]));
	if (parse_id32(f[2], &ev->pid) < 0 || parse_id32(f[3], &ev->tid) < 0)
		BAD("event: bad pid or tid");
	ev->probe = unescape_field(f[4]);
	set_attrs(&ev->attrs, rest, rest_len);
	rec->kind = LP_REC_EVENT;
	return 1;
}

/* lost TIME WHAT COUNT */
static int next_lost(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	char *f[4], *rest;
	size_t rest_len;
	int64_t count;
	if (take_fields(r, line, len, f, 4, &rest, &rest_len, whyp) < 0)
		return -1;
	if (parse_time(f[1], strlen(f[1]), &rec->lost.time_ns) < 0)
		BAD("lost: bad time '%s'%s", f[1], time_why(f[1]));
	if (parse_int(f[3], &count) < 0 || count < 0)
		BAD("lost: bad count '%s'", f[3]);
	rec->lost.what = unescape_field(f[2]);
	rec->lost.count = (uint64_t)count;
	rec->kind = LP_REC_LOST;
	return 1;
}

/* cost TIME WHAT NS [attrs] */
static int next_cost(struct lp_dec *r, char *line, size_t len, struct lp_record *rec, const char **whyp)
{
	char *f[4], *rest;
	size_t rest_len;
	const char *why;
	if (take_fields(r, line, len, f, 4, &rest, &rest_len, whyp) < 0)
		return -1;
	if (parse_time(f[1], strlen(f[1]), &rec->cost.time_ns) < 0)
		BAD("cost: bad time '%s'%s", f[1], time_why(f[1]));
	if (lp_parse_double(f[3], &rec->cost.ns, &why) < 0 || !(rec->cost.ns >= 0) ||
	    isinf(rec->cost.ns))
		BAD("cost: bad ns '%s'", f[3]);
	rec->cost.what = unescape_field(f[2]);
	set_attrs(&rec->cost.attrs, rest, rest_len);
	rec->kind = LP_REC_COST;
	return 1;
}

/* probe TIME ACTION PROBE [attrs] */
static int next_probe(struct lp_dec *r, char *line, size_t len, struct lp_record *rec,
		      const char **whyp)
{
	char *f[4], *rest;
	size_t rest_len;
	if (take_fields(r, line, len, f, 4, &rest, &rest_len, whyp) < 0)
		return -1;
	if (parse_time(f[1], strlen(f[1]), &rec->mark.time_ns) < 0 ||
	    rec->mark.time_ns == LP_TIME_NONE)
		BAD("probe: bad time '%s'%s", f[1], time_why(f[1]));
	rec->mark.action = unescape_field(f[2]);
	rec->mark.probe = unescape_field(f[3]);
	set_attrs(&rec->mark.attrs, rest, rest_len);
	rec->kind = LP_REC_PROBE;
	return 1;
}

static int lp_next(void *dec, char *line, size_t len, bool terminated, struct lp_record *rec,
		   const char **whyp)
{
	struct lp_dec *r = dec;

	if (!terminated && len)
		BAD("last record has no newline: truncated stream?");
	/* Every CR before the LF, not only CRLF's: an unknown line goes out
	 * as it came, and must read back the same. */
	while (len && line[len - 1] == '\r')
		line[--len] = '\0';
	rec->line = line;
	rec->len = len;
	if (len == 0 || line[0] == '#' || !lp_text__sniff(line, len)) {
		rec->kind = LP_REC_OTHER;
		return 1;
	}
	if (memchr(line, '\0', len))
		BAD("NUL byte in a record");
	if (line[0] == 'l' && !strncmp(line, LP_STREAM_MAGIC, strlen(LP_STREAM_MAGIC)))
		return next_header(r, line, len, rec, whyp);
	switch (line[0]) {
	case 'f':
		return next_frame(r, line, len, rec, whyp);
	case 's':
		if (line[1] == 't')
			return next_stack(r, line, len, rec, whyp);
		if (line[1] == 'a')
			return next_sample(r, line, len, rec, whyp);
		return next_span(r, line, len, rec, whyp);
	case 'e':
		return next_event(r, line, len, rec, whyp);
	case 'l':
		return next_lost(r, line, len, rec, whyp);
	case 'c':
		return next_cost(r, line, len, rec, whyp);
	case 'p':
		return next_probe(r, line, len, rec, whyp);
	}
	rec->kind = LP_REC_OTHER;
	return 1;
}


const struct lp_codec lp_codec_lp = {
	.name = "lp", .format = LP_INPUT_LP, .sniff = lp_text__sniff,
	.open = lp_open, .next = lp_next, .close = lp_close,
};

/* --- writing -------------------------------------------------------- */

struct lp_writer {
	FILE *out;
	struct lp_hashmap emitted;	/* ids of frames written */
	struct lp_hashmap emitted_stacks;	/* ids of stacks written */
	char *buf;
	size_t len, cap;
	/* The last fractional weight and its text: a recorder writes the same
	 * period on every sample, and formatting it was ~3% of lp-record's
	 * CPU. */
	double weight;
	char weight_text[64];
	size_t weight_len;
	uint64_t stack_resets;	/* lp_writer__bound_stacks forgot them */
	uint64_t stack_bound;	/* its bound */
};

struct lp_writer *lp_writer__new(FILE *out)
{
	struct lp_writer *w = lp_calloc(1, sizeof(*w));
	w->out = out;
	lp_hashmap__init(&w->emitted);
	lp_hashmap__init(&w->emitted_stacks);
	w->cap = 4096;
	w->buf = lp_malloc(w->cap);
	return w;
}

void lp_writer__free(struct lp_writer *w)
{
	if (!w)
		return;
	lp_hashmap__fini(&w->emitted);
	lp_hashmap__fini(&w->emitted_stacks);
	free(w->buf);
	free(w);
}

static void grow(struct lp_writer *w, size_t more)
{
	while (w->len + more > w->cap)
		w->cap *= 2;
	w->buf = lp_realloc(w->buf, w->cap);
}

/* Inlined, so that the many short constant pieces of a record are stores
 * rather than calls. */
static inline __attribute__((always_inline)) void reserve(struct lp_writer *w, size_t more)
{
	if (__builtin_expect(w->len + more > w->cap, 0))
		grow(w, more);
}

static inline __attribute__((always_inline)) void put_raw(struct lp_writer *w, const char *s,
							   size_t n)
{
	reserve(w, n);
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

/* Bytes a field copies as they are: not NUL, not escaped. */
static const unsigned char plain_byte[256] = {
	[0x20 ... 0x5b] = 1, [0x5d ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

static void put_str(struct lp_writer *w, const char *s)
{
	/* Names (comm, event, probe) are short and need no escaping: copied
	 * in one pass, without measuring them first. */
	enum { SHORT = 64 };
	reserve(w, SHORT);
	char *d = w->buf + w->len;
	size_t i = 0;
	while (i < SHORT && plain_byte[(unsigned char)s[i]]) {
		d[i] = s[i];
		i++;
	}
	if (i < SHORT && !s[i]) {
		w->len += i;
		return;
	}
	size_t n = strlen(s);
	reserve(w, 4 * n + 2);
	w->len += lp_escape(w->buf + w->len, s, n);
}

/* A field is never empty: "" is written as "-", and a string that is
 * itself "-" as "\x2d", so the two read back apart. */
static void put_field(struct lp_writer *w, const char *s)
{
	put_raw(w, "\t", 1);
	if (!s || !*s)
		put_raw(w, "-", 1);
	else if (s[0] == '-' && !s[1])
		put_raw(w, "\\x2d", 4);
	else
		put_str(w, s);
}

static void put_int(struct lp_writer *w, int64_t v, int64_t none)
{
	if (v == none) {
		put_raw(w, "\t-", 2);
		return;
	}
	/* The digits go straight to their place: formatted elsewhere and
	 * copied with wide loads, they stalled on store forwarding. */
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
	size_t n = lp_digits_count(mag);
	reserve(w, n + 2);
	char *d = w->buf + w->len;
	*d++ = '\t';
	if (v < 0)
		*d++ = '-';
	lp_digits_before(d + n, mag);
	w->len = (size_t)(d + n - w->buf);
}

static void put_id(struct lp_writer *w, uint64_t id)
{
	reserve(w, 16);
	for (int i = 14; i >= 0; i -= 2, id >>= 8)
		memcpy(w->buf + w->len + i, lp_hex_pairs + 2 * (id & 0xff), 2);
	w->len += 16;
}

static void put_weight(struct lp_writer *w, double v)
{
	if (v >= 0 && v < 9e15 && v == (double)(uint64_t)v) {
		put_int(w, (int64_t)v, -1);
		return;
	}
	/* Compared bit for bit: -0.0 and NaN are formatted apart. */
	if (!w->weight_len || memcmp(&v, &w->weight, sizeof(v))) {
		w->weight = v;
		w->weight_len = lp_format_number(w->weight_text, sizeof(w->weight_text), v);
	}
	put_raw(w, "\t", 1);
	put_raw(w, w->weight_text, w->weight_len);
}

static void put_attrs(struct lp_writer *w, const struct lp_attrs *a)
{
	if (a->len) {
		put_raw(w, "\t", 1);
		put_raw(w, a->text, a->len);
	}
}

static int flush_line(struct lp_writer *w)
{
	put_raw(w, "\n", 1);
	size_t n = fwrite(w->buf, 1, w->len, w->out);
	w->len = 0;
	/* Reading the error flag needs no lock (fwrite took it). */
	return n == 0 || ferror_unlocked(w->out) ? -1 : 0;
}

int lp_writer__header(struct lp_writer *w, const struct lp_header *h)
{
	char tmp[32];
	put_raw(w, LP_STREAM_MAGIC, strlen(LP_STREAM_MAGIC));
	put_raw(w, tmp, snprintf(tmp, sizeof(tmp), "\t%d", h->version ? h->version : LP_STREAM_VERSION));
	put_attrs(w, &h->attrs);
	return flush_line(w);
}

int lp_writer__frame(struct lp_writer *w, const struct lp_frame *f)
{
	uint64_t key = lp_hashmap__key(f->id);
	if (lp_hashmap__get(&w->emitted, key))
		return 0;
	lp_hashmap__put(&w->emitted, key, (void *)f);
	char tmp[32];
	put_raw(w, "frame\t", 6);
	put_id(w, f->id);
	put_raw(w, tmp, snprintf(tmp, sizeof(tmp), "\t%c\t", f->kind));
	if (f->addr)
		put_raw(w, tmp, snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)f->addr));
	else
		put_raw(w, "-", 1);
	put_field(w, f->module);
	put_field(w, f->symbol);
	put_field(w, f->srcline);
	if (f->build_id && f->build_id[0]) {
		put_raw(w, "\tbuild_id=", 10);
		put_raw(w, f->build_id, strlen(f->build_id));
	}
	if (f->named)	/* its SYMBOL "-" is "", not unresolved */
		put_raw(w, "\tnamed=1", 8);
	if (f->lp)	/* lp's own code: readers need no table to know */
		put_raw(w, "\tlp=1", 5);
	return flush_line(w);
}

int lp_writer__stack(struct lp_writer *w, const struct lp_stack *s)
{
	uint64_t key = lp_hashmap__key(s->id);
	if (lp_hashmap__get(&w->emitted_stacks, key))
		return 0;
	for (size_t i = 0; i < s->nframes; i++)
		if (lp_writer__frame(w, s->frames[i]) < 0)
			return -1;
	lp_hashmap__put(&w->emitted_stacks, key, (void *)s);
	put_raw(w, "stack\t", 6);
	put_id(w, s->id);
	put_raw(w, "\t", 1);
	if (!s->nframes)
		put_raw(w, "-", 1);
	for (size_t i = 0; i < s->nframes; i++) {
		if (i)
			put_raw(w, ",", 1);
		put_id(w, s->frames[i]->id);
	}
	return flush_line(w);
}

void lp_writer__forget_stacks(struct lp_writer *w)
{
	lp_hashmap__fini(&w->emitted_stacks);
	lp_hashmap__init(&w->emitted_stacks);
}

bool lp_writer__bound_stacks(struct lp_writer *w, struct lp_dict *dict, uint64_t max_bytes)
{
	if (lp_dict__stacks_bytes(dict) <= max_bytes)
		return false;
	lp_dict__forget_stacks(dict);
	lp_writer__forget_stacks(w);
	w->stack_resets++;
	w->stack_bound = max_bytes;
	return true;
}

void lp_writer__stacks_note(const struct lp_writer *w)
{
	if (w->stack_resets)
		lp_error("the stacks seen took more than --stack-memory %" PRIu64 " bytes %" PRIu64
			 " times: forgotten each time, and their definitions written again when next used",
			 w->stack_bound, w->stack_resets);
}

int lp_writer__sample(struct lp_writer *w, const struct lp_sample *s)
{
	if (s->stack && lp_writer__stack(w, s->stack) < 0)
		return -1;
	put_raw(w, "sample", 6);
	put_int(w, s->time_ns, LP_TIME_NONE);
	put_int(w, s->pid, LP_ID_NONE);
	put_int(w, s->tid, LP_ID_NONE);
	put_int(w, s->cpu, LP_ID_NONE);
	put_field(w, s->comm);
	put_field(w, s->event);
	put_weight(w, s->weight);
	put_raw(w, "\t", 1);
	if (s->stack)
		put_id(w, s->stack->id);
	else
		put_raw(w, "-", 1);
	put_attrs(w, &s->attrs);
	return flush_line(w);
}

int lp_writer__span(struct lp_writer *w, const struct lp_span *s)
{
	put_raw(w, "span", 4);
	put_int(w, s->start_ns, LP_TIME_NONE);
	put_int(w, s->end_ns, LP_TIME_NONE);
	put_int(w, s->pid, LP_ID_NONE);
	put_int(w, s->tid, LP_ID_NONE);
	put_field(w, s->probe);
	put_int(w, s->depth, LP_ID_NONE);
	put_attrs(w, &s->attrs);
	return flush_line(w);
}

int lp_writer__event(struct lp_writer *w, const struct lp_event *e)
{
	put_raw(w, "event", 5);
	put_int(w, e->time_ns, LP_TIME_NONE);
	put_int(w, e->pid, LP_ID_NONE);
	put_int(w, e->tid, LP_ID_NONE);
	put_field(w, e->probe);
	put_attrs(w, &e->attrs);
	return flush_line(w);
}

int lp_writer__lost(struct lp_writer *w, const struct lp_lost *l)
{
	put_raw(w, "lost", 4);
	put_int(w, l->time_ns, LP_TIME_NONE);
	put_field(w, l->what);
	put_int(w, (int64_t)l->count, -1);
	return flush_line(w);
}

int lp_writer__cost(struct lp_writer *w, const struct lp_cost *c)
{
	put_raw(w, "cost", 4);
	put_int(w, c->time_ns, LP_TIME_NONE);
	put_field(w, c->what);
	put_weight(w, c->ns);
	put_attrs(w, &c->attrs);
	return flush_line(w);
}

int lp_writer__probe(struct lp_writer *w, const struct lp_probe_mark *m)
{
	put_raw(w, "probe", 5);
	put_int(w, m->time_ns, LP_TIME_NONE);
	put_field(w, m->action);
	put_field(w, m->probe);
	put_attrs(w, &m->attrs);
	return flush_line(w);
}

int lp_writer__record(struct lp_writer *w, const struct lp_record *rec)
{
	switch (rec->kind) {
	case LP_REC_HEADER: return lp_writer__header(w, &rec->header);
	case LP_REC_FRAME: return lp_writer__frame(w, rec->frame);
	case LP_REC_STACK: return lp_writer__stack(w, rec->stack);
	case LP_REC_SAMPLE: return lp_writer__sample(w, &rec->sample);
	case LP_REC_SPAN: return lp_writer__span(w, &rec->span);
	case LP_REC_EVENT: return lp_writer__event(w, &rec->event);
	case LP_REC_LOST: return lp_writer__lost(w, &rec->lost);
	case LP_REC_COST: return lp_writer__cost(w, &rec->cost);
	case LP_REC_PROBE: return lp_writer__probe(w, &rec->mark);
	case LP_REC_OTHER:
		put_raw(w, rec->line, rec->len);
		return flush_line(w);
	}
	return 0;
}

