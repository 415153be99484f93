/* inputs.c - see inputs.h. */
#include "stream/inputs.h"

#include <stdlib.h>

#include "base/util.h"

char **lp_input_paths(int argc, char **argv, int first, int *n)
{
	static char *stdin_only[] = { "-" };

	if (first < argc) {
		*n = argc - first;
		return argv + first;
	}
	*n = 1;
	return stdin_only;
}

struct lp_reader **lp_open_inputs(char **paths, int n, enum lp_input_format fmt,
				  const struct lp_input_opts *opts)
{
	struct lp_reader **readers = lp_calloc(n, sizeof(*readers));

	for (int i = 0; i < n; i++)
		if (!(readers[i] = lp_reader__open_opts(paths[i], fmt, opts))) {
			lp_free_inputs(readers, i);
			return NULL;
		}
	return readers;
}

void lp_free_inputs(struct lp_reader **readers, int n)
{
	if (!readers)
		return;
	for (int i = 0; i < n; i++)
		lp_reader__free(readers[i]);
	free(readers);
}
