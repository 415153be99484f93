/* pyprobe.c - the sites of python:[MODULE:]NAME probes in a CPython 3.11,
 * 3.12 or 3.13 binary, and their globs (pyprobe.h).
 *
 * From 3.11 on no Python-to-Python call goes through an exported function: the
 * eval loop pushes the callee's frame and jumps on, so the only places
 * every call passes are the opcode handlers.  They have no symbols in a
 * stripped interpreter, but the loop dispatches through a table of their
 * addresses, opcode_targets (Python/opcode_targets.h: 256 code pointers,
 * every unused opcode pointing at one _unknown_opcode label: 74 of them in
 * Debian's 3.11), which lies in read-only data and is found by its shape.
 * A uprobe on a handler's first instruction (a load or store) would be
 * single-stepped, ~6 us a hit; the first branch after it (the jcc of
 * RESUME's eval-breaker check, RETURN_VALUE's use_tracing check) is
 * emulated, ~0.9 us, and as good a place when nothing jumps past the
 * handler's start into the code before it.  3.12's and 3.13's returns
 * have no branch before they pop their frame: their probe is at the entry
 * of the function that pops it. */
#include "capture/trace/pyprobe.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/util.h"
#include "capture/python.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/elftab.h"
#include "debuginfo/insnflow.h"

/* The opcodes whose handlers are probed, per version (Lib/opcode.py, and
 * dis's numbering of the specialized ones): a function starts at RESUME,
 * or at the form the interpreter specializes it to (3.11's RESUME_QUICK,
 * 3.13's RESUME_CHECK; 3.12 has none: 0); a frame returns at RETURN_VALUE,
 * or from 3.12 on at RETURN_CONST. */
static const struct py_ops {
	unsigned major, minor;
	unsigned resume, quick, return_value, return_const;
	const char *quick_name;
	/* Returns are seen where they pop their frame (LP_PROBE_F_PYPOP:
	 * 3.12's RETURN_VALUE has no branch before, and the frame running is
	 * the caller's by then), with the thread state's exception at
	 * tstate_exc (Include/cpython/pystate.h, current_exception). */
	bool pops;
	unsigned tstate_exc;
	/* A RESUME written back over its specialized form stays (3.11: the
	 * code's warm-up is spent; 3.13's RESUME specializes itself again at
	 * once): lib/capture/trace/pywatch.c. */
	bool stays;
} versions[] = {
	{ 3, 11, 151, 150, 83, 0, "RESUME_QUICK", false, 0, true },
	{ 3, 12, 151, 0, 83, 121, NULL, true, 96, false },
	{ 3, 13, 149, 207, 36, 103, "RESUME_CHECK", true, 112, false },
};

#define NTARGETS 256
#define MIN_UNKNOWN 40		/* table entries on _unknown_opcode: Debian's 3.11 has 74 */
#define MAX_HOPS 4		/* direct jmps followed from a handler to its branch */

struct range {
	uint64_t lo, hi;
	bool entry;		/* a handler's first address: jumps may land there */
};

struct bin {
	Elf *elf;
	struct range *text;	/* executable segments */
	size_t ntext;
	struct range *funcs;	/* .dynsym's functions */
	size_t nfuncs;
	uint64_t runtime, version;
	uint64_t traceback;	/* PyTraceBack_Here */
	uint64_t clear_pop;	/* _PyEval_FrameClearAndPop (3.13 exports it) */
	struct range eval;	/* _PyEval_EvalFrameDefault */
};

static bool in_ranges(const struct range *r, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return true;
	return false;
}

/* size bytes of the file at link-time address vaddr (fewer when the
 * segment ends first: *got), or NULL. */
static const unsigned char *bytes_at(Elf *elf, uint64_t vaddr, size_t size, size_t *got)
{
	uint64_t off, avail;

	if (lp_dwarf__file_offset(elf, vaddr, &off, &avail) < 0)
		return NULL;
	*got = size < avail ? size : (size_t)avail;
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)off, *got, ELF_T_BYTE);
	return d && d->d_buf ? d->d_buf : NULL;
}

