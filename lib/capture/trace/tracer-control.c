/* tracer-control.c - probes that come and go while tracing (lp-trace
 * --control): finding them by name, their attach and detach records,
 * their links destroyed by a thread of their own while the ring is
 * drained. */
#include "capture/trace/tracer.h"
#include "capture/trace/tracer-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.skel.h"
#include "base/digits.h"
#include "base/util.h"

int lp_tracer__find(const struct lp_tracer *t, const char *text, int **ids)
{
	int n = 0;
	*ids = NULL;
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->cal || pi->removing || pi->removed ||
		    (strcmp(pi->spec, text) && strcmp(pi->name, text)))
			continue;
		*ids = lp_reallocarray(*ids, (size_t)n + 1, sizeof(**ids));
		(*ids)[n++] = (int)i;
	}
	return n;
}

/* Writes a probe record for each name among ids (a probe resolved in
 * several targets has one id in each, one name): an attach once, a detach
 * only of a probe whose attach was written (not of one taken back when
 * its add failed).  open: the calls in progress, per id (a detach). */
static int write_marks(struct lp_tracer *t, struct lp_writer *w, const int *ids, size_t n,
		       const char *action, int64_t time_ns, const uint64_t *open)
{
	/* An attach is written once its links are all in place: from then
	 * on every hit is seen (TIME is before the first went in, so no
	 * span of the probe starts before it). */
	int64_t ready = open ? 0 : lp_monotonic_ns();
	bool *say = lp_calloc(n ? n : 1, sizeof(*say));
	int ret = 0;
	for (size_t i = 0; i < n; i++)
		say[i] = open ? t->probes[ids[i]].marked : !t->probes[ids[i]].marked;
	for (size_t i = 0; i < n && ret == 0; i++) {
		struct pinfo *pi = &t->probes[ids[i]];
		bool seen = !say[i];
		for (size_t j = 0; j < i && !seen; j++)
			seen = say[j] && !strcmp(t->probes[ids[j]].name, pi->name);
		if (seen)
			continue;
		uint64_t sum = 0;
		for (size_t j = i; open && j < n; j++)
			if (say[j] && !strcmp(t->probes[ids[j]].name, pi->name))
				sum += open[j];
		char buf[24];
		lp_attrs_buf__reset(&t->attrs);
		lp_attrs_buf__add(&t->attrs, "spec", pi->spec);
		if (open) {
			lp_digits_u64(buf, sum);
			lp_attrs_buf__add(&t->attrs, "open", buf);
		} else {
			lp_digits_u64(buf, (uint64_t)ready);
			lp_attrs_buf__add(&t->attrs, "ready", buf);
		}
		struct lp_probe_mark m = { .time_ns = time_ns, .action = action, .probe = pi->name,
					   .attrs = lp_attrs_buf__attrs(&t->attrs) };
		ret = lp_writer__probe(w, &m);
	}
	for (size_t i = 0; i < n && !open; i++)
		t->probes[ids[i]].marked = true;
	free(say);
	return ret < 0 ? -1 : 0;
}

int lp_tracer__write_attached(struct lp_tracer *t, struct lp_writer *w, const int *ids, size_t n)
{
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (t->probes[ids[i]].attached_ns < first)
			first = t->probes[ids[i]].attached_ns;
	return n ? write_marks(t, w, ids, n, "attach", first, NULL) : 0;
}

/* Moves what serves probe id out of the arrays a[0..*n) (owner[i] its
 * probe) into out; the order of the rest kept. */
#define TAKE_OWNED(a, owner, n, out, nout, id)						\
	do {										\
		size_t k_ = 0;								\
		for (size_t i_ = 0; i_ < (n); i_++) {					\
			if ((owner)[i_] == (id)) {					\
				(out) = lp_reallocarray((out), (nout) + 1, sizeof(*(out)));	\
				(out)[(nout)++] = (a)[i_];				\
				continue;						\
			}								\
			(a)[k_] = (a)[i_];						\
			(owner)[k_++] = (owner)[i_];					\
		}									\
		(n) = k_;								\
	} while (0)

