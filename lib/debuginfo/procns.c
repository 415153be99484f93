/* procns.c - a process's own view of files and pids (procns.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuginfo/procns.h"
#include "base/util.h"

/* Same inode on the same device: the same namespace (its nsfs inode) or
 * the same directory. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

bool lp_procns__foreign_root(pid_t pid)
{
	char ns[64], root[64];

	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if (access(ns, F_OK) < 0)
		return false;
	/* unshare --mount keeps the root directory and mounts over parts of
	 * the tree: the namespaces differ, the roots do not; chroot is the
	 * other way round. */
	return !same_file(ns, "/proc/self/ns/mnt") || !same_file(root, "/proc/self/root");
}

char *lp_procns__path(pid_t pid, const char *path)
{
	if (path[0] != '/' || !lp_procns__foreign_root(pid))
		return lp_strdup(path);
	char *out = lp_malloc(strlen(path) + 32);

	sprintf(out, "/proc/%d/root%s", (int)pid, path);
	return out;
}

size_t lp_procns__root_len(const char *path)
{
	const char *p = path + 6;

	if (strncmp(path, "/proc/", 6) || *p < '1' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return strncmp(p, "/root/", 6) ? 0 : (size_t)(p + 5 - path);
}

pid_t lp_procns__nspid(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	pid_t ns = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		/* One pid per level, the host's first: the last is the
		 * process's own namespace's. */
		for (char *tok = strtok(line + 6, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			ns = (pid_t)atoi(tok);
		break;
	}
	free(line);
	fclose(f);
	return ns;
}
