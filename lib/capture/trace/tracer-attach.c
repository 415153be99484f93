/* tracer-attach.c - attaches lp-trace's probes: once for every process
 * (uprobe-multi links, or a perf-event uprobe each) or in tracefs events
 * for the targets (tracer-tfs.c), USDT probes per process, system calls
 * and tracepoints; and follows the targets' children, forked or adopted. */
#include "capture/trace/tracer.h"
#include "capture/trace/tracer-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <event-parse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/kfeatures.h"
#include "trace.skel.h"
#include "base/util.h"

void lp_tracer_add_link(struct lp_tracer *t, struct bpf_link *l)
{
	t->links = lp_reallocarray(t->links, t->nlinks + 1, sizeof(*t->links));
	t->link_owner = lp_reallocarray(t->link_owner, t->nlinks + 1, sizeof(*t->link_owner));
	t->link_owner[t->nlinks] = t->cur;
	t->links[t->nlinks++] = l;
}

/* --- one attachment per file, or a tracefs event per target ------------ */

static bool in_filter(struct lp_tracer *t, pid_t pid)
{
	uint32_t k = (uint32_t)pid;
	uint8_t v;
	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.tgids), &k, &v) == 0;
}

/* A process that maps file path (device dev, inode ino) and is not traced
 * (this one included: lp-trace maps libc too), or 0.  A uprobe attached for
 * every process puts its breakpoint in every process that maps the file,
 * now and later: a bystander would pay a trap per call. */
static pid_t bystander(struct lp_tracer *t, const char *path, uint64_t dev, uint64_t ino)
{
	DIR *d = opendir("/proc");
	if (!d)
		return getpid();
	pid_t found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || in_filter(t, (pid_t)pid))
			continue;
		struct lp_maps m;
		if (lp_maps__open(&m, (pid_t)pid) < 0)
			continue;
		/* The same inode on the same device, or under the same path
		 * (an overlay's file shows the device of the layer below). */
		while (!found && lp_maps__next(&m))
			if (m.ino == ino && m.name[0] == '/' && (m.dev == dev || !strcmp(m.name, path)))
				found = (pid_t)pid;
		lp_maps__close(&m);
	}
	closedir(d);
	return found;
}

/* Whether the probes in file path are attached once for every process that
 * maps it, filtered in the kernel by the pid set: so when no process but
 * the traced ones maps it (a server's own executable).  Children are then
 * traced from their fork on, whatever their number, and nothing is
 * attached or detached per process.  Otherwise (a shared library: libc)
 * the probes are tracefs events with perf events naming the traced
 * processes (lp_tracer_tfs_attach).  Decided once per file. */
