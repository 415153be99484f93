/* lp-record - sample processes on CPU with whole, symbolized stacks and write
 * them as an lp stream (a BPF program on a per-CPU perf event; frame pointer
 * or DWARF unwinding; libdw symbols).  Stops at -d, SIGINT/SIGTERM, the end
 * of its targets or a closed output, and on each drains, writes, detaches. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/trace/gate.h"
#include "capture/kfeatures.h"
#include "capture/producer.h"
#include "capture/record/record.h"
#include "capture/record/snapshot.h"
#include "stream/stream.h"
#include "capture/target.h"
#include "base/util.h"

struct options {
	unsigned freq;
	int64_t duration_ns;	/* 0: until stopped */
	const char *output;
	enum lp_call_graph call_graph;
	uint32_t dwarf_bytes;
	const char *pids;
	bool all;
	bool kernel;
	bool follow;
	int verbose;		/* the count of -v */
	bool inlines;
	bool srclines;
	bool raw;
	bool no_demangle;
	bool no_python;
	uint64_t ring_bytes;
	uint32_t max_pids;
	uint32_t stack_depth;
	uint64_t stack_memory;
	struct lp_snapshot_opts snap;	/* --mode snapshot (lib/capture/record/snapshot.h) */
	bool snapshot;
	enum lp_record_mode mode;	/* cpu, off, wall */
	int64_t min_block_ns;
	int64_t calibrate_ns;	/* 0: no calibration */
	struct lp_probe_spec **inside;	/* --inside FUNC..., parsed */
	size_t ninside;
	char *inside_names;	/* as given, comma-separated: the header's inside= */
	const char *control;	/* --control FIFO */
	enum lp_record_backend backend;
	bool backend_given;	/* --backend bpf or perf, not auto */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lp-record [-F HZ] [-d DURATION] [-o FILE] [--call-graph auto|fp|dwarf[,BYTES]]\n"
		"                 [--no-kernel] [--no-follow] [--inline] [--srcline] [--raw]\n"
		"                 [--no-demangle] [--no-python] [--ring-size BYTES] [--max-pids N] [--stack-depth N]\n"
		"                 [--stack-memory BYTES] [--calibrate DURATION] [--inside FUNC]... [--control FIFO]\n"
		"                 [--backend auto|bpf|perf] [-v]\n"
		"                 (-p PID[,PID...] | -a | -- CMD [ARG...])\n"
		"Samples on-CPU stacks of processes and writes an lp stream.\n"
		"  -F, --freq HZ          samples per second per CPU (default 99)\n"
		"  -d, --duration DURATION stop after this long (default: until stopped)\n"
		"  -o, --output FILE      write to FILE instead of stdout\n"
		"      --call-graph MODE  auto (default): unwind a copy of the stack with each\n"
		"                         module's CFI, then its frame pointers; fp: frame\n"
		"                         pointers only; dwarf[,BYTES]: a copy of BYTES (8192)\n"
		"  -p, --pid PID[,PID]    sample these processes (and their children)\n"
		"  -a, --all              sample the whole system\n"
		"      --no-kernel        no kernel stacks\n"
		"      --no-follow        not the children of the targets\n"
		"      --inline           inlined functions as frames of their own (slower)\n"
		"      --srcline          file:line of user frames\n"
		"      --raw              user frames as addresses in their files, with build-ids,\n"
		"                         to symbolize later with lp-symbolize\n"
		"      --no-demangle      C++ and Rust names as the symbol table spells them\n"
		"                         (_ZN4node5StartEiPPc), not node::Start(int, char**)\n"
		"      --no-python        CPython's interpreter frames as they are, not\n"
		"                         the Python functions they run\n"
		"      --ring-size BYTES  BPF ring buffer size, a power of two (default 4 MiB,\n"
		"                         32 MiB with dwarf)\n"
		"      --max-pids N       at most N processes followed at once, the targets and\n"
		"                         their children (default 8192); more children are\n"
		"                         counted as lost\n"
		"      --stack-depth N    frames taken of each kernel and user stack, 1 to 127\n"
		"                         (default 127); deeper stacks are truncated\n"
		"      --stack-memory BYTES the distinct stacks kept to write each one's\n"
		"                         definition once (default 64 MiB); past this they\n"
		"                         are forgotten and defined again when next seen\n"
		"      --calibrate DURATION measure what a sample (cpu, wall) and a blocked\n"
		"                         interval (off, wall) cost the thread, this long in all\n"
		"                         (default 300ms) before recording, into cost records;\n"
		"                         0: not at all\n"
		"      --inside FUNC      sample a thread only while it is inside FUNC (or\n"
		"                         LIB:FUNC; nested and recursive calls counted), decided\n"
		"                         in the kernel; repeatable: inside any of them\n"
		"      --control FIFO     take commands from FIFO (made unless it exists) while\n"
		"                         recording: status; pause, resume (--mode cpu);\n"
		"                         inside FUNC, inside off (the gate, live); replies\n"
		"                         on stderr\n"
		"      --backend WHAT     bpf: the BPF sampler (root, or CAP_BPF and\n"
		"                         CAP_PERFMON); perf: perf events alone, as an\n"
		"                         ordinary user may (--mode cpu of one's own processes,\n"
		"                         no Python frames); auto (default): bpf when permitted\n"
		"  -v, --verbose          libbpf's warnings and the verifier log; -vv: its\n"
		"                         debug output too\n"
		"      --mode MODE        cpu (BPF on-CPU sampling, default); off: blocked\n"
		"                         intervals from sched_switch, weighted by their ns;\n"
		"                         wall: both, and runnable intervals, all in ns (state=);\n"
		"                         snapshot: every thread's stack through ptrace, BPF\n"
		"                         not needed (-p or CMD)\n"
		"      --min-block DURATION off, wall: drop blocked intervals shorter than this\n"
		"      --count N          snapshot mode: N snapshots (default: until stopped)\n"
		"  -i, --interval DURATION snapshot mode: from one snapshot to the next (100ms)\n"
		"  -h, --help             this help\n"
		"      --version          the version\n"
		"      --features         what lp uses of this kernel, and what it does where\n"
		"                         a feature is missing\n"
		"\n"
		"Durations: a number and a unit, ns, us, ms, s, m or h (250us, 1.5s, 2m);\n"
		"a bare number is seconds.\n");
}

