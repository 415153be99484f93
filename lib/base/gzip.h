/* gzip.h - bytes written gzipped (a gzip member, as pprof files are and
 * as an HTTP body with Content-Encoding: gzip is). */
#ifndef LP_GZIP_H
#define LP_GZIP_H

#include <stddef.h>
#include <stdio.h>

/* data's len bytes, gzipped, to out.  0, or -1 when out failed (errno);
 * dies when zlib cannot start or fails, which only memory makes it do. */
int lp_gzip__write(const void *data, size_t len, FILE *out);

#endif
