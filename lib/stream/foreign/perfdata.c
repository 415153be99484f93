/* perfdata.c - reads perf record's perf.data as lp samples (formats/foreign.md):
 * the layout of tools/perf/Documentation/perf.data-file-format.txt (Linux),
 * its records those of include/uapi/linux/perf_event.h, little-endian, a
 * file's or a pipe's (perf record -o -).  The header, the events and the
 * features are perfdata-header.c's; this file owns, read in place:
 *   - the order of the data's records: perf writes each CPU's ring in turn,
 *     so they are sorted by time as perf script sorts them, a round
 *     (FINISHED_ROUND) at a time, up to the newest time of the round before;
 *   - the processes' maps (MMAP, MMAP2: copied by a FORK, a new one over
 *     what it overlaps, an exec's too, as perf keeps them)
 *     and the threads' names (COMM), as the records come;
 *   - each sample as an lp sample: time, pid, tid, cpu, the period as its
 *     weight, its callchain outermost first as raw frames (a user address
 *     made its file's, with the file's build-id, for lp-symbolize; a kernel
 *     one as it is); LOST and LOST_SAMPLES as lost records;
 *   - perf record -z's compressed records, decompressed (perfdata-zstd.c)
 *     and their records read as the file's, before its next one;
 *   - a sample's copied user stack (--call-graph dwarf) as its attributes
 *     uregs= and ustack=, after map records of its process's files
 *     (stackcopy.h), for lp-symbolize to unwind: this reader links no DWARF
 *     library, and a filter must not.
 * Every length and offset is checked against the document. */
#include "stream/foreign/perfdata-internal.h"
#include "stream/perfmap.h"

/* --- the order of the records ---------------------------------------------- */

/* Queues a record with the time it happened at: one that does not say
 * (or perf record's tally of lost samples at its end), the newest read. */
static int queue_record(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
			uint16_t size, const char **why)
{
	struct idinfo id = { 0 };
	uint64_t body;
	if (type == PERF_RECORD_SAMPLE) {
		const struct attr *a = lp_perfdata__record_attr(d, r, size, true, why);
		if (!a)
			return LP_CODEC_BAD;
		uint64_t t = a->sample_type, at = 8 + 8 * (uint64_t)__builtin_popcountll(
			t & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID));
		id.has_time = t & PERF_SAMPLE_TIME && fits(at, 8, size);
		id.time = id.has_time ? get64(r + at) : 0;
	} else if (lp_perfdata__trailer(d, r, size, 0, &id, &body, why) < 0) {
		return LP_CODEC_BAD;
	}
	if (id.has_time && id.time > d->max_time)
		d->max_time = id.time;
	GROW(d->queue, d->cap, d->n + 1);
	/* perf's synthesized maps and threads (time 0: what it read of
	 * /proc at its start, written after its first samples at times) go
	 * before every sample still queued, as perf delivers them at once. */
	bool process = type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
		       type == PERF_RECORD_COMM || type == PERF_RECORD_FORK;
	uint64_t when = id.has_time && id.time ? id.time : process ? 0 : d->max_time;
	d->queue[d->n++] = (struct pending){ when, d->seq++, lp_perfdata__offset(d, r) };
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The bytes after a record's own that belong to it (AUXTRACE's trace,
 * a pipe's tracing data), or -1 when they are more than the left after it. */
static int64_t payload(const unsigned char *r, uint32_t type, uint16_t size, uint64_t left)
{
	uint64_t n = 0;
	if (type == REC_AUXTRACE && size >= 16)
		n = get64(r + 8);
	else if (type == REC_HEADER_TRACING_DATA && size >= 12)
		n = ((uint64_t)get32(r + 8) + 7) & ~(uint64_t)7;
	return n <= left ? (int64_t)n : -1;
}

/* Whether decompressed records are still to read (perfdata-zstd.c). */
static bool inflated_left(const struct perfdata_dec *d)
{
	return d->z.head < d->z.len;
}

