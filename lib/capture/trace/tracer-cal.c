/* tracer-cal.c - the calibration: lp-trace's own programs attached to the
 * calibration functions of this process (or the tracepoint of its
 * getppid(2) calls), the calls timed with and without them, and the
 * costs that gives each probe (in the kernel's settings, in cost
 * records).  Not in tracecal.c, which stays free of libbpf and of the
 * tracer's state: it has the instruction classes, the functions and
 * their timing; the measuring, which attaches probes and reads the
 * ring, is here. */
#include "capture/trace/tracer.h"
#include "capture/trace/tracer-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/trace/tracecal.h"
#include "trace.skel.h"
#include "base/digits.h"
#include "base/util.h"

/* --- what a probe costs, by the calibration's figures ------------------ */

/* What a return probed at an instruction of class cls costs: a uprobe hit
 * there, as a point probe's (calibrated for that class: a ret is
 * single-stepped out of line on 6.18).  Its part inside the span is the
 * breakpoint's trap up to the program's clock read, measured on a ret
 * (lp_tracer__calibrate's RUN_RET_INSN): the step out of line comes after
 * it.  It is not a uretprobe's, whose trampoline is a system call: where
 * exceptions cost more than system calls (a virtual machine whose host
 * handles them), the breakpoint's part is microseconds more. */
static void ret_insn_cost(const struct lp_tracer *t, enum lp_insn entry_cls, enum lp_insn cls,
			  int64_t *ns, int64_t *inside, int64_t *sd, int64_t *n)
{
	const struct cls_cost *c = &t->costs[cls];
	*ns = c->point_done ? c->point : 0;
	*inside = t->costs[entry_cls].insn.done ? t->costs[entry_cls].insn.ret_in : 0;
	if (*inside > *ns)
		*inside = *ns;
	if (sd)
		*sd = c->point_sd;
	if (n)
		*n = (int64_t)c->point_n;
}

/* The calibration's median run of the program of a probe of this kind
 * (half 0: an entry or a point hit, 1: a return), which each hit replaces
 * with its own (bpf/trace.bpf.c, prog_extra); 0 for the kinds whose hits
 * count the calibrated figure alone (USDT, python:). */
static int64_t prog_of(const struct lp_tracer *t, int kind, int half)
{
	switch (kind) {
	case LP_PROBE_ENTRY: return half ? t->prog_ret : t->prog_entry;
	case LP_PROBE_POINT: return half ? 0 : t->prog_point;
	case LP_PROBE_TP: return half ? 0 : t->prog_tp;
	default: return 0;
	}
}

/* The calibrated costs of function probe pi's entry and return. */
const struct pair_cost *lp_tracer_pair_of(const struct lp_tracer *t, const struct pinfo *pi)
{
	const struct cls_cost *c = &t->costs[pi->insn];
	return pi->ret_insn_probed ? &c->insn : &c->uret;
}

/* The calibrated costs of its hits, in the probe's settings for BPF. */
void lp_tracer_set_costs(const struct lp_tracer *t, const struct pinfo *pi,
			 const struct lp_probe_point *pt, struct lp_trace_probe *cfg)
{
	if (t->calibrated && pt->insn != LP_INSN_NONE) {
		const struct cls_cost *c = &t->costs[pt->insn];
		if (pt->cfg.kind == LP_PROBE_ENTRY) {
			const struct pair_cost *pc = lp_tracer_pair_of(t, pi);
			cfg->hit_ns = (unsigned int)pc->entry;
			cfg->hit_inside_ns = (unsigned int)pc->entry_in;
			cfg->ret_ns = (unsigned int)pc->ret;
			cfg->ret_inside_ns = (unsigned int)pc->ret_in;
			if (pi->ret_insn_probed) {
				int64_t rc, rin;
				ret_insn_cost(t, pi->insn, pi->ret_insn, &rc, &rin, NULL, NULL);
				cfg->ret_ns = (unsigned int)rc;
				cfg->ret_inside_ns = (unsigned int)rin;
			}
		} else if (pt->cfg.kind == LP_PROBE_POINT || pt->cfg.kind == LP_PROBE_USDT ||
			   pt->cfg.kind == LP_PROBE_PY) {
			/* A python: site is a point probe's hit: its span's
			 * own start and return are outside it. */
			cfg->hit_ns = (unsigned int)c->point;
		}
	}
	if (t->calibrated && pt->cfg.kind == LP_PROBE_TP)
		cfg->hit_ns = (unsigned int)t->tp_cost;
	if (t->calibrated && (pt->insn != LP_INSN_NONE || pt->cfg.kind == LP_PROBE_TP))
		for (int half = 0; half < 2; half++)
			cfg->prog_ns[half] = (unsigned int)prog_of(t, (int)pt->cfg.kind, half);
}

