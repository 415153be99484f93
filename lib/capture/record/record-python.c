/* record-python.c - Python frames merged into stacks: CPython processes
 * found and handed to the sampler to walk, each thread's Python record kept
 * for its sample and merged into its stack (lib/capture/python.h), and the
 * frames of threads seeded asleep walked from here. */
#include "capture/record/record.h"
#include "capture/record/record-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
/* bpf/profile.h by path: lib/model/profile.h is another header. */
#include "bpf/profile.h"
#include "base/hashmap.h"
#include "profile.skel.h"
#include "capture/python.h"
#include "base/util.h"

/* A process exec'd or is gone: what the sampler and the resolver knew of
 * its interpreter goes. */
void lp_recorder_forget_python(struct lp_recorder *r, pid_t pid)
{
	__u32 key = pid;

	if (!r->py)
		return;
	lp_python__forget(r->py, pid);
	bpf_map__delete_elem(r->skel->maps.lp_py, &key, sizeof(key), 0);
}

/* The first sample of a process (since its exec): when it runs a CPython
 * lp knows, the sampler walks its Python frames from then on. */
void lp_recorder_check_python(struct lp_recorder *r, pid_t pid)
{
	struct lp_py_proc proc;
	__u32 key = pid;

	if (!r->py || !lp_python__check(r->py, pid, &proc))
		return;
	if (bpf_map__update_elem(r->skel->maps.lp_py, &key, sizeof(key), &proc, sizeof(proc),
				 BPF_ANY) < 0)
		lp_error_errno("pid %d: cannot have its Python frames walked", (int)pid);
}

/* Every few seconds: Python processes that have exited leave the map. */
void lp_recorder_reap_python(struct lp_recorder *r)
{
	size_t n = 0;
	const pid_t *pids = r->py ? lp_python__pids(r->py, &n) : NULL;

	for (size_t i = n; pids && i-- > 0;)
		if (kill(pids[i], 0) < 0 && errno == ESRCH)
			lp_recorder_forget_python(r, pids[i]);
}

/* A thread's Python record, kept for its sample (one buffer a thread,
 * reused). */
void lp_recorder_keep_python(struct lp_recorder *r, const struct lp_py_event *pe, size_t size)
{
	uint64_t key = lp_hashmap__key((uint64_t)pe->tid + 1);
	struct lp_py_event *kept = lp_hashmap__get(&r->py_ev, key);

	if (!kept) {
		kept = lp_malloc(sizeof(*kept));
		lp_hashmap__put(&r->py_ev, key, kept);
	}
	memcpy(kept, pe, size < sizeof(*kept) ? size : sizeof(*kept));
}

/* The Python record sent just before this sample of its thread, with its
 * time, if any: taken, so it serves one sample. */
const struct lp_py_event *lp_recorder_python_of(struct lp_recorder *r,
						const struct lp_sample_event *ev)
{
	struct lp_py_event *pe = r->py ? lp_hashmap__get(&r->py_ev, lp_hashmap__key((uint64_t)ev->tid + 1))
				       : NULL;

	if (!pe || pe->time_ns != ev->time_ns || !(pe->flags & LP_EV_PYTHON))
		return NULL;
	pe->flags = 0;
	return pe;
}

/* The user frames r->frames[0, *n) of a sample whose Python frames are
 * pe's, with the Python frames in (lib/capture/python.h). */
void lp_recorder_python_frames(struct lp_recorder *r, const struct lp_sample_event *ev,
			       const struct lp_py_event *pe, size_t *n)
{
	*n = lp_python__merge(r->py, ev->pid, pe, r->frames, *n, r->py_frames);
	memcpy(r->frames, r->py_frames, *n * sizeof(*r->frames));
}

/* The Python frames of the threads seeded asleep (lp_rec_seed, which reads
 * another task's memory only as a sleepable program, where the kernel's
 * walk does not run): walked from here, while they sleep, for their
 * intervals.  A thread that switched since has its own, which stays; one
 * woken meanwhile leaves an entry its next switch replaces. */
void lp_recorder_seed_python(struct lp_recorder *r)
{
	int fd = bpf_map__fd(r->skel->maps.lp_off), pyfd = bpf_map__fd(r->skel->maps.lp_py_off);
	struct lp_off_sample *o;
	struct lp_py_event *pe;
	__u32 key, next, *prev = NULL;

	if (!r->py)
		return;
	o = lp_malloc(sizeof(*o));
	pe = lp_malloc(sizeof(*pe));
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, o) < 0 || (o->ev.flags & LP_EV_KERNEL_THREAD))
			continue;
		lp_recorder_check_python(r, o->ev.pid);
		if (lp_python__walk(r->py, o->ev.pid, key, pe) == 0)
			bpf_map_update_elem(pyfd, &key, pe, BPF_NOEXIST);
	}
	free(o);
	free(pe);
}
