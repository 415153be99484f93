/* tracer-tfs.c - probes in files other processes map too (libc): tracefs
 * uprobe events of lp-trace's own group, whose perf events name the
 * traced processes and are inherited at fork; and their removal at the
 * end, in a process of its own. */
#include "capture/trace/tracer-internal.h"

#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

/* Why not libbpf's uprobes (the uprobe PMU) or uprobe-multi links with a
 * pid, which lp-trace used before: a perf event of the uprobe PMU makes a
 * trace_event_call of its own, so the copies the kernel makes of it at
 * fork have no program; a link with a pid covers that process alone, so
 * each child needed one, attached by user space after the child had run
 * (its first calls missed), and each detached with a walk of every
 * process mapping the file and a grace period (~6 s for ~900 children of
 * an endless forker).  A tracefs event has one trace_event_call, whose
 * programs (prog_array, bpf_cookie included) run for every perf event on
 * it; a perf event opened on a process with inherit=1 is copied into each
 * child in copy_process (perf_event_init_task), before the child runs, and
 * the child's memory, copied, already holds the breakpoint
 * (trace_uprobe_filter_add skips uprobe_apply for event->parent); its copy
 * goes with it when it exits, cheaply (PF_EXITING in
 * trace_uprobe_filter_remove).  The filter (uprobe_perf_filter) puts
 * breakpoints only in the processes the perf events name: bystanders get
 * none. */

/* Writes cmd to uprobe_events; -1 with errno set. */
int lp_tracer_tfs_write(const char *cmd)
{
	const char *dir = lp_tracefs();
	if (!dir) {
		errno = ENOENT;
		return -1;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(cmd);
	ssize_t w = write(fd, cmd, n);
	int e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)n ? 0 : -1;
}

/* Removes the events of group dir/events/GROUP (event by event: a
 * wildcard is not known to every kernel), waiting up to patience_ms for
 * one still in use (EBUSY: a perf event the kernel has not freed yet). */
static void tfs_remove_group(const char *group, int patience_ms)
{
	const char *dir = lp_tracefs();
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/%s", dir ? dir : "", group);
	DIR *d = dir ? opendir(path) : NULL;
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, de->d_name);
		while (lp_tracer_tfs_write(cmd) < 0 && errno == EBUSY && patience_ms > 0) {
			usleep(20000);
			patience_ms -= 20;
		}
	}
	closedir(d);
}

/* Groups a killed lp-trace left (lp_PID, PID dead): their events are not
 * in use, and would pile up. */
static void tfs_remove_stale(void)
{
	const char *dir = lp_tracefs();
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events", dir ? dir : "");
	DIR *d = dir ? opendir(path) : NULL;
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "lp_", 3))
			continue;
		long pid = strtol(de->d_name + 3, &end, 10);
		if (*end || pid <= 0 || pid > INT32_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		tfs_remove_group(de->d_name, 0);	/* in use: another run's closer */
	}
	closedir(d);
}

/* Creates the event "kind:group/name path:off" (kind 'p' or 'r') for
 * probe id; its index in t->tevs, or -1 after reporting why. */
static int tfs_create(struct lp_tracer *t, uint32_t id, char kind, const struct lp_probe_point *pt,
		      uint64_t off)
{
	if (!t->tfs_group[0]) {
		snprintf(t->tfs_group, sizeof(t->tfs_group), "lp_%d", (int)getpid());
		tfs_remove_stale();
	}
	struct tev ev = { .probe = id };
	size_t n = 0;
	for (size_t i = 0; i < t->ntevs; i++)
		n += t->tevs[i].probe == id;
	snprintf(ev.name, sizeof(ev.name), "p%u_%zu", (unsigned)id, n);
	if (strpbrk(pt->path, " \t\n")) {
		lp_error("cannot attach to '%s' in %s: a path with white space cannot be given to uprobe_events",
			 pt->name, pt->path);
		return -1;
	}
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd), "%c:%s/%s %s:0x%llx\n", kind, t->tfs_group, ev.name, pt->path,
		 (unsigned long long)off);
	if (lp_tracer_tfs_write(cmd) < 0) {
		lp_error_errno("cannot attach to '%s' in %s: cannot create the uprobe event '%.*s' in %s/uprobe_events",
			       pt->name, pt->path, (int)strlen(cmd) - 1, cmd,
			       lp_tracefs() ? lp_tracefs() : "tracefs");
		return -1;
	}
	/* Listed now, so that it is removed whatever happens next. */
	t->tevs = lp_reallocarray(t->tevs, t->ntevs + 1, sizeof(*t->tevs));
	t->tevs[t->ntevs] = ev;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", lp_tracefs(), t->tfs_group, ev.name);
	FILE *f = fopen(path, "re");
	unsigned long long tpid;
	bool ok = f && fscanf(f, "%llu", &tpid) == 1;
	if (f)
		fclose(f);
	t->ntevs++;
	if (!ok) {
		lp_error("cannot attach to '%s' in %s: cannot read %s", pt->name, pt->path, path);
		return -1;
	}
	t->tevs[t->ntevs - 1].id = tpid;
	return (int)(t->ntevs - 1);
}

/* How a perf event on a thread passes on to what it creates. */
enum inherit { INHERIT_NONE, INHERIT_THREADS, INHERIT_ALL };

/* A perf event of tracefs event ev on thread tid, passed on as inh says;
 * -1 with errno set. */
