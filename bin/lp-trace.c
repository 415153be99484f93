/* lp-trace - timed spans from uprobes, source lines, variables and system
 * calls, written as an lp stream (formats/lp-stream.md).
 *
 *   lp-trace [-d DURATION] [-o FILE] [--min-duration DUR] [--args]
 *            [--calibrate DUR] [--control FIFO] [-v] PROBE...
 *            (-p PID[,PID...] | -- CMD [ARG...])
 *   lp-trace --list [PATTERN] | --lines FUNC | --vars FILE:LINE
 *            (-p PID | BINARY | -- CMD)
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/trace/discover.h"
#include "capture/trace/family.h"
#include "capture/trace/probe.h"
#include "capture/producer.h"
#include "capture/trace/pycost.h"
#include "stream/stream.h"
#include "capture/target.h"
#include "capture/trace/tracer.h"
#include "capture/trace/keyed.h"
#include "capture/kfeatures.h"
#include "capture/trace/usdt.h"
#include "base/util.h"

struct options {
	int64_t duration_ns;	/* 0: until the target exits or a signal */
	const char *output;
	int64_t min_duration_ns;
	bool all_args;
	bool no_demangle;
	int verbose;		/* the count of -v */
	const char *pids;
	uint64_t ring_bytes;
	uint32_t max_pids;
	bool no_follow;
	int64_t calibrate_ns;	/* the calibration's budget; 0: none */
	enum lp_returns returns;
	bool list;		/* --list [PATTERN] */
	const char *lines;	/* --lines FUNC */
	const char *blocks;	/* --blocks FUNC */
	const char *vars;	/* --vars FILE:LINE */
	const char *control;	/* --control FIFO */
	uint64_t max_keys;	/* key: requests open at once */
};

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-trace [-d DURATION] [-o FILE] [--min-duration DUR] [--args]\n"
		"                [--max-pids N] [--calibrate DUR] [--no-demangle]\n"
		"                [--returns auto|uretprobe|insn] [--control FIFO] [-v]\n"
		"                PROBE... (-p PID[,PID...] | -- CMD [ARG...])\n"
		"       lp-trace --list [PATTERN] (-p PID | BINARY... | -- CMD)\n"
		"       lp-trace --lines FUNC (-p PID | BINARY | -- CMD)\n"
		"       lp-trace --blocks FUNC (-p PID | BINARY | -- CMD)\n"
		"       lp-trace --vars FILE:LINE (-p PID | BINARY | -- CMD)\n"
		"\n"
		"Traces calls and events of a running process (-p) or of a command it starts,\n"
		"attached before the command runs, and writes them as an lp stream.\n"
		"\n"
		"probes:\n"
		"  FUNC, FUNC(ARG,...)   a function of the executable: a span per call; C++ as\n"
		"                        a profile names it too: Shop::checkout, traced(int)\n"
		"  LIB:FUNC              a function of a shared library (path or name: libc, c)\n"
		"  FUNC+OFF, 0xADDR      a point event at an instruction\n"
		"  FILE.c:LINE[(VAR,...)] a point event at a source line, with local variables\n"
		"  syscall:NAME          a system call: a span with its arguments and result\n"
		"  tp:SUBSYS:EVENT       a kernel tracepoint: a point event with its fields\n"
		"  usdt:[FILE:]PROVIDER:NAME[(argN[:str],...)]  a USDT probe (of FILE, else of\n"
		"                        the executable or a library it maps): a point event\n"
		"                        with its arguments (those listed; :str a C string);\n"
		"                        PROVIDER:X for X__entry..X__return (X__start..X__done):\n"
		"                        a span per pair, nested per thread\n"
		"  python:[MODULE:]NAME  a Python function of a CPython 3.11 target (a qualified\n"
		"                        name, Shop.checkout, or a glob, 'Shop.*'; MODULE its\n"
		"                        module, json.decoder, or a glob): a span per call,\n"
		"                        named python:QUALNAME, with file= and line=;\n"
		"                        one python: probe at a time\n"
		"  key:NAME=START(KEY)..END(KEY)  a span NAME per request: from a call of\n"
		"                        START to the call of END with the same KEY (ret,\n"
		"                        an argument or argN: the request object), across\n"
		"                        threads; key=KEY, end_tid= END's thread\n"
		"  key:NAME@FUNC(KEY)    FUNC's spans carry key.NAME=KEY: while in them the\n"
		"                        thread works for that request (lp-split -e NAME)\n"
		"\n"
		"options:\n"
		"  -p, --pid PID[,PID...]   trace these processes\n"
		"  -d, --duration DURATION  stop after this long (default: target exit or SIGINT)\n"
		"  -o, --output FILE        write the stream to FILE (default: stdout)\n"
		"      --min-duration DUR   only calls at least this long (250us, 3ms, 1.5s)\n"
		"      --args               capture every argument of FUNC probes\n"
		"      --no-demangle        C++ and Rust functions' spans named by their symbol\n"
		"                           (_Z6tracedi), not as profiles show them (traced(int))\n"
		"      --ring-size BYTES    BPF ring buffer size, a power of two (default 8 MiB)\n"
		"      --max-keys N         key: requests open at once (default 65536); a\n"
		"                           start beyond evicts the oldest (lost keyed-evicted)\n"
		"      --no-follow          not the processes the targets fork\n"
		"      --max-pids N         at most N processes traced at once, the targets and\n"
		"                           their children (default 8192); more children are\n"
		"                           counted as lost\n"
		"      --returns HOW        how a function's returns are seen: auto (default) a\n"
		"                           uretprobe where it is safe, else probes on its ret\n"
		"                           and tail-call instructions (slower: single-stepped);\n"
		"                           uretprobe or insn forces either\n"
		"      --calibrate DUR      measure what the probes cost the traced threads for\n"
		"                           about this long at start (default 200ms): cost\n"
		"                           records, and lp_ns= on spans; 0: neither\n"
		"      --list [PATTERN]     list the functions and USDT probes (those whose name\n"
		"                           matches the glob PATTERN; 'usdt': the USDT probes)\n"
		"                           of the process's files or of BINARY..., a line\n"
		"                           each: kind, probe, file, source, argument count,\n"
		"                           arguments, how returns are seen, the copy (a clone)\n"
		"      --lines FUNC         FUNC's source lines, each with the line probe that\n"
		"                           goes there: line, probe, instruction class, sites,\n"
		"                           source\n"
		"      --blocks FUNC        FUNC's loops (each with its head's line probe),\n"
		"                           inlined calls (each with the probe tracing it),\n"
		"                           lexical blocks (with their variables) and basic\n"
		"                           blocks, with their source lines\n"
		"      --vars FILE:LINE     the variables in scope where FILE:LINE probes: its\n"
		"                           address, function, kind, name, type, where it\n"
		"                           lives, whether FILE:LINE(NAME) captures it\n"
		"      --control FIFO       take commands from FIFO (made unless it exists) while\n"
		"                           tracing: add PROBE, remove PROBE, status; replies\n"
		"                           on stderr\n"
		"  -v, --verbose            say where probes go; libbpf's warnings (-vv: its\n"
		"                           debug output too)\n"
		"  -h, --help               this help\n"
		"      --version            the version\n"
		"      --features           what lp uses of this kernel, and what it does\n"
		"                           where a feature is missing\n"
		"\n"
		"Durations: a number and a unit, ns, us, ms, s, m or h (250us, 1.5s, 2m);\n"
		"a bare number is seconds.\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

