/* where.c - conditions on captured values (where.h). */
#include "analysis/where.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int lp_where__parse(const char *s, struct lp_where *p, const char **why)
{
	static const struct { const char *text; enum lp_where_op op; } ops[] = {
		{ "!=", LP_OP_NE }, { "<=", LP_OP_LE }, { ">=", LP_OP_GE },
		{ "==", LP_OP_EQ }, { "=", LP_OP_EQ }, { "<", LP_OP_LT }, { ">", LP_OP_GT },
	};
	size_t klen = strcspn(s, "!=<>");
	if (klen == 0 || !s[klen]) {
		*why = "expected KEY=VALUE, KEY!=VALUE, KEY<N, KEY<=N, KEY>N or KEY>=N";
		return -1;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t olen = strlen(ops[i].text);
		if (strncmp(s + klen, ops[i].text, olen))
			continue;
		memset(p, 0, sizeof(*p));
		p->key = lp_strndup(s, klen);
		p->value = lp_strdup(s + klen + olen);
		p->op = ops[i].op;
		const char *w;
		p->numeric = p->value[0] && lp_parse_double(p->value, &p->num, &w) == 0;
		if (!p->numeric && p->op != LP_OP_EQ && p->op != LP_OP_NE) {
			lp_where__fini(p);
			*why = "<, <=, > and >= need a number";
			return -1;
		}
		return 0;
	}
	*why = "expected KEY=VALUE, KEY!=VALUE, KEY<N, KEY<=N, KEY>N or KEY>=N";
	return -1;
}

bool lp_where__holds(const struct lp_where *p, const char *v)
{
	if (!v)
		return p->op == LP_OP_NE;
	double x;
	const char *why;
	if (p->numeric && lp_parse_double(v, &x, &why) == 0) {
		switch (p->op) {
		case LP_OP_EQ: return x == p->num;
		case LP_OP_NE: return x != p->num;
		case LP_OP_LT: return x < p->num;
		case LP_OP_LE: return x <= p->num;
		case LP_OP_GT: return x > p->num;
		case LP_OP_GE: return x >= p->num;
		}
	}
	switch (p->op) {
	case LP_OP_EQ: return !strcmp(v, p->value);
	case LP_OP_NE: return strcmp(v, p->value) != 0;
	default: return false;
	}
}

void lp_where__fini(struct lp_where *w)
{
	free(w->key);
	free(w->value);
	w->key = w->value = NULL;
}
