/* fuzz-flags: -rss_limit_mb=4096 */
/* join.c - a fuzz target for lp-join: two streams from one input (split at
 * its first 0xff byte, the first byte choosing --all-spans and a probe
 * filter), joined.  Its oracle: a join that reads both inputs through
 * writes a stream the reader reads back whole, with exactly as many
 * samples as came in (lp-join never drops one) and as the stats count;
 * and after bad input in files, nothing left behind (threads, memory). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analysis/join.h"
#include "stream/stream.h"

static int memfile(const void *data, size_t size, char *path, size_t pathsize)
{
	int fd = memfd_create("lp-fuzz", 0);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, pathsize, "/proc/self/fd/%d", fd);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *body = data + 1, *cut = memchr(body, 0xff, size - 1);
	size_t nsamples = cut ? (size_t)(cut - body) : (size - 1) / 2;
	size_t spans_off = cut ? nsamples + 1 : nsamples;
	char samples[64], spans[64], out[64];
	int fs = memfile(body, nsamples, samples, sizeof(samples));
	int fp = memfile(body + spans_off, size - 1 - spans_off, spans, sizeof(spans));
	int fo = memfile(NULL, 0, out, sizeof(out));
	static const char *const probe[] = { "B" };
	struct lp_join_opts o = {
		.max_delay_ns = (data[0] & 4) ? 1000 : 1000000000,
		.all_spans = data[0] & 1,
		.probes = (data[0] & 2) ? probe : NULL,
		.nprobes = (data[0] & 2) ? 1 : 0,
		.max_held = (data[0] & 8) ? 4 : 1 << 20,
		.samples_format = LP_INPUT_AUTO,
		.spans_format = LP_INPUT_LP,
		.output = out,
	};
	struct lp_join_stats st = { 0 };
	if (lp_join__run(samples, spans, &o, &st) == 0) {
		struct lp_reader *r = lp_reader__open(out, LP_INPUT_LP);
		struct lp_record rec;
		uint64_t n = 0;
		int rc;
		if (!r)
			abort();
		while ((rc = lp_reader__next(r, &rec)) == 1)
			n += rec.kind == LP_REC_SAMPLE;
		if (rc != 0 || n != st.samples) {
			fprintf(stderr, "lp-fuzz: join wrote %llu samples of %llu (read: %d)\n",
				(unsigned long long)n, (unsigned long long)st.samples, rc);
			abort();
		}
		lp_reader__free(r);
	}
	close(fs);
	close(fp);
	close(fo);
	return 0;
}
