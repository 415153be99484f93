/* lp-join - give each sample the spans that enclose it on its thread.
 *
 *   lp-join [-o FILE] [--all-spans] [--probe NAME] [--max-delay DUR] SAMPLES SPANS
 *
 * SAMPLES is an lp stream (lp-record) or `perf script` output of a
 * `perf record -k CLOCK_MONOTONIC` recording; SPANS an lp stream (lp-trace),
 * whose spans gain what happened inside them (analysis/contents.h).
 * Either may be "-" (not both); both are read at once, so live pipes work.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join.h"
#include "base/stop.h"
#include "base/util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lp-join [options] SAMPLES SPANS\n"
		"Each sample gains the span that encloses it on the same host, pid and tid\n"
		"(start <= time < end) as attributes span=, span_start=, span_end=,\n"
		"span_depth= and span.KEY= for the span's captured values.  Each span\n"
		"gains what happened inside it on its thread: at.PROBE=N (point events),\n"
		"calls.PROBE=N and calls_ns.PROBE=NS (nested calls), first.PROBE.KEY=\n"
		"(the first one's captured values), unless --no-contents.\n"
		"\n"
		"  -o, --output FILE        write to FILE instead of stdout\n"
		"      --all-spans          every enclosing span, innermost first (span=,\n"
		"                           then span1=, span2=, ... outwards)\n"
		"  -e, --probe NAME[,NAME]  join only spans of these probes (repeatable)\n"
		"      --no-contents        spans as they are: no at.PROBE=, calls.PROBE=,\n"
		"                           ... (less work and output with many probes)\n"
		"  -D, --max-delay DUR      out-of-order bound (default 1s): a sample is\n"
		"                           held until a span ending DUR after it is read\n"
		"      --max-held N         samples (and spans) held before waiting for the\n"
		"                           other input (default 262144)\n"
		"      --samples-format FMT auto, lp or perf (default auto)\n"
		"  -v, --verbose            counts on stderr at the end\n"
		"  -h, --help               this help\n"
		"      --version            the version\n"
		"\n"
		"Durations: a number and a unit, ns, us, ms, s, m or h (250us, 1.5s, 2m);\n"
		"a bare number is seconds.\n");
}

/* getopt's loop into o; *verbose for -v.  Returns 0, or the exit status. */
static int parse_options(int argc, char **argv, struct lp_join_opts *o, bool *verbose)
{
	enum { OPT_MAX_HELD = 256, OPT_SAMPLES_FORMAT, OPT_VERSION, OPT_NO_CONTENTS };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "all-spans", no_argument, NULL, 'a' },
		{ "no-contents", no_argument, NULL, OPT_NO_CONTENTS },
		{ "probe", required_argument, NULL, 'e' },
		{ "max-delay", required_argument, NULL, 'D' },
		{ "max-held", required_argument, NULL, OPT_MAX_HELD },
		{ "samples-format", required_argument, NULL, OPT_SAMPLES_FORMAT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	/* Static: probe names point into copies of the --probe lists, which
	 * live as long as the program and stay reachable through it. */
	static const char **probes;
	int c;

	while ((c = getopt_long(argc, argv, "o:e:D:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'a':
			o->all_spans = true;
			break;
		case OPT_NO_CONTENTS:
			o->no_contents = true;
			break;
		case 'e': {
			char *list = lp_strdup(optarg), *save = NULL;
			for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				probes = lp_reallocarray(probes, o->nprobes + 1, sizeof(*probes));
				probes[o->nprobes++] = t;
			}
			o->probes = probes;
			break;
		}
		case 'D':
			o->max_delay_ns = lp_option_duration("max-delay", optarg, false);
			break;
		case OPT_MAX_HELD:
			o->max_held = lp_option_u64("max-held", optarg, 1, SIZE_MAX / 2);
			break;
		case OPT_SAMPLES_FORMAT: {
			int f = lp_input_format__parse(optarg);
			if (f < 0 || f == LP_INPUT_FOLDED)
				lp_option_fail("samples-format", optarg, "expected auto, lp or perf");
			o->samples_format = f;
			break;
		}
		case 'v':
			*verbose = true;
			break;
		case 'h':
			usage(stdout);
			lp_exit_stdout();
		case OPT_VERSION:
			lp_print_version();
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		lp_error("expected two inputs, SAMPLES and SPANS");
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-")) {
		lp_error("only one of SAMPLES and SPANS can be stdin");
		return 2;
	}
	return 0;
}

/* The counts (-v), and why nothing joined when the user can fix it. */
static void report(const struct lp_join_stats *st, bool verbose)
{
	if (verbose)
		lp_error("%llu samples (%llu joined), %llu spans (%llu unfinished)",
			 (unsigned long long)st->samples, (unsigned long long)st->joined,
			 (unsigned long long)st->spans, (unsigned long long)st->unfinished);
	if (st->untimed && st->untimed == st->samples)
		lp_error("the samples have no timestamps, so none can be joined "
			 "(perf script: keep the time field)");
	else if (!st->joined && st->samples && st->spans > st->unfinished &&
		 (st->sample_max < st->span_min || st->sample_min > st->span_max))
		lp_error("no sample time falls within the spans' times: were both recorded on "
			 "CLOCK_MONOTONIC of one host (perf record -k CLOCK_MONOTONIC)?");
	if (st->early)
		lp_error("%llu samples or spans let go before their match could arrive "
			 "(an input lagged by more than --max-delay; raise --max-held)",
			 (unsigned long long)st->early);
}

int main(int argc, char **argv)
{
	struct lp_join_opts o = {
		.max_delay_ns = 1000000000,
		.max_held = 262144,
		.samples_format = LP_INPUT_AUTO,
		.spans_format = LP_INPUT_LP,
	};
	struct lp_join_stats st;
	bool verbose = false;
	int rc;

	lp_init(argc, argv);
	if ((rc = parse_options(argc, argv, &o, &verbose)))
		return rc;
	lp_stop__read_through_first_sigint();
	if (lp_join__run(argv[optind], argv[optind + 1], &o, &st) < 0)
		return 1;
	report(&st, verbose);
	return 0;
}
