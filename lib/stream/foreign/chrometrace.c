/* chrometrace.c - reads the stack samples of Chrome's trace-event JSON (a
 * list of events, or an object with "traceEvents"; the Trace Event Format
 * document, and Chrome's V8 CPU profiler) as lp samples (formats/foreign.md):
 *   - V8's samples: a "Profile" event opens a profile (its id, pid and tid,
 *     its args.data.startTime), the "ProfileChunk" events of that id and
 *     pid bring its nodes and samples (args.data.cpuProfile.nodes and
 *     .samples, args.data.timeDeltas), a "CpuProfile" event holds a whole
 *     .cpuprofile: each is read as v8nodes.h says (time V8's clock, weight
 *     the time to the next sample, event "wall"); the thread is the Profile
 *     event's pid and tid, its comm the thread_name metadata of that thread;
 *   - the older stack samples: the "samples" list ({ts, pid?, tid, cpu?,
 *     name, sf, weight?}) and "P" events with "sf" or "stack": the time is
 *     ts (microseconds of the trace clock, CLOCK_MONOTONIC on Linux) made
 *     nanoseconds, the weight the sample's weight (a count; 1 when none),
 *     the event its name; "sf" names a frame of the "stackFrames" dictionary
 *     ({name, category, parent}: the function, its module, its caller),
 *     "stack" lists the frames' names, the outermost first.
 * Everything else in a trace (duration, async, counter events) is left. */
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/codec.h"
#include "stream/foreign/v8nodes.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One V8 profile: a Profile event and its chunks, or a CpuProfile event. */
struct prof {
	json_t *event;
	struct lp_v8_profile *v8;
	bool has_end;
	double start_us, end_us;
	int32_t pid, tid;
	const char *comm;
};

struct ct_dec {
	struct lp_dict *dict;
	json_t *events, *frames_json, *samples;
	struct prof *profs;
	size_t nprofs, profs_cap;
	/* where reading is: the profiles, then the events, then "samples" */
	size_t prof, event, sample;
	const struct lp_frame **frames;
	size_t nframes, frames_cap;
	const char *open_why;
	char why[240];
};

static bool is(json_t *o, const char *key, const char *value)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s && !strcmp(s, value);
}

/* A pid, tid or cpu: a number from 0 to INT32_MAX, else not known. */
static int32_t id32(json_t *v)
{
	double x = json_number_value(v);
	return json_is_number(v) && x >= 0 && x <= INT32_MAX ? (int32_t)x : LP_ID_NONE;
}

/* An event id ("0x1") or a stackFrames key (a string or a number) as text. */
static const char *key_of(json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return NULL;
}

/* A stack sample of the older kind: an event "P" with "sf" or "stack". */
static bool old_sample(json_t *e)
{
	return is(e, "ph", "P") && !is(e, "name", "Profile") && !is(e, "name", "ProfileChunk") &&
	       (json_object_get(e, "sf") || json_object_get(e, "stack"));
}

/* The name a thread_name metadata event gives pid's tid, or "". */
static const char *thread_name(struct ct_dec *d, int32_t pid, int32_t tid)
{
	size_t i;
	json_t *e;
	json_array_foreach(d->events, i, e) {
		const char *name = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
		if (name && is(e, "name", "thread_name") && id32(json_object_get(e, "pid")) == pid &&
		    id32(json_object_get(e, "tid")) == tid)
			return lp_dict__string(d->dict, name, strlen(name));
	}
	return "";
}

static struct prof *add_prof(struct ct_dec *d, json_t *e)
{
	if (d->nprofs == d->profs_cap) {
		d->profs_cap = d->profs_cap ? 2 * d->profs_cap : 8;
		d->profs = lp_reallocarray(d->profs, d->profs_cap, sizeof(*d->profs));
	}
	struct prof *p = &d->profs[d->nprofs++];
	*p = (struct prof){ .event = e, .v8 = lp_v8__new(d->dict),
			    .pid = id32(json_object_get(e, "pid")),
			    .tid = id32(json_object_get(e, "tid")) };
	p->comm = thread_name(d, p->pid, p->tid);
	return p;
}

