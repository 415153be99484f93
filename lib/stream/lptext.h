/* lptext.h - the lp text stream's codec (formats/lp-stream.md): its reading
 * side is lp_codec_lp (codec.h); its writing side, the writer below, turns
 * records back into text, writing a frame or stack definition the first
 * time a record refers to it. */
#ifndef LP_LPTEXT_H
#define LP_LPTEXT_H

#include <stdio.h>

#include "model/record.h"

#define LP_STREAM_MAGIC "lp-stream"
#define LP_STREAM_VERSION 1

struct lp_writer;

struct lp_writer *lp_writer__new(FILE *out);
void lp_writer__free(struct lp_writer *writer);
/* Each returns 0, or -1 with errno set when the output failed. */
int lp_writer__header(struct lp_writer *w, const struct lp_header *header);
int lp_writer__frame(struct lp_writer *w, const struct lp_frame *frame);
int lp_writer__stack(struct lp_writer *w, const struct lp_stack *stack);
int lp_writer__sample(struct lp_writer *w, const struct lp_sample *sample);
int lp_writer__span(struct lp_writer *w, const struct lp_span *span);
int lp_writer__event(struct lp_writer *w, const struct lp_event *event);
int lp_writer__lost(struct lp_writer *w, const struct lp_lost *lost);
int lp_writer__cost(struct lp_writer *w, const struct lp_cost *cost);
int lp_writer__probe(struct lp_writer *w, const struct lp_probe_mark *mark);
/* Any record as read: known kinds are rewritten, others copied verbatim. */
int lp_writer__record(struct lp_writer *w, const struct lp_record *rec);

#endif