static int parse_call_graph(const char *arg, enum lp_call_graph *g, uint32_t *bytes)
{
	const char *why;
	uint64_t v;

	*bytes = 0;
	if (!strcmp(arg, "auto")) {
		*g = LP_CALL_GRAPH_AUTO;
		return 0;
	}
	if (!strcmp(arg, "fp")) {
		*g = LP_CALL_GRAPH_FP;
		return 0;
	}
	*g = LP_CALL_GRAPH_DWARF;
	if (!strcmp(arg, "dwarf")) {
		*bytes = 8192;
		return 0;
	}
	if (strncmp(arg, "dwarf,", 6))
		return -1;
	if (lp_parse_u64(arg + 6, 65536, &v, &why) < 0)
		lp_option_fail("call-graph", arg, why);
	if (v < 512)
		lp_option_fail("call-graph", arg, "must be at least 512 bytes of stack");
	*bytes = (uint32_t)((v + 511) / 512 * 512);
	return 0;
}

/* Long options without a letter: out of getopt's character range. */
enum { OPT_MAX_PIDS = 256, OPT_STACK_DEPTH, OPT_STACK_MEMORY, OPT_CALIBRATE, OPT_NO_DEMANGLE,
       OPT_NO_PYTHON, OPT_INSIDE, OPT_CONTROL, OPT_BACKEND, OPT_FEATURES };