/* --- calibration ------------------------------------------------------ */

/* Calls per timed run at most, and at least when the budget is short. */
#define CAL_MAX_CALLS 5000
#define CAL_MIN_CALLS 200
#define CAL_BASE_CALLS 2000	/* unprobed calls per class */
#define CAL_WARM_CALLS 32	/* untimed: the first hits map pages, optimise nops */
#define CAL_ROUNDS 8		/* runs interleaved, so that a noisy moment is shared */

/* A calibration probe: an entry in the probe table whose records
 * handle_event keeps in cal_spans instead of writing. */
static uint32_t cal_probe(struct lp_tracer *t, unsigned int kind)
{
	uint32_t id = (uint32_t)t->nprobes;
	t->probes = lp_reallocarray(t->probes, t->nprobes + 1, sizeof(*t->probes));
	struct pinfo *pi = &t->probes[t->nprobes++];
	memset(pi, 0, sizeof(*pi));
	pi->name = lp_strdup("[calibration]");
	pi->kind = (int)kind;
	pi->cal = true;
	struct lp_trace_probe cfg = { .kind = kind, .flags = LP_PROBE_F_CAL };
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY);
	return id;
}

/* The calibration's own spans, kept for lp_tracer__calibrate. */
void lp_tracer_keep_cal_span(struct lp_tracer *t, const struct lp_trace_event *ev)
{
	if (ev->type != LP_EV_SPAN)
		return;
	if (t->ncal == t->calcap) {
		t->calcap = t->calcap ? 2 * t->calcap : 1024;
		t->cal_spans = lp_reallocarray(t->cal_spans, t->calcap, sizeof(*t->cal_spans));
	}
	t->cal_spans[t->ncal][0] = (int64_t)ev->start;
	t->cal_spans[t->ncal++][1] = (int64_t)ev->end;
}

/* The mean run of calibration probe id's programs ([0] entries and point
 * hits, [1] returns), or old when they ran none.  A mean, as the hit's
 * costs: a span sums its hits. */
static int64_t cal_prog_mean(const struct lp_tracer *t, uint32_t id, int half, int64_t old)
{
	struct lp_trace_probe cfg;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg) < 0)
		return old;
	uint64_t n = cfg.prog_runs[half], sum = cfg.prog_sum[half];
	return n ? (int64_t)((double)sum / (double)n + 0.5) : old;
}

/* Calibration probe id's program runs so far forgotten (the warming
 * up's).  No hit runs meanwhile: the calibration's thread is here. */
static void cal_prog_forget(const struct lp_tracer *t, uint32_t id)
{
	struct lp_trace_probe cfg;
	int fd = bpf_map__fd(t->skel->maps.probes);
	if (bpf_map_lookup_elem(fd, &id, &cfg) < 0)
		return;
	memset(cfg.prog_sum, 0, sizeof(cfg.prog_sum));
	memset(cfg.prog_runs, 0, sizeof(cfg.prog_runs));
	bpf_map_update_elem(fd, &id, &cfg, BPF_ANY);
}

/* The kinds of timed run, one calibration function copy each: unprobed,
 * an entry and return (uretprobe) pair, a point probe, an entry and its
 * return probed at the function's ret. */
enum { RUN_BASE, RUN_PAIR, RUN_POINT, RUN_RET_INSN, NRUNS };

