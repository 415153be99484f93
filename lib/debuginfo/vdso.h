/* vdso.h - this process's vDSO as a file libdw can open: the image the
 * kernel maps into every process (its code, symbols and CFI), which is no
 * file on disk.  A recording's [vdso] frames are the same image when it was
 * made by the same kernel, which its build-id says: lp-symbolize unwinds
 * through them and names them from ours, as perf does from the copy it
 * keeps in its build-id cache. */
#ifndef LP_VDSO_H
#define LP_VDSO_H

/* "/proc/self/fd/N", a memfd holding the image (made once, kept open for
 * the process's life); NULL when there is no vDSO or no memfd. */
const char *lp_vdso__path(void);

#endif
