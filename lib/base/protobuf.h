/* protobuf.h - reading protocol buffers' wire format (protobuf.dev,
 * "Encoding"): a message is walked field by field, each a number, a wire
 * type and a value (a varint, a fixed 32/64-bit word, or bytes: a string,
 * a nested message or packed numbers).  No schema, no allocation: the
 * readers of pprof and nflxprofile say which numbers mean what. */
#ifndef LP_PROTOBUF_H
#define LP_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
