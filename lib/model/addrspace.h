/* addrspace.h - a process's mapped files as the profile knows them: ranges
 * by start, none overlapping; a map laid over what it covers (the older
 * maps' parts outside it kept, as mmap does), an address's map found by
 * binary search.  What perf.data's reader and lp-symbolize's unwinder
 * (its map records) both keep of a process. */
#ifndef LP_ADDRSPACE_H
#define LP_ADDRSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lp_addrmap {
	uint64_t start, end;	/* run-time addresses, [start, end) */
	uint64_t bias;		/* an address less it is the ELF address in the file */
	/* The owner's strings, kept as long as the maps are (interned: a
	 * map cut in two shares them); build_id "" when none. */
	const char *module, *build_id;
	bool placed;		/* the owner's mark (perf.data's: frames raw ones) */
};

struct lp_addrspace {
	struct lp_addrmap *v;
	size_t n, cap;
};

/* The map holding addr, or NULL. */
const struct lp_addrmap *lp_addrspace__find(const struct lp_addrspace *s, uint64_t addr);
/* Whether x is there already, just so. */
bool lp_addrspace__has(const struct lp_addrspace *s, const struct lp_addrmap *x);
/* Lays x over what it covers (nothing when it is empty). */
void lp_addrspace__insert(struct lp_addrspace *s, const struct lp_addrmap *x);
/* A copy of s into *out (its own array). */
void lp_addrspace__copy(struct lp_addrspace *out, const struct lp_addrspace *s);
void lp_addrspace__fini(struct lp_addrspace *s);

#endif