struct cal_run {
	lp_tracecal_fn fn;
	size_t n, done;		/* calls to time, timed */
	int64_t *dur, *pre;	/* a call, and its part before the clock read inside */
	int64_t *stamp;		/* pairs: that read */
	/* Pairs: per call of a chunk whose spans all arrived, the span, and
	 * its parts before and after the function's clock read. */
	int64_t *span, *ein, *rin;
	size_t nin;
};

/* Attaches prog at code, a calibration function or its ret, with cookie
 * (a return probe when ret). */
static int cal_attach(struct lp_tracer *t, struct bpf_program *prog, const void *code,
		      uint64_t cookie, bool ret)
{
	char path[4096];
	uint64_t off;
	if (lp_tracecal__locate(code, path, sizeof(path), &off) < 0) {
		lp_error("cannot calibrate: no file mapped at the calibration functions");
		return -1;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, getpid(), path, off, &uo);
	if (!l) {
		lp_error_errno("cannot calibrate: cannot attach to %s at offset 0x%llx", path,
			       (unsigned long long)off);
		return -1;
	}
	t->cal_links = lp_reallocarray(t->cal_links, t->ncal_links + 1, sizeof(*t->cal_links));
	t->cal_links[t->ncal_links++] = l;
	return 0;
}

/* Times m more calls of run r; a pair run's spans are read after them. */
static void cal_block(struct lp_tracer *t, struct cal_run *r, int kind, size_t m)
{
	if (r->done + m > r->n)
		m = r->n - r->done;
	if (!m)
		return;
	t->ncal = 0;
	lp_tracecal__time(r->fn, m, r->dur + r->done, r->pre + r->done,
			  r->stamp ? r->stamp + r->done : NULL);
	if (kind != RUN_BASE)
		ring_buffer__consume(t->rb);
	if (r->stamp && t->ncal == m)
		for (size_t i = 0; i < m; i++) {
			int64_t s = t->cal_spans[i][0], e = t->cal_spans[i][1];
			int64_t in = r->stamp[r->done + i];
			r->span[r->nin] = e - s;
			r->ein[r->nin] = in - s;
			r->rin[r->nin++] = e - in;
		}
	r->done += m;
}

/* The mean of v[0..n) less base, at least 0, and v's deviation. */
static int64_t cal_less(int64_t *v, size_t n, int64_t base, int64_t *sd)
{
	int64_t mean = lp_tracecal__mean(v, n);
	*sd = lp_tracecal__sd(v, n);
	return mean > base ? mean - base : 0;
}

/* Destroying a uprobe link waits for grace periods, one link after the
 * other (~0.1 to 0.7 s each here, longer while a target makes many
 * calls): the calibration's links are destroyed by a thread of their own,
 * while tracing starts; lp_tracer__free joins it. */
static void *cal_destroy(void *arg)
{
	struct lp_tracer *t = arg;
	for (size_t i = 0; i < t->ncal_links; i++)
		bpf_link__destroy(t->cal_links[i]);
	return NULL;
}

void lp_tracer_cal_join(struct lp_tracer *t)
{
	if (!t->cal_threaded)
		return;
	pthread_join(t->cal_thread, NULL);
	t->cal_threaded = false;
	t->ncal_links = 0;	/* destroyed */
}

