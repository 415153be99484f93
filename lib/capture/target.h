/* target.h - the processes a recorder or tracer watches: existing ones named
 * by `-p PID[,PID...]`, or a command it starts itself with `-- CMD ARGS`.
 *
 * A started command is held stopped between fork and exec (the child waits on
 * a pipe), so the caller can attach its probes to the child's pid before the
 * command runs a single instruction, then release it.  Its stdin, stdout and
 * stderr are the caller's.  Probes attached to the pid survive the exec.
 *
 * Typical use:
 *	t = pids ? lp_target__from_pids(pids) : lp_target__spawn(argv);
 *	... attach to lp_target__pids(t, &n) ...
 *	if (lp_target__release(t) < 0) goto fail;	(no-op for -p)
 *	while (lp_target__alive(t)) poll ...
 *	status = lp_target__finish(t);		(stops a command still running)
 *	lp_target__free(t);
 */
#ifndef LP_TARGET_H
#define LP_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

struct lp_target;

/* "1234" or "1234,5678".  NULL after reporting on stderr (lp_error) a bad
 * number ("--pid 'x': not a number") or a process that does not exist
 * or has already exited ("no process with pid 1234"). */
struct lp_target *lp_target__from_pids(const char *list);

/* Forks and holds the child before it execs argv[0] (searched in PATH).
 * NULL after reporting on stderr when the fork fails. */
struct lp_target *lp_target__spawn(char *const argv[]);

/* For a held command that is a #! script (whose programs are known only as
 * it runs: its interpreter, then whatever a shim execs): lets it exec, and
 * stops it at each of its execs (ptrace) to call holds(arg, pid) on the
 * image just exec'd, which has not run an instruction yet: 1 when that is
 * the program the caller wants (its probes attached: the command stays
 * stopped there until lp_target__release), 0 to follow on to its next exec,
 * -1 to give up.  Returns 0 when holds said 1; -1 when it said -1 or the
 * command exited or could not run first (then reaped; "cannot run" said
 * here, the rest is the caller's to say); -2 when *stop was set or
 * deadline_ns (CLOCK_MONOTONIC; 0: none) passed first, the command then
 * running on untraced, for lp_target__finish.  Only the command's own
 * process is followed, not the ones it forks.  Call it once, before
 * lp_target__release. */
int lp_target__run_to_exec(struct lp_target *t, int (*holds)(void *arg, pid_t pid), void *arg,
			   const volatile sig_atomic_t *stop, int64_t deadline_ns);

/* True when process pid is a version manager's shim that has not yet
 * exec'd its program: a shell running a #! script from a shims directory
 * (pyenv's, rbenv's, asdf's, nodenv's .../shims/NAME) or one the shim
 * execs on its way (pyenv's libexec/pyenv and libexec/pyenv-exec, asdf's),
 * the script's path then in script.  lp_target__run_to_exec follows a -p target's execs too
 * (and lets it go on if lp dies). */
bool lp_target__shim(pid_t pid, char *script, size_t size);

/* True when the file at path is a #! script (the kernel runs its
 * interpreter instead). */
bool lp_target__is_script(const char *path);

/* The pids to attach to: the -p list, or the one started command.  The array
 * belongs to the target. */
const pid_t *lp_target__pids(const struct lp_target *t, size_t *n);

/* True for a command started by lp_target__spawn. */
bool lp_target__spawned(const struct lp_target *t);

/* Lets a held command exec.  Returns 0 once it is running the command, -1
 * after reporting "cannot run 'CMD': ENOENT text" (the child is then reaped).
 * After lp_target__run_to_exec: lets it run on from the exec it stopped at,
 * no longer traced.  Does nothing for -p targets.  Call it once. */
int lp_target__release(struct lp_target *t);

/* How many targets are still alive (a -p process that became a zombie counts
 * as gone).  Reaps a started command that has exited, without blocking. */
size_t lp_target__alive(struct lp_target *t);

/* The CPU time process pid has used so far, every thread's, in ns (its
 * process CPU clock); -1 when it is gone. */
int64_t lp_target__cpu_ns(pid_t pid);

/* For a started command: waits for it to exit, first sending SIGTERM when
 * `stop` is set and it is still running (a command never released is killed
 * without running).  Returns its status the way a shell reports it: the exit
 * code, or 128 + the signal that killed it.  Returns 0 for -p targets. */
int lp_target__finish(struct lp_target *t, bool stop);

/* After lp_target__finish: the signal that killed a started command by
 * itself (not lp's SIGTERM or SIGKILL), else 0. */
int lp_target__killed_by(const struct lp_target *t);

/* --max-pids: how many processes a producer's kernel filter (its BPF pid
 * set) holds at once, the targets and the children it follows; a child
 * forked when it is full is not followed, and counted as lost.  Exited
 * processes leave it.  Each entry is about 64 bytes of kernel memory,
 * preallocated (8192: half a MiB); PID_MAX_LIMIT is the most pids there
 * can be. */
#define LP_TARGET_MAX_PIDS 8192
#define LP_TARGET_MAX_PIDS_LIMIT 4194304


/* 0 when the targets fit in a pid set of max_pids entries, else -1 after
 * reporting it ("-p names 3 processes, more than --max-pids 2"). */
int lp_target__check_max_pids(const struct lp_target *t, uint32_t max_pids);

/* The processes now running that descend from pid (children, their
 * children...), from each process's parent in /proc/PID/stat; a malloc'd
 * array of *n pids (NULL when none), the caller's to free. */
pid_t *lp_target__descendants(pid_t pid, size_t *n);

/* Kills (SIGKILL) and reaps a started command that is still there; frees. */
void lp_target__free(struct lp_target *t);

#endif
