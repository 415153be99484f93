/* symbolize-kernel.c - kernel addresses to frames from /proc/kallsyms, and
 * where the scheduler's own code is. */
#include "debuginfo/symbolize.h"
#include "debuginfo/symbolize-internal.h"

#include <stdlib.h>

#include "base/util.h"

const struct lp_frame *lp_symbolizer__uprobes_frame(struct lp_symbolizer *s, uint64_t addr)
{
	return lp_symbolize_unresolved(s, addr, "[uprobes]");
}

static void kallsyms_load(struct lp_symbolizer *s)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t len = 0, cap = 1 << 22, alloc = 0, k = 0;
	char *buf, *p, *end;

	s->kloaded = true;
	if (!f)
		return;
	/* Read whole (~10 MB) and parse in place: the names stay in the buffer,
	 * with no allocation per symbol.  sscanf on 200 000
	 * lines costs more than the kernel's formatting of them. */
	buf = lp_malloc(cap);
	for (size_t n; (n = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
		len += n;
		if (cap - len < 65536)
			buf = lp_realloc(buf, cap *= 2);
	}
	fclose(f);
	buf[len] = 0;
	s->knames = buf;
	for (p = buf; p < buf + len; p = end + 1) {
		char *nl = memchr(p, '\n', buf + len - p), *name, *mod;
		uint64_t addr;

		end = nl ? nl : buf + len;
		*end = 0;
		addr = strtoull(p, &name, 16);
		/* "ADDR T name" or "ADDR t name\t[module]"; text symbols only. */
		if (!addr || name[0] != ' ' || !name[1] || name[2] != ' ')
			continue;
		if (!strchr("tTwW", name[1]))
			continue;
		name += 3;
		mod = strchr(name, '\t');
		if (mod)
			*mod++ = 0;
		if (!mod && !strcmp(name, "__sched_text_start"))
			s->sched_start = addr;
		else if (!mod && !strcmp(name, "__sched_text_end"))
			s->sched_end = addr;
		if (s->nksyms == alloc) {
			alloc = alloc ? 2 * alloc : 65536;
			s->ksyms = lp_reallocarray(s->ksyms, alloc, sizeof(*s->ksyms));
		}
		s->ksyms[s->nksyms].start = s->ksyms[s->nksyms].end = addr;
		s->ksyms[s->nksyms].name = name;
		s->ksyms[s->nksyms].module = mod;
		s->nksyms++;
	}
	if (!s->nksyms)
		return;
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), lp_symbolize_sym_cmp);
	for (size_t i = 0; i < s->nksyms; i++)
		if (!k || s->ksyms[i].start != s->ksyms[k - 1].start)
			s->ksyms[k++] = s->ksyms[i];
	s->nksyms = k;
	for (size_t i = 0; i + 1 < k; i++)
		s->ksyms[i].end = s->ksyms[i + 1].start;
	/* The last symbol: give it a page, not the rest of the address space. */
	s->ksyms[k - 1].end = s->ksyms[k - 1].start + 4096;
}

const struct lp_frame *lp_symbolize_resolve_kernel(struct lp_symbolizer *s, uint64_t addr,
						   uint64_t look)
{
	const struct lp_sym *sym;

	if (!s->kloaded)
		kallsyms_load(s);
	sym = s->nksyms ? lp_symbolize_sym_find(s->ksyms, s->nksyms, look) : NULL;
	if (sym && look < sym->end) {
		return lp_dict__frame(s->dict, LP_FRAME_KERNEL, 0,
				      sym->module ? sym->module : "[kernel.kallsyms]", sym->name, "");
	}
	return lp_dict__frame(s->dict, LP_FRAME_KERNEL, addr, "[kernel.kallsyms]", "", "");
}

const struct lp_frame *lp_symbolizer__kernel(struct lp_symbolizer *s, uint64_t addr, bool ret)
{
	const struct lp_frame *out[1];

	lp_symbolize_cached(s, -1, addr, ret, out);
	return out[0];
}

void lp_symbolizer__load_kernel(struct lp_symbolizer *s)
{
	if (!s->kloaded)
		kallsyms_load(s);
}

bool lp_symbolizer__in_scheduler(struct lp_symbolizer *s, uint64_t addr)
{
	if (!s->kloaded)
		kallsyms_load(s);
	return addr >= s->sched_start && addr < s->sched_end;
}