static void *removal_main(void *arg)
{
	struct removal_job *r = arg;
	/* In the reverse of the order attach_uprobes made them, one after
	 * the other: the entry goes before the return, so that a call
	 * entered while the probe was there returns through it. */
	/* Stamped as the entry begins to go (the kernel may stop calling it
	 * any time before the close returns, which waits for grace periods):
	 * a call seen ending later is dropped (pinfo.late), none is missed
	 * before the stamp. */
	__atomic_store_n(&r->gone_ns, lp_monotonic_ns(), __ATOMIC_RELEASE);
	for (size_t i = r->nmfds; i-- > 0;)
		close(r->fds[i]);
	for (size_t i = r->nlinks; i-- > 0;)
		bpf_link__destroy(r->links[i]);
	for (size_t i = r->nmfds; i < r->nfds; i++)
		close(r->fds[i]);
	for (size_t i = 0; i < r->ntevs; i++) {
		char cmd[128];
		int patience = 1000;
		snprintf(cmd, sizeof(cmd), "-:%s/%s\n", r->group, r->tevs[i].name);
		while (lp_tracer_tfs_write(cmd) < 0 && errno == EBUSY && patience > 0) {
			usleep(20000);
			patience -= 20;
		}
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Probes ids' links, uprobe-multi links, inherited perf events and
 * tracefs events, taken from the tracer into job r. */
static void take_links(struct lp_tracer *t, struct removal_job *r, const int *ids, size_t n)
{
	snprintf(r->group, sizeof(r->group), "%s", t->tfs_group);
	for (size_t k = 0; k < n; k++) {
		TAKE_OWNED(t->links, t->link_owner, t->nlinks, r->links, r->nlinks, ids[k]);
		TAKE_OWNED(t->mfds, t->mfd_owner, t->nmfds, r->fds, r->nfds, ids[k]);
	}
	r->nmfds = r->nfds;
	for (size_t k = 0; k < n; k++) {
		TAKE_OWNED(t->tfds, t->tfd_owner, t->ntfds, r->fds, r->nfds, ids[k]);
		size_t keep = 0;
		for (size_t i = 0; i < t->ntevs; i++) {
			if (t->tevs[i].probe == (uint32_t)ids[k]) {
				r->tevs = lp_reallocarray(r->tevs, r->ntevs + 1, sizeof(*r->tevs));
				r->tevs[r->ntevs++] = t->tevs[i];
			} else {
				t->tevs[keep++] = t->tevs[i];
			}
		}
		t->ntevs = keep;
	}
}

/* Job r's links going in a thread of their own (signals are the main
 * thread's), the removal kept until they are gone. */
static void start_removal(struct lp_tracer *t, struct removal_job *r, const int *ids, size_t n,
			  bool quiet)
{
	t->removals = lp_reallocarray(t->removals, t->nremovals + 1, sizeof(*t->removals));
	struct removal *rp = &t->removals[t->nremovals++];
	*rp = (struct removal){ .ids = lp_calloc(n ? n : 1, sizeof(*ids)), .nids = n, .job = r,
				.quiet = quiet, .begun_ns = lp_monotonic_ns() };
	memcpy(rp->ids, ids, n * sizeof(*ids));
	rp->threaded = lp_thread_start(&rp->thread, removal_main, r) == 0;
	if (!rp->threaded)
		removal_main(r);
}

int lp_tracer__remove(struct lp_tracer *t, const int *ids, size_t n)
{
	struct removal_job *r = lp_calloc(1, sizeof(*r));
	for (size_t k = 0; k < n; k++) {
		int id = ids[k];
		struct pinfo *pi = &t->probes[id];
		pi->removing = true;
		pi->job = r;
		if (pi->kind == LP_PROBE_SYSCALL) {
			/* The raw tracepoints stay (other syscall: probes share
			 * them): the number leaves the table they look up. */
			uint32_t nr = (uint32_t)pi->sysnr;
			bpf_map_delete_elem(bpf_map__fd(t->skel->maps.sysnrs), &nr);
		}
		if (pi->kind == LP_PROBE_PY)
			lp_tracer_py_forget(t);	/* another python: probe may come */
	}
	take_links(t, r, ids, n);
	start_removal(t, r, ids, n, false);
	return 0;
}

int lp_tracer_unlink(struct lp_tracer *t, const int *ids, size_t n)
{
	/* Each in a thread of its own: perf-event uprobes wait for grace
	 * periods of their own, ~150 ms each here. */
	for (size_t k = 0; k < n; k++) {
		struct removal_job *r = lp_calloc(1, sizeof(*r));
		take_links(t, r, ids + k, 1);
		start_removal(t, r, ids + k, 1, true);
		t->unlinking++;
	}
	return 0;
}

/* Waits for a removal's thread, and frees what it worked on. */
void lp_tracer_free_removal_job(struct removal *r)
{
	if (r->threaded)
		pthread_join(r->thread, NULL);
	free(r->job->links);
	free(r->job->fds);
	free(r->job->tevs);
	free(r->job);
	r->job = NULL;
}

/* The calls of probe ids still open in the stacks of map fd (function
 * probes', python: probes'), counted into open[]. */
static void count_open(struct lp_tracer *t, int fd, const int *ids, size_t n, uint64_t *open)
{
	struct lp_trace_stack *st = lp_malloc(sizeof(*st));
	uint64_t key, next, *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, st) != 0)
			continue;
		for (uint32_t d = 0; d < st->depth && d < LP_TRACE_MAX_DEPTH; d++)
			for (size_t i = 0; i < n; i++)
				open[i] += st->frames[d].probe == (uint32_t)ids[i];
	}
	free(st);
	/* A system call in progress. */
	int sfd = bpf_map__fd(t->skel->maps.sysin);
	uint32_t skey, snext, *sprev = NULL;
	while (fd == bpf_map__fd(t->skel->maps.stacks) &&
	       bpf_map_get_next_key(sfd, sprev, &snext) == 0) {
		skey = snext;
		sprev = &skey;
		struct lp_trace_sysin in;
		if (bpf_map_lookup_elem(sfd, &skey, &in) != 0)
			continue;
		for (size_t i = 0; i < n; i++)
			open[i] += in.probe == (uint32_t)ids[i];
	}
}

