/* stream.h - the input layer: a reader yields records from an lp stream, a
 * `perf script` dump or folded stacks (recognised from the first lines, or
 * forced), through the codec of that format (codec.h).  Frames and stacks
 * are interned in a dictionary owned by the reader: a record's pointers stay
 * valid until the reader is freed.  Writing is lptext.h's; attributes are
 * attrs.h's.  What a program reading streams includes.
 */
#ifndef LP_STREAM_H
#define LP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "model/record.h"
#include "model/dict.h"
#include "stream/attrs.h"
#include "stream/codec.h"
#include "stream/lptext.h"

struct lp_reader;

/* path "-" is stdin.  NULL with errno set, and a message on stderr.  opts
 * (NULL: all zero) must live as long as the reader; its codec reads them at
 * the input's first line, so a caller reading inputs one after the other
 * may change them in between. */
struct lp_reader *lp_reader__open_opts(const char *path, enum lp_input_format format,
				       const struct lp_input_opts *opts);
static inline struct lp_reader *lp_reader__open(const char *path, enum lp_input_format format)
{
	return lp_reader__open_opts(path, format, NULL);
}
/* 1: a record; 0: end of input; -1: bad input or a read error, already
 * reported on stderr as "PROG: FILE:LINE: what". */
int lp_reader__next(struct lp_reader *reader, struct lp_record *rec);
enum lp_input_format lp_reader__format(const struct lp_reader *reader);
struct lp_dict *lp_reader__dict(struct lp_reader *reader);
const char *lp_reader__name(const struct lp_reader *reader);
uint64_t lp_reader__lineno(const struct lp_reader *reader);
void lp_reader__free(struct lp_reader *reader);
/* "lp" "perf" "folded" "auto" -> format; -1 when unknown. */
int lp_input_format__parse(const char *name);
/* The format's name, as --input-format says it ("auto" for LP_INPUT_AUTO). */
const char *lp_input_format__name(enum lp_input_format format);
/* -f, --input-format's value: the format, or "PROG: --input-format 'ARG':
 * expected auto, lp, ..." and exit 2. */
enum lp_input_format lp_option_input_format(const char *arg);

/* Reports "PROG: FILE:LINE: fmt..." on stderr for the reader's current line. */
void lp_reader__error(const struct lp_reader *reader, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
