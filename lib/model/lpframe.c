/* lpframe.c - see lpframe.h.  The names were read from the stacks lp-record
 * and perf record took of a program that lp-trace probed (an int3
 * emulated probe, a single-stepped one, a uretprobe), on kernel 6.18, and
 * from its /proc/kallsyms; functions that kernel inlines (do_int3,
 * handle_swbp...) are listed for the kernels that do not. */
#include "model/lpframe.h"

#include <string.h>

enum match {
	EXACT,		/* the name, or the name and a compiler suffix (".isra.0", ".cold") */
	PREFIX,
	SUBSTRING,
};

/* Kernel symbols that run on a profiled thread only because lp probed or
 * sampled it.  Generic code they pass through (irqentry_exit_to_user_mode,
 * do_syscall_64, ktime_get_mono_fast_ns, copy_from_user_nofault) is not
 * lp's by itself: a stack holding it under one of these is lp's anyway.
 * lp cannot tell its own uprobes from another tracer's (bpftrace's): they
 * run the same code and are marked too. */
static const struct {
	const char *name;
	enum match match;
} lp_symbols[] = {
	/* The breakpoint trap: a uprobe is an int3 written over the probed
	 * instruction.  A debugger's breakpoint or the kernel's own text
	 * patching traps here too, but not under a profiled program. */
	{ "asm_exc_int3", EXACT },
	{ "exc_int3", EXACT },
	{ "do_int3", EXACT },
	{ "do_int3_user", EXACT },
	{ "handle_swbp", EXACT },
	/* The single-step trap after a probed instruction that cannot be
	 * emulated (endbr64, mov, lea...) ran out of line: ten times the cost
	 * of an emulated probe.  A debugger's single step would trap here
	 * too; lp's own ptrace snapshots never single-step. */
	{ "asm_exc_debug", EXACT },
	{ "exc_debug", EXACT },
	{ "exc_debug_user", EXACT },
	{ "handle_singlestep", EXACT },
	{ "pre_ssout", EXACT },
	/* The rest of uprobe handling (inlined into uprobe_notify_resume on
	 * 6.18): running the consumers, the return trampoline. */
	{ "handler_chain", EXACT },
	{ "handle_trampoline", EXACT },
	/* All of the uprobe machinery: uprobe_notify_resume,
	 * uprobe_dispatcher, __uprobe_perf_func, uprobe_handle_trampoline,
	 * find_active_uprobe_rcu, arch_uprobe_*, uprobe_mmap (a mapping of a
	 * probed file gets its breakpoints), the uprobe_multi links, and the
	 * 6.18 system call of optimised probes, __x64_sys_uprobe. */
	{ "uprobe", SUBSTRING },
	/* uretprobe_dispatcher, arch_uretprobe_hijack_return_addr (the entry
	 * of a function with a return probe), and the return trampoline's
	 * system call, __do_sys_uretprobe and __x64_sys_uretprobe. */
	{ "uretprobe", SUBSTRING },
	/* The out-of-line slots a probed instruction is single-stepped in. */
	{ "xol_", PREFIX },
	/* Uprobe internals named otherwise (arch/x86/kernel/uprobes.c,
	 * kernel/events/uprobes.c), seen on every hit: preparing and
	 * finishing the step out of line (copy_to_page fills the slot),
	 * emulating the probed push or branch, the return instances. */
	{ "default_pre_xol_op", EXACT },
	{ "default_post_xol_op", EXACT },
	{ "default_abort_op", EXACT },
	{ "branch_emulate_op", EXACT },
	{ "branch_post_xol_op", EXACT },
	{ "push_emulate_op", EXACT },
	{ "emulate_push_stack", EXACT },
	{ "copy_to_page", EXACT },
	{ "filter_chain", EXACT },
	{ "alloc_utask", EXACT },
	{ "free_ret_instance", EXACT },
	{ "ri_timer", EXACT },
	{ "hprobe_", PREFIX },
	{ "is_swbp_insn", EXACT },
	{ "is_trap_insn", EXACT },
	{ "should_optimize", EXACT },
	/* What runs lp's BPF programs on tracepoints: raw ones
	 * (lp-trace's syscall: probes, lp-record's scheduler events) through
	 * __bpf_trace_EVENT and bpf_trace_runN, perf ones (tp: probes) through
	 * perf_trace_run_bpf_submit and trace_call_bpf. */
	{ "__bpf_trace_", PREFIX },
	{ "bpf_trace_run", PREFIX },
	{ "perf_trace_run_bpf_submit", EXACT },
	{ "trace_call_bpf", EXACT },
	/* The sampling interrupt's own path (lp-record's cpu-clock timer and
	 * its BPF program), seen by a second profiler sampling with NMIs. */
	{ "perf_swevent_hrtimer", EXACT },
	{ "perf_event_overflow", EXACT },
	{ "__perf_event_overflow", EXACT },
	{ "bpf_overflow_handler", EXACT },
};

static bool symbol_matches(const char *sym, const char *name, enum match m)
{
	size_t n = strlen(name);

	switch (m) {
	case EXACT:
		return !strncmp(sym, name, n) && (!sym[n] || sym[n] == '.');
	case PREFIX:
		return !strncmp(sym, name, n);
	case SUBSTRING:
		return strstr(sym, name) != NULL;
	}
	return false;
}

/* "bpf_prog_TAG_lp_NAME": a BPF program of lp's (all are named lp_*; the
 * kernel names a JITed program bpf_prog_, its 16-hex-digit tag, _ and its
 * name).  Other programs (a firewall's, systemd's) are the system's cost. */
static bool lp_bpf_program(const char *s)
{
	static const char pre[] = "bpf_prog_";

	if (strncmp(s, pre, sizeof(pre) - 1))
		return false;
	s += sizeof(pre) - 1;
	size_t hex = strspn(s, "0123456789abcdef");
	return hex && !strncmp(s + hex, "_lp_", 4);
}

bool lp_frame__is_lps(char kind, const char *module, const char *symbol)
{
	module = module ? module : "";
	symbol = symbol ? symbol : "";
	/* perf names these modules; lp-record names lp's programs' module
	 * "[bpf]", with the program as the symbol. */
	if (!strcmp(module, "[uprobes]") || lp_bpf_program(module))
		return true;
	if (kind != LP_FRAME_KERNEL || !symbol[0])
		return false;
	if (lp_bpf_program(symbol))
		return true;
	for (size_t i = 0; i < sizeof(lp_symbols) / sizeof(lp_symbols[0]); i++)
		if (symbol_matches(symbol, lp_symbols[i].name, lp_symbols[i].match))
			return true;
	return false;
}

ssize_t lp_stack__first_lp(const struct lp_stack *st)
{
	for (size_t i = 0; st && i < st->nframes; i++)
		if (st->frames[i]->lp)
			return (ssize_t)i;
	return -1;
}

bool lp_stack__has_lp(const struct lp_stack *st)
{
	return lp_stack__first_lp(st) >= 0;
}
