/* flamegraph.c - a profile as an interactive SVG flame graph.
 *
 * The stacks, sorted frame by frame, are walked once as a depth-first
 * traversal of their merged tree (one node per distinct path from the
 * root): a node's weight is known when the walk leaves it, and only nodes
 * wide enough to draw are kept, so memory grows with what is drawn, not
 * with the profile.  Each drawn node becomes one <g>: a <title> (the
 * tooltip: name, then figures on a second line), a <rect> and a <text>
 * label.  The embedded script reads the geometry back from the rectangles,
 * so the file holds no second copy of the data; it offers search (regex),
 * click to zoom and an info line.
 *
 * Determinism: siblings are ordered by name (then kind), colours come from
 * a hash of the name, numbers are printed with fixed precision.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"
#include "base/util.h"

/* Layout, in pixels: the same proportions as flamegraph.pl, so the result
 * looks familiar. */
#define FONT_SIZE 12
#define FONT_WIDTH 0.59		/* average glyph width / font size (Verdana) */
#define XPAD 10
#define FRAME_PAD 1		/* gap between levels */

/* A drawn frame. */
struct node {
	const char *name;	/* into the profile entry's stack text */
	size_t len;
	int depth;		/* 0: the root, "all" */
	char kind;
	double x;		/* left edge, in weight units of the drawn side */
	double w[2];		/* inclusive weight, per side */
};

struct tree {
	struct node *nodes;	/* the drawn ones */
	size_t n, cap;
	size_t seen;		/* all the nodes of the merged tree */
	int side;		/* the side widths are drawn from */
	double total[2];
	int max_depth;		/* among drawn nodes */
};

/* --- building the tree ------------------------------------------------ */

static char kind_of_name(const char *s, size_t len)
{
	/* stackcollapse-perf.pl's --kernel/--jit/--inline annotations */
	if (len >= 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']') {
		switch (s[len - 2]) {
		case 'k':
			return 'k';
		case 'j':
			return 'j';
		case 'i':
			return 'i';
		}
	}
	return 'u';
}

static char frame_kind(const struct lp_profile_entry *e, size_t i, size_t kinds_len,
		       const char *name, size_t len)
{
	if (e->kinds && i < kinds_len && e->kinds[i])
		return e->kinds[i];
	return kind_of_name(name, len);
}

/* Frame-wise order: the first frame's name, then its kind, then the next
 * frame...; a stack that is a prefix of another comes first.  Sorting the
 * whole text bytewise would not do: "a;b" < "a;b!;c" < "a;b;d" splits the
 * children of "a;b" around a sibling. */
static int entry_cmp(const void *pa, const void *pb)
{
	const struct lp_profile_entry *a = *(const struct lp_profile_entry *const *)pa;
	const struct lp_profile_entry *b = *(const struct lp_profile_entry *const *)pb;
	size_t i = 0, j = 0, frame = 0;
	size_t ka = a->kinds ? strlen(a->kinds) : 0, kb = b->kinds ? strlen(b->kinds) : 0;

	for (;;) {
		bool enda = i >= a->len, endb = j >= b->len;
		if (enda || endb)
			return (int)endb - (int)enda;
		size_t si = i, sj = j;
		while (i < a->len && a->stack[i] != ';')
			i++;
		while (j < b->len && b->stack[j] != ';')
			j++;
		size_t la = i - si, lb = j - sj;
		int c = memcmp(a->stack + si, b->stack + sj, la < lb ? la : lb);
		if (c)
			return c;
		if (la != lb)
			return (la > lb) - (la < lb);
		char ca = frame_kind(a, frame, ka, a->stack + si, la);
		char cb = frame_kind(b, frame, kb, b->stack + sj, lb);
		if (ca != cb)
			return (ca > cb) - (ca < cb);
		frame++;
		/* step over the ';' (a trailing one ends the stack) */
		if (i < a->len)
			i++;
		if (j < b->len)
			j++;
	}
}

/* A node of the path the walk is in. */
struct open {
	const char *name;
	size_t len;
	char kind;
	double x, cursor;	/* its left edge; where its next child starts */
	double w[2];
};

