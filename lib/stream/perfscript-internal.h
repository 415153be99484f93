/* perfscript-internal.h - what the reader of `perf script` text
 * (perfscript.c) shares with its header-line matchers
 * (perfscript-lines.c): Perl's character classes, and what a header line
 * matched. */
#ifndef LP_PERFSCRIPT_INTERNAL_H
#define LP_PERFSCRIPT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Perl's \s, \d and \w on byte strings (no locale, no utf8). */
static inline bool pl_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static inline bool pl_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool pl_word(unsigned char c)
{
	return pl_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool pl_hexlc(unsigned char c)
{
	return pl_digit(c) || (c >= 'a' && c <= 'f');
}

/* A sample's header line, as matched by /^(\S.+?)\s+(\d+)\/ *(\d+)*\s+/
 * (the script has no blank before the first '*'; here it keeps this
 * comment open): the comm is everything up to the first run of blanks
 * followed by digits, optional slashes and digits, and a blank ("Thread 2
 * 12345/12346 ..." is comm "Thread", TID 2).  Fills the spans of comm and
 * of the two numbers (d2 empty when absent). */
struct evmatch {
	size_t comm_len, d1, d1_len, d2, d2_len, end;
};

/* perfscript-lines.c, each emulating one of the script's expressions
 * (its comment there says which): a header line; its event's name and
 * period; a decimal id; a period. */
bool lp_perfscript_match_event_line(const char *l, size_t len, struct evmatch *m);
bool lp_perfscript_match_event_name(const char *l, size_t len, size_t *ev, size_t *ev_len,
				    size_t *per, size_t *per_len);
int32_t lp_perfscript_parse_id(const char *s, size_t n);
double lp_perfscript_parse_period(const char *s, size_t n);

#endif
