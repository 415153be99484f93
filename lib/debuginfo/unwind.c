/* unwind.c - DWARF unwinding of copied user stacks with libdw.
 *
 * libdw unwinds a "thread" through callbacks: the initial registers come from
 * the sample (ip, sp, bp: enough for the CFA rules of compiled code, which
 * are almost always sp- or bp-based), and memory reads are served from the
 * copy of the stack taken in the kernel; anything outside it is unknown, and
 * the unwind ends there as truncated.  The Dwfl is the symbolizer's, attached
 * to these callbacks once; its CFI caches then serve every sample.
 *
 * libdwfl's thread and frame interface (dwfl_attach_state,
 * dwfl_getthread_frames and the Dwfl_Thread callbacks) is this file's own
 * business: lib/debuginfo/dwarf*.c own everything else of libdw, the
 * process's modules included (lp_dwproc). */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "base/hashmap.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/unwind.h"
#include "base/util.h"

struct lp_unwinder {
	/* Where a process's modules come from: the symbolizer's (a live
	 * process) or the caller's (lp_unwinder__new_modules). */
	struct lp_dwproc *(*modules)(void *arg, pid_t pid, uint64_t addr);
	void *modules_arg;
	int self_fd;
	Elf *self;		/* this program: the architecture for libdw */
	/* The sample being unwound: the callbacks' argument. */
	pid_t tid;
	struct lp_unwind_regs regs;
	const unsigned char *stack;
	size_t len;
	uint64_t *pcs;
	unsigned char *ret;
	size_t n, max;
	bool out_of_stack;
	bool zero_ra;		/* ended at a return address of 0 */
	/* lp_unwinder__outermost's answers: (pid, pc) -> OUTERMOST or INNER. */
	struct lp_hashmap outermost;
};

#define OUTERMOST ((void *)2)
#define INNER ((void *)1)
/* Cached answers past this many: the cache starts over. */
#define LP_OUTERMOST_MAX 65536

/* x86-64 DWARF register numbers. */
#define DW_X86_64_RBP 6
#define DW_X86_64_RSP 7
/* rip: also the return address column of x86-64's CFI. */
#define DW_X86_64_RA 16

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct lp_unwinder *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct lp_unwinder *u = arg;
	uint64_t sp = u->regs.sp;

	if (addr < sp || addr - sp > u->len || u->len - (addr - sp) < sizeof(*result)) {
		u->out_of_stack = true;
		return false;
	}
	memcpy(result, u->stack + (addr - sp), sizeof(*result));
	return true;
}

/* bp, sp, and the pc twice: as the pc, and as register 16 (rip), which CFI
 * expressions read by number (a PLT stub's CFA depends on where in its 16
 * bytes the pc is: DW_OP_breg16); without it libdw cannot compute a PLT
 * stub's CFA and falls back to a frame-pointer step through garbage. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct lp_unwinder *u = arg;
	Dwarf_Word r[2] = { u->regs.bp, u->regs.sp };
	Dwarf_Word ip = u->regs.ip;

	return dwfl_thread_state_registers(thread, DW_X86_64_RBP, 2, r) &&
	       dwfl_thread_state_registers(thread, DW_X86_64_RA, 1, &ip) &&
	       (dwfl_thread_state_register_pc(thread, u->regs.ip), true);
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static struct lp_dwproc *symbolizer_modules(void *sym, pid_t pid, uint64_t addr)
{
	return lp_symbolizer__modules(sym, pid, addr);
}

struct lp_unwinder *lp_unwinder__new(struct lp_symbolizer *sym)
{
	return lp_unwinder__new_modules(symbolizer_modules, sym);
}

struct lp_unwinder *lp_unwinder__new_modules(struct lp_dwproc *(*modules)(void *arg, pid_t pid,
									 uint64_t addr),
					     void *arg)
{
	struct lp_unwinder *u = lp_calloc(1, sizeof(*u));

	u->modules = modules;
	u->modules_arg = arg;
	lp_hashmap__init(&u->outermost);
	elf_version(EV_CURRENT);
	u->self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	u->self = u->self_fd >= 0 ? elf_begin(u->self_fd, ELF_C_READ_MMAP, NULL) : NULL;
	return u;
}

void lp_unwinder__free(struct lp_unwinder *u)
{
	if (!u)
		return;
	if (u->self)
		elf_end(u->self);
	if (u->self_fd >= 0)
		close(u->self_fd);
	lp_hashmap__fini(&u->outermost);
	free(u);
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct lp_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (u->n >= u->max)
		return DWARF_CB_ABORT;
	/* A return address of 0 marks the outermost frame on some stacks. */
	if (!pc && u->n) {
		u->zero_ra = true;
		return DWARF_CB_ABORT;
	}
	u->pcs[u->n] = pc;
	u->ret[u->n] = !activation;
	u->n++;
	return DWARF_CB_OK;
}

