/* insnflow.c - see insnflow.h. */
#include "debuginfo/insnflow.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/x86insn.h"

static void decode_insn(csh h, const cs_insn *in, void *arg)
{
	struct lp_insnflow *f = arg;

	f->insns = lp_reallocarray(f->insns, f->n + 1, sizeof(*f->insns));
	struct lp_insnflow_insn *d = &f->insns[f->n++];
	memset(d, 0, sizeof(*d));
	d->vaddr = in->address;
	d->size = (uint8_t)(in->size < sizeof(d->bytes) ? in->size : sizeof(d->bytes));
	memcpy(d->bytes, in->bytes, d->size);
	d->falls_through = true;
	const cs_x86 *x = &in->detail->x86;
	bool imm = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
	if (in->id == X86_INS_CALL) {
		d->calls = true;
		d->target = imm ? (uint64_t)x->operands[0].imm : 0;
	} else if (in->id == X86_INS_RET || in->id == X86_INS_UD2 || in->id == X86_INS_HLT) {
		d->falls_through = false;
		d->branches = in->id == X86_INS_RET;
	} else if (in->id == X86_INS_JMP) {
		d->falls_through = false;
		d->branches = true;
		if (imm) {
			d->target = (uint64_t)x->operands[0].imm;
		} else if (x->op_count == 1 && (x->operands[0].type == X86_OP_REG ||
						x->operands[0].mem.index != X86_REG_INVALID)) {
			/* jmp *%rax after a table's offset is added, or
			 * jmp *table(,%rax,8): a switch; a tail call
			 * through the GOT (no index) leaves. */
			f->indirect_jumps = true;
		}
	} else if (cs_insn_group(h, in, CS_GRP_JUMP)) {
		/* jcc, jrcxz, loop: they may fall through. */
		d->branches = true;
		d->target = imm ? (uint64_t)x->operands[0].imm : 0;
	}
}

int lp_insnflow__decode(const unsigned char *code, size_t size, uint64_t addr,
			struct lp_insnflow *f)
{
	return lp_x86insn__each(code, size, addr, decode_insn, f, &f->undecoded);
}

long lp_insnflow__find(const struct lp_insnflow *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->insns[mid].vaddr < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->insns[lo].vaddr == vaddr ? (long)lo : -1;
}

bool lp_insnflow__is_target(const struct lp_insnflow *f, uint64_t vaddr)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->insns[i].branches && f->insns[i].target == vaddr)
			return true;
	return false;
}

void lp_insnflow__fini(struct lp_insnflow *f)
{
	free(f->insns);
	memset(f, 0, sizeof(*f));
}
