/* aggregation.c - reads the stack counts bpftrace and DTrace print at
 * their end (formats/foreign.md):
 *
 *   bpftrace, @[ustack, kstack, comm] = count():      DTrace, @[ustack()] = count():
 *     @[                                                   libc.so.6`nanosleep+0x15
 *         nanosleep+23                                     prog`main+0x20
 *         main+32                                           37
 *     ,
 *         do_syscall_64+93
 *     , prog]: 37
 *
 * Each entry is one sample: no time (an aggregation has none), the count
 * its weight, the stacks' frames leaf first as printed, user then kernel
 * in lp's order (a key's stack is the kernel's when its addresses are, or
 * its frames are the kernel's entry points; bpftrace prints kstack and
 * ustack alike), "+offset" dropped (a function is a frame, as lp-record
 * names it), "module`" and ustack(perf)'s "(module)" kept as the module.
 * A key's other parts: a number is the pid, a word the comm. */
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/codec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct part {
	size_t first, n;	/* frames[first..first+n), leaf first */
	bool kernel;
};

struct agg_dec {
	struct lp_dict *dict;
	bool in_entry;		/* bpftrace: between "@[" and "]: N" */
	bool dtrace;
	const struct lp_frame **frames;	/* as printed */
	size_t nframes, cap;
	struct part parts[8];
	size_t nparts;
	const struct lp_frame **stack;
	size_t stack_cap;
	int32_t pid;
	const char *comm;
	char why[160];
};

static const char *skip_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static bool kernel_addr(uint64_t a)
{
	return a >= 0xffff800000000000ull;
}

static bool kernel_entry(const char *sym)
{
	static const char *const entries[] = {
		"entry_SYSCALL_64", "do_syscall_64", "ret_from_fork", "asm_", "__x64_sys_",
		"secondary_startup_64", "cpu_startup_entry", "start_kernel", "common_startup_64",
		"x64_sys_call", "syscall_exit_to_user_mode", "irq_exit_rcu",
	};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strncmp(sym, entries[i], strlen(entries[i])))
			return true;
	return false;
}

/* One printed frame: "sym+off", "module`sym+0xoff", "0xaddr", or
 * ustack(perf)'s "7f0e85c45207 sym+12 (/lib/libc.so.6)". */
static const struct lp_frame *parse_frame(struct agg_dec *d, const char *s, const char *end,
					  bool *kernel)
{
	char buf[4096], module[4096] = "";
	size_t n = (size_t)(end - s) < sizeof(buf) ? (size_t)(end - s) : sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	char *p = buf;
	uint64_t addr = 0;
	/* ustack(perf): an address, a space, the rest */
	char *sp = strchr(p, ' ');
	if (sp && sp > p && strspn(p, "0123456789abcdef") == (size_t)(sp - p)) {
		addr = strtoull(p, NULL, 16);
		p = sp + 1;
		char *open = strrchr(p, '(');
		if (open && buf[n - 1] == ')' && open > p) {
			snprintf(module, sizeof(module), "%.*s", (int)(buf + n - 1 - open - 1), open + 1);
			*open = '\0';
			for (char *q = open; q > p && q[-1] == ' ';)
				*--q = '\0';
		}
	}
	char *tick = strchr(p, '`');
	if (tick) {
		snprintf(module, sizeof(module), "%.*s", (int)(tick - p), p);
		p = tick + 1;
	}
	if (!strncmp(p, "0x", 2) && strspn(p + 2, "0123456789abcdefABCDEF") == strlen(p + 2) &&
	    p[2]) {
		addr = strtoull(p, NULL, 16);
		*kernel = *kernel || kernel_addr(addr);
		return lp_dict__frame(d->dict, kernel_addr(addr) ? LP_FRAME_KERNEL : LP_FRAME_USER,
				      addr, module, "", "");
	}
	char *plus = strrchr(p, '+');
	if (plus && plus > p && plus[1] && strspn(plus + 1, "0123456789abcdefx") == strlen(plus + 1))
		*plus = '\0';
	if (addr && kernel_addr(addr))
		*kernel = true;
	if (kernel_entry(p) || !strcmp(module, "[kernel.kallsyms]") || !strcmp(module, "unix") ||
	    !strcmp(module, "genunix"))
		*kernel = true;
	if (!*p)
		return lp_dict__frame(d->dict, LP_FRAME_USER, addr, module, "", "");
	return lp_dict__frame(d->dict, LP_FRAME_USER, 0, module, p, "");
}

