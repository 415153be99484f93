/* page.h - lp-serve's page: lib/serve/page/serve.html and the files it
 * includes, built into the program as one file.
 * It draws whatever the snapshots it is sent hold (formats/lp-serve.md);
 * nothing is put into it. */
#ifndef LP_SERVE_PAGE_H
#define LP_SERVE_PAGE_H

#include <stddef.h>

const char *lp_serve_page(size_t *len);

#endif
