/* lp-symbolize - symbolize a stream recorded with `lp-record --raw` (or read
 * from perf.data by lp-cat): each user frame kept as an address in its
 * binary (with the binary's build-id) gets its function name from that file
 * now, as an ordinary user, while the binaries are still there.  A sample
 * that carries its copied user stack (perf record --call-graph dwarf) has
 * it unwound first, with the CFI of the files the stream's map records
 * name: lp-cat links no DWARF library, so the unwinding is done here.
 * Everything else passes through. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "stream/inputs.h"
#include "stream/resolve.h"
#include "stream/stream.h"
#include "debuginfo/addr2line.h"
#include "debuginfo/symbolize.h"
#include "debuginfo/unwind-stream.h"
#include "base/stop.h"
#include "base/util.h"

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-symbolize [-o FILE] [--inline] [--srcline] [--no-demangle] [FILE...]\n"
		"   or: lp-symbolize --addr2line\n"
		"\n"
		"Symbolizes the raw user frames of lp streams (lp-record --raw) from\n"
		"their binaries (FILE, or - for stdin, the default).\n"
		"\n"
		"  -o, --output FILE  write to FILE instead of stdout\n"
		"      --inline       inlined functions as frames of their own\n"
		"      --srcline      file:line of the frames\n"
		"      --no-demangle  C++ and Rust names as the symbol table spells them\n"
		"      --addr2line    answer lp-collapse --inline's questions on stdin\n"
		"  -h, --help         show this help\n"
		"      --version      show the version\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

/* --addr2line: lp-collapse --inline's questions (stream/resolve.h), which
 * a filter asks here so that it links no DWARF library, answered as
 * binutils' addr2line -i -f -s -C and nm would. */
struct a2l {
	struct lp_addr2line *a;
	struct lp_inline_entry *entries;
	size_t cap;
};

static int a2l_lookup(void *ctx, const char *module, uint64_t addr,
		      const struct lp_inline_entry **out)
{
	struct a2l *x = ctx;
	const struct lp_a2l_entry *e;
	int n = lp_addr2line__lookup(x->a, module, addr, &e);
	if (n > 0 && (size_t)n > x->cap) {
		x->cap = (size_t)n;
		x->entries = lp_reallocarray(x->entries, x->cap, sizeof(*x->entries));
	}
	for (int i = 0; i < n; i++)
		x->entries[i] = (struct lp_inline_entry){ e[i].func, e[i].loc };
	*out = x->entries;
	return n;
}

static int a2l_symbol(void *ctx, const char *module, const char *name, uint64_t *value)
{
	struct a2l *x = ctx;
	return lp_addr2line__symbol(x->a, module, name, value);
}

