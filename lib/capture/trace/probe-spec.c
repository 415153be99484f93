/* probe-spec.c - the text of a probe: lp-trace's PROBE argument parsed
 * into a struct lp_probe_spec, checked as far as it can be without
 * reading a file. */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "capture/trace/pyprobe.h"

static bool is_ident(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' ||
		      s[i] == '$' || s[i] == '@'))
			return false;
	return true;
}

/* A value a probe captures: a name, then members read through it as C
 * writes them ("r->conn", "s.hdr.len", "r->conn->peer.port"). */
static bool is_value_expr(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t w = 0;
		while (i + w < n && (isalnum((unsigned char)s[i + w]) || s[i + w] == '_' ||
				     (i == 0 && (s[w] == '$' || s[w] == '@'))))
			w++;
		if (!w)
			return false;
		i += w;
		if (i == n)
			return true;
		if (s[i] == '.')
			i++;
		else if (i + 1 < n && s[i] == '-' && s[i + 1] == '>')
			i += 2;
		else
			return false;
		if (i == n)
			return false;
	}
	return n > 0;
}

/* The length of the variable's name that starts expr (is_value_expr):
 * what comes before its first member. */
size_t lp_probe_value_name_len(const char *expr)
{
	size_t n = 0;
	while (expr[n] && expr[n] != '.' && !(expr[n] == '-' && expr[n + 1] == '>'))
		n++;
	return n;
}

/* A function's name as profiles show it: an identifier, or a demangled
 * C++ or Rust name ("store::Shop::checkout", "scale<int>",
 * "(anonymous namespace)::f", "S::operator()"), without its parameters. */
static bool is_func_name(const char *s)
{
	if (is_ident(s, strlen(s)))
		return true;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.$@:<>,*& ~[]()-+=!/%^|", *p))
			return false;
	return *s != '\0';
}

/* Where text's parameter or value list starts: its first '(' but those of
 * "(anonymous namespace)" and "operator()", which are part of a name. */
char *lp_probe_list_start(char *text)
{
	for (char *p = text; (p = strchr(p, '(')); p++) {
		if (!strncmp(p, "(anonymous namespace)", 21)) {
			p += 20;
			continue;
		}
		if (p - text >= 8 && !strncmp(p - 8, "operator()", 10)) {
			p++;
			continue;
		}
		return p;
	}
	return NULL;
}

/* The ')' closing the '(' at open, or NULL. */
static char *list_end(char *open)
{
	int depth = 0;
	for (char *p = open; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p;
	}
	return NULL;
}

/* "(a,b,c)" at the end of text: splits it off into spec->vars.  A C++
 * parameter list before it, "f(int)(n)", goes to spec->params; one list
 * alone, "f(int)", is both (resolved against the symbols, params_or_args),
 * and only parameters when it cannot be variable names ("f(char**)"). */
static int parse_vars(struct lp_probe_spec *spec, char *text)
{
	char *open = lp_probe_list_start(text);
	if (!open)
		return 0;
	size_t len = strlen(open);
	char *close = list_end(open);
	if (!close) {
		lp_error("probe '%s': missing ')'", spec->text);
		return -1;
	}
	if (close[1] == '(') {
		spec->params = lp_strndup(open, (size_t)(close + 1 - open));
		memmove(open, close + 1, strlen(close + 1) + 1);
		close = list_end(open);
		len = strlen(open);
		if (!close || close[1]) {
			lp_error("probe '%s': expected FUNC(PARAMS)(ARG,...)", spec->text);
			return -1;
		}
	} else if (close[1] == ' ') {
		/* "S::f() const": a parameter list and its qualifiers. */
		spec->params = lp_strdup(open);
		*open = '\0';
		return 0;
	} else if (!close[1]) {
		/* One list: variables if it reads as variable names. */
		bool idents = true;
		for (char *s = open + 1; s < close;) {
			size_t n = strcspn(s, ",)");
			size_t m = n;
			const char *w = s;
			while (m && w[m - 1] == ' ')
				m--;
			while (m && *w == ' ')
				w++, m--;
			idents &= is_value_expr(w, m);
			s += n + (s[n] == ',');
		}
		if (close > open + 1 && !idents && strstr(open, "->")) {
			/* No C++ parameter list has it: a member misspelt. */
			lp_error("probe '%s': bad value '%.*s': expected NAME, NAME->MEMBER or NAME.MEMBER",
				 spec->text, (int)(close - open - 1), open + 1);
			return -1;
		}
		if (close > open + 1 && !idents) {
			spec->params = lp_strdup(open);
			*open = '\0';
			return 0;
		}
		if (close > open + 1)
			spec->params_or_args = true;
		spec->params = lp_strdup(open);
	}
	if (open[len - 1] != ')') {
		lp_error("probe '%s': missing ')'", spec->text);
		return -1;
	}
	open[len - 1] = '\0';
	*open = '\0';
	char *s = open + 1;
	while (*s) {
		size_t n = strcspn(s, ",");
		while (n && s[n - 1] == ' ')
			n--;
		while (*s == ' ')
			s++, n--;
		if (!is_value_expr(s, n)) {
			lp_error("probe '%s': bad variable name '%.*s'", spec->text, (int)n, s);
			return -1;
		}
		spec->vars = lp_reallocarray(spec->vars, spec->nvars + 1, sizeof(char *));
		spec->vars[spec->nvars++] = lp_strndup(s, n);
		s += strcspn(s, ",");
		if (*s == ',')
			s++;
	}
	if (spec->nvars > LP_TRACE_MAX_CAPS) {
		lp_error("probe '%s': at most %d values a probe", spec->text, LP_TRACE_MAX_CAPS);
		return -1;
	}
	return 0;
}

