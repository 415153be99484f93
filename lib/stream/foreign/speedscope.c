/* speedscope.c - reads speedscope's file format (www.speedscope.app/
 * file-format-schema.json) as lp samples (formats/foreign.md):
 *   - a frame is shared.frames' {name, file, line}: the name its symbol,
 *     file and line its source line (speedscope has no module);
 *   - each profile (a thread, often) says its name in the attribute
 *     profile= of its samples;
 *   - "sampled": a sample per entry of samples (root first) with its
 *     weight, in the profile's unit (time units made nanoseconds, the event
 *     "wall"; bytes and none kept as they are, the event the unit); no
 *     times: a sampled profile has none per sample;
 *   - "evented": between two events, the frames open then are a sample
 *     at the first event's time weighing the time to the next, so the
 *     weights add up to the time anything was open. */
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/attrs.h"
#include "stream/codec.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ss_dec {
	struct lp_dict *dict;
	json_t *frames_json, *profiles;
	const struct lp_frame **frames;	/* shared.frames, made as used */
	size_t nframes;
	/* where reading is */
	size_t profile, item;
	json_t *cur;
	double scale;			/* unit to ns, or 1 */
	const char *event;
	struct lp_attrs_buf attrs;	/* profile=NAME */
	bool evented;
	/* evented: the open frames */
	const struct lp_frame **open;
	size_t nopen, open_cap;
	double last_at;
	const char *open_why;
	char why[200];
};

static const struct lp_frame *frame(struct ss_dec *d, json_t *idx)
{
	if (!json_is_integer(idx) || json_integer_value(idx) < 0 ||
	    (size_t)json_integer_value(idx) >= d->nframes)
		return NULL;
	size_t i = (size_t)json_integer_value(idx);
	if (!d->frames[i]) {
		json_t *f = json_array_get(d->frames_json, i);
		const char *name = json_string_value(json_object_get(f, "name"));
		const char *file = json_string_value(json_object_get(f, "file"));
		json_t *line = json_object_get(f, "line");
		char srcline[4096] = "";
		if (file && *file && json_is_number(line))
			snprintf(srcline, sizeof(srcline), "%s:%lld", file,
				 (long long)json_number_value(line));
		else if (file)
			snprintf(srcline, sizeof(srcline), "%s", file);
		d->frames[i] = lp_dict__named_frame(d->dict, LP_FRAME_USER, "", name ? name : "",
						    srcline);
	}
	return d->frames[i];
}

/* The profile at d->profile made current: its unit and kind. */
static const char *enter_profile(struct ss_dec *d)
{
	json_t *p = json_array_get(d->profiles, d->profile);
	const char *type = json_string_value(json_object_get(p, "type"));
	const char *unit = json_string_value(json_object_get(p, "unit"));
	const char *name = json_string_value(json_object_get(p, "name"));
	static const struct {
		const char *unit;
		double ns;
	} times[] = { { "nanoseconds", 1 }, { "microseconds", 1e3 }, { "milliseconds", 1e6 },
		      { "seconds", 1e9 } };
	if (!type || (strcmp(type, "sampled") && strcmp(type, "evented")))
		return LP_WHY(d, "profile %zu: type '%s' is neither sampled nor evented", d->profile,
			   type ? type : "");
	if (!unit)
		return LP_WHY(d, "profile %zu: no unit", d->profile);
	d->scale = 0;
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if (!strcmp(unit, times[i].unit))
			d->scale = times[i].ns;
	if (!d->scale && strcmp(unit, "bytes") && strcmp(unit, "none"))
		return LP_WHY(d, "profile %zu: unit '%s' is none of the schema's", d->profile, unit);
	d->event = d->scale ? "wall" : lp_dict__string(d->dict, unit, strlen(unit));
	if (!d->scale)
		d->scale = 1;
	lp_attrs_buf__reset(&d->attrs);
	if (name && *name)
		lp_attrs_buf__add(&d->attrs, "profile", name);
	d->evented = !strcmp(type, "evented");
	d->item = 0;
	d->nopen = 0;
	if (d->evented) {
		d->cur = json_object_get(p, "events");
		if (!json_is_array(d->cur))
			return LP_WHY(d, "profile %zu: no events", d->profile);
	} else {
		d->cur = json_object_get(p, "samples");
		json_t *w = json_object_get(p, "weights");
		if (!json_is_array(d->cur) || !json_is_array(w) ||
		    json_array_size(w) != json_array_size(d->cur))
			return LP_WHY(d, "profile %zu: samples and weights do not match", d->profile);
	}
	return NULL;
}

static void *ss_open(struct lp_dict *dict, const struct lp_doc *doc,
		     const struct lp_input_opts *opts)
{
	(void)opts;
	struct ss_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	d->frames_json = json_object_get(json_object_get(doc->json, "shared"), "frames");
	d->profiles = json_object_get(doc->json, "profiles");
	if (!json_is_array(d->frames_json) || !json_is_array(d->profiles)) {
		d->open_why = "no shared.frames or profiles";
		return d;
	}
	d->nframes = json_array_size(d->frames_json);
	d->frames = lp_calloc(d->nframes ? d->nframes : 1, sizeof(*d->frames));
	for (size_t i = 0; i < d->nframes && !d->open_why; i++)
		if (!json_is_string(json_object_get(json_array_get(d->frames_json, i), "name")))
			d->open_why = LP_WHY(d, "frame %zu has no name", i);
	if (!d->open_why && !json_array_size(d->profiles))
		d->open_why = "no profiles";
	if (!d->open_why)
		d->open_why = enter_profile(d);
	return d;
}