static int write_header(struct lp_writer *w)
{
	struct lp_attrs_buf a = { 0 };
	lp_attrs_buf__producer_keys(&a);
	lp_attrs_buf__add(&a, "producer", "lp-trace");
	struct lp_header h = { .version = LP_STREAM_VERSION, .attrs = lp_attrs_buf__attrs(&a) };
	int r = lp_writer__header(w, &h);
	lp_attrs_buf__free(&a);
	return r;
}

/* A #! command followed from exec to exec (lp_target__run_to_exec): the
 * probes go on the first program it runs that holds them all ("FUNC" is
 * the final program's, as lp-record follows an exec'd interpreter). */
struct at_exec {
	struct lp_probe_spec **specs;
	int nspecs;
	int verbose;
	const char *cmd;
	char *last_exe;			/* the program exec'd last */
	struct lp_probe_point *points;	/* resolved there once it holds them */
	size_t npoints;
};

static int at_exec(void *arg, pid_t pid)
{
	struct at_exec *ax = arg;
	free(ax->last_exe);
	if (!(ax->last_exe = lp_family__exe(pid)))
		return -1;
	/* A program without the probes is the normal case here (the shell
	 * of a shim): try quietly, and say why only if no program has them. */
	fflush(stderr);
	int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && null >= 0)
		dup2(null, 2);
	int r = lp_probe__resolve_specs(ax->specs, ax->nspecs, ax->last_exe, 0, true, 0, &ax->points,
			       &ax->npoints);
	if (saved >= 0 && null >= 0)
		dup2(saved, 2);
	if (saved >= 0)
		close(saved);
	if (null >= 0)
		close(null);
	if (r == 0 && ax->verbose) {
		/* Again, to say where each probe goes. */
		for (size_t i = 0; i < ax->npoints; i++)
			lp_probe_point__fini(&ax->points[i]);
		free(ax->points);
		ax->points = NULL;
		ax->npoints = 0;
		r = lp_probe__resolve_specs(ax->specs, ax->nspecs, ax->last_exe, 0, true, ax->verbose,
				   &ax->points, &ax->npoints);
	}
	if (ax->verbose)
		lp_error("'%s' exec'd %s: %s", ax->cmd, ax->last_exe,
			 r == 0 ? "the probes go there" : "the probes are not all there: following on");
	if (r == 0)
		return 1;
	for (size_t i = 0; i < ax->npoints; i++)
		lp_probe_point__fini(&ax->points[i]);
	free(ax->points);
	ax->points = NULL;
	ax->npoints = 0;
	return 0;
}