static void push_frame(struct agg_dec *d, const struct lp_frame *f)
{
	if (d->nframes == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->frames = lp_reallocarray(d->frames, d->cap, sizeof(*d->frames));
	}
	d->frames[d->nframes++] = f;
	d->parts[d->nparts - 1].n++;
}

static void new_part(struct agg_dec *d)
{
	if (d->nparts < sizeof(d->parts) / sizeof(d->parts[0]))
		d->nparts++;
	d->parts[d->nparts - 1] = (struct part){ d->nframes, 0, false };
}

static void reset(struct agg_dec *d)
{
	d->nframes = 0;
	d->nparts = 0;
	d->pid = LP_ID_NONE;
	d->comm = "";
	new_part(d);
}

/* A key's scalar parts ("1234", "prog"), comma-separated. */
static void scalars(struct agg_dec *d, const char *s, const char *end)
{
	while (s < end) {
		s = skip_blank(s, end);
		if (s >= end)
			break;
		const char *c = memchr(s, ',', (size_t)(end - s));
		const char *e = c ? c : end;
		const char *t = e;
		while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if (t > s) {
			if (strspn(s, "0123456789") == (size_t)(t - s) && d->pid == LP_ID_NONE &&
			    t - s < 10)
				d->pid = atoi(s);
			else if (!*d->comm)
				d->comm = lp_dict__string(d->dict, s, (size_t)(t - s));
		}
		s = c ? c + 1 : end;
	}
}

/* The sample of the entry read: the user parts then the kernel's, each
 * reversed to outermost first. */
static int emit(struct agg_dec *d, const char *count, const char *end, struct lp_record *rec,
		const char **why)
{
	count = skip_blank(count, end);
	char *stop;
	double w = strtod(count, &stop);
	if (stop == count || !(w >= 0) || w > 1e300) {
		snprintf(d->why, sizeof(d->why), "'%.40s' is not a count", count);
		*why = d->why;
		return LP_CODEC_BAD;
	}
	if (d->nframes > d->stack_cap) {
		d->stack_cap = d->nframes;
		d->stack = lp_reallocarray(d->stack, d->stack_cap, sizeof(*d->stack));
	}
	size_t k = 0;
	for (int kernel = 0; kernel < 2; kernel++)
		for (size_t p = 0; p < d->nparts; p++) {
			const struct part *pt = &d->parts[p];
			if (pt->kernel != kernel)
				continue;
			for (size_t i = pt->n; i-- > 0;) {
				const struct lp_frame *f = d->frames[pt->first + i];
				if (kernel && f->kind != LP_FRAME_KERNEL)
					f = lp_dict__frame(d->dict, LP_FRAME_KERNEL, f->addr, f->module,
							   f->symbol, f->srcline);
				d->stack[k++] = f;
			}
		}
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){ .time_ns = LP_TIME_NONE, .pid = d->pid, .tid = LP_ID_NONE,
					  .cpu = LP_ID_NONE, .comm = d->comm, .event = "",
					  .weight = w, .stack = lp_dict__stack(d->dict, d->stack, k) };
	reset(d);
	return 1;
}

static void add_frame_line(struct agg_dec *d, const char *s, const char *end)
{
	bool kernel = false;
	const struct lp_frame *f = parse_frame(d, s, end, &kernel);
	push_frame(d, f);
	if (kernel)
		d->parts[d->nparts - 1].kernel = true;
}

