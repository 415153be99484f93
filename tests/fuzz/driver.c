/* driver.c - runs a fuzz target's LLVMFuzzerTestOneInput over files named
 * on the command line, without libFuzzer: the suite's regression run over
 * tests/fuzz/corpus.  Exits 0 when every input passed (a failing one
 * aborts, naming itself first). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		char *buf = NULL;
		size_t len = 0, cap = 0, n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		do {
			if (cap - len < 65536)
				buf = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!buf)
				abort();
			n = fread(buf + len, 1, cap - len, f);
			len += n;
		} while (n > 0);
		fclose(f);
		fprintf(stderr, "%s\n", argv[i]);
		LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		free(buf);
	}
	return 0;
}