enum { OPT_MIN = 256, OPT_ARGS, OPT_RING, OPT_VERSION, OPT_NO_FOLLOW, OPT_MAX_PIDS,
       OPT_CALIBRATE, OPT_NO_DEMANGLE, OPT_RETURNS, OPT_LIST, OPT_LINES, OPT_BLOCKS, OPT_VARS,
       OPT_CONTROL, OPT_MAX_KEYS, OPT_FEATURES };

static const struct option longopts[] = {
	{ "pid", required_argument, 0, 'p' },
	{ "duration", required_argument, 0, 'd' },
	{ "output", required_argument, 0, 'o' },
	{ "min-duration", required_argument, 0, OPT_MIN },
	{ "args", no_argument, 0, OPT_ARGS },
	{ "no-demangle", no_argument, 0, OPT_NO_DEMANGLE },
	{ "ring-size", required_argument, 0, OPT_RING },
	{ "no-follow", no_argument, 0, OPT_NO_FOLLOW },
	{ "max-pids", required_argument, 0, OPT_MAX_PIDS },
	{ "max-keys", required_argument, 0, OPT_MAX_KEYS },
	{ "calibrate", required_argument, 0, OPT_CALIBRATE },
	{ "returns", required_argument, 0, OPT_RETURNS },
	{ "list", no_argument, 0, OPT_LIST },
	{ "lines", required_argument, 0, OPT_LINES },
	{ "blocks", required_argument, 0, OPT_BLOCKS },
	{ "vars", required_argument, 0, OPT_VARS },
	{ "control", required_argument, 0, OPT_CONTROL },
	{ "verbose", no_argument, 0, 'v' },
	{ "help", no_argument, 0, 'h' },
	{ "version", no_argument, 0, OPT_VERSION },
	{ "features", no_argument, 0, OPT_FEATURES },
	{ 0, 0, 0, 0 },
};

/* One option (getopt's c, its argument); exits 2 on bad usage. */
static void set_option(struct options *opt, int c, const char *arg)
{
	switch (c) {
	case 'p': opt->pids = arg; break;
	case 'd': opt->duration_ns = lp_option_duration("duration", arg, true); break;
	case 'o': opt->output = arg; break;
	case OPT_MIN: opt->min_duration_ns = lp_option_duration("min-duration", arg, false); break;
	case OPT_ARGS: opt->all_args = true; break;
	case OPT_NO_DEMANGLE: opt->no_demangle = true; break;
	case OPT_RING:
		opt->ring_bytes = lp_option_u64("ring-size", arg, 4096, 1u << 30);
		if (opt->ring_bytes & (opt->ring_bytes - 1))
			lp_option_fail("ring-size", arg, "must be a power of two");
		break;
	case 'v': opt->verbose++; break;
	case OPT_NO_FOLLOW: opt->no_follow = true; break;
	case OPT_MAX_PIDS:
		opt->max_pids = (uint32_t)lp_option_u64("max-pids", arg, 1, LP_TARGET_MAX_PIDS_LIMIT);
		break;
	case OPT_MAX_KEYS: opt->max_keys = lp_option_u64("max-keys", arg, 1, 1u << 24); break;
	case OPT_CALIBRATE: opt->calibrate_ns = lp_option_duration("calibrate", arg, false); break;
	case OPT_RETURNS:
		if (!strcmp(arg, "auto"))
			opt->returns = LP_RETURNS_AUTO;
		else if (!strcmp(arg, "uretprobe"))
			opt->returns = LP_RETURNS_URETPROBE;
		else if (!strcmp(arg, "insn"))
			opt->returns = LP_RETURNS_INSN;
		else
			lp_option_fail("returns", arg, "expected auto, uretprobe or insn");
		break;
	case OPT_LIST: opt->list = true; break;
	case OPT_LINES: opt->lines = arg; break;
	case OPT_BLOCKS: opt->blocks = arg; break;
	case OPT_VARS: opt->vars = arg; break;
	case OPT_CONTROL: opt->control = arg; break;
	case 'h':
		usage(stdout, 0);
		break;
	case OPT_VERSION:
		lp_print_version();
	case OPT_FEATURES:
		exit(lp_kfeatures__print(stdout) < 0 ? 1 : 0);
	default:
		usage(stderr, 2);
	}
}

/* The executable of --list, --lines or --vars: -p's (one process), -- CMD's
 * as execvp finds it, or BINARY; *pid the process (0: none).  NULL after
 * saying why; exits 2 on bad usage. */
