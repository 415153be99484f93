/* counters.c - see counters.h. */
#include "capture/counters.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* Every CPU's values of the one entry: ncpus rows of n (a per-CPU value
 * is padded to 8 bytes, which n counters of 8 bytes are). */
static uint64_t *read_all(int fd, size_t n, int *ncpus)
{
	*ncpus = libbpf_num_possible_cpus();
	if (*ncpus <= 0)
		return NULL;
	uint64_t *vals = lp_calloc((size_t)*ncpus * n, sizeof(*vals));
	uint32_t key = 0;
	if (bpf_map_lookup_elem(fd, &key, vals) == 0)
		return vals;
	free(vals);
	return NULL;
}

int lp_counters__read(int fd, size_t n, uint64_t *sums)
{
	int ncpus;
	uint64_t *vals = read_all(fd, n, &ncpus);
	memset(sums, 0, n * sizeof(*sums));
	if (!vals)
		return -1;
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (size_t c = 0; c < n; c++)
			sums[c] += vals[(size_t)cpu * n + c];
	free(vals);
	return 0;
}

void lp_counters__zero(int fd, size_t n)
{
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return;
	uint64_t *zero = lp_calloc((size_t)ncpus * n, sizeof(*zero));
	uint32_t key = 0;
	bpf_map_update_elem(fd, &key, zero, BPF_ANY);
	free(zero);
}
