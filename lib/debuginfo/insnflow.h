/* insnflow.h - a function's x86-64 instructions in order, decoded with
 * Capstone, with where each can go next: what lp-trace needs to move a line
 * probe to a later instruction of the line that every pass through the
 * line's first instruction also reaches.  Decoded through lib/debuginfo/x86insn.h;
 * only lp-trace links Capstone. */
#ifndef LP_INSNFLOW_H
#define LP_INSNFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lp_insnflow_insn {
	uint64_t vaddr;		/* link-time address */
	unsigned char bytes[16];
	uint8_t size;
	bool falls_through;	/* the next instruction may come next (not jmp, ret, ud2, hlt) */
	bool branches;		/* may go elsewhere than the next (jmp, jcc, ret, indirect) */
	bool calls;		/* a call, direct or not: its callee may not come back */
	uint64_t target;	/* a direct jmp's, jcc's or call's target; 0 if none */
};

struct lp_insnflow {
	struct lp_insnflow_insn *insns;	/* in address order */
	size_t n;
	bool indirect_jumps;	/* jmp *X that is not a tail call (a switch's table):
				 * targets unknown */
	size_t undecoded;	/* bytes Capstone could not decode */
};

/* Decodes code (size bytes at link-time address addr), appending to *f;
 * call once per range of a function, in address order.  -1 when Capstone
 * cannot be opened. */
int lp_insnflow__decode(const unsigned char *code, size_t size, uint64_t addr,
			struct lp_insnflow *f);
/* The index of the instruction at vaddr; -1 when none starts there. */
long lp_insnflow__find(const struct lp_insnflow *f, uint64_t vaddr);
/* True when a direct jump or jcc of the function goes to vaddr (calls
 * are not counted: they come back after themselves). */
bool lp_insnflow__is_target(const struct lp_insnflow *f, uint64_t vaddr);
void lp_insnflow__fini(struct lp_insnflow *f);

#endif