bool lp_tracer_file_shared(struct lp_tracer *t, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return false;
	for (size_t i = 0; i < t->npfiles; i++)
		if (t->pfiles[i].dev == (uint64_t)st.st_dev && t->pfiles[i].ino == (uint64_t)st.st_ino)
			return t->pfiles[i].shared;
	pid_t other = bystander(t, path, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (t->verbose) {
		if (other)
			lp_error("note: %s: attached to the traced processes alone, inherited at fork (pid %d maps it too)",
				 path, (int)other);
		else
			lp_error("note: %s: attached once for every process that maps it (only traced ones do)",
				 path);
	}
	t->pfiles = lp_reallocarray(t->pfiles, t->npfiles + 1, sizeof(*t->pfiles));
	t->pfiles[t->npfiles++] = (struct pfile){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, !other };
	return !other;
}

struct kid *lp_tracer_find_kid(struct lp_tracer *t, pid_t pid)
{
	for (size_t i = t->nkids; i-- > 0;)	/* the newest first: on_fork's */
		if (t->kids[i].pid == pid)
			return &t->kids[i];
	return NULL;
}

/* Child i has exited: forgotten (the kernel reuses its id; it has left the
 * kernel's filter already, lp_exit, and its inherited perf events went
 * with it: the kernel frees them at its exit, cheaply, PF_EXITING). */
void lp_tracer_forget_kid(struct lp_tracer *t, size_t i)
{
	t->kids[i] = t->kids[--t->nkids];
}

static int setup_tp(struct lp_tracer *t, struct pinfo *pi, const struct lp_probe_point *pt,
		    struct lp_trace_probe *cfg)
{
	const char *dir = lp_tracefs();
	if (!dir)
		return -1;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, pt->tp_subsys, pt->tp_event);
	FILE *f = fopen(path, "re");
	if (!f) {
		lp_error_errno("probe '%s': no tracepoint %s:%s (%s)", pt->name, pt->tp_subsys,
			       pt->tp_event, path);
		return -1;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	char chunk[4096];
	size_t r;
	while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, r, mem);
	fclose(f);
	fclose(mem);
	if (!t->tep)
		t->tep = tep_alloc();
	if (!t->tep || tep_parse_event(t->tep, buf, len, pt->tp_subsys) != 0) {
		free(buf);
		lp_error("probe '%s': cannot parse %s", pt->name, path);
		return -1;
	}
	free(buf);
	pi->tep_event = tep_find_event_by_name(t->tep, pt->tp_subsys, pt->tp_event);
	if (!pi->tep_event) {
		lp_error("probe '%s': cannot parse %s", pt->name, path);
		return -1;
	}
	/* The fixed part's size; dynamic fields (strings) follow it. */
	unsigned int size = 0;
	bool dynamic = false;
	for (int pass = 0; pass < 2; pass++) {
		struct tep_format_field *fl = pass ? pi->tep_event->format.fields
						   : pi->tep_event->format.common_fields;
		for (; fl; fl = fl->next) {
			if ((unsigned int)(fl->offset + fl->size) > size)
				size = (unsigned int)(fl->offset + fl->size);
			dynamic |= (fl->flags & TEP_FIELD_IS_DYNAMIC) != 0;
		}
	}
	cfg->tp_size = dynamic || size > LP_TRACE_TP_MAX ? LP_TRACE_TP_MAX : size;
	return 0;
}

/* Uprobe-multi links (6.6+), for probes attached once for every process:
 * closing one waits for one grace period, without the perf event's global
 * mutex that makes perf-event uprobes close one after the other.  Neither
 * Debian 12's headers nor its libbpf 1.1 know them: the attach type and
 * BPF_LINK_CREATE's fields for it, from the kernel's uapi. */
#define LP_BPF_F_UPROBE_MULTI_RETURN 1

union lp_uprobe_multi_attr {
	struct {
		uint32_t prog_fd, target_fd, attach_type, flags;
		uint64_t path, offsets, ref_ctr_offsets, cookies;
		uint32_t cnt, flags2, pid;
	} a;
	char size[128];
};

/* lp_py loaded for uprobe-multi links: a copy of its instructions alone
 * is refused (its bpf_loop callbacks need the BTF of its functions, which
 * libbpf gives only to what it loads itself), so the object is opened
 * again, every map the loaded one's, and only lp_py loaded.  Its fd, or -1
 * with errno set. */
static int load_py_multi(struct lp_tracer *t)
{
	struct trace_bpf *s = trace_bpf__open();
	struct bpf_map *m;
	struct bpf_program *p;

	if (!s)
		return -1;
	bpf_object__for_each_map(m, s->obj) {
		struct bpf_map *own = bpf_object__find_map_by_name(t->skel->obj, bpf_map__name(m));
		if (!own || bpf_map__reuse_fd(m, bpf_map__fd(own)) < 0)
			goto fail;
	}
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, p == s->progs.lp_py);
	bpf_program__set_expected_attach_type(s->progs.lp_py,
					      (enum bpf_attach_type)LP_BPF_TRACE_UPROBE_MULTI);
	int err = trace_bpf__load(s);
	if (err) {
		errno = -err;
		goto fail;
	}
	t->pyskel = s;
	return bpf_program__fd(s->progs.lp_py);
fail:;
	int e = errno;
	trace_bpf__destroy(s);
	errno = e;
	return -1;
}

/* The copy of prog loaded for uprobe-multi links (the same instructions,
 * maps already in them; the attach type is fixed at load), or -1 when the
 * kernel refuses it (then perf-event uprobes are used). */