static void cal_release(struct lp_tracer *t)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* signals are the main thread's */
	if (pthread_create(&t->cal_thread, NULL, cal_destroy, t) == 0) {
		t->cal_threaded = true;
	} else {
		cal_destroy(t);
		t->ncal_links = 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A tracepoint probe's hit: lp_tp on syscalls:sys_enter_getppid, this
 * process in the filter so that it does all its work (a record of the
 * largest size it copies), around getppid(2) calls timed against as many
 * unprobed ones before and after.  Within budget_ns. */
static int cal_tracepoint(struct lp_tracer *t, int64_t budget_ns)
{
	int64_t t0 = lp_monotonic_ns();
	uint32_t id = cal_probe(t, LP_PROBE_TP);
	struct lp_trace_probe cfg = { .kind = LP_PROBE_TP, .flags = LP_PROBE_F_CAL,
				      .tp_size = LP_TRACE_TP_MAX };
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY);
	size_t n = CAL_MAX_CALLS;
	int64_t *base = lp_calloc(2 * n, sizeof(*base)), *dur = lp_calloc(n, sizeof(*dur));
	lp_tracecal__time(lp_tracecal__getppid, n, base, NULL, NULL);
	uint32_t self = (uint32_t)getpid();
	uint8_t one = 1;
	int ret = -1;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tgids), &self, &one, BPF_ANY) < 0) {
		lp_error_errno("cannot calibrate tracepoints: cannot add lp-trace to the filter");
		goto out;
	}
	LIBBPF_OPTS(bpf_tracepoint_opts, to, .bpf_cookie = id);
	struct bpf_link *l = bpf_program__attach_tracepoint_opts(t->skel->progs.lp_tp, "syscalls",
								 "sys_enter_getppid", &to);
	if (!l) {
		lp_error_errno("cannot calibrate tracepoints: cannot attach to syscalls:sys_enter_getppid");
		bpf_map_delete_elem(bpf_map__fd(t->skel->maps.tgids), &self);
		goto out;
	}
	size_t done = 0, chunk = t->ring_bytes / 4 / (sizeof(struct lp_trace_event_tp) + 8);
	while (done < n && (done == 0 || lp_monotonic_ns() - t0 < budget_ns)) {
		size_t m = n - done < chunk ? n - done : chunk;
		lp_tracecal__time(lp_tracecal__getppid, m, dur + done, NULL, NULL);
		ring_buffer__consume(t->rb);
		done += m;
	}
	bpf_link__destroy(l);
	bpf_map_delete_elem(bpf_map__fd(t->skel->maps.tgids), &self);
	t->prog_tp = cal_prog_mean(t, id, 0, t->prog_tp);
	lp_tracecal__time(lp_tracecal__getppid, n, base + n, NULL, NULL);
	int64_t sd;
	t->tp_cost = cal_less(dur, done, lp_tracecal__mean(base, 2 * n), &sd);
	t->tp_sd = sd;
	t->tp_n = done;
	t->tp_done = true;
	ret = 0;
out:
	free(base);
	free(dur);
	return ret;
}

/* The calibration's probes on the functions of the classes asked for: a
 * pair (the return first, as attach_uprobes does), a point probe, and a
 * pair whose return is probed at the function's ret. */
static int cal_attach_runs(struct lp_tracer *t, struct cal_run (*runs)[NRUNS],
			   const struct lp_cal_needs *need, uint32_t entry_id, uint32_t point_id)
{
	for (int k = LP_INSN_NOP; k < LP_INSN_N; k++) {
		bool entry = need->entry & (1u << k), point = need->point & (1u << k);
		bool ret_insn = need->ret_insn & (1u << k);
		if (!entry && !point && !ret_insn)
			continue;
		for (int r = 0; r < NRUNS; r++)
			runs[k][r].fn = lp_tracecal__fn((enum lp_insn)k, r);
		runs[k][RUN_BASE].n = CAL_BASE_CALLS;
		struct cal_run *pair = &runs[k][RUN_PAIR], *ri = &runs[k][RUN_RET_INSN];
		if (entry && (cal_attach(t, t->skel->progs.lp_return, (const void *)pair->fn, entry_id, true) < 0 ||
			      cal_attach(t, t->skel->progs.lp_entry, (const void *)pair->fn, entry_id, false) < 0))
			return -1;
		if (point && cal_attach(t, t->skel->progs.lp_point, (const void *)runs[k][RUN_POINT].fn,
					point_id, false) < 0)
			return -1;
		const char *ret = lp_tracecal__ret((enum lp_insn)k, RUN_RET_INSN);
		uint64_t cookie = LP_RET_COOKIE(entry_id, LP_RET_INSN, 0, ret - (const char *)(const void *)ri->fn);
		if (ret_insn && (cal_attach(t, t->skel->progs.lp_return, ret, cookie, false) < 0 ||
				 cal_attach(t, t->skel->progs.lp_entry, (const void *)ri->fn, entry_id, false) < 0))
			return -1;
		pair->n = entry;
		runs[k][RUN_POINT].n = point;
		ri->n = ret_insn;
	}
	return 0;
}

