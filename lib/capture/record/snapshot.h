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
 *	lp_snapshotter__counts(s, buf, size);		(the summary's counts)
 *	lp_snapshotter__notes(s);			(lines after them)
 *	lp_snapshotter__free(s);
 *
 * or lp_snapshotter__poll in lib/capture/producer.h's loop, for lp-record's
 * -n COUNT -i INTERVAL. */
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
	uint32_t stack_bytes;	/* copied from the stack pointer; 0: the default */
	bool inlines, srclines;	/* as lp-record --inline, --srcline */
	bool raw;		/* as lp-record --raw: file addresses and build-ids */
	bool no_demangle;	/* as lp-record --no-demangle */
	bool no_python;		/* as lp-record --no-python */
	int verbose;		/* as lp-record -v: libbpf's messages */
	uint64_t stack_memory;	/* as lp-record --stack-memory; 0: LP_STACK_MEMORY */
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
/* The summary's counts: "N snapshots, N stacks, held per thread: ...". */
void lp_snapshotter__counts(const struct lp_snapshotter *s, char *buf, size_t size);
/* The lines after the summary on stderr: return addresses uretprobes took. */
void lp_snapshotter__notes(const struct lp_snapshotter *s);
void lp_snapshotter__free(struct lp_snapshotter *s);

/* A producer's poll (lib/capture/producer.h): takes the first snapshot at
 * once, each next one interval_ns after the one before, sleeping up to
 * timeout_ms for it.  0; -1 when the output failed (errno; EPIPE:
 * closed); -2 when the first snapshot could read no thread (reported);
 * LP_PRODUCER_DONE once count snapshots are taken. */
int lp_snapshotter__poll(struct lp_snapshotter *s, int timeout_ms);

#endif
