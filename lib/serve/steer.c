/* steer.c - lp-serve's own producers (steer.h): lp-join reading two FIFOs
 * in a directory of lp-serve's (mode 0700), lp-record and lp-trace writing
 * them, each in a process group of its own, so a Ctrl-C on the terminal
 * reaches lp-serve alone, which then stops them once, in order. */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "serve/steer.h"

#define COMMAND_MAX 1024

enum { JOIN, RECORD, TRACE, NPROCS };

static const char *const names[NPROCS] = { "lp-join", "lp-record", "lp-trace" };

struct lp_steer {
	pid_t target;
	pid_t cmd;		/* the command lp-serve started, or 0 */
	char dir[64];
	char path[4][96];	/* samples, spans, record.ctl, trace.ctl */
	pid_t pids[NPROCS];
};

enum { SAMPLES, SPANS, RECORD_CTL, TRACE_CTL };

/* Runs argv (argv[0] an lp program, found beside this one) in a process
 * group of its own, its stdout out (unless -1).  Its pid, or -1 after
 * saying why. */
static pid_t run(char **argv, int out)
{
	char *prog = lp_sibling_program(argv[0]);
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		if (out >= 0 && dup2(out, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(prog, argv);
		fprintf(stderr, "lp-serve: cannot run %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	free(prog);
	if (pid < 0)
		lp_error_errno("cannot start %s", argv[0]);
	return pid;
}

/* Whether process pid has path open (a producer opens its output once
 * its probes or events are in place). */
static bool has_open(pid_t pid, const char *path)
{
	char dir[64], link[PATH_MAX];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	while (d && !found && (de = readdir(d))) {
		char fdpath[320];
		snprintf(fdpath, sizeof(fdpath), "%s/%s", dir, de->d_name);
		ssize_t n = readlink(fdpath, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			found = !strcmp(link, path);
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* The command, forked now and held before its exec until *go is written
 * (or closed: then it exits 127 unrun).  Its pid, or -1 after saying why. */
static pid_t hold_command(char *const *cmd, int *go)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0) {
		lp_error_errno("cannot make a pipe");
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "lp-serve: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		lp_error_errno("cannot start '%s'", cmd[0]);
		close(p[1]);
		return -1;
	}
	*go = p[1];
	return pid;
}

/* Lets the command run once both producers have opened their outputs
 * (60 s at most).  Whether it was let go. */
static bool release_command(struct lp_steer *s, int go)
{
	for (int i = 0; i < 6000; i++) {
		bool ready = has_open(s->pids[RECORD], s->path[SAMPLES]) &&
			     has_open(s->pids[TRACE], s->path[SPANS]);
		if (ready) {
			bool ok = write(go, "g", 1) == 1;
			close(go);
			return ok;
		}
		if (waitpid(s->pids[RECORD], NULL, WNOHANG) == s->pids[RECORD] ||
		    waitpid(s->pids[TRACE], NULL, WNOHANG) == s->pids[TRACE])
			break;
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
	lp_error("the producers did not start: the command is not run");
	close(go);
	return false;
}

struct lp_steer *lp_steer__start(const struct lp_steer_opts *o, int *fd)
{
	struct lp_steer *s = lp_calloc(1, sizeof(*s));
	static const char *const files[] = { "samples", "spans", "record.ctl", "trace.ctl" };
	char pid[24];
	int p[2] = { -1, -1 }, go = -1;

	snprintf(s->dir, sizeof(s->dir), "/tmp/lp-serve.XXXXXX");
	if (!mkdtemp(s->dir)) {
		lp_error_errno("cannot make a directory for the producers' FIFOs");
		free(s);
		return NULL;
	}
	for (int i = 0; i < 4; i++)
		snprintf(s->path[i], sizeof(s->path[i]), "%s/%s", s->dir, files[i]);
	if (mkfifo(s->path[SAMPLES], 0600) < 0 || mkfifo(s->path[SPANS], 0600) < 0 ||
	    pipe2(p, O_CLOEXEC) < 0) {
		lp_error_errno("cannot make the producers' FIFOs in %s", s->dir);
		goto fail;
	}
	s->target = o->pid;
	if (o->cmd && (s->target = s->cmd = hold_command(o->cmd, &go)) < 0) {
		s->cmd = 0;
		goto fail;
	}
	snprintf(pid, sizeof(pid), "%d", (int)s->target);
	char *join[] = { "lp-join", s->path[SAMPLES], s->path[SPANS], NULL };
	char *record[10] = { "lp-record", "-p", pid, "--control", s->path[RECORD_CTL], "-o",
			     s->path[SAMPLES] };
	int r = 7;
	if (o->freq) {
		record[r++] = "-F";
		record[r++] = (char *)o->freq;
	}
	if (o->mode) {
		record[r++] = "--mode";
		record[r++] = (char *)o->mode;
	}
	char *trace[] = { "lp-trace", "-p", pid, "--control", s->path[TRACE_CTL], "-o",
			  s->path[SPANS], o->verbose ? "-v" : NULL, NULL };
	char **argvs[NPROCS] = { join, record, trace };
	for (int i = 0; i < NPROCS; i++)
		if ((s->pids[i] = run(argvs[i], i == JOIN ? p[1] : -1)) < 0)
			goto fail;
	close(p[1]);
	p[1] = -1;
	if (s->cmd && !release_command(s, go)) {
		go = -1;
		goto fail;
	}
	*fd = p[0];
	return s;
fail:
	if (go >= 0)
		close(go);	/* the command exits unrun */
	if (p[1] >= 0)
		close(p[1]);
	if (p[0] >= 0)
		close(p[0]);
	lp_steer__stop(s);
	return NULL;
}

/* Whether the command is one line of printable text. */
static bool printable(const char *c)
{
	for (; *c; c++)
		if (iscntrl((unsigned char)*c))
			return false;
	return true;
}

/* *reply: "PREFIX ARG" (malloc'd); the status. */
static int say(char **reply, int status, const char *prefix, const char *arg)
{
	if (asprintf(reply, "%s%s", prefix, arg) < 0)
		*reply = NULL;
	return status;
}

int lp_steer__command(struct lp_steer *s, const char *command, char **reply)
{
	static const struct { const char *verb; int to; bool arg; } verbs[] = {
		{ "add", TRACE, true },	    { "remove", TRACE, true },	{ "status", TRACE, false },
		{ "inside", RECORD, true }, { "pause", RECORD, false }, { "resume", RECORD, false },
	};
	size_t len = strlen(command);

	if (!len || len > COMMAND_MAX || !printable(command))
		return say(reply, 400, "lp-serve: control: one line of text, at most 1024 bytes", "");
	size_t vl = strcspn(command, " ");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strlen(verbs[i].verb) != vl || strncmp(command, verbs[i].verb, vl))
			continue;
		if (verbs[i].arg != (command[vl] == ' ' && command[vl + 1]))
			return say(reply, 400, "lp-serve: control: ",
				   verbs[i].arg ? "what to, after the verb" : "nothing after the verb");
		const char *fifo = s->path[verbs[i].to == TRACE ? TRACE_CTL : RECORD_CTL];
		/* Never waiting: a producer not reading its FIFO (not started
		 * yet, or gone) is said, not waited for. */
		int fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return say(reply, 503, "lp-serve: control: not taken (not reading its FIFO): ",
				   names[verbs[i].to]);
		char *line = lp_malloc(len + 2);
		memcpy(line, command, len);
		line[len] = '\n';
		ssize_t w = write(fd, line, len + 1);
		free(line);
		close(fd);
		if (w != (ssize_t)len + 1)
			return say(reply, 503, "lp-serve: control: the command was not taken whole: ",
				   names[verbs[i].to]);
		return say(reply, 200, "sent to ", names[verbs[i].to]);
	}
	return say(reply, 400, "lp-serve: control: ",
		   "add PROBE, remove PROBE, status (lp-trace); inside FUNC, inside off, pause, "
		   "resume (lp-record)");
}

#define DISCOVER_MAX (4 << 20)
#define DISCOVER_S 30

/* Reads fd to its end into *buf (at most DISCOVER_MAX bytes kept), until
 * deadline_ns.  Whether it ended in time. */
static bool slurp(int fd, char **buf, size_t *len, int64_t deadline_ns)
{
	static const char note[] = "\nlp-serve: the rest left out (4 MiB at most)\n";
	char chunk[65536];
	bool cut = false;	/* past DISCOVER_MAX: the rest drained, not kept */

	for (;;) {
		int64_t left = deadline_ns - lp_monotonic_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)(left / 1000000) + 1) == 0)
			return false;
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		if (cut)
			continue;
		cut = *len + (size_t)n > DISCOVER_MAX;
		const char *add = cut ? note : chunk;
		size_t m = cut ? sizeof(note) - 1 : (size_t)n;
		*buf = lp_realloc(*buf, *len + m + 1);
		memcpy(*buf + *len, add, m);
		*len += m;
		(*buf)[*len] = 0;
	}
}