/* syscall:NAME or tp:SUBSYSTEM:EVENT: 1 when s is one, 0 when it is not,
 * -1 after a message. */
static int parse_kernel_spec(struct lp_probe_spec *spec, const char *s)
{
	if (!strncmp(s, "syscall:", 8)) {
		spec->type = LP_PROBE_SYSCALLS;
		spec->name = lp_strdup(s + 8);
		if (lp_syscall__number(spec->name) < 0) {
			lp_error("probe '%s': no system call '%s'", spec->text, spec->name);
			return -1;
		}
		return 1;
	}
	if (!strncmp(s, "tp:", 3)) {
		spec->type = LP_PROBE_TRACEPOINT;
		const char *colon = strchr(s + 3, ':');
		if (!colon || !is_ident(s + 3, colon - (s + 3)) || !is_ident(colon + 1, strlen(colon + 1))) {
			lp_error("probe '%s': expected tp:SUBSYSTEM:EVENT", spec->text);
			return -1;
		}
		spec->name = lp_strdup(s + 3);
		return 1;
	}
	return 0;
}

/* The argument list of usdt:...:NAME(argN[:str],...), split off s into
 * spec->vars as written ("arg1:str"): which arguments to capture, and those
 * to read as C strings (a USDT argument spec gives sizes, not types).  0, or
 * -1 after a message. */
static int parse_usdt_args(struct lp_probe_spec *spec, char *s)
{
	char *open = strchr(s, '(');
	if (!open)
		return 0;
	size_t len = strlen(open);
	if (open[len - 1] != ')') {
		lp_error("probe '%s': missing ')'", spec->text);
		return -1;
	}
	open[len - 1] = '\0';
	*open = '\0';
	for (char *w = strtok(open + 1, ","); w; w = strtok(NULL, ",")) {
		w += strspn(w, " ");
		size_t n = strcspn(w, " ");
		w[n] = '\0';
		char *end;
		long k = strncmp(w, "arg", 3) ? -1 : strtol(w + 3, &end, 10);
		if (k < 0 || k >= LP_TRACE_MAX_CAPS || end == w + 3 || (*end && strcmp(end, ":str"))) {
			lp_error("probe '%s': bad argument '%s' (arg0 to arg%d, ':str' to read a C string)",
				 spec->text, w, LP_TRACE_MAX_CAPS - 1);
			return -1;
		}
		if (spec->nvars == LP_TRACE_MAX_CAPS) {
			lp_error("probe '%s': at most %d values a probe", spec->text, LP_TRACE_MAX_CAPS);
			return -1;
		}
		spec->vars = lp_reallocarray(spec->vars, spec->nvars + 1, sizeof(char *));
		spec->vars[spec->nvars++] = lp_strdup(w);
	}
	return 0;
}

/* usdt:[FILE:]PROVIDER:NAME[(ARGS)]: 1 when s is one, 0 when it is not, -1
 * after a message.  FILE is a path or a library's name (as LIB:FUNC's). */
static int parse_usdt_spec(struct lp_probe_spec *spec, char *s)
{
	if (strncmp(s, "usdt:", 5))
		return 0;
	spec->type = LP_PROBE_USDTS;
	if (parse_usdt_args(spec, s) < 0)
		return -1;
	const char *name = strrchr(s + 5, ':');
	const char *prov = name ? name : s + 5;
	while (prov > s + 5 && prov[-1] != ':')
		prov--;
	if (!name || !is_ident(prov, (size_t)(name - prov)) || !is_ident(name + 1, strlen(name + 1)) ||
	    (prov > s + 5 && prov - 1 == s + 5)) {
		lp_error("probe '%s': expected usdt:PROVIDER:NAME or usdt:FILE:PROVIDER:NAME", spec->text);
		return -1;
	}
	if (prov > s + 5)
		spec->lib = lp_strndup(s + 5, (size_t)(prov - 1 - (s + 5)));
	spec->provider = lp_strndup(prov, (size_t)(name - prov));
	spec->name = lp_strdup(name + 1);
	return 1;
}