/* The profile a chunk belongs to: the Profile event of its id and pid. */
static struct prof *owner(struct ct_dec *d, json_t *chunk)
{
	char a[32], b[32];
	const char *id = key_of(json_object_get(chunk, "id"), a, sizeof(a));
	for (size_t i = 0; id && i < d->nprofs; i++) {
		json_t *e = d->profs[i].event;
		const char *pid = key_of(json_object_get(e, "id"), b, sizeof(b));
		if (is(e, "name", "Profile") && pid && !strcmp(id, pid) &&
		    json_equal(json_object_get(e, "pid"), json_object_get(chunk, "pid")))
			return &d->profs[i];
	}
	return NULL;
}

static const char *add_chunk(struct ct_dec *d, json_t *chunk)
{
	char a[32];
	const char *id = key_of(json_object_get(chunk, "id"), a, sizeof(a));
	struct prof *p = owner(d, chunk);
	json_t *data = json_object_get(json_object_get(chunk, "args"), "data");
	json_t *cpu = json_object_get(data, "cpuProfile");
	json_t *end = json_object_get(data, "endTime");
	const char *why;
	if (!p)
		return LP_WHY(d, "ProfileChunk %s of pid %d has no Profile event", id ? id : "(no id)",
			   id32(json_object_get(chunk, "pid")));
	if (json_is_number(end)) {
		p->has_end = true;
		p->end_us = json_number_value(end);
	}
	if (!cpu)	/* the end alone */
		return NULL;
	if (json_object_get(cpu, "nodes") && (why = lp_v8__nodes(p->v8, json_object_get(cpu, "nodes"))))
		return why;
	json_t *samples = json_object_get(cpu, "samples"), *deltas = json_object_get(data, "timeDeltas");
	if (samples && !json_is_array(deltas))
		return "samples without timeDeltas";
	return samples ? lp_v8__samples(p->v8, samples, deltas) : NULL;
}

/* A CpuProfile event: a whole .cpuprofile in args.data.cpuProfile. */
static const char *add_cpuprofile(struct ct_dec *d, json_t *e)
{
	struct prof *p = add_prof(d, e);
	json_t *cpu = json_object_get(json_object_get(json_object_get(e, "args"), "data"), "cpuProfile");
	json_t *start = json_object_get(cpu, "startTime"), *end = json_object_get(cpu, "endTime");
	const char *why;
	if ((why = lp_v8__nodes(p->v8, json_object_get(cpu, "nodes"))) ||
	    (why = lp_v8__samples(p->v8, json_object_get(cpu, "samples"),
				  json_object_get(cpu, "timeDeltas"))))
		return why;
	p->start_us = json_is_number(start) ? json_number_value(start) : NAN;
	p->has_end = json_is_number(end);
	p->end_us = json_number_value(end);
	return NULL;
}

/* "Profile 0x1 of pid 42", for messages. */
static const char *prof_name(const struct prof *p, char *buf, size_t len)
{
	char a[32];
	const char *id = key_of(json_object_get(p->event, "id"), a, sizeof(a));
	snprintf(buf, len, "%s %s of pid %d", is(p->event, "name", "Profile") ? "Profile" : "CpuProfile",
		 id ? id : "-", p->pid);
	return buf;
}