/* The next record to read: 1 and *rp, 0 at the end of the data.  Those
 * decompressed from a compressed record come first, as perf reads them;
 * one split between two compressed records waits for the second. */
static int next_record(struct perfdata_dec *d, const unsigned char **rp, const char **why)
{
	struct inflated *z = &d->z;
	if (inflated_left(d)) {
		const unsigned char *r = z->buf + z->head;
		uint64_t left = z->len - z->head;
		uint16_t size = left >= 8 ? get16(r + 6) : 0;
		int64_t more = size >= 8 && size <= left ? payload(r, get32(r), size, left - size) : -1;
		if (left >= 8 && size < 8)
			return lp_perfdata__fail(d, why, "the record at %s has a size less than its header",
						 lp_perfdata__at(d, r));
		if (more >= 0) {
			z->head += size + (uint64_t)more;
			*rp = r;
			return 1;
		}
		if (d->pos >= d->end)
			return lp_perfdata__fail(d, why, "the record at %s runs past the end of what they "
						 "decompress to", lp_perfdata__at(d, r));
	}
	if (d->pos >= d->end)
		return 0;
	const unsigned char *r = d->base + d->pos;
	uint16_t size = d->end - d->pos >= 8 ? get16(r + 6) : 0;
	if (size < 8 || size > d->end - d->pos)
		return lp_perfdata__fail(d, why, "the record at byte %llu %s", (unsigned long long)d->pos,
			    d->end - d->pos < 8 ? "is cut short"
			    : size < 8 ? "has a size less than its header"
				       : "runs past the end of the data section");
	int64_t more = payload(r, get32(r), size, d->end - d->pos - size);
	if (more < 0)
		return lp_perfdata__fail(d, why, "the data of the record at byte %llu runs past the end "
			    "of the data section", (unsigned long long)d->pos);
	d->pos += size + (uint64_t)more;
	*rp = r;
	return 1;
}

/* Reads the data's records to the end of a round (FINISHED_ROUND) or of
 * the data: those that say something at a time queued, the pipe's header
 * records read now, compressed ones decompressed to be read next.  Then
 * the queue is sorted, and what it holds up to the newest time of the
 * round before (all of it at the end) made ready. */
static int read_round(struct perfdata_dec *d, const char **why)
{
	bool round = false;
	const unsigned char *r;
	int rc = 0;
	lp_perfdata__inflated_trim(d);
	while (!round && (rc = next_record(d, &r, why)) > 0) {
		uint32_t type = get32(r);
		uint16_t size = get16(r + 6);
		switch (type) {
		case PERF_RECORD_SAMPLE:
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			if (queue_record(d, r, type, size, why) < 0)
				return LP_CODEC_BAD;
			break;
		case REC_FINISHED_ROUND:
			round = true;
			break;
		case REC_COMPRESSED:
		case REC_COMPRESSED2:
			if (lp_perfdata__inflate(d, r, type, size, why) < 0)
				return LP_CODEC_BAD;
			break;
		default:
			if (lp_perfdata__read_meta(d, r, type, size, why) < 0)
				return LP_CODEC_BAD;
		}
	}
	if (rc < 0)
		return LP_CODEC_BAD;
	if (d->n)
		qsort(d->queue, d->n, sizeof(*d->queue), cmp_pending);
	d->ready = d->n;
	if (d->pos < d->end || inflated_left(d)) {
		while (d->ready && d->queue[d->ready - 1].time > d->limit)
			d->ready--;
		d->limit = d->max_time;
	}
	return 0;
}

/* --- processes and threads ------------------------------------------------- */

static struct maps *maps_of(struct perfdata_dec *d, uint32_t pid)
{
	return lp_hashmap__get(&d->maps, key32(pid));
}

static void maps_release(struct maps *m)
{
	if (m && !--m->refs) {
		lp_addrspace__fini(&m->as);
		free(m);
	}
}

