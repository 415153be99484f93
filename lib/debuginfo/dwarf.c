/* dwarf.c - libdw and libdwfl behind lp's own calls (see dwarf.h).
 *
 * Two ways in, because two kinds of callers: libdwfl's Dwfl for addresses of
 * live processes and for files symbolized by path (one Dwfl per process or
 * file, never one per address: each opens every ELF file it reports), and
 * a plain Dwarf begun on an ELF lp-trace has already opened to read its
 * symbols, segments and code.  lp_dwmod is libdwfl's Dwfl_Module itself,
 * lp_dwproc and lp_dwfile are a Dwfl (with its one module): no wrapper
 * allocated per module.
 *
 * This file owns the first way: the Dwfl of a process (its modules, and
 * their files opened through its root) or of a file by path, and what a
 * module answers: its name, build-id, symbols, source lines, code segments,
 * FDEs and the chain of inlined calls at an address.  The plain Dwarf is
 * the other dwarf-*.c's (dwarf-internal.h lists them). */
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/dwarf-internal.h"
#include "debuginfo/procns.h"

static Dwfl_Module *dwmod(struct lp_dwmod *m)
{
	return (Dwfl_Module *)m;
}

static struct lp_dwmod *lpmod(Dwfl_Module *m)
{
	return (struct lp_dwmod *)m;
}

/* --- a process's modules ------------------------------------------------ */

/* The process whose file tree is not ours (a container's, a chroot's)
 * while lp_dwproc__report opens its new modules' files: libdwfl's callback
 * gives no way to a module's process (its userdata is the caller's). */
static _Thread_local pid_t foreign_pid;

/* libdwfl's own callback opens the path the maps name, which is the right
 * file only for a process that sees our file tree: a container's /mnt/w is
 * opened through /proc/PID/root (so its debuglink is looked for beside it
 * there too), and never the host's /mnt/w.  The vDSO and deleted files
 * (images in memory) go to libdwfl's callback. */
static int open_elf(Dwfl_Module *mod, void **userdata, const char *name,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	size_t n = strlen(name);

	if (!foreign_pid || name[0] != '/' || (n > 10 && !strcmp(name + n - 10, " (deleted)")))
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	char *path = lp_procns__path(foreign_pid, name);
	/* Regular files only: a mapped device may block in open. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;

	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		*file_name = path;	/* libdwfl's from now on */
		*elfp = NULL;
		return fd;
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return -1;
}

/* open_elf's file, unless it is a relocatable object: a linker maps its
 * input .o files as data, and libdwfl relocates such a module through a
 * section_address callback a process's Dwfl has none of (a call through
 * NULL in dwfl_module_getsym_info, seen recording a build with --all).
 * Code a process runs is never ET_REL. */
static int proc_find_elf(Dwfl_Module *mod, void **userdata, const char *name,
			 Dwarf_Addr base, char **file_name, Elf **elfp)
{
	int fd = open_elf(mod, userdata, name, base, file_name, elfp);
	GElf_Ehdr eh;
	bool rel;

	if (*elfp)
		rel = gelf_getehdr(*elfp, &eh) && eh.e_type == ET_REL;
	else if (fd >= 0) {
		Elf64_Half type = 0;

		/* e_type: at 16 in both classes' headers. */
		rel = pread(fd, &type, sizeof(type), 16) == sizeof(type) && type == ET_REL;
	} else
		return fd;
	if (!rel)
		return fd;
	if (*elfp) {
		elf_end(*elfp);
		*elfp = NULL;
	}
	if (fd >= 0)
		close(fd);
	free(*file_name);
	*file_name = NULL;
	return -1;
}

/* libdwfl looks for a module's separate debug file in our file tree: by
 * build-id under /usr/lib/debug, by .gnu_debuglink beside the file (then
 * asks debuginfod).  A module opened through a process's root
 * (/proc/PID/root/...) has its debug files in that process's tree, where
 * its distribution installs them for its own libraries (Debian's
 * libc6-dbg: /usr/lib/debug/.build-id/NN/REST.debug): a container's, or
 * the host's seen from lp in a chroot.  So the module's own debug file is
 * where lp_dwarf__debug_file finds it, the one lp-trace's probes read
 * their DWARF from, then libdwfl's search.  Only for the module's own
 * debug file, not for a DWARF's alternate file (dwz's
 * .gnu_debugaltlink), the callback's other use: that is left to libdwfl,
 * which checks what it is given against the module's build-id. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	Dwarf_Addr bias;
	GElf_Word crc;
	Elf *elf = file_name ? dwfl_module_getelf(mod, &bias) : NULL;
	const char *link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
	/* The call for the module's own debug file passes its main file's
	 * .gnu_debuglink (or none); the call for an alternate file passes
	 * the name the debug file gives that. */
	bool own = link && debuglink_file ? !strcmp(link, debuglink_file) : link == debuglink_file;
	char *path = elf && own ? lp_dwarf__debug_file(elf, file_name) : NULL;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		*debuginfo_file_name = path;
		return fd;
	}
	free(path);
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = proc_find_elf,
	.find_debuginfo = find_debuginfo,
};