size_t lp_unwinder__unwind(struct lp_unwinder *u, pid_t pid, pid_t tid,
			   const struct lp_unwind_regs *regs, const void *stack, size_t len,
			   uint64_t *pcs, unsigned char *ret, size_t max,
			   enum lp_unwind_end *end, const char **why)
{
	Dwfl *dwfl = lp_dwproc__dwfl(u->modules(u->modules_arg, pid, regs->ip));

	*why = "";
	u->n = 0;
	if (!max)
		return *end = LP_UNWIND_TRUNCATED, 0;
	if (!dwfl || !regs->ip) {
		*end = LP_UNWIND_FAILED;
		*why = dwfl ? "no-registers" : "no-process";
		if (regs->ip) {
			pcs[0] = regs->ip;
			ret[0] = 0;
			return 1;
		}
		return 0;
	}
	/* Attached once per Dwfl (a new one after an exec). */
	if (dwfl_pid(dwfl) < 0) {
		/* The ELF only names the architecture: ours, since libdw
		 * otherwise takes it from a module, and a process that exited
		 * before its maps were read has none. */
		if (!dwfl_attach_state(dwfl, u->self, pid, &callbacks, u)) {
			*end = LP_UNWIND_FAILED;
			*why = dwfl_errmsg(-1);
			pcs[0] = regs->ip;
			ret[0] = 0;
			return 1;
		}
	}
	u->tid = tid;
	u->regs = *regs;
	u->stack = stack;
	u->len = len;
	u->pcs = pcs;
	u->ret = ret;
	u->max = max;
	u->out_of_stack = false;
	u->zero_ra = false;

	int rc = dwfl_getthread_frames(dwfl, tid, frame_cb, u);
	/* libdw takes a register it cannot read for an undefined one and may
	 * end "normally" where the copy ended: the copy decides, unless the
	 * last frame is the thread's outermost (the read that failed was of
	 * a register its caller saved near the top of the stack, which the
	 * unwinding did not need).  An error at the outermost frame (ld.so's
	 * entry code, which has no CFI) ends a whole stack too. */
	bool outermost = (u->out_of_stack || rc != 0) && !u->zero_ra && u->n &&
			 lp_unwinder__outermost(u, pid, u->pcs[u->n - 1], u->ret[u->n - 1]);
	if (u->out_of_stack && !u->zero_ra && !outermost) {
		*end = LP_UNWIND_TRUNCATED;
		*why = "end-of-copy";
	} else if (rc == 0 || u->zero_ra || outermost) {
		*end = LP_UNWIND_COMPLETE;
	} else if (u->n >= max || u->out_of_stack) {
		*end = LP_UNWIND_TRUNCATED;
		*why = u->n >= max ? "max-frames" : "end-of-copy";
	} else {
		*end = LP_UNWIND_FAILED;
		*why = dwfl_errmsg(-1);
	}
	if (!u->n) {
		pcs[0] = regs->ip;
		ret[0] = 0;
		u->n = 1;
	}
	return u->n;
}


bool lp_unwinder__outermost(struct lp_unwinder *u, pid_t pid, uint64_t pc, bool ret)
{
	uint64_t look = ret && pc ? pc - 1 : pc;
	uint64_t key = lp_hashmap__key(lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, &pid, sizeof(pid)),
						     &look, sizeof(look)));
	void *v = lp_hashmap__get(&u->outermost, key);
	struct lp_dwproc *mods;

	if (v)
		return v == OUTERMOST;
	/* The return address undefined: the thread's outermost frame. */
	mods = u->modules(u->modules_arg, pid, look);
	bool outer = mods && lp_dwproc__outermost(mods, look);
	if (u->outermost.count >= LP_OUTERMOST_MAX) {
		lp_hashmap__fini(&u->outermost);
		lp_hashmap__init(&u->outermost);
	}
	lp_hashmap__put(&u->outermost, key, outer ? OUTERMOST : INNER);
	return outer;
}

void lp_unwinder__forget(struct lp_unwinder *u, pid_t pid)
{
	/* Keyed by hash: not one process's entries alone.  Execs are rare
	 * next to samples; start over. */
	(void)pid;
	lp_hashmap__fini(&u->outermost);
	lp_hashmap__init(&u->outermost);
}
