/* record-offcpu.c - off-CPU and wall intervals (--mode off and wall): the
 * scheduler's tracepoints attached and detached, the threads already off
 * the CPU seeded, and the intervals still open at the stop closed. */
#include "capture/record/record.h"
#include "capture/record/record-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/types.h>
/* bpf/profile.h by path: lib/model/profile.h is another header. */
#include "bpf/profile.h"
#include "profile.skel.h"
#include "base/util.h"

/* Threads already off the CPU get their interval from now (lp_rec_seed):
 * run the task iterator once, reading it to its end. */
int lp_recorder_seed_intervals(struct lp_recorder *r)
{
	struct bpf_link *link = bpf_program__attach_iter(r->skel->progs.lp_rec_seed, NULL);
	int fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	char buf[64];
	ssize_t n = 0;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (fd < 0 || n < 0) {
		lp_error_errno("cannot run the BPF task iterator");
		if (fd >= 0)
			close(fd);
		bpf_link__destroy(link);
		return -1;
	}
	close(fd);
	bpf_link__destroy(link);
	return 0;
}

/* --mode off and wall: the scheduler's tracepoints, wakeup first (a switch
 * out then always finds its wakeup reported). */
int lp_recorder_attach_sched(struct lp_recorder *r)
{
	r->skel->links.lp_rec_wakeup = bpf_program__attach(r->skel->progs.lp_rec_wakeup);
	if (r->skel->links.lp_rec_wakeup)
		r->skel->links.lp_rec_switch = bpf_program__attach(r->skel->progs.lp_rec_switch);
	if (!r->skel->links.lp_rec_wakeup || !r->skel->links.lp_rec_switch) {
		lp_error_errno("cannot attach to sched_switch and sched_wakeup");
		return -1;
	}
	return 0;
}

void lp_recorder_detach_sched(struct lp_recorder *r)
{
	bpf_link__destroy(r->skel->links.lp_rec_switch);
	bpf_link__destroy(r->skel->links.lp_rec_wakeup);
	r->skel->links.lp_rec_switch = r->skel->links.lp_rec_wakeup = NULL;
}

/* Threads still off the CPU when recording stopped: their intervals end at
 * the stop, so a thread asleep all along still has its wall time. */
/* One interval closed at the stop, with its Python frames (pe, or NULL:
 * none), dated as the kernel would have sent them. */
static void close_interval(struct lp_recorder *r, struct lp_off_sample *o, struct lp_py_event *pe)
{
	if (pe) {
		pe->time_ns = o->ev.time_ns;
		pe->flags = LP_EV_PYTHON;
		lp_recorder_keep_python(r, pe, sizeof(*pe));
	}
	lp_recorder_handle_sample(r, o, sizeof(o->ev) + o->ev.stack_bytes);
}

void lp_recorder_close_intervals(struct lp_recorder *r)
{
	struct lp_off_sample *o = lp_malloc(sizeof(*o));
	struct lp_sample_event *v = &o->ev;
	struct lp_py_event *pe = lp_malloc(sizeof(*pe));
	int fd = bpf_map__fd(r->skel->maps.lp_off), pyfd = bpf_map__fd(r->skel->maps.lp_py_off);
	__u32 key, next, *prev = NULL;

	while (!r->failed && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, o) < 0 || v->time_ns >= (__u64)r->stop_ns)
			continue;
		bool py = r->py && bpf_map_lookup_elem(pyfd, &key, pe) == 0;
		uint64_t end = (uint64_t)r->stop_ns, wake = v->wake_ns;

		if (v->state == LP_STATE_BLOCKED) {
			uint64_t bend = wake && wake < end ? wake : end;

			if (bend - v->time_ns >= r->opts.min_block_ns) {
				v->weight_ns = bend - v->time_ns;
				close_interval(r, o, py ? pe : NULL);
			}
			if (r->opts.mode == LP_RECORD_WALL && wake && wake < end) {
				v->state = LP_STATE_RUNNABLE;
				v->time_ns = wake;
				v->weight_ns = end - wake;
				close_interval(r, o, py ? pe : NULL);
			}
		} else if (r->opts.mode == LP_RECORD_WALL) {
			v->weight_ns = end - v->time_ns;
			close_interval(r, o, py ? pe : NULL);
		}
	}
	free(o);
	free(pe);
}