static void tree_keep(struct tree *t, const struct open *op, int depth)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->nodes = lp_reallocarray(t->nodes, t->cap, sizeof(*t->nodes));
	}
	t->nodes[t->n++] = (struct node){ op->name, op->len, depth, op->kind, op->x,
					  { op->w[0], op->w[1] } };
	if (depth > t->max_depth)
		t->max_depth = depth;
}

/* Leaves the node at depth d: keeps it when it is at least min_w wide
 * (a parent is never narrower than its child, so the kept nodes form a
 * tree) and moves its parent's cursor past it. */
static void tree_close(struct tree *t, struct open *path, int d, double min_w)
{
	double w = path[d].w[t->side];
	t->seen++;
	if (d == 0 || (w > 0 && w >= min_w))
		tree_keep(t, &path[d], d);
	if (d > 0)
		path[d - 1].cursor += w;
}

static void tree_build(struct tree *t, struct lp_profile *profile, double min_px,
		       double width_px)
{
	size_t n;
	const struct lp_profile_entry *const *sorted = lp_profile__sorted(profile, &n);
	const struct lp_profile_entry **es = lp_reallocarray(NULL, n ? n : 1, sizeof(*es));
	if (n) {	/* an empty profile's array is NULL: no memcpy from it */
		memcpy(es, sorted, n * sizeof(*es));
		qsort(es, n, sizeof(*es), entry_cmp);
	}

	/* the scale needs the total first */
	for (size_t k = 0; k < n; k++) {
		t->total[0] += es[k]->weight[0];
		t->total[1] += es[k]->weight[1];
	}
	double total = t->total[t->side];
	double min_w = total > 0 ? min_px * total / width_px : 0;

	size_t path_cap = 64;
	struct open *path = lp_reallocarray(NULL, path_cap, sizeof(*path));
	path[0] = (struct open){ "all", 3, 'u', 0, 0, { 0, 0 } };
	int open_depth = 0;	/* the deepest open node */

	for (size_t k = 0; k < n; k++) {
		const struct lp_profile_entry *e = es[k];
		size_t kinds_len = e->kinds ? strlen(e->kinds) : 0;
		int depth = 0;
		bool same = true;
		for (size_t i = 0; i < e->len;) {
			size_t s = i;
			while (i < e->len && e->stack[i] != ';')
				i++;
			const char *name = e->stack + s;
			size_t len = i - s;
			char kind = frame_kind(e, (size_t)depth, kinds_len, name, len);
			if (i < e->len)
				i++;
			depth++;
			if (same && depth <= open_depth && path[depth].len == len &&
			    path[depth].kind == kind && memcmp(path[depth].name, name, len) == 0)
				continue;
			/* a new branch: leave the old one, deepest first */
			if (same)
				while (open_depth >= depth)
					tree_close(t, path, open_depth--, min_w);
			same = false;
			if ((size_t)depth >= path_cap) {
				path_cap *= 2;
				path = lp_reallocarray(path, path_cap, sizeof(*path));
			}
			double x = path[depth - 1].cursor;
			path[depth] = (struct open){ name, len, kind, x, x, { 0, 0 } };
			open_depth = depth;
		}
		/* a stack that ends above the open path (a prefix of the
		 * previous one cannot follow it in this order, but an empty
		 * stack can come first) */
		if (same)
			while (open_depth > depth)
				tree_close(t, path, open_depth--, min_w);
		for (int d = 0; d <= depth; d++) {
			path[d].w[0] += e->weight[0];
			path[d].w[1] += e->weight[1];
		}
	}
	while (open_depth >= 0)
		tree_close(t, path, open_depth--, min_w);
	free(path);
	free(es);
}

/* Depth-first order: left to right, parents before children. */
static int node_cmp(const void *pa, const void *pb)
{
	const struct node *a = pa, *b = pb;
	if (a->x != b->x)
		return (a->x > b->x) - (a->x < b->x);
	return (a->depth > b->depth) - (a->depth < b->depth);
}

/* Keeps the max_frames widest nodes, ties to the shallower one (then the
 * leftmost): a child is never wider than its parent, so in this order every
 * node follows its ancestors and the nodes kept still form a tree. */
static int side_for_cmp;

