/* perfdata-zstd.c - perf record -z's compressed records (perfdata-internal.h),
 * decompressed as perf does (tools/perf/util/tool.c,
 * perf_session__process_compressed_event; util/zstd.c): each COMPRESSED
 * record's data (COMPRESSED2's: its data_size bytes, then padding) go
 * through one zstd stream kept for the whole file, and come out as
 * records like the file's, which perfdata.c reads before the file's next
 * one.  perf compresses each ring's bytes as they are read, in records of
 * at most 64 KiB, so a record may begin in one compressed record and end
 * in the next: its first part waits here for the rest.  No compressed
 * record decompresses to more than perf's rings hold (the COMPRESSED
 * feature's mmap_len, the buffer perf decompresses one into), and what is
 * held is trimmed a round at a time (lp_perfdata__inflated_trim): the
 * file is never decompressed whole. */
#include "stream/foreign/perfdata-internal.h"

#include <zstd.h>

#define INFLATE_STEP (64 << 10)	/* what the buffer grows by, at least */

const char *lp_perfdata__at(struct perfdata_dec *d, const unsigned char *r)
{
	const struct inflated *z = &d->z;
	uint64_t off = lp_perfdata__offset(d, r), x, from = 0;
	if (off < d->len) {
		snprintf(d->at, sizeof(d->at), "byte %llu", (unsigned long long)off);
		return d->at;
	}
	x = z->dropped + (off - d->len);
	for (size_t i = 0; i < z->nparts && z->parts[i].at <= x; i++)
		from = z->parts[i].from;
	snprintf(d->at, sizeof(d->at), "byte %llu of the records decompressed (from the compressed "
		 "record at byte %llu)", (unsigned long long)x, (unsigned long long)from);
	return d->at;
}

/* A compressed record at r: its data decompressed after what is held. */
int lp_perfdata__inflate(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
			 uint16_t size, const char **why)
{
	struct inflated *z = &d->z;
	uint64_t at = lp_perfdata__offset(d, r), n = size - 8u, start = z->len;
	const unsigned char *src = r + 8;

	if (at >= d->len)
		return lp_perfdata__fail(d, why, "a compressed record at %s, inside compressed records",
					 lp_perfdata__at(d, r));
	if (type == REC_COMPRESSED2) {
		if (size < 16 || get64(r + 8) > size - 16u)
			return lp_perfdata__fail(d, why, "the compressed record at byte %llu: its data "
						 "run past its end (%u bytes)", (unsigned long long)at, size);
		n = get64(r + 8);
		src = r + 16;
	}
	if (!z->feature)
		return lp_perfdata__fail(d, why, "the compressed record at byte %llu: the header has no "
					 "COMPRESSED feature (perf record -z's), which says what they "
					 "decompress to", (unsigned long long)at);
	if (z->type != COMP_ZSTD)
		return lp_perfdata__fail(d, why, "the compressed record at byte %llu: compressed with "
					 "type %u, which is not zstd (%d)", (unsigned long long)at,
					 z->type, COMP_ZSTD);
	if (!z->stream) {
		z->stream = ZSTD_createDStream();
		if (!z->stream || ZSTD_isError(ZSTD_initDStream(z->stream)))
			return lp_perfdata__fail(d, why, "cannot make a zstd stream");
	}
	GROW(z->parts, z->parts_cap, z->nparts + 1);
	z->parts[z->nparts++] = (struct inflated_part){ z->dropped + start, at };

	/* Until all its data are in and the output has room left (zstd has
	 * written all it could): one byte more than mmap_len is too many. */
	ZSTD_inBuffer in = { src, n, 0 };
	uint64_t most = start + (uint64_t)z->mmap_len + 1;
	for (;;) {
		if (z->len == z->cap) {
			GROW(z->buf, z->cap, z->len + INFLATE_STEP);
		}
		ZSTD_outBuffer out = { z->buf, z->cap < most ? z->cap : most, z->len };
		size_t rc = ZSTD_decompressStream(z->stream, &out, &in);
		z->len = out.pos;
		if (ZSTD_isError(rc))
			return lp_perfdata__fail(d, why, "the compressed record at byte %llu does not "
						 "decompress: %s", (unsigned long long)at,
						 ZSTD_getErrorName(rc));
		if (z->len - start > z->mmap_len)
			return lp_perfdata__fail(d, why, "the compressed record at byte %llu decompresses "
						 "to more than the %u bytes of perf's rings (its "
						 "COMPRESSED feature's mmap_len)",
						 (unsigned long long)at, z->mmap_len);
		if (in.pos == in.size && out.pos < out.size)
			return 0;
	}
}

/* Drops what no record still to read or queued is in (the queue's
 * records are all still to handle when a round is read). */
void lp_perfdata__inflated_trim(struct perfdata_dec *d)
{
	struct inflated *z = &d->z;
	uint64_t low = z->head;
	for (size_t i = 0; i < d->n; i++)
		if (d->queue[i].off >= d->len && d->queue[i].off - d->len < low)
			low = d->queue[i].off - d->len;
	if (!low)
		return;
	memmove(z->buf, z->buf + low, z->len - low);
	z->len -= low;
	z->head -= low;
	z->dropped += low;
	for (size_t i = 0; i < d->n; i++)
		if (d->queue[i].off >= d->len)
			d->queue[i].off -= low;
	/* the parts whose bytes are all gone, but the last */
	size_t keep = 0;
	while (keep + 1 < z->nparts && z->parts[keep + 1].at <= z->dropped)
		keep++;
	memmove(z->parts, z->parts + keep, (z->nparts - keep) * sizeof(*z->parts));
	z->nparts -= keep;
}

void lp_perfdata__inflated_free(struct inflated *z)
{
	ZSTD_freeDStream(z->stream);
	free(z->buf);
	free(z->parts);
}
