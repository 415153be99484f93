/* protobuf.h - protocol buffers' wire format (protobuf.dev, "Encoding"),
 * read and written: a message is a run of fields, each a number, a wire
 * type and a value (a varint, a fixed 32/64-bit word, or bytes: a string,
 * a nested message or packed numbers).  No schema: the readers of pprof
 * and nflxprofile and the writers of pprof and OTLP say which numbers mean
 * what.  Reading allocates nothing; writing appends to a growing buffer. */
#ifndef LP_PROTOBUF_H
#define LP_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum lp_pb_wire {
	LP_PB_VARINT = 0,
	LP_PB_I64 = 1,
	LP_PB_LEN = 2,
	LP_PB_I32 = 5,
};

/* A message's bytes, read from the front. */
struct lp_pb {
	const unsigned char *p, *end;
};

struct lp_pb_field {
	uint32_t number;
	enum lp_pb_wire wire;
	uint64_t value;			/* VARINT, I64, I32 */
	const unsigned char *data;	/* LEN */
	size_t len;
};

static inline struct lp_pb lp_pb__of(const void *data, size_t len)
{
	return (struct lp_pb){ data, (const unsigned char *)data + len };
}

/* The next field into *f: 1; 0 at the end of the message; -1 when the
 * bytes are not well-formed (a varint past the end or over 10 bytes, a
 * length past the end, a wire type of groups or none, field number 0). */
int lp_pb__next(struct lp_pb *m, struct lp_pb_field *f);

/* A LEN field's bytes as packed varints, or a VARINT field as one: calls
 * fn on each; false when they are not well-formed or fn says stop (false). */
bool lp_pb__varints(const struct lp_pb_field *f, bool (*fn)(void *ctx, uint64_t v), void *ctx);

/* ZigZag-encoded sint64. */
static inline int64_t lp_pb__sint64(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* --- writing ------------------------------------------------------ */

/* A message being written: bytes appended at the end; {0} is empty.  A
 * nested message (or packed numbers) is opened with lp_pbw__open, which
 * remembers where it starts, and closed with lp_pbw__close, which puts its
 * length in front of it, so one buffer holds a whole tree of messages. */
struct lp_pbw {
	unsigned char *p;
	size_t len, cap;
};

void lp_pbw__fini(struct lp_pbw *b);
void lp_pbw__put(struct lp_pbw *b, const void *data, size_t n);
void lp_pbw__varint(struct lp_pbw *b, uint64_t v);
/* Field `field` as a varint (int32/64, uint32/64, bool, enum; a negative
 * int as its 64-bit two's complement); zero, the default, is left out. */
void lp_pbw__uint(struct lp_pbw *b, uint32_t field, uint64_t v);
/* fixed64; zero is left out. */
void lp_pbw__fixed64(struct lp_pbw *b, uint32_t field, uint64_t v);
/* A LEN field (a string, bytes, a message already encoded), written even
 * when empty: in a repeated field an empty element is an element. */
void lp_pbw__bytes(struct lp_pbw *b, uint32_t field, const void *data, size_t n);
static inline void lp_pbw__string(struct lp_pbw *b, uint32_t field, const char *s)
{
	lp_pbw__bytes(b, field, s, strlen(s));
}
/* Opens field `field` as a LEN value written next: returns the mark
 * lp_pbw__close takes. */
size_t lp_pbw__open(struct lp_pbw *b, uint32_t field);
void lp_pbw__close(struct lp_pbw *b, size_t mark);
/* A message of two varint fields, 1 and 2, as field `field` (pprof's and
 * OTLP's ValueType and Line). */
void lp_pbw__pair(struct lp_pbw *b, uint32_t field, uint64_t v1, uint64_t v2);
/* Field `field` as a varint written even when zero: a oneof's member,
 * present whatever its value (OTLP's AnyValue). */
void lp_pbw__uint_present(struct lp_pbw *b, uint32_t field, uint64_t v);
/* Repeated varints or fixed64s, packed; none: left out. */
void lp_pbw__packed(struct lp_pbw *b, uint32_t field, const uint64_t *v, size_t n);
void lp_pbw__packed_fixed64(struct lp_pbw *b, uint32_t field, const uint64_t *v, size_t n);

#endif
