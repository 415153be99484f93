/* perfrec.h - lp-record's perf-event backend: sampling through perf events
 * alone, no BPF, so an ordinary user can sample their own processes
 * (kernel.perf_event_paranoid <= 2).  libperf (built from Debian's kernel
 * source) opens the events and reads their rings; each sample is handed on
 * in the BPF sampler's own form (bpf/profile.h's struct lp_sample_event,
 * the user stack copy after it), so lib/capture/record/record-stack.c unwinds,
 * symbolizes and writes it as it does the BPF sampler's.
 *
 *	p = lp_perfrec__open(&opts, fn, ctx);	(opened disabled)
 *	lp_perfrec__enable(p, true);
 *	while (...) lp_perfrec__poll(p, 100);	(fn(ctx, event, size) for each)
 *	lp_perfrec__enable(p, false);
 *	lp_perfrec__poll(p, 0);			(the rest)
 *	lp_perfrec__free(p);
 *
 * What it cannot do, which the BPF sampler does: off-CPU intervals (a
 * switch record has no stack), Python frames (read in the kernel at the
 * sample), --inside, and stack copies that grow per thread.  Without
 * privileges the kernel takes no sample while a thread runs in the kernel
 * (lp_perfrec__user_only). */
#ifndef LP_PERFREC_H
#define LP_PERFREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lp_perfrec_opts {
	/* Processes, every thread of each (and with inherit, the threads
	 * and, when follow, the children they start later); npids 0 and tid
	 * 0: the whole system. */
	const pid_t *pids;
	size_t npids;
	pid_t tid;		/* > 0: this one thread, no other (calibration) */
	bool follow;		/* children processes too */
	unsigned freq;		/* samples per second of a thread's CPU time */
	bool kernel;		/* kernel callchains */
	uint32_t stack_bytes;	/* user stack copied per sample; 0: none */
	uint32_t stack_depth;	/* callchain entries, at most */
	size_t ring_bytes;	/* per CPU; 0: 1 MiB, 8 MiB with copies */
	int verbose;		/* libperf's messages */
};

struct lp_perfrec;

/* fn's return: 0 goes on, < 0 stops reading (the output failed). */
typedef int (*lp_perfrec_fn)(void *ctx, void *event, size_t size);

/* NULL after saying why on stderr (errno kept: EACCES, EPERM when the
 * kernel refused the events). */
struct lp_perfrec *lp_perfrec__open(const struct lp_perfrec_opts *o, lp_perfrec_fn fn, void *ctx);
/* "cycles" with a hardware PMU, else "cpu-clock". */
const char *lp_perfrec__event(const struct lp_perfrec *p);
/* The kernel takes samples in user space only (no privilege to sample in
 * the kernel): time a thread spends in system calls is not seen. */
bool lp_perfrec__user_only(const struct lp_perfrec *p);
void lp_perfrec__enable(struct lp_perfrec *p, bool on);
/* Waits up to timeout_ms for samples, then hands on all there are.  0, or
 * the first negative return of fn. */
int lp_perfrec__poll(struct lp_perfrec *p, int timeout_ms);
/* Samples the kernel lost (its ring full), and times it throttled the
 * sampling rate, so far. */
uint64_t lp_perfrec__lost(const struct lp_perfrec *p);
uint64_t lp_perfrec__throttled(const struct lp_perfrec *p);
void lp_perfrec__free(struct lp_perfrec *p);

#endif
