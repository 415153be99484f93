/* lp-collapse - aggregate samples (lp streams, `perf script` text, folded
 * stacks) into one profile and write it as folded stacks (byte-identical to
 * FlameGraph's stackcollapse-perf.pl, option for option), speedscope JSON,
 * an SVG flame graph, pprof, OTLP profiles, flamescope's sub-second heatmap,
 * a trace-event timeline, or for spans a latency table.
 *
 * Samples are summed by (stack, comm, PID/TID) as they arrive and each
 * distinct key is formatted once per input, so memory grows with distinct
 * stacks, not with input size.  Nothing is written until every input has
 * been read without error: a bad input never leaves a complete-looking
 * output behind. */
#include "output/flamegraph.h"
#include "stream/folded.h"
#include "output/heatmap.h"
#include "stream/inputs.h"
#include "stream/resolve.h"
#include "analysis/latency.h"
#include "model/lpframe.h"
#include "output/otlp.h"
#include "output/pprof.h"
#include "model/profile.h"
#include "output/speedscope.h"
#include "stream/stream.h"
#include "output/tracejson.h"
#include "base/stop.h"
#include "base/util.h"
#include "analysis/window.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum out_format {
	FMT_FOLDED,
	FMT_SPEEDSCOPE,
	FMT_SVG,
	FMT_LATENCY,
	FMT_TRACE_EVENT,
	FMT_PPROF,
	FMT_OTLP,
	FMT_HEATMAP,
	FMT_HEATMAP_TSV,
};

static const char *const format_names[] = {
	[FMT_FOLDED] = "folded",
	[FMT_SPEEDSCOPE] = "speedscope",
	[FMT_SVG] = "svg",
	[FMT_LATENCY] = "latency",
	[FMT_TRACE_EVENT] = "trace-event",
	[FMT_PPROF] = "pprof",
	[FMT_OTLP] = "otlp",
	[FMT_HEATMAP] = "heatmap",
	[FMT_HEATMAP_TSV] = "heatmap-tsv",
};

struct options {
	const char *output;
	enum lp_input_format input;
	enum out_format format;
	struct lp_folded_opts folded;
	const char *event_filter;	/* NULL: the first event seen */
	const char *group;		/* keep samples whose group= is this */
	bool no_lp;			/* leave out samples with lp's own frames */
	bool inlines, context;		/* --inline, --context (perf script) */
	bool human;			/* latency: log2 histograms */
	bool raw;			/* latency: lp's own cost left in */
	int rows;			/* heatmap: cells a second */
	int64_t last_ns, half_life_ns;	/* recent samples only (lib/analysis/window.h) */
	int64_t every_ns;		/* rewrite -o FILE this often, in stream time */
	const char *title;		/* svg */
	struct lp_flamegraph_opts svg;	/* svg: the other settings */
};

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-collapse [options] [FILE...]\n"
		"\n"
		"Aggregates the samples of lp streams, `perf script` output or folded\n"
		"stacks (FILE, or - for stdin, the default; several inputs are summed)\n"
		"into one profile, written as folded stacks by default.\n"
		"\n"
		"  -o, --output FILE       write to FILE instead of stdout\n"
		"  -f, --input-format F    a format (lp-stream(5)); default auto: by content\n"
		"      --format F          folded (default), speedscope, svg, latency,\n"
		"                          trace-event (Chrome/Perfetto JSON timeline),\n"
		"                          pprof (gzipped profile.proto), otlp (an OTLP\n"
		"                          ExportProfilesServiceRequest, protobuf),\n"
		"                          heatmap (SVG: samples by second and sub-second\n"
		"                          offset) or heatmap-tsv (its cells as text)\n"
		"\n"
		"Folded output, as stackcollapse-perf.pl's options of the same names:\n"
		"      --pid               first frame comm-PID\n"
		"      --tid               first frame comm-PID/TID\n"
		"      --kernel            annotate kernel frames with _[k]\n"
		"      --jit               annotate JIT frames (/tmp/perf-PID.map) with _[j]\n"
		"      --all               --kernel and --jit\n"
		"      --addrs             unresolved frames as [module <address>]\n"
		"      --event-filter EV   keep samples of event EV (default: the first seen)\n"
		"      --srcline           perf script -F+srcline input: append file:line\n"
		"      --inline            perf script input: expand inlined functions from\n"
		"                          the binaries' DWARF (what addr2line -i prints)\n"
		"      --context           with --inline: func:file:line\n"
		"\n"
		"  -g, --group NAME        keep only samples labelled group=NAME (lp-split)\n"
		"      --no-lp-frames      leave out the samples that hold lp's own frames\n"
		"                          (its probe and sample handling: lp-diff's default)\n"
		"      --last DUR          only the samples of the last DUR of stream time\n"
		"  -H, --half-life DUR     weights halve with each DUR of age\n"
		"      --every DUR         with -o FILE: rewrite FILE every DUR of stream\n"
		"                          time (live input); folded, speedscope, svg\n"
		"      --title TEXT        svg and heatmap: the title\n"
		"      --subtitle TEXT     svg: a second line under the title\n"
		"      --width PX          svg: image width (default 1200)\n"
		"      --min-width PX      svg: omit frames narrower than PX (default 0.1)\n"
		"      --inverted          svg: an icicle graph (roots at the top)\n"
		"      --human             latency: log2 histograms instead of the table\n"
		"      --raw               latency: durations as measured (default: less\n"
		"                          the cost of lp-trace's probes, lp_ns=)\n"
		"      --rows N            heatmap: cells a second (default 50: 20 ms)\n"
		"  -h, --help              show this help\n"
		"      --version           show the version\n"
		"\n"
		"Durations: a number and a unit, ns, us, ms, s, m or h (250us, 1.5s, 2m);\n"
		"a bare number is seconds.\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

