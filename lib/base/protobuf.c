/* protobuf.c - the wire format, read and written (protobuf.h). */
#include "base/protobuf.h"
#include "base/util.h"

#include <stdlib.h>

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

/* --- writing (protobuf.h) ------------------------------------------- */

void lp_pbw__fini(struct lp_pbw *b)
{
	free(b->p);
	*b = (struct lp_pbw){ 0 };
}

static void reserve(struct lp_pbw *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	b->cap = b->cap ? b->cap * 2 : 4096;
	if (b->cap < b->len + n)
		b->cap = b->len + n;
	b->p = lp_realloc(b->p, b->cap);
}

void lp_pbw__put(struct lp_pbw *b, const void *data, size_t n)
{
	if (!n)
		return;
	reserve(b, n);
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

/* v as a varint into c[], its length returned (at most 10). */
static size_t encode_varint(unsigned char *c, uint64_t v)
{
	size_t n = 0;
	do {
		c[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

void lp_pbw__varint(struct lp_pbw *b, uint64_t v)
{
	unsigned char c[10];
	lp_pbw__put(b, c, encode_varint(c, v));
}

static void tag(struct lp_pbw *b, uint32_t field, enum lp_pb_wire wire)
{
	lp_pbw__varint(b, (uint64_t)field << 3 | wire);
}

void lp_pbw__uint(struct lp_pbw *b, uint32_t field, uint64_t v)
{
	if (v)
		lp_pbw__uint_present(b, field, v);
}

void lp_pbw__uint_present(struct lp_pbw *b, uint32_t field, uint64_t v)
{
	tag(b, field, LP_PB_VARINT);
	lp_pbw__varint(b, v);
}

static void fixed64(struct lp_pbw *b, uint64_t v)
{
	unsigned char c[8];
	for (size_t i = 0; i < 8; i++)
		c[i] = (unsigned char)(v >> (8 * i));
	lp_pbw__put(b, c, 8);
}

void lp_pbw__fixed64(struct lp_pbw *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	tag(b, field, LP_PB_I64);
	fixed64(b, v);
}

void lp_pbw__bytes(struct lp_pbw *b, uint32_t field, const void *data, size_t n)
{
	tag(b, field, LP_PB_LEN);
	lp_pbw__varint(b, n);
	lp_pbw__put(b, data, n);
}

size_t lp_pbw__open(struct lp_pbw *b, uint32_t field)
{
	tag(b, field, LP_PB_LEN);
	return b->len;
}

/* The value written since the mark moves up to make room for its length. */
void lp_pbw__close(struct lp_pbw *b, size_t mark)
{
	unsigned char c[10];
	size_t body = b->len - mark, n = encode_varint(c, body);
	reserve(b, n);
	memmove(b->p + mark + n, b->p + mark, body);
	memcpy(b->p + mark, c, n);
	b->len += n;
}

void lp_pbw__packed(struct lp_pbw *b, uint32_t field, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	size_t m = lp_pbw__open(b, field);
	for (size_t i = 0; i < n; i++)
		lp_pbw__varint(b, v[i]);
	lp_pbw__close(b, m);
}

void lp_pbw__packed_fixed64(struct lp_pbw *b, uint32_t field, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	size_t m = lp_pbw__open(b, field);
	for (size_t i = 0; i < n; i++)
		fixed64(b, v[i]);
	lp_pbw__close(b, m);
}

void lp_pbw__pair(struct lp_pbw *b, uint32_t field, uint64_t v1, uint64_t v2)
{
	size_t m = lp_pbw__open(b, field);
	lp_pbw__uint(b, 1, v1);
	lp_pbw__uint(b, 2, v2);
	lp_pbw__close(b, m);
}
