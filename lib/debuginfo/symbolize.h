/* symbolize.h - addresses to frames: user addresses of live processes through
 * libdw (one Dwfl per process, each module's symbol table read once and
 * answered by binary search), kernel addresses from /proc/kallsyms, JIT code
 * from /tmp/perf-PID.map.  Every answer is cached per (pid, address), so a hot
 * address costs one hash lookup.  User names are shown as perf shows them:
 * demangled, without symbol versions, from the binary's debug file when it
 * is stripped (libdw: build-id, .gnu_debuglink, debuginfod), and a function
 * no symbol names keeps an identity of its own, "MODULE+0xSTART" from its
 * FDE.  An address nothing resolves still gives a frame: symbol "" with the
 * module when it is known, and then the address in the module's file. */
#ifndef LP_SYMBOLIZE_H
#define LP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "stream/stream.h"

struct lp_symbolizer;
struct lp_dwproc;

/* Frames are interned in dict, which must outlive the symbolizer's use. */
struct lp_symbolizer *lp_symbolizer__new(struct lp_dict *dict);
void lp_symbolizer__free(struct lp_symbolizer *s);

/* ret: addr is a return address (every frame but the leaf), looked up at
 * addr - 1 so a call at the end of a function is not given to the next. */
const struct lp_frame *lp_symbolizer__user(struct lp_symbolizer *s, pid_t pid,
					   uint64_t addr, bool ret);
/* All frames of one user address, outermost first: the function, then (with
 * inlines on) the functions inlined into it down to the one holding addr,
 * of kind LP_FRAME_INLINE.  out has room for 1 + LP_SYM_MAX_INLINE. */
#define LP_SYM_MAX_INLINE 8
size_t lp_symbolizer__user_frames(struct lp_symbolizer *s, pid_t pid, uint64_t addr,
				  bool ret, const struct lp_frame **out);
/* inlines: inlined functions as frames of their own (DWARF scopes, some
 * milliseconds per new address); srclines: "file:line" on user frames. */
void lp_symbolizer__set_options(struct lp_symbolizer *s, bool inlines, bool srclines);

/* Where the maps of a process that is gone come from: fn(arg, pid) returns
 * its /proc/PID/maps text as read while it ran (malloc'd; the symbolizer
 * frees it), or NULL.  Asked only when pid's own maps name no module: a
 * short-lived child whose exec the caller saw but whose samples it reads
 * after the child ended. */
void lp_symbolizer__set_saved_maps(struct lp_symbolizer *s, char *(*fn)(void *arg, pid_t pid),
				   void *arg);

/* --raw: user frames in binaries keep their address in the file (ELF
 * virtual address; return addresses minus one), the path, and the
 * binary's build-id (lp_frame.build_id), unsymbolized. */
void lp_symbolizer__set_raw(struct lp_symbolizer *s, bool raw);

/* demangle (the default): C++ and Rust names as perf shows them,
 * "node::Start(int, char**)"; false keeps the symbol table's names
 * (--no-demangle).  Symbol versions ("@@GLIBC_2.34") are left out either
 * way: an unversioned alias at the address is preferred. */
void lp_symbolizer__set_demangle(struct lp_symbolizer *s, bool demangle);

/* Symbolizes an address of a raw frame from the file at path: the frames,
 * root first, in out (room for 1 + LP_SYM_MAX_INLINE), *n of them (0: no
 * symbol there).  -1: the file cannot be read; -2: its build-id is not
 * build_id (hex; "" or NULL: not checked). */
int lp_symbolizer__file(struct lp_symbolizer *s, const char *path, const char *build_id,
			uint64_t addr, const struct lp_frame **out, size_t *n);

/* A stack read from a raw stream, with its raw frames symbolized from
 * their files (lp_symbolizer__file) and the others copied, in the
 * symbolizer's dictionary.  A file that cannot be read or is another build
 * is reported once on stderr, and its frames stay as they were. */
const struct lp_stack *lp_symbolizer__restack(struct lp_symbolizer *s,
					      const struct lp_stack *in);

/* Reads /proc/kallsyms now (tens of milliseconds) rather than at the first
 * kernel address, when a recorder has better things to do. */
void lp_symbolizer__load_kernel(struct lp_symbolizer *s);

const struct lp_frame *lp_symbolizer__kernel(struct lp_symbolizer *s, uint64_t addr,
					     bool ret);
/* addr is in the scheduler's own functions (schedule, __schedule,
 * do_nanosleep...: the kernel's .sched.text), which /proc/PID/stack and
 * bpf_get_task_stack leave out of a sleeping task's stack. */
bool lp_symbolizer__in_scheduler(struct lp_symbolizer *s, uint64_t addr);

/* pid exec'd a new program: forget its modules and cached addresses. */
void lp_symbolizer__forget(struct lp_symbolizer *s, pid_t pid);

/* ppid forked pid (a process, not a thread): pid runs ppid's program,
 * mapped as ppid's was at the fork, until it execs.  Nothing is read now;
 * if pid's own maps cannot be read when its addresses are symbolized (it
 * exited first), ppid's modules answer for it.  Whatever was known of an
 * earlier process with pid is forgotten. */
void lp_symbolizer__fork(struct lp_symbolizer *s, pid_t pid, pid_t ppid);

/* pid's pid in its own pid namespace, read with its modules: pid itself for
 * a process of ours, 0 when not known (not symbolized yet, or gone before
 * it was).  Its files are read through its own root (lp_procns__path). */
pid_t lp_symbolizer__nspid(struct lp_symbolizer *s, pid_t pid);

/* Reads pid's modules now, again, adding those mapped since: while it is
 * there (a process just started may be gone by the time its samples are
 * symbolized). */
void lp_symbolizer__prepare(struct lp_symbolizer *s, pid_t pid);

/* Frees what is kept for processes that have exited, and starts the address
 * cache over when it has grown past its bound.  Call now and then.  Returns
 * how many processes it freed. */
size_t lp_symbolizer__reap(struct lp_symbolizer *s);

/* The process's modules (lib/debuginfo/dwarf.h), for the DWARF unwinder;
 * NULL when the process cannot be read.  Refreshes them when addr (nonzero)
 * is in none of them. */
struct lp_dwproc *lp_symbolizer__modules(struct lp_symbolizer *s, pid_t pid, uint64_t addr);
/* How often pid's modules were read (0: never, or not known): what changes
 * when a process maps what it did not have, for the callers that look
 * again only then. */
uint32_t lp_symbolizer__reports(struct lp_symbolizer *s, pid_t pid);

/* addr is code pid has mapped: in one of its modules (the vDSO too), a
 * symbol of its JIT map, or the uprobes page.  A frame-pointer chain that
 * reaches an address that is none of these has gone astray (code built
 * without frame pointers): its frames from there are garbage. */
bool lp_symbolizer__mapped(struct lp_symbolizer *s, pid_t pid, uint64_t addr);

/* addr is in pid's uprobes page: the uretprobe trampoline, or an
 * instruction single-stepped out of line. */
bool lp_symbolizer__in_uprobes(struct lp_symbolizer *s, pid_t pid, uint64_t addr);

/* The frame of addr, an address in a uprobes page (the sampler saw the
 * thread there), named as resolving it would name it, whether or not the
 * process's maps were read since the kernel mapped the page. */
const struct lp_frame *lp_symbolizer__uprobes_frame(struct lp_symbolizer *s, uint64_t addr);

struct lp_symbolizer_stats {
	uint64_t lookups, cache_hits, procs, modules, symbols;
};
void lp_symbolizer__stats(const struct lp_symbolizer *s, struct lp_symbolizer_stats *st);

#endif