static void read_bin(struct bin *b)
{
	size_t n;

	if (elf_getphdrnum(b->elf, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X))
				continue;
			b->text = lp_reallocarray(b->text, b->ntext + 1, sizeof(*b->text));
			b->text[b->ntext++] = (struct range){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz, false };
		}
	struct lp_elfsyms it;
	GElf_Sym s;
	const char *name;

	if (!lp_elfsyms__open(&it, b->elf, SHT_DYNSYM))
		return;
	while ((name = lp_elfsyms__next(&it, &s))) {
		if (s.st_shndx == SHN_UNDEF)
			continue;
		if (!strcmp(name, "_PyRuntime"))
			b->runtime = s.st_value;
		else if (!strcmp(name, "Py_Version"))
			b->version = s.st_value;
		else if (!strcmp(name, "_PyEval_EvalFrameDefault"))
			b->eval = (struct range){ s.st_value, s.st_value + s.st_size, false };
		else if (!strcmp(name, "PyTraceBack_Here") && GELF_ST_TYPE(s.st_info) == STT_FUNC)
			b->traceback = s.st_value;
		else if (!strcmp(name, "_PyEval_FrameClearAndPop") && GELF_ST_TYPE(s.st_info) == STT_FUNC)
			b->clear_pop = s.st_value;
		if (GELF_ST_TYPE(s.st_info) == STT_FUNC && s.st_size) {
			b->funcs = lp_reallocarray(b->funcs, b->nfuncs + 1, sizeof(*b->funcs));
			b->funcs[b->nfuncs++] = (struct range){ s.st_value, s.st_value + s.st_size, false };
		}
	}
}

static void close_bin(struct bin *b, int fd)
{
	if (b->elf)
		elf_end(b->elf);
	if (fd >= 0)
		close(fd);
	free(b->text);
	free(b->funcs);
	memset(b, 0, sizeof(*b));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* A handler may be in _PyEval_EvalFrameDefault or in the binary's cold
 * text (GCC's .cold parts, no symbol), not in another function. */
static bool handler_place(const struct bin *b, uint64_t a)
{
	if (a >= b->eval.lo && a < b->eval.hi)
		return true;
	return in_ranges(b->text, b->ntext, a) && !in_ranges(b->funcs, b->nfuncs, a);
}

/* Whether the 256 words at v are opcode_targets: code addresses, one of
 * them (_unknown_opcode's) shared by at least MIN_UNKNOWN, the handlers
 * of ops in their places and apart from it. */
static bool is_table(const struct bin *b, const uint64_t *v, const struct py_ops *ops)
{
	uint64_t sorted[NTARGETS], unknown = 0;
	size_t most = 0;

	for (size_t i = 0; i < NTARGETS; i++)
		if (!in_ranges(b->text, b->ntext, v[i]))
			return false;
	memcpy(sorted, v, sizeof(sorted));
	qsort(sorted, NTARGETS, sizeof(*sorted), cmp_u64);
	for (size_t i = 1, run = 1; i <= NTARGETS; i++) {
		if (i < NTARGETS && sorted[i] == sorted[i - 1]) {
			run++;
			continue;
		}
		if (run > most) {
			most = run;
			unknown = sorted[i - 1];
		}
		run = 1;
	}
	if (most < MIN_UNKNOWN)
		return false;
	const unsigned op[] = { ops->resume, ops->quick, ops->return_value, ops->return_const };

	for (size_t i = 0; i < 4; i++)
		if (op[i] && (v[op[i]] == unknown || !handler_place(b, v[op[i]])))
			return false;
	return true;
}

/* opcode_targets' 256 entries into v: the first run of words in
 * allocated, non-executable data that is the table.  -1 when none is. */
static int find_table(const struct bin *b, const struct py_ops *ops, uint64_t *v)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(b->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);

		if (!d || !d->d_buf || d->d_size < NTARGETS * 8)
			continue;
		const unsigned char *p = d->d_buf;
		size_t words = d->d_size / 8, run = 0;
		/* The table is 8-byte aligned: words from an aligned address. */
		size_t skip = (8 - sh.sh_addr % 8) % 8;

		if (skip)
			words = (d->d_size - skip) / 8;
		for (size_t i = 0; i < words; i++) {
			uint64_t w;

			memcpy(&w, p + skip + 8 * i, 8);
			run = in_ranges(b->text, b->ntext, w) ? run + 1 : 0;
			if (run < NTARGETS)
				continue;
			memcpy(v, p + skip + 8 * (i + 1 - NTARGETS), NTARGETS * 8);
			if (is_table(b, v, ops))
				return 0;
		}
	}
	return -1;
}

/* From handler h, straight on (through direct jmps) to the first branch
 * that may go two ways: *site its address, the ranges passed into path
 * (each from where it was entered to the branch or jmp, included).  0, or
 * -1 with *why. */