static int cap_cmp(const void *pa, const void *pb)
{
	const struct node *a = pa, *b = pb;
	double wa = a->w[side_for_cmp], wb = b->w[side_for_cmp];
	if (wa != wb)
		return (wa < wb) - (wa > wb);
	if (a->depth != b->depth)
		return (a->depth > b->depth) - (a->depth < b->depth);
	return (a->x > b->x) - (a->x < b->x);
}

static void tree_cap(struct tree *t, size_t max_frames)
{
	side_for_cmp = t->side;
	qsort(t->nodes, t->n, sizeof(*t->nodes), cap_cmp);
	t->n = max_frames;
	t->max_depth = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].depth > t->max_depth)
			t->max_depth = t->nodes[i].depth;
}

/* --- output ----------------------------------------------------------- */

struct out {
	FILE *f;
	int err;		/* the first write error's errno */
};

static void put(struct out *o, const char *s)
{
	if (fputs(s, o->f) == EOF && !o->err)
		o->err = errno ? errno : EIO;
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vfprintf(o->f, fmt, ap) < 0 && !o->err)
		o->err = errno ? errno : EIO;
	va_end(ap);
}

/* Length of the valid UTF-8 character at s that XML allows and that shows
 * as itself, or 0 when the byte must be shown as \xHH. */
static size_t utf8_ok(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;
	unsigned char c = s[0];

	if (c < 0x80)
		return c >= 0x20 && c != 0x7f ? 1 : 0;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		len = 2;
		cp = c & 0x1f;
	} else if (c < 0xf0) {
		len = 3;
		cp = c & 0x0f;
	} else if (c < 0xf5) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;	/* overlong or out of range */
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;	/* surrogates and non-characters XML refuses */
	return len;
}

/* How many characters s shows as (an invalid byte shows as 4: \xHH). */
static size_t display_len(const char *s, size_t n)
{
	size_t chars = 0;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_ok((const unsigned char *)s + i, n - i);
		chars += l ? 1 : 4;
		i += l ? l : 1;
	}
	return chars;
}

/* Writes at most max characters of s, XML-escaped, into a buffer-free
 * stream of small writes. */
static void put_escaped(struct out *o, const char *s, size_t n, size_t max)
{
	size_t chars = 0;
	for (size_t i = 0; i < n && chars < max;) {
		const unsigned char *p = (const unsigned char *)s + i;
		size_t l = utf8_ok(p, n - i);
		if (!l) {
			if (chars + 4 > max)
				break;
			putf(o, "\\x%02X", *p);
			chars += 4;
			i++;
			continue;
		}
		switch (*p) {
		case '&':
			put(o, "&amp;");
			break;
		case '<':
			put(o, "&lt;");
			break;
		case '>':
			put(o, "&gt;");
			break;
		case '"':
			put(o, "&quot;");
			break;
		case '\'':
			put(o, "&#39;");
			break;
		default:
			if (fwrite(p, 1, l, o->f) != l && !o->err)
				o->err = errno ? errno : EIO;
		}
		chars++;
		i += l;
	}
}

static void put_text(struct out *o, const char *s)
{
	put_escaped(o, s, strlen(s), SIZE_MAX);
}

int lp_svg_put_text(FILE *f, const char *s)
{
	struct out o = { f, 0 };
	put_text(&o, s);
	if (o.err) {
		errno = o.err;
		return -1;
	}
	return 0;
}

/* A count as people read it: integers with thousands separators, other
 * values with up to 2 decimals. */
