/* lp-cat - read lp streams, perf script output or folded stacks, and write
 * them as one lp stream: the converter that lets perf users join their
 * recordings with lp-trace spans, and a checker for streams (--check). */
#include "stream/inputs.h"
#include "stream/stream.h"
#include "base/stop.h"
#include "base/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct options {
	const char *output;
	enum lp_input_format format;
	int check;
};

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-cat [-o FILE] [--input-format FORMAT] [--check] [FILE...]\n"
		"\n"
		"Reads lp streams, `perf script` output, folded stacks and other profilers'\n"
		"files (pprof, .cpuprofile, speedscope, bpftrace and DTrace stack counts,\n"
		"Austin, ...: lp-stream(5)) from FILE, or - for stdin, the default, and\n"
		"writes one lp stream.\n"
		"\n"
		"  -o, --output FILE     write to FILE instead of stdout\n"
		"  -f, --input-format F  force the input format (default auto: by content)\n"
		"  -c, --check           only read and validate; print nothing on success\n"
		"  -h, --help            show this help\n"
		"      --version         show the version\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "input-format", required_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "o:f:ch", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'f':
			o->format = lp_option_input_format(optarg);
			break;
		case 'c': o->check = 1; break;
		case 'h': usage(stdout, 0); break;
		case 'V': lp_print_version(); break;
		default: usage(stderr, 2);
		}
	}
}

/* Foreign inputs have no header: give them one, so the output is a stream
 * from its first line. */
static int write_foreign_header(struct lp_writer *w)
{
	static const char attrs[] = "producer=lp-cat";
	struct lp_header h = { LP_STREAM_VERSION, { attrs, sizeof(attrs) - 1 } };
	return lp_writer__header(w, &h);
}

int main(int argc, char **argv)
{
	struct options o = { .format = LP_INPUT_AUTO };
	lp_init(argc, argv);
	lp_stop__read_through_first_sigint();
	parse_options(argc, argv, &o);

	int npaths;
	char **paths = lp_input_paths(argc, argv, optind, &npaths);
	struct lp_reader **readers = lp_open_inputs(paths, npaths, o.format, NULL);
	if (!readers)
		return 1;

	FILE *out = o.check ? NULL : lp_open_output(o.output);
	struct lp_writer *w = out ? lp_writer__new(out) : NULL;
	const char *outname = o.output ? o.output : "stdout";
	int status = 0;
	for (int i = 0; i < npaths && !status; i++) {
		struct lp_record rec;
		int rc, first = 1;
		while ((rc = lp_reader__next(readers[i], &rec)) > 0) {
			if (!w)
				continue;
			if (first && rec.kind != LP_REC_HEADER &&
			    lp_reader__format(readers[i]) != LP_INPUT_LP &&
			    write_foreign_header(w) < 0)
				lp_write_failed(outname);
			first = 0;
			if (lp_writer__record(w, &rec) < 0)
				lp_write_failed(outname);
		}
		if (rc < 0)
			status = 1;
	}
	lp_free_inputs(readers, npaths);
	lp_writer__free(w);
	if (out && lp_close_output(out, outname) < 0)
		status = 1;
	return status;
}