static int first_branch(const struct bin *b, uint64_t h, struct lp_pyprobe_site *site,
			struct range *path, size_t *npath, const char **why)
{
	uint64_t at = h;

	*npath = 0;
	for (int hop = 0; hop <= MAX_HOPS; hop++) {
		size_t got;
		const unsigned char *code = bytes_at(b->elf, at, 512, &got);
		struct lp_insnflow f = { 0 };

		if (!code || lp_insnflow__decode(code, got, at, &f) < 0) {
			*why = "its code cannot be read or decoded";
			return -1;
		}
		for (size_t i = 0; i < f.n; i++) {
			const struct lp_insnflow_insn *in = &f.insns[i];

			if (i && in->vaddr != f.insns[i - 1].vaddr + f.insns[i - 1].size)
				break;	/* undecoded bytes: give up below */
			if (!in->branches && in->falls_through)
				continue;
			path[(*npath)++] = (struct range){ at, in->vaddr + 1, hop == 0 };
			if (in->branches && in->falls_through && in->target) {
				site->vaddr = in->vaddr;
				site->insn = lp_insn__classify(in->bytes, in->size);
				lp_insnflow__fini(&f);
				if (site->insn != LP_INSN_EMULATED) {
					*why = "its first branch is not one the kernel emulates";
					return -1;
				}
				return 0;
			}
			if (in->branches && !in->falls_through && in->target) {
				at = in->target;	/* jmp: on there */
				goto next;
			}
			lp_insnflow__fini(&f);
			*why = "it leaves by an indirect jump or a return before any branch";
			return -1;
		}
		lp_insnflow__fini(&f);
		*why = "no branch within 512 bytes of it";
		return -1;
next:
		lp_insnflow__fini(&f);
	}
	*why = "more than 4 jumps before its first branch";
	return -1;
}

/* Instructions explored from a handler before it must have joined. */
#define MAX_JOIN_INSNS 256
#define MAX_JOIN_RANGES 16

/* Up to 512 bytes of code from at decoded into f, a way followed from a
 * handler after npath others (at most MAX_JOIN_RANGES).  0, or -1 with
 * *why. */
static int decode_way(const struct bin *b, uint64_t at, size_t npath, struct lp_insnflow *f,
		      const char **why)
{
	size_t got;
	const unsigned char *code = npath < MAX_JOIN_RANGES ? bytes_at(b->elf, at, 512, &got) : NULL;

	if (!code || lp_insnflow__decode(code, got, at, f) < 0) {
		*why = npath < MAX_JOIN_RANGES ? "its code cannot be read or decoded"
					       : "its code branches too often";
		return -1;
	}
	return 0;
}

/* Whether a is in a PLT section (.plt, .plt.sec, .plt.got). */
static bool in_plt(const struct bin *b, uint64_t a)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t strndx;

	if (elf_getshdrstrndx(b->elf, &strndx) < 0)
		return false;
	while ((scn = elf_nextscn(b->elf, scn))) {
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(b->elf, strndx, sh.sh_name) : NULL;

		if (name && !strncmp(name, ".plt", 4) && a >= sh.sh_addr && a < sh.sh_addr + sh.sh_size)
			return true;
	}
	return false;
}

/* From handler h, every way on (both sides of each branch: an object's
 * reference count bumped unless it is immortal) to its first call, a
 * direct one, the same on every way: *callee its target, or when that is a
 * PLT stub, plt_callee (the exported function it stands for; 0: none
 * known).  The ranges passed go into path (MAX_JOIN_RANGES at most).  0,
 * or -1 with *why. */
static int first_call(const struct bin *b, uint64_t h, uint64_t plt_callee, uint64_t *callee,
		      struct range *path, size_t *npath, const char **why)
{
	uint64_t todo[MAX_JOIN_RANGES], target = 0;
	size_t ntodo = 0, insns = 0;

