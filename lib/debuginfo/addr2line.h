/* addr2line.h - what binutils' `addr2line -a ADDR -e MODULE -i -f -s -C`
 * prints, answered with libdw: the function at a module's address and the
 * functions it was inlined into, each with its file:line.  For lp-collapse
 * --inline, which stackcollapse-perf.pl implements by running addr2line (and
 * `nm`) once per distinct address. */
#ifndef LP_ADDR2LINE_H
#define LP_ADDR2LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lp_addr2line;

/* One line pair of addr2line's output.  func is "??" when unknown; loc is
 * "file:line" with the file's basename, "??:0" when nothing is known,
 * "file:?" or "??:?" when only the line or the file is missing. */
struct lp_a2l_entry {
	const char *func;
	const char *loc;
};

struct lp_addr2line *lp_addr2line__new(void);
void lp_addr2line__free(struct lp_addr2line *a);

/* The entries for addr (a file address of MODULE, as perf script prints
 * them), innermost function first, then each function it is inlined into
 * with the call site.  Returns how many (valid until the next call), or -1
 * when the module cannot be read (addr2line prints nothing then). */
int lp_addr2line__lookup(struct lp_addr2line *a, const char *module, uint64_t addr,
			 const struct lp_a2l_entry **out);

/* `nm MODULE`: the value of the (static symbol table's) symbol called name.
 * Returns 0, or -1 when there is no such symbol. */
int lp_addr2line__symbol(struct lp_addr2line *a, const char *module, const char *name,
			 uint64_t *value);

#endif
