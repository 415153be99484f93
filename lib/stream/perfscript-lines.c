/* perfscript-lines.c - a sample's header line of `perf script` text matched
 * as stackcollapse-perf.pl's regular expressions match it, backtracking
 * included, each emulation saying which expression it stands for: comm,
 * pid/tid, the event's name and period.  (Frame lines, the hot path, are
 * matched in perfscript.c, beside their only caller.) */
#include "stream/perfscript.h"
#include "stream/perfscript-internal.h"

#include <stdlib.h>

#include "base/util.h"

bool lp_perfscript_match_event_line(const char *l, size_t len, struct evmatch *m)
{
	if (len < 2 || pl_space(l[0]))
		return false;
	for (size_t k = 2; k < len;) {
		if (!pl_space(l[k])) {
			k++;
			continue;
		}
		size_t j = k;
		while (j < len && pl_space(l[j]))
			j++;
		size_t d1 = j;
		while (j < len && pl_digit(l[j]))
			j++;
		if (j > d1) {
			size_t d1_len = j - d1;
			while (j < len && l[j] == '/')
				j++;
			size_t d2 = j;
			while (j < len && pl_digit(l[j]))
				j++;
			size_t d2_len = j - d2;
			if (j < len && pl_space(l[j])) {
				m->comm_len = k;
				m->d1 = d1;
				m->d1_len = d1_len;
				m->d2 = d2;
				m->d2_len = d2_len;
				m->end = j;
				return true;
			}
		}
		/* A later start inside the same blank run ends it at the same
		 * place and fails the same way. */
		k++;
		while (k < len && pl_space(l[k]))
			k++;
	}
	return false;
}

/* /:\s*(\d+)*\s+(\S+):\s*$/: the event name is the last word, which ends
 * in ':'; the period the digits between it and the colon before it.  Only
 * the last colon before the event name can start a match (the gap admits
 * blanks and digits only). */
bool lp_perfscript_match_event_name(const char *l, size_t len, size_t *ev, size_t *ev_len,
				    size_t *per, size_t *per_len)
{
	size_t end = len;
	while (end > 0 && pl_space(l[end - 1]))
		end--;
	if (end < 2 || l[end - 1] != ':')
		return false;
	size_t c = end - 1, t = c;
	while (t > 0 && !pl_space(l[t - 1]))
		t--;
	if (t == c || t == 0)
		return false;
	size_t colon = t;
	while (colon > 0 && l[colon - 1] != ':')
		colon--;
	if (colon == 0)
		return false;
	/* the gap l[colon..t) must be \s*\d*\s+ */
	size_t i = colon;
	while (i < t && pl_space(l[i]))
		i++;
	size_t p = i;
	while (i < t && pl_digit(l[i]))
		i++;
	size_t p_len = i - p;
	while (i < t && pl_space(l[i]))
		i++;
	if (i != t)	/* with no digits, \s* gives a blank back to \s+ */
		return false;
	*ev = t;
	*ev_len = c - t;
	*per = p;
	*per_len = p_len;
	return true;
}

int32_t lp_perfscript_parse_id(const char *s, size_t n)
{
	int64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		v = v * 10 + (s[i] - '0');
		if (v > INT32_MAX)
			return INT32_MAX;
	}
	return (int32_t)v;
}

double lp_perfscript_parse_period(const char *s, size_t n)
{
	/* `$period = 1 if not $period`: no digits, or exactly "0", is 1. */
	if (n == 0 || (n == 1 && s[0] == '0'))
		return 1;
	if (n <= 15) {
		double v = 0;
		for (size_t i = 0; i < n; i++)
			v = v * 10 + (s[i] - '0');
		return v;
	}
	char buf[64], *copy = n < sizeof(buf) ? buf : lp_malloc(n + 1);	/* any length */
	memcpy(copy, s, n);
	copy[n] = '\0';
	double v = strtod(copy, NULL);
	if (copy != buf)
		free(copy);
	return v;
}