struct lp_dwproc *lp_dwproc__new(void)
{
	return (struct lp_dwproc *)dwfl_begin(&proc_callbacks);
}

void lp_dwproc__free(struct lp_dwproc *p)
{
	if (p)
		lp_dw_dwfl_free((Dwfl *)p);
}

struct Dwfl *lp_dwproc__dwfl(struct lp_dwproc *p)
{
	return (Dwfl *)p;
}

/* Counts the modules; those of a process whose file tree is not ours are
 * opened now, through its root (proc_find_elf): libdwfl opens a file once,
 * the first time a module is asked for (a failure too). */
static int count_module(Dwfl_Module *mod, void **userdata, const char *name,
			Dwarf_Addr start, void *arg)
{
	Dwarf_Addr bias;

	if (foreign_pid)
		dwfl_module_getelf(mod, &bias);
	++*(size_t *)arg;
	return DWARF_CB_OK;
}

/* Reports pid's modules as dwfl_linux_proc_report does, but only the files
 * it has code mapped from (every mapping of those: the first gives the
 * load address), and its vDSO.  A process may map thousands of other files
 * (databases, a linker's inputs; lp-record itself, the ELF files it reads
 * for the processes it symbolizes), and libdwfl made each a module: each
 * report grew its address table by insertion, and an address in no module
 * (a frame-pointer chain gone astray) has the process reported again.
 * lp-record -a spent all its time there on its own samples (hundreds of
 * files mapped), and fell behind for good. */
static void report_code(Dwfl *dwfl, pid_t pid, const char *maps)
{
	struct line { size_t at, len; uint64_t file; } *lines = NULL;
	size_t n = 0, len = 0, klen = 0;
	char *text = NULL, *kept = NULL;
	struct lp_hashmap code;
	struct lp_maps m;
	FILE *all, *out, *f;

	if ((maps ? lp_maps__open_text(&m, maps, strlen(maps)) : lp_maps__open(&m, pid)) < 0)
		return;	/* a process that is gone: no module */
	/* One read; which files have code is known at its end, as their
	 * read-only first mappings come before it. */
	lp_hashmap__init(&code);
	all = open_memstream(&text, &len);
	while (lp_maps__next(&m)) {
		uint64_t file = m.ino ? lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, &m.dev,
								      sizeof(m.dev)) ^ m.ino) : 0;

		if (!strcmp(m.name, "[vdso]")) {
			/* As libdwfl names it: its image is read from memory. */
			char name[32];

			snprintf(name, sizeof(name), "[vdso: %d]", (int)pid);
			dwfl_report_module(dwfl, name, m.lo, m.hi);
		}
		if (!file)
			continue;
		if (m.exec)
			lp_hashmap__put(&code, file, (void *)1);
		fflush(all);
		lines = lp_reallocarray(lines, n + 1, sizeof(*lines));
		lines[n++] = (struct line){ len, strlen(m.line), file };
		fprintf(all, "%s\n", m.line);
	}
	lp_maps__close(&m);
	fclose(all);
	out = open_memstream(&kept, &klen);
	for (size_t i = 0; i < n; i++)
		if (lp_hashmap__get(&code, lines[i].file))
			fwrite(text + lines[i].at, 1, lines[i].len + 1, out);
	fclose(out);
	f = klen ? fmemopen(kept, klen, "r") : NULL;
	if (f) {
		dwfl_linux_proc_maps_report(dwfl, f);
		fclose(f);
	}
	free(kept);
	free(text);
	free(lines);
	lp_hashmap__fini(&code);
}

size_t lp_dwproc__report(struct lp_dwproc *p, pid_t pid, bool foreign, const char *maps)
{
	Dwfl *dwfl = (Dwfl *)p;
	size_t n = 0;

	dwfl_report_begin_add(dwfl);
	/* A process that is gone leaves the Dwfl empty but usable. */
	report_code(dwfl, pid, maps);
	dwfl_report_end(dwfl, NULL, NULL);
	foreign_pid = foreign ? pid : 0;
	dwfl_getmodules(dwfl, count_module, &n, 0);
	foreign_pid = 0;
	return n;
}

