/* profile.h - an aggregated profile: distinct folded stacks with their
 * summed weights, for one side or two (lp-diff).  Memory grows with the
 * number of distinct stacks, never with the input's length. */
#ifndef LP_PROFILE_H
#define LP_PROFILE_H

#include <stddef.h>

struct lp_profile_entry {
	const char *stack;	/* "root;...;leaf", NUL-terminated */
	size_t len;
	const char *kinds;	/* one enum lp_frame_kind char per frame, or NULL */
	double weight[2];	/* [0] the profile (or "before"), [1] "after" */
};

struct lp_profile;

struct lp_profile *lp_profile__new(void);
void lp_profile__free(struct lp_profile *p);
/* Adds weight to side (0 or 1) of the stack; kinds (nframes chars or NULL)
 * is kept from the first time the stack is seen. */
void lp_profile__add(struct lp_profile *p, const char *stack, size_t len,
		     const char *kinds, int side, double weight);
/* Entries sorted by stack, bytewise (Perl's sort / cmp).  The array belongs
 * to the profile and is valid until the next add. */
const struct lp_profile_entry *const *lp_profile__sorted(struct lp_profile *p, size_t *n);
size_t lp_profile__count(const struct lp_profile *p);
double lp_profile__total(const struct lp_profile *p, int side);

#endif
