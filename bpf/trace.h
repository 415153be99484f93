/* trace.h - what bpf/trace.bpf.c and lib/capture/trace/tracer*.c share: fixed-width fields,
 * no pointers. */
#ifndef LP_TRACE_H
#define LP_TRACE_H

#include "pygil.h"

/* Nesting of traced calls kept per thread.  Deeper calls are counted as lost
 * ("depth"); the kernel itself keeps at most 64 pending uretprobes a task. */
#define LP_TRACE_MAX_DEPTH 32
#define LP_TRACE_MAX_CAPS 6	/* captured values a probe */
#define LP_TRACE_MAX_STRS 2	/* of which C strings */
#define LP_TRACE_STR_MAX 64	/* bytes of a string, NUL included */
#define LP_TRACE_MAX_PROBES 4096
#define LP_TRACE_MAX_SYSCALLS 1024
#define LP_TRACE_TP_MAX 512	/* bytes of a tracepoint record copied */

/* struct lp_trace_probe.kind */
enum {
	LP_PROBE_ENTRY = 1,	/* uprobe pushing a frame; the uretprobe pops it */
	LP_PROBE_POINT = 2,	/* uprobe emitting a point event */
	LP_PROBE_SYSCALL = 3,
	LP_PROBE_TP = 4,
	LP_PROBE_CATCH = 5,	/* uprobe where C++ catches (__cxa_begin_catch): ends the calls unwound */
	LP_PROBE_USDT = 6,	/* a USDT probe (libbpf's usdt): a point event with its arguments */
	LP_PROBE_PY = 7,	/* a uprobe in CPython's eval loop (python:NAME): LP_PROBE_F_PY* */
	LP_PROBE_DL = 8,	/* uprobe on ld.so's _dl_debug_state: a library was loaded or unloaded */
};

/* How lp_return was attached, in its BPF cookie beside the probe's index:
 * a uretprobe, or a uprobe on one of the function's own instructions that
 * leave it (lib/capture/trace/probe-return.c finds them; a uretprobe rewrites the return
 * address on the stack, which unwinders and Go's runtime read). */
enum {
	LP_RET_URETPROBE = 0,	/* sp is the entry's + 8 (ret popped it) */
	LP_RET_INSN = 1,	/* a ret: sp is the entry's */
	LP_RET_TAIL = 2,	/* a jmp out of the function (a tail call) */
	LP_RET_TAIL_REG = 3,	/* jmp *reg: a tail call when reg points outside the function */
	LP_RET_TAIL_CC = 4,	/* jcc out of the function: a tail call when taken (reg: the cc) */
};
/* cookie: bits 0-15 the probe, 16-19 LP_RET_*, 20-27 the register (DWARF
 * numbering), 32-63 the instruction's offset from the function's start. */
#define LP_RET_COOKIE(id, kind, reg, off)						\
	((unsigned long long)(id) | (unsigned long long)(kind) << 16 |			\
	 (unsigned long long)(reg) << 20 | (unsigned long long)(off) << 32)

/* A captured value: take a register (DWARF numbering) or the memory at
 * register + off, or at off + the load bias (reg = LP_REG_NONE); then, for
 * a member read through pointers (r->conn->fd), nderef times the memory
 * at the value + deref[i].  Every read but the last is a pointer's 8
 * bytes; the last is size bytes. */
enum {
	LP_CAP_REG = 1,
	LP_CAP_MEM = 2,
};
#define LP_REG_NONE 255
#define LP_CAP_MAX_DEREF 3
#define LP_REG_CFA 254		/* the probe's canonical frame address */

struct lp_trace_cap {
	unsigned char kind;	/* LP_CAP_* */
	unsigned char reg;	/* DWARF x86-64 register number, LP_REG_* */
	unsigned char size;	/* 1, 2, 4, 8 bytes */
	unsigned char str;	/* 1 + string slot when the value points to a C string */
	unsigned char nderef;	/* 0..LP_CAP_MAX_DEREF */
	unsigned char pad[3];
	long long off;
	int deref[LP_CAP_MAX_DEREF];
	int pad2;
};

