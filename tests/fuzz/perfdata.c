/* perfdata.c - a fuzz target for the perf.data reader (lib/stream/foreign/
 * perfdata.c): reader.c's target and oracle (what the reader accepts, the
 * writer writes as a stream that reads back the same; no input crashes,
 * hangs or reads past its end), each input read as reader.c's auto format
 * reads it, by its content.  Its corpus (tests/fuzz/corpus/perfdata) is
 * small perf record files, their feature sections but EVENT_DESC and
 * BUILD_ID left out: fp, dwarf (registers and stack copies), two events,
 * --buildid-mmap, lost samples, a pipe's (perf record -o -), and perf
 * record -z -m 1's compressed records (zstd: a record split between two;
 * EVENT_DESC and COMPRESSED kept, tests/helpers/perfdata-zstd keep 12 27). */
#define LLVMFuzzerTestOneInput lp_fuzz_reader
#include "reader.c"
#undef LLVMFuzzerTestOneInput

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *in = malloc(size + 1);

	if (!in)
		abort();
	in[0] = 0;	/* reader.c's first byte: the format, auto */
	memcpy(in + 1, data, size);
	lp_fuzz_reader(in, size + 1);
	free(in);
	return 0;
}
