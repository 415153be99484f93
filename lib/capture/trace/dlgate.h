/* dlgate.h - whether the libraries traced processes have loaded can throw
 * through their calls: the verdict that lets lp-trace keep a uretprobe on
 * a function whose program calls dlopen (bpf/trace.bpf.c, lp_session).
 *
 * An exception crossing a uretprobe's trampoline ends the program, but one
 * can only be caught by code already running above the call, so loaded
 * before it began: a call that began while no loaded library could throw
 * or catch is safe under a uretprobe whatever is loaded after.  The BPF
 * side counts loads (ld.so's _dl_debug_state, before the new code can
 * run) and arms no uretprobe until the tracer has read the processes'
 * maps here and found nothing that can (lp_hazard__throws). */
#ifndef LP_DLGATE_H
#define LP_DLGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct lp_dlgate;

struct lp_dlgate *lp_dlgate__new(void);
void lp_dlgate__free(struct lp_dlgate *g);

/* pid loaded or unloaded a library: its maps are read at the next check. */
void lp_dlgate__dirty(struct lp_dlgate *g, pid_t pid);
/* Whether a process is marked dirty (or all are). */
bool lp_dlgate__pending(const struct lp_dlgate *g);
/* Loads were seen whose processes are not known (a record lost): every
 * process is read at the next check. */
void lp_dlgate__all_dirty(struct lp_dlgate *g);

/* Reads the maps of the processes marked dirty (of pids[0..npids) when
 * all are): 0 when no library mapped executable in them can throw, 1 when
 * one can (*who its process, why what and why: "libthrow.so links
 * libstdc++.so.6 (...)").  A process gone is no longer read.  Each file
 * is judged once. */
int lp_dlgate__check(struct lp_dlgate *g, const pid_t *pids, size_t npids, pid_t *who, char *why,
		     size_t whysize);

#endif
