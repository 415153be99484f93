/* cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer -Wl,--no-eh-frame-hdr */
/* names-nohdr - names-c linked without .eh_frame_hdr: stripped, nothing
 * gives its functions a start, so their frames stay unresolved, with their
 * addresses in the file (tests/names.bats). */
#include "names-c.c"
