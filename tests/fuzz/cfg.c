/* cfg.c - a fuzz target for lp-trace --blocks' work: any bytes decoded as
 * x86-64 code (debuginfo/insnflow.h), then its basic blocks and loops
 * built (debuginfo/cfg.h).  Its oracle: the blocks cover every
 * instruction once, in order, each successor a block; each loop's head is
 * among its blocks, which are in order, its every-iteration blocks among
 * them (the head first when it is one), its parent an earlier loop that
 * holds its head; each block's loop holds it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "debuginfo/cfg.h"
#include "debuginfo/insnflow.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "lp-fuzz: cfg: %s\n", what);
		abort();
	}
}

static int holds(const struct lp_cfg_loop *l, int b)
{
	for (size_t i = 0; i < l->nblocks; i++)
		if (l->blocks[i] == b)
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_insnflow f = { 0 };
	struct lp_cfg g;

	if (!size || lp_insnflow__decode(data, size, 0x1000, &f) < 0 || !f.n) {
		lp_insnflow__fini(&f);
		return 0;
	}
	check(lp_cfg__build(&f, &g) == 0, "no blocks of a decoded flow");
	size_t next = 0;
	for (size_t b = 0; b < g.nblocks; b++) {
		const struct lp_cfg_block *bl = &g.blocks[b];
		check(bl->first == next && bl->last >= bl->first && bl->last < f.n, "blocks do not tile");
		check(bl->start == f.insns[bl->first].vaddr, "a block's start");
		next = bl->last + 1;
		for (int k = 0; k < 2; k++)
			check(bl->succ[k] >= -1 && bl->succ[k] < (int)g.nblocks, "a successor");
		check(bl->loop < (int)g.nloops, "a block's loop");
		if (bl->loop >= 0)
			check(holds(&g.loops[bl->loop], (int)b), "a block's loop holds it");
	}
	check(next == f.n, "blocks leave instructions out");
	for (size_t i = 0; i < g.nloops; i++) {
		const struct lp_cfg_loop *l = &g.loops[i];
		check(holds(l, l->head), "a loop's head");
		for (size_t k = 1; k < l->nblocks; k++)
			check(l->blocks[k - 1] < l->blocks[k], "a loop's blocks in order");
		for (size_t k = 0; k < l->nevery; k++)
			check(holds(l, l->every[k]), "an every-iteration block outside its loop");
		for (size_t k = 1; k < l->nevery; k++)
			check(l->every[k] != l->head, "the head not first");
		check(l->parent < (int)i, "a parent after its child");
		if (l->parent >= 0)
			check(holds(&g.loops[l->parent], l->head), "a parent without the head");
	}
	lp_cfg__fini(&g);
	lp_insnflow__fini(&f);
	return 0;
}
