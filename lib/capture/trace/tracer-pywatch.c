/* tracer-pywatch.c - the tracer's side of python: probes that cost only the
 * calls of the code they name (lib/capture/trace/pywatch.c): each code
 * object the kernel matched armed as it is reported; once every target
 * has one armed and none failed, the eval loop's breakpoints that every
 * call passes (RESUME_QUICK's, RETURN_VALUE's) taken away; a RESUME the
 * interpreter specialized again written back. */
#include "capture/trace/tracer.h"
#include "capture/trace/tracer-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "trace.skel.h"
#include "base/digits.h"
#include "base/util.h"
#include "capture/trace/pywatch.h"
#include "stream/lptext.h"

/* A site of the python: probe every Python call passes. */
static bool every_call(const struct pinfo *pi)
{
	return pi->kind == LP_PROBE_PY && !pi->cal && !pi->removing && !pi->removed && pi->py_every;
}

/* Whether each target has a code object watched. */
static bool all_targets(const struct lp_tracer *t)
{
	for (size_t i = 0; i < t->ntargets; i++)
		if (!lp_pywatch__armed_in(t->pywatch, t->targets[i]))
			return false;
	return true;
}

/* From now on only the watched code objects' calls trap: the sites every
 * call passes go (their links, in a thread), and the kernel opens no span
 * of a code object matched later and not watched (its calls are lost). */
static void watch_only(struct lp_tracer *t)
{
	int ids[8];
	size_t n = 0;
	for (size_t i = 0; i < t->nprobes && n < sizeof(ids) / sizeof(ids[0]); i++)
		if (every_call(&t->probes[i]))
			ids[n++] = (int)i;
	t->skel->bss->py_watch_only = 1;
	t->py_watch_only = true;
	lp_tracer_unlink(t, ids, n);
	if (t->verbose)
		lp_error("python: every code object matched is watched: the eval loop's other breakpoints go");
}

/* The cost record of a watched return of probe (how=clock: timed on
 * lp-trace's own thread), into the stream being written as the first code
 * object is watched: its time tells the spans whose returns were. */
static void write_cost(struct lp_tracer *t, const char *probe)
{
	char buf[32];
	struct lp_cost rec = { .time_ns = lp_monotonic_ns(), .what = "python-return",
			       .ns = (double)t->pywatch_ns };
	lp_attrs_buf__reset(&t->attrs);
	lp_attrs_buf__add(&t->attrs, "probe", probe);
	lp_attrs_buf__add(&t->attrs, "insn", "watchpoint");
	lp_digits_i64(buf, t->pywatch_in_ns);
	lp_attrs_buf__add(&t->attrs, "inside_ns", buf);
	lp_attrs_buf__add(&t->attrs, "how", "clock");
	lp_digits_i64(buf, LP_PYWATCH_CAL_HITS);
	lp_attrs_buf__add(&t->attrs, "n", buf);
	rec.attrs = lp_attrs_buf__attrs(&t->attrs);
	if (t->w && lp_writer__cost(t->w, &rec) < 0 && !t->werr)
		t->werr = errno ? errno : EIO;
}

/* The watches' maker, their cost measured first; false when none can be
 * set (said). */
static bool start(struct lp_tracer *t)
{
	int prog = bpf_program__fd(t->skel->progs.lp_pywatch);
	struct lp_trace_py conf;
	uint32_t zero = 0;
	if (prog < 0 || bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.pyconf), &zero, &conf) < 0)
		return false;
	int64_t inside = 0;
	t->pywatch_ns = lp_pywatch__calibrate(prog, &t->skel->bss->pywatch_cal_tgid,
					      &t->skel->bss->pywatch_cal_ts, &inside);
	if (t->pywatch_ns < 0) {
		lp_error_errno("note: python: no hardware watchpoint: every Python call keeps trapping");
		return false;
	}
	t->pywatch_in_ns = inside;
	t->skel->bss->pywatch_ns = (uint64_t)t->pywatch_ns;
	t->skel->bss->pywatch_in_ns = (uint64_t)inside;
	t->pywatch = lp_pywatch__new(prog, bpf_map__fd(t->skel->maps.pycodes), &conf);
	return t->pywatch != NULL;	/* or not a version pyprobe.c finds watchable */
}

void lp_tracer_py_arm(struct lp_tracer *t, pid_t pid, uint64_t code, const char *name,
		      const char *where)
{
	if (!t->py_watch || (t->py_unwatchable && !t->py_watch_only))
		return;
	if (!t->pywatch && !start(t)) {
		t->py_unwatchable = true;
		return;
	}
	const char *why = "";
	int r = lp_pywatch__arm(t->pywatch, pid, code, &why);
	if (r == 2)
		return;	/* the process has gone */
	if (r == 0) {
		if (!t->pywatch_cost_written) {
			t->pywatch_cost_written = true;
			write_cost(t, name);
		}
		lp_tracer_py_tick(t);
		return;
	}
	if (r > 0 && t->py_watch_only)
		lp_error("note: %s (%s, pid %d) cannot be watched (%s): its calls are not traced, "
			 "counted lost (unwatched)", name, where, (int)pid, why);
	else if (r > 0)
		lp_error("note: %s (%s, pid %d) cannot be watched (%s): every Python call keeps trapping",
			 name, where, (int)pid, why);
	t->py_unwatchable = true;
}

/* Until a code object's RESUME is quickened and written back, the
 * breakpoint every call passes at RESUME_QUICK stays: a function called
 * a few times more than 8 would lose its calls from the 9th on (those of
 * one that always raises, all of them: no return of its asks). */
#define SETTLE_NS 1000000000

void lp_tracer_py_tick(struct lp_tracer *t)
{
	if (t->pywatch && !t->py_watch_only && !t->py_unwatchable &&
	    lp_pywatch__settle(t->pywatch, SETTLE_NS) && all_targets(t))
		watch_only(t);
}

void lp_tracer_py_requicken(struct lp_tracer *t, const struct lp_trace_event *ev)
{
	if (t->pywatch)
		lp_pywatch__requicken(t->pywatch, (pid_t)ev->pid, ev->vals[0]);
}

void lp_tracer_py_forget(struct lp_tracer *t)
{
	t->py_set = false;
	lp_pywatch__free(t->pywatch);
	t->pywatch = NULL;
	t->py_watch = t->py_watch_only = t->py_unwatchable = t->py_unlinked = false;
	if (t->skel && t->skel->bss)
		t->skel->bss->py_watch_only = 0;
}

uint64_t lp_tracer__python_watch_hits(const struct lp_tracer *t, double *ns_each, int *state)
{
	*ns_each = t->pywatch_ns > 0 ? (double)t->pywatch_ns : 0;
	*state = t->py_watch_only && t->py_unlinked ? LP_PYWATCH_ONLY
		 : t->py_watch && !t->py_unwatchable ? LP_PYWATCH_ARMING
						     : LP_PYWATCH_NONE;
	return lp_tracer_counter(t, LP_COUNT_PY_WATCH);
}
