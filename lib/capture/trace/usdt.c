/* usdt.c - USDT probes from .note.stapsdt.  Each note (owner "stapsdt",
 * type 3) holds three addresses (the probe, the .stapsdt.base link-time
 * address, the semaphore or 0) and three strings: provider, name,
 * arguments.  libelf splits the notes; the layout inside one is sys/sdt.h's. */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/trace/usdt.h"
#include "base/util.h"
#include "debuginfo/procns.h"

#define NT_STAPSDT 3

static int probe_cmp(const void *a, const void *b)
{
	const struct lp_usdt_probe *x = a, *y = b;
	int c = strcmp(x->provider, y->provider);
	return c ? c : strcmp(x->name, y->name);
}

/* One note's description: 0 when it is a probe (added), -1 when malformed. */
static int add_note(const char *desc, size_t size, int elfclass, struct lp_usdt_probe **probes,
		    size_t *n)
{
	size_t asz = elfclass == ELFCLASS32 ? 4 : 8;
	if (size < 3 * asz + 3)
		return -1;
	uint64_t sema = 0;
	memcpy(&sema, desc + 2 * asz, asz);
	const char *s[3], *p = desc + 3 * asz, *end = desc + size;
	for (int i = 0; i < 3; i++) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			return -1;
		s[i] = p;
		p = z + 1;
	}
	*probes = lp_reallocarray(*probes, *n + 1, sizeof(**probes));
	(*probes)[(*n)++] = (struct lp_usdt_probe){ .provider = lp_strdup(s[0]), .name = lp_strdup(s[1]),
						     .args = lp_strdup(s[2]), .semaphore = sema != 0 };
	return 0;
}

static int read_notes(Elf *e, const char *path, struct lp_usdt_probe **probes, size_t *n)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	int elfclass = gelf_getclass(e);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(nm = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(nm, ".note.stapsdt"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)d->d_buf + name_off, "stapsdt", 8))
				continue;
			if (add_note((char *)d->d_buf + desc_off, nh.n_descsz, elfclass, probes, n) < 0) {
				lp_error("%s: a malformed USDT note in .note.stapsdt", path);
				return -1;
			}
		}
	}
	return 0;
}

int lp_usdt__read(const char *path, struct lp_usdt_probe **probes, size_t *n)
{
	*probes = NULL;
	*n = 0;
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		lp_error_errno("cannot open %s", path);
		return -1;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int r = -1;
	if (!e || elf_kind(e) != ELF_K_ELF)
		lp_error("%s: not an ELF file", path);
	else
		r = read_notes(e, path, probes, n);
	if (e)
		elf_end(e);
	close(fd);
	if (r < 0) {
		lp_usdt__free(*probes, *n);
		*probes = NULL;
		*n = 0;
		return -1;
	}
	if (*n)
		qsort(*probes, *n, sizeof(**probes), probe_cmp);
	return 0;
}

void lp_usdt__free(struct lp_usdt_probe *probes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(probes[i].provider);
		free(probes[i].name);
		free(probes[i].args);
	}
	free(probes);
}

int lp_usdt__arg_types(const char *args, int *size, bool *sign, int max)
{
	int k = 0;
	const char *p = args;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		bool neg = *p == '-';
		char *at;
		long sz = strtol(p + neg, &at, 10);
		if (*at != '@' || (sz != 1 && sz != 2 && sz != 4 && sz != 8))
			return -1;
		if (k < max) {
			size[k] = (int)sz;
			sign[k] = neg;
		}
		k++;
		p = at + strcspn(at, " ");
	}
	return k;
}

static bool is_elf(const char *path)
{
	unsigned char magic[4] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t got = read(fd, magic, 4);
	close(fd);
	return got == 4 && !memcmp(magic, "\177ELF", 4);
}

char **lp_usdt__files(const char *exe, pid_t pid, size_t *n)
{
	char **files = lp_calloc(1, sizeof(*files));
	files[0] = lp_strdup(exe);
	*n = 1;
	struct lp_maps m;
	if (pid <= 0 || lp_maps__open(&m, pid) < 0)
		return files;
	while (lp_maps__next(&m)) {
		if (m.name[0] != '/')
			continue;
		char *path = lp_procns__path(pid, m.name);
		bool seen = !is_elf(path);	/* a data file mapped, or deleted */
		for (size_t i = 0; i < *n && !seen; i++)
			seen = !strcmp(files[i], path) || !strcmp(files[i], m.name);
		if (seen) {
			free(path);
			continue;
		}
		files = lp_reallocarray(files, *n + 1, sizeof(*files));
		files[(*n)++] = path;
	}
	lp_maps__close(&m);
	return files;
}

void lp_usdt__free_files(char **files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}
