/* x86insn.c - see x86insn.h. */
#include "debuginfo/x86insn.h"

int lp_x86insn__each(const unsigned char *code, size_t size, uint64_t addr, lp_x86insn_fn fn,
		     void *arg, size_t *undecoded)
{
	csh h;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -1;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *in = cs_malloc(h);
	const uint8_t *p = code;
	uint64_t a = addr;
	while (size > 0) {
		if (!cs_disasm_iter(h, &p, &size, &a, in)) {
			(*undecoded)++;
			p++, size--, a++;
			continue;
		}
		fn(h, in, arg);
	}
	cs_free(in, 1);
	cs_close(&h);
	return 0;
}