int lp_steer__discover(struct lp_steer *s, const char *what, const char *arg, char **out,
		       size_t *len)
{
	static const char *const whats[][2] = { { "list", "--list" }, { "lines", "--lines" },
						{ "blocks", "--blocks" }, { "vars", "--vars" } };
	const char *opt = NULL;
	char pid[24];
	int o[2], e[2];

	*out = NULL;
	*len = 0;
	for (size_t i = 0; i < sizeof(whats) / sizeof(whats[0]); i++)
		if (!strcmp(what, whats[i][0]))
			opt = whats[i][1];
	/* An operand, never an option of lp-trace's. */
	if (!opt || !*arg || arg[0] == '-' || strlen(arg) > 512 || !printable(arg)) {
		*out = lp_strdup("lp-serve: discover: what=list|lines|blocks|vars and arg=, one line, not an option");
		*len = strlen(*out);
		return 400;
	}
	snprintf(pid, sizeof(pid), "%d", (int)s->target);
	char *argv[] = { "lp-trace", (char *)opt, (char *)arg, "-p", pid, NULL };
	if (pipe2(o, O_CLOEXEC) < 0)
		return 500;
	if (pipe2(e, O_CLOEXEC) < 0) {
		close(o[0]);
		close(o[1]);
		return 500;
	}
	char *prog = lp_sibling_program("lp-trace");
	pid_t child = fork();
	if (child == 0) {
		setpgid(0, 0);
		dup2(o[1], STDOUT_FILENO);
		dup2(e[1], STDERR_FILENO);
		execvp(prog, argv);
		_exit(127);
	}
	free(prog);
	close(o[1]);
	close(e[1]);
	char *err = NULL;
	size_t elen = 0;
	int64_t deadline = lp_monotonic_ns() + DISCOVER_S * 1000000000LL;
	/* Its complaints are a few lines: the pipe holds them meanwhile. */
	bool ended = child > 0 && slurp(o[0], out, len, deadline) && slurp(e[0], &err, &elen, deadline);
	close(o[0]);
	close(e[0]);
	int status = 0;
	if (child > 0 && !ended)
		kill(child, SIGKILL);
	if (child > 0)
		waitpid(child, &status, 0);
	int code = child < 0 ? 500 : !ended ? 504
		 : WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 200 : 422;
	if (code != 200) {
		/* Why not, as lp-trace said it. */
		free(*out);
		*out = err ? err : lp_strdup(code == 504 ? "lp-serve: discover: lp-trace took too long"
							 : "lp-serve: discover: lp-trace failed");
		*len = strlen(*out);
	} else {
		free(err);
		if (!*out)
			*out = lp_strdup("");
	}
	return code;
}

