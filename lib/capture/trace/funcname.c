/* funcname.c - a function named as a user writes it, among a file's
 * function symbols, with its compiled copies (funcname.h). */
#include "capture/trace/funcname.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/demangle.h"

const struct lp_fsym *lp_fname__sym(const struct lp_fsyms *o, const char *name)
{
	for (size_t i = 0; i < o->nsyms; i++)
		if (!strcmp(o->syms[i].name, name))
			return &o->syms[i];
	return NULL;
}

/* Parameter lists equal but for spaces: "(int,char**)" is "(int, char**)". */
static bool same_params(const char *a, const char *b)
{
	for (;; a++, b++) {
		while (*a == ' ')
			a++;
		while (*b == ' ')
			b++;
		if (*a != *b)
			return false;
		if (!*a)
			return true;
	}
}

struct func_cand {
	const struct lp_fsym *sym;
	char *name;		/* demangled, no return type; NULL: a C name */
	const char *params;	/* in name; NULL: none (Rust, C) */
	char *base;		/* the symbol less its clone suffix */
	const char *copy;	/* the suffix in sym's name, past its dot; NULL: none */
};

const char *lp_fname__clone_suffix(const char *name, bool *cold)
{
	static const char *const words[] = { "isra", "constprop", "part", "lto_priv", "llvm",
					     "specialized", "cold" };
	*cold = false;
	for (const char *p = name[0] ? strchr(name + 1, '.') : NULL; p; p = strchr(p + 1, '.')) {
		/* From here on, every dot-separated token a word or a number. */
		bool ok = true, word = false;
		for (const char *q = p; ok && *q == '.';) {
			const char *e = strchr(q + 1, '.');
			size_t len = e ? (size_t)(e - q - 1) : strlen(q + 1);
			bool num = len > 0 && strspn(q + 1, "0123456789") == len, known = false;
			for (size_t w = 0; !num && w < sizeof(words) / sizeof(words[0]); w++)
				if (strlen(words[w]) == len && !memcmp(q + 1, words[w], len)) {
					known = true;
					*cold |= w == sizeof(words) / sizeof(words[0]) - 1;
				}
			ok = num || known;
			word |= known;
			q += len + 1;
		}
		if (ok && word)
			return p;
		*cold = false;
	}
	return NULL;
}

/* The name spans of a C++ or Rust function take: as lp-record names its
 * frames (demangled; the symbol with --no-demangle); NULL for a C one. */
static char *span_name(const struct lp_fname_query *spec, const char *sym)
{
	char *d = lp_symbol__demangle(sym, false);

	if (d && spec->no_demangle) {
		free(d);
		return lp_strndup(sym, lp_symbol__unversioned_len(sym));
	}
	return d;
}

/* "a(int), a(double)": the candidates' names, as much as fits. */
static void cand_list(const struct func_cand *c, size_t n, char *list, size_t size)
{
	size_t len = 0;

	list[0] = '\0';
	for (size_t i = 0; i < n && len < size - 1; i++)
		if (!i || strcmp(c[i].name, c[i - 1].name))	/* a function's copies once */
			len += (size_t)snprintf(list + len, size - len, "%s%s", i ? ", " : "",
						c[i].name);
}

static int cand_cmp(const void *a, const void *b)
{
	return strcmp(((const struct func_cand *)a)->name, ((const struct func_cand *)b)->name);
}

/* Whether x's first bl characters (a demangled name less its parameter
 * list) name func: whole, or their end after a "::"; a template's
 * instances answer its name without arguments. */
static bool names_func(const char *x, size_t bl, const char *func)
{
	size_t fl = strlen(func), tl = bl;
	if (bl && x[bl - 1] == '>' && func[fl - 1] != '>') {
		int depth = 0;
		while (tl-- > 0) {
			depth += x[tl] == '>' ? 1 : x[tl] == '<' ? -1 : 0;
			if (!depth)
				break;
		}
		if (depth)
			tl = bl;
	}
	return tl == fl ? !memcmp(x, func, fl)
			: tl > fl + 2 && !memcmp(x + tl - fl, func, fl) && !memcmp(x + tl - fl - 2, "::", 2);
}

/* A mangled symbol's demangled name when it names spec's function (its
 * whole name, or its end after a "::"; a template's instances answer its
 * name without arguments: "scale" is "scale<int>" and "scale<long>"), with
 * *params where its parameter list starts; else NULL. */
