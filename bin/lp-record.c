/* lp-record - sample processes on CPU with whole, symbolized stacks and write
 * them as an lp stream (a BPF program on a per-CPU perf event; frame pointer
 * or DWARF unwinding; libdw symbols).  Stops at -d, SIGINT/SIGTERM, the end
 * of its targets or a closed output, and on each drains, writes, detaches. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/record.h"
#include "capture/snapshot.h"
#include "base/stop.h"
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
	uint64_t ring_bytes;
	uint32_t max_pids;
	uint32_t stack_depth;
	struct lp_snapshot_opts snap;	/* --mode snapshot (lib/capture/snapshot.h) */
	bool snapshot;
	enum lp_record_mode mode;	/* cpu, off, wall */
	int64_t min_block_ns;
	int64_t calibrate_ns;	/* 0: no calibration */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lp-record [-F HZ] [-d DURATION] [-o FILE] [--call-graph auto|fp|dwarf[,BYTES]]\n"
		"                 [--no-kernel] [--no-follow] [--inline] [--srcline] [--raw]\n"
		"                 [--no-demangle] [--ring-size BYTES] [--max-pids N] [--stack-depth N]\n"
		"                 [--calibrate DURATION] [-v]\n"
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
		"      --ring-size BYTES  BPF ring buffer size, a power of two (default 4 MiB,\n"
		"                         32 MiB with dwarf)\n"
		"      --max-pids N       at most N processes followed at once, the targets and\n"
		"                         their children (default 8192); more children are\n"
		"                         counted as lost\n"
		"      --stack-depth N    frames taken of each kernel and user stack, 1 to 127\n"
		"                         (default 127); deeper stacks are truncated\n"
		"      --calibrate DURATION measure what a sample (cpu, wall) and a blocked\n"
		"                         interval (off, wall) cost the thread, this long in all\n"
		"                         (default 300ms) before recording, into cost records;\n"
		"                         0: not at all\n"
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
		lp_option_fail("call-graph", arg, "at least 512 bytes of stack");
	*bytes = (uint32_t)((v + 511) / 512 * 512);
	return 0;
}

/* A pipe whose reader has gone shows POLLERR on our end; seen even when no
 * sample comes to be written. */
