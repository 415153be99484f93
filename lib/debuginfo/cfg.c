/* cfg.c - basic blocks and natural loops of a decoded function (cfg.h).
 * Dominators by Cooper, Harvey and Kennedy's iteration over the reverse
 * postorder ("A Simple, Fast Dominance Algorithm"): functions have at most
 * a few thousand blocks. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/cfg.h"

/* ret, ret imm16, rep ret. */
static bool is_ret(const struct lp_insnflow_insn *in)
{
	return in->bytes[0] == 0xc3 || in->bytes[0] == 0xc2 ||
	       (in->size == 2 && in->bytes[0] == 0xf3 && in->bytes[1] == 0xc3);
}

/* Where control goes from instruction i but to the next one: a direct
 * jump's or conditional jump's target in the function (its index), or -1. */
static long jump_target(const struct lp_insnflow *f, size_t i)
{
	const struct lp_insnflow_insn *in = &f->insns[i];

	if (!in->branches || in->calls || !in->target)
		return -1;
	return lp_insnflow__find(f, in->target);
}

static bool contiguous(const struct lp_insnflow *f, size_t i)
{
	return i + 1 < f->n && f->insns[i].vaddr + f->insns[i].size == f->insns[i + 1].vaddr;
}

static void split_blocks(const struct lp_insnflow *f, struct lp_cfg *g, int *blockof)
{
	bool *leader = lp_calloc(f->n, sizeof(*leader));

	leader[0] = true;
	for (size_t i = 0; i < f->n; i++) {
		const struct lp_insnflow_insn *in = &f->insns[i];
		long t = jump_target(f, i);
		if (t >= 0)
			leader[t] = true;
		if (i + 1 < f->n && (in->branches || !in->falls_through || !contiguous(f, i)))
			leader[i + 1] = true;
	}
	for (size_t i = 0; i < f->n; i++) {
		if (leader[i]) {
			g->blocks = lp_reallocarray(g->blocks, g->nblocks + 1, sizeof(*g->blocks));
			g->blocks[g->nblocks++] = (struct lp_cfg_block){
				.start = f->insns[i].vaddr, .first = i, .succ = { -1, -1 }, .loop = -1 };
		}
		struct lp_cfg_block *b = &g->blocks[g->nblocks - 1];
		b->last = i;
		b->end = f->insns[i].vaddr + f->insns[i].size;
		blockof[i] = (int)g->nblocks - 1;
	}
	free(leader);
}

static void link_blocks(const struct lp_insnflow *f, struct lp_cfg *g, const int *blockof)
{
	g->blocks[0].flags |= LP_CFG_ENTRY;
	for (size_t b = 0; b < g->nblocks; b++) {
		struct lp_cfg_block *bl = &g->blocks[b];
		const struct lp_insnflow_insn *in = &f->insns[bl->last];
		if (in->falls_through && contiguous(f, bl->last))
			bl->succ[0] = blockof[bl->last + 1];
		long t = jump_target(f, bl->last);
		if (t >= 0)
			bl->succ[1] = blockof[t];
		else if (in->branches && !in->calls && in->target)
			bl->flags |= LP_CFG_RETURNS;	/* a tail call out */
		else if (in->branches && !in->calls && is_ret(in))
			bl->flags |= LP_CFG_RETURNS;
		else if (in->branches && !in->calls)
			bl->flags |= LP_CFG_INDIRECT;
	}
}

/* Blocks in reverse postorder from the entry into order[] (rpo[b]: b's
 * place, -1 when unreachable); how many. */
static size_t reverse_postorder(const struct lp_cfg *g, int *order, int *rpo)
{
	size_t n = g->nblocks, done = 0, sp = 0;
	int *stack = lp_calloc(n, sizeof(*stack)), *next = lp_calloc(n, sizeof(*next));
	bool *seen = lp_calloc(n, sizeof(*seen));
	int *post = lp_calloc(n, sizeof(*post));

	stack[sp++] = 0;
	seen[0] = true;
	while (sp) {
		int b = stack[sp - 1];
		if (next[b] < 2) {
			int s = g->blocks[b].succ[next[b]++];
			if (s >= 0 && !seen[s]) {
				seen[s] = true;
				stack[sp++] = s;
			}
			continue;
		}
		post[done++] = b;
		sp--;
	}
	for (size_t i = 0; i < n; i++)
		rpo[i] = -1;
	for (size_t i = 0; i < done; i++) {
		order[i] = post[done - 1 - i];
		rpo[order[i]] = (int)i;
	}
	free(stack);
	free(next);
	free(seen);
	free(post);
	return done;
}

static int intersect(const int *idom, const int *rpo, int a, int b)
{
	while (a != b) {
		while (rpo[a] > rpo[b])
			a = idom[a];
		while (rpo[b] > rpo[a])
			b = idom[b];
	}
	return a;
}

/* idom[b]: b's immediate dominator (the entry's itself), -1 unreachable. */
static void dominators(const struct lp_cfg *g, const int *order, size_t nr, const int *rpo,
		       int *idom)
{
	for (size_t i = 0; i < g->nblocks; i++)
		idom[i] = -1;
	idom[0] = 0;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 1; i < nr; i++) {
			int b = order[i], nd = -1;
			/* Its predecessors: the blocks with an edge to it. */
			for (size_t p = 0; p < g->nblocks; p++) {
				if (idom[p] < 0 || (g->blocks[p].succ[0] != b && g->blocks[p].succ[1] != b))
					continue;
				nd = nd < 0 ? (int)p : intersect(idom, rpo, (int)p, nd);
			}
			if (nd >= 0 && idom[b] != nd) {
				idom[b] = nd;
				changed = true;
			}
		}
	}
}

