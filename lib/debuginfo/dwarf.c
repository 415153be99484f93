/* dwarf.c - libdw and libdwfl behind lp's own calls (see dwarf.h).
 *
 * Two ways in, because two kinds of callers: libdwfl's Dwfl for addresses of
 * live processes and for files symbolized by path (one Dwfl per process or
 * file, never one per address: each opens every ELF file it reports), and
 * a plain Dwarf begun on an ELF lp-trace has already opened to read its
 * symbols, segments and code.  lp_dwmod is libdwfl's Dwfl_Module itself,
 * lp_dwproc and lp_dwfile are a Dwfl (with its one module): no wrapper
 * allocated per module. */
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/procns.h"

static Dwfl_Module *dwmod(struct lp_dwmod *m)
{
	return (Dwfl_Module *)m;
}

static struct lp_dwmod *lpmod(Dwfl_Module *m)
{
	return (struct lp_dwmod *)m;
}

/* --- compile units by address, without .debug_aranges -------------------
 * dwarf_addrdie and libdwfl find a unit through .debug_aranges, which clang
 * does not write unless asked (-gdwarf-aranges): the units' own ranges
 * (DW_AT_low_pc/high_pc, DW_AT_ranges), read once per file. */

struct unit_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off off;		/* its DIE */
};

struct units {
	struct unit_range *v;	/* by lo */
	size_t n;
};