static int multi_prog(struct lp_tracer *t, struct bpf_program *prog, int slot)
{
	if (t->mprog[slot])
		return t->mprog[slot];
	/* Loaded as a session already (load): no copy. */
	if (slot == MULTI_SESSION)
		return t->mprog[slot] = bpf_program__fd(prog) >= 0 ? bpf_program__fd(prog) : -1;
	if (!lp_kfeature__has(LP_KF_UPROBE_MULTI)) {
		if (t->verbose)
			lp_error("note: no uprobe-multi links on this kernel (perf-event uprobes instead)");
		for (int i = 0; i < MULTI_N; i++)
			t->mprog[i] = -1;
		return -1;
	}
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)LP_BPF_TRACE_UPROBE_MULTI);
	int fd = slot == MULTI_PY ? load_py_multi(t)
				  : bpf_prog_load(BPF_PROG_TYPE_KPROBE, bpf_program__name(prog), "GPL",
						  bpf_program__insns(prog),
						  bpf_program__insn_cnt(prog), &o);
	if (fd < 0 && t->verbose)
		lp_error_errno("note: %s: no uprobe-multi link (perf-event uprobes instead)",
			       bpf_program__name(prog));
	t->mprog[slot] = fd < 0 ? -1 : fd;
	return t->mprog[slot];
}

/* A kernel that loads the programs' copies but makes no uprobe-multi link
 * (one that knows neither, or refuses the link's fields): perf-event
 * uprobes from now on, if no link was made yet (then the refusal is
 * something else).  Whether to fall back. */
static bool no_multi_links(struct lp_tracer *t)
{
	if (t->nmfds)
		return false;
	if (t->verbose)
		lp_error_errno("note: no uprobe-multi links (perf-event uprobes instead)");
	for (int i = 0; i < MULTI_N; i++) {
		if (t->mprog[i] > 0 && multi_copied(i))
			close(t->mprog[i]);
		t->mprog[i] = -1;
	}
	return true;
}

/* One program at offset off of pt's file for every process, with cookie.
 * -1 with errno set. */
int lp_tracer_attach_one(struct lp_tracer *t, struct bpf_program *prog, int slot, uint64_t off,
			 uint64_t cookie, const struct lp_probe_point *pt)
{
	int pfd = multi_prog(t, prog, slot);
	if (pfd >= 0) {
		union lp_uprobe_multi_attr at;
		memset(&at, 0, sizeof(at));
		at.a.prog_fd = (uint32_t)pfd;
		at.a.attach_type = slot == MULTI_SESSION ? LP_BPF_TRACE_UPROBE_SESSION
							 : LP_BPF_TRACE_UPROBE_MULTI;
		at.a.path = (uint64_t)(uintptr_t)pt->path;
		at.a.offsets = (uint64_t)(uintptr_t)&off;
		at.a.cookies = (uint64_t)(uintptr_t)&cookie;
		at.a.cnt = 1;
		at.a.flags2 = slot == MULTI_RETURN ? LP_BPF_F_UPROBE_MULTI_RETURN : 0;
		int fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &at, sizeof(at));
		if (fd < 0 && slot == MULTI_SESSION)
			return -1;	/* the caller probes the return instructions */
		if (fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP) && no_multi_links(t))
			goto perf_event;
		if (fd < 0)
			return -1;
		t->mfds = lp_reallocarray(t->mfds, t->nmfds + 1, sizeof(*t->mfds));
		t->mfd_owner = lp_reallocarray(t->mfd_owner, t->nmfds + 1, sizeof(*t->mfd_owner));
		t->mfd_owner[t->nmfds] = t->cur;
		t->mfds[t->nmfds++] = fd;
		return 0;
	}
perf_event:;
	if (slot == MULTI_SESSION) {
		errno = EOPNOTSUPP;
		return -1;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie, .retprobe = slot == MULTI_RETURN);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, pt->path, off, &uo);
	if (!l)
		return -1;
	lp_tracer_add_link(t, l);
	return 0;
}

/* Program prog at offset off of pt's file with cookie (slot: which
 * uprobe-multi copy): for every process (pid <= 0), or in a tracefs event
 * for pid and what it forks.  -1 with errno set, -2 after reporting why. */
static int attach_at(struct lp_tracer *t, struct bpf_program *prog, int slot, uint64_t off,
		     uint64_t cookie, uint32_t id, const struct lp_probe_point *pt, pid_t pid)
{
	if (pid <= 0)
		return lp_tracer_attach_one(t, prog, slot, off, cookie, pt);
	return lp_tracer_tfs_attach(t, prog, slot == MULTI_RETURN ? 'r' : 'p', off, cookie, id, pt,
				    pid);
}