size_t lp_dwproc__report_files(struct lp_dwproc *p, const struct lp_dwfile_at *files, size_t n)
{
	Dwfl *dwfl = (Dwfl *)p;
	size_t k = 0;

	dwfl_report_begin(dwfl);
	/* add_p_vaddr: bias is the load bias itself (what perf's maps give:
	 * the mapping's start less its file offset), whatever the first
	 * segment's address; an executable not PIE has bias 0. */
	for (size_t i = 0; i < n; i++)
		k += dwfl_report_elf(dwfl, files[i].name, files[i].path, -1, files[i].bias, true) != NULL;
	dwfl_report_end(dwfl, NULL, NULL);
	return k;
}

/* dwfl_addrmodule answers an address above every module with the last
 * one (ld.so: seen for the "[uprobes]" page, elfutils 0.188): a module
 * only when it spans the address. */
struct lp_dwmod *lp_dwproc__module_at(struct lp_dwproc *p, uint64_t addr)
{
	Dwfl_Module *mod = p ? dwfl_addrmodule((Dwfl *)p, addr) : NULL;
	Dwarf_Addr lo, hi;

	if (mod && dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) &&
	    (addr < lo || addr >= hi))
		return NULL;
	return lpmod(mod);
}

struct each_module {
	void (*fn)(struct lp_dwmod *, void *);
	void *arg;
};

static int each_module_cb(Dwfl_Module *mod, void **userdata, const char *name,
			  Dwarf_Addr start, void *arg)
{
	struct each_module *e = arg;

	e->fn(lpmod(mod), e->arg);
	return DWARF_CB_OK;
}

void lp_dwproc__each_module(struct lp_dwproc *p, void (*fn)(struct lp_dwmod *, void *),
			    void *arg)
{
	struct each_module e = { fn, arg };

	if (p)
		dwfl_getmodules((Dwfl *)p, each_module_cb, &e, 0);
}

/* x86-64's return address column (rip). */
#define DW_X86_64_RA 16
/* How far past its module's entry point an address with no CFI is looked
 * at as entry code: ld.so's _start is 70 bytes. */
#define LP_ENTRY_CODE_MAX 4096

/* Whether an FDE of cfi (whose addresses are bias below the run-time
 * ones) covers run-time address pc. */
static bool cfi_covers(Dwarf_CFI *cfi, Dwarf_Addr bias, uint64_t pc)
{
	Dwarf_Frame *frame = NULL;
	bool covered = cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0;

	free(frame);
	return covered;
}

/* pc, which no CFI covers, is in the code at its module's ELF entry point,
 * up to the first FDE past it: ld.so's _start, which calls _dl_start and
 * then jumps to the program's entry, has no CFI at all (glibc's RTLD_START;
 * a program's _start has CFI saying its return address is undefined).  A
 * thread there is in its first frame: the process's, before main.  eh and
 * dw: the module's CFI, at biases ehbias and dwbias. */
static bool in_entry_code(Dwfl_Module *mod, Dwarf_CFI *eh, Dwarf_Addr ehbias, Dwarf_CFI *dw,
			  Dwarf_Addr dwbias, uint64_t pc)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh_mem, *ehdr = elf ? gelf_getehdr(elf, &eh_mem) : NULL;

	if (!ehdr || !ehdr->e_entry || pc < ehdr->e_entry + bias ||
	    pc - (ehdr->e_entry + bias) >= LP_ENTRY_CODE_MAX)
		return false;
	for (uint64_t a = ehdr->e_entry + bias; a <= pc; a++)
		if (cfi_covers(eh, ehbias, a) || cfi_covers(dw, dwbias, a))
			return false;
	return true;
}

bool lp_dwproc__outermost(struct lp_dwproc *p, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule((Dwfl *)p, pc);
	Dwarf_Addr ehbias = 0, dwbias = 0;
	Dwarf_CFI *cfi, *eh, *dw;
	Dwarf_Frame *frame = NULL;
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	bool undefined = false;

	if (!mod)
		return false;
	cfi = eh = dwfl_module_eh_cfi(mod, &ehbias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - ehbias, &frame) != 0) {
		free(frame);
		frame = NULL;
		cfi = dw = dwfl_module_dwarf_cfi(mod, &dwbias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - dwbias, &frame) != 0) {
			free(frame);
			return in_entry_code(mod, eh, ehbias, dw, dwbias, pc);
		}
	}
	/* libdw.h: no operations at ops_mem means "undefined". */
	if (dwarf_frame_register(frame, DW_X86_64_RA, ops_mem, &ops, &nops) == 0)
		undefined = nops == 0 && ops == ops_mem;
	free(frame);
	return undefined;
}