static int unit_range_cmp(const void *a, const void *b)
{
	const struct unit_range *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The unit of dw after the one at *off (0: the first): its DIE; false past
 * the last. */
static bool next_unit(Dwarf *dw, Dwarf_Off *off, Dwarf_Die *cu)
{
	Dwarf_Off next;
	size_t hsize;

	while (dw && dwarf_nextcu(dw, *off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Off cuoff = *off + hsize;
		*off = next;
		if (dwarf_offdie(dw, cuoff, cu))
			return true;
	}
	return false;
}

static struct units *units_read(Dwarf *dw)
{
	struct units *u = lp_calloc(1, sizeof(*u));
	Dwarf_Off off = 0;
	Dwarf_Die die;
	while (next_unit(dw, &off, &die)) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t at = 0;
		if (dwarf_tag(&die) != DW_TAG_compile_unit)
			continue;
		while ((at = dwarf_ranges(&die, at, &base, &lo, &hi)) > 0) {
			u->v = lp_reallocarray(u->v, u->n + 1, sizeof(*u->v));
			u->v[u->n++] = (struct unit_range){ lo, hi, dwarf_dieoffset(&die) };
		}
	}
	if (u->n)
		qsort(u->v, u->n, sizeof(*u->v), unit_range_cmp);
	return u;
}

static void units_free(struct units *u)
{
	if (u)
		free(u->v);
	free(u);
}

/* The unit of dw whose range holds addr: the last range starting at or
 * before it, or one before (a unit's span may hold another's). */
static bool units_find(const struct units *u, Dwarf *dw, Dwarf_Addr addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (u->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;)
		if (addr < u->v[i].hi)
			return dwarf_offdie(dw, u->v[i].off, cu) != NULL;
	return false;
}

/* The units of the modules libdwfl finds no unit in, by module: read once
 * each, freed with their Dwfl (dwfl_free).  A module's userdata is not
 * lp's to use (libdwfl's callbacks are given it).  Symbolizers may run in
 * threads of their own: one lock. */
static struct lp_hashmap module_units;
static pthread_mutex_t module_units_lock = PTHREAD_MUTEX_INITIALIZER;

/* A module's unit (addr a module address: less its bias, a file one),
 * when libdwfl finds none: dw, or NULL. */
static Dwarf *module_unit(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
	Dwarf *dw = dwfl_module_getdwarf(mod, bias);
	if (!dw)
		return NULL;
	uint64_t key = lp_hashmap__key((uint64_t)(uintptr_t)mod);
	pthread_mutex_lock(&module_units_lock);
	if (!module_units.cap)
		lp_hashmap__init(&module_units);
	struct units *u = lp_hashmap__get(&module_units, key);
	if (!u)
		lp_hashmap__put(&module_units, key, u = units_read(dw));
	bool found = units_find(u, dw, addr - *bias, cu);
	pthread_mutex_unlock(&module_units_lock);
	return found ? dw : NULL;
}

static int free_module_units(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			     void *arg)
{
	(void)userdata, (void)name, (void)start, (void)arg;
	units_free(lp_hashmap__del(&module_units, lp_hashmap__key((uint64_t)(uintptr_t)mod)));
	return DWARF_CB_OK;
}

static void dwfl_free(Dwfl *dwfl)
{
	pthread_mutex_lock(&module_units_lock);
	if (module_units.count)
		dwfl_getmodules(dwfl, free_module_units, NULL, 0);
	pthread_mutex_unlock(&module_units_lock);
	dwfl_end(dwfl);
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

/* libdwfl looks for a module's separate debug file in our file tree: by
 * build-id under /usr/lib/debug, by .gnu_debuglink beside the file (then
 * asks debuginfod).  A module open_elf opened through a process's root
 * (/proc/PID/root/...) has its debug files in that process's tree, where
 * its distribution installs them for its own libraries (Debian's
 * libc6-dbg: /usr/lib/debug/.build-id/NN/REST.debug): a container's, or
 * the host's seen from lp in a chroot.  So the build-id's file there
 * first, then libdwfl's search.  Only for the module's own debug file, not
 * for a DWARF's alternate file (dwz's .gnu_debugaltlink), the callback's
 * other use: that is left to libdwfl. */
static int proc_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			       GElf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	size_t rootlen = file_name ? lp_procns__root_len(file_name) : 0;
	Dwarf_Addr bias;
	GElf_Word crc;
	Elf *elf = rootlen ? dwfl_module_getelf(mod, &bias) : NULL;
	const char *link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
	/* The call for the module's own debug file passes its main file's
	 * .gnu_debuglink (or none); the call for an alternate file passes
	 * the name the debug file gives that. */
	bool own = link && debuglink_file ? !strcmp(link, debuglink_file) : link == debuglink_file;
	const unsigned char *id;
	GElf_Addr vaddr;
	int n;

	if (elf && own && (n = dwfl_module_build_id(mod, &id, &vaddr)) > 1) {
		char cand[PATH_MAX];
		int fd;

		build_id_file(cand, sizeof(cand), file_name, rootlen, id, (size_t)n);
		if ((fd = open(cand, O_RDONLY | O_CLOEXEC)) >= 0) {
			*debuginfo_file_name = lp_strdup(cand);
			return fd;
		}
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = proc_find_elf,
	.find_debuginfo = proc_find_debuginfo,
};

struct lp_dwproc *lp_dwproc__new(void)
{
	return (struct lp_dwproc *)dwfl_begin(&proc_callbacks);
}

void lp_dwproc__free(struct lp_dwproc *p)
{
	if (p)
		dwfl_free((Dwfl *)p);
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
	.find_debuginfo = dwfl_standard_find_debuginfo,
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
		dwfl_free(f->dwfl);
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
	Dwarf_Line *dl = module_unit(dwmod(m), addr, &cu, &bias) ? dwarf_getsrc_die(&cu, addr - bias) : NULL;
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

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* One function of a chain, with the call site of an inlined copy. */
static void func_of(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, bool nm,
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
	if (!cu && module_unit(dwmod(m), addr, &cubuf, &bias))
		cu = &cubuf;
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0, first = -1;
	size_t k = 0;

	for (int i = 0; i < n && first < 0; i++)
		if (is_function(&scopes[i]))
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
			if (!is_function(&scopes[i]))
				continue;
			func_of(&scopes[i], files, nfiles, nm, &out[k]);
			if (!out[k++].inlined)
				break;
		}
	}
	free(scopes);
	return k;
}

/* --- one file's DWARF read from its ELF ---------------------------------------- */

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


struct lp_dwarf {
	Elf *code;
	Dwarf *dw;		/* NULL: no DWARF */
	Dwarf_CFI *cfi[2];	/* .eh_frame, .debug_frame: read at first use */
	bool cfi_read;
	struct units *units;	/* read at first need (unit_of) */
};

struct lp_dwarf *lp_dwarf__open(Elf *code, Elf *debug)
{
	struct lp_dwarf *d = lp_calloc(1, sizeof(*d));

	d->code = code;
	d->dw = dwarf_begin_elf(debug, DWARF_C_READ, NULL);
	return d;
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
	if (d->dw)
		dwarf_end(d->dw);
	units_free(d->units);
	free(d);
}

/* The compile unit holding addr: .debug_aranges says, when the compiler
 * wrote it (GCC does, clang does not unless asked), else the units' own
 * ranges (struct units). */
static bool unit_of(struct lp_dwarf *d, Dwarf_Addr addr, Dwarf_Die *cu)
{
	if (!d->dw)
		return false;
	if (dwarf_addrdie(d->dw, addr, cu))
		return true;
	if (!d->units)
		d->units = units_read(d->dw);
	return units_find(d->units, d->dw, addr, cu);
}

/* The file that declares die: DW_AT_decl_file through its unit's file
 * table, where index 0 is the unit's primary file from DWARF 5 on (clang's
 * usual answer, which elfutils 0.188's dwarf_decl_file does not take). */
static const char *decl_file(Dwarf_Die *die)
{
	const char *f = dwarf_decl_file(die);
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;
	if (f || dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &a), &idx) != 0 ||
	    !dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
	    idx >= nfiles)
		return f;
	return dwarf_filesrc(files, idx, NULL, NULL);
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

/* die's DW_AT_type without typedefs and qualifiers; false: none (void). */
static bool strip_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
		return false;
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(out);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			return true;
		if (!dwarf_attr_integrate(out, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
			return false;	/* const void */
	}
	return true;
}

static Dwarf_Word udata(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word v = 0;

	if (dwarf_attr_integrate(die, name, &a))
		dwarf_formudata(&a, &v);
	return v;
}