	*npath = 0;
	todo[ntodo++] = h;
	while (ntodo) {
		uint64_t at = todo[--ntodo];

		if (in_ranges(path, *npath, at))
			continue;
		struct lp_insnflow f = { 0 };

		if (decode_way(b, at, *npath, &f, why) < 0)
			return -1;
		struct range *r = &path[(*npath)++];
		bool on = true;

		*r = (struct range){ at, at, at == h };
		for (size_t i = 0; i < f.n && on; i++) {
			const struct lp_insnflow_insn *in = &f.insns[i];

			if (i && in_ranges(path, *npath - 1, in->vaddr))
				break;	/* joins a way already followed */
			if (++insns > MAX_JOIN_INSNS ||
			    (i && in->vaddr != f.insns[i - 1].vaddr + f.insns[i - 1].size)) {
				lp_insnflow__fini(&f);
				*why = "no call on each of its ways within 256 instructions";
				return -1;
			}
			r->hi = in->vaddr + in->size;
			if (in->calls) {
				uint64_t t = in->target && in_plt(b, in->target) ? plt_callee : in->target;

				if (!t || (target && t != target)) {
					lp_insnflow__fini(&f);
					*why = !t ? "its first call is not to a function it names"
						  : "its ways call different functions first";
					return -1;
				}
				target = t;
				on = false;
			} else if (in->branches) {
				if (!in->target || ntodo == MAX_JOIN_RANGES) {
					lp_insnflow__fini(&f);
					*why = "it leaves by an indirect jump or a return before its "
					       "first call";
					return -1;
				}
				todo[ntodo++] = in->target;
				on = in->falls_through;
			}
		}
		lp_insnflow__fini(&f);
	}
	*callee = target;
	if (!target)
		*why = "it calls nothing";
	return target ? 0 : -1;
}

/* The ways on from h (both sides of each branch; calls come back), each
 * followed until it reaches one of the ranges into[0..ninto) (joined) or
 * leaves by an indirect jump or a return (ended), within MAX_JOIN_INSNS
 * instructions in all.  RESUME's code (Python/ceval.c: _PyCode_Warmup,
 * which may call _PyCode_Quicken out of line, then
 * JUMP_TO_INSTRUCTION(RESUME_QUICK)) may join RESUME_QUICK's, as in
 * pyenv's 3.11.7, and then one site counts both; or the compiler gives it
 * its own copy of the rest, as in Debian's, and it has its own site.  The
 * code passed is put into path (*npath ranges).  0, or -1 with *why when
 * it cannot be followed. */
struct ways {
	size_t joined, ended;
};

static int follow(const struct bin *b, uint64_t h, const struct range *into, size_t ninto,
		  struct range *path, size_t *npath, struct ways *w, const char **why)
{
	uint64_t todo[MAX_JOIN_RANGES];
	size_t ntodo = 0, insns = 0;

	*npath = 0;
	*w = (struct ways){ 0 };
	todo[ntodo++] = h;
	while (ntodo) {
		uint64_t at = todo[--ntodo];

		if (in_ranges(into, ninto, at)) {
			w->joined++;
			continue;
		}
		if (in_ranges(path, *npath, at))
			continue;
		struct lp_insnflow f = { 0 };

		if (decode_way(b, at, *npath, &f, why) < 0)
			return -1;
		struct range *r = &path[(*npath)++];
		enum { ON, JOINED, ENDED, JUMPED } end = ON;

		*r = (struct range){ at, at, at == h };
		for (size_t i = 0; i < f.n && end == ON; i++) {
			const struct lp_insnflow_insn *in = &f.insns[i];

			if (in_ranges(into, ninto, in->vaddr)) {
				end = JOINED;
				break;
			}
			if (++insns > MAX_JOIN_INSNS ||
			    (i && in->vaddr != f.insns[i - 1].vaddr + f.insns[i - 1].size))
				break;
			r->hi = in->vaddr + in->size;
			if (!in->branches)
				continue;
			if (!in->target) {
				end = ENDED;
				break;
			}
			if (ntodo == MAX_JOIN_RANGES)
				break;
			todo[ntodo++] = in->target;
			if (!in->falls_through)
				end = JUMPED;
		}
		lp_insnflow__fini(&f);
		if (end == ON) {
			*why = insns > MAX_JOIN_INSNS ? "its code cannot be followed within 256 instructions"
						      : "its code cannot be followed";
			return -1;
		}
		w->joined += end == JOINED;
		w->ended += end == ENDED;
	}
	return 0;
}

/* Every pass through a site must have come through its handler (or the
 * handler of another site of the same kind: RESUME goes on into
 * RESUME_QUICK's code): a direct jump of _PyEval_EvalFrameDefault landing
 * inside a path, past where it is entered, from anywhere but the paths of
 * that kind, would count passes that never started a call (or return).
 * Jumps from the cold text are not seen (it has no extent to decode).
 * 0, or -1 with *where the jump's address. */