/* The V8 profiles: made from their events, linked, checked. */
static const char *build_profiles(struct ct_dec *d)
{
	size_t i;
	json_t *e;
	const char *why;
	json_array_foreach(d->events, i, e) {
		if (is(e, "name", "Profile") && is(e, "ph", "P")) {
			json_t *start = json_object_get(json_object_get(json_object_get(e, "args"),
									"data"), "startTime");
			add_prof(d, e)->start_us = json_is_number(start) ? json_number_value(start) : NAN;
		} else if (is(e, "name", "CpuProfile") && (why = add_cpuprofile(d, e))) {
			return LP_WHY(d, "event %zu (CpuProfile): %s", i, why);
		}
	}
	json_array_foreach(d->events, i, e)
		if (is(e, "name", "ProfileChunk") && (why = add_chunk(d, e)))
			return why == d->why ? why : LP_WHY(d, "event %zu (ProfileChunk): %s", i, why);
	for (i = 0; i < d->nprofs; i++) {
		struct prof *p = &d->profs[i];
		char name[64];
		if (isnan(p->start_us))
			return LP_WHY(d, "%s: no startTime", prof_name(p, name, sizeof(name)));
		if ((why = lp_v8__link(p->v8, p->start_us, p->has_end, p->end_us)))
			return LP_WHY(d, "%s: %s", prof_name(p, name, sizeof(name)), why);
	}
	return NULL;
}

static bool has_old_samples(struct ct_dec *d)
{
	size_t i;
	json_t *e;
	if (json_array_size(d->samples))
		return true;
	json_array_foreach(d->events, i, e)
		if (old_sample(e))
			return true;
	return false;
}

static void *ct_open(struct lp_dict *dict, const struct lp_doc *doc,
		     const struct lp_input_opts *opts)
{
	(void)opts;
	struct ct_dec *d = lp_calloc(1, sizeof(*d));
	json_t *j = doc->json;
	d->dict = dict;
	d->events = json_is_array(j) ? j : json_object_get(j, "traceEvents");
	d->frames_json = json_object_get(j, "stackFrames");
	d->samples = json_object_get(j, "samples");
	if (d->events && !json_is_array(d->events))
		d->open_why = "its traceEvents are no list";
	else if (d->samples && !json_is_array(d->samples))
		d->open_why = "its samples are no list";
	else if (d->frames_json && !json_is_object(d->frames_json))
		d->open_why = "its stackFrames are no dictionary";
	else if (!(d->open_why = build_profiles(d)) && !d->nprofs && !has_old_samples(d))
		d->open_why = "no stack samples in the trace (lp reads its samples, not its events)";
	return d;
}

static void push_frame(struct ct_dec *d, const struct lp_frame *f)
{
	if (d->nframes == d->frames_cap) {
		d->frames_cap = d->frames_cap ? 2 * d->frames_cap : 64;
		d->frames = lp_reallocarray(d->frames, d->frames_cap, sizeof(*d->frames));
	}
	d->frames[d->nframes++] = f;
}

/* The frames from "sf" up the stackFrames' parents, leaf first. */
static const char *frames_of_sf(struct ct_dec *d, json_t *sf)
{
	char buf[32];
	const char *key = key_of(sf, buf, sizeof(buf));
	size_t limit = json_object_size(d->frames_json);
	if (!key)
		return "its sf is no frame id";
	while (key) {
		json_t *f = json_object_get(d->frames_json, key);
		const char *name = json_string_value(json_object_get(f, "name"));
		const char *module = json_string_value(json_object_get(f, "category"));
		if (!json_is_object(f))
			return LP_WHY(d, "no stack frame %.40s", key);
		if (d->nframes >= limit)
			return LP_WHY(d, "stack frame %.40s is its own ancestor", key);
		push_frame(d, lp_dict__named_frame(d->dict, LP_FRAME_USER, module ? module : "",
						   name ? name : "", ""));
		key = key_of(json_object_get(f, "parent"), buf, sizeof(buf));
	}
	return NULL;
}

/* The frames a "stack" list names, leaf first. */
static const char *frames_of_list(struct ct_dec *d, json_t *stack)
{
	if (!json_is_array(stack))
		return "its stack is no list";
	for (size_t k = json_array_size(stack); k-- > 0;) {
		const char *name = json_string_value(json_array_get(stack, k));
		if (!name)
			return "its stack is no list of names";
		push_frame(d, lp_dict__named_frame(d->dict, LP_FRAME_USER, "", name, ""));
	}
	return NULL;
}