static char *discover_exe(const char *pid_arg, char **cmd, const char *binary, pid_t *pid)
{
	*pid = 0;
	if (!pid_arg && !cmd && !binary) {
		lp_error("give -p PID, a BINARY or -- CMD");
		usage(stderr, 2);
	}
	if (!!pid_arg + !!cmd + !!binary > 1) {
		lp_error("-p, -- CMD and a BINARY exclude each other");
		exit(2);
	}
	if (binary)
		return lp_strdup(binary);
	if (cmd) {
		struct lp_producer *p;
		struct lp_producer_opts po = { .cmd = cmd, .max_pids = 1 };
		if (lp_producer__open(&p, &po))
			return NULL;
		char *exe = lp_strdup(lp_producer__command_exe(p));
		lp_producer__free(p);
		/* A shim: the program it runs is known only when it runs. */
		if (lp_target__is_script(exe)) {
			lp_error("'%s' is a #! script: give the program it runs, or -p PID of it", exe);
			free(exe);
			return NULL;
		}
		return exe;
	}
	int64_t v;
	const char *why;
	if (lp_parse_i64(pid_arg, 1, INT32_MAX, &v, &why) < 0)
		lp_option_fail("pid", pid_arg, why);
	*pid = (pid_t)v;
	return lp_family__exe(*pid);
}

/* --list, --lines, --vars: the exit status. */
static int discover(const struct options *opt, char **cmd, int nargs, char **args)
{
	if (opt->list + !!opt->lines + !!opt->blocks + !!opt->vars > 1) {
		lp_error("--list, --lines, --blocks and --vars exclude each other");
		exit(2);
	}
	if (cmd && !cmd[0]) {
		lp_error("no command after --");
		usage(stderr, 2);
	}
	bool target = opt->pids || cmd;
	/* --list: [PATTERN] with a target; BINARY, or PATTERN BINARY...
	 * without. */
	const char *pattern = opt->list && (target ? nargs > 0 : nargs > 1) ? args[0] : NULL;
	int nbin = nargs - !!pattern;
	if (target ? nbin > 0 : !opt->list && nbin > 1) {
		lp_error("unexpected argument '%s'", args[nargs - 1]);
		usage(stderr, 2);
	}
	pid_t pid;
	char *exe = discover_exe(opt->pids, cmd, nbin ? args[nargs - nbin] : NULL, &pid);
	if (!exe)
		return 1;
	int status = 1;
	if (opt->list) {
		size_t n = (size_t)nbin;
		char **files = args + nargs - nbin;
		if (!nbin)
			files = lp_usdt__files(exe, pid, &n);
		long r = lp_discover__list(pattern, files, n, exe, pid > 0, stdout);
		if (r == 0)
			lp_error("--list: nothing%s%s%s in %s%s", pattern ? " matches '" : "",
				 pattern ? pattern : "", pattern ? "'" : "", exe,
				 pid > 0 ? " or the files it maps" : n > 1 ? " or the other files" : "");
		status = r > 0 ? 0 : 1;
		if (!nbin)
			lp_usdt__free_files(files, n);
	} else {
		const char *func = opt->lines ? opt->lines : opt->blocks;
		const char *text = func ? func : opt->vars;
		struct lp_probe_spec *spec = lp_probe_spec__parse(text, false);
		enum lp_probe_type want = func ? LP_PROBE_FUNC : LP_PROBE_LINE;
		if (spec && spec->type != want) {
			lp_probe_spec__free(spec);
			free(exe);
			lp_option_fail(opt->lines ? "lines" : opt->blocks ? "blocks" : "vars", text,
				       func ? "expected a function, FUNC or LIB:FUNC"
					    : "expected a source line, FILE:LINE");
		}
		if (!spec)
			exit(2);
		int r = opt->lines    ? lp_discover__lines(spec, exe, pid, stdout)
			: opt->blocks ? lp_discover__blocks(spec, exe, pid, stdout)
				      : lp_discover__vars(spec, exe, pid, stdout);
		status = r < 0 ? 1 : 0;
		lp_probe_spec__free(spec);
	}
	free(exe);
	return status;
}

/* Everything lp-trace holds, freed by trace_free. */
struct trace {
	struct options opt;
	char **cmd;			/* after "--"; NULL: -p */
	struct lp_probe_spec **specs;	/* as given */
	int nspecs;
	struct lp_producer *p;
	/* Resolved in each target's executable (a command's: one). */
	struct lp_probe_point **points;
	size_t *npoints;
	size_t nresolved;
	struct lp_family *family;
	struct lp_tracer *tracer;
	struct lp_writer *w;
	struct lp_keyed *keyed;		/* key: probes, or NULL */
	struct lp_pycost *pycost;	/* python: probes, or NULL */
};

/* python: probes (lib/capture/trace/pycost.h), or NULL. */
static struct lp_pycost *pycost_new(struct trace *t)
{
	bool py = false;
	for (size_t p = 0; p < t->nresolved; p++)
		for (size_t i = 0; i < t->npoints[p]; i++)
			py |= t->points[p][i].cfg.kind == LP_PROBE_PY;
	size_t n;
	const pid_t *pids = lp_family__pids(t->family, &n);
	return py ? lp_pycost__new(t->tracer, pids, n) : NULL;
}