static int jumps_in(const struct bin *b, const struct range *paths, const unsigned *kinds, size_t n,
		    uint64_t *where, uint64_t *to)
{
	size_t got;
	const unsigned char *code = bytes_at(b->elf, b->eval.lo, b->eval.hi - b->eval.lo, &got);
	struct lp_insnflow f = { 0 };

	if (!code || lp_insnflow__decode(code, got, b->eval.lo, &f) < 0)
		return 0;	/* nothing more to check by */
	int r = 0;

	for (size_t i = 0; i < f.n && !r; i++) {
		const struct lp_insnflow_insn *in = &f.insns[i];

		if (!in->branches || !in->target)
			continue;
		for (size_t k = 0; k < n && !r; k++) {
			if (in->target < paths[k].lo || in->target >= paths[k].hi ||
			    (in->target == paths[k].lo && paths[k].entry))
				continue;
			bool same = false;

			for (size_t j = 0; j < n; j++)
				same |= kinds[j] == kinds[k] && in->vaddr >= paths[j].lo &&
					in->vaddr < paths[j].hi;
			if (!same) {
				*where = in->vaddr;
				*to = in->target;
				r = -1;
			}
		}
	}
	lp_insnflow__fini(&f);
	return r;
}

/* 3.12 on: the returns' site, the entry of the function both RETURN_VALUE
 * and RETURN_CONST call first, to pop their frame (v: opcode_targets). */
static int pop_site(const struct bin *b, const struct py_ops *ops, const uint64_t *v,
		    const char *path, const char *probe, bool verbose, struct lp_pyprobe *out)
{
	const unsigned op[] = { ops->return_value, ops->return_const };
	const char *name[] = { "RETURN_VALUE", "RETURN_CONST" };
	uint64_t callee[2] = { 0, 0 };
	struct range passed[MAX_JOIN_RANGES];
	size_t np, got;
	const char *why;

	for (size_t i = 0; i < 2; i++)
		if (first_call(b, v[op[i]], b->clear_pop, &callee[i], passed, &np, &why) < 0) {
			lp_error("probe '%s': %s: %s's handler at 0x%llx: %s", probe, path, name[i],
				 (unsigned long long)v[op[i]], why);
			return -1;
		}
	if (callee[0] != callee[1]) {
		lp_error("probe '%s': %s: RETURN_VALUE's and RETURN_CONST's handlers call different "
			 "functions first (0x%llx, 0x%llx)", probe, path,
			 (unsigned long long)callee[0], (unsigned long long)callee[1]);
		return -1;
	}
	struct lp_pyprobe_site s = { .vaddr = callee[0], .flags = LP_PROBE_F_PYRET | LP_PROBE_F_PYPOP,
				     .every = true };
	const unsigned char *first = bytes_at(b->elf, s.vaddr, 16, &got);

	if (!first || lp_dwarf__file_offset(b->elf, s.vaddr, &s.offset, NULL) < 0) {
		lp_error("probe '%s': %s: 0x%llx is in no segment", probe, path,
			 (unsigned long long)s.vaddr);
		return -1;
	}
	s.insn = lp_insn__classify(first, got);
	if (verbose)
		lp_error("probe '%s': RETURN_VALUE's and RETURN_CONST's handlers pop their frame "
			 "at 0x%llx", probe, (unsigned long long)s.vaddr);
	out->conf.tstate_exc = (unsigned short)ops->tstate_exc;
	out->conf.pops = 1;
	out->sites[out->nsites++] = s;
	return 0;
}

