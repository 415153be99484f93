/* diff.c - see diff.h.  The folded output follows FlameGraph's difffolded.pl
 * (commit 41fee1f) number for number; the report is lp's own. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "stream/folded.h"
#include "model/lpframe.h"
#include "model/profile.h"
#include "stream/stream.h"
#include "base/hashmap.h"
#include "base/util.h"

/* What a side's stream headers and samples say about how it was recorded.
 * Only the first value of each is kept; "" when never seen. */
struct side {
	char *name;
	char *period, *mode, *event;	/* NULL until a header says */
	char *sample_event;	/* the event kept (lp-collapse's filter), or NULL */
	double total;		/* sum of the weights, in input order (as Perl sums) */
	double samples;		/* number of samples (folded: the counts) */
	bool counted;		/* samples counted apart from weights (not folded) */
	double lp_samples;	/* samples with one of lp's own frames (lpframe.h) */
	double all_samples;	/* samples kept by group and event, lp's included */
};

struct lp_diff {
	struct lp_diff_opts opts;
	struct side side[2];
	struct lp_profile *weights;	/* what the folded output and the SVG show */
	struct lp_profile *counts;	/* sample counts: what the report tests */
	struct lp_profile *normalized;	/* built on demand by lp_diff__profile */
	char *buf, *buf2;
	size_t cap, cap2;
	char *value;		/* an attribute's value (lp_attrs__get) */
	size_t value_cap;
	struct lp_folded_units units;	/* what the weights are (folded.h) */
};

struct lp_diff *lp_diff__new(const struct lp_diff_opts *opts)
{
	struct lp_diff *d = lp_calloc(1, sizeof(*d));
	d->opts = *opts;
	d->weights = lp_profile__new();
	d->counts = lp_profile__new();
	if (!d->weights || !d->counts) {
		lp_diff__free(d);
		return NULL;
	}
	return d;
}

void lp_diff__free(struct lp_diff *d)
{
	if (!d)
		return;
	for (int i = 0; i < 2; i++) {
		free(d->side[i].name);
		free(d->side[i].sample_event);
		free(d->side[i].period);
		free(d->side[i].mode);
		free(d->side[i].event);
	}
	free(d->value);
	lp_profile__free(d->weights);
	lp_profile__free(d->counts);
	lp_profile__free(d->normalized);
	free(d->buf);
	free(d->buf2);
	free(d);
}

static void note_header(struct lp_diff *d, struct side *s, const struct lp_header *h)
{
	struct {
		const char *key;
		char **dst;
	} keys[] = {
		{ "period_ns", &s->period }, { "mode", &s->mode }, { "event", &s->event },
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!*keys[i].dst && lp_attrs__get(&h->attrs, keys[i].key, &d->value,
						   &d->value_cap) > 0)
			*keys[i].dst = lp_strdup(d->value);
}

/* lp-collapse's sample filter, as stackcollapse-perf.pl's: one event per
 * input, the one asked for or else the first seen; samples whose event is
 * not known always pass. */
static int keep_event(const struct lp_diff *d, struct side *s, const char *event)
{
	if (!event || !*event)
		return 1;
	if (!s->sample_event)
		s->sample_event = lp_strdup(d->opts.event_filter ? d->opts.event_filter : event);
	return !strcmp(s->sample_event, event);
}

/* Folded input is taken verbatim, as difffolded.pl takes it: the frames
 * joined with ';' as they were read. */
static size_t join_frames(struct lp_diff *d, const struct lp_stack *st)
{
	size_t len = 0;
	for (size_t i = 0; st && i < st->nframes; i++) {
		const char *sym = st->frames[i]->symbol;
		size_t n = strlen(sym);
		lp_grow(&d->buf, &d->cap, len + n + 2);
		if (i)
			d->buf[len++] = ';';
		memcpy(d->buf + len, sym, n);
		len += n;
	}
	lp_grow(&d->buf, &d->cap, len + 1);
	d->buf[len] = '\0';
	return len;
}

