/* austin.c - reads what Austin (the frame stack sampler for CPython,
 * github.com/P403n1x87/austin) writes, as lp samples (formats/foreign.md):
 *
 *	# austin: 3.3.0
 *	# interval: 100
 *	# mode: wall
 *
 *	P6360;T6360;/usr/lib/python3.11/threading.py:_bootstrap:995;app.py:work:12 186
 *
 * P is the pid, T the thread (decimal, or Austin 2's hexadecimal id, kept
 * as the attribute thread=), each frame FILE:FUNCTION:LINE (the file may
 * hold colons: "<frozen importlib._bootstrap>"), the last field the metric:
 * microseconds in wall and cpu mode (made nanoseconds, EVENT wall or
 * cpu-clock), bytes in memory mode (EVENT memory), the first of full
 * mode's "time,idle,memory" (wall).  No time per sample. */
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/attrs.h"
#include "stream/codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct austin_dec {
	struct lp_dict *dict;
	const char *event;
	double scale;		/* metric to weight */
	const struct lp_frame **frames;
	size_t cap;
	struct lp_attrs_buf attrs;
};

static void *austin_open(struct lp_dict *dict, const struct lp_input_opts *opts)
{
	(void)opts;
	struct austin_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	d->event = "wall";
	d->scale = 1000;
	return d;
}

static void austin_close(void *dec)
{
	struct austin_dec *d = dec;
	free(d->frames);
	lp_attrs_buf__free(&d->attrs);
	free(d);
}

/* "# mode: cpu" and the like. */
static void header(struct austin_dec *d, const char *line)
{
	if (strncmp(line, "# mode: ", 8))
		return;
	const char *m = line + 8;
	if (!strcmp(m, "cpu"))
		d->event = "cpu-clock";
	else if (!strcmp(m, "memory"))
		d->event = "memory", d->scale = 1;
	else
		d->event = "wall", d->scale = 1000;
}

/* FILE:FUNCTION:LINE, split at its last two colons. */
static const struct lp_frame *frame(struct austin_dec *d, char *s, size_t n)
{
	char *end = s + n, *c2 = NULL, *c1 = NULL;
	for (char *p = end; p-- > s;)
		if (*p == ':') {
			if (!c2)
				c2 = p;
			else {
				c1 = p;
				break;
			}
		}
	if (!c1 || strspn(c2 + 1, "0123456789") != (size_t)(end - c2 - 1)) {
		*end = '\0';
		return lp_dict__named_frame(d->dict, LP_FRAME_USER, "", s, "");
	}
	char srcline[4096];
	snprintf(srcline, sizeof(srcline), "%.*s:%.*s", (int)(c1 - s), s, (int)(end - c2 - 1), c2 + 1);
	*c2 = '\0';
	return lp_dict__frame(d->dict, LP_FRAME_USER, 0, "", c1 + 1, srcline);
}

static int austin_next(void *dec, char *line, size_t len, bool terminated,
		       struct lp_record *rec, const char **why)
{
	(void)terminated;
	struct austin_dec *d = dec;
	if (!len || line[0] == '#') {
		if (len)
			header(d, line);
		return 0;
	}
	if (memchr(line, '\0', len)) {
		*why = "NUL byte in a line";
		return LP_CODEC_BAD;
	}
	char *sp = strrchr(line, ' ');
	if (!sp || line[0] != 'P') {
		*why = "not P<pid>;T<thread>;frames... METRIC";
		return LP_CODEC_BAD;
	}
	char *stop;
	double w = strtod(sp + 1, &stop);	/* full mode: the first of three */
	if (stop == sp + 1 || (*stop && *stop != ',') || !(w >= 0) || w > 1e300) {
		*why = "its metric is not a number";
		return LP_CODEC_BAD;
	}
	*sp = '\0';
	int32_t pid = LP_ID_NONE, tid = LP_ID_NONE;
	size_t n = 0;
	lp_attrs_buf__reset(&d->attrs);
	for (char *f = line, *next; f; f = next) {
		next = strchr(f, ';');
		if (next)
			*next++ = '\0';
		if (f == line) {
			pid = (int32_t)strtol(f + 1, NULL, 10);
			continue;
		}
		if (f[0] == 'T' && n == 0 && tid == LP_ID_NONE && !d->attrs.len) {
			char *t = strrchr(f, ':') ? strrchr(f, ':') + 1 : f + 1;
			if (strspn(t, "0123456789") == strlen(t) && *t && strlen(t) < 10)
				tid = (int32_t)strtol(t, NULL, 10);
			else
				lp_attrs_buf__add(&d->attrs, "thread", f + 1);
			continue;
		}
		if (n == d->cap) {
			d->cap = d->cap ? 2 * d->cap : 64;
			d->frames = lp_reallocarray(d->frames, d->cap, sizeof(*d->frames));
		}
		d->frames[n++] = frame(d, f, strlen(f));
	}
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){ .time_ns = LP_TIME_NONE, .pid = pid, .tid = tid,
					  .cpu = LP_ID_NONE, .comm = "", .event = d->event,
					  .weight = w * d->scale,
					  .stack = lp_dict__stack(d->dict, d->frames, n),
					  .attrs = lp_attrs_buf__attrs(&d->attrs) };
	return 1;
}

/* "# austin: 3.3.0", or a sample: "P123;T456;..." */
static int austin_sniff(const char *line, size_t len)
{
	if (len > 10 && !strncmp(line, "# austin: ", 10))
		return 1;
	size_t i = 1;
	if (!len || line[0] != 'P')
		return 0;
	while (i < len && line[i] >= '0' && line[i] <= '9')
		i++;
	return i > 1 && i + 2 < len && line[i] == ';' && line[i + 1] == 'T';
}

const struct lp_codec lp_codec_austin = {
	.name = "austin", .format = LP_INPUT_AUSTIN, .sniff = austin_sniff,
	.open = austin_open, .next = austin_next, .close = austin_close, .comments = true,
};