static void format_count(char *buf, size_t size, double v)
{
	if (v == floor(v) && fabs(v) < 1e15) {
		char tmp[32];
		int n = snprintf(tmp, sizeof(tmp), "%.0f", fabs(v));
		size_t j = 0;
		if (v < 0 && j + 1 < size)
			buf[j++] = '-';
		for (int i = 0; i < n && j + 2 < size; i++) {
			buf[j++] = tmp[i];
			if ((n - i - 1) % 3 == 0 && i != n - 1)
				buf[j++] = ',';
		}
		buf[j] = '\0';
		return;
	}
	snprintf(buf, size, "%.2f", v);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

struct style {
	int width, fh, height, ypad1, ypad2;
	double scale;		/* pixels per weight unit */
	double max_delta;	/* differential: largest |share change| */
	const struct lp_flamegraph_opts *opts;
	const char *count_name;
};

static void kind_colour(char kind, uint64_t h, int rgb[3])
{
	/* three independent 8-bit draws from the name's hash */
	double a = (double)(h & 0xff) / 255, b = (double)(h >> 8 & 0xff) / 255,
	       c = (double)(h >> 16 & 0xff) / 255;
	switch (kind) {
	case 'k':		/* kernel: blues */
		rgb[0] = 80 + (int)(60 * a);
		rgb[1] = 130 + (int)(60 * b);
		rgb[2] = 215 + (int)(40 * c);
		break;
	case 'j':		/* JIT: greens */
		rgb[0] = 60 + (int)(60 * a);
		rgb[1] = 185 + (int)(60 * b);
		rgb[2] = 50 + (int)(50 * c);
		break;
	case 'i':		/* inlined: aquas */
		rgb[0] = 60 + (int)(50 * a);
		rgb[1] = 200 + (int)(55 * b);
		rgb[2] = 200 + (int)(55 * c);
		break;
	default:		/* user: flamegraph.pl's "hot" reds to yellows */
		rgb[0] = 205 + (int)(50 * c);
		rgb[1] = (int)(230 * a);
		rgb[2] = (int)(55 * b);
		break;
	}
}

static double share_delta(const struct tree *t, const struct node *nd)
{
	return (t->total[1] > 0 ? nd->w[1] / t->total[1] : 0) -
	       (t->total[0] > 0 ? nd->w[0] / t->total[0] : 0);
}

static void node_colour(const struct tree *t, const struct style *st,
			const struct node *nd, int rgb[3])
{
	if (st->opts->differential) {
		/* white when unchanged, full red (grew) or blue (shrank) for
		 * the largest change in share of the total */
		double d = share_delta(t, nd);
		if (st->opts->negate)
			d = -d;
		int v = st->max_delta > 0 ?
			(int)(210 * (1 - fabs(d) / st->max_delta) + 0.5) : 210;
		rgb[0] = rgb[1] = rgb[2] = 255;
		if (d > 0)
			rgb[1] = rgb[2] = v;
		else if (d < 0)
			rgb[0] = rgb[1] = v;
		return;
	}
	kind_colour(nd->kind, lp_hash_bytes(LP_HASH_INIT, nd->name, nd->len), rgb);
}

/* The tooltip: the name on the first line, the figures on the second. */
static void put_title(struct out *o, const struct tree *t, const struct style *st,
		      const struct node *nd)
{
	char a[48], b[48];
	put(o, "<title>");
	put_escaped(o, nd->name, nd->len, SIZE_MAX);
	if (st->opts->differential) {
		double d = share_delta(t, nd);
		format_count(a, sizeof(a), nd->w[1]);
		format_count(b, sizeof(b), nd->w[0]);
		putf(o, "\n(%s ", a);
		put_text(o, st->count_name);
		putf(o, ", %.2f%%; before %s, %.2f%%; %s%.2f%% of total)",
		     pct(nd->w[1], t->total[1]), b, pct(nd->w[0], t->total[0]),
		     d >= 0 ? "+" : "-", fabs(100 * d));
	} else {
		format_count(a, sizeof(a), nd->w[0]);
		putf(o, "\n(%s ", a);
		put_text(o, st->count_name);
		putf(o, ", %.2f%%)", pct(nd->w[0], t->total[0]));
	}
	put(o, "</title>");
}

static void put_frame(struct out *o, const struct tree *t, const struct style *st,
		      const struct node *nd)
{
	double x1 = XPAD + nd->x * st->scale, w = nd->w[t->side] * st->scale;
	int y;
	if (st->opts->inverted)
		y = st->ypad1 + nd->depth * st->fh;
	else
		y = st->height - st->ypad2 - (nd->depth + 1) * st->fh + FRAME_PAD;
	int rgb[3];
	node_colour(t, st, nd, rgb);

	put(o, "<g>");
	put_title(o, t, st, nd);
	putf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
	     "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
	     x1, y, w, st->fh - FRAME_PAD, rgb[0], rgb[1], rgb[2]);
	/* white labels on dark fills (full red or blue in a differential graph,
	 * the darkest reds of the hot palette), black on the rest */
	bool dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 100;
	putf(o, "<text x=\"%.2f\" y=\"%.1f\"%s>", x1 + 3, y + (st->fh - FRAME_PAD) / 2.0 + 4,
	     dark ? " class=\"light\"" : "");
	/* as many characters as fit; "..": there is more */
	size_t fit = (size_t)(w / (FONT_SIZE * FONT_WIDTH));
	if (fit >= 3) {
		size_t dl = display_len(nd->name, nd->len);
		if (dl <= fit) {
			put_escaped(o, nd->name, nd->len, SIZE_MAX);
		} else {
			put_escaped(o, nd->name, nd->len, fit - 2);
			put(o, "..");
		}
	}
	put(o, "</text></g>\n");
}