/* A stack sample of the older kind, from "samples" or a "P" event. */
static int old_next(struct ct_dec *d, json_t *s, const char *where, size_t i,
		    struct lp_record *rec, const char **why)
{
	json_t *ts = json_object_get(s, "ts"), *w = json_object_get(s, "weight");
	const char *name = json_string_value(json_object_get(s, "name"));
	const char *e;
	d->nframes = 0;
	e = json_object_get(s, "sf") ? frames_of_sf(d, json_object_get(s, "sf"))
				     : frames_of_list(d, json_object_get(s, "stack"));
	if (!e && ts && !(json_is_number(ts) && json_number_value(ts) >= 0 &&
			  json_number_value(ts) <= 9.2e15))
		e = "its ts is not a time";
	if (!e && w && !(json_is_number(w) && json_number_value(w) >= 0))
		e = "its weight is not a weight";
	if (e) {
		char what[200];
		snprintf(what, sizeof(what), "%s", e);
		*why = LP_WHY(d, "%s %zu: %s", where, i, what);
		return LP_CODEC_BAD;
	}
	for (size_t a = 0, b = d->nframes; a + 1 < b; a++, b--) {	/* outermost first */
		const struct lp_frame *t = d->frames[a];
		d->frames[a] = d->frames[b - 1];
		d->frames[b - 1] = t;
	}
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){
		.time_ns = ts ? (int64_t)llround(json_number_value(ts) * 1000) : LP_TIME_NONE,
		.pid = id32(json_object_get(s, "pid")), .tid = id32(json_object_get(s, "tid")),
		.cpu = id32(json_object_get(s, "cpu")), .comm = "",
		.event = name ? lp_dict__string(d->dict, name, strlen(name)) : "",
		.weight = w ? json_number_value(w) : 1,
		.stack = lp_dict__stack(d->dict, d->frames, d->nframes),
	};
	return 1;
}

static int ct_next(void *dec, struct lp_record *rec, const char **why)
{
	struct ct_dec *d = dec;
	if (d->open_why) {
		*why = d->open_why;
		return LP_CODEC_BAD;
	}
	for (; d->prof < d->nprofs; d->prof++) {
		struct prof *p = &d->profs[d->prof];
		rec->kind = LP_REC_SAMPLE;
		rec->sample = (struct lp_sample){ .pid = p->pid, .tid = p->tid, .cpu = LP_ID_NONE,
						  .comm = p->comm };
		int rc = lp_v8__next(p->v8, &rec->sample, why);
		if (rc)
			return rc < 0 ? LP_CODEC_BAD : 1;
	}
	for (; d->event < json_array_size(d->events); d->event++)
		if (old_sample(json_array_get(d->events, d->event))) {
			d->event++;
			return old_next(d, json_array_get(d->events, d->event - 1), "event",
					d->event - 1, rec, why);
		}
	if (d->sample < json_array_size(d->samples)) {
		d->sample++;
		return old_next(d, json_array_get(d->samples, d->sample - 1), "sample",
				d->sample - 1, rec, why);
	}
	return 0;
}

static void ct_close(void *dec)
{
	struct ct_dec *d = dec;
	for (size_t i = 0; i < d->nprofs; i++)
		lp_v8__free(d->profs[i].v8);
	free(d->profs);
	free(d->frames);
	free(d);
}

/* An object with "traceEvents", or with "samples" and "stackFrames"; a
 * list whose first element is an event (an object with a phase, "ph"). */
static bool ct_claims(const struct lp_doc *doc)
{
	json_t *j = doc->json;
	if (json_is_array(j))
		return json_is_string(json_object_get(json_array_get(j, 0), "ph"));
	return json_is_array(json_object_get(j, "traceEvents")) ||
	       (json_is_array(json_object_get(j, "samples")) &&
		json_is_object(json_object_get(j, "stackFrames")));
}

const struct lp_codec lp_codec_chrometrace = {
	.name = "chrometrace", .format = LP_INPUT_CHROMETRACE, .claims = ct_claims,
	.open_doc = ct_open, .next_doc = ct_next, .close = ct_close,
};
