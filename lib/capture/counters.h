/* counters.h - what lp's BPF programs counted (bpf/counters.bpf.h: every
 * counter in one per-CPU array entry), read in one lookup. */
#ifndef LP_COUNTERS_H
#define LP_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

/* The n counters of map fd, each summed over the CPUs, into sums: 0, or -1
 * (sums zero) when they cannot be read. */
int lp_counters__read(int fd, size_t n, uint64_t *sums);

/* The n counters of map fd back to zero on every CPU. */
void lp_counters__zero(int fd, size_t n);

#endif