static const char script[] =
"(function () {\n"
"\"use strict\";\n"
"var frames, details, matched, unzoombtn, searchbtn, all = [], zoomed = null, searching = null;\n"
"function $(id) { return document.getElementById(id); }\n"
"function name_of(g) { return g.firstElementChild.textContent.split(\"\\n\")[0]; }\n"
"function info_of(g) { return g.firstElementChild.textContent.replace(\"\\n\", \" \"); }\n"
"function depth_of(y) {\n"
"\treturn C.inverted ? Math.round((y - C.ypad1) / C.fh)\n"
"\t\t: Math.round((C.height - C.ypad2 - C.fh + C.pad - y) / C.fh);\n"
"}\n"
"// Redraws frame f at pixel x, width w, with as much of its name as fits.\n"
"function place(f, x, w) {\n"
"\tf.moved = x !== f.x || w !== f.w;\n"
"\tf.rect.setAttribute(\"x\", x.toFixed(2));\n"
"\tf.rect.setAttribute(\"width\", w.toFixed(2));\n"
"\tf.text.setAttribute(\"x\", (x + 3).toFixed(2));\n"
"\tvar fit = Math.floor(w / (C.fontsize * C.fontwidth)), name = f.name, chars;\n"
"\t// (length counts UTF-16 units: never fewer than the characters)\n"
"\tif (fit < 3) f.text.textContent = \"\";\n"
"\telse if (name.length <= fit || (chars = Array.from(name)).length <= fit)\n"
"\t\tf.text.textContent = name;\n"
"\telse f.text.textContent = chars.slice(0, fit - 2).join(\"\") + \"..\";\n"
"}\n"
"function zoom(g) {\n"
"\tvar z = g.lpfg || g, mid = z.x + z.w / 2, ratio = (C.width - 2 * C.xpad) / z.w;\n"
"\tzoomed = z;\n"
"\tunzoombtn.classList.remove(\"hide\");\n"
"\tall.forEach(function (f) {\n"
"\t\tvar c = f.x + f.w / 2;\n"
"\t\tif (f.d < z.d && f.x <= mid && mid <= f.x + f.w) {\n"
"\t\t\tf.g.classList.remove(\"hide\");\n"
"\t\t\tf.g.classList.add(\"parent\");\n"
"\t\t\tplace(f, C.xpad, C.width - 2 * C.xpad);\n"
"\t\t} else if (f.d >= z.d && c > z.x && c < z.x + z.w) {\n"
"\t\t\tf.g.classList.remove(\"hide\", \"parent\");\n"
"\t\t\tplace(f, C.xpad + (f.x - z.x) * ratio, f.w * ratio);\n"
"\t\t} else {\n"
"\t\t\tf.g.classList.add(\"hide\");\n"
"\t\t}\n"
"\t});\n"
"}\n"
"function unzoom() {\n"
"\tzoomed = null;\n"
"\tunzoombtn.classList.add(\"hide\");\n"
"\tall.forEach(function (f) {\n"
"\t\tf.g.classList.remove(\"hide\", \"parent\");\n"
"\t\tif (f.moved) place(f, f.x, f.w);   // (the hidden ones never moved)\n"
"\t});\n"
"}\n"
"function reset_search() {\n"
"\tsearching = null;\n"
"\tall.forEach(function (f) { f.rect.setAttribute(\"fill\", f.fill); f.g.classList.remove(\"match\"); });\n"
"\tmatched.classList.add(\"hide\");\n"
"\tsearchbtn.textContent = \"Search\";\n"
"}\n"
"// Highlights the frames whose name matches; returns the share of the whole\n"
"// profile they cover, counting nested matches once.\n"
"function search(term, ignorecase) {\n"
"\treset_search();\n"
"\tvar re = new RegExp(term, ignorecase ? \"i\" : \"\"), spans = [], n = 0;\n"
"\tall.forEach(function (f) {\n"
"\t\tif (!re.test(f.name)) return;\n"
"\t\tn++;\n"
"\t\tf.rect.setAttribute(\"fill\", C.matchfill);\n"
"\t\tf.g.classList.add(\"match\");\n"
"\t\tspans.push([f.x, f.x + f.w]);\n"
"\t});\n"
"\tspans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
"\tvar covered = 0, end = -1;\n"
"\tspans.forEach(function (s) {\n"
"\t\tif (s[1] <= end) return;\n"
"\t\tcovered += s[1] - Math.max(s[0], end);\n"
"\t\tend = s[1];\n"
"\t});\n"
"\tvar percent = 100 * covered / (C.width - 2 * C.xpad);\n"
"\tsearching = term;\n"
"\tsearchbtn.textContent = \"Reset Search\";\n"
"\tmatched.textContent = \"Matched: \" + percent.toFixed(1) + \"% (\" + n + \" frames)\";\n"
"\tmatched.classList.remove(\"hide\");\n"
"\treturn { frames: n, percent: percent };\n"
"}\n"
"function search_prompt() {\n"
"\tif (searching !== null) { reset_search(); return; }\n"
"\tvar term = prompt(\"Search for (a regular expression):\", \"\");\n"
"\tif (term === null || term === \"\") return;\n"
"\ttry { search(term, $(\"ignorecase\").classList.contains(\"on\")); }\n"
"\tcatch (e) { alert(\"Not a regular expression: \" + e.message); }\n"
"}\n"
"function init() {\n"
"\tframes = $(\"frames\");\n"
"\tdetails = $(\"details\");\n"
"\tmatched = $(\"matched\");\n"
"\tunzoombtn = $(\"unzoom\");\n"
"\tsearchbtn = $(\"search\");\n"
"\tif (!frames || !searchbtn) return;\n"
"\tfor (var g = frames.firstElementChild; g; g = g.nextElementSibling) {\n"
"\t\tvar rect = g.querySelector(\"rect\"), y = parseFloat(rect.getAttribute(\"y\"));\n"
"\t\tvar f = { g: g, rect: rect, text: g.querySelector(\"text\"), name: name_of(g),\n"
"\t\t\tx: parseFloat(rect.getAttribute(\"x\")), w: parseFloat(rect.getAttribute(\"width\")),\n"
"\t\t\td: depth_of(y), fill: rect.getAttribute(\"fill\") };\n"
"\t\tg.lpfg = f;\n"
"\t\tall.push(f);\n"
"\t}\n"
"\tframes.addEventListener(\"click\", function (e) {\n"
"\t\tvar g = e.target.closest(\"#frames > g\");\n"
"\t\tif (g) zoom(g);\n"
"\t});\n"
"\tframes.addEventListener(\"mouseover\", function (e) {\n"
"\t\tvar g = e.target.closest(\"#frames > g\");\n"
"\t\tif (g) details.textContent = C.nametype + \" \" + info_of(g);\n"
"\t});\n"
"\tframes.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
"\tunzoombtn.addEventListener(\"click\", unzoom);\n"
"\tsearchbtn.addEventListener(\"click\", search_prompt);\n"
"\t$(\"ignorecase\").addEventListener(\"click\", function () {\n"
"\t\tthis.classList.toggle(\"on\");\n"
"\t\tif (searching !== null) search(searching, this.classList.contains(\"on\"));\n"
"\t});\n"
"\twindow.addEventListener(\"keydown\", function (e) {\n"
"\t\tif ((e.ctrlKey && e.key === \"f\") || e.key === \"/\") {\n"
"\t\t\te.preventDefault();\n"
"\t\t\tsearch_prompt();\n"
"\t\t} else if (e.key === \"Escape\") {\n"
"\t\t\tif (zoomed) unzoom(); else if (searching !== null) reset_search();\n"
"\t\t}\n"
"\t});\n"
"\t// a link can carry a search: graph.svg?s=REGEX (&i=1: ignoring case)\n"
"\tvar params = new URLSearchParams(window.location.search);\n"
"\tif (params.get(\"s\")) {\n"
"\t\tif (params.get(\"i\")) $(\"ignorecase\").classList.add(\"on\");\n"
"\t\ttry { search(params.get(\"s\"), !!params.get(\"i\")); } catch (e) { }\n"
"\t}\n"
"\twindow.lpfg = { search: search, reset_search: reset_search, zoom: zoom, unzoom: unzoom,\n"
"\t\tframes: all, find: function (name) {\n"
"\t\t\treturn all.filter(function (f) { return f.name === name; });\n"
"\t\t} };\n"
"}\n"
"if (document.readyState === \"loading\") document.addEventListener(\"DOMContentLoaded\", init);\n"
"else init();\n"
"})();\n";