/* --- a file by path ------------------------------------------------------ */

struct lp_dwfile {
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct lp_dwfile *lp_dwfile__open(const char *path)
{
	struct lp_dwfile *f = lp_calloc(1, sizeof(*f));

	f->dwfl = dwfl_begin(&file_callbacks);
	if (!f->dwfl)
		return f;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, path, path, -1, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	return f;
}

struct lp_dwmod *lp_dwfile__module(struct lp_dwfile *f)
{
	return lpmod(f->mod);
}

void lp_dwfile__free(struct lp_dwfile *f)
{
	if (!f)
		return;
	if (f->dwfl)
		lp_dw_dwfl_free(f->dwfl);
	free(f);
}

/* --- a module -------------------------------------------------------------- */

const char *lp_dwmod__info(struct lp_dwmod *m, uint64_t *start, uint64_t *end)
{
	Dwarf_Addr lo = 0, hi = 0;
	const char *name = dwfl_module_info(dwmod(m), NULL, &lo, &hi, NULL, NULL, NULL, NULL);

	if (start)
		*start = lo;
	if (end)
		*end = hi;
	return name;
}

void **lp_dwmod__userdata(struct lp_dwmod *m)
{
	void **userdata;

	dwfl_module_info(dwmod(m), &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	return userdata;
}

int lp_dwmod__build_id(struct lp_dwmod *m, const unsigned char **bits)
{
	GElf_Addr vaddr;

	return dwfl_module_build_id(dwmod(m), bits, &vaddr);
}

bool lp_dwmod__bias(struct lp_dwmod *m, uint64_t *bias)
{
	Dwarf_Addr b = 0;
	bool ok = dwfl_module_getelf(dwmod(m), &b) != NULL;

	*bias = b;
	return ok;
}

Elf *lp_dwmod__elf(struct lp_dwmod *m, uint64_t *bias)
{
	Dwarf_Addr b = 0;
	Elf *elf = dwfl_module_getelf(dwmod(m), &b);

	*bias = b;
	return elf;
}

int lp_dwmod__nsyms(struct lp_dwmod *m)
{
	return dwfl_module_getsymtab(dwmod(m));
}

const char *lp_dwmod__sym(struct lp_dwmod *m, int i, GElf_Sym *sym, uint64_t *addr,
			  GElf_Word *shndx)
{
	GElf_Addr a = 0;
	const char *name = dwfl_module_getsym_info(dwmod(m), i, sym, &a, shndx, NULL, NULL);

	*addr = a;
	return name;
}

const char *lp_dwmod__line(struct lp_dwmod *m, uint64_t addr, int *line)
{
	Dwfl_Line *l = dwfl_module_getsrc(dwmod(m), addr);
	Dwarf_Die cu;
	Dwarf_Addr bias;

	*line = 0;
	if (l)
		return dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
	Dwarf_Line *dl = lp_dw_module_unit(dwmod(m), addr, &cu, &bias) ? dwarf_getsrc_die(&cu, addr - bias) : NULL;
	if (!dl || dwarf_lineno(dl, line) != 0)
		return NULL;
	return dwarf_linesrc(dl, NULL, NULL);
}

/* The start (ELF virtual address) of the function holding vaddr, from
 * its FDE: the .eh_frame_hdr's table of FDEs sorted by their first
 * address (what the linker writes for unwinders' binary search, kept by
 * strip), the last FDE starting at or before vaddr, once libdw confirms
 * an FDE covers vaddr (FDEs do not overlap, so it is that one).  libdw's
 * own lookup (dwarf_cfi_addrframe) answers the covering row of CFI, not
 * where its FDE starts.  Only the table encoding every linker writes
 * (datarel sdata4 pairs, udata4 count) is read. */
static bool eh_frame_hdr_search(Elf *elf, const GElf_Phdr *ph, uint64_t vaddr, uint64_t *start)
{
	/* libelf keeps the chunk (one per file, not per call). */
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_BYTE);
	const uint8_t *h = d ? d->d_buf : NULL;
	size_t ptrsize = h && d->d_size >= 4 ? ((h[1] & 0xf) == DW_EH_PE_udata8 ||
						(h[1] & 0xf) == DW_EH_PE_sdata8 ||
						(h[1] & 0xf) == DW_EH_PE_absptr ? 8 : 4) : 0;
	uint32_t count;

	if (!h || h[0] != 1 || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || d->d_size < 8 + ptrsize)
		return false;
	memcpy(&count, h + 4 + ptrsize, 4);
	const uint8_t *table = h + 8 + ptrsize;
	if (count > (d->d_size - 8 - ptrsize) / 8)
		return false;
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int32_t loc;

		memcpy(&loc, table + 8 * mid, 4);
		if (ph->p_vaddr + (int64_t)loc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	int32_t loc;
	memcpy(&loc, table + 8 * (lo - 1), 4);
	*start = ph->p_vaddr + (int64_t)loc;
	return true;
}

bool lp_dwmod__in_code(struct lp_dwmod *m, uint64_t vaddr)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(dwmod(m), &bias);
	size_t nph;

	if (!elf || elf_getphdrnum(elf, &nph) < 0)
		return true;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_memsz)
			return true;
	}
	return false;
}

