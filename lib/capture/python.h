/* python.h - CPython's own frames for lp-record: which processes run a
 * CPython interpreter lp knows (3.11 to 3.13), where its threads and frames are for
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
#include "bpf/trace.h"
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

/* The user frames in[0, n) of one stack of pid's, root first, into out
 * (room for n + LP_PY_MAX_FRAMES), with pe's Python frames in: each of
 * CPython's interpreter frames (_PyEval_EvalFrameDefault) gives its place
 * to the Python frames it runs.  Those, innermost first, come in groups,
 * each ending with the frame marked is_entry, where a C call of the eval
 * loop began: the innermost group is the innermost interpreter frame's, and
 * so on out (as py-spy merges them).  An interpreter frame with no group
 * left (more Python frames than the walk takes) is kept; groups beyond the
 * outermost interpreter frame (a native stack cut short) are left out.
 * Both are counted for lp_python__notes.  Returns how many frames out
 * holds. */
size_t lp_python__merge(struct lp_python *py, pid_t pid, const struct lp_py_event *pe,
			const struct lp_frame *const *in, size_t n, const struct lp_frame **out);
/* The summary's line on stderr: the samples of Python threads merged, how
 * many held the GIL, what was kept or left out; nothing when none was. */
void lp_python__notes(const struct lp_python *py);

/* What the kernel's walk does (bpf/profile.bpf.c), from user space for a
 * thread held stopped (lp-record --mode snapshot): tid's Python frames
 * into *e.  0, or -1 when pid is not a process lp_python__check found
 * running Python or tid has no thread state. */
int lp_python__walk(struct lp_python *py, pid_t pid, pid_t tid, struct lp_py_event *e);

/* lp-trace's python: probes (bpf/trace-python.bpf.h, lp_py): the offsets they
 * read in CPython major.minor into *out (runtime and the pattern left 0):
 * from the table lp-record's walk uses, or from the interpreter's own
 * _Py_DebugOffsets (3.13), which open _PyRuntime: runtime, len bytes of
 * its initial value (NULL, 0: none).  0, or -1 for a version lp does not
 * know. */
int lp_python__trace_layout(unsigned major, unsigned minor, const void *runtime, size_t len,
			    struct lp_trace_py *out);

/* A str object's len characters at src, kind bytes each (1 latin-1, 2
 * UCS-2, 4 UCS-4, as CPython keeps them), as UTF-8 into out (room for
 * 4 * len + 1 bytes), NUL-terminated; returns the bytes written, the NUL
 * left out. */
size_t lp_python__utf8(const void *src, size_t len, unsigned kind, char *out);

/* The line of instruction lasti (code units; -1: the first line) in a
 * CPython 3.11 to 3.13 co_linetable of len bytes whose code starts at line first;
 * first when the table says nothing there.  For tests of the decoder. */
int lp_python__line311(const unsigned char *table, size_t len, int first, int lasti);

#endif