static int ishex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* difffolded.pl's s/0x[0-9a-fA-F]+/0x.../g on d->buf; returns the new length. */
static size_t strip_hex(struct lp_diff *d, size_t len)
{
	lp_grow(&d->buf2, &d->cap2, 2 * len + 4);
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		if (i + 2 < len && d->buf[i] == '0' && d->buf[i + 1] == 'x' &&
		    ishex(d->buf[i + 2])) {
			i += 2;
			while (i < len && ishex(d->buf[i]))
				i++;
			memcpy(d->buf2 + o, "0x...", 5);
			o += 5;
		} else {
			d->buf2[o++] = d->buf[i++];
		}
	}
	d->buf2[o] = '\0';
	char *t = d->buf;
	size_t c = d->cap;
	d->buf = d->buf2;
	d->cap = d->cap2;
	d->buf2 = t;
	d->cap2 = c;
	return o;
}

/* Stream and perf script samples become folded stacks exactly as lp-collapse
 * makes them: summed by lp_folded_agg (each distinct stack formatted once),
 * then stripped of hex numbers when asked. */
static void flush(struct lp_diff *d, struct lp_folded_agg *a, struct lp_profile *p, int side)
{
	if (!d->opts.strip_hex) {
		lp_folded_agg__flush(a, p, side);
		return;
	}
	struct lp_profile *tmp = lp_profile__new();
	lp_folded_agg__flush(a, tmp, 0);
	size_t n;
	const struct lp_profile_entry *const *e = lp_profile__sorted(tmp, &n);
	for (size_t i = 0; i < n; i++) {
		lp_grow(&d->buf, &d->cap, e[i]->len + 1);
		memcpy(d->buf, e[i]->stack, e[i]->len);
		d->buf[e[i]->len] = '\0';
		size_t len = strip_hex(d, e[i]->len);
		lp_profile__add(p, d->buf, len, e[i]->kinds, side, e[i]->weight[0]);
	}
	lp_profile__free(tmp);
}

/* lp-split --label's group, when sides are chosen by group. */
static int keep_group(const struct lp_diff *d, int side, const struct lp_sample *smp)
{
	const char *want = d->opts.groups[side];
	return !want || lp_attrs__is(&smp->attrs, "group", want);
}

/* Reads one input into the sides in mask (bit 0: side 0, bit 1: side 1):
 * both when standard input is both profiles. */
static int read_input(struct lp_diff *d, const char *path, int mask)
{
	/* What stackcollapse-perf.pl decides while reading perf script. */
	struct lp_input_opts io = {
		.perf = {
			.srcline = d->opts.folded && d->opts.folded->srcline,
			.event_filter = d->opts.event_filter ? d->opts.event_filter : "",
		},
	};
	struct lp_reader *r = lp_reader__open_opts(path, d->opts.input_format, &io);
	if (!r)
		return -1;
	for (int side = 0; side < 2; side++) {
		if (!(mask & (1 << side)))
			continue;
		free(d->side[side].name);
		d->side[side].name = lp_strdup(path);
	}
	lp_profile__free(d->normalized);
	d->normalized = NULL;

	static const struct lp_folded_opts defaults;
	const struct lp_folded_opts *fo = d->opts.folded ? d->opts.folded : &defaults;
	struct lp_folded_agg *weights[2] = { NULL, NULL }, *counts[2] = { NULL, NULL };
	struct lp_record rec;
	int ret;
	lp_folded_units__input(&d->units);
	while ((ret = lp_reader__next(r, &rec)) > 0) {
		if (rec.kind == LP_REC_HEADER) {
			lp_folded_units__header(&d->units, &rec.header);
			for (int side = 0; side < 2; side++)
				if (mask & (1 << side))
					note_header(d, &d->side[side], &rec.header);
			continue;
		}
		if (rec.kind != LP_REC_SAMPLE)
			continue;
		/* A cpu recording's weights are its sample counts. */
		rec.sample.weight = lp_folded_units__count(&d->units, &rec.sample);
		const struct lp_sample *smp = &rec.sample;
		int folded = lp_reader__format(r) == LP_INPUT_FOLDED;
		bool has_lp = lp_stack__has_lp(smp->stack);
		size_t len = 0;
		if (folded) {
			len = join_frames(d, smp->stack);
			if (d->opts.strip_hex)
				len = strip_hex(d, len);
		}
		for (int side = 0; side < 2; side++) {
			struct side *s = &d->side[side];
			if (!(mask & (1 << side)) || !keep_group(d, side, smp) ||
			    !keep_event(d, s, smp->event))
				continue;
			/* lp's own cost is not a difference between the
			 * profiles: left out of the ranking and the graph,
			 * counted for the report's line.  Folded text has no
			 * kernel frames to tell (all are named user frames). */
			double n = folded ? smp->weight : 1;
			s->all_samples += n;
			if (has_lp && !d->opts.lp_frames) {
				s->lp_samples += n;
				continue;
			}
			s->lp_samples += has_lp ? n : 0;
			s->total += smp->weight;
			if (folded) {
				/* Taken verbatim; the counts are the only sample
				 * counts known, and are kept once, as the weights. */
				lp_profile__add(d->weights, d->buf, len, NULL, side, smp->weight);
				s->samples += smp->weight;
				continue;
			}
			if (!weights[side]) {
				weights[side] = lp_folded_agg__new(fo);
				counts[side] = lp_folded_agg__new(fo);
			}
			lp_folded_agg__add(weights[side], smp);
			struct lp_sample one = *smp;
			one.weight = 1;
			lp_folded_agg__add(counts[side], &one);
			s->samples += 1;
			s->counted = true;
		}
	}
	for (int side = 0; side < 2; side++) {
		/* The aggregates point into the reader's dictionary: flush first. */
		if (weights[side] && ret == 0) {
			flush(d, weights[side], d->weights, side);
			flush(d, counts[side], d->counts, side);
		}
		lp_folded_agg__free(weights[side]);
		lp_folded_agg__free(counts[side]);
	}
	lp_reader__free(r);
	return ret < 0 ? -1 : 0;
}