/* Warms each function up, then sizes the runs by what their calls cost:
 * the nruns runs together within what is left of the budget. */
static void cal_size_runs(struct lp_tracer *t, struct cal_run (*runs)[NRUNS], int nruns,
			  int64_t t0, int64_t budget_ns)
{
	int64_t scratch[CAL_WARM_CALLS];
	int64_t per[LP_INSN_N][NRUNS] = { { 0 } };
	for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
		for (int r = 0; r < NRUNS; r++)
			if (runs[k][r].n) {
				lp_tracecal__time(runs[k][r].fn, CAL_WARM_CALLS, scratch, NULL, NULL);
				int64_t w0 = lp_monotonic_ns();
				lp_tracecal__time(runs[k][r].fn, CAL_WARM_CALLS, scratch, NULL, NULL);
				per[k][r] = (lp_monotonic_ns() - w0) / CAL_WARM_CALLS;
			}
	ring_buffer__consume(t->rb);
	int64_t share = (budget_ns - (lp_monotonic_ns() - t0)) / nruns;
	for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
		for (int r = 0; r < NRUNS; r++) {
			struct cal_run *run = &runs[k][r];
			if (!run->n)
				continue;
			if (r != RUN_BASE) {
				int64_t n = per[k][r] > 0 ? share / per[k][r] : CAL_MAX_CALLS;
				run->n = (size_t)(n < CAL_MIN_CALLS ? CAL_MIN_CALLS
					       : n > CAL_MAX_CALLS ? CAL_MAX_CALLS : n);
			}
			run->dur = lp_calloc(run->n, sizeof(*run->dur));
			run->pre = lp_calloc(run->n, sizeof(*run->pre));
			if (r == RUN_PAIR || r == RUN_RET_INSN) {
				run->stamp = lp_calloc(run->n, sizeof(*run->stamp));
				run->span = lp_calloc(3 * run->n, sizeof(*run->span));
				run->ein = run->span + run->n;
				run->rin = run->span + 2 * run->n;
			}
		}
}

/* Interleaved rounds; a pair round in chunks the ring holds (a chunk that
 * lost a span is not used for the inside: its spans no longer match the
 * calls in order).  The calls were sized by what they cost warm and alone;
 * a busy machine stretches them (other processes' time slices count in a
 * run's length, not in its median): the rounds stop at the budget. */
static void cal_rounds(struct lp_tracer *t, struct cal_run (*runs)[NRUNS], int64_t t0,
		       int64_t budget_ns)
{
	size_t chunk = t->ring_bytes / 4 / 128;
	for (int round = 0; round < CAL_ROUNDS; round++) {
		if (round > 0 && lp_monotonic_ns() - t0 > budget_ns)
			break;
		for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
			for (int r = 0; r < NRUNS; r++) {
				struct cal_run *run = &runs[k][r];
				size_t m = (run->n + CAL_ROUNDS - 1) / CAL_ROUNDS;
				while (run->n && m > 0) {
					size_t c = run->stamp && chunk && m > chunk ? chunk : m;
					cal_block(t, run, r, c);
					m -= c;
				}
			}
	}
}

/* A pair run's figures: an entry and a return as the caller sees them,
 * and the part of each inside the span.  base_pre, base_post: the
 * unprobed call's parts before and after its clock read; body: what a
 * span of it holds besides the probes. */
static void cal_pair_costs(struct pair_cost *c, struct cal_run *p, int64_t base_pre,
			   int64_t base_post, int64_t body)
{
	int64_t sd;
	/* The entry hit delays the function's clock read as its caller sees
	 * it, the return hit the caller's read after the call. */
	for (size_t i = 0; i < p->done; i++)
		p->dur[i] -= p->pre[i];	/* before cal_less sorts p->pre */
	c->entry = cal_less(p->pre, p->done, base_pre, &c->entry_sd);
	c->ret = cal_less(p->dur, p->done, base_post, &sd);
	c->ret_sd = sd;
	c->n = p->done;
	c->done = true;
	if (!p->nin)
		return;
	/* An empty function's span is what the probes put inside it: the
	 * span less the function's body (the clock read).  The read splits it
	 * between entry and return, in proportion. */
	int64_t inside = lp_tracecal__median(p->span, p->nin) - body;
	int64_t e = lp_tracecal__median(p->ein, p->nin), r = lp_tracecal__median(p->rin, p->nin);
	if (inside < 0)
		inside = 0;
	c->entry_in = e + r > 0 ? (int64_t)((double)inside * (double)e / (double)(e + r) + 0.5) : 0;
	c->ret_in = inside - c->entry_in;
	if (c->entry_in > c->entry)
		c->entry_in = c->entry;
	if (c->ret_in > c->ret)
		c->ret_in = c->ret;
}