static char *demangled_match(const struct lp_fname_query *spec, const char *nm, const char **params)
{
	if (nm[0] != '_' || (nm[1] != 'Z' && nm[1] != 'R'))
		return NULL;
	char *d = lp_symbol__demangle(nm, true);
	if (!d)
		return NULL;
	const char *pl = lp_symbol__params(d);
	size_t bl = pl ? (size_t)(pl - d) : strlen(d);
	/* "[clone .cold]": a part of a function, not where calls go. */
	bool match = !strstr(d, "[clone ") && names_func(d, bl, spec->func);
	/* Rust names a method by its impl, <shop::Cart>::checkout (v0's
	 * inherent methods) or <shop::Cart as core::fmt::Display>::fmt (a
	 * trait's): matched as the path a user writes too, shop::Cart::checkout,
	 * Cart::fmt (two traits' fmt are then two functions, listed). */
	if (!match && d[0] == '<' && !pl) {
		int depth = 0;
		size_t i = 0;
		for (; d[i]; i++) {
			depth += d[i] == '<' ? 1 : d[i] == '>' ? -1 : 0;
			if (!depth)
				break;
		}
		if (d[i] == '>' && !strncmp(d + i + 1, "::", 2)) {
			const char *as = memmem(d, i, " as ", 4);
			size_t self = as ? (size_t)(as - d) : i;	/* "<" and the type */
			char *c = lp_malloc(strlen(d));
			memcpy(c, d + 1, self - 1);
			strcpy(c + self - 1, d + i + 1);
			match = names_func(c, strlen(c), spec->func);
			free(c);
		}
	}
	if (!match) {
		free(d);
		return NULL;
	}
	*params = pl;
	return d;
}

/* "f(PARAMS)": the candidates down to those with these parameters.  "f(x)"
 * is a parameter list when a function has it, else the values to capture.
 * -1 after a message when none has them. */
static int filter_by_params(struct lp_fname_query *spec, struct func_cand *c, size_t *n,
			    const char *path)
{
	char list[1024];
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		k += c[i].params && same_params(c[i].params, spec->params);
	if (k && spec->params_or_args)
		spec->params_used = true;	/* not values to capture */
	if (!k && !spec->params_or_args && *n) {
		cand_list(c, *n, list, sizeof(list));
		lp_error("probe '%s': no function '%s%s' in %s, only %s", spec->text,
			 spec->func, spec->params, path, list);
		return -1;
	}
	if (k || !spec->params_or_args) {
		k = 0;
		for (size_t i = 0; i < *n; i++) {
			if (c[i].params && same_params(c[i].params, spec->params)) {
				c[k++] = c[i];
			} else {
				free(c[i].name);
				free(c[i].base);
			}
		}
		*n = k;
	}
	return 0;
}

void lp_fname__free_copies(struct lp_fcopy *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].copy);
	free(c);
}

/* Symbol i of o as a candidate for spec, into c[*n]: named by its own
 * name (C, or a mangled name: exact) or by the demangled name a profile
 * shows, a clone by its function's.  An alias (a constructor's C1 and C2)
 * is left out. */
static void add_cand(const struct lp_fsyms *o, size_t i, const struct lp_fname_query *spec,
		     struct func_cand **c, size_t *n, size_t *nexact)
{
	const char *nm = o->syms[i].name;
	bool cold;
	/* A copy named by its own symbol is that copy alone. */
	const char *suf = strcmp(nm, spec->func) ? lp_fname__clone_suffix(nm, &cold) : NULL;
	if (suf && cold)
		return;
	char *base = suf ? lp_strndup(nm, (size_t)(suf - nm)) : lp_strdup(nm);
	const char *pl = NULL;
	bool exact = !strcmp(base, spec->func);
	char *d = exact ? lp_strdup(base) : demangled_match(spec, base, &pl);
	if (!d) {
		free(base);
		return;
	}
	for (size_t k = 0; k < *n; k++)
		if ((*c)[k].sym->value == o->syms[i].value) {
			free(d);
			free(base);
			return;
		}
	if (exact && pl == NULL && d[0] == '_') {
		/* A mangled name typed whole: its demangled one lists it. */
		char *dm = lp_symbol__demangle(base, true);
		if (dm) {
			free(d);
			d = dm;
			pl = lp_symbol__params(d);
		}
	}
	*c = lp_reallocarray(*c, *n + 1, sizeof(**c));
	(*c)[(*n)++] = (struct func_cand){ &o->syms[i], d, pl, base, suf ? suf + 1 : NULL };
	*nexact += exact;
}

/* spec's function among o's symbols: by its symbol's own name (C, or a
 * mangled C++ or Rust name), else by the demangled name a profile shows,
 * "store::Shop::checkout" or the end of it after a "::" ("Shop::checkout"),
 * with its parameters when given ("traced(int)"); with every compiled
 * copy of it (its clones: -O2 may leave only those).  1, *out and *nout:
 * found, with *shown the name its spans take (malloc'd; NULL for a C
 * function); 0: none; -1: more than one function (overloads, said on
 * stderr with each of them). */
int lp_fname__find(const struct lp_fsyms *o, struct lp_fname_query *spec, const char *path,
		     struct lp_fcopy **out, size_t *nout, char **shown)
{
	struct func_cand *c = NULL;
	size_t n = 0, nexact = 0;
	char list[1024];
	int ret = 0;