int lp_diff__read(struct lp_diff *d, int side, const char *path)
{
	return read_input(d, path, 1 << side);
}

int lp_diff__read_both(struct lp_diff *d, const char *path)
{
	return read_input(d, path, 3);
}

/* "1000" and "1000.0" are one period; anything unparsable compares as text. */
static bool same_number(const char *a, const char *b)
{
	double x, y;
	const char *why;
	if (lp_parse_double(a, &x, &why) < 0 || lp_parse_double(b, &y, &why) < 0)
		return !strcmp(a, b);
	return x == y;
}

int lp_diff__check(const struct lp_diff *d)
{
	const struct side *a = &d->side[0], *b = &d->side[1];
	const char *an = a->name ? a->name : "-", *bn = b->name ? b->name : "-";
	if (d->opts.normalize) {
		/* difffolded.pl dies dividing by zero here, printing nothing */
		if (a->total == 0 && b->total != 0) {
			lp_error("%s has no samples: cannot normalize it to %s", an, bn);
			return -1;
		}
		return 0;
	}
	if (a->period && b->period && !same_number(a->period, b->period)) {
		lp_error("%s and %s were recorded at different periods (%s ns vs %s ns): use --normalize",
			 an, bn, a->period, b->period);
		return -1;
	}
	if (a->mode && b->mode && strcmp(a->mode, b->mode)) {
		lp_error("%s and %s were recorded in different modes (%s vs %s): use --normalize",
			 an, bn, a->mode, b->mode);
		return -1;
	}
	const char *ae = a->event ? a->event : a->sample_event ? a->sample_event : "";
	const char *be = b->event ? b->event : b->sample_event ? b->sample_event : "";
	if (*ae && *be && strcmp(ae, be)) {
		lp_error("%s and %s were recorded on different events (%s vs %s): use --normalize",
			 an, bn, ae, be);
		return -1;
	}
	return 0;
}

/* difffolded.pl: with -n and different totals, before's count becomes
 * int(count * total2 / total1), in that order of operations. */
static double scaled(const struct lp_diff *d, double c1)
{
	double t1 = d->side[0].total, t2 = d->side[1].total;
	if (!d->opts.normalize || t1 == t2)
		return c1;
	if (t1 == 0)	/* refused by lp_diff__check */
		return 0;
	return trunc(c1 * t2 / t1);
}

