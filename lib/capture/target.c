/* target.c - processes named by -p, or a command started held before exec. */
#include "capture/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

struct lp_target {
	pid_t *pids;
	int *pidfds;		/* -p: a pidfd per pid, or -1 (see alive_pidfd) */
	unsigned long long *starts;	/* -p: each one's start time (clock ticks after boot) */
	size_t npids;
	bool spawned;
	/* A started command only: */
	char *cmd;		/* argv[0], for messages */
	int hold_fd;		/* write end: one byte lets the child exec; -1 once used */
	int err_fd;		/* read end, close-on-exec: errno if exec failed */
	bool released, reaped;
	bool at_exec;		/* ptrace-stopped at an exec by lp_target__run_to_exec */
	int status;		/* wait status once reaped */
	bool signalled;		/* lp sent it SIGTERM or SIGKILL */
};

/* The state letter, the parent and the start time (clock ticks after boot,
 * field 22; when start is not NULL) of /proc/PID/stat ("pid (comm) S ppid
 * ...": comm may itself contain ") "): 0 with *state '?', *ppid -1 and
 * *start 0 where the line does not parse; 1 when the file reads empty; -1
 * when it cannot be opened (errno set). */
static int proc_stat(pid_t pid, char *state, pid_t *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	int pp;

	*state = '?';
	*ppid = -1;
	if (start)
		*start = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	*state = p[2];
	if (sscanf(p + 2, "%*c %d", &pp) == 1)
		*ppid = (pid_t)pp;
	if (start) {
		/* Field 3 (the state) starts at p + 2: 19 more to the 22nd. */
		const char *q = p + 2;
		for (int field = 3; field < 22 && q; field++)
			if ((q = strchr(q, ' ')))
				q++;
		*start = q ? strtoull(q, NULL, 10) : 0;
	}
	return 0;
}

/* A -p process is gone once it has no /proc entry or is a zombie, whose
 * parent has not reaped it yet: it will never run again either way; or
 * once its pid is another process's (another start time than start, when
 * start is known). */
static bool pid_alive(pid_t pid, unsigned long long start)
{
	char state;
	pid_t ppid;
	unsigned long long now;
	int r = proc_stat(pid, &state, &ppid, &now);

	if (r < 0)
		return errno != ENOENT && errno != ESRCH;
	return r == 0 && state != 'Z' && state != 'X' && state != 'x' && (!start || now == start);
}

/* -p process i by its pidfd: readable once the process has exited, zombie
 * or reaped.  lp-record asks 40 times a second: reading /proc/PID/stat
 * instead cost ~6% of its CPU under load (the kernel's do_task_stat walks
 * every thread of a big server).  Without one (pidfd_open refused, a tid
 * that is no process's leader), the /proc read.  A pidfd that says gone is
 * believed only when /proc agrees: once, here, one said so for minutes of
 * live processes, and lp ended its recording at once with nothing in it;
 * then /proc alone is asked. */
static bool alive_pidfd(struct lp_target *t, size_t i)
{
	int fd = t->pidfds ? t->pidfds[i] : -1;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (fd < 0)
		return pid_alive(t->pids[i], t->starts ? t->starts[i] : 0);
	if (poll(&p, 1, 0) == 0)
		return true;
	if (!pid_alive(t->pids[i], t->starts[i]))
		return false;
	close(fd);
	t->pidfds[i] = -1;
	return true;
}

/* The state letter of /proc/PID/stat ('R' running, 'S' sleeping...). */
static char child_state(pid_t pid)
{
	char state;
	pid_t ppid;

	return proc_stat(pid, &state, &ppid, NULL) == 0 ? state : '?';
}

struct lp_target *lp_target__from_pids(const char *list)
{
	struct lp_target *t = lp_calloc(1, sizeof(*t));
	t->hold_fd = t->err_fd = -1;
	const char *s = list;
	for (;;) {
		size_t len = strcspn(s, ",");
		char *item = lp_strndup(s, len);
		int64_t v;
		const char *why;
		if (lp_parse_i64(item, 1, INT_MAX, &v, &why) < 0) {
			lp_error("--pid '%s': %s", item, why);
			free(item);
			goto fail;
		}
		free(item);
		if (!pid_alive((pid_t)v, 0)) {
			lp_error("no process with pid %lld", (long long)v);
			goto fail;
		}
		bool dup = false;
		for (size_t i = 0; i < t->npids; i++)
			dup |= t->pids[i] == (pid_t)v;
		if (!dup) {
			t->pids = lp_reallocarray(t->pids, t->npids + 1, sizeof(*t->pids));
			t->pidfds = lp_reallocarray(t->pidfds, t->npids + 1, sizeof(*t->pidfds));
			t->starts = lp_reallocarray(t->starts, t->npids + 1, sizeof(*t->starts));
			t->pidfds[t->npids] = (int)syscall(SYS_pidfd_open, (pid_t)v, 0);
			/* After the pidfd: a pid taken over in between has another
			 * start time, and the pidfd says the first one gone. */
			char state;
			pid_t ppid;
			if (proc_stat((pid_t)v, &state, &ppid, &t->starts[t->npids]) != 0)
				t->starts[t->npids] = 0;
			t->pids[t->npids++] = (pid_t)v;
		}
		if (!s[len])
			break;
		s += len + 1;
	}
	char name[32];
	snprintf(name, sizeof(name), "pid %d", (int)t->pids[0]);
	t->cmd = lp_strdup(name);	/* for messages */
	return t;
fail:
	lp_target__free(t);
	errno = EINVAL;
	return NULL;
}