static const struct option longopts[] = {
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "call-graph", required_argument, NULL, 'g' },
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "no-kernel", no_argument, NULL, 'K' },
	{ "no-follow", no_argument, NULL, 'N' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "inline", no_argument, NULL, 'I' },
	{ "srcline", no_argument, NULL, 'S' },
	{ "raw", no_argument, NULL, 'R' },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
	{ "ring-size", required_argument, NULL, 'B' },
	{ "max-pids", required_argument, NULL, OPT_MAX_PIDS },
	{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
	{ "stack-memory", required_argument, NULL, OPT_STACK_MEMORY },
	{ "calibrate", required_argument, NULL, OPT_CALIBRATE },
	{ "inside", required_argument, NULL, OPT_INSIDE },
	{ "control", required_argument, NULL, OPT_CONTROL },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "mode", required_argument, NULL, 'M' },
	{ "min-block", required_argument, NULL, 'm' },
	{ "count", required_argument, NULL, 'n' },
	{ "interval", required_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "features", no_argument, NULL, OPT_FEATURES },
	{ NULL, 0, NULL, 0 },
};

/* --mode MODE; exits 2 on a mode it does not know. */
static void set_mode(struct options *o, const char *arg)
{
	if (strcmp(arg, "cpu") && strcmp(arg, "snapshot") && strcmp(arg, "off") &&
	    strcmp(arg, "wall"))
		lp_option_fail("mode", arg, "expected cpu, off, wall or snapshot");
	o->snapshot = !strcmp(arg, "snapshot");
	o->mode = !strcmp(arg, "off") ? LP_RECORD_OFF :
		  !strcmp(arg, "wall") ? LP_RECORD_WALL : LP_RECORD_CPU;
}

/* --inside FUNC; exits 2 on what is no function. */
static void add_inside(struct options *o, const char *arg)
{
	struct lp_probe_spec *spec = lp_gate__parse(arg);
	size_t len = o->inside_names ? strlen(o->inside_names) : 0;

	if (!spec)
		exit(2);
	o->inside = lp_reallocarray(o->inside, o->ninside + 1, sizeof(*o->inside));
	o->inside[o->ninside++] = spec;
	o->inside_names = lp_reallocarray(o->inside_names, len + strlen(arg) + 2, 1);
	snprintf(o->inside_names + len, strlen(arg) + 2, "%s%s", len ? "," : "", arg);
}

/* One option (getopt's c, its argument); exits 2 on bad usage. */
static void set_option(struct options *o, int c, const char *arg)
{
	switch (c) {
	case 'F': o->freq = (unsigned)lp_option_i64("freq", arg, 1, 100000); break;
	case 'd': o->duration_ns = lp_option_duration("duration", arg, true); break;
	case 'o': o->output = arg; break;
	case 'g':
		if (parse_call_graph(arg, &o->call_graph, &o->dwarf_bytes) < 0)
			lp_option_fail("call-graph", arg, "expected auto, fp, dwarf or dwarf,BYTES");
		break;
	case 'p': o->pids = arg; break;
	case 'a': o->all = true; break;
	case 'K': o->kernel = false; break;
	case 'N': o->follow = false; break;
	case 'M': set_mode(o, arg); break;
	case 'm': o->min_block_ns = lp_option_duration("min-block", arg, false); break;
	case 'n': o->snap.count = (unsigned)lp_option_i64("count", arg, 1, UINT32_MAX); break;
	case 'i': o->snap.interval_ns = lp_option_duration("interval", arg, true); break;
	case 'v': o->verbose++; break;
	case 'I': o->inlines = true; break;
	case 'S': o->srclines = true; break;
	case 'R': o->raw = true; break;
	case OPT_NO_DEMANGLE: o->no_demangle = true; break;
	case OPT_NO_PYTHON: o->no_python = true; break;
	case 'B':
		o->ring_bytes = lp_option_u64("ring-size", arg, 4096, 1u << 30);
		if (o->ring_bytes & (o->ring_bytes - 1))
			lp_option_fail("ring-size", arg, "must be a power of two");
		break;
	case OPT_MAX_PIDS:
		o->max_pids = (uint32_t)lp_option_u64("max-pids", arg, 1, LP_TARGET_MAX_PIDS_LIMIT);
		break;
	case OPT_STACK_DEPTH:
		o->stack_depth = (uint32_t)lp_option_u64("stack-depth", arg, 1,
							 LP_RECORD_MAX_STACK_DEPTH);
		break;
	case OPT_STACK_MEMORY:
		o->stack_memory = lp_option_u64("stack-memory", arg, 65536, UINT64_MAX / 2);
		break;
	case OPT_CALIBRATE: o->calibrate_ns = lp_option_duration("calibrate", arg, false); break;
	case OPT_INSIDE: add_inside(o, arg); break;
	case OPT_CONTROL: o->control = arg; break;
	case OPT_BACKEND:
		if (strcmp(arg, "auto") && strcmp(arg, "bpf") && strcmp(arg, "perf"))
			lp_option_fail("backend", arg, "expected auto, bpf or perf");
		o->backend_given = strcmp(arg, "auto") != 0;
		o->backend = !strcmp(arg, "perf") ? LP_BACKEND_PERF : LP_BACKEND_BPF;
		break;
	case 'h':
		usage(stdout);
		lp_exit_stdout();
	case 'V':
		lp_print_version();
	case OPT_FEATURES:
		exit(lp_kfeatures__print(stdout) < 0 ? 1 : 0);
	default:
		usage(stderr);
		exit(2);
	}
}

