/* counters.bpf.h - how lp's BPF programs count what user space reports
 * (losses, hits): every counter in one per-CPU array entry, which user
 * space reads in one lookup (lib/capture/counters.h).  The includer
 * defines LP_COUNTERS_N, how many. */
#ifndef LP_COUNTERS_BPF_H
#define LP_COUNTERS_BPF_H

struct lp_counts {
	__u64 n[LP_COUNTERS_N];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_counts);
} lp_counters SEC(".maps");

static __always_inline void count(int what)
{
	__u32 k = 0;
	struct lp_counts *c = bpf_map_lookup_elem(&lp_counters, &k);

	if (c && what >= 0 && what < LP_COUNTERS_N)
		c->n[what]++;
}

#endif