/* A calibration run of lp's program counts at most this long: one longer
 * was interrupted for that long, not slower. */
#define LP_PROG_CAP_NS 50000

struct lp_trace_probe {
	unsigned int kind;	/* LP_PROBE_* */
	unsigned int ncaps;
	unsigned long long vaddr;	/* link-time address of the probe: bias = ip - vaddr */
	/* CFA = reg cfa_reg + cfa_off at the probe (for frame-base locals). */
	unsigned int cfa_reg;
	unsigned int tp_size;	/* LP_PROBE_TP: bytes of the record to copy */
	long long cfa_off;
	struct lp_trace_cap caps[LP_TRACE_MAX_CAPS];
	/* What one hit of this probe costs the thread, calibrated by lp-trace
	 * when it starts (lib/capture/trace/tracecal.c): the entry's (or a point probe's)
	 * and the return's full cost, what an enclosing span grows by, and the
	 * part of each inside the probe's own span.  The kernel adds them up
	 * per thread into a span's lp_ns. */
	unsigned int hit_ns, hit_inside_ns;
	unsigned int ret_ns, ret_inside_ns;
	unsigned int flags;	/* LP_PROBE_F_* */
	unsigned int pad2;
	/* LP_PROBE_ENTRY: the function's link-time range (LP_RET_TAIL_REG). */
	unsigned long long func_lo, func_hi;
	/* Of those full costs, the part lp's program ran in the calibration
	 * (its mean; [0] an entry's or a point hit's, [1] a return's): each
	 * hit of a function, line or tracepoint probe replaces it with its own
	 * run time, measured as it runs (the program costs more in a target
	 * than in the calibration's tight loop).  0: not calibrated. */
	unsigned int prog_ns[2];
	/* LP_PROBE_F_CAL: the calibration's hits sum their run times (each
	 * at most LP_PROG_CAP_NS) and count them. */
	unsigned long long prog_sum[2], prog_runs[2];
};

/* struct lp_trace_probe.flags */
#define LP_PROBE_F_CAL 1	/* lp-trace's calibration: spans of any duration */
/* Go (register ABI, >= 1.17): open calls are kept per goroutine (r14 holds
 * g), their stack pointers relative to the goroutine's stack top
 * (g.stack.hi, at g + 8): goroutines move between threads, and their
 * stacks are copied elsewhere when they grow. */
#define LP_PROBE_F_GO 2
#define LP_G_STACK_HI 8
/* The stacks map's key: a thread id, or a goroutine (g | LP_KEY_G). */
#define LP_KEY_G (1ULL << 63)
/* A Go position: sp - g.stack.hi + this (deeper calls are lower, as sp). */
#define LP_GO_POS_BASE (1ULL << 62)
/* Attached once for every process that maps the file (lib/capture/trace/tracer-attach.c,
 * shared attachment): the programs keep to the processes in "tgids". */
#define LP_PROBE_F_FILTER 4
/* A USDT pair as a span (usdt:PROVIDER:X for X__entry and X__return): the
 * first half opens it, the second (the probe attached next: its id is the
 * first's + 1) closes the innermost open one of this thread. */
#define LP_PROBE_F_OPEN 8
#define LP_PROBE_F_CLOSE 16
/* LP_PROBE_PY: at the first branch of the handlers of RESUME and its
 * specialized form (a function starts, oparg 0, or a generator resumes),
 * or of RETURN_VALUE's (a frame returns). */
#define LP_PROBE_F_PYSTART 32
#define LP_PROBE_F_PYRET 64
/* With LP_PROBE_F_PYRET, from 3.12 on: at the entry of the function the
 * returns call to pop their frame, which the eval loop calls too as an
 * exception leaves one (its arguments: the thread state, the frame; the
 * thread's exception, at tstate_exc, says which way it goes). */
