/* cpuprofile.c - reads a V8 CPU profile (Chrome DevTools' and
 * `node --cpu-prof`'s .cpuprofile: {nodes, startTime, endTime, samples,
 * timeDeltas}) as lp samples (formats/foreign.md), as v8nodes.h maps one:
 *   - a sample's time is V8's clock (microseconds of CLOCK_MONOTONIC on
 *     Linux) made nanoseconds: startTime plus the deltas up to it;
 *   - its weight the time to the next sample (the last: to endTime), so
 *     the weights add up to the profile's length, its event "wall" (V8
 *     samples on a timer whatever the thread does: "(idle)" and
 *     "(program)" are frames of their own);
 *   - its stack the node's path from "(root)", which is left out; a frame
 *     is the function's name ("(anonymous)" when it has none), its module
 *     the script's URL, its line the URL and the 1-based line; JavaScript
 *     frames (a URL) are 'j', V8's own 'u';
 *   - no thread: pid, tid and comm are not known.
 * The older form, a tree under "head" with children inline, is read too. */
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/codec.h"
#include "stream/foreign/v8nodes.h"

#include <jansson.h>
#include <stdlib.h>

struct cpu_dec {
	struct lp_v8_profile *profile;
	const char *open_why;
};

static const char *build(struct lp_v8_profile *p, json_t *root)
{
	json_t *nodes = json_object_get(root, "nodes");
	json_t *start = json_object_get(root, "startTime"), *end = json_object_get(root, "endTime");
	const char *why;
	if (json_is_array(nodes)) {
		if ((why = lp_v8__nodes(p, nodes)))
			return why;
	} else if (json_is_object(json_object_get(root, "head"))) {
		lp_v8__tree(p, json_object_get(root, "head"));
	} else {
		return "no nodes";
	}
	if ((why = lp_v8__samples(p, json_object_get(root, "samples"),
				  json_object_get(root, "timeDeltas"))))
		return why;
	if (!json_is_number(start) || !json_is_number(end))
		return "no startTime or endTime";
	return lp_v8__link(p, json_number_value(start), true, json_number_value(end));
}

static void *cpu_open(struct lp_dict *dict, const struct lp_doc *doc,
		      const struct lp_input_opts *opts)
{
	(void)opts;
	struct cpu_dec *d = lp_calloc(1, sizeof(*d));
	d->profile = lp_v8__new(dict);
	if (!json_is_object(doc->json))
		d->open_why = "not a JSON object";
	else
		d->open_why = build(d->profile, doc->json);
	return d;
}

static int cpu_next(void *dec, struct lp_record *rec, const char **why)
{
	struct cpu_dec *d = dec;
	if (d->open_why) {
		*why = d->open_why;
		return LP_CODEC_BAD;
	}
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){ .pid = LP_ID_NONE, .tid = LP_ID_NONE,
					  .cpu = LP_ID_NONE, .comm = "" };
	int rc = lp_v8__next(d->profile, &rec->sample, why);
	return rc < 0 ? LP_CODEC_BAD : rc;
}

static void cpu_close(void *dec)
{
	struct cpu_dec *d = dec;
	lp_v8__free(d->profile);
	free(d);
}

static bool cpu_claims(const struct lp_doc *doc)
{
	json_t *j = doc->json;
	return json_is_object(j) && json_is_array(json_object_get(j, "samples")) &&
	       (json_is_array(json_object_get(j, "nodes")) ||
		json_is_object(json_object_get(j, "head"))) &&
	       json_is_number(json_object_get(j, "startTime"));
}

const struct lp_codec lp_codec_cpuprofile = {
	.name = "cpuprofile", .format = LP_INPUT_CPUPROFILE, .claims = cpu_claims,
	.open_doc = cpu_open, .next_doc = cpu_next, .close = cpu_close,
};