/* The options, and in *cmd the command after them (NULL: none). */
static struct options parse_options(int argc, char **argv, char ***cmd)
{
	struct options o = { .freq = 99, .kernel = true, .follow = true,
			     .max_pids = LP_TARGET_MAX_PIDS,
			     .stack_depth = LP_RECORD_MAX_STACK_DEPTH,
			     .calibrate_ns = 300000000 };
	int c;

	while ((c = getopt_long(argc, argv, "+F:d:o:p:avhi:", longopts, NULL)) != -1)
		set_option(&o, c, optarg);
	*cmd = optind < argc ? argv + optind : NULL;
	int ntargets = (o.pids != NULL) + o.all + (*cmd != NULL);
	if (ntargets != 1) {
		lp_error("name one target: -p PID, -a or -- CMD");
		if (!ntargets)
			usage(stderr);
		exit(2);
	}
	if (o.snapshot && o.all) {
		lp_error("--mode snapshot needs -p PID or -- CMD (not -a)");
		exit(2);
	}
	if (o.ninside && (o.all || o.snapshot)) {
		lp_error("--inside needs BPF sampling of -p PID or -- CMD (not %s)",
			 o.all ? "-a" : "--mode snapshot");
		exit(2);
	}
	if (o.backend_given && o.backend == LP_BACKEND_PERF && (o.snapshot || o.ninside ||
								 o.mode != LP_RECORD_CPU)) {
		lp_error("--backend perf samples on the CPU only (not --mode %s%s)",
			 o.snapshot ? "snapshot" : o.mode == LP_RECORD_OFF ? "off" : "wall",
			 o.ninside ? ", not --inside" : "");
		if (o.ninside && o.mode == LP_RECORD_CPU && !o.snapshot)
			lp_error("--backend perf: --inside needs the BPF backend");
		exit(2);
	}
	if (o.min_block_ns && o.mode == LP_RECORD_CPU) {
		lp_error("--min-block needs --mode off or wall");
		exit(2);
	}
	return o;
}

static struct lp_record_opts record_opts(const struct options *o, struct lp_target *t)
{
	struct lp_record_opts ro = {
		.mode = o->mode,
		.min_block_ns = (uint64_t)o->min_block_ns,
		.freq = o->freq,
		.follow = o->follow,
		.kernel = o->kernel,
		.call_graph = o->call_graph,
		.dwarf_bytes = o->dwarf_bytes,
		.verbose = o->verbose,
		.inlines = o->inlines,
		.srclines = o->srclines,
		.raw = o->raw,
		.no_demangle = o->no_demangle,
		.no_python = o->no_python,
		.ring_bytes = o->ring_bytes,
		.max_pids = o->max_pids,
		.stack_depth = o->stack_depth,
		.stack_memory = o->stack_memory,
		.calibrate_ns = o->calibrate_ns,
		.inside = o->ninside ? o->inside_names : NULL,
		.backend = o->backend,
	};
	if (t)
		ro.pids = lp_target__pids(t, &ro.npids);
	return ro;
}

