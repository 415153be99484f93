/* kfeatures.c - see kfeatures.h. */
#include "capture/kfeatures.h"

#include "base/util.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

/* How a feature is found in the kernel's BTF: an enumerator of an enum,
 * a type of a kind, or a member of a struct; or by trying it (WORKS). */
enum how { ENUMERATOR, TYPE, MEMBER, FUNC, WORKS };

static const struct kf {
	const char *name, *since;
	enum how how;
	const char *in, *what;	/* the enum, struct or kind's type; the name sought */
	const char *use;	/* what lp uses it for */
	const char *without;	/* what lp does without it */
} kfs[LP_KF_N] = {
	[LP_KF_BTF] = { "btf", "5.4", TYPE, NULL, "task_struct",
		"CO-RE: one build reads each kernel's structures",
		"lp-record and lp-trace refuse to start" },
	[LP_KF_RINGBUF] = { "ringbuf", "5.8", ENUMERATOR, "bpf_map_type", "BPF_MAP_TYPE_RINGBUF",
		"samples and spans reach lp in order",
		"lp-record and lp-trace refuse to start" },
	[LP_KF_TP_BTF] = { "tp_btf", "5.5", ENUMERATOR, "bpf_attach_type", "BPF_TRACE_RAW_TP",
		"following forks, execs and exits",
		"lp-record and lp-trace refuse to start" },
	[LP_KF_TASK_ITER] = { "task_iter", "5.8", TYPE, NULL, "bpf_iter__task",
		"threads already blocked (off/wall), pending returns (--snapshot)",
		"lp-record off/wall and --snapshot refuse" },
	[LP_KF_COOKIE] = { "cookie", "5.15", ENUMERATOR, "bpf_func_id", "BPF_FUNC_get_attach_cookie",
		"which probe a hit is",
		"lp-trace refuses to start" },
	[LP_KF_TASK_REGS] = { "task_regs", "5.15", ENUMERATOR, "bpf_func_id", "BPF_FUNC_task_pt_regs",
		"a sampled thread's user registers (DWARF, --inside)",
		"lp-record refuses to start" },
	[LP_KF_LOOP] = { "bpf_loop", "5.17", ENUMERATOR, "bpf_func_id", "BPF_FUNC_loop",
		"stack copies, Python frames and names",
		"lp-record refuses; lp-trace refuses python: probes" },
	[LP_KF_COPY_TASK] = { "copy_task", "6.0", ENUMERATOR, "bpf_func_id",
		"BPF_FUNC_copy_from_user_task",
		"reading another thread's stack (off/wall, --inside)",
		"lp-record refuses to start" },
	[LP_KF_UPROBE_MULTI] = { "uprobe_multi", "6.6", ENUMERATOR, "bpf_attach_type",
		"BPF_TRACE_UPROBE_MULTI",
		"probes of files only the target maps: one link each, quick to detach",
		"perf-event uprobes: each detaches after a grace period of its own" },
	[LP_KF_URET_SYSCALL] = { "uret_syscall", "6.11", FUNC, NULL, "__x64_sys_uretprobe",
		"a uretprobe returns through a system call, not a second trap",
		"a second trap: lp measures what a return costs either way" },
	[LP_KF_RI_POOL] = { "ri_pool", "6.14", MEMBER, "uprobe_task", "ri_pool",
		"a sample taken while a uretprobe returns gets its caller back",
		"such samples end in [uprobes], the summary counts them" },
	[LP_KF_UPROBE_SESSION] = { "uprobe_session", "6.13", ENUMERATOR, "bpf_attach_type",
		"BPF_TRACE_UPROBE_SESSION",
		"a uretprobe armed per call: returns of a program that calls dlopen cost a uretprobe until it loads a library that can throw",
		"those returns are probed at their instructions (often single-stepped: ~10x a uretprobe)" },
	/* Perf events of PERF_TYPE_BREAKPOINT are older than lp's oldest
	 * kernel, but a hypervisor may not pass debug registers on: tried. */
	[LP_KF_HW_WATCH] = { "hw_watch", "2.6.33", WORKS, NULL, NULL,
		"python:NAME's returns watched (a hardware watchpoint): only NAME's calls trap",
		"every Python call traps at the eval loop's breakpoints" },
};

static volatile unsigned short watched;

/* A watchpoint on a variable of this thread's fires as it is read. */
static bool watch_fires(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT, .size = sizeof(a),
		.bp_type = HW_BREAKPOINT_RW, .bp_addr = (unsigned long)&watched,
		.bp_len = HW_BREAKPOINT_LEN_2, .sample_period = 1,
		.exclude_kernel = 1, .exclude_hv = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	unsigned s = 0;
	for (int i = 0; i < 3; i++)
		s += watched;
	(void)s;
	unsigned long long n = 0;
	bool fired = read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n) && n == 3;
	close(fd);
	return fired;
}