/* A uprobe probe's programs for every process (pid <= 0), or for pid and
 * its descendants, the probe's settings under id. */
static int attach_uprobes(struct lp_tracer *t, uint32_t id, const struct lp_probe_point *pt,
			  pid_t pid)
{
	int r;
	struct pinfo *pi = &t->probes[id];
	if (pi->gated) {
		/* Entry and return in one session link. */
		multi_prog(t, t->skel->progs.lp_session, MULTI_SESSION);
		pi->attached_ns = lp_monotonic_ns();
		if (lp_tracer_attach_one(t, t->skel->progs.lp_session, MULTI_SESSION, pt->offset,
					 id, pt) == 0)
			return 0;
		if (t->verbose)
			lp_error_errno("note: %s: no uprobe session (its return instructions probed instead)",
				       pt->name);
		lp_tracer_ungate(t, id);
	}
	/* The returns first: a call entered while only the entry probe was
	 * attached would push a frame no return ever pops.  The other way
	 * round, a return whose entry was not seen finds no frame of its own
	 * and is ignored.  A uretprobe, or where one would break the program
	 * (lib/capture/trace/probe-return.c says why), uprobes on the instructions that leave. */
	if (pt->cfg.kind == LP_PROBE_ENTRY && !pi->ret_insn_probed &&
	    (r = attach_at(t, t->skel->progs.lp_return, MULTI_RETURN, pt->offset, id, id, pt, pid)) < 0)
		goto fail;
	for (size_t i = 0; pt->cfg.kind == LP_PROBE_ENTRY && pi->ret_insn_probed && i < pt->nrets; i++) {
		const struct lp_ret_point *rp = &pt->rets[i];
		if ((r = attach_at(t, t->skel->progs.lp_return, MULTI_RET_INSN, rp->offset,
				   LP_RET_COOKIE(id, rp->kind, rp->reg, rp->off), id, pt, pid)) < 0)
			goto fail;
	}
	struct bpf_program *prog = pt->cfg.kind == LP_PROBE_ENTRY ? t->skel->progs.lp_entry
				   : pt->cfg.kind == LP_PROBE_CATCH ? t->skel->progs.lp_catch
				   : pt->cfg.kind == LP_PROBE_PY    ? t->skel->progs.lp_py
				   : pt->cfg.kind == LP_PROBE_DL    ? t->skel->progs.lp_dl
								     : t->skel->progs.lp_point;
	int slot = pt->cfg.kind == LP_PROBE_ENTRY ? MULTI_ENTRY
		   : pt->cfg.kind == LP_PROBE_CATCH ? MULTI_CATCH
		   : pt->cfg.kind == LP_PROBE_PY    ? MULTI_PY
		   : pt->cfg.kind == LP_PROBE_DL    ? MULTI_DL : MULTI_POINT;
	/* The attach record's time: calls are seen from the entry's link on
	 * (its program copy loaded first: the verifier takes a while). */
	if (pid <= 0)
		multi_prog(t, prog, slot);
	t->probes[id].attached_ns = lp_monotonic_ns();
	if ((r = attach_at(t, prog, slot, pt->offset, id, id, pt, pid)) < 0)
		goto fail;
	return 0;
fail:
	if (r == -2)
		return -1;
	if (errno == EPERM || errno == EACCES)
		lp_error("cannot attach to '%s' in %s: needs root (or CAP_BPF and CAP_PERFMON): %s",
			 pt->name, pt->path, strerror(errno));
	else
		lp_error_errno("cannot attach to '%s' in %s at offset 0x%llx", pt->name, pt->path,
			       (unsigned long long)pt->offset);
	return -1;
}

/* A USDT probe for process pid alone: a probe for every process would
 * put breakpoints in each one running the file (libbpf's pid -1).  libbpf
 * decodes the argument spec and counts the semaphore up in pid (down when
 * the link goes). */
static int attach_usdt(struct lp_tracer *t, uint32_t id, const struct lp_probe_point *pt, pid_t pid)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = id);
	struct bpf_link *l = bpf_program__attach_usdt(t->skel->progs.lp_usdt, pid, pt->path,
						      pt->usdt_provider, pt->usdt_name, &uo);
	if (!l)
		return -1;
	lp_tracer_add_link(t, l);
	return 0;
}

