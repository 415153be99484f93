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
void lp_linereader__free(struct lp_linereader *lr);

#endif