bool lp_dwmod__fde_start(struct lp_dwmod *m, uint64_t vaddr, uint64_t *start)
{
	Dwarf_Addr bias, cbias;
	Elf *elf = dwfl_module_getelf(dwmod(m), &bias);
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(dwmod(m), &cbias);
	Dwarf_Frame *frame = NULL;
	size_t nph;

	if (!elf || !cfi || elf_getphdrnum(elf, &nph) < 0)
		return false;
	if (dwarf_cfi_addrframe(cfi, vaddr + bias - cbias, &frame) != 0)
		return false;
	free(frame);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			return eh_frame_hdr_search(elf, &ph, vaddr, start);
	}
	return false;
}

/* binutils' non_mangled(): the DIE's language does not mangle names. */
static bool non_mangled(Dwarf_Die *die)
{
	Dwarf_Die cu;
	Dwarf_Attribute attr;
	Dwarf_Word lang;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || !dwarf_attr(&cu, DW_AT_language, &attr) ||
	    dwarf_formudata(&attr, &lang) != 0)
		return false;
	switch (lang) {
	case DW_LANG_C89: case DW_LANG_C: case DW_LANG_Ada83: case DW_LANG_Cobol74:
	case DW_LANG_Cobol85: case DW_LANG_Fortran77: case DW_LANG_Pascal83:
	case DW_LANG_C99: case DW_LANG_Ada95: case DW_LANG_PLI: case DW_LANG_UPC:
	case DW_LANG_C11:
		return true;
	}
	return false;
}

bool lp_dw_is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

void lp_dw_func_of(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, bool nm,
		   struct lp_dwfunc *f)
{
	Dwarf_Attribute attr;
	Dwarf_Word file, line = 0;

	memset(f, 0, sizeof(*f));
	f->non_mangled = nm;
	f->inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		f->linkage = dwarf_formstring(&attr);
	f->name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	if (!f->inlined)
		return;
	bool has_file = dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &file) == 0;
	bool has_line = dwarf_attr(die, DW_AT_call_line, &attr) &&
			dwarf_formudata(&attr, &line) == 0;
	if (has_file && files && file < nfiles)
		f->call_file = dwarf_filesrc(files, file, NULL, NULL);
	f->call_line = line;
	f->call_known = has_file && has_line;
}

/* The one walker of inline chains.  dwarf_getscopes gives the innermost
 * function's scopes and then its abstract tree's (not the functions it is
 * inlined into); when the innermost is an inlined copy, the chain of calls
 * is that DIE's own parents (dwarf_getscopes_die). */
size_t lp_dwmod__funcs(struct lp_dwmod *m, uint64_t addr, struct lp_dwfunc *out, size_t max)
{
	Dwarf_Addr bias;
	Dwarf_Die cubuf, *cu = dwfl_module_addrdie(dwmod(m), addr, &bias);
	if (!cu && lp_dw_module_unit(dwmod(m), addr, &cubuf, &bias))
		cu = &cubuf;
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0, first = -1;
	size_t k = 0;

	for (int i = 0; i < n && first < 0; i++)
		if (lp_dw_is_function(&scopes[i]))
			first = i;
	if (first >= 0 && dwarf_tag(&scopes[first]) == DW_TAG_inlined_subroutine) {
		Dwarf_Die *chain = NULL;
		int nc = dwarf_getscopes_die(&scopes[first], &chain);

		if (nc > 0) {
			free(scopes);
			scopes = chain;
			n = nc;
			first = 0;
		} else {
			free(chain);
		}
	}
	if (first >= 0) {
		Dwarf_Files *files = NULL;
		size_t nfiles = 0;
		bool nm = non_mangled(&scopes[first]);

		if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
			files = NULL;
		for (int i = first; i < n && k < max; i++) {
			if (!lp_dw_is_function(&scopes[i]))
				continue;
			lp_dw_func_of(&scopes[i], files, nfiles, nm, &out[k]);
			if (!out[k++].inlined)
				break;
		}
	}
	free(scopes);
	return k;
}