/* The user-space record of a new probe, id t->nprobes. */
static struct pinfo *new_pinfo(struct lp_tracer *t, const struct lp_probe_point *pt)
{
	t->probes = lp_reallocarray(t->probes, t->nprobes + 1, sizeof(*t->probes));
	struct pinfo *pi = &t->probes[t->nprobes];
	memset(pi, 0, sizeof(*pi));
	pi->name = lp_strdup(pt->name);
	pi->spec = lp_strdup(pt->spec ? pt->spec->text : pt->name);
	pi->copy = pt->copy ? lp_strdup(pt->copy) : NULL;
	pi->kind = (int)pt->cfg.kind;
	if (pt->spec && pt->spec->module)
		pi->module = lp_strdup(pt->spec->module);
	pi->nvals = pt->nvals;
	for (size_t i = 0; i < pt->nvals; i++) {
		pi->vals[i] = pt->vals[i];
		pi->vals[i].name = lp_strdup(pt->vals[i].name);
		pi->str[i] = pt->cfg.caps[i].str;
	}
	pi->has_ret = pt->has_ret;
	pi->ret = pt->ret;
	pi->ret.name = NULL;
	pi->insn = pt->insn;
	pi->py_every = pt->py_every;
	t->py_watch |= pt->py_watch;
	pi->ret_insn_probed = pt->cfg.kind == LP_PROBE_ENTRY && pt->returns == LP_RETURNS_INSN;
	pi->ret_insn = pt->ret_insn;
	t->nprobes++;
	return pi;
}

/* Whether the program pt's kind of probe needs was loaded (lp_tracer__new
 * goes on without one the kernel refuses); false after saying why not. */
static bool kind_loaded(struct lp_tracer *t, const struct lp_probe_point *pt)
{
	struct bpf_program *prog = pt->cfg.kind == LP_PROBE_SYSCALL ? t->skel->progs.lp_sys_exit
				   : pt->cfg.kind == LP_PROBE_TP    ? t->skel->progs.lp_tp
				   : pt->cfg.kind == LP_PROBE_USDT  ? t->skel->progs.lp_usdt
				   : pt->cfg.kind == LP_PROBE_PY    ? t->skel->progs.lp_py
				   : pt->cfg.kind == LP_PROBE_CATCH ? t->skel->progs.lp_catch
								     : NULL;
	if (pt->cfg.kind == LP_PROBE_SYSCALL && bpf_program__fd(t->skel->progs.lp_sys_enter) < 0)
		prog = t->skel->progs.lp_sys_enter;
	if (!prog || bpf_program__fd(prog) >= 0)
		return true;
	if (pt->cfg.kind == LP_PROBE_PY && !lp_kfeature__has(LP_KF_LOOP))
		lp_error("cannot trace '%s' on this kernel: python: probes need %s", pt->name,
			 lp_kfeature__what(LP_KF_LOOP));
	else
		lp_error("cannot trace '%s' on this kernel: its verifier refused lp's program %s (-v shows why)",
			 pt->name, bpf_program__name(prog));
	return false;
}

static int attach_probe(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid);

int lp_tracer__attach(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid)
{
	int cur = t->cur = (int)t->nprobes;
	int id = attach_probe(t, pt, pid);
	t->cur = -1;
	/* A probe that failed half-way: what it attached goes (quietly: no
	 * record said it came), and it is no probe lp_tracer__find finds. */
	if (id < 0 && (size_t)cur < t->nprobes)
		lp_tracer__remove(t, &cur, 1);
	return id;
}

