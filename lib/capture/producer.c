/* producer.c - the shell lp-record and lp-trace share (producer.h). */
#include "capture/producer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/control.h"
#include "base/stop.h"
#include "base/util.h"

struct lp_producer {
	struct lp_producer_opts o;
	const char *output_name;	/* for messages: the file, or "stdout" */
	volatile sig_atomic_t *stop;
	struct lp_target *target;
	char *cmd_exe;			/* -- CMD's program */
	FILE *out;
	struct lp_control *control;	/* --control */
	/* How the loop ended. */
	const char *why;		/* for the summary: "duration reached"... */
	bool closed;			/* nobody reads the output any more */
	bool failed;			/* reported: the status is 1 */
};

/* The executable a command name runs, as execvp finds it: a name with a
 * '/' as it is, else the first executable of that name in PATH.  NULL with
 * errno set when there is none (ENOENT) or it may not be run (EACCES). */
static char *command_path(const char *cmd)
{
	char buf[PATH_MAX];

	if (strchr(cmd, '/'))
		return realpath(cmd, buf) && access(buf, X_OK) == 0 ? lp_strdup(buf) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char cand[PATH_MAX];
		snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(cand, X_OK) == 0 && realpath(cand, buf))
			return lp_strdup(buf);
		path += n + (path[n] == ':');
	}
	errno = ENOENT;
	return NULL;
}

int lp_producer__open(struct lp_producer **pp, const struct lp_producer_opts *o)
{
	struct lp_producer *p = lp_calloc(1, sizeof(*p));

	*pp = NULL;
	p->o = *o;
	p->output_name = o->output && strcmp(o->output, "-") ? o->output : "stdout";
	/* A closed output is an EPIPE from a write, handled like a stop. */
	signal(SIGPIPE, SIG_IGN);
	p->stop = lp_stop__on_signals();
	if (o->pids) {
		if (!(p->target = lp_target__from_pids(o->pids))) {
			free(p);
			return 1;
		}
		if (lp_target__check_max_pids(p->target, o->max_pids) < 0) {
			lp_producer__free(p);
			return 2;
		}
	} else if (o->cmd && o->cmd[0] && !(p->cmd_exe = command_path(o->cmd[0]))) {
		/* Before anything is loaded or written: a typo costs nothing.
		 * 127, as a shell says a command was not found. */
		lp_error_errno("cannot run '%s'", o->cmd[0]);
		free(p);
		return 127;
	}
	if (o->control && !(p->control = lp_control__open(o->control))) {
		lp_producer__free(p);
		return 1;
	}
	*pp = p;
	return 0;
}

const char *lp_producer__command_exe(const struct lp_producer *p)
{
	return p->cmd_exe;
}

int lp_producer__spawn(struct lp_producer *p)
{
	if (p->target || !p->cmd_exe)
		return 0;
	return (p->target = lp_target__spawn(p->o.cmd)) ? 0 : 1;
}

struct lp_target *lp_producer__target(struct lp_producer *p)
{
	return p->target;
}

FILE *lp_producer__output(struct lp_producer *p)
{
	if (!p->out) {
		p->out = lp_open_output(p->o.output);
		/* A started command must not hold an output file of ours open
		 * (a pipe would see no EOF before it exits); stdout is its
		 * own too. */
		if (fileno(p->out) > 2)
			fcntl(fileno(p->out), F_SETFD, FD_CLOEXEC);
	}
	return p->out;
}

int lp_producer__release(struct lp_producer *p)
{
	return p->target && lp_target__release(p->target) < 0 ? 127 : 0;
}

static int64_t deadline(const struct lp_producer *p)
{
	return p->o.duration_ns > 0 ? lp_monotonic_ns() + p->o.duration_ns : 0;
}

int lp_producer__run_to_exec(struct lp_producer *p, int (*holds)(void *arg, pid_t pid),
			     void *arg)
{
	int r = lp_target__run_to_exec(p->target, holds, arg, p->stop, deadline(p));

	if (r == -2) {
		lp_error("stopped (%s) before %s%s%s ran a program that holds the probes: nothing traced",
			 *p->stop ? strsignal(*p->stop) : "duration reached", p->o.cmd ? "'" : "pid ",
			 p->o.cmd ? p->o.cmd[0] : p->o.pids, p->o.cmd ? "'" : "");
		lp_target__finish(p->target, true);
	}
	return r;
}

/* A pipe whose reader has gone shows POLLERR on our end, a socket or a
 * terminal hung up POLLHUP: seen even when nothing comes to be written. */
static bool output_closed(FILE *out)
{
	struct pollfd pfd = { .fd = fileno(out), .events = 0 };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP));
}

/* After a write or flush that failed (r < 0, errno set): EPIPE is a reader
 * gone, a stop; anything else a failure, said once.  Returns true. */
static bool write_failed(struct lp_producer *p)
{
	if (errno == EPIPE) {
		p->closed = true;
		p->why = "output closed";
	} else {
		lp_error_errno("cannot write %s", p->output_name);
		p->failed = true;
	}
	return true;
}