#define LP_PROBE_F_PYPOP 512
/* lp-record --inside (lib/capture/trace/gate.c): the probe's open calls are kept
 * as any function probe's, for the sampler to read (a thread is inside
 * while it has one), and its spans are not sent. */
#define LP_PROBE_F_GATE 128
/* LP_PROBE_PY: at PyTraceBack_Here's entry, which the eval loop calls as an
 * exception reaches a frame, the one running then: the frames above it are
 * gone (a python: probe whose returns are watched sees no other sign of
 * them: lib/capture/trace/pywatch.c). */
#define LP_PROBE_F_PYUNWIND 256

/* python:[MODULE:]NAME (lib/capture/trace/pyprobe.c): where CPython (3.11-3.13) keeps
 * what the probes read (offsets from lib/capture/python.c's table), and
 * the globs the names are matched with, in the kernel (map "pyconf").
 * Names are matched as characters (code points), whatever the kind of the
 * str object (1, 2 or 4 bytes a character): the globs are code points. */
#define LP_PY_NAME_MAX 512	/* characters of a qualified name matched (a longer one: its first) */
#define LP_PY_FILE_MAX 512	/* characters of a file name matched and sent (a longer one: its last) */
#define LP_PY_MODULE_MAX 255	/* characters of a MODULE */
#define LP_PY_GLOBS 8		/* the name's, its tail's, then up to 3 of the module's file */
#define LP_PY_PAT_MAX 2048	/* code points of the globs, all together */
struct lp_trace_py {
	unsigned long long runtime;	/* link-time address of _PyRuntime */
	/* The GIL's holder, the thread whose eval loop runs (bpf/profile.h,
	 * struct lp_py_proc): 3.11 keeps it in _PyRuntime (gil_base
	 * LP_PY_GIL_RUNTIME, at gil_tstate); 3.12 in the GIL its main
	 * interpreter points to (LP_PY_GIL_POINTER: the interpreter at
	 * interp_head, the pointer at gil_interp); 3.13 in the interpreter
	 * itself (LP_PY_GIL_INTERP). */
	unsigned short gil_tstate, gil_interp, interp_head, gil_base;
	/* Its frame: tstate->cframe->current_frame, or with frame_direct
	 * tstate->current_frame (3.13, at tstate_cframe). */
	unsigned short tstate_cframe, cframe_frame, frame_direct;
	unsigned short tstate_exc;	/* the exception being raised (LP_PROBE_F_PYPOP) */
	/* Returns are seen at the pop (3.12 on): a frame's span never stays
	 * open past its end, so a start at the frame of the innermost one is
	 * the same start seen again (3.13's RESUME_CHECK gives way to
	 * RESUME's code, before RESUME's probe, when the eval breaker is
	 * set). */
	unsigned short pops;
	unsigned short minor;	/* CPython 3.minor (lp-trace's own: pywatch.c) */
	unsigned short frame_code, frame_previous, frame_instr;
	unsigned short code_flags, code_first, code_filename, code_qualname;
	unsigned short str_state, str_length;
	unsigned short str_ascii_data;	/* a compact ASCII str's characters */
	unsigned short str_compact_data;	/* another compact str's (after utf8_length, utf8) */
	unsigned short code_read;	/* bytes of a code object read at once (<= 256) */
	unsigned short frame_read;	/* bytes of a frame read at once (<= 128) */
	/* A code object's instructions (co_code_adaptive) and their number
	 * (ob_size), for lp-trace (lib/capture/trace/pywatch.c). */
	unsigned short code_adaptive, code_units;
	/* Glob 0 is the qualified name's.  Glob 1, when tail is 1, is a star
	 * and what follows glob 0's last star: a name longer than
	 * LP_PY_NAME_MAX matches when its first characters could begin a
	 * match of glob 0 and its last match glob 1 (when glob 0 has no
	 * star, tail is 0 and none does).  With a module part, globs 2 to
	 * nglobs - 1 are those of the module's file (co_filename), any of
	 * which matches.  Glob i is pattern[at[i], at[i] + len[i]) (* and ?
	 * are any characters and one); lead[i]: matched against the file
	 * name with a '/' before it when the whole name was read, so that one
	 * glob (a star, then "/m.py") takes m.py as well as /lib/m.py. */
	unsigned int nglobs, tail;
	unsigned int at[LP_PY_GLOBS], len[LP_PY_GLOBS], lead[LP_PY_GLOBS];
	unsigned int pattern[LP_PY_PAT_MAX];
};