/* The child: restore what exec does not (the signal mask, ignored signals),
 * wait for the go byte, exec.  Only async-signal-safe calls after fork. */
/* The descriptors the child got from lp that close at its exec (its BPF
 * links among them), closed now: until the exec, a link held here would
 * keep its program attached after lp destroyed it, and kernels before
 * 6.10 refuse to attach that program there again (EEXIST).  The user's
 * own descriptors, without close-on-exec, stay.  Only system calls: the
 * parent may have threads. */
static void close_cloexec(int keep1, int keep2)
{
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
		for (long at = 0; at < n;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type;
				 char name[]; } *d = (void *)(buf + at);
			at += d->reclen;
			int fd = 0;
			const char *c = d->name;
			while (*c >= '0' && *c <= '9')
				fd = fd * 10 + (*c++ - '0');
			if (*c || c == d->name || fd <= 2 || fd == dir || fd == keep1 || fd == keep2)
				continue;
			int flags = fcntl(fd, F_GETFD);
			if (flags >= 0 && (flags & FD_CLOEXEC))
				close(fd);
		}
	close(dir);
}

static void __attribute__((noreturn)) child(char *const argv[], int hold, int err)
{
	close_cloexec(hold, err);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	static const int sigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	char c;
	ssize_t n;
	do
		n = read(hold, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)		/* the parent gave up (or died): never run */
		_exit(127);
	close(hold);
	execvp(argv[0], argv);
	int e = errno;
	if (write(err, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

struct lp_target *lp_target__spawn(char *const argv[])
{
	int hold[2], err[2];
	if (pipe2(hold, O_CLOEXEC) < 0)
		goto fail_errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(hold[0]);
		close(hold[1]);
		goto fail_errno;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(hold[0]);
		close(hold[1]);
		close(err[0]);
		close(err[1]);
		goto fail_errno;
	}
	if (pid == 0) {
		close(hold[1]);
		close(err[0]);
		child(argv, hold[0], err[1]);
	}
	close(hold[0]);
	close(err[1]);
	/* Wait (up to a second) until the child sleeps in its read: whatever
	 * the caller traces from now on is the command's, not this code's. */
	for (int i = 0; i < 1000 && child_state(pid) == 'R'; i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	struct lp_target *t = lp_calloc(1, sizeof(*t));
	t->pids = lp_malloc(sizeof(*t->pids));
	t->pids[0] = pid;
	t->npids = 1;
	t->spawned = true;
	t->cmd = lp_strdup(argv[0]);
	t->hold_fd = hold[1];
	t->err_fd = err[0];
	return t;
fail_errno:
	lp_error_errno("cannot start '%s'", argv[0]);
	return NULL;
}

const pid_t *lp_target__pids(const struct lp_target *t, size_t *n)
{
	*n = t->npids;
	return t->pids;
}

bool lp_target__spawned(const struct lp_target *t)
{
	return t->spawned;
}

static void reap(struct lp_target *t, int options)
{
	int st;
	pid_t r;
	do
		r = waitpid(t->pids[0], &st, options);
	while (r < 0 && errno == EINTR);
	if (r == t->pids[0] || (r < 0 && errno == ECHILD)) {
		t->reaped = true;
		t->status = r < 0 ? 0 : st;
	}
}

/* Lets the held child exec; 0 once it has, -1 after reporting why not. */
static int go(struct lp_target *t)
{
	t->released = true;
	ssize_t n;
	do
		n = write(t->hold_fd, "g", 1);
	while (n < 0 && errno == EINTR);
	close(t->hold_fd);
	t->hold_fd = -1;
	/* EOF on the close-on-exec pipe: exec succeeded; an int: its errno. */
	int e = 0;
	ssize_t got;
	do
		got = read(t->err_fd, &e, sizeof(e));
	while (got < 0 && errno == EINTR);
	close(t->err_fd);
	t->err_fd = -1;
	if (n != 1 || got != 0) {
		if (got == (ssize_t)sizeof(e))
			lp_error("cannot run '%s': %s", t->cmd, strerror(e));
		else
			lp_error("cannot run '%s'", t->cmd);
		reap(t, 0);
		return -1;
	}
	return 0;
}

int lp_target__release(struct lp_target *t)
{
	if (t->at_exec) {
		/* Resumes it from the exec stop: from here on it is as any
		 * released command (its later execs keep the probes: they
		 * are its pid's). */
		t->at_exec = false;
		if (ptrace(PTRACE_DETACH, t->pids[0], 0, 0) < 0) {
			lp_error_errno("cannot resume '%s'", t->cmd);
			return -1;
		}
		return 0;
	}
	return !t->spawned || t->released ? 0 : go(t);
}

/* A version manager's script on its way to the program: a shim (pyenv's,
 * rbenv's, nodenv's, asdf's .../shims/NAME), the dispatcher and its exec
 * command it execs (pyenv's libexec/pyenv and libexec/pyenv-exec, rbenv's
 * likewise), or asdf's own. */
static bool shim_path(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t len = strlen(base);
	bool libexec = strstr(path, "/libexec/") != NULL;
	return strstr(path, "/shims/") || strstr(path, "/.asdf/") ||
	       (libexec && len > 3 && !strcmp(base + len - 3, "env")) ||
	       (libexec && len > 8 && !strcmp(base + len - 8, "env-exec"));
}

bool lp_target__shim(pid_t pid, char *script, size_t size)
{
	char path[64], exe[PATH_MAX], args[4096];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh" };
	bool shell = false;
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		shell |= !strcmp(base, shells[i]);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	int fd = shell ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return false;
	n = read(fd, args, sizeof(args) - 1);
	close(fd);
	if (n <= 0)
		return false;
	args[n] = '\0';
	/* The shell's arguments: its options (a #! line's), then the script. */
	for (const char *a = args + strlen(args) + 1; a < args + n; a += strlen(a) + 1) {
		if (a[0] == '-')
			continue;
		if (!shim_path(a) || !lp_target__is_script(a))
			return false;
		snprintf(script, size, "%s", a);
		return true;
	}
	return false;
}

bool lp_target__is_script(const char *path)
{
	char b[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool r = read(fd, b, 2) == 2 && b[0] == '#' && b[1] == '!';
	close(fd);
	return r;
}

/* Lets a seized command run on untraced (a stop or deadline came first). */
static void let_go(struct lp_target *t)
{
	pid_t pid = t->pids[0];
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0)
		return;
	for (;;) {
		int st;
		pid_t r;
		do
			r = waitpid(pid, &st, __WALL);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->reaped = true;
			t->status = st;
			return;
		}
		if (WIFSTOPPED(st)) {
			/* A signal on its way to it goes with the detach. */
			int sig = st >> 16 ? 0 : WSTOPSIG(st);
			ptrace(PTRACE_DETACH, pid, 0, sig);
			return;
		}
	}
}

int lp_target__run_to_exec(struct lp_target *t, int (*holds)(void *arg, pid_t pid), void *arg,
			   const volatile sig_atomic_t *stop, int64_t deadline_ns)
{
	pid_t pid = t->pids[0];
	/* Seized while it waits in its read: it runs on until an exec, which
	 * stops it before the new image's first instruction (the kernel runs
	 * a #! script's interpreter within the same exec).  EXITKILL: if we
	 * die, so does a command left stopped; never a -p process, which the
	 * kernel lets go on if we die. */
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC | (t->spawned ? PTRACE_O_EXITKILL : 0)) < 0) {
		lp_error_errno("cannot follow the execs of '%s'", t->cmd);
		return -1;
	}
	if (t->spawned && go(t) < 0)
		return -1;
	/* Its stops wake us with SIGCHLD (blocked, taken by sigtimedwait), so
	 * a stop or the deadline is seen within 100 ms without a busy loop. */
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	int ret;
	for (;;) {
		int st;
		pid_t r;
		do
			r = waitpid(pid, &st, __WALL | WNOHANG);
		while (r < 0 && errno == EINTR);
		if (r == 0) {
			if ((stop && *stop) || (deadline_ns && lp_monotonic_ns() >= deadline_ns)) {
				let_go(t);
				ret = -2;
				break;
			}
			struct timespec ts = { 0, 100000000 };
			sigtimedwait(&chld, NULL, &ts);
			continue;
		}
		if (r < 0) {
			lp_error_errno("cannot wait for '%s'", t->cmd);
			ret = -1;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->reaped = true;
			t->status = st;
			ret = -1;
			break;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), event = st >> 16;
		if (event == PTRACE_EVENT_EXEC) {
			int h = holds(arg, pid);
			if (h > 0) {
				t->at_exec = true;
				ret = 0;
				break;
			}
			if (h < 0) {
				ret = -1;	/* killed and reaped by finish or free */
				t->at_exec = true;
				break;
			}
			sig = 0;
		} else if (event == PTRACE_EVENT_STOP) {
			/* A group stop (SIGSTOP, SIGTSTP): stay stopped as
			 * without us, until SIGCONT. */
			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
				ptrace(PTRACE_LISTEN, pid, 0, 0);
				continue;
			}
			sig = 0;
		} else if (event) {
			sig = 0;
		}
		/* Any other stop is a signal on its way to it: deliver it. */
		if (ptrace(PTRACE_CONT, pid, 0, sig) < 0 && errno != ESRCH) {
			lp_error_errno("cannot resume '%s'", t->cmd);
			ret = -1;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

size_t lp_target__alive(struct lp_target *t)
{
	if (t->spawned) {
		if (!t->reaped)
			reap(t, WNOHANG);
		return !t->reaped;
	}
	size_t n = 0;
	for (size_t i = 0; i < t->npids; i++)
		n += alive_pidfd(t, i);
	return n;
}

int64_t lp_target__cpu_ns(pid_t pid)
{
	clockid_t clock;
	struct timespec ts;
	if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int lp_target__finish(struct lp_target *t, bool stop)
{
	if (!t->spawned)
		return 0;
	if (!t->reaped && t->released)
		reap(t, WNOHANG);	/* dead by itself: not our signal's doing */
	if (!t->reaped) {
		t->signalled = !t->released || t->at_exec || stop;
		if (!t->released || t->at_exec) {
			/* Never ran the command, or stopped by us at an
			 * exec: a SIGTERM would wait for us to deliver it. */
			kill(t->pids[0], SIGKILL);
		} else if (stop) {
			/* A polite SIGTERM first; a command that ignores it
			 * gets SIGKILL after two seconds. */
			kill(t->pids[0], SIGTERM);
			for (int i = 0; i < 200 && !t->reaped; i++) {
				reap(t, WNOHANG);
				if (!t->reaped)
					sleep_ms(10);
			}
			if (!t->reaped)
				kill(t->pids[0], SIGKILL);
		}
		if (!t->reaped)
			reap(t, 0);
	}
	if (WIFEXITED(t->status))
		return WEXITSTATUS(t->status);
	if (WIFSIGNALED(t->status))
		return 128 + WTERMSIG(t->status);
	return 0;
}

int lp_target__killed_by(const struct lp_target *t)
{
	if (!t->spawned || !t->reaped || t->signalled || !WIFSIGNALED(t->status))
		return 0;
	return WTERMSIG(t->status);
}

pid_t *lp_target__descendants(pid_t pid, size_t *n)
{
	struct pp { pid_t pid, ppid; } *all = NULL;
	size_t nall = 0;
	*n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end, state;
		pid_t ppid;
		long p = strtol(de->d_name, &end, 10);
		if (*end || p <= 0 || proc_stat((pid_t)p, &state, &ppid, NULL) != 0 || ppid < 0)
			continue;
		all = lp_reallocarray(all, nall + 1, sizeof(*all));
		all[nall++] = (struct pp){ (pid_t)p, ppid };
	}
	closedir(d);
	/* Breadth first from pid: out[] holds the descendants found. */
	pid_t *out = NULL;
	size_t nout = 0;
	for (size_t head = 0;; head++) {
		pid_t parent = head == 0 ? pid : out[head - 1];
		for (size_t i = 0; i < nall; i++)
			if (all[i].ppid == parent && all[i].pid != pid) {
				out = lp_reallocarray(out, nout + 1, sizeof(*out));
				out[nout++] = all[i].pid;
			}
		if (head >= nout)
			break;
	}
	free(all);
	*n = nout;
	return out;
}

int lp_target__check_max_pids(const struct lp_target *t, uint32_t max_pids)
{
	if (t->npids <= max_pids)
		return 0;
	lp_error("-p names %zu processes, more than --max-pids %u", t->npids, (unsigned)max_pids);
	return -1;
}

void lp_target__free(struct lp_target *t)
{
	if (!t)
		return;
	if (t->spawned && !t->reaped) {
		kill(t->pids[0], SIGKILL);
		reap(t, 0);
	}
	if (t->hold_fd >= 0)
		close(t->hold_fd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	for (size_t i = 0; t->pidfds && i < t->npids; i++)
		if (t->pidfds[i] >= 0)
			close(t->pidfds[i]);
	free(t->pidfds);
	free(t->starts);
	free(t->cmd);
	free(t->pids);
	free(t);
}
