/* x86insn.h - x86-64 code decoded with Capstone, an instruction at a
 * time, with Capstone's details: the one loop under lib/debuginfo/disasm.c (how a
 * function leaves) and lib/debuginfo/insnflow.c (where a line probe can go).  The
 * only header that includes Capstone; only lp-trace links it. */
#ifndef LP_X86INSN_H
#define LP_X86INSN_H

#include <capstone/capstone.h>
#include <stddef.h>
#include <stdint.h>

/* Called for each instruction decoded, in address order, with the
 * Capstone handle (for cs_insn_group). */
typedef void (*lp_x86insn_fn)(csh h, const cs_insn *in, void *arg);

/* Decodes code (size bytes at link-time address addr), calling fn for each
 * instruction; bytes Capstone does not know (data, padding) are skipped one
 * at a time, to resynchronise, and counted in *undecoded.  -1 when Capstone
 * cannot be opened. */
int lp_x86insn__each(const unsigned char *code, size_t size, uint64_t addr, lp_x86insn_fn fn,
		     void *arg, size_t *undecoded);

#endif
