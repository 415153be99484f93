/* protobuf.c - the wire format, read (protobuf.h). */
#include "base/protobuf.h"

static int varint(const unsigned char **pp, const unsigned char *end, uint64_t *out)
{
	const unsigned char *p = *pp;
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (p == end)
			return -1;
		unsigned char b = *p++;
		if (shift == 63 && b > 1)
			return -1;	/* over 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return 0;
		}
	}
	return -1;
}

int lp_pb__next(struct lp_pb *m, struct lp_pb_field *f)
{
	if (m->p == m->end)
		return 0;
	uint64_t key;
	if (varint(&m->p, m->end, &key) < 0 || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
		return -1;
	f->number = (uint32_t)(key >> 3);
	f->wire = (enum lp_pb_wire)(key & 7);
	f->data = NULL;
	f->len = 0;
	f->value = 0;
	switch (f->wire) {
	case LP_PB_VARINT:
		return varint(&m->p, m->end, &f->value) < 0 ? -1 : 1;
	case LP_PB_I64:
	case LP_PB_I32: {
		size_t n = f->wire == LP_PB_I64 ? 8 : 4;
		if ((size_t)(m->end - m->p) < n)
			return -1;
		for (size_t i = 0; i < n; i++)
			f->value |= (uint64_t)m->p[i] << (8 * i);
		m->p += n;
		return 1;
	}
	case LP_PB_LEN: {
		uint64_t len;
		if (varint(&m->p, m->end, &len) < 0 || len > (uint64_t)(m->end - m->p))
			return -1;
		f->data = m->p;
		f->len = (size_t)len;
		m->p += len;
		return 1;
	}
	default:
		return -1;	/* groups (3, 4) are gone from proto3 and pprof */
	}
}

bool lp_pb__varints(const struct lp_pb_field *f, bool (*fn)(void *ctx, uint64_t v), void *ctx)
{
	if (f->wire == LP_PB_VARINT)
		return fn(ctx, f->value);
	if (f->wire != LP_PB_LEN)
		return false;
	const unsigned char *p = f->data, *end = f->data + f->len;
	while (p < end) {
		uint64_t v;
		if (varint(&p, end, &v) < 0 || !fn(ctx, v))
			return false;
	}
	return true;
}
