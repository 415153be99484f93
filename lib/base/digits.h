/* digits.h - integers as text without printf, for the writers whose output
 * is mostly numbers (the stream's writer, lp-trace's records): printf cost
 * lp-join and lp-split about half their time.  Inline, so a writer's hot
 * loop keeps them in place. */
#ifndef LP_DIGITS_H
#define LP_DIGITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* "00".."99", two characters each; "00".."ff" likewise. */
extern const char lp_digit_pairs[201];
extern const char lp_hex_pairs[513];

/* The decimal digits of v written to end upward, the last just before end
 * (no NUL): room for lp_digits_count(v) characters before it.  Returns
 * how many were written. */
static inline size_t lp_digits_before(char *end, uint64_t v)
{
	char *p = end;
	/* Eight digits at a time, those in 32-bit arithmetic (cheaper). */
	while (v >= 100000000) {
		uint32_t lo = (uint32_t)(v % 100000000);
		v /= 100000000;
		for (int i = 0; i < 4; i++) {
			p -= 2;
			memcpy(p, lp_digit_pairs + 2 * (lo % 100), 2);
			lo /= 100;
		}
	}
	uint32_t x = (uint32_t)v;
	while (x >= 100) {
		uint32_t r = x % 100;
		x /= 100;
		p -= 2;
		memcpy(p, lp_digit_pairs + 2 * r, 2);
	}
	if (x >= 10) {
		p -= 2;
		memcpy(p, lp_digit_pairs + 2 * x, 2);
	} else {
		*--p = (char)('0' + x);
	}
	return (size_t)(end - p);
}

/* Decimal digits in v: from its bit length, corrected by one comparison. */
static inline size_t lp_digits_count(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
		100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
		1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
		1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
		1000000000000000000ULL, 10000000000000000000ULL,
	};
	if (v < 10)
		return 1;
	int t = (64 - __builtin_clzll(v)) * 1233 >> 12;	/* log10(2) ~ 1233/4096 */
	return (size_t)t + 1 - (v < pow10[t]);
}

/* Room for any of the strings below, NUL included. */
#define LP_DIGITS_MAX 24

/* v in decimal at buf, NUL-terminated; returns its length. */
static inline size_t lp_digits_u64(char *buf, uint64_t v)
{
	size_t n = lp_digits_count(v);

	lp_digits_before(buf + n, v);
	buf[n] = '\0';
	return n;
}

/* v in decimal, with a minus sign when negative. */
static inline size_t lp_digits_i64(char *buf, int64_t v)
{
	if (v >= 0)
		return lp_digits_u64(buf, (uint64_t)v);
	*buf = '-';
	return 1 + lp_digits_u64(buf + 1, -(uint64_t)v);
}

/* v as 0x and its hexadecimal digits, no leading zeros ("0x0" for 0). */
static inline size_t lp_digits_hex(char *buf, uint64_t v)
{
	size_t n = 1;

	while (n < 16 && v >> (4 * n))
		n++;
	buf[0] = '0';
	buf[1] = 'x';
	for (size_t i = 0; i < n; i++)
		buf[2 + n - 1 - i] = lp_hex_pairs[2 * ((v >> (4 * i)) & 15) + 1];
	buf[2 + n] = '\0';
	return 2 + n;
}

#endif
