/* lp-split - route joined samples into groups by the latency of their span.
 *
 *   lp-split --percentile 90 --probe handle_request --above slow.lp --below fast.lp joined.lp
 *
 * Input: an lp stream from lp-join (samples carry span=, span_start=,
 * span_end=).  Groups: percentile bands or threshold bands of the probe's
 * span durations (or below and above the valley --auto finds in them),
 * "outside" (no span of the probe), "excluded" (--time or --where said
 * no), "unranked" (--live, before the first span).  A report per group
 * goes to stderr or --report FILE.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/split.h"
#include "base/stop.h"
#include "base/util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lp-split [options] [INPUT]\n"
		"Splits lp-join's output into groups by the duration of each sample's\n"
		"enclosing span of a probe.\n"
		"\n"
		"  -P, --percentile LIST   cut at these percentiles of the probe's span\n"
		"                          durations (e.g. 90 or 50,90,99); exact on files\n"
		"  -t, --threshold LIST    cut at these durations (e.g. 10ms or 1ms,10ms)\n"
		"      --auto              cut at the valley below the slowest mode of the\n"
		"                          durations (groups below and above); not --live\n"
		"      --took PROBE        two groups, took and not-took: the spans that\n"
		"                          reached the point probe PROBE (FILE:LINE, a USDT\n"
		"                          point) or called the function PROBE inside them\n"
		"      --child PROBE       cut on each span's time in its calls of PROBE\n"
		"                          (with -P, -t or --auto), not on its duration\n"
		"  -e, --probe NAME        the probe whose spans decide (default: the\n"
		"                          innermost span of any probe)\n"
		"  -T, --time FROM-TO      only samples in [FROM, TO): durations from the\n"
		"                          first time in the input, or @NS absolute; either\n"
		"                          side may be empty\n"
		"  -w, --where KEY OP VAL  only spans whose captured KEY compares true\n"
		"                          (=, !=, <, <=, >, >=); repeatable, all must hold\n"
		"      --above FILE        the group above the single cut point\n"
		"      --below FILE        the group at or below it\n"
		"      --outside FILE      samples outside every span of the probe\n"
		"  -g, --group NAME=FILE   any group to FILE (repeatable)\n"
		"  -O, --output-pattern P  every group to a file: %%s is the group's name\n"
		"  -l, --label             one stream with group=NAME on each sample\n"
		"  -o, --output FILE       --label's output (default stdout)\n"
		"  -L, --live              one pass: percentiles from a sketch over a\n"
		"                          sliding window of stream time\n"
		"  -W, --window DUR        the sliding window (default 60s)\n"
		"  -r, --report FILE       the per-group report to FILE (default stderr)\n"
		"  -q, --quiet             no report\n"
		"  -f, --input-format FMT  a format (lp-stream(5)); default auto: by content\n"
		"      --raw               cut on measured durations, lp's own cost left in\n"
		"                          (default: less the cost of lp's samples and\n"
		"                          probes inside each span, from cost records)\n"
		"      --lp-frames         samples in lp's own frames (a probe's trap, its\n"
		"                          BPF program) stay in their span's group\n"
		"                          (default: group lp)\n"
		"      --confidence P      a sampled span joins the band it is in with at\n"
		"                          least this probability, else group uncertain\n"
		"                          (default 0.9)\n"
		"  -h, --help              this help\n"
		"      --version           the version\n"
		"\n"
		"Durations: a number and a unit, ns, us, ms, s, m or h (250us, 1.5s, 2m);\n"
		"a bare number is seconds.\n");
}

enum { OPT_ABOVE = 256, OPT_BELOW, OPT_OUTSIDE, OPT_VERSION, OPT_RAW, OPT_CONFIDENCE, OPT_LP_FRAMES };

/* "FROM-TO", each a duration from the first time read or @NS; exits 2 on
 * a bad one. */
static void parse_time(const char *arg, struct lp_split_opts *o)
{
	const char *dash = strchr(arg, '-');
	const char *why;
	if (!dash)
		lp_option_fail("time", arg, "expected FROM-TO");
	char *from = lp_strndup(arg, dash - arg);
	const char *to = dash + 1;
	int64_t *dst[2] = { &o->time_from, &o->time_to };
	bool *abs[2] = { &o->time_absolute_from, &o->time_absolute_to };
	const char *src[2] = { from, to };
	o->time_from = INT64_MIN;
	o->time_to = INT64_MAX;
	for (int i = 0; i < 2; i++) {
		const char *v = src[i];
		if (!*v)
			continue;
		if (*v == '@') {
			*abs[i] = true;
			if (lp_parse_i64(v + 1, 0, INT64_MAX, dst[i], &why) < 0) {
				free(from);
				lp_option_fail("time", arg, why);
			}
		} else if (lp_parse_duration(v, dst[i], &why) < 0) {
			free(from);
			lp_option_fail("time", arg, why);
		}
	}
	free(from);
	o->has_time = true;
}

/* What the options gather into arrays, before they are handed to
 * lp_split_opts. */
struct lists {
	struct lp_split_cuts cuts;
	struct lp_where *preds;
	struct lp_split_file *files;
	size_t npreds, nfiles;
};

/* --above, --below, --outside FILE or --group NAME=FILE; exits 2 on a bad
 * one. */
static void parse_group_file(int c, const char *arg, struct lists *l)
{
	struct lp_split_file f = { .path = arg };
	if (c == 'g') {
		char *eq = strchr(arg, '=');
		if (!eq || eq == arg || !eq[1])
			lp_option_fail("group", arg, "expected NAME=FILE");
		f.group = lp_strndup(arg, eq - arg);
		f.path = eq + 1;
	} else {
		f.group = c == OPT_ABOVE ? "above" : c == OPT_BELOW ? "below" : "outside";
	}
	l->files = lp_reallocarray(l->files, l->nfiles + 1, sizeof(*l->files));
	l->files[l->nfiles++] = f;
}