/* The BPF sampler and its gate (NULL: none; --inside's, or inside FUNC's
 * on --control), as the producer shell's engine (lib/capture/producer.h). */
struct sampler {
	struct lp_recorder *r;
	struct lp_gate *gate;
	struct lp_writer *w;
	const struct options *o;
	struct lp_producer *p;
};

static struct lp_gate *open_gate(const struct options *o, struct lp_producer *p,
				 struct lp_probe_spec **specs, size_t nspecs, int share_fd);

static int poll_samples(void *arg, int timeout_ms)
{
	struct sampler *s = arg;
	int rc = lp_recorder__poll(s->r, timeout_ms);

	/* Forks: the gate's probes go into the children. */
	return rc == 0 && s->gate ? lp_gate__poll(s->gate, s->w) : rc;
}

static int finish_samples(void *arg)
{
	struct sampler *s = arg;
	int rc = lp_recorder__finish(s->r);

	return rc == 0 && s->gate ? lp_gate__finish(s->gate, s->w) : rc;
}

static int count_samples(void *arg, char *buf, size_t size)
{
	lp_recorder__counts(((struct sampler *)arg)->r, buf, size);
	return 1;	/* always said: what was sampled, what was lost */
}

static void note_samples(void *arg)
{
	lp_recorder__notes(((struct sampler *)arg)->r);
}

/* inside off: the sampler ungated, then the probes detached (a detach
 * record dated before: every sample after it was taken ungated), and
 * the calls they left open forgotten.  As poll. */
static int inside_off(struct sampler *s)
{
	int64_t t = lp_monotonic_ns();
	int r = lp_gate__write_marks(s->gate, s->w, "detach", t);

	lp_recorder__gate(s->r, NULL);
	if (lp_gate__finish(s->gate, s->w) < 0)
		r = -1;
	lp_gate__free(s->gate);
	s->gate = NULL;
	lp_recorder__gate_clear(s->r);
	lp_error("control: inside off: sampling everywhere");
	return r;
}

/* inside FUNC: FUNC's probes resolved and attached as --inside's are
 * (into the sampler's map of open calls), then the sampler gated, then
 * the attach record (dated after: every sample after it was gated).  A
 * thread already in FUNC counts from its next call.  Anything wrong:
 * said, nothing changed.  As poll. */
static int inside(struct sampler *s, const char *func)
{
	if (!strcmp(func, "off")) {
		if (s->gate)
			return inside_off(s);
		lp_error("control: inside off: not gated");
		return 0;
	}
	if (s->gate) {
		lp_error("control: inside '%s': gated already (inside off first)", func);
		return 0;
	}
	if (s->o->backend == LP_BACKEND_PERF) {
		lp_error("control: inside '%s': needs the BPF backend (--backend perf has no gate)",
			 func);
		return 0;
	}
	if (!lp_producer__target(s->p)) {	/* -a */
		lp_error("control: inside '%s': needs -p PID or -- CMD (not -a)", func);
		return 0;
	}
	struct lp_probe_spec *spec = lp_gate__parse(func);

	if (spec)
		s->gate = open_gate(s->o, s->p, &spec, 1, lp_recorder__gate_fd(s->r));
	lp_probe_spec__free(spec);
	if (!s->gate) {
		/* Probes attached to some targets before one failed left calls. */
		lp_recorder__gate_clear(s->r);
		lp_error("control: inside '%s': not gated", func);
		return 0;
	}
	lp_recorder__gate(s->r, func);
	int r = lp_gate__write_marks(s->gate, s->w, "attach", lp_monotonic_ns()) < 0 ||
		lp_gate__write_costs(s->gate, s->w) < 0 ? -1 : 0;
	lp_error("control: inside '%s': sampling only there", func);
	return r;
}

/* --control's commands.  A command a mode does not take is refused as
 * unknown, with the list of those it takes. */