/* Lines are sorted as whole lines, bytewise (LC_ALL=C sort), not by stack:
 * the two orders differ when a stack is another one followed by a byte at
 * or below ' ' ("a" and "a b", "a" and "a\tb"), and difffolded.pl's output
 * is compared after sort. */
struct line {
	size_t off, len;
};

/* arg: the text the lines are in. */
static int cmp_line(const void *a, const void *b, void *arg)
{
	const struct line *x = a, *y = b;
	const char *lines = arg;
	int c = memcmp(lines + x->off, lines + y->off, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

const char *lp_diff__ns(const struct lp_diff *d)
{
	return lp_folded_units__ns(&d->units);
}

int lp_diff__write_folded(struct lp_diff *d, FILE *out)
{
	if (lp_diff__ns(d) && lp_folded__ns_comment(out, "lp-diff", lp_diff__ns(d)) < 0)
		return -1;
	size_t n;
	const struct lp_profile_entry *const *e = lp_profile__sorted(d->weights, &n);
	struct line *lines = lp_calloc(n + 1, sizeof(*lines));
	char *text = NULL;
	size_t len = 0, cap = 0;
	for (size_t i = 0; i < n; i++) {
		char a[64], b[64];
		lp_format_number(a, sizeof(a), scaled(d, e[i]->weight[0]));
		lp_format_number(b, sizeof(b), e[i]->weight[1]);
		size_t la = strlen(a), lb = strlen(b);
		lp_grow(&text, &cap, len + e[i]->len + la + lb + 3);
		lines[i].off = len;
		memcpy(text + len, e[i]->stack, e[i]->len);
		len += e[i]->len;
		text[len++] = ' ';
		memcpy(text + len, a, la);
		len += la;
		text[len++] = ' ';
		memcpy(text + len, b, lb);
		len += lb;
		lines[i].len = len - lines[i].off;
	}
	qsort_r(lines, n, sizeof(*lines), cmp_line, text);
	int ret = 0;
	for (size_t i = 0; i < n && !ret; i++)
		if (fwrite(text + lines[i].off, 1, lines[i].len, out) != lines[i].len ||
		    putc('\n', out) == EOF)
			ret = -1;
	free(lines);
	free(text);
	return ret;
}

struct lp_profile *lp_diff__profile(struct lp_diff *d)
{
	if (!d->opts.normalize)
		return d->weights;
	if (d->normalized)
		return d->normalized;
	d->normalized = lp_profile__new();
	size_t n;
	const struct lp_profile_entry *const *e = lp_profile__sorted(d->weights, &n);
	for (size_t i = 0; i < n; i++) {
		lp_profile__add(d->normalized, e[i]->stack, e[i]->len, e[i]->kinds, 0,
				scaled(d, e[i]->weight[0]));
		lp_profile__add(d->normalized, e[i]->stack, e[i]->len, e[i]->kinds, 1,
				e[i]->weight[1]);
	}
	return d->normalized;
}

/* --- statistics ---------------------------------------------------------- */

double lp_diff__two_prop_p(double x1, double n1, double x2, double n2)
{
	if (!(n1 > 0) || !(n2 > 0))
		return NAN;
	double p = (x1 + x2) / (n1 + n2);
	double var = p * (1 - p) * (1 / n1 + 1 / n2);
	double diff = x1 / n1 - x2 / n2;
	/* var is 0 only when both shares are 0 or both are 1: no change. */
	if (!(var > 0) || diff == 0)
		return 1;
	double z = diff / sqrt(var);
	return erfc(fabs(z) / M_SQRT2);
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;
	if (x->p != y->p)
		return (x->p > y->p) - (x->p < y->p);
	return (x->i > y->i) - (x->i < y->i);
}

void lp_diff__adjust(double *p, size_t n, enum lp_diff_adjust how)
{
	if (how == LP_DIFF_ADJUST_NONE)
		return;
	struct pidx *v = lp_calloc(n ? n : 1, sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]))
			v[m++] = (struct pidx){ p[i], i };
	qsort(v, m, sizeof(*v), cmp_pidx);
	if (how == LP_DIFF_ADJUST_HOLM) {
		/* step down: max over j <= k of (m - j) p(j) */
		double run = 0;
		for (size_t k = 0; k < m; k++) {
			double q = fmin(1, (double)(m - k) * v[k].p);
			run = fmax(run, q);
			p[v[k].i] = run;
		}
	} else {
		/* step up: min over j >= k of m p(j) / (j + 1) */
		double run = 1;
		for (size_t k = m; k-- > 0;) {
			double q = fmin(1, (double)m * v[k].p / (double)(k + 1));
			run = fmin(run, q);
			p[v[k].i] = run;
		}
	}
	free(v);
}