static int control_command(void *arg, char *line);

/* The options and the probes, parsed before anything is attached; exits
 * 2 on bad usage. */
static void parse(struct trace *t, int argc, char **argv)
{
	/* Everything after "--" is the command, never options or probes. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			t->cmd = argv + i + 1;
			argv[i] = NULL;
			argc = i;
			break;
		}
	}
	int c;
	while ((c = getopt_long(argc, argv, "p:d:o:vh", longopts, NULL)) != -1)
		set_option(&t->opt, c, optarg);
	if (t->opt.list || t->opt.lines || t->opt.blocks || t->opt.vars) {
		int status = discover(&t->opt, t->cmd, argc - optind, argv + optind);
		exit(lp_close_output(stdout, "stdout") ? 1 : status);
	}
	/* With --control, probes may all come later (add PROBE). */
	if ((t->nspecs = argc - optind) <= 0 && !t->opt.control) {
		lp_error("no probe given (or --control FIFO, to add them while tracing)");
		usage(stderr, 2);
	}
	if (t->opt.pids && t->cmd && t->cmd[0]) {
		lp_error("-p and a command exclude each other");
		exit(2);
	}
	if (!t->opt.pids && !(t->cmd && t->cmd[0])) {
		lp_error("no target: give -p PID or -- CMD");
		usage(stderr, 2);
	}
	/* A key: probe is two probes (its start and end) or one (a
	 * callback), traced as any others. */
	const char **texts = lp_calloc(2 * (size_t)t->nspecs + 1, sizeof(*texts));
	const char **starts = lp_calloc((size_t)t->nspecs + 1, sizeof(*starts));
	int ntexts = 0, nstarts = 0;
	for (int i = 0; i < t->nspecs; i++) {
		const char *arg = argv[optind + i], *parts[2];
		if (!lp_keyed__is_spec(arg)) {
			texts[ntexts++] = arg;
			continue;
		}
		if (!t->keyed)
			t->keyed = lp_keyed__new(t->opt.max_keys ? t->opt.max_keys : 65536);
		int n = lp_keyed__add(t->keyed, arg, parts);
		if (n < 0)
			exit(2);
		texts[ntexts++] = parts[0];
		if (n == 2)
			starts[nstarts++] = parts[1];
	}
	/* Requests' starts attached last (lp_keyed__add). */
	for (int i = 0; i < nstarts; i++)
		texts[ntexts++] = starts[i];
	free(starts);
	t->nspecs = ntexts;
	t->specs = lp_calloc((size_t)t->nspecs + 1, sizeof(*t->specs));
	const char *python = NULL;
	for (int i = 0; i < t->nspecs; i++) {
		if (!(t->specs[i] = lp_probe_spec__parse(texts[i], t->opt.all_args)))
			exit(2);
		/* Its probes sit in the eval loop, matching one glob. */
		if (t->specs[i]->type == LP_PROBE_PYTHON && python) {
			lp_error("probes '%s' and '%s': one python: probe at a time (a glob names several "
				 "functions: 'python:Shop.*')", python, t->specs[i]->text);
			exit(2);
		}
		if (t->specs[i]->type == LP_PROBE_PYTHON)
			python = t->specs[i]->text;
		t->specs[i]->no_demangle = t->opt.no_demangle;
		t->specs[i]->returns = t->opt.returns;
	}
	free(texts);
}

/* A #! command (started now) or a -p shim (still its shell), followed
 * from exec to exec until a program holds the probes (at_exec).  0, or 1
 * after saying why. */
static int resolve_script(struct trace *t)
{
	char what[64];
	if (!t->cmd)
		snprintf(what, sizeof(what), "pid %s", t->opt.pids);
	const char *cmd = t->cmd ? t->cmd[0] : what;
	struct at_exec ax = { t->specs, t->nspecs, t->opt.verbose, cmd, NULL, NULL, 0 };

	if (lp_producer__spawn(t->p))
		return 1;
	struct lp_target *target = lp_producer__target(t->p);
	int r = lp_producer__run_to_exec(t->p, at_exec, &ax);
	if (r == -1 && ax.last_exe && !lp_target__alive(target)) {
		/* Say why in the last program it ran. */
		lp_probe__resolve_specs(t->specs, t->nspecs, ax.last_exe, 0, true, t->opt.verbose,
			       &ax.points, &ax.npoints);
		if (t->cmd)
			lp_error("'%s' exited (status %d) without running a program that holds the "
				 "probes; the last it ran: %s", cmd, lp_target__finish(target, false),
				 ax.last_exe);
		else
			lp_error("%s exited without running a program that holds the probes; the last "
				 "it ran: %s", cmd, ax.last_exe);
	}
	free(ax.last_exe);
	t->points[0] = ax.points;
	t->npoints[0] = ax.npoints;
	return r < 0;
}