/* An engine's result, or the output's flush: true when the loop ends. */
static bool ended(struct lp_producer *p, int r)
{
	if (r == -2) {
		p->failed = true;	/* the engine said why */
		return true;
	}
	if (r == -1 || fflush(p->out) == EOF)
		return write_failed(p);
	if (output_closed(p->out)) {
		p->closed = true;
		p->why = "output closed";
		return true;
	}
	if (r == LP_PRODUCER_DONE) {
		p->why = "done";
		return true;
	}
	return false;
}

/* Until one of the ends; p->why says which. */
static void loop(struct lp_producer *p, const struct lp_producer_ops *ops, void *arg)
{
	int64_t end = deadline(p);

	if (ops->begin && ended(p, ops->begin(arg)))
		return;
	for (;;) {
		int timeout = p->o.poll_ms;

		if (*p->stop) {
			p->why = strsignal(*p->stop);
			return;
		}
		if (end) {
			int64_t left = end - lp_monotonic_ns();
			if (left <= 0) {
				p->why = "duration reached";
				return;
			}
			/* Never past the deadline by more than a millisecond. */
			if (left < (int64_t)timeout * 1000000)
				timeout = (int)(left / 1000000) + 1;
		}
		if (ended(p, ops->poll(arg, timeout)))
			return;
		/* Commands between two polls: the ring waits no longer than
		 * a command's work. */
		if (p->control && ops->command &&
		    ended(p, lp_control__read(p->control, ops->command, arg)))
			return;
		if (p->target && !lp_target__alive(p->target)) {
			p->why = "target exited";
			return;
		}
	}
}

/* The summary line, whatever ended the run but a failure. */
static void summary(struct lp_producer *p, const struct lp_producer_ops *ops, void *arg)
{
	char buf[1024];

	if (ops->counts(arg, buf, sizeof(buf)))
		lp_error("%s (%s)", buf, p->why ? p->why : "stopped");
	if (ops->notes)
		ops->notes(arg);
}

/* Ends a started command and returns its part of the exit status (see
 * producer.h); 0 for -p. */
static int end_command(struct lp_producer *p)
{
	if (!p->target || !lp_target__spawned(p->target))
		return 0;
	/* Still running when we stopped (-d, a signal, a closed output): we
	 * stop it, and that is no failure of it. */
	bool running = lp_target__alive(p->target) > 0;
	int status = lp_target__finish(p->target, true);
	int sig = lp_target__killed_by(p->target);
	const char *cmd = p->o.cmd[0];

	if (running)
		return 0;
	if (sig) {
		/* A signal that asks a program to stop, when we were stopped
		 * by one too, is the same stop (Ctrl-C reaches the whole
		 * group).  Otherwise never silently: the probes may be why. */
		bool asked = sig == SIGINT || sig == SIGTERM || sig == SIGPIPE;
		if (asked && *p->stop)
			return 0;
		lp_error("%s killed by signal %d (%s)", cmd, sig, strsignal(sig));
		return asked ? 0 : 128 + sig;
	}
	if (p->o.verbose)
		lp_error("%s exited with status %d", cmd, status);
	return status;
}

int lp_producer__run(struct lp_producer *p, const struct lp_producer_ops *ops, void *arg)
{
	lp_producer__output(p);
	loop(p, ops, arg);
	if (!p->closed && !p->failed && (ops->finish(arg) < 0 || fflush(p->out) == EOF))
		write_failed(p);
	if (!p->failed)
		summary(p, ops, arg);
	int status = end_command(p);
	if (!p->closed && !p->failed && p->out != stdout) {
		FILE *f = p->out;
		p->out = NULL;
		if (fclose(f) == EOF)
			write_failed(p);
	}
	return p->failed ? 1 : status;
}

int lp_producer__abort(struct lp_producer *p, int status)
{
	if (status == 1 && errno == EPIPE)
		status = 0;
	lp_producer__free(p);
	return status;
}

void lp_producer__free(struct lp_producer *p)
{
	if (!p)
		return;
	lp_target__free(p->target);
	lp_control__free(p->control);
	if (p->out && p->out != stdout)
		fclose(p->out);
	free(p->cmd_exe);
	free(p);
}

static int cap_bit(const char *capeff, int bit)
{
	unsigned long long v = strtoull(capeff, NULL, 16);

	return (v >> bit) & 1;
}

const char *lp_producer__bpf_missing(void)
{
	static char why[128];
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int bpf = 0, perfmon = 0, sysadmin = 0;

	if (geteuid() == 0)
		return NULL;
	f = fopen("/proc/self/status", "r");
	while (f && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "CapEff:", 7))
			continue;
		sysadmin = cap_bit(line + 7, 21);
		perfmon = cap_bit(line + 7, 38);
		bpf = cap_bit(line + 7, 39);
	}
	free(line);
	if (f)
		fclose(f);
	if (sysadmin || (bpf && perfmon))
		return NULL;
	snprintf(why, sizeof(why), "root, or CAP_BPF and CAP_PERFMON (missing:%s%s)",
		 bpf ? "" : " CAP_BPF", perfmon ? "" : " CAP_PERFMON");
	return why;
}