static int attach_probe(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid)
{
	if (t->nprobes >= LP_TRACE_MAX_PROBES) {
		lp_error("too many probes (at most %d)", LP_TRACE_MAX_PROBES);
		return -1;
	}
	if (!kind_loaded(t, pt))
		return -1;
	uint32_t id = (uint32_t)t->nprobes;
	struct pinfo *pi = new_pinfo(t, pt);
	if (lp_tracer_can_gate(t, pt, pid)) {
		pi->gated = true;
		pi->ret_insn_probed = false;
		pi->rets = lp_calloc(pt->nrets ? pt->nrets : 1, sizeof(*pi->rets));
		memcpy(pi->rets, pt->rets, pt->nrets * sizeof(*pi->rets));
		pi->nrets = pt->nrets;
		pi->path = lp_strdup(pt->path);
		t->ngated++;
		if (t->verbose)
			lp_error("%s: a uretprobe armed per call until the program loads a library that can throw, then its %zu return instruction%s (%s)",
				 pt->name, pt->nrets, pt->nrets == 1 ? "" : "s", pt->returns_why);
	} else if (pt->cfg.kind == LP_PROBE_ENTRY && pt->dl_gate && t->verbose) {
		lp_probe_point__say_returns(pt);
	}
	if (pt->cfg.kind == LP_PROBE_ENTRY && !pi->ret_insn_probed && pt->walks && !t->walks_said) {
		t->walks_said = true;
		lp_error("note: %s: a backtrace it takes during a call of %s ends at that call (a uretprobe; --returns insn keeps it whole)",
			 pt->walks, pt->name);
	}
	/* ld.so's watch (before the functions it gates), where they can be. */
	if (pt->cfg.kind == LP_PROBE_DL &&
	    (pid <= 0 || t->dl_insn || bpf_program__fd(t->skel->progs.lp_session) < 0 ||
	     bpf_program__fd(t->skel->progs.lp_dl) < 0))
		return (int)id;
	struct lp_trace_probe cfg = pt->cfg;
	lp_tracer_set_costs(t, pi, pt, &cfg);

	if (pt->cfg.kind == LP_PROBE_SYSCALL) {
		pi->nargs = lp_syscall__args(pt->spec->name, pi->argnames, pi->argptr, pi->argint);
		pi->sysnr = pt->sysnr;
		pi->attached_ns = lp_monotonic_ns();
		uint32_t nr = (uint32_t)pt->sysnr, v = id + 1;
		if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.sysnrs), &nr, &v, BPF_ANY) < 0) {
			lp_error_errno("probe '%s': cannot enable", pt->name);
			return -1;
		}
		if (!t->sys_links[0]) {
			t->sys_links[0] = bpf_program__attach(t->skel->progs.lp_sys_enter);
			t->sys_links[1] = t->sys_links[0] ? bpf_program__attach(t->skel->progs.lp_sys_exit) : NULL;
			if (!t->sys_links[1]) {
				lp_error_errno("probe '%s': cannot attach to raw tracepoints sys_enter/sys_exit",
					       pt->name);
				return -1;
			}
		}
		return (int)id;
	}
	if (pt->cfg.kind == LP_PROBE_TP && setup_tp(t, pi, pt, &cfg) < 0)
		return -1;
	/* Once for every process, the pid set filtering in the kernel, when
	 * no other process maps the file; else for pid and its descendants
	 * (tracefs events, inherited at fork). */
	if (pt->cfg.kind == LP_PROBE_PY) {
		/* One python: probe's settings, the same at each of its sites. */
		uint32_t zero = 0;
		if (!t->py_set &&
		    bpf_map_update_elem(bpf_map__fd(t->skel->maps.pyconf), &zero, pt->py, BPF_ANY) < 0) {
			lp_error_errno("probe '%s': cannot store its settings", pt->name);
			return -1;
		}
		t->py_set = true;
	}
	if (t->gate && pt->cfg.kind == LP_PROBE_ENTRY) {
		pi->gate = true;
		cfg.flags |= LP_PROBE_F_GATE;
	}
	if ((pt->cfg.kind == LP_PROBE_ENTRY || pt->cfg.kind == LP_PROBE_POINT ||
	     pt->cfg.kind == LP_PROBE_PY) && pid > 0 && lp_tracer_file_shared(t, pt->path)) {
		pi->shared = true;
		cfg.flags |= LP_PROBE_F_FILTER;
		pid = -1;
	}
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY) < 0) {
		lp_error_errno("probe '%s': cannot store its settings", pt->name);
		return -1;
	}
	/* Its attach record's time: just before its first link (not
	 * before lp_tracer_file_shared's walk of /proc, which takes a while on a
	 * busy machine), so no call of it is seen earlier. */
	pi->attached_ns = lp_monotonic_ns();
	if (pt->cfg.kind == LP_PROBE_USDT) {
		/* A pair's halves are consecutive ids (LP_PROBE_F_CLOSE). */
		if ((pt->cfg.flags & LP_PROBE_F_CLOSE) && (id == 0 || t->probes[id - 1].kind != LP_PROBE_USDT)) {
			lp_error("probe '%s': its closing half not attached after its opening one", pt->name);
			return -1;
		}
		if (pid > 0 && attach_usdt(t, id, pt, pid) == 0)
			return (int)id;
		lp_error_errno("cannot attach to '%s' in %s for pid %d", pt->name, pt->path, (int)pid);
		return -1;
	}
	struct bpf_link *l;
	if (pt->cfg.kind == LP_PROBE_TP) {
		LIBBPF_OPTS(bpf_tracepoint_opts, to, .bpf_cookie = id);
		l = bpf_program__attach_tracepoint_opts(t->skel->progs.lp_tp, pt->tp_subsys,
							pt->tp_event, &to);
		if (!l) {
			lp_error_errno("probe '%s': cannot attach", pt->name);
			return -1;
		}
		lp_tracer_add_link(t, l);
		return lp_tracer_attach_exit(t) < 0 ? -1 : (int)id;
	}
	if (attach_uprobes(t, id, pt, pid) < 0) {
		if (pt->cfg.kind != LP_PROBE_DL)
			return -1;
		lp_error("note: the functions of a program that calls dlopen get no uretprobe: lp-trace cannot watch what it loads");
		return (int)id;
	}
	t->dl_watch |= pt->cfg.kind == LP_PROBE_DL;
	return (int)id;
}