/* Every probe resolved in the context of each target's executable (a
 * command's before it is started: a mistake costs nothing).  0, or 1
 * after saying why. */
static int resolve(struct trace *t)
{
	struct lp_target *target = lp_producer__target(t->p);
	const char *cmd_exe = lp_producer__command_exe(t->p);
	size_t npids = 1;
	const pid_t *pids = target ? lp_target__pids(target, &npids) : NULL;

	t->points = lp_calloc(npids, sizeof(*t->points));
	t->npoints = lp_calloc(npids, sizeof(*t->npoints));
	t->nresolved = npids;
	if (!target && lp_target__is_script(cmd_exe))
		return resolve_script(t);
	char script[PATH_MAX];
	if (target && npids == 1 && lp_target__shim(pids[0], script, sizeof(script))) {
		lp_error("note: pid %d is still a shim (%s), not yet the program it runs: "
			 "following its execs, as with -- CMD", (int)pids[0], script);
		return resolve_script(t);
	}
	for (size_t p = 0; p < npids; p++) {
		char *exe = pids ? lp_family__exe(pids[p]) : lp_strdup(cmd_exe);
		if (!exe)
			return 1;
		int r = lp_probe__resolve_specs(t->specs, t->nspecs, exe, pids ? pids[p] : 0, p == 0,
				       t->opt.verbose, &t->points[p], &t->npoints[p]);
		free(exe);
		if (r < 0)
			return 1;
	}
	return 0;
}

/* The BPF programs loaded, and what each class of probe costs measured
 * before any is attached.  0, or 1 after saying why. */
static int open_tracer(struct trace *t)
{
	struct lp_tracer_opts topts = {
		.min_duration_ns = t->opt.min_duration_ns,
		.ring_bytes = t->opt.ring_bytes,
		.max_pids = t->opt.max_pids,
		.verbose = t->opt.verbose,
		.keyed = t->keyed,
	};
	if (!(t->tracer = lp_tracer__new(&topts)))
		return 1;
	struct lp_cal_needs need = { 0 };
	for (size_t p = 0; p < t->nresolved; p++)
		lp_tracer__classes(t->points[p], t->npoints[p], &need);
	if (t->opt.calibrate_ns > 0)
		lp_tracer__calibrate(t->tracer, &need, t->opt.calibrate_ns);
	return 0;
}

/* The probes attached to the targets (a command held before its exec)
 * and, unless --no-follow, to their descendants.  0, or 1 after saying
 * why. */
static int attach(struct trace *t)
{
	size_t npids;

	if (lp_producer__spawn(t->p))
		return 1;
	const pid_t *pids = lp_target__pids(lp_producer__target(t->p), &npids);
	if (lp_family__attach(&t->family, t->tracer, pids, npids, t->points, t->npoints,
			      !t->opt.no_follow) < 0)
		return 1;
	if (lp_target__spawned(lp_producer__target(t->p)))
		lp_tracer__set_start(t->tracer);
	return 0;
}

/* The tracer as the producer shell's engine (lib/capture/producer.h). */
static int begin(void *arg)
{
	struct trace *t = arg;
	if (write_header(t->w) < 0 || lp_tracer__write_costs(t->tracer, t->w) < 0)
		return -1;
	t->pycost = pycost_new(t);
	if (!t->opt.control)
		return 0;
	/* Probes may go: when each came is said, the first ones too. */
	int *ids = NULL;
	size_t n = 0;
	size_t npids;
	lp_family__pids(t->family, &npids);
	for (size_t p = 0; p < npids; p++)
		for (size_t i = 0; i < t->npoints[p]; i++) {
			ids = lp_reallocarray(ids, n + 1, sizeof(*ids));
			ids[n++] = lp_family__id(t->family, p, i);
		}
	int r = lp_tracer__write_attached(t->tracer, t->w, ids, n);
	free(ids);
	return r;
}

static int poll_events(void *arg, int timeout_ms)
{
	struct trace *t = arg;
	lp_pycost__check(t->pycost);
	return lp_tracer__poll(t->tracer, t->w, timeout_ms);
}

static int finish(void *arg)
{
	struct trace *t = arg;
	if (lp_tracer__finish(t->tracer, t->w) < 0)
		return -1;
	/* After the last records: requests still open, and what was lost. */
	return t->keyed ? lp_keyed__finish(t->keyed, t->w, lp_monotonic_ns()) : 0;
}

