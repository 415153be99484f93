/* tracer-gate.c - returns armed per call while no library loaded can
 * throw (bpf/trace.bpf.c, lp_session; lib/capture/trace/dlgate.h): a
 * gated function probe's uretprobe, until a target loads a library that
 * can throw, and then its return instructions probed instead. */
#include "capture/trace/tracer-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/kfeatures.h"
#include "capture/trace/dlgate.h"
#include "trace.skel.h"
#include "base/util.h"

static void dl_switch(struct lp_tracer *t, pid_t pid, const char *why);

/* Whether what target pid has loaded already lets its calls have
 * uretprobes (read once, lp_dl watching already): a process running
 * since before lp-trace may have loaded a plugin that throws, and then
 * no call of any target gets one (the gate is one for all).  A command
 * lp-trace has forked and not yet exec'd (its image is lp-trace's) has
 * loaded nothing: its dynamic linker's two notices as it loads what the
 * program links (before its first instruction) are let through. */
static bool first_check(struct lp_tracer *t, pid_t pid)
{
	for (size_t i = 0; i < t->ndl_read; i++)
		if (t->dl_read[i] == pid)
			return !t->dl_insn;
	t->dl_read = lp_reallocarray(t->dl_read, t->ndl_read + 1, sizeof(*t->dl_read));
	t->dl_read[t->ndl_read++] = pid;
	char self[PATH_MAX], exe[PATH_MAX], link[64];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t a = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ssize_t b = readlink(link, exe, sizeof(exe) - 1);
	uint64_t gen = t->skel->bss->dl_gen;
	if (a > 0 && a == b && !memcmp(self, exe, (size_t)a)) {
		if (gen == t->skel->bss->dl_ok)
			t->skel->bss->dl_ok = gen + 2;
		return true;
	}
	if (!t->dlgate)
		t->dlgate = lp_dlgate__new();
	pid_t who = 0;
	char why[320];
	lp_dlgate__dirty(t->dlgate, pid);
	int r = lp_dlgate__check(t->dlgate, &pid, 1, &who, why, sizeof(why));
	if (r > 0) {
		dl_switch(t, pid, why);
		return false;
	}
	if (t->skel->bss->dl_gen == gen && t->ngated == 0)
		t->skel->bss->dl_ok = gen;
	return true;
}

/* Whether function probe pt, whose returns would be probed at their
 * instructions only because its program may load a library that throws
 * (pt->dl_gate), can have a uretprobe armed per call instead: uprobe
 * sessions loaded, the probe attached once for every process (a
 * uprobe-multi link), a target whose loads lp_dl sees. */
bool lp_tracer_can_gate(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid)
{
	/* Not once a library that can throw was loaded (dl_switch). */
	return pt->cfg.kind == LP_PROBE_ENTRY && pt->dl_gate && pid > 0 && !t->dl_insn &&
	       t->dl_watch && bpf_program__fd(t->skel->progs.lp_session) >= 0 &&
	       lp_kfeature__has(LP_KF_UPROBE_MULTI) && lp_tracer_file_shared(t, pt->path) &&
	       first_check(t, pid);
}

/* Probe id's costs in the kernel's settings as pi says its returns are
 * probed now. */
static void update_costs(struct lp_tracer *t, uint32_t id)
{
	struct pinfo *pi = &t->probes[id];
	struct lp_trace_probe cfg;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg) < 0)
		return;
	struct lp_probe_point pt = { .insn = pi->insn, .cfg.kind = (unsigned)pi->kind };
	lp_tracer_set_costs(t, pi, &pt, &cfg);
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY);
}

/* Probe id is not gated after all (its session link refused): its
 * returns at their instructions, as probe-return.c chose. */
void lp_tracer_ungate(struct lp_tracer *t, uint32_t id)
{
	struct pinfo *pi = &t->probes[id];
	pi->gated = false;
	pi->ret_insn_probed = true;
	t->ngated--;
	update_costs(t, id);
}

/* A library that can throw was loaded (by pid: why): the gated probes'
 * returns are probed at their instructions from now on, and their entries
 * arm no uretprobe (dl_insn).  The returns first, as attach_uprobes. */
static void dl_switch(struct lp_tracer *t, pid_t pid, const char *why)
{
	char names[256] = "";
	size_t len = 0;
	for (uint32_t id = 0; id < t->nprobes; id++) {
		struct pinfo *pi = &t->probes[id];
		if (!pi->gated || pi->ret_insn_probed || pi->removing || pi->removed)
			continue;
		struct lp_probe_point pt = { .name = pi->name, .path = pi->path };
		t->cur = (int)id;
		for (size_t i = 0; i < pi->nrets; i++) {
			const struct lp_ret_point *rp = &pi->rets[i];
			if (lp_tracer_attach_one(t, t->skel->progs.lp_return, MULTI_RET_INSN,
						 rp->offset, LP_RET_COOKIE(id, rp->kind, rp->reg, rp->off),
						 &pt) < 0)
				lp_error_errno("cannot attach to a return of '%s' in %s", pi->name, pi->path);
		}
		t->cur = -1;
		pi->ret_insn_probed = true;
		update_costs(t, id);
		/* Its returns' cost from now on. */
		if (t->w && t->calibrated &&
		    lp_tracer_write_probe_costs(t, t->w, id, lp_monotonic_ns()) < 0 && !t->werr)
			t->werr = errno;
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
						pi->name);
	}
	t->dl_insn = true;
	t->skel->bss->dl_insn = 1;
	if (len)
		lp_error("note: pid %d loaded a library that can throw (%s): the returns of %s are probed at their instructions from now on",
			 (int)pid, why, names);
	else if (t->verbose)
		lp_error("note: pid %d has loaded a library that can throw (%s): no uretprobe on the functions of a program that calls dlopen",
			 (int)pid, why);
}

/* While the loads counted differ from those found harmless, calls are not
 * traced: read the processes that loaded (their records are in the ring
 * before their count: lp_dl), and either let the calls have uretprobes
 * again or switch to the return instructions. */
void lp_tracer_dl_check(struct lp_tracer *t)
{
	uint64_t gen = t->skel->bss->dl_gen;
	if (!t->dlgate)
		t->dlgate = lp_dlgate__new();
	/* Loads let through (first_check) are read all the same. */
	if (gen == t->skel->bss->dl_ok && !lp_dlgate__pending(t->dlgate))
		return;
	if (t->skel->bss->dl_unseen) {
		t->skel->bss->dl_unseen = 0;
		lp_dlgate__all_dirty(t->dlgate);
	}
	ring_buffer__consume(t->rb);
	pid_t *pids = lp_calloc(t->ntargets + t->nkids + 1, sizeof(*pids));
	size_t n = 0;
	for (size_t i = 0; i < t->ntargets; i++)
		pids[n++] = t->targets[i];
	for (size_t i = 0; i < t->nkids; i++)
		pids[n++] = t->kids[i].pid;
	pid_t who = 0;
	char why[320];
	int r = lp_dlgate__check(t->dlgate, pids, n, &who, why, sizeof(why));
	free(pids);
	if (r > 0)
		dl_switch(t, who, why);
	else if (t->skel->bss->dl_gen == gen && gen != t->skel->bss->dl_ok)
		t->skel->bss->dl_ok = gen;
}