static int find_sites(struct bin *b, const char *path, const char *probe, bool verbose,
		      struct lp_pyprobe *out)
{
	const struct py_ops *ops = NULL;
	uint64_t v[NTARGETS];
	size_t got = 0;
	/* 3.13 opens _PyRuntime with the offsets of its own layout. */
	const unsigned char *runtime = b->runtime ? bytes_at(b->elf, b->runtime, 4096, &got) : NULL;

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].major == out->major && versions[i].minor == out->minor)
			ops = &versions[i];
	if (!ops || lp_python__trace_layout(out->major, out->minor, runtime, runtime ? got : 0,
					    &out->conf) < 0) {
		lp_error("probe '%s': %s is CPython %u.%u: python: probes know the eval loops of "
			 "3.11 to 3.13 only", probe, path, out->major, out->minor);
		return -1;
	}
	out->conf.runtime = b->runtime;
	if (b->eval.hi <= b->eval.lo) {
		lp_error("probe '%s': %s has no _PyEval_EvalFrameDefault in its dynamic symbols",
			 probe, path);
		return -1;
	}
	if (find_table(b, ops, v) < 0) {
		lp_error("probe '%s': %s: no table of its opcode handlers (opcode_targets) found",
			 probe, path);
		return -1;
	}
	/* The first branches of the specialized RESUME's handler (when the
	 * version has one: RESUME may join its code, and be counted there)
	 * and of the returns' are sites. */
	struct handler { unsigned op, flags; const char *name; } want[3];
	size_t nwant = 0;

	if (ops->quick)
		want[nwant++] = (struct handler){ ops->quick, LP_PROBE_F_PYSTART, ops->quick_name };
	if (!ops->pops)
		want[nwant++] = (struct handler){ ops->return_value, LP_PROBE_F_PYRET, "RETURN_VALUE" };
	struct range paths[4 * (MAX_HOPS + 1) + MAX_JOIN_RANGES];
	unsigned kinds[4 * (MAX_HOPS + 1) + MAX_JOIN_RANGES];
	size_t npaths = 0, nquick = 0, np = 0;
	const char *why;

	for (size_t i = 0; i < nwant; i++) {
		struct lp_pyprobe_site s = { .flags = want[i].flags, .every = true };

		if (first_branch(b, v[want[i].op], &s, paths + npaths, &np, &why) < 0) {
			lp_error("probe '%s': %s: %s's handler at 0x%llx: %s", probe, path, want[i].name,
				 (unsigned long long)v[want[i].op], why);
			return -1;
		}
		for (size_t k = 0; k < np; k++)
			kinds[npaths + k] = want[i].flags;
		npaths += np;
		if (i == 0 && ops->quick)
			nquick = np;
		if (verbose)
			lp_error("probe '%s': %s's handler at 0x%llx, its first branch at 0x%llx", probe,
				 want[i].name, (unsigned long long)v[want[i].op], (unsigned long long)s.vaddr);
		if (lp_dwarf__file_offset(b->elf, s.vaddr, &s.offset, NULL) < 0) {
			lp_error("probe '%s': %s: 0x%llx is in no segment", probe, path,
				 (unsigned long long)s.vaddr);
			return -1;
		}
		out->sites[out->nsites++] = s;
	}
	if (ops->pops && pop_site(b, ops, v, path, probe, verbose, out) < 0)
		return -1;
	/* 3.11's own RESUME site sees a watched function's starts. */
	struct lp_pyprobe_site s = { .flags = LP_PROBE_F_PYSTART, .every = !ops->stays };
	struct ways w = { 0 };
	int followed = 0;

	/* Followed as far as can be: where some ways join and others may
	 * not, a site of its own would count those that join twice. */
	if (ops->quick)
		followed = follow(b, v[ops->resume], paths, nquick, paths + npaths, &np, &w, &why);
	if (w.joined && (followed < 0 || w.ended))
		why = "some of its ways join its specialized form's code, others may not";
	else if (w.joined)
		why = NULL;	/* one site counts both */
	else if (first_branch(b, v[ops->resume], &s, paths + npaths, &np, &why) == 0)
		why = NULL;	/* its own copy: its own site */
	if (why) {
		lp_error("probe '%s': %s: RESUME's handler at 0x%llx: %s", probe, path,
			 (unsigned long long)v[ops->resume], why);
		return -1;
	}
	for (size_t k = 0; k < np; k++)
		kinds[npaths + k] = LP_PROBE_F_PYSTART;
	npaths += np;
	if (verbose && w.joined)
		lp_error("probe '%s': RESUME's handler at 0x%llx joins %s's code", probe,
			 (unsigned long long)v[ops->resume], ops->quick_name);
	if (!w.joined) {
		if (verbose)
			lp_error("probe '%s': RESUME's handler at 0x%llx, its first branch at 0x%llx",
				 probe, (unsigned long long)v[ops->resume], (unsigned long long)s.vaddr);
		if (lp_dwarf__file_offset(b->elf, s.vaddr, &s.offset, NULL) < 0) {
			lp_error("probe '%s': %s: 0x%llx is in no segment", probe, path,
				 (unsigned long long)s.vaddr);
			return -1;
		}
		out->sites[out->nsites++] = s;
	}
	out->watchable = ops->pops || (ops->stays && !w.joined);
	out->conf.minor = (unsigned short)out->minor;
	/* Where an exception reaches a frame (a function whose returns are
	 * watched leaves by one unseen otherwise): PyTraceBack_Here's entry. */
	struct lp_pyprobe_site tb = { .vaddr = b->traceback, .flags = LP_PROBE_F_PYUNWIND };
	const unsigned char *first = b->traceback ? bytes_at(b->elf, b->traceback, 16, &got) : NULL;
	if (first && lp_dwarf__file_offset(b->elf, tb.vaddr, &tb.offset, NULL) == 0) {
		tb.insn = lp_insn__classify(first, got);
		out->unwind = tb;
		out->has_unwind = true;
	}
	uint64_t where, to;

	if (jumps_in(b, paths, kinds, npaths, &where, &to) < 0) {
		lp_error("probe '%s': %s: a jump at 0x%llx lands at 0x%llx, between an opcode "
			 "handler and the branch probed for it", probe, path,
			 (unsigned long long)where, (unsigned long long)to);
		return -1;
	}
	return 0;
}

