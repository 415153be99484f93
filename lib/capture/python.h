/* python.h - CPython's own frames for lp-record: which processes run a
 * CPython interpreter lp knows (3.11), where its threads and frames are for
 * the sampler (bpf/profile.h, struct lp_py_proc), and the frames of the code
 * objects a sample found, read from the process's memory (qualified name,
 * file, line of the instruction). */
#ifndef LP_CAPTURE_PYTHON_H
#define LP_CAPTURE_PYTHON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include "bpf/profile.h"
#include "model/dict.h"

struct lp_python;
struct lp_symbolizer;

/* Frames are interned in dict; pids' modules are the symbolizer's. */
struct lp_python *lp_python__new(struct lp_dict *dict, struct lp_symbolizer *sym);
void lp_python__free(struct lp_python *py);

/* Looks at pid once (until lp_python__forget): 1 when it runs a CPython
 * interpreter of a version in the table, checked against the binary, with
 * what the sampler needs in *proc; 0 when it does not or was looked at
 * already.  A CPython of another version is said once on stderr. */
int lp_python__check(struct lp_python *py, pid_t pid, struct lp_py_proc *proc);
/* pid exec'd or exited: what was known of it, its code objects included. */
void lp_python__forget(struct lp_python *py, pid_t pid);
/* The pids found running Python, for the caller to reap: *n of them. */
const pid_t *lp_python__pids(const struct lp_python *py, size_t *n);

/* The frame of one Python frame of pid: kind u, MODULE the code's file,
 * SYMBOL its qualified name, SRCLINE "file:line" of the instruction.  A
 * code object that cannot be read, or is no longer the one the sampler saw
 * (freed, its address reused), gives MODULE "[python]" and no symbol.
 * Code objects are read once per (pid, address, first line). */
const struct lp_frame *lp_python__frame(struct lp_python *py, pid_t pid,
					const struct lp_py_frame *f);

/* The line of instruction lasti (code units; -1: the first line) in a
 * CPython 3.11 co_linetable of len bytes whose code starts at line first;
 * first when the table says nothing there.  For tests of the decoder. */
int lp_python__line311(const unsigned char *table, size_t len, int first, int lasti);

#endif
