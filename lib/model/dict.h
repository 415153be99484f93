/* dict.h - the dictionary that interns frames, stacks and strings: equal
 * content is one object, compared by pointer or by id, living as long as
 * the dictionary (a reader's, usually). */
#ifndef LP_DICT_H
#define LP_DICT_H

#include "model/record.h"

struct lp_dict;

struct lp_dict *lp_dict__new(void);
void lp_dict__free(struct lp_dict *dict);
/* Strings are copied; the result lives as long as the dictionary. */
const struct lp_frame *lp_dict__frame(struct lp_dict *dict, char kind, uint64_t addr,
				      const char *module, const char *symbol,
				      const char *srcline);
/* A frame whose name is the text it was read from, "" included (folded
 * text's "a;;b", perf script's "a->->b"): named, never unresolved. */
const struct lp_frame *lp_dict__named_frame(struct lp_dict *dict, char kind, const char *module,
					    const char *name, const char *srcline);
/* A raw frame: an address in module's file, whose build it names. */
const struct lp_frame *lp_dict__raw_frame(struct lp_dict *dict, uint64_t addr,
					  const char *module, const char *build_id);
/* The same frame in another dictionary, or one a codec filled in (its id is
 * computed again; named and lp are kept). */
const struct lp_frame *lp_dict__frame_copy(struct lp_dict *dict, const struct lp_frame *f);
const struct lp_stack *lp_dict__stack(struct lp_dict *dict,
				      const struct lp_frame *const *frames, size_t nframes);
const struct lp_frame *lp_dict__frame_by_id(const struct lp_dict *dict, uint64_t id);
const struct lp_stack *lp_dict__stack_by_id(const struct lp_dict *dict, uint64_t id);
/* The stacks' memory (their frame lists and table), and its release: every
 * stack made so far is freed, and pointers to them are invalid; frames and
 * strings stay.  For a producer whose stacks never end (a recorder), which
 * then writes their definitions again (lp_writer__forget_stacks). */
size_t lp_dict__stacks_bytes(const struct lp_dict *dict);
void lp_dict__forget_stacks(struct lp_dict *dict);
/* A string that lives as long as the dictionary (comm, event, probe names). */
const char *lp_dict__string(struct lp_dict *dict, const char *s, size_t len);

#endif
