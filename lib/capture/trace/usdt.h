/* usdt.h - a file's USDT probes (.note.stapsdt, SystemTap's SDT notes, read
 * with libelf): what lp-trace 'usdt:...' resolves and --list usdt shows.
 * libbpf attaches them; this only says which exist and their arguments. */
#ifndef LP_USDT_H
#define LP_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lp_usdt_probe {
	char *provider, *name;
	char *args;		/* the argument spec as written: "-4@%eax 8@%rdx" */
	bool semaphore;		/* a counter that must be set for the probe to fire */
};

/* The probes of ELF file path, sorted by provider then name (*n of them;
 * 0 and NULL when it has none).  -1 after reporting why it cannot be read. */
int lp_usdt__read(const char *path, struct lp_usdt_probe **probes, size_t *n);
void lp_usdt__free(struct lp_usdt_probe *probes, size_t n);

/* Where usdt:PROVIDER:NAME is looked for: executable exe, then the files
 * pid maps (none when pid is 0), each once, in its own file tree.  *n paths,
 * freed with lp_usdt__free_files. */
char **lp_usdt__files(const char *exe, pid_t pid, size_t *n);
void lp_usdt__free_files(char **files, size_t n);

/* One argument of a spec ("-4@%eax"): its size in bytes and whether it is
 * signed.  The number of arguments: up to max filled, -1 when a word is not
 * SIZE@LOCATION. */
int lp_usdt__arg_types(const char *args, int *size, bool *sign, int max);

#endif
