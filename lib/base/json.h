/* json.h - the little of JSON that lp's writers need: strings escaped so the
 * document stays valid whatever bytes a symbol or comm holds, and numbers
 * that JSON accepts.  Output goes through stdio; callers check the stream
 * with lp_close_output() at the end (write errors are sticky in ferror). */
#ifndef LP_JSON_H
#define LP_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes s[0..len) as a JSON string, quotes included.  '"', '\\' and control
 * bytes are escaped; bytes that are not valid UTF-8 become U+FFFD, one per
 * maximal ill-formed subsequence, exactly as a WHATWG TextDecoder (node,
 * browsers, hence speedscope) would decode them had they been written raw. */
void lp_json__string(FILE *out, const char *s, size_t len);
static inline void lp_json__cstring(FILE *out, const char *s)
{
	lp_json__string(out, s, __builtin_strlen(s));
}
/* A finite double in its shortest form that reads back to the same value
 * (integers exactly, no exponent below 1e15); NaN and infinities, which JSON
 * cannot hold, are written as 0. */
void lp_json__number(FILE *out, double v);
void lp_json__int(FILE *out, int64_t v);
/* Nanoseconds as microseconds with three decimals ("1234.567"), exact: the
 * unit of Chrome's trace-event ts and dur. */
void lp_json__ns_as_us(FILE *out, int64_t ns);

/* Whether s[0..len) is well-formed UTF-8. */
int lp_utf8_valid(const char *s, size_t len);

#endif