static int command_samples(void *arg, char *line)
{
	struct sampler *s = arg;
	char buf[1024];
	size_t w = strcspn(line, " \t");
	const char *rest = line + w + strspn(line + w, " \t");

	if (w == 6 && !strncmp(line, "inside", 6) && *rest)
		return inside(s, rest);
	if (!strcmp(line, "status")) {
		lp_recorder__counts(s->r, buf, sizeof(buf));
		lp_error("status: %s", buf);
	} else if (!strcmp(line, "pause") || !strcmp(line, "resume")) {
		if (lp_recorder__pause(s->r, line[0] == 'p') == 0)
			lp_error("control: %s", line[0] == 'p' ? "paused" : "resumed");
	} else {
		lp_error("control: unknown command '%s' (status, pause, resume, inside FUNC, "
			 "inside off)", line);
	}
	return 0;
}

static const struct lp_producer_ops recorder_ops = {
	.poll = poll_samples, .finish = finish_samples, .counts = count_samples,
	.notes = note_samples, .command = command_samples,
};

static int poll_snapshots(void *s, int timeout_ms)
{
	return lp_snapshotter__poll(s, timeout_ms);
}

static int finish_snapshots(void *s)
{
	return lp_snapshotter__finish(s);
}

static int count_snapshots(void *s, char *buf, size_t size)
{
	lp_snapshotter__counts(s, buf, size);
	return 1;
}

static void note_snapshots(void *s)
{
	lp_snapshotter__notes(s);
}

static int command_snapshots(void *s, char *line)
{
	char buf[1024];

	if (!strcmp(line, "status")) {
		lp_snapshotter__counts(s, buf, sizeof(buf));
		lp_error("status: %s", buf);
	} else {
		lp_error("control: unknown command '%s' (status: --mode snapshot takes no other)",
			 line);
	}
	return 0;
}

static const struct lp_producer_ops snapshotter_ops = {
	.poll = poll_snapshots, .finish = finish_snapshots, .counts = count_snapshots,
	.notes = note_snapshots, .command = command_snapshots,
};

/* --mode snapshot: ptrace, not BPF.  The command runs before the first
 * snapshot, which reads its maps. */
static int record_snapshots(struct options *o, struct lp_producer *p)
{
	int status = lp_producer__release(p);

	if (status)
		return lp_producer__abort(p, status);
	if (!o->snap.interval_ns)
		o->snap.interval_ns = 100000000;
	o->snap.inlines = o->inlines;
	o->snap.srclines = o->srclines;
	o->snap.raw = o->raw;
	o->snap.no_demangle = o->no_demangle;
	o->snap.no_python = o->no_python;
	o->snap.verbose = o->verbose;
	o->snap.stack_memory = o->stack_memory;
	o->snap.pids = lp_target__pids(lp_producer__target(p), &o->snap.npids);
	struct lp_writer *w = lp_writer__new(lp_producer__output(p));
	struct lp_snapshotter *s = lp_snapshotter__open(&o->snap, w);	/* the header */
	if (!s) {
		lp_writer__free(w);
		return lp_producer__abort(p, 1);
	}
	status = lp_producer__run(p, &snapshotter_ops, s);
	lp_snapshotter__free(s);
	lp_writer__free(w);
	lp_producer__free(p);
	return status;
}

/* The gate's probes of specs, attached to the targets: --inside's (a
 * command held before its exec) before the sampler loads, which shares
 * their map (share_fd -1), or inside FUNC's while sampling, into the
 * sampler's map share_fd.  NULL after saying why. */
static struct lp_gate *open_gate(const struct options *o, struct lp_producer *p,
				 struct lp_probe_spec **specs, size_t nspecs, int share_fd)
{
	struct lp_gate_opts go = { .specs = specs, .nspecs = nspecs, .follow = o->follow,
				   .max_pids = o->max_pids, .calibrate_ns = o->calibrate_ns,
				   .verbose = o->verbose, .share_stacks = share_fd >= 0,
				   .stacks_fd = share_fd };

