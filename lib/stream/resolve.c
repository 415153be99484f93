/* resolve.c - --inline's questions over pipes (resolve.h). */
#include "stream/resolve.h"
#include "stream/attrs.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct lp_inline_coproc {
	struct lp_inline_resolver res;
	char **argv;
	pid_t pid;			/* 0: not started */
	FILE *to, *from;
	char *line;			/* an answer's line */
	size_t line_cap;
	struct lp_inline_entry *entries;
	char **texts;			/* their strings, 2 per entry */
	size_t nentries, cap;
	char *esc;			/* an escaped question field */
	size_t esc_cap;
};

static void start(struct lp_inline_coproc *c)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		lp_die(1, "--inline: pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		lp_die(1, "--inline: fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execvp(c->argv[0], c->argv);
		lp_error_errno("--inline: cannot run %s", c->argv[0]);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->pid = pid;
	c->to = fdopen(in[1], "w");
	c->from = fdopen(out[0], "r");
	if (!c->to || !c->from)
		lp_die(1, "--inline: fdopen: %s", strerror(errno));
}

/* Why the process stopped answering, and the end of this one. */
static void __attribute__((noreturn)) gone(struct lp_inline_coproc *c)
{
	int st = 0;
	fclose(c->to);
	c->to = NULL;
	if (waitpid(c->pid, &st, 0) == c->pid && WIFSIGNALED(st))
		lp_die(1, "--inline: %s died of signal %d", c->argv[0], WTERMSIG(st));
	lp_die(1, "--inline: %s stopped answering (exit status %d)", c->argv[0],
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static const char *escaped(struct lp_inline_coproc *c, const char *s)
{
	size_t n = strlen(s);
	lp_grow(&c->esc, &c->esc_cap, 4 * n + 1);
	c->esc[lp_escape(c->esc, s, n)] = '\0';
	return c->esc;
}

/* The next line of an answer, without its '\n', in c->line. */
static size_t answer_line(struct lp_inline_coproc *c)
{
	ssize_t n = getline(&c->line, &c->line_cap, c->from);
	if (n <= 0 || c->line[n - 1] != '\n')
		gone(c);
	c->line[--n] = '\0';
	return (size_t)n;
}

/* Sends one question (a line) and reads the first line of its answer. */
static void ask(struct lp_inline_coproc *c, const char *what, const char *module,
		const char *arg)
{
	if (!c->pid)
		start(c);
	/* A process that died is reported by gone(), not by SIGPIPE. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old);
	int w = fprintf(c->to, "%s\t%s\t", what, escaped(c, module));
	if (w >= 0)
		w = fprintf(c->to, "%s\n", arg);
	int f = fflush(c->to);
	sigaction(SIGPIPE, &old, NULL);
	if (w < 0 || f == EOF)
		gone(c);
	answer_line(c);
}

static int lookup(void *ctx, const char *module, uint64_t addr,
		  const struct lp_inline_entry **out)
{
	struct lp_inline_coproc *c = ctx;
	char hex[24];
	snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
	ask(c, "a", module, hex);
	char *end;
	errno = 0;
	long n = strtol(c->line, &end, 10);
	if (*end || errno || n < -1 || n > 1 << 20)
		lp_die(1, "--inline: %s answered '%s' to a lookup", c->argv[0], c->line);
	for (size_t i = 0; i < 2 * c->nentries; i++)
		free(c->texts[i]);
	c->nentries = 0;
	if (n <= 0)
		return (int)n;
	if ((size_t)n > c->cap) {
		c->cap = (size_t)n;
		c->entries = lp_reallocarray(c->entries, c->cap, sizeof(*c->entries));
		c->texts = lp_reallocarray(c->texts, 2 * c->cap, sizeof(*c->texts));
	}
	for (long i = 0; i < n; i++) {
		size_t len = answer_line(c);
		char *tab = memchr(c->line, '\t', len);
		if (!tab)
			lp_die(1, "--inline: %s answered '%s' for a function", c->argv[0], c->line);
		*tab = '\0';
		char *func = c->texts[2 * i] = lp_strdup(c->line);
		char *loc = c->texts[2 * i + 1] = lp_strdup(tab + 1);
		func[lp_unescape(func, func, strlen(func))] = '\0';
		loc[lp_unescape(loc, loc, strlen(loc))] = '\0';
		c->entries[i] = (struct lp_inline_entry){ func, loc };
		c->nentries++;
	}
	*out = c->entries;
	return (int)n;
}

static int symbol(void *ctx, const char *module, const char *name, uint64_t *value)
{
	struct lp_inline_coproc *c = ctx;
	/* escaped() has one buffer: the name goes first through a copy */
	char *name_esc = lp_strdup(escaped(c, name));
	ask(c, "s", module, name_esc);
	free(name_esc);
	if (!strcmp(c->line, "-"))
		return -1;
	const char *why;
	if (lp_parse_addr(c->line, UINT64_MAX, value, &why) < 0)
		lp_die(1, "--inline: %s answered '%s' to a symbol: %s", c->argv[0], c->line, why);
	return 0;
}

struct lp_inline_coproc *lp_inline_coproc__new(char *const argv[])
{
	struct lp_inline_coproc *c = lp_calloc(1, sizeof(*c));
	size_t n = 0;
	while (argv[n])
		n++;
	c->argv = lp_calloc(n + 1, sizeof(*c->argv));
	for (size_t i = 0; i < n; i++)
		c->argv[i] = lp_strdup(argv[i]);
	c->res = (struct lp_inline_resolver){ lookup, symbol, c };
	return c;
}

const struct lp_inline_resolver *lp_inline_coproc__resolver(struct lp_inline_coproc *c)
{
	return &c->res;
}

void lp_inline_coproc__free(struct lp_inline_coproc *c)
{
	if (!c)
		return;
	if (c->pid) {
		fclose(c->to);	/* its end of input: it exits */
		fclose(c->from);
		waitpid(c->pid, NULL, 0);
	}
	for (size_t i = 0; c->argv[i]; i++)
		free(c->argv[i]);
	free(c->argv);
	for (size_t i = 0; i < 2 * c->nentries; i++)
		free(c->texts[i]);
	free(c->texts);
	free(c->entries);
	free(c->line);
	free(c->esc);
	free(c);
}

/* --- the answering end -------------------------------------------------- */

static int put_escaped(FILE *out, const char *s, char **buf, size_t *cap)
{
	size_t n = strlen(s);
	lp_grow(buf, cap, 4 * n + 1);
	size_t m = lp_escape(*buf, s, n);
	return fwrite(*buf, 1, m, out) == m ? 0 : -1;
}

int lp_inline_resolver__serve(const struct lp_inline_resolver *res, FILE *in, FILE *out)
{
	char *line = NULL, *buf = NULL;
	size_t cap = 0, bcap = 0;
	ssize_t n;
	int ret = 0;
	while (ret == 0 && (n = getline(&line, &cap, in)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		/* WHAT MODULE ARG, module and arg unescaped in place */
		char *mod = strchr(line, '\t'), *arg = mod ? strchr(mod + 1, '\t') : NULL;
		if (!arg || mod - line != 1 || (line[0] != 'a' && line[0] != 's')) {
			lp_error("<stdin>: a question is 'a<TAB>MODULE<TAB>ADDR' or "
				 "'s<TAB>MODULE<TAB>NAME', not '%s'", line);
			ret = -2;
			break;
		}
		*arg++ = '\0';
		mod++;
		mod[lp_unescape(mod, mod, strlen(mod))] = '\0';
		arg[lp_unescape(arg, arg, strlen(arg))] = '\0';
		if (line[0] == 's') {
			uint64_t v;
			if (res->symbol(res->ctx, mod, arg, &v) < 0)
				ret = fputs("-\n", out) < 0 ? -1 : 0;
			else
				ret = fprintf(out, "0x%" PRIx64 "\n", v) < 0 ? -1 : 0;
		} else {
			uint64_t addr;
			const char *why;
			if (lp_parse_addr(arg, UINT64_MAX, &addr, &why) < 0) {
				lp_error("<stdin>: address '%s': %s", arg, why);
				ret = -2;
				break;
			}
			const struct lp_inline_entry *e;
			int k = res->lookup(res->ctx, mod, addr, &e);
			ret = fprintf(out, "%d\n", k) < 0 ? -1 : 0;
			for (int i = 0; i < k && ret == 0; i++)
				ret = put_escaped(out, e[i].func, &buf, &bcap) < 0 || fputc('\t', out) == EOF ||
				      put_escaped(out, e[i].loc, &buf, &bcap) < 0 || fputc('\n', out) == EOF ? -1 : 0;
		}
		if (ret == 0 && fflush(out) == EOF)
			ret = -1;
	}
	free(line);
	free(buf);
	return ret;
}