/* Whether h dominates b (both reachable; the entry, block 0, is its own
 * idom). */
static bool dominates(const int *idom, int h, int b)
{
	while (b != h) {
		if (b == 0 || idom[b] < 0)
			return false;
		b = idom[b];
	}
	return true;
}

/* Adds to loop (in[]: its blocks) every block that reaches `from` without
 * passing its head. */
static void loop_body(const struct lp_cfg *g, int head, int from, bool *in)
{
	int *work = lp_calloc(g->nblocks + 1, sizeof(*work));
	size_t n = 0;

	in[head] = true;
	if (!in[from]) {
		in[from] = true;
		work[n++] = from;
	}
	while (n) {
		int b = work[--n];
		for (size_t p = 0; p < g->nblocks; p++) {
			if (in[p] || (g->blocks[p].succ[0] != b && g->blocks[p].succ[1] != b))
				continue;
			in[p] = true;
			work[n++] = (int)p;
		}
	}
	free(work);
}

static int cmp_loop_size(const void *a, const void *b)
{
	const struct lp_cfg_loop *x = a, *y = b;

	if (x->nblocks != y->nblocks)
		return (x->nblocks < y->nblocks) - (x->nblocks > y->nblocks);
	return (x->head > y->head) - (x->head < y->head);
}

static void find_loops(struct lp_cfg *g, const int *idom)
{
	size_t n = g->nblocks;
	bool *in = lp_calloc(n, sizeof(*in));

	for (size_t h = 0; h < n; h++) {
		memset(in, 0, n * sizeof(*in));
		bool any = false;
		for (size_t b = 0; b < n; b++)
			for (int k = 0; k < 2; k++)
				if (g->blocks[b].succ[k] == (int)h && idom[b] >= 0 &&
				    dominates(idom, (int)h, (int)b)) {
					loop_body(g, (int)h, (int)b, in);
					any = true;
				}
		if (!any)
			continue;
		struct lp_cfg_loop l = { .head = (int)h, .parent = -1 };
		for (size_t b = 0; b < n; b++)
			if (in[b]) {
				l.blocks = lp_reallocarray(l.blocks, l.nblocks + 1, sizeof(*l.blocks));
				l.blocks[l.nblocks++] = (int)b;
			}
		/* The blocks that dominate every latch (a block of the loop
		 * jumping back to the head). */
		for (size_t k = 0; k < l.nblocks; k++) {
			int x = l.blocks[k];
			bool all = true;
			for (size_t j = 0; j < l.nblocks && all; j++) {
				const struct lp_cfg_block *lb = &g->blocks[l.blocks[j]];
				if (lb->succ[0] == (int)h || lb->succ[1] == (int)h)
					all = dominates(idom, x, l.blocks[j]);
			}
			if (!all)
				continue;
			l.every = lp_reallocarray(l.every, l.nevery + 1, sizeof(*l.every));
			if (x == (int)h) {	/* the head first */
				memmove(l.every + 1, l.every, l.nevery * sizeof(*l.every));
				l.every[0] = x;
			} else {
				l.every[l.nevery] = x;
			}
			l.nevery++;
		}
		g->blocks[h].flags |= LP_CFG_LOOP_HEAD;
		g->loops = lp_reallocarray(g->loops, g->nloops + 1, sizeof(*g->loops));
		g->loops[g->nloops++] = l;
	}
	free(in);
	/* Outer loops first; each block's innermost loop, each loop's parent:
	 * the smallest other loop holding its head. */
	if (g->nloops)
		qsort(g->loops, g->nloops, sizeof(*g->loops), cmp_loop_size);
	for (size_t i = 0; i < g->nloops; i++) {
		for (size_t k = 0; k < g->loops[i].nblocks; k++)
			g->blocks[g->loops[i].blocks[k]].loop = (int)i;
		for (size_t j = 0; j < i; j++)
			for (size_t k = 0; k < g->loops[j].nblocks; k++)
				if (g->loops[j].blocks[k] == g->loops[i].head)
					g->loops[i].parent = (int)j;
	}
}

int lp_cfg__build(const struct lp_insnflow *flow, struct lp_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	if (!flow->n)
		return -1;
	int *blockof = lp_calloc(flow->n, sizeof(*blockof));
	split_blocks(flow, cfg, blockof);
	link_blocks(flow, cfg, blockof);
	free(blockof);
	int *order = lp_calloc(cfg->nblocks, sizeof(*order));
	int *rpo = lp_calloc(cfg->nblocks, sizeof(*rpo));
	int *idom = lp_calloc(cfg->nblocks, sizeof(*idom));
	size_t nr = reverse_postorder(cfg, order, rpo);
	dominators(cfg, order, nr, rpo, idom);
	find_loops(cfg, idom);
	free(order);
	free(rpo);
	free(idom);
	return 0;
}

void lp_cfg__fini(struct lp_cfg *cfg)
{
	for (size_t i = 0; i < cfg->nloops; i++) {
		free(cfg->loops[i].blocks);
		free(cfg->loops[i].every);
	}
	free(cfg->loops);
	free(cfg->blocks);
	memset(cfg, 0, sizeof(*cfg));
}
