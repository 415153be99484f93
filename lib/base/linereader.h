/* linereader.h - lines from a file descriptor with a growing buffer: no
 * fixed line length, NUL bytes kept (len says where a line ends), no copy
 * for lines that fit in the buffer. */
#ifndef LP_LINEREADER_H
#define LP_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

struct lp_linereader;

/* Takes ownership of fd. */
struct lp_linereader *lp_linereader__new(int fd);
/* 1: *line (without '\n'; a final '\r' is kept) valid until the next call,
 * writable, and NUL-terminated at (*line)[*len]; 0: end of input, or a stop
 * (lp_stop__reading: after the last complete line read, a partial one
 * dropped); -1: read error (errno).  *terminated says whether the line
 * ended with '\n' (the last line of a file may not).  Before a read that
 * would block, lp_flush_outputs(). */
int lp_linereader__next(struct lp_linereader *lr, char **line, size_t *len,
			int *terminated);
uint64_t lp_linereader__lineno(const struct lp_linereader *lr);
/* The first bytes not yet read, without taking them: waits until there
 * are at least want of them or the input ends (*avail below want then).
 * 1, 0 at a stop, -1 on a read error (errno). */
int lp_linereader__peek(struct lp_linereader *lr, size_t want, const unsigned char **p,
			size_t *avail);
/* Everything not yet read, up to the end of the input, as one malloc'd
 * buffer (NUL-terminated at (*data)[*len]) that the caller frees: for the
 * formats read whole.  1, 0 at a stop (nothing kept), -1 on a read error
 * (errno), or when the input is over max bytes (errno EFBIG). */
int lp_linereader__slurp(struct lp_linereader *lr, size_t max, char **data, size_t *len);
/* Lines from data[0..len), which the reader takes (it must have a byte
 * free after len): a decompressed input read as text. */
struct lp_linereader *lp_linereader__new_mem(char *data, size_t len);
void lp_linereader__free(struct lp_linereader *lr);

#endif