static void put_head(struct out *o, const struct style *st, bool with_script,
		     const struct tree *t)
{
	const struct lp_flamegraph_opts *op = st->opts;
	putf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	     "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	     "xmlns=\"http://www.w3.org/2000/svg\">\n",
	     st->width, st->height, st->width, st->height);
	put(o, "<!-- drawn by lp (lp-collapse or lp-diff, format svg): click a frame to zoom, "
	    "Search or Ctrl-F to highlight by regular expression -->\n");
	put(o, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	    "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
	    "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/></linearGradient></defs>\n");
	putf(o, "<style type=\"text/css\">\n"
	     "text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }\n"
	     "#title { text-anchor: middle; font-size: %dpx; }\n"
	     "#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
	     "#matched { text-anchor: end; }\n"
	     "#search, #ignorecase { text-anchor: end; }\n"
	     "#search, #ignorecase, #unzoom { cursor: pointer; }\n"
	     "#search:hover, #ignorecase:hover, #unzoom:hover { opacity: 0.6; }\n"
	     "#ignorecase { opacity: 0.3; }\n"
	     "#ignorecase.on { opacity: 1; }\n"
	     "#frames > g { cursor: pointer; }\n"
	     "#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	     "#frames text { pointer-events: none; }\n"
	     "#frames text.light { fill: rgb(255,255,255); }\n"
	     ".parent { opacity: 0.5; }\n"
	     ".hide { display: none; }\n"
	     "</style>\n", FONT_SIZE, FONT_SIZE + 5);
	if (with_script) {
		putf(o, "<script type=\"text/ecmascript\"><![CDATA[\n"
		     "var C = { width: %d, height: %d, xpad: %d, ypad1: %d, ypad2: %d, fh: %d, "
		     "pad: %d, fontsize: %d, fontwidth: %g, inverted: %s, "
		     "matchfill: \"rgb(230,0,230)\", nametype: \"Function:\" };\n",
		     st->width, st->height, XPAD, st->ypad1, st->ypad2, st->fh, FRAME_PAD,
		     FONT_SIZE, FONT_WIDTH, op->inverted ? "true" : "false");
		put(o, script);
		put(o, "]]></script>\n");
	}
	putf(o, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
	     st->width, st->height);
	const char *title = op->title;
	if (!title)
		title = op->differential ? "Differential Flame Graph" :
			op->inverted ? "Icicle Graph" : "Flame Graph";
	putf(o, "<text id=\"title\" x=\"%d\" y=\"%d\">", st->width / 2, FONT_SIZE * 2);
	put_text(o, title);
	put(o, "</text>\n");
	if (op->subtitle) {
		putf(o, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", st->width / 2, FONT_SIZE * 4);
		put_text(o, op->subtitle);
		put(o, "</text>\n");
	}
	if (!with_script)
		return;
	putf(o, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n",
	     XPAD, FONT_SIZE * 2);
	putf(o, "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n",
	     st->width - XPAD - 30, FONT_SIZE * 2);
	putf(o, "<text id=\"ignorecase\" x=\"%d\" y=\"%d\">ic</text>\n",
	     st->width - XPAD, FONT_SIZE * 2);
	putf(o, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
	     XPAD, st->height - st->ypad2 / 2 + 2);
	putf(o, "<text id=\"matched\" class=\"hide\" x=\"%d\" y=\"%d\"> </text>\n",
	     st->width - XPAD, st->height - st->ypad2 / 2 + 2);

	/* a legend of the frame kinds present, when there is more than one */
	if (!op->differential && t) {
		bool seen[4] = { false };
		static const char kinds[4] = { 'u', 'k', 'j', 'i' };
		static const char *const names[4] = { "user", "kernel", "JIT", "inlined" };
		int nseen = 0;
		for (size_t i = 0; i < t->n; i++)
			for (int k = 0; k < 4; k++)
				if (t->nodes[i].depth > 0 && t->nodes[i].kind == kinds[k] && !seen[k]) {
					seen[k] = true;
					nseen++;
				}
		if (nseen > 1) {
			int x = XPAD + 100;
			put(o, "<g id=\"legend\">");
			for (int k = 0; k < 4; k++) {
				if (!seen[k])
					continue;
				int rgb[3];
				/* a fixed mid-palette sample of each hue */
				kind_colour(kinds[k], 0x808080, rgb);
				putf(o, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
				     "fill=\"rgb(%d,%d,%d)\"/><text x=\"%d\" y=\"%d\">%s</text>",
				     x, FONT_SIZE * 2 - 9, rgb[0], rgb[1], rgb[2], x + 14,
				     FONT_SIZE * 2, names[k]);
				x += 14 + (int)(strlen(names[k]) * FONT_SIZE * FONT_WIDTH) + 12;
			}
			put(o, "</g>\n");
		}
	}
}

