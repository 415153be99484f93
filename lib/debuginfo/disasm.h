/* disasm.h - the instructions by which an x86-64 function leaves, found
 * with Capstone: where lp-trace measures a return without a uretprobe
 * (which rewrites the return address on the stack).  Decoded through
 * lib/debuginfo/x86insn.h; only lp-trace links Capstone. */
#ifndef LP_DISASM_H
#define LP_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A range of link-time addresses [lo, hi). */
struct lp_range {
	uint64_t lo, hi;
};

/* One instruction that leaves the function. */
struct lp_leave {
	uint64_t vaddr;
	unsigned kind;		/* LP_RET_* (bpf/trace.h) */
	unsigned reg;		/* LP_RET_TAIL_REG: DWARF register; LP_RET_TAIL_CC: the condition */
	uint64_t to;		/* a direct jump's target, else 0 */
	unsigned char bytes[16];	/* the instruction (its uprobe's cost class) */
	size_t size;
};

struct lp_disasm {
	struct lp_leave *leaves;
	size_t nleaves;
	uint64_t *outside;	/* targets of direct jumps out of the ranges */
	size_t noutside;
	bool calls;		/* a call instruction */
	/* Memory operands based on rsp or rbp alone: where the function may
	 * read its own return address (lib/capture/trace/probe-return.c asks the CFI). */
	struct lp_stack_ref {
		uint64_t vaddr;
		unsigned base;	/* DWARF register: 7 rsp, 6 rbp */
		int64_t disp;
	} *refs;
	size_t nrefs;
	size_t undecoded;	/* bytes Capstone could not decode (skipped) */
};

/* Decodes code (size bytes at link-time address addr, part of the function
 * whose code is the ranges `inside`), appending to *d: rets; jmps and jccs
 * to addresses outside the ranges (tail calls); jmp *reg (a tail call or a
 * switch: told at run time); jmp *mem without an index register (through
 * the GOT: a tail call); calls; memory operands based on rsp or rbp.  -1
 * when Capstone cannot be opened. */
int lp_disasm__scan(const unsigned char *code, size_t size, uint64_t addr,
		    const struct lp_range *inside, size_t ninside, struct lp_disasm *d);
void lp_disasm__fini(struct lp_disasm *d);

#endif