static int bpftrace_line(struct agg_dec *d, const char *line, size_t len, struct lp_record *rec,
			 const char **why)
{
	const char *end = line + len, *s = skip_blank(line, end);
	const char *close = len >= 3 ? strstr(line, "]: ") : NULL;
	if (!d->in_entry) {
		if (line[0] != '@')
			return 0;	/* "Attaching 2 probes...", a printf's line */
		const char *br = strchr(line, '[');
		if (!br)
			return 0;	/* @x: 3, a map without a key */
		reset(d);
		if (close) {	/* @[comm]: 3: a key without a stack */
			scalars(d, br + 1, close);
			return emit(d, close + 3, end, rec, why);
		}
		d->in_entry = true;
		return 0;
	}
	if (*s == ',' || (close && s == close)) {
		/* the end of a stack part: ", ", ", , prog]: 3", ", prog]: 3" */
		const char *rest = *s == ',' ? s + 1 : s;
		if (close) {
			/* empty parts (", , prog") say nothing: their stacks were empty */
			scalars(d, rest, close);
			d->in_entry = false;
			return emit(d, close + 3, end, rec, why);
		}
		new_part(d);
		scalars(d, rest, end);
		return 0;
	}
	if (close) {	/* "    main+3]: 3"? bpftrace puts "]" on a line of its own */
		add_frame_line(d, s, close);
		d->in_entry = false;
		return emit(d, close + 3, end, rec, why);
	}
	add_frame_line(d, s, end);
	return 0;
}

static int dtrace_line(struct agg_dec *d, const char *line, size_t len, struct lp_record *rec,
		       const char **why)
{
	const char *end = line + len, *s = skip_blank(line, end);
	if (s == end) {
		if (d->nframes) {
			snprintf(d->why, sizeof(d->why), "a stack without its count");
			*why = d->why;
			return LP_CODEC_SKIP;
		}
		return 0;
	}
	if (!strncmp(line, "CPU ", 4) || (s == line && !d->nframes))
		return 0;	/* the header, a printf's line */
	size_t dg = strspn(s, "0123456789");
	if (!d->nframes && dg && dg < (size_t)(end - s) && (s[dg] == ' ' || s[dg] == '\t') &&
	    memchr(s, ':', (size_t)(end - s)))
		return 0;	/* "  0  64143   :tick-5s": the probe that printed */
	if (strspn(s, "0123456789") == (size_t)(end - s)) {
		if (!d->nframes)
			return 0;
		return emit(d, s, end, rec, why);
	}
	if (!d->nframes)
		reset(d);
	add_frame_line(d, s, end);
	return 0;
}

static void *agg_open(struct lp_dict *dict, const struct lp_input_opts *opts)
{
	(void)opts;
	struct agg_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	reset(d);
	return d;
}

static int agg_next(void *dec, char *line, size_t len, bool terminated, struct lp_record *rec,
		    const char **why)
{
	(void)terminated;
	struct agg_dec *d = dec;
	if (memchr(line, '\0', len)) {
		*why = "NUL byte in a line";
		return LP_CODEC_BAD;
	}
	if (!d->in_entry && !d->nframes && line[0] == '@')
		d->dtrace = false;
	else if (!d->in_entry && !d->nframes && (memchr(line, '`', len) || !strncmp(line, "CPU ", 4)))
		d->dtrace = true;
	return d->dtrace ? dtrace_line(d, line, len, rec, why) : bpftrace_line(d, line, len, rec, why);
}

static void agg_close(void *dec)
{
	struct agg_dec *d = dec;
	free(d->frames);
	free(d->stack);
	free(d);
}

/* bpftrace: "@name[" first, or "Attaching N probes..."; DTrace: its
 * "CPU ID FUNCTION:NAME" header, or an indented module`function frame. */
static int agg_sniff(const char *line, size_t len)
{
	size_t name = 1;
	while (name < len && (isalnum((unsigned char)line[name]) || line[name] == '_'))
		name++;
	if (line[0] == '@' && name < len && line[name] == '[')
		return 1;
	/* "Attaching 2 probes...", which perf script would take for an event
	 * line of a command "Attaching" */
	if (!strncmp(line, "Attaching ", 10) && strspn(line + 10, "0123456789") &&
	    (strstr(line, " probe...") || strstr(line, " probes...")))
		return 1;
	if (len > 4 && !strncmp(line, "CPU ", 4) && strstr(line, "FUNCTION:NAME"))
		return 1;
	return (line[0] == ' ' || line[0] == '\t') && memchr(line, '`', len) != NULL;
}

const struct lp_codec lp_codec_aggregation = {
	.name = "aggregation", .format = LP_INPUT_AGGREGATION, .sniff = agg_sniff,
	.open = agg_open, .next = agg_next, .close = agg_close,
};
