/* stackcopy.h - a sample's copied user stack as the stream carries it
 * (formats/lp-stream.md, "Copied user stacks"): the sample attributes
 * uregs= (the user registers, by name) and ustack= (the copy, base64), and
 * the map records whose files its addresses are unwound with.  The one
 * place that knows their text: lp-cat's perf.data reader writes them, and
 * lp-symbolize, which unwinds them, reads them. */
#ifndef LP_STACKCOPY_H
#define LP_STACKCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/record.h"
#include "stream/attrs.h"

/* --- writing ------------------------------------------------------------ */

/* Appends uregs=NAME:HEX,... for n registers (names as perf's x86-64
 * perf_regs.h says them, lower case: ax, bx, ..., bp, sp, ip, ..., r15). */
void lp_stackcopy__add_regs(struct lp_attrs_buf *b, const char *const *names,
			    const uint64_t *values, size_t n);
/* Appends ustack=BASE64 of the len bytes copied from sp up. */
void lp_stackcopy__add_stack(struct lp_attrs_buf *b, const unsigned char *stack, size_t len);

/* One file (or the vDSO) a process had mapped: its addresses from start to
 * end (run-time), an ELF address in it being the run-time one less bias. */
struct lp_maprec {
	int64_t time_ns;	/* or LP_TIME_NONE */
	int32_t pid;
	uint64_t start, end, bias;
	const char *module;	/* a path, or "[vdso]" */
	const char *build_id;	/* hex; "" when not known */
};
/* The record's line, without its newline, into *buf (grown as lp_grow
 * grows it; NULL and 0 at first): its length. */
size_t lp_maprec__format(const struct lp_maprec *m, char **buf, size_t *cap);

/* --- reading ------------------------------------------------------------ */

/* Whether a line the reader did not know (LP_REC_OTHER) is a map record. */
bool lp_maprec__is(const char *line, size_t len);
/* A map record's fields into *m, its strings unescaped into *buf (kept
 * from call to call; the caller frees it): 0, or -1 and *why. */
int lp_maprec__parse(const char *line, size_t len, struct lp_maprec *m, char **buf,
		     size_t *cap, const char **why);

/* A sample's copy, decoded: the registers an unwinder starts from and the
 * stack's bytes (in buf, kept from call to call: lp_stackcopy__free). */
struct lp_stackcopy {
	uint64_t ip, sp, bp;
	bool has_ip, has_sp, has_bp;
	const unsigned char *stack;
	size_t len;
	unsigned char *buf;
	size_t cap;
};
/* 1: the sample carries a copy (both attributes), decoded into *c; 0: it
 * carries none; -1: one is malformed, *why says how. */
int lp_stackcopy__read(const struct lp_attrs *attrs, struct lp_stackcopy *c, const char **why);
/* attrs without uregs= and ustack= (once the copy is unwound), as written,
 * into *out (reset first). */
void lp_stackcopy__strip(const struct lp_attrs *attrs, struct lp_attrs_buf *out);
void lp_stackcopy__free(struct lp_stackcopy *c);

#endif
