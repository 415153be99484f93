/* tracer-records.c - lp-trace's records: spans and events from the ring,
 * their attributes (captured values, tracepoint fields, system call
 * arguments, python: code objects' names, nspid=), and the calls still
 * open when tracing ends. */
#include "capture/trace/tracer-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <event-parse.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/trace/keyed.h"
#include "capture/trace/pyprobe.h"
#include "debuginfo/procns.h"
#include "stream/stream.h"
#include "trace.skel.h"
#include "base/digits.h"
#include "base/util.h"

uint64_t lp_tracer_pid_key(pid_t pid)
{
	return lp_hashmap__key((uint64_t)(uint32_t)pid + 1);
}

/* A process in a pid namespace of its own (a container): its pid there,
 * nspid=, beside the host's.  Read once per pid (a forked child's again:
 * its pid may be one the kernel gave out before). */
static void add_nspid(struct lp_tracer *t, pid_t pid)
{
	uintptr_t v = (uintptr_t)lp_hashmap__get(&t->nspids, lp_tracer_pid_key(pid));
	char buf[16];

	if (!v) {
		v = (uintptr_t)(uint32_t)lp_procns__nspid(pid) + 1;
		lp_hashmap__put(&t->nspids, lp_tracer_pid_key(pid), (void *)v);
	}
	if (v - 1 && (pid_t)(v - 1) != pid) {
		snprintf(buf, sizeof(buf), "%d", (int)(v - 1));
		lp_attrs_buf__add(&t->attrs, "nspid", buf);
	}
}

/* Numbers by hand: printf was most of the reader's time per record.
 * buf holds at least 24 bytes. */
/* buf holds LP_TRACE_STR_MAX + 32 bytes. */
static void format_value(char *buf, const struct lp_probe_value *v, uint64_t raw, const char *str)
{
	uint64_t mask = v->size >= 8 ? UINT64_MAX : (1ULL << (8 * v->size)) - 1;
	uint64_t u = raw & mask;
	switch (v->type) {
	case LP_VAL_INT:
	case LP_VAL_CHAR: {
		int64_t s = (int64_t)u;
		if (v->size < 8 && (u >> (8 * v->size - 1)) & 1)
			s = (int64_t)(u | ~mask);
		lp_digits_i64(buf, s);
		break;
	}
	case LP_VAL_UINT:
	case LP_VAL_BOOL:
		lp_digits_u64(buf, u);
		break;
	case LP_VAL_PTR:
		lp_digits_hex(buf, u);
		break;
	case LP_VAL_STR:
		if (!raw)
			strcpy(buf, "(null)");
		else if (str && !str[0] && str[LP_TRACE_STR_MAX - 1] == 1)
			strcpy(buf, "(unreadable)");	/* its page was not in memory */
		else
			snprintf(buf, LP_TRACE_STR_MAX + 32, "%.*s", LP_TRACE_STR_MAX - 1, str ? str : "");
		break;
	}
}

static void values_attrs(struct lp_tracer *t, const struct pinfo *pi, const unsigned long long *vals,
			 const char (*strs)[LP_TRACE_STR_MAX])
{
	char buf[LP_TRACE_STR_MAX + 32];
	for (size_t i = 0; i < pi->nvals; i++) {
		const char *s = pi->str[i] && strs ? strs[pi->str[i] - 1] : NULL;
		format_value(buf, &pi->vals[i], vals[i], s);
		lp_attrs_buf__add(&t->attrs, pi->vals[i].name, buf);
	}
}

