/* execmaps.h - the mappings of targets' new programs, read by a thread of
 * their own the moment they exec (and again once ld.so has mapped their
 * libraries), kept for lp-record's reader, which may reach a short-lived
 * child's samples only after the child has ended and its /proc/PID/maps
 * is gone.  perf has the kernel write MMAP records into its ring for this;
 * here the BPF exec program names the pid on a ring of its own
 * (bpf/profile.bpf.c's lp_execs) and this thread reads the text. */
#ifndef LP_EXECMAPS_H
#define LP_EXECMAPS_H

#include <sys/types.h>

/* How long after an exec its libraries are mapped, about (ld.so's work):
 * when the maps are read again. */
#define LP_EXEC_SETTLE_NS 3000000

struct lp_execmaps;

/* Starts the thread on the ring whose fd is given (records: a __u32 pid
 * each).  NULL with errno. */
struct lp_execmaps *lp_execmaps__new(int ring_fd);

/* A copy of pid's maps as last read (malloc'd), or NULL: its exec was not
 * seen, or its maps could not be read.  Thread-safe. */
char *lp_execmaps__get(struct lp_execmaps *x, pid_t pid);

/* Stops the thread and frees what it kept; NULL is fine. */
void lp_execmaps__free(struct lp_execmaps *x);

#endif
