/* vdso.c - this process's vDSO image copied into a memfd (vdso.h).  The
 * image is a whole ELF file in memory (its section headers too, at its
 * end): its length is the furthest of the section header table's end and
 * its segments' ends in the file. */
#include "debuginfo/vdso.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

/* The image is two or three pages: more is not a vDSO. */
#define LP_VDSO_MAX (1u << 20)

const char *lp_vdso__path(void)
{
	static char path[32];
	static int tried;
	const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr eh;
	uint64_t len;
	int fd;

	if (tried++)
		return path[0] ? path : NULL;
	if (!img)
		return NULL;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return NULL;
	len = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	for (unsigned i = 0; i < eh.e_phnum && eh.e_phoff < LP_VDSO_MAX; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, img + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > len)
			len = ph.p_offset + ph.p_filesz;
	}
	if (len > LP_VDSO_MAX || (fd = memfd_create("lp-vdso", MFD_CLOEXEC)) < 0)
		return NULL;
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}