void lp_tracer_tp_attrs(struct lp_tracer *t, const struct pinfo *pi, const unsigned char *data,
			unsigned int size)
{
	char buf[LP_TRACE_TP_MAX + 32];
	for (struct tep_format_field *f = pi->tep_event->format.fields; f; f = f->next) {
		if ((unsigned int)(f->offset + f->size) > size)
			break;
		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			unsigned long long loc;
			if (tep_read_number_field(f, data, &loc) != 0)
				continue;
			unsigned int off = loc & 0xffff, len = (unsigned int)(loc >> 16) & 0xffff;
			if (f->flags & TEP_FIELD_IS_RELATIVE)
				off += (unsigned int)(f->offset + f->size);
			if (off >= size)
				len = 0;
			else if (off + len > size)
				len = size - off;
			snprintf(buf, sizeof(buf), "%.*s", (int)len, off < size ? (const char *)data + off : "");
		} else if ((f->flags & TEP_FIELD_IS_ARRAY) && strstr(f->type, "char")) {
			snprintf(buf, sizeof(buf), "%.*s", f->size, (const char *)data + f->offset);
		} else if (f->flags & TEP_FIELD_IS_ARRAY) {
			continue;
		} else {
			unsigned long long v;
			if (tep_read_number_field(f, data, &v) != 0)
				continue;
			if (f->flags & TEP_FIELD_IS_POINTER)
				snprintf(buf, sizeof(buf), "0x%llx", v);
			else if (f->flags & TEP_FIELD_IS_SIGNED) {
				long long s = (long long)v;
				if (f->size < 8 && (v >> (8 * f->size - 1)) & 1)
					s = (long long)(v | ~((1ULL << (8 * f->size)) - 1));
				snprintf(buf, sizeof(buf), "%lld", s);
			} else
				snprintf(buf, sizeof(buf), "%llu", v);
		}
		lp_attrs_buf__add(&t->attrs, f->name, buf);
	}
}

void lp_tracer_syscall_attrs(struct lp_tracer *t, const struct pinfo *pi,
			     const unsigned long long *vals)
{
	char buf[LP_TRACE_STR_MAX + 32];
	for (int i = 0; i < 6; i++) {
		if (pi->nargs && i >= pi->nargs)
			break;
		char key[40];
		if (pi->nargs)
			snprintf(key, sizeof(key), "%s", pi->argnames[i]);
		else
			snprintf(key, sizeof(key), "arg%d", i);
		if (!pi->nargs || pi->argptr[i])
			lp_digits_hex(buf, vals[i]);
		else if (pi->argint[i])	/* an int: AT_FDCWD is -100 */
			lp_digits_i64(buf, (int)vals[i]);
		else
			lp_digits_i64(buf, (int64_t)vals[i]);
		lp_attrs_buf__add(&t->attrs, key, buf);
	}
}

/* A USDT pair's span counts the USDT hits inside it (usdt_open in
 * bpf/trace.bpf.c), not those of other uprobes or tracepoints: with any of
 * those traced too, its lp_ns is not known. */
static bool usdt_lp_known(const struct lp_tracer *t)
{
	for (size_t i = 0; i < t->nprobes; i++) {
		int k = t->probes[i].kind;

		if (!t->probes[i].cal && (k == LP_PROBE_ENTRY || k == LP_PROBE_POINT || k == LP_PROBE_TP ||
					  k == LP_PROBE_PY))
			return false;
	}
	return true;
}

/* A function or line probe's attributes: its captured values, the return
 * value, lp's own cost inside, how the call ended. */
