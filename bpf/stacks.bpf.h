/* stacks.bpf.h - the map of threads' open calls (struct lp_trace_stack,
 * bpf/trace.h): lp-trace's "stacks" and "ustacks" (trace.bpf.c), and
 * lp-record's "lp_gate" (profile.bpf.c), which user space makes the very
 * map of a gate tracer's "stacks" (bpf_map__reuse_fd: one definition, so
 * the two cannot differ).  Key: a thread id, or a goroutine | LP_KEY_G.
 * Not preallocated: a stack is ~6 KiB and most targets have few threads. */
#ifndef LP_STACKS_BPF_H
#define LP_STACKS_BPF_H

#define LP_OPEN_CALLS_MAP(name)					\
	struct {						\
		__uint(type, BPF_MAP_TYPE_HASH);		\
		__uint(max_entries, 16384);			\
		__uint(map_flags, BPF_F_NO_PREALLOC);		\
		__type(key, __u64);				\
		__type(value, struct lp_trace_stack);		\
	} name SEC(".maps")

#endif
