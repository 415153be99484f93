/* probe-internal.h - private to lib/capture/trace/probe*.c: what the
 * pieces of the probe resolver share, a file opened with its symbols and
 * DWARF (struct elfobj) and the places a FILE:LINE has code, and the
 * functions one piece calls in another.  Not for any other file: the API
 * is probe.h.
 *
 * Names: lp_probe__VERB (and lp_probe_spec__, lp_probe_point__,
 * lp_probe_file__) is the public API (probe.h); lp_probe_NAME, one
 * underscore, a function of one piece that another calls.  Each piece
 * includes probe.h itself: here its types are only pointed to, since a
 * private header that included its module's public one would make a cycle
 * among modules (lib/layers). */
#ifndef LP_PROBE_INTERNAL_H
#define LP_PROBE_INTERNAL_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/trace.h"
#include "capture/trace/funcname.h"
#include "capture/trace/tracecal.h"

struct lp_dwarf;
struct lp_dwline;
struct lp_dwscope;
struct lp_hazard;
struct lp_probe_point;
struct lp_probe_spec;
struct lp_probe_value;

struct elfobj {
	int fd;
	Elf *elf;
	struct lp_fsyms fs;	/* its function symbols, their names in: */
	struct lp_dwfile *syms_file;
	bool stripped;		/* symbols from .dynsym: no .symtab, no debug file */
	bool minidebug;		/* and from a MiniDebugInfo (.gnu_debugdata) */
	const char *dbg_path;	/* its separate debug file, when stripped */
	struct lp_dwarf *dw;	/* from the debug file when there is one */
	/* Its GCC-split cold parts (NAME.cold), by address: read at first
	 * use (find_leaves). */
	const struct lp_fsym **cold;
	size_t ncold;
	bool cold_read;
};

struct line_hit {
	int line;
	uint64_t addr;
	uint64_t scope;		/* the function or inlined copy (lp_dwarf__func_at) */
	uint64_t cu;
	uint64_t *stmts;	/* every is_stmt row of the line in this scope */
	size_t nstmts;
};

/* The walk of the line tables for FILE:LINE, or the lines lo..hi of FILE
 * (lp-trace --lines). */
struct line_walk {
	const char *file;
	int lo, hi;
	struct lp_dwarf *dw;
	int below, above;	/* the nearest lines with code (lo == hi) */
	bool file_seen;
	struct line_hit *hits;
	size_t nhits;
};

/* probe.c: resolution's entry points, function probes. */
struct lp_probe_point *lp_probe_new_point(const struct lp_probe_spec *spec, const char *path,
					  struct lp_probe_point **points, size_t *n);

/* probe-spec.c: the text of a probe. */
size_t lp_probe_value_name_len(const char *expr);
char *lp_probe_list_start(char *text);

/* probe-kernel.c: syscall:NAME and tp:SUBSYS:EVENT. */
void lp_probe_kernel_point(const struct lp_probe_spec *spec, struct lp_probe_point **points,
			   size_t *n);

/* probe-elf.c: files, their symbols and code, libraries, FUNC's address. */
int lp_probe_elfobj_open(struct elfobj *o, const char *path);
void lp_probe_elfobj_close(struct elfobj *o);
char *lp_probe_find_lib(const char *lib, pid_t pid);
char **lp_probe_target_files(const char *exe, pid_t pid, size_t *n);
const unsigned char *lp_probe_file_bytes(Elf *elf, uint64_t off, size_t n);
uint64_t lp_probe_skip_endbr(Elf *elf, uint64_t off);
enum lp_insn lp_probe_insn_at(Elf *elf, uint64_t off);
int lp_probe_func_address(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			  bool verbose, struct lp_fcopy **copies, size_t *ncopies, uint64_t *vaddr0,
			  char **shown);

/* probe-values.c: the values a probe captures. */
int lp_probe_add_value(struct lp_probe_point *pt, const char *name, const struct lp_probe_value *v,
		       struct lp_trace_cap cap, int *nstrs);
int lp_probe_func_values(struct lp_probe_point *pt, struct lp_dwarf *dw, uint64_t addr,
			 const char *path);
int lp_probe_line_value(struct lp_probe_point *pt, struct lp_dwscope *sc, const char *name,
			uint64_t pc, int *nstrs, char *err, size_t errsize);
int lp_probe_line_values(struct lp_probe_point *pt, struct lp_dwarf *dw, uint64_t cu, uint64_t pc,
			 bool quiet);

/* probe-line.c: FILE:LINE. */
void lp_probe_line_row(const struct lp_dwline *l, void *arg);
int lp_probe_resolve_line(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			  struct line_hit **hits, size_t *nhits);
/* The code of the real function around pc (the out-of-line one an inlined
 * copy is in, of unit cu), every range of it (a .cold part too: its jumps
 * back into the line count), decoded into f.  -1 when there is no such
 * function or Capstone fails. */
struct lp_insnflow;
int lp_probe_function_flow(struct elfobj *o, uint64_t cu, uint64_t pc, struct lp_insnflow *f);

uint64_t lp_probe_choose_line_addr(struct lp_probe_point *pt, struct elfobj *o,
				   const struct line_hit *h, enum lp_insn *cls, const char **why);
void lp_probe_free_hits(struct line_hit *hits, size_t nhits);
int lp_probe_line_points(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			 bool verbose, struct lp_probe_point **points, size_t *n);

/* probe-return.c: returns, their hazards, the catch and ld.so points. */
void lp_probe_hazards(const struct elfobj *o, const char *path, const char *exe,
		      struct lp_hazard *hz);
int lp_probe_choose_returns(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			    const struct lp_hazard *hz, const struct lp_fsym *s, uint64_t vaddr,
			    bool verbose, struct lp_probe_point *pt, char *err, size_t errsize);
void lp_probe_add_catch(const struct lp_probe_spec *spec, const char *exe, pid_t pid, bool verbose,
			struct lp_probe_point **points, size_t *n);
bool lp_probe_add_dl(const struct lp_probe_spec *spec, const char *exe, pid_t pid, bool verbose,
		     struct lp_probe_point **points, size_t *n);

/* probe-usdt.c: usdt:[FILE:]PROVIDER:NAME. */
int lp_probe_usdt_points(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
			 struct lp_probe_point **points, size_t *n);

#endif