void lp_tracer_probe_attrs(struct lp_tracer *t, const struct pinfo *pi,
			   const struct lp_trace_event *ev, const void *data, size_t size)
{
	char buf[64];
	const char(*strs)[LP_TRACE_STR_MAX] = NULL;
	if (size >= sizeof(struct lp_trace_event_strs))
		strs = ((const struct lp_trace_event_strs *)data)->strs;
	values_attrs(t, pi, ev->vals, strs);
	if (ev->type != LP_EV_SPAN)
		return;
	/* A call left unreturned has no value; a tail call's is its callee's,
	 * not yet known at the jmp. */
	if (pi->has_ret && !(ev->flags & (LP_SPAN_F_UNWOUND | LP_SPAN_F_TAIL))) {
		format_value(buf, &pi->ret, ev->ret, NULL);
		lp_attrs_buf__add(&t->attrs, "ret", buf);
	}
	if (t->calibrated && (pi->kind != LP_PROBE_USDT || usdt_lp_known(t))) {
		lp_digits_u64(buf, ev->lp_ns);
		lp_attrs_buf__add(&t->attrs, "lp_ns", buf);
	}
	if (ev->flags & LP_SPAN_F_TAIL)
		lp_attrs_buf__add(&t->attrs, "tail", "1");
	if (ev->flags & LP_SPAN_F_UNWOUND)
		lp_attrs_buf__add(&t->attrs, "unwound", "1");
	if (pi->copy)
		lp_attrs_buf__add(&t->attrs, "copy", pi->copy);
}

static uint64_t pycode_key(pid_t pid, uint64_t code)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &pid, sizeof(pid));
	return lp_hashmap__key(lp_hash_bytes(h, &code, sizeof(code)));
}

static struct pycode *find_pycode(const struct lp_tracer *t, pid_t pid, uint64_t code)
{
	size_t pos = 0;
	struct pycode *c;
	while ((c = lp_hashmap__next(&t->pycodes, pycode_key(pid, code), &pos)))
		if (c->pid == pid && c->code == code)
			return c;
	return NULL;
}

/* A code object a python: probe matched: its names, for its spans (a
 * code object freed and another made at its address matched again); or
 * one whose name matched and module did not: where, for the summary. */
void lp_tracer_on_pycode(struct lp_tracer *t, const struct lp_trace_event_py *e, size_t size)
{
	pid_t pid = (pid_t)e->ev.pid;
	/* The record is as long as the characters it carries. */
	size_t nb = (size_t)(e->name_len < LP_PY_NAME_MAX ? e->name_len : LP_PY_NAME_MAX) * e->name_kind;
	size_t fb = (size_t)(e->file_len < LP_PY_FILE_MAX ? e->file_len : LP_PY_FILE_MAX) * e->file_kind;
	if (size < offsetof(struct lp_trace_event_py, chars) + nb + fb)
		return;
	char *name = lp_pyprobe__str(e->name_kind, e->name_len, e->chars, LP_PY_NAME_MAX, false);
	char *file = lp_pyprobe__str(e->file_kind, e->file_len, e->chars + nb, LP_PY_FILE_MAX, true);
	if (!e->ev.vals[2] || !name) {
		if (!t->py_elsewhere && file)
			t->py_elsewhere = lp_strdup(file);
		free(name);
		free(file);
		return;
	}
	struct pycode *c = find_pycode(t, pid, e->ev.vals[0]);
	if (!c) {
		c = lp_calloc(1, sizeof(*c));
		c->pid = pid;
		c->code = e->ev.vals[0];
		lp_hashmap__add(&t->pycodes, pycode_key(pid, c->code), c);
	}
	free(c->probe);
	free(c->file);
	c->probe = lp_malloc(strlen(name) + 8);
	strcpy(c->probe, "python:");
	strcat(c->probe, name);
	c->file = file && *file ? file : lp_strdup("-");
	if (c->file != file)
		free(file);
	free(name);
	lp_digits_i64(c->line, (int64_t)e->ev.vals[1]);
	t->py_matched++;
	char where[600];
	snprintf(where, sizeof(where), "%s:%s", c->file, c->line);
	lp_tracer_py_arm(t, pid, c->code, c->probe, where);
}

/* The record of a span (functions, system calls) or a point event, with
 * the attributes made for it; -1 when the output failed. */