/* Waits up to ms for pid; whether it ended (*status its status). */
static bool reap(pid_t pid, int ms, int *status)
{
	for (int i = 0; i <= ms / 10; i++) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

int lp_steer__stop(struct lp_steer *s)
{
	int ok = 1;

	if (!s)
		return 1;
	/* The producers first: they detach, drain and end their streams;
	 * lp-join then reads both to their end. */
	for (int i = NPROCS - 1; i >= 0; i--) {
		int status = 0;
		if (s->pids[i] <= 0)
			continue;
		if (i != JOIN)
			kill(s->pids[i], SIGINT);
		if (!reap(s->pids[i], 15000, &status)) {
			lp_error("%s (pid %d) did not end in 15 s: killed", names[i], (int)s->pids[i]);
			kill(s->pids[i], SIGKILL);
			waitpid(s->pids[i], &status, 0);
			ok = 0;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			ok = 0;
		}
	}
	/* A command of lp-serve's own ends with it. */
	if (s->cmd > 0) {
		int status;
		kill(s->cmd, SIGTERM);
		if (!reap(s->cmd, 5000, &status)) {
			kill(s->cmd, SIGKILL);
			waitpid(s->cmd, &status, 0);
		}
	}
	for (int i = 0; i < 4; i++)
		unlink(s->path[i]);
	rmdir(s->dir);
	free(s);
	return ok;
}