static int addr2line_server(void)
{
	struct a2l x = { lp_addr2line__new(), NULL, 0 };
	struct lp_inline_resolver res = { a2l_lookup, a2l_symbol, &x };
	int rc = lp_inline_resolver__serve(&res, stdin, stdout);
	lp_addr2line__free(x.a);
	free(x.entries);
	if (rc == -1)
		lp_write_failed("stdout");
	return rc < 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "inline", no_argument, NULL, 'I' },
		{ "srcline", no_argument, NULL, 'S' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "addr2line", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL;
	bool inlines = false, srclines = false, demangle = true, a2l = false;
	int c, status = 0;

	lp_init(argc, argv);
	lp_stop__read_through_first_sigint();
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'I': inlines = true; break;
		case 'S': srclines = true; break;
		case 'D': demangle = false; break;
		case 'A': a2l = true; break;
		case 'h': usage(stdout, 0); break;
		case 'V': lp_print_version();
		default: usage(stderr, 2);
		}
	}

	if (a2l) {
		if (optind < argc) {
			lp_error("unexpected argument '%s' (--addr2line reads stdin)", argv[optind]);
			usage(stderr, 2);
		}
		return addr2line_server();
	}

	int npaths;
	char **paths = lp_input_paths(argc, argv, optind, &npaths);
	struct lp_reader **readers = lp_open_inputs(paths, npaths, LP_INPUT_LP, NULL);
	if (!readers)
		return 1;

	FILE *out = lp_open_output(output);
	const char *outname = output ? output : "stdout";
	struct lp_writer *w = lp_writer__new(out);
	struct lp_dict *dict = lp_dict__new();
	struct lp_symbolizer *sym = lp_symbolizer__new(dict);
	lp_symbolizer__set_options(sym, inlines, srclines);
	lp_symbolizer__set_demangle(sym, demangle);
	struct lp_stream_unwinder *unw = lp_stream_unwinder__new();
	struct lp_maprec map;
	struct lp_attrs_buf attrs = { 0 };
	char *buf = NULL;
	size_t cap = 0;
	const char *why;

	for (int i = 0; i < npaths && !status; i++) {
		struct lp_record rec;
		int rc;

		while ((rc = lp_reader__next(readers[i], &rec)) > 0) {
			/* Definitions are written again, new ones, as samples
			 * refer to them. */
			if (rec.kind == LP_REC_FRAME || rec.kind == LP_REC_STACK)
				continue;
			/* Map records serve the copies, which are unwound
			 * here: neither is written on. */
			if (rec.kind == LP_REC_OTHER && lp_maprec__is(rec.line, rec.len)) {
				if (lp_maprec__parse(rec.line, rec.len, &map, &buf, &cap, &why) < 0) {
					lp_reader__error(readers[i], "%s", why);
					status = 1;
					break;
				}
				lp_stream_unwinder__map(unw, &map);
				continue;
			}
			if (rec.kind == LP_REC_SAMPLE &&
			    lp_stream_unwinder__sample(unw, lp_reader__dict(readers[i]), &rec.sample,
							&attrs, &why) < 0) {
				lp_reader__error(readers[i], "sample: %s", why);
				status = 1;
				break;
			}
			if (rec.kind == LP_REC_SAMPLE && rec.sample.stack)
				rec.sample.stack = lp_symbolizer__restack(sym, rec.sample.stack);
			if ((rec.kind == LP_REC_SAMPLE ? lp_writer__sample(w, &rec.sample)
						       : lp_writer__record(w, &rec)) < 0)
				lp_write_failed(outname);
		}
		if (rc < 0)
			status = 1;
	}
	/* Lost data is data: the copies not unwound whole, as lp-record
	 * counts its own. */
	struct lp_stream_unwind_stats st;
	lp_stream_unwinder__stats(unw, &st);
	if (!status && (st.failed || st.truncated)) {
		struct lp_record rec = { .kind = LP_REC_LOST };

		rec.lost = (struct lp_lost){ LP_TIME_NONE, "unwind", st.failed };
		if (st.failed && lp_writer__record(w, &rec) < 0)
			lp_write_failed(outname);
		rec.lost = (struct lp_lost){ LP_TIME_NONE, "truncated", st.truncated };
		if (st.truncated && lp_writer__record(w, &rec) < 0)
			lp_write_failed(outname);
		lp_error("%llu of %llu copied user stacks not unwound whole: %llu cut where the "
			 "copy ended, %llu stopped at code it had no CFI for%s%s%s",
			 (unsigned long long)(st.failed + st.truncated), (unsigned long long)st.samples,
			 (unsigned long long)st.truncated, (unsigned long long)st.failed,
			 st.failed ? " (last: " : "", st.failed ? st.why : "", st.failed ? ")" : "");
	}
	lp_stream_unwinder__free(unw);
	lp_attrs_buf__free(&attrs);
	free(buf);
	lp_free_inputs(readers, npaths);
	lp_writer__free(w);
	lp_symbolizer__free(sym);
	lp_dict__free(dict);
	if (lp_close_output(out, outname) < 0)
		status = 1;
	return status;
}