int lp_tracer_write_event(struct lp_tracer *t, const struct pinfo *pi,
			  const struct lp_trace_event *ev)
{
	int r;
	add_nspid(t, (pid_t)ev->pid);
	if (t->keyed && lp_keyed__record(t->keyed, pi->spec, (int32_t)ev->pid,
					      (int32_t)ev->tid, (int64_t)ev->start,
					      ev->type == LP_EV_POINT ? (int64_t)ev->start
								      : (int64_t)ev->end,
					      &t->attrs, t->w) < 0) {
		t->werr = errno ? errno : EIO;
		return -1;
	}
	if (ev->type == LP_EV_SPAN || ev->type == LP_EV_SYSCALL) {
		/* A python: span is named by its function. */
		const struct pycode *c = pi->kind == LP_PROBE_PY
						 ? find_pycode(t, (pid_t)ev->pid, ev->vals[0]) : NULL;
		struct lp_span s = {
			.start_ns = (int64_t)ev->start, .end_ns = (int64_t)ev->end,
			.pid = (int32_t)ev->pid, .tid = (int32_t)ev->tid,
			.probe = c ? c->probe : pi->name,
			.depth = (int32_t)ev->depth, .attrs = lp_attrs_buf__attrs(&t->attrs),
		};
		r = lp_writer__span(t->w, &s);
	} else {
		struct lp_event e = {
			.time_ns = (int64_t)ev->start, .pid = (int32_t)ev->pid,
			.tid = (int32_t)ev->tid, .probe = pi->name,
			.attrs = lp_attrs_buf__attrs(&t->attrs),
		};
		r = lp_writer__event(t->w, &e);
	}
	if (r < 0) {
		t->werr = errno ? errno : EIO;
		return -1;
	}
	t->count++;
	return 0;
}

/* A python: span's attributes: its function's file and first line, lp's
 * cost inside, whether an exception left it. */
void lp_tracer_py_attrs(struct lp_tracer *t, const struct lp_trace_event *ev)
{
	const struct pycode *c = find_pycode(t, (pid_t)ev->pid, ev->vals[0]);
	char buf[24];
	if (c) {
		lp_attrs_buf__add(&t->attrs, "file", c->file);
		lp_attrs_buf__add(&t->attrs, "line", c->line);
	}
	if (t->calibrated) {
		lp_digits_u64(buf, ev->lp_ns);
		lp_attrs_buf__add(&t->attrs, "lp_ns", buf);
	}
	if (ev->flags & LP_SPAN_F_UNWOUND)
		lp_attrs_buf__add(&t->attrs, "unwound", "1");
}

/* System calls in progress (a blocking read...) when tracing stopped. */
static int write_unfinished_syscalls(struct lp_tracer *t, struct lp_writer *w)
{
	int fd = bpf_map__fd(t->skel->maps.sysin);
	uint32_t key, next, *prev = NULL;
	struct { uint32_t tid; struct lp_trace_sysin in; } *open = NULL;
	size_t n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		struct lp_trace_sysin in;
		if (bpf_map_lookup_elem(fd, &key, &in) != 0 || in.probe >= t->nprobes ||
		    in.ts > t->stop_ns || in.ts < t->start_ns || t->probes[in.probe].removed)
			continue;
		open = lp_reallocarray(open, n + 1, sizeof(*open));
		open[n].tid = key;
		open[n++].in = in;
	}
	for (size_t i = 1; i < n; i++)	/* by tid: a stable order */
		for (size_t j = i; j > 0 && open[j - 1].tid > open[j].tid; j--) {
			__typeof__(*open) tmp = open[j];
			open[j] = open[j - 1];
			open[j - 1] = tmp;
		}
	int ret = 0;
	for (size_t i = 0; i < n && ret == 0; i++) {
		const struct pinfo *pi = &t->probes[open[i].in.probe];
		lp_attrs_buf__reset(&t->attrs);
		lp_tracer_syscall_attrs(t, pi, open[i].in.args);
		if (t->calibrated)
			lp_attrs_buf__add(&t->attrs, "lp_ns", "0");
		add_nspid(t, (pid_t)open[i].in.tgid);
		struct lp_span s = {
			.start_ns = (int64_t)open[i].in.ts, .end_ns = LP_TIME_NONE,
			.pid = (int32_t)open[i].in.tgid, .tid = (int32_t)open[i].tid,
			.probe = pi->name, .depth = 0, .attrs = lp_attrs_buf__attrs(&t->attrs),
		};
		if (lp_writer__span(w, &s) < 0)
			ret = -1;
		else
			t->count++;
	}
	free(open);
	return ret;
}

