/* pygil.h - where a CPython keeps the thread state that holds its GIL
 * (the thread whose eval loop runs), which both BPF programs read:
 * bpf/profile.h's struct lp_py_proc and bpf/trace.h's struct lp_trace_py
 * say which way (gil_base) and at what offsets. */
#ifndef LP_BPF_PYGIL_H
#define LP_BPF_PYGIL_H

#define LP_PY_GIL_RUNTIME 0	/* 3.11: in _PyRuntime */
#define LP_PY_GIL_POINTER 1	/* 3.12: in the GIL the interpreter points to */
#define LP_PY_GIL_INTERP 2	/* 3.13: in the interpreter */

#endif