static int tfs_open(const struct tev *ev, pid_t tid, enum inherit inh)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = ev->id;
	a.sample_period = 1;
	a.inherit = inh != INHERIT_NONE;
	a.inherit_thread = inh == INHERIT_THREADS;	/* Linux 5.13 */
	return (int)syscall(__NR_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Inherited perf events of tracefs event ev for process pid's threads (the
 * filter is by memory map, inheritance by thread: any of them may fork; its
 * threads alone inherit them when children are not followed);
 * their fds kept in t->tfds.  -1 with errno set when none could be opened
 * on pid itself. */
int lp_tracer_tfs_open_threads(struct lp_tracer *t, const struct tev *ev, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *de;
	int ret = 0;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		/* Not followed (--no-follow): its forks get none. */
		int fd = tfs_open(ev, (pid_t)tid, t->on_fork ? INHERIT_ALL : INHERIT_THREADS);
		if (fd < 0) {
			if (tid == pid && errno != ESRCH)
				ret = -1;
			continue;
		}
		t->tfds = lp_reallocarray(t->tfds, t->ntfds + 1, sizeof(*t->tfds));
		t->tfd_owner = lp_reallocarray(t->tfd_owner, t->ntfds + 1, sizeof(*t->tfd_owner));
		t->tfd_owner[t->ntfds] = (int)ev->probe;
		t->tfds[t->ntfds++] = fd;
	}
	int e = errno;
	closedir(d);
	errno = e;
	return ret;
}

/* Tracefs event kind:off (a new one) for probe id, its program prog with
 * cookie on a perf event of target pid (once: the programs of a
 * trace_event_call run for every perf event on it), and inherited perf
 * events without it on pid's threads.  The program's is not inherited:
 * perf_event_alloc gives an inherited event its parent's program, and its
 * free (perf_event_free_bpf_prog) takes that program out of the call's
 * prog_array, for every process (6.18: after the first child exited, no
 * child's call was seen).  -1 with errno set, or after reporting why. */
int lp_tracer_tfs_attach(struct lp_tracer *t, struct bpf_program *prog, char kind, uint64_t off,
			 uint64_t cookie, uint32_t id, const struct lp_probe_point *pt, pid_t pid)
{
	int i = tfs_create(t, id, kind, pt, off);
	if (i < 0)
		return -2;
	int fd = tfs_open(&t->tevs[i], pid, INHERIT_NONE);
	if (fd < 0)
		return -1;
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = cookie);
	struct bpf_link *l = bpf_program__attach_perf_event_opts(prog, fd, &po);
	if (!l) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	lp_tracer_add_link(t, l);	/* which closes fd */
	int r = lp_tracer_tfs_open_threads(t, &t->tevs[i], pid);
	for (size_t k = 0; k < t->ntargets; k++)
		if (t->targets[k] == pid)
			t->targets_covered[k] = lp_monotonic_ns();
	return r;
}

/* Closes the inherited perf events of the tracefs events, then removes
 * the events, in a process of its own when it can fork one: lp-trace ends
 * meanwhile.  Closing them frees the copies in every living descendant,
 * and each copy that is the last perf event naming its process walks
 * every process that maps the file (uprobe_apply in uprobe_perf_close),
 * the filter's list scanned for each one that had a breakpoint: one after
 * the other (event_mutex), ~2.7 ms a living child and event with 500 of
 * them here (1.4 s for one libc function; 0.35 s with 200).  Their
 * breakpoints stay meanwhile; the programs are detached already (the
 * links), so a hit costs the trap alone. */
void lp_tracer_close_tfs(struct lp_tracer *t)
{
	/* The other process closes its copies once lp-trace has closed its
	 * own (EOF on go): the last close of each does the work, and the
	 * events can be removed only after it. */
	int go[2] = { -1, -1 };
	pid_t pid = t->ntfds && pipe2(go, O_CLOEXEC) == 0 ? fork() : -1;
	if (pid == 0) {
		/* Out of lp-trace's process group and session (Ctrl-C is
		 * lp-trace's), reparented at once, holding nothing else of
		 * lp-trace's: an output pipe held open would keep its reader
		 * waiting. */
		if (fork() != 0)
			_exit(0);
		setsid();
		DIR *d = opendir("/proc/self/fd");
		int dfd = d ? dirfd(d) : -1;
		struct dirent *de;
		int *close_fds = NULL;
		size_t n = 0;
		while (d && (de = readdir(d))) {
			char *end;
			long fd = strtol(de->d_name, &end, 10);
			bool keep = *end || fd == dfd || fd == go[0];
			for (size_t i = 0; i < t->ntfds && !keep; i++)
				keep = t->tfds[i] == fd;
			if (keep)
				continue;
			close_fds = lp_reallocarray(close_fds, n + 1, sizeof(*close_fds));
			close_fds[n++] = (int)fd;
		}
		if (d)
			closedir(d);
		for (size_t i = 0; i < n; i++)
			close(close_fds[i]);
		char c;
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		for (size_t i = 0; i < t->ntfds; i++)
			close(t->tfds[i]);
		tfs_remove_group(t->tfs_group, 10000);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	/* Closed here first (at once: the other process holds them), or
	 * only here, the time it takes, when no process could be forked. */
	for (size_t i = 0; i < t->ntfds; i++)
		close(t->tfds[i]);
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (pid < 0 && t->ntevs)
		tfs_remove_group(t->tfs_group, 1000);
	t->ntfds = 0;
	t->ntevs = 0;
}
