/* steer.h - the producers lp-serve starts on a running process (-p PID):
 * lp-record sampling it and lp-trace tracing it, both taking commands
 * through --control FIFOs in a private directory, their streams joined by
 * lp-join into one pipe lp-serve reads.  The page's commands go to
 * lp-trace's FIFO (and inside/outside to lp-record's); what they did comes
 * back in the stream (probe records) and on stderr, where the producers
 * say it. */
#ifndef LP_STEER_H
#define LP_STEER_H

#include <stddef.h>
#include <sys/types.h>

struct lp_steer_opts {
	pid_t pid;
	/* Or a command lp-serve starts, once both producers are on it (they
	 * are given its pid before it execs): NULL-terminated. */
	char *const *cmd;
	const char *freq;	/* lp-record -F, or NULL */
	const char *mode;	/* lp-record --mode (cpu, off, wall), or NULL */
	int verbose;
};

struct lp_steer;

/* Starts them (and the command); *fd: the joined stream's read end.
 * NULL after saying why. */
struct lp_steer *lp_steer__start(const struct lp_steer_opts *o, int *fd);

/* A command from the page: "add PROBE", "remove PROBE" or "status" for
 * lp-trace, "inside FUNC" or "outside" for lp-record.  The HTTP status;
 * *reply says what was done or why not (malloc'd). */
int lp_steer__command(struct lp_steer *s, const char *command, char **reply);

/* What lp-trace's discovery says of the process: what = "list" (a
 * pattern), "lines" or "blocks" (a function) or "vars" (FILE:LINE), arg its operand
 * (never an option).  The HTTP status; *out: lp-trace's output (200) or
 * why not (malloc'd, *len bytes). */
int lp_steer__discover(struct lp_steer *s, const char *what, const char *arg, char **out,
		       size_t *len);

/* Asks the producers to stop (SIGINT: they drain and end their streams)
 * and waits for them, lp-join last; removes the directory.  Whether all
 * ended well. */
int lp_steer__stop(struct lp_steer *s);

#endif