static bool probed, has[LP_KF_N], hidden[LP_KF_N];

/* Whether the type tname of kind (an enum, a struct) has an enumerator
 * or a member called name. */
static bool has_name(const struct btf *btf, const char *tname, int kind, const char *name)
{
	int id = btf__find_by_name_kind(btf, tname, kind);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	for (int i = 0; t && i < btf_vlen(t); i++) {
		__u32 off = kind == BTF_KIND_ENUM ? btf_enum(t)[i].name_off : btf_members(t)[i].name_off;
		if (!strcmp(btf__name_by_offset(btf, off), name))
			return true;
	}
	return false;
}

/* Names hidden by LP_HIDE_FEATURES, read once; the first that names no
 * feature is kept for lp_kfeatures__check_hidden to report. */
static bool hidden_read;
static char unknown[64];

static void read_hidden(void)
{
	const char *env = getenv("LP_HIDE_FEATURES");
	if (hidden_read || !env)
		return;
	hidden_read = true;
	char *copy = lp_strdup(env), *save = NULL;
	for (char *w = strtok_r(copy, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
		int f = 0;
		while (f < LP_KF_N && strcmp(w, kfs[f].name))
			f++;
		if (f < LP_KF_N)
			hidden[f] = true;
		else if (!unknown[0])
			snprintf(unknown, sizeof(unknown), "%s", w);
	}
	free(copy);
}

static void probe(void)
{
	if (probed)
		return;
	probed = true;
	read_hidden();
	struct btf *btf = btf__load_vmlinux_btf();
	if (!btf || libbpf_get_error(btf))
		return;		/* without BTF nothing can be told, nor loaded */
	for (int f = 0; f < LP_KF_N; f++) {
		const struct kf *k = &kfs[f];
		switch (k->how) {
		case ENUMERATOR:
			has[f] = has_name(btf, k->in, BTF_KIND_ENUM, k->what);
			break;
		case TYPE:
			has[f] = btf__find_by_name_kind(btf, k->what, BTF_KIND_STRUCT) > 0;
			break;
		case MEMBER:
			has[f] = has_name(btf, k->in, BTF_KIND_STRUCT, k->what);
			break;
		case FUNC:
			has[f] = btf__find_by_name_kind(btf, k->what, BTF_KIND_FUNC) > 0;
			break;
		case WORKS:
			has[f] = f == LP_KF_HW_WATCH && watch_fires();
			break;
		}
	}
	btf__free(btf);
}

bool lp_kfeature__has(enum lp_kfeature f)
{
	probe();
	return has[f] && !hidden[f];
}

const char *lp_kfeature__name(enum lp_kfeature f)
{
	return kfs[f].name;
}

const char *lp_kfeature__since(enum lp_kfeature f)
{
	return kfs[f].since;
}

const char *lp_kfeature__what(enum lp_kfeature f)
{
	static char buf[LP_KF_N][96];
	snprintf(buf[f], sizeof(buf[f]), "the kernel's %s (Linux %s)%s", kfs[f].name,
		 kfs[f].since, has[f] && hidden[f] ? ", hidden by LP_HIDE_FEATURES" : "");
	return buf[f];
}

int lp_kfeatures__check_hidden(void)
{
	read_hidden();
	if (!unknown[0])
		return 0;
	lp_error("LP_HIDE_FEATURES: no kernel feature '%s' (lp-trace --features lists them)", unknown);
	return -1;
}

int lp_kfeatures__require(const enum lp_kfeature *need, size_t n, const char *doing,
			  const char *prog)
{
	if (lp_kfeatures__check_hidden() < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!lp_kfeature__has(need[i])) {
			lp_error("cannot %s on this kernel: %s needs %s (%s --features)", doing, prog,
				 lp_kfeature__what(need[i]), prog);
			return -1;
		}
	return 0;
}

int lp_kfeatures__print(FILE *out)
{
	struct utsname u;
	probe();
	if (uname(&u) == 0)
		fprintf(out, "kernel %s %s\n", u.release, u.machine);
	fprintf(out, "%-13s %-6s %-6s %s\n", "feature", "since", "here", "what lp uses it for.  Without it");
	for (int f = 0; f < LP_KF_N; f++) {
		const struct kf *k = &kfs[f];
		const char *here = has[f] ? hidden[f] ? "hidden" : "yes" : "no";
		fprintf(out, "%-13s %-6s %-6s %s.  Without: %s.\n", k->name, k->since, here, k->use,
			k->without);
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
