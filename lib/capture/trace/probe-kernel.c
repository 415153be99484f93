/* probe-kernel.c - syscall:NAME and tp:SUBSYS:EVENT: system call numbers,
 * their arguments' names from tracefs (mounted if need be), and these
 * probes' points, which read no file. */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include "base/syscalls.h"
#include "base/util.h"

int lp_syscall__number(const char *name)
{
	for (size_t i = 0; i < sizeof(lp_syscalls) / sizeof(lp_syscalls[0]); i++)
		if (!strcmp(lp_syscalls[i].name, name))
			return lp_syscalls[i].nr;
	return -1;
}

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

const char *lp_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct statfs sf;
	for (size_t i = 0; i < 2; i++)
		if (statfs(dirs[i], &sf) == 0 && sf.f_type == TRACEFS_MAGIC)
			return dirs[i];
	if (mount("tracefs", dirs[0], "tracefs", 0, NULL) < 0) {
		lp_error_errno("tracefs is not mounted and mounting it at %s failed", dirs[0]);
		return NULL;
	}
	lp_error("note: mounted tracefs at %s (it was not mounted)", dirs[0]);
	return dirs[0];
}

int lp_syscall__args(const char *name, char names[6][32], bool ptr[6], bool isint[6])
{
	const char *dir = lp_tracefs();
	if (!dir)
		return 0;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_%s/format", dir, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[512];
	int n = 0;
	/* "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;" after
	 * the common fields and __syscall_nr. */
	while (fgets(line, sizeof(line), f) && n < 6) {
		char *p = strstr(line, "field:");
		char *semi = p ? strchr(p, ';') : NULL;
		if (!semi || strstr(line, "common_") || strstr(line, "__syscall_nr"))
			continue;
		char *e = semi;
		while (e > p && (isalnum((unsigned char)e[-1]) || e[-1] == '_'))
			e--;
		snprintf(names[n], 32, "%.*s", (int)(semi - e), e);
		ptr[n] = memchr(p, '*', (size_t)(e - p)) != NULL;
		/* "field:int dfd;": a 32-bit signed value in a 64-bit slot. */
		isint[n] = !strncmp(p + 6, "int ", 4);
		n++;
	}
	fclose(f);
	return n;
}

/* syscall:NAME and tp:SUBSYS:EVENT: no file to read. */
void lp_probe_kernel_point(const struct lp_probe_spec *spec, struct lp_probe_point **points,
			   size_t *n)
{
	struct lp_probe_point *pt = lp_probe_new_point(spec, "", points, n);
	pt->name = lp_strdup(spec->text);
	if (spec->type == LP_PROBE_SYSCALLS) {
		pt->cfg.kind = LP_PROBE_SYSCALL;
		pt->sysnr = lp_syscall__number(spec->name);
	} else {
		pt->cfg.kind = LP_PROBE_TP;
		size_t k = strcspn(spec->name, ":");
		pt->tp_subsys = lp_strndup(spec->name, k);
		pt->tp_event = lp_strdup(spec->name + k + 1);
	}
}
