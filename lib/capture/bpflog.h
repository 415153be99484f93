/* bpflog.h - libbpf's messages on stderr by the count of -v, one callback
 * for lp-record and lp-trace: none by default, libbpf's warnings (the
 * verifier log of a program that failed to load among them) with -v, and its
 * debug output (some 300 lines per run: every section, relocation and map)
 * only with -vv, where it no longer buries lp's own -v lines. */
#ifndef LP_BPFLOG_H
#define LP_BPFLOG_H

void lp_bpflog__init(int verbosity);

/* The program the kernel refused at the last failed load ("" if none, or
 * since lp_bpflog__forget): the loaders load again without an optional
 * one. */
const char *lp_bpflog__refused(void);
void lp_bpflog__forget(void);

#endif