/* Whether a code object's qualified name matched python:NAME (map
 * "pycodes"), decided once by the kernel, keyed by process and address,
 * and checked on each call against the name object and first line it had
 * then (a code object freed, another made at its address).  Once lp-trace
 * watches its returns (lib/capture/trace/pywatch.c), armed is 1 and entry
 * the address of its RESUME, whose value lp-trace keeps entry_unit (3.11:
 * the un-specialized RESUME, whose handler runs only for it and for code
 * not yet quickened; from 3.12 on, watched too: a read of it there starts
 * a call); asked: an LP_EV_PYQUICK sent and not yet answered. */
struct lp_trace_pycode_key {
	unsigned int tgid;
	unsigned int pad;
	unsigned long long code;
};
struct lp_trace_pycode {
	unsigned long long qualname;
	int first;
	unsigned int matched;
	unsigned long long entry;
	unsigned short entry_unit;
	unsigned char armed, asked;
	unsigned int probe;	/* the python: probe whose site matched it */
};

/* An exception was raised in the python: span's frame (PyTraceBack_Here
 * there): a start at its address is a new call, not its own seen again
 * (an exception C code swallowed leaves the frame with no probe seeing). */
#define LP_FRAME_F_RAISED 1u

struct lp_trace_frame {
	unsigned long long ts;
	unsigned long long sp;	/* the stack pointer at entry: it says which return is ours */
	unsigned long long ret;	/* the return address at entry, before the kernel hijacks it */
	unsigned long long lp0;	/* the thread's lp_ns after this entry's own hit */
	unsigned int probe;
	unsigned int flags;	/* LP_FRAME_F_* */
	unsigned long long vals[LP_TRACE_MAX_CAPS];
	char strs[LP_TRACE_MAX_STRS][LP_TRACE_STR_MAX];
};

/* One thread's stack of open calls (map "stacks", key: tid). */
struct lp_trace_stack {
	unsigned int tgid;
	unsigned int depth;
	unsigned int overflow;	/* entries not pushed because too deep */
	unsigned int tid;	/* the thread that last pushed (a goroutine's moves) */
	/* ns lp's probes have cost this thread so far (every hit's full cost,
	 * calibrated, its program's part as measured): a span's lp_ns is its
	 * growth while it ran. */
	unsigned long long lp_ns;
	struct lp_trace_frame frames[LP_TRACE_MAX_DEPTH];
};

/* A system call in progress on a thread (map "sysin", key: tid). */
struct lp_trace_sysin {
	unsigned long long ts;
	long long nr;
	unsigned long long args[6];
	unsigned int tgid;
	unsigned int probe;
};

/* Records in the ring. */
enum {
	LP_EV_SPAN = 1,
	LP_EV_POINT = 2,
	LP_EV_SYSCALL = 3,
	LP_EV_TP = 4,
	/* Not LP_EV_FORK: bpf/profile.h's, which lib/capture/python.h brings
	 * in beside this header. */
	LP_EV_FORKED = 5,	/* a traced process forked: pid the child, tid the parent */
	LP_EV_EXIT = 6,		/* a traced process's last thread exited: pid */
	LP_EV_PYCODE = 7,	/* a code object python:NAME matched (struct lp_trace_event_py) */
	LP_EV_DL = 8,		/* process pid loaded or unloaded a library (LP_PROBE_DL) */
	/* a watched code object of process pid (vals[0]) has its RESUME
	 * specialized again: lp-trace writes it back */
	LP_EV_PYQUICK = 9,
};