/* A removal whose links are gone: what the ring holds written, the calls
 * still open counted (and from now on dropped: their durations would be
 * cut short), the detach records written.  -1 when the output failed. */
static int end_removal(struct lp_tracer *t, struct lp_writer *w, struct removal *r)
{
	if (r->quiet) {
		lp_tracer_free_removal_job(r);
		free(r->ids);
		/* Only python: probes' links go so (tracer-pywatch.c). */
		t->py_unlinked = --t->unlinking == 0;
		if (t->verbose)
			lp_error("note: links taken away (a probe kept) in %.0f ms",
				 (double)(lp_monotonic_ns() - r->begun_ns) / 1e6);
		return 0;
	}
	if (r->threaded)
		pthread_join(r->thread, NULL);
	r->threaded = false;
	t->w = w;
	ring_buffer__consume(t->rb);
	int64_t now = r->job->gone_ns;
	uint64_t *open = lp_calloc(r->nids, sizeof(*open));
	for (size_t i = 0; i < r->nids; i++) {
		struct pinfo *pi = &t->probes[r->ids[i]];
		pi->removed = true;
		pi->job = NULL;
		open[i] = pi->late;
	}
	lp_tracer_free_removal_job(r);
	count_open(t, bpf_map__fd(t->skel->maps.stacks), r->ids, r->nids, open);
	count_open(t, bpf_map__fd(t->skel->maps.pystacks), r->ids, r->nids, open);
	uint64_t sum = 0;
	for (size_t i = 0; i < r->nids; i++)
		sum += open[i];
	int ret = t->werr ? -1 : write_marks(t, w, r->ids, r->nids, "detach", now, open);
	/* Not said of a probe taken back when its add failed. */
	bool said = t->probes[r->ids[0]].marked;
	if (said && sum)
		lp_error("control: removed '%s' (%" PRIu64 " calls in progress dropped)",
			 t->probes[r->ids[0]].spec, sum);
	else if (said)
		lp_error("control: removed '%s'", t->probes[r->ids[0]].spec);
	free(open);
	free(r->ids);
	if (t->werr)
		errno = t->werr;
	return ret;
}

/* The removals whose links are gone (all of them when wait), ended. */
int lp_tracer_end_removals(struct lp_tracer *t, struct lp_writer *w, bool wait)
{
	int ret = 0;
	for (size_t i = 0; i < t->nremovals;) {
		struct removal *r = &t->removals[i];
		if (!wait && !__atomic_load_n(&r->job->done, __ATOMIC_ACQUIRE)) {
			i++;
			continue;
		}
		if (end_removal(t, w, r) < 0)
			ret = -1;
		memmove(r, r + 1, (t->nremovals - i - 1) * sizeof(*r));
		t->nremovals--;
	}
	return ret;
}

void lp_tracer__status(const struct lp_tracer *t)
{
	int64_t now = lp_monotonic_ns();
	size_t shown = 0;
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->cal || pi->removed)
			continue;
		lp_error("status: probe '%s' (%s): %" PRIu64 " records, attached %.1f s ago%s",
			 pi->name, pi->spec, pi->hits, (double)(now - pi->attached_ns) / 1e9,
			 pi->removing ? ", being removed" : "");
		shown++;
	}
	if (!shown)
		lp_error("status: no probe attached");
}