int lp_diff_adjust__parse(const char *name)
{
	if (!strcmp(name, "bh"))
		return LP_DIFF_ADJUST_BH;
	if (!strcmp(name, "holm"))
		return LP_DIFF_ADJUST_HOLM;
	if (!strcmp(name, "none"))
		return LP_DIFF_ADJUST_NONE;
	return -1;
}

/* --- the report ---------------------------------------------------------- */

struct fn {
	const char *name;
	size_t len;
	size_t stamp;		/* the last stack that counted this function's total */
	double self[2], total[2];
	double dself, dtotal, p;
};

struct fntab {
	struct fn *v;
	size_t n, cap;
	struct lp_hashmap map;	/* hash of the name -> index + 1 into v */
};

static struct fn *fntab_get(struct fntab *t, const char *name, size_t len)
{
	uint64_t h = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, name, len));
	void *v;
	for (size_t pos = 0; (v = lp_hashmap__next(&t->map, h, &pos));) {
		struct fn *f = &t->v[(uintptr_t)v - 1];
		if (f->len == len && !memcmp(f->name, name, len))
			return f;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->v = lp_reallocarray(t->v, t->cap, sizeof(*t->v));
	}
	struct fn *f = &t->v[t->n];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->len = len;
	lp_hashmap__add(&t->map, h, (void *)(uintptr_t)++t->n);
	return f;
}

static int significant(const struct fn *f, double alpha)
{
	return !isnan(f->p) && f->p < alpha;
}

/* Significant rows first; then the larger change (self or total, in share
 * points); then the larger self change (the function where the time is
 * spent ahead of its callers); then the smaller p; then the name. */
static int cmp_fn(const void *a, const void *b, void *alpha)
{
	const struct fn *x = *(const struct fn *const *)a, *y = *(const struct fn *const *)b;
	int sx = significant(x, *(const double *)alpha), sy = significant(y, *(const double *)alpha);
	if (sx != sy)
		return sy - sx;
	double mx = fmax(fabs(x->dself), fabs(x->dtotal));
	double my = fmax(fabs(y->dself), fabs(y->dtotal));
	if (mx != my)
		return (mx < my) - (mx > my);
	if (fabs(x->dself) != fabs(y->dself))
		return (fabs(x->dself) < fabs(y->dself)) - (fabs(x->dself) > fabs(y->dself));
	double px = isnan(x->p) ? 2 : x->p, py = isnan(y->p) ? 2 : y->p;
	if (px != py)
		return (px > py) - (px < py);
	size_t l = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, l);
	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

static double share(double x, double n)
{
	return n > 0 ? 100 * x / n : 0;
}

/* Percentage points, without "-0.00". */
static double points(double v)
{
	return fabs(v) < 0.005 ? 0 : v;
}

static void format_p(char *buf, size_t size, double p)
{
	if (isnan(p))
		snprintf(buf, size, "-");
	else if (p < 1e-300)
		snprintf(buf, size, "<1e-300");
	else
		snprintf(buf, size, "%.2g", p);
}

