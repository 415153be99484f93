/* lpframe.h - lp's own frames: the kernel code that runs on a profiled
 * thread only because lp sampled or probed it (the breakpoint trap, uprobe
 * and uretprobe handling, the single step out of line, lp's BPF programs,
 * the sampling interrupt).  formats/lp-stream.md, "What lp costs": such
 * frames carry the attribute lp=1, and readers mark them also from their
 * kernel symbol when a stream or a perf script does not say.
 *
 * The reader (stream.c) sets struct lp_frame's lp with lp_frame__is_lps;
 * reports ask the stack with lp_stack__has_lp. */
#ifndef LP_LPFRAME_H
#define LP_LPFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/record.h"

/* Whether a frame of this kind, module and symbol is lp's own code.  Only
 * kernel frames (kind 'k') are, by their symbol; and, of any kind, the
 * frames whose module is never user code: the uprobes page perf names
 * "[uprobes]" (where a probed instruction is single-stepped and the
 * uretprobe trampoline runs) and lp's BPF programs, which perf names as
 * modules of their own ("bpf_prog_TAG_lp_entry"). */
bool lp_frame__is_lps(char kind, const char *module, const char *symbol);

/* Whether the stack holds one of lp's own frames (frame->lp). */
bool lp_stack__has_lp(const struct lp_stack *st);

/* The index of the stack's outermost lp frame (frames[0] is the outermost
 * caller), or -1 when it has none: what ran before it is the program's. */
ssize_t lp_stack__first_lp(const struct lp_stack *st);

#endif
