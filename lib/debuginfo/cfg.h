/* cfg.h - a function's basic blocks and natural loops, from its decoded
 * instructions (insnflow.h): what lp-trace --blocks shows, so a user can
 * aim a probe at a loop's head or a branch's arm rather than at a line
 * number.  Blocks end at a jump, a conditional jump or a return and start
 * at a jump's target (calls do not end them: they come back).  A loop is
 * the blocks of each back edge (a jump to a block that dominates it) to
 * its head, those of one head merged. */
#ifndef LP_CFG_H
#define LP_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "debuginfo/insnflow.h"

enum {
	LP_CFG_ENTRY = 1,	/* the function's first block */
	LP_CFG_RETURNS = 2,	/* ends in a return (or a tail call out) */
	LP_CFG_INDIRECT = 4,	/* ends in a jump whose targets are unknown */
	LP_CFG_LOOP_HEAD = 8,	/* a loop's head */
};

struct lp_cfg_block {
	uint64_t start, end;	/* [start, end): link-time addresses */
	size_t first, last;	/* its instructions' indexes in the flow */
	int succ[2];		/* successor blocks; -1: none */
	unsigned flags;		/* LP_CFG_* */
	int loop;		/* the innermost loop it is in; -1: none */
};

struct lp_cfg_loop {
	int head;		/* its head block */
	int parent;		/* the loop it is nested in; -1: none */
	size_t nblocks;
	int *blocks;		/* its blocks, in address order, head included */
	/* Its blocks that every iteration runs (they dominate each block
	 * that jumps back to the head), the head first: each runs once an
	 * iteration, the head once more when it is the test that leaves. */
	size_t nevery;
	int *every;
};

struct lp_cfg {
	struct lp_cfg_block *blocks;	/* in address order */
	size_t nblocks;
	struct lp_cfg_loop *loops;	/* outer loops before the loops they hold */
	size_t nloops;
};

/* The blocks and loops of flow, entered at its first instruction.  0; -1
 * when the flow is empty. */
int lp_cfg__build(const struct lp_insnflow *flow, struct lp_cfg *cfg);
void lp_cfg__fini(struct lp_cfg *cfg);

#endif