/* pid's maps from now on: m (shared), or none. */
static void maps_set(struct perfdata_dec *d, uint32_t pid, struct maps *m)
{
	if (m)
		m->refs++;
	maps_release(m ? lp_hashmap__put(&d->maps, key32(pid), m)
		       : lp_hashmap__del(&d->maps, key32(pid)));
}

/* pid's maps, its own to change. */
static struct maps *maps_own(struct perfdata_dec *d, uint32_t pid)
{
	struct maps *m = maps_of(d, pid), *own;
	if (m && m->refs == 1)
		return m;
	own = lp_calloc(1, sizeof(*own));
	if (m)
		lp_addrspace__copy(&own->as, &m->as);
	maps_set(d, pid, own);
	return own;
}

static const char *comm_of(struct perfdata_dec *d, uint32_t pid, uint32_t tid)
{
	const char *c = lp_hashmap__get(&d->comms, key32(tid));
	if (!c)
		c = lp_hashmap__get(&d->comms, key32(pid));
	return c ? c : "";
}

static bool kernel_mode(unsigned mode)
{
	return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL ||
	       mode == PERF_RECORD_MISC_HYPERVISOR;
}

/* MMAP: pid, tid, addr, len, pgoff, file name; MMAP2: ..., a build-id or
 * the file's device and inode, prot, flags, file name. */