static const struct option longopts[] = {
	LP_SPLIT_CUT_LONGOPTS,
	{ "time", required_argument, NULL, 'T' },
	{ "where", required_argument, NULL, 'w' },
	{ "above", required_argument, NULL, OPT_ABOVE },
	{ "below", required_argument, NULL, OPT_BELOW },
	{ "outside", required_argument, NULL, OPT_OUTSIDE },
	{ "group", required_argument, NULL, 'g' },
	{ "output-pattern", required_argument, NULL, 'O' },
	{ "label", no_argument, NULL, 'l' },
	{ "output", required_argument, NULL, 'o' },
	{ "live", no_argument, NULL, 'L' },
	{ "window", required_argument, NULL, 'W' },
	{ "report", required_argument, NULL, 'r' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "input-format", required_argument, NULL, 'f' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "lp-frames", no_argument, NULL, OPT_LP_FRAMES },
	{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* getopt's loop: the options into o and l; 0, or the exit status. */
static int parse_options(int argc, char **argv, struct lp_split_opts *o, struct lists *l)
{
	const char *why;
	int c;

	while ((c = getopt_long(argc, argv, "P:t:e:T:w:g:O:lo:LW:r:qf:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'T':
			parse_time(optarg, o);
			break;
		case 'w':
			l->preds = lp_reallocarray(l->preds, l->npreds + 1, sizeof(*l->preds));
			if (lp_where__parse(optarg, &l->preds[l->npreds], &why) < 0)
				lp_option_fail("where", optarg, why);
			l->npreds++;
			break;
		case OPT_ABOVE:
		case OPT_BELOW:
		case OPT_OUTSIDE:
		case 'g':
			parse_group_file(c, optarg, l);
			break;
		case 'O': {
			const char *pc = strstr(optarg, "%s");
			if (!pc || strstr(pc + 2, "%s") || strchr(optarg, '%') != pc)
				lp_option_fail("output-pattern", optarg, "expected exactly one %s");
			o->pattern = optarg;
			break;
		}
		case 'l':
			o->label = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'L':
			o->live = true;
			break;
		case 'W':
			o->window_ns = lp_option_duration("window", optarg, true);
			if (o->window_ns < 8)
				lp_option_fail("window", optarg, "must be at least 8ns");
			break;
		case 'r':
			o->report = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'f': {
			o->format = lp_option_input_format(optarg);
			break;
		}
		case OPT_RAW:
			o->raw = true;
			break;
		case OPT_LP_FRAMES:
			o->lp_frames = true;
			break;
		case OPT_CONFIDENCE: {
			double v;
			if (lp_parse_double(optarg, &v, &why) < 0)
				lp_option_fail("confidence", optarg, why);
			if (!(v > 0.5 && v <= 1))
				lp_option_fail("confidence", optarg, "must be above 0.5 and at most 1");
			o->confidence = v;
			break;
		}
		case 'h':
			usage(stdout);
			lp_exit_stdout();
		case OPT_VERSION:
			lp_print_version();
		default:
			switch (lp_split_cuts__option(&l->cuts, o, c, optarg)) {
			case 1:
				continue;
			case 0:
				usage(stderr);
			}
			return 2;
		}
	}
	return 0;
}

/* The cuts and the predicates, into o. */
static int check_cuts(struct lp_split_opts *o, struct lists *l)
{
	o->preds = l->preds;
	o->npreds = l->npreds;
	return lp_split_cuts__apply(&l->cuts, o);
}

/* The outputs: one stream or files per group, each file for a group these
 * options make, no file for two groups. */
static int check_outputs(struct lp_split_opts *o, struct lists *l)
{
	o->files = l->files;
	o->nfiles = l->nfiles;
	if (o->label && (l->nfiles || o->pattern)) {
		lp_error("--label writes one stream: it cannot be combined with files per group");
		return 2;
	}
	if (o->output && !o->label) {
		lp_error("-o is --label's output; give files per group with --above, --below, "
			 "--group or --output-pattern");
		return 2;
	}
	if (!o->label && !l->nfiles && !o->pattern && o->quiet) {
		lp_error("nothing to do: no output and no report");
		return 2;
	}
	static const char **names;
	size_t nnames = lp_split__group_names(o, &names);
	for (size_t i = 0; i < l->nfiles; i++) {
		bool found = false;
		for (size_t k = 0; k < nnames; k++)
			found |= !strcmp(names[k], l->files[i].group);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(l->files[k].path, l->files[i].path) &&
			    strcmp(l->files[i].path, "/dev/null")) {
				lp_error("%s: named for two groups", l->files[i].path);
				return 2;
			}
		if (!found) {
			char list[1024] = "";
			for (size_t k = 0; k < nnames; k++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 k ? ", " : "", names[k]);
			lp_error("no group '%s' with these options (groups: %s)", l->files[i].group, list);
			return 2;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lp_split_opts o = LP_SPLIT_OPTS_DEFAULT;
	/* Static: what the options hold lives as long as the program, and
	 * stays reachable to its end, whichever return ends it. */
	static struct lists l;
	int rc;

	lp_init(argc, argv);
	lp_stop__read_through_first_sigint();
	if ((rc = parse_options(argc, argv, &o, &l)))
		return rc;
	if (argc - optind > 1) {
		lp_error("expected at most one INPUT");
		usage(stderr);
		return 2;
	}
	if ((rc = check_cuts(&o, &l)) || (rc = check_outputs(&o, &l)))
		return rc;
	return lp_split__run(optind < argc ? argv[optind] : "-", &o) < 0 ? 1 : 0;
}
