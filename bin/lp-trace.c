/* lp-trace - timed spans from uprobes, source lines, variables and system
 * calls, written as an lp stream (formats/lp-stream.md).
 *
 *   lp-trace [-d DURATION] [-o FILE] [--min-duration DUR] [--args]
 *            [--calibrate DUR] [-v] PROBE... (-p PID[,PID...] | -- CMD [ARG...])
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/probe.h"
#include "debuginfo/procns.h"
#include "base/stop.h"
#include "stream/stream.h"
#include "capture/target.h"
#include "capture/tracer.h"
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
};

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-trace [-d DURATION] [-o FILE] [--min-duration DUR] [--args]\n"
		"                [--max-pids N] [--calibrate DUR] [--no-demangle]\n"
		"                [--returns auto|uretprobe|insn] [-v]\n"
		"                PROBE... (-p PID[,PID...] | -- CMD [ARG...])\n"
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
		"  -v, --verbose            say where probes go; libbpf's warnings (-vv: its\n"
		"                           debug output too)\n"
		"  -h, --help               this help\n"
		"      --version            the version\n"
		"\n"
		"Durations: a number and a unit, ns, us, ms, s, m or h (250us, 1.5s, 2m);\n"
		"a bare number is seconds.\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

/* The executable a command name runs, as execvp finds it. */
static char *command_path(const char *cmd)
{
	char buf[PATH_MAX];
	if (strchr(cmd, '/'))
		return realpath(cmd, buf) ? lp_strdup(buf) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char cand[PATH_MAX];
		snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(cand, X_OK) == 0 && realpath(cand, buf))
			return lp_strdup(buf);
		path += n + (path[n] == ':');
	}
	return NULL;
}

static char *pid_exe(pid_t pid)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0) {
		lp_error_errno("cannot read the executable of pid %d", (int)pid);
		return NULL;
	}
	buf[n] = '\0';
	/* A replaced executable shows as "PATH (deleted)": use /proc's link. */
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		return lp_strdup(link);
	/* The path in the process's own file tree (a container's). */
	return lp_procns__path(pid, buf);
}