/* Calls still open: their entry was seen, their return not (yet). */
/* The calls still open in the stacks of map fd (function probes', or
 * python: probes'), as unfinished spans; -1 when the output failed. */
static int write_open(struct lp_tracer *t, struct lp_writer *w, int fd)
{
	struct lp_trace_stack *st = lp_malloc(sizeof(*st));
	uint64_t key, next, *prev = NULL;
	int ret = 0;
	/* Sorted by key (tid, then goroutines), so the output does not depend
	 * on the hash's order. */
	uint64_t *tids = NULL;
	size_t ntids = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		tids = lp_reallocarray(tids, ntids + 1, sizeof(*tids));
		tids[ntids++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 1; i < ntids; i++)
		for (size_t j = i; j > 0 && tids[j - 1] > tids[j]; j--) {
			uint64_t tmp = tids[j];
			tids[j] = tids[j - 1];
			tids[j - 1] = tmp;
		}
	for (size_t i = 0; i < ntids && ret == 0; i++) {
		if (bpf_map_lookup_elem(fd, &tids[i], st) != 0)
			continue;
		for (uint32_t d = 0; d < st->depth && d < LP_TRACE_MAX_DEPTH; d++) {
			const struct lp_trace_frame *f = &st->frames[d];
			if (f->probe >= t->nprobes || f->ts > t->stop_ns || t->probes[f->probe].gate ||
			    t->probes[f->probe].removed)
				continue;
			const struct pinfo *pi = &t->probes[f->probe];
			const struct pycode *c = pi->kind == LP_PROBE_PY
							 ? find_pycode(t, (pid_t)st->tgid, f->vals[0]) : NULL;
			lp_attrs_buf__reset(&t->attrs);
			if (c) {
				lp_attrs_buf__add(&t->attrs, "file", c->file);
				lp_attrs_buf__add(&t->attrs, "line", c->line);
			} else if (pi->kind != LP_PROBE_PY) {
				values_attrs(t, pi, f->vals, (const char(*)[LP_TRACE_STR_MAX])f->strs);
			}
			if (t->calibrated) {	/* what lp added until it stopped */
				char buf[24];
				uint64_t in = pi->insn && pi->kind != LP_PROBE_PY
						      ? (uint64_t)lp_tracer_pair_of(t, pi)->entry_in
						      : 0;
				lp_digits_u64(buf, st->lp_ns - f->lp0 + in);
				lp_attrs_buf__add(&t->attrs, "lp_ns", buf);
			}
			add_nspid(t, (pid_t)st->tgid);
			struct lp_span s = {
				.start_ns = (int64_t)f->ts, .end_ns = LP_TIME_NONE,
				.pid = (int32_t)st->tgid, .tid = (int32_t)st->tid,
				.probe = c ? c->probe : pi->name, .depth = (int32_t)d,
				.attrs = lp_attrs_buf__attrs(&t->attrs),
			};
			if (lp_writer__span(w, &s) < 0) {
				ret = -1;
				break;
			}
			t->count++;
		}
	}
	free(tids);
	free(st);
	return ret;
}

int lp_tracer_write_unfinished(struct lp_tracer *t, struct lp_writer *w)
{
	if (write_open(t, w, bpf_map__fd(t->skel->maps.stacks)) < 0 ||
	    write_open(t, w, bpf_map__fd(t->skel->maps.pystacks)) < 0)
		return -1;
	return write_unfinished_syscalls(t, w);
}