/* One class's costs from its runs.  `empty`: an empty function's call. */
static void cal_class_costs(struct cls_cost *c, struct cal_run *run, int64_t empty)
{
	struct cal_run *b = &run[RUN_BASE];
	if (!b->n)
		return;
	/* The function's call, and its parts before and after its clock
	 * read, on average as the costs are; its body as a span's median
	 * holds it.  A mean or median sorts its array: each call's parts are
	 * paired before any is taken. */
	int64_t *post = lp_calloc(b->done ? b->done : 1, sizeof(*post));
	for (size_t i = 0; i < b->done; i++)
		post[i] = b->dur[i] - b->pre[i];
	int64_t base_post = lp_tracecal__mean(post, b->done);
	free(post);
	int64_t base_pre = lp_tracecal__mean(b->pre, b->done);
	int64_t base = lp_tracecal__mean(b->dur, b->done);
	int64_t base_median = lp_tracecal__median(b->dur, b->done);
	int64_t body = base_median > empty ? base_median - empty : 0;
	if (run[RUN_POINT].n) {
		c->point = cal_less(run[RUN_POINT].dur, run[RUN_POINT].done, base, &c->point_sd);
		c->point_n = run[RUN_POINT].done;
		c->point_done = true;
	}
	if (run[RUN_PAIR].n)
		cal_pair_costs(&c->uret, &run[RUN_PAIR], base_pre, base_post, body);
	if (run[RUN_RET_INSN].n)
		cal_pair_costs(&c->insn, &run[RUN_RET_INSN], base_pre, base_post, body);
}

bool lp_tracer__uncalibrated(const struct lp_tracer *t, struct lp_cal_needs *need)
{
	for (int k = 0; k < LP_INSN_N; k++) {
		if (t->costs[k].uret.done)
			need->entry &= ~(1u << k);
		if (t->costs[k].point_done)
			need->point &= ~(1u << k);
		if (t->costs[k].insn.done)
			need->ret_insn &= ~(1u << k);
	}
	if (t->tp_done)
		need->tracepoints = false;
	return need->entry || need->point || need->ret_insn || need->tracepoints;
}