static void push_open(struct ss_dec *d, const struct lp_frame *f)
{
	if (d->nopen == d->open_cap) {
		d->open_cap = d->open_cap ? 2 * d->open_cap : 64;
		d->open = lp_reallocarray(d->open, d->open_cap, sizeof(*d->open));
	}
	d->open[d->nopen++] = f;
}

static void sample(struct ss_dec *d, struct lp_record *rec, int64_t t, double w,
		   const struct lp_stack *st)
{
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){ .time_ns = t, .pid = LP_ID_NONE, .tid = LP_ID_NONE,
					  .cpu = LP_ID_NONE, .comm = "", .event = d->event,
					  .weight = w, .stack = st,
					  .attrs = lp_attrs_buf__attrs(&d->attrs) };
}

/* 1: a sample; 0: an event that makes none; -1: bad. */
static int evented_step(struct ss_dec *d, struct lp_record *rec, const char **why)
{
	json_t *e = json_array_get(d->cur, d->item);
	const char *type = json_string_value(json_object_get(e, "type"));
	json_t *at_j = json_object_get(e, "at");
	const struct lp_frame *f = frame(d, json_object_get(e, "frame"));
	if (!type || !json_is_number(at_j) || !f || (strcmp(type, "O") && strcmp(type, "C"))) {
		*why = LP_WHY(d, "profile %zu: event %zu is not an O or C of a known frame at a time",
			   d->profile, d->item);
		return -1;
	}
	double at = json_number_value(at_j);
	if (d->item && at < d->last_at) {
		*why = LP_WHY(d, "profile %zu: event %zu at %g is before the one before it",
			   d->profile, d->item, at);
		return -1;
	}
	int made = 0;
	if (d->nopen && at > d->last_at) {
		double t = d->last_at * d->scale;
		if (!(t >= 0) || t > 9.2e18) {
			*why = LP_WHY(d, "profile %zu: event %zu: time %g is not a time", d->profile,
				   d->item, d->last_at);
			return -1;
		}
		sample(d, rec, (int64_t)llround(t), (at - d->last_at) * d->scale,
		       lp_dict__stack(d->dict, d->open, d->nopen));
		made = 1;
	}
	if (!strcmp(type, "O")) {
		push_open(d, f);
	} else {
		if (!d->nopen || d->open[d->nopen - 1] != f) {
			*why = LP_WHY(d, "profile %zu: event %zu closes a frame that is not the last open",
				   d->profile, d->item);
			return -1;
		}
		d->nopen--;
	}
	d->last_at = at;
	d->item++;
	return made;
}

static int ss_next(void *dec, struct lp_record *rec, const char **why)
{
	struct ss_dec *d = dec;
	for (;;) {
		if (d->open_why) {
			*why = d->open_why;
			return LP_CODEC_BAD;
		}
		if (d->profile >= json_array_size(d->profiles))
			return 0;
		if (d->item == json_array_size(d->cur)) {
			if (d->evented && d->nopen) {
				*why = LP_WHY(d, "profile %zu: %zu frames still open at its end",
					   d->profile, d->nopen);
				return LP_CODEC_BAD;
			}
			if (++d->profile < json_array_size(d->profiles))
				d->open_why = enter_profile(d);
			continue;
		}
		if (d->evented) {
			int rc = evented_step(d, rec, why);
			if (rc < 0)
				return LP_CODEC_BAD;
			if (rc)
				return 1;
			continue;
		}
		json_t *s = json_array_get(d->cur, d->item);
		json_t *w = json_array_get(json_object_get(json_array_get(d->profiles, d->profile),
							   "weights"), d->item);
		if (!json_is_array(s) || !json_is_number(w) || !(json_number_value(w) >= 0) ||
		    !isfinite(json_number_value(w))) {
			*why = LP_WHY(d, "profile %zu: sample %zu is not a list of frames with a weight",
				   d->profile, d->item);
			return LP_CODEC_BAD;
		}
		d->nopen = 0;
		size_t k;
		json_t *idx;
		json_array_foreach(s, k, idx) {
			const struct lp_frame *f = frame(d, idx);
			if (!f) {
				*why = LP_WHY(d, "profile %zu: sample %zu: no frame %s", d->profile,
					   d->item, json_is_integer(idx) ? "of that index" : "index");
				return LP_CODEC_BAD;
			}
			push_open(d, f);
		}
		d->item++;
		sample(d, rec, LP_TIME_NONE, json_number_value(w) * d->scale,
		       lp_dict__stack(d->dict, d->open, d->nopen));
		return 1;
	}
}

static void ss_close(void *dec)
{
	struct ss_dec *d = dec;
	free(d->frames);
	free(d->open);
	lp_attrs_buf__free(&d->attrs);
	free(d);
}

static bool ss_claims(const struct lp_doc *doc)
{
	const char *schema = json_string_value(json_object_get(doc->json, "$schema"));
	return (schema && strstr(schema, "speedscope")) ||
	       (json_is_object(json_object_get(doc->json, "shared")) &&
		json_is_array(json_object_get(doc->json, "profiles")));
}

const struct lp_codec lp_codec_speedscope = {
	.name = "speedscope", .format = LP_INPUT_SPEEDSCOPE, .claims = ss_claims,
	.open_doc = ss_open, .next_doc = ss_next, .close = ss_close,
};
