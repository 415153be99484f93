/* where.h - a condition on a span's captured values, KEY OP VALUE
 * ("arg0=3", "ret!=0", "len>=4096"): lp-split's --where and lp-serve's
 * where= setting. */
#ifndef LP_WHERE_H
#define LP_WHERE_H

#include <stdbool.h>

#include "stream/stream.h"

enum lp_where_op { LP_OP_EQ, LP_OP_NE, LP_OP_LT, LP_OP_LE, LP_OP_GT, LP_OP_GE };

struct lp_where {
	char *key, *value;
	enum lp_where_op op;
	bool numeric;		/* VALUE is a number: compare as numbers */
	double num;
};

/* Parses s into *w (its strings malloc'd); -1 with *why on failure. */
int lp_where__parse(const char *s, struct lp_where *w, const char **why);
/* Whether a value (NULL: the key is not there) meets w: a missing key
 * meets only !=; <, <=, >, >= only a number. */
bool lp_where__holds(const struct lp_where *w, const char *value);
void lp_where__fini(struct lp_where *w);

#endif