/* --- children, forked and adopted -------------------------------------- */

/* Followed children that have exited and whose exit was not reported
 * (LP_EV_EXIT: the ring was full) are forgotten. */
void lp_tracer_forget_exited(struct lp_tracer *t)
{
	for (size_t i = 0; i < t->nkids;) {
		if (kill(t->kids[i].pid, 0) == 0 || errno != ESRCH)
			i++;
		else
			lp_tracer_forget_kid(t, i);
	}
}

int lp_tracer__follow(struct lp_tracer *t, void (*on_fork)(void *arg, pid_t child, pid_t target),
		      void *arg)
{
	t->on_fork = on_fork;
	t->fork_arg = arg;
	t->skel->links.lp_fork = bpf_program__attach(t->skel->progs.lp_fork);
	if (!t->skel->links.lp_fork) {
		lp_error_errno("cannot attach to sched_process_fork");
		return -1;
	}
	return 0;
}

/* Not traced: a lost child, the first such failure said. */
static int child_refused(struct lp_tracer *t, struct kid *k, const struct lp_probe_point *pt)
{
	if (!t->children_failed++)
		lp_error_errno("cannot attach to '%s' in %s for child %d (more children failing are counted as lost)",
			       pt->name, pt->path, (int)k->pid);
	k->refused = true;
	t->children_unfollowed++;
	return -1;
}

/* A USDT probe is attached to each process on its own (attach_usdt): a
 * child, forked or adopted, gets its own once user space hears of it; its
 * hits before that are not seen. */
static int usdt_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt, pid_t child)
{
	struct kid *k = lp_tracer_find_kid(t, child);
	if (id < 0 || !k || k->refused)
		return 0;
	int r = attach_usdt(t, (uint32_t)id, pt, child);
	k->covered_ns = lp_monotonic_ns();
	if (r == 0 || errno == ESRCH || errno == ENOENT)	/* gone, nothing to trace */
		return 0;
	return child_refused(t, k, pt);
}

static int attach_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			pid_t child, bool live);
static int attach_child_probe(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			      pid_t child, bool live);

int lp_tracer__attach_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			    pid_t child)
{
	return attach_child(t, id, pt, child, false);
}

/* A probe added while tracing: each process followed as target's child
 * now (forked before the probe was there: its perf events are not
 * theirs) is given it. */
void lp_tracer__attach_kids(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			    pid_t target)
{
	for (size_t i = 0; i < t->nkids; i++)
		if (t->kids[i].target == target)
			attach_child(t, id, pt, t->kids[i].pid, true);
}

/* live: the probe was added after the child was forked. */
static int attach_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			pid_t child, bool live)
{
	if (id >= 0 && (size_t)id < t->nprobes && (t->probes[id].removing || t->probes[id].removed))
		return 0;
	t->cur = id;
	int r = attach_child_probe(t, id, pt, child, live);
	t->cur = -1;
	return r;
}