enum {
	OPT_EVENT = 256, OPT_INLINE, OPT_CONTEXT, OPT_HUMAN, OPT_TITLE, OPT_VERSION,
	OPT_SUBTITLE, OPT_WIDTH, OPT_MIN_WIDTH, OPT_INVERTED, OPT_ROWS, OPT_LAST,
	OPT_EVERY, OPT_FORMAT, OPT_RAW, OPT_NO_LP,
};

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "input-format", required_argument, NULL, 'f' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "group", required_argument, NULL, 'g' },
	{ "no-lp-frames", no_argument, NULL, OPT_NO_LP },
	LP_FOLDED_LONGOPTS,
	{ "event-filter", required_argument, NULL, OPT_EVENT },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "context", no_argument, NULL, OPT_CONTEXT },
	{ "human", no_argument, NULL, OPT_HUMAN },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "min-width", required_argument, NULL, OPT_MIN_WIDTH },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "last", required_argument, NULL, OPT_LAST },
	{ "half-life", required_argument, NULL, 'H' },
	{ "every", required_argument, NULL, OPT_EVERY },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void parse_options(int argc, char **argv, struct options *o)
{
	int c, v;
	while ((c = getopt_long(argc, argv, "o:f:g:H:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'f':
			o->input = lp_option_input_format(optarg);
			break;
		case OPT_FORMAT:
			for (v = 0; v < (int)(sizeof(format_names) / sizeof(*format_names)); v++)
				if (!strcmp(optarg, format_names[v]))
					break;
			if (v == (int)(sizeof(format_names) / sizeof(*format_names)))
				lp_option_fail("format", optarg, "expected folded, speedscope, svg, latency, "
					       "trace-event, pprof, otlp, heatmap or heatmap-tsv");
			o->format = v;
			break;
		case 'g': o->group = optarg; break;
		case OPT_NO_LP: o->no_lp = true; break;
		case OPT_EVENT: o->event_filter = optarg; break;
		case OPT_INLINE: o->inlines = true; break;
		case OPT_CONTEXT: o->context = true; break;
		case OPT_HUMAN: o->human = true; break;
		case OPT_RAW: o->raw = true; break;
		case OPT_TITLE: o->title = optarg; break;
		case OPT_SUBTITLE: o->svg.subtitle = optarg; break;
		case OPT_WIDTH:
			o->svg.width = (int)lp_option_i64("width", optarg, 100, 100000);
			break;
		case OPT_MIN_WIDTH: {
			const char *why;
			if (lp_parse_double(optarg, &o->svg.min_width_px, &why) < 0)
				lp_option_fail("min-width", optarg, why);
			if (!(o->svg.min_width_px > 0))
				lp_option_fail("min-width", optarg, "must be positive (pixels)");
			break;
		}
		case OPT_INVERTED: o->svg.inverted = true; break;
		case OPT_ROWS:
			o->rows = (int)lp_option_i64("rows", optarg, 1, 1000);
			break;
		case OPT_LAST:
		case 'H':
		case OPT_EVERY: {
			const char *name = c == OPT_LAST ? "last" : c == OPT_EVERY ? "every" : "half-life";
			*(c == OPT_LAST ? &o->last_ns : c == OPT_EVERY ? &o->every_ns :
			  &o->half_life_ns) = lp_option_duration(name, optarg, true);
			break;
		}
		case 'h': usage(stdout, 0); break;
		case OPT_VERSION: lp_print_version(); break;
		default:
			if (!lp_folded_opts__option(&o->folded, c))
				usage(stderr, 2);
		}
	}
	if (o->event_filter && !o->event_filter[0])
		o->event_filter = NULL;	/* the script treats "" as no filter */
	bool windowed = o->last_ns || o->half_life_ns || o->every_ns;
	if (windowed && o->format != FMT_FOLDED && o->format != FMT_SPEEDSCOPE &&
	    o->format != FMT_SVG) {
		lp_error("--last, --half-life and --every make folded, speedscope or svg output");
		exit(2);
	}
	if (o->last_ns && o->half_life_ns) {
		lp_error("--last and --half-life cannot be combined");
		exit(2);
	}
	if (o->every_ns && (!o->output || !strcmp(o->output, "-"))) {
		lp_error("--every rewrites a file: give it with -o");
		exit(2);
	}
}

/* The sample filters: the event (stackcollapse-perf.pl keeps the first event
 * type it sees unless told one; samples whose event is not known always
 * pass, as in the script), the group label, and with --no-lp-frames lp's
 * own cost.  By default a sample that holds lp's frames is kept, as it is:
 * the graph shows where the time went, what lp cost included. */
struct filter {
	const struct options *o;
	char *event;
};

static bool keep_sample(struct filter *f, const struct lp_sample *s)
{
	if (s->event && s->event[0]) {
		if (!f->event)
			f->event = lp_strdup(f->o->event_filter ? f->o->event_filter : s->event);
		if (strcmp(f->event, s->event))
			return false;
	}
	if (f->o->no_lp && lp_stack__has_lp(s->stack))
		return false;
	return !f->o->group || lp_attrs__is(&s->attrs, "group", f->o->group);
}

static int write_folded(FILE *out, struct lp_profile *p)
{
	size_t n;
	const struct lp_profile_entry *const *e = lp_profile__sorted(p, &n);
	char num[64];
	for (size_t i = 0; i < n; i++) {
		lp_format_number(num, sizeof(num), e[i]->weight[0]);
		if (fwrite(e[i]->stack, 1, e[i]->len, out) != e[i]->len ||
		    fprintf(out, " %s\n", num) < 0)
			return -1;
	}
	return 0;
}

/* The formats written from an aggregated profile, saying when its counts
 * are nanoseconds (lib/stream/folded.h). */
static int write_aggregate(const struct options *o, FILE *out, struct lp_profile *p,
			   const struct lp_folded_units *units)
{
	const char *ns = lp_folded_units__ns(units);
	switch (o->format) {
	case FMT_SPEEDSCOPE: {
		struct lp_speedscope_opts so = { .name = "lp-collapse",
						 .unit = ns ? "nanoseconds" : NULL };
		return lp_speedscope__write(out, p, &so);
	}
	case FMT_SVG: {
		struct lp_flamegraph_opts fo = o->svg;
		fo.title = o->title;
		if (ns && !fo.count_name)
			fo.count_name = "ns";
		return lp_flamegraph__write(out, p, &fo);
	}
	default:
		if (ns && lp_folded__ns_comment(out, "lp-collapse", ns) < 0)
			return -1;
		return write_folded(out, p);
	}
}

/* --every: the view so far replaces the output, written beside it and
 * renamed over it, so whoever reads it never sees half a file. */
static void rewrite_output(const struct options *o, struct lp_window *win,
			   const struct lp_folded_units *units)
{
	size_t len = strlen(o->output) + sizeof(".tmp");
	char *tmp = lp_malloc(len);
	snprintf(tmp, len, "%s.tmp", o->output);
	FILE *f = fopen(tmp, "w");
	if (!f)
		lp_die(1, "cannot write '%s': %s", tmp, strerror(errno));
	struct lp_profile *view = lp_window__view(win);
	if (write_aggregate(o, f, view, units) < 0 || lp_close_output(f, tmp) < 0)
		lp_write_failed(tmp);
	if (rename(tmp, o->output) < 0)
		lp_die(1, "cannot rename '%s' to '%s': %s", tmp, o->output, strerror(errno));
	lp_profile__free(view);
	free(tmp);
}

/* --every: rewrites the output when stream time has passed the next
 * write's time, the one after that a whole DUR later. */
static void every(const struct options *o, struct lp_window *win, int64_t *next,
		  const struct lp_folded_units *units)
{
	int64_t now = lp_window__latest(win);
	if (*next == LP_TIME_NONE)
		*next = lp_add_sat(now, o->every_ns);
	if (now >= *next) {
		rewrite_output(o, win, units);
		*next = lp_add_sat(*next + (now - *next) / o->every_ns * o->every_ns, o->every_ns);
	}
}

/* --inline's questions go to `lp-symbolize --addr2line`, which answers
 * them with libdw (a filter links none): the one installed beside this
 * program, else the one on PATH. */
static struct lp_inline_coproc *inline_resolver(void)
{
	char *prog = lp_sibling_program("lp-symbolize");
	char *argv[] = { prog, "--addr2line", NULL };
	struct lp_inline_coproc *c = lp_inline_coproc__new(argv);
	free(prog);
	return c;
}

/* Where the records go: one aggregation per output format. */
struct sinks {
	struct lp_profile *profile;
	struct lp_folded_agg *agg;
	struct lp_latency *lat;
	struct lp_proftab *tab;		/* pprof and otlp */
	struct lp_window *win;
	struct lp_heatmap *heat;
	FILE *tout;			/* trace-event output, open from the start */
	struct lp_tracejson *trace;
	struct filter filt;
	struct lp_folded_units units;	/* what the counts are */
	int64_t next_write;		/* --every */
};

static void sinks_init(struct sinks *k, const struct options *o)
{
	*k = (struct sinks){ .filt = { .o = o }, .next_write = LP_TIME_NONE };
	k->profile = lp_profile__new();
	k->agg = lp_folded_agg__new(&o->folded);
	k->lat = o->format == FMT_LATENCY ? lp_latency__new(o->raw) : NULL;
	if (o->format == FMT_PPROF || o->format == FMT_OTLP)
		k->tab = lp_proftab__new(o->format == FMT_OTLP);
	struct lp_window_opts wo = { o->last_ns, o->half_life_ns, &o->folded };
	k->win = o->last_ns || o->half_life_ns || o->every_ns ? lp_window__new(&wo) : NULL;
	if (o->format == FMT_HEATMAP || o->format == FMT_HEATMAP_TSV)
		k->heat = lp_heatmap__new(o->rows);
	/* trace-event streams: events are written as records arrive (every
	 * input is open by now); on bad input the document is left unclosed,
	 * so it never looks complete. */
	k->tout = o->format == FMT_TRACE_EVENT ? lp_open_output(o->output) : NULL;
	k->trace = k->tout ? lp_tracejson__new(k->tout) : NULL;
}

/* A sample to its aggregation; -1 (with *why) when it cannot be placed. */
static int take_sample(const struct options *o, struct sinks *k, struct lp_sample *s,
		       const char **why)
{
	if (k->lat || !keep_sample(&k->filt, s))
		return 0;
	if (k->tab) {
		lp_proftab__add(k->tab, s);
		return 0;
	}
	s->weight = lp_folded_units__count(&k->units, s);
	if (!k->heat && !k->win) {
		lp_folded_agg__add(k->agg, s);
		return 0;
	}
	/* both need timed samples, and say so */
	if ((k->heat ? lp_heatmap__add(k->heat, s, why) : lp_window__add(k->win, s, why)) < 0)
		return -1;
	if (k->win && o->every_ns)
		every(o, k->win, &k->next_write, &k->units);
	return 0;
}

/* One input's records to the sinks: 0 at its end, -1 after a message. */
static int take_input(const struct options *o, struct sinks *k, struct lp_reader *r)
{
	struct lp_record rec;
	int rc;
	lp_folded_units__input(&k->units);
	if (k->tab)
		lp_proftab__input(k->tab);
	while ((rc = lp_reader__next(r, &rec)) > 0) {
		const char *why = NULL;
		if (rec.kind == LP_REC_HEADER)
			lp_folded_units__header(&k->units, &rec.header);
		if (k->trace) {
			if ((rec.kind != LP_REC_SAMPLE || keep_sample(&k->filt, &rec.sample)) &&
			    lp_tracejson__record(k->trace, &rec) < 0)
				lp_write_failed(o->output ? o->output : "stdout");
		} else if (rec.kind == LP_REC_SAMPLE) {
			if (take_sample(o, k, &rec.sample, &why) < 0) {
				lp_reader__error(r, "%s", why);
				return -1;
			}
		} else if (rec.kind == LP_REC_HEADER && k->tab) {
			lp_proftab__header(k->tab, &rec.header);
		} else if (rec.kind == LP_REC_SPAN && k->lat) {
			if (lp_latency__add(k->lat, &rec.span, &why) < 0) {
				lp_reader__error(r, "%s", why ? why : "bad span");
				return -1;
			}
		}
	}
	return rc < 0 ? -1 : 0;
}

/* The aggregate in the format asked for; 0, or 1 when it could not be
 * written whole. */
static int write_result(const struct options *o, struct sinks *k)
{
	const char *outname = o->output ? o->output : "stdout";
	FILE *out = lp_open_output(o->output);
	int wr = 0;
	switch (o->format) {
	case FMT_FOLDED:
	case FMT_SPEEDSCOPE:
	case FMT_SVG:
		if (k->win) {
			lp_profile__free(k->profile);
			k->profile = lp_window__view(k->win);
		}
		wr = write_aggregate(o, out, k->profile, &k->units);
		break;
	case FMT_LATENCY:
		wr = o->human ? lp_latency__write_histograms(k->lat, out) :
				lp_latency__write_table(k->lat, out);
		break;
	case FMT_TRACE_EVENT:	/* written as the records came */
		break;
	case FMT_PPROF:
		wr = lp_pprof__write(k->tab, out);
		break;
	case FMT_OTLP:
		wr = lp_otlp__write(k->tab, &(struct lp_otlp_opts){ 0 }, out);
		break;
	case FMT_HEATMAP:
		wr = lp_heatmap__write_svg(k->heat, out, o->title);
		break;
	case FMT_HEATMAP_TSV:
		wr = lp_heatmap__write_tsv(k->heat, out);
		break;
	}
	if (wr < 0)
		lp_write_failed(outname);
	return lp_close_output(out, outname) < 0 ? 1 : 0;
}

/* The trace-event document closed (only when every input was whole). */
static int finish_trace(const struct options *o, struct sinks *k, int status)
{
	const char *outname = o->output ? o->output : "stdout";
	if (!status && lp_tracejson__finish(k->trace) < 0)
		lp_write_failed(outname);
	if (lp_close_output(k->tout, outname) < 0)
		status = 1;
	lp_tracejson__free(k->trace);
	return status;
}

/* What the user should know of the sums, then everything freed. */
static void sinks_fini(struct sinks *k)
{
	if (lp_folded_units__mixed(&k->units))
		lp_error("the inputs add nanoseconds (mode off or wall) to other counts: "
			 "the sums are neither");
	if (k->win && lp_window__dropped(k->win))
		lp_error("%llu samples older than the window when they came: left out",
			 (unsigned long long)lp_window__dropped(k->win));
	lp_latency__free(k->lat);
	lp_proftab__free(k->tab);
	lp_window__free(k->win);
	lp_heatmap__free(k->heat);
	lp_folded_agg__free(k->agg);
	lp_profile__free(k->profile);
	free(k->filt.event);
}

int main(int argc, char **argv)
{
	struct options o = { .input = LP_INPUT_AUTO, .format = FMT_FOLDED, .rows = LP_HEATMAP_ROWS };
	lp_init(argc, argv);
	lp_stop__read_through_first_sigint();
	parse_options(argc, argv, &o);

	/* The parts of the script's options that change reading; inputs are
	 * read as one, as the script reads them (a sample open at the end of
	 * one goes on in the next). */
	struct lp_carry carry = { 0 };
	struct lp_inline_coproc *a2l = o.inlines ? inline_resolver() : NULL;
	struct lp_input_opts io = {
		.perf = {
			.srcline = o.folded.srcline,
			.inlines = a2l ? lp_inline_coproc__resolver(a2l) : NULL,
			.context = o.context,
			.event_filter = o.event_filter ? o.event_filter : "",
		},
		.carry = &carry,
	};
	int npaths;
	char **paths = lp_input_paths(argc, argv, optind, &npaths);
	/* Open every input before writing anything. */
	struct lp_reader **readers = lp_open_inputs(paths, npaths, o.input, &io);
	if (!readers)
		return 1;

	struct sinks k;
	sinks_init(&k, &o);
	int status = 0;
	for (int i = 0; i < npaths && !status; i++) {
		/* The first event is the first of all inputs, as when the
		 * script reads them as one (a reader makes its perf script
		 * parser when its first line comes). */
		if (k.filt.event && !o.event_filter)
			io.perf.event_filter = k.filt.event;
		status = take_input(&o, &k, readers[i]) < 0;
		/* The keys point into this reader's dictionary. */
		lp_folded_agg__flush(k.agg, k.profile, 0);
		if (k.win)
			lp_window__flush(k.win);
		lp_reader__free(readers[i]);
		readers[i] = NULL;
	}
	lp_free_inputs(readers, npaths);
	lp_carry__fini(&carry);
	lp_inline_coproc__free(a2l);
	if (k.trace)
		status = finish_trace(&o, &k, status);
	else if (!status)
		status = write_result(&o, &k);
	sinks_fini(&k);
	return status;
}
