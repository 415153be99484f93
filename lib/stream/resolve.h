/* resolve.h - perf script --inline's questions (struct lp_inline_resolver,
 * codec.h) asked of another process through a pair of pipes, so that a
 * filter answers them without linking a DWARF library: lp-collapse runs
 * `lp-symbolize --addr2line`, which answers them with libdw.  Both ends of
 * the protocol are here:
 *
 *	a MODULE ADDR	->  N, then N lines "FUNC<TAB>LOC"  (N -1: module unreadable)
 *	s MODULE NAME	->  VALUE, or "-" when there is no such symbol
 *
 * fields tab-separated and escaped as the lp stream's (attrs.h), ADDR and
 * VALUE as 0x and hex digits, one answer flushed per question. */
#ifndef LP_RESOLVE_H
#define LP_RESOLVE_H

#include <stdio.h>

#include "stream/codec.h"

struct lp_inline_coproc;

/* A resolver that runs argv (execvp) at its first question and asks it.
 * When the process cannot be run or stops answering, the program exits 1
 * with a message: a profile without the inlines asked for is no answer. */
struct lp_inline_coproc *lp_inline_coproc__new(char *const argv[]);
const struct lp_inline_resolver *lp_inline_coproc__resolver(struct lp_inline_coproc *c);
/* Ends the process (closing its input) and waits for it. */
void lp_inline_coproc__free(struct lp_inline_coproc *c);

/* The other end: answers the questions read from in with res, until the
 * end of in.  0; -1 when out failed (errno set); -2 after a question it
 * could not read (said on stderr). */
int lp_inline_resolver__serve(const struct lp_inline_resolver *res, FILE *in, FILE *out);

#endif