static bool output_closed(FILE *out)
{
	struct pollfd p = { .fd = fileno(out), .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* Long options without a letter: out of getopt's character range. */
enum { OPT_MAX_PIDS = 256, OPT_STACK_DEPTH, OPT_CALIBRATE, OPT_NO_DEMANGLE };

int main(int argc, char **argv)
{
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
		{ "ring-size", required_argument, NULL, 'B' },
		{ "max-pids", required_argument, NULL, OPT_MAX_PIDS },
		{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
		{ "calibrate", required_argument, NULL, OPT_CALIBRATE },
		{ "mode", required_argument, NULL, 'M' },
		{ "min-block", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { .freq = 99, .kernel = true, .follow = true,
			     .max_pids = LP_TARGET_MAX_PIDS,
			     .stack_depth = LP_RECORD_MAX_STACK_DEPTH,
			     .calibrate_ns = 300000000 };
	struct lp_target *t = NULL;
	struct lp_recorder *r = NULL;
	struct lp_writer *w;
	FILE *out;
	int c, status = 0;

	lp_init(argc, argv);
	while ((c = getopt_long(argc, argv, "+F:d:o:p:avhi:", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			o.freq = (unsigned)lp_option_i64("freq", optarg, 1, 100000);
			break;
		case 'd':
			o.duration_ns = lp_option_duration("duration", optarg, true);
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'g':
			if (parse_call_graph(optarg, &o.call_graph, &o.dwarf_bytes) < 0) {
				lp_error("invalid call graph '%s': auto, fp, dwarf or dwarf,BYTES",
					 optarg);
				return 2;
			}
			break;
		case 'p':
			o.pids = optarg;
			break;
		case 'a':
			o.all = true;
			break;
		case 'K':
			o.kernel = false;
			break;
		case 'N':
			o.follow = false;
			break;
		case 'M':
			if (strcmp(optarg, "cpu") && strcmp(optarg, "snapshot") &&
			    strcmp(optarg, "off") && strcmp(optarg, "wall")) {
				lp_error("invalid mode '%s': cpu, off, wall or snapshot", optarg);
				return 2;
			}
			o.snapshot = !strcmp(optarg, "snapshot");
			o.mode = !strcmp(optarg, "off") ? LP_RECORD_OFF :
				 !strcmp(optarg, "wall") ? LP_RECORD_WALL : LP_RECORD_CPU;
			break;
		case 'm':
			o.min_block_ns = lp_option_duration("min-block", optarg, false);
			break;
		case 'n':
			o.snap.count = (unsigned)lp_option_i64("count", optarg, 1, UINT32_MAX);
			break;
		case 'i':
			o.snap.interval_ns = lp_option_duration("interval", optarg, true);
			break;
		case 'v':
			o.verbose++;
			break;
		case 'I':
			o.inlines = true;
			break;
		case 'S':
			o.srclines = true;
			break;
		case 'R':
			o.raw = true;
			break;
		case OPT_NO_DEMANGLE:
			o.no_demangle = true;
			break;
		case 'B':
			o.ring_bytes = lp_option_u64("ring-size", optarg, 4096, 1u << 30);
			if (o.ring_bytes & (o.ring_bytes - 1))
				lp_option_fail("ring-size", optarg, "not a power of two");
			break;
		case OPT_MAX_PIDS:
			o.max_pids = (uint32_t)lp_option_u64("max-pids", optarg, 1,
							     LP_TARGET_MAX_PIDS_LIMIT);
			break;
		case OPT_STACK_DEPTH:
			o.stack_depth = (uint32_t)lp_option_u64("stack-depth", optarg, 1,
								LP_RECORD_MAX_STACK_DEPTH);
			break;
		case OPT_CALIBRATE:
			o.calibrate_ns = lp_option_duration("calibrate", optarg, false);
			break;
		case 'h':
			usage(stdout);
			lp_exit_stdout();
		case 'V':
			lp_print_version();
		default:
			usage(stderr);
			return 2;
		}
	}
	if ((o.pids != NULL) + o.all + (optind < argc) != 1) {
		lp_error("name one target: -p PID, -a or -- CMD");
		usage(stderr);
		return 2;
	}

	if (o.min_block_ns && o.mode == LP_RECORD_CPU) {
		lp_error("--min-block needs --mode off or wall");
		return 2;
	}
	if (o.snapshot) {
		/* ptrace, not BPF: lib/capture/snapshot.c does the whole run. */
		volatile sig_atomic_t *stop = lp_stop_on_signals();
		if (!o.snap.interval_ns)
			o.snap.interval_ns = 100000000;
		o.snap.duration_ns = o.duration_ns;
		o.snap.inlines = o.inlines;
		o.snap.srclines = o.srclines;
		o.snap.raw = o.raw;
		o.snap.no_demangle = o.no_demangle;
		o.snap.verbose = o.verbose;
		return lp_snapshot__record(&o.snap, o.pids, o.pids || o.all ? NULL : argv + optind,
					   o.output, stop);
	}
	lp_record__check_privileges();
	/* A closed output is an EPIPE from a write, handled like a stop. */
	signal(SIGPIPE, SIG_IGN);
	volatile sig_atomic_t *stop = lp_stop_on_signals();

	if (o.pids) {
		t = lp_target__from_pids(o.pids);
		if (t && lp_target__check_max_pids(t, o.max_pids) < 0) {
			lp_target__free(t);
			return 2;
		}
	} else if (!o.all) {
		t = lp_target__spawn(argv + optind);
	}
	if (!o.all && !t)
		return 1;
	out = lp_open_output(o.output);
	w = lp_writer__new(out);

	struct lp_record_opts ro = {
		.mode = o.mode,
		.min_block_ns = (uint64_t)o.min_block_ns,
		.freq = o.freq,
		.follow = o.follow,
		.kernel = o.kernel,
		.call_graph = o.call_graph,
		.dwarf_bytes = o.dwarf_bytes,
		.verbose = o.verbose,
		.inlines = o.inlines,
		.srclines = o.srclines,
		.raw = o.raw,
		.no_demangle = o.no_demangle,
		.ring_bytes = o.ring_bytes,
		.max_pids = o.max_pids,
		.stack_depth = o.stack_depth,
		.calibrate_ns = o.calibrate_ns,
	};
	if (t)
		ro.pids = lp_target__pids(t, &ro.npids);
	r = lp_recorder__open(&ro, w);
	if (!r) {
		lp_target__free(t);
		lp_writer__free(w);
		if (errno == EPIPE)
			return 0;
		return 1;
	}
	if (t && lp_target__release(t) < 0) {
		lp_recorder__free(r);
		lp_target__free(t);
		lp_writer__free(w);
		return 127;
	}

	int64_t end = o.duration_ns > 0 ? lp_monotonic_ns() + o.duration_ns : 0;
	int rc = 0;
	while (!*stop) {
		/* Samples are read 40 times a second: a short-lived process is
		 * then usually still there to have its maps read. */
		int timeout = 25;

		if (end) {
			int64_t left = end - lp_monotonic_ns();
			if (left <= 0)
				break;
			if (left < 25000000)
				timeout = (int)(left / 1000000) + 1;
		}
		rc = lp_recorder__poll(r, timeout);
		if (rc == 0 && fflush(out) == EOF)
			rc = -1;
		if (rc < 0)
			break;
		if (output_closed(out)) {
			errno = EPIPE;
			rc = -1;
			break;
		}
		if (t && !lp_target__alive(t))
			break;
	}
	if (rc == 0)
		rc = lp_recorder__finish(r);
	if (rc == 0 && fflush(out) == EOF)
		rc = -1;
	int err = errno;
	lp_recorder__summary(r);
	lp_recorder__free(r);
	if (t) {
		/* A command that ended by itself reports its status; one still
		 * running when we stopped (-d, a signal, a closed output) is
		 * stopped, and the run is a success. */
		bool running = lp_target__spawned(t) && lp_target__alive(t) > 0;

		status = lp_target__finish(t, true);
		if (running)
			status = 0;
		lp_target__free(t);
	}
	lp_writer__free(w);
	if (rc < 0) {
		/* A closed output ends the run like a stop: nothing more to do. */
		if (err == EPIPE)
			return status;
		errno = err;
		lp_error_errno("cannot write %s", o.output ? o.output : "the output");
		return 1;
	}
	if (o.output && fclose(out) == EOF) {
		lp_error_errno("cannot write %s", o.output);
		return 1;
	}
	return status;
}