struct lp_trace_event {
	unsigned int type;	/* LP_EV_* */
	unsigned int probe;	/* index into the probe table; for syscalls the nr */
	unsigned int pid, tid;
	unsigned long long start, end;	/* end = start for point events */
	unsigned int depth;
	unsigned int size;	/* LP_EV_TP: bytes of data */
	unsigned long long ret;
	unsigned long long lp_ns;	/* LP_EV_SPAN: what lp's probes added inside it */
	unsigned int flags;	/* LP_EV_SPAN: LP_SPAN_F_* */
	unsigned int pad;
	unsigned long long vals[LP_TRACE_MAX_CAPS];
};

/* struct lp_trace_event.flags */
#define LP_SPAN_F_TAIL 1	/* ended by a jmp out of the function (a tail call) */
#define LP_SPAN_F_UNWOUND 2	/* left without returning (an exception, longjmp): ended when seen gone */

/* An event followed by its strings (probes that capture some). */
struct lp_trace_event_strs {
	struct lp_trace_event ev;
	char strs[LP_TRACE_MAX_STRS][LP_TRACE_STR_MAX];
};

/* LP_EV_PYCODE: sent once a code object of process pid matched, before
 * its first span: vals[0] its address, vals[1] its first line (spans of
 * LP_PROBE_PY carry the same two), vals[2] 1; or, with vals[2] 0, once a
 * code object's name matched and its module did not (lp-trace says where
 * the name ran when nothing matched).  Its names as CPython holds them:
 * kind bytes a character (1 latin-1, 2 UCS-2, 4 UCS-4; 0 when it could
 * not be read) and len characters.  chars holds the first LP_PY_NAME_MAX
 * characters of the qualified name, then the last LP_PY_FILE_MAX of the
 * file: the record ends there (the array's size is room for the bounds
 * the verifier is shown, and the last characters of a long name, matched
 * and not sent). */
#define LP_PY_CHARS_MAX (5 * LP_PY_NAME_MAX * 4)
struct lp_trace_event_py {
	struct lp_trace_event ev;
	unsigned int name_kind, name_len;
	unsigned int file_kind, file_len;
	unsigned char chars[LP_PY_CHARS_MAX];
};

struct lp_trace_event_tp {
	struct lp_trace_event ev;
	unsigned char data[LP_TRACE_TP_MAX];
};

/* Per-CPU counters (map "counters"). */
enum {
	LP_LOST_RING = 0,	/* no room in the ring */
	LP_LOST_DEPTH = 1,	/* nesting deeper than LP_TRACE_MAX_DEPTH */
	LP_LOST_STACKS = 2,	/* no room for a new thread in "stacks" */
	LP_LOST_UNRETURNED = 3,	/* unused: calls left unreturned are spans marked unwound */
	LP_LOST_CHILDREN = 4,	/* forked processes not followed: "tgids" full */
	/* calls not traced while the tracer read what a library the program
	 * had just loaded can do (lp_session, dl_gen != dl_ok) */
	LP_LOST_UNCHECKED = 5,
	/* python: calls of a watched function whose start no probe saw (its
	 * RESUME specialized again, until lp-trace wrote it back) */
	LP_LOST_UNWATCHED = 6,
	LP_NLOST = 7,		/* the counters above are losses: lost records */
	/* python: probes' hits in the targets: breakpoints in the eval loop
	 * (every Python call twice, its start and its return, until the code
	 * named is watched) and hardware watchpoints (a watched return) */
	LP_COUNT_PY_HITS = 7,
	LP_COUNT_PY_WATCH = 8,
	LP_NCOUNTERS = 9,
};

#endif
