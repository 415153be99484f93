/* procns.h - a process's own view of files and pids, from the host: a
 * process in another mount namespace (a container) or a chroot maps files
 * by paths of its own root, and a process in another pid namespace has a pid
 * of its own there.  Files are reached through /proc/PID/root (the kernel
 * resolves the path in the process's root), pids read from /proc/PID/status
 * (NSpid). */
#ifndef LP_PROCNS_H
#define LP_PROCNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* True when pid sees another file tree than we do: another mount namespace
 * or another root directory.  False when pid cannot be read (gone). */
bool lp_procns__foreign_root(pid_t pid);

/* The path at which we open the file pid names `path` (absolute):
 * "/proc/PID/root/PATH" when pid's file tree is not ours, else path
 * itself.  Allocated. */
char *lp_procns__path(pid_t pid, const char *path);

/* The length of the "/proc/PID/root" that starts a path lp_procns__path
 * made for a process whose file tree is not ours (what follows it is the
 * path in that tree), 0 for a path of our own tree. */
size_t lp_procns__root_len(const char *path);

/* pid's pid in its innermost pid namespace (the last NSpid field): pid
 * itself for a process of ours, 0 when it cannot be read (gone). */
pid_t lp_procns__nspid(pid_t pid);

#endif