static enum lp_dwtype_kind base_kind(Dwarf_Word enc)
{
	switch (enc) {
	case DW_ATE_signed:
		return LP_DWT_INT;
	case DW_ATE_unsigned:
		return LP_DWT_UINT;
	case DW_ATE_boolean:
		return LP_DWT_BOOL;
	case DW_ATE_signed_char:
	case DW_ATE_unsigned_char:
		return LP_DWT_CHAR;
	}
	return LP_DWT_OTHER;
}

/* The value type of die's DW_AT_type. */
static struct lp_dwtype value_type(Dwarf_Die *die)
{
	Dwarf_Die t, to;
	if (!strip_type(die, &t))
		return (struct lp_dwtype){ LP_DWT_VOID, 0, NULL };
	Dwarf_Word size = udata(&t, DW_AT_byte_size);
	struct lp_dwtype other = { LP_DWT_OTHER, 0, dwarf_diename(&t) };
	switch (dwarf_tag(&t)) {
	case DW_TAG_base_type:
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return other;
		enum lp_dwtype_kind k = base_kind(udata(&t, DW_AT_encoding));
		return k == LP_DWT_OTHER ? other : (struct lp_dwtype){ k, (int)size, NULL };
	case DW_TAG_enumeration_type:
		return (struct lp_dwtype){ LP_DWT_INT, size ? (int)size : 4, NULL };
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		/* Passed and kept as the object's address. */
		return (struct lp_dwtype){ LP_DWT_PTR, 8, NULL };
	case DW_TAG_pointer_type:
		if (strip_type(&t, &to) && dwarf_tag(&to) == DW_TAG_base_type &&
		    udata(&to, DW_AT_byte_size) == 1 && base_kind(udata(&to, DW_AT_encoding)) == LP_DWT_CHAR)
			return (struct lp_dwtype){ LP_DWT_STR, 8, NULL };
		return (struct lp_dwtype){ LP_DWT_PTR, 8, NULL };
	}
	return other;
}

/* a, b and c joined into buf, cut to fit. */
static void join3(char *buf, size_t size, const char *a, const char *b, const char *c)
{
	size_t len = 0;
	for (const char *const *p = (const char *const[]){ a, b, c, NULL }; *p; p++)
		for (const char *q = *p; *q && len + 1 < size; q++)
			buf[len++] = *q;
	buf[len] = '\0';
}

/* die's DW_AT_type as C writes it, "const char *", "struct req *",
 * "int[]" (a function pointer is "(function) *"): into buf, "void" for
 * none.  depth bounds a malformed chain. */
static void type_name(Dwarf_Die *die, char *buf, size_t size, int depth)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	char inner[128];

	if (size == 0)
		return;
	if (depth > 16 || !dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t)) {
		snprintf(buf, size, depth > 16 ? "?" : "void");
		return;
	}
	const char *nm = dwarf_diename(&t), *kw = "";
	switch (dwarf_tag(&t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *op = dwarf_tag(&t) == DW_TAG_pointer_type ? "*"
				 : dwarf_tag(&t) == DW_TAG_reference_type ? "&" : "&&";
		type_name(&t, inner, sizeof(inner), depth + 1);
		size_t l = strlen(inner);
		bool tight = l && (inner[l - 1] == '*' || inner[l - 1] == '&');
		join3(buf, size, inner, tight ? "" : " ", op);
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type: {
		const char *q = dwarf_tag(&t) == DW_TAG_const_type ? "const" : "volatile";
		type_name(&t, inner, sizeof(inner), depth + 1);
		size_t l = strlen(inner);
		/* A qualified pointer is "char *const"; a qualified value "const char". */
		if (l && (inner[l - 1] == '*' || inner[l - 1] == '&'))
			join3(buf, size, inner, q, "");
		else
			join3(buf, size, q, " ", inner);
		return;
	}
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		type_name(&t, buf, size, depth + 1);
		return;
	case DW_TAG_array_type:
		type_name(&t, inner, sizeof(inner), depth + 1);
		join3(buf, size, inner, "[]", "");
		return;
	case DW_TAG_subroutine_type:
		snprintf(buf, size, "(function)");
		return;
	case DW_TAG_structure_type: kw = "struct "; break;
	case DW_TAG_union_type: kw = "union "; break;
	case DW_TAG_enumeration_type: kw = "enum "; break;
	case DW_TAG_class_type: kw = "class "; break;
	}
	join3(buf, size, nm ? kw : "", nm ? nm : "?", "");
}

/* A function's formal parameters (up to max, *n of them). */
static void func_params(Dwarf_Die *fn, struct lp_dwparam *params, size_t max, size_t *n)
{
	Dwarf_Die child;

	*n = 0;
	if (dwarf_child(fn, &child) != 0)
		return;
	do {
		if (dwarf_tag(&child) != DW_TAG_formal_parameter || *n >= max)
			continue;
		params[*n].name = dwarf_diename(&child);
		params[*n].die = dwarf_dieoffset(&child);
		params[*n].type = value_type(&child);
		type_name(&child, params[*n].type_name, sizeof(params[*n].type_name), 0);
		++*n;
	} while (dwarf_siblingof(&child, &child) == 0);
}

struct func_find {
	uint64_t addr;
	Dwarf_Die die;
	bool found;
};

