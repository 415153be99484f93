/* lp-report - one self-contained HTML page from lp-split's labelled stream:
 * the probe's latency distribution with its cuts and modes, each group's
 * figures, the groups' flame graphs and the differential one side by side,
 * lp-diff's ranked table, and what lp-split warned about.
 *
 *   lp-split -e handle_request -P 90 --label -q joined.lp | lp-report -o report.html
 *   lp-report -e handle_request -P 90 -o report.html joined.lp
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/report.h"
#include "analysis/split.h"
#include "base/stop.h"
#include "base/util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lp-report [options] [INPUT]\n"
		"Makes one self-contained HTML page (no network) from lp-split's labelled\n"
		"stream (lp-split --label): the latency distribution and its cuts, each\n"
		"group's figures, flame graphs side by side, the differential graph and the\n"
		"ranked table of what differs.\n"
		"\n"
		"  -o, --output FILE       the page (default stdout)\n"
		"      --title TEXT        the page's title (default: from the probe)\n"
		"  -g, --group A,B         the diff's sides (default: the fastest band and\n"
		"                          the slowest)\n"
		"      --min-share S       frames under this share of a graph's total are\n"
		"                          left out, their time in their caller (default\n"
		"                          0.0002)\n"
		"      --top N             rows of the ranked table (default 20)\n"
		"\n"
		"Splitting lp-join's output first, as lp-split --label does (lp-split(1)):\n"
		"  -e, --probe NAME        the probe whose spans decide\n"
		"  -P, --percentile LIST   cut at these percentiles of its durations\n"
		"  -t, --threshold LIST    cut at these durations\n"
		"      --auto              cut at the valley below the slowest mode\n"
		"      --took PROBE        the spans that reached or called PROBE, and\n"
		"                          the others\n"
		"      --child PROBE       cut on each span's time in calls of PROBE\n"
		"\n"
		"  -f, --input-format FMT  a format (lp-stream(5)); default auto: by content\n"
		"  -h, --help              this help\n"
		"      --version           the version\n");
}

enum { OPT_TITLE = 256, OPT_MIN_SHARE, OPT_TOP, OPT_VERSION };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "group", required_argument, NULL, 'g' },
	{ "min-share", required_argument, NULL, OPT_MIN_SHARE },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "input-format", required_argument, NULL, 'f' },
	LP_SPLIT_CUT_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* What the options say: the report's, and the split's when the input is
 * to be split first (split: any split option given). */
struct options {
	struct lp_report_opts report;
	const char *output;
	struct lp_split_opts split;
	struct lp_split_cuts cuts;
	bool splits;
};

static void parse_options(int argc, char **argv, struct options *opts)
{
	struct lp_report_opts *o = &opts->report;
	const char **output = &opts->output;
	int c;
	const char *why;

	while ((c = getopt_long(argc, argv, "o:g:f:he:P:t:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			*output = optarg;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case 'g': {
			char *comma = strchr(optarg, ',');
			if (!comma || comma == optarg || !comma[1] || strchr(comma + 1, ','))
				lp_option_fail("group", optarg, "expected A,B");
			*comma = '\0';
			o->group_a = optarg;
			o->group_b = comma + 1;
			break;
		}
		case OPT_MIN_SHARE:
			if (lp_parse_double(optarg, &o->min_share, &why) < 0)
				lp_option_fail("min-share", optarg, why);
			if (!(o->min_share >= 0 && o->min_share < 1))
				lp_option_fail("min-share", optarg, "must be at least 0 and below 1");
			break;
		case OPT_TOP:
			o->top = (size_t)lp_option_u64("top", optarg, 1, 100000);
			break;
		case 'f': {
			o->format = lp_option_input_format(optarg);
			opts->split.format = o->format;
			break;
		}
		case 'h':
			usage(stdout);
			lp_exit_stdout();
		case OPT_VERSION:
			lp_print_version();
		default:
			switch (lp_split_cuts__option(&opts->cuts, &opts->split, c, optarg)) {
			case 1:
				opts->splits = true;
				continue;
			case 0:
				usage(stderr);
			}
			exit(2);
		}
	}
	if (argc - optind > 1) {
		lp_error("expected at most one INPUT");
		usage(stderr);
		exit(2);
	}
	if (!opts->splits)
		return;
	if (lp_split_cuts__apply(&opts->cuts, &opts->split))
		exit(2);
	if (!opts->split.npercentiles && !opts->split.nthresholds && !opts->split.auto_cut &&
	    !opts->split.took) {
		lp_error("splitting needs a cut: --percentile, --threshold, --auto or --took");
		exit(2);
	}
}

/* The input split as lp-split --label splits it, into a temporary file:
 * its name, or NULL after a message. */
static char *split_first(const char *input, struct lp_split_opts *o)
{
	char *path;
	FILE *f = lp_temp_file(&path);

	if (!f) {
		free(path);
		return NULL;
	}
	fclose(f);
	o->label = true;
	o->quiet = true;	/* the page says it all; warnings still go to stderr */
	o->output = path;
	if (lp_split__run(input, o) < 0) {
		unlink(path);
		free(path);
		return NULL;
	}
	return path;
}

/* The input as a file that can be read twice: itself, or standard input
 * (or a pipe named) copied into a temporary file. */
static const char *readable_twice(const char *input, char **spool)
{
	struct stat st;
	bool is_stdin = !strcmp(input, "-");
	FILE *in = is_stdin ? stdin : NULL;

	*spool = NULL;
	if (is_stdin ? fstat(0, &st) == 0 && S_ISREG(st.st_mode)
		     : stat(input, &st) < 0 || S_ISREG(st.st_mode))
		return is_stdin ? "/dev/stdin" : input;	/* a missing file: the reader says so */
	if (!in && !(in = fopen(input, "r"))) {
		lp_error_errno("%s", input);
		return NULL;
	}
	FILE *f = lp_temp_file(spool);
	char buf[1 << 16];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, f) != n)
			break;
	bool failed = ferror(in) || ferror(f);
	if (in != stdin)
		fclose(in);
	if (fclose(f) != 0 || failed) {
		lp_error_errno("%s: cannot copy the input", *spool);
		unlink(*spool);
		return NULL;
	}
	return *spool;
}

int main(int argc, char **argv)
{
	/* Static: the cut lists live as long as the program. */
	static struct options opts = {
		.report = { .format = LP_INPUT_AUTO, .min_share = LP_REPORT_MIN_SHARE },
		.split = LP_SPLIT_OPTS_DEFAULT,
	};
	struct lp_report_opts *o = &opts.report;
	const char *output;
	char *spool;

	lp_init(argc, argv);
	lp_stop__read_through_first_sigint();
	parse_options(argc, argv, &opts);
	output = opts.output;
	const char *input = optind < argc ? argv[optind] : "-";
	o->source = strcmp(input, "-") ? input : "stdin";
	const char *path;
	if (opts.splits) {
		/* lp-split reads a pipe itself; its output is a file. */
		path = spool = split_first(input, &opts.split);
		o->format = LP_INPUT_LP;
	} else {
		path = readable_twice(input, &spool);
	}
	if (!path)
		return 1;
	/* The page is made whole in memory and written at the end: a bad
	 * input leaves no half page behind on stdout. */
	FILE *out = lp_open_output(output);
	int rc = lp_report__write(path, out, o);
	if (spool) {
		unlink(spool);
		free(spool);
	}
	if (lp_close_output(out, output ? output : "stdout") < 0)
		rc = -1;
	return rc < 0 ? 1 : 0;
}