int lp_tracer__calibrate(struct lp_tracer *t, const struct lp_cal_needs *need, int64_t budget_ns)
{
	/* Again while tracing (a probe of a class not measured yet): the
	 * last calibration's links gone first. */
	lp_tracer_cal_join(t);
	free(t->cal_links);
	t->cal_links = NULL;
	t->ncal_links = 0;
	int64_t t0 = lp_monotonic_ns();
	int nruns = 0;
	for (int c = LP_INSN_NOP; c < LP_INSN_N; c++) {
		nruns += !!(need->entry & (1u << c)) + !!(need->point & (1u << c)) +
			 !!(need->ret_insn & (1u << c));
	}
	if ((!nruns && !need->tracepoints) || budget_ns <= 0)
		return 0;
	if (need->tracepoints) {
		/* Its share of the budget, as one run of the others. */
		int64_t share = budget_ns / (nruns + 1);
		if (cal_tracepoint(t, share) < 0)
			return -1;
		budget_ns -= lp_monotonic_ns() - t0;
		t0 = lp_monotonic_ns();
		if (!nruns) {
			t->calibrated = true;
			t->cal_time = t0;
			return 0;
		}
	}
	struct cal_run runs[LP_INSN_N][NRUNS];
	memset(runs, 0, sizeof(runs));
	int ret = -1;
	uint32_t entry_id = cal_probe(t, LP_PROBE_ENTRY), point_id = cal_probe(t, LP_PROBE_POINT);
	if (cal_attach_runs(t, runs, need, entry_id, point_id) == 0) {
		cal_size_runs(t, runs, nruns, t0, budget_ns);
		cal_prog_forget(t, entry_id);
		cal_prog_forget(t, point_id);
		cal_rounds(t, runs, t0, budget_ns);
		t->prog_entry = cal_prog_mean(t, entry_id, 0, t->prog_entry);
		t->prog_ret = cal_prog_mean(t, entry_id, 1, t->prog_ret);
		t->prog_point = cal_prog_mean(t, point_id, 0, t->prog_point);
		/* The function's body: what a span of it holds besides the
		 * probes. */
		int64_t *tmp = lp_calloc(CAL_BASE_CALLS, sizeof(*tmp));
		lp_tracecal__time(lp_tracecal__empty, CAL_BASE_CALLS, tmp, NULL, NULL);
		int64_t empty = lp_tracecal__median(tmp, CAL_BASE_CALLS);
		free(tmp);
		for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
			cal_class_costs(&t->costs[k], runs[k], empty);
		t->calibrated = true;
		t->cal_time = lp_monotonic_ns();
		ret = 0;
		if (t->verbose)
			lp_error("calibrated in %.1f ms", (double)(t->cal_time - t0) / 1e6);
	}
	cal_release(t);
	ring_buffer__consume(t->rb);
	/* This thread's calls are not the target's: its stack goes, and the
	 * lost counts restart here. */
	uint64_t tid = (uint32_t)syscall(SYS_gettid);
	bpf_map_delete_elem(bpf_map__fd(t->skel->maps.stacks), &tid);
	/* While tracing, the counts go on (the runs are sized to fit the
	 * ring: the target's losses are the only ones). */
	if (!t->w)
		lp_tracer_lost_baseline(t);
	for (int k = 0; k < LP_INSN_N; k++)
		for (int r = 0; r < NRUNS; r++) {
			free(runs[k][r].dur);
			free(runs[k][r].pre);
			free(runs[k][r].stamp);
			free(runs[k][r].span);
		}
	return ret;
}

void lp_tracer__classes(const struct lp_probe_point *points, size_t n, struct lp_cal_needs *need)
{
	for (size_t i = 0; i < n; i++) {
		const struct lp_probe_point *pt = &points[i];
		/* A return probed at an instruction costs a point probe's hit
		 * of that instruction's class. */
		if (pt->cfg.kind == LP_PROBE_ENTRY && pt->returns == LP_RETURNS_INSN) {
			need->ret_insn |= 1u << pt->insn;
			if (pt->ret_insn != LP_INSN_NONE)
				need->point |= 1u << pt->ret_insn;
			/* A uretprobe per call until its program loads a
			 * library that can throw (lib/capture/trace/dlgate.h). */
			if (pt->dl_gate)
				need->entry |= 1u << pt->insn;
		} else if (pt->cfg.kind == LP_PROBE_ENTRY)
			need->entry |= 1u << pt->insn;
		else if (pt->cfg.kind == LP_PROBE_POINT || pt->cfg.kind == LP_PROBE_USDT ||
			   pt->cfg.kind == LP_PROBE_PY)
			need->point |= 1u << pt->insn;
		else if (pt->cfg.kind == LP_PROBE_TP)
			need->tracepoints = true;
	}
}

/* Records of the probes' costs: a function probe's entry and return, a
 * point probe's hit, once per name and class. */
int lp_tracer__write_costs(struct lp_tracer *t, struct lp_writer *w)
{
	return lp_tracer__write_costs_from(t, w, 0);
}