/* Whether a function's code starts at addr: its low_pc, or, split into
 * ranges (GCC's -O2 moves a function's unlikely paths to a .cold part:
 * DW_AT_ranges, no low_pc), the start of one of them. */
static bool starts_at(Dwarf_Die *die, uint64_t addr)
{
	Dwarf_Addr lo, base, l, h;
	ptrdiff_t off = 0;

	if (dwarf_lowpc(die, &lo) == 0)
		return lo == addr;
	while ((off = dwarf_ranges(die, off, &base, &l, &h)) > 0)
		if (l == addr)
			return true;
	return false;
}

static int func_cb(Dwarf_Die *die, void *arg)
{
	struct func_find *ff = arg;
	if (starts_at(die, ff->addr)) {
		ff->die = *die;
		ff->found = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

bool lp_dwarf__function(struct lp_dwarf *d, uint64_t addr, struct lp_dwtype *ret,
			struct lp_dwparam *params, size_t max, size_t *n)
{
	Dwarf_Die cu;
	struct func_find ff = { .addr = addr };

	*n = 0;
	/* Go's DWARF gives a function's results as parameters (and no
	 * aranges): its functions are read by their ABI's registers. */
	if (!unit_of(d, addr, &cu) || dwarf_srclang(&cu) == DW_LANG_Go)
		return false;
	dwarf_getfuncs(&cu, func_cb, &ff, 0);
	if (!ff.found)
		return false;
	*ret = value_type(&ff.die);
	func_params(&ff.die, params, max, n);
	return true;
}

struct lp_dwscope {
	struct lp_dwarf *d;
	uint64_t pc;
	Dwarf_Die *scopes;
	int n;
	Dwarf_Die var;		/* lp_dwscope__var's */
	/* lp_dwscope__nvars': each variable and the scope it is in */
	Dwarf_Die *vars;
	int *var_scope;
	size_t nvars;
	bool vars_read;
};

struct lp_dwscope *lp_dwarf__scope(struct lp_dwarf *d, uint64_t cu, uint64_t pc)
{
	struct lp_dwscope *sc = lp_calloc(1, sizeof(*sc));
	Dwarf_Die cudie;

	sc->d = d;
	sc->pc = pc;
	if (!d->dw || !dwarf_offdie(d->dw, cu, &cudie) ||
	    (sc->n = dwarf_getscopes(&cudie, pc, &sc->scopes)) < 0) {
		sc->n = 0;
		return sc;
	}
	/* dwarf_getscopes goes from an inlined copy to its abstract tree's
	 * scopes, not to the functions it is inlined into: those are the
	 * copy's own parents (as lp_dwmod__funcs reads the chain).  The
	 * blocks inside the copy, then the copy and what holds it. */
	int first = -1;
	for (int i = 0; i < sc->n && first < 0; i++)
		if (is_function(&sc->scopes[i]))
			first = i;
	Dwarf_Die *chain = NULL;
	int nc = first >= 0 && dwarf_tag(&sc->scopes[first]) == DW_TAG_inlined_subroutine
		 ? dwarf_getscopes_die(&sc->scopes[first], &chain) : 0;
	if (nc > 0) {
		Dwarf_Die *all = lp_reallocarray(NULL, (size_t)(first + nc), sizeof(*all));
		memcpy(all, sc->scopes, (size_t)first * sizeof(*all));
		memcpy(all + first, chain, (size_t)nc * sizeof(*all));
		free(sc->scopes);
		sc->scopes = all;
		sc->n = first + nc;
	}
	free(chain);
	return sc;
}

void lp_dwscope__free(struct lp_dwscope *sc)
{
	if (!sc)
		return;
	free(sc->scopes);
	free(sc->vars);
	free(sc->var_scope);
	free(sc);
}

size_t lp_dwscope__nvars(struct lp_dwscope *sc)
{
	if (sc->vars_read)
		return sc->nvars;
	sc->vars_read = true;
	for (int i = 0; i < sc->n; i++) {
		int tag = dwarf_tag(&sc->scopes[i]);
		if (tag != DW_TAG_lexical_block && !is_function(&sc->scopes[i]))
			break;	/* the unit, a namespace: globals */
		Dwarf_Die child;
		if (dwarf_child(&sc->scopes[i], &child) != 0)
			continue;
		do {
			tag = dwarf_tag(&child);
			if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
				continue;
			sc->vars = lp_reallocarray(sc->vars, sc->nvars + 1, sizeof(*sc->vars));
			sc->var_scope = lp_reallocarray(sc->var_scope, sc->nvars + 1, sizeof(*sc->var_scope));
			sc->vars[sc->nvars] = child;
			sc->var_scope[sc->nvars++] = i;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return sc->nvars;
}

void lp_dwscope__var_at(struct lp_dwscope *sc, size_t i, struct lp_dwvar *v)
{
	Dwarf_Die *die = &sc->vars[i];
	Dwarf_Attribute a;

	memset(v, 0, sizeof(*v));
	sc->var = *die;
	v->name = dwarf_diename(die);
	v->param = dwarf_tag(die) == DW_TAG_formal_parameter;
	v->type = value_type(die);
	type_name(die, v->type_name, sizeof(v->type_name), 0);
	for (int k = sc->var_scope[i]; k < sc->n; k++)
		if (is_function(&sc->scopes[k])) {
			v->func = dwarf_diename(&sc->scopes[k]);
			v->inlined = dwarf_tag(&sc->scopes[k]) == DW_TAG_inlined_subroutine;
			break;
		}
	if (!dwarf_attr(die, DW_AT_location, &a) && dwarf_attr_integrate(die, DW_AT_const_value, &a)) {
		Dwarf_Sword sv;
		Dwarf_Word uv;
		if (dwarf_formsdata(&a, &sv) == 0) {
			v->has_const = true;
			v->const_value = (long long)sv;
		} else if (dwarf_formudata(&a, &uv) == 0) {
			v->has_const = true;
			v->const_value = (long long)uv;
		}
	}
}

bool lp_dwscope__var(struct lp_dwscope *sc, const char *name, struct lp_dwtype *t)
{
	for (int i = 0; i < sc->n; i++) {
		Dwarf_Die child;
		if (dwarf_child(&sc->scopes[i], &child) != 0)
			continue;
		do {
			int tag = dwarf_tag(&child);
			if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
				continue;
			Dwarf_Attribute a;
			const char *nm = dwarf_attr_integrate(&child, DW_AT_name, &a) ?
				dwarf_formstring(&a) : NULL;
			if (nm && !strcmp(nm, name)) {
				sc->var = child;
				*t = value_type(&child);
				return true;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return false;
}

static const char *op_name(unsigned int op)
{
	switch (op) {
	case DW_OP_entry_value: case DW_OP_GNU_entry_value: return "DW_OP_entry_value";
	case DW_OP_stack_value: return "DW_OP_stack_value (a computed value)";
	case DW_OP_piece: return "DW_OP_piece (split across places)";
	case DW_OP_implicit_value: return "DW_OP_implicit_value";
	case DW_OP_implicit_pointer: case DW_OP_GNU_implicit_pointer: return "DW_OP_implicit_pointer";
	case DW_OP_lit0 ... DW_OP_lit31: return "DW_OP_litN (a constant)";
	case DW_OP_const1u ... DW_OP_consts: return "DW_OP_constN (a constant)";
	case DW_OP_call_frame_cfa: return "DW_OP_call_frame_cfa";
	case DW_OP_deref: return "DW_OP_deref";
	case DW_OP_plus_uconst: return "DW_OP_plus_uconst";
	}
	return "an unsupported DWARF expression";
}

/* DW_OP_fbreg off: the frame base of the innermost real function. */
static int frame_base_loc(struct lp_dwscope *sc, long long off, struct lp_dwloc *loc,
			  char *why, size_t whysize)
{
	for (int i = 0; i < sc->n; i++) {
		if (dwarf_tag(&sc->scopes[i]) != DW_TAG_subprogram)
			continue;
		Dwarf_Attribute fb;
		Dwarf_Op *fexpr;
		size_t flen;
		if (!dwarf_attr_integrate(&sc->scopes[i], DW_AT_frame_base, &fb) ||
		    dwarf_getlocation_addr(&fb, sc->pc, &fexpr, &flen, 1) <= 0 || flen != 1)
			break;
		unsigned int fop = fexpr[0].atom;
		if (fop == DW_OP_call_frame_cfa) {
			if (lp_dwarf__cfa(sc->d, sc->pc, &loc->cfa_reg, &loc->cfa_off) < 0) {
				snprintf(why, whysize, "no call frame information at 0x%llx",
					 (unsigned long long)sc->pc);
				return -1;
			}
			loc->mem = true;
			loc->reg = LP_DWLOC_CFA;
			loc->off = off;
			return 0;
		}
		if (fop >= DW_OP_breg0 && fop <= DW_OP_breg16) {
			loc->mem = true;
			loc->reg = fop - DW_OP_breg0;
			loc->off = off + (long long)fexpr[0].number;
			return 0;
		}
		/* A register's value (clang's rbp, or rsp at -O2). */
		if (fop >= DW_OP_reg0 && fop <= DW_OP_reg16) {
			loc->mem = true;
			loc->reg = fop - DW_OP_reg0;
			loc->off = off;
			return 0;
		}
		snprintf(why, whysize, "its frame base is %s", op_name(fop));
		return -1;
	}
	snprintf(why, whysize, "no usable frame base");
	return -1;
}

/* Names what makes an expression unsupported: a computed value first. */
static int unsupported(const Dwarf_Op *expr, size_t len, char *why, size_t whysize)
{
	unsigned int op = expr[0].atom, bad = op;
	for (size_t i = 0; i < len; i++) {
		unsigned int a = expr[i].atom;
		if (a == DW_OP_stack_value || a == DW_OP_piece || a == DW_OP_entry_value ||
		    a == DW_OP_GNU_entry_value || a == DW_OP_implicit_value) {
			bad = a;
			break;
		}
		if (i > 0 && bad == op)
			bad = a;
	}
	const char *nm = op_name(bad);
	char tmp[64];
	if (!strcmp(nm, "an unsupported DWARF expression")) {
		snprintf(tmp, sizeof(tmp), "a DWARF expression (op 0x%x)", bad);
		nm = tmp;
	}
	snprintf(why, whysize, "its location there is %s, not a register, a frame or register offset or a fixed address",
		 nm);
	return -1;
}

int lp_dwscope__location(struct lp_dwscope *sc, struct lp_dwloc *loc, char *why, size_t whysize)
{
	Dwarf_Attribute attr;
	Dwarf_Op *expr;
	size_t len;

	memset(loc, 0, sizeof(*loc));
	if (!dwarf_attr(&sc->var, DW_AT_location, &attr))
		return 1;
	int n = dwarf_getlocation_addr(&attr, sc->pc, &expr, &len, 1);
	if (n <= 0 || len == 0) {
		snprintf(why, whysize, "it is optimized out at this address");
		return -1;
	}
	unsigned int op = expr[0].atom;
	if (len == 1 && op >= DW_OP_reg0 && op <= DW_OP_reg16) {
		loc->reg = op - DW_OP_reg0;
	} else if (len == 1 && op == DW_OP_regx && expr[0].number <= 16) {
		loc->reg = (unsigned)expr[0].number;
	} else if (len == 1 && op >= DW_OP_breg0 && op <= DW_OP_breg16) {
		*loc = (struct lp_dwloc){ .mem = true, .reg = op - DW_OP_breg0,
					  .off = (long long)expr[0].number };
	} else if (len == 1 && op == DW_OP_addr) {
		*loc = (struct lp_dwloc){ .mem = true, .reg = LP_DWLOC_ADDR,
					  .off = (long long)expr[0].number };
	} else if (len == 1 && op == DW_OP_fbreg) {
		return frame_base_loc(sc, (long long)expr[0].number, loc, why, whysize);
	} else {
		return unsupported(expr, len, why, whysize);
	}
	return 0;
}

/* --- members read through a variable: r->conn, s.hdr.len ------------- */

static bool is_aggregate(Dwarf_Die *t)
{
	int tag = dwarf_tag(t);
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type;
}

/* The member name (len bytes) of aggregate s, looked for in its anonymous
 * members and (C++) base classes too: its DIE and its offset in s. */
static bool find_member(Dwarf_Die *s, const char *name, size_t len, Dwarf_Die *m, long long *off,
			int depth)
{
	Dwarf_Die child, t;

	if (depth > 8 || dwarf_child(s, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
			continue;
		const char *nm = dwarf_diename(&child);
		long long here = (long long)udata(&child, DW_AT_data_member_location);
		if (tag == DW_TAG_member && nm && strlen(nm) == len && !memcmp(nm, name, len)) {
			*m = child;
			*off = here;
			return true;
		}
		if ((tag == DW_TAG_inheritance || !nm) && strip_type(&child, &t) && is_aggregate(&t) &&
		    find_member(&t, name, len, m, off, depth + 1)) {
			*off += here;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The names of aggregate s's members, ", "-separated, into buf. */
static void member_names(Dwarf_Die *s, char *buf, size_t size)
{
	Dwarf_Die child;
	size_t len = 0;

	buf[0] = '\0';
	if (dwarf_child(s, &child) != 0)
		return;
	do {
		const char *nm = dwarf_diename(&child);
		if (dwarf_tag(&child) == DW_TAG_member && nm && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", nm);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* path applied to variable var (named expr): see lp_dwpath. */
static int resolve_path(Dwarf_Die *var, const char *expr, const char *path,
			struct lp_dwpath *out, char *why, size_t whysize)
{
	Dwarf_Die cur = *var, t;
	char tn[96], names[256];

	memset(out, 0, sizeof(*out));
	for (const char *p = path; *p;) {
		int done = (int)(p - expr);	/* the expression read so far */
		bool arrow = p[0] == '-' && p[1] == '>';
		if (!arrow && *p != '.') {
			snprintf(why, whysize, "expected -> or . after '%.*s'", done, expr);
			return -1;
		}
		p += arrow ? 2 : 1;
		size_t n = 0;
		while (isalnum((unsigned char)p[n]) || p[n] == '_')
			n++;
		if (!n) {
			snprintf(why, whysize, "expected a member's name after '%.*s'",
				 (int)(p - expr), expr);
			return -1;
		}
		type_name(&cur, tn, sizeof(tn), 0);
		if (!strip_type(&cur, &t)) {
			snprintf(why, whysize, "'%.*s' has no type", done, expr);
			return -1;
		}
		int tag = dwarf_tag(&t);
		bool ptr = tag == DW_TAG_pointer_type;
		/* A C++ reference reads as the object: r.x follows it. */
		bool ref = tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type;
		if (arrow && !ptr) {
			snprintf(why, whysize, "'%.*s' is not a pointer (it is %s)", done, expr, tn);
			return -1;
		}
		if (!arrow && ptr) {
			snprintf(why, whysize, "'%.*s' is a pointer (%s): '%.*s->%.*s'", done, expr,
				 tn, done, expr, (int)n, p);
			return -1;
		}
		if (ptr || ref) {
			if (out->nderef == LP_DW_MAX_DEREF) {
				snprintf(why, whysize, "at most %d pointers followed in a value",
					 LP_DW_MAX_DEREF);
				return -1;
			}
			if (!strip_type(&t, &t)) {
				snprintf(why, whysize, "'%.*s' is a void pointer", done, expr);
				return -1;
			}
			out->nderef++;
		}
		if (!is_aggregate(&t)) {
			snprintf(why, whysize, "'%.*s' is not a struct, union or class (it is %s)",
				 done, expr, tn);
			return -1;
		}
		if (dwarf_hasattr_integrate(&t, DW_AT_declaration)) {
			/* Its definition may be in another unit; not looked for. */
			snprintf(why, whysize, "the type of '%.*s' (%s) is incomplete where it is declared",
				 done, expr, tn);
			return -1;
		}
		Dwarf_Die m;
		long long off;
		if (!find_member(&t, p, n, &m, &off, 0)) {
			if (ptr || ref)	/* "struct req *": the struct's name */
				tn[strcspn(tn, "*&")] = '\0';
			size_t l = strlen(tn);
			while (l && tn[l - 1] == ' ')
				tn[--l] = '\0';
			member_names(&t, names, sizeof(names));
			snprintf(why, whysize, "%s has no member '%.*s' (it has: %s)", tn, (int)n, p,
				 names[0] ? names : "none");
			return -1;
		}
		if (dwarf_hasattr_integrate(&m, DW_AT_bit_size)) {
			snprintf(why, whysize, "'%.*s' is a bit-field", (int)n, p);
			return -1;
		}
		if (out->nderef)
			out->deref[out->nderef - 1] += off;
		else
			out->off0 += off;
		cur = m;
		p += n;
	}
	out->type = value_type(&cur);
	type_name(&cur, out->type_name, sizeof(out->type_name), 0);
	return 0;
}

int lp_dwarf__param_path(struct lp_dwarf *d, uint64_t param, const char *expr, size_t namelen,
			 struct lp_dwpath *out, char *why, size_t whysize)
{
	Dwarf_Die die;

	if (!d->dw || !dwarf_offdie(d->dw, param, &die)) {
		snprintf(why, whysize, "no DWARF entry for '%.*s'", (int)namelen, expr);
		return -1;
	}
	return resolve_path(&die, expr, expr + namelen, out, why, whysize);
}

int lp_dwscope__path(struct lp_dwscope *sc, const char *expr, size_t namelen,
		     struct lp_dwpath *out, char *why, size_t whysize)
{
	return resolve_path(&sc->var, expr, expr + namelen, out, why, whysize);
}

void lp_dwarf__each_line(struct lp_dwarf *d, void (*fn)(const struct lp_dwline *, void *),
			 void *arg)
{
	Dwarf_Off off = 0;
	Dwarf_Die cu;

	while (next_unit(d->dw, &off, &cu)) {
		Dwarf_Lines *lines;
		size_t nlines;
		uint64_t cuoff = dwarf_dieoffset(&cu);

		if (dwarf_getsrclines(&cu, &lines, &nlines) != 0)
			continue;
		for (size_t i = 0; i < nlines; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			struct lp_dwline row = { .file = dwarf_linesrc(l, NULL, NULL), .cu = cuoff };
			Dwarf_Addr addr = 0;

			if (!row.file)
				continue;
			dwarf_linebeginstatement(l, &row.stmt);
			dwarf_lineendsequence(l, &row.end);
			row.valid = dwarf_lineno(l, &row.line) == 0 && dwarf_lineaddr(l, &addr) == 0;
			row.addr = addr;
			fn(&row, arg);
		}
	}
}

bool lp_dwarf__line_at(struct lp_dwarf *d, uint64_t cu, uint64_t addr, const char **file,
		       int *line)
{
	Dwarf_Die cudie;
	Dwarf_Line *l;

	if (!d->dw || !dwarf_offdie(d->dw, cu, &cudie) || !(l = dwarf_getsrc_die(&cudie, addr)))
		return false;
	*file = dwarf_linesrc(l, NULL, NULL);
	return *file && dwarf_lineno(l, line) == 0;
}

uint64_t lp_dwarf__func_at(struct lp_dwarf *d, uint64_t cu, uint64_t pc)
{
	struct lp_dwscope *sc = lp_dwarf__scope(d, cu, pc);
	uint64_t scope = 0;

	for (int k = 0; k < sc->n; k++) {
		int tag = dwarf_tag(&sc->scopes[k]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			scope = dwarf_dieoffset(&sc->scopes[k]);
			break;
		}
	}
	lp_dwscope__free(sc);
	return scope;
}

int lp_dwarf__func_ranges(struct lp_dwarf *d, uint64_t cu, uint64_t pc, uint64_t *lo,
			  uint64_t *hi, size_t max)
{
	struct lp_dwscope *sc = lp_dwarf__scope(d, cu, pc);
	Dwarf_Die *fn = NULL;
	Dwarf_Addr base, l, h;
	ptrdiff_t off = 0;
	size_t nr = 0;

	for (int k = 0; k < sc->n; k++)
		if (dwarf_tag(&sc->scopes[k]) == DW_TAG_subprogram)
			fn = &sc->scopes[k];	/* the outermost */
	while (fn && nr < max && (off = dwarf_ranges(fn, off, &base, &l, &h)) > 0)
		if (h > l && h - l < (1u << 20)) {
			lo[nr] = l;
			hi[nr++] = h;
		}
	lp_dwscope__free(sc);
	return !nr || off > 0 ? -1 : (int)nr;	/* none, or more ranges than max */
}

struct each_func {
	void (*fn)(const struct lp_dwfuncinfo *, void *);
	void *arg;
	bool lines;
};

static int each_func_cb(Dwarf_Die *die, void *arg)
{
	struct each_func *ef = arg;
	struct lp_dwparam params[LP_DW_MAX_PARAMS];
	struct lp_dwfuncinfo fi = { .lines = ef->lines, .params = params };
	Dwarf_Addr lo;

	/* Out of line: an entry (an abstract instance or a declaration has
	 * none); split into ranges (a .cold part), the first, which GCC
	 * gives to the function's start. */
	Dwarf_Addr base, hi;
	if (dwarf_entrypc(die, &lo) != 0 && dwarf_lowpc(die, &lo) != 0 &&
	    dwarf_ranges(die, 0, &base, &lo, &hi) <= 0)
		return DWARF_CB_OK;
	fi.addr = lo;
	fi.name = dwarf_diename(die);
	fi.decl_file = decl_file(die);
	if (dwarf_decl_line(die, &fi.decl_line) != 0)
		fi.decl_line = 0;
	func_params(die, params, LP_DW_MAX_PARAMS, &fi.nparams);
	ef->fn(&fi, ef->arg);
	return DWARF_CB_OK;
}

void lp_dwarf__each_function(struct lp_dwarf *d, void (*fn)(const struct lp_dwfuncinfo *, void *),
			     void *arg)
{
	Dwarf_Off off = 0;
	Dwarf_Die cu;
	struct each_func ef = { fn, arg, false };

	while (next_unit(d->dw, &off, &cu)) {
		Dwarf_Lines *lines;
		size_t nlines;

		ef.lines = dwarf_getsrclines(&cu, &lines, &nlines) == 0 && nlines > 0;
		dwarf_getfuncs(&cu, each_func_cb, &ef, 0);
	}
}

/* Address ranges, for lp_dwarf__func_lines. */
struct ranges {
	uint64_t (*r)[2];
	size_t n;
};

static void add_ranges(Dwarf_Die *die, struct ranges *rs)
{
	Dwarf_Addr base, l, h;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &l, &h)) > 0)
		if (h > l) {
			rs->r = lp_reallocarray(rs->r, rs->n + 1, sizeof(*rs->r));
			rs->r[rs->n][0] = l;
			rs->r[rs->n++][1] = h;
		}
}

static bool in_ranges(const struct ranges *rs, uint64_t a)
{
	for (size_t i = 0; i < rs->n; i++)
		if (a >= rs->r[i][0] && a < rs->r[i][1])
			return true;
	return false;
}

/* The copies inlined anywhere inside die: their ranges, and the highest
 * call line of those called from file (*hi). */
static void inlined_within(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, const char *file,
			   struct ranges *rs, int *hi, int depth)
{
	Dwarf_Die child;
	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute a;
			Dwarf_Word cf, cl;
			add_ranges(&child, rs);
			if (dwarf_formudata(dwarf_attr(&child, DW_AT_call_file, &a), &cf) == 0 &&
			    dwarf_formudata(dwarf_attr(&child, DW_AT_call_line, &a), &cl) == 0 &&
			    files && cf < nfiles && !strcmp(dwarf_filesrc(files, cf, NULL, NULL) ?: "", file) &&
			    (int)cl > *hi)
				*hi = (int)cl;
		} else if (tag == DW_TAG_lexical_block) {
			inlined_within(&child, files, nfiles, file, rs, hi, depth + 1);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

bool lp_dwarf__func_lines(struct lp_dwarf *d, uint64_t addr, const char **file, int *lo, int *hi)
{
	Dwarf_Die cu;
	struct func_find ff = { .addr = addr };
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nlines, nfiles;

	if (!unit_of(d, addr, &cu))
		return false;
	dwarf_getfuncs(&cu, func_cb, &ff, 0);
	if (!ff.found || !(*file = decl_file(&ff.die)) || dwarf_decl_line(&ff.die, lo) != 0 ||
	    dwarf_getsrclines(&cu, &lines, &nlines) != 0 || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		return false;
	struct ranges own = { 0 }, inl = { 0 };
	*hi = *lo;
	add_ranges(&ff.die, &own);
	inlined_within(&ff.die, files, nfiles, *file, &inl, hi, 0);
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int line;
		const char *f = dwarf_linesrc(l, NULL, NULL);
		if (!f || dwarf_lineaddr(l, &a) != 0 || dwarf_lineno(l, &line) != 0 ||
		    !in_ranges(&own, a) || in_ranges(&inl, a) || strcmp(f, *file))
			continue;
		if (line > *hi)
			*hi = line;
	}
	free(own.r);
	free(inl.r);
	return true;
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