static bool output_closed(FILE *out)
{
	struct pollfd p = { .fd = fileno(out), .events = 0 };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
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

/* Resolves every probe in executable exe (of pid; 0: a command's, not yet
 * running) into *points; -1 after reporting why.  first: the system-wide
 * probes (syscall:, tp:) too, which are resolved for one process only. */
static int resolve_points(struct lp_probe_spec **specs, int nspecs, const char *exe, pid_t pid,
			  bool first, int verbose, struct lp_probe_point **points, size_t *npoints)
{
	for (int i = 0; i < nspecs; i++) {
		if (!first && (specs[i]->type == LP_PROBE_SYSCALLS ||
			       specs[i]->type == LP_PROBE_TRACEPOINT))
			continue;	/* system-wide: once */
		if (lp_probe__resolve(specs[i], exe, pid, verbose, points, npoints) < 0)
			return -1;
	}
	/* Two probes at one instruction would pair their returns with each
	 * other's entries. */
	for (size_t i = 0; i < *npoints; i++)
		for (size_t j = 0; j < i; j++) {
			struct lp_probe_point *a = &(*points)[j], *b = &(*points)[i];
			if (a->cfg.kind >= LP_PROBE_SYSCALL || b->cfg.kind >= LP_PROBE_SYSCALL ||
			    a->offset != b->offset || strcmp(a->path, b->path))
				continue;
			lp_error("probes '%s' and '%s' are at the same address: give one",
				 a->spec->text, b->spec->text);
			return -1;
		}
	return 0;
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
	if (!(ax->last_exe = pid_exe(pid)))
		return -1;
	/* A program without the probes is the normal case here (the shell
	 * of a shim): try quietly, and say why only if no program has them. */
	fflush(stderr);
	int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && null >= 0)
		dup2(null, 2);
	int r = resolve_points(ax->specs, ax->nspecs, ax->last_exe, 0, true, 0, &ax->points,
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
		r = resolve_points(ax->specs, ax->nspecs, ax->last_exe, 0, true, ax->verbose,
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

/* The processes the targets fork, traced as the target they descend from:
 * each is given its target's points, under the same probe ids. */
struct family {
	struct lp_tracer *tracer;
	const pid_t *pids;		/* the targets */
	size_t npids;
	struct lp_probe_point **points;
	size_t *npoints;
	int **ids;			/* the probe id of points[p][i] */
	struct adopted { pid_t pid, target; } *adopted;	/* descendants running at start */
	size_t nadopted;
};

static void on_fork(void *arg, pid_t child, pid_t target)
{
	struct family *f = arg;
	for (size_t p = 0; p < f->npids; p++)
		if (f->pids[p] == target)
			for (size_t i = 0; i < f->npoints[p]; i++)
				lp_tracer__attach_child(f->tracer, f->ids[p][i], &f->points[p][i],
							child);
}

/* The targets' descendants running now (a server's pre-forked workers) are
 * traced as the target they descend from.  Listed twice: one that forked
 * while the first list was made, before it was in the filter, had a child
 * the kernel did not follow. */
static int adopt_descendants(struct lp_tracer *tracer, struct family *f)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t p = 0; p < f->npids; p++) {
			size_t n;
			pid_t *d = lp_target__descendants(f->pids[p], &n);
			for (size_t i = 0; i < n; i++) {
				int r = lp_tracer__adopt(tracer, d[i], f->pids[p]);
				if (r < 0) {
					free(d);
					return -1;
				}
				if (r > 0) {
					f->adopted = lp_reallocarray(f->adopted, f->nadopted + 1,
								     sizeof(*f->adopted));
					f->adopted[f->nadopted++] = (struct adopted){ d[i], f->pids[p] };
				}
			}
			free(d);
		}
	return 0;
}

int main(int argc, char **argv)
{
	lp_init(argc, argv);
	struct options opt = { .ring_bytes = 8u << 20, .max_pids = LP_TARGET_MAX_PIDS,
			       .calibrate_ns = 200000000 };
	/* Everything after "--" is the command, never options or probes. */
	char **cmd = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			cmd = argv + i + 1;
			argv[i] = NULL;
			argc = i;
			break;
		}
	}
	enum { OPT_MIN = 256, OPT_ARGS, OPT_RING, OPT_VERSION, OPT_NO_FOLLOW, OPT_MAX_PIDS,
	       OPT_CALIBRATE, OPT_NO_DEMANGLE, OPT_RETURNS };
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
		{ "calibrate", required_argument, 0, OPT_CALIBRATE },
		{ "returns", required_argument, 0, OPT_RETURNS },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, OPT_VERSION },
		{ 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "p:d:o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			opt.pids = optarg;
			break;
		case 'd':
			opt.duration_ns = lp_option_duration("duration", optarg, true);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case OPT_MIN:
			opt.min_duration_ns = lp_option_duration("min-duration", optarg, false);
			break;
		case OPT_ARGS:
			opt.all_args = true;
			break;
		case OPT_NO_DEMANGLE:
			opt.no_demangle = true;
			break;
		case OPT_RING:
			opt.ring_bytes = lp_option_u64("ring-size", optarg, 4096, 1u << 30);
			if (opt.ring_bytes & (opt.ring_bytes - 1))
				lp_option_fail("ring-size", optarg, "not a power of two");
			break;
		case 'v':
			opt.verbose++;
			break;
		case OPT_NO_FOLLOW:
			opt.no_follow = true;
			break;
		case OPT_MAX_PIDS:
			opt.max_pids = (uint32_t)lp_option_u64("max-pids", optarg, 1,
							       LP_TARGET_MAX_PIDS_LIMIT);
			break;
		case OPT_CALIBRATE:
			opt.calibrate_ns = lp_option_duration("calibrate", optarg, false);
			break;
		case OPT_RETURNS:
			if (!strcmp(optarg, "auto"))
				opt.returns = LP_RETURNS_AUTO;
			else if (!strcmp(optarg, "uretprobe"))
				opt.returns = LP_RETURNS_URETPROBE;
			else if (!strcmp(optarg, "insn"))
				opt.returns = LP_RETURNS_INSN;
			else
				lp_option_fail("returns", optarg, "not auto, uretprobe or insn");
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case OPT_VERSION:
			lp_print_version();
		default:
			usage(stderr, 2);
		}
	}
	int nspecs = argc - optind;
	if (nspecs <= 0) {
		lp_error("no probe given");
		usage(stderr, 2);
	}
	if (!!opt.pids == !!(cmd && cmd[0])) {
		lp_error(opt.pids ? "-p and a command exclude each other" : "no target: give -p PID or -- CMD");
		usage(stderr, 2);
	}

	/* Parse every probe, and find the target, before anything is attached. */
	struct lp_probe_spec **specs = lp_calloc((size_t)nspecs, sizeof(*specs));
	for (int i = 0; i < nspecs; i++)
	{
		if (!(specs[i] = lp_probe_spec__parse(argv[optind + i], opt.all_args)))
			return 2;
		specs[i]->no_demangle = opt.no_demangle;
		specs[i]->returns = opt.returns;
	}
	struct lp_target *target = NULL;
	struct family family = { 0 };
	char *cmd_exe = NULL;
	if (opt.pids) {
		if (!(target = lp_target__from_pids(opt.pids)))
			return 1;
		if (lp_target__check_max_pids(target, opt.max_pids) < 0) {
			lp_target__free(target);
			return 2;
		}
	} else if (!(cmd_exe = command_path(cmd[0]))) {
		lp_error("cannot run '%s': %s", cmd[0], strerror(ENOENT));
		return 1;
	}

	/* Resolve in the context of each process's executable (a command's
	 * before it is started: a mistake costs nothing). */
	size_t npids = 1;
	const pid_t *pids = target ? lp_target__pids(target, &npids) : NULL;
	struct lp_probe_point **points = lp_calloc(npids, sizeof(*points));
	size_t *npoints = lp_calloc(npids, sizeof(*npoints));
	const size_t nresolved = npids;
	int status = 1;
	struct at_exec ax = { specs, nspecs, opt.verbose, cmd ? cmd[0] : NULL, NULL,
			      NULL, 0 };
	if (!target && lp_target__is_script(cmd_exe)) {
		/* Its programs are known only as it runs (a #! script's
		 * interpreter, a shim's exec): start it now, stopped at each
		 * exec until one holds the probes. */
		if (!(target = lp_target__spawn(cmd)))
			goto out;
		/* -d and SIGINT/SIGTERM bound this wait too. */
		volatile sig_atomic_t *stop0 = lp_stop_on_signals();
		int64_t until = opt.duration_ns > 0 ? lp_monotonic_ns() + opt.duration_ns : 0;
		int r = lp_target__run_to_exec(target, at_exec, &ax, stop0, until);
		if (r == -2) {
			lp_error("stopped (%s) before '%s' ran a program that holds the probes: nothing traced",
				 *stop0 ? strsignal(*stop0) : "duration reached", cmd[0]);
			lp_target__finish(target, true);
		}
		if (r < 0) {
			if (r == -1 && ax.last_exe && !lp_target__alive(target)) {
				/* Say why in the last program it ran. */
				resolve_points(specs, nspecs, ax.last_exe, 0, true, opt.verbose,
					       &ax.points, &ax.npoints);
				lp_error("'%s' exited (status %d) without running a program that holds the probes; the last it ran: %s",
					 cmd[0], lp_target__finish(target, false), ax.last_exe);
			}
			for (size_t i = 0; i < ax.npoints; i++)
				lp_probe_point__fini(&ax.points[i]);
			free(ax.points);
			free(ax.last_exe);
			goto out;
		}
		free(ax.last_exe);
		points[0] = ax.points;
		npoints[0] = ax.npoints;
	}
	for (size_t p = 0; p < npids && !(target && lp_target__spawned(target)); p++) {
		char *exe = pids ? pid_exe(pids[p]) : lp_strdup(cmd_exe);
		if (!exe)
			goto out;
		int r = resolve_points(specs, nspecs, exe, pids ? pids[p] : 0, p == 0, opt.verbose,
				       &points[p], &npoints[p]);
		free(exe);
		if (r < 0)
			goto out;
	}

	struct lp_tracer_opts topts = {
		.min_duration_ns = opt.min_duration_ns,
		.ring_bytes = opt.ring_bytes,
		.max_pids = opt.max_pids,
		.verbose = opt.verbose,
	};
	struct lp_tracer *tracer = lp_tracer__new(&topts);
	if (!tracer)
		goto out;
	/* Before any probe is attached: each is given its class's costs. */
	unsigned entry_classes = 0, point_classes = 0;
	bool tracepoints = false;
	for (size_t p = 0; p < npids; p++)
		for (size_t i = 0; i < npoints[p]; i++) {
			if (points[p][i].cfg.kind == LP_PROBE_ENTRY)
				entry_classes |= 1u << points[p][i].insn;
			/* A return probed at an instruction costs a point probe's hit. */
			if (points[p][i].cfg.kind == LP_PROBE_ENTRY &&
			    points[p][i].returns == LP_RETURNS_INSN && points[p][i].ret_insn != LP_INSN_NONE)
				point_classes |= 1u << points[p][i].ret_insn;
			else if (points[p][i].cfg.kind == LP_PROBE_POINT)
				point_classes |= 1u << points[p][i].insn;
			else if (points[p][i].cfg.kind == LP_PROBE_TP)
				tracepoints = true;
		}
	if (opt.calibrate_ns > 0)
		lp_tracer__calibrate(tracer, entry_classes, point_classes, tracepoints,
				     opt.calibrate_ns);
	FILE *out = lp_open_output(opt.output);
	/* A started command must not hold an output file of ours open (a pipe
	 * would see no EOF before it exits); stdout is its own too. */
	if (fileno(out) > 2)
		fcntl(fileno(out), F_SETFD, FD_CLOEXEC);
	struct lp_writer *w = lp_writer__new(out);

	signal(SIGPIPE, SIG_IGN);	/* a closed output is an EPIPE we handle */
	volatile sig_atomic_t *stop = lp_stop_on_signals();

	if (!target && !(target = lp_target__spawn(cmd)))
		goto out_tracer;
	pids = lp_target__pids(target, &npids);
	family.tracer = tracer;
	family.pids = pids;
	family.npids = npids;
	family.points = points;
	family.npoints = npoints;
	family.ids = lp_calloc(npids, sizeof(*family.ids));
	for (size_t p = 0; p < npids; p++)
		if (lp_tracer__add_pid(tracer, pids[p]) < 0)
			goto out_tracer;
	/* Followed before probes are attached: the targets' running
	 * descendants are in the filter, no bystanders (lp_tracer__attach). */
	if (!opt.no_follow && (lp_tracer__follow(tracer, on_fork, &family) < 0 ||
			       adopt_descendants(tracer, &family) < 0))
		goto out_tracer;
	for (size_t p = 0; p < npids; p++) {
		family.ids[p] = lp_calloc(npoints[p] + 1, sizeof(**family.ids));
		for (size_t i = 0; i < npoints[p]; i++)
			if ((family.ids[p][i] = lp_tracer__attach(tracer, &points[p][i], pids[p])) < 0)
				goto out_tracer;
	}
	/* The adopted descendants' own uprobes (probes in files others map:
	 * their forks inherit them, not they). */
	for (size_t k = 0; k < family.nadopted; k++)
		on_fork(&family, family.adopted[k].pid, family.adopted[k].target);
	bool closed = false, failed = false;
	if (write_header(w) < 0 || lp_tracer__write_costs(tracer, w) < 0 || fflush(out) != 0) {
		failed = errno != EPIPE;
		closed = true;
	}
	if (lp_target__spawned(target))
		lp_tracer__set_start(tracer);
	if (lp_target__release(target) < 0)
		goto out_tracer;

	int64_t deadline = opt.duration_ns > 0 ? lp_monotonic_ns() + opt.duration_ns : 0;
	const char *reason = NULL;
	while (!closed) {
		int r = lp_tracer__poll(tracer, w, 100);
		if (r == -1) {		/* the output */
			failed = errno != EPIPE;
			closed = true;
			break;
		}
		if (r < -1) {		/* the ring: already reported */
			closed = failed = true;
			break;
		}
		if (*stop) {
			reason = strsignal(*stop);
			break;
		}
		if (deadline && lp_monotonic_ns() >= deadline) {
			reason = "duration reached";
			break;
		}
		if (!lp_target__alive(target)) {
			reason = "target exited";
			break;
		}
		if (fflush(out) != 0) {
			failed = errno != EPIPE;
			closed = true;
		} else if (output_closed(out)) {
			closed = true;
		}
	}
	if (closed) {
		/* Nobody reads any more: detach and go, quietly (as a SIGPIPE
		 * would); any other failure is one. */
		if (failed && errno)
			lp_error_errno("writing %s", opt.output ? opt.output : "stdout");
		status = failed;
		lp_target__finish(target, true);
		goto out_tracer;
	}
	if (lp_tracer__finish(tracer, w) < 0 || fflush(out) != 0) {
		if (errno != EPIPE) {
			lp_error_errno("writing %s", opt.output ? opt.output : "stdout");
			goto out_tracer;
		}
	}
	if (opt.verbose || lp_tracer__lost(tracer))
		lp_error("%llu records, %llu events lost (%s)",
			 (unsigned long long)lp_tracer__count(tracer),
			 (unsigned long long)lp_tracer__lost(tracer), reason ? reason : "stopped");
	status = 0;
	lp_writer__free(w);
	lp_tracer__free(tracer);
	if (lp_close_output(out, opt.output ? opt.output : "stdout") < 0 && errno != EPIPE)
		status = 1;
	int cmd_status = lp_target__finish(target, true);
	int sig = lp_target__killed_by(target);
	/* A signal that asks a program to stop, when lp-trace was stopped by
	 * one too, is the same stop (Ctrl-C reaches the whole group). */
	bool asked = sig == SIGINT || sig == SIGTERM || sig == SIGPIPE;
	if (sig && !(asked && *stop)) {
		/* Whatever killed it, never silently: the trace may be why.
		 * Asked to stop, it has not failed (nor has the trace). */
		lp_error("%s killed by signal %d (%s)", cmd[0], sig, strsignal(sig));
		if (!asked)
			status = 128 + sig;
	} else if (opt.verbose && lp_target__spawned(target)) {
		lp_error("%s exited with status %d", cmd[0], cmd_status);
	}
	goto out;
out_tracer:
	lp_tracer__free(tracer);
out:
	for (size_t p = 0; family.ids && p < family.npids; p++)
		free(family.ids[p]);
	free(family.ids);
	free(family.adopted);
	lp_target__free(target);
	for (size_t p = 0; p < nresolved; p++) {
		for (size_t i = 0; i < npoints[p]; i++)
			lp_probe_point__fini(&points[p][i]);
		free(points[p]);
	}
	free(points);
	free(npoints);
	for (int i = 0; i < nspecs; i++)
		lp_probe_spec__free(specs[i]);
	free(specs);
	free(cmd_exe);
	return status;
}