	/* A command running already is looked up in its process. */
	if (share_fd < 0)
		go.cmd_exe = lp_producer__command_exe(p);
	go.pids = lp_target__pids(lp_producer__target(p), &go.npids);
	return lp_gate__open(&go);
}

/* The BPF sampler (lib/capture/record/record.h), gated by --inside. */
static int record_samples(const struct options *o, struct lp_producer *p)
{
	struct sampler s = { .w = lp_writer__new(lp_producer__output(p)), .o = o, .p = p };
	struct lp_record_opts ro = record_opts(o, lp_producer__target(p));
	int status = 1;

	if (o->ninside && !(s.gate = open_gate(o, p, o->inside, o->ninside, -1)))
		goto abort;
	if (s.gate)
		ro.gate_fd = lp_gate__stacks_fd(s.gate);
	s.r = lp_recorder__open(&ro, s.w);	/* the header */
	/* With --control the gate may go: when it came is said. */
	if (!s.r || (s.gate && lp_gate__write_costs(s.gate, s.w) < 0) ||
	    (s.gate && o->control &&
	     lp_gate__write_marks(s.gate, s.w, "attach", lp_monotonic_ns()) < 0) ||
	    (status = lp_producer__release(p)))
		goto abort;
	status = lp_producer__run(p, &recorder_ops, &s);
	lp_recorder__free(s.r);
	lp_gate__free(s.gate);
	lp_writer__free(s.w);
	lp_producer__free(p);
	return status;
abort:
	status = lp_producer__abort(p, status);
	lp_recorder__free(s.r);
	lp_gate__free(s.gate);
	lp_writer__free(s.w);
	return status;
}

/* --backend auto: BPF when this process may load it; else perf events,
 * which sample on the CPU only: other modes and --inside are refused,
 * saying what they need.  Exits 1 when the backend asked for cannot be. */
static void choose_backend(struct options *o)
{
	const char *missing = lp_producer__bpf_missing();

	if (!missing)
		return;
	if (o->backend_given && o->backend == LP_BACKEND_PERF)
		return;
	if (o->backend_given)
		lp_die(1, "--backend bpf needs %s (--backend perf samples one's own processes "
		       "without)", missing);
	if (o->mode != LP_RECORD_CPU || o->ninside)
		lp_die(1, "%s needs %s; without, lp-record samples on the CPU through perf "
		       "events (--mode cpu, no --inside)",
		       o->ninside ? "--inside" : o->mode == LP_RECORD_OFF ? "--mode off" : "--mode wall",
		       missing);
	lp_error("BPF needs %s: sampling with perf events instead (--backend perf)", missing);
	o->backend = LP_BACKEND_PERF;
}

int main(int argc, char **argv)
{
	struct lp_producer *p;
	char **cmd;
	int status;

	lp_init(argc, argv);
	struct options o = parse_options(argc, argv, &cmd);
	if (!o.snapshot)
		choose_backend(&o);
	/* Samples are read 40 times a second: a short-lived process is then
	 * usually still there to have its maps read. */
	struct lp_producer_opts po = { .output = o.output, .duration_ns = o.duration_ns,
				       .poll_ms = 25, .pids = o.pids, .cmd = cmd,
				       .max_pids = o.max_pids, .verbose = o.verbose,
				       .control = o.control };
	if ((status = lp_producer__open(&p, &po)))
		return lp_producer__abort(p, status);
	/* FUNC is looked up in the command's program before it runs. */
	if (o.ninside && cmd && lp_target__is_script(lp_producer__command_exe(p))) {
		lp_error("--inside: '%s' is a #! script: give the program that holds the function",
			 cmd[0]);
		return lp_producer__abort(p, 2);
	}
	if ((status = lp_producer__spawn(p)))
		return lp_producer__abort(p, status);
	status = o.snapshot ? record_snapshots(&o, p) : record_samples(&o, p);
	for (size_t i = 0; i < o.ninside; i++)
		lp_probe_spec__free(o.inside[i]);
	free(o.inside);
	free(o.inside_names);
	return status;
}
