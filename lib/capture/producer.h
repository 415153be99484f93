/* producer.h - the shell lp-record and lp-trace share: how they are
 * stopped (signals, -d, the end of their targets, a closed output), how
 * they start a command, how they end, with which message and which exit
 * status.  The program brings its engine as callbacks; the shell owns the
 * rest, so the two cannot drift apart.
 *
 *	st = lp_producer__open(&p, &opts);	(signals; -p checked, CMD found)
 *	if (st) return st;
 *	... resolve what to attach (lp_producer__command_exe) ...
 *	out = lp_producer__output(p);		(-o, close-on-exec)
 *	lp_producer__spawn(p);			(CMD held before exec)
 *	... load, attach to lp_target__pids(lp_producer__target(p)) ...
 *	if ((st = lp_producer__release(p))) return lp_producer__abort(p, st);
 *	st = lp_producer__run(p, &ops, engine);	(polls, drains, sums up, ends CMD)
 *	... free the engine ...
 *	lp_producer__free(p);
 *	return st;
 *
 * Exit statuses (both man pages, EXIT STATUS):
 *	0	stopped by -d, SIGINT/SIGTERM, the end of the targets or a closed
 *		output (no message of its own: a reader gone is no failure)
 *	1	a failure (reported): an output error, a failed ring
 *	127	-- CMD could not be started ("cannot run 'CMD': ...", as a shell)
 *	N	-- CMD exited by itself with status N
 *	128+N	-- CMD killed by signal N, not lp's ("CMD killed by signal N
 *		(NAME)"); SIGINT, SIGTERM and SIGPIPE ask a program to stop:
 *		said (not when the producer was stopped by a signal too, as
 *		Ctrl-C stops both) and 0
 * A second SIGINT or SIGTERM kills the producer at once (base/stop.h).
 */
#ifndef LP_PRODUCER_H
#define LP_PRODUCER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/target.h"

struct lp_producer_opts {
	const char *output;	/* -o; NULL or "-": stdout */
	int64_t duration_ns;	/* -d; 0: until stopped */
	/* The longest wait for the engine between two looks at the stop
	 * flag, the deadline, the output and the targets. */
	int poll_ms;
	const char *pids;	/* -p PID[,PID...], or NULL */
	char *const *cmd;	/* -- CMD ARG..., or NULL */
	uint32_t max_pids;	/* --max-pids: -p may name no more */
	int verbose;		/* -v: the command's exit status is said */
	const char *control;	/* --control FIFO (capture/control.h), or NULL */
};

/* The engine's side of the loop, each called with arg. */
struct lp_producer_ops {
	/* Optional: once, after the command is released, before the first
	 * poll (a header).  As poll. */
	int (*begin)(void *arg);
	/* Waits up to timeout_ms for data and writes it: >= 0, -1 when the
	 * output failed (errno; EPIPE: closed), -2 on a failure reported,
	 * LP_PRODUCER_DONE when the engine has taken all it was asked for
	 * (lp-record --mode snapshot --count). */
	int (*poll)(void *arg, int timeout_ms);
	/* Stops, drains, writes the rest and the lost counts: 0, or -1 when
	 * the output failed (errno). */
	int (*finish)(void *arg);
	/* The summary's counts into buf ("N samples (...), N lost ..."),
	 * written as one line "lp-X: COUNTS (WHY IT STOPPED)"; 0 when there
	 * is nothing worth saying. */
	int (*counts)(void *arg, char *buf, size_t size);
	/* Optional: lines after the summary. */
	void (*notes)(void *arg);
	/* With --control: one command line (trimmed, not empty), between
	 * two polls.  Replies and complaints go to stderr; a bad command
	 * changes nothing and is no failure.  As poll (-1: the output
	 * failed, -2: a failure reported, which ends the run). */
	int (*command)(void *arg, char *line);
};

#define LP_PRODUCER_DONE (-3)

struct lp_producer;

/* Installs the signal handling (SIGPIPE ignored: a closed output is an
 * EPIPE, handled as a stop; SIGINT/SIGTERM: base/stop.h) and checks the
 * targets: -p's processes exist and fit --max-pids, -- CMD's program is
 * found in PATH; opens --control's FIFO.  0 with *pp set, or the exit
 * status after reporting why: 1 (-p, --control), 2 (--max-pids), 127
 * (CMD). */
int lp_producer__open(struct lp_producer **pp, const struct lp_producer_opts *o);

/* -- CMD's executable as execvp will find it (a real path); NULL for -p. */
const char *lp_producer__command_exe(const struct lp_producer *p);

/* Starts -- CMD held before its exec (target.h); once; 0, or 1 after
 * reporting why.  Nothing for -p. */
int lp_producer__spawn(struct lp_producer *p);

/* The targets (NULL before lp_producer__spawn for a command). */
struct lp_target *lp_producer__target(struct lp_producer *p);

/* The output, opened at the first call (exits 1 when it cannot be);
 * close-on-exec, so a started command never holds a pipe of ours open. */
FILE *lp_producer__output(struct lp_producer *p);

/* Lets a held command run: 0, or 127 after "cannot run 'CMD': ...". */
int lp_producer__release(struct lp_producer *p);

/* For a held #! command (lp_target__run_to_exec): follows its execs until
 * holds says 1, bounded by -d and the stop signals.  As run_to_exec; on
 * -2 it has said why ("stopped (Interrupt) before 'CMD' ran a program
 * that holds the probes: nothing traced") and ended the command. */
int lp_producer__run_to_exec(struct lp_producer *p, int (*holds)(void *arg, pid_t pid),
			     void *arg);

/* The loop: polls the engine until a stop signal, -d, the end of every
 * target, a closed output or a failure; then finishes the engine (not
 * after a closed output or a failure: nothing would read it), writes the
 * summary, ends a command still running (SIGTERM), closes the output.
 * Returns the exit status (above). */
int lp_producer__run(struct lp_producer *p, const struct lp_producer_ops *ops, void *arg);

/* For a setup that failed before lp_producer__run: frees p (a held
 * command is killed, never run) and returns status, or 0 when the setup
 * failed on a closed output (errno EPIPE on entry: a stop, not a
 * failure). */
int lp_producer__abort(struct lp_producer *p, int status);

/* Kills and reaps a command still there (a held one never runs), closes a
 * named output; accepts NULL.  After lp_producer__run, or instead of it
 * (lp_producer__abort). */
void lp_producer__free(struct lp_producer *p);

/* NULL when this process may load BPF programs and open perf events on
 * every CPU (root, or CAP_BPF and CAP_PERFMON); else what it lacks, as
 * "root, or CAP_BPF and CAP_PERFMON (missing: ...)". */
const char *lp_producer__bpf_missing(void);

#endif
