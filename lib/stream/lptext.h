/* lptext.h - the lp text stream's codec (formats/lp-stream.md): its reading
 * side is lp_codec_lp (codec.h); its writing side, the writer below, turns
 * records back into text, writing a frame or stack definition the first
 * time a record refers to it. */
#ifndef LP_LPTEXT_H
#define LP_LPTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/record.h"

#define LP_STREAM_MAGIC "lp-stream"
#define LP_STREAM_VERSION 1

struct lp_writer;
struct lp_dict;

struct lp_writer *lp_writer__new(FILE *out);
void lp_writer__free(struct lp_writer *writer);
/* Each returns 0, or -1 with errno set when the output failed. */
int lp_writer__header(struct lp_writer *w, const struct lp_header *header);
int lp_writer__frame(struct lp_writer *w, const struct lp_frame *frame);
int lp_writer__stack(struct lp_writer *w, const struct lp_stack *stack);
/* Stacks written so far are written again when next used (a repeated
 * definition is harmless): for a dictionary that forgot them
 * (lp_dict__forget_stacks). */
void lp_writer__forget_stacks(struct lp_writer *w);
/* A producer's memory bound: once dict's stacks take more than max_bytes,
 * both forget them (a recorder's distinct stacks never stop coming: deep
 * recursion, many processes).  true when they did.  Between records: the
 * stacks of records not yet written are freed. */
#define LP_STACK_MEMORY (64u << 20)	/* lp-record --stack-memory's default */
bool lp_writer__bound_stacks(struct lp_writer *w, struct lp_dict *dict, uint64_t max_bytes);
/* A producer's note on stderr, when they did: how often. */
void lp_writer__stacks_note(const struct lp_writer *w);
int lp_writer__sample(struct lp_writer *w, const struct lp_sample *sample);
int lp_writer__span(struct lp_writer *w, const struct lp_span *span);
int lp_writer__event(struct lp_writer *w, const struct lp_event *event);
int lp_writer__lost(struct lp_writer *w, const struct lp_lost *lost);
int lp_writer__cost(struct lp_writer *w, const struct lp_cost *cost);
int lp_writer__probe(struct lp_writer *w, const struct lp_probe_mark *mark);
/* Any record as read: known kinds are rewritten, others copied verbatim. */
int lp_writer__record(struct lp_writer *w, const struct lp_record *rec);

#endif
