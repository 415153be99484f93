/* lp-diff - compare two profiles: "before" and "after" folded stacks, lp
 * streams or perf script dumps, merged into difffolded.pl's
 * "stack countA countB" lines, a differential flame graph, or a ranked
 * report of the functions whose share changed, with p-values. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "output/flamegraph.h"
#include "stream/folded.h"
#include "stream/stream.h"
#include "base/stop.h"
#include "base/util.h"

enum format { FORMAT_FOLDED, FORMAT_SVG, FORMAT_REPORT };

struct options {
	struct lp_diff_opts diff;
	struct lp_folded_opts folded;
	struct lp_diff_report_opts report;
	struct lp_flamegraph_opts svg;
	enum format format;
	const char *output;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lp-diff [options] BEFORE AFTER\n"
		"Compares two profiles (folded stacks, lp streams or perf script; \"-\" is stdin).\n"
		"Output: \"stack countA countB\" lines (as difffolded.pl), a differential flame\n"
		"graph, or a ranked report of what changed.\n"
		"\n"
		"  -n, --normalize          scale BEFORE's counts to AFTER's total (and accept\n"
		"                           profiles recorded at different periods or modes)\n"
		"  -s, --strip-hex          rewrite hex numbers (0x1f3a) as 0x... before merging\n"
		"      --format FMT         folded (default), svg, report\n"
		"      --report             the same as --format report\n"
		"      --alpha A            report: significance level (default 0.01)\n"
		"      --top N              report: print the N first rows, 0 all (default 20)\n"
		"      --adjust METHOD      report: p-value adjustment for many functions:\n"
		"                           bh (Benjamini-Hochberg, default), holm, none\n"
		"      --title TEXT         svg: the title (default \"Differential Flame Graph\")\n"
		"      --negate             svg: swap the hues (blue grew, red shrank)\n"
		"  -f, --input-format FMT   a format (lp-stream(5)); default auto: by content\n"
		"      --pid, --tid         stream and perf input: a first frame comm-PID[/TID]\n"
		"      --kernel, --jit      annotate kernel frames _[k], JIT frames _[j]\n"
		"      --all                --kernel and --jit\n"
		"      --addrs              unresolved frames with their address\n"
		"      --srcline            frames with their file:line when known\n"
		"      --event-filter EV    samples of event EV only (default: the first seen)\n"
		"  -g, --group A,B          BEFORE's samples labelled group=A, AFTER's group=B\n"
		"                           (lp-split --label); an empty name keeps every sample\n"
		"      --lp-frames          keep the samples that hold lp's own frames (the\n"
		"                           probe and sample handling lp added); by default\n"
		"                           they are left out, and the report counts them\n"
		"  -o, --output FILE        write to FILE instead of stdout\n"
		"  -h, --help               this help\n"
		"      --version            the version\n");
}

enum {
	OPT_FORMAT = 256, OPT_REPORT, OPT_ALPHA, OPT_TOP, OPT_ADJUST, OPT_TITLE, OPT_NEGATE,
	OPT_EVENT, OPT_LP_FRAMES, OPT_VERSION,
};

static const struct option long_options[] = {
	{ "normalize", no_argument, NULL, 'n' },
	{ "strip-hex", no_argument, NULL, 's' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "report", no_argument, NULL, OPT_REPORT },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "adjust", required_argument, NULL, OPT_ADJUST },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "negate", no_argument, NULL, OPT_NEGATE },
	{ "input-format", required_argument, NULL, 'f' },
	LP_FOLDED_LONGOPTS,
	{ "event-filter", required_argument, NULL, OPT_EVENT },
	{ "group", required_argument, NULL, 'g' },
	{ "groups", required_argument, NULL, 'g' },	/* the old name, kept working */
	{ "lp-frames", no_argument, NULL, OPT_LP_FRAMES },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void parse_options(struct options *o, int argc, char **argv)
{
	int c;
	const char *why;
	while ((c = getopt_long(argc, argv, "nsf:g:o:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->diff.normalize = true;
			break;
		case 's':
			o->diff.strip_hex = true;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "folded"))
				o->format = FORMAT_FOLDED;
			else if (!strcmp(optarg, "svg"))
				o->format = FORMAT_SVG;
			else if (!strcmp(optarg, "report"))
				o->format = FORMAT_REPORT;
			else
				lp_option_fail("format", optarg, "expected folded, svg or report");
			break;
		case OPT_REPORT:
			o->format = FORMAT_REPORT;
			break;
		case OPT_ALPHA:
			if (lp_parse_double(optarg, &o->report.alpha, &why) < 0)
				lp_option_fail("alpha", optarg, why);
			if (!(o->report.alpha > 0 && o->report.alpha < 1))
				lp_option_fail("alpha", optarg, "must be above 0 and below 1");
			break;
		case OPT_TOP:
			o->report.top = (size_t)lp_option_u64("top", optarg, 0, SIZE_MAX);
			break;
		case OPT_ADJUST: {
			int a = lp_diff_adjust__parse(optarg);
			if (a < 0)
				lp_option_fail("adjust", optarg, "expected bh, holm or none");
			o->report.adjust = (enum lp_diff_adjust)a;
			break;
		}
		case OPT_TITLE:
			o->svg.title = optarg;
			break;
		case OPT_NEGATE:
			o->svg.negate = true;
			break;
		case 'f': {
			o->diff.input_format = lp_option_input_format(optarg);
			break;
		}
		case OPT_EVENT:
			/* the script treats "" as no filter: the first event seen */
			o->diff.event_filter = *optarg ? optarg : NULL;
			break;
		case 'g': {
			char *comma = strchr(optarg, ',');
			if (!comma || strchr(comma + 1, ','))
				lp_option_fail("group", optarg, "expected BEFORE,AFTER");
			*comma = '\0';
			o->diff.groups[0] = *optarg ? optarg : NULL;
			o->diff.groups[1] = comma[1] ? comma + 1 : NULL;
			break;
		}
		case OPT_LP_FRAMES:
			o->diff.lp_frames = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			usage(stdout);
			lp_exit_stdout();
		case OPT_VERSION:
			lp_print_version();
		default:
			if (lp_folded_opts__option(&o->folded, c))
				break;
			usage(stderr);
			exit(2);
		}
	}
	if (argc - optind != 2) {
		lp_error("expected two inputs, BEFORE and AFTER");
		usage(stderr);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct options o = {
		.report = { .alpha = 0.01, .top = 20, .adjust = LP_DIFF_ADJUST_BH },
	};
	lp_init(argc, argv);
	lp_stop__read_through_first_sigint();
	parse_options(&o, argc, argv);
	o.diff.folded = &o.folded;

	struct lp_diff *d = lp_diff__new(&o.diff);
	if (!d)
		lp_die(1, "out of memory");
	/* Both inputs are read, and checked, before a byte is written: a bad
	 * line in AFTER must not leave a complete-looking output behind. */
	const char *before = argv[optind], *after = argv[optind + 1];
	/* "-" twice: standard input is read once, for both sides. */
	int rc = !strcmp(before, "-") && !strcmp(after, "-")
			 ? lp_diff__read_both(d, "-")
			 : lp_diff__read(d, 0, before) < 0 ? -1 : lp_diff__read(d, 1, after);
	if (rc < 0 || lp_diff__check(d) < 0) {
		lp_diff__free(d);
		return 1;
	}

	FILE *out = lp_open_output(o.output);
	const char *name = o.output ? o.output : "stdout";
	int ret = 0;
	switch (o.format) {
	case FORMAT_FOLDED:
		ret = lp_diff__write_folded(d, out);
		break;
	case FORMAT_REPORT:
		ret = lp_diff__write_report(d, out, &o.report);
		break;
	case FORMAT_SVG:
		o.svg.differential = true;
		if (lp_diff__ns(d) && !o.svg.count_name)
			o.svg.count_name = "ns";
		ret = lp_flamegraph__write(out, lp_diff__profile(d), &o.svg);
		break;
	}
	if (ret < 0)
		lp_write_failed(name);
	lp_diff__free(d);
	return lp_close_output(out, name) < 0 ? 1 : 0;
}