/* Opens path's ELF into b and reads what pyprobe needs of it; false, with
 * b closed, when it is not readable ELF or not CPython (no _PyRuntime and
 * Py_Version in .dynsym). */
static bool open_interpreter(struct bin *b, const char *path, int *fd)
{
	memset(b, 0, sizeof(*b));
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return false;
	elf_version(EV_CURRENT);
	/* Read, not mapped: a uprobe attached for every process that maps
	 * the file (another lp-trace's python: probes, with -p) is put into
	 * our own mapping too (uprobe_mmap: a read-only private map of it may
	 * execute), and its int3 at a handler's branch read as code made
	 * that handler "leave before any branch". */
	b->elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (b->elf && elf_kind(b->elf) == ELF_K_ELF) {
		read_bin(b);
		if (b->runtime && b->version)
			return true;
	}
	close_bin(b, *fd);
	return false;
}

int lp_pyprobe__find(const char *const *files, size_t nfiles, const char *probe, bool verbose,
		     struct lp_pyprobe *out)
{
	struct bin b;
	int fd = -1, r = -1;
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	while (i < nfiles && !open_interpreter(&b, files[i], &fd))
		i++;
	if (i == nfiles) {
		lp_error("probe '%s': %s is no CPython interpreter (no _PyRuntime and Py_Version in "
			 "its dynamic symbols%s)", probe, files[0],
			 nfiles > 1 ? ", nor in a library it maps or needs" : "");
		return -1;
	}
	size_t got;
	const unsigned char *ver = bytes_at(b.elf, b.version, 4, &got);

	if (!ver || got < 4) {
		lp_error("probe '%s': %s: its Py_Version cannot be read", probe, files[i]);
		goto out;
	}
	uint32_t hex;

	memcpy(&hex, ver, 4);	/* PY_VERSION_HEX: 0xMMmmPPRS */
	out->major = hex >> 24 & 0xff;
	out->minor = hex >> 16 & 0xff;
	out->file = i;
	if (verbose && i)
		lp_error("probe '%s': CPython is in %s", probe, files[i]);
	r = find_sites(&b, files[i], probe, verbose, out);
out:
	close_bin(&b, fd);
	return r;
}

/* The code points of UTF-8 text s into out (room for max; NULL: counted
 * only).  How many, or -1 when s is not UTF-8, -2 when it has a space or
 * a control character (and should not: strict), -3 when out has no room. */
static long decode(const char *s, unsigned *out, size_t max, bool strict)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), len = 0;

	if (!lp_utf8_valid(s, n))
		return -1;
	for (size_t k = 0; k < n; len++) {
		/* Well-formed: the lead byte says how many follow. */
		unsigned c = p[k], more = c < 0x80 ? 0 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;

		c &= more ? 0x3f >> more : 0x7f;
		for (unsigned m = 1; m <= more; m++)
			c = c << 6 | (p[k + m] & 0x3f);
		k += 1 + more;
		if (strict && (c <= ' ' || c == 0x7f))
			return -2;
		if (out && len >= max)
			return -3;
		if (out)
			out[len] = c;
	}
	return (long)len;
}

/* s appended to conf's globs (lead: see struct lp_trace_py; strict: as
 * decode's); its length in characters, or decode's -1, -2, -3. */
