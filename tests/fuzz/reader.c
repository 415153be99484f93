/* reader.c - a fuzz target for the stream reader (lp streams, perf script,
 * folded stacks, and the other profilers' formats of lib/stream/foreign)
 * and writer.  Its oracle: whatever the reader accepts, the
 * writer turns into a stream that reads back to the same stream, byte for
 * byte; and no input crashes, hangs or corrupts memory (under ASan and
 * UBSan).  The first byte picks the format: formats[byte % 12].
 *
 * Built two ways: with libFuzzer (make fuzz), and with tests/fuzz/driver.c
 * as a plain program the suite runs over the seeds and every input a
 * fuzzer once found (tests/fuzz/corpus). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "stream/stream.h"
#include "stream/stackcopy.h"

/* The bytes in a file the reader can open by name. */
static int as_file(const uint8_t *data, size_t size, char *path, size_t pathsize)
{
	int fd = memfd_create("lp-fuzz", 0);

	if (fd < 0)
		return -1;
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	snprintf(path, pathsize, "/proc/self/fd/%d", fd);
	return fd;
}

/* A copied user stack and its map records (stackcopy.h), as lp-symbolize
 * reads them: decoded or refused, never read past their text.  A map
 * record made again from what was read reads back the same. */
static void stackcopy(const struct lp_record *rec)
{
	static struct lp_stackcopy c;
	static char *buf, *line, *buf2;
	static size_t cap, line_cap, cap2;
	struct lp_maprec m, m2;
	const char *why;

	if (rec->kind == LP_REC_SAMPLE && lp_stackcopy__read(&rec->sample.attrs, &c, &why) == 1) {
		volatile unsigned char sum = 0;
		for (size_t i = 0; i < c.len; i++)
			sum ^= c.stack[i];
	}
	if (rec->kind != LP_REC_OTHER || !lp_maprec__is(rec->line, rec->len) ||
	    lp_maprec__parse(rec->line, rec->len, &m, &buf, &cap, &why) < 0)
		return;
	size_t n = lp_maprec__format(&m, &line, &line_cap);
	if (lp_maprec__parse(line, n, &m2, &buf2, &cap2, &why) < 0 || m2.start != m.start ||
	    m2.end != m.end || m2.bias != m.bias || m2.pid != m.pid || m2.time_ns != m.time_ns ||
	    strcmp(m2.module, m.module) || strcmp(m2.build_id, m.build_id)) {
		fprintf(stderr, "lp-fuzz: a map record made again reads back otherwise: %.*s\n",
			(int)rec->len, rec->line);
		abort();
	}
}

/* Reads path, writes every record to a memory buffer.  0 when the input
 * read to its end; -1 when the reader refused it (which is fine). */
static int copy(const char *path, enum lp_input_format format, char **out, size_t *outlen)
{
	struct lp_reader *r = lp_reader__open(path, format);
	FILE *f = open_memstream(out, outlen);
	struct lp_writer *w = f ? lp_writer__new(f) : NULL;
	struct lp_record rec;
	int st = -1;

	if (!r || !w)
		abort();
	while ((st = lp_reader__next(r, &rec)) == 1) {
		stackcopy(&rec);
		if (lp_writer__record(w, &rec) < 0)
			abort();
	}
	lp_writer__free(w);
	fclose(f);
	lp_reader__free(r);
	return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum lp_input_format formats[] = {
		LP_INPUT_AUTO, LP_INPUT_LP, LP_INPUT_PERF, LP_INPUT_FOLDED,
		LP_INPUT_AGGREGATION, LP_INPUT_PPROF, LP_INPUT_CPUPROFILE, LP_INPUT_SPEEDSCOPE,
		LP_INPUT_CHROMETRACE, LP_INPUT_GECKO, LP_INPUT_NFLX, LP_INPUT_PERFDATA,
	};
	char path[64], *first = NULL, *second = NULL;
	size_t firstlen = 0, secondlen = 0;
	int fd;

	if (size < 1)
		return 0;
	fd = as_file(data + 1, size - 1, path, sizeof(path));
	if (fd < 0)
		return 0;
	if (copy(path, formats[data[0] % (sizeof(formats) / sizeof(formats[0]))], &first,
		 &firstlen) == 0) {
		int fd2 = as_file((const uint8_t *)first, firstlen, path, sizeof(path));

		if (fd2 < 0)
			abort();
		if (copy(path, LP_INPUT_LP, &second, &secondlen) != 0 || firstlen != secondlen ||
		    memcmp(first, second, firstlen) != 0) {
			fprintf(stderr, "lp-fuzz: the stream written does not read back the same:\n"
				"--- first\n%.*s--- second\n%.*s---\n", (int)firstlen, first,
				(int)secondlen, second);
			abort();
		}
		close(fd2);
	}
	free(first);
	free(second);
	close(fd);
	return 0;
}
