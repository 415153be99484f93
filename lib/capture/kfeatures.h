/* kfeatures.h - what the running kernel offers lp's BPF programs, probed
 * once from the kernel's own BTF (a helper's id in enum bpf_func_id, an
 * attach type, a type, a member), as libbpf-tools and bpftrace probe.
 *
 * Every feature newer than Debian 12's 6.1 has a fallback, and every
 * feature can be hidden from lp with LP_HIDE_FEATURES=name,name...: lp
 * then behaves as on a kernel without it, which is how the tests force
 * each fallback (and each refusal) on a new kernel.  lp-record --features
 * and lp-trace --features print the table (lp_kfeatures__print). */
#ifndef LP_KFEATURES_H
#define LP_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum lp_kfeature {
	LP_KF_BTF,		/* the kernel's BTF, for CO-RE */
	LP_KF_RINGBUF,		/* BPF ring buffers */
	LP_KF_TP_BTF,		/* BTF-typed tracepoint programs */
	LP_KF_TASK_ITER,	/* BPF task iterators */
	LP_KF_COOKIE,		/* BPF attach cookies */
	LP_KF_TASK_REGS,	/* bpf_task_pt_regs */
	LP_KF_LOOP,		/* bpf_loop */
	LP_KF_COPY_TASK,	/* bpf_copy_from_user_task */
	LP_KF_UPROBE_MULTI,	/* uprobe-multi links */
	LP_KF_URET_SYSCALL,	/* uretprobes return through a system call */
	LP_KF_RI_POOL,		/* the task's pool of free return instances */
	LP_KF_UPROBE_SESSION,	/* uprobe sessions: a uretprobe armed per call */
	LP_KF_HW_WATCH,		/* hardware watchpoints that fire, with BPF */
	LP_KF_N
};

/* Whether the running kernel has f and it is not hidden. */
bool lp_kfeature__has(enum lp_kfeature f);

/* f's name in LP_HIDE_FEATURES and the table, and the kernel that brought
 * it ("6.6"). */
const char *lp_kfeature__name(enum lp_kfeature f);
const char *lp_kfeature__since(enum lp_kfeature f);

/* 0, or -1 after saying which name of LP_HIDE_FEATURES is no feature. */
int lp_kfeatures__check_hidden(void);

/* lp_kfeatures__check_hidden, then each of the n features a program
 * cannot do without: 0, or -1 after saying "cannot DOING on this kernel:
 * PROG needs the kernel's X (Linux V) (PROG --features)". */
int lp_kfeatures__require(const enum lp_kfeature *need, size_t n, const char *doing,
			  const char *prog);

/* "the kernel's bpf_loop (Linux 5.17)", and whether it is hidden: for a
 * refusal's message. */
const char *lp_kfeature__what(enum lp_kfeature f);

/* The table: the kernel's release, then each feature, whether this kernel
 * has it (or it is hidden), what lp uses it for and what lp does without
 * it.  What a user pastes into a bug report.  -1 on a write error. */
int lp_kfeatures__print(FILE *f);

#endif
