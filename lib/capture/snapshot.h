/* snapshot.h - the poor man's profiler done right: every thread's stack
 * without BPF, through ptrace.  Each thread in turn is seized, interrupted,
 * its registers read and the top of its stack copied, and released at once;
 * only then is the copy unwound (DWARF, lib/debuginfo/unwind.h) and symbolized
 * (lib/debuginfo/symbolize.h).  Each sample carries held_ns=, how long that thread was
 * kept stopped.
 *
 *	s = lp_snapshotter__open(&opts, writer);	(writes the header)
 *	lp_snapshotter__take(s);			(one snapshot, all threads)
 *	lp_snapshotter__finish(s);			(lost records, flush)
 *	lp_snapshotter__summary(s);			(one line on stderr)
 *	lp_snapshotter__free(s);
 *
 * or lp_snapshot__run() for the whole -n COUNT -i INTERVAL loop. */
#ifndef LP_SNAPSHOT_H
#define LP_SNAPSHOT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "stream/stream.h"

#define LP_SNAPSHOT_STACK_BYTES 16384

struct lp_snapshot_opts {
	const pid_t *pids;	/* the target processes (all their threads) */
	size_t npids;
	unsigned count;		/* snapshots to take; 0: until stopped */
	int64_t interval_ns;	/* from the start of one snapshot to the next */
	int64_t duration_ns;	/* no snapshot starts later than this; 0: no limit */
	uint32_t stack_bytes;	/* copied from the stack pointer; 0: the default */
	bool inlines, srclines;	/* as lp-record --inline, --srcline */
	bool raw;		/* as lp-record --raw: file addresses and build-ids */
	bool no_demangle;	/* as lp-record --no-demangle */
	int verbose;		/* as lp-record -v: libbpf's messages */
};

struct lp_snapshotter;

/* NULL after reporting on stderr (a write error: errno is set). */
struct lp_snapshotter *lp_snapshotter__open(const struct lp_snapshot_opts *opts,
					    struct lp_writer *w);
/* One snapshot of every thread of every target still alive.  Returns the
 * number of targets still alive (0: all gone), or -1 when the output failed
 * (errno: EPIPE for a closed output). */
int lp_snapshotter__take(struct lp_snapshotter *s);
/* Writes the lost records (incomplete unwinds, threads that could not be
 * stopped) and flushes.  0, or -1 when the output failed. */
int lp_snapshotter__finish(struct lp_snapshotter *s);
/* "lp-record: N snapshots, N stacks, held per thread: ..." on stderr. */
void lp_snapshotter__summary(const struct lp_snapshotter *s);
void lp_snapshotter__free(struct lp_snapshotter *s);

/* Everything lp-record --mode snapshot does between opening its output and
 * closing it: count snapshots (0: until *stop, the duration or the targets'
 * end), interval_ns apart, then the lost records and the summary.  Returns
 * 0; -1 when the output failed (errno; EPIPE: closed); 1 when no thread
 * could be read at all (reported on stderr). */
int lp_snapshot__run(const struct lp_snapshot_opts *opts, struct lp_writer *w,
		     volatile sig_atomic_t *stop);

/* lp-record --mode snapshot from its options: the targets (-p LIST, or
 * argv started and held until the first snapshot can see it), the output
 * (NULL or "-": stdout), then lp_snapshot__run().  Returns lp-record's exit
 * status: 0 (also when stopped by a signal or a closed output), 1 on
 * failure, 2 for a target this mode cannot take (-a). */
int lp_snapshot__record(const struct lp_snapshot_opts *opts, const char *pids,
			char *const argv[], const char *output, volatile sig_atomic_t *stop);

#endif
