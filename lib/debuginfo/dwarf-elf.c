/* dwarf-elf.c - one file's DWARF (struct lp_dwarf, for lp-trace's
 * probes): where a stripped file's debug file is, taking the DWARF of a
 * file opened by path, the compile unit holding an address, the call frame
 * information (.eh_frame, .debug_frame) and the file offset of an
 * address.  What is read through it: dwarf-vars.c and dwarf-lines.c. */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/dwarf-internal.h"
#include "debuginfo/procns.h"

/* Where gdb and libdwfl look for the debug file of build-id id (n bytes)
 * in the file tree whose root is the path's first rootlen bytes (0: ours;
 * "/proc/PID/root": a process's), into cand. */
static void build_id_file(char *cand, size_t size, const char *root, size_t rootlen,
			  const unsigned char *id, size_t n)
{
	int len = snprintf(cand, size, "%.*s/usr/lib/debug/.build-id/%02x/", (int)rootlen, root, id[0]);

	for (size_t i = 1; i < n && len < (int)size - 8; i++)
		len += snprintf(cand + len, size - (size_t)len, "%02x", id[i]);
	snprintf(cand + len, size - (size_t)len, ".debug");
}

char *lp_dwarf__debug_file(Elf *elf, const char *path)
{
	char cand[PATH_MAX];
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	/* By build-id in the tree the file is in, then (a process's tree:
	 * /proc/PID/root/...) in ours, as proc_find_debuginfo. */
	size_t rootlen = lp_procns__root_len(path), roots[2] = { rootlen, 0 };
	for (int i = 0; n > 1 && i < (rootlen ? 2 : 1); i++) {
		build_id_file(cand, sizeof(cand), path, roots[i], id, (size_t)n);
		if (access(cand, R_OK) == 0)
			return lp_strdup(cand);
	}
	GElf_Word crc;
	const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (!link || strchr(link, '/'))
		return NULL;
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".";
	for (int i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(cand, sizeof(cand), "%.*s/%s", dlen, dir, link);
		else if (i == 1)
			snprintf(cand, sizeof(cand), "%.*s/.debug/%s", dlen, dir, link);
		else	/* in the tree the file is in */
			snprintf(cand, sizeof(cand), "%.*s/usr/lib/debug%.*s/%s", (int)rootlen, path,
				 dlen - (int)rootlen, dir + rootlen, link);
		if (strcmp(cand, path) && access(cand, R_OK) == 0)
			return lp_strdup(cand);
	}
	return NULL;
}

struct lp_dwarf *lp_dwarf__open(Elf *code, struct lp_dwmod *m)
{
	struct lp_dwarf *d = lp_calloc(1, sizeof(*d));
	Dwfl_Module *mod = (Dwfl_Module *)m;
	Dwarf_Addr bias;
	const char *file = NULL, *debug = NULL;

	d->code = code;
	/* The Dwarf's addresses are the file's link-time ones, as probes
	 * take them, wherever its Dwfl placed the module (bias). */
	d->dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
	if (d->dw && dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file, &debug) && debug &&
	    (!file || strcmp(file, debug)))
		d->debug_path = debug;
	return d;
}

const char *lp_dwarf__debug_file_of(const struct lp_dwarf *d, Elf **elf)
{
	*elf = d->debug_path ? dwarf_getelf(d->dw) : NULL;
	return d->debug_path;
}

bool lp_dwarf__has_dwarf(const struct lp_dwarf *d)
{
	return d->dw != NULL;
}

void lp_dwarf__free(struct lp_dwarf *d)
{
	if (!d)
		return;
	if (d->cfi[0])
		dwarf_cfi_end(d->cfi[0]);	/* libdw frees the other with dw */
	lp_dw_units_free(d->units);
	free(d);
}

/* The compile unit holding addr: .debug_aranges says, when the compiler
 * wrote it (GCC does, clang does not unless asked), else the units' own
 * ranges (struct units). */
bool lp_dw_unit_of(struct lp_dwarf *d, Dwarf_Addr addr, Dwarf_Die *cu)
{
	if (!d->dw)
		return false;
	if (dwarf_addrdie(d->dw, addr, cu))
		return true;
	if (!d->units)
		d->units = lp_dw_units_read(d->dw);
	return lp_dw_units_find(d->units, d->dw, addr, cu);
}

static Dwarf_CFI *const *file_cfi(struct lp_dwarf *d)
{
	if (!d->cfi_read) {
		d->cfi_read = true;
		d->cfi[0] = dwarf_getcfi_elf(d->code);
		d->cfi[1] = d->dw ? dwarf_getcfi(d->dw) : NULL;
	}
	return d->cfi;
}

int lp_dwarf__cfa(struct lp_dwarf *d, uint64_t pc, unsigned *reg, long long *off)
{
	Dwarf_CFI *const *cfis = file_cfi(d);

	for (int i = 0; i < 2; i++) {
		Dwarf_Frame *frame;
		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], pc, &frame) != 0)
			continue;
		Dwarf_Op *ops;
		size_t nops;
		int ok = dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1;
		if (ok && ops[0].atom == DW_OP_bregx) {
			*reg = (unsigned)ops[0].number;
			*off = (long long)ops[0].number2;
		} else if (ok && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg16) {
			*reg = ops[0].atom - DW_OP_breg0;
			*off = (long long)ops[0].number;
		} else {
			ok = 0;
		}
		free(frame);
		if (ok)
			return 0;
	}
	return -1;
}

int lp_dwarf__fde_range(struct lp_dwarf *d, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	Dwarf_CFI *const *cfis = file_cfi(d);

	for (int i = 0; i < 2; i++) {
		Dwarf_Frame *frame;
		Dwarf_Addr l, h;
		bool sig;
		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], vaddr, &frame) != 0)
			continue;
		int ok = dwarf_frame_info(frame, &l, &h, &sig) >= 0 && l == vaddr && h > l;
		free(frame);
		if (ok) {
			*lo = l;
			*hi = h;
			return 0;
		}
	}
	return -1;
}

int lp_dwarf__file_offset(Elf *elf, uint64_t vaddr, uint64_t *off, uint64_t *avail)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			if (avail)
				*avail = ph.p_vaddr + ph.p_filesz - vaddr;
			return 0;
		}
	}
	return -1;
}