/* A table row is one line: control bytes in a name are shown as \xHH. */
static void put_name(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

static const char *adjust_name(enum lp_diff_adjust a)
{
	switch (a) {
	case LP_DIFF_ADJUST_BH:
		return "Benjamini-Hochberg adjusted";
	case LP_DIFF_ADJUST_HOLM:
		return "Holm adjusted";
	default:
		return "not adjusted";
	}
}

/* Adds the self and total counts of every function of profile p, for the
 * sides in mask (bit 0: side 0, bit 1: side 1).  *stamp numbers the stacks
 * across calls, so a function counts once per stack. */
static void count_functions(struct fntab *t, struct lp_profile *p, int mask, size_t *stamp)
{
	size_t n;
	const struct lp_profile_entry *const *e = lp_profile__sorted(p, &n);
	for (size_t i = 0; i < n; i++) {
		double w[2] = { mask & 1 ? e[i]->weight[0] : 0, mask & 2 ? e[i]->weight[1] : 0 };
		if (w[0] == 0 && w[1] == 0)
			continue;
		const char *s = e[i]->stack, *end = s + e[i]->len;
		struct fn *leaf = NULL;
		++*stamp;
		while (s <= end) {
			const char *semi = memchr(s, ';', (size_t)(end - s));
			if (!semi)
				semi = end;
			leaf = NULL;
			if (semi > s) {
				leaf = fntab_get(t, s, (size_t)(semi - s));
				/* recursion: a function counts once per stack */
				if (leaf->stamp != *stamp) {
					leaf->stamp = *stamp;
					leaf->total[0] += w[0];
					leaf->total[1] += w[1];
				}
			}
			s = semi + 1;
		}
		if (leaf) {
			leaf->self[0] += w[0];
			leaf->self[1] += w[1];
		}
	}
}

/* "# lp's own frames: ..." when a sample of either side held one: how many,
 * of all the side's samples, and whether they were left out. */
static void report_lp(const struct lp_diff *d, FILE *out)
{
	const struct side *a = &d->side[0], *b = &d->side[1];
	if (a->lp_samples == 0 && b->lp_samples == 0)
		return;
	char la[64], na[64], lb[64], nb[64];
	lp_format_number(la, sizeof(la), a->lp_samples);
	lp_format_number(na, sizeof(na), a->all_samples);
	lp_format_number(lb, sizeof(lb), b->lp_samples);
	lp_format_number(nb, sizeof(nb), b->all_samples);
	fprintf(out, "# lp's own frames (probe and sample handling) in A: %s of %s samples (%.2f%%),"
		     " in B: %s of %s (%.2f%%): %s\n",
		la, na, share(a->lp_samples, a->all_samples), lb, nb,
		share(b->lp_samples, b->all_samples),
		d->opts.lp_frames ? "kept (--lp-frames)" : "left out (--lp-frames keeps them)");
}

/* The functions ranked (the report's order), in *rows, each with its
 * counts, changes and adjusted p-value; *ntests the tests adjusted over.
 * Returns the number of rows (0 for empty inputs: *rows NULL). */
size_t lp_diff__rows(struct lp_diff *d, const struct lp_diff_report_opts *o,
		     struct lp_diff_row **rows_out, size_t *ntests_out)
{
	double N[2] = { d->side[0].samples, d->side[1].samples };

	*rows_out = NULL;
	*ntests_out = 0;
	if (lp_profile__count(d->weights) == 0)
		return 0;
	/* Folded sides' counts are their weights; the others' are in counts. */
	struct fntab t = { 0 };
	lp_hashmap__init(&t.map);
	size_t stamp = 0;
	int counted = (d->side[0].counted ? 1 : 0) | (d->side[1].counted ? 2 : 0);
	count_functions(&t, d->weights, 3 & ~counted, &stamp);
	count_functions(&t, d->counts, counted, &stamp);

	/* Two tests per function; a test with no sample on either side (the
	 * self of a function that is never a leaf) carries no information and
	 * is left out of the adjustment. */
	double *p = lp_calloc(2 * t.n + 1, sizeof(*p));
	size_t ntests = 0;
	for (size_t i = 0; i < t.n; i++) {
		struct fn *f = &t.v[i];
		p[2 * i] = f->self[0] == 0 && f->self[1] == 0
				   ? NAN
				   : lp_diff__two_prop_p(f->self[0], N[0], f->self[1], N[1]);
		p[2 * i + 1] = lp_diff__two_prop_p(f->total[0], N[0], f->total[1], N[1]);
		ntests += !isnan(p[2 * i]) + !isnan(p[2 * i + 1]);
		f->dself = share(f->self[1], N[1]) - share(f->self[0], N[0]);
		f->dtotal = share(f->total[1], N[1]) - share(f->total[0], N[0]);
	}
	lp_diff__adjust(p, 2 * t.n, o->adjust);
	struct fn **ranked = lp_calloc(t.n + 1, sizeof(*ranked));
	for (size_t i = 0; i < t.n; i++) {
		struct fn *f = &t.v[i];
		f->p = isnan(p[2 * i]) ? p[2 * i + 1]
		       : isnan(p[2 * i + 1]) ? p[2 * i]
		       : fmin(p[2 * i], p[2 * i + 1]);
		ranked[i] = f;
	}
	qsort_r(ranked, t.n, sizeof(*ranked), cmp_fn, (void *)&o->alpha);
	struct lp_diff_row *rows = lp_calloc(t.n + 1, sizeof(*rows));
	for (size_t i = 0; i < t.n; i++) {
		const struct fn *f = ranked[i];
		rows[i] = (struct lp_diff_row){
			.name = f->name, .len = f->len,
			.self = { f->self[0], f->self[1] }, .total = { f->total[0], f->total[1] },
			.dself = f->dself, .dtotal = f->dtotal, .p = f->p,
			.significant = significant(f, o->alpha),
		};
	}
	size_t n = t.n;
	free(ranked);
	free(p);
	free(t.v);
	lp_hashmap__fini(&t.map);
	*rows_out = rows;
	*ntests_out = ntests;
	return n;
}

double lp_diff__samples(const struct lp_diff *d, int side)
{
	return d->side[side].samples;
}

int lp_diff__write_report(struct lp_diff *d, FILE *out, const struct lp_diff_report_opts *o)
{
	double N[2] = { d->side[0].samples, d->side[1].samples };
	struct lp_diff_row *rows;
	size_t ntests, n = lp_diff__rows(d, o, &rows, &ntests);

	if (!n) {
		/* empty inputs: empty output, unless they were all lp's */
		report_lp(d, out);
		return ferror(out) ? -1 : 0;
	}
	size_t nsig = 0;
	for (size_t i = 0; i < n; i++)
		nsig += rows[i].significant;

	char na[64], nb[64], al[64];
	lp_format_number(na, sizeof(na), N[0]);
	lp_format_number(nb, sizeof(nb), N[1]);
	lp_format_number(al, sizeof(al), o->alpha);
	fprintf(out, "# A: %s (%s samples)\n# B: %s (%s samples)\n",
		d->side[0].name ? d->side[0].name : "-", na,
		d->side[1].name ? d->side[1].name : "-", nb);
	report_lp(d, out);
	fprintf(out, "# self: samples with the function as leaf; total: samples with it anywhere on the stack\n"
		     "# shares in %% of each side's samples, changes (B - A) in percentage points\n"
		     "# p-value: two-proportion z-test on the sample counts of self and of total, the smaller,\n"
		     "#   %s over %zu tests\n",
		adjust_name(o->adjust), ntests);
	/* "Δ" is two bytes wide in UTF-8 but one column on screen. */
	fprintf(out, " self_A  self_B   Δself total_A total_B  Δtotal  samples_A  samples_B  p-value  function\n");
	size_t shown = o->top && o->top < n ? o->top : n;
	for (size_t i = 0; i < shown; i++) {
		const struct lp_diff_row *f = &rows[i];
		char sa[64], sb[64], pv[32];
		lp_format_number(sa, sizeof(sa), f->total[0]);
		lp_format_number(sb, sizeof(sb), f->total[1]);
		format_p(pv, sizeof(pv), f->p);
		fprintf(out, "%6.2f%% %6.2f%% %+7.2f %6.2f%% %6.2f%% %+7.2f %10s %10s %8s  ",
			share(f->self[0], N[0]), share(f->self[1], N[1]), points(f->dself),
			share(f->total[0], N[0]), share(f->total[1], N[1]), points(f->dtotal),
			sa, sb, pv);
		put_name(out, f->name, f->len);
		fputc('\n', out);
	}
	fprintf(out, "# %zu of %zu functions not significant at alpha %s\n", n - nsig, n, al);
	if (shown < n)
		fprintf(out, "# %zu more functions not shown (--top 0 shows all)\n", n - shown);
	free(rows);
	return ferror(out) ? -1 : 0;
}