int lp_flamegraph__write(FILE *f, struct lp_profile *profile,
			 const struct lp_flamegraph_opts *opts)
{
	struct lp_flamegraph_opts defaults = { 0 };
	if (!opts)
		opts = &defaults;
	struct out o = { f, 0 };
	struct style st = { .opts = opts };
	st.width = opts->width > 0 ? opts->width : 1200;
	if (st.width < 2 * XPAD + 10)
		st.width = 2 * XPAD + 10;
	st.fh = opts->frame_height > 0 ? opts->frame_height : 16;
	if (st.fh < 2)
		st.fh = 2;
	st.count_name = opts->count_name ? opts->count_name : "samples";
	st.ypad1 = FONT_SIZE * 3 + (opts->subtitle ? FONT_SIZE * 2 : 0);
	st.ypad2 = FONT_SIZE * 2 + 10;
	double min_px = opts->min_width_px > 0 ? opts->min_width_px : 0.1;
	size_t max_frames = opts->max_frames > 0 ? (size_t)opts->max_frames : 50000;

	struct tree t = { .side = opts->differential ? 1 : 0 };
	tree_build(&t, profile, min_px, st.width - 2.0 * XPAD);
	double total = t.total[t.side];

	if (!(total > 0)) {
		/* nothing to draw: still a valid document, and it says why */
		st.height = st.ypad1 + FONT_SIZE * 3 + st.ypad2;
		put_head(&o, &st, false, NULL);
		putf(&o, "<text id=\"nosamples\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
		     "no samples</text>\n<g id=\"frames\"></g>\n</svg>\n",
		     st.width / 2, st.ypad1 + FONT_SIZE * 2);
		goto out;
	}

	st.scale = (st.width - 2.0 * XPAD) / total;
	size_t kept = t.n;
	if (t.n > max_frames)
		tree_cap(&t, max_frames);
	qsort(t.nodes, t.n, sizeof(*t.nodes), node_cmp);
	st.height = (t.max_depth + 1) * st.fh + st.ypad1 + st.ypad2;

	if (opts->differential) {
		for (size_t i = 0; i < t.n; i++) {
			double d = fabs(share_delta(&t, &t.nodes[i]));
			if (d > st.max_delta)
				st.max_delta = d;
		}
	}

	put_head(&o, &st, true, &t);
	putf(&o, "<!-- %zu frames of %zu drawn; narrower than %.3g px omitted",
	     t.n, t.seen, min_px);
	if (kept > t.n)
		putf(&o, ", and the %zu narrowest of the others to stay within %zu frames",
		     kept - t.n, max_frames);
	put(&o, " -->\n<g id=\"frames\">\n");
	for (size_t i = 0; i < t.n; i++)
		put_frame(&o, &t, &st, &t.nodes[i]);
	put(&o, "</g>\n</svg>\n");
out:
	free(t.nodes);
	if (!o.err && fflush(f) == EOF)
		o.err = errno ? errno : EIO;
	if (o.err) {
		errno = o.err;
		return -1;
	}
	return 0;
}
