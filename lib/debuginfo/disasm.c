/* disasm.c - see disasm.h. */
#include "debuginfo/disasm.h"

#include <stdlib.h>
#include <string.h>

#include "bpf/trace.h"
#include "base/util.h"
#include "debuginfo/x86insn.h"

static bool in_ranges(uint64_t a, const struct lp_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return true;
	return false;
}

/* Capstone's 64-bit general registers in DWARF numbering; -1 for others. */
static int dwarf_reg(x86_reg r)
{
	static const x86_reg regs[16] = {
		X86_REG_RAX, X86_REG_RDX, X86_REG_RCX, X86_REG_RBX, X86_REG_RSI, X86_REG_RDI,
		X86_REG_RBP, X86_REG_RSP, X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
		X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};
	for (int i = 0; i < 16; i++)
		if (regs[i] == r)
			return i;
	return -1;
}

static void add_leave(struct lp_disasm *d, const cs_insn *in, unsigned kind, unsigned reg,
		      uint64_t to)
{
	d->leaves = lp_reallocarray(d->leaves, d->nleaves + 1, sizeof(*d->leaves));
	struct lp_leave *l = &d->leaves[d->nleaves++];
	memset(l, 0, sizeof(*l));
	l->vaddr = in->address;
	l->kind = kind;
	l->reg = reg;
	l->to = to;
	l->size = in->size < sizeof(l->bytes) ? in->size : sizeof(l->bytes);
	memcpy(l->bytes, in->bytes, l->size);
}

static void add_outside(struct lp_disasm *d, uint64_t to)
{
	d->outside = lp_reallocarray(d->outside, d->noutside + 1, sizeof(*d->outside));
	d->outside[d->noutside++] = to;
}

struct scan {
	struct lp_disasm *d;
	const struct lp_range *inside;
	size_t ninside;
};

static void scan_insn(csh h, const cs_insn *in, void *arg)
{
	struct scan *sc = arg;
	struct lp_disasm *d = sc->d;
	const struct lp_range *inside = sc->inside;
	size_t ninside = sc->ninside;

	const cs_x86 *x = &in->detail->x86;
	for (int k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];
		if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID ||
		    op->mem.segment != X86_REG_INVALID ||
		    (op->mem.base != X86_REG_RSP && op->mem.base != X86_REG_RBP))
			continue;
		d->refs = lp_reallocarray(d->refs, d->nrefs + 1, sizeof(*d->refs));
		d->refs[d->nrefs++] = (struct lp_stack_ref){ in->address,
			op->mem.base == X86_REG_RSP ? 7u : 6u, op->mem.disp };
	}
	if (in->id == X86_INS_CALL) {
		d->calls = true;
	} else if (in->id == X86_INS_RET) {
		add_leave(d, in, LP_RET_INSN, 0, 0);
	} else if (in->id == X86_INS_JMP && x->op_count == 1) {
		const cs_x86_op *op = &x->operands[0];
		if (op->type == X86_OP_IMM) {
			uint64_t to = (uint64_t)op->imm;
			if (!in_ranges(to, inside, ninside)) {
				add_leave(d, in, LP_RET_TAIL, 0, to);
				add_outside(d, to);
			}
		} else if (op->type == X86_OP_REG && dwarf_reg(op->reg) >= 0) {
			add_leave(d, in, LP_RET_TAIL_REG, (unsigned)dwarf_reg(op->reg), 0);
		} else if (op->type == X86_OP_MEM && op->mem.index == X86_REG_INVALID) {
			/* jmp *f@GOTPCREL(%rip); one with an index
			 * register reads a switch's jump table. */
			add_leave(d, in, LP_RET_TAIL, 0, 0);
		}
	} else if (cs_insn_group(h, in, CS_GRP_JUMP) && x->op_count == 1 &&
		   x->operands[0].type == X86_OP_IMM && in->id != X86_INS_JMP &&
		   in->id != X86_INS_JRCXZ && in->id != X86_INS_JECXZ &&
		   in->id != X86_INS_LOOP && in->id != X86_INS_LOOPE && in->id != X86_INS_LOOPNE) {
		/* jcc: its condition is the low nibble of 0x7X / 0x0f 0x8X. */
		uint64_t to = (uint64_t)x->operands[0].imm;
		unsigned cc = (x->opcode[0] == 0x0f ? x->opcode[1] : x->opcode[0]) & 0xf;
		if (!in_ranges(to, inside, ninside)) {
			add_leave(d, in, LP_RET_TAIL_CC, cc, to);
			add_outside(d, to);
		}
	}
}

int lp_disasm__scan(const unsigned char *code, size_t size, uint64_t addr,
		    const struct lp_range *inside, size_t ninside, struct lp_disasm *d)
{
	struct scan sc = { d, inside, ninside };

	return lp_x86insn__each(code, size, addr, scan_insn, &sc, &d->undecoded);
}

void lp_disasm__fini(struct lp_disasm *d)
{
	free(d->leaves);
	free(d->outside);
	free(d->refs);
	memset(d, 0, sizeof(*d));
}