static long add_glob(struct lp_trace_py *conf, const char *s, bool lead, bool strict)
{
	unsigned i = conf->nglobs, at = i ? conf->at[i - 1] + conf->len[i - 1] : 0;
	long len = i < LP_PY_GLOBS ? decode(s, conf->pattern + at, LP_PY_PAT_MAX - at, strict) : -3;

	if (len >= 0) {
		conf->at[i] = at;
		conf->len[i] = (unsigned)len;
		conf->lead[i] = lead;
		conf->nglobs = i + 1;
	}
	return len;
}

/* module's dotted name as a path: json.decoder is json/decoder. */
static char *module_path(const char *module)
{
	char *path = lp_strdup(module);

	for (char *d = path; (d = strchr(d, '.')); d++)
		*d = '/';
	return path;
}

/* Whether NAME or MODULE (what), len its decode(), is one python: takes;
 * else says why. */
static bool part_ok(const char *probe, const char *what, long len, long max)
{
	if (len >= 0 && len <= max)
		return true;
	if (len == -1)
		lp_error("probe '%s': %s is not UTF-8", probe, what);
	else if (len == -2)
		lp_error("probe '%s': %s has a space or a control character", probe, what);
	else
		lp_error("probe '%s': %s is longer than %ld characters", probe, what, max);
	return false;
}

int lp_pyprobe__globs(const char *probe, const char *module, const char *name,
		      struct lp_trace_py *conf)
{
	conf->nglobs = 0;
	if (!*name || (module && !*module) || strchr(name, ':')) {
		lp_error("probe '%s': expected python:[MODULE:]NAME, NAME a qualified name or a "
			 "glob of them, MODULE a module's dotted name or a glob of them", probe);
		return -1;
	}
	if (!part_ok(probe, "NAME", add_glob(conf, name, false, true), LP_PY_NAME_MAX))
		return -1;
	/* Glob 1: what a long name's end must match, what follows the last
	 * star, after a star (empty, and not used, when there is none). */
	const char *star = strrchr(name, '*');
	conf->tail = star != NULL;
	if (add_glob(conf, star ? star : "", false, true) < 0)	/* NAME was checked */
		lp_die(1, "probe '%s': internal error: the end of NAME", probe);
	if (!module)
		return 0;
	if (!part_ok(probe, "MODULE", decode(module, NULL, 0, true), LP_PY_MODULE_MAX))
		return -1;
	if (strchr(module, '/')) {
		lp_error("probe '%s': MODULE is a module's dotted name (json.decoder), not a file",
			 probe);
		return -1;
	}
	/* Its code's co_filename: the module's file (m.py, or anywhere as
	 * DIR/m.py), its package's __init__.py, or one of the modules 3.11
	 * has frozen in the interpreter (os, posixpath, ...).  Room for them
	 * all: 2 * LP_PY_NAME_MAX + 3 * (LP_PY_MODULE_MAX + 14) < LP_PY_PAT_MAX. */
	char *path = module_path(module), *g[3];
	size_t n = strlen(path), m = strlen(module);

	g[0] = lp_malloc(n + 6);
	g[1] = lp_malloc(n + 15);
	g[2] = lp_malloc(m + 10);
	sprintf(g[0], "*/%s.py", path);
	sprintf(g[1], "*/%s/__init__.py", path);
	sprintf(g[2], "<frozen %s>", module);
	for (int i = 0; i < 3; i++) {
		long r = add_glob(conf, g[i], i < 2, false);

		if (r < 0)	/* MODULE was checked above, and there is room */
			lp_die(1, "probe '%s': internal error: glob '%s': %ld", probe, g[i], r);
		free(g[i]);
	}
	free(path);
	return 0;
}

char *lp_pyprobe__module_where(const char *module)
{
	char *path = module_path(module), *s = lp_malloc(2 * strlen(path) + strlen(module) + 48);

	sprintf(s, "%s.py or %s/__init__.py, or <frozen %s>", path, path, module);
	free(path);
	return s;
}

char *lp_pyprobe__str(unsigned kind, unsigned len, const unsigned char *chars, unsigned max,
		      bool tail)
{
	if (kind != 1 && kind != 2 && kind != 4)
		return NULL;
	unsigned n = len < max ? len : max;
	bool cut = len > max;
	char *s = lp_malloc(4 * (size_t)n + 4), *o = s;

	if (cut && tail) {
		memcpy(s, "...", 3);
		o += 3;
	}
	o += lp_python__utf8(chars, n, kind, o);
	if (cut && !tail)
		memcpy(o, "...", 4);
	return s;
}