static int attach_child_probe(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			      pid_t child, bool live)
{
	if (pt->cfg.kind == LP_PROBE_USDT)
		return usdt_child(t, id, pt, child);
	if (pt->cfg.kind != LP_PROBE_ENTRY && pt->cfg.kind != LP_PROBE_POINT &&
	    pt->cfg.kind != LP_PROBE_CATCH && pt->cfg.kind != LP_PROBE_DL)
		return 0;	/* system-wide events, filtered by process in the kernel */
	if (id < 0 || (size_t)id >= t->nprobes || t->probes[id].shared)
		return 0;	/* attached for every process: in the pid set from its fork */
	struct kid *k = lp_tracer_find_kid(t, child);
	/* Gone already, or forked when its parent had the perf events
	 * already: the kernel gave it copies (tfs_open). */
	if (!k || (!k->adopted && !k->uncovered && !live) || k->refused)
		return 0;
	int r = 0;
	for (size_t i = 0; i < t->ntevs && r == 0; i++)
		if (t->tevs[i].probe == (uint32_t)id)
			r = lp_tracer_tfs_open_threads(t, &t->tevs[i], child);
	k->covered_ns = lp_monotonic_ns();
	if (r == 0 || errno == ESRCH)	/* ESRCH: gone, nothing to trace */
		return 0;
	return child_refused(t, k, pt);
}

int lp_tracer__adopt(struct lp_tracer *t, pid_t pid, pid_t target)
{
	if (lp_tracer_find_kid(t, pid))
		return 0;
	uint32_t k = (uint32_t)pid;
	uint8_t one = 1;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tgids), &k, &one, BPF_ANY) < 0) {
		if (errno != E2BIG) {
			lp_error_errno("cannot add pid %d to the filter", (int)pid);
			return -1;
		}
		t->children_unfollowed++;	/* no room: a lost child */
		return 0;
	}
	t->kids = lp_reallocarray(t->kids, t->nkids + 1, sizeof(*t->kids));
	t->kids[t->nkids++] = (struct kid){ .pid = pid, .target = target, .adopted = true };
	return 1;
}

/* A followed process forked: the child is followed as the target it
 * descends from. */
static void on_fork_event(struct lp_tracer *t, pid_t child, pid_t parent, int64_t fork_ns)
{
	pid_t target = 0;
	int64_t covered = 0;
	for (size_t i = 0; i < t->ntargets && !target; i++)
		if (t->targets[i] == parent) {
			target = parent;
			covered = t->targets_covered[i];
		}
	for (size_t i = t->nkids; i-- > 0 && !target;)
		if (t->kids[i].pid == parent) {
			target = t->kids[i].target;
			covered = t->kids[i].covered_ns;
		}
	if (!target)	/* a parent already forgotten: exited since */
		return;
	/* Forked once its parent had every perf event: it has copies
	 * (sched_process_fork fires after copy_process, same clock). */
	t->kids = lp_reallocarray(t->kids, t->nkids + 1, sizeof(*t->kids));
	t->kids[t->nkids++] = (struct kid){ .pid = child, .target = target,
					    .uncovered = !covered || covered > fork_ns,
					    .covered_ns = fork_ns };
	if (!t->on_fork || t->detached)
		return;
	t->on_fork(t->fork_arg, child, target);
}

/* A fork the BPF side saw: the child is a target from now on. */
void lp_tracer_on_fork_record(struct lp_tracer *t, const struct lp_trace_event *ev)
{
	/* Adopted already (forked while the running descendants were
	 * listed), or a kid of the pid that exited unreported (LP_EV_EXIT
	 * lost). */
	struct kid *old = lp_tracer_find_kid(t, (pid_t)ev->pid);
	if (old && old->adopted)
		return;
	if (old)
		lp_tracer_forget_kid(t, (size_t)(old - t->kids));
	on_fork_event(t, (pid_t)ev->pid, (pid_t)ev->tid, (int64_t)ev->start);
	lp_hashmap__put(&t->nspids, lp_tracer_pid_key((pid_t)ev->pid), NULL);
	/* A kill(2) per child: not on every fork of a fork storm. */
	int64_t now = lp_monotonic_ns();
	if (now - t->forgot_ns > 100000000) {
		lp_tracer_forget_exited(t);
		t->forgot_ns = now;
	}
}