/* python:[MODULE:]NAME: 1 when s is one, 0 when it is not, -1 after a
 * message.  NAME is a qualified name (co_qualname: Shop.checkout,
 * main.<locals>.inner) or a glob of them (* and ?), matched whole; MODULE
 * a module's dotted name or a glob (lib/capture/trace/pyprobe.c). */
static int parse_python_spec(struct lp_probe_spec *spec, const char *s)
{
	if (strncmp(s, "python:", 7))
		return 0;
	spec->type = LP_PROBE_PYTHON;
	s += 7;
	const char *colon = strchr(s, ':');
	if (colon) {
		spec->module = lp_strndup(s, (size_t)(colon - s));
		s = colon + 1;
	}
	spec->name = lp_strdup(s);
	struct lp_trace_py *conf = lp_malloc(sizeof(*conf));
	int r = lp_pyprobe__globs(spec->text, spec->module, spec->name, conf);
	free(conf);
	return r < 0 ? -1 : 1;
}

/* FILE:LINE, the part after the last colon a number: 1 when s is one, 0
 * when it is not, -1 after a message. */
static int parse_line_spec(struct lp_probe_spec *spec, char *s)
{
	char *colon = strrchr(s, ':');
	const char *why;
	int64_t line;
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return 0;
	*colon = '\0';
	if (lp_parse_i64(colon + 1, 1, INT_MAX, &line, &why) < 0 || !*s) {
		lp_error("probe '%s': bad line number", spec->text);
		return -1;
	}
	spec->type = LP_PROBE_LINE;
	spec->file = lp_strdup(s);
	spec->line = (int)line;
	return 1;
}

/* [LIB:]FUNC, [LIB:]FUNC+OFF or [LIB:]0xADDR: 0, or -1 after a message. */
static int parse_func_spec(struct lp_probe_spec *spec, char *s)
{
	const char *text = spec->text, *why;
	char *f = s, *colon = NULL;
	/* LIB:FUNC's colon is a single one: "Shop::checkout" is a name. */
	for (char *p = s; (p = strchr(p, ':')); p += 2) {
		if (p[1] != ':') {
			colon = p;
			break;
		}
	}
	if (colon) {
		*colon = '\0';
		if (!*s) {
			lp_error("probe '%s': empty library name", text);
			return -1;
		}
		spec->lib = lp_strdup(s);
		f = colon + 1;
	}
	if (!strncmp(f, "0x", 2)) {
		if (lp_parse_addr(f, UINT64_MAX, &spec->off, &why) < 0) {
			lp_error("probe '%s': bad address: %s", text, why);
			return -1;
		}
		spec->type = LP_PROBE_OFFSET;
		if (spec->nvars) {
			lp_error("probe '%s': values at an address need a FILE:LINE probe", text);
			return -1;
		}
		return 0;
	}
	char *plus = strchr(f, '+');
	if (plus) {
		*plus = '\0';
		if (lp_parse_addr(plus + 1, UINT32_MAX, &spec->off, &why) < 0) {
			lp_error("probe '%s': bad offset '%s': %s", text, plus + 1, why);
			return -1;
		}
		spec->type = LP_PROBE_OFFSET;
		if (spec->nvars) {
			lp_error("probe '%s': values at FUNC+OFF are not supported; use FILE:LINE(VAR)", text);
			return -1;
		}
	} else {
		spec->type = LP_PROBE_FUNC;
	}
	if (!is_func_name(f)) {
		lp_error("probe '%s': bad function name '%s'", text, f);
		return -1;
	}
	spec->func = lp_strdup(f);
	return 0;
}

struct lp_probe_spec *lp_probe_spec__parse(const char *text, bool all_args)
{
	struct lp_probe_spec *spec = lp_calloc(1, sizeof(*spec));
	spec->text = lp_strdup(text);
	spec->all_args = all_args;
	char *s = lp_strdup(text);
	int rc = parse_kernel_spec(spec, s);
	if (rc == 0)
		rc = parse_usdt_spec(spec, s);
	if (rc == 0)
		rc = parse_python_spec(spec, s);
	if (rc == 0)
		rc = parse_vars(spec, s);
	if (rc == 0)
		rc = parse_line_spec(spec, s);
	if (rc == 0)
		rc = parse_func_spec(spec, s);
	free(s);
	if (rc < 0) {
		lp_probe_spec__free(spec);
		errno = EINVAL;
		return NULL;
	}
	return spec;
}

void lp_probe_spec__free(struct lp_probe_spec *spec)
{
	if (!spec)
		return;
	free(spec->text);
	free(spec->lib);
	free(spec->params);
	free(spec->func);
	free(spec->file);
	free(spec->name);
	free(spec->provider);
	free(spec->module);
	for (size_t i = 0; i < spec->nvars; i++)
		free(spec->vars[i]);
	free(spec->vars);
	free(spec);
}