static int counts(void *arg, char *buf, size_t size)
{
	struct trace *t = arg;
	snprintf(buf, size, "%llu records, %llu events lost",
		 (unsigned long long)lp_tracer__count(t->tracer),
		 (unsigned long long)lp_tracer__lost(t->tracer));
	uint64_t spans = 0, open = 0, evicted = 0, unmatched = 0;
	if (t->keyed) {
		lp_keyed__counts(t->keyed, &spans, &open, &evicted, &unmatched);
		snprintf(buf + strlen(buf), size - strlen(buf),
			 "; key: %llu requests, %llu open at the end, %llu evicted, %llu ends without a start",
			 (unsigned long long)spans, (unsigned long long)open,
			 (unsigned long long)evicted, (unsigned long long)unmatched);
	}
	/* What python: probes cost the targets: said whenever they trapped. */
	bool trapped = lp_pycost__summary(t->pycost, buf, size);
	/* The stream holds every record: said when something was lost. */
	return t->opt.verbose || lp_tracer__lost(t->tracer) || evicted || unmatched || trapped;
}

static const struct lp_producer_ops tracer_ops = {
	.begin = begin, .poll = poll_events, .finish = finish, .counts = counts,
	.command = control_command,
};

/* --- --control: probes that come and go --------------------------------- */

/* Whether a point of the new ones is at an instruction an attached probe
 * of target p holds (their returns would pair with each other's entries). */
static bool taken(const struct trace *t, size_t p, const struct lp_probe_point *pts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < t->npoints[p]; j++) {
			const struct lp_probe_point *a = &t->points[p][j], *b = &pts[i];
			if (lp_family__id(t->family, p, j) < 0 || a->cfg.kind >= LP_PROBE_SYSCALL ||
			    b->cfg.kind >= LP_PROBE_SYSCALL || a->offset != b->offset ||
			    strcmp(a->path, b->path))
				continue;
			lp_error("control: add '%s': probe '%s' is at that address", b->spec->text,
				 a->spec->text);
			return true;
		}
	return false;
}

/* Whether a python: probe is attached (one at a time: its probes sit in
 * the eval loop, matching one glob). */
static const char *python_attached(const struct trace *t)
{
	for (int i = 0; i < t->nspecs; i++) {
		if (t->specs[i]->type != LP_PROBE_PYTHON)
			continue;
		int *ids;
		int n = lp_tracer__find(t->tracer, t->specs[i]->text, &ids);
		free(ids);
		if (n > 0)
			return t->specs[i]->text;
	}
	return NULL;
}

/* add PROBE: resolved in each target's executable, attached to it (and
 * to the children followed so far), "probe TIME attach" written.
 * Anything wrong: said, nothing attached.  As poll. */
static int control_add(struct trace *t, const char *text)
{
	int *ids = NULL, r = 0;
	size_t nids = 0, p, npids;
	const pid_t *pids = lp_family__pids(t->family, &npids);
	int *dup;
	if (lp_keyed__is_spec(text)) {
		lp_error("control: add '%s': key: probes are given at start, not added", text);
		return 0;
	}
	int ndup = lp_tracer__find(t->tracer, text, &dup);
	free(dup);
	if (ndup > 0) {
		lp_error("control: add '%s': attached already", text);
		return 0;
	}
	struct lp_probe_spec *spec = lp_probe_spec__parse(text, t->opt.all_args);
	if (!spec) {
		lp_error("control: add '%s': nothing added", text);
		return 0;
	}
	spec->no_demangle = t->opt.no_demangle;
	spec->returns = t->opt.returns;
	const char *py = spec->type == LP_PROBE_PYTHON ? python_attached(t) : NULL;
	if (py) {
		lp_error("control: add '%s': one python: probe at a time ('%s' is attached)", text, py);
		lp_probe_spec__free(spec);
		return 0;
	}
	/* Resolved everywhere before anything is attached. */
	struct lp_probe_point **pts = lp_calloc(npids, sizeof(*pts));
	size_t *npts = lp_calloc(npids, sizeof(*npts));
	for (p = 0; p < npids; p++) {
		char *exe = lp_family__exe(pids[p]);
		int bad = !exe || lp_probe__resolve_specs(&spec, 1, exe, pids[p], p == 0,
							  t->opt.verbose, &pts[p], &npts[p]) < 0 ||
			  taken(t, p, pts[p], npts[p]);
		free(exe);
		if (bad) {
			lp_error("control: add '%s': nothing added", text);
			lp_probe__free_resolved(pts, npts, npids);
			lp_probe_spec__free(spec);
			return 0;
		}
	}
	/* Its classes' costs measured as at the start, when no probe
	 * attached so far had them (the ring drained meanwhile). */
	struct lp_cal_needs need = { 0 };
	for (p = 0; p < npids; p++)
		lp_tracer__classes(pts[p], npts[p], &need);
	if (t->opt.calibrate_ns > 0 && lp_tracer__uncalibrated(t->tracer, &need))
		lp_tracer__calibrate(t->tracer, &need, t->opt.calibrate_ns);
	/* Kept with the others (freed with them), then attached: followed
	 * children get them at fork. */
	size_t *from = lp_calloc(npids, sizeof(*from));
	for (p = 0; p < npids; p++) {
		from[p] = t->npoints[p];
		t->points[p] = lp_reallocarray(t->points[p], from[p] + npts[p], sizeof(**t->points));
		memcpy(t->points[p] + from[p], pts[p], npts[p] * sizeof(**t->points));
		t->npoints[p] = from[p] + npts[p];
		free(pts[p]);
	}
	free(pts);
	free(npts);
	t->specs = lp_reallocarray(t->specs, (size_t)t->nspecs + 1, sizeof(*t->specs));
	t->specs[t->nspecs++] = spec;
	int failed = 0;
	for (p = 0; p < npids && !failed; p++)
		failed = lp_family__attach_more(t->family, p, from[p], !t->opt.no_follow, &ids,
						&nids) < 0;
	free(from);
	if (failed) {
		/* What was attached goes again, unseen: no record was written. */
		if (nids)
			lp_tracer__remove(t->tracer, ids, nids);
		lp_family__forget(t->family, ids, nids);
		lp_error("control: add '%s': nothing added", text);
	} else if (nids) {
		r = lp_tracer__write_attached(t->tracer, t->w, ids, nids) < 0 ||
		    lp_tracer__write_costs_from(t->tracer, t->w, ids[0]) < 0 ? -1 : 0;
		lp_error("control: added '%s' (%zu %s)", text, nids, nids == 1 ? "probe" : "probes");
	}
	free(ids);
	return r;
}

