/* hazard.c - what an ELF file says against a uretprobe (hazard.h). */
#include "capture/trace/hazard.h"

#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "debuginfo/elftab.h"

/* Go's build information: "\xff Go buildinf:", pointer size, flags; with
 * flags & 2 (Go >= 1.18) the version string follows inline at 32, its
 * length a uvarint. */
static void go_version(Elf *elf, struct lp_hazard *hz)
{
	Elf_Scn *scn = lp_elftab__section(elf, ".go.buildinfo");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_buf || d->d_size < 34 || memcmp(d->d_buf, "\xff Go buildinf:", 14))
		return;
	const unsigned char *b = d->d_buf;
	if (!(b[15] & 2))
		return;
	size_t len = b[32] & 0x7f, at = 33;
	if (b[32] & 0x80)
		len |= (size_t)(b[at++] & 0x7f) << 7;
	if (at + len > d->d_size || len >= sizeof(hz->go_version))
		return;
	memcpy(hz->go_version, b + at, len);
	hz->go_version[len] = '\0';
}

/* The first reason of its kind is kept. */
__attribute__((format(printf, 2, 3))) static void say(char (*to)[256], const char *fmt, ...)
{
	va_list ap;
	if ((*to)[0])
		return;
	va_start(ap, fmt);
	vsnprintf(*to, sizeof(*to), fmt, ap);
	va_end(ap);
}

static bool linked_unwinder(const char *name)
{
	return !strncmp(name, "libstdc++", 9) || !strncmp(name, "libc++", 6) ||
	       !strncmp(name, "libgcc_s", 8);
}

void lp_hazard__file(Elf *elf, const char *path, bool go_syms, struct lp_hazard *hz)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (lp_elftab__section(elf, ".go.buildinfo") || lp_elftab__section(elf, ".note.go.buildid") || go_syms) {
		hz->go = hz->unwinds = true;
		go_version(elf, hz);
		int major = 0, minor = 0;
		if (hz->go_version[0] && sscanf(hz->go_version, "go%d.%d", &major, &minor) == 2)
			hz->regabi = major > 1 || minor >= 17;
		say(&hz->why, "%s is a Go binary (its runtime reads return addresses when a goroutine's stack grows)",
		    base);
		return;
	}
	/* C's too (glibc's, for thread cancellation: its forced unwinding
	 * stops at a trampoline and skips the cleanups above it); C++'s name
	 * its personality routine, and may catch (cxx). */
	if (lp_elftab__section(elf, ".gcc_except_table"))
		say(&hz->why, "%s has exception tables (.gcc_except_table)", base);
	/* What it imports, and the libraries it needs. */
	const char *loads = NULL, *name;
	struct lp_elfsyms it;
	GElf_Sym sym;
	if (lp_elfsyms__open(&it, elf, SHT_DYNSYM))
		while ((name = lp_elfsyms__next(&it, &sym))) {
			if (!strcmp(name, "__gxx_personality_v0"))
				hz->cxx = hz->unwinds = true;
			if (sym.st_shndx != SHN_UNDEF)
				continue;
			/* The first three throw or unwind exceptions, the
			 * fourth unwinds a thread that exits (cleanups). */
			static const char *const unwinders[] = { "__cxa_throw", "_Unwind_RaiseException",
				"_Unwind_Resume", "_Unwind_ForcedUnwind" };
			for (size_t k = 0; k < sizeof(unwinders) / sizeof(unwinders[0]); k++)
				if (!strcmp(name, unwinders[k])) {
					hz->cxx |= k < 3;
					hz->unwinds = true;
					say(&hz->why, "%s calls %s (it reads return addresses)", base, name);
				}
			/* A backtrace read while a traced call runs ends at
			 * the trampoline: it is shorter, nothing else. */
			if (!strcmp(name, "backtrace") || !strcmp(name, "_Unwind_Backtrace"))
				say(&hz->walks, "%s calls %s", base, name);
			if (!strcmp(name, "dlopen") || !strcmp(name, "dlmopen"))
				loads = name;
		}
	struct lp_elfdyn dyn;
	int64_t tag;
	if (lp_elfdyn__open(&dyn, elf))
		while ((name = lp_elfdyn__next(&dyn, &tag))) {
			/* libgcc_s alone is no hazard: what the file takes of
			 * it (above) says. */
			if (tag != DT_NEEDED || !linked_unwinder(name))
				continue;
			hz->unwinds = true;
			if (strncmp(name, "libgcc_s", 8)) {
				hz->cxx = true;
				say(&hz->why, "%s links %s (exceptions unwind through return addresses)",
				    base, name);
			}
		}
	/* What it loads later is not known here, nor whether that throws
	 * through the calls it makes back (a C program's callback into a C++
	 * plugin): the tracer decides when it is loaded where the kernel lets
	 * it (a uretprobe armed per call, lib/capture/trace/dlgate.c), else these
	 * calls' returns are probed at their instructions.  Not cxx: a probe
	 * on libstdc++'s catch would be attached to each traced process that
	 * maps it (a forking server's every child: PostgreSQL's postmaster
	 * maps libstdc++ through ICU), and the calls left end at the next
	 * traced call or return anyway. */
	if (loads)
		say(&hz->loads, "%s calls %s (a library it loads later may throw or unwind through the traced calls)",
		    base, loads);
}

bool lp_hazard__throws(Elf *elf, const char *name, char *why, size_t whysize)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (linked_unwinder(base)) {
		snprintf(why, whysize, "%s unwinds exceptions", base);
		return true;
	}
	struct lp_hazard hz = { 0 };
	lp_hazard__file(elf, name, false, &hz);
	snprintf(why, whysize, "%s", hz.unwinds ? hz.why : "");
	return hz.unwinds;
}
