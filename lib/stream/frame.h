/* frame.h - small questions about a stream's frames that several reports
 * ask: a frame's printable name, the frame a blocked stack waited in. */
#ifndef LP_FRAME_H
#define LP_FRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "model/record.h"

/* Whether the frame names its module: not "" and not perf's "[unknown]". */
bool lp_frame__has_module(const struct lp_frame *f);

/* A frame's name in a report: its symbol, else "[module-basename]", else
 * its address, else "[unknown]", so unresolved frames of one module group
 * together (a folded line's empty frame is named "", as written).  The result is the symbol itself or written into *buf, grown to
 * fit (lp_grow: NULL and 0 at first, freed by the caller). */
const char *lp_frame__name(const struct lp_frame *f, char **buf, size_t *cap);

/* Where a stack blocked: its deepest user-space frame outside the C
 * library and the dynamic loader (the system-call wrapper is how, not
 * where), else its deepest user-space frame, else its leaf; NULL for an
 * empty stack. */
const struct lp_frame *lp_stack__blocking_frame(const struct lp_stack *st);

#endif