static int read_mmap(struct perfdata_dec *d, const unsigned char *r, uint32_t type, uint16_t size,
		     uint16_t misc, const char **why)
{
	struct idinfo id;
	uint64_t body, name_at = type == PERF_RECORD_MMAP ? 40 : 72;
	if (lp_perfdata__trailer(d, r, size, name_at - 8 + 1, &id, &body, why) < 0)
		return LP_CODEC_BAD;
	const char *path = string_in(d, r + name_at, body - name_at);
	uint64_t start = get64(r + 16), len = get64(r + 24);
	if (!path)
		return lp_perfdata__fail(d, why, "the mmap record at %s: its file name is not terminated",
			    lp_perfdata__at(d, r));
	if (start + len < start)
		return lp_perfdata__fail(d, why, "the mmap record at %s maps past the end of memory",
			    lp_perfdata__at(d, r));
	if (!len || misc & PERF_RECORD_MISC_MMAP_DATA ||
	    kernel_mode(misc & PERF_RECORD_MISC_CPUMODE_MASK))
		return 0;	/* no code, or the kernel's, whose frames stay addresses */
	struct lp_addrmap m = {
		.start = start, .end = start + len, .bias = start - get64(r + 32), .module = path,
		.placed = (path[0] == '/' && path[1] != '/') || !strcmp(path, "[vdso]"),
	};
	if (m.bias < FIXED_BELOW)	/* not PIE: its ELF addresses are its run-time ones */
		m.bias = 0;
	if (type == PERF_RECORD_MMAP2 && misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		m.build_id = hex_string(d, r + 44, r[40]);
	else
		m.build_id = lp_perfdata__build_id_of(d, path);
	struct maps *own = maps_own(d, get32(r + 8));
	lp_addrspace__insert(&own->as, &m);
	own->gen = ++d->maps_gen;
	return 0;
}

/* COMM: pid, tid, name; at an exec the process's maps are gone. */
static int read_comm(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
		     const char **why)
{
	struct idinfo id;
	uint64_t body;
	if (lp_perfdata__trailer(d, r, size, 8 + 1, &id, &body, why) < 0)
		return LP_CODEC_BAD;
	const char *comm = string_in(d, r + 16, body - 16);
	if (!comm)
		return lp_perfdata__fail(d, why, "the comm record at %s: its name is not terminated",
			    lp_perfdata__at(d, r));
	lp_hashmap__put(&d->comms, key32(get32(r + 12)), (void *)comm);
	/* An exec keeps the old image's maps, as perf does, until the new
	 * one's map over them: the exec's COMM comes from inside execve, and
	 * a sample taken in the syscall after it has the old image's user
	 * registers (a 1 in 4 run's first sample was the shell's libc). */
	return 0;
}

/* FORK: pid, ppid, tid, ptid (the thread that forked): the new thread is
 * named as its maker, and a new process has its maps. */
static int read_fork(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
		     const char **why)
{
	struct idinfo id;
	uint64_t body;
	if (lp_perfdata__trailer(d, r, size, 24, &id, &body, why) < 0)
		return LP_CODEC_BAD;
	uint32_t pid = get32(r + 8), ppid = get32(r + 12), tid = get32(r + 16), ptid = get32(r + 20);
	const char *comm = comm_of(d, ppid, ptid);
	if (*comm)
		lp_hashmap__put(&d->comms, key32(tid), (void *)comm);
	if (pid != ppid)
		maps_set(d, pid, maps_of(d, ppid));
	return 0;
}

/* --- samples --------------------------------------------------------------- */

static void skip_read(struct cursor *c, uint64_t format)
{
	uint64_t times = !!(format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t value = 1 + !!(format & PERF_FORMAT_ID) + !!(format & PERF_FORMAT_LOST);
	if (format & PERF_FORMAT_GROUP) {
		uint64_t nr = take(c);
		skip_items(c, times, 8);
		skip_items(c, nr, 8 * value);
	} else {
		skip_items(c, times + value, 8);
	}
}

/* The registers' ABI (none: no registers) and where their values are. */
static void skip_regs(struct cursor *c, uint64_t mask, uint64_t *abi,
		      const unsigned char **regs)
{
	*abi = take(c);
	*regs = c->p;
	if (*abi)
		skip_items(c, (uint64_t)__builtin_popcountll(mask), 8);
}

/* The fields of a sample in perf_event.h's order, those after the
 * callchain only skipped. */
static int parse_sample(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
			const struct attr *a, struct sample *s, const char **why)
{
	struct cursor c = { r + 8, r + size, false };
	uint64_t t = a->sample_type;
	*s = (struct sample){ .pid = UINT32_MAX, .tid = UINT32_MAX, .cpu = UINT32_MAX,
			      .period = a->freq ? 1 : a->period };
	if (t & PERF_SAMPLE_IDENTIFIER)
		take(&c);
	if (t & PERF_SAMPLE_IP)
		s->ip = take(&c);
	if (t & PERF_SAMPLE_TID) {
		uint64_t v = take(&c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME) {
		s->time = take(&c);
		s->has_time = true;
	}
	skip_items(&c, (uint64_t)__builtin_popcountll(
			   t & (PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID)), 8);
	if (t & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)take(&c);
	if (t & PERF_SAMPLE_PERIOD)
		s->period = take(&c);
	if (t & PERF_SAMPLE_READ)
		skip_read(&c, a->read_format);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->nchain = take(&c);
		s->chain = c.p;
		skip_items(&c, s->nchain, 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		uint64_t n = c.end - c.p >= 4 ? get32(c.p) : 0;
		skip(&c, 4);
		skip(&c, n);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = take(&c);
		if (a->branch_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take(&c);
		skip_items(&c, nr, 24);
		if (a->branch_type & PERF_SAMPLE_BRANCH_COUNTERS)
			skip_items(&c, nr, 8);
	}
	if (t & PERF_SAMPLE_REGS_USER)
		skip_regs(&c, a->regs_user, &s->regs_abi, &s->regs);
	if (t & PERF_SAMPLE_STACK_USER) {
		/* the size asked for, the copy, and how much of it was copied
		 * (the kernel's dyn_size: no more than up to the stack's end) */
		uint64_t n = take(&c);
		if (n) {
			s->ustack = c.p;
			skip(&c, n);
			s->ustack_len = take(&c);
			if (s->ustack_len > n)
				s->ustack_len = 0;
		}
	}
	skip_items(&c, (uint64_t)__builtin_popcountll(t & (PERF_SAMPLE_WEIGHT_TYPE |
			   PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION)), 8);
	if (t & PERF_SAMPLE_REGS_INTR) {
		uint64_t abi;
		const unsigned char *regs;
		skip_regs(&c, a->regs_intr, &abi, &regs);
	}
	skip_items(&c, (uint64_t)__builtin_popcountll(t & (PERF_SAMPLE_PHYS_ADDR |
			   PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |
			   PERF_SAMPLE_CODE_PAGE_SIZE)), 8);
	if (t & PERF_SAMPLE_AUX)
		skip(&c, take(&c));
	if (c.bad)
		return lp_perfdata__fail(d, why, "the sample at %s: its fields run past its end (%u bytes)",
			    lp_perfdata__at(d, r), size);
	if (s->has_time && s->time > INT64_MAX)
		return lp_perfdata__fail(d, why, "the sample at %s: its time %llu is past 2^63 - 1",
			    lp_perfdata__at(d, r), (unsigned long long)s->time);
	return 0;
}

/* A frame made before, by its kind, address, module and build-id (the
 * strings compared by pointer: interned, or literals), else made now. */
static const struct lp_frame *cached_frame(struct perfdata_dec *d, char kind, uint64_t addr,
					   const char *module, const char *build_id)
{
	struct frame_slot *s = &d->cache[((addr ^ (uintptr_t)module) * 0x9e3779b97f4a7c15ULL) >>
					 (64 - FRAME_CACHE_BITS)];
	if (s->frame && s->frame->kind == kind && s->addr == addr && s->module == module &&
	    s->build_id == build_id)
		return s->frame;
	*s = (struct frame_slot){ addr, module, build_id, kind == LP_FRAME_KERNEL
		? lp_dict__frame(d->dict, kind, addr, module, "", "")
		: lp_dict__raw_frame(d->dict, addr, module, build_id) };
	return s->frame;
}

/* Memory of no file, where perf looks for a JIT's code in its perf map
 * (tools/perf/util/map.c: is_anon_memory, is_no_dso_memory). */
static bool jit_memory(const char *module)
{
	return !strcmp(module, "//anon") || !strncmp(module, "/dev/zero", 9) ||
	       !strncmp(module, "/anon_hugepage", 14) || !strncmp(module, "[stack", 6) ||
	       !strncmp(module, "/SYSV", 5) || !strcmp(module, "[heap]");
}

/* The JIT frame of look in pid's /tmp/perf-PID.map, as perf script names
 * it: the file read where lp-cat runs, as perf reads it (the process's own
 * pid, its file in our /tmp); NULL when it has no symbol there. */
static const struct lp_frame *jit_frame(struct perfdata_dec *d, uint32_t pid, uint64_t look)
{
	char path[64];
	struct lp_perfmap *pm = lp_hashmap__get(&d->jitmaps, key32(pid));
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	if (!pm) {
		pm = lp_perfmap__new(path);
		lp_hashmap__put(&d->jitmaps, key32(pid), pm);
	}
	const char *name = lp_perfmap__find(pm, look);
	return name ? lp_dict__frame(d->dict, LP_FRAME_JIT, 0, path, name, "") : NULL;
}

/* One address: a kernel one as it is; a user one in a file as the offset
 * in the file (a return address less one, in its call, as lp-record's raw
 * frames), in a JIT's memory by its perf map, else as it is (outside every
 * file: [unknown] when 0). */
static const struct lp_frame *frame(struct perfdata_dec *d, uint32_t pid, const struct maps *maps,
				    uint64_t addr, bool kernel, bool ret)
{
	if (kernel)
		return cached_frame(d, LP_FRAME_KERNEL, addr, KERNEL_MODULE, "");
	uint64_t look = ret && addr ? addr - 1 : addr;
	const struct lp_addrmap *m = maps ? lp_addrspace__find(&maps->as, look) : NULL;
	const struct lp_frame *jit = m && jit_memory(m->module) ? jit_frame(d, pid, look) : NULL;
	if (jit)
		return jit;
	if (!m || !m->placed)
		return cached_frame(d, LP_FRAME_USER, addr, addr ? "" : "[unknown]", "");
	return cached_frame(d, LP_FRAME_USER, look - m->bias, m->module, m->build_id);
}

/* The sample's stack, outermost first: its callchain reversed, the
 * context markers saying whose the addresses after them are; or its ip. */
static const struct lp_stack *sample_stack(struct perfdata_dec *d, const struct sample *s,
					   uint16_t misc)
{
	const struct maps *maps = maps_of(d, s->pid);
	bool kernel = kernel_mode(misc & PERF_RECORD_MISC_CPUMODE_MASK), first = true;
	size_t n = 0;
	GROW(d->frames, d->frames_cap, s->nchain + 1);
	for (uint64_t i = 0; i < s->nchain; i++) {
		uint64_t v = get64(s->chain + 8 * i);
		if (v >= PERF_CONTEXT_MAX) {
			if (v != PERF_CONTEXT_GUEST)
				kernel = v == PERF_CONTEXT_KERNEL || v == PERF_CONTEXT_GUEST_KERNEL ||
					 v == PERF_CONTEXT_HV;
			first = true;
			continue;
		}
		d->frames[n++] = frame(d, s->pid, maps, v, kernel, !first);
		first = false;
	}
	if (!n)
		d->frames[n++] = frame(d, s->pid, maps, s->ip, kernel, false);
	for (size_t i = 0; i < n / 2; i++) {
		const struct lp_frame *f = d->frames[i];
		d->frames[i] = d->frames[n - 1 - i];
		d->frames[n - 1 - i] = f;
	}
	return lp_dict__stack(d->dict, d->frames, n);
}

/* --- copied user stacks ---------------------------------------------------- */

/* perf's x86-64 user registers, by their bit in sample_regs_user
 * (arch/x86/include/uapi/asm/perf_regs.h); the XMM ones after them are
 * never user registers. */
static const char *const x86_64_regs[] = {
	"ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "ip", "flags", "cs", "ss",
	"ds", "es", "fs", "gs", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
enum { X86_64_BP = 6, X86_64_SP = 7, X86_64_IP = 8, X86_64_NREGS = 24 };

/* The sample's copy as its attributes, when it has one an unwinder can
 * start from: 64-bit registers (a 32-bit process's are another set) of
 * an x86-64 recording (the names say x86-64's) with ip and sp among them,
 * and some stack copied.  false: none. */
static bool copy_attrs(struct perfdata_dec *d, const struct attr *a, const struct sample *s)
{
	const char *names[X86_64_NREGS];
	uint64_t values[X86_64_NREGS], need = 1ULL << X86_64_IP | 1ULL << X86_64_SP;
	size_t n = 0, at = 0;

	lp_attrs_buf__reset(&d->attrs_buf);
	if (!s->ustack_len || s->regs_abi != PERF_SAMPLE_REGS_ABI_64 ||
	    (a->regs_user & need) != need || (d->arch && strcmp(d->arch, "x86_64")))
		return false;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(a->regs_user >> bit & 1))
			continue;
		if (bit < X86_64_NREGS) {
			names[n] = x86_64_regs[bit];
			values[n++] = get64(s->regs + 8 * at);
		}
		at++;
	}
	lp_stackcopy__add_regs(&d->attrs_buf, names, values, n);
	lp_stackcopy__add_stack(&d->attrs_buf, s->ustack, s->ustack_len);
	return true;
}

/* Whether pid's maps were written as they are now: else they are written
 * (d->writing) before its sample, at off, is handled again. */
static bool maps_written(struct perfdata_dec *d, uint32_t pid, const struct sample *s,
			 uint64_t off)
{
	const struct maps *m = maps_of(d, pid);
	uint64_t gen = m ? m->gen : 0;
	if ((uint64_t)(uintptr_t)lp_hashmap__get(&d->maps_written, key32(pid)) == gen + 1)
		return true;
	lp_hashmap__put(&d->maps_written, key32(pid), (void *)(uintptr_t)(gen + 1));
	if (!m || !m->as.n)
		return true;
	d->writing.maps = m;
	d->writing.i = 0;
	d->writing.pid = pid;
	d->writing.time = s->has_time ? (int64_t)s->time : LP_TIME_NONE;
	d->writing.held = off;
	return false;
}

/* The next map record of d->writing: 1, or 0 when all are written. */
static int next_map(struct perfdata_dec *d, struct lp_record *rec)
{
	const struct maps *m = d->writing.maps;
	while (d->writing.i < m->as.n && !m->as.v[d->writing.i].placed)
		d->writing.i++;
	if (d->writing.i >= m->as.n)
		return 0;
	const struct lp_addrmap *x = &m->as.v[d->writing.i++];
	struct lp_maprec r = {
		.time_ns = d->writing.time, .pid = id32(d->writing.pid), .start = x->start,
		.end = x->end, .bias = x->bias, .module = x->module, .build_id = x->build_id,
	};
	rec->kind = LP_REC_OTHER;
	rec->len = lp_maprec__format(&r, &d->line, &d->line_cap);
	rec->line = d->line;
	return 1;
}

static int emit_sample(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
		       uint16_t misc, struct lp_record *rec, const char **why)
{
	const struct attr *a = lp_perfdata__record_attr(d, r, size, true, why);
	struct sample s;
	if (!a || parse_sample(d, r, size, a, &s, why) < 0)
		return LP_CODEC_BAD;
	bool copy = copy_attrs(d, a, &s);
	if (copy && !maps_written(d, s.pid, &s, lp_perfdata__offset(d, r)))
		return next_map(d, rec);
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){
		.time_ns = s.has_time ? (int64_t)s.time : LP_TIME_NONE,
		.pid = id32(s.pid),
		.tid = id32(s.tid),
		.cpu = id32(s.cpu),
		.comm = s.tid != UINT32_MAX ? comm_of(d, s.pid, s.tid) : "",
		.event = a->name,
		.weight = (double)s.period,
		.stack = sample_stack(d, &s, misc),
		.attrs = copy ? lp_attrs_buf__attrs(&d->attrs_buf) : (struct lp_attrs){ "", 0 },
	};
	return 1;
}

/* LOST: id, lost; LOST_SAMPLES: lost. */
static int emit_lost(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
		     uint16_t size, struct lp_record *rec, const char **why)
{
	struct idinfo id;
	uint64_t body, at = type == PERF_RECORD_LOST ? 16 : 8;
	if (lp_perfdata__trailer(d, r, size, at, &id, &body, why) < 0)
		return LP_CODEC_BAD;
	uint64_t count = get64(r + at), counted;
	if (type == PERF_RECORD_LOST) {
		d->ring_lost += count;
	} else if (!id.time) {	/* perf record's tally of what LOST records said */
		counted = count < d->ring_lost ? count : d->ring_lost;
		d->ring_lost -= counted;
		if (!(count -= counted))
			return 0;
		id.has_time = false;
	}
	if (id.has_time && id.time > INT64_MAX)
		return lp_perfdata__fail(d, why, "the lost record at %s: its time %llu is past 2^63 - 1",
			    lp_perfdata__at(d, r), (unsigned long long)id.time);
	rec->kind = LP_REC_LOST;
	rec->lost = (struct lp_lost){
		.time_ns = id.has_time ? (int64_t)id.time : LP_TIME_NONE,
		.what = "ring",
		.count = count > INT64_MAX ? INT64_MAX : count,
	};
	return 1;
}

/* A queued record: 1 and *rec when it makes one, 0 when it makes none. */
static int handle(struct perfdata_dec *d, uint64_t off, struct lp_record *rec, const char **why)
{
	const unsigned char *r = lp_perfdata__record(d, off);
	uint32_t type = get32(r);
	uint16_t misc = get16(r + 4), size = get16(r + 6);
	switch (type) {
	case PERF_RECORD_SAMPLE:
		return emit_sample(d, r, size, misc, rec, why);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return read_mmap(d, r, type, size, misc, why);
	case PERF_RECORD_COMM:
		return read_comm(d, r, size, why);
	case PERF_RECORD_FORK:
		return read_fork(d, r, size, why);
	default:
		return emit_lost(d, r, type, size, rec, why);
	}
}

/* --- the codec ------------------------------------------------------------- */

static void *perfdata_open(struct lp_dict *dict, const struct lp_doc *doc,
			   const struct lp_input_opts *opts)
{
	(void)opts;
	struct perfdata_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	d->base = doc->data;
	d->len = doc->len;
	lp_hashmap__init(&d->ids);
	lp_hashmap__init(&d->maps);
	lp_hashmap__init(&d->comms);
	lp_hashmap__init(&d->jitmaps);
	lp_hashmap__init(&d->build_ids);
	lp_hashmap__init(&d->maps_written);
	lp_perfdata__read_header(d, &d->open_why);
	return d;
}

static int perfdata_next(void *dec, struct lp_record *rec, const char **why)
{
	struct perfdata_dec *d = dec;
	if (d->open_why) {
		*why = d->open_why;
		return LP_CODEC_BAD;
	}
	for (;;) {
		if (d->writing.maps) {
			if (next_map(d, rec))
				return 1;
			d->writing.maps = NULL;
			int rc = handle(d, d->writing.held, rec, why);
			if (rc)
				return rc;
		}
		while (d->next < d->ready) {
			int rc = handle(d, d->queue[d->next++].off, rec, why);
			if (rc)
				return rc;
		}
		if (d->pos >= d->end && !inflated_left(d) && d->ready == d->n)
			return 0;
		if (d->ready) {
			memmove(d->queue, d->queue + d->ready, (d->n - d->ready) * sizeof(*d->queue));
			d->n -= d->ready;
			d->ready = d->next = 0;
		}
		if (read_round(d, why) < 0)
			return LP_CODEC_BAD;
	}
}

static void perfdata_close(void *dec)
{
	struct perfdata_dec *d = dec;
	for (size_t i = 0; i < d->maps.cap; i++)
		if (d->maps.keys[i])
			maps_release(d->maps.values[i]);
	for (size_t i = 0; i < d->build_ids.cap; i++)
		if (d->build_ids.keys[i])
			free(d->build_ids.values[i]);
	for (size_t i = 0; i < d->jitmaps.cap; i++)
		if (d->jitmaps.keys[i])
			lp_perfmap__free(d->jitmaps.values[i]);
	lp_hashmap__fini(&d->jitmaps);
	lp_hashmap__fini(&d->ids);
	lp_hashmap__fini(&d->maps);
	lp_hashmap__fini(&d->comms);
	lp_hashmap__fini(&d->build_ids);
	lp_hashmap__fini(&d->maps_written);
	lp_attrs_buf__free(&d->attrs_buf);
	lp_perfdata__inflated_free(&d->z);
	free(d->line);
	free(d->attrs);
	free(d->queue);
	free(d->frames);
	free(d);
}

/* perf.data's magic, and its byte-swapped form, refused when read. */
static bool perfdata_claims(const struct lp_doc *doc)
{
	return !doc->json && doc->len >= 8 &&
	       (!memcmp(doc->data, "PERFILE2", 8) || !memcmp(doc->data, "2ELIFREP", 8));
}

const struct lp_codec lp_codec_perfdata = {
	.name = "perfdata", .format = LP_INPUT_PERFDATA, .claims = perfdata_claims,
	.open_doc = perfdata_open, .next_doc = perfdata_next, .close = perfdata_close,
};
