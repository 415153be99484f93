/* gzip.c - bytes written gzipped (gzip.h). */
#include "base/gzip.h"
#include "base/util.h"

#include <zlib.h>

int lp_gzip__write(const void *data, size_t len, FILE *out)
{
	z_stream z = { 0 };
	/* 15 + 16: a gzip wrapper, not zlib's. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		lp_die(1, "cannot start zlib");
	unsigned char chunk[65536];
	const unsigned char *in = data;
	int zr, ret = 0;
	do {
		/* avail_in is a uInt: a body over 4 GiB goes in pieces. */
		if (!z.avail_in && len) {
			uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;
			z.next_in = (unsigned char *)in;
			z.avail_in = n;
			in += n;
			len -= n;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
		size_t n = sizeof(chunk) - z.avail_out;
		if (n && fwrite(chunk, 1, n, out) != n)
			ret = -1;
	} while (zr == Z_OK && ret == 0);
	if (zr != Z_STREAM_END && ret == 0)
		lp_die(1, "zlib failed to compress");
	deflateEnd(&z);
	return ret;
}