	*out = NULL;
	*nout = 0;
	*shown = NULL;
	for (size_t i = 0; i < o->nsyms; i++)
		add_cand(o, i, spec, &c, &n, &nexact);
	if (nexact) {	/* the symbol's own name: that function alone */
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(c[i].base, spec->func)) {
				c[k++] = c[i];
			} else {
				free(c[i].name);
				free(c[i].base);
			}
		}
		n = k;
	}
	if (n > 1)
		qsort(c, n, sizeof(*c), cand_cmp);
	if (!nexact && spec->params && filter_by_params(spec, c, &n, path) < 0) {
		ret = -1;
	} else if (n && !strcmp(c[0].name, c[n - 1].name)) {
		/* One function (sorted: its copies side by side).  A part
		 * split off by partial inlining (.part) is called from a whole
		 * copy when there is one: traced too, each call would be two
		 * spans; so it is only when it is all there is. */
		size_t whole = 0;
		for (size_t i = 0; i < n; i++)
			whole += !c[i].copy || !strstr(c[i].copy, "part");
		*out = lp_calloc(n, sizeof(**out));
		for (size_t i = 0; i < n; i++)
			if (!whole || !c[i].copy || !strstr(c[i].copy, "part"))
				(*out)[(*nout)++] = (struct lp_fcopy){
					c[i].sym, c[i].copy ? lp_strdup(c[i].copy) : NULL };
		*shown = span_name(spec, c[0].base);
		ret = 1;
	} else if (n) {
		size_t distinct = 1;
		for (size_t i = 1; i < n; i++)
			distinct += strcmp(c[i].name, c[i - 1].name) != 0;
		cand_list(c, n, list, sizeof(list));
		lp_error("probe '%s': %zu functions '%s' in %s: %s; name one with its parameters",
			 spec->text, distinct, spec->func, path, list);
		ret = -1;
	}
	for (size_t i = 0; i < n; i++) {
		free(c[i].name);
		free(c[i].base);
	}
	free(c);
	return ret;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

/* The end of a demangled name with as many "::"-separated parts as name
 * has: "Shop::checkout" of "store::Shop::checkout". */
static const char *same_depth_tail(const char *dem, size_t demlen, const char *name)
{
	int parts = 1;
	for (const char *p = name; (p = strstr(p, "::")); p += 2)
		parts++;
	for (size_t i = demlen; i-- > 1;) {
		if (dem[i] == ':' && dem[i - 1] == ':' && --parts == 0)
			return dem + i + 1;
	}
	return dem;
}

void lp_fname__suggest(const struct lp_fsyms *o, const char *name, char *buf, size_t size)
{
	char *best[3] = { 0 };
	size_t bestd[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX };
	size_t limit = strlen(name) / 3 + 1;
	if (limit < 2)
		limit = 2;
	for (size_t i = 0; i < o->nsyms; i++) {
		/* A C++ or Rust function is offered by the name a profile
		 * shows, and compared without its parameters, by as many
		 * parts as the name given has. */
		const char *raw = o->syms[i].name;
		char *dem = raw[0] == '_' && (raw[1] == 'Z' || raw[1] == 'R') ?
			lp_symbol__demangle(raw, true) : NULL;
		const char *s = dem ? dem : raw;
		const char *pl = dem ? lp_symbol__params(dem) : NULL;
		size_t blen = pl ? (size_t)(pl - dem) : strlen(s);
		char *base = lp_strndup(s, blen);
		const char *tail = dem ? same_depth_tail(base, blen, name) : base;
		size_t d = edit_distance(name, tail);
		if (d > limit && !strstr(base, name)) {
			free(base);
			free(dem);
			continue;
		}
		free(base);
		if (d > limit)
			d = limit + 1;	/* a substring match ranks after close ones */
		bool dup = false;
		for (int k = 0; k < 3; k++)
			dup |= best[k] && !strcmp(best[k], s);
		for (int k = 0; k < 3 && !dup; k++) {
			if (d < bestd[k] || (d == bestd[k] && best[k] && strcmp(s, best[k]) < 0)) {
				free(best[2]);
				for (int m = 2; m > k; m--) {
					best[m] = best[m - 1];
					bestd[m] = bestd[m - 1];
				}
				best[k] = lp_strdup(s);
				bestd[k] = d;
				break;
			}
		}
		free(dem);
	}
	buf[0] = '\0';
	if (best[0])
		snprintf(buf, size, "; did you mean: %s%s%s%s%s", best[0], best[1] ? ", " : "",
			 best[1] ? best[1] : "", best[2] ? ", " : "", best[2] ? best[2] : "");
	for (int k = 0; k < 3; k++)
		free(best[k]);
}