/* Probe i's cost records (an entry and a return, or a hit), at time_ns. */
int lp_tracer_write_probe_costs(struct lp_tracer *t, struct lp_writer *w, size_t i, int64_t time_ns)
{
	const struct pinfo *pi = &t->probes[i];
	const struct cls_cost *c = &t->costs[pi->insn];
	for (int h = 0; h < (pi->kind == LP_PROBE_ENTRY ? 2 : 1); h++) {
		char buf[32];
		struct lp_cost rec = { .time_ns = time_ns };
		int64_t inside = 0, sd, n;
		if (pi->kind == LP_PROBE_TP) {
			rec.what = "tracepoint";
			rec.ns = (double)t->tp_cost;
			sd = t->tp_sd;
			n = (int64_t)t->tp_n;
		} else if (pi->kind == LP_PROBE_POINT || pi->kind == LP_PROBE_USDT ||
			   pi->kind == LP_PROBE_PY) {
			rec.what = pi->kind == LP_PROBE_USDT ? "usdt"
				   : pi->kind == LP_PROBE_PY ? "python" : "line";
			rec.ns = (double)c->point;
			sd = c->point_sd;
			n = (int64_t)c->point_n;
		} else if (h == 0) {
			rec.what = "entry";
			rec.ns = (double)lp_tracer_pair_of(t, pi)->entry;
			inside = lp_tracer_pair_of(t, pi)->entry_in;
			sd = lp_tracer_pair_of(t, pi)->entry_sd;
			n = (int64_t)lp_tracer_pair_of(t, pi)->n;
		} else if (pi->ret_insn_probed) {
			int64_t ns;
			rec.what = "return";
			ret_insn_cost(t, pi->insn, pi->ret_insn, &ns, &inside, &sd, &n);
			rec.ns = (double)ns;
		} else {
			rec.what = "return";
			rec.ns = (double)c->uret.ret;
			inside = c->uret.ret_in;
			sd = c->uret.ret_sd;
			n = (int64_t)c->uret.n;
		}
		lp_attrs_buf__reset(&t->attrs);
		lp_attrs_buf__add(&t->attrs, "probe", pi->name);
		if (pi->kind == LP_PROBE_ENTRY) {
			lp_digits_i64(buf, inside);
			lp_attrs_buf__add(&t->attrs, "inside_ns", buf);
		}
		if (pi->kind == LP_PROBE_ENTRY && h == 1)
			lp_attrs_buf__add(&t->attrs, "returns",
					  pi->ret_insn_probed ? "insn" : "uretprobe");
		if (pi->kind == LP_PROBE_ENTRY && h == 1 && pi->ret_insn_probed)
			lp_attrs_buf__add(&t->attrs, "insn", lp_insn__name(pi->ret_insn));
		else if (pi->insn != LP_INSN_NONE)
			lp_attrs_buf__add(&t->attrs, "insn", lp_insn__name(pi->insn));
		int64_t prog = prog_of(t, pi->kind, h);
		if (prog > 0) {
			lp_digits_i64(buf, prog);
			lp_attrs_buf__add(&t->attrs, "prog_ns", buf);
		}
		lp_digits_i64(buf, sd);
		lp_attrs_buf__add(&t->attrs, "sd_ns", buf);
		lp_digits_i64(buf, n);
		lp_attrs_buf__add(&t->attrs, "n", buf);
		rec.attrs = lp_attrs_buf__attrs(&t->attrs);
		if (lp_writer__cost(w, &rec) < 0)
			return -1;
	}
	return 0;
}

int lp_tracer__write_costs_from(struct lp_tracer *t, struct lp_writer *w, int first)
{
	if (!t->calibrated)
		return 0;
	for (size_t i = (size_t)first; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->cal || (pi->kind == LP_PROBE_TP ? !t->tp_done : pi->insn == LP_INSN_NONE) ||
		    (pi->kind != LP_PROBE_ENTRY && pi->kind != LP_PROBE_POINT && pi->kind != LP_PROBE_TP &&
		     pi->kind != LP_PROBE_USDT && pi->kind != LP_PROBE_PY))
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !t->probes[j].cal && t->probes[j].insn == pi->insn &&
			       t->probes[j].kind == pi->kind && !strcmp(t->probes[j].name, pi->name) &&
			       t->probes[j].ret_insn_probed == pi->ret_insn_probed;
		if (seen)
			continue;
		if (lp_tracer_write_probe_costs(t, w, i, t->cal_time) < 0)
			return -1;
	}
	return 0;
}