/* remove PROBE (as added or given, or by name): detached while tracing
 * goes on; the detach record follows once it is (lp_tracer__remove). */
static int control_remove(struct trace *t, const char *text)
{
	int *ids;
	int n = lp_tracer__find(t->tracer, text, &ids);
	if (n <= 0) {
		lp_error("control: remove '%s': no such probe attached", text);
		free(ids);
		return 0;
	}
	/* Children forked from now on do not get it. */
	lp_family__forget(t->family, ids, (size_t)n);
	lp_tracer__remove(t->tracer, ids, (size_t)n);
	free(ids);
	return 0;
}

static int control_command(void *arg, char *line)
{
	struct trace *t = arg;
	size_t w = strcspn(line, " \t");
	char *rest = line + w + strspn(line + w, " \t");
	if (w == 6 && !strncmp(line, "status", 6) && !*rest) {
		lp_tracer__status(t->tracer);
		return 0;
	}
	if (w == 3 && !strncmp(line, "add", 3) && *rest)
		return control_add(t, rest);
	if (w == 6 && !strncmp(line, "remove", 6) && *rest)
		return control_remove(t, rest);
	lp_error("control: unknown command '%s' (add PROBE, remove PROBE, status)", line);
	return 0;
}

static void trace_free(struct trace *t)
{
	lp_writer__free(t->w);
	lp_pycost__free(t->pycost);
	lp_tracer__free(t->tracer);
	lp_family__free(t->family);
	lp_producer__free(t->p);
	lp_probe__free_resolved(t->points, t->npoints, t->nresolved);
	for (int i = 0; i < t->nspecs; i++)
		lp_probe_spec__free(t->specs[i]);
	free(t->specs);
	lp_keyed__free(t->keyed);
}

/* The probes resolved, the BPF programs loaded and calibrated, the output
 * opened, the probes attached and a command released: 0, or the exit
 * status after saying why. */
static int set_up(struct trace *t)
{
	int status;

	if ((status = resolve(t)) || (status = open_tracer(t)))
		return status;
	t->w = lp_writer__new(lp_producer__output(t->p));
	if ((status = attach(t)))
		return status;
	return lp_producer__release(t->p);
}

int main(int argc, char **argv)
{
	struct trace t = { .opt = { .ring_bytes = 8u << 20, .max_pids = LP_TARGET_MAX_PIDS,
				    .calibrate_ns = 200000000 } };

	lp_init(argc, argv);
	parse(&t, argc, argv);
	/* Said plainly, before anything is started: the kernel lets no
	 * ordinary user place a uprobe, whatever perf_event_paranoid says. */
	const char *missing = lp_producer__bpf_missing();
	if (missing) {
		lp_error("tracing needs %s: the kernel lets no ordinary user place uprobes or "
			 "attach BPF programs to them", missing);
		lp_die(1, "without them: lp-record -- CMD (or -p PID) samples your own "
		       "processes through perf events; lp-trace --list, --lines and --vars "
		       "need no privileges");
	}
	struct lp_producer_opts po = { .output = t.opt.output, .duration_ns = t.opt.duration_ns,
				       .poll_ms = 100, .pids = t.opt.pids, .cmd = t.cmd,
				       .max_pids = t.opt.max_pids, .verbose = t.opt.verbose,
				       .control = t.opt.control };
	int status = lp_producer__open(&t.p, &po);
	if (!status)
		status = set_up(&t);
	if (!status)
		status = lp_producer__run(t.p, &tracer_ops, &t);
	trace_free(&t);
	return status;
}
